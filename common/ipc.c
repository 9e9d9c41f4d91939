/*
 * The IPC codec's connections: framing on a stream, fds bound to their
 * frames, request/reply pairing and dispatch for every cordon channel
 * (the wire format and fd passing: ipc_wire.c).  Reads and writes are
 * non-blocking on libevent events with evbuffers; short reads and
 * writes are handled here only.
 *
 * We use raw events plus evbuffers rather than bufferevents because a
 * bufferevent reads with recv(2), which would silently discard (and so
 * close) descriptors passed with SCM_RIGHTS.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "ipc.h"
#include "json.h"
#include "log.h"
#include "msg.h"
#include "util.h"

#define IPC_READ_CHUNK (64 * 1024)
#define IPC_MAX_OUTFD  16
#define IPC_MAX_IOV    16

struct ipc_pending {
	TAILQ_ENTRY(ipc_pending) p_entry;
	struct ipc_conn *p_conn;
	uint32_t p_id;
	uint32_t p_reply;
	ipc_reply_fn p_cb;
	void *p_arg;
	struct event *p_timer;
};

/*
 * A received descriptor and the stream offset of the byte it came with.
 * The kernel ends a read right after data that carried descriptors, so
 * that is the last byte of the read; our sender attaches each fd to a
 * one-byte send of its frame's first byte, so an honest fd sits exactly
 * on the first byte of the frame that announces it.
 */
struct ipc_infd {
	uint64_t if_off;
	int if_fd;
};

struct ipc_outfd {
	uint64_t of_off; /* absolute stream offset of the frame's first byte */
	int of_fd;
};

struct ipc_conn {
	int c_fd;
	enum proc_id c_peer;
	const struct ipc_dispatch *c_table;
	ipc_close_fn c_close;
	void *c_arg;
	struct event_base *c_base;
	struct event *c_rev;
	struct event *c_wev;
	struct evbuffer *c_in;
	struct evbuffer *c_out;
	struct ipc_infd c_infd[IPC_MAX_FDQ];
	size_t c_ninfd;
	uint64_t c_inoff; /* offset of c_in's first byte */
	uint64_t c_inend; /* offset just past the last byte received */
	struct ipc_outfd c_outfd[IPC_MAX_OUTFD];
	size_t c_noutfd;
	uint64_t c_outoff; /* offset of c_out's first byte */
	uint64_t c_outend; /* offset just past c_out's last byte */
	uint32_t c_nextid;
	int c_idwrap; /* c_nextid wrapped: any id may have been issued */
	TAILQ_HEAD(, ipc_pending) c_pending;
	int c_dead;
	int c_broken;	 /* died of a protocol violation */
	int c_inuse;	 /* nesting depth of callbacks into the owner */
	int c_freeme;	 /* ipc_conn_free() was called while in use */
	int c_paused;	 /* not read: IPC_MAX_UNSENT waits to be sent */
	uint64_t c_once; /* IPC_ONCE rows admitted, by index in c_table */
};

static void ipc_read_cb(evutil_socket_t, short, void *);
static void ipc_write_cb(evutil_socket_t, short, void *);
static void ipc_die(struct ipc_conn *, const char *why);
static void ipc_release(struct ipc_conn *);

struct ipc_conn *
ipc_conn_new(struct event_base *base, int fd, enum proc_id peer,
    const struct ipc_dispatch *table, ipc_close_fn closecb, void *arg)
{
	struct ipc_conn *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->c_fd = fd;
	c->c_peer = peer;
	c->c_table = table;
	c->c_close = closecb;
	c->c_arg = arg;
	c->c_base = base;
	c->c_nextid = 1;
	TAILQ_INIT(&c->c_pending);
	if ((c->c_in = evbuffer_new()) == NULL ||
	    (c->c_out = evbuffer_new()) == NULL)
		goto fail;
	if (fd >= 0) {
		if (evutil_make_socket_nonblocking(fd) == -1)
			goto fail;
		c->c_rev =
		    event_new(base, fd, EV_READ | EV_PERSIST, ipc_read_cb, c);
		c->c_wev =
		    event_new(base, fd, EV_WRITE | EV_PERSIST, ipc_write_cb, c);
		if (c->c_rev == NULL || c->c_wev == NULL ||
		    event_add(c->c_rev, NULL) == -1)
			goto fail;
	}
	return c;
fail:
	if (c->c_rev)
		event_free(c->c_rev);
	if (c->c_wev)
		event_free(c->c_wev);
	if (c->c_in)
		evbuffer_free(c->c_in);
	if (c->c_out)
		evbuffer_free(c->c_out);
	free(c);
	return NULL;
}

enum proc_id
ipc_conn_peer(const struct ipc_conn *c)
{
	return c->c_peer;
}

int
ipc_conn_broken(const struct ipc_conn *c)
{
	return c->c_broken;
}

int
ipc_conn_waiting(const struct ipc_conn *c)
{
	return !TAILQ_EMPTY(&c->c_pending);
}

int
ipc_conn_fd(const struct ipc_conn *c)
{
	return c->c_fd;
}

/* Fail every outstanding request: each callback runs once, with NULL. */
static void
ipc_fail_pending(struct ipc_conn *c)
{
	struct ipc_pending *p;

	while ((p = TAILQ_FIRST(&c->c_pending)) != NULL) {
		TAILQ_REMOVE(&c->c_pending, p, p_entry);
		if (p->p_timer)
			event_free(p->p_timer);
		p->p_cb(c, NULL, p->p_arg);
		free(p);
	}
}

static void
ipc_shut(struct ipc_conn *c)
{
	size_t i;

	if (c->c_rev)
		event_del(c->c_rev);
	if (c->c_wev)
		event_del(c->c_wev);
	if (c->c_fd >= 0) {
		close(c->c_fd);
		c->c_fd = -1;
	}
	for (i = 0; i < c->c_ninfd; i++)
		close(c->c_infd[i].if_fd);
	c->c_ninfd = 0;
	for (i = 0; i < c->c_noutfd; i++)
		close(c->c_outfd[i].of_fd);
	c->c_noutfd = 0;
}

static void
ipc_die(struct ipc_conn *c, const char *why)
{
	if (c->c_dead)
		return;
	c->c_dead = 1;
	c->c_broken = why != NULL;
	if (why != NULL)
		log_warnx("channel to %s: %s", proc_name(c->c_peer), why);
	ipc_shut(c);
	c->c_inuse++;
	ipc_fail_pending(c);
	if (c->c_close)
		c->c_close(c, c->c_arg);
	ipc_release(c);
}

static void
ipc_destroy(struct ipc_conn *c)
{
	ipc_shut(c);
	c->c_dead = 1;
	c->c_inuse++;
	ipc_fail_pending(c);
	c->c_inuse--;
	if (c->c_rev)
		event_free(c->c_rev);
	if (c->c_wev)
		event_free(c->c_wev);
	evbuffer_free(c->c_in);
	evbuffer_free(c->c_out);
	free(c);
}

/* Leave a callback section; free the conn if the owner asked meanwhile. */
static void
ipc_release(struct ipc_conn *c)
{
	if (--c->c_inuse == 0 && c->c_freeme)
		ipc_destroy(c);
}

void
ipc_conn_free(struct ipc_conn *c)
{
	if (c == NULL)
		return;
	if (c->c_inuse > 0) {
		c->c_freeme = 1;
		c->c_close = NULL;
		ipc_shut(c);
		c->c_dead = 1;
		return;
	}
	ipc_destroy(c);
}

static int
ipc_enqueue(struct ipc_conn *c, uint32_t type, uint32_t id, uint16_t flags,
    struct json_object *payload, int fd)
{
	struct ipc_hdr h;
	uint8_t hb[IPC_HDR_LEN];
	const char *body;
	size_t blen;

	/*
	 * Frames with descriptors started in one loop pass (a burst of runs
	 * handing their channels on): send what is queued now rather than
	 * refuse the next one; only a peer that does not read fills it.
	 */
	if (fd >= 0 && c->c_noutfd == IPC_MAX_OUTFD)
		ipc_flush(c);
	if (c->c_dead || (fd >= 0 && c->c_noutfd == IPC_MAX_OUTFD))
		goto fail;
	if (payload != NULL)
		body = json_object_to_json_string_length(
		    payload, IPC_JSON_FLAGS, &blen);
	else {
		body = "{}";
		blen = 2;
	}
	if (body == NULL || blen > IPC_MAX_PAYLOAD)
		goto fail;
	memset(&h, 0, sizeof(h));
	h.type = type;
	h.id = id;
	h.len = (uint32_t)blen;
	h.flags = flags | (fd >= 0 ? IPC_FLAG_FD : 0);
	ipc_hdr_encode(&h, hb);
	if (evbuffer_add(c->c_out, hb, sizeof(hb)) == -1 ||
	    evbuffer_add(c->c_out, body, blen) == -1)
		goto fail; /* evbuffer_add is all-or-nothing per call */
	if (fd >= 0) {
		c->c_outfd[c->c_noutfd].of_off = c->c_outend;
		c->c_outfd[c->c_noutfd].of_fd = fd;
		c->c_noutfd++;
	}
	c->c_outend += sizeof(hb) + blen;
	if (c->c_wev != NULL && event_add(c->c_wev, NULL) == -1)
		return -1;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

int
ipc_send(struct ipc_conn *c, uint32_t type, struct json_object *payload, int fd)
{
	return ipc_enqueue(c, type, 0, 0, payload, fd);
}

int
ipc_reply(struct ipc_conn *c, const struct ipc_msg *req, uint32_t type,
    struct json_object *payload, int fd)
{
	return ipc_enqueue(c, type, req->m_id, IPC_FLAG_REPLY, payload, fd);
}

int
ipc_reply_error(struct ipc_conn *c, const struct ipc_msg *req, const char *code)
{
	struct json_object *o;
	int r;

	if ((o = json_object_new_object()) == NULL)
		return -1;
	json_object_object_add(o, "error", json_object_new_string(code));
	r = ipc_reply(c, req, MSG_ERROR, o, -1);
	json_object_put(o);
	return r;
}

static void
ipc_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ipc_pending *p = arg;
	struct ipc_conn *c = p->p_conn;

	TAILQ_REMOVE(&c->c_pending, p, p_entry);
	event_free(p->p_timer);
	c->c_inuse++;
	p->p_cb(c, NULL, p->p_arg);
	free(p);
	ipc_release(c);
}

int
ipc_request(struct ipc_conn *c, uint32_t type, struct json_object *payload,
    int fd, uint32_t reply_type, const struct timeval *timeout, ipc_reply_fn cb,
    void *arg)
{
	struct ipc_pending *p;

	if (c->c_dead || (p = calloc(1, sizeof(*p))) == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	p->p_conn = c;
	p->p_id = c->c_nextid++;
	if (c->c_nextid == 0) {
		c->c_nextid = 1;
		c->c_idwrap = 1;
	}
	p->p_reply = reply_type;
	p->p_cb = cb;
	p->p_arg = arg;
	if (timeout != NULL) {
		p->p_timer = evtimer_new(c->c_base, ipc_timeout_cb, p);
		if (p->p_timer == NULL || evtimer_add(p->p_timer, timeout)) {
			if (p->p_timer)
				event_free(p->p_timer);
			free(p);
			if (fd >= 0)
				close(fd);
			return -1;
		}
	}
	if (ipc_enqueue(c, type, p->p_id, 0, payload, fd) == -1) {
		if (p->p_timer)
			event_free(p->p_timer);
		free(p);
		return -1;
	}
	TAILQ_INSERT_TAIL(&c->c_pending, p, p_entry);
	return 0;
}

static const struct ipc_dispatch *
ipc_lookup(const struct ipc_dispatch *t, uint32_t type)
{
	for (; t != NULL && t->d_type != MSG_NONE; t++)
		if (t->d_type == type)
			return t;
	return NULL;
}

/* A reply: exactly the expected type or MSG_ERROR; anything else is fatal
 * to the channel.  Returns 0, or -1 when the channel must die. */
static int
ipc_handle_reply(struct ipc_conn *c, struct ipc_msg *m, const char *body)
{
	struct ipc_pending *p;

	TAILQ_FOREACH (p, &c->c_pending, p_entry)
		if (p->p_id == m->m_id)
			break;
	if (p == NULL) {
		/* An answer to an id we never issued breaks the protocol. */
		if (m->m_id == 0 || (!c->c_idwrap && m->m_id >= c->c_nextid))
			return -1;
		/* Late answer to a request that already timed out. */
		log_debug("late reply %u from %s dropped", m->m_id,
		    proc_name(c->c_peer));
		return 0;
	}
	if (m->m_type != p->p_reply && m->m_type != MSG_ERROR)
		return -1;
	if ((m->m_obj = ipc_payload_parse(body, m->m_len)) == NULL)
		return -1;
	TAILQ_REMOVE(&c->c_pending, p, p_entry);
	if (p->p_timer)
		event_free(p->p_timer);
	p->p_cb(c, m, p->p_arg);
	free(p);
	return 0;
}

/*
 * A request: its row decides from the header alone, and only a frame
 * its row admits is parsed, so a peer cannot make us build a 12 MiB
 * JSON tree for a row that takes 64 bytes.
 */
/* An IPC_ONCE row's bit in c_once; 0 for a row beyond 64 (refused). */
static uint64_t
ipc_once_bit(const struct ipc_conn *c, const struct ipc_dispatch *d)
{
	size_t i = (size_t)(d - c->c_table);

	return i < 64 ? (uint64_t)1 << i : 0;
}

/* Refuse m: log why, answer a request with code. */
static void
ipc_refuse(
    struct ipc_conn *c, struct ipc_msg *m, const char *why, const char *code)
{
	log_warnx("refused %s message (type %u, %u bytes) from %s: %s",
	    msg_name(m->m_type), m->m_type, m->m_len, proc_name(c->c_peer),
	    why);
	if (m->m_id != 0)
		ipc_reply_error(c, m, code);
}

/* 1 if the row admits m's sender, and on an IPC_ONCE row, one more. */
static int
ipc_admits(struct ipc_conn *c, const struct ipc_dispatch *d)
{
	if ((d->d_senders & PROC_BIT(c->c_peer)) == 0)
		return 0;
	return !(d->d_flags & IPC_ONCE) ||
	       (ipc_once_bit(c, d) != 0 && !(c->c_once & ipc_once_bit(c, d)));
}

static void
ipc_handle_request(struct ipc_conn *c, struct ipc_msg *m, const char *body)
{
	const struct ipc_dispatch *d;
	const char *why = NULL, *code = "bad-message";

	d = ipc_lookup(c->c_table, m->m_type);
	if (d == NULL || !ipc_admits(c, d)) {
		ipc_refuse(c, m, "not admitted", "bad-message");
		return;
	}
	if (m->m_len < d->d_minlen || m->m_len > d->d_maxlen)
		why = "size";
	else if ((d->d_fd == IPC_FD_REQUIRED) != (m->m_fd >= 0))
		why = "descriptor";
	else if ((m->m_obj = ipc_payload_parse(body, m->m_len)) == NULL)
		why = "not JSON";
	/* SU-3: the row's declared shape, in this one place. */
	else if (!json_shape_ok(m->m_obj, d->d_shape, d->d_nshape)) {
		why = "not its shape";
		if (d->d_refuse != NULL)
			code = d->d_refuse;
	}
	if (why != NULL) {
		if (d->d_flags & IPC_FATAL)
			fatalx("%s from %s refused (%s): cannot run without it",
			    msg_name(m->m_type), proc_name(c->c_peer), why);
		ipc_refuse(c, m, why, code);
		return;
	}
	if (d->d_flags & IPC_ONCE)
		c->c_once |= ipc_once_bit(c, d);
	d->d_fn(c, m, c->c_arg);
}

/* Queue the descriptors that came with len bytes, then the bytes.
 * 0, or -1 when the channel died (the fds are closed). */
static int
ipc_feed_in(struct ipc_conn *c, const void *buf, size_t len, const int *fds,
    size_t nfds)
{
	size_t i;

	for (i = 0; i < nfds; i++) {
		if (c->c_ninfd == IPC_MAX_FDQ) {
			for (; i < nfds; i++)
				close(fds[i]);
			ipc_die(c, "too many descriptors queued");
			return -1;
		}
		c->c_infd[c->c_ninfd].if_fd = fds[i];
		c->c_infd[c->c_ninfd].if_off = c->c_inend + (len ? len - 1 : 0);
		c->c_ninfd++;
	}
	if (nfds > 0 && len == 0) {
		ipc_die(c, "descriptor without data");
		return -1;
	}
	if (len > 0 && evbuffer_add(c->c_in, buf, len) == -1) {
		ipc_die(c, "out of memory");
		return -1;
	}
	c->c_inend += len;
	return 0;
}

/* An fd belongs to the frame whose first byte it came with: bind it to
 * m, or refuse a missing or unexpected one.  0, or -1 (channel died). */
static int
ipc_bind_fd(struct ipc_conn *c, const struct ipc_hdr *h, struct ipc_msg *m)
{
	int here;

	if (c->c_ninfd > 0 && c->c_infd[0].if_off < c->c_inoff) {
		ipc_die(c, "unexpected descriptor");
		return -1;
	}
	here = c->c_ninfd > 0 && c->c_infd[0].if_off == c->c_inoff;
	if ((h->flags & IPC_FLAG_FD) == 0) {
		if (here) {
			ipc_die(c, "unexpected descriptor");
			return -1;
		}
		return 0;
	}
	if (!here) {
		ipc_die(c, "frame announces a missing fd");
		return -1;
	}
	m->m_fd = c->c_infd[0].if_fd;
	memmove(c->c_infd, c->c_infd + 1, --c->c_ninfd * sizeof(c->c_infd[0]));
	return 0;
}

/* One whole frame at the head of c_in: dispatch it and consume it.
 * 0, or -1 when the channel died. */
static int
ipc_feed_frame(struct ipc_conn *c, const struct ipc_hdr *h)
{
	struct ipc_msg m;
	unsigned char *body;
	int rc = 0;

	ipc_msg_init(&m, h->type, h->id, h->len, c->c_peer);
	if (ipc_bind_fd(c, h, &m) == -1)
		return -1;
	body = evbuffer_pullup(c->c_in, IPC_HDR_LEN + (ssize_t)h->len);
	if (body == NULL) {
		ipc_die(c, "out of memory");
		rc = -1;
	} else if ((h->flags & IPC_FLAG_REPLY) == 0)
		ipc_handle_request(c, &m, (char *)body + IPC_HDR_LEN);
	else if (ipc_handle_reply(c, &m, (char *)body + IPC_HDR_LEN) == -1) {
		ipc_die(c, "unexpected reply");
		rc = -1;
	}
	if (m.m_fd >= 0)
		close(m.m_fd);
	json_object_put(m.m_obj);
	if (rc == 0 && !c->c_freeme) {
		evbuffer_drain(c->c_in, IPC_HDR_LEN + (size_t)h->len);
		c->c_inoff += IPC_HDR_LEN + (uint64_t)h->len;
	}
	return rc;
}

int
ipc_conn_feed(struct ipc_conn *c, const void *buf, size_t len, const int *fds,
    size_t nfds)
{
	struct ipc_hdr h;
	uint8_t hb[IPC_HDR_LEN];
	size_t i;
	int rc = 0;

	if (c->c_dead) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return -1;
	}
	c->c_inuse++;
	if (ipc_feed_in(c, buf, len, fds, nfds) == -1)
		goto out;
	while (!c->c_dead && !c->c_freeme) {
		if (evbuffer_get_length(c->c_out) > IPC_MAX_UNSENT) {
			/* The rest waits in c_in; ipc_write_cb resumes. */
			if (!c->c_paused && c->c_rev != NULL)
				event_del(c->c_rev);
			c->c_paused = 1;
			break;
		}
		if (evbuffer_copyout(c->c_in, hb, sizeof(hb)) <
		    (ev_ssize_t)sizeof(hb))
			break;
		if (ipc_hdr_decode(hb, sizeof(hb), &h) != IPC_FRAME) {
			ipc_die(c, "bad frame header");
			goto out;
		}
		if (evbuffer_get_length(c->c_in) < IPC_HDR_LEN + (size_t)h.len)
			break;
		if (ipc_feed_frame(c, &h) == -1)
			goto out;
	}
	/* Once every buffered byte is consumed, a queued fd was unclaimed. */
	if (!c->c_dead && c->c_ninfd > 0 && c->c_infd[0].if_off < c->c_inoff)
		ipc_die(c, "unexpected descriptor");
out:
	if (c->c_dead)
		rc = -1;
	ipc_release(c);
	return rc;
}

static void
ipc_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ipc_conn *c = arg;
	unsigned char buf[IPC_READ_CHUNK];
	int fds[IPC_MAX_FDQ];
	size_t nfds = 0;
	ssize_t n;

	n = ipc_recvmsg_fds(fd, buf, sizeof(buf), fds, &nfds, IPC_MAX_FDQ);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if (errno == ECONNRESET)
			ipc_die(c, NULL); /* the peer died: a close, no fault */
		else
			ipc_die(c, errno == EPROTO ? "bad descriptor passing"
						   : "read error");
		return;
	}
	if (n == 0) {
		for (size_t i = 0; i < nfds; i++)
			close(fds[i]);
		ipc_die(c, NULL); /* orderly close: the owner decides */
		return;
	}
	ipc_conn_feed(c, buf, (size_t)n, fds, nfds);
}

/* One sendmsg of c_out's first bytes, never past limit (the next fd's
 * frame).  As sendmsg. */
static ssize_t
ipc_send_upto(struct ipc_conn *c, int fd, uint64_t limit)
{
	struct evbuffer_iovec vec[IPC_MAX_IOV];
	struct iovec iov[IPC_MAX_IOV];
	struct msghdr msg;
	uint64_t sum;
	ssize_t n;
	int i, nvec;

	nvec =
	    evbuffer_peek(c->c_out, (ev_ssize_t)limit, NULL, vec, IPC_MAX_IOV);
	if (nvec > IPC_MAX_IOV)
		nvec = IPC_MAX_IOV;
	for (i = 0; i < nvec; i++) {
		iov[i].iov_base = vec[i].iov_base;
		iov[i].iov_len = vec[i].iov_len;
	}
	for (i = 0, sum = 0; i < nvec; i++) {
		if (sum + iov[i].iov_len >= limit) {
			iov[i].iov_len = (size_t)(limit - sum);
			nvec = i + 1;
			break;
		}
		sum += iov[i].iov_len;
	}
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.msg_iovlen = (size_t)nvec;
	do {
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	} while (n == -1 && errno == EINTR);
	return n;
}

/*
 * Write what the socket takes of c_out: 0 once it is empty, or -1 with
 * errno (EAGAIN: the socket is full).
 */
static int
ipc_write_out(struct ipc_conn *c, int fd)
{
	uint64_t limit;
	size_t avail;
	ssize_t n;
	int sendfd;

	while ((avail = evbuffer_get_length(c->c_out)) > 0) {
		sendfd = -1;
		limit = avail;
		if (c->c_noutfd > 0) {
			if (c->c_outfd[0].of_off == c->c_outoff) {
				sendfd = c->c_outfd[0].of_fd;
				if (c->c_noutfd > 1)
					limit =
					    c->c_outfd[1].of_off - c->c_outoff;
			} else
				limit = c->c_outfd[0].of_off - c->c_outoff;
		}
		if (sendfd >= 0) {
			/* The fd rides on the frame's first byte. */
			unsigned char *p = evbuffer_pullup(c->c_out, 1);
			n = ipc_sendmsg_fd(fd, p, 1, sendfd);
		} else
			n = ipc_send_upto(c, fd, limit);
		if (n == -1)
			return -1;
		if (sendfd >= 0 && n > 0) {
			close(sendfd);
			memmove(c->c_outfd, c->c_outfd + 1,
			    --c->c_noutfd * sizeof(c->c_outfd[0]));
		}
		evbuffer_drain(c->c_out, (size_t)n);
		c->c_outoff += (uint64_t)n;
	}
	return 0;
}

static void
ipc_write_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct ipc_conn *c = arg;

	if (ipc_write_out(c, fd) == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		/*
		 * A peer that died (killed, crashed) is a close, not broken
		 * framing: reporting it would have cordond restart someone
		 * for nothing.
		 */
		ipc_die(c, errno == EPIPE || errno == ECONNRESET
			       ? NULL
			       : "write error");
		return;
	}
	event_del(c->c_wev);
	if (c->c_paused && !c->c_dead) {
		/* All sent: read again, starting with what is buffered. */
		c->c_paused = 0;
		if (event_add(c->c_rev, NULL) == -1) {
			ipc_die(c, "out of memory");
			return;
		}
		ipc_conn_feed(c, NULL, 0, NULL, 0);
	}
}

/*
 * Send what is queued now rather than on the next loop pass, for a
 * caller about to block (an fsync) while the peer could already work on
 * the frame.  Runs no callback: an error, or what the socket does not
 * take, is left to the write event, which stays armed.
 */
void
ipc_flush(struct ipc_conn *c)
{
	if (c->c_dead || c->c_fd < 0 || evbuffer_get_length(c->c_out) == 0)
		return;
	(void)ipc_write_out(c, c->c_fd);
}
