/*
 * A chat run's sink (API-3, API-4): its events streamed to the broker
 * channel its MSG_RUN_START came on, at most RUN_WINDOW bytes of text
 * ahead of the broker's credits; its start and a refusal answered to
 * that request.  A new broker channel has no reader for it: the run is
 * cancelled.  Touches nothing: it sends.
 */
#include <stdlib.h>

#include <json-c/json.h>

#include "msg.h"
#include "run.h"
#include "spawner.h"

struct run_stream {
	struct ipc_conn *st_conn; /* the broker channel */
	unsigned int st_gen;
	struct ipc_msg st_req; /* the MSG_RUN_START, answered after the ack */
	uint64_t st_unacked;   /* text sent, not yet credited by the broker */
};

/* Answered with the run's id. */
static void
stream_started(struct run *r, void *arg)
{
	struct run_stream *st = arg;
	struct json_object *o;

	if (!spawner_broker_ok(st->st_conn, st->st_gen))
		return;
	o = json_object_new_object();
	json_object_object_add(o, "runId", json_object_new_string(r->r_id));
	ipc_reply(st->st_conn, &st->st_req, MSG_RUN_START_OK, o, -1);
	json_object_put(o);
}

/* One event to the broker; a lost broker means nobody listens: cancel. */
static void
stream_event(struct run *r, void *arg, struct json_object *o)
{
	struct run_stream *st = arg;

	json_object_object_add(o, "runId", json_object_new_string(r->r_id));
	if (!spawner_broker_ok(st->st_conn, st->st_gen) ||
	    ipc_send(st->st_conn, MSG_RUN_EVENT, o, -1) == -1) {
		if (r->r_state == RS_RUNNING)
			aproc_stop(
			    &r->r_proc, AP_END_CANCEL, LIM_CANCEL_GRACE_MS);
	}
	json_object_put(o);
}

static void
stream_text(struct run *r, void *arg, size_t len)
{
	struct run_stream *st = arg;

	st->st_unacked += len;
}

/* Flow control: at most a window of text ahead of the broker. */
static int
stream_behind(const struct run *r, void *arg)
{
	const struct run_stream *st = arg;

	return st->st_unacked > RUN_WINDOW;
}

/* The broker relayed bytes of the run's text: widen its window again. */
static void
stream_credit(struct run *r, void *arg, struct ipc_conn *c, long long bytes)
{
	struct run_stream *st = arg;

	if (st->st_conn != c)
		return;
	st->st_unacked -=
	    (uint64_t)bytes < st->st_unacked ? (uint64_t)bytes : st->st_unacked;
	if (r->r_state == RS_RUNNING && st->st_unacked <= RUN_WINDOW / 2)
		aproc_resume(&r->r_proc);
}

static int
stream_listening(const struct run *r, void *arg)
{
	const struct run_stream *st = arg;

	return spawner_broker_ok(st->st_conn, st->st_gen);
}

static void
stream_refused(struct run *r, void *arg, const char *code)
{
	struct run_stream *st = arg;

	if (spawner_broker_ok(st->st_conn, st->st_gen))
		run_reply_error(st->st_conn, &st->st_req, r, code);
}

static void
stream_free(struct run *r, void *arg)
{
	free(arg);
}

static const struct run_sink_ops stream_ops = {
    .rs_started = stream_started,
    .rs_event = stream_event,
    .rs_text = stream_text,
    .rs_behind = stream_behind,
    .rs_credit = stream_credit,
    .rs_listening = stream_listening,
    .rs_refused = stream_refused,
    .rs_free = stream_free,
    .rs_events = 1,
    .rs_note = 1,
    .rs_by_id = 1,
};

int
run_stream_open(struct run *r, struct ipc_conn *c, const struct ipc_msg *m)
{
	struct run_stream *st;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	spawner_req_keep(c, m, &st->st_conn, &st->st_gen, &st->st_req);
	r->r_sink = &stream_ops;
	r->r_sink_arg = st;
	return 0;
}
