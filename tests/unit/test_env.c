/*
 * Unit tests for policy/env.c (SP-4, SP-5): the DATA.md tables, name
 * rules, and the built child env: only the allowlist, the forced pair,
 * manifest env, PWD = cwd and declared secrets; nothing else leaks.
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

#include "env.h"
#include "manifest.h"
#include "policy_test.h"
#include "util.h"

static void
load(const char *yaml, struct manifest *m)
{
	assert_int_equal(pt_manifest(yaml, m), 0);
}

static const char *
get(char **envp, const char *name)
{
	size_t i, l = strlen(name);

	for (i = 0; envp[i] != NULL; i++)
		if (strncmp(envp[i], name, l) == 0 && envp[i][l] == '=')
			return envp[i] + l + 1;
	return NULL;
}

static size_t
count(char **envp)
{
	size_t n = 0;

	while (envp[n] != NULL)
		n++;
	return n;
}

#define MF                                                                     \
	"name: t\n"                                                            \
	"transport: subprocess\n"                                              \
	"secrets:\n"                                                           \
	"  OPENROUTER_API_KEY: openrouter.apiKey\n"                            \
	"transportConfig:\n"                                                   \
	"  bin: t\n"                                                           \
	"  args: [\"{prompt}\"]\n"                                             \
	"  env:\n"                                                             \
	"    HTTPS_PROXY: http://127.0.0.1:3128\n"                             \
	"    NO_COLOR: '1'\n"                                                  \
	"    TERM: dumb\n"

static const char *const parent[] = {"PATH=/usr/bin:/bin", "HOME=/home/op",
    "LANG=C.UTF-8", "LC_ALL=C", "XDG_CONFIG_HOME=/home/op/.config",
    "PWD=/parent/cwd", "TERM=xterm", "CORDON_DEBUG=1", "CORDON_API_TOKEN=leak1",
    "OPENAI_API_KEY=leak2", "GITHUB_TOKEN=leak3", "AWS_SECRET_ACCESS_KEY=leak4",
    "LD_PRELOAD=/evil.so", "NODE_OPTIONS=--require=/evil",
    "SSH_AUTH_SOCK=/tmp/agent", "FORCE_COLOR=3", "TMPDIR=/tmp\nX=1", "NOEQUALS",
    "DATABASE_URL=leak5", "MY_PASSWORD=leak6", NULL};

/* SP-4, SP-5: only allowlisted and declared names reach the child. */
static void
test_sp4_env_built_not_inherited(void **state)
{
	struct manifest m;
	const char *names[] = {"OPENROUTER_API_KEY"};
	const char *vals[] = {"sk-or-value"};
	const char *err = NULL;
	char **envp;
	size_t i;

	(void)state;
	load(MF, &m);
	assert_int_equal(
	    env_build(parent, &m, "/srv/work", names, vals, 1, &envp, &err), 0);
	assert_null(err);
	assert_string_equal(get(envp, "PATH"), "/usr/bin:/bin");
	assert_string_equal(get(envp, "HOME"), "/home/op");
	assert_string_equal(get(envp, "LC_ALL"), "C");
	assert_string_equal(get(envp, "XDG_CONFIG_HOME"), "/home/op/.config");
	assert_string_equal(get(envp, "CORDON_DEBUG"), "1");
	assert_string_equal(get(envp, "PWD"), "/srv/work"); /* not parent's */
	assert_string_equal(get(envp, "NO_COLOR"), "1");
	assert_string_equal(get(envp, "FORCE_COLOR"), "0"); /* forced */
	assert_string_equal(get(envp, "TERM"), "dumb");	    /* manifest wins */
	assert_string_equal(get(envp, "HTTPS_PROXY"), "http://127.0.0.1:3128");
	assert_string_equal(get(envp, "OPENROUTER_API_KEY"), "sk-or-value");
	assert_null(get(envp, "CORDON_API_TOKEN"));
	assert_null(get(envp, "OPENAI_API_KEY"));
	assert_null(get(envp, "GITHUB_TOKEN"));
	assert_null(get(envp, "AWS_SECRET_ACCESS_KEY"));
	assert_null(get(envp, "LD_PRELOAD"));
	assert_null(get(envp, "NODE_OPTIONS"));
	assert_null(get(envp, "SSH_AUTH_SOCK"));
	assert_null(get(envp, "TMPDIR")); /* value with a newline: skipped */
	assert_null(get(envp, "DATABASE_URL"));
	assert_null(get(envp, "MY_PASSWORD"));
	for (i = 0; envp[i] != NULL; i++)
		assert_null(strstr(envp[i], "leak"));
	/* PATH HOME LANG LC_ALL XDG_CONFIG_HOME TERM CORDON_DEBUG NO_COLOR
	 * FORCE_COLOR HTTPS_PROXY PWD OPENROUTER_API_KEY */
	assert_int_equal(count(envp), 12);
	strv_free(envp);
	manifest_free(&m);
}

/* SP-4: a manifest env value "~/x" names x under the child's HOME (an
 * agent's state dir inside its write root); "~" elsewhere is literal; no
 * absolute HOME to expand against refuses the run. */
static void
test_sp4_env_home_relative(void **state)
{
	struct manifest m;
	const char *nohome[] = {"PATH=/usr/bin", NULL};
	const char *relhome[] = {"HOME=rel", NULL};
	const char *err = NULL;
	char **envp;

	(void)state;
	load("name: t\n"
	     "transport: subprocess\n"
	     "transportConfig:\n"
	     "  bin: t\n"
	     "  args: [\"{prompt}\"]\n"
	     "  env:\n"
	     "    CLAUDE_CONFIG_DIR: ~/.local/state/cordon/claude\n"
	     "    MID: a~/b\n"
	     "    BARE: '~'\n",
	    &m);
	assert_int_equal(
	    env_build(parent, &m, "/w", NULL, NULL, 0, &envp, &err), 0);
	assert_string_equal(get(envp, "CLAUDE_CONFIG_DIR"),
	    "/home/op/.local/state/cordon/claude");
	assert_string_equal(get(envp, "MID"), "a~/b");
	assert_string_equal(get(envp, "BARE"), "~");
	strv_free(envp);
	envp = NULL;
	assert_int_equal(
	    env_build(nohome, &m, "/w", NULL, NULL, 0, &envp, &err), -1);
	assert_null(envp);
	assert_int_equal(
	    env_build(relhome, &m, "/w", NULL, NULL, 0, &envp, &err), -1);
	assert_null(envp);
	manifest_free(&m);
}

/*
 * SBX-9: HOME, the XDG dirs and each CLI's own dir point into the agent's
 * home, over what the parent had; a name the manifest sets keeps its
 * value; a home that is not absolute or holds a newline fails closed.
 */
static void
test_sbx9_env_home(void **state)
{
	struct manifest m;
	const char *err = NULL;
	char **envp;
	size_t n;

	(void)state;
	load(MF "    CODEX_HOME: /srv/codex\n", &m);
	assert_int_equal(
	    env_build(parent, &m, "/w", NULL, NULL, 0, &envp, &err), 0);
	n = count(envp);
	assert_int_equal(env_home(&envp, &m, "/st/homes/a"), 0);
	assert_string_equal(get(envp, "HOME"), "/st/homes/a");
	assert_string_equal(
	    get(envp, "XDG_CONFIG_HOME"), "/st/homes/a/.config");
	assert_string_equal(get(envp, "XDG_CACHE_HOME"), "/st/homes/a/.cache");
	assert_string_equal(
	    get(envp, "XDG_DATA_HOME"), "/st/homes/a/.local/share");
	assert_string_equal(
	    get(envp, "XDG_STATE_HOME"), "/st/homes/a/.local/state");
	assert_string_equal(
	    get(envp, "CLAUDE_CONFIG_DIR"), "/st/homes/a/.claude");
	assert_string_equal(get(envp, "GEMINI_CLI_HOME"), "/st/homes/a");
	assert_string_equal(get(envp, "CODEX_HOME"), "/srv/codex");
	/* HOME, XDG_CONFIG_HOME and CODEX_HOME were there already. */
	assert_int_equal(count(envp), n + 5);
	assert_int_equal(env_home(&envp, &m, "rel/home"), -1);
	assert_null(envp);
	assert_int_equal(
	    env_build(parent, &m, "/w", NULL, NULL, 0, &envp, &err), 0);
	assert_int_equal(env_home(&envp, &m, "/st/a\nB=1"), -1);
	assert_null(envp);
	manifest_free(&m);
}

/*
 * SBX-8, SBX-9: a manifest may set a CLI's dir variable (or HOME, an XDG
 * dir) only to its place in the private home; anything else is named.
 */
static void
test_sbx8_env_home_foreign(void **state)
{
	struct manifest m;
	char why[256];

	(void)state;
	load(MF "    PLAIN: x\n", &m);
	assert_int_equal(
	    env_home_foreign(&m, "/st/homes/a", why, sizeof(why)), 0);
	manifest_free(&m);
	load(MF "    CODEX_HOME: /st/homes/a/.codex\n"
		"    GEMINI_CLI_HOME: /st/homes/a\n",
	    &m);
	assert_int_equal(
	    env_home_foreign(&m, "/st/homes/a", why, sizeof(why)), 0);
	manifest_free(&m);
	load(MF "    CODEX_HOME: /srv/codex\n", &m);
	assert_int_equal(
	    env_home_foreign(&m, "/st/homes/a", why, sizeof(why)), -1);
	assert_string_equal(why,
	    "env: CODEX_HOME: not the agent's private home "
	    "(/st/homes/a/.codex), where cordon writes and checks its CLI's "
	    "config; remove it");
	manifest_free(&m);
	load(MF "    CLAUDE_CONFIG_DIR: ~/.claude\n", &m);
	assert_int_equal(
	    env_home_foreign(&m, "/st/homes/a", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "CLAUDE_CONFIG_DIR"));
	manifest_free(&m);
	load(MF "    HOME: /home/op\n", &m);
	assert_int_equal(
	    env_home_foreign(&m, "/st/homes/a", why, sizeof(why)), -1);
	manifest_free(&m);
}

/* SP-2, SP-5: bad secret values and names, bad cwd: refused. */
static void
test_sp2_env_build_refusals(void **state)
{
	struct manifest m;
	const char *names[] = {"OPENROUTER_API_KEY"};
	const char *nl[] = {"a\nb"};
	const char *cr[] = {"a\rb"};
	const char *badn[] = {"LD_PRELOAD"};
	const char *undeclared[] = {"OTHER_API_KEY"};
	const char *ok[] = {"v"};
	const char *err = NULL;
	char **envp = (char **)1;

	(void)state;
	load(MF, &m);
	assert_int_equal(
	    env_build(parent, &m, "/w", names, nl, 1, &envp, &err), -1);
	assert_null(envp);
	assert_string_equal(err, "invalid-argument");
	assert_int_equal(
	    env_build(parent, &m, "/w", names, cr, 1, &envp, &err), -1);
	assert_int_equal(
	    env_build(parent, &m, "/w", badn, ok, 1, &envp, &err), -1);
	assert_int_equal(
	    env_build(parent, &m, "/w", undeclared, ok, 1, &envp, &err), -1);
	assert_int_equal(
	    env_build(parent, &m, "rel", names, ok, 1, &envp, &err), -1);
	assert_int_equal(
	    env_build(parent, &m, NULL, names, ok, 1, &envp, &err), -1);
	assert_int_equal(
	    env_build(parent, &m, "/w\n", names, ok, 1, &envp, &err), -1);
	/* NULL parent env is fine: forced pair + PWD + manifest + secrets */
	assert_int_equal(
	    env_build(NULL, &m, "/w", names, ok, 1, &envp, &err), 0);
	assert_int_equal(count(envp), 6);
	strv_free(envp);
	manifest_free(&m);
}

/* SP-5: name rules. */
static void
test_sp5_env_name_rules(void **state)
{
	(void)state;
	assert_int_equal(env_name_ok("HTTPS_PROXY"), 1);
	assert_int_equal(env_name_ok("_X1"), 1);
	assert_int_equal(env_name_ok("LD_PRELOAD"), 0);
	assert_int_equal(env_name_ok("LD_LIBRARY_PATH"), 0);
	assert_int_equal(env_name_ok("DYLD_X"), 0);
	assert_int_equal(env_name_ok("NODE_OPTIONS"), 0);
	assert_int_equal(env_name_ok("PYTHONPATH"), 0);
	assert_int_equal(env_name_ok("PYTHONWHATEVER"), 0);
	assert_int_equal(env_name_ok("GIT_CONFIG_KEY_0"), 0);
	assert_int_equal(env_name_ok("BASH_ENV"), 0);
	assert_int_equal(env_name_ok("ENV"), 0);
	assert_int_equal(env_name_ok("_"), 0);
	assert_int_equal(env_name_ok("PERL5OPT"), 0);
	assert_int_equal(env_name_ok("RUBYOPT"), 0);
	assert_int_equal(env_name_ok("JAVA_TOOL_OPTIONS"), 0);
	assert_int_equal(env_name_ok("lower_case"), 0);
	assert_int_equal(env_name_ok("1X"), 0);
	assert_int_equal(env_name_ok("A-B"), 0);
	assert_int_equal(env_name_ok("A=B"), 0);
	assert_int_equal(env_name_ok(""), 0);
	assert_int_equal(env_name_ok(NULL), 0);
	assert_int_equal(env_runtime_control("NODE_OPTIONS"), 1);
	assert_int_equal(env_runtime_control("NODE_PATH"), 0);
}

/* SP-5: secret-looking and known secret names. */
static void
test_sp5_env_secretish(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; env_known_secrets[i] != NULL; i++)
		assert_int_equal(env_secretish(env_known_secrets[i]), 1);
	assert_int_equal(i, 32);
	for (i = 0; env_allowlist[i] != NULL; i++)
		assert_int_equal(env_secretish(env_allowlist[i]), 0);
	assert_int_equal(i, 27);
	assert_int_equal(env_secretish("MY_SERVICE_PASSWD"), 1);
	assert_int_equal(env_secretish("X_CREDENTIALS_FILE"), 1);
	assert_int_equal(env_secretish("MYSQL_URI"), 1);
	assert_int_equal(env_secretish("SIGNING_KEY_PATH"), 1);
	assert_int_equal(env_secretish("EDITOR"), 0);
	assert_int_equal(env_secretish(NULL), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sp4_env_built_not_inherited),
	    cmocka_unit_test(test_sp4_env_home_relative),
	    cmocka_unit_test(test_sbx9_env_home),
	    cmocka_unit_test(test_sbx8_env_home_foreign),
	    cmocka_unit_test(test_sp2_env_build_refusals),
	    cmocka_unit_test(test_sp5_env_name_rules),
	    cmocka_unit_test(test_sp5_env_secretish),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
