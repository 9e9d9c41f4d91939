/*
 * PER-8: a whole request within BROKER_REQUEST_S.
 *
 * evhttp's timeout is an idle timeout that every byte re-arms, so a client
 * sending one header byte every few seconds would keep its connection, and
 * one of our BROKER_NOFILE descriptors, for ever.  So every connection is
 * tracked from accept: a complete request must arrive within
 * BROKER_REQUEST_S of the accept or of the end of the previous answer
 * (keep-alive), or its socket is shut down.  evhttp then sees the client
 * leave and cleans up as it always does.  While a request is being
 * answered there is no deadline here: handlers bound their own waits.
 *
 * evhttp owns the bufferevent and frees it without telling anyone, so we
 * hold a reference of our own: its memory stays valid until we drop it,
 * and one evhttp has let go of has no callbacks left (bufferevent_free
 * clears them), which the sweep notices on the next accept or tick.  Until
 * then the descriptor stays open (evhttp has sent its FIN already), and a
 * read high-water mark bounds what such a bufferevent may still buffer to
 * what a live connection may.
 *
 * Room for the operator: a connection that has proved nothing yet (no
 * request of it carried the token or a session cookie) gets
 * BROKER_ANON_S instead, and at most BROKER_ANON_MAX such connections
 * are held: a new one makes the oldest idle one leave.  Another local
 * user can open connections without the token, but can hold only a
 * handful, briefly; a proven connection is never shed for them, and a
 * new one of the operator's finds room at once.  Connections that did
 * prove themselves are bounded by BROKER_CONNS_MAX, under
 * BROKER_NOFILE: at that bound the oldest idle connection leaves, so
 * accept(2) keeps finding a descriptor.
 *
 * PER-9: a request evhttp's own parser refuses (a bad request line or
 * header line, headers or body over the bounds) is answered by evhttp
 * with an HTML page, before the router ever sees it.  Whatever evhttp
 * writes to a connection while none of its requests is being answered
 * is that page (or a "100 Continue", left alone): before it can leave,
 * it is replaced with the fixed JSON error and the usual headers
 * (raw_error, front.c).
 *
 * RFC 9110 5.5: a NUL in a field value must be refused, but evhttp cuts
 * the value there and the router would see only what came before.  So
 * the bytes of each request head are looked at as they arrive (up to the
 * empty line that ends it; bodies are JSON, whose parser refuses a raw
 * NUL itself), and a request whose head held a NUL is refused when it
 * reaches the router, the connection with it.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>

#include "broker.h"
#include "log.h"
#include "util.h"

/*
 * Bytes a connection's input may hold before reading pauses: evhttp waits
 * for a whole Content-Length body in the input before it takes any, so
 * the largest request must fit.
 */
#define CONN_READ_HIWAT (BROKER_MAX_HEADERS + BROKER_MAX_BODY + 4096)

struct conn {
	TAILQ_ENTRY(conn) c_entry;
	struct bufferevent *c_bev;
	uint64_t c_deadline; /* monotonic ms; 0 while a request is answered */
	int c_routed;	     /* one of its requests is being answered */
	int c_proven;	     /* one of its requests carried the token */
	int c_shed;	     /* cut; gone at evhttp's pace */
	int c_fixing;	     /* c_fix is scheduled, or has rewritten */
	struct event *c_fix; /* replaces evhttp's own error page */
	struct evbuffer_cb_entry *c_outcb;
	struct evbuffer_cb_entry *c_incb;
	int c_in_head; /* the input is a request head (not yet its end) */
	int c_lines;   /* non-empty lines of that head so far */
	int c_col;     /* bytes on its current line, CR aside */
	int c_nul;     /* a NUL in a head: refuse, for good */
};

/* What evhttp writes before reading a body it was asked to expect. */
#define CONTINUE     " 100 Continue\r\n\r\n"
#define CONTINUE_LEN (8 + sizeof(CONTINUE) - 1)

static TAILQ_HEAD(, conn) conns = TAILQ_HEAD_INITIALIZER(conns);
static struct event *conns_tick;
static size_t conns_n;

static int
conn_released(struct conn *c)
{
	bufferevent_event_cb eventcb;

	/* evhttp sets an event callback for the bufferevent's whole life. */
	bufferevent_getcb(c->c_bev, NULL, NULL, &eventcb, NULL);
	return eventcb == NULL;
}

/* Cut c (past its deadline, or to make room); evhttp sees it leave. */
static void
conn_shed(struct conn *c)
{
	int fd;

	c->c_shed = 1;
	c->c_deadline = 0;
	if ((fd = bufferevent_getfd(c->c_bev)) != -1)
		shutdown(fd, SHUT_RDWR);
}

/* Drop the connections evhttp has freed; cut the ones past deadline. */
static void
conns_sweep(void)
{
	struct conn *c, *next;
	uint64_t now = now_ms_mono();

	for (c = TAILQ_FIRST(&conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, c_entry);
		if (conn_released(c)) {
			TAILQ_REMOVE(&conns, c, c_entry);
			conns_n--;
			evbuffer_remove_cb_entry(
			    bufferevent_get_output(c->c_bev), c->c_outcb);
			evbuffer_remove_cb_entry(
			    bufferevent_get_input(c->c_bev), c->c_incb);
			event_free(c->c_fix);
			bufferevent_decref(c->c_bev);
			free(c);
		} else if (c->c_deadline != 0 && now >= c->c_deadline)
			conn_shed(c);
	}
	if (conns_n == 0)
		evtimer_del(conns_tick);
}

/* The deadline of a connection that now waits for a request. */
static uint64_t
conn_deadline(const struct conn *c)
{
	return now_ms_mono() +
	       (c->c_proven ? BROKER_REQUEST_S : BROKER_ANON_S) * 1000;
}

/*
 * A new connection is coming: if those that proved nothing are at their
 * bound, the oldest idle one leaves (the list is in accept order); if all
 * held are at BROKER_CONNS_MAX, the one idle longest of any kind does, so
 * a client with the token that leaves connections open (a runaway
 * script) cannot keep the dashboard out either.
 */
static void
conns_make_room(void)
{
	struct conn *c, *oldest = NULL, *oldest_any = NULL;
	size_t n = 0, all = 0;

	TAILQ_FOREACH (c, &conns, c_entry) {
		if (c->c_shed || conn_released(c))
			continue;
		all++;
		/* the one idle longest: its deadline comes first */
		if (!c->c_routed && (oldest_any == NULL ||
					c->c_deadline < oldest_any->c_deadline))
			oldest_any = c;
		if (c->c_proven)
			continue;
		n++;
		if (oldest == NULL && !c->c_routed)
			oldest = c;
	}
	if (n >= BROKER_ANON_MAX && oldest != NULL) {
		conn_shed(oldest);
		log_debug("connection without credentials shed to make room");
	} else if (all >= BROKER_CONNS_MAX && oldest_any != NULL) {
		conn_shed(oldest_any);
		log_debug("idle connection shed to make room");
	}
}

static void
conns_tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	conns_sweep();
}

/* "HTTP/1.x NNN " at p: NNN, else -1. */
static int
status_of(const char *p, size_t len)
{
	if (len < 13 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ' ||
	    p[12] != ' ' || p[9] < '1' || p[9] > '5' || p[10] < '0' ||
	    p[10] > '9' || p[11] < '0' || p[11] > '9')
		return -1;
	return (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
}

static void
conn_fix_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct conn *c = arg;
	char keep[CONTINUE_LEN];
	struct evbuffer *out;
	const char *p;
	size_t len, skip = 0;
	int status;

	if (conn_released(c) || c->c_routed) {
		c->c_fixing = 0;
		return;
	}
	out = bufferevent_get_output(c->c_bev);
	len = evbuffer_get_length(out);
	if ((p = (const char *)evbuffer_pullup(out, len < 64 ? len : 64)) ==
	    NULL) {
		c->c_fixing = 0;
		return;
	}
	/* pulled up: the first 64 bytes, enough for both status lines */
	if (len >= CONTINUE_LEN && status_of(p, len) == 100 &&
	    memcmp(p + 8, CONTINUE, sizeof(CONTINUE) - 1) == 0)
		skip = CONTINUE_LEN;
	status = status_of(p + skip, len - skip);
	if (status < 400) {
		/* a "100 Continue" alone, or nothing evhttp writes itself */
		c->c_fixing = 0;
		return;
	}
	/*
	 * A socket bufferevent keeps its output's start frozen between its
	 * own writes; nothing has been written since evhttp's page was.
	 */
	evbuffer_unfreeze(out, 1);
	if (evbuffer_remove(out, keep, skip) != (int)skip ||
	    evbuffer_drain(out, evbuffer_get_length(out)) == -1) {
		evbuffer_freeze(out, 1);
		log_warnx("could not replace an HTTP error page; closing");
		shutdown(bufferevent_getfd(c->c_bev), SHUT_RDWR);
		return;
	}
	evbuffer_freeze(out, 1);
	evbuffer_add(out, keep, skip);
	raw_error(out, status);
	/* PER-10: a refusal like any other, though its request is unknown. */
	reqlog_refused(status, evbuffer_get_length(out) - skip);
}

static void
conn_out_cb(
    struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct conn *c = arg;

	if (info->n_added == 0 || c->c_routed || c->c_fixing)
		return;
	/* After evhttp has written all of it, before any of it is sent. */
	c->c_fixing = 1;
	event_active(c->c_fix, EV_TIMEOUT, 0);
}

/* The head's bytes from offset on: a NUL poisons, an empty line ends. */
static void
conn_scan(struct conn *c, struct evbuffer *in, size_t off)
{
	struct evbuffer_ptr at;
	struct evbuffer_iovec v[4];
	const unsigned char *b;
	size_t left, i, k;
	int n;

	if (off >= evbuffer_get_length(in) ||
	    evbuffer_ptr_set(in, &at, off, EVBUFFER_PTR_SET) == -1)
		return;
	left = evbuffer_get_length(in) - off;
	while (left > 0 && c->c_in_head && !c->c_nul) {
		n = evbuffer_peek(in, (ev_ssize_t)left, &at, v, 4);
		if (n <= 0)
			return;
		for (k = 0; k < (size_t)n && k < 4 && left > 0; k++) {
			b = v[k].iov_base;
			for (i = 0; i < v[k].iov_len && i < left; i++) {
				if (b[i] == '\0') {
					c->c_nul = 1;
					return;
				}
				if (b[i] == '\n') {
					if (c->c_col == 0 && c->c_lines > 0) {
						c->c_in_head = 0;
						return;
					}
					c->c_lines += c->c_col > 0;
					c->c_col = 0;
				} else if (b[i] != '\r')
					c->c_col++;
			}
			left -= i;
			if (evbuffer_ptr_set(in, &at, i, EVBUFFER_PTR_ADD) ==
			    -1)
				return;
		}
	}
}

static void
conn_in_cb(struct evbuffer *in, const struct evbuffer_cb_info *info, void *arg)
{
	struct conn *c = arg;

	if (info->n_added > 0 && c->c_in_head && !c->c_nul)
		conn_scan(c, in, evbuffer_get_length(in) - info->n_added);
}

/* evhttp's hook for each accepted connection's bufferevent. */
static struct bufferevent *
conns_bevcb(struct event_base *base, void *arg)
{
	struct timeval tv = {1, 0};
	struct bufferevent *bev;
	struct conn *c;

	conns_sweep();
	conns_make_room();
	if ((c = calloc(1, sizeof(*c))) == NULL)
		fatal("connection");
	bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL)
		fatal("connection");
	if ((c->c_fix = event_new(base, -1, 0, conn_fix_cb, c)) == NULL ||
	    (c->c_outcb = evbuffer_add_cb(
		 bufferevent_get_output(bev), conn_out_cb, c)) == NULL ||
	    (c->c_incb = evbuffer_add_cb(
		 bufferevent_get_input(bev), conn_in_cb, c)) == NULL)
		fatal("connection");
	bufferevent_incref(bev);
	bufferevent_setwatermark(bev, EV_READ, 0, CONN_READ_HIWAT);
	c->c_bev = bev;
	c->c_in_head = 1;
	c->c_deadline = conn_deadline(c);
	TAILQ_INSERT_TAIL(&conns, c, c_entry);
	if (conns_n++ == 0)
		evtimer_add(conns_tick, &tv);
	return bev;
}

static struct conn *
conn_of(struct evhttp_request *req)
{
	struct evhttp_connection *evcon;
	struct bufferevent *bev;
	struct conn *c;

	if ((evcon = evhttp_request_get_connection(req)) == NULL ||
	    (bev = evhttp_connection_get_bufferevent(evcon)) == NULL)
		return NULL;
	TAILQ_FOREACH (c, &conns, c_entry) {
		if (c->c_bev == bev)
			return c;
	}
	return NULL;
}

static void
conn_answered(struct evhttp_request *req, void *arg)
{
	struct conn *c = arg;

	/* The connection is still evhttp's here: c is not swept yet. */
	c->c_deadline = conn_deadline(c);
	c->c_routed = 0;
	/* What is in the input now is the next request's head. */
	c->c_in_head = 1;
	c->c_lines = c->c_col = 0;
	conn_scan(c, bufferevent_get_input(c->c_bev), 0);
}

int
conns_request(struct evhttp_request *req)
{
	struct conn *c;

	if ((c = conn_of(req)) == NULL)
		return 0;
	c->c_deadline = 0;
	c->c_routed = 1;
	evhttp_request_set_on_complete_cb(req, conn_answered, c);
	return c->c_nul ? -1 : 0;
}

void
conns_proven(struct evhttp_request *req)
{
	struct conn *c;

	if ((c = conn_of(req)) != NULL)
		c->c_proven = 1;
}

void
conns_init(struct evhttp *http, struct event_base *base)
{
	if ((conns_tick = event_new(
		 base, -1, EV_PERSIST, conns_tick_cb, NULL)) == NULL)
		fatalx("connection timer");
	evhttp_set_bevcb(http, conns_bevcb, NULL);
}
