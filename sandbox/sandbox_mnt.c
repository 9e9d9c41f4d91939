/*
 * In the child, between clone and execve: the mounts of a run in its
 * own mount namespace (SBX-4).  The host read-only, nosuid, nodev; the
 * write roots copied in by handle and writable; a private /tmp with the
 * roots under /tmp shown again in it; a fresh /proc; the gate's FIFO
 * dir (SBX-8); the CLI's config files read-only (SBX-8, sandbox_cfg.c);
 * the host's /run (SBX-3, sandbox_sockdirs.c) and cordon's socket dir
 * covered.  No logging, no allocation.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ipc.h"
#include "msg.h"
#include "sandbox.h"
#include "sandbox_int.h"
#include "util.h"

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

static const char *sbx_hide;

void
sandbox_hide_dir(const char *dir)
{
	sbx_hide = dir;
}

static int
setattr_at(
    int dfd, const char *path, unsigned int flags, uint64_t set, uint64_t clr)
{
	struct mount_attr ma;

	memset(&ma, 0, sizeof(ma));
	ma.attr_set = set;
	ma.attr_clr = clr;
	return (int)syscall(
	    SYS_mount_setattr, dfd, path, flags, &ma, sizeof(ma));
}

/*
 * Mounts are made detached and attached by handle: a path an agent or
 * a sibling run can rename is looked up once, as an O_PATH fd, and the
 * mount lands on that very object (move_mount to an empty path), never
 * on whatever the path names a moment later (SBX-2, SBX-4).
 */

/* A detached copy of the tree at fd with attrs set (and RDONLY cleared
 * on its top when rw): its fd, or -1. */
int
sbx_tree_clone(int fd, uint64_t set, int rw)
{
	int t, e;

	t = (int)syscall(SYS_open_tree, fd, "",
	    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (t == -1)
		return -1;
	if (setattr_at(t, "", AT_EMPTY_PATH | AT_RECURSIVE, set, 0) == -1 ||
	    (rw &&
		setattr_at(t, "", AT_EMPTY_PATH, 0, MOUNT_ATTR_RDONLY) == -1)) {
		e = errno;
		close(t);
		errno = e;
		return -1;
	}
	return t;
}

/* The detached mount m and all beneath it made read-only: 0 or -1. */
int
sbx_tree_readonly(int m)
{
	return setattr_at(
	    m, "", AT_EMPTY_PATH | AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0);
}

/* A detached tmpfs of size bytes and mode: its mount fd, or -1. */
int
sbx_tmpfs_new(unsigned long long size, const char *mode, uint64_t attrs)
{
	char num[24];
	int fs, m, e;

	snprintf(num, sizeof(num), "%llu", size);
	if ((fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC)) == -1)
		return -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", num, 0) ==
		-1 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", mode, 0) ==
		-1 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) ==
		-1) {
		e = errno;
		close(fs);
		errno = e;
		return -1;
	}
	m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs);
	e = errno;
	close(fs);
	errno = e;
	return m;
}

/* Attach the detached mount m onto what to (an O_PATH fd) holds; closes m. */
int
sbx_attach_fd(int m, int to)
{
	int r, e;

	r = (int)syscall(SYS_move_mount, m, "", to, "",
	    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	e = errno;
	close(m);
	errno = e;
	return r;
}

/* Onto a fixed system path (/tmp, the socket dir) no agent can rename. */
static int
attach_path(int m, const char *path)
{
	int r, e;

	r = (int)syscall(
	    SYS_move_mount, m, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH);
	e = errno;
	close(m);
	errno = e;
	return r;
}

/* 1 if path is /tmp or beneath it. */
static int
under_tmp(const char *p)
{
	return strncmp(p, "/tmp", 4) == 0 && (p[4] == '\0' || p[4] == '/');
}

/* 1 if p lies strictly beneath dir. */
static int
beneath(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(p, dir, n) == 0 && p[n] == '/';
}

/* mkdir -p of rel (relative) beneath dfd. */
static int
mkdirs_at(int dfd, const char *rel)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = buf;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (buf[0] != '\0' && mkdirat(dfd, buf, 0755) == -1 &&
			    errno != EEXIST)
				return -1;
			if (c == '\0')
				break;
			*p = c;
		}
	}
	return 0;
}

/* The mountpoint for a path under a covered dir, made in its cover. */
static int
cover_mountpoint(int basefd, size_t skip, const struct tmproot *tr)
{
	char parent[PATH_MAX], *slash;
	const char *rel = tr->tr_path + skip; /* past "/tmp/", "/run/" */
	int fd;

	if (tr->tr_dir)
		return mkdirs_at(basefd, rel);
	if (snprintf(parent, sizeof(parent), "%s", rel) >= (int)sizeof(parent))
		return -1;
	if ((slash = strrchr(parent, '/')) != NULL) {
		*slash = '\0';
		if (mkdirs_at(basefd, parent) == -1)
			return -1;
	}
	fd = openat(
	    basefd, rel, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	close(fd);
	return 0;
}

/*
 * Copies, made while the host is in view, of every path of the ruleset
 * strictly beneath dir (/tmp, /run), to be shown again once dir is
 * covered.  0, or SBX_STEP_ROOT.
 */
int
sbx_copy_under(const struct sandbox_run *sx, const char *dir,
    struct tmproot *tr, size_t max, size_t *n)
{
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < sx->sx_npaths; i++) {
		const char *p = sx->sx_paths[i].cp_path;

		if (!beneath(p, dir) || *n == max)
			continue;
		tr[*n].tr_path = p;
		tr[*n].tr_nested = 0;
		fd = open(p, O_PATH | O_CLOEXEC);
		if (fd == -1 &&
		    (sx->sx_paths[i].cp_access & CONFINE_LL_OPTIONAL))
			continue;
		if (fd == -1 || fstat(fd, &st) == -1)
			return SBX_STEP_ROOT;
		tr[*n].tr_dir = S_ISDIR(st.st_mode);
		tr[*n].tr_tree = sbx_tree_clone(fd, SBX_MNT_RO,
		    (sx->sx_paths[i].cp_access & CONFINE_LL_WRITE) != 0);
		close(fd);
		if (tr[*n].tr_tree == -1)
			return SBX_STEP_ROOT;
		(*n)++;
	}
	return 0;
}

/* Each copy marked when it lies beneath another. */
void
sbx_mark_nested(struct tmproot *tr, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			if (i != j && beneath(tr[i].tr_path, tr[j].tr_path))
				tr[i].tr_nested = 1;
}

/* The mountpoints of the copies beneath dir, made in its cover. */
int
sbx_cover_mountpoints(
    int basefd, const char *dir, const struct tmproot *tr, size_t n)
{
	size_t i, skip = strlen(dir) + 1;

	for (i = 0; i < n; i++)
		if (!tr[i].tr_nested && strlen(tr[i].tr_path) > skip &&
		    cover_mountpoint(basefd, skip, &tr[i]) == -1)
			return -1;
	return 0;
}

/*
 * The copies attached once their dir is covered, parents before the
 * paths nested in them: a mountpoint is in the cover, or, for a nested
 * one, in a copy attached just now.
 */
int
sbx_attach_under(const struct tmproot *tr, size_t n)
{
	size_t i;
	int pass, fd;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			if (tr[i].tr_nested != pass)
				continue;
			if ((fd = open(tr[i].tr_path,
				 O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1)
				return -1;
			if (sbx_attach_fd(tr[i].tr_tree, fd) == -1) {
				close(fd);
				return -1;
			}
			close(fd);
		}
	return 0;
}

/*
 * A cover to write mountpoints in, detached, with attrs set and its top
 * writable: a tmpfs of bytes and mode, or, for a spawner running as
 * root (whose ids the user namespace cannot map, so it could create
 * nothing in a tmpfs made there), a copy of dir, a per-run dir
 * sandbox_run_prepare made.
 */
int
sbx_scratch_tree(
    const char *dir, unsigned long long bytes, const char *mode, uint64_t set)
{
	int fd, t;

	if (dir[0] == '\0')
		return sbx_tmpfs_new(bytes, mode, set);
	if ((fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1)
		return -1;
	t = sbx_tree_clone(fd, set | MOUNT_ATTR_RDONLY, 1);
	close(fd);
	return t;
}

/* The run's /tmp: of its own bounded size (SP-7), nosuid,nodev. */
static int
tmp_tree(const struct sandbox_run *sx)
{
	return sbx_scratch_tree(
	    sx->sx_tmp, sx->sx_tmp_bytes, "0700", SBX_MNT_SAFE);
}

/*
 * SBX-8: the gate by path.  GATE_FIFO_DIR in the run's own /tmp (a
 * tmpfs only this mount namespace shows; for a root spawner a dir of its
 * own 0700 runs dir), its named pipes made here, then covered by a
 * read-only copy of itself so the agent can neither remove nor replace
 * them (a FIFO opens for writing on a read-only mount).  The dir's fd
 * goes to the spawner, which serves the pipes through it.
 */
static int
child_gate_dir(int tmpfd)
{
	const char *name = &GATE_FIFO_DIR[sizeof("/tmp/") - 1];
	char n[16];
	int gfd, m, fd, i, r;

	if (mkdirat(tmpfd, name, 0700) == -1 ||
	    (gfd = openat(tmpfd, name,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	for (i = 0; i < GATE_FIFO_SLOTS; i++) {
		snprintf(n, sizeof(n), "%d.in", i);
		if (mknodat(gfd, n, S_IFIFO | 0600, 0) == -1)
			return -1;
		snprintf(n, sizeof(n), "%d.out", i);
		if (mknodat(gfd, n, S_IFIFO | 0600, 0) == -1)
			return -1;
	}
	if ((m = sbx_tree_clone(gfd, SBX_MNT_DEAD, 0)) == -1 ||
	    (fd = open(GATE_FIFO_DIR,
		 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    sbx_attach_fd(m, fd) == -1)
		return -1;
	close(fd);
	r = ipc_sendmsg_fd(SBX_NOTIFY_FD, "g", 1, gfd) == 1 ? 0 : -1;
	close(gfd);
	return r;
}

/*
 * What the mount steps hand on to each other, on the child's stack: the
 * detached copies made while the host is still in view, then attached
 * once /tmp and the host are covered.
 */
struct mnt_view {
	struct tmproot mv_tr[SBX_PATHS_MAX]; /* paths under /tmp */
	size_t mv_ntr;
	int mv_wtree[SBX_WRITE_MAX]; /* write roots elsewhere: copies */
	int mv_wfd[SBX_WRITE_MAX];   /* and where they go */
	size_t mv_nw;
	int mv_cfgtree[SBX_CFG_FILES_MAX];
	struct stat mv_cfgsrc[SBX_CFG_FILES_MAX];
	int mv_tmpm;	/* the private /tmp, detached */
	int mv_tmpfd;	/* its top directory */
	int mv_emptyfd; /* the shadow source, in it */
};

/*
 * Step: every path of the ruleset under /tmp (roots, the agent's
 * binary, `cordon` for the gate), copied before /tmp is covered.
 */
static int
mnt_copy_tmp_paths(const struct sandbox_run *sx, struct mnt_view *mv)
{
	return sbx_copy_under(
	    sx, "/tmp", mv->mv_tr, nitems(mv->mv_tr), &mv->mv_ntr);
}

/*
 * Step: a cwd under /tmp beneath no root (an operator's HOME there) is
 * shown too, read-only: the agent may enter it, and Landlock still
 * decides what it may read, as for any other path of the host.  Then
 * each path copied is marked when it lies beneath another.
 */
static int
mnt_copy_tmp_cwd(const struct sandbox_run *sx, struct mnt_view *mv)
{
	struct tmproot *tr = mv->mv_tr;
	size_t j, ntr = mv->mv_ntr;
	int fd;

	if (sx->sx_cwd != NULL && under_tmp(sx->sx_cwd) &&
	    strcmp(sx->sx_cwd, "/tmp") != 0 && ntr < nitems(mv->mv_tr)) {
		for (j = 0; j < ntr; j++)
			if (strcmp(sx->sx_cwd, tr[j].tr_path) == 0 ||
			    beneath(sx->sx_cwd, tr[j].tr_path))
				break;
		if (j == ntr) {
			if ((fd = open(sx->sx_cwd,
				 O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
				return SBX_STEP_CHDIR;
			tr[ntr].tr_path = sx->sx_cwd;
			tr[ntr].tr_nested = 0;
			tr[ntr].tr_dir = 1;
			tr[ntr].tr_tree = sbx_tree_clone(fd, SBX_MNT_RO, 0);
			close(fd);
			if (tr[ntr].tr_tree == -1)
				return SBX_STEP_CHDIR;
			mv->mv_ntr = ++ntr;
		}
	}
	sbx_mark_nested(tr, ntr);
	return 0;
}

/* Step: write roots elsewhere: held, and copied writable, by handle. */
static int
mnt_copy_write_roots(const struct sandbox_run *sx, struct mnt_view *mv)
{
	const struct roots *rt = &sx->sx_plan->pl_roots;
	size_t i;

	for (i = 0; i < rt->r_nwrite && mv->mv_nw < nitems(mv->mv_wfd); i++) {
		if (under_tmp(rt->r_write[i]))
			continue;
		if ((mv->mv_wfd[mv->mv_nw] = open(rt->r_write[i],
			 O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1)
			return SBX_STEP_ROOT;
		if ((mv->mv_wtree[mv->mv_nw] = sbx_tree_clone(
			 mv->mv_wfd[mv->mv_nw], SBX_MNT_RO, 1)) == -1)
			return SBX_STEP_WRITABLE;
		mv->mv_nw++;
	}
	return 0;
}

/* Step: the private tmp, its shadow source and the mountpoints in it. */
static int
mnt_make_tmp(const struct sandbox_run *sx, struct mnt_view *mv)
{
	if ((mv->mv_tmpm = tmp_tree(sx)) == -1)
		return SBX_STEP_TMP;
	if ((mv->mv_tmpfd = openat(
		 mv->mv_tmpm, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return SBX_STEP_TMP;
	if ((mv->mv_emptyfd = openat(mv->mv_tmpfd, ".cordon-shadow",
		 O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400)) ==
	    -1)
		return SBX_STEP_TMP;
	if (sbx_cover_mountpoints(
		mv->mv_tmpfd, "/tmp", mv->mv_tr, mv->mv_ntr) == -1)
		return SBX_STEP_TMP;
	return 0;
}

/* Step: everything the agent did not get a copy of, read-only. */
static int
mnt_host_readonly(void)
{
	struct stat st;

	if (setattr_at(AT_FDCWD, "/", AT_RECURSIVE, SBX_MNT_RO, 0) == -1)
		return SBX_STEP_READONLY;
	/*
	 * But /dev itself (not /dev/shm, /dev/pts): /dev/null and the few
	 * others of sbx_system are devices; Landlock lets an agent open
	 * those and nothing else there, and no agent can make a node.
	 */
	if (stat("/dev", &st) == 0 &&
	    setattr_at(AT_FDCWD, "/dev", 0, 0, MOUNT_ATTR_NODEV) == -1 &&
	    errno != EINVAL)
		return SBX_STEP_READONLY;
	return 0;
}

/* Step: the copies attached: write roots, /tmp, the paths under it. */
static int
mnt_attach_copies(struct mnt_view *mv)
{
	size_t i;
	int r;

	for (i = 0; i < mv->mv_nw; i++) {
		r = sbx_attach_fd(mv->mv_wtree[i], mv->mv_wfd[i]);
		close(mv->mv_wfd[i]);
		if (r == -1)
			return SBX_STEP_WRITABLE;
	}
	if (attach_path(mv->mv_tmpm, "/tmp") == -1)
		return SBX_STEP_TMP;
	if (sbx_attach_under(mv->mv_tr, mv->mv_ntr) == -1)
		return SBX_STEP_ROOT;
	return 0;
}

/* Step: a fresh /proc, the gate's dir, cordon's socket dir covered. */
static int
mnt_proc_gate_hide(const struct sandbox_run *sx, struct mnt_view *mv)
{
	struct stat st;
	int m;

	if ((sx->sx_clone & CLONE_NEWPID) &&
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		NULL) == -1)
		return SBX_STEP_PROC;
	if (sx->sx_gate && child_gate_dir(mv->mv_tmpfd) == -1)
		return SBX_STEP_GATE;
	/* cordon's own sockets: nothing there for an agent to dial. */
	if (sbx_hide != NULL && stat(sbx_hide, &st) == 0 &&
	    ((m = sbx_tmpfs_new(4096, "0555", SBX_MNT_DEAD)) == -1 ||
		attach_path(m, sbx_hide) == -1))
		return SBX_STEP_HIDE;
	return 0;
}

/*
 * Namespace isolation (SBX-4): the whole host read-only, nosuid, nodev;
 * the write roots copied in by handle and writable (still nosuid,
 * nodev); a private /tmp (roots under /tmp shown again inside it); the
 * host's /run covered (SBX-3: its sockets); a fresh /proc;
 * secret-looking files in write roots covered.  The steps
 * in order; the first to fail names itself.
 */
int
sbx_child_mounts(const struct sandbox_run *sx)
{
	struct mnt_view mv;
	struct sbx_runview rv;
	int r;

	mv.mv_ntr = 0;
	mv.mv_nw = 0;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return SBX_STEP_PRIVATE;
	/* SBX-8: cordon's copies of the CLI's config, while in view. */
	if ((r = sbx_cfg_clone(sx, mv.mv_cfgtree, mv.mv_cfgsrc)) != 0 ||
	    (r = mnt_copy_tmp_paths(sx, &mv)) != 0 ||
	    (r = mnt_copy_tmp_cwd(sx, &mv)) != 0 ||
	    (r = sbx_run_copy(sx, &rv)) != 0 ||
	    (r = mnt_copy_write_roots(sx, &mv)) != 0 ||
	    (r = mnt_make_tmp(sx, &mv)) != 0 ||
	    (r = mnt_host_readonly()) != 0 || (r = mnt_attach_copies(&mv)) != 0)
		return r;
	/*
	 * SBX-3: the host's /run and the home's protected dirs covered
	 * (sandbox_sockdirs.c), once the write roots are attached: one
	 * beneath /run is shown again by its copy.
	 * SBX-8: the home is attached: its CLI config read-only in it.
	 */
	if ((r = sbx_run_cover(&rv)) != 0 || (r = sbx_home_cover(sx)) != 0 ||
	    (r = sbx_cfg_attach(sx, mv.mv_cfgtree, mv.mv_cfgsrc)) != 0 ||
	    (r = mnt_proc_gate_hide(sx, &mv)) != 0 ||
	    (r = sbx_scan_roots(sx, 1, mv.mv_emptyfd)) != 0)
		return r;
	/* Only the shadows hold the empty file now. */
	(void)unlinkat(mv.mv_tmpfd, ".cordon-shadow", 0);
	close(mv.mv_emptyfd);
	close(mv.mv_tmpfd);
	/* The old cwd is beneath the mounts: enter it again. */
	if (sx->sx_cwd != NULL && chdir(sx->sx_cwd) == -1)
		return SBX_STEP_CHDIR;
	return 0;
}
