/*
 * Whether another local user can change a path (pathsafe.h, SU-5).
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pathsafe.h"

void
pathsafe_init(struct pathsafe *ps, uid_t a, uid_t b)
{
	ps->ps_trust[0] = 0;
	ps->ps_trust[1] = a;
	ps->ps_trust[2] = b;
	ps->ps_bad[0] = '\0';
	ps->ps_why = NULL;
}

int
pathsafe_fault(struct pathsafe *ps, const char *path, const char *why)
{
	snprintf(ps->ps_bad, sizeof(ps->ps_bad), "%s", path);
	ps->ps_why = why;
	return -1;
}

int
pathsafe_entry(
    struct pathsafe *ps, const char *path, const struct stat *st, int leaf)
{
	size_t i;

	for (i = 0; i < PATHSAFE_NTRUST; i++)
		if (st->st_uid == ps->ps_trust[i])
			break;
	if (i == PATHSAFE_NTRUST)
		return pathsafe_fault(ps, path, "belongs to another user");
	/* A link's own mode means nothing; its loader refuses it. */
	if ((st->st_mode & 022) != 0 && !S_ISLNK(st->st_mode) &&
	    (leaf || !S_ISDIR(st->st_mode) || !(st->st_mode & S_ISVTX)))
		return pathsafe_fault(
		    ps, path, "is writable by group or others (chmod go-w)");
	return 0;
}

/*
 * p (cut in place) and each directory above it, by lstat: a link stands
 * for itself (who may replace it), its target is walked resolved.
 */
static int
walk(struct pathsafe *ps, char *p, int leaf, int dir_only)
{
	struct stat st;
	char *slash;

	for (;;) {
		if (lstat(p, &st) == -1)
			return pathsafe_fault(ps, p, "cannot be examined");
		if ((dir_only || !leaf) && !S_ISDIR(st.st_mode) &&
		    !S_ISLNK(st.st_mode))
			return pathsafe_fault(ps, p, "is not a directory");
		if (pathsafe_entry(ps, p, &st, leaf) == -1)
			return -1;
		leaf = 0;
		if (strcmp(p, "/") == 0 || (slash = strrchr(p, '/')) == NULL)
			return 0;
		slash[slash == p] = '\0'; /* "/a" becomes "/" */
	}
}

int
pathsafe_chain(struct pathsafe *ps, const char *path, int dir_only)
{
	char cut[PATH_MAX], real[PATH_MAX], *slash;
	struct stat st;
	int leaf = 1;

	if (path[0] != '/' ||
	    snprintf(cut, sizeof(cut), "%s", path) >= (int)sizeof(cut))
		return pathsafe_fault(ps, path, "is not an absolute path");
	while (stat(cut, &st) == -1) {
		if (errno != ENOENT || (slash = strrchr(cut, '/')) == NULL ||
		    slash == cut)
			return pathsafe_fault(ps, path, "cannot be examined");
		*slash = '\0';
		leaf = 0;
	}
	if (realpath(cut, real) == NULL)
		return pathsafe_fault(ps, path, "cannot be examined");
	/* The path as given (its links), then where it leads. */
	if (walk(ps, cut, leaf, dir_only) == -1)
		return -1;
	return walk(ps, real, leaf, dir_only);
}
