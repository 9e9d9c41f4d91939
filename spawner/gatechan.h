/*
 * SBX-6, SBX-7: the command gate's spawner side.  Each chat run gets its
 * own SOCK_SEQPACKET channel (the agent's end becomes its fd 3, named by
 * CORDON_GATE_FD); `cordon gate` sends one MSG_GATE_CHECK datagram with a
 * private reply socket, and the spawner decides (policy/gate.c), audits
 * verb.run and answers MSG_GATE_VERDICT on that socket.  The hook of a
 * real CLI has no fd 3 (each closes every fd before a hook): it reaches
 * the same channel by the named pipes of GATE_FIFO_DIR (SBX-8, msg.h),
 * which only the run's own mount namespace shows.  A call the
 * policy answers `ask` is held as an approval until the operator decides
 * (MSG_APPROVAL_*, from the broker), its timeout denies, or the run ends.
 */
#ifndef CORDON_SPAWNER_GATE_H
#define CORDON_SPAWNER_GATE_H

#include <stddef.h>

#include "ipc.h"

#define GATE_CHILD_FD	  3	      /* the agent's end, in the child */
#define GATE_DGRAM_MAX	  (64 * 1024) /* one request datagram */
#define GATE_HELD_MAX	  32	      /* approvals held, all runs */
#define GATE_HELD_RUN_MAX 8	      /* approvals held, one run */
#define GATE_INFLIGHT_MAX 16	      /* calls of one run awaiting audit */
#define GATE_ARGS_MAX	  512	      /* bytes of scrubbed args shown */

struct agent;
struct gate_chan;
struct redact_keys;

/*
 * A run's channel: *childfd is the agent's end (close-on-exec, for
 * aproc_spec's as_gate_fd; the caller closes it once the child started).
 * cwd is the run's workdir (the workspace); keys are the run's scrubber
 * keys (SP-11), kept by reference for scrubbing held commands until
 * gate_chan_close.  0, or -1 with nothing open.
 */
int gate_chan_open(struct gate_chan **out, const struct agent *,
    const char *run_id, const char *cwd, const struct redact_keys *keys,
    int *childfd);
/*
 * The run ended: stop listening, deny and answer its held calls (audited
 * ask-deny, rule run-ended) and any still awaiting their audit ack.
 * NULL is fine.  Frees the channel.
 */
void gate_chan_close(struct gate_chan *);

/*
 * SBX-8: the run's GATE_FIFO_DIR, as the child made it (dirfd, the
 * caller's no more): its slots are served from now on.  0, or -1 (the
 * fd closed; calls by path then find nobody and are refused).
 */
int gate_chan_fifo(struct gate_chan *, int dirfd);

/*
 * Set CORDON_GATE_FD=3 and, with fifo, CORDON_GATE=GATE_FIFO_DIR in a
 * built env, replacing any other value.
 */
int gate_env(char ***envp, int fifo);

/* MSG_APPROVAL_LIST / MSG_APPROVAL_DECIDE from the broker. */
void approval_list_h(struct ipc_conn *, struct ipc_msg *, void *);
void approval_decide_h(struct ipc_conn *, struct ipc_msg *, void *);

#endif
