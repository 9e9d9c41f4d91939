/*
 * The one way a daemon hands a record to auditd (AU-2, AU-6): a request
 * on its auditd channel with one bounded wait, acknowledged once the
 * record is on disk.  The record's shape is checked by auditd against
 * common/audit_schema.c; senders build it, this sends it.
 */
#ifndef CORDON_AUDIT_EMIT_H
#define CORDON_AUDIT_EMIT_H

#include "ipc.h"

#define AUDIT_EMIT_WAIT_S 2 /* for auditd's acknowledgement */

/*
 * Send rec (not consumed) on the auditd channel a (NULL: auditd is down,
 * -1).  cb gets the reply, or NULL on no answer in time; a NULL cb makes
 * the record one the sender does not wait on: a missing acknowledgement
 * is then only logged.  0, or -1 when it could not be sent.
 */
int audit_emit(
    struct ipc_conn *a, struct json_object *rec, ipc_reply_fn cb, void *arg);
/* 1 if the reply acknowledges the record. */
int audit_emit_acked(const struct ipc_msg *);

#endif
