/*
 * SU-5: whether another local user can change a path: a file or
 * directory and every directory above it must belong to a trusted uid
 * and be writable by no one else, save a sticky directory above the
 * last (as /tmp: there only an entry's owner may rename it).  Once that
 * holds only the trusted can change what was checked, so a check by
 * path is not a race.  Reads only (stat, realpath).
 */
#ifndef CORDON_PATHSAFE_H
#define CORDON_PATHSAFE_H

#include <sys/stat.h>

#include <stddef.h>

#define PATHSAFE_NTRUST 3

struct pathsafe {
	uid_t ps_trust[PATHSAFE_NTRUST]; /* root, and up to two more */
	char ps_bad[4096];		 /* the path at fault */
	const char *ps_why;		 /* a fixed phrase: why */
};

/* root and the two given (-1, or a repeat, for none). */
void pathsafe_init(struct pathsafe *, uid_t, uid_t);

/* Say that path is at fault, and why (a fixed phrase): -1. */
int pathsafe_fault(struct pathsafe *, const char *path, const char *why);

/*
 * One entry, lstat'ed into st: leaf, or a directory above it.  0, or -1
 * with ps_bad and ps_why set.
 */
int pathsafe_entry(
    struct pathsafe *, const char *path, const struct stat *, int leaf);

/*
 * PATH (absolute) and every directory above it, both as written (a
 * link there must be a trusted user's, in a dir no one else can write)
 * and resolved.  A missing tail (what cordon will make) is left out; its
 * nearest existing directory is then checked as one above.  dir_only:
 * every entry must be a directory.  0, or -1 with ps_bad and ps_why.
 */
int pathsafe_chain(struct pathsafe *, const char *path, int dir_only);

#endif
