/*
 * Unit tests for policy/agentcli.c (SBX-8): a CLI is recognised by its
 * command, by its npm package's script, or by that script after node;
 * anything else is no CLI cordon wires, and a login keeps the script.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agentcli.h"

#define NARGS(a) (sizeof(a) / sizeof((a)[0]))

static void
test_sbx8_cli_by_command(void **state)
{
	(void)state;
	assert_int_equal(agent_cli("claude", NULL, 0, NULL), AGENT_CLI_CLAUDE);
	assert_int_equal(agent_cli("codex", NULL, 0, NULL), AGENT_CLI_CODEX);
	assert_int_equal(agent_cli("gemini", NULL, 0, NULL), AGENT_CLI_GEMINI);
	assert_int_equal(agent_cli("/usr/local/bin/gemini", NULL, 0, NULL),
	    AGENT_CLI_GEMINI);
	/* A name around the command's is another program. */
	assert_int_equal(
	    agent_cli("gemini-wrapper", NULL, 0, NULL), AGENT_CLI_NONE);
	assert_int_equal(
	    agent_cli("/opt/gemini/run", NULL, 0, NULL), AGENT_CLI_NONE);
	assert_int_equal(agent_cli("sh", NULL, 0, NULL), AGENT_CLI_NONE);
	assert_int_equal(agent_cli(NULL, NULL, 0, NULL), AGENT_CLI_NONE);
	assert_string_equal(agent_cli_name(AGENT_CLI_GEMINI), "gemini");
	assert_string_equal(agent_cli_name(AGENT_CLI_NONE), "none");
}

static void
test_sbx8_cli_by_script(void **state)
{
	char *gem[] = {"/usr/lib/node_modules/@google/gemini-cli/bundle/"
		       "gemini.js",
	    "--prompt={prompt}"};
	char *opts[] = {"--no-warnings", "--max-old-space-size=4096",
	    "/usr/local/lib/node_modules/@anthropic-ai/claude-code/cli.js",
	    "-p"};
	char *shortopt[] = {
	    "-r", "/usr/lib/node_modules/@openai/codex/bin/codex.js"};
	char *other[] = {"/srv/app/@google/gemini-cli-fork/x.js"};
	size_t lead = 9;

	(void)state;
	/* The script itself as bin. */
	assert_int_equal(agent_cli("/usr/lib/node_modules/@google/gemini-cli/"
				   "bundle/gemini.js",
			     NULL, 0, &lead),
	    AGENT_CLI_GEMINI);
	assert_int_equal(lead, 0);
	assert_int_equal(
	    agent_cli("/usr/lib/node_modules/@openai/codex/bin/codex.js", NULL,
		0, NULL),
	    AGENT_CLI_CODEX);
	/* node SCRIPT: the script (and node's options) lead. */
	assert_int_equal(
	    agent_cli("node", gem, NARGS(gem), &lead), AGENT_CLI_GEMINI);
	assert_int_equal(lead, 1);
	assert_int_equal(agent_cli("/usr/bin/nodejs", opts, NARGS(opts), &lead),
	    AGENT_CLI_CLAUDE);
	assert_int_equal(lead, 3);
	/* What cannot be read as node's options, or another package. */
	assert_int_equal(agent_cli("node", shortopt, NARGS(shortopt), &lead),
	    AGENT_CLI_NONE);
	assert_int_equal(lead, 0);
	assert_int_equal(
	    agent_cli("node", other, NARGS(other), NULL), AGENT_CLI_NONE);
	assert_int_equal(agent_cli("node", NULL, 0, NULL), AGENT_CLI_NONE);
	/* A script path after a program other than node is an argument. */
	assert_int_equal(
	    agent_cli("python3", gem, NARGS(gem), NULL), AGENT_CLI_NONE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sbx8_cli_by_command),
	    cmocka_unit_test(test_sbx8_cli_by_script),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
