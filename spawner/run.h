/*
 * What the files of a run share (run.c, run_out.c, run_record.c); not
 * for the rest of the spawner, which sees runs through spawner.h.
 */
#ifndef CORDON_SPAWNER_RUN_H
#define CORDON_SPAWNER_RUN_H

#include <sys/queue.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "gatechan.h"
#include "redact.h"
#include "sanitize.h"
#include "spawner.h"
#include "streamjson.h"
#include "worktree.h"

#define RUN_NOTES_SENDING 2	       /* notes out to vaultd at once */
#define RUN_WINDOW	  (128 * 1024) /* text relayed ahead of credits */
#define RUN_ETAIL_KEEP	  (4 * SPAWNER_TAIL_MAX) /* stderr window kept */

/* RS_WT: its worktree is being made (MC-2), or its diff read. */
enum run_state { RS_WT, RS_AUDIT, RS_RUNNING, RS_NOTE };

struct run {
	char r_id[17];
	struct agent *r_agent;
	enum run_state r_state;
	const struct run_sink_ops *r_sink; /* where its output and end go */
	void *r_sink_arg;
	int r_via_mcp; /* MC-1: started by `cordon mcp` */
	struct aproc r_proc;
	struct secret_set r_ss;
	char **r_argv, **r_envp;
	const char *r_cwd;
	char r_path[PATH_MAX];
	int r_prompt_stdin;
	char *r_prompt;
	size_t r_prompt_len;
	struct clean r_clean, r_eclean;
	struct redact *r_redact;
	struct gate_chan *r_gate; /* SBX-6: the run's gate channel */
	struct evbuffer *r_tmp, *r_text, *r_note, *r_err, *r_line;
	/* SP-12: the last RUN_ETAIL_KEEP bytes of cleaned stderr */
	struct evbuffer *r_etail;
	int r_etail_cut; /* its head was drained: starts mid-line */
	char r_reason[SPAWNER_REASON_MAX]; /* why it failed, or "" */
	int r_line_skip;
	int r_json_seen;
	struct sj_state r_sj;	/* SP-16: what the stream said so far */
	uint64_t r_raw, r_eraw; /* bytes read from stdout, stderr */
	uint64_t r_bytes_out;
	int r_truncated, r_overflow;
	long r_timeout_ms;
	char *r_wt_repo; /* MC-2: the repository asked for, or NULL */
	struct wt *r_wt; /* its worktree, made in run_prepare */
	int r_ran;	 /* its child started (MC-2: the worktree is kept) */
	int r_answered;	 /* MC-2: its id answered before the child ran */
	int r_cancel;	 /* cancelled while agent.invoke was pending */
	int r_held;	 /* AU-6: made while agent.invoke syncs: 1 held
			  * child, -1 its spawn failed, 0 not tried */
	char r_fail_code[32]; /* the fixed code of a failure after that */
	const char *r_endec;  /* its end's error class, while the diff runs */
	LIST_ENTRY(run) r_entry;
	TAILQ_ENTRY(run) r_note_entry; /* its note waits to be sent */
};

/* run.c: the run's life */
void run_free(struct run *);
/* The run is over: its sink told (rs_ended, ec: its class or NULL), freed.
 * Every run accepted ends here once; one refused at its start is freed. */
void run_over(struct run *, const char *ec);
/* MSG_RUN_START or, detached, MSG_JOB_START: checked, then started. */
void run_start_msg(struct ipc_conn *, struct ipc_msg *, int detached);
/* Cancel a run (API-4): its child stopped, or, still in its checkout
 * (MC-2), ended at once; 0, or -1 if it is over or unknown to all. */
int run_stop(struct run *);
/* One event to the run's sink; takes o. */
void run_event(struct run *, struct json_object *o);
/* SP-12: a refusal before the stream, answered to the request m on c. */
void run_reply_error(struct ipc_conn *, const struct ipc_msg *,
    const struct run *, const char *code);
/* The same for a running run known by id; o is dropped if there is none. */
void run_event_id(const char *id, struct json_object *o);
struct json_object *run_ev(const char *kind); /* {"kind": kind} */

/* run_out.c: the agent's output, cleaned (SP-10) and scrubbed (SP-11),
 * into events and the note; stderr kept to be hashed and tailed. */
void run_out(struct aproc *, const char *, size_t);
void run_err(struct aproc *, const char *, size_t);
void run_text_finish(struct run *);
void run_err_clean(struct run *, const char *, size_t);
struct json_object *run_err_tail(struct run *);

/* run_record.c: the run's audit records and its chat note */
void run_add_common(
    struct json_object *o, const char *kind, const struct run *);
struct json_object *run_invoke_record(struct run *); /* NULL: no memory */
void run_audit_error(struct run *, const char *ec, int exitcode);
void run_audit_end(struct run *);
struct json_object *run_error_event(struct run *, const char *ec, int code);
int run_note(struct run *); /* 0 if vaultd's reply will come */

/*
 * The run's sink, attached to r for the request m on c: the broker's
 * stream (run_stream.c), or a detached job's file (job.c, MC-3).  0, or
 * -1 with *code: nothing attached.
 */
int run_stream_open(struct run *, struct ipc_conn *, const struct ipc_msg *);
int job_open(
    struct run *, struct ipc_conn *, const struct ipc_msg *, const char **code);

#endif
