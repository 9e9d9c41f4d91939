/*
 * Worktree runs (MC-2): a run's disposable checkout of a repository in
 * the agent's roots, made by the spawner beneath --state-dir/worktrees/ID
 * with git run argv-only through the spawn helper under Landlock rules
 * from the run's plan (worktree_ll.c), one step at a time
 * from the event loop (never waited for: a slow git stalls no other
 * run, approval or health answer); the run's sandbox plan with that
 * checkout as its only write root.
 */
#ifndef CORDON_SPAWNER_WORKTREE_H
#define CORDON_SPAWNER_WORKTREE_H

#include <sys/queue.h>
#include <sys/types.h>

#include <limits.h>

#include "sandbox.h"

struct agent;
struct event;
struct ipc_conn;
struct ipc_msg;
struct json_object;

#define WT_DIR	      "worktrees"
#define WT_BRANCH_PFX "cordon/"
#define WT_OID_MAX    64   /* hex digits of a commit id (sha1: 40) */
#define WT_OUT_MAX    4096 /* what a git step may print that we keep */

/*
 * Ready: code and reason NULL; else a fixed API code and a fixed reason
 * class (MC-2), and the run frees w.  Called from the loop, never from
 * inside wt_create.
 */
typedef void (*wt_ready_fn)(void *arg, const char *code, const char *reason);
/* The run's summary (the callee's reference). */
typedef void (*wt_done_fn)(void *arg, struct json_object *summary);

struct wt {
	char w_id[17]; /* the run's id */
	char w_agent[64];
	char w_repo[PATH_MAX];
	char w_dir[PATH_MAX];  /* STATE/worktrees/ID, cordon's */
	char w_tree[PATH_MAX]; /* its tree/: the agent's only write root */
	char w_branch[sizeof(WT_BRANCH_PFX) + 16];
	char w_base[WT_OID_MAX + 1];
	char w_tip[WT_OID_MAX + 1];
	struct sandbox_plan w_plan; /* the agent's, roots replaced */
	int w_running;
	/* MC-2: the repository as checked, held (no link on its path). */
	int w_repofd;
	dev_t w_dev, w_gdev;
	ino_t w_ino, w_gino;
	/* The step machine: one git child at a time. */
	int w_step;
	pid_t w_pid;
	int w_out, w_eof, w_exited, w_status, w_timedout;
	char w_buf[WT_OUT_MAX];
	size_t w_got;
	struct event *w_ev_out, *w_ev_dl, *w_ev_next;
	const char *w_fail; /* the reason class, once failed */
	const char *w_code;
	wt_ready_fn w_ready;
	wt_done_fn w_done;
	void *w_arg;
	LIST_ENTRY(wt) w_entry;
};

/*
 * Before the run: checks repo (MC-2) and starts making the checkout on
 * a fresh branch.  NULL with *code and *reason when refused at once;
 * else ready is called later.  A refused or failed worktree leaves
 * nothing behind once the run discards it.
 */
struct wt *wt_create(const struct agent *, const char *run_id, const char *repo,
    wt_ready_fn ready, void *arg, const char **code, const char **reason);
/* The run is over: done gets {branch, path, base, head, filesChanged,
 * ...} later, from the loop (summaryError: the diff was not read). */
void wt_finish(struct wt *, wt_done_fn done, void *arg);
/* Before the child ran: remove it all again (a git step is killed).
 * Frees w. */
void wt_discard(struct wt *);
void wt_free(struct wt *);
/* aproc_reap: a child that is no run's.  1 when it was a git step's. */
int wt_reaped(pid_t, int status);

void worktree_list_h(struct ipc_conn *, struct ipc_msg *, void *);
/* At start: checkouts a previous spawner left half-made are removed. */
void worktrees_sweep(void);
void worktree_remove_h(struct ipc_conn *, struct ipc_msg *, void *);

#endif
