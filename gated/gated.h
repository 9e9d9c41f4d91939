/*
 * The map of cordon-gated (SBX-6, SBX-7, SBX-8): the command gate's
 * daemon.  The spawner makes each run's gate channel and hands gated its
 * receiving end with the run's id, agent, workspace, `commands:` policy
 * and protected paths (MSG_GATE_OPEN), and, where the run has the gate
 * by path, the receiving end of the run's relay socket (MSG_GATE_RELAY:
 * the spawner copies each FIFO request there unread, with a reply socket
 * of its own).  gated parses every call, decides it with policy/,
 * audits verb.run and answers once auditd acknowledged; `ask` calls wait
 * as approvals the broker lists and decides.  gated.c: the daemon, its
 * dispatch rows and runs; gate_chan.c: a run's two channels; gate.c: one
 * call from datagram to answer; gate_approve.c: calls held for the
 * operator.  It holds no secret and writes no file.
 */
#ifndef CORDON_GATED_H
#define CORDON_GATED_H

#include <sys/queue.h>

#include <limits.h>
#include <stdint.h>

#include "cordon_limits.h"
#include "daemon.h"
#include "gate.h"
#include "log.h"
#include "msg.h"
#include "protect.h"
#include "util.h"

#define GATE_HELD_MAX	    32	 /* approvals held, all runs */
#define GATE_HELD_RUN_MAX   8	 /* approvals held, one run */
#define GATE_HELD_AGENT_MAX 16	 /* approvals held, one agent's runs */
#define GATE_INFLIGHT_MAX   16	 /* calls of one run awaiting audit */
#define GATE_ARGS_MAX	    512	 /* bytes of cleaned args shown */
#define GATED_RUNS_MAX	    256	 /* runs at once */
#define GATED_LINKS_BYTES   8192 /* a run's pc_links, packed */
#define GATE_REC_RATE	    20	 /* verb.run records a second, per run */
#define GATE_REC_BURST	    100	 /* ... and at once */

struct event;

/* One run: its channels and what deciding its calls needs. */
struct gate_chan {
	TAILQ_ENTRY(gate_chan) gc_entry;
	int gc_fd; /* the gate socket's receiving end */
	struct event *gc_ev;
	int gc_relay; /* calls by path, relayed (SBX-8), or -1 */
	struct event *gc_relay_ev;
	char gc_agent[LIM_NAME_MAX + 1];
	char gc_run[17];
	char gc_ws[PATH_MAX]; /* the workspace, resolved */
	struct gate_policy gc_policy;
	/* SBX-2: the protected paths, as the spawner resolved them */
	struct protect_ctx gc_protect;
	char gc_home[PATH_MAX];
	char gc_extra[PROTECT_EXTRA_MAX][PATH_MAX];
	char gc_links[GATED_LINKS_BYTES]; /* pc_links, one after another */
	char gc_runs[PATH_MAX];
	size_t gc_inflight;	    /* calls awaiting their audit ack */
	struct rate gc_rate;	    /* one token per verb.run record */
	unsigned int gc_limited;    /* calls refused for want of one */
	size_t gc_held;		    /* its calls held for the operator */
	struct log_limit gc_loglim; /* the lines its calls cause */
};

enum gi_state { GI_AUDIT, GI_HELD };

/* One call, from its datagram to its answer. */
struct gate_item {
	TAILQ_ENTRY(gate_item) gi_entry;
	struct gate_chan *gi_chan; /* NULL once the run ended */
	int gi_fd;		   /* the reply socket; -1 answered */
	int gi_fifo;		   /* a call by path: answered with its nonce */
	char gi_nonce[17];
	enum gi_state gi_state;
	int gi_allow; /* the answer once the audit is acknowledged */
	char gi_verb[65];
	char gi_rule[65];
	char gi_agent[LIM_NAME_MAX + 1];
	/* approvals (SBX-7) */
	char gi_id[17];
	char gi_run[17];
	char gi_cwd[PATH_MAX];		/* relative to the workspace */
	char *gi_args;			/* cleaned, clamped */
	int64_t gi_created, gi_expires; /* ms since the epoch */
	int64_t gi_until;		/* gi_expires, monotonic ms */
	struct event *gi_timer;
};

struct gate_call {
	const char *gk_tool;
	int gk_kind; /* enum hook_kind, or GK_EXEC */
	const char *gk_line;
	char *gk_argv[GATE_WORDS_MAX + 1];
	size_t gk_argc;
	const char *gk_cwd;
	const char *gk_path;
	int64_t gk_deadline; /* the caller's bound, monotonic ms (SBX-8) */
};

TAILQ_HEAD(gate_items, gate_item);
TAILQ_HEAD(gate_chans, gate_chan);

struct gated {
	struct daemon gd_d;
	struct gate_chans gd_runs;
	size_t gd_nruns;
	/* Every call from its datagram to its answer; gd_nheld held. */
	struct gate_items gd_items;
	size_t gd_nheld;
};
extern struct gated gd;

/* gate.c */
int gate_scpy(char *dst, size_t dstsz, const char *src); /* -1: cut */
void gate_rule_set(char *dst, size_t dstsz, const char *src);
void gate_answer(struct gate_item *, int allow, const char *rule);
/* verb.run to auditd; the answer once it is acknowledged. */
void gate_audit(struct gate_item *, const char *verdict, int allow);
void gate_limited_flush(struct gate_chan *); /* the rate-limited, counted */
/* One call with its reply socket rfd; fifo: a call by path (SBX-8). */
void gate_handle(
    struct gate_chan *, const uint8_t *buf, size_t n, int rfd, int fifo);
/* path equals dir or lies beneath it (both resolved). */
int gate_path_inside(const char *path, const char *dir);

/* gate_open.c: a MSG_GATE_OPEN payload (its shape checked) into ch; 0,
 * or -1 (the caller frees ch's policy, gate_policy_free). */
int gate_open_parse(struct gate_chan *ch, struct json_object *o);

/* gate_chan.c: listen on a run's gate socket or relay socket (fd
 * ours); 0, or -1 with fd closed. */
int gate_chan_listen(struct gate_chan *, int fd, int relay);
/* The run ended (or its spawner left): stop listening, deny and answer
 * its held calls (audited ask-deny, rule run-ended).  Frees it. */
void gate_chan_close(struct gate_chan *);

/* gate_approve.c: hold gi for the operator.  0; -1, or -2 when its
 * command line is too long to show whole. */
int approval_hold(struct gate_item *gi, struct gate_chan *ch,
    const struct gate_call *k, const char *cwd);
/* MSG_APPROVAL_LIST / MSG_APPROVAL_DECIDE from the broker. */
void approval_list_h(struct ipc_conn *, struct ipc_msg *, void *);
void approval_decide_h(struct ipc_conn *, struct ipc_msg *, void *);

#endif
