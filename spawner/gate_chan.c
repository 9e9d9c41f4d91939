/*
 * SBX-6, SBX-8: a run's gate channels, made here and served by gated
 * (see gatechan.h): the datagram socket (its receiving end handed to
 * gated) and, where the run has a mount namespace of its own, the FIFO
 * slots of GATE_FIFO_DIR, whose requests are copied unread to gated on
 * the run's relay socket and whose answers come back the same way.
 * Nothing here parses a call.  Opened with the run, closed at its end.
 * Touches only the run's FIFO directory, through the fd the child
 * handed back.
 */

#include <sys/queue.h>
#include <sys/socket.h>

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "gatechan.h"
#include "log.h"
#include "msg.h"
#include "redact.h"
#include "spawner.h"
#include "util.h"

/* SBX-8: one pair of named pipes of the run's GATE_FIFO_DIR. */
struct gate_slot {
	struct gate_chan *gs_chan;
	int gs_n;
	int gs_in;  /* N.in, read: reopened after each request's EOF */
	int gs_out; /* N.out, held O_RDWR: a write never meets EPIPE */
	struct event *gs_ev;
	struct evbuffer *gs_buf; /* the request so far */
	int gs_over;		 /* it passed GATE_DGRAM_MAX */
	int gs_reply;		 /* gated's answer comes here, or -1 */
	struct event *gs_reply_ev;
};

struct gate_chan {
	TAILQ_ENTRY(gate_chan) gc_entry;
	int gc_fd;	 /* the receiving end, also gated's */
	int gc_relay[2]; /* [0] gated's end (our copy), [1] ours */
	int gc_dir;	 /* GATE_FIFO_DIR, or -1 */
	struct gate_slot gc_slots[GATE_FIFO_SLOTS];
	char gc_agent[LIM_NAME_MAX + 1];
	char gc_run[17];
	char gc_ws[PATH_MAX]; /* the workspace, resolved */
	const struct gate_policy *gc_policy;
	const struct redact_keys *gc_keys; /* the run's, for its lifetime */
	struct log_limit gc_loglim;	   /* the lines its calls cause */
};

static TAILQ_HEAD(, gate_chan) gate_chans = TAILQ_HEAD_INITIALIZER(gate_chans);

/* ---- handing the channels to gated ---- */

static struct json_object *
open_payload(const struct gate_chan *ch)
{
	const struct protect_ctx *pc = &sp.sp_protect;
	struct json_object *o = json_object_new_object(), *a;
	size_t i;

	json_object_object_add(o, "runId", json_object_new_string(ch->gc_run));
	json_object_object_add(
	    o, "agent", json_object_new_string(ch->gc_agent));
	json_object_object_add(
	    o, "workspace", json_object_new_string(ch->gc_ws));
	json_object_object_add(o, "commands", gate_policy_json(ch->gc_policy));
	if (pc->pc_home != NULL)
		json_object_object_add(
		    o, "home", json_object_new_string(pc->pc_home));
	if (pc->pc_runs != NULL)
		json_object_object_add(
		    o, "runs", json_object_new_string(pc->pc_runs));
	a = json_object_new_array();
	for (i = 0; i < pc->pc_nextra; i++)
		json_object_array_add(
		    a, json_object_new_string(pc->pc_extra[i]));
	json_object_object_add(o, "protect", a);
	if (pc->pc_nlinks > 0) {
		a = json_object_new_array();
		for (i = 0; i < pc->pc_nlinks; i++)
			json_object_array_add(
			    a, json_object_new_string(pc->pc_links[i]));
		json_object_object_add(o, "links", a);
	}
	return o;
}

/* One frame with a copy of fd (ours stays); -1 if gated is down. */
static int
gated_send(uint32_t type, struct json_object *o, int fd)
{
	struct ipc_conn *c = sp.sp_d.d_peers[PROC_GATED];
	int dfd;

	if (c == NULL || (dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) == -1)
		return -1;
	return ipc_send(c, type, o, dfd);
}

static void
hand_open(struct gate_chan *ch)
{
	struct json_object *o;

	if (sp.sp_d.d_peers[PROC_GATED] == NULL) {
		log_warnx("run %s: gated is down; its gate calls wait for it",
		    ch->gc_run);
		return;
	}
	o = open_payload(ch);
	if (gated_send(MSG_GATE_OPEN, o, ch->gc_fd) == -1)
		log_warnx("run %s: cannot hand its gate to gated", ch->gc_run);
	json_object_put(o);
}

static void
hand_relay(struct gate_chan *ch)
{
	struct json_object *o;

	if (ch->gc_relay[0] == -1 || sp.sp_d.d_peers[PROC_GATED] == NULL)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "runId", json_object_new_string(ch->gc_run));
	if (gated_send(MSG_GATE_RELAY, o, ch->gc_relay[0]) == -1)
		log_warnx(
		    "run %s: cannot hand its gate relay to gated", ch->gc_run);
	json_object_put(o);
}

void
gate_peer_up(void)
{
	struct gate_chan *ch;

	TAILQ_FOREACH (ch, &gate_chans, gc_entry) {
		hand_open(ch);
		hand_relay(ch);
	}
}

void
gate_scrub_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	const char *id = json_shape_str(m->m_obj, "runId", NULL), *text;
	struct evbuffer *out;
	struct json_object *o;
	struct gate_chan *ch;
	size_t len;

	TAILQ_FOREACH (ch, &gate_chans, gc_entry)
		if (strcmp(ch->gc_run, id) == 0)
			break;
	if (ch == NULL) {
		ipc_reply_error(c, m, "unknown-run");
		return;
	}
	text = json_shape_str(m->m_obj, "text", &len);
	if ((out = evbuffer_new()) == NULL ||
	    redact_buf(ch->gc_keys, text, len, 0, out) == -1 ||
	    evbuffer_add(out, "", 1) == -1) {
		if (out != NULL)
			evbuffer_free(out);
		ipc_reply_error(c, m, "internal");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "text",
	    json_object_new_string((const char *)evbuffer_pullup(out, -1)));
	ipc_reply(c, m, MSG_GATE_SCRUB_OK, o, -1);
	json_object_put(o);
	evbuffer_free(out);
}

/* ---- the channel by path (SBX-8) ---- */

static void gate_slot_cb(evutil_socket_t, short, void *);

static void
slot_reply_close(struct gate_slot *gs)
{
	if (gs->gs_reply_ev != NULL)
		event_free(gs->gs_reply_ev);
	if (gs->gs_reply != -1)
		close(gs->gs_reply);
	gs->gs_reply_ev = NULL;
	gs->gs_reply = -1;
}

/* gated's answer (at most PIPE_BUF bytes: one atomic write among the
 * slot's answers), into N.out as it came; none: the caller times out. */
static void
slot_reply_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gate_slot *gs = arg;
	uint8_t buf[PIPE_BUF];
	ssize_t n;

	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	/* Nobody reading and the pipe full: the caller timed out. */
	if (n > 0 && write(gs->gs_out, buf, (size_t)n) != n)
		log_debug("gate: a verdict could not be delivered");
	slot_reply_close(gs);
}

/* A whole request, to gated unread with a reply socket of ours. */
static void
slot_relay(struct gate_slot *gs, const uint8_t *buf, size_t len)
{
	struct gate_chan *ch = gs->gs_chan;
	int rp[2];

	slot_reply_close(gs); /* a caller before this one gave up */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rp) == -1) {
		log_warn("gate: run %s: socketpair", ch->gc_run);
		return;
	}
	if (ipc_sendmsg_fd(ch->gc_relay[1], buf, len, rp[1]) != (ssize_t)len) {
		if (log_limit(&ch->gc_loglim, ch->gc_run))
			log_warnx(
			    "gate: run %s: a call by path dropped", ch->gc_run);
		close(rp[0]);
		close(rp[1]);
		return;
	}
	close(rp[1]);
	gs->gs_reply = rp[0];
	if ((gs->gs_reply_ev = event_new(
		 sp.sp_d.d_base, rp[0], EV_READ, slot_reply_cb, gs)) == NULL ||
	    event_add(gs->gs_reply_ev, NULL) == -1)
		slot_reply_close(gs);
}

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
	if (gs->gs_over) {
		if (log_limit(&ch->gc_loglim, ch->gc_run))
			log_warnx("gate: run %s: a call too large dropped",
			    ch->gc_run);
	} else if (len > 0)
		slot_relay(gs, evbuffer_pullup(gs->gs_buf, -1), len);
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
		slot_reply_close(gs);
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
	for (i = 0; i < 2; i++)
		if (ch->gc_relay[i] != -1)
			close(ch->gc_relay[i]);
	ch->gc_relay[0] = ch->gc_relay[1] = -1;
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
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
		ch->gc_relay) == -1 ||
	    set_nonblock(ch->gc_relay[1], 1) == -1)
		goto fail;
	for (i = 0; i < GATE_FIFO_SLOTS; i++) {
		gs = &ch->gc_slots[i];
		gs->gs_chan = ch;
		gs->gs_n = (int)i;
		snprintf(name, sizeof(name), "%zu.out", i);
		if ((gs->gs_buf = evbuffer_new()) == NULL ||
		    (gs->gs_out = openat(dirfd, name,
			 O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
		    gate_slot_listen(gs) == -1)
			goto fail;
	}
	hand_relay(ch);
	return 0;
fail:
	log_warn("gate: run %s: the gate by path", ch->gc_run);
	gate_fifo_close(ch);
	return -1;
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
	ch->gc_fd = ch->gc_dir = ch->gc_relay[0] = ch->gc_relay[1] = -1;
	for (size_t i = 0; i < GATE_FIFO_SLOTS; i++) {
		ch->gc_slots[i].gs_in = ch->gc_slots[i].gs_out = -1;
		ch->gc_slots[i].gs_reply = -1;
	}
	if (realpath(cwd, ch->gc_ws) == NULL) {
		log_warn("gate: run %s: workspace", run_id);
		free(ch);
		return -1;
	}
	snprintf(ch->gc_agent, sizeof(ch->gc_agent), "%s", ag->ag_mf.m_name);
	snprintf(ch->gc_run, sizeof(ch->gc_run), "%s", run_id);
	ch->gc_policy = &ag->ag_mf.m_commands;
	ch->gc_keys = keys;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("gate: run %s: socketpair", run_id);
		free(ch);
		return -1;
	}
	ch->gc_fd = sv[0];
	TAILQ_INSERT_TAIL(&gate_chans, ch, gc_entry);
	hand_open(ch);
	*childfd = sv[1];
	*out = ch;
	return 0;
}

void
gate_chan_close(struct gate_chan *ch)
{
	struct ipc_conn *c = sp.sp_d.d_peers[PROC_GATED];
	struct json_object *o;

	if (ch == NULL)
		return;
	log_limit_end(&ch->gc_loglim, ch->gc_run);
	if (c != NULL) {
		o = json_object_new_object();
		json_object_object_add(
		    o, "runId", json_object_new_string(ch->gc_run));
		(void)ipc_send(c, MSG_GATE_CLOSE, o, -1);
		json_object_put(o);
	}
	TAILQ_REMOVE(&gate_chans, ch, gc_entry);
	close(ch->gc_fd);
	gate_fifo_close(ch);
	free(ch);
}

int
gate_env(char ***envp, int fifo, long wait_sec)
{
	static const char *const vars[] = {
	    "CORDON_GATE_FD=", "CORDON_GATE=", "CORDON_GATE_WAIT="};
	char **e = *envp, **ne, *s, *w = NULL, *p = NULL, wv[48];
	size_t i, j, k, n;

	snprintf(wv, sizeof(wv), "CORDON_GATE_WAIT=%ld", wait_sec);
	if ((s = strdup("CORDON_GATE_FD=3")) == NULL ||
	    (w = strdup(wv)) == NULL ||
	    (fifo && (p = strdup("CORDON_GATE=" GATE_FIFO_DIR)) == NULL)) {
		free(s);
		free(w);
		return -1;
	}
	for (n = 0; e != NULL && e[n] != NULL; n++)
		;
	for (i = j = 0; i < n; i++) {
		for (k = 0; k < sizeof(vars) / sizeof(vars[0]); k++)
			if (strncmp(e[i], vars[k], strlen(vars[k])) == 0)
				break;
		if (k < sizeof(vars) / sizeof(vars[0])) {
			free(e[i]);
			continue;
		}
		e[j++] = e[i];
	}
	if ((ne = reallocarray(e, j + 4, sizeof(char *))) == NULL) {
		if (e != NULL)
			e[j] = NULL;
		free(s);
		free(w);
		free(p);
		return -1;
	}
	ne[j++] = s;
	ne[j++] = w;
	if (p != NULL)
		ne[j++] = p;
	ne[j] = NULL;
	*envp = ne;
	return 0;
}
