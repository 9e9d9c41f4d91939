/*
 * Unit tests for common/pathsafe.c (SU-5): who may own, and who may
 * write, a path and each directory above it.  Works in a fresh dir under
 * /tmp (sticky, world-writable: a parent it must accept), owned by the
 * test's uid; uids other than it and root stand for another user
 * without changing any owner.
 */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pathsafe.h"

static char base[64];

static int
setup(void **state)
{
	(void)state;
	snprintf(base, sizeof(base), "/tmp/test_pathsafe.XXXXXX");
	return mkdtemp(base) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *
at(const char *rel, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s/%s", base, rel);
	return buf;
}

static int
chain(const char *rel, int dir_only, uid_t a, const char **why)
{
	struct pathsafe ps;
	char p[256];
	int rc;

	pathsafe_init(&ps, a, a);
	rc = pathsafe_chain(&ps, at(rel, p, sizeof(p)), dir_only);
	*why = ps.ps_why;
	return rc;
}

/* SU-5: a private dir beneath sticky /tmp is safe; a missing tail is
 * left out (its nearest dir checked as a parent). */
static void
test_su5_private_under_sticky(void **state)
{
	const char *why;
	char p[256];

	(void)state;
	assert_int_equal(chmod(base, 0700), 0);
	assert_int_equal(chain("", 1, geteuid(), &why), 0);
	assert_int_equal(chain("not/yet/made", 1, geteuid(), &why), 0);
	assert_int_equal(mkdir(at("open", p, sizeof(p)), 0700), 0);
	assert_int_equal(chmod(p, 01777), 0);
	/* a sticky dir as the leaf is still writable by others */
	assert_int_equal(chain("open", 1, geteuid(), &why), -1);
	assert_string_equal(why, "is writable by group or others (chmod go-w)");
	/* ... and fine above a missing tail */
	assert_int_equal(chain("open/later", 1, geteuid(), &why), 0);
}

/* SU-5: group or world write on the leaf or a parent that is not
 * sticky; a file where a dir is needed. */
static void
test_su5_writable_refused(void **state)
{
	const char *why;
	char p[256];
	FILE *f;

	(void)state;
	assert_int_equal(mkdir(at("g", p, sizeof(p)), 0700), 0);
	assert_int_equal(chmod(p, 0770), 0);
	assert_int_equal(chain("g", 1, geteuid(), &why), -1);
	assert_int_equal(mkdir(at("g/in", p, sizeof(p)), 0700), 0);
	assert_int_equal(chain("g/in", 1, geteuid(), &why), -1);
	assert_int_equal(chmod(at("g", p, sizeof(p)), 0755), 0);
	assert_int_equal(chain("g/in", 1, geteuid(), &why), 0);
	assert_non_null(f = fopen(at("g/in/prog", p, sizeof(p)), "w"));
	fclose(f);
	assert_int_equal(chmod(p, 0755), 0);
	assert_int_equal(chain("g/in/prog", 0, geteuid(), &why), 0);
	assert_int_equal(chain("g/in/prog", 1, geteuid(), &why), -1);
	assert_string_equal(why, "is not a directory");
	assert_int_equal(chmod(p, 0757), 0);
	assert_int_equal(chain("g/in/prog", 0, geteuid(), &why), -1);
}

/* SU-5: an owner that is neither root nor a trusted uid; a symlink's own
 * mode bits do not count, its target's chain does. */
static void
test_su5_owner_and_links(void **state)
{
	struct pathsafe ps;
	struct stat st;
	const char *why;
	char p[256], l[256];

	(void)state;
	assert_int_equal(mkdir(at("o", p, sizeof(p)), 0700), 0);
	assert_int_equal(lstat(p, &st), 0);
	st.st_uid = 4242; /* as another user's */
	pathsafe_init(&ps, geteuid(), geteuid());
	assert_int_equal(pathsafe_entry(&ps, p, &st, 1), -1);
	assert_string_equal(ps.ps_bad, p);
	assert_string_equal(ps.ps_why, "belongs to another user");
	if (geteuid() == 0) { /* really another user's */
		assert_int_equal(chown(p, 4242, 4242), 0);
		assert_int_equal(chain("o/x", 1, geteuid(), &why), -1);
		assert_string_equal(why, "belongs to another user");
		assert_int_equal(chain("o/x", 1, 4242, &why), 0);
		assert_int_equal(chown(p, 0, 0), 0);
	}
	assert_int_equal(symlink(p, at("link", l, sizeof(l))), 0);
	assert_int_equal(lstat(l, &st), 0);
	pathsafe_init(&ps, geteuid(), geteuid());
	assert_int_equal(pathsafe_entry(&ps, l, &st, 1), 0);
	assert_int_equal(chain("link", 1, geteuid(), &why), 0);
	assert_int_equal(chmod(p, 0777), 0);
	assert_int_equal(chain("link", 1, geteuid(), &why), -1);
	/* a link as written, in a dir others can write, to a private dir:
	 * they could point it elsewhere */
	assert_int_equal(chmod(p, 0700), 0);
	assert_int_equal(mkdir(at("w", l, sizeof(l)), 0700), 0);
	assert_int_equal(chmod(l, 0777), 0);
	assert_int_equal(symlink(p, at("w/l", l, sizeof(l))), 0);
	assert_int_equal(chain("w/l", 1, geteuid(), &why), -1);
	assert_string_equal(why, "is writable by group or others (chmod go-w)");
	assert_int_equal(chain("w/l/later", 1, geteuid(), &why), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_su5_private_under_sticky, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_su5_writable_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_su5_owner_and_links, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
