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
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <stdint.h>
#include <stdlib.h>

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
};

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

/* Drop the connections evhttp has freed; cut the ones past deadline. */
static void
conns_sweep(void)
{
	struct conn *c, *next;
	uint64_t now = now_ms_mono();
	int fd;

	for (c = TAILQ_FIRST(&conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, c_entry);
		if (conn_released(c)) {
			TAILQ_REMOVE(&conns, c, c_entry);
			conns_n--;
			bufferevent_decref(c->c_bev);
			free(c);
		} else if (c->c_deadline != 0 && now >= c->c_deadline) {
			c->c_deadline = 0;
			if ((fd = bufferevent_getfd(c->c_bev)) != -1)
				shutdown(fd, SHUT_RDWR);
		}
	}
	if (conns_n == 0)
		evtimer_del(conns_tick);
}

static void
conns_tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	conns_sweep();
}

/* evhttp's hook for each accepted connection's bufferevent. */
static struct bufferevent *
conns_bevcb(struct event_base *base, void *arg)
{
	struct timeval tv = {1, 0};
	struct bufferevent *bev;
	struct conn *c;

	conns_sweep();
	if ((c = calloc(1, sizeof(*c))) == NULL)
		fatal("connection");
	bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL)
		fatal("connection");
	bufferevent_incref(bev);
	bufferevent_setwatermark(bev, EV_READ, 0, CONN_READ_HIWAT);
	c->c_bev = bev;
	c->c_deadline = now_ms_mono() + BROKER_REQUEST_S * 1000;
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
	c->c_deadline = now_ms_mono() + BROKER_REQUEST_S * 1000;
}

void
conns_request(struct evhttp_request *req)
{
	struct conn *c;

	if ((c = conn_of(req)) == NULL)
		return;
	c->c_deadline = 0;
	evhttp_request_set_on_complete_cb(req, conn_answered, c);
}

void
conns_init(struct evhttp *http, struct event_base *base)
{
	if ((conns_tick = event_new(
		 base, -1, EV_PERSIST, conns_tick_cb, NULL)) == NULL)
		fatalx("connection timer");
	evhttp_set_bevcb(http, conns_bevcb, NULL);
}
