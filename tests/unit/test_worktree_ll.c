/*
 * Unit tests for the Landlock rules of a worktree's git steps
 * (spawner/worktree_ll.c, MC-2): a host without Landlock gets none (the
 * worktree is refused), the rules name the system table, the plan's read
 * roots read-only, the worktree's own dir read-write and the program,
 * nothing else; and a child under them reads a read root, writes its
 * dir, and neither reads outside them nor writes a read root.  Touches
 * only a temp dir of its own.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
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

#include "../../spawner/worktree.h"
#include "../../spawner/worktree_int.h"
#include "confine.h"
#include "sandbox.h"

static char top[64], rd[128], out[128];
static char *reads[1];
static struct wt w;

static int
setup(void **state)
{
	char path[PATH_MAX];
	int fd;

	snprintf(top, sizeof(top), "/tmp/cordon-wtll.XXXXXX");
	assert_non_null(mkdtemp(top));
	snprintf(rd, sizeof(rd), "%s/root", top);
	snprintf(out, sizeof(out), "%s/out", top);
	snprintf(w.w_dir, sizeof(w.w_dir), "%s/wt", top);
	assert_int_equal(mkdir(rd, 0700), 0);
	assert_int_equal(mkdir(out, 0700), 0);
	assert_int_equal(mkdir(w.w_dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/in.txt", rd);
	assert_true((fd = open(path, O_WRONLY | O_CREAT, 0600)) != -1);
	close(fd);
	snprintf(path, sizeof(path), "%s/secret.txt", out);
	assert_true((fd = open(path, O_WRONLY | O_CREAT, 0600)) != -1);
	close(fd);
	reads[0] = rd;
	w.w_plan.pl_roots.r_read = reads;
	w.w_plan.pl_roots.r_nread = 1;
	sbx_host.sh_landlock_abi = confine_landlock_abi();
	return 0;
}

static int
teardown(void **state)
{
	(void)sandbox_rmtree(top);
	return 0;
}

/* MC-2: no Landlock on the host, no rules: the step is never run. */
static void
test_mc2_no_landlock_no_rules(void **state)
{
	struct wt_ll ll;
	int abi = sbx_host.sh_landlock_abi;

	sbx_host.sh_landlock_abi = -1;
	errno = 0;
	assert_int_equal(wt_ll_rules(&w, "/usr/bin/git", &ll), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	sbx_host.sh_landlock_abi = abi;
}

static unsigned int
access_of(const struct wt_ll *ll, const char *path)
{
	size_t i;

	for (i = 0; i < ll->ll_npaths; i++)
		if (strcmp(ll->ll_paths[i].cp_path, path) == 0)
			return ll->ll_paths[i].cp_access;
	return 0;
}

/* MC-2: the system table, the read root read-only, the dir read-write,
 * the program; nothing more. */
static void
test_mc2_rules_from_the_plan(void **state)
{
	const struct confine_path *sys;
	struct wt_ll ll;
	size_t n, i;

	if (sbx_host.sh_landlock_abi < 1)
		skip();
	assert_int_equal(wt_ll_rules(&w, "/usr/bin/git", &ll), 0);
	sys = sandbox_system_paths(&n);
	assert_int_equal(ll.ll_npaths, n + 3);
	for (i = 0; i < n; i++)
		assert_int_equal(
		    access_of(&ll, sys[i].cp_path), sys[i].cp_access);
	assert_int_equal(access_of(&ll, rd), CONFINE_LL_READ);
	assert_int_equal(
	    access_of(&ll, w.w_dir), CONFINE_LL_READ | CONFINE_LL_WRITE);
	assert_int_equal(
	    access_of(&ll, "/usr/bin/git"), CONFINE_LL_READ | CONFINE_LL_EXEC);
	assert_int_equal(access_of(&ll, out), 0);
	assert_true((ll.ll_flags & CONFINE_RS_QUIET) != 0);
}

/* 0 when path opens with flags, else errno. */
static int
try_open(const char *dir, const char *name, int flags)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, flags | O_CLOEXEC, 0600)) == -1)
		return errno;
	close(fd);
	return 0;
}

/* MC-2: a child under the rules, as the spawn helper's hook leaves it. */
static void
test_mc2_child_reads_only_the_roots(void **state)
{
	struct wt_ll ll;
	pid_t pid;
	int st;

	if (sbx_host.sh_landlock_abi < 1)
		skip();
	assert_int_equal(wt_ll_rules(&w, "/usr/bin/git", &ll), 0);
	if ((pid = fork()) == 0) {
		if (wt_ll_child(&ll) != 0)
			_exit(10);
		if (try_open(rd, "in.txt", O_RDONLY) != 0)
			_exit(11);
		if (try_open(out, "secret.txt", O_RDONLY) != EACCES)
			_exit(12);
		if (try_open(rd, "new.txt", O_WRONLY | O_CREAT) != EACCES)
			_exit(13);
		if (try_open(w.w_dir, "new.txt", O_WRONLY | O_CREAT) != 0)
			_exit(14);
		if (try_open(top, "new.txt", O_WRONLY | O_CREAT) != EACCES)
			_exit(15);
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mc2_no_landlock_no_rules),
	    cmocka_unit_test(test_mc2_rules_from_the_plan),
	    cmocka_unit_test(test_mc2_child_reads_only_the_roots),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
