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
#include "policy_test.h"

static struct manifest m;

/* A manifest of bin with args (YAML flow items) and yaml after it. */
static void
load(const char *bin, const char *args, const char *extra)
{
	char y[4096];

	snprintf(y, sizeof(y),
	    "name: a\ntransport: subprocess\ntransportConfig:\n"
	    "  bin: %s\n  args: [%s, '{prompt}']\n%s",
	    bin, args, extra);
	assert_int_equal(pt_manifest(y, &m), 0);
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

/* hook_gate_check refuses the loaded manifest. */
static int
refused(void)
{
	char why[256];
	int r = hook_gate_check(&m, why, sizeof(why)) == -1;

	manifest_free(&m);
	return r;
}

/*
 * Spellings of a gate hook that Claude Code reads and the check must
 * read too (or refuse as unread): each with a timeout too short.
 */
static void
test_sbx8_claude_gate_hook_other_spellings(void **state)
{
	struct hook_gate_wiring w;

	(void)state;
	/* JSON after blanks: Claude Code reads it as inline JSON. */
	load("claude",
	    "'--settings= {\"hooks\":{\"PreToolUse\":[{\"hooks\":[{\"type\":"
	    "\"command\",\"command\":\"{cordon} gate\",\"timeout\":5}]}]}}'",
	    "");
	assert_true(refused());
	/* A command that does not end in " gate". */
	load("claude",
	    CLAUDE("{\"type\":\"command\",\"command\":\"exec {cordon} gate "
		   "2>>/tmp/gate.log\",\"timeout\":5}"),
	    "");
	assert_true(refused());
	/* Two gate hooks: the shorter one counts, whichever comes last. */
	load("claude",
	    CLAUDE(
		"{\"type\":\"command\",\"command\":\"{cordon} gate\","
		"\"timeout\":5},{\"type\":\"command\",\"command\":\"{cordon} "
		"gate\",\"timeout\":120,\"onFailure\":\"block\"}"),
	    "");
	assert_int_equal(timeout_of(), 5);
	assert_int_equal(hook_gate_wiring(&m, &w), 1);
	assert_false(w.hg_blocks);
	assert_true(refused());
	/* A duplicate key: Claude Code reads the last one, the strict
	 * parser none, so the settings are unread and refused. */
	load("claude",
	    "'--settings={\"hooks\":{\"PreToolUse\":[{\"hooks\":[{\"type\":"
	    "\"command\",\"command\":\"{cordon} gate\",\"timeout\":120,"
	    "\"timeout\":5}]}]}}'",
	    "");
	assert_true(refused());
	/* A settings file: Claude Code reads it, the check cannot. */
	load("claude", "'--settings', '/etc/cordon/claude.json'", "");
	assert_true(refused());
	/* --settings twice: each is read. */
	load("claude",
	    CLAUDE("{\"type\":\"command\",\"command\":\"{cordon} gate\","
		   "\"timeout\":5}") ", " CLAUDE("{\"type\":\"command\","
						 "\"command\":\"{cordon} "
						 "gate\",\"timeout\":120}"),
	    "");
	assert_true(refused());
	/* A fraction of a second is no reason to refuse: whole seconds. */
	load("claude",
	    CLAUDE("{\"type\":\"command\",\"command\":\"{cordon} gate\","
		   "\"timeout\":120.5}"),
	    "");
	assert_int_equal(timeout_of(), 120);
	assert_false(refused());
}

static void
test_sbx8_codex_gate_hook_other_spellings(void **state)
{
	(void)state;
	/* -cVALUE and -c=VALUE: Codex's parser takes both. */
	load("codex",
	    "'-chooks.PreToolUse=[{hooks=[{type=\"command\",command=\"{cordon} "
	    "gate\",timeout=5}]}]'",
	    "");
	assert_int_equal(timeout_of(), 5);
	assert_true(refused());
	load("codex",
	    "'-c=hooks.PreToolUse=[{hooks=[{type=\"command\",command=\"{cordon}"
	    " gate\",timeout=5}]}]'",
	    "");
	assert_true(refused());
	/* The hooks table one level up, and a quoted key. */
	load("codex",
	    "'-c', 'hooks = { PreToolUse = [{ hooks = [{ type = \"command\", "
	    "command = \"{cordon} gate\", timeout = 5 }] }] }'",
	    "");
	assert_int_equal(timeout_of(), 5);
	assert_true(refused());
	load("codex",
	    "'-c', '\"hooks\".PreToolUse=[{hooks=[{command=\"{cordon} gate\","
	    "timeout=5}]}]'",
	    "");
	assert_true(refused());
	/* A TOML literal string, blanks and all. */
	load("codex",
	    "'-c', 'hooks.PreToolUse=[{hooks=[{type=''command'', command = "
	    "''{cordon} gate'', timeout = 5}]}]'",
	    "");
	assert_int_equal(timeout_of(), 5);
	assert_true(refused());
	/* A multi-line string: the gate named where no command is read. */
	load("codex",
	    "'-c', 'hooks.PreToolUse=[{hooks=[{command=\"\"\"{cordon} "
	    "gate\"\"\",timeout=120}]}]'",
	    "");
	assert_true(refused());
	/* Still long enough in the literal form: loaded. */
	load("codex",
	    "'-c', 'hooks.PreToolUse=[{hooks=[{command=''{cordon} gate'', "
	    "timeout=120}]}]'",
	    "");
	assert_int_equal(timeout_of(), 120);
	assert_false(refused());
}

/*
 * Codex's timeout is a TOML integer, read as TOML reads it: underscores
 * between digits and the 0x/0o/0b forms; anything that is no such
 * integer is settings the check cannot read, refused as such.
 */
static void
test_sbx8_codex_gate_timeout_is_toml(void **state)
{
	static const struct {
		const char *t;
		long want; /* -1: unread, refused */
	} c[] = {{"1_000", 1000}, {"+120", 120}, {"0x78", 120}, {"0XFF", -1},
	    {"0xff", 255}, {"0o170", 120}, {"0b1111000", 120}, {"12_0", 120},
	    {"0", 0}, {"99999999999999", -2}, {"1__000", -1}, {"_120", -1},
	    {"120_", -1}, {"0120", -1}, {"120.0", -1}, {"1e3", -1},
	    {"-120", -1}, {"\"120\"", -1}, {"+0x78", -1}, {"0x", -1},
	    {"0b2", -1}, {"", -1}};
	struct hook_gate_wiring w;
	char args[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(args, sizeof(args),
		    CODEX("{type=\"command\",command=\"{cordon} "
			  "gate\",timeout=%s}"),
		    c[i].t);
		load("codex", args, "");
		assert_int_equal(hook_gate_wiring(&m, &w), 1);
		if (c[i].want == -1)
			assert_true(w.hg_unread);
		else {
			assert_false(w.hg_unread);
			if (c[i].want == -2)
				assert_true(w.hg_timeout >= 1000000);
			else
				assert_int_equal(w.hg_timeout, c[i].want);
		}
		assert_int_equal(refused(), c[i].want != -2 && c[i].want < 80);
	}
}

/* Whether the gate hook sees every tool call: covers, and not refused. */
static int
covers(void)
{
	struct hook_gate_wiring w;

	assert_int_equal(hook_gate_wiring(&m, &w), 1);
	assert_false(refused());
	return w.hg_covers;
}

#define GATE_T "{type=\"command\",command=\"{cordon} gate\",timeout=120}"
#define GATE_J                                                                 \
	"{\"type\":\"command\",\"command\":\"{cordon} gate\",\"timeout\":120}"

/*
 * A gate hook behind a matcher other than one that matches every tool,
 * or with Claude Code's "if", lets other calls past it: `cordon check`
 * warns (hg_covers), and the agent loads.
 */
static void
test_sbx8_gate_hook_coverage(void **state)
{
	(void)state;
	load("codex", CODEX(GATE_T), "");
	assert_true(covers());
	load("codex", "'-c', 'hooks.PreToolUse=[{hooks=[" GATE_T "]}]'", "");
	assert_true(covers());
	load("codex",
	    "'-c', 'hooks.PreToolUse=[{matcher=\"Bash\",hooks=[" GATE_T "]}]'",
	    "");
	assert_false(covers());
	/* The key after the hooks, quoted, with blanks, one table up. */
	load("codex",
	    "'-c', 'hooks.PreToolUse=[{hooks=[" GATE_T
	    "], matcher = ''shell''}]'",
	    "");
	assert_false(covers());
	load("codex",
	    "'-c', 'hooks.PreToolUse=[{\"matcher\"=\"shell\",hooks=[" GATE_T
	    "]}]'",
	    "");
	assert_false(covers());
	load("codex",
	    "'-c', 'hooks={PreToolUse=[{matcher=\"x\",hooks=[" GATE_T "]}]}'",
	    "");
	assert_false(covers());
	/* A key's words inside a string are no key. */
	load("codex",
	    "'-c', 'hooks.PreToolUse=[{hooks=[" GATE_T
	    "],description=\"a,matcher=x\"}]'",
	    "");
	assert_true(covers());
	/* A matcher of another hook's group is not the gate's. */
	load("codex",
	    "'-c', 'hooks.PreToolUse=[{matcher=\"x\",hooks=[{command=\"/bin/"
	    "log\"}]},{matcher=\".*\",hooks=[" GATE_T "]}]'",
	    "");
	assert_true(covers());
	load("claude", CLAUDE(GATE_J), "");
	assert_true(covers());
	load("claude",
	    "'--settings={\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Bash\","
	    "\"hooks\":[" GATE_J "]}]}}'",
	    "");
	assert_false(covers());
	load("claude",
	    CLAUDE("{\"type\":\"command\",\"command\":\"{cordon} gate\","
		   "\"timeout\":120,\"if\":\"Bash(git *)\"}"),
	    "");
	assert_false(covers());
	/* Two gate hooks: one that sees every call is enough. */
	load("claude",
	    "'--settings={\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Bash\","
	    "\"hooks\":[" GATE_J "]},{\"hooks\":[" GATE_J "]}]}}'",
	    "");
	assert_true(covers());
}

/*
 * Codex's hooks feature turned off (--disable=hooks, features.hooks =
 * false) runs no hook: a gate hook wired with it is refused; without a
 * gate hook there is nothing to refuse.
 */
static void
test_sbx8_codex_hooks_off_refused(void **state)
{
	static const char *const off[] = {"'--disable=hooks'",
	    "'--disable', 'hooks'", "'-c', 'features.hooks=false'",
	    "'-c', 'features = { hooks = false }'",
	    "'--config=features.hooks=0'"};
	struct hook_gate_wiring w;
	char args[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		snprintf(args, sizeof(args), "%s, " CODEX(GATE_T), off[i]);
		load("codex", args, "");
		assert_true(refused());
		load("codex", off[i], "");
		assert_int_equal(hook_gate_wiring(&m, &w), 0);
		assert_false(refused());
	}
	load("codex",
	    "'-c', 'features.hooks=true', '--disable=plugins', " CODEX(GATE_T),
	    "");
	assert_false(refused());
}

/*
 * A gate hook the CLI does not wait for (checked with Claude Code and
 * Codex: the call ran at once) or runs only once is refused, whatever
 * its timeout; false is no such switch.
 */
static void
test_sbx8_gate_hook_not_waited_for(void **state)
{
	static const char *const claude[] = {
	    "\"async\":true", "\"asyncRewake\":true", "\"once\":true"};
	char a[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(claude) / sizeof(claude[0]); i++) {
		snprintf(a, sizeof(a),
		    CLAUDE(
			"{\"type\":\"command\",\"command\":\"{cordon} gate\","
			"\"timeout\":120,\"onFailure\":\"block\",%s}"),
		    claude[i]);
		load("claude", a, "");
		assert_true(refused());
	}
	load("claude",
	    CLAUDE("{\"type\":\"command\",\"command\":\"{cordon} gate\","
		   "\"timeout\":120,\"async\":false}"),
	    "");
	assert_false(refused());
	/* A gate hook in settings that turn every hook off. */
	load("claude",
	    "'--settings={\"disableAllHooks\":true,\"hooks\":{\"PreToolUse\":[{"
	    "\"hooks\":[{\"type\":\"command\",\"command\":\"{cordon} gate\","
	    "\"timeout\":120}]}]}}'",
	    "");
	assert_true(refused());
	load("claude", "'--settings={\"disableAllHooks\":true}'", "");
	assert_false(refused()); /* no gate hook wired: nothing to check */
	/* Claude Code's exec form: the gate is an argument. */
	load("claude",
	    CLAUDE("{\"type\":\"command\",\"command\":\"{cordon}\",\"args\":["
		   "\"gate\"],\"timeout\":5}"),
	    "");
	assert_int_equal(timeout_of(), 5);
	assert_true(refused());
	load("codex",
	    CODEX("{type=\"command\",command=\"{cordon} gate\",timeout=120,"
		  "async=true}"),
	    "");
	assert_true(refused());
	load("codex",
	    "'-c', 'hooks.PreToolUse=[{hooks=[{async = true, command = "
	    "\"{cordon} gate\", timeout = 120}]}]'",
	    "");
	assert_true(refused());
	load("codex",
	    CODEX("{type=\"command\",command=\"{cordon} gate\",timeout=120,"
		  "async=false}"),
	    "");
	assert_false(refused());
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sbx8_claude_gate_hook_read),
	    cmocka_unit_test(test_sbx8_codex_gate_hook_read),
	    cmocka_unit_test(test_sbx8_claude_gate_hook_other_spellings),
	    cmocka_unit_test(test_sbx8_codex_gate_hook_other_spellings),
	    cmocka_unit_test(test_sbx8_codex_gate_timeout_is_toml),
	    cmocka_unit_test(test_sbx8_gate_hook_coverage),
	    cmocka_unit_test(test_sbx8_codex_hooks_off_refused),
	    cmocka_unit_test(test_sbx8_gate_hook_not_waited_for),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
