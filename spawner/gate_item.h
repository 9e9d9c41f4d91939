/*
 * The spawner's gate calls and channels (SBX-6, SBX-7, SBX-8), as
 * gate.c (one call: parse, decide, audit, answer), gate_approve.c (calls
 * held for the operator) and gate_chan.c (the socket and FIFO channels)
 * share them; the rest of the spawner sees gatechan.h.
 */
#ifndef CORDON_SPAWNER_GATE_ITEM_H
#define CORDON_SPAWNER_GATE_ITEM_H

#include <sys/queue.h>

#include <limits.h>
#include <stdint.h>

#include "gate.h"
#include "gatechan.h"
#include "msg.h"
#include "spawner.h"

/* SBX-8: one pair of named pipes of the run's GATE_FIFO_DIR. */
struct gate_slot {
	struct gate_chan *gs_chan;
	int gs_n;
	int gs_in;  /* N.in, read: reopened after each request's EOF */
	int gs_out; /* N.out, held O_RDWR: a write never meets EPIPE */
	struct event *gs_ev;
	struct evbuffer *gs_buf; /* the request so far */
	int gs_over;		 /* it passed GATE_DGRAM_MAX */
};

struct gate_chan {
	int gc_fd;
	struct event *gc_ev;
	int gc_dir; /* GATE_FIFO_DIR, or -1 */
	struct gate_slot gc_slots[GATE_FIFO_SLOTS];
	char gc_agent[LIM_NAME_MAX + 1];
	char gc_run[17];
	char gc_ws[PATH_MAX]; /* the workspace, resolved */
	const struct gate_policy *gc_policy;
	const struct redact_keys *gc_keys; /* the run's, for its lifetime */
	size_t gc_inflight;		   /* calls awaiting their audit ack */
	size_t gc_held;			   /* its calls held for the operator */
};

enum gi_state { GI_AUDIT, GI_HELD };

/* One call, from its datagram to its answer. */
struct gate_item {
	TAILQ_ENTRY(gate_item) gi_entry;
	struct gate_chan *gi_chan; /* NULL once the run ended */
	int gi_fd;		   /* the caller's reply socket; -1 answered */
	int gi_slot;		   /* or its FIFO slot (SBX-8), -1 */
	char gi_nonce[17];	   /* which the FIFO answer carries */
	enum gi_state gi_state;
	int gi_allow; /* the answer once the audit is acknowledged */
	char gi_verb[65];
	char gi_rule[65];
	char gi_agent[LIM_NAME_MAX + 1];
	/* approvals (SBX-7) */
	char gi_id[17];
	char gi_run[17];
	char gi_cwd[PATH_MAX];		/* relative to the workspace */
	char *gi_args;			/* scrubbed, clamped */
	int64_t gi_created, gi_expires; /* ms since the epoch */
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
};

/* Every call from its datagram to its answer; gate_nheld of them held. */
TAILQ_HEAD(gate_items, gate_item);
extern struct gate_items gate_items;
extern size_t gate_nheld;

/* gate.c */
int gate_scpy(char *dst, size_t dstsz, const char *src); /* -1: cut */
const struct gate_policy *gate_policy_of(const struct agent *);
long gate_ask_timeout(const struct gate_policy *);
void gate_rule_set(char *dst, size_t dstsz, const char *src);
void gate_answer(struct gate_item *, int allow, const char *rule);
/* verb.run to auditd; the answer once it is acknowledged. */
void gate_audit(struct gate_item *, const char *verdict, int allow);
/* One call: on its reply socket rfd, or (rfd -1) by FIFO slot. */
void gate_handle(
    struct gate_chan *, const uint8_t *buf, size_t n, int rfd, int slot);

/* path equals dir or lies beneath it (both resolved). */
int gate_path_inside(const char *path, const char *dir);

/* gate_approve.c: hold gi for the operator.  0; -1, or -2 when its
 * command line is too long to show whole. */
int approval_hold(struct gate_item *gi, struct gate_chan *ch,
    const struct gate_call *k, const char *cwd);

#endif
