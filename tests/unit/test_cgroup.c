/*
 * Unit tests for common/cgroup.c (SP-7): the mountinfo, proc-cgroup and
 * cgroup.procs parsers with hostile lines, the mount-root mapping, and
 * (as root, where a pids hierarchy exists) make / kill / remove on a
 * real group.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void
test_mountinfo_good(void **state)
{
	char root[PATH_MAX], mnt[PATH_MAX];

	(void)state;
	assert_int_equal(cgroup_parse_mountinfo("39 31 0:36 / "
						"/sys/fs/cgroup/pids "
						"rw,relatime - cgroup cgroup "
						"rw,pids\n",
			     root, sizeof(root), mnt, sizeof(mnt)),
	    CGROUP_V1);
	assert_string_equal(root, "/");
	assert_string_equal(mnt, "/sys/fs/cgroup/pids");
	/* optional fields, co-mounted controllers, an escaped space */
	assert_int_equal(
	    cgroup_parse_mountinfo("40 31 0:37 /docker/ab /mnt/c\\040g "
				   "rw,nosuid shared:9 master:2 - cgroup "
				   "cgroup rw,cpu,pids,memory",
		root, sizeof(root), mnt, sizeof(mnt)),
	    CGROUP_V1);
	assert_string_equal(root, "/docker/ab");
	assert_string_equal(mnt, "/mnt/c g");
	assert_int_equal(cgroup_parse_mountinfo("41 31 0:38 / "
						"/sys/fs/cgroup/unified rw "
						"- cgroup2 cgroup2 rw",
			     root, sizeof(root), mnt, sizeof(mnt)),
	    CGROUP_V2);
	assert_string_equal(mnt, "/sys/fs/cgroup/unified");
}

static void
test_mountinfo_other(void **state)
{
	static const char *const rows[] = {
	    /* not pids: cpu only, name=pids, pidsx, the fs type elsewhere */
	    "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu",
	    "40 31 0:37 / /x rw - cgroup cgroup rw,name=pids",
	    "40 31 0:37 / /x rw - cgroup cgroup rw,pidsx",
	    "40 31 0:37 / /x rw - tmpfs cgroup rw,pids",
	    "40 31 0:37 / /x rw,pids - ext4 /dev/sda1 rw",
	    "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw",
	};
	char root[PATH_MAX], mnt[PATH_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++)
		assert_int_equal(cgroup_parse_mountinfo(rows[i], root,
				     sizeof(root), mnt, sizeof(mnt)),
		    0);
}

static void
test_mountinfo_hostile(void **state)
{
	static const char *const rows[] = {
	    "",
	    "\n",
	    "garbage",
	    "39 31 0:36 / /p rw cgroup cgroup rw,pids", /* no "-" */
	    "39 31 0:36 / /p rw - cgroup cgroup",	/* too few after */
	    "39 31 0:36 / /p rw - cgroup cgroup rw,pids extra",
	    "39 31 0:36 / /p - cgroup cgroup rw,pids",	   /* "-" too early */
	    "39  31 0:36 / /p rw - cgroup cgroup rw,pids", /* empty field */
	    "x9 31 0:36 / /p rw - cgroup cgroup rw,pids",
	    "39 31 036 / /p rw - cgroup cgroup rw,pids",
	    "39 31 0:3a / /p rw - cgroup cgroup rw,pids",
	    "39 31 0:36 / p rw - cgroup cgroup rw,pids",     /* relative */
	    "39 31 0:36 x /p rw - cgroup cgroup rw,pids",    /* relative root */
	    "39 31 0:36 / /p\\0 rw - cgroup cgroup rw,pids", /* short escape */
	    "39 31 0:36 / /p\\000 rw - cgroup cgroup rw,pids",	/* NUL */
	    "39 31 0:36 / /p\\012x rw - cgroup cgroup rw,pids", /* newline */
	    "39 31 0:36 / /p\\777 rw - cgroup cgroup rw,pids",	/* > 255 */
	    "39 31 0:36 / /p\\09x rw - cgroup cgroup rw,pids",	/* not octal */
	    "39 31 0:36 / /p\\ rw - cgroup cgroup rw,pids",
	    "39 31 0:36 / /p\x01 rw - cgroup cgroup rw,pids", /* raw control */
	    "39 31 0:36 / /p\t rw - cgroup cgroup rw,pids",
	};
	char root[PATH_MAX], mnt[PATH_MAX], big[8192];
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++)
		assert_int_equal(cgroup_parse_mountinfo(rows[i], root,
				     sizeof(root), mnt, sizeof(mnt)),
		    -1);
	/* a mount point that does not fit the caller's buffer */
	assert_int_equal(cgroup_parse_mountinfo("39 31 0:36 / "
						"/sys/fs/cgroup/pids rw - "
						"cgroup cgroup rw,pids",
			     root, sizeof(root), mnt, 8),
	    -1);
	/* an over-long line */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "39 31 0:36 / /", 14);
	assert_int_equal(
	    cgroup_parse_mountinfo(big, root, sizeof(root), mnt, sizeof(mnt)),
	    -1);
	/* too many optional fields */
	assert_int_equal(
	    cgroup_parse_mountinfo("1 2 0:3 / /p rw a a a a a a a a a a a a a "
				   "a a a a a a a a a a a a a a a a - cgroup "
				   "cgroup rw,pids",
		root, sizeof(root), mnt, sizeof(mnt)),
	    -1);
}

static void
test_proc_lines(void **state)
{
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(
	    cgroup_parse_proc("8:pids:/\n", CGROUP_V1, path, sizeof(path)), 1);
	assert_string_equal(path, "/");
	assert_int_equal(cgroup_parse_proc("4:cpu,pids:/a/b.c:d\n", CGROUP_V1,
			     path, sizeof(path)),
	    1);
	assert_string_equal(path, "/a/b.c:d"); /* a colon in the path */
	assert_int_equal(
	    cgroup_parse_proc("0::/user.slice", CGROUP_V2, path, sizeof(path)),
	    1);
	assert_string_equal(path, "/user.slice");
	/* other hierarchies */
	assert_int_equal(
	    cgroup_parse_proc("4:memory:/x", CGROUP_V1, path, sizeof(path)), 0);
	assert_int_equal(
	    cgroup_parse_proc("9:name=pids:/x", CGROUP_V1, path, sizeof(path)),
	    0);
	assert_int_equal(
	    cgroup_parse_proc("0::/x", CGROUP_V1, path, sizeof(path)), 0);
	assert_int_equal(
	    cgroup_parse_proc("8:pids:/x", CGROUP_V2, path, sizeof(path)), 0);
}

static void
test_proc_hostile(void **state)
{
	static const char *const rows[] = {
	    "", "8", "8:pids", ":pids:/", /* no id */
	    "8x:pids:/",		  /* not a number */
	    "-8:pids:/", "8:pids:",	  /* no path */
	    "8:pids:x",			  /* relative */
	    "8:pids:/a/../b",		  /* dot-dot */
	    "8:pids:/..", "8:pids:/a/./b", "8:pids:/a//b", "8:pids:/a/",
	    "8:pids:/a\tb", "8:pids:/a\x7f", "8:pids:/a\nb", /* two lines */
	};
	char path[PATH_MAX], ctl[600];
	size_t i;

	(void)state;
	for (i = 0; i < N(rows); i++)
		assert_int_equal(
		    cgroup_parse_proc(rows[i], CGROUP_V1, path, sizeof(path)),
		    -1);
	assert_int_equal(
	    cgroup_parse_proc("0::/a/../b", CGROUP_V2, path, sizeof(path)), -1);
	assert_int_equal(cgroup_parse_proc("8:pids:/x", 7, path, sizeof(path)),
	    -1); /* unknown kind */
	/* too long for the caller */
	assert_int_equal(
	    cgroup_parse_proc("8:pids:/abcdefgh", CGROUP_V1, path, 8), -1);
	/* an over-long controller list */
	memset(ctl, 'c', sizeof(ctl));
	memcpy(ctl, "8:", 2);
	memcpy(ctl + sizeof(ctl) - 4, ":/x", 4);
	assert_int_equal(
	    cgroup_parse_proc(ctl, CGROUP_V1, path, sizeof(path)), -1);
}

static void
test_dir_mapping(void **state)
{
	char out[PATH_MAX];

	(void)state;
	assert_int_equal(
	    cgroup_dir("/sys/fs/cgroup/pids", "/", "/", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/pids");
	assert_int_equal(
	    cgroup_dir("/sys/fs/cgroup/pids", "/", "/a/b", out, sizeof(out)),
	    0);
	assert_string_equal(out, "/sys/fs/cgroup/pids/a/b");
	/* a mount of a sub-tree (containers) */
	assert_int_equal(
	    cgroup_dir("/c", "/docker/ab", "/docker/ab/x", out, sizeof(out)),
	    0);
	assert_string_equal(out, "/c/x");
	assert_int_equal(
	    cgroup_dir("/c", "/docker/ab", "/docker/ab", out, sizeof(out)), 0);
	assert_string_equal(out, "/c");
	assert_int_equal(cgroup_dir("/", "/", "/a", out, sizeof(out)), 0);
	assert_string_equal(out, "/a");
	/* outside the mounted sub-tree; a prefix that is not a component */
	assert_int_equal(
	    cgroup_dir("/c", "/docker/ab", "/docker/x", out, sizeof(out)), -1);
	assert_int_equal(
	    cgroup_dir("/c", "/docker/ab", "/docker/abc", out, sizeof(out)),
	    -1);
	assert_int_equal(cgroup_dir("c", "/", "/a", out, sizeof(out)), -1);
	assert_int_equal(cgroup_dir("/c", "/", "/abcdefgh", out, 6), -1);
}

static void
test_lists_names_procs(void **state)
{
	pid_t pids[4];

	(void)state;
	assert_int_equal(cgroup_list_has("cpu pids io\n", " \n", "pids"), 1);
	assert_int_equal(cgroup_list_has("rw,pids", ",", "pids"), 1);
	assert_int_equal(cgroup_list_has("rw,pidsx,xpids", ",", "pids"), 0);
	assert_int_equal(cgroup_list_has("", ",", "pids"), 0);
	assert_int_equal(cgroup_list_has("a,,b", ",", ""), 0);

	assert_int_equal(cgroup_name_pid("cordon.1234", "cordon."), 1234);
	assert_int_equal(cgroup_name_pid("run.7", "run."), 7);
	assert_int_equal(cgroup_name_pid("cordon.", "cordon."), -1);
	assert_int_equal(cgroup_name_pid("cordon.0", "cordon."), -1);
	assert_int_equal(cgroup_name_pid("cordon.01", "cordon."), -1);
	assert_int_equal(cgroup_name_pid("cordon.-1", "cordon."), -1);
	assert_int_equal(cgroup_name_pid("cordon.+1", "cordon."), -1);
	assert_int_equal(cgroup_name_pid("cordon.1x", "cordon."), -1);
	assert_int_equal(cgroup_name_pid("cordon.2147483648", "cordon."), -1);
	assert_int_equal(
	    cgroup_name_pid("cordon.99999999999999999999", "cordon."), -1);
	assert_int_equal(cgroup_name_pid("Cordon.12", "cordon."), -1);
	assert_int_equal(cgroup_name_pid("run.12", "cordon."), -1);

	assert_int_equal(cgroup_parse_procs("", 0, pids, 4), 0);
	assert_int_equal(cgroup_parse_procs("12\n7\n", 5, pids, 4), 2);
	assert_int_equal(pids[0], 12);
	assert_int_equal(pids[1], 7);
	/* more than max: counted up to max, still checked to the end */
	assert_int_equal(
	    cgroup_parse_procs("1\n2\n3\n4\n5\n6\n", 12, pids, 4), 4);
	assert_int_equal(
	    cgroup_parse_procs("1\n2\n3\n4\n5\nx\n", 12, pids, 4), -1);
	assert_int_equal(cgroup_parse_procs("12", 2, pids, 4), -1); /* no \n */
	assert_int_equal(cgroup_parse_procs("0\n", 2, pids, 4), -1);
	assert_int_equal(cgroup_parse_procs("012\n", 4, pids, 4), -1);
	assert_int_equal(cgroup_parse_procs("-1\n", 3, pids, 4), -1);
	assert_int_equal(cgroup_parse_procs(" 1\n", 3, pids, 4), -1);
	assert_int_equal(cgroup_parse_procs("1\n\n", 3, pids, 4), -1);
	assert_int_equal(cgroup_parse_procs("9999999999\n", 11, pids, 4), -1);
	assert_int_equal(cgroup_parse_procs("1\0002\n", 4, pids, 4), -1);
}

static ssize_t
read_small(int dfd, const char *name, char *buf, size_t sz)
{
	ssize_t n;
	int fd;

	if ((fd = openat(dfd, name, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sz - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* make, join, bound, kill, remove: as root where the hierarchy exists */
static void
test_real_group(void **state)
{
	char dir[PATH_MAX], name[64];
	int kind = -1, pfd, dfd, procs, st, p[2];
	char buf[64];
	pid_t kid;
	int i;
	char c;

	(void)state;
	if (geteuid() != 0 || cgroup_find_pids(dir, sizeof(dir), &kind) == -1)
		skip();
	pfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(pfd != -1);
	assert_int_equal(cgroup_kind_of(pfd), kind);
	snprintf(name, sizeof(name), "cordon-unit.%d", (int)getpid());
	if (kind == CGROUP_V2 && cgroup_enable_pids(pfd) == -1)
		skip();
	/* bad names never reach mkdir */
	assert_int_equal(cgroup_make(pfd, "../x", 5, &dfd), -1);
	assert_int_equal(cgroup_make(pfd, "..", 5, &dfd), -1);
	assert_int_equal(cgroup_make(pfd, "", 5, &dfd), -1);
	assert_int_equal(cgroup_make(pfd, name, 3, &dfd), 0);
	assert_int_equal(
	    cgroup_make(pfd, name, 3, &dfd) == -1 && errno == EEXIST, 1);
	procs = openat(dfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	assert_true(procs != -1);
	assert_int_equal(pipe(p), 0);
	kid = fork();
	assert_true(kid != -1);
	if (kid == 0) {
		int n = 0;

		if (write(procs, "0", 1) != 1)
			_exit(90);
		/* pids.max 3: this one and two more */
		while (n < 10 && fork() == 0)
			n++;
		if (n == 0) {
			if (write(p[1], "x", 1) != 1)
				_exit(91);
			pause();
		}
		pause();
		_exit(0);
	}
	close(procs);
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	/* the chain stops at the bound: a refused fork is counted */
	for (i = 0; i < 200; i++) {
		if (read_small(dfd, "pids.events", buf, sizeof(buf)) > 0 &&
		    strstr(buf, "max 0") == NULL)
			break;
		usleep(10000);
	}
	assert_true(i < 200);
	assert_int_equal(
	    read_small(dfd, "pids.current", buf, sizeof(buf)) > 0, 1);
	assert_string_equal(buf, "3\n");
	/* a group that holds processes is left alone on request */
	assert_int_equal(cgroup_remove(pfd, name, CGROUP_RM_IF_EMPTY), -1);
	assert_int_equal(errno, EBUSY);
	assert_int_equal(
	    read_small(dfd, "pids.current", buf, sizeof(buf)) > 0, 1);
	assert_string_equal(buf, "3\n");
	/* no wait: one SIGKILL to each, EBUSY while they were there */
	assert_int_equal(cgroup_remove(pfd, name, CGROUP_RM_NOWAIT), -1);
	assert_int_equal(errno, EBUSY);
	close(dfd);
	assert_int_equal(waitpid(kid, &st, 0), kid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* called again once they are gone, it removes the group */
	for (i = 0; i < 1000; i++) {
		if (cgroup_remove(pfd, name, CGROUP_RM_NOWAIT) == 0)
			break;
		assert_int_equal(errno, EBUSY);
		usleep(1000);
	}
	assert_true(i < 1000);
	assert_int_equal(faccessat(pfd, name, F_OK, 0), -1);
	assert_int_equal(cgroup_remove(pfd, name, CGROUP_RM_NOWAIT | 0x10), -1);
	assert_int_equal(errno, EINVAL);
	/* gone already: done */
	assert_int_equal(cgroup_remove(pfd, name, 0), 0);
	close(pfd);
}

/*
 * cgroup2, in a private mount of the unified hierarchy (the host's pids
 * controller is a v1 one, so v2 is otherwise never exercised here): the
 * kind is seen; without pids in the hierarchy no group is made and none
 * is left behind; removal kills through cgroup.kill.  In a child, so the
 * mount namespace goes with it; exit 77 when the host cannot mount
 * cgroup2 or offers pids there (then test_real_group covers it).
 */
static int
v2_checks(int pfd, const char *name)
{
	char buf[64];
	int i, dfd = -1, fd = -1, st, rc = 0;
	pid_t kid;

	if (cgroup_kind_of(pfd) != CGROUP_V2)
		return 11;
	if (read_small(pfd, "cgroup.controllers", buf, sizeof(buf)) < 0 ||
	    cgroup_list_has(buf, " \n", "pids"))
		return 77;
	if (cgroup_make(pfd, name, 5, &dfd) != -1 ||
	    cgroup_make(pfd, name, 0, &dfd) != -1)
		return 12;
	if (faccessat(pfd, name, F_OK, 0) != -1)
		return 13;
	/* a group of our own making, with a process in it */
	if (mkdirat(pfd, name, 0755) == -1)
		return 14;
	if ((kid = fork()) == 0) {
		pause();
		_exit(0);
	}
	snprintf(buf, sizeof(buf), "%d", (int)kid);
	if ((dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY)) == -1 ||
	    (fd = openat(dfd, "cgroup.procs", O_WRONLY)) == -1 ||
	    write(fd, buf, strlen(buf)) != (ssize_t)strlen(buf))
		rc = 15;
	else if (cgroup_remove(pfd, name, CGROUP_RM_IF_EMPTY) != -1 ||
		 errno != EBUSY)
		rc = 16;
	/* cgroup.kill may have emptied it already: gone, or EBUSY */
	else if (cgroup_remove(pfd, name, CGROUP_RM_NOWAIT) == -1 &&
		 errno != EBUSY)
		rc = 17;
	if (fd != -1)
		close(fd);
	if (dfd != -1)
		close(dfd);
	if (rc != 0)
		kill(kid, SIGKILL);
	if (waitpid(kid, &st, 0) != kid ||
	    !(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))
		rc = rc ? rc : 18;
	for (i = 0; i < 1000; i++) {
		if (cgroup_remove(pfd, name, CGROUP_RM_NOWAIT) == 0)
			break;
		usleep(1000);
	}
	if (rc == 0 && faccessat(pfd, name, F_OK, 0) != -1)
		rc = 19;
	return rc;
}

static int
v2_child(void)
{
	char dir[] = "/tmp/cordon-unit-cg2.XXXXXX", name[64];
	int pfd, rc;

	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
	    mkdtemp(dir) == NULL)
		return 77;
	if (mount("none", dir, "cgroup2", 0, NULL) == -1) {
		rmdir(dir);
		return 77;
	}
	snprintf(name, sizeof(name), "cordon-unit2.%d", (int)getpid());
	if ((pfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		rc = 10;
	else {
		rc = v2_checks(pfd, name);
		(void)unlinkat(pfd, name, AT_REMOVEDIR);
		close(pfd);
	}
	if (umount2(dir, MNT_DETACH) == -1 || rmdir(dir) == -1)
		rc = rc ? rc : 20;
	return rc;
}

static void
test_real_group_v2(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	if (geteuid() != 0)
		skip();
	if ((pid = fork()) == 0)
		_exit(v2_child());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(st), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mountinfo_good),
	    cmocka_unit_test(test_mountinfo_other),
	    cmocka_unit_test(test_mountinfo_hostile),
	    cmocka_unit_test(test_proc_lines),
	    cmocka_unit_test(test_proc_hostile),
	    cmocka_unit_test(test_dir_mapping),
	    cmocka_unit_test(test_lists_names_procs),
	    cmocka_unit_test(test_real_group),
	    cmocka_unit_test(test_real_group_v2),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
