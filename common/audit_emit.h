/*
 * The one way a daemon hands a record to auditd (AU-2, AU-6): a request
 * on its auditd channel with one bounded wait, acknowledged once the
 * record is on disk.  The record's shape is checked by auditd against
 * common/audit_schema.c; senders build it, this sends it.
 */
#ifndef CORDON_AUDIT_EMIT_H
#define CORDON_AUDIT_EMIT_H

#include "ipc.h"

/*
 * The one bound on auditd's acknowledgement.  A record that is not
 * acknowledged in time is still on its way (a late reply is dropped by
 * the codec): a sender that does not wait on it only logs; a sender
 * that does (the spawner's runs, cordond's system.*) treats it as not
 * recorded.  A caller whose own answer has a tighter or looser budget
 * passes it to audit_emit_within(), never a copy of the send.
 */
#define AUDIT_EMIT_WAIT_S 2

/*
 * Send rec (not consumed) on the auditd channel a (NULL: auditd is down,
 * -1).  cb gets the reply, or NULL on no answer in time; a NULL cb makes
 * the record one the sender does not wait on: a missing acknowledgement
 * is then only logged.  0, or -1 when it could not be sent.
 */
int audit_emit(
    struct ipc_conn *a, struct json_object *rec, ipc_reply_fn cb, void *arg);
/* audit_emit with a bound of wait_s seconds instead of AUDIT_EMIT_WAIT_S. */
int audit_emit_within(struct ipc_conn *a, struct json_object *rec, int wait_s,
    ipc_reply_fn cb, void *arg);
/* 1 if the reply acknowledges the record. */
int audit_emit_acked(const struct ipc_msg *);

#endif
