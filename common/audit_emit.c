/*
 * audit_emit: the shared send of an audit record to auditd.  Touches
 * nothing but the channel it is given.
 */
#include <sys/time.h>

#include "audit_emit.h"
#include "log.h"
#include "msg.h"

int
audit_emit_acked(const struct ipc_msg *m)
{
	return m != NULL && m->m_type == MSG_AUDIT_RECORD_OK;
}

static void
audit_emit_logged(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	if (!audit_emit_acked(m))
		log_warnx("audit record not acknowledged");
}

int
audit_emit_within(struct ipc_conn *a, struct json_object *rec, int wait_s,
    ipc_reply_fn cb, void *arg)
{
	struct timeval tv = {wait_s, 0};

	if (a == NULL)
		return -1;
	if (cb == NULL) {
		cb = audit_emit_logged;
		arg = NULL;
	}
	return ipc_request(
	    a, MSG_AUDIT_RECORD, rec, -1, MSG_AUDIT_RECORD_OK, &tv, cb, arg);
}

int
audit_emit(
    struct ipc_conn *a, struct json_object *rec, ipc_reply_fn cb, void *arg)
{
	return audit_emit_within(a, rec, AUDIT_EMIT_WAIT_S, cb, arg);
}
