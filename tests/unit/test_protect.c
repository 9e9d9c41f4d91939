/*
 * Unit tests for policy/protect.c (SBX-2): the protected home entries,
 * start-up files, cordon's own dirs and secret-looking names, for paths
 * (the gate) and for sandbox roots (manifest load).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "protect.h"

static const struct protect_ctx pc = {
    .pc_home = "/home/op",
    .pc_extra = {"/home/op/.config/cordon", "/var/log/cordon/audit",
	"/home/op/vault"},
    .pc_nextra = 3,
};

static void
test_names(void **state)
{
	static const char *const yes[] = {".env", ".env.local", ".ENV",
	    "server.pem", "tls.KEY", "id_rsa", "id_rsa.pub", "id_ed25519",
	    "id_ecdsa", "id_ecdsa_sk", "id_dsa.pub", "private_key", ".secrets",
	    "my-secret.txt", "SECRET", "aws_credentials", "credentials.json"};
	static const char *const no[] = {"", "env", "README.md", "keys",
	    "key.txt", "pem", "main.c", "rsa_id", "private_key.txt.bak2x"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_int_equal(protect_name_secret(yes[i]), 1);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_int_equal(protect_name_secret(no[i]), 0);
	assert_int_equal(protect_name_secret(NULL), 0);
}

static void
test_path_hit(void **state)
{
	static const char *const yes[] = {"/home/op/.ssh",
	    "/home/op/.ssh/id_rsa", "/home/op/.config/gh/hosts.yml",
	    "/home/op/.aws/config", "/home/op/.bashrc", "/home/op/.netrc",
	    "/home/op/.config/fish/config.fish", "/home/op/.config/cordon",
	    "/home/op/.config/cordon/secrets.yaml",
	    "/var/log/cordon/audit/2026-01-01.jsonl", "/home/op/vault/x.md",
	    "/home/op/work/.env", "/srv/app/tls/server.pem",
	    "/home/op/work/.secrets/x", "relative/path", "", "/home/op/w/"};
	static const char *const no[] = {"/home/op", "/home/op/work/main.c",
	    "/home/op/.sshfoo", "/home/op/.config", "/home/op/vaulted/x",
	    "/var/log/cordon", "/usr/bin/git", "/", "/home/op/.bashrc.d"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_int_equal(protect_path_hit(&pc, yes[i]), 1);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_int_equal(protect_path_hit(&pc, no[i]), 0);
}

static void
check_root(const char *root, const char *want)
{
	const char *why = protect_root_conflict(&pc, root);

	if (want == NULL)
		assert_null(why);
	else {
		assert_non_null(why);
		assert_string_equal(why, want);
	}
}

static void
test_roots(void **state)
{
	(void)state;
	check_root("/", "is /");
	check_root("/home/op", "is the home directory");
	check_root("/home", "contains a protected path");
	check_root("/home/op/.ssh", "is a protected path");
	check_root("/home/op/.ssh/keys", "is inside a protected path");
	check_root("/home/op/.config", "contains a protected path");
	check_root("/home/op/.config/gh", "is a protected path");
	check_root("/home/op/.cargo", "contains a protected path");
	check_root(
	    "/home/op/.config/cordon/agents", "is inside a protected path");
	check_root("/var/log/cordon", "contains a protected path");
	check_root("/var/log/cordon/audit", "is a protected path");
	check_root("/home/op/vault/00_Inbox", "is inside a protected path");
	check_root("relative", "must be an absolute path");
	check_root("/home/op/work/", "must be an absolute path");
	check_root("/home/op/work", NULL);
	check_root("/home/op/.claude", NULL);
	check_root("/home/op/.config/claude", NULL);
	check_root("/home/op/.sshx", NULL);
	check_root("/tmp/x", NULL);
	check_root("/home/op/vaulted", NULL);
}

/* Other runs' tmps: no root near them, but the gate does not look. */
static void
test_runs_dir(void **state)
{
	struct protect_ctx r = pc;

	(void)state;
	r.pc_runs = "/tmp/cordon-runs.Ab12Cd";
	assert_string_equal(
	    protect_root_conflict(&r, "/tmp"), "contains a protected path");
	assert_string_equal(
	    protect_root_conflict(&r, "/tmp/cordon-runs.Ab12Cd"),
	    "is a protected path");
	assert_string_equal(
	    protect_root_conflict(&r, "/tmp/cordon-runs.Ab12Cd/cordon-run.x"),
	    "is inside a protected path");
	assert_null(protect_root_conflict(&r, "/tmp/cordon-runs.Ab12"));
	assert_null(protect_root_conflict(&r, "/tmp/x"));
	assert_null(protect_root_conflict(&pc, "/tmp"));
	assert_int_equal(protect_path_hit(&r,
			     "/tmp/cordon-runs.Ab12Cd/cordon-run.x/out.txt"),
	    0);
}

/* SBX-2: where a linked entry leads is protected as the entry is. */
static void
test_links(void **state)
{
	struct protect_ctx r = pc;

	(void)state;
	r.pc_links[0] = "/home/op/dotfiles/bashrc";
	r.pc_links[1] = "/srv/keys/ssh";
	r.pc_nlinks = 2;
	assert_string_equal(protect_root_conflict(&r, "/home/op/dotfiles"),
	    "contains a protected path");
	assert_string_equal(protect_root_conflict(&r, "/srv/keys/ssh/sub"),
	    "is inside a protected path");
	assert_null(protect_root_conflict(&r, "/home/op/dotfiles/vim"));
	assert_null(protect_root_conflict(&pc, "/home/op/dotfiles"));
	assert_int_equal(protect_path_hit(&r, "/home/op/dotfiles/bashrc"), 1);
	assert_int_equal(protect_path_hit(&r, "/srv/keys/ssh/config"), 1);
	assert_int_equal(protect_path_hit(&r, "/home/op/dotfiles/vimrc"), 0);
}

static void
test_no_home(void **state)
{
	struct protect_ctx none = {.pc_home = NULL, .pc_nextra = 0};

	(void)state;
	assert_null(protect_root_conflict(&none, "/home/op"));
	assert_int_equal(protect_path_hit(&none, "/home/op/.ssh"), 0);
	/* Names are protected even without a home. */
	assert_int_equal(protect_path_hit(&none, "/x/id_rsa"), 1);
}

static void
test_lists(void **state)
{
	size_t n = 0;

	(void)state;
	assert_non_null(protect_home_list(&n));
	assert_true(n >= 17);
	assert_non_null(protect_startup_list(&n));
	assert_true(n >= 8);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_path_hit),
	    cmocka_unit_test(test_roots),
	    cmocka_unit_test(test_runs_dir),
	    cmocka_unit_test(test_links),
	    cmocka_unit_test(test_no_home),
	    cmocka_unit_test(test_lists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
