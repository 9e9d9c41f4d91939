/*
 * SBX-8: the gate hook a Claude Code or Codex manifest wires on its
 * command line, read back for its timeout (policy/hook_wire.c): the
 * shipped forms, a timeout too short for the gate's bound, other hooks
 * beside it, the separate-argument forms, and args that wire none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "gate.h"
#include "hook.h"
#include "manifest.h"
#include "yamljson.h"

static struct manifest m;

/* A manifest of bin with args (YAML flow items) and yaml after it. */
static void
load(const char *bin, const char *args, const char *extra)
{
	char y[4096];
	struct yaml_err ye;
	struct json_object *root;
	size_t n = 0;

	snprintf(y, sizeof(y),
	    "name: a\ntransport: subprocess\ntransportConfig:\n"
	    "  bin: %s\n  args: [%s, '{prompt}']\n%s",
	    bin, args, extra);
	root = yaml_load_buf(y, strlen(y), &ye);
	assert_non_null(root);
	assert_int_equal(manifest_parse(root, &m, NULL, 0, &n), 0);
	json_object_put(root);
}

#define CLAUDE(hooks)                                                          \
	"'--settings={\"hooks\":{\"PreToolUse\":[{\"matcher\":\"*\","          \
	"\"hooks\":[" hooks "]}]}}'"
#define CODEX(hooks)                                                           \
	"'--config=hooks.PreToolUse=[{matcher=\"*\",hooks=[" hooks "]}]'"

static long
timeout_of(void)
{
	struct hook_gate_wiring w;

	assert_int_equal(hook_gate_wiring(&m, &w), 1);
	return w.hg_timeout;
}

static void
test_sbx8_claude_gate_hook_read(void **state)
{
	struct hook_gate_wiring w;
	char why[256];

	(void)state;
	/* The shipped form: long enough, and blocking. */
	load("claude",
	    "'-p', " CLAUDE("{\"type\":\"command\",\"command\":\"{cordon} "
			    "gate\",\"timeout\":120,\"onFailure\":\"block\"}"),
	    "");
	assert_int_equal(hook_gate_wiring(&m, &w), 1);
	assert_int_equal(w.hg_timeout, 120);
	assert_true(w.hg_blocks);
	assert_int_equal(hook_gate_check(&m, why, sizeof(why)), 0);
	manifest_free(&m);
	/* Too short for askTimeoutSec 60 + 20: refused, in fixed words. */
	load("claude",
	    CLAUDE("{\"type\":\"command\",\"command\":\"/usr/bin/x\"},"
		   "{\"type\":\"command\",\"command\":\"/opt/c/cordon gate\","
		   "\"timeout\":79}"),
	    "");
	assert_int_equal(timeout_of(), 79);
	assert_int_equal(hook_gate_check(&m, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "(79 s)"));
	assert_non_null(strstr(why, "(80 s)"));
	assert_int_equal(hook_gate_wiring(&m, &w), 1);
	assert_false(w.hg_blocks);
	manifest_free(&m);
	/* The bound follows askTimeoutSec. */
	load("claude",
	    CLAUDE("{\"type\":\"command\",\"command\":\"{cordon} gate\","
		   "\"timeout\":120}"),
	    "commands:\n  askTimeoutSec: 300\n");
	assert_int_equal(hook_gate_check(&m, why, sizeof(why)), -1);
	manifest_free(&m);
	/* No timeout: Claude Code's own default (600 s). */
	load("claude",
	    "'--settings', '{\"hooks\":{\"PreToolUse\":[{\"hooks\":[{"
	    "\"type\":\"command\",\"command\":\"{cordon} gate\"}]}]}}'",
	    "");
	assert_int_equal(timeout_of(), 600);
	manifest_free(&m);
	/* A timeout that is no number counts as none at all. */
	load("claude",
	    CLAUDE("{\"type\":\"command\",\"command\":\"{cordon} gate\","
		   "\"timeout\":\"999\"}"),
	    "");
	assert_int_equal(timeout_of(), 0);
	manifest_free(&m);
}

static void
test_sbx8_codex_gate_hook_read(void **state)
{
	struct hook_gate_wiring w;
	char why[256];

	(void)state;
	load("codex",
	    "exec, " CODEX("{type=\"command\",command=\"{cordon} "
			   "gate\",timeout=120}"),
	    "");
	assert_int_equal(timeout_of(), 120);
	assert_int_equal(hook_gate_check(&m, why, sizeof(why)), 0);
	manifest_free(&m);
	/* Another hook's timeout is not the gate's; -c VALUE form. */
	load("codex",
	    "'-c', 'hooks.PreToolUse=[{matcher=\"*\",hooks=[{type=\"command\","
	    "command=\"/bin/log\",timeout=900},{timeout=30,type=\"command\","
	    "command=\"{cordon} gate\"}]}]'",
	    "");
	assert_int_equal(timeout_of(), 30);
	assert_int_equal(hook_gate_check(&m, why, sizeof(why)), -1);
	manifest_free(&m);
	/* TOML's blanks around '=' and after ',' read the same. */
	load("codex",
	    "'-c', 'hooks.PreToolUse = [{ matcher = \"*\", hooks = [{ type = "
	    "\"command\", command = \"{cordon} gate\", timeout = 45 }] }]'",
	    "");
	assert_int_equal(timeout_of(), 45);
	assert_int_equal(hook_gate_check(&m, why, sizeof(why)), -1);
	manifest_free(&m);
	/* No timeout: refused (Codex's default is not cordon's to know). */
	load(
	    "codex", CODEX("{type=\"command\",command=\"{cordon} gate\"}"), "");
	assert_int_equal(timeout_of(), 0);
	assert_int_equal(hook_gate_check(&m, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "timeout (none)"));
	manifest_free(&m);
	/* No gate hook wired by the args: nothing to check. */
	load("codex", "exec, '--config=model=\"o3\"'", "");
	assert_int_equal(hook_gate_wiring(&m, &w), 0);
	assert_int_equal(hook_gate_check(&m, why, sizeof(why)), 0);
	manifest_free(&m);
	/* Not a CLI cordon reads: its args are not looked at. */
	load("/bin/echo",
	    CLAUDE("{\"type\":\"command\",\"command\":\"{cordon} gate\","
		   "\"timeout\":1}"),
	    "");
	assert_int_equal(hook_gate_wiring(&m, &w), 0);
	manifest_free(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sbx8_claude_gate_hook_read),
	    cmocka_unit_test(test_sbx8_codex_gate_hook_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
