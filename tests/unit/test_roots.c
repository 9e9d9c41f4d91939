/*
 * SU-5: an agent's program found on PATH once is checked as exec names
 * it and where it resolves (load/roots.c, agent_bin_check): a link to a
 * sound program, in a dir others can write, is refused, and so is a
 * sound link to a program in such a dir; the reason names the program.
 * Runs on a temp dir of its own.
 */
#include <sys/stat.h>

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "roots.h"

static char base[64];

static void
mkdir_mode(const char *name, mode_t mode, char *out, size_t outsz)
{
	assert_true(snprintf(out, outsz, "%s/%s", base, name) < (int)outsz);
	assert_int_equal(mkdir(out, 0700), 0);
	assert_int_equal(chmod(out, mode), 0);
}

static void
tool_at(const char *dir, char *out, size_t outsz)
{
	FILE *f;

	assert_true(snprintf(out, outsz, "%s/rtool", dir) < (int)outsz);
	assert_non_null(f = fopen(out, "w"));
	fputs("#!/bin/sh\nexit 0\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(out, 0755), 0);
}

static void
link_at(const char *dir, const char *to)
{
	char p[PATH_MAX];

	assert_true(snprintf(p, sizeof(p), "%s/rtool", dir) < (int)sizeof(p));
	assert_int_equal(symlink(to, p), 0);
}

/* The temp dir: each dir's rtool, the dir, then base. */
static void
cleanup(void)
{
	static const char *const dirs[] = {
	    "fine", "loose", "looselink", "tolose", "tofine"};
	char p[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s/rtool", base, dirs[i]);
		unlink(p);
		snprintf(p, sizeof(p), "%s/%s", base, dirs[i]);
		rmdir(p);
	}
	rmdir(base);
}

/* agent_bin_check of "rtool" on PATH=dir: its result, why in why. */
static int
check_on(const char *dir, char *why, size_t whysz)
{
	char env[PATH_MAX + 8], out[PATH_MAX];
	char *envp[] = {env, NULL};
	struct protect_ctx pc;

	memset(&pc, 0, sizeof(pc));
	snprintf(env, sizeof(env), "PATH=%s", dir);
	why[0] = '\0';
	return agent_bin_check(
	    "rtool", envp, NULL, &pc, out, sizeof(out), why, whysz);
}

static void
test_su5_linked_program_checked_as_named_and_resolved(void **state)
{
	char fine[PATH_MAX], loose[PATH_MAX], looselink[PATH_MAX];
	char tolose[PATH_MAX], tofine[PATH_MAX], good[PATH_MAX];
	char bad[PATH_MAX], why[AGENT_REASON_MAX];

	(void)state;
	snprintf(base, sizeof(base), "/tmp/test_roots.XXXXXX");
	assert_non_null(mkdtemp(base));
	assert_int_equal(chmod(base, 0755), 0);
	mkdir_mode("fine", 0755, fine, sizeof(fine));
	mkdir_mode("loose", 0777, loose, sizeof(loose));
	mkdir_mode("looselink", 0777, looselink, sizeof(looselink));
	mkdir_mode("tolose", 0755, tolose, sizeof(tolose));
	mkdir_mode("tofine", 0755, tofine, sizeof(tofine));
	tool_at(fine, good, sizeof(good));
	tool_at(loose, bad, sizeof(bad));
	link_at(looselink, good); /* as named: in a dir others write */
	link_at(tolose, bad);	  /* resolved: in a dir others write */
	link_at(tofine, good);

	assert_int_equal(check_on(fine, why, sizeof(why)), 0);
	assert_int_equal(check_on(tofine, why, sizeof(why)), 0);
	assert_int_equal(check_on(loose, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "another user can replace"));
	assert_int_equal(check_on(looselink, why, sizeof(why)), -1);
	assert_non_null(strstr(why, looselink));
	assert_int_equal(check_on(tolose, why, sizeof(why)), -1);
	assert_non_null(strstr(why, loose));
	/* agent_bin_safe, `cordon check`'s own question, agrees. */
	{
		char env[PATH_MAX + 8];
		char *envp[] = {env, NULL};

		snprintf(env, sizeof(env), "PATH=%s", tolose);
		assert_int_equal(
		    agent_bin_safe("rtool", envp, NULL, why, sizeof(why)), -1);
		snprintf(env, sizeof(env), "PATH=%s", tofine);
		assert_int_equal(
		    agent_bin_safe("rtool", envp, NULL, why, sizeof(why)), 0);
	}
	cleanup();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_su5_linked_program_checked_as_named_and_resolved),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
