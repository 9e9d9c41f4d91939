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

#include <limits.h>
#include <stddef.h>

#include "protect.h"

struct manifest;

struct roots {
	char **r_read; /* resolved, NULL-terminated */
	size_t r_nread;
	char **r_write;
	size_t r_nwrite;
	/*
	 * SBX-9: the agent's own home, when it has one, is the last write
	 * root (r_home points at it); the secret-file scan covers the
	 * first r_nscan only, since the home holds the agent's own login.
	 */
	size_t r_nscan;
	const char *r_home;
};

/*
 * 0 and *out filled; or -1 with a neutral reason in why, naming the key
 * and index, never the path ("sandbox.readRoots[1]: contains a protected
 * path").
 */
int roots_resolve(const struct manifest *, const struct protect_ctx *,
    struct roots *out, char *why, size_t whysz);
void roots_free(struct roots *);

/*
 * SBX-9: each agent's private home is DIR/homes/NAME beneath cordon's
 * state dir (the spawner's --state-dir), which SBX-2 protects whole.
 * agent_home_path only says where (for `cordon check`); agent_home_make
 * also makes homes/ and homes/NAME (0700, ours, never through a link)
 * through held dir fds.  0 and out set to the path (state resolved), or
 * -1 with errno.
 */
#define AGENT_HOMES_DIR "homes"
int agent_home_path(
    const char *state, const char *name, char *out, size_t outsz);
int agent_home_make(
    const char *state, const char *name, char *out, size_t outsz);
/*
 * dfd/name, made 0700 if missing: a dir of ours, never a link (also the
 * jobs' dir, MC-3); its fd, or -1 with errno.  dfd is closed either way.
 */
int roots_dir_make(int dfd, const char *name);
/* Append home (resolved) as the last write root, unscanned: 0 or -1. */
int roots_add_home(struct roots *, const char *home);

/* The protect_ctx for this process: pc_home from $HOME (resolved). */
int roots_protect_init(struct protect_ctx *, char *homebuf, size_t homesz);
/*
 * SBX-2: dir protected too (cordon's config, audit, vault and state
 * dirs), resolved into buf (PATH_MAX, kept as long as pc), or as written
 * when it does not exist yet.  0, or -1 with errno.
 */
int roots_protect_add(struct protect_ctx *, const char *dir, char *buf);
/* Both: the home, then each absolute dirs[i] into buf[i].  0 or -1. */
int roots_protect_set(struct protect_ctx *, char *homebuf, size_t homesz,
    const char *const *dirs, size_t n, char (*buf)[PATH_MAX]);

/*
 * SP-1: an agent's bin as written (an absolute path), else resolved on
 * the PATH of envp (absolute entries only): the first executable regular
 * file.  The spawner before each spawn and `cordon check` use it.  0 and
 * out filled, or -1.
 */
int agent_resolve_bin(
    const char *bin, char *const *envp, char *out, size_t outsz);
/* MC-2: the PATH the spawner runs git on for worktree runs (and
 * `cordon check` looks on), whatever the agent's. */
#define WT_GIT_PATH "PATH=/usr/local/bin:/usr/bin:/bin"

/*
 * SP-12: why an agent's program cannot run, as one fixed phrase built
 * from known values (cordon's PATH, a path class), for the API's
 * reason, the log and `cordon check`.  0: bin resolves (into out) and
 * its files lie where the sandbox lets the agent read them; -1 and why.
 * A program (or its script's interpreter) that resolves under the
 * operator's home, outside every root, is refused: the sandbox hides
 * the home (add it to sandbox.readRoots, or install it system-wide).
 */
/* An errno's name ("EACCES"), for reasons (SP-12). */
const char *errno_name(int);

#define AGENT_REASON_MAX 512 /* a reason, with its PATH or path */
/*
 * SU-5: 0 unless bin resolves to a program, or a script whose
 * interpreter, another user can replace (it or a dir above it is
 * another user's, or writable by group or others); -1 and why.  Part of
 * agent_bin_check; `cordon check` asks it first for its own code.
 */
int agent_bin_safe(const char *bin, char *const *envp,
    const struct protect_ctx *, char *why, size_t whysz);
int agent_bin_check(const char *bin, char *const *envp, const struct roots *,
    const struct protect_ctx *, char *out, size_t outsz, char *why,
    size_t whysz);

#endif
