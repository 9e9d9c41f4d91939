/*
 * SBX-6, SBX-8: a run's channels in gated: its gate socket (each call
 * with the caller's reply socket) and, where the run has the gate by
 * path, its relay socket (each FIFO request as the spawner read it, with
 * a reply socket of the spawner's); listened to from MSG_GATE_OPEN and
 * MSG_GATE_RELAY, closed at the run's end (held calls denied, SBX-7).
 * Touches no file.
 */

#include <sys/socket.h>

#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "gated.h"
#include "log.h"
#include "util.h"

/* A zero-length read: the last holder closed its end, or an empty
 * datagram (then keep listening). */
static int
gate_hup(int fd)
{
	struct pollfd pfd = {fd, POLLIN, 0};

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR));
}

/* The reply socket must be what `cordon gate` (or the relay) makes. */
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

/* One datagram on either channel; relay: calls by path (SBX-8). */
static void
gate_read(struct gate_chan *ch, int fd, struct event *ev, int relay)
{
	static uint8_t buf[GATE_DGRAM_MAX + 1];
	int fds[IPC_MAX_FDQ];
	size_t nfds = 0, i;
	ssize_t n;

	n = ipc_recvmsg_fds(fd, buf, sizeof(buf), fds, &nfds, IPC_MAX_FDQ);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		if (errno == EPROTO) {
			if (log_limit(&ch->gc_loglim, ch->gc_run))
				log_warnx("gate: run %s: bad descriptors, call "
					  "dropped",
				    ch->gc_run);
			return;
		}
		log_warn("gate: run %s: read", ch->gc_run);
		event_del(ev);
		return;
	}
	if (n == 0 && nfds == 0 && gate_hup(fd)) {
		event_del(ev); /* every other holder closed it */
		return;
	}
	/* Exactly one descriptor, the reply socket; else nobody to answer. */
	if (nfds != 1 || !reply_sock_ok(fds[0])) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		if (log_limit(&ch->gc_loglim, ch->gc_run))
			log_warnx("gate: run %s: call without a reply socket "
				  "dropped",
			    ch->gc_run);
		return;
	}
	gate_handle(ch, buf, (size_t)n, fds[0], relay);
}

static void
gate_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gate_chan *ch = arg;

	gate_read(ch, fd, ch->gc_ev, 0);
}

static void
gate_relay_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gate_chan *ch = arg;

	gate_read(ch, fd, ch->gc_relay_ev, 1);
}

int
gate_chan_listen(struct gate_chan *ch, int fd, int relay)
{
	struct event **evp = relay ? &ch->gc_relay_ev : &ch->gc_ev;
	int *fdp = relay ? &ch->gc_relay : &ch->gc_fd;

	if (*fdp != -1 || set_nonblock(fd, 1) == -1 ||
	    (*evp = event_new(gd.gd_d.d_base, fd, EV_READ | EV_PERSIST,
		 relay ? gate_relay_cb : gate_read_cb, ch)) == NULL ||
	    event_add(*evp, NULL) == -1) {
		if (*fdp == -1 && *evp != NULL) {
			event_free(*evp);
			*evp = NULL;
		}
		close(fd);
		return -1;
	}
	*fdp = fd;
	return 0;
}

void
gate_chan_close(struct gate_chan *ch)
{
	struct gate_item *gi, *next;

	if (ch == NULL)
		return;
	gate_limited_flush(ch);
	log_limit_end(&ch->gc_loglim, ch->gc_run);
	if (ch->gc_ev != NULL)
		event_free(ch->gc_ev);
	if (ch->gc_relay_ev != NULL)
		event_free(ch->gc_relay_ev);
	if (ch->gc_fd != -1)
		close(ch->gc_fd);
	if (ch->gc_relay != -1)
		close(ch->gc_relay);
	for (gi = TAILQ_FIRST(&gd.gd_items); gi != NULL; gi = next) {
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
	TAILQ_REMOVE(&gd.gd_runs, ch, gc_entry);
	gd.gd_nruns--;
	gate_policy_free(&ch->gc_policy);
	free(ch);
}
