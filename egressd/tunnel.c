/*
 * One proxy connection (EG-2, EG-4): accepted on a run's listener, its
 * head read within EGRESS_HEAD_SEC and EGRESS_HEAD_MAX, parsed by
 * policy/egress_req.c, matched against the run's allowlist, resolved by
 * evdns, every address checked against the refused classes, connected,
 * then spliced both ways with backpressure; a side's EOF ends one
 * direction (its half-close is passed on once what it sent is written)
 * and the tunnel ends when both have, or on an error, the idle timeout
 * or the run's byte budget.  Exactly one egress.connect
 * record per connection, written when it ends; the spawner hears of it
 * as it opens and as it ends (MSG_EGRESS_CONN), for the run view.  Touches only
 * the sockets it accepts and opens.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <json-c/json.h>

#include "audit_emit.h"
#include "egressd.h"
#include "log.h"
#include "msg.h"
#include "util.h"

static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";

static void tunnel_timer_cb(evutil_socket_t, short, void *);
static void cli_read_cb(struct bufferevent *, void *);
static void cli_write_cb(struct bufferevent *, void *);
static void cli_event_cb(struct bufferevent *, short, void *);
static void up_read_cb(struct bufferevent *, void *);
static void up_write_cb(struct bufferevent *, void *);
static void up_event_cb(struct bufferevent *, short, void *);
static void connect_next(struct tunnel *);

/* Big reads and writes: a 16 KiB default costs a loop pass per 16 KiB. */
static void
bev_tune(struct bufferevent *bev)
{
	(void)bufferevent_set_max_single_read(bev, EG_HIWAT);
	(void)bufferevent_set_max_single_write(bev, EG_HIWAT);
	bufferevent_setwatermark(bev, EV_WRITE, EG_HIWAT / 2, 0);
}

static void
arm(struct tunnel *t, long sec)
{
	struct timeval tv = {sec, 0};

	evtimer_add(t->t_timer, &tv);
}

/* EG-4: what happened (so far), never a header, a body or a key. */
static struct json_object *
tunnel_json(struct tunnel *t, int ended)
{
	struct erun *r = t->t_run;
	struct json_object *o = json_object_new_object();
	char rule[32];

	json_object_object_add(o, "runId", json_object_new_string(r->er_id));
	/* A name the allowlist does not list itself (unknown, or only
	 * under a wildcard) is the agent's text: never written (it may
	 * carry data), nor its port. */
	if (t->t_named) {
		json_object_object_add(
		    o, "host", json_object_new_string(t->t_req.rq_host));
		json_object_object_add(
		    o, "port", json_object_new_int((int)t->t_req.rq_port));
	}
	json_object_object_add(o, "decision",
	    json_object_new_string(t->t_why == ER_NONE ? "allow" : "deny"));
	if (t->t_why == ER_NONE && t->t_rule >= 0) {
		snprintf(rule, sizeof(rule), "allow.%d", t->t_rule);
		json_object_object_add(o, "rule", json_object_new_string(rule));
		if (ended)
			json_object_object_add(o, "end",
			    json_object_new_string(
				t->t_end ? t->t_end : "closed"));
	} else
		json_object_object_add(o, "reason",
		    json_object_new_string(egress_reason_name(t->t_why)));
	json_object_object_add(
	    o, "bytesUp", json_object_new_int64((int64_t)t->t_bytes_up));
	json_object_object_add(
	    o, "bytesDown", json_object_new_int64((int64_t)t->t_bytes_down));
	json_object_object_add(o, "durationMs",
	    json_object_new_int64((int64_t)(now_ms_mono() - t->t_start)));
	return o;
}

/* The same facts to the spawner, for the run view (MSG_EGRESS_CONN). */
static void
tunnel_notify(struct tunnel *t, struct json_object *o, const char *state)
{
	struct ipc_conn *c = eg.eg_d.d_peers[PROC_SPAWNER];

	json_object_object_add(
	    o, "conn", json_object_new_int64((int64_t)t->t_seq));
	json_object_object_add(o, "state", json_object_new_string(state));
	if (c != NULL)
		(void)ipc_send(c, MSG_EGRESS_CONN, o, -1);
}

/*
 * One egress.connect record as the connection ends (egress.request for a
 * routed request, EG-3); the run view too.
 */
static void
tunnel_record(struct tunnel *t)
{
	struct erun *r = t->t_run;
	struct json_object *o = tunnel_json(t, 1);

	json_object_object_add(o, "kind",
	    json_object_new_string(
		t->t_http ? "egress.request" : "egress.connect"));
	json_object_object_add(o, "agent", json_object_new_string(r->er_agent));
	if (t->t_http)
		route_record(t, o);
	if (audit_emit(eg.eg_d.d_peers[PROC_AUDITD], o, NULL, NULL) == -1)
		log_warnx("run %s: egress record not sent", r->er_id);
	json_object_object_del(o, "kind");
	json_object_object_del(o, "agent");
	json_object_object_del(o, "route");
	json_object_object_del(o, "status");
	tunnel_notify(t, o, "end");
	json_object_put(o);
}

void
tunnel_close(struct tunnel *t, const char *end)
{
	struct evdns_getaddrinfo_request *q = t->t_dns;

	if (t->t_end == NULL)
		t->t_end = end;
	t->t_dns = NULL;
	if (q != NULL)
		evdns_getaddrinfo_cancel(q); /* its callback sees the cancel */
	tunnel_record(t);
	pump_free(t); /* before the sockets it splices between */
	TAILQ_REMOVE(&t->t_run->er_tunnels, t, t_entry);
	t->t_run->er_nconns--;
	if (t->t_cli != NULL)
		bufferevent_free(t->t_cli);
	if (t->t_up != NULL)
		bufferevent_free(t->t_up);
	event_free(t->t_timer);
	route_done(t);
	free(t);
}

/*
 * A half-close (EG-4): side dir (0 the agent, 1 the upstream) sent its
 * EOF and all it sent before is written, so the other side's sending is
 * shut and its peer reads the end; the other direction goes on, under
 * the same idle timeout and budget.  Both ended: the tunnel closes.
 * 1: t is gone.
 */
int
tunnel_half_close(struct tunnel *t, int dir)
{
	struct bufferevent *dst = dir == 0 ? t->t_up : t->t_cli;

	t->t_shut |= 1 << dir;
	(void)shutdown(bufferevent_getfd(dst), SHUT_WR);
	if (t->t_shut != 3)
		return 0;
	tunnel_close(t, "closed");
	return 1;
}

/* Pass on each EOF read whose bytes are all written: 1 if t is gone. */
static int
half_flush(struct tunnel *t)
{
	struct bufferevent *dst;
	int dir;

	for (dir = 0; dir < 2; dir++) {
		dst = dir == 0 ? t->t_up : t->t_cli;
		if ((t->t_eof & ~t->t_shut & (1 << dir)) &&
		    evbuffer_get_length(bufferevent_get_output(dst)) == 0 &&
		    tunnel_half_close(t, dir))
			return 1;
	}
	return 0;
}

/*
 * Refuse: the fixed 403 (502 for an upstream that cannot be reached)
 * with the reason, then close once it is written (or after a short
 * linger).  Never a hang, never an echo.
 */
void
tunnel_refuse(struct tunnel *t, enum egress_reason why)
{
	const char *name = egress_reason_name(why);
	int gone = why == ER_CONNECT_FAILED || why == ER_UPSTREAM_CLOSED ||
		   why == ER_UPSTREAM_BAD_ANSWER;
	int bad_gw = gone || why == ER_RESOLVE_FAILED || why == ER_TLS_FAILED;

	/* An upstream that cannot be reached, or that closed unanswered,
	 * was allowed: its record says so, with how it ended. */
	if (t->t_why == ER_NONE && !gone)
		t->t_why = why;
	if (gone)
		t->t_end = "upstream-error";
	if (t->t_up != NULL) {
		bufferevent_free(t->t_up);
		t->t_up = NULL;
	}
	/* Reads stay on (and are dropped) while the refusal goes out: a
	 * close with unread bytes would reset it away. */
	t->t_state = T_CLOSING;
	evbuffer_add_printf(bufferevent_get_output(t->t_cli),
	    "HTTP/1.1 %s\r\ncordon-egress: %s\r\nContent-Type: text/plain\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\ncordon-egress: "
	    "%s\n",
	    bad_gw ? "502 Bad Gateway" : "403 Forbidden", name,
	    strlen("cordon-egress: \n") + strlen(name), name);
	arm(t, EG_REFUSE_LINGER);
}

static int
addr_refused(const struct erun *r, int fam, const unsigned char *a)
{
	/* Test-only: the one exempt address (never set in production). */
	if (r->er_test_allow_fam == fam &&
	    memcmp(r->er_test_allow, a, fam == 4 ? 4 : 16) == 0)
		return 0;
	return egress_addr_class(fam, a) != EA_PUBLIC;
}

/* Add one resolved address; -1 if its class is refused. */
static int
addr_add(struct tunnel *t, int fam, const unsigned char *a)
{
	struct sockaddr_in *s4;
	struct sockaddr_in6 *s6;
	size_t i = t->t_naddrs;

	if (addr_refused(t->t_run, fam, a))
		return -1;
	if (i == EG_ADDRS_MAX)
		return 0;
	memset(&t->t_addrs[i], 0, sizeof(t->t_addrs[i]));
	if (fam == 4) {
		s4 = (struct sockaddr_in *)&t->t_addrs[i];
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)t->t_req.rq_port);
		memcpy(&s4->sin_addr, a, 4);
		t->t_alen[i] = sizeof(*s4);
	} else {
		s6 = (struct sockaddr_in6 *)&t->t_addrs[i];
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)t->t_req.rq_port);
		memcpy(&s6->sin6_addr, a, 16);
		t->t_alen[i] = sizeof(*s6);
	}
	t->t_naddrs++;
	return 0;
}

static void
dns_cb(int result, struct evutil_addrinfo *res, void *arg)
{
	struct tunnel *t = arg;
	struct evutil_addrinfo *ai;
	int refused = 0;

	if (result == EVUTIL_EAI_CANCEL)
		return; /* the tunnel is gone */
	t->t_dns = NULL;
	for (ai = res; result == 0 && ai != NULL; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET)
			refused |= addr_add(t, 4,
				       (unsigned char *)&(
					   (struct sockaddr_in *)ai->ai_addr)
					   ->sin_addr) == -1;
		else if (ai->ai_family == AF_INET6)
			refused |= addr_add(t, 6,
				       (unsigned char *)&(
					   (struct sockaddr_in6 *)ai->ai_addr)
					   ->sin6_addr) == -1;
	}
	if (res != NULL)
		evutil_freeaddrinfo(res);
	/* DNS rebinding: one refused answer refuses the name. */
	if (refused)
		tunnel_refuse(t, ER_ADDRESS_REFUSED);
	else if (t->t_naddrs == 0)
		tunnel_refuse(t, ER_RESOLVE_FAILED);
	else
		connect_next(t);
}

/* The target's addresses: a literal, the test map, or evdns. */
void
tunnel_resolve(struct tunnel *t)
{
	struct evutil_addrinfo hints;
	struct erun *r = t->t_run;
	size_t i;

	t->t_state = T_RESOLVE;
	arm(t, EG_STEP_SEC);
	if (t->t_req.rq_ip != 0) {
		if (addr_add(t, t->t_req.rq_ip, t->t_req.rq_addr) == -1)
			tunnel_refuse(t, ER_ADDRESS_REFUSED);
		else
			connect_next(t);
		return;
	}
	for (i = 0; i < r->er_ntest; i++)
		if (strcmp(r->er_test[i].et_host, t->t_req.rq_host) == 0) {
			if (addr_add(t, r->er_test[i].et_fam,
				r->er_test[i].et_addr) == -1)
				tunnel_refuse(t, ER_ADDRESS_REFUSED);
			else
				connect_next(t);
			return;
		}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	t->t_dns = evdns_getaddrinfo(
	    eg.eg_dns, t->t_req.rq_host, NULL, &hints, dns_cb, t);
	/* NULL: answered (or failed) already, inside the call. */
}

static void
connect_next(struct tunnel *t)
{
	struct event_base *base = eg.eg_d.d_base;
	size_t i;

	if (t->t_up != NULL) {
		bufferevent_free(t->t_up);
		t->t_up = NULL;
	}
	if ((i = t->t_next++) >= t->t_naddrs) {
		tunnel_refuse(t, ER_CONNECT_FAILED);
		return;
	}
	t->t_state = T_CONNECT;
	arm(t, EG_STEP_SEC);
	t->t_up = t->t_route != NULL
		      ? route_upstream_new(t) /* EG-3: TLS */
		      : bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (t->t_up == NULL) {
		tunnel_refuse(t, ER_CONNECT_FAILED);
		return;
	}
	bufferevent_setcb(t->t_up, up_read_cb, up_write_cb, up_event_cb, t);
	bev_tune(t->t_up);
	if (bufferevent_socket_connect(t->t_up,
		(struct sockaddr *)&t->t_addrs[i], (int)t->t_alen[i]) == -1)
		connect_next(t);
}

/* The head is in: decide, then resolve. */
static void
tunnel_head(struct tunnel *t)
{
	struct evbuffer *in = bufferevent_get_input(t->t_cli);
	size_t len = evbuffer_get_length(in), n;
	enum egress_reason why = ER_NONE;
	unsigned char *buf;
	int rc;

	if (route_head(t)) /* EG-3: a plain request for a route */
		return;
	n = len < EGRESS_HEAD_MAX ? len : EGRESS_HEAD_MAX;
	buf = evbuffer_pullup(in, (ssize_t)n);
	rc = egress_req_parse((const char *)buf, n, &t->t_req);
	if (rc == 0)
		return;
	if (rc == -1) {
		tunnel_refuse(t, ER_BAD_REQUEST);
		return;
	}
	evbuffer_drain(in, t->t_req.rq_head_len);
	t->t_rule = egress_match(t->t_run->er_allow, t->t_run->er_nallow,
	    t->t_req.rq_host, t->t_req.rq_ip, t->t_req.rq_addr,
	    t->t_req.rq_port, &why);
	/* A listed host on an unlisted port is still a listed host; a
	 * name only a wildcard covers is the agent's text (EG-4). */
	t->t_named = (t->t_rule >= 0 || why == ER_PORT_NOT_ALLOWED) &&
		     egress_listed(t->t_run->er_allow, t->t_run->er_nallow,
			 t->t_req.rq_host, t->t_req.rq_ip, t->t_req.rq_addr);
	if (t->t_rule < 0) {
		tunnel_refuse(t, why);
		return;
	}
	bufferevent_disable(t->t_cli, EV_READ); /* until the tunnel is up */
	tunnel_resolve(t);
}

/* Count n bytes against the run's budget: 0, or -1 (the budget is out). */
int
tunnel_budget(struct tunnel *t, size_t n)
{
	struct erun *r = t->t_run;

	if (r->er_bytes + n > r->er_max_bytes)
		return -1;
	r->er_bytes += n;
	t->t_last = now_ms_mono();
	return 0;
}

/* Move what src read into dst, pausing src while dst is full. */
static void
splice(struct tunnel *t, struct bufferevent *src, struct bufferevent *dst,
    unsigned long long *count, int *paused)
{
	struct evbuffer *in = bufferevent_get_input(src);
	size_t n = evbuffer_get_length(in);

	if (n == 0)
		return;
	if (tunnel_budget(t, n) == -1) {
		tunnel_close(t, "budget-exceeded");
		return;
	}
	*count += n;
	evbuffer_add_buffer(bufferevent_get_output(dst), in);
	if (evbuffer_get_length(bufferevent_get_output(dst)) >= EG_HIWAT) {
		bufferevent_disable(src, EV_READ);
		*paused = 1;
	}
}

static void
cli_read_cb(struct bufferevent *bev, void *arg)
{
	struct tunnel *t = arg;

	if (t->t_state == T_HEAD)
		tunnel_head(t);
	else if (t->t_state == T_CLOSING && t->t_up == NULL)
		evbuffer_drain(bufferevent_get_input(bev),
		    evbuffer_get_length(bufferevent_get_input(bev)));
	else if (t->t_state == T_OPEN && t->t_route != NULL)
		route_splice_up(t); /* EG-3: its body, no more */
	else if (t->t_state == T_OPEN)
		splice(t, t->t_cli, t->t_up, &t->t_bytes_up, &t->t_paused_cli);
}

static void
up_read_cb(struct bufferevent *bev, void *arg)
{
	struct tunnel *t = arg;

	if (t->t_state == T_OPEN && t->t_route != NULL && !route_answer(t))
		return; /* EG-3: its head first, rewritten */
	if (t->t_state == T_OPEN)
		splice(t, t->t_up, t->t_cli, &t->t_bytes_down, &t->t_paused_up);
}

/* Nothing left to write either way: a closing tunnel may go. */
static int
drained(const struct tunnel *t)
{
	return evbuffer_get_length(bufferevent_get_output(t->t_cli)) == 0 &&
	       (t->t_up == NULL ||
		   evbuffer_get_length(bufferevent_get_output(t->t_up)) == 0);
}

/*
 * Open, with nothing buffered either way: from now on the kernel moves
 * the bytes (pump.c).  Tried once; a failure keeps the bufferevents.
 */
static void
try_pump(struct tunnel *t)
{
	/* A routed request's upstream is TLS, its body bounded: buffered. */
	if (t->t_state != T_OPEN || t->t_pump_tried || t->t_up == NULL ||
	    t->t_route != NULL || !drained(t) || t->t_eof != t->t_shut ||
	    evbuffer_get_length(bufferevent_get_input(t->t_cli)) != 0 ||
	    evbuffer_get_length(bufferevent_get_input(t->t_up)) != 0)
		return;
	t->t_pump_tried = 1;
	(void)pump_start(t);
}

/* Written down to the low watermark: resume the side that fills it. */
static void
cli_write_cb(struct bufferevent *bev, void *arg)
{
	struct tunnel *t = arg;

	if (t->t_state == T_CLOSING && t->t_up == NULL && drained(t)) {
		/* A refusal is out: end our side, and close once the agent
		 * has read it (its EOF) or the linger is over. */
		(void)shutdown(bufferevent_getfd(bev), SHUT_WR);
		return;
	}
	if (t->t_state == T_CLOSING) {
		if (drained(t))
			tunnel_close(t, NULL);
		return;
	}
	if (t->t_paused_up && t->t_up != NULL) {
		t->t_paused_up = 0;
		bufferevent_enable(t->t_up, EV_READ);
	}
	if (!half_flush(t))
		try_pump(t);
}

static void
up_write_cb(struct bufferevent *bev, void *arg)
{
	struct tunnel *t = arg;

	if (t->t_state == T_CLOSING) {
		if (drained(t))
			tunnel_close(t, NULL);
		return;
	}
	if (t->t_paused_cli) {
		t->t_paused_cli = 0;
		bufferevent_enable(t->t_cli, EV_READ);
	}
	if (!half_flush(t))
		try_pump(t);
}

/* One side failed (or a routed request's ended): deliver what is left
 * to the other, then close. */
static void
side_ended(struct tunnel *t, struct bufferevent *other, const char *end)
{
	t->t_end = end;
	if (t->t_state != T_OPEN || other == NULL || drained(t)) {
		tunnel_close(t, end);
		return;
	}
	t->t_state = T_CLOSING;
	bufferevent_disable(t->t_cli, EV_READ);
	bufferevent_disable(t->t_up, EV_READ);
	arm(t, EG_REFUSE_LINGER);
}

static void
cli_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct tunnel *t = arg;

	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		if (t->t_state == T_HEAD && t->t_why == ER_NONE)
			t->t_why = ER_BAD_REQUEST; /* gone before a request */
		if (t->t_state == T_CLOSING)
			tunnel_close(t, NULL);
		else if (t->t_state == T_OPEN && t->t_route == NULL &&
			 !(what & BEV_EVENT_ERROR)) {
			t->t_eof |= 1; /* the agent's half-close */
			(void)half_flush(t);
		} else
			side_ended(t, t->t_up, "closed");
	}
}

static void
up_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct tunnel *t = arg;
	struct evbuffer *pending;
	struct json_object *open;

	if (what & BEV_EVENT_CONNECTED) {
		int one = 1;

		(void)setsockopt(bufferevent_getfd(bev), IPPROTO_TCP,
		    TCP_NODELAY, &one, sizeof(one));
		t->t_state = T_OPEN;
		t->t_last = now_ms_mono();
		arm(t, t->t_run->er_idle_sec);
		open = tunnel_json(t, 0);
		tunnel_notify(t, open, "open");
		json_object_put(open);
		if (t->t_route != NULL) {
			route_connected(t); /* EG-3 */
			return;
		}
		evbuffer_add(bufferevent_get_output(t->t_cli), established,
		    sizeof(established) - 1);
		bufferevent_enable(t->t_up, EV_READ);
		bufferevent_enable(t->t_cli, EV_READ);
		/* Bytes the client sent right after its head. */
		pending = bufferevent_get_input(t->t_cli);
		if (evbuffer_get_length(pending) > 0)
			splice(t, t->t_cli, t->t_up, &t->t_bytes_up,
			    &t->t_paused_cli);
		return;
	}
	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	if (t->t_state == T_CONNECT && t->t_route != NULL && tls_failed(bev))
		tunnel_refuse(t, ER_TLS_FAILED); /* EG-3: never unverified */
	else if (t->t_state == T_CONNECT)
		connect_next(t);
	else if (t->t_state == T_CLOSING)
		tunnel_close(t, NULL);
	else if (t->t_route != NULL && t->t_bytes_down == 0) {
		/* EG-3: closed before any answer: a 502, not an empty close. */
		bufferevent_enable(t->t_cli, EV_READ);
		tunnel_refuse(t, ER_UPSTREAM_CLOSED);
	} else if (t->t_route == NULL && !(what & BEV_EVENT_ERROR)) {
		t->t_eof |= 2; /* the upstream's half-close */
		(void)half_flush(t);
	} else
		side_ended(t, t->t_cli,
		    (what & BEV_EVENT_ERROR) ? "upstream-error" : "closed");
}

static void
tunnel_timer_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct tunnel *t = arg;
	uint64_t idle_ms, quiet;
	struct timeval tv;

	switch (t->t_state) {
	case T_HEAD: /* slowloris */
		tunnel_refuse(t, ER_BAD_REQUEST);
		break;
	case T_RESOLVE:
		tunnel_refuse(t, ER_RESOLVE_FAILED);
		break;
	case T_CONNECT:
		connect_next(t);
		break;
	case T_OPEN:
		idle_ms = (uint64_t)t->t_run->er_idle_sec * 1000;
		quiet = now_ms_mono() - t->t_last;
		if (quiet >= idle_ms) {
			tunnel_close(t, "idle-timeout");
			return;
		}
		tv.tv_sec = (time_t)((idle_ms - quiet) / 1000);
		tv.tv_usec = (suseconds_t)((idle_ms - quiet) % 1000) * 1000;
		evtimer_add(t->t_timer, &tv);
		break;
	case T_CLOSING:
		tunnel_close(t, NULL);
		break;
	}
}

/*
 * EG-4, AU-6: connections past the run's record rate are refused before
 * anything is read from them, with no record each; the trail gets one
 * record for all of them (reason rate-limited, refused N) once a token
 * is back or the run ends.  So an agent that opens connections in a
 * loop gets refusals, and the trail at most EG_REC_RATE records a
 * second, every connection still counted in it.
 */
static void
refuse_limited(struct erun *r, int fd)
{
	static const char msg[] =
	    "HTTP/1.1 429 Too Many Requests\r\ncordon-egress: rate-limited\r\n"
	    "Content-Length: 28\r\nConnection: close\r\n\r\n"
	    "cordon-egress: rate-limited\n";

	(void)send(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
	r->er_limited++;
}

void
tunnel_limited_flush(struct erun *r)
{
	struct json_object *o;

	if (r->er_limited == 0)
		return;
	o = json_object_new_object();
	json_object_object_add(
	    o, "kind", json_object_new_string("egress.connect"));
	json_object_object_add(o, "runId", json_object_new_string(r->er_id));
	json_object_object_add(o, "agent", json_object_new_string(r->er_agent));
	json_object_object_add(o, "decision", json_object_new_string("deny"));
	json_object_object_add(
	    o, "reason", json_object_new_string("rate-limited"));
	json_object_object_add(
	    o, "refused", json_object_new_int64((int64_t)r->er_limited));
	json_object_object_add(o, "bytesUp", json_object_new_int64(0));
	json_object_object_add(o, "bytesDown", json_object_new_int64(0));
	json_object_object_add(o, "durationMs", json_object_new_int64(0));
	if (audit_emit(eg.eg_d.d_peers[PROC_AUDITD], o, NULL, NULL) == -1)
		log_warnx("run %s: egress record not sent", r->er_id);
	json_object_put(o);
	r->er_limited = 0;
}

/* Over the cap, or with auditd away: refused at once. */
static void
refuse_now(struct erun *r, int fd)
{
	static const char msg[] =
	    "HTTP/1.1 403 Forbidden\r\ncordon-egress: budget-exceeded\r\n"
	    "Content-Length: 31\r\nConnection: close\r\n\r\n"
	    "cordon-egress: budget-exceeded\n";
	struct tunnel t;

	(void)send(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
	memset(&t, 0, sizeof(t));
	t.t_run = r;
	t.t_seq = ++r->er_seq;
	t.t_why = ER_BUDGET_EXCEEDED;
	t.t_start = now_ms_mono();
	tunnel_record(&t);
}

static void
accept_resume_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct erun *r = arg;

	if (event_add(r->er_accept_ev, NULL) == -1)
		log_warnx("run %s: its proxy cannot accept again", r->er_id);
}

/*
 * accept(2) out of descriptors or memory leaves the connection queued
 * and the listener readable: rather than spin on it, the run's proxy
 * stops accepting for EG_ACCEPT_PAUSE_MS (its queued connections wait),
 * and a failure to pause leaves it stopped (EG-4).
 */
static void
accept_pause(struct erun *r)
{
	struct timeval tv = {0, EG_ACCEPT_PAUSE_MS * 1000};

	if (log_limit(&r->er_loglim, r->er_id))
		log_warnx(
		    "run %s: out of descriptors; its proxy waits", r->er_id);
	event_del(r->er_accept_ev);
	if (r->er_accept_pause == NULL)
		r->er_accept_pause =
		    evtimer_new(eg.eg_d.d_base, accept_resume_cb, r);
	if (r->er_accept_pause == NULL ||
	    evtimer_add(r->er_accept_pause, &tv) == -1)
		log_warnx("run %s: its proxy stops accepting", r->er_id);
}

void
tunnel_accept_cb(evutil_socket_t lfd, short ev, void *arg)
{
	struct erun *r = arg;
	struct tunnel *t;
	int fd, n;

	for (n = 0; n < 16; n++) {
		if ((fd = accept4(lfd, NULL, NULL,
			 SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				accept_pause(r);
			else if (errno != EAGAIN && errno != EINTR &&
				 errno != ECONNABORTED)
				log_warn("run %s: accept", r->er_id);
			return;
		}
		/* No record could be written: no connection (AU-6). */
		if (eg.eg_d.d_peers[PROC_AUDITD] == NULL) {
			close(fd);
			continue;
		}
		if (!rate_take(&r->er_rate, EG_REC_RATE, EG_REC_BURST)) {
			refuse_limited(r, fd);
			continue;
		}
		tunnel_limited_flush(r);
		if (r->er_nconns >= r->er_max_conns ||
		    r->er_bytes >= r->er_max_bytes) {
			refuse_now(r, fd);
			continue;
		}
		if ((t = calloc(1, sizeof(*t))) == NULL ||
		    (t->t_timer = evtimer_new(
			 eg.eg_d.d_base, tunnel_timer_cb, t)) == NULL ||
		    (t->t_cli = bufferevent_socket_new(
			 eg.eg_d.d_base, fd, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
			if (t != NULL && t->t_timer != NULL)
				event_free(t->t_timer);
			free(t);
			close(fd);
			continue;
		}
		t->t_run = r;
		t->t_seq = ++r->er_seq;
		t->t_rule = -1;
		t->t_start = t->t_last = now_ms_mono();
		TAILQ_INSERT_TAIL(&r->er_tunnels, t, t_entry);
		r->er_nconns++;
		bufferevent_setcb(
		    t->t_cli, cli_read_cb, cli_write_cb, cli_event_cb, t);
		bev_tune(t->t_cli);
		bufferevent_enable(t->t_cli, EV_READ);
		arm(t, EGRESS_HEAD_SEC);
	}
}
