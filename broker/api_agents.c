/*
 * API-2 ... API-5: agents, chat runs, cancel and Control Room actions,
 * asked of the spawner.  A run answers application/x-ndjson, one event
 * object per line, relayed from the spawner's MSG_RUN_EVENT frames; the
 * client going away cancels the run.  Sees no secret value (only names
 * and hasKey flags).  Touches no files.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <json-c/json.h>

#include "argv.h"
#include "broker.h"
#include "schema.h"
#include "json.h"
#include "cordon_limits.h"
#include "log.h"
#include "manifest.h"
#include "msg.h"
#include "util.h"

#define AGENTS_ACTION_WAIT_S 65 /* longest action (60 s) + margin */
#define AGENTS_STREAM_IDLE_S 3600
#define AGENTS_CLIENT_MAX    (1024 * 1024) /* unsent bytes to a client */
/*
 * PER-8: unsent bytes past which a stream's client counts as gone.  Text
 * waits for credits (AGENTS_CLIENT_MAX, RUN_WINDOW), but a run's other
 * events (its egress connections, its tools) do not: an agent making
 * them faster than its client takes them must not grow our buffer.
 */
#define AGENTS_CLIENT_CUT (4 * AGENTS_CLIENT_MAX)

/* One NDJSON stream to a client. */
struct stream {
	char s_id[17];
	struct evhttp_request *s_req; /* NULL once the client went away */
	struct evhttp_connection *s_evcon;
	struct ipc_conn *s_spawner; /* the channel the run lives on */
	uint64_t s_credit;	    /* relayed text not yet credited */
	size_t s_bytes;		    /* NDJSON bytes sent, for http.request */
	int s_cut;		    /* too far behind: cut, its run cancelled */
	struct evbuffer *s_out;	    /* lines not yet handed to evhttp */
	struct event *s_flush;	    /* hands them over */
	LIST_ENTRY(stream) s_entry;
};

static LIST_HEAD(, stream) streams = LIST_HEAD_INITIALIZER(streams);
static struct event *streams_watch, *credits_timer;

static void credits_cb(evutil_socket_t, short, void *);

#define AGENTS_REASON_MAX 512 /* SPAWNER_REASON_MAX */

/* A spawner (or our own) error code -> HTTP status, fixed set. */
static int
agents_status(const char *code)
{
	static const struct {
		const char *c;
		int s;
	} map[] = {
	    {"unknown-agent", 404},
	    {"unknown-action", 404},
	    {"unknown-run", 404},
	    {"invalid-prompt", 400},
	    {"prompt-flag-like", 400},
	    {"invalid-session", 400},
	    {"invalid-argument", 400},
	    {"busy", 429},
	    {"missing-secret", 409},
	    {"spawn-failed", 502},
	    {"audit-unavailable", 503},
	    {"jobs-unavailable", 503},
	    {"worktree-refused", 400},
	    {"worktree-failed", 500},
	};
	size_t i;

	for (i = 0; i < nitems(map); i++)
		if (strcmp(map[i].c, code) == 0)
			return map[i].s;
	return 0;
}

/* Answer a daemon's MSG_ERROR (or no answer) with a fixed code. */
void
agents_fail(struct evhttp_request *req, const struct ipc_msg *m)
{
	const char *code = NULL, *reason;
	struct json_object *o;
	int st;

	if (m != NULL && m->m_type == MSG_ERROR)
		code = json_get_str(m->m_obj, "error", 32);
	/*
	 * SP-12: the spawner's reason (fixed phrases it built from known
	 * values: which PATH, which path, which sandbox layer), beside the
	 * code; never stderr.
	 */
	if (code != NULL && (st = agents_status(code)) != 0 &&
	    (reason = json_get_str(m->m_obj, "reason", AGENTS_REASON_MAX)) !=
		NULL) {
		o = json_object_new_object();
		json_object_object_add(o, "ok", json_object_new_boolean(0));
		json_object_object_add(
		    o, "error", json_object_new_string(code));
		json_object_object_add(
		    o, "reason", json_object_new_string(reason));
		send_json(req, st, o);
		json_object_put(o);
	} else if (code != NULL && (st = agents_status(code)) != 0)
		send_error(req, st, code);
	else if (m == NULL)
		send_error(req, 503, "unavailable");
	else
		send_error(req, 500, "internal");
}

/*
 * A path parameter decoded once and checked against a name shape
 * (^[a-z0-9][a-z0-9-]{0,max-1}$ or 16 lowercase hex when hex).
 */
static int
agents_param(const struct api_params *p, size_t i, size_t max, int hex,
    char *out, size_t outsz)
{
	char raw[API_PARAM_MAX + 1], *dec;
	size_t len;
	int ok;

	if (i >= p->ap_n || p->ap_len[i] > API_PARAM_MAX)
		return -1;
	memcpy(raw, p->ap_val[i], p->ap_len[i]);
	raw[p->ap_len[i]] = '\0';
	if ((dec = evhttp_uridecode(raw, 0, &len)) == NULL)
		return -1;
	ok = len <= max && len < outsz && strlen(dec) == len &&
	     (hex ? hex_lower_n(dec, 16) : mp_name_ok(dec, max));
	if (ok)
		memcpy(out, dec, len + 1);
	free(dec);
	return ok ? 0 : -1;
}

/* ---- API-2 ---- */

/* The spawner's answer of type as {ok: true, key: its key}, else
 * agents_fail. */
static void
agents_relay(struct ipc_msg *m, void *arg, uint32_t type, const char *key)
{
	struct evhttp_request *req = api_release(arg);
	struct json_object *o, *v;

	if (req == NULL)
		return;
	if (m == NULL || m->m_type != type ||
	    !json_object_object_get_ex(m->m_obj, key, &v)) {
		agents_fail(req, m);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, key, json_object_get(v));
	send_json(req, 200, o);
	json_object_put(o);
}

static void
agents_list_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	agents_relay(m, arg, MSG_AGENT_LIST_OK, "agents");
}

void
api_agents_list(struct evhttp_request *req, const struct api_params *p)
{
	api_ask(req, broker_peer(PROC_SPAWNER), MSG_AGENT_LIST, NULL,
	    MSG_AGENT_LIST_OK, agents_list_cb);
}

static void
agent_get_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	agents_relay(m, arg, MSG_AGENT_GET_OK, "agent");
}

void
api_agent_get(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *o;
	char name[LIM_NAME_MAX + 1];

	if (agents_param(p, 0, LIM_NAME_MAX, 0, name, sizeof(name)) == -1) {
		send_error(req, 404, "unknown-agent");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(name));
	api_ask(req, broker_peer(PROC_SPAWNER), MSG_AGENT_GET, o,
	    MSG_AGENT_GET_OK, agent_get_cb);
	json_object_put(o);
}

/* ---- API-3: the NDJSON stream ---- */

static struct stream *
stream_find(const char *id)
{
	struct stream *s;

	LIST_FOREACH (s, &streams, s_entry)
		if (strcmp(s->s_id, id) == 0)
			return s;
	return NULL;
}

/* What stream_line gathered goes to the client as one chunk. */
static void
stream_flush(struct stream *s)
{
	if (s->s_req != NULL && evbuffer_get_length(s->s_out) > 0)
		evhttp_send_reply_chunk(s->s_req, s->s_out);
	evbuffer_drain(s->s_out, evbuffer_get_length(s->s_out));
}

static void
stream_flush_cb(evutil_socket_t fd, short ev, void *arg)
{
	stream_flush(arg);
}

/*
 * One NDJSON line, sent once the events at hand are all read: a chunk
 * per line would cost its client's buffer a whole allocation per line,
 * many times its bytes (PER-8).
 */
static void
stream_line(struct stream *s, struct json_object *o)
{
	const char *t;
	size_t len;

	if (s->s_req == NULL || s->s_cut)
		return;
	t = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	evbuffer_add(s->s_out, t, len);
	evbuffer_add(s->s_out, "\n", 1);
	s->s_bytes += len + 1;
	event_active(s->s_flush, EV_TIMEOUT, 0);
}

static void
stream_free(struct stream *s)
{
	if (s->s_req != NULL) {
		if (!s->s_cut)
			stream_flush(s);
		if (s->s_evcon != NULL)
			evhttp_connection_set_closecb(s->s_evcon, NULL, NULL);
		reqlog_end(s->s_req, 200, s->s_bytes);
		evhttp_send_reply_end(s->s_req);
	}
	LIST_REMOVE(s, s_entry);
	event_free(s->s_flush);
	evbuffer_free(s->s_out);
	free(s);
	if (LIST_EMPTY(&streams) && streams_watch != NULL)
		event_del(streams_watch);
}

static void
cancel_sent_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
}

/* The last runs we cancelled: their remaining events ask for nothing. */
#define CANCELLED_KEEP 32
static char cancelled[CANCELLED_KEEP][17];
static unsigned ncancelled;

static int
cancelled_already(const char *id)
{
	unsigned i;

	for (i = 0; i < CANCELLED_KEEP; i++)
		if (strcmp(cancelled[i], id) == 0)
			return 1;
	return 0;
}

static void
stream_cancel(const char *id)
{
	struct json_object *o = json_object_new_object();
	struct timeval tv = {3, 0};
	struct ipc_conn *sc = broker_peer(PROC_SPAWNER);

	snprintf(cancelled[ncancelled++ % CANCELLED_KEEP], sizeof(cancelled[0]),
	    "%s", id);
	json_object_object_add(o, "runId", json_object_new_string(id));
	if (sc != NULL)
		ipc_request(sc, MSG_RUN_CANCEL, o, -1, MSG_RUN_CANCEL_OK, &tv,
		    cancel_sent_cb, NULL);
	json_object_put(o);
}

/* API-3: the client went away: the run is cancelled. */
static void
stream_gone(struct evhttp_connection *evcon, void *arg)
{
	struct stream *s = arg;

	if (s->s_req != NULL)
		reqlog_gone(s->s_req);
	s->s_req = NULL;
	s->s_evcon = NULL;
	if (!s->s_cut)
		stream_cancel(s->s_id);
	stream_free(s);
}

/*
 * PER-8: the client is AGENTS_CLIENT_CUT behind: taken as gone.  Its
 * run is cancelled, nothing more is queued for it, and its socket is
 * shut down, so evhttp drops what it holds and calls stream_gone.
 */
static void
stream_cut(struct stream *s)
{
	struct bufferevent *bev;
	int fd;

	log_warnx("a run's client fell too far behind: run cancelled");
	s->s_cut = 1;
	stream_cancel(s->s_id);
	if (s->s_evcon != NULL &&
	    (bev = evhttp_connection_get_bufferevent(s->s_evcon)) != NULL &&
	    (fd = bufferevent_getfd(bev)) != -1)
		shutdown(fd, SHUT_RDWR);
}

/* A lost spawner channel ends every stream it carried, honestly. */
static void
streams_watch_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct stream *s, *next;
	struct json_object *o;

	for (s = LIST_FIRST(&streams); s != NULL; s = next) {
		next = LIST_NEXT(s, s_entry);
		if (broker_peer(PROC_SPAWNER) == s->s_spawner)
			continue;
		o = json_object_new_object();
		json_object_object_add(
		    o, "kind", json_object_new_string("error"));
		json_object_object_add(
		    o, "errorClass", json_object_new_string("unknown"));
		json_object_object_add(o, "errorMessage",
		    json_object_new_string("The agent failed."));
		stream_line(s, o);
		json_object_put(o);
		o = json_object_new_object();
		json_object_object_add(
		    o, "kind", json_object_new_string("done"));
		json_object_object_add(o, "exitCode", json_object_new_int(-1));
		json_object_object_add(o, "durationMs", json_object_new_int(0));
		json_object_object_add(
		    o, "truncated", json_object_new_boolean(0));
		stream_line(s, o);
		json_object_put(o);
		stream_free(s);
	}
}

/* PER-6 headers on a streamed answer (send_json sets them otherwise). */
static void
stream_headers(struct evhttp_request *req)
{
	set_common_headers(req, CSP_NONE);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/x-ndjson");
}

static void
run_started_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct evhttp_request *req = api_release(arg);
	struct timeval tv = {1, 0};
	struct json_object *o;
	struct stream *s;
	const char *id;

	if (m != NULL && m->m_type == MSG_RUN_START_OK &&
	    (id = json_get_str(m->m_obj, "runId", 16)) != NULL &&
	    strlen(id) == 16) {
		if (req == NULL) { /* gone while the run was being started */
			stream_cancel(id);
			return;
		}
		if ((s = calloc(1, sizeof(*s))) == NULL ||
		    (s->s_out = evbuffer_new()) == NULL ||
		    (s->s_flush = event_new(broker.b_d.d_base, -1, 0,
			 stream_flush_cb, s)) == NULL) {
			if (s != NULL && s->s_out != NULL)
				evbuffer_free(s->s_out);
			free(s);
			stream_cancel(id);
			send_error(req, 500, "internal");
			return;
		}
		memcpy(s->s_id, id, 17);
		s->s_req = req;
		s->s_evcon = evhttp_request_get_connection(req);
		s->s_spawner = c;
		LIST_INSERT_HEAD(&streams, s, s_entry);
		if (streams_watch == NULL)
			streams_watch = event_new(broker.b_d.d_base, -1,
			    EV_PERSIST, streams_watch_cb, NULL);
		if (credits_timer == NULL)
			credits_timer =
			    evtimer_new(broker.b_d.d_base, credits_cb, NULL);
		if (streams_watch != NULL)
			event_add(streams_watch, &tv);
		if (s->s_evcon != NULL) {
			/* A quiet agent is not an idle connection. */
			evhttp_connection_set_timeout(
			    s->s_evcon, AGENTS_STREAM_IDLE_S);
			evhttp_connection_set_closecb(
			    s->s_evcon, stream_gone, s);
		}
		stream_headers(req);
		evhttp_send_reply_start(req, 200, "OK");
		o = json_object_new_object();
		json_object_object_add(
		    o, "kind", json_object_new_string("start"));
		json_object_object_add(o, "runId", json_object_new_string(id));
		stream_line(s, o);
		json_object_put(o);
		return;
	}
	if (req != NULL)
		agents_fail(req, m);
}

/* MC-1: the caller's self-description, for the audit trail only. */
static int
via_ok(const char *s, size_t len)
{
	return len == 3 && memcmp(s, "mcp", 3) == 0;
}

/* MC-2: an absolute path, checked by the spawner against roots. */
static int
worktree_ok(const char *s, size_t len)
{
	return len > 0 && s[0] == '/';
}

static int
session_ok(const char *s, size_t len)
{
	return schema_session_ok(s);
}

static int
prompt_ok(const char *s, size_t len)
{
	return argv_prompt_ok(s, len) == 0;
}

/*
 * PER-8: {prompt, session?, via?, worktree?} only, each refused with its
 * own code, in this order.
 */
static const struct json_shape run_shape[] = {
    JS_STR("via", JS_OPT, 0, 8),
    JS_STR("worktree", JS_OPT, 0, LIM_PATH_MAX),
    JS_STR("session", JS_OPT, 0, LIM_SESSION_MAX),
    JS_STR("prompt", JS_REQ, 0, LLONG_MAX),
};
static const struct api_body_key run_keys[] = {
    {"invalid-body", via_ok},
    {"invalid-worktree", worktree_ok},
    {"invalid-session", session_ok},
    {"invalid-prompt", prompt_ok},
};
const struct api_body agents_run_body = {
    run_shape, run_keys, nitems(run_shape), "invalid-body", 0};

int
agents_run_payload(struct evhttp_request *req, const struct api_params *p,
    struct json_object **out)
{
	static const char *const keys[] = {
	    "prompt", "session", "via", "worktree"};
	struct json_object *v, *o;
	char name[LIM_NAME_MAX + 1];
	size_t i;

	if (agents_param(p, 0, LIM_NAME_MAX, 0, name, sizeof(name)) == -1) {
		send_error(req, 404, "unknown-agent");
		return -1;
	}
	if (api_body_ok(req, p) == -1)
		return -1;
	o = json_object_new_object();
	json_object_object_add(o, "agent", json_object_new_string(name));
	for (i = 0; i < nitems(keys); i++)
		if (json_object_object_get_ex(p->ap_body, keys[i], &v))
			json_object_object_add(o, keys[i], json_object_get(v));
	*out = o;
	return 0;
}

/*
 * MC-2: a run with a worktree is answered as soon as it is admitted, its
 * checkout still to come: a failed checkout is the stream's error event,
 * and a cancel (or the client leaving) during it ends the run.
 */
void
agents_ask_start(struct evhttp_request *req, struct json_object *o,
    uint32_t type, uint32_t reply_type, ipc_reply_fn cb)
{
	api_ask(req, broker_peer(PROC_SPAWNER), type, o, reply_type, cb);
	json_object_put(o);
}

void
api_agent_run(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *o;

	if (agents_run_payload(req, p, &o) == -1)
		return;
	agents_ask_start(
	    req, o, MSG_RUN_START, MSG_RUN_START_OK, run_started_cb);
}

/*
 * Flow control: the spawner keeps at most a window of text ahead of our
 * credits, and we credit only what a client is taking, so a slow client
 * slows its agent instead of growing anyone's buffers.
 */
static size_t
stream_unsent(struct stream *s)
{
	struct bufferevent *bev;

	if (s->s_evcon == NULL ||
	    (bev = evhttp_connection_get_bufferevent(s->s_evcon)) == NULL)
		return 0;
	return evbuffer_get_length(bufferevent_get_output(bev)) +
	       evbuffer_get_length(s->s_out);
}

static int
stream_client_slow(struct stream *s)
{
	return stream_unsent(s) > AGENTS_CLIENT_MAX;
}

static void
stream_credit(struct stream *s)
{
	struct timeval tv = {0, 10 * 1000};
	struct json_object *o;

	if (s->s_credit == 0 || s->s_cut ||
	    s->s_spawner != broker_peer(PROC_SPAWNER))
		return;
	if (stream_client_slow(s)) {
		if (credits_timer != NULL)
			evtimer_add(credits_timer, &tv);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "runId", json_object_new_string(s->s_id));
	json_object_object_add(
	    o, "bytes", json_object_new_int64((int64_t)s->s_credit));
	if (ipc_send(s->s_spawner, MSG_RUN_CREDIT, o, -1) == 0)
		s->s_credit = 0;
	json_object_put(o);
}

static void
credits_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct stream *s;

	LIST_FOREACH (s, &streams, s_entry)
		stream_credit(s);
}

/* MSG_RUN_EVENT from the spawner: one NDJSON line to the client. */
void
agents_run_event_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o = m->m_obj, *v;
	struct stream *s;
	const char *id, *kind;
	int end = 0;

	id = json_shape_str(o, "runId", NULL);
	kind = json_shape_str(o, "kind", NULL);
	if ((s = stream_find(id)) == NULL || s->s_spawner != c) {
		/*
		 * No client for it: one who left (cancelled already), or a
		 * run whose start was answered after we had given the
		 * client 503.  Nobody can see or cancel that one: we do.
		 */
		if (s == NULL && strcmp(kind, "done") != 0 &&
		    strcmp(kind, "saved") != 0 &&
		    strcmp(kind, "unsaved") != 0 && !cancelled_already(id)) {
			log_warnx("a run nobody waits for: cancelled");
			stream_cancel(id);
		}
		return;
	}
	json_object_object_del(o, "runId");
	if (!s->s_cut && stream_unsent(s) > AGENTS_CLIENT_CUT)
		stream_cut(s);
	if (strcmp(kind, "unsaved") == 0) {
		stream_free(s);
		return;
	}
	if (strcmp(kind, "done") == 0) {
		end = !json_object_object_get_ex(o, "pending", &v) ||
		      !json_object_get_boolean(v);
		json_object_object_del(o, "pending");
	} else if (strcmp(kind, "saved") == 0)
		end = 1;
	else if (strcmp(kind, "token") == 0 &&
		 json_object_object_get_ex(o, "text", &v) &&
		 json_object_is_type(v, json_type_string))
		s->s_credit += (uint64_t)json_object_get_string_len(v);
	stream_line(s, o);
	if (end)
		stream_free(s);
	else
		stream_credit(s);
}

/* ---- API-4 ---- */

static void
run_cancel_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct evhttp_request *req = api_release(arg);
	struct json_object *o;

	if (req == NULL)
		return;
	if (m == NULL || m->m_type != MSG_RUN_CANCEL_OK) {
		agents_fail(req, m);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	send_json(req, 200, o);
	json_object_put(o);
}

void
api_run_cancel(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *o;
	char id[17];

	if (api_body_ok(req, p) == -1) /* PER-8: no body, or an empty one */
		return;
	if (agents_param(p, 0, 16, 1, id, sizeof(id)) == -1) {
		send_error(req, 404, "unknown-run");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "runId", json_object_new_string(id));
	api_ask(req, broker_peer(PROC_SPAWNER), MSG_RUN_CANCEL, o,
	    MSG_RUN_CANCEL_OK, run_cancel_cb);
	json_object_put(o);
}

/* ---- API-5 ---- */

/*
 * Actions may take up to 60 s, longer than api_ask's bound: this waits
 * AGENTS_ACTION_WAIT_S and drops the answer if the client left.
 */
static void
action_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct evhttp_request *req = api_release(arg);
	struct json_object *v;

	if (req == NULL)
		return;
	if (m == NULL || m->m_type != MSG_ACTION_RUN_OK ||
	    !json_object_object_get_ex(m->m_obj, "ok", &v) ||
	    !json_object_is_type(v, json_type_boolean)) {
		agents_fail(req, m);
		return;
	}
	/* Fail-soft: HTTP 200 either way (API-5). */
	send_json(req, 200, m->m_obj);
}

void
api_agent_action(struct evhttp_request *req, const struct api_params *p)
{
	char name[LIM_NAME_MAX + 1], act[LIM_ACTION_ID_MAX + 1];
	struct ipc_conn *sc = broker_peer(PROC_SPAWNER);
	struct json_object *o;

	if (agents_param(p, 0, LIM_NAME_MAX, 0, name, sizeof(name)) == -1) {
		send_error(req, 404, "unknown-agent");
		return;
	}
	if (agents_param(p, 1, LIM_ACTION_ID_MAX, 0, act, sizeof(act)) == -1) {
		send_error(req, 404, "unknown-action");
		return;
	}
	/* An action takes no input. */
	if (api_body_ok(req, p) == -1)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "agent", json_object_new_string(name));
	json_object_object_add(o, "action", json_object_new_string(act));
	api_ask_wait(req, sc, MSG_ACTION_RUN, o, MSG_ACTION_RUN_OK,
	    AGENTS_ACTION_WAIT_S, action_cb);
	json_object_put(o);
}
