/*
 * SBX-1, SBX-2: a manifest's sandbox roots, resolved and checked once, at
 * load (the spawner) and by `cordon check`.  "~/x" is taken against the
 * operator's home; every root is realpath()ed (symlinks followed) and then
 * must not be, contain or lie inside a protected path (policy/protect.h).
 * Write roots default to the manifest's cwd (when it has one); the private
 * tmp of each run is not listed here, the sandbox adds it per run.
 */
#ifndef CORDON_ROOTS_H
#define CORDON_ROOTS_H

#include <stddef.h>

#include "protect.h"

struct manifest;

struct roots {
	char **r_read; /* resolved, NULL-terminated */
	size_t r_nread;
	char **r_write;
	size_t r_nwrite;
};

/*
 * 0 and *out filled; or -1 with a neutral reason in why, naming the key
 * and index, never the path ("sandbox.readRoots[1]: contains a protected
 * path").
 */
int roots_resolve(const struct manifest *, const struct protect_ctx *,
    struct roots *out, char *why, size_t whysz);
void roots_free(struct roots *);

/* The protect_ctx for this process: pc_home from $HOME (resolved). */
int roots_protect_init(struct protect_ctx *, char *homebuf, size_t homesz);

/*
 * SP-1: an agent's bin as written (an absolute path), else resolved on
 * the PATH of envp (absolute entries only): the first executable regular
 * file.  The spawner before each spawn and `cordon check` use it.  0 and
 * out filled, or -1.
 */
int agent_resolve_bin(
    const char *bin, char *const *envp, char *out, size_t outsz);

#endif
