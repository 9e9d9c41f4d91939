/*
 * Between worktree.c (the step machine that makes a checkout and reads
 * its result), worktree_repo.c (the repository checks and the run's
 * plan) and worktree_list.c (meta.json, the audit records, list and
 * remove).  Private to the spawner.
 */
#ifndef CORDON_SPAWNER_WORKTREE_INT_H
#define CORDON_SPAWNER_WORKTREE_INT_H

#include <stddef.h>

#include "sandbox.h"

struct agent;
struct json_object;
struct wt;

#define WT_META	      "meta.json"
#define WT_CLONE_CONF "clone.config"
#define WT_REPO_FD    3 /* the held repository, in the clone's child */
#define WT_REPO_PROC  "/proc/self/fd/3"

/* ---- worktree.c */
/* out = a b c: 0, or -1 when it does not fit (out is "" then). */
int wt_join(
    char *out, size_t outsz, const char *a, const char *b, const char *c);
/* A commit id as git prints it: hex, 40 (sha1) or 64 (sha256) digits. */
int wt_oid(const char *s, char *out);
/* A run still holds the worktree id (its checkout or its git step). */
int wt_busy(const char *id);

/* ---- worktree_repo.c */
/*
 * MC-2: repo is absolute and canonical, inside a declared root, not
 * protected (SBX-2), opened with no link anywhere on its path, and its
 * .git a directory (not a link, not a gitfile that points elsewhere).
 * NULL with the repository held in w, or the fixed reason class.
 */
const char *wt_repo_check(const struct agent *, struct wt *, const char *repo);
/*
 * After the clone: the path still names, with no link on it, the very
 * directory (and .git) that was checked and cloned; then the checkout's
 * alternates (the clone wrote the fd's name) are set to that path.
 * 0, or -1 with *why.
 */
int wt_repo_verify(struct wt *, const char **why);
/*
 * The agent's checkout once its run is over: its .git names nothing
 * outside itself but the repository's objects.  0, or -1.
 */
int wt_tree_contained(const struct wt *);
/* The run's plan: the agent's, with tree/ (and the home) writable only. */
int wt_plan(const struct agent *, struct wt *);

/* ---- worktree_list.c */
/* The worktree's own dir, STATE/worktrees/ID: an fd, or -1. */
int wt_dir_fd(const struct wt *);
/* meta.json of the worktree, with the run's summary once it has one. */
void wt_meta(const struct wt *, struct json_object *summary);
/* An audit record worktree.create | worktree.remove (agent may be NULL). */
void wt_audit(const char *kind, const char *id, const char *agent);

/* ---- worktree_ll.c */
/* The Landlock rules of one git step (MC-2), the spawn helper's arg. */
struct wt_ll {
	struct confine_path ll_paths[SBX_PATHS_MAX];
	size_t ll_npaths;
	unsigned int ll_flags; /* CONFINE_RS_* */
};
/*
 * The rules for a git step of w running bin (which must outlive the
 * spawn): the system's, the plan's read roots, w's own dir, bin.  0, or
 * -1 with errno (EOPNOTSUPP: this host has no Landlock).
 */
int wt_ll_rules(const struct wt *, const char *bin, struct wt_ll *);
/* The spawn helper's hook: no_new_privs, then those rules (a
 * SBX_STEP_* code on failure, errno set). */
int wt_ll_child(void *);

#endif
