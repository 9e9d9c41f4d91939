/*
 * http.request audit records (PER-10): method, route template, status,
 * durationMs, bytesIn, bytesOut — never a body, header, query or path
 * parameter.  Polling reads that succeed are not recorded (they would
 * bury everything else); every API change and every refusal is, under a
 * rate bound so a flood of bad requests cannot fill the audit disk.
 */
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <json-c/json.h>

#include "audit_emit.h"
#include "broker.h"
#include "log.h"
#include "msg.h"
#include "util.h"

#define REQLOG_SLOTS (BROKER_NOFILE + 16) /* in-flight requests */
#define REQLOG_RATE  20			  /* records per second */
#define REQLOG_BURST 100

struct reqlog_slot {
	const struct evhttp_request *rs_req;
	uint64_t rs_start;
};

static struct reqlog_slot reqlog_slots[REQLOG_SLOTS];
static struct rate reqlog_rate;
static unsigned long reqlog_dropped;
static uint64_t reqlog_warned;

void
reqlog_start(const struct evhttp_request *req)
{
	size_t i;

	for (i = 0; i < REQLOG_SLOTS; i++)
		if (reqlog_slots[i].rs_req == NULL) {
			reqlog_slots[i].rs_req = req;
			reqlog_slots[i].rs_start = now_ms_mono();
			return;
		}
}

static uint64_t
reqlog_take(const struct evhttp_request *req)
{
	uint64_t now = now_ms_mono(), start = now;
	size_t i;

	for (i = 0; i < REQLOG_SLOTS; i++)
		if (reqlog_slots[i].rs_req == req) {
			start = reqlog_slots[i].rs_start;
			reqlog_slots[i].rs_req = NULL;
			break;
		}
	return now - start;
}

/*
 * The client went away while we held req, before an answer: no record,
 * free the slot.  libevent has detached a request its user still owns
 * from the failed connection and left it to us: free it, or it leaks
 * with its headers and up to a 1 MiB body (a run stream closed early).
 * Called from a connection's close callback only.
 */
void
reqlog_gone(struct evhttp_request *req)
{
	(void)reqlog_take(req);
	if (evhttp_request_get_connection(req) == NULL)
		evhttp_request_free(req);
}

static const char *
reqlog_method(enum evhttp_cmd_type cmd)
{
	switch (cmd) {
	case EVHTTP_REQ_GET:
		return "GET";
	case EVHTTP_REQ_HEAD:
		return "HEAD";
	case EVHTTP_REQ_POST:
		return "POST";
	case EVHTTP_REQ_PUT:
		return "PUT";
	case EVHTTP_REQ_DELETE:
		return "DELETE";
	case EVHTTP_REQ_OPTIONS:
		return "OPTIONS";
	case EVHTTP_REQ_PATCH:
		return "PATCH";
	case EVHTTP_REQ_TRACE:
		return "TRACE";
	case EVHTTP_REQ_CONNECT:
		return "CONNECT";
	default:
		return "OTHER";
	}
}

static int
reqlog_allow(void)
{
	uint64_t now;

	if (rate_take(&reqlog_rate, REQLOG_RATE, REQLOG_BURST))
		return 1;
	now = now_ms_mono();
	reqlog_dropped++;
	if (now - reqlog_warned >= 60000) {
		log_warnx("http.request records over %d/s: %lu not recorded",
		    REQLOG_RATE, reqlog_dropped);
		reqlog_warned = now;
	}
	return 0;
}

/* A busy auditd may answer late: only worth a debug line per request. */
static void
reqlog_ack_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	if (!audit_emit_acked(m))
		log_debug("http.request record not acknowledged");
}

static void
reqlog_send(const char *method, const char *route, int status, uint64_t ms,
    size_t bytes_in, size_t bytes_out)
{
	struct ipc_conn *ad = broker_peer(PROC_AUDITD);
	struct json_object *o;

	if (ad == NULL || !reqlog_allow())
		return;
	o = json_object_new_object();
	json_object_object_add(
	    o, "kind", json_object_new_string("http.request"));
	json_object_object_add(o, "method", json_object_new_string(method));
	json_object_object_add(o, "route", json_object_new_string(route));
	json_object_object_add(o, "status", json_object_new_int(status));
	json_object_object_add(
	    o, "durationMs", json_object_new_int64((int64_t)ms));
	json_object_object_add(
	    o, "bytesIn", json_object_new_int64((int64_t)bytes_in));
	json_object_object_add(
	    o, "bytesOut", json_object_new_int64((int64_t)bytes_out));
	if (audit_emit(ad, o, reqlog_ack_cb, NULL) == -1)
		log_debug("http.request record not sent");
	json_object_put(o);
}

void
reqlog_end(struct evhttp_request *req, int status, size_t bytes_out)
{
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const char *route = front_route_of(req);
	uint64_t ms = reqlog_take(req);

	/* Successful polling reads are not worth a record each. */
	if (status < 400 && (cmd == EVHTTP_REQ_GET || cmd == EVHTTP_REQ_HEAD) &&
	    (strcmp(route, "/api/health") == 0 ||
		strcmp(route, "/api/audit") == 0 ||
		strcmp(route, "/api/agents") == 0 ||
		strcmp(route, "/api/approvals") == 0 ||
		strcmp(route, "/ui") == 0 ||
		strcmp(route, "/favicon.ico") == 0))
		return; /* but a login (/ui/login) always: it makes a session */
	reqlog_send(reqlog_method(cmd), route, status, ms,
	    evbuffer_get_length(evhttp_request_get_input_buffer(req)),
	    bytes_out);
}

/*
 * A request evhttp's own parser refused (conns.c): its method and route
 * are unknown, so "OTHER" and "other"; what it sent is not counted.
 */
void
reqlog_refused(int status, size_t bytes_out)
{
	reqlog_send("OTHER", "other", status, 0, 0, bytes_out);
}
