/*
 * libFuzzer target for common/ipc.c's receive path: arbitrary bytes fed
 * to a feed-only conn (fd -1) in two pieces split at a data-derived point
 * must never crash, leak or hang, whatever the frames and the dispatch
 * table make of them.  Handlers touch the decoded object as a daemon would.
 * The same bytes also go through the one-datagram decoder (the gate
 * channel's codec).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "ipc.h"
#include "msg.h"
#include "proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static volatile size_t sink;
static int freed; /* a handler freed the conn */

static void
touch(struct json_object *o)
{
	struct json_object_iterator it, end;
	struct json_object *v;

	it = json_object_iter_begin(o);
	end = json_object_iter_end(o);
	while (!json_object_iter_equal(&it, &end)) {
		sink += strlen(json_object_iter_peek_name(&it));
		v = json_object_iter_peek_value(&it);
		sink += (size_t)json_object_get_type(v);
		json_object_iter_next(&it);
	}
}

static void
h_status(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	(void)arg;
	touch(m->m_obj);
	if (m->m_id != 0)
		(void)ipc_reply(c, m, MSG_STATUS_OK, m->m_obj, -1);
}

static void
h_audit(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *v;
	const char *s;

	(void)arg;
	if (json_object_object_get_ex(m->m_obj, "kind", &v) &&
	    json_object_is_type(v, json_type_string) &&
	    (s = json_object_get_string(v)) != NULL) {
		sink += strlen(s);
		if (strcmp(s, "bye") == 0) {
			freed = 1;
			ipc_conn_free(c); /* from inside a handler */
			return;
		}
	}
	if (m->m_id != 0)
		(void)ipc_reply_error(c, m, "bad-message");
}

static void
h_peerfd(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *v;

	(void)c;
	(void)arg;
	if (json_object_object_get_ex(m->m_obj, "peer", &v))
		sink += (size_t)proc_lookup(json_object_get_string(v)) + 1;
}

/* Shapes as the daemons declare them: a tagged one, a keyed one, {}. */
static const struct json_shape audit_shape[] = {
    JS_STR("kind", JS_REQ, 1, 32),
    JS_REST,
};
static const struct json_shape peer_shape[] = {
    JS_STR("peer", JS_REQ, 1, 16),
};

static const struct ipc_dispatch table[] = {
    {MSG_STATUS, PROC_BIT(PROC_PARENT), 2, 4096, IPC_FD_NONE, h_status,
	IPC_EMPTY},
    {MSG_AUDIT_RECORD, PROC_BIT(PROC_PARENT) | PROC_BIT(PROC_BROKER), 8, 65536,
	IPC_FD_NONE, h_audit, IPC_KEYS(audit_shape)},
    {MSG_PEER_FD, PROC_BIT(PROC_PARENT), 2, 256, IPC_FD_REQUIRED, h_peerfd,
	IPC_KEYS(peer_shape)},
    IPC_END,
};

static void
on_reply(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	(void)c;
	(void)arg;
	if (m != NULL)
		touch(m->m_obj);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct event_base *base;
	struct json_object *o;
	struct ipc_conn *c;
	struct ipc_hdr h;
	size_t cut;

	if ((o = ipc_dgram_decode(data, len, &h)) != NULL) {
		if (h.len != len - IPC_HDR_LEN)
			abort();
		touch(o);
		json_object_put(o);
	}
	if (base == NULL && (base = event_base_new()) == NULL)
		abort();
	if ((c = ipc_conn_new(base, -1, PROC_PARENT, table, NULL, NULL)) ==
	    NULL)
		abort();
	/* Ids 1 and 2 are pending, so reply frames take every path. */
	(void)ipc_request(
	    c, MSG_STATUS, NULL, -1, MSG_STATUS_OK, NULL, on_reply, NULL);
	(void)ipc_request(c, MSG_AUDIT_RECORD, NULL, -1, MSG_AUDIT_RECORD_OK,
	    NULL, on_reply, NULL);
	cut = len > 0 ? (size_t)data[len - 1] * len / 256 : 0;
	freed = 0;
	/* A dead conn takes more input (and refuses it) until it is freed. */
	if (ipc_conn_feed(c, data, cut, NULL, 0) == -1 && !freed &&
	    ipc_conn_feed(c, NULL, 0, NULL, 0) != -1)
		abort();
	if (!freed)
		(void)ipc_conn_feed(c, data + cut, len - cut, NULL, 0);
	if (!freed)
		ipc_conn_free(c);
	return 0;
}
