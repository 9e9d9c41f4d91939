/*
 * Unit tests for policy/argv.c (SP-1, SP-2, SP-3, AU-4, API-3): the prompt
 * as exactly one element, never a flag, bounded, NUL-free; the audit form
 * with [PROMPT_REDACTED] and [REDACTED].
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "argv.h"
#include "text.h"
#include "unicode.h"
#include "manifest.h"
#include "policy_test.h"
#include "util.h"

static void
load(const char *args, const char *extra, struct manifest *m)
{
	char y[4096];

	snprintf(y, sizeof(y),
	    "name: t\ntransport: subprocess\n%stransportConfig:\n"
	    "  bin: agent\n  args: %s\n",
	    extra, args);
	assert_int_equal(pt_manifest(y, m), 0);
}

static size_t
count(char **v)
{
	size_t n = 0;

	while (v[n] != NULL)
		n++;
	return n;
}

/* SP-1: the prompt is exactly one element; argv[0] is the bin. */
static void
test_sp1_prompt_one_element(void **state)
{
	struct manifest m;
	const char *err;
	char **v;
	int in;

	(void)state;
	load("[\"-z\", \"{prompt}\"]", "", &m);
	assert_int_equal(argv_build(&m, "hello; rm -rf / $(id) `x` * 'q'", NULL,
			     &v, &in, &err),
	    0);
	assert_int_equal(in, 0);
	assert_int_equal(count(v), 3);
	assert_string_equal(v[0], "agent");
	assert_string_equal(v[1], "-z");
	assert_string_equal(v[2], "hello; rm -rf / $(id) `x` * 'q'");
	strv_free(v);
	/* a prompt holding "{prompt}" is not expanded again */
	assert_int_equal(
	    argv_build(&m, "{prompt} {prompt}", NULL, &v, &in, &err), 0);
	assert_string_equal(v[2], "{prompt} {prompt}");
	strv_free(v);
	manifest_free(&m);
}

/* SBX-8: each {cordon} becomes cordon's path; none to give, refused. */
static void
test_sbx8_cordon_placeholder(void **state)
{
	struct manifest m;
	const char *err;
	char **v;
	int in;

	(void)state;
	load("[\"--s={\\\"c\\\":\\\"{cordon} "
	     "gate\\\",\\\"d\\\":\\\"{cordon}\\\"}\", "
	     "\"--\", \"{prompt}\"]",
	    "", &m);
	assert_int_equal(
	    argv_build(&m, "{cordon}", "/opt/c/bin/cordon", &v, &in, &err), 0);
	assert_string_equal(v[1], "--s={\"c\":\"/opt/c/bin/cordon "
				  "gate\",\"d\":\"/opt/c/bin/cordon\"}");
	/* a prompt holding "{cordon}" is not expanded */
	assert_string_equal(v[3], "{cordon}");
	strv_free(v);
	assert_int_equal(argv_build(&m, "hi", NULL, &v, &in, &err), -1);
	assert_string_equal(err, "no-cordon");
	assert_null(v);
	manifest_free(&m);
	/* no {cordon}: no path needed */
	load("[\"{prompt}\"]", "", &m);
	assert_int_equal(argv_build(&m, "hi", NULL, &v, &in, &err), 0);
	strv_free(v);
	manifest_free(&m);
}

/* SP-3: a prompt starting with '-' standing alone is refused. */
static void
test_sp3_prompt_flag_like_refused(void **state)
{
	struct manifest m;
	const char *err;
	char **v = (char **)1;
	int in;

	(void)state;
	load("[\"-p\", \"{prompt}\"]", "", &m);
	assert_int_equal(argv_build(&m, "--dangerously-skip-permissions", NULL,
			     &v, &in, &err),
	    -1);
	assert_string_equal(err, "prompt-flag-like");
	assert_null(v);
	assert_int_equal(argv_build(&m, "-x", NULL, &v, &in, &err), -1);
	assert_string_equal(err, "prompt-flag-like");
	assert_int_equal(argv_build(&m, " -x", NULL, &v, &in, &err), 0);
	strv_free(v);
	manifest_free(&m);
	/* "{prompt}suffix" still starts the element */
	load("[\"{prompt}.txt\"]", "", &m);
	assert_int_equal(argv_build(&m, "-rf", NULL, &v, &in, &err), -1);
	assert_string_equal(err, "prompt-flag-like");
	manifest_free(&m);
}

/* SP-3: fused, after "--", or by stdin: a dash prompt is fine. */
static void
test_sp3_prompt_fused_dashdash_stdin_ok(void **state)
{
	struct manifest m;
	const char *err;
	char **v;
	int in;

	(void)state;
	load("[\"--prompt={prompt}\"]", "", &m);
	assert_int_equal(argv_build(&m, "-rf", NULL, &v, &in, &err), 0);
	assert_string_equal(v[1], "--prompt=-rf");
	strv_free(v);
	manifest_free(&m);
	load("[\"-p\", \"--\", \"{prompt}\"]", "", &m);
	assert_int_equal(argv_build(&m, "--help", NULL, &v, &in, &err), 0);
	assert_string_equal(v[3], "--help");
	strv_free(v);
	manifest_free(&m);
	load("[\"-p\"]", "promptVia: stdin\n", &m);
	assert_int_equal(argv_build(&m, "--help", NULL, &v, &in, &err), 0);
	assert_int_equal(in, 1);
	assert_int_equal(count(v), 2);
	strv_free(v);
	manifest_free(&m);
}

/* API-3, SP-2: empty, NUL, invalid UTF-8, too long. */
static void
test_sp2_prompt_bounds(void **state)
{
	struct manifest m;
	const char *err;
	char **v;
	char *big;
	int in;

	(void)state;
	load("[\"{prompt}\"]", "", &m);
	assert_int_equal(argv_build(&m, "", NULL, &v, &in, &err), -1);
	assert_string_equal(err, "invalid-prompt");
	assert_int_equal(argv_build(&m, NULL, NULL, &v, &in, &err), -1);
	assert_int_equal(argv_build(&m, "a\xff", NULL, &v, &in, &err), -1);
	assert_string_equal(err, "invalid-prompt");
	assert_int_equal(argv_prompt_ok("a\0b", 3), -1); /* NUL */
	assert_int_equal(argv_prompt_ok("ab", 2), 0);
	/* 32 KiB element limit on argv */
	big = malloc(256001 * 4 + 1);
	assert_non_null(big);
	memset(big, 'a', 32768);
	big[32768] = '\0';
	assert_int_equal(argv_build(&m, big, NULL, &v, &in, &err), 0);
	strv_free(v);
	big[32768] = 'a';
	big[32769] = '\0';
	assert_int_equal(argv_build(&m, big, NULL, &v, &in, &err), -1);
	assert_string_equal(err, "invalid-prompt");
	/* 256000 code points ok, 256001 not (counted in code points) */
	memset(big, 'a', 256000);
	big[256000] = '\0';
	assert_int_equal(argv_prompt_ok(big, 256000), 0);
	big[256000] = 'a';
	assert_int_equal(argv_prompt_ok(big, 256001), -1);
	/* 4-byte code points: 64000 emoji = 256000 bytes, 64000 chars */
	assert_int_equal(uni_utf8_chars("\xf0\x9f\x98\x80"
					"a",
			     5),
	    2);
	free(big);
	manifest_free(&m);
}

/* AU-4: audit form of the args. */
static void
test_au4_argv_redacted(void **state)
{
	struct manifest m;
	char **v;

	(void)state;
	load("[\"-p\", \"--output-format=stream-json\", \"--model\", \"x\", "
	     "\"--prompt={prompt}\", \"caf\xc3\xa9\"]",
	    "", &m);
	assert_int_equal(argv_redacted(&m, &v), 0);
	assert_int_equal(count(v), 6);
	assert_string_equal(v[0], "-p");
	assert_string_equal(v[1], "--output-format=stream-json");
	assert_string_equal(v[3], "x");
	assert_string_equal(v[4], "[PROMPT_REDACTED]");
	assert_string_equal(v[5], "[REDACTED]"); /* not printable ASCII */
	strv_free(v);
	manifest_free(&m);
	/* the flag itself stays; its value would be redacted (and a
	 * manifest giving one is refused, see test_manifest) */
	load("[\"--token\", \"{prompt}\"]", "", &m);
	assert_int_equal(argv_redacted(&m, &v), 0);
	assert_string_equal(v[0], "--token");
	assert_string_equal(v[1], "[PROMPT_REDACTED]");
	strv_free(v);
	manifest_free(&m);
	assert_int_equal(argv_secret_flag("--api-key"), 1);
	assert_int_equal(argv_secret_flag("-password"), 1);
	assert_int_equal(argv_secret_flag("--api-key=x"), 0);
	assert_int_equal(argv_secret_flag("--model"), 0);
	assert_int_equal(argv_secret_flag("value"), 0);
}

static void
assert_argv(char **v, const char *const *want)
{
	size_t i;

	for (i = 0; want[i] != NULL; i++)
		assert_string_equal(v[i], want[i]);
	assert_null(v[i]);
}

/* SBX-9: each known CLI's own login after its bin, as written. */
static void
test_sbx9_login_defaults(void **state)
{
	static const struct {
		const char *bin;
		const char *want[4];
	} cases[] = {
	    {"claude", {"claude", "auth", "login", NULL}},
	    {"/usr/bin/codex", {"/usr/bin/codex", "login", NULL}},
	    {"gemini", {"gemini", NULL}},
	};
	static const char *const node_want[] = {"node", "--no-warnings",
	    "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js", "auth",
	    "login", NULL};
	struct manifest m;
	const char *err;
	char y[512], **v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(y, sizeof(y),
		    "name: t\ntransport: subprocess\ntransportConfig:\n"
		    "  bin: %s\n  args: [\"{prompt}\"]\n",
		    cases[i].bin);
		assert_int_equal(pt_manifest(y, &m), 0);
		assert_int_equal(argv_login(&m, NULL, 0, &v, &err), 0);
		assert_argv(v, cases[i].want);
		strv_free(v);
		manifest_free(&m);
	}
	/* SBX-8: node and the CLI's script: the login follows the script. */
	assert_int_equal(
	    pt_manifest(
		"name: t\ntransport: subprocess\ntransportConfig:\n"
		"  bin: node\n  args: [--no-warnings, "
		"/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js, "
		"-p, \"{prompt}\"]\n",
		&m),
	    0);
	assert_int_equal(argv_login(&m, NULL, 0, &v, &err), 0);
	assert_argv(v, node_want);
	strv_free(v);
	manifest_free(&m);
	/* An unknown CLI has none: the manifest must say. */
	load("[\"{prompt}\"]", "", &m);
	assert_int_equal(argv_login(&m, NULL, 0, &v, &err), -1);
	assert_string_equal(err, "no-login");
	assert_null(v);
	manifest_free(&m);
}

/* SBX-9: `login:` wins; the operator's ARGS replace its arguments. */
static void
test_sbx9_login_manifest_and_args(void **state)
{
	static const char *const want1[] = {"fakecli", "--login", "x", NULL};
	static const char *const want2[] = {"fakecli", "status", NULL};
	char *args[] = {"status"};
	struct manifest m;
	const char *err;
	char **v;

	(void)state;
	load("[\"{prompt}\"]", "login: [fakecli, --login, x]\n", &m);
	assert_int_equal(argv_login(&m, NULL, 0, &v, &err), 0);
	assert_argv(v, want1);
	strv_free(v);
	assert_int_equal(argv_login(&m, args, 1, &v, &err), 0);
	assert_argv(v, want2);
	strv_free(v);
	manifest_free(&m);
}

/* SEC-3, SP-2: no secret among the operator's ARGS; bounded elements. */
static void
test_sec3_login_args_no_secret(void **state)
{
	char *key[] = {
	    "login", "sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
	char *flag[] = {"--api-key", "hunter2-but-plain"};
	char *empty[] = {""};
	char *big = malloc(LIM_ARG_MAX_BYTES + 2);
	char *huge[] = {big};
	struct manifest m;
	const char *err;
	char **v;

	(void)state;
	assert_non_null(big);
	memset(big, 'a', LIM_ARG_MAX_BYTES + 1);
	big[LIM_ARG_MAX_BYTES + 1] = '\0';
	load("[\"{prompt}\"]", "login: [fakecli]\n", &m);
	assert_int_equal(argv_login(&m, key, 2, &v, &err), -1);
	assert_string_equal(err, "secret-argument");
	assert_int_equal(argv_login(&m, flag, 2, &v, &err), -1);
	assert_string_equal(err, "secret-argument");
	assert_int_equal(argv_login(&m, empty, 1, &v, &err), -1);
	assert_string_equal(err, "invalid-argument");
	assert_int_equal(argv_login(&m, huge, 1, &v, &err), -1);
	assert_string_equal(err, "invalid-argument");
	manifest_free(&m);
	free(big);
}

/* SBX-9, SP-15: `login:` is checked as strictly as any command. */
static void
test_sbx9_login_key_strict(void **state)
{
	static const char *const bad[] = {
	    "login: []\n",
	    "login: fakecli\n",
	    "login: [fakecli, \"{prompt}\"]\n",
	    "login: [fakecli, --token, abc]\n",
	    "login: [fakecli, \"sk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]\n",
	};
	struct manifest m;
	char y[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(y, sizeof(y),
		    "name: t\ntransport: subprocess\n%stransportConfig:\n"
		    "  bin: agent\n  args: [\"{prompt}\"]\n",
		    bad[i]);
		assert_int_equal(pt_manifest(y, &m), -1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sp1_prompt_one_element),
	    cmocka_unit_test(test_sbx8_cordon_placeholder),
	    cmocka_unit_test(test_sp3_prompt_flag_like_refused),
	    cmocka_unit_test(test_sp3_prompt_fused_dashdash_stdin_ok),
	    cmocka_unit_test(test_sp2_prompt_bounds),
	    cmocka_unit_test(test_au4_argv_redacted),
	    cmocka_unit_test(test_sbx9_login_defaults),
	    cmocka_unit_test(test_sbx9_login_manifest_and_args),
	    cmocka_unit_test(test_sec3_login_args_no_secret),
	    cmocka_unit_test(test_sbx9_login_key_strict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
