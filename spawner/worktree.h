/*
 * Worktree runs (MC-2): a run's disposable checkout of a repository in
 * the agent's roots, made by the spawner beneath --state-dir/worktrees/ID
 * with git run argv-only through the spawn helper; the run's sandbox
 * plan with that checkout as its only write root.
 */
#ifndef CORDON_SPAWNER_WORKTREE_H
#define CORDON_SPAWNER_WORKTREE_H

#include <limits.h>

#include "sandbox.h"

struct agent;
struct ipc_conn;
struct ipc_msg;
struct json_object;

#define WT_DIR	      "worktrees"
#define WT_BRANCH_PFX "cordon/"
#define WT_OID_MAX    64 /* hex digits of a commit id (sha1: 40) */

struct wt {
	char w_id[17]; /* the run's id */
	char w_repo[PATH_MAX];
	char w_dir[PATH_MAX];  /* STATE/worktrees/ID, cordon's */
	char w_tree[PATH_MAX]; /* its tree/: the agent's only write root */
	char w_branch[sizeof(WT_BRANCH_PFX) + 16];
	char w_base[WT_OID_MAX + 1];
	struct sandbox_plan w_plan; /* the agent's, roots replaced */
	int w_running;
};

/*
 * Before the run: checks repo (MC-2), makes the checkout on a fresh
 * branch and the run's plan.  NULL and *code (a fixed API code) when
 * refused; a refused or failed worktree leaves nothing behind.
 */
struct wt *wt_create(const struct agent *, const char *run_id, const char *repo,
    const char **code);
/* The run is over: {branch, path, base, head, filesChanged, ...}. */
struct json_object *wt_finish(struct wt *);
/* Before the child ran: remove it all again.  Frees w. */
void wt_discard(struct wt *);
void wt_free(struct wt *);

void worktree_list_h(struct ipc_conn *, struct ipc_msg *, void *);
void worktree_remove_h(struct ipc_conn *, struct ipc_msg *, void *);

#endif
