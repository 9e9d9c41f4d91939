/*
 * Unit tests for the spawner's per-run sandbox plan and cleanup
 * (sandbox/sandbox_*.c): SBX-5's layer plan on hosts that lack layers,
 * the health JSON, step names, the private tmp's removal that never
 * follows a link and takes any depth, and the spawner's dir of runs'
 * tmps (swept after a dead spawner, never a live one's), and the
 * child's cover of where a linked protected dir leads, only over the
 * very dir the spawner found.  The rest of the child half is tested end
 * to end by tests/integration/test_sandbox.py.
 */
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dirent.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "sandbox.h"
#include "sandbox_int.h"

static struct manifest mf;
static struct protect_ctx pc;

/* The host the spawner would have probed. */
static void
host_set(int abi, int userns, int seccomp, int private_tmp)
{
	sbx_host.sh_landlock_abi = abi;
	sbx_host.sh_userns = userns;
	sbx_host.sh_seccomp = seccomp;
	sbx_host.sh_private_tmp = private_tmp;
}

static void
mf_init(enum mf_isolation iso, enum mf_network net, int present, int req)
{
	memset(&mf, 0, sizeof(mf));
	memset(&pc, 0, sizeof(pc));
	mf.m_sandbox.sb_present = present;
	mf.m_sandbox.sb_isolation = iso;
	mf.m_sandbox.sb_network = net;
	mf.m_sandbox.sb_required = req;
}

static int
has_layer(struct json_object *o, const char *name)
{
	struct json_object *a, *v;
	size_t i;

	if (!json_object_object_get_ex(o, "layers", &a))
		return 0;
	for (i = 0; i < json_object_array_length(a); i++) {
		v = json_object_array_get_idx(a, i);
		if (strcmp(json_object_get_string(v), name) == 0)
			return 1;
	}
	return 0;
}

/* A full host: everything wanted is given, and the ABI adds its extras. */
static void
test_sbx5_full_host(void **state)
{
	struct sandbox_plan pl;
	struct json_object *o, *v;
	char why[256] = "";

	host_set(7, 1, 1, 1);
	mf_init(MF_ISO_NAMESPACE, MF_NET_NONE, 1, 1);
	assert_int_equal(
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)), 0);
	o = sandbox_plan_json(&pl);
	assert_true(json_object_object_get_ex(o, "enforced", &v) &&
		    json_object_get_boolean(v));
	assert_false(json_object_object_get_ex(o, "reason", &v));
	assert_true(has_layer(o, "mountns") && has_layer(o, "pidns") &&
		    has_layer(o, "netns") && has_layer(o, "landlock-net") &&
		    has_layer(o, "landlock-scope") &&
		    has_layer(o, "landlock-log") &&
		    has_layer(o, "seccomp-net"));
	json_object_put(o);
	sandbox_plan_free(&pl);
}

/* No user namespaces: a namespace agent that requires them is refused. */
static void
test_sbx5_missing_layer_refuses(void **state)
{
	struct sandbox_plan pl;
	char why[256] = "";

	host_set(3, 0, 1, 1);
	mf_init(MF_ISO_NAMESPACE, MF_NET_NONE, 1, 1);
	assert_int_equal(
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)), -1);
	assert_string_equal(
	    why, "sandbox: this host lacks userns mountns pidns netns");
	/*
	 * No sandbox: block at all is the default sandbox, required too;
	 * SBX-4: isolation landlock wants the namespaces all the same.
	 */
	mf_init(MF_ISO_LANDLOCK, MF_NET_NONE, 0, 0);
	assert_int_equal(
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)), -1);
	assert_string_equal(
	    why, "sandbox: this host lacks userns mountns pidns netns");
	mf_init(MF_ISO_LANDLOCK, MF_NET_ALLOW, 1, 1);
	assert_int_equal(
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)), -1);
	assert_string_equal(
	    why, "sandbox: this host lacks userns mountns pidns");
	/* required: false runs without them, and says so. */
	mf_init(MF_ISO_LANDLOCK, MF_NET_ALLOW, 1, 0);
	assert_int_equal(
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)), 0);
	assert_string_equal(pl.pl_reason, "host lacks userns mountns pidns "
					  "(sandbox.required is false)");
	sandbox_plan_free(&pl);
	/* No dir for the runs' tmps: refused, even with required: false. */
	host_set(7, 1, 1, 0);
	mf_init(MF_ISO_LANDLOCK, MF_NET_ALLOW, 1, 0);
	assert_int_equal(
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)), -1);
	assert_string_equal(why, "sandbox: this host lacks private-tmp");
	/* Without Landlock nothing is enforceable. */
	host_set(-1, 1, 1, 1);
	mf_init(MF_ISO_LANDLOCK, MF_NET_ALLOW, 1, 1);
	assert_int_equal(
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)), -1);
	assert_string_equal(why, "sandbox: this host lacks landlock");
}

/*
 * SBX-2: a protected path under a system path every agent may read (a
 * cordon home under /opt, an operator home under /opt) refuses every
 * plan, required or not: Landlock cannot carve it out of /opt.
 */
static void
test_sbx2_protected_under_system_rules(void **state)
{
	struct sandbox_plan pl;
	char why[256] = "";

	host_set(7, 1, 1, 1);
	mf_init(MF_ISO_LANDLOCK, MF_NET_NONE, 1, 0);
	pc.pc_extra[0] = "/opt/cordon/secrets.yaml";
	pc.pc_nextra = 1;
	assert_int_equal(
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)), -1);
	assert_string_equal(why, "sandbox: a protected path lies under /opt, "
				 "which every agent may read");
	mf_init(MF_ISO_NAMESPACE, MF_NET_ALLOW, 1, 1); /* clears pc */
	pc.pc_home = "/opt/svc";
	assert_int_equal(
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)), -1);
	assert_string_equal(why, "sandbox: a protected path lies under /opt, "
				 "which every agent may read");
	/* Beside them, not under: fine. */
	pc.pc_home = "/home/op";
	assert_int_equal(
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)), 0);
	sandbox_plan_free(&pl);
	pc.pc_home = NULL;
}

/* required: false runs with what there is, and says what is missing. */
static void
test_sbx5_not_required_says_why(void **state)
{
	struct sandbox_plan pl;
	struct json_object *o, *v;
	char why[256] = "";

	host_set(3, 0, 1, 1);
	mf_init(MF_ISO_NAMESPACE, MF_NET_NONE, 1, 0);
	assert_int_equal(
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)), 0);
	o = sandbox_plan_json(&pl);
	assert_true(json_object_object_get_ex(o, "enforced", &v) &&
		    !json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "reason", &v));
	assert_string_equal(json_object_get_string(v),
	    "host lacks userns mountns pidns netns (sandbox.required is "
	    "false)");
	assert_true(has_layer(o, "landlock") && has_layer(o, "seccomp"));
	/* ABI 3: no TCP rights, no scoping, no logging. */
	assert_false(has_layer(o, "landlock-net") ||
		     has_layer(o, "landlock-scope") || has_layer(o, "netns"));
	json_object_put(o);
	sandbox_plan_free(&pl);
}

static void
test_sbx1_step_names(void **state)
{
	assert_string_equal(
	    sandbox_step_name(SBX_STEP_LL_RESTRICT), "landlock_restrict_self");
	assert_string_equal(sandbox_step_name(SBX_STEP_ROOT), "root");
	assert_string_equal(sandbox_step_name(SPAWN_STEP_EXEC), "execve");
	assert_null(sandbox_step_name(SBX_STEP_MAX));
	assert_null(sandbox_step_name(SPAWN_STEP_HOOK_BASE));
}

/* The private tmp goes, links in it are removed, never followed. */
static void
test_sbx1_rmtree_never_follows(void **state)
{
	char base[] = "/tmp/cordon-sbx-unit-XXXXXX", p[PATH_MAX], q[PATH_MAX];
	int fd;

	assert_non_null(mkdtemp(base));
	snprintf(p, sizeof(p), "%s/keep", base);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(q, sizeof(q), "%s/keep/precious", base);
	assert_true((fd = open(q, O_WRONLY | O_CREAT, 0600)) != -1);
	close(fd);
	snprintf(p, sizeof(p), "%s/run", base);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(q, sizeof(q), "%s/run/link", base);
	snprintf(p, sizeof(p), "%s/keep", base);
	assert_int_equal(symlink(p, q), 0);
	snprintf(q, sizeof(q), "%s/run/locked", base);
	assert_int_equal(mkdir(q, 0700), 0);
	snprintf(q, sizeof(q), "%s/run/locked/f", base);
	assert_true((fd = open(q, O_WRONLY | O_CREAT, 0600)) != -1);
	close(fd);
	snprintf(q, sizeof(q), "%s/run/locked", base);
	assert_int_equal(chmod(q, 0500), 0);

	snprintf(p, sizeof(p), "%s/run", base);
	assert_int_equal(sandbox_rmtree(p), 0);
	assert_int_equal(access(p, F_OK), -1);
	snprintf(q, sizeof(q), "%s/keep/precious", base);
	assert_int_equal(access(q, F_OK), 0);
	/* A path that is itself a link is refused, not followed. */
	snprintf(q, sizeof(q), "%s/alias", base);
	snprintf(p, sizeof(p), "%s/keep", base);
	assert_int_equal(symlink(p, q), 0);
	assert_int_equal(sandbox_rmtree(q), -1);
	snprintf(q, sizeof(q), "%s/keep/precious", base);
	assert_int_equal(access(q, F_OK), 0);
	/* Clean up. */
	snprintf(q, sizeof(q), "%s/alias", base);
	unlink(q);
	assert_int_equal(sandbox_rmtree(base), 0);
}

/* A tree far deeper than the walk's own bound goes, all of it. */
static void
test_sbx1_rmtree_any_depth(void **state)
{
	char base[] = "/tmp/cordon-sbx-unit-XXXXXX";
	int dfd, fd, i, next;

	assert_non_null(mkdtemp(base));
	assert_true((dfd = open(base, O_RDONLY | O_DIRECTORY)) != -1);
	for (i = 0; i < 300; i++) {
		assert_int_equal(mkdirat(dfd, "d", 0700), 0);
		assert_true(
		    (fd = openat(dfd, "f", O_WRONLY | O_CREAT, 0600)) != -1);
		close(fd);
		assert_true(
		    (next = openat(dfd, "d", O_RDONLY | O_DIRECTORY)) != -1);
		close(dfd);
		dfd = next;
	}
	assert_int_equal(fchmod(dfd, 0500), 0); /* even a locked bottom */
	close(dfd);
	/* Names the walk would move deep dirs to, taken in advance. */
	assert_true((dfd = open(base, O_RDONLY | O_DIRECTORY)) != -1);
	for (i = 0; i < 2000; i++) {
		char name[32];

		snprintf(name, sizeof(name), ".rm.%d", i);
		assert_true(
		    (fd = openat(dfd, name, O_WRONLY | O_CREAT, 0600)) != -1);
		close(fd);
	}
	close(dfd);
	assert_int_equal(sandbox_rmtree(base), 0);
	assert_int_equal(access(base, F_OK), -1);
}

static int
count_prefix(const char *dir, const char *prefix)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL)
		n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

static void
mkdir_in(const char *base, const char *rel, mode_t mode)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	assert_int_equal(mkdir(p, mode), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static int
exists_in(const char *base, const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	return lstat(p, &st) == 0;
}

/*
 * The runs' tmp dir: a dead spawner's is swept (content and all), a live
 * one's (locked) is not, nor anything not shaped like ours (group or
 * other access, a link); ours is locked while open and gone at close.
 */
static void
test_sbx1_runs_dir_swept_only_when_dead(void **state)
{
	char base[] = "/tmp/cordon-sbx-unit-XXXXXX", p[PATH_MAX];
	char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	int live, fd;

	assert_non_null(mkdtemp(base));
	mkdir_in(base, "cordon-runs.dead01", 0700);
	mkdir_in(base, "cordon-runs.dead01/cordon-run.aaaaaa", 0700);
	mkdir_in(base, "cordon-runs.dead01/cordon-run.aaaaaa/x", 0500);
	mkdir_in(base, "cordon-runs.live01", 0700);
	mkdir_in(base, "cordon-runs.live01/cordon-run.bbbbbb", 0700);
	mkdir_in(base, "cordon-runs.open01", 0755);
	mkdir_in(base, "target", 0700);
	mkdir_in(base, "target/keep", 0700);
	snprintf(p, sizeof(p), "%s/target", base);
	assert_int_equal(chdir(base), 0);
	assert_int_equal(symlink(p, "cordon-runs.link01"), 0);
	/* A live spawner holds its dir's lock (its own open file). */
	assert_true(
	    (live = open("cordon-runs.live01", O_RDONLY | O_DIRECTORY)) != -1);
	assert_int_equal(flock(live, LOCK_EX | LOCK_NB), 0);

	assert_int_equal(setenv("TMPDIR", base, 1), 0);
	assert_int_equal(sandbox_tmp_open(), 0);
	assert_int_equal(sbx_host.sh_private_tmp, 1);
	assert_false(exists_in(base, "cordon-runs.dead01"));
	assert_true(exists_in(base, "cordon-runs.live01/cordon-run.bbbbbb"));
	assert_true(exists_in(base, "cordon-runs.open01"));
	assert_true(exists_in(base, "cordon-runs.link01"));
	assert_true(exists_in(base, "target/keep"));
	/* Ours: one more, never left under its dot name, and locked. */
	assert_int_equal(count_prefix(base, "cordon-runs."), 4);
	assert_int_equal(count_prefix(base, ".cordon-runs."), 0);
	{
		struct dirent *de;
		DIR *d = opendir(base);

		assert_non_null(d);
		while ((de = readdir(d)) != NULL)
			if (strncmp(de->d_name, "cordon-runs.", 12) == 0 &&
			    strcmp(de->d_name, "cordon-runs.live01") != 0 &&
			    strcmp(de->d_name, "cordon-runs.open01") != 0 &&
			    strcmp(de->d_name, "cordon-runs.link01") != 0)
				break;
		assert_non_null(de);
		assert_true(
		    (fd = open(de->d_name, O_RDONLY | O_DIRECTORY)) != -1);
		assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
		assert_int_equal(errno, EWOULDBLOCK);
		close(fd);
		closedir(d);
	}
	sandbox_tmp_close();
	assert_int_equal(sbx_host.sh_private_tmp, 0);
	assert_int_equal(count_prefix(base, "cordon-runs."), 3);

	/* Once the live one's holder is gone, the next start sweeps it. */
	close(live);
	assert_int_equal(sandbox_tmp_open(), 0);
	assert_false(exists_in(base, "cordon-runs.live01"));
	sandbox_tmp_close();
	assert_int_equal(count_prefix(base, "cordon-runs."), 2);

	/* A TMPDIR we cannot make a dir in: no private tmp, said so. */
	snprintf(p, sizeof(p), "%s/target/keep", base);
	assert_int_equal(chmod(p, 0500), 0);
	assert_int_equal(setenv("TMPDIR", p, 1), 0);
	if (geteuid() != 0) {
		assert_int_equal(sandbox_tmp_open(), -1);
		assert_int_equal(sbx_host.sh_private_tmp, 0);
	}
	snprintf(p, sizeof(p), "%s/nowhere", base);
	assert_int_equal(setenv("TMPDIR", p, 1), 0);
	assert_int_equal(sandbox_tmp_open(), -1);
	assert_int_equal(sbx_host.sh_private_tmp, 0);

	assert_int_equal(chdir("/"), 0);
	if (old != NULL)
		setenv("TMPDIR", old, 1);
	else
		unsetenv("TMPDIR");
	free(old);
	snprintf(p, sizeof(p), "%s/cordon-runs.link01", base);
	unlink(p);
	assert_int_equal(sandbox_rmtree(base), 0);
}

/*
 * SBX-3, in a mount namespace of a forked child: a dir of sx_links is
 * covered only where the walk finds the dir the spawner resolved (dev,
 * inode), through no link; anything else fails the cover and mounts
 * nothing.  The child's exit status names the first check that failed.
 */
#define LC_MAX (PATH_MAX + 8) /* base, a name in it */

static int
link_cover_case(struct sandbox_run *sx, const char *path, const struct stat *as,
    int want_errno, const char *still)
{
	sx->sx_links[0].lk_path = (char *)path;
	sx->sx_links[0].lk_dev = as->st_dev;
	sx->sx_links[0].lk_ino = as->st_ino;
	sx->sx_nlinks = 1;
	errno = 0;
	if (sbx_home_cover(sx) != SBX_STEP_HOMEDIR || errno != want_errno)
		return -1;
	return access(still, F_OK);
}

static int
link_cover_child(const char *base)
{
	struct sandbox_plan pl;
	struct sandbox_run sx;
	struct stat b;
	char a[LC_MAX], bd[LC_MAX], l[LC_MAX], gone[LC_MAX], af[LC_MAX];
	char bf[LC_MAX];

	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return 10;
	snprintf(a, sizeof(a), "%s/a", base);
	snprintf(bd, sizeof(bd), "%s/b", base);
	snprintf(l, sizeof(l), "%s/l", base);
	snprintf(gone, sizeof(gone), "%s/gone", base);
	snprintf(af, sizeof(af), "%s/a/f", base);
	snprintf(bf, sizeof(bf), "%s/b/f", base);
	if (stat(bd, &b) == -1)
		return 11;
	memset(&pl, 0, sizeof(pl));
	memset(&sx, 0, sizeof(sx));
	snprintf(pl.pl_home, sizeof(pl.pl_home), "%s", base);
	sx.sx_plan = &pl;
	/* Another dir now at the path: refused, not covered. */
	if (link_cover_case(&sx, a, &b, ESTALE, af) != 0)
		return 12;
	/* The same dir, reached through a link: refused, not covered. */
	if (link_cover_case(&sx, l, &b, ENOTDIR, bf) != 0)
		return 13;
	if (link_cover_case(&sx, gone, &b, ENOENT, bf) != 0)
		return 14;
	/* The dir itself: covered, its file out of view. */
	sx.sx_links[0].lk_path = bd;
	if (sbx_home_cover(&sx) != 0)
		return 15;
	if (access(bf, F_OK) == 0 || errno != ENOENT)
		return 16;
	return 0;
}

static void
test_sbx3_link_cover_only_the_dir_resolved(void **state)
{
	char tmpl[] = "/tmp/cordon-sbx3-XXXXXX", base[PATH_MAX], p[LC_MAX];
	const char *const files[] = {"a/f", "b/f"};
	size_t i;
	pid_t pid;
	int st, fd;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, base));
	snprintf(p, sizeof(p), "%s/a", base);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/b", base);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/l", base);
	assert_int_equal(symlink("b", p), 0);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", base, files[i]);
		assert_true((fd = open(p, O_WRONLY | O_CREAT, 0644)) != -1);
		close(fd);
	}
	if ((pid = fork()) == 0)
		_exit(link_cover_child(base));
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(sandbox_rmtree(base), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sbx5_full_host),
	    cmocka_unit_test(test_sbx5_missing_layer_refuses),
	    cmocka_unit_test(test_sbx2_protected_under_system_rules),
	    cmocka_unit_test(test_sbx5_not_required_says_why),
	    cmocka_unit_test(test_sbx1_step_names),
	    cmocka_unit_test(test_sbx1_rmtree_never_follows),
	    cmocka_unit_test(test_sbx1_rmtree_any_depth),
	    cmocka_unit_test(test_sbx1_runs_dir_swept_only_when_dead),
	    cmocka_unit_test(test_sbx3_link_cover_only_the_dir_resolved),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
