/*
 * Unit tests for policy/hook.c (SBX-8): each CLI's real hook input
 * (tests/fixtures/hooks/) decodes to the right gate checks, unknown tools
 * are refused, bad input is refused, and each CLI gets the answer form it
 * reads as allow (Codex: silence) or block (exit 2, reason on stderr).
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

#include "hook.h"
#include "policy_test.h"
#include "json.h"

static struct hook_call hc;

/* s with every {cwd} and {ws} replaced by "/w" (into a static buffer). */
static const char *
placeheld(const char *s)
{
	static char out[1 << 16];
	size_t o = 0;

	while (*s != '\0' && o + 3 < sizeof(out)) {
		if (strncmp(s, "{cwd}", 5) == 0 || strncmp(s, "{ws}", 4) == 0) {
			memcpy(out + o, "/w", 2);
			o += 2;
			s += s[1] == 'c' ? 5 : 4;
			continue;
		}
		out[o++] = *s++;
	}
	out[o] = '\0';
	return out;
}

/* Decode a JSON text; the tree is returned for the caller to put. */
static struct json_object *
decode(const char *text, int want)
{
	const char *t = placeheld(text);
	struct json_object *in = json_parse_object(t, strlen(t), 16);

	assert_non_null(in);
	assert_int_equal(hook_decode(in, &hc), want);
	return in;
}

static struct json_object *
decode_fixture(const char *name, int want)
{
	char *y = pt_fixture("hooks", name);
	struct json_object *in = decode(y, want);

	free(y);
	return in;
}

static void
want_check(size_t i, enum hook_kind k, const char *line, const char *path)
{
	assert_true(i < hc.hk_nchecks);
	assert_int_equal(hc.hk_checks[i].hc_kind, k);
	if (line == NULL)
		assert_null(hc.hk_checks[i].hc_line);
	else
		assert_string_equal(hc.hk_checks[i].hc_line, line);
	if (path == NULL)
		assert_null(hc.hk_checks[i].hc_path);
	else
		assert_string_equal(hc.hk_checks[i].hc_path, path);
}

static void
test_sbx8_claude_fixtures(void **state)
{
	struct json_object *in;

	(void)state;
	in = decode_fixture("claude-bash.json", 0);
	assert_int_equal(hc.hk_cli, HOOK_CLAUDE);
	assert_string_equal(hc.hk_tool, "Bash");
	assert_string_equal(hc.hk_cwd, "/w");
	assert_int_equal(hc.hk_nchecks, 1);
	want_check(0, HK_SHELL, "ls -la", NULL);
	json_object_put(in);
	in = decode_fixture("claude-read-ssh.json", 0);
	want_check(0, HK_READ, NULL, "~/.ssh/id_rsa");
	json_object_put(in);
	/* An MCP tool cordon cannot judge: refused by the spawner. */
	in = decode_fixture("claude-mcp.json", 0);
	assert_string_equal(hc.hk_tool, "mcp__files__delete");
	want_check(0, HK_UNKNOWN, NULL, NULL);
	json_object_put(in);
}

static void
test_sbx8_codex_fixtures(void **state)
{
	struct json_object *in;

	(void)state;
	in = decode_fixture("codex-bash.json", 0);
	assert_int_equal(hc.hk_cli, HOOK_CODEX);
	want_check(0, HK_SHELL, "ls -la", NULL);
	json_object_put(in);
	/* A patch: one write check per file it touches. */
	in = decode_fixture("codex-apply-patch.json", 0);
	assert_string_equal(hc.hk_tool, "apply_patch");
	assert_int_equal(hc.hk_nchecks, 2);
	want_check(0, HK_WRITE, NULL, "/w/hello.txt");
	want_check(1, HK_WRITE, NULL, "notes.md");
	json_object_put(in);
	in = decode("{\"hook_event_name\":\"PreToolUse\",\"turn_id\":\"1\","
		    "\"tool_name\":\"apply_patch\",\"tool_input\":{\"command\":"
		    "\"*** Begin Patch\\r\\n*** Delete File: a\\r\\n"
		    "*** Update File: b\\n*** Move to: ../c\\n\"}}",
	    0);
	assert_int_equal(hc.hk_nchecks, 3);
	want_check(0, HK_WRITE, NULL, "a");
	want_check(2, HK_WRITE, NULL, "../c");
	json_object_put(in);
	/* A patch that names no file is not one. */
	json_object_put(
	    decode("{\"hook_event_name\":\"PreToolUse\",\"turn_id\":"
		   "\"1\",\"tool_name\":\"apply_patch\","
		   "\"tool_input\":{\"command\":\"rm -rf /\"}}",
		-1));
}

static void
test_sbx8_gemini_fixtures(void **state)
{
	struct json_object *in;

	(void)state;
	in = decode_fixture("gemini-run-shell.json", 0);
	assert_int_equal(hc.hk_cli, HOOK_GEMINI);
	assert_string_equal(hc.hk_tool, "run_shell_command");
	assert_string_equal(hc.hk_cwd, "/w/sub"); /* dir_path */
	want_check(0, HK_SHELL, "ls -la", NULL);
	json_object_put(in);
	in = decode_fixture("gemini-read-file.json", 0);
	want_check(0, HK_READ, NULL, "/w/a.txt");
	json_object_put(in);
	in = decode_fixture("gemini-write-file-outside.json", 0);
	want_check(0, HK_WRITE, NULL, "/etc/cordon-test");
	json_object_put(in);
	in = decode_fixture("gemini-read-many-files.json", 0);
	assert_int_equal(hc.hk_nchecks, 2);
	want_check(1, HK_READ, NULL, "~/.ssh/id_rsa");
	json_object_put(in);
	/* The older names of the same tools. */
	in = decode("{\"hook_event_name\":\"BeforeTool\",\"cwd\":\"/w\","
		    "\"tool_name\":\"read_file\",\"tool_input\":"
		    "{\"absolute_path\":\"/etc/shadow\"}}",
	    0);
	want_check(0, HK_READ, NULL, "/etc/shadow");
	json_object_put(in);
	in = decode(
	    "{\"hook_event_name\":\"BeforeTool\",\"tool_name\":"
	    "\"search_file_content\",\"tool_input\":{\"pattern\":\"x\"}}",
	    0);
	want_check(0, HK_SEARCH, NULL, NULL);
	json_object_put(in);
	in = decode("{\"hook_event_name\":\"BeforeTool\",\"tool_name\":"
		    "\"web_fetch\",\"tool_input\":{\"prompt\":\"x\"}}",
	    0);
	want_check(0, HK_WEB, NULL, NULL);
	json_object_put(in);
}

/* Input that is not a pre-tool call, or lacks what its check needs. */
static void
test_sbx8_bad_input_refused(void **state)
{
	static const char *const bad[] = {"[]",
	    "{\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\","
	    "\"tool_input\":{\"command\":\"ls\"}}",
	    "{\"hook_event_name\":\"AfterTool\",\"tool_name\":\"Bash\","
	    "\"tool_input\":{\"command\":\"ls\"}}",
	    "{\"hook_event_name\":7,\"tool_name\":\"Bash\","
	    "\"tool_input\":{\"command\":\"ls\"}}",
	    "{\"tool_name\":\"Bash\",\"tool_input\":{}}",
	    "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":[\"ls\"]}}",
	    "{\"tool_name\":\"Bash\",\"tool_input\":\"ls\"}",
	    "{\"tool_name\":\"Read\",\"tool_input\":{}}",
	    "{\"tool_name\":\"Read\",\"tool_input\":{\"file_path\":\"\"}}",
	    "{\"tool_name\":\"bad name\",\"tool_input\":{}}",
	    "{\"tool_name\":\"\",\"tool_input\":{}}",
	    "{\"tool_input\":{\"command\":\"ls\"}}",
	    "{\"cwd\":5,\"tool_name\":\"Bash\",\"tool_input\":"
	    "{\"command\":\"ls\"}}",
	    /* a relative dir_path needs an absolute cwd */
	    "{\"hook_event_name\":\"BeforeTool\",\"tool_name\":"
	    "\"run_shell_command\",\"tool_input\":{\"command\":\"ls\","
	    "\"dir_path\":\"sub\"}}",
	    "{\"hook_event_name\":\"BeforeTool\",\"tool_name\":"
	    "\"read_many_files\",\"tool_input\":{\"include\":[]}}",
	    "{\"hook_event_name\":\"BeforeTool\",\"tool_name\":"
	    "\"read_many_files\",\"tool_input\":{\"include\":[1]}}",
	    NULL};
	struct json_object *in;
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		in = json_parse_object(bad[i], strlen(bad[i]), 16);
		assert_int_equal(hook_decode(in, &hc), -1);
		assert_int_equal(hc.hk_nchecks, 0);
		json_object_put(in);
	}
	assert_int_equal(hook_decode(NULL, &hc), -1);
}

/* Unknown tools of every CLI are refused; a tool of one CLI is not known
 * to another under that name. */
static void
test_sbx8_unknown_tools(void **state)
{
	struct json_object *in;

	(void)state;
	in = decode("{\"hook_event_name\":\"BeforeTool\",\"tool_name\":"
		    "\"Bash\",\"tool_input\":{\"command\":\"ls\"}}",
	    0);
	want_check(0, HK_UNKNOWN, NULL, NULL);
	json_object_put(in);
	in = decode("{\"turn_id\":\"1\",\"tool_name\":\"Read\","
		    "\"tool_input\":{\"file_path\":\"/x\"}}",
	    0);
	assert_int_equal(hc.hk_cli, HOOK_CODEX);
	want_check(0, HK_UNKNOWN, NULL, NULL);
	json_object_put(in);
	in = decode("{\"tool_name\":\"TodoWrite\",\"tool_input\":{}}", 0);
	want_check(0, HK_INERT, NULL, NULL);
	json_object_put(in);
}

static void
test_sbx8_answers(void **state)
{
	char out[HOOK_ANSWER_MAX], err[HOOK_ANSWER_MAX];
	struct json_object *o, *h, *v;
	int st;

	(void)state;
	/* Claude Code: the permissionDecision JSON. */
	assert_int_equal(hook_answer(HOOK_CLAUDE, 1, "allowlist", "ok", out,
			     sizeof(out), err, sizeof(err), &st),
	    0);
	assert_int_equal(st, 0);
	assert_string_equal(err, "");
	o = json_parse_object(out, strlen(out), 16);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "hookSpecificOutput", &h));
	assert_string_equal(json_get_str(h, "permissionDecision", 16), "allow");
	assert_string_equal(json_get_str(h, "hookEventName", 16), "PreToolUse");
	json_object_put(o);
	/* Codex: allow is silence (its parser fails "allow" without a
	 * rewritten input). */
	assert_int_equal(hook_answer(HOOK_CODEX, 1, "allowlist", "ok", out,
			     sizeof(out), err, sizeof(err), &st),
	    0);
	assert_int_equal(st, 0);
	assert_string_equal(out, "");
	assert_string_equal(err, "");
	/* Gemini CLI: only the decision JSON on stdout. */
	assert_int_equal(hook_answer(HOOK_GEMINI, 1, "allowlist", "ok", out,
			     sizeof(out), err, sizeof(err), &st),
	    0);
	assert_int_equal(st, 0);
	o = json_parse_object(out, strlen(out), 16);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "decision", &v));
	assert_string_equal(json_object_get_string(v), "allow");
	assert_int_equal(json_object_object_length(o), 1);
	json_object_put(o);
	/* A refusal: exit 2 and one line on stderr, nothing on stdout. */
	for (st = HOOK_CLAUDE; st <= HOOK_GEMINI; st++) {
		int status = -1;

		assert_int_equal(
		    hook_answer((enum hook_cli)st, 0, "protected-path",
			"refused by cordon's command gate", out, sizeof(out),
			err, sizeof(err), &status),
		    0);
		assert_int_equal(status, 2);
		assert_string_equal(out, "");
		assert_string_equal(err, "cordon gate: refused by cordon's "
					 "command gate (protected-path)\n");
	}
	assert_int_equal(hook_answer(HOOK_CLAUDE, 0, "r", "m", out, sizeof(out),
			     err, 8, &st),
	    -1);
}

static void
test_sbx8_kind_names(void **state)
{
	int k;

	(void)state;
	for (k = HK_SHELL; k <= HK_UNKNOWN; k++)
		assert_int_equal(
		    hook_kind_parse(hook_kind_name((enum hook_kind)k)), k);
	assert_int_equal(hook_kind_parse("exec"), -1);
	assert_int_equal(hook_kind_parse(NULL), -1);
	assert_string_equal(hook_cli_name(HOOK_GEMINI), "gemini");
}

/* SBX-8: the Gemini CLI settings cordon writes: valid JSON, the gate
 * hook under the given name run as cordon's absolute path, hooks on, the
 * way in; odd names and a cordon that is no plain absolute path refused. */
static void
test_sbx8_gemini_settings(void **state)
{
	struct json_object *o, *h;
	char buf[512];

	assert_int_equal(hook_gemini_settings("cordon-gate-0a1b",
			     "/usr/bin/cordon", 0, 80000, buf, sizeof(buf)),
	    0);
	o = json_parse_object(buf, strlen(buf), 16);
	assert_non_null(o);
	assert_string_equal(
	    json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	    "{\"security\":{\"auth\":{\"selectedType\":\"gemini-api-key\"}},"
	    "\"hooksConfig\":{\"enabled\":true},\"hooks\":{\"BeforeTool\":"
	    "[{\"matcher\":\".*\",\"hooks\":[{\"type\":\"command\","
	    "\"name\":\"cordon-gate-0a1b\",\"command\":\"/usr/bin/cordon "
	    "gate\","
	    "\"timeout\":80000}]}]}}");
	json_object_put(o);
	assert_int_equal(
	    hook_gemini_settings("n", "/c", 1, 1000, buf, sizeof(buf)), 0);
	o = json_parse_object(buf, strlen(buf), 16);
	assert_true(json_object_object_get_ex(o, "security", &h));
	assert_non_null(
	    strstr(json_object_to_json_string(h), "oauth-personal"));
	json_object_put(o);
	assert_int_equal(
	    hook_gemini_settings("", "/c", 0, 1000, buf, sizeof(buf)), -1);
	assert_int_equal(
	    hook_gemini_settings("a\"b", "/c", 0, 1000, buf, sizeof(buf)), -1);
	assert_int_equal(
	    hook_gemini_settings("a b", "/c", 0, 1000, buf, sizeof(buf)), -1);
	assert_int_equal(
	    hook_gemini_settings("ok", "/c", 0, 1000, buf, 16), -1);
	assert_int_equal(
	    hook_gemini_settings("ok", NULL, 0, 1000, buf, sizeof(buf)), -1);
	assert_int_equal(
	    hook_gemini_settings("ok", "cordon", 0, 1000, buf, sizeof(buf)),
	    -1);
	assert_int_equal(hook_gemini_settings(
			     "ok", "/a b/cordon", 0, 1000, buf, sizeof(buf)),
	    -1);
	assert_int_equal(hook_gemini_settings(
			     "ok", "/a\"/cordon", 0, 1000, buf, sizeof(buf)),
	    -1);
}

/* SBX-8: project settings that could unwire the hook are named. */
static void
test_sbx8_gemini_project_settings(void **state)
{
	static const struct {
		const char *in;
		const char *want;
	} cases[] = {
	    {"{}", NULL},
	    {"{\"context\":{\"fileName\":\"AGENTS.md\"},\"mcpServers\":{}}",
		NULL},
	    {"{\"hooksConfig\":{\"enabled\":false}}", "hooksConfig"},
	    {"{\"hooksConfig\":false}", "hooksConfig"},
	    {"{\"hooks\":\"x\"}", "hooks"},
	    {"{\"hooks\":{\"BeforeTool\":[]}}", "hooks"},
	    {"{\"hooks\\u0043onfig\":{\"enabled\":false}}", "hooksConfig"},
	    {"{\"ui\":{},\"ui\":{}}", "not-strict-json"},
	    {"{/* c */\"hooksConfig\":{}}", "not-strict-json"},
	    {"{\"a\":1,}", "not-strict-json"},
	    {"[]", "not-strict-json"},
	    {"", "not-strict-json"},
	};
	const char *got;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = hook_gemini_project(cases[i].in, strlen(cases[i].in));
		if (cases[i].want == NULL)
			assert_null(got);
		else {
			assert_non_null(got);
			assert_string_equal(got, cases[i].want);
		}
	}
}

/* SBX-8: Claude Code's global config may not set env for its hook. */
static void
test_sbx8_claude_config_env(void **state)
{
	static const struct {
		const char *in;
		const char *want;
	} cases[] = {
	    {"{\"userID\":\"x\",\"projects\":{\"/w\":{\"env\":1}}}", NULL},
	    {"{\"env\":{\"LD_PRELOAD\":\"/w/x.so\"}}", "env"},
	    {"{\"env\":{}}", "env"},
	    {"{\"e\\u006ev\":{}}", "env"},
	    {"{\"env\":1,\"env\":2}", "not-strict-json"},
	    {"[]", "not-strict-json"},
	};
	const char *got;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = hook_claude_config(cases[i].in, strlen(cases[i].in));
		if (cases[i].want == NULL)
			assert_null(got);
		else {
			assert_non_null(got);
			assert_string_equal(got, cases[i].want);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sbx8_claude_fixtures),
	    cmocka_unit_test(test_sbx8_codex_fixtures),
	    cmocka_unit_test(test_sbx8_gemini_fixtures),
	    cmocka_unit_test(test_sbx8_bad_input_refused),
	    cmocka_unit_test(test_sbx8_unknown_tools),
	    cmocka_unit_test(test_sbx8_answers),
	    cmocka_unit_test(test_sbx8_kind_names),
	    cmocka_unit_test(test_sbx8_gemini_settings),
	    cmocka_unit_test(test_sbx8_gemini_project_settings),
	    cmocka_unit_test(test_sbx8_claude_config_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
