/*
 * An open tunnel's bytes moved inside the kernel (EG-1).  Once the
 * CONNECT is answered and nothing is buffered either way, each direction
 * runs splice(2) from its source socket into a pipe of its own and from
 * that pipe into its destination socket: no byte is copied through user
 * space, and one event-loop pass moves up to PUMP_CHUNK.  Backpressure
 * is the pipe: a direction whose destination is full stops reading until
 * it drains.  A source's EOF stops that direction alone: once its pipe
 * is empty, tunnel.c passes the half-close on (EG-4).  The run's byte
 * budget, the idle timer and how the tunnel ends are tunnel.c's, as on
 * the buffered path, which stays in use when no pipe can be made.
 * Touches only the tunnel's two sockets and the pipes it makes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "egressd.h"

#define PUMP_CHUNK (1024 * 1024) /* asked of one splice(2) */
/* Each pipe, if the user's pipe pages allow it (fs.pipe-user-pages-soft);
 * else the kernel's default size, which works as well, slower. */
#define PUMP_PIPE_SZ (1024 * 1024)

struct pump_dir {
	struct tunnel *pd_t;
	int pd_bit; /* the tunnel's t_eof bit for this direction's source */
	int pd_src, pd_dst;
	int pd_pipe[2];
	size_t pd_held; /* in the pipe, not yet written */
	struct event *pd_rd, *pd_wr;
	unsigned long long *pd_count;
	const char *pd_src_end, *pd_dst_end; /* how a failing side ends it */
};

struct pump {
	struct pump_dir p_dir[2]; /* 0: agent to upstream, 1: back */
	int p_ending;		  /* a side ended: deliver what is held */
};

static void pump_read_cb(evutil_socket_t, short, void *);
static void pump_write_cb(evutil_socket_t, short, void *);

static int
pump_held(const struct pump *p)
{
	return p->p_dir[0].pd_held > 0 || p->p_dir[1].pd_held > 0;
}

/* One side failed: deliver what the pipes hold, then go. */
static void
pump_end(struct tunnel *t, const char *end)
{
	struct pump *p = t->t_pump;
	struct timeval tv = {EG_REFUSE_LINGER, 0};
	int i;

	if (t->t_end == NULL)
		t->t_end = end;
	p->p_ending = 1;
	for (i = 0; i < 2; i++)
		event_del(p->p_dir[i].pd_rd);
	if (!pump_held(p)) {
		tunnel_close(t, end);
		return;
	}
	t->t_state = T_CLOSING; /* tunnel.c's timer ends it after a linger */
	evtimer_add(t->t_timer, &tv);
}

/* Write what the pipe holds; read again once it is empty. */
static void
pump_flush(struct pump_dir *d)
{
	struct tunnel *t = d->pd_t;
	struct pump *p = t->t_pump;
	ssize_t n;

	while (d->pd_held > 0) {
		n = splice(d->pd_pipe[0], NULL, d->pd_dst, NULL, d->pd_held,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0)
			d->pd_held -= (size_t)n;
		else if (n == -1 && errno == EINTR)
			continue;
		else if (n == -1 && errno == EAGAIN)
			break;
		else {
			/* The destination is gone: nothing more to deliver. */
			tunnel_close(t, d->pd_dst_end);
			return;
		}
	}
	if (d->pd_held > 0) {
		event_del(d->pd_rd);
		event_add(d->pd_wr, NULL);
		return;
	}
	event_del(d->pd_wr);
	/* Its source ended and all it sent is out: pass the end on. */
	if ((t->t_eof & ~t->t_shut & d->pd_bit) &&
	    tunnel_half_close(t, d->pd_bit >> 1))
		return;
	if (p->p_ending) {
		if (!pump_held(p))
			tunnel_close(t, NULL);
	} else if (!(t->t_eof & d->pd_bit))
		event_add(d->pd_rd, NULL);
}

static void
pump_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct pump_dir *d = arg;
	struct tunnel *t = d->pd_t;
	ssize_t n;

	n = splice(d->pd_src, NULL, d->pd_pipe[1], NULL, PUMP_CHUNK,
	    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == 0) { /* a half-close: this direction ends */
		event_del(d->pd_rd);
		t->t_eof |= d->pd_bit;
		pump_flush(d);
		return;
	}
	if (n == -1) {
		pump_end(t, d->pd_src_end);
		return;
	}
	/* Over the run's budget: closed, the bytes never delivered. */
	if (tunnel_budget(t, (size_t)n) == -1) {
		tunnel_close(t, "budget-exceeded");
		return;
	}
	*d->pd_count += (unsigned long long)n;
	d->pd_held += (size_t)n;
	pump_flush(d);
}

static void
pump_write_cb(evutil_socket_t fd, short ev, void *arg)
{
	pump_flush(arg);
}

void
pump_free(struct tunnel *t)
{
	struct pump *p = t->t_pump;
	int i;

	if (p == NULL)
		return;
	for (i = 0; i < 2; i++) {
		if (p->p_dir[i].pd_rd != NULL)
			event_free(p->p_dir[i].pd_rd);
		if (p->p_dir[i].pd_wr != NULL)
			event_free(p->p_dir[i].pd_wr);
		if (p->p_dir[i].pd_pipe[0] != -1)
			close(p->p_dir[i].pd_pipe[0]);
		if (p->p_dir[i].pd_pipe[1] != -1)
			close(p->p_dir[i].pd_pipe[1]);
	}
	free(p);
	t->t_pump = NULL;
}

static int
pump_dir_init(struct pump_dir *d, struct tunnel *t, struct bufferevent *src,
    struct bufferevent *dst, unsigned long long *count)
{
	struct event_base *base = eg.eg_d.d_base;

	d->pd_t = t;
	d->pd_bit = src == t->t_up ? 2 : 1;
	d->pd_src = bufferevent_getfd(src);
	d->pd_dst = bufferevent_getfd(dst);
	d->pd_count = count;
	d->pd_src_end = src == t->t_up ? "upstream-error" : "closed";
	d->pd_dst_end = dst == t->t_up ? "upstream-error" : "closed";
	if (pipe2(d->pd_pipe, O_NONBLOCK | O_CLOEXEC) == -1) {
		d->pd_pipe[0] = d->pd_pipe[1] = -1;
		return -1;
	}
	/* A bigger pipe moves more per pass; the default still works. */
	(void)fcntl(d->pd_pipe[1], F_SETPIPE_SZ, PUMP_PIPE_SZ);
	d->pd_rd =
	    event_new(base, d->pd_src, EV_READ | EV_PERSIST, pump_read_cb, d);
	d->pd_wr =
	    event_new(base, d->pd_dst, EV_WRITE | EV_PERSIST, pump_write_cb, d);
	return d->pd_rd == NULL || d->pd_wr == NULL ? -1 : 0;
}

/*
 * Hand an open tunnel with nothing buffered to the kernel: 0, or -1 and
 * the tunnel stays on bufferevents (no pipe left under the fd limit).
 */
int
pump_start(struct tunnel *t)
{
	struct pump *p;
	int i;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -1;
	for (i = 0; i < 2; i++)
		p->p_dir[i].pd_pipe[0] = p->p_dir[i].pd_pipe[1] = -1;
	t->t_pump = p;
	if (pump_dir_init(&p->p_dir[0], t, t->t_cli, t->t_up, &t->t_bytes_up) ==
		-1 ||
	    pump_dir_init(
		&p->p_dir[1], t, t->t_up, t->t_cli, &t->t_bytes_down) == -1) {
		pump_free(t);
		return -1;
	}
	bufferevent_disable(t->t_cli, EV_READ | EV_WRITE);
	bufferevent_disable(t->t_up, EV_READ | EV_WRITE);
	/* A direction whose source ended on the buffered path stays ended. */
	for (i = 0; i < 2; i++)
		if (!(t->t_shut & p->p_dir[i].pd_bit))
			event_add(p->p_dir[i].pd_rd, NULL);
	return 0;
}
