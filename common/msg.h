/*
 * The wire catalogue: every message type that crosses a cordon channel.
 * Defined once, here.  Requests and their single accepted reply are
 * paired by name (MSG_X / MSG_X_OK); any request may instead be answered
 * by MSG_ERROR {"error": "<code>"} with a code from a fixed set.
 */
#ifndef CORDON_MSG_H
#define CORDON_MSG_H

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
	MSG_BROKER_CONFIG = 20, /* {token, loginCode, port, origins[]} + fd */
	/* broker -> parent */
	MSG_LOGIN_USED,	   /* {}; the one-time login code was spent */
	MSG_LOGIN_USED_OK, /* {}; cordond will not hand it out again */
	MSG_HEALTH,	   /* {} */
	MSG_HEALTH_OK,	   /* {daemons: [...]} */

	/* anyone -> auditd */
	MSG_AUDIT_RECORD = 30, /* {kind, ...fields} */
	MSG_AUDIT_RECORD_OK,   /* {seq} */

	MSG_TYPE_MAX
};

const char *msg_name(unsigned int type);

#endif
