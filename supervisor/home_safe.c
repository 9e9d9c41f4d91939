/*
 * SU-5: cordon's home is its own.  What cordon runs, reads or hands out
 * from the home (cordon.yaml, the manifests, the missions, the runtime
 * dir with the token and port) must be beyond the reach of every other
 * local user (pathsafe.h): owned by root, by the user cordon runs as or
 * by --user's.  Reads, but for the XDG config dir, made when missing.
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
#include "log.h"
#include "pathsafe.h"
#include "util.h"

static int
refuse(const struct pathsafe *ps)
{
	fprintf(stderr,
	    "cordon: %s %s; cordon uses its home only when no other user "
	    "can change it (see \"The home directory\" in the operator "
	    "guide)\n",
	    ps->ps_bad, ps->ps_why);
	return -1;
}

/* A file or directory inside a checked chain, if it exists: 0 or -1. */
static int
inner_ok(struct pathsafe *ps, const char *path)
{
	struct stat st;

	if (lstat(path, &st) == -1)
		return errno == ENOENT
			   ? 0
			   : pathsafe_fault(ps, path, "cannot be examined");
	return pathsafe_entry(ps, path, &st, 1);
}

/*
 * A directory of YAML files cordon loads (agents/, missions/) and each
 * entry in it.  Its loaders follow a link there: a link's own owner is
 * not enough, where it leads (which must exist) is checked as the home
 * is.  0 or -1.
 */
static int
dir_files_ok(struct pathsafe *ps, const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int rc = 0;

	if (inner_ok(ps, dir) == -1)
		return -1;
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) &&
	    (stat(dir, &st) == -1
		    ? pathsafe_fault(ps, dir, "cannot be examined")
		    : pathsafe_chain(ps, dir, 1)) == -1)
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
		rc = pathsafe_entry(ps, path, &st, 1);
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
	struct pathsafe ps;
	char cfgdir[PATH_MAX], missions[PATH_MAX + 16], state[PATH_MAX];

	pathsafe_init(&ps, geteuid(), user);
	parent_of(cf->cf_config, cfgdir, sizeof(cfgdir));
	snprintf(missions, sizeof(missions), "%s/missions", cfgdir);
	parent_of(cf->cf_state, state, sizeof(state));
	if (pathsafe_chain(&ps, cf->cf_home[0] ? cf->cf_home : cfgdir, 1) ==
		-1 ||
	    (cf->cf_home[0] == '\0' && pathsafe_chain(&ps, state, 1) == -1) ||
	    (cf->cf_rundir[0] != '\0' &&
		pathsafe_chain(&ps, cf->cf_rundir, 1) == -1) ||
	    inner_ok(&ps, cf->cf_config) == -1 ||
	    dir_files_ok(&ps, cf->cf_agents) == -1 ||
	    dir_files_ok(&ps, missions) == -1)
		return refuse(&ps);
	return 0;
}

/*
 * home_safe, for a command that loads the home.  In XDG mode, a config
 * dir missing when checked is then made 0700 (with any dir missing
 * above it) and the home checked again, whole, before anything is read
 * from it: while it is missing, another user who may write where it
 * goes (XDG_CONFIG_HOME a sticky, world-writable dir, as /tmp is) could
 * make it between the check and the loads, with her cordon.yaml and
 * manifests.  Once it exists and is ours, no one else can add to it or
 * swap it; one she made first is refused as hers.  0, or -1 after
 * saying why.
 */
int
home_safe_make(const struct cordon_config *cf, uid_t user)
{
	char dir[PATH_MAX], *p, c;
	struct stat st;
	int had;

	parent_of(cf->cf_config, dir, sizeof(dir));
	had = cf->cf_home[0] != '\0' || stat(dir, &st) == 0;
	if (home_safe(cf, user) == -1)
		return -1;
	if (had)
		return 0;
	for (p = dir + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (lstat(dir, &st) == -1 &&
		    (errno != ENOENT ||
			(mkdir(dir, 0700) == -1 && errno != EEXIST))) {
			log_warn("mkdir %s", dir);
			return -1;
		}
		if ((*p = c) == '\0')
			break;
	}
	return home_safe(cf, user);
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
	struct pathsafe ps;
	struct stat st;

	pathsafe_init(&ps, geteuid(), geteuid());
	ps.ps_trust[0] = geteuid(); /* made by cordon: not even root's */
	if ((fstat(dfd, &st) == -1 &&
		pathsafe_fault(&ps, path, "cannot be examined") == -1) ||
	    pathsafe_entry(&ps, path, &st, 1) == -1)
		return refuse(&ps);
	return 0;
}

/*
 * PER-5: 1 if what cordon prints on stdout stays the operator's: not a
 * file that someone else owns or that group or others may read (`cordon
 * run > /tmp/cordon.log` under umask 022), where the login code would
 * let them log in first.  A terminal, pipe or socket is the operator's.
 */
int
home_stdout_private(void)
{
	struct stat st;

	if (fstat(STDOUT_FILENO, &st) == -1 || !S_ISREG(st.st_mode))
		return 1;
	return st.st_uid == geteuid() && (st.st_mode & 044) == 0;
}
