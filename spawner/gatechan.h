/*
 * SBX-6, SBX-7: the command gate's spawner side: only its channels.
 * Each chat run gets its own SOCK_SEQPACKET channel (the agent's end
 * becomes its fd 3, named by CORDON_GATE_FD); its receiving end goes to
 * cordon-gated (MSG_GATE_OPEN), which parses, decides, audits and
 * answers each call and holds `ask` calls as approvals.  The hook of a
 * real CLI has no fd 3 (each closes every fd before a hook): it reaches
 * the gate by the named pipes of GATE_FIFO_DIR (SBX-8, msg.h), which
 * only the run's own mount namespace shows; the spawner serves those
 * pipes and copies each request, unread, to gated on the run's relay
 * socket (MSG_GATE_RELAY) and gated's answer back.  The spawner keeps
 * its own copy of both receiving ends, so calls wait while gated
 * restarts, and hands them again to a restarted gated.
 */
#ifndef CORDON_SPAWNER_GATE_H
#define CORDON_SPAWNER_GATE_H

#include <stddef.h>

#include "ipc.h"

#define GATE_CHILD_FD 3 /* the agent's end, in the child */

struct agent;
struct gate_chan;
struct redact_keys;

/*
 * A run's channel: *childfd is the agent's end (close-on-exec, for
 * aproc_spec's as_gate_fd; the caller closes it once the child started).
 * cwd is the run's workdir (the workspace); keys are the run's scrubber
 * keys (SP-11), kept by reference for scrubbing held commands gated
 * shows the operator (MSG_GATE_SCRUB) until gate_chan_close.  Its
 * receiving end goes to gated now, or when gated is up.  0, or -1 with
 * nothing open.
 */
int gate_chan_open(struct gate_chan **out, const struct agent *,
    const char *run_id, const char *cwd, const struct redact_keys *keys,
    int *childfd);
/*
 * The run ended: gated is told (MSG_GATE_CLOSE; it denies the run's held
 * calls) and every end of the channel here is closed.  NULL is fine.
 * Frees the channel.
 */
void gate_chan_close(struct gate_chan *);

/*
 * SBX-8: the run's GATE_FIFO_DIR, as the child made it (dirfd, the
 * caller's no more): its slots are served from now on, relayed to
 * gated.  0, or -1 (the fd closed; calls by path then find nobody and
 * are refused).
 */
int gate_chan_fifo(struct gate_chan *, int dirfd);

/*
 * Set CORDON_GATE_FD=3, CORDON_GATE_WAIT=wait_sec (how long `cordon
 * gate` waits for a verdict, SBX-8) and, with fifo,
 * CORDON_GATE=GATE_FIFO_DIR in a built env, replacing any other value.
 */
int gate_env(char ***envp, int fifo, long wait_sec);

/* gated's channel is (again) up: hand it every live run's channels. */
void gate_peer_up(void);
/* MSG_GATE_SCRUB from gated: a held call's line, scrubbed (SP-11). */
void gate_scrub_h(struct ipc_conn *, struct ipc_msg *, void *);

#endif
