/*
 * Unit tests for policy/manifest.c (SP-15, SP-5, SP-3, SEC-3): the two
 * agentic-os built-ins load unchanged, every hostile manifest is refused
 * with its line:col, and messages never echo a value (a plain unknown key
 * is named, with the nearest allowed one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy_test.h"
#include <json-c/json.h>

#include "manifest.h"
#include "yamljson.h"

#define MAXE 64

static struct policy_err errs[MAXE];
static size_t nerrs;

static int
parse(const char *yaml, struct manifest *m)
{
	struct json_object *root = pt_load(yaml);
	int rc;

	nerrs = 0;
	rc = manifest_parse(root, m, errs, MAXE, &nerrs);
	json_object_put(root);
	return rc;
}

/* Refused, with a problem at line:col whose message contains msg. */
static void
refused_at(
    const char *yaml, unsigned long line, unsigned long col, const char *msg)
{
	struct manifest m;

	assert_int_equal(parse(yaml, &m), -1);
	pt_expect(errs, nerrs, MAXE, line, col, msg);
}

#define HEAD                                                                   \
	"name: t\n"                                                            \
	"transport: subprocess\n"                                              \
	"transportConfig:\n"                                                   \
	"  bin: t\n"                                                           \
	"  args: [\"{prompt}\"]\n"

/*
 * SP-15: the agentic-os built-in claude-code manifest (the file as that
 * project ships it) loads unchanged; its capabilities are a mapping.
 */
static void
test_sp15_fixture_claude_code(void **state)
{
	struct manifest m;
	char *y = pt_fixture("agents", "claude-code.yaml");

	(void)state;
	assert_int_equal(parse(y, &m), 0);
	assert_string_equal(m.m_name, "claude-code");
	assert_int_equal(m.m_transport, MF_STREAMJSON);
	assert_string_equal(m.m_bin, "claude");
	assert_int_equal(m.m_nargs, 5);
	assert_string_equal(m.m_args[0], "-p");
	assert_string_equal(m.m_args[1], "--output-format=stream-json");
	assert_string_equal(m.m_args[4], "{prompt}");
	assert_null(m.m_args[5]);
	assert_int_equal(m.m_timeout_ms, 0); /* SP-8: stream, no deadline */
	assert_int_equal(m.m_prompt_via, MF_PROMPT_ARGV);
	assert_int_equal(m.m_nactions, 0);
	assert_int_equal(m.m_nprobe_cmd, 2);
	assert_int_equal(m.m_probe_timeout_ms, 3000);
	assert_int_equal(m.m_ncapabilities, 2);
	assert_string_equal(m.m_capabilities[0], "chat");
	assert_string_equal(m.m_capabilities[1], "streamingChat");
	assert_int_equal(m.m_nignored, 0);
	assert_int_equal(m.m_limits.l_run_output_bytes, 8 * 1024 * 1024);
	manifest_free(&m);
	free(y);
}

/*
 * SP-15: the agentic-os built-in hermes manifest, seven actions and a
 * postRunUsage block cordon does not act on (kept as ignored, with its
 * line:col for `cordon check`).
 */
static void
test_sp15_fixture_hermes(void **state)
{
	struct manifest m;
	const struct mf_action *a;
	char *y = pt_fixture("agents", "hermes.yaml");

	(void)state;
	assert_int_equal(parse(y, &m), 0);
	assert_string_equal(m.m_name, "hermes");
	assert_int_equal(m.m_transport, MF_SUBPROCESS);
	assert_int_equal(m.m_nactions, 7);
	assert_int_equal(m.m_timeout_ms, 120000);
	a = manifest_action(&m, "sessions");
	assert_non_null(a);
	assert_int_equal(a->a_ncommand, 3);
	assert_string_equal(a->a_command[2], "list");
	assert_int_equal(a->a_timeout_ms, 15000);
	a = manifest_action(&m, "insights");
	assert_non_null(a);
	assert_int_equal(a->a_timeout_ms, 45000);
	assert_int_equal(m.m_ncapabilities, 1);
	assert_string_equal(m.m_capabilities[0], "chat");
	assert_int_equal(m.m_nignored, 1);
	assert_string_equal(m.m_ignored[0].ig_key, "postRunUsage");
	assert_int_equal(m.m_ignored[0].ig_line, 28);
	assert_int_equal(m.m_ignored[0].ig_col, 1);
	assert_int_equal(m.m_nenv, 1);
	assert_string_equal(m.m_env[0].e_name, "NO_COLOR");
	a = manifest_action(&m, "status");
	assert_non_null(a);
	assert_int_equal(a->a_timeout_ms, 5000); /* default */
	assert_int_equal(a->a_output, MF_OUT_TEXT);
	assert_null(manifest_action(&m, "nope"));
	assert_string_equal(
	    manifest_transport_name(m.m_transport), "subprocess");
	manifest_free(&m);
	free(y);
}

/* SP-15: every cordon addition parses; limits clamp to ceilings. */
static void
test_sp15_additions(void **state)
{
	struct manifest m;

	(void)state;
	assert_int_equal(parse("name: t\n"
			       "transport: subprocess\n"
			       "description: >\n"
			       "  A folded\n"
			       "  description.\n"
			       "\n"
			       "  Second\tparagraph.\n"
			       "promptVia: stdin\n"
			       "transportConfig:\n"
			       "  bin: /usr/bin/t\n"
			       "  args: [\"--\", \"--max-tokens\", \"4096\"]\n"
			       "  cwd: /srv/work\n"
			       "  env:\n"
			       "    HTTPS_PROXY: http://127.0.0.1:3128\n"
			       "    RETRIES: 3\n"
			       "secrets:\n"
			       "  OPENROUTER_API_KEY: openrouter.apiKey\n"
			       "limits:\n"
			       "  cpuSec: 999999\n"
			       "  nproc: 10\n"
			       "  memBytes: 0\n"
			       "sandbox:\n"
			       "  network: none\n"
			       "  isolation: namespace\n"
			       "  readRoots: [/srv/data]\n"
			       "  writeRoots: [/srv/work]\n"
			       "  required: true\n",
			     &m),
	    0);
	assert_int_equal(m.m_prompt_via, MF_PROMPT_STDIN);
	assert_string_equal(m.m_args[1], "--max-tokens");
	assert_non_null(strchr(m.m_description, '\n'));
	assert_string_equal(m.m_cwd, "/srv/work");
	assert_int_equal(m.m_nenv, 2);
	assert_int_equal(m.m_nsecrets, 1);
	assert_string_equal(m.m_secrets[0].s_env, "OPENROUTER_API_KEY");
	assert_string_equal(m.m_secrets[0].s_path, "openrouter.apiKey");
	assert_int_equal(m.m_limits.l_cpu_sec, LIM_CPU_SEC_MAX);
	assert_int_equal(m.m_limits.l_nproc, 10);
	assert_int_equal(m.m_limits.l_nofile, LIM_NOFILE_DEF);
	assert_int_equal(m.m_sandbox.sb_network, MF_NET_NONE);
	assert_int_equal(m.m_sandbox.sb_isolation, MF_ISO_NAMESPACE);
	assert_int_equal(m.m_sandbox.sb_required, 1);
	assert_int_equal(m.m_sandbox.sb_nwrite, 1);
	manifest_free(&m);
}

/* SP-15 */
static void
test_sp15_eleven_actions_refused(void **state)
{
	char y[4096];
	size_t off, i;

	(void)state;
	off = (size_t)snprintf(y, sizeof(y), HEAD "actions:\n");
	for (i = 0; i < 11; i++)
		off += (size_t)snprintf(y + off, sizeof(y) - off,
		    "  - {id: a%zu, label: A, command: [x]}\n", i);
	refused_at(y, 6, 1, "at most 10 actions");
}

/* SP-15 */
static void
test_sp15_duplicate_action_id_refused(void **state)
{
	(void)state;
	refused_at(HEAD "actions:\n"
			"  - id: same\n"
			"    label: A\n"
			"    command: [x]\n"
			"  - id: same\n"
			"    label: B\n"
			"    command: [y]\n",
	    10, 5, "duplicate action id");
}

/* SP-15 */
static void
test_sp15_action_id_33_chars_refused(void **state)
{
	(void)state;
	refused_at(HEAD "actions:\n"
			"  - id: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
			"    label: A\n"
			"    command: [x]\n",
	    7, 5, "actions.id");
	refused_at(HEAD "actions:\n"
			"  - id: Bad_Id\n"
			"    label: A\n"
			"    command: [x]\n",
	    7, 5, "actions.id");
}

/* SP-15 */
static void
test_sp15_action_timeout_60001_refused(void **state)
{
	struct manifest m;

	(void)state;
	refused_at(HEAD "actions:\n"
			"  - id: a\n"
			"    label: A\n"
			"    command: [x]\n"
			"    timeoutMs: 60001\n",
	    10, 5, "actions.timeoutMs");
	assert_int_equal(parse(HEAD "actions:\n"
				    "  - id: a\n"
				    "    label: A\n"
				    "    command: [x]\n"
				    "    timeoutMs: 60000\n",
			     &m),
	    0);
	manifest_free(&m);
}

/* SP-15: label, hint, command, output bounds. */
static void
test_sp15_action_fields_refused(void **state)
{
	(void)state;
	refused_at(HEAD "actions:\n"
			"  - id: a\n"
			"    label: \"\"\n"
			"    command: [x]\n",
	    8, 5, "actions.label");
	refused_at(HEAD "actions:\n"
			"  - id: a\n"
			"    label: "
			"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
			"    command: [x]\n",
	    8, 5, "actions.label");
	refused_at(HEAD "actions:\n"
			"  - id: a\n"
			"    label: A\n"
			"    hint: aaaaaaaaaaaaaaaaaaaaa\n"
			"    command: [x]\n",
	    9, 5, "actions.hint");
	refused_at(HEAD "actions:\n"
			"  - id: a\n"
			"    label: A\n"
			"    command: []\n",
	    9, 5, "actions.command");
	refused_at(HEAD "actions:\n"
			"  - id: a\n"
			"    label: A\n"
			"    command: [x]\n"
			"    output: html\n",
	    10, 5, "actions.output");
	refused_at(HEAD "actions:\n"
			"  - id: a\n"
			"    label: A\n"
			"    command: [x, \"{prompt}\"]\n",
	    9, 18, "{prompt} refused");
}

/* SP-5 */
static void
test_sp5_env_runtime_control_refused(void **state)
{
	(void)state;
	refused_at(HEAD "  env:\n    LD_PRELOAD: /tmp/x.so\n", 7, 5,
	    "environment name refused");
	refused_at(HEAD "  env:\n    NODE_OPTIONS: --require=/x\n", 7, 5,
	    "environment name refused");
	refused_at(HEAD "  env:\n    lower_case: x\n", 7, 5,
	    "environment name refused");
	refused_at(HEAD "  env:\n    PYTHONSTARTUP: x\n", 7, 5,
	    "environment name refused");
	refused_at(HEAD "  env:\n    GIT_CONFIG_COUNT: '1'\n", 7, 5,
	    "environment name refused");
	refused_at(HEAD "  env:\n    DYLD_INSERT_LIBRARIES: x\n", 7, 5,
	    "environment name refused");
	refused_at(
	    HEAD "  env:\n    BASH_ENV: x\n", 7, 5, "environment name refused");
	refused_at(
	    HEAD "  env:\n    1ABC: x\n", 7, 5, "environment name refused");
}

/* SP-2, SP-5 */
static void
test_sp5_env_value_newline_refused(void **state)
{
	char y[8192];

	(void)state;
	refused_at(HEAD "  env:\n    GOOD: \"a\\nb\"\n", 7, 5, "newline");
	refused_at(HEAD "  env:\n    GOOD: \"a\\rb\"\n", 7, 5, "newline");
	snprintf(y, sizeof(y), HEAD "  env:\n    GOOD: \"%04097d\"\n", 1);
	refused_at(y, 7, 5, "length");
}

/* SP-5: more than 64 entries */
static void
test_sp5_env_too_many_refused(void **state)
{
	char y[8192];
	size_t off, i;

	(void)state;
	off = (size_t)snprintf(y, sizeof(y), HEAD "  env:\n");
	for (i = 0; i < 65; i++)
		off += (size_t)snprintf(
		    y + off, sizeof(y) - off, "    V%zu: x\n", i);
	refused_at(y, 6, 3, "too many");
}

/* SEC-3: a secret literal or reference in args, command or env. */
static void
test_sec3_secret_in_args_refused(void **state)
{
	(void)state;
	refused_at("name: t\n"
		   "transport: subprocess\n"
		   "transportConfig:\n"
		   "  bin: t\n"
		   "  args: [\"--key\", \"sk-abcdefghijklmnopqrstuvwxyz\", "
		   "\"{prompt}\"]\n",
	    5, 19, "secret in arguments");
	refused_at("name: t\n"
		   "transport: subprocess\n"
		   "transportConfig:\n"
		   "  bin: t\n"
		   "  args:\n"
		   "    - --api-key=hunter2hunter2\n"
		   "    - \"{prompt}\"\n",
	    6, 7, "secret in arguments");
	refused_at("name: t\n"
		   "transport: subprocess\n"
		   "secrets:\n"
		   "  MY_KEY: a.b\n"
		   "transportConfig:\n"
		   "  bin: t\n"
		   "  args: [\"--key=${MY_KEY}\", \"{prompt}\"]\n",
	    7, 10, "secret in arguments");
	refused_at("name: t\n"
		   "transport: subprocess\n"
		   "transportConfig:\n"
		   "  bin: t\n"
		   "  args: [\"--api-key\", \"plainvalue\", \"{prompt}\"]\n",
	    5, 23, "secret in arguments");
	refused_at(HEAD "actions:\n"
			"  - id: a\n"
			"    label: A\n"
			"    command: [x, AKIAIOSFODNN7EXAMPLE]\n",
	    9, 18, "secret in arguments");
	refused_at(HEAD "healthProbe:\n"
			"  command: [x, "
			"\"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"]\n",
	    7, 16, "secret in arguments");
}

/*
 * SEC-3: a flag made of lowercase words and hyphens is not a secret, however
 * long (Codex's externally-sandboxed flag); a long key beside it still is.
 */
static void
test_sec3_long_flag_not_secret(void **state)
{
	struct manifest m;

	(void)state;
	assert_int_equal(parse("name: t\n"
			       "transport: subprocess\n"
			       "transportConfig:\n"
			       "  bin: codex\n"
			       "  args: [exec, "
			       "--dangerously-bypass-approvals-and-sandbox, "
			       "\"{prompt}\"]\n",
			     &m),
	    0);
	manifest_free(&m);
	refused_at("name: t\n"
		   "transport: subprocess\n"
		   "transportConfig:\n"
		   "  bin: codex\n"
		   "  args: [--dangerously-bypass-approvals-and-sandbox, "
		   "k3Yq9ZpLm2Xv8RtW4nBc7HdF1sGj6KeA0uVyTo5i, "
		   "\"{prompt}\"]\n",
	    5, 54, "secret in arguments");
	refused_at("name: t\n"
		   "transport: subprocess\n"
		   "transportConfig:\n"
		   "  bin: t\n"
		   "  args: [--dangerously-bypass-approvals-and-sandbox="
		   "sk-abcdefghijklmnopqrstuvwxyz, \"{prompt}\"]\n",
	    5, 10, "secret in arguments");
}

/*
 * SP-15: capabilities as a list or a mapping of booleans; anything else,
 * and keys unknown to both cordon and agentic-os, refused.
 */
static void
test_sp15_capabilities_forms(void **state)
{
	struct manifest m;

	(void)state;
	assert_int_equal(parse(HEAD "capabilities: [chat, code]\n", &m), 0);
	assert_int_equal(m.m_ncapabilities, 2);
	assert_string_equal(m.m_capabilities[1], "code");
	manifest_free(&m);
	assert_int_equal(
	    parse(
		HEAD "capabilities: {chat: true, streamingChat: false}\n", &m),
	    0);
	assert_int_equal(m.m_ncapabilities, 1);
	assert_string_equal(m.m_capabilities[0], "chat");
	assert_null(m.m_capabilities[1]);
	manifest_free(&m);
	refused_at(HEAD "capabilities: {chat: yes please}\n", 6, 16,
	    "capabilities.chat: must be true or false");
	refused_at(HEAD "capabilities: {a/b: true}\n", 6, 16,
	    "capabilities: must name capabilities with plain names");
	refused_at(HEAD "capabilities: chat\n", 6, 1,
	    "capabilities: must be a short list");
	refused_at(HEAD "postRunUsages: {parser: x}\n", 6, 1,
	    "postRunUsages: unknown key; did you mean postRunUsage?");
	assert_int_equal(
	    parse(HEAD "postRunUsage: [anything, at, all]\n", &m), 0);
	assert_int_equal(m.m_nignored, 1);
	assert_int_equal(m.m_ignored[0].ig_line, 6);
	manifest_free(&m);
}

/* SEC-3: env values and names. */
static void
test_sec3_secret_in_env_refused(void **state)
{
	(void)state;
	refused_at(HEAD "  env:\n    X_OPTS: \"Bearer abcdefghijkl\"\n", 7, 5,
	    "secret in environment");
	refused_at(HEAD "  env:\n    OPENAI_API_KEY: sk-x\n", 7, 5,
	    "secret-looking name");
	refused_at("name: t\n"
		   "transport: subprocess\n"
		   "secrets:\n"
		   "  SOME_VAR: a.b\n"
		   "transportConfig:\n"
		   "  bin: t\n"
		   "  args: [\"{prompt}\"]\n"
		   "  env:\n"
		   "    SOME_VAR: x\n",
	    9, 5, "secret-looking name");
	refused_at(HEAD "  env:\n    X: \"$GITHUB_TOKEN\"\n", 7, 5,
	    "secret in environment");
}

/* SP-15 */
static void
test_sp15_transport_http_refused(void **state)
{
	(void)state;
	refused_at("name: t\n"
		   "transport: http\n"
		   "transportConfig:\n"
		   "  bin: t\n"
		   "  args: [\"{prompt}\"]\n",
	    2, 1, "transport: unsupported value");
	refused_at("name: t\n"
		   "transportConfig:\n"
		   "  bin: t\n"
		   "  args: [\"{prompt}\"]\n",
	    1, 1, "transport: missing");
}

/* SP-15: unknown keys anywhere, reported at the key, never echoed. */
static void
test_sp15_unknown_keys_refused(void **state)
{
	struct manifest m;
	size_t i;

	(void)state;
	refused_at(HEAD "evilKey: 1\n", 6, 1, "unknown key");
	refused_at(HEAD "  shell: true\n", 6, 3, "unknown key");
	refused_at(HEAD "actions:\n  - {id: a, label: A, command: [x], "
			"shell: yes}\n",
	    7, 37, "unknown key");
	refused_at(HEAD "limits:\n  stack: 1\n", 7, 3, "unknown key");
	refused_at(HEAD "sandbox:\n  mode: x\n", 7, 3, "unknown key");
	refused_at(HEAD "healthProbe:\n  url: x\n", 7, 3, "unknown key");
	/* A plain key is named, its value never. */
	assert_int_equal(parse(HEAD "plainKey: SECRETMARKER\n", &m), -1);
	for (i = 0; i < nerrs; i++)
		assert_null(strstr(errs[i].pe_msg, "SECRETMARKER"));
	refused_at(
	    HEAD "plainKey: SECRETMARKER\n", 6, 1, "plainKey: unknown key");
	/* A key that looks like a secret, or is no plain name, is not. */
	assert_int_equal(
	    parse(HEAD "sk-ant-api03-SECRETMARKERSECRETMARKERSECRET"
		       "MARKERSECRETMARKER: 1\nbad key: 1\n",
		&m),
	    -1);
	assert_int_equal(nerrs, 2);
	for (i = 0; i < nerrs; i++) {
		assert_null(strstr(errs[i].pe_msg, "SECRETMARKER"));
		assert_null(strstr(errs[i].pe_msg, "bad"));
		assert_string_equal(errs[i].pe_code, "unknown-key");
	}
}

/* SP-15: an unknown key says which, and the nearest allowed one. */
static void
test_sp15_unknown_key_did_you_mean(void **state)
{
	(void)state;
	refused_at(HEAD "  arg: [x]\n", 6, 3,
	    "transportConfig.arg: unknown key; did you mean args?");
	refused_at(HEAD "healthProbe:\n  timeout: 5\n", 7, 3,
	    "healthProbe.timeout: unknown key; did you mean timeoutMs?");
	refused_at(HEAD "displayname: x\n", 6, 1,
	    "displayname: unknown key; did you mean displayName?");
	refused_at(HEAD "zzzzzz: 1\n", 6, 1, "zzzzzz: unknown key");
	assert_null(strstr(errs[0].pe_msg, "did you mean"));
}

/* SP-15: a range names its bounds (never the value written). */
static void
test_sp15_range_named(void **state)
{
	(void)state;
	refused_at(HEAD "healthProbe:\n  timeoutMs: 10001\n", 7, 3,
	    "healthProbe.timeoutMs: must be 1..10000");
	assert_string_equal(errs[0].pe_code, "out-of-range");
	assert_null(strstr(errs[0].pe_msg, "10001"));
}

/* SP-15: every problem is collected, not just the first. */
static void
test_sp15_all_problems_collected(void **state)
{
	struct manifest m;

	(void)state;
	assert_int_equal(parse("name: Bad Name\n"
			       "transport: http\n"
			       "promptVia: pipe\n"
			       "junk: 1\n"
			       "transportConfig:\n"
			       "  bin: t\n"
			       "  args: [\"{prompt}\"]\n"
			       "  timeoutMs: 0\n",
			     &m),
	    -1);
	assert_true(nerrs >= 5);
}

/* SP-3: exactly one {prompt} with argv; none with stdin. */
static void
test_sp3_prompt_placeholder_rules(void **state)
{
	(void)state;
	refused_at("name: t\n"
		   "transport: subprocess\n"
		   "transportConfig:\n"
		   "  bin: t\n"
		   "  args: [\"{prompt}\", \"{prompt}\"]\n",
	    5, 3, "exactly one {prompt}");
	refused_at("name: t\n"
		   "transport: subprocess\n"
		   "transportConfig:\n"
		   "  bin: t\n"
		   "  args: [\"-x\"]\n",
	    5, 3, "exactly one {prompt}");
	refused_at("name: t\n"
		   "transport: subprocess\n"
		   "promptVia: stdin\n"
		   "transportConfig:\n"
		   "  bin: t\n"
		   "  args: [\"{prompt}\"]\n",
	    6, 3, "promptVia: stdin");
}

/* SP-15: name, bin, cwd, probe and limits bounds. */
static void
test_sp15_fields_refused(void **state)
{
	(void)state;
	refused_at("name: -bad\n"
		   "transport: subprocess\n"
		   "transportConfig:\n"
		   "  bin: t\n"
		   "  args: [\"{prompt}\"]\n",
	    1, 1, "name");
	refused_at("name: t\n"
		   "transport: subprocess\n"
		   "transportConfig:\n"
		   "  bin: ../bin/t\n"
		   "  args: [\"{prompt}\"]\n",
	    4, 3, "transportConfig.bin");
	refused_at("name: t\n"
		   "transport: subprocess\n"
		   "transportConfig:\n"
		   "  bin: \"{prompt}\"\n"
		   "  args: [\"{prompt}\"]\n",
	    4, 3, "transportConfig.bin");
	refused_at(HEAD "  cwd: relative/dir\n", 6, 3, "transportConfig.cwd");
	refused_at(HEAD "  cwd: /srv/../etc\n", 6, 3, "transportConfig.cwd");
	refused_at(HEAD "healthProbe:\n  timeoutMs: 10001\n", 7, 3,
	    "healthProbe.timeoutMs");
	refused_at(
	    HEAD "healthProbe:\n  type: http\n", 7, 3, "healthProbe.type");
	refused_at(HEAD "limits:\n  nproc: 0\n", 7, 3, "limits");
	refused_at(HEAD "limits:\n  nproc: many\n", 7, 3, "limits");
	refused_at(HEAD "sandbox:\n  network: host\n", 7, 3, "sandbox.network");
	refused_at(HEAD "sandbox:\n  writeRoots: [../x]\n", 7, 16, "sandbox");
	refused_at(HEAD "secrets:\n  KEY: ../x\n", 7, 3, "dotted path");
	refused_at(HEAD "secrets:\n  LD_PRELOAD: a.b\n", 7, 3,
	    "invalid environment name");
	/* SEC-3: names every agent gets from the spawner's environment. */
	refused_at(HEAD "secrets:\n  CORDON_OR_KEY: a.b\n", 7, 3,
	    "passed to every agent");
	refused_at(
	    HEAD "secrets:\n  LC_ALL: a.b\n", 7, 3, "passed to every agent");
	refused_at(
	    HEAD "secrets:\n  PATH: a.b\n", 7, 3, "passed to every agent");
	refused_at(HEAD "displayName: \"a\\u0007b\"\n", 6, 1, "control");
	refused_at(HEAD "description: \"a\\u001b[31mb\"\n", 6, 1, "control");
}

/* SP-15: a document that is not a mapping */
static void
test_sp15_not_a_mapping_refused(void **state)
{
	struct json_object *a = json_object_new_array();
	struct manifest m;
	size_t n = 0;

	(void)state;
	assert_int_equal(manifest_parse(a, &m, errs, MAXE, &n), -1);
	assert_int_equal(n, 1);
	assert_non_null(strstr(errs[0].pe_msg, "mapping"));
	json_object_put(a);
}

/* SP-15: no problem list overflow; count still exact. */
static void
test_sp15_error_overflow_counted(void **state)
{
	char y[16384];
	struct yaml_err ye;
	struct json_object *root;
	struct manifest m;
	struct policy_err two[2];
	size_t off, i, n = 0;

	(void)state;
	off = (size_t)snprintf(y, sizeof(y), HEAD);
	for (i = 0; i < 20; i++)
		off +=
		    (size_t)snprintf(y + off, sizeof(y) - off, "k%zu: 1\n", i);
	root = yaml_load_buf(y, strlen(y), &ye);
	assert_non_null(root);
	assert_int_equal(manifest_parse(root, &m, two, 2, &n), -1);
	assert_int_equal(n, 20);
	json_object_put(root);
}

/* SBX-1 ... SBX-3, SBX-5, SBX-6: sandbox defaults, ~/ roots, `commands:`. */
static void
test_sbx_defaults_and_commands(void **state)
{
	struct manifest m;

	(void)state;
	assert_int_equal(parse(HEAD, &m), 0);
	/* No block: network none (SBX-3), required (SBX-5). */
	assert_int_equal(m.m_sandbox.sb_present, 0);
	assert_int_equal(m.m_sandbox.sb_network, MF_NET_NONE);
	assert_int_equal(m.m_sandbox.sb_isolation, MF_ISO_LANDLOCK);
	assert_int_equal(m.m_sandbox.sb_required, 1);
	assert_int_equal(m.m_commands.gp_ask_timeout_sec, GATE_ASK_TIMEOUT);
	manifest_free(&m);

	assert_int_equal(parse(HEAD "sandbox:\n"
				    "  readRoots: [~/.claude, /srv/a]\n"
				    "  required: false\n"
				    "commands:\n"
				    "  allow: [make]\n"
				    "  ask: [npm]\n"
				    "  hosts: [api.github.com]\n"
				    "  askTimeoutSec: 5\n",
			     &m),
	    0);
	assert_int_equal(m.m_sandbox.sb_network, MF_NET_NONE);
	assert_int_equal(m.m_sandbox.sb_required, 0);
	assert_string_equal(m.m_sandbox.sb_read_roots[0], "~/.claude");
	assert_int_equal(m.m_commands.gp_nallow, 1);
	assert_int_equal(m.m_commands.gp_ask_timeout_sec, 5);
	manifest_free(&m);

	refused_at(HEAD "sandbox:\n  readRoots: [\"~\"]\n", 7, 15,
	    "absolute or ~/ path");
	refused_at(HEAD "sandbox:\n  readRoots: [~root/x]\n", 7, 15,
	    "absolute or ~/ path");
	refused_at(HEAD "sandbox:\n  writeRoots: [~/a/../.ssh]\n", 7, 16,
	    "absolute or ~/ path");
	refused_at(HEAD "commands:\n  bogus: 1\n", 7, 3, "unknown key");
	refused_at(
	    HEAD "commands:\n  allow: [sudo]\n", 7, 11, "always-refused");
	refused_at(HEAD "commands: [ls]\n", 6, 1, "must be a mapping");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sbx_defaults_and_commands),
	    cmocka_unit_test(test_sp15_fixture_claude_code),
	    cmocka_unit_test(test_sp15_fixture_hermes),
	    cmocka_unit_test(test_sp15_additions),
	    cmocka_unit_test(test_sp15_eleven_actions_refused),
	    cmocka_unit_test(test_sp15_duplicate_action_id_refused),
	    cmocka_unit_test(test_sp15_action_id_33_chars_refused),
	    cmocka_unit_test(test_sp15_action_timeout_60001_refused),
	    cmocka_unit_test(test_sp15_action_fields_refused),
	    cmocka_unit_test(test_sp5_env_runtime_control_refused),
	    cmocka_unit_test(test_sp5_env_value_newline_refused),
	    cmocka_unit_test(test_sp5_env_too_many_refused),
	    cmocka_unit_test(test_sec3_secret_in_args_refused),
	    cmocka_unit_test(test_sec3_long_flag_not_secret),
	    cmocka_unit_test(test_sp15_capabilities_forms),
	    cmocka_unit_test(test_sec3_secret_in_env_refused),
	    cmocka_unit_test(test_sp15_transport_http_refused),
	    cmocka_unit_test(test_sp15_unknown_keys_refused),
	    cmocka_unit_test(test_sp15_unknown_key_did_you_mean),
	    cmocka_unit_test(test_sp15_range_named),
	    cmocka_unit_test(test_sp15_all_problems_collected),
	    cmocka_unit_test(test_sp3_prompt_placeholder_rules),
	    cmocka_unit_test(test_sp15_fields_refused),
	    cmocka_unit_test(test_sp15_error_overflow_counted),
	    cmocka_unit_test(test_sp15_not_a_mapping_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
