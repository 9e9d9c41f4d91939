/*
 * SBX-6, SBX-8: a run's gate channels: the datagram socket (each call
 * with its reply socket) and, where the run has a mount namespace of its
 * own, the FIFO slots of GATE_FIFO_DIR; opened with the run, closed at
 * its end (held calls denied, SBX-7).  Touches only the run's FIFO
 * directory, through the fd the child handed back.
 */

#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "gate_item.h"
#include "log.h"
#include "util.h"

/* A zero-length read: the last agent process closed its end, or an
 * empty datagram (then keep listening). */
static int
gate_hup(int fd)
{
	struct pollfd pfd = {fd, POLLIN, 0};

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR));
}

/* The caller's reply socket must be what `cordon gate` makes. */
static int
reply_sock_ok(int fd)
{
	int v;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == -1 ||
	    v != SOCK_SEQPACKET)
		return 0;
	len = sizeof(v);
	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) == 0 &&
	       v == AF_UNIX;
}

static void
gate_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	static uint8_t buf[GATE_DGRAM_MAX + 1];
	struct gate_chan *ch = arg;
	int fds[IPC_MAX_FDQ];
	size_t nfds = 0, i;
	ssize_t n;

	n = ipc_recvmsg_fds(fd, buf, sizeof(buf), fds, &nfds, IPC_MAX_FDQ);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		if (errno == EPROTO) {
			log_warnx("gate: run %s: bad descriptors, call dropped",
			    ch->gc_run);
			return;
		}
		log_warn("gate: run %s: read", ch->gc_run);
		event_del(ch->gc_ev);
		return;
	}
	if (n == 0 && nfds == 0 && gate_hup(fd)) {
		event_del(ch->gc_ev); /* every agent process closed it */
		return;
	}
	/* Exactly one descriptor, the reply socket; else nobody to answer. */
	if (nfds != 1 || !reply_sock_ok(fds[0])) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		log_warnx("gate: run %s: call without a reply socket dropped",
		    ch->gc_run);
		return;
	}
	gate_handle(ch, buf, (size_t)n, fds[0], -1);
}

/* ---- the channel by path (SBX-8) ---- */

static void gate_slot_cb(evutil_socket_t, short, void *);

/*
 * (Re)open slot N's N.in for the next request: a reader opened while no
 * writer is there sees no hang-up until one has come and gone, so the
 * EOF that ends each request is seen once.
 */
static int
gate_slot_listen(struct gate_slot *gs)
{
	char name[16];

	if (gs->gs_ev != NULL)
		event_free(gs->gs_ev);
	gs->gs_ev = NULL;
	if (gs->gs_in != -1)
		close(gs->gs_in);
	snprintf(name, sizeof(name), "%d.in", gs->gs_n);
	if ((gs->gs_in = openat(gs->gs_chan->gc_dir, name,
		 O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if ((gs->gs_ev = event_new(sp.sp_d.d_base, gs->gs_in,
		 EV_READ | EV_PERSIST, gate_slot_cb, gs)) == NULL ||
	    event_add(gs->gs_ev, NULL) == -1)
		return -1;
	return 0;
}

static void
gate_slot_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gate_slot *gs = arg;
	struct gate_chan *ch = gs->gs_chan;
	uint8_t buf[16384];
	size_t len;
	ssize_t n;

	for (;;) {
		n = read(gs->gs_in, buf, sizeof(buf));
		if (n > 0) {
			if (gs->gs_over ||
			    evbuffer_get_length(gs->gs_buf) + (size_t)n >
				GATE_DGRAM_MAX)
				gs->gs_over = 1;
			else
				evbuffer_add(gs->gs_buf, buf, (size_t)n);
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return; /* more to come: the writer has not closed */
		break;
	}
	/* EOF: the caller closed N.in, its request is whole. */
	len = evbuffer_get_length(gs->gs_buf);
	if (gs->gs_over)
		log_warnx("gate: run %s: a call too large dropped", ch->gc_run);
	else if (len > 0)
		gate_handle(
		    ch, evbuffer_pullup(gs->gs_buf, -1), len, -1, gs->gs_n);
	evbuffer_drain(gs->gs_buf, len);
	gs->gs_over = 0;
	if (gate_slot_listen(gs) == -1)
		log_warn("gate: run %s: slot %d", ch->gc_run, gs->gs_n);
}

static void
gate_fifo_close(struct gate_chan *ch)
{
	struct gate_slot *gs;
	size_t i;

	for (i = 0; i < GATE_FIFO_SLOTS; i++) {
		gs = &ch->gc_slots[i];
		if (gs->gs_ev != NULL)
			event_free(gs->gs_ev);
		if (gs->gs_in != -1)
			close(gs->gs_in);
		if (gs->gs_out != -1)
			close(gs->gs_out);
		if (gs->gs_buf != NULL)
			evbuffer_free(gs->gs_buf);
		gs->gs_ev = NULL;
		gs->gs_buf = NULL;
		gs->gs_in = gs->gs_out = -1;
	}
	if (ch->gc_dir != -1)
		close(ch->gc_dir);
	ch->gc_dir = -1;
}

int
gate_chan_fifo(struct gate_chan *ch, int dirfd)
{
	struct gate_slot *gs;
	char name[16];
	size_t i;

	if (ch == NULL || ch->gc_dir != -1) {
		close(dirfd);
		return -1;
	}
	ch->gc_dir = dirfd;
	for (i = 0; i < GATE_FIFO_SLOTS; i++) {
		gs = &ch->gc_slots[i];
		gs->gs_chan = ch;
		gs->gs_n = (int)i;
		snprintf(name, sizeof(name), "%zu.out", i);
		if ((gs->gs_buf = evbuffer_new()) == NULL ||
		    (gs->gs_out = openat(dirfd, name,
			 O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
		    gate_slot_listen(gs) == -1) {
			log_warn("gate: run %s: the gate by path", ch->gc_run);
			gate_fifo_close(ch);
			return -1;
		}
	}
	return 0;
}

int
gate_chan_open(struct gate_chan **out, const struct agent *ag,
    const char *run_id, const char *cwd, const struct redact_keys *keys,
    int *childfd)
{
	struct gate_chan *ch;
	int sv[2];

	*out = NULL;
	*childfd = -1;
	if ((ch = calloc(1, sizeof(*ch))) == NULL)
		return -1;
	ch->gc_fd = ch->gc_dir = -1;
	for (size_t i = 0; i < GATE_FIFO_SLOTS; i++)
		ch->gc_slots[i].gs_in = ch->gc_slots[i].gs_out = -1;
	if (realpath(cwd, ch->gc_ws) == NULL) {
		log_warn("gate: run %s: workspace", run_id);
		free(ch);
		return -1;
	}
	gate_scpy(ch->gc_agent, sizeof(ch->gc_agent), ag->ag_mf.m_name);
	gate_scpy(ch->gc_run, sizeof(ch->gc_run), run_id);
	ch->gc_policy = gate_policy_of(ag);
	ch->gc_keys = keys;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("gate: run %s: socketpair", run_id);
		free(ch);
		return -1;
	}
	ch->gc_fd = sv[0];
	if (set_nonblock(ch->gc_fd, 1) == -1 ||
	    (ch->gc_ev = event_new(sp.sp_d.d_base, ch->gc_fd,
		 EV_READ | EV_PERSIST, gate_read_cb, ch)) == NULL ||
	    event_add(ch->gc_ev, NULL) == -1) {
		if (ch->gc_ev != NULL)
			event_free(ch->gc_ev);
		close(sv[0]);
		close(sv[1]);
		free(ch);
		return -1;
	}
	*childfd = sv[1];
	*out = ch;
	return 0;
}

void
gate_chan_close(struct gate_chan *ch)
{
	struct gate_item *gi, *next;

	if (ch == NULL)
		return;
	event_free(ch->gc_ev);
	close(ch->gc_fd);
	gate_fifo_close(ch);
	for (gi = TAILQ_FIRST(&gate_items); gi != NULL; gi = next) {
		next = TAILQ_NEXT(gi, gi_entry);
		if (gi->gi_chan != ch)
			continue;
		gi->gi_chan = NULL;
		if (gi->gi_state != GI_HELD)
			continue; /* answered deny from gate_audit_cb */
		gate_answer(gi, 0, "run-ended");
		gate_rule_set(gi->gi_rule, sizeof(gi->gi_rule), "run-ended");
		gate_audit(gi, "ask-deny", 0);
	}
	free(ch);
}

int
gate_env(char ***envp, int fifo)
{
	static const char var[] = "CORDON_GATE_FD=", pvar[] = "CORDON_GATE=";
	char **e = *envp, **ne, *s, *p = NULL;
	size_t i, j, n;

	if ((s = strdup("CORDON_GATE_FD=3")) == NULL ||
	    (fifo && (p = strdup("CORDON_GATE=" GATE_FIFO_DIR)) == NULL)) {
		free(s);
		return -1;
	}
	for (n = 0; e != NULL && e[n] != NULL; n++)
		;
	for (i = j = 0; i < n; i++) {
		if (strncmp(e[i], var, sizeof(var) - 1) == 0 ||
		    strncmp(e[i], pvar, sizeof(pvar) - 1) == 0) {
			free(e[i]);
			continue;
		}
		e[j++] = e[i];
	}
	if ((ne = reallocarray(e, j + 3, sizeof(char *))) == NULL) {
		if (e != NULL)
			e[j] = NULL;
		free(s);
		free(p);
		return -1;
	}
	ne[j++] = s;
	if (p != NULL)
		ne[j++] = p;
	ne[j] = NULL;
	*envp = ne;
	return 0;
}
