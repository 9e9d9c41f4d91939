/*
 * SU-5: cordon's home is its own.  What cordon runs, reads or hands out
 * from the home (cordon.yaml, the manifests, the missions, the runtime
 * dir with the token and port) must be beyond the reach of every other
 * local user: each directory from / down to it owned by root, by the
 * user cordon runs as or by --user's, and writable by no one else, save
 * a sticky directory such as /tmp (whose entries only their owners may
 * rename).  Then nothing checked here can change under us, so a check by
 * path is not a race.  Reads only.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cordond.h"
#include "util.h"

struct trust {
	uid_t t_uid[3]; /* root, the euid, --user's (or -1) */
};

static int
trusted(const struct trust *t, uid_t uid)
{
	return uid == t->t_uid[0] || uid == t->t_uid[1] || uid == t->t_uid[2];
}

static int
refuse(const char *path, const char *why)
{
	fprintf(stderr,
	    "cordon: %s %s; cordon uses its home only when no other user "
	    "can change it (see \"The home directory\" in the operator "
	    "guide)\n",
	    path, why);
	return -1;
}

/*
 * One entry, by lstat: owned by a trusted user, and writable by nobody
 * else (a directory above the leaf may be sticky instead).  0 or -1.
 */
static int
entry_ok(
    const struct trust *t, const char *path, const struct stat *st, int leaf)
{
	if (!trusted(t, st->st_uid))
		return refuse(path, "belongs to another user");
	/* A link's own mode means nothing; its loader refuses it. */
	if ((st->st_mode & 022) != 0 && !S_ISLNK(st->st_mode) &&
	    (leaf || !S_ISDIR(st->st_mode) || !(st->st_mode & S_ISVTX)))
		return refuse(path, "is writable by group or others "
				    "(chmod go-w)");
	return 0;
}

/*
 * PATH (made absolute and free of links) and each directory above it.
 * A missing tail is left to cordon, which makes it 0700: then its
 * nearest existing parent is checked as a parent.  0, or -1 said.
 */
static int
chain_ok(const struct trust *t, const char *path)
{
	char cut[PATH_MAX], real[PATH_MAX], *slash;
	struct stat st;
	int leaf = 1;

	if (snprintf(cut, sizeof(cut), "%s", path) >= (int)sizeof(cut))
		return refuse(path, "is too long");
	while (stat(cut, &st) == -1) {
		if (errno != ENOENT || (slash = strrchr(cut, '/')) == NULL ||
		    slash == cut)
			return refuse(path, "cannot be examined");
		*slash = '\0';
		leaf = 0;
	}
	if (realpath(cut, real) == NULL)
		return refuse(path, "cannot be examined");
	for (;;) {
		if (lstat(real, &st) == -1)
			return refuse(real, "cannot be examined");
		if (!S_ISDIR(st.st_mode))
			return refuse(real, "is not a directory");
		if (entry_ok(t, real, &st, leaf) == -1)
			return -1;
		leaf = 0;
		if (strcmp(real, "/") == 0)
			return 0;
		slash = strrchr(real, '/');
		slash[slash == real] = '\0'; /* "/a" becomes "/" */
	}
}

/* A file or directory inside a checked chain, if it exists: 0 or -1. */
static int
inner_ok(const struct trust *t, const char *path)
{
	struct stat st;

	if (lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : refuse(path, "cannot be examined");
	return entry_ok(t, path, &st, 1);
}

/* A directory of YAML files cordon loads (agents/, missions/) and each
 * entry in it.  0 or -1. */
static int
dir_files_ok(const struct trust *t, const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int rc = 0;

	if (inner_ok(t, dir) == -1)
		return -1;
	if ((d = opendir(dir)) == NULL)
		return 0; /* missing, or a file: its loader says so */
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(path))
			continue; /* no loader can open it either */
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    -1)
			continue; /* gone */
		rc = entry_ok(t, path, &st, 1);
	}
	closedir(d);
	return rc;
}

/* The parent directory of PATH into out. */
static void
parent_of(const char *path, char *out, size_t outsz)
{
	char *slash;

	snprintf(out, outsz, "%s", path);
	if ((slash = strrchr(out, '/')) != NULL)
		slash[slash == out] = '\0';
}

/*
 * SU-5: before cordon reads its config or writes anything: the home (or
 * the XDG config, state and runtime dirs) and what cordon loads from
 * it.  user: --user's uid, or -1.  0, or -1 after saying what to fix.
 */
int
home_safe(const struct cordon_config *cf, uid_t user)
{
	struct trust t = {{0, geteuid(), user}};
	char cfgdir[PATH_MAX], missions[PATH_MAX + 16], state[PATH_MAX];

	parent_of(cf->cf_config, cfgdir, sizeof(cfgdir));
	snprintf(missions, sizeof(missions), "%s/missions", cfgdir);
	parent_of(cf->cf_state, state, sizeof(state));
	if (chain_ok(&t, cf->cf_home[0] ? cf->cf_home : cfgdir) == -1 ||
	    (cf->cf_home[0] == '\0' && chain_ok(&t, state) == -1) ||
	    (cf->cf_rundir[0] != '\0' && chain_ok(&t, cf->cf_rundir) == -1) ||
	    inner_ok(&t, cf->cf_config) == -1 ||
	    dir_files_ok(&t, cf->cf_agents) == -1 ||
	    dir_files_ok(&t, missions) == -1)
		return -1;
	return 0;
}

/*
 * The runtime dir, opened as dfd: made by cordon itself for itself, so
 * it must be the euid's and no one else may write to it (PER-5: another
 * user who could would swap the port file, and every CLI would send the
 * token to the port that user listens on).  0, or -1 said.
 */
int
home_rundir_ours(int dfd, const char *path)
{
	struct stat st;

	if (fstat(dfd, &st) == -1)
		return refuse(path, "cannot be examined");
	if (st.st_uid != geteuid())
		return refuse(path, "belongs to another user");
	if ((st.st_mode & 022) != 0)
		return refuse(path, "is writable by group or others "
				    "(chmod go-w)");
	return 0;
}
