/*
 * The map of cordon-spawner: daemon state, the agent table, the child
 * process machinery shared by runs, actions and probes, and each file's
 * entry points.  Only the spawner holds secret values (SEC-3).
 */
#ifndef CORDON_SPAWNER_H
#define CORDON_SPAWNER_H

#include <sys/queue.h>
#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "daemon.h"
#include "ipc.h"
#include "manifest.h"
#include "protect.h"
#include "roots.h"
#include "sandbox.h"
#include "secrets.h"

struct event;
struct json_object;

#define SPAWNER_READ_CHUNK 65536	/* one read from an agent pipe */
#define SPAWNER_NOTE_MAX   (256 * 1024) /* transcript kept for a note */
#define SPAWNER_STDERR_MAX (256 * 1024) /* stderr kept for its hash */
#define SPAWNER_MAX_AGENTS 64

#define SPAWNER_MAX_PROTECT 4 /* --protect DIR, given by cordond */

enum readiness { RD_UNKNOWN = 0, RD_LIVE, RD_DEGRADED, RD_OFFLINE };

struct probe;

struct agent {
	struct manifest ag_mf;
	int ag_running; /* chat runs in flight (SP-14) */
	enum readiness ag_ready;
	/* Why it is not live, a fixed code (API-2 readiness.reason), or
	 * NULL: binary-missing, probe-timeout, probe-failed, probe-exit,
	 * no-version. */
	const char *ag_why;
	/* SP-12: binary-missing in words ("binary X not found on PATH Y") */
	char ag_detail[AGENT_REASON_MAX];
	char ag_version[LIM_PROBE_VERSION_MAX * 4 + 1];
	struct probe *ag_probe; /* NULL when none is in flight */
	struct event *ag_probe_timer;
	struct sandbox_plan ag_sb; /* SBX-1 ... SBX-5: layers it gets */
};

/*
 * One agent child: pipes, deadline, group kill (SP-8, SP-17).  The owner
 * gets stdout/stderr chunks and, exactly once, ac_done once the child
 * has exited and its pipes are drained, or the kill grace ran out.
 */
enum aproc_end {
	AP_END_NONE = 0,
	AP_END_TIMEOUT,
	AP_END_CANCEL,
	AP_END_CAP,
	AP_END_SECCOMP, /* made a call its seccomp layer ends it for */
};

struct aproc;
struct aproc_ops {
	void (*ao_out)(struct aproc *, const char *, size_t);
	void (*ao_err)(struct aproc *, const char *, size_t);
	void (*ao_done)(struct aproc *); /* may free the owner */
};

struct aproc {
	pid_t ap_pid; /* also the process group (setsid) */
	int ap_out, ap_err, ap_in;
	struct event *ap_ev_out, *ap_ev_err, *ap_ev_in;
	struct event *ap_deadline, *ap_grace, *ap_finish;
	char *ap_stdin; /* prompt for promptVia stdin */
	size_t ap_stdin_len, ap_stdin_off;
	int ap_exited;
	int ap_status;	  /* wait status */
	int ap_killstage; /* 0, 1 = SIGTERM, 2 = SIGKILL sent, 3 = not reaped */
	int ap_done;
	int ap_inited; /* aproc_start set the fds to -1 */
	int ap_paused; /* flow control: stdout not being read */
	enum aproc_end ap_end;
	uint64_t ap_start_ms, ap_end_ms;
	const char *ap_agent;	    /* name, for log lines */
	struct sandbox_run *ap_sbx; /* this run's sandbox state */
	int ap_notify;		    /* seccomp listener, or -1 */
	int ap_initst;	    /* cordon-init's socket: the go, then the agent's
			     * status; or -1 */
	int ap_held;	    /* AU-6: cordon-init waits for aproc_go */
	int ap_spawnfd;	    /* held: the rest of the spawn's status pipe */
	long ap_timeout_ms; /* held: the deadline, armed at the go */
	int ap_gatedir;	    /* SBX-8: the run's GATE_FIFO_DIR, for its owner */
	struct event *ap_ev_notify;
	char ap_killed_by[48]; /* "seccomp: ptrace", or "" */
	int ap_fail_step;      /* spawn failed: spawn_step / sbx_step */
	int ap_fail_errno;
	char ap_reason[160]; /* SP-12: why it did not start, or "" */
	char ap_cgroup[24];  /* "run.N" beneath sp_cgfd, or "" (SP-7) */
	/* EG-1: a proxy run's listener (our copy), or -1; egress.c */
	int ap_egress_fd;
	char ap_run_id[17];
	const struct mf_egress *ap_egress;
	/* EG-3: each route's key (ap_egress->eg_routes[i]), or NULL;
	 * handed to egressd only, wiped when the run ends. */
	char *ap_egress_keys[EGRESS_ROUTES_MAX];
	const struct aproc_ops *ap_ops;
	void *ap_arg;
	TAILQ_ENTRY(aproc) ap_entry;
};

/* What a child is started with. */
struct aproc_spec {
	const char *as_path; /* absolute */
	char **as_argv;
	char **as_envp;
	const char *as_cwd;
	const struct mf_limits *as_limits;
	const char *as_stdin; /* NULL: /dev/null */
	size_t as_stdin_len;
	long as_timeout_ms;		       /* 0: no deadline */
	const struct sandbox_plan *as_sandbox; /* required: the agent's plan */
	const char *as_agent;		       /* name, for log lines */
	int as_gate_fd;	       /* -1: none; else dup'd to fd 3 in the child
				* (0, 1, 2 also mean none, so a zeroed spec is safe) */
	int as_gate_dir;       /* SBX-8: make GATE_FIFO_DIR (mount namespace
				* only); its fd comes back in ap_gatedir */
	const char *as_run_id; /* a chat run's id: its proxy (EG-1); NULL:
				* none (actions, probes) */
	const struct secret_set *as_secrets; /* its routes' keys (EG-3) */
	int as_hold; /* AU-6: the agent forked only at aproc_go (a plan
		      * aproc_can_hold says yes for); else at once */
};

struct spawner {
	struct daemon sp_d;
	char sp_agents_dir[PATH_MAX];
	char sp_secrets[PATH_MAX];
	/* SBX-2: the operator's home, cordon's config dir (that of
	 * secrets.yaml) and each --protect DIR (audit dir, vault), resolved */
	struct protect_ctx sp_protect;
	char sp_protect_buf[2 + SPAWNER_MAX_PROTECT][PATH_MAX];
	/* --state-dir: missions.json and the agents' homes (SBX-9), or "" */
	char sp_state[PATH_MAX];
	char sp_home[PATH_MAX];
	char sp_missions_dir[PATH_MAX]; /* the sibling of the agents dir */
	struct agent *sp_agents[SPAWNER_MAX_AGENTS];
	size_t sp_nagents;
	size_t sp_nruns;	    /* chat runs in flight, all agents */
	long sp_max_runs;	    /* SP-14 bounds (spawner.maxRuns, */
	long sp_max_runs_agent;	    /* spawner.maxRunsPerAgent) */
	unsigned int sp_broker_gen; /* bumps with each new broker channel */
	TAILQ_HEAD(, aproc) sp_procs;
	struct event *sp_sigchld;
	int sp_cgfd;	 /* the pids cgroup cordond delegated (SP-7), or -1 */
	int sp_stopping; /* SIGTERM: no new child; runs end, then we exit */
	int sp_declared; /* the cron missions went to this sched channel */
	long sp_test_egress; /* 1: egress test-only keys allowed (EG-2) */
};

extern struct spawner sp;

/*
 * hookcfg.c, SBX-8: the files of an agent whose CLI would take hooks or
 * programs from them in its home (Gemini CLI's settings, Codex's
 * config.toml, hooks.json and .env), written by cordon into its own dir
 * and bound read-only over the home's in every spawn (sandbox_cfg.c);
 * nothing for other CLIs.  hookcfg_load at load (the dir beneath the
 * state dir, into the plan, then the files), hookcfg_run before each
 * chat run.  0, or -1 with errno and *file the one not written
 * (relative to the home).
 */
int hookcfg_load(struct agent *, const char *state, const char **file);
int hookcfg_run(const struct agent *, const char **file);

/* spawner.c: audit records go to auditd; cb gets NULL on no answer. */
int spawner_audit(struct json_object *rec, ipc_reply_fn cb, void *arg);
/* 1 if the reply is an acknowledgement of the record. */
int spawner_audit_acked(const struct ipc_msg *);

/* manifests.c */
void agents_load(void);
struct agent *agent_find(const char *name);
struct json_object *agent_json(const struct agent *, int full);

/* child.c: env, binary resolution, start, kill, reaping. */
int agent_env(const struct agent *, const struct secret_set *, char ***envp,
    const char **cwd, const char **errcode);
/* A spec (zeroed first) for ag's program at path in its own sandbox, with
 * its limits and name; the caller adds the rest (timeout, stdin, ...). */
void aproc_spec_agent(struct aproc_spec *, const struct agent *,
    const char *path, char **argv, char **envp, const char *cwd);
int aproc_start(struct aproc *, const struct aproc_spec *,
    const struct aproc_ops *, void *arg);
int aproc_can_hold(const struct sandbox_plan *);
int aproc_go(struct aproc *);
void aproc_stop(struct aproc *, enum aproc_end, long grace_ms);
void aproc_kill(struct aproc *, enum aproc_end);
/* Stopping: every run is killed and ends as any killed run does. */
void aproc_kill_all(void);
/* Flow control: stop / resume reading stdout (the child then blocks). */
void aproc_pause(struct aproc *);
void aproc_resume(struct aproc *);
void aproc_reap(void);
int aproc_exit_code(const struct aproc *); /* 0..255, or -1 */
void aproc_release(struct aproc *);
/* Close *fd and free its event, if any. */
void aproc_close(int *fd, struct event **ev);
/* child_seccomp.c: the run's seccomp layer, answered and named. */
void aproc_notify_cb(evutil_socket_t, short, void *);
void aproc_sigsys(struct aproc *, pid_t);
void aproc_name_syscall(struct aproc *, uint32_t arch, long nr);
/* child_cg.c: each run's pids cgroup (SP-7).  make: 0 with *procs
 * (cgroup.procs of the run's group, or -1 when none is used), or -1
 * with errno set: refused.  end: remove it, now or from the loop. */
int aproc_cgroup_make(struct aproc *, const struct mf_limits *, int *procs);
void aproc_cgroup_end(struct aproc *);
/* SP-7: at start, remove run groups a previous spawner left behind. */
void aproc_cgroup_sweep(void);

/* egress.c: a proxy run's listener to egressd and back (EG-1). */
void egress_run_open(struct aproc *, const char *run_id,
    const struct mf_egress *, const struct secret_set *, int fd);
void egress_run_close(struct aproc *);
void egress_peer_up(void); /* a (new) egressd: hand over live runs */
void egress_conn_h(struct ipc_conn *, struct ipc_msg *, void *);

/* run.c: chat runs (SP-8, SP-9, SP-16, SP-17, API-3, API-4) */
void run_start_h(struct ipc_conn *, struct ipc_msg *, void *);
void run_cancel_h(struct ipc_conn *, struct ipc_msg *, void *);
void run_credit_h(struct ipc_conn *, struct ipc_msg *, void *);
void runs_broker_lost(void);

/* A run's end, as its sink is told it (rs_ended). */
struct run_result {
	const char *rr_errclass; /* NULL, or a chat run's error class */
	int rr_exit;
	uint64_t rr_ms;
	int rr_truncated;
	const char *rr_text; /* valid during the call only */
	size_t rr_len;
};

/*
 * Where a run's output and end go: its sink, chosen when the run is made
 * (the broker's stream: run_stream.c; a detached job: job.c; a mission:
 * mission.c), as struct aproc_ops is for a child.  Each operation is
 * what the run tells it; sink is the state the sink attached.  NULL
 * operations are ones the sink has no use for.
 */
struct run;
struct run_sink_ops {
	/* admitted (MC-2: before its checkout) or its child runs */
	void (*rs_started)(struct run *, void *sink);
	/* one event of its stream (API-3); takes o */
	void (*rs_event)(struct run *, void *sink, struct json_object *o);
	/* len bytes of text went out in a token event */
	void (*rs_text)(struct run *, void *sink, size_t len);
	/* 1: the reader is a window behind: the child waits (flow control) */
	int (*rs_behind)(const struct run *, void *sink);
	/* MSG_RUN_CREDIT on c: bytes of its text were relayed */
	void (*rs_credit)(
	    struct run *, void *sink, struct ipc_conn *c, long long bytes);
	/* 1 while someone reads what it tells (else it is cancelled) */
	int (*rs_listening)(const struct run *, void *sink);
	/* ended before it was answered, with a fixed code */
	void (*rs_refused)(struct run *, void *sink, const char *code);
	/* over, once for every run accepted: how it ended, its text */
	void (*rs_ended)(struct run *, void *sink, const struct run_result *);
	/* the run is freed: the sink's state with it */
	void (*rs_free)(struct run *, void *sink);
	int rs_events; /* told tool calls and notices, text as it settles */
	int rs_note;   /* its end writes the chat note (VA-5) */
	int rs_by_id;  /* cancelled by its run id (API-4) */
};

/*
 * run.c: a run without a request (missions): the chat run's checks,
 * agent.invoke / complete / error records, sandbox and child path, told
 * to ops; the cleaned and scrubbed text is capped at SPAWNER_NOTE_MAX.
 * 0: rs_ended is told exactly once, later.  -1 with *code: nothing
 * started, the sink is told nothing.
 */
int run_headless(struct agent *, const char *run_id, const char *prompt,
    long timeout_ms, const struct run_sink_ops *, void *sink,
    const char **code);
/* The run's reason for a fixed code, logged when it has one (SP-12). */
void run_warn(const struct run *, const char *code);

/* job.c: detached jobs (MC-3), kept beneath --state-dir/jobs */
void jobs_open(const char *state_dir, long keep, long keep_mib);
void jobs_audit_lost(void); /* auditd is up: job.end of lost jobs */
void job_start_h(struct ipc_conn *, struct ipc_msg *, void *);
void job_list_h(struct ipc_conn *, struct ipc_msg *, void *);
void job_get_h(struct ipc_conn *, struct ipc_msg *, void *);
void job_events_h(struct ipc_conn *, struct ipc_msg *, void *);
/* job_page.c: where the last page of a job's events ended. */
struct job_cursor {
	uint64_t jc_line, jc_pos; /* a line number and its byte offset */
};
/*
 * Into arr, the JSONL lines of fd (size bytes) from line off on: at most
 * lim, and at most page bytes of them (one at least, however long); a
 * line not yet ended is not one.  Moves cur past them.  How many.
 */
uint64_t job_page(int fd, uint64_t size, struct job_cursor *cur, uint64_t off,
    uint64_t lim, size_t page, struct json_object *arr);
void job_wait_h(struct ipc_conn *, struct ipc_msg *, void *);
void job_cancel_h(struct ipc_conn *, struct ipc_msg *, void *);

/* mission.c: missions (MI-1 ... MI-4, API-7); cordon-sched schedules */
struct mission_ent;
void missions_start(void);
/* MSG_MISSION_CRON to sched once it, auditd and vaultd are all up. */
void missions_declare(void);
void mission_list_h(struct ipc_conn *, struct ipc_msg *, void *);
void mission_run_h(struct ipc_conn *, struct ipc_msg *, void *);
void mission_fire_h(struct ipc_conn *, struct ipc_msg *, void *);

/* action.c: Control Room actions (API-5) */
void action_run_h(struct ipc_conn *, struct ipc_msg *, void *);

/* probe.c: health probes (SP-18) */
void probe_start_all(void);
void probe_stop(struct agent *);

/* Small shared helpers (run.c). */
const char *errclass_message(const char *errclass);
/*
 * SP-12: the last lines of a cleaned and scrubbed stderr, as shown with
 * a failure (at most SPAWNER_TAIL_LINES lines, SPAWNER_TAIL_MAX bytes,
 * whole lines and code points); NULL when there is none.
 */
#define SPAWNER_TAIL_LINES 20
#define SPAWNER_TAIL_MAX   2048
struct json_object *stderr_tail(const char *text, size_t len);
/* SP-12: a reason (fixed phrases, known values) for the log and the API. */
#define SPAWNER_REASON_MAX AGENT_REASON_MAX
int spawner_broker_ok(struct ipc_conn *, unsigned int gen);
/* A request answered later, from the loop: its channel and that
 * channel's generation (for spawner_broker_ok), and the message less
 * what the codec owns (its payload and fd). */
void spawner_req_keep(struct ipc_conn *c, const struct ipc_msg *m,
    struct ipc_conn **conn, unsigned int *gen, struct ipc_msg *keep);

#endif
