/*
 * The wire catalogue: every message type that crosses a cordon channel.
 * Defined once, here.  Requests and their single accepted reply are
 * paired by name (MSG_X / MSG_X_OK); any request may instead be answered
 * by MSG_ERROR {"error": "<code>"} with a code from a fixed set.
 */
#ifndef CORDON_MSG_H
#define CORDON_MSG_H

/*
 * Dashboard sessions cordond keeps for the broker it restarts (PER-5):
 * at most this many, each an id of SESSION_ID_HEX hex digits and its
 * page key of SESSION_PAGE_HEX.
 */
#define MSG_SESSIONS_MAX 32
#define SESSION_ID_HEX	 64
#define SESSION_PAGE_HEX 64 /* and its page key (PER-5) */

/* A mission run's payload: the spawner's row, the broker's check. */
#define MSG_MISSION_RUN_MAX (256 * 1024)
/* The cron missions the spawner declares to sched (MI-1): at most
 * MSG_MISSION_CRON_N (the missions it loads at most), each id at most
 * MSG_MISSION_ID_MAX bytes, in a frame of MSG_MISSION_CRON_MAX. */
#define MSG_MISSION_ID_MAX   64
#define MSG_MISSION_CRON_N   64
#define MSG_MISSION_CRON_MAX (64 * 1024)

/*
 * SBX-8: the gate by path, for hook processes that no longer hold fd 3.
 * Each run with a mount namespace has GATE_FIFO_DIR (in its own /tmp,
 * read-only, a mount only that run shows; named by CORDON_GATE) with
 * GATE_FIFO_SLOTS pairs of named pipes "N.in" and "N.out".  A caller
 * takes slot N by flock(LOCK_EX) on its N.out, writes one MSG_GATE_CHECK
 * datagram (flags 0, with a "nonce" of 16 hex digits) into N.in and
 * closes it (the EOF ends the request), then reads MSG_GATE_VERDICT
 * datagrams from N.out until one carries its nonce.
 */
#define GATE_FIFO_DIR	"/tmp/.cordon-gate"
#define GATE_FIFO_SLOTS 8
#define GATE_DGRAM_MAX	(64 * 1024) /* one gate request, either way in */

enum msg_type {
	MSG_NONE = 0,
	MSG_ERROR = 1, /* reply: {"error": code} */

	/* parent -> every daemon */
	MSG_STATUS = 10, /* {} */
	MSG_STATUS_OK,	 /* {pid, uid, capEff, noNewPrivs, seccomp, landlock} */
	MSG_PEER_FD,	 /* {"peer": name} + fd; no reply */
	MSG_SHUTDOWN,	 /* {}; no reply, the daemon exits 0 */
	/* daemon -> parent */
	MSG_PEER_BAD, /* {"peer": name}: it broke framing; no reply */

	/* parent -> broker */
	MSG_BROKER_CONFIG = 20, /* {token, loginCode, port, origins[],
				   sessions[]} + fd */
	/* broker -> parent */
	MSG_LOGIN_USED,	    /* {}; the one-time login code was spent */
	MSG_LOGIN_USED_OK,  /* {}; cordond will not hand it out again */
	MSG_HEALTH,	    /* {} */
	MSG_HEALTH_OK,	    /* {daemons: [...]} */
	MSG_SESSION_ADD,    /* {id, page}: a dashboard session was issued */
	MSG_SESSION_ADD_OK, /* {}; cordond hands it to every later broker */

	/* anyone -> auditd (record shapes: common/audit_schema.c) */
	MSG_AUDIT_RECORD = 30, /* {kind, ...fields} */
	MSG_AUDIT_RECORD_OK,   /* {seq} */
	/* broker -> auditd (API-8) */
	MSG_AUDIT_TAIL,	   /* {kind?, agent?, since?, limit} */
	MSG_AUDIT_TAIL_OK, /* {records: [...]} */

	/* vaultd (VA-*, API-6) */
	MSG_VAULT_CHAT_NOTE = 40,  /* spawner: {agent, prompt, promptSha8,
				       response, time} */
	MSG_VAULT_CHAT_NOTE_OK,	   /* {path, bytes} */
	MSG_VAULT_MISSION_NOTE,	   /* spawner: {missionId, folder, hint,
				      content} */
	MSG_VAULT_MISSION_NOTE_OK, /* {bytes} */
	MSG_VAULT_READ,		   /* broker: {path} */
	MSG_VAULT_READ_OK,	   /* {path, content, bytes} */
	MSG_VAULT_LIST,		   /* broker: {dir} */
	MSG_VAULT_LIST_OK,	   /* {dir, notes: [...], folders: [...]} */

	/* spawner (SP-*, API-2 ... API-5) */
	MSG_AGENT_LIST = 50, /* broker: {} */
	MSG_AGENT_LIST_OK,   /* {agents: [...]} */
	MSG_AGENT_GET,	     /* broker: {name} */
	MSG_AGENT_GET_OK,    /* {agent: {...}} */
	MSG_RUN_START,	     /* broker: {agent, prompt, session?, via?} */
	MSG_RUN_START_OK,    /* {runId}; then MSG_RUN_EVENT frames */
	MSG_RUN_EVENT,	     /* spawner -> broker, one-way: {runId, kind,
				...}; kind "done" (or "saved") ends it */
	MSG_RUN_CANCEL,	     /* broker: {runId} */
	MSG_RUN_CANCEL_OK,   /* {} */
	MSG_ACTION_RUN,	     /* broker: {agent, action} */
	MSG_ACTION_RUN_OK,   /* {ok, stdout, stderr, exitCode, durationMs,
				truncated} or {ok:false, errorClass, ...} */
	MSG_RUN_CREDIT,	     /* broker -> spawner, one-way: {runId, bytes}
				relayed; the spawner's flow-control window */

	/* the command gate (SBX-6, SBX-7): one SEQPACKET datagram each way */
	MSG_GATE_CHECK = 70,	/* `cordon gate` -> gated on the run's gate
				   channel, + its reply socket: {tool, line |
				   argv, cwd, filePath?}; by GATE_FIFO_DIR:
				   + nonce, no socket */
	MSG_GATE_VERDICT,	/* gated -> `cordon gate` on the reply
				   socket: {verdict, rule, message}; by
				   GATE_FIFO_DIR: + nonce */
	MSG_APPROVAL_LIST,	/* broker: {} */
	MSG_APPROVAL_LIST_OK,	/* {approvals: [...], now} */
	MSG_APPROVAL_DECIDE,	/* broker: {id, decision} */
	MSG_APPROVAL_DECIDE_OK, /* {} */

	/* missions (MI-*, API-7): broker -> spawner */
	MSG_MISSION_LIST = 80, /* {} */
	MSG_MISSION_LIST_OK,   /* {missions: [{id, label, agent, manual, cron?,
				  timezone, options, outputs: [{type}],
				  permissions, running, lastRun?}]} */
	MSG_MISSION_RUN,       /* {id, options?} <= MSG_MISSION_RUN_MAX;
				  answered when it is over */
	MSG_MISSION_RUN_OK,    /* {runId, status, durationMs,
				  outputsPersisted, outputsEmitted,
				  errorClass?} */
	/* the scheduler (MI-1): spawner <-> sched, one-way */
	MSG_MISSION_CRON, /* spawner: {missions: [{id, cron, timezone}]},
			     the cron missions, whole, at every (re)connect */
	MSG_MISSION_FIRE, /* sched: {id, now, missed}: a slot came (now) or
			     an earlier one passed unseen (missed) */

	/* egress (EG-1 ... EG-4): spawner -> egressd */
	MSG_EGRESS_OPEN = 90, /* {runId, agent, allow: ["host:port", ...],
				 maxConnections, maxBytes, idleTimeoutSec,
				 testResolve?: {name: addr},
				 testAllowAddress?} + the run's listener */
	MSG_EGRESS_OPEN_OK,   /* {} */
	MSG_EGRESS_CLOSE,     /* one-way {runId}: the run ended; close its
				 listener and tunnels */
	MSG_EGRESS_CONN,      /* egressd -> spawner, one-way: {runId, conn,
				 state: open|end, host?, port?, decision,
				 rule?|reason?, end?, bytesUp, bytesDown,
				 durationMs}, for the run view */

	/* detached jobs (MC-3): broker -> spawner */
	MSG_JOB_START = 100,	/* {agent, prompt, session?, via?} */
	MSG_JOB_START_OK,	/* {jobId} once the run's child runs */
	MSG_JOB_LIST,		/* {} */
	MSG_JOB_LIST_OK,	/* {jobs: [meta, ...]}, newest first */
	MSG_JOB_GET,		/* {jobId} */
	MSG_JOB_GET_OK,		/* {job: meta} */
	MSG_JOB_EVENTS,		/* {jobId, offset, limit} */
	MSG_JOB_EVENTS_OK,	/* {events: [...], next, job: meta} */
	MSG_JOB_WAIT,		/* {jobId, timeoutMs}: answered when it ends
				   or the time is up */
	MSG_JOB_WAIT_OK,	/* {job: meta, timedOut} */
	MSG_JOB_CANCEL,		/* {jobId} */
	MSG_JOB_CANCEL_OK,	/* {} */
	MSG_WORKTREE_LIST,	/* {} (MC-2) */
	MSG_WORKTREE_LIST_OK,	/* {worktrees: [meta, ...]} */
	MSG_WORKTREE_REMOVE,	/* {id} */
	MSG_WORKTREE_REMOVE_OK, /* {} */

	/* the command gate's channels (SBX-6, SBX-8): spawner -> gated */
	MSG_GATE_OPEN = 120, /* {runId, agent, workspace, commands, protect,
				links?}
				+ the run's gate socket (the receiving end) */
	MSG_GATE_RELAY,	     /* {runId} + the run's relay socket: calls by
				GATE_FIFO_DIR, as read, with a reply socket */
	MSG_GATE_CLOSE,	     /* one-way {runId}: the run ended */
	MSG_GATE_SCRUB,	     /* gated -> spawner: {runId, text}, a held
				call's cleaned line (SP-11) */
	MSG_GATE_SCRUB_OK,   /* {text}, scrubbed with the run's keys */

	MSG_TYPE_MAX
};

const char *msg_name(unsigned int type);

#endif
