/*
 * Worktree runs (MC-2): the repository checks.  The repository a run
 * names is absolute and canonical, inside one of the agent's roots, not
 * protected (SBX-2), opened with no link anywhere on its path and held,
 * its .git a directory; after the clone the path must still name that
 * same directory before the checkout's alternates are pointed at it.
 * And the run's plan: the agent's, with the checkout as its only write
 * root.  Reads the repository's directory entries; writes only the
 * checkout's objects/info/alternates beneath --state-dir/worktrees.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawner.h"
#include "unicode.h"
#include "util.h"
#include "worktree.h"
#include "worktree_int.h"

#define WT_RESOLVE     (RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
#define WT_GIT_DEPTH   32	  /* directory levels walked beneath .git */
#define WT_GIT_ENTRIES (1L << 17) /* entries walked beneath .git */

/* path as written is absolute and canonical: no "", ".", ".." part,
 * no control byte (the alternates file is one path a line), and nothing
 * that would not read as it is where the operator sees it (`cordon
 * worktree list`, the dashboard): no C1 control, invisible, reordering
 * or space-like code point, valid UTF-8 (SBX-7's set, unicode.h). */
static int
wt_canonical(const char *path)
{
	const char *p = path, *e;
	size_t n;

	if (path[0] != '/' || path[1] == '\0')
		return 0;
	for (p = path; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
	if (uni_gate_refused(path, strlen(path)))
		return 0;
	p = path;
	while (*p == '/') {
		p++;
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += n;
	}
	return 1;
}

/* path opened with no link on it (the kernel walks it): fd, or -1. */
static int
wt_open_nolink(const char *path)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	/* The last component too: ELOOP (O_NOFOLLOW would say ENOTDIR). */
	how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	how.resolve = WT_RESOLVE;
	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

/*
 * One directory beneath .git, walked through fds with no link followed:
 * 0, or -1 on a symlink (or an entry that cannot be read), or past the
 * walk's bounds.  The top's hooks/ is not walked: the spawner's git runs
 * with core.hooksPath=/dev/null and never reads it, and hook managers
 * leave links there.
 */
static int
wt_git_walk(int dfd, int depth, long *left)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, rc = 0;

	if (depth > WT_GIT_DEPTH || (fd = dup(dfd)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	rewinddir(d);
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    (depth == 0 && strcmp(de->d_name, "hooks") == 0))
			continue;
		if (--*left < 0 ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    S_ISLNK(st.st_mode)) {
			rc = -1;
			break;
		}
		if (!S_ISDIR(st.st_mode))
			continue;
		if ((fd = openat(dfd, de->d_name,
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) ==
		    -1)
			rc = -1;
		else {
			rc = wt_git_walk(fd, depth + 1, left);
			close(fd);
		}
	}
	closedir(d);
	return rc;
}

/* objects/info/alternates beneath gfd is absent, or exactly alt. */
static int
wt_alt_is(int gfd, const char *alt)
{
	char buf[PATH_MAX + 32];
	struct stat st;
	ssize_t n;
	int fd;

	if ((fd = openat(gfd, "objects/info/alternates",
		 O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return errno == ENOENT &&
		       fstatat(gfd, "objects/info/alternates", &st,
			   AT_SYMLINK_NOFOLLOW) == -1;
	n = alt == NULL ? -1 : read(fd, buf, sizeof(buf));
	close(fd);
	return n >= 0 && (size_t)n == strlen(alt) &&
	       memcmp(buf, alt, (size_t)n) == 0;
}

/*
 * MC-2: the .git beneath dirfd names nothing outside itself for the
 * spawner's git to read (a snapshot, beneath the git steps' Landlock
 * rules, which hold whatever changes after it): no
 * `commondir` (its refs, objects and config elsewhere), no alternates
 * but alt (objects elsewhere, followed from alternate to alternate;
 * NULL: none), and no link anywhere beneath it.  NULL, or the fixed
 * reason class.
 */
static const char *
wt_git_contained(int dirfd, const char *alt)
{
	static const char *const out[] = {
	    "commondir", "objects/info/http-alternates"};
	struct stat st;
	long left = WT_GIT_ENTRIES;
	size_t i;
	int gfd, rc;

	if ((gfd = openat(dirfd, ".git",
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return "not-a-repo";
	rc = wt_git_walk(gfd, 0, &left);
	for (i = 0; rc == 0 && i < nitems(out); i++)
		if (fstatat(gfd, out[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
			rc = -1;
	if (rc == 0 && !wt_alt_is(gfd, alt))
		rc = -1;
	close(gfd);
	return rc == 0 ? NULL : left < 0 ? "not-a-repo" : "git-indirect";
}

/*
 * MC-2: repo is absolute and canonical, inside a declared root, not
 * protected (SBX-2), opened with no link anywhere on its path, and its
 * .git a directory (not a link, not a gitfile that points elsewhere);
 * on a host whose Landlock confines the git steps.  NULL with the
 * repository held in w, or the fixed reason class.
 */
const char *
wt_repo_check(const struct agent *ag, struct wt *w, const char *repo)
{
	const struct roots *rt = &ag->ag_sb.pl_roots;
	struct stat st, gst;
	const char *why;
	size_t i;
	int in = 0, fd;

	if (!ag->ag_mf.m_sandbox.sb_worktrees)
		return "not-opted-in";
	/* Its git steps run under Landlock (worktree_ll.c), or not at all. */
	if (sbx_host.sh_landlock_abi < 1)
		return "no-landlock";
	if (!wt_canonical(repo))
		return "not-a-repo";
	for (i = 0; i < rt->r_nread; i++)
		in |= protect_is_under(repo, rt->r_read[i]);
	for (i = 0; i < rt->r_nscan; i++) /* the write roots but the home */
		in |= protect_is_under(repo, rt->r_write[i]);
	if (!in)
		return "outside-roots";
	if (protect_path_hit(&sp.sp_protect, repo))
		return "protected";
	if ((fd = wt_open_nolink(repo)) == -1)
		return errno == ELOOP || errno == EXDEV ? "link-in-path"
							: "not-a-repo";
	if (fstat(fd, &st) == -1 ||
	    fstatat(fd, ".git", &gst, AT_SYMLINK_NOFOLLOW) == -1) {
		close(fd);
		return "not-a-repo";
	}
	if (!S_ISDIR(gst.st_mode)) {
		close(fd);
		return S_ISLNK(gst.st_mode)   ? "link-in-path"
		       : S_ISREG(gst.st_mode) ? "gitfile"
					      : "not-a-repo";
	}
	if ((why = wt_git_contained(fd, NULL)) != NULL) {
		close(fd);
		return why;
	}
	w->w_repofd = fd;
	w->w_dev = st.st_dev;
	w->w_ino = st.st_ino;
	w->w_gdev = gst.st_dev;
	w->w_gino = gst.st_ino;
	return NULL;
}

/* The one line of the checkout's alternates: the repository's objects. */
static void
wt_alt_line(const struct wt *w, char *out, size_t outsz)
{
	snprintf(out, outsz, "%s/.git/objects\n", w->w_repo);
}

/*
 * The agent's checkout once its run is over (nothing of it runs now):
 * its .git names nothing outside itself but the repository's objects,
 * so the summary's git reads only what the run could.  0, or -1.
 */
int
wt_tree_contained(const struct wt *w)
{
	struct open_how how;
	char line[PATH_MAX + 32];
	int dfd, tfd;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | WT_RESOLVE | RESOLVE_NO_XDEV;
	if ((dfd = wt_dir_fd(w)) == -1)
		return -1;
	tfd = (int)syscall(SYS_openat2, dfd, "tree", &how, sizeof(how));
	close(dfd);
	if (tfd == -1)
		return -1;
	wt_alt_line(w, line, sizeof(line));
	dfd = wt_git_contained(tfd, line) == NULL ? 0 : -1;
	close(tfd);
	return dfd;
}

/*
 * After the clone: the path still names, with no link on it, the very
 * directory (and .git) that was checked and cloned; then the checkout's
 * alternates (the clone wrote the fd's name) are set to that path.
 * 0, or -1 with *why.
 */
int
wt_repo_verify(struct wt *w, const char **why)
{
	struct open_how how;
	struct stat st, gst;
	char line[PATH_MAX + 32];
	int fd, dfd, same;

	*why = "repo-changed";
	if ((fd = wt_open_nolink(w->w_repo)) == -1)
		return -1;
	same = fstat(fd, &st) == 0 &&
	       fstatat(fd, ".git", &gst, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(gst.st_mode) && st.st_dev == w->w_dev &&
	       st.st_ino == w->w_ino && gst.st_dev == w->w_gdev &&
	       gst.st_ino == w->w_gino && wt_git_contained(fd, NULL) == NULL;
	close(fd);
	if (!same)
		return -1;
	*why = "git-failed";
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | WT_RESOLVE | RESOLVE_NO_XDEV;
	if ((fd = open(w->w_dir,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	dfd = (int)syscall(
	    SYS_openat2, fd, "tree/.git/objects/info", &how, sizeof(how));
	close(fd);
	if (dfd == -1)
		return -1;
	wt_alt_line(w, line, sizeof(line));
	fd = atomic_write_at(
	    dfd, "alternates", line, strlen(line), 0600, (uid_t)-1, (gid_t)-1);
	close(dfd);
	return fd;
}

/* The read root that holds repo (the agent's may be a write root). */
static const char *
wt_root_of(const struct roots *rt, const char *repo)
{
	size_t i;

	for (i = 0; i < rt->r_nread; i++)
		if (protect_is_under(repo, rt->r_read[i]))
			return NULL; /* already readable */
	for (i = 0; i < rt->r_nscan; i++)
		if (protect_is_under(repo, rt->r_write[i]))
			return rt->r_write[i];
	return NULL;
}

/* The run's plan: the agent's, with tree/ (and the home) writable only. */
int
wt_plan(const struct agent *ag, struct wt *w)
{
	const struct roots *rt = &ag->ag_sb.pl_roots;
	struct roots *nr = &w->w_plan.pl_roots;
	const char *extra = wt_root_of(rt, w->w_repo);
	size_t i;

	w->w_plan = ag->ag_sb;
	memset(nr, 0, sizeof(*nr));
	if ((nr->r_read = calloc(rt->r_nread + 2, sizeof(char *))) == NULL ||
	    (nr->r_write = calloc(3, sizeof(char *))) == NULL)
		goto fail;
	for (i = 0; i < rt->r_nread; i++)
		if ((nr->r_read[nr->r_nread++] = strdup(rt->r_read[i])) == NULL)
			goto fail;
	if (extra != NULL &&
	    (nr->r_read[nr->r_nread++] = strdup(extra)) == NULL)
		goto fail;
	if ((nr->r_write[nr->r_nwrite++] = strdup(w->w_tree)) == NULL)
		goto fail;
	nr->r_nscan = 1;
	if (rt->r_home != NULL && roots_add_home(nr, rt->r_home) == -1)
		goto fail;
	nr->r_nscan = 1;
	return 0;
fail:
	roots_free(nr);
	return -1;
}
