/*
 * In the child (SBX-2, SBX-3, SBX-4): the host's socket dirs covered in
 * the run's view.  Daemons listen in /run (docker, the system and the
 * users' buses, systemd, gpg-agent and ssh-agent under /run/user), and
 * a unix socket is reached by its path whatever the network namespace:
 * no Landlock right guards connect(2) to one, and seccomp cannot read
 * the address.  So every run sees, in place of /run, an empty read-only
 * dir (nosuid, nodev, noexec) in which only the paths of its ruleset
 * beneath /run are shown again by handle: the resolver's
 * /run/systemd/resolve (which /etc/resolv.conf names on systemd-resolved
 * hosts), a root there.  /var/run, a link into /run on most hosts, is
 * covered too where it is a dir of its own; and so is each protected
 * dir of the operator's home (gpg-agent listens in ~/.gnupg where there
 * is no /run/user, Docker Desktop in ~/.docker/run), which Landlock
 * keeps from being read but not from being dialled, and, for one that
 * is a link, the dir it leads to as the spawner resolved it.  No
 * logging, no allocation.
 */
#include <sys/mount.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "protect.h"
#include "sandbox.h"
#include "sandbox_int.h"
#include "util.h"

/* The view's covers: read-only once their mountpoints are made. */
#define RUN_COVER_BYTES 4096
#define RUN_COVER_SET	(SBX_MNT_SAFE | MOUNT_ATTR_NOEXEC)

/* An O_PATH fd of dir (links followed), or -1 with errno. */
static int
open_dir(const char *dir)
{
	return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* The cover of the host's /run: its mountpoints made, then read-only. */
static int
run_cover_tree(const struct sandbox_run *sx, const struct sbx_runview *rv)
{
	int m, fd, e;

	m = sbx_scratch_tree(
	    sx->sx_runview, RUN_COVER_BYTES, "0755", RUN_COVER_SET);
	if (m == -1)
		return -1;
	if ((fd = openat(m, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    sbx_cover_mountpoints(fd, "/run", rv->rv_tr, rv->rv_ntr) == -1 ||
	    sbx_tree_readonly(m) == -1) {
		e = errno;
		if (fd != -1)
			close(fd);
		close(m);
		errno = e;
		return -1;
	}
	close(fd);
	return m;
}

int
sbx_run_copy(const struct sandbox_run *sx, struct sbx_runview *rv)
{
	struct stat a, b;
	int r;

	rv->rv_ntr = 0;
	rv->rv_var = -1;
	rv->rv_cover = -1;
	if ((rv->rv_run = open_dir("/run")) == -1)
		return errno == ENOENT ? 0 : SBX_STEP_RUNDIR;
	if (fstat(rv->rv_run, &a) == -1)
		return SBX_STEP_RUNDIR;
	/* A link to /run (Debian), or none: nothing more to cover. */
	if ((rv->rv_var = open_dir("/var/run")) == -1) {
		if (errno != ENOENT && errno != ENOTDIR)
			return SBX_STEP_RUNDIR;
	} else if (fstat(rv->rv_var, &b) == -1) {
		return SBX_STEP_RUNDIR;
	} else if (a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		close(rv->rv_var);
		rv->rv_var = -1;
	}
	if ((r = sbx_copy_under(
		 sx, "/run", rv->rv_tr, nitems(rv->rv_tr), &rv->rv_ntr)) != 0)
		return r;
	sbx_mark_nested(rv->rv_tr, rv->rv_ntr);
	/* Made now: a root spawner's per-run dir for it is under its /tmp. */
	if ((rv->rv_cover = run_cover_tree(sx, rv)) == -1)
		return SBX_STEP_RUNDIR;
	return 0;
}

int
sbx_run_cover(struct sbx_runview *rv)
{
	int m;

	if (rv->rv_run != -1) {
		if (sbx_attach_fd(rv->rv_cover, rv->rv_run) == -1)
			return SBX_STEP_RUNDIR;
		close(rv->rv_run);
		rv->rv_run = -1;
		if (sbx_attach_under(rv->rv_tr, rv->rv_ntr) == -1)
			return SBX_STEP_ROOT;
	}
	if (rv->rv_var != -1) {
		if ((m = sbx_tmpfs_new(
			 RUN_COVER_BYTES, "0555", SBX_MNT_DEAD)) == -1 ||
		    sbx_attach_fd(m, rv->rv_var) == -1)
			return SBX_STEP_RUNDIR;
		close(rv->rv_var);
		rv->rv_var = -1;
	}
	return 0;
}

/* An empty read-only tmpfs over the dir fd holds: 0, or -1 with errno. */
static int
cover_fd(int fd)
{
	int m;

	if ((m = sbx_tmpfs_new(RUN_COVER_BYTES, "0555", SBX_MNT_DEAD)) == -1)
		return -1;
	return sbx_attach_fd(m, fd);
}

/*
 * An O_PATH fd of the dir at the absolute, resolved path p, walked a
 * name at a time with no link followed (mounts crossed, as the run
 * sees them); or -1 with errno (ENOTDIR where a link is met).
 */
static int
open_walk(const char *p)
{
	char buf[PATH_MAX], *s, *e;
	int fd, nfd, err;

	if (snprintf(buf, sizeof(buf), "%s", p) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	for (s = buf + 1; *s != '\0'; s = e) {
		if ((e = strchr(s, '/')) != NULL)
			*e++ = '\0';
		else
			e = s + strlen(s);
		nfd = openat(
		    fd, s, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		err = errno;
		close(fd);
		if ((fd = nfd) == -1) {
			errno = err;
			return -1;
		}
	}
	return fd;
}

/*
 * The dirs the home's protected links lead to, as the spawner resolved
 * them: each covered only where the walk finds that very dir (dev and
 * inode), so a link or a dir on the way changed since, whoever changed
 * it, moves no cover onto another path; it refuses the run.
 */
static int
links_cover(const struct sandbox_run *sx)
{
	const struct sbx_link *lk;
	struct stat st;
	size_t i;
	int fd, r;

	for (i = 0; i < sx->sx_nlinks; i++) {
		lk = &sx->sx_links[i];
		if ((fd = open_walk(lk->lk_path)) == -1)
			return -1;
		if (fstat(fd, &st) == -1 || st.st_dev != lk->lk_dev ||
		    st.st_ino != lk->lk_ino) {
			close(fd);
			errno = ESTALE;
			return -1;
		}
		r = cover_fd(fd);
		close(fd);
		if (r == -1)
			return -1;
	}
	return 0;
}

int
sbx_home_cover(const struct sandbox_run *sx)
{
	const char *home = sx->sx_plan->pl_home;
	const char *const *l;
	char p[PATH_MAX];
	size_t i, n;
	int fd, r;

	if (home[0] == '\0')
		return 0;
	/* Links first: one may lead beneath a protected dir covered next. */
	if (links_cover(sx) == -1)
		return SBX_STEP_HOMEDIR;
	l = protect_home_list(&n);
	for (i = 0; i < n; i++) {
		if (snprintf(p, sizeof(p), "%s/%s", home, l[i]) >=
		    (int)sizeof(p))
			continue; /* no such path */
		/*
		 * Only a dir: a file is no socket's place, and a link was
		 * resolved by the spawner (links_cover).
		 */
		fd = open(p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd == -1) {
			if (errno == ENOENT || errno == ENOTDIR ||
			    errno == EACCES)
				continue;
			return SBX_STEP_HOMEDIR;
		}
		r = cover_fd(fd);
		close(fd);
		if (r == -1)
			return SBX_STEP_HOMEDIR;
	}
	return 0;
}
