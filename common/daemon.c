/*
 * Daemon scaffolding shared by auditd, vaultd, spawner and broker: event
 * base, signals, the control channel on fd 3, peer channels handed over by
 * cordond or, under systemd, accepted and dialled by the daemon itself
 * with SO_PEERCRED checks; and the status answer.  Touches no files.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <malloc.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "confine.h"
#include "daemon.h"
#include "log.h"
#include "msg.h"
#include "sdlisten.h"
#include "util.h"

#define DIAL_MIN_MS 100
#define DIAL_MAX_MS 2000

static struct event *daemon_sigterm, *daemon_sigint;

/* The daemon's own stop, once; else (or the second time) leave now. */
static void
daemon_stop(struct daemon *d)
{
	void (*stop)(struct daemon *) = d->d_stop;

	if (stop != NULL) {
		d->d_stop = NULL;
		d->d_stopping = 1;
		stop(d);
		return;
	}
	event_base_loopexit(d->d_base, NULL);
}

static void
daemon_signal_cb(evutil_socket_t sig, short ev, void *arg)
{
	struct daemon *d = arg;
	int first;

	log_debug("signal %d, exiting", (int)sig);
	/* A second signal leaves at once; the first joins a stop that
	 * cordond's going started (its PR_SET_PDEATHSIG comes with it). */
	first = !d->d_signalled;
	d->d_signalled = 1;
	if (first && d->d_stopping)
		return;
	daemon_stop(d);
}

static size_t
nn_peers(const struct daemon_args *a)
{
	size_t i, n = 0;

	for (i = 0; i < PROC_MAX; i++)
		n += a->da_peer[i] != NULL;
	return n;
}

#define OPT_NUM 0x100 /* + index: a daemon's numeric option */
#define OPT_DIR 0x200 /* + index: a daemon's directory option */

/*
 * --peer NAME=USER[:GROUP], NAME a daemon, once each.  GROUP tells apart
 * two peers that run as one user (gated and the spawner, both the
 * operator): SO_PEERCRED's gid, the peer's primary group.
 */
static void
opt_peer(struct daemon_args *a, char *arg)
{
	char *eq = strchr(arg, '='), *colon;
	int p;

	if (eq == NULL || eq[1] == '\0')
		fatalx("usage: --peer NAME=USER[:GROUP]");
	*eq = '\0';
	if ((p = proc_lookup(arg)) == -1 || p == PROC_PARENT ||
	    a->da_peer[p] != NULL)
		fatalx("usage: --peer NAME=USER: NAME is one of "
		       "broker, spawner, egressd, vaultd, auditd, once");
	if ((colon = strchr(eq + 1, ':')) != NULL) {
		if (colon == eq + 1 || colon[1] == '\0')
			fatalx("usage: --peer NAME=USER[:GROUP]");
		*colon = '\0';
		a->da_peer_group[p] = colon + 1;
	}
	a->da_peer[p] = eq + 1;
}

/* --NAME N: plain decimal digits within the option's bounds. */
static void
opt_num(const struct daemon_numopt *n, const char *arg)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || errno != 0 || *end != '\0' ||
	    v < n->dn_min || v > n->dn_max)
		fatalx(
		    "usage: --%s %ld..%ld", n->dn_name, n->dn_min, n->dn_max);
	*n->dn_val = v;
}

/* --NAME DIR: absolute, at most dp_max times. */
static void
opt_dir(const struct daemon_diropt *d, const char *arg)
{
	if (*d->dp_n == d->dp_max || arg[0] != '/')
		fatalx("usage: --%s: absolute, at most %zu", d->dp_name,
		    d->dp_max);
	d->dp_val[(*d->dp_n)++] = arg;
}

/* The long options: the common ones, then nums and dirs; *nn, *nd their
 * counts. */
static void
opts_build(struct option *opts, const char *pathopt,
    const struct daemon_numopt *nums, const struct daemon_diropt *dirs,
    size_t *nn, size_t *nd)
{
	size_t i = 0;

	opts[i++] = (struct option){"user", required_argument, NULL, 'u'};
	opts[i++] = (struct option){"debug", no_argument, NULL, 'd'};
	opts[i++] = (struct option){
	    pathopt ? pathopt : "unused-path", required_argument, NULL, 'p'};
	opts[i++] = (struct option){"systemd", no_argument, NULL, 's'};
	opts[i++] = (struct option){"socket-dir", required_argument, NULL, 'D'};
	opts[i++] = (struct option){"peer", required_argument, NULL, 'e'};
	for (*nn = 0; nums != NULL && nums[*nn].dn_name != NULL; (*nn)++) {
		if (*nn == DAEMON_MAX_NUMOPTS)
			fatalx("too many options");
		opts[i++] = (struct option){nums[*nn].dn_name,
		    required_argument, NULL, OPT_NUM + (int)*nn};
	}
	for (*nd = 0; dirs != NULL && dirs[*nd].dp_name != NULL; (*nd)++) {
		if (*nd == DAEMON_MAX_DIROPTS)
			fatalx("too many options");
		*dirs[*nd].dp_n = 0;
		opts[i++] = (struct option){dirs[*nd].dp_name,
		    required_argument, NULL, OPT_DIR + (int)*nd};
	}
}

void
daemon_parse_args(int argc, char **argv, const char *pathopt,
    const struct daemon_numopt *nums, const struct daemon_diropt *dirs,
    unsigned int flags, struct daemon_args *a)
{
	struct option opts[6 + DAEMON_MAX_NUMOPTS + DAEMON_MAX_DIROPTS + 1];
	size_t nn, nd;
	int ch;

	memset(a, 0, sizeof(*a));
	memset(opts, 0, sizeof(opts));
	opts_build(opts, pathopt, nums, dirs, &nn, &nd);
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'u')
			a->da_user = optarg;
		else if (ch == 'd')
			a->da_debug = 1;
		else if (ch == 'p' && pathopt != NULL)
			a->da_path = optarg;
		else if (ch == 's')
			a->da_systemd = 1;
		else if (ch == 'D') {
			if (a->da_sockdir != NULL || optarg[0] != '/' ||
			    strlen(optarg) >= DAEMON_SOCKDIR_MAX)
				fatalx("usage: --socket-dir: absolute, short, "
				       "once");
			a->da_sockdir = optarg;
		} else if (ch == 'e')
			opt_peer(a, optarg);
		else if (ch >= OPT_NUM && (size_t)(ch - OPT_NUM) < nn)
			opt_num(&nums[ch - OPT_NUM], optarg);
		else if (ch >= OPT_DIR && (size_t)(ch - OPT_DIR) < nd)
			opt_dir(&dirs[ch - OPT_DIR], optarg);
		else
			fatalx("usage: bad option");
	}
	if (optind != argc)
		fatalx("usage: unexpected argument");
	if (pathopt != NULL && a->da_path == NULL &&
	    (flags & DAEMON_ARG_PATH_OPT) == 0)
		fatalx("usage: --%s is required", pathopt);
	if (!a->da_systemd && (a->da_sockdir != NULL || nn_peers(a) != 0))
		fatalx("usage: --socket-dir and --peer need --systemd");
}

/* Peers that dial us (later in start order) and peers we dial. */
static int
accepts_from(enum proc_id self, enum proc_id p)
{
	return p != PROC_PARENT && p > self && proc_edge(self, p);
}

static int
dials(enum proc_id self, enum proc_id p)
{
	return p != PROC_PARENT && p < self && proc_edge(self, p);
}

/*
 * Two peers of one user are told apart when exactly one names a group
 * (the one with the group, the other any other gid: peer_of()) or both
 * name different ones.
 */
static int
peer_groups_differ(const struct daemon *d, int p, int q)
{
	int gp = (d->d_peer_group & PROC_BIT(p)) != 0;
	int gq = (d->d_peer_group & PROC_BIT(q)) != 0;

	return gp != gq || (gp && d->d_peer_gid[p] != d->d_peer_gid[q]);
}

/* --systemd: the listener, the peers' users, the socket dir. */
static void
daemon_systemd_prepare(struct daemon *d, const struct daemon_args *a)
{
	struct passwd *pw;
	struct group *gr;
	const char *why;
	int p, q;

	snprintf(d->d_sockdir, sizeof(d->d_sockdir), "%s",
	    a->da_sockdir ? a->da_sockdir : "/run/cordon");
	for (p = 0; p < PROC_MAX; p++) {
		if (a->da_peer[p] == NULL)
			continue;
		/*
		 * Only peers that dial us: a dialled socket's SO_PEERCRED
		 * names whoever called listen(2), which under socket
		 * activation is systemd, not the daemon behind it.  What
		 * vouches for that end is the root-owned socket directory.
		 */
		if (!accepts_from(d->d_self, p))
			fatalx("--peer %s: %s does not connect to %s",
			    proc_name(p), proc_name(p), proc_name(d->d_self));
		if ((pw = getpwnam(a->da_peer[p])) == NULL)
			fatalx("--peer %s: no such user", proc_name(p));
		d->d_peer_uid[p] = pw->pw_uid;
		d->d_peer_known |= PROC_BIT(p);
		if (a->da_peer_group[p] == NULL)
			continue;
		if ((gr = getgrnam(a->da_peer_group[p])) == NULL)
			fatalx("--peer %s: no such group", proc_name(p));
		d->d_peer_gid[p] = gr->gr_gid;
		d->d_peer_group |= PROC_BIT(p);
	}
	for (p = 0; p < PROC_MAX; p++) {
		/* Fail closed: whoever may dial us must be named. */
		if (accepts_from(d->d_self, p) &&
		    (d->d_peer_known & PROC_BIT(p)) == 0)
			fatalx("--systemd: --peer %s=USER is required",
			    proc_name(p));
		for (q = p + 1; q < PROC_MAX; q++)
			if ((d->d_peer_known & PROC_BIT(p)) &&
			    (d->d_peer_known & PROC_BIT(q)) &&
			    d->d_peer_uid[p] == d->d_peer_uid[q] &&
			    !peer_groups_differ(d, p, q))
				fatalx("--peer %s and %s: one user cannot be "
				       "told apart",
				    proc_name(p), proc_name(q));
	}
	endpwent();
	endgrent();
	d->d_systemd = 1;
	/* A daemon nobody dials (sched) has no socket of its own. */
	for (p = 0; p < PROC_MAX && !accepts_from(d->d_self, p); p++)
		;
	if (p == PROC_MAX && d->d_self != PROC_BROKER)
		return;
	if (d->d_self == PROC_BROKER)
		d->d_listen_fd = sdl_take("http", AF_INET, &why);
	else
		d->d_listen_fd = sdl_take("ipc", AF_UNIX, &why);
	if (d->d_listen_fd == -1)
		fatalx("--systemd: %s", why);
}

void
daemon_prepare(struct daemon *d, enum proc_id self,
    const struct ipc_dispatch *peer_table, const struct daemon_args *a)
{
	struct event_config *cfg;

	memset(d, 0, sizeof(*d));
	d->d_self = self;
	d->d_peer_table = peer_table;
	d->d_listen_fd = -1;
	if (a->da_systemd)
		daemon_systemd_prepare(d, a);
	/*
	 * The control channel must be there; cordond put it on fd 3.  It
	 * is ours alone: never inherited by anything we execute.
	 */
	else if (fcntl(DAEMON_CTL_FD, F_SETFD, FD_CLOEXEC) == -1)
		fatalx("no control channel on fd %d", DAEMON_CTL_FD);
	signal(SIGPIPE, SIG_IGN);
	tzset(); /* load zone data now: the filters refuse the open later */
	if ((cfg = event_config_new()) == NULL)
		fatalx("event_config_new");
	/* epoll only: it is the backend our seccomp filters allow. */
	event_config_avoid_method(cfg, "select");
	event_config_avoid_method(cfg, "poll");
	event_config_set_flag(
	    cfg, EVENT_BASE_FLAG_NOLOCK | EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
	if ((d->d_base = event_base_new_with_config(cfg)) == NULL)
		fatalx("event_base_new");
	event_config_free(cfg);
	daemon_sigterm = evsignal_new(d->d_base, SIGTERM, daemon_signal_cb, d);
	daemon_sigint = evsignal_new(d->d_base, SIGINT, daemon_signal_cb, d);
	if (daemon_sigterm == NULL || daemon_sigint == NULL ||
	    evsignal_add(daemon_sigterm, NULL) == -1 ||
	    evsignal_add(daemon_sigint, NULL) == -1)
		fatalx("signal events");
}

unsigned int
daemon_syscalls(const struct daemon *d)
{
	unsigned int sc = 0;
	int p;

	if (!d->d_systemd)
		return 0;
	for (p = 0; p < PROC_MAX; p++) {
		if (accepts_from(d->d_self, p) || d->d_self == PROC_BROKER)
			sc |= SC_ACCEPT;
		if (dials(d->d_self, p))
			sc |= SC_CONNECT;
	}
	return sc;
}

static void
daemon_parent_closed(struct ipc_conn *c, void *arg)
{
	struct daemon *d = arg;

	/*
	 * Without cordond there is nobody to serve: stop as SIGTERM stops
	 * us (cordond killed: its PR_SET_PDEATHSIG comes too), so that the
	 * runs the spawner kills still get their end records.  A stop
	 * already under way goes on.
	 */
	log_debug("control channel closed, exiting");
	d->d_parent = NULL;
	ipc_conn_free(c);
	if (!d->d_stopping)
		daemon_stop(d);
}

static void daemon_peer_closed(struct ipc_conn *, void *);

/* A data channel to peer p is up on fd: replaces a stale one. */
static int
daemon_peer_attach(struct daemon *d, enum proc_id p, int fd)
{
	if (d->d_peers[p] != NULL)
		ipc_conn_free(d->d_peers[p]);
	d->d_peers[p] = ipc_conn_new(
	    d->d_base, fd, p, d->d_peer_table, daemon_peer_closed, d);
	if (d->d_peers[p] == NULL) {
		log_warnx("cannot set up channel to %s", proc_name(p));
		return -1;
	}
	log_debug("channel to %s up", proc_name(p));
	if (d->d_peer_up)
		d->d_peer_up(d, p);
	return 0;
}

/* The uid and gid at the other end of a unix stream socket, or -1. */
static long
peer_cred(int fd, gid_t *gid)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == -1 ||
	    len != sizeof(uc))
		return -1;
	*gid = uc.gid;
	return (long)uc.uid;
}

/*
 * The peer a dialler's credentials name, or PROC_MAX.  A peer named with
 * a group must match it; one named without takes its user's other gids,
 * never one a grouped peer of the same user claims.
 */
static int
peer_of(const struct daemon *d, long uid, gid_t gid)
{
	int p, grouped, pass;

	for (pass = 1; pass >= 0; pass--)
		for (p = 0; p < PROC_MAX; p++) {
			grouped = (d->d_peer_group & PROC_BIT(p)) != 0;
			if (grouped != pass || !accepts_from(d->d_self, p) ||
			    (d->d_peer_known & PROC_BIT(p)) == 0 ||
			    (long)d->d_peer_uid[p] != uid)
				continue;
			if (!grouped || d->d_peer_gid[p] == gid)
				return p;
		}
	return PROC_MAX;
}

/* 0 once the other end has gone (EOF not yet read by the event loop). */
static int
channel_live(struct ipc_conn *c)
{
	char b;
	ssize_t n;

	n = recv(ipc_conn_fd(c), &b, 1, MSG_PEEK | MSG_DONTWAIT);
	return n > 0 || (n == -1 && (errno == EAGAIN || errno == EINTR));
}

/* systemd mode: a peer dials us; SO_PEERCRED says which one, if any. */
static void
daemon_accept_cb(evutil_socket_t lfd, short ev, void *arg)
{
	struct daemon *d = arg;
	long uid;
	gid_t gid = 0;
	int fd, p, n;

	for (n = 0; n < 16; n++) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd == -1) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn("accept");
			return;
		}
		uid = peer_cred(fd, &gid);
		p = uid == -1 ? PROC_MAX : peer_of(d, uid, gid);
		if (p == PROC_MAX) {
			log_warnx("refused a connection from uid %ld: not a "
				  "peer of %s",
			    uid, proc_name(d->d_self));
			close(fd);
			continue;
		}
		/*
		 * A live channel is never displaced: the spawner shares its
		 * uid with the agents it runs, and it dials before it runs
		 * any, so a second "spawner" is refused, loudly.
		 */
		if (d->d_peers[p] != NULL && channel_live(d->d_peers[p])) {
			log_warnx("refused a second connection as %s while "
				  "one is live",
			    proc_name(p));
			close(fd);
			continue;
		}
		if (daemon_peer_attach(d, p, fd) == -1)
			close(fd);
	}
}

static void
dial_later(struct daemon_dial *dd)
{
	struct timeval tv;
	unsigned int ms = dd->dd_ms;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(dd->dd_ev, &tv);
	dd->dd_ms = ms == 0 ? DIAL_MIN_MS
			    : (ms * 2 > DIAL_MAX_MS ? DIAL_MAX_MS : ms * 2);
}

/* systemd mode: dial peer p's socket in the socket dir. */
static void
daemon_dial_cb(evutil_socket_t unused, short ev, void *arg)
{
	struct daemon_dial *dd = arg;
	struct daemon *d = dd->dd_d;
	enum proc_id p = dd->dd_p;
	struct sockaddr_un sun;
	int fd;

	if (d->d_peers[p] != NULL)
		return;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s.sock", d->d_sockdir,
	    proc_name(p));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		log_debug("dial %s: %s", proc_name(p), strerror(errno));
		goto retry;
	}
	if (daemon_peer_attach(d, p, fd) == -1)
		goto retry;
	dd->dd_since = now_ms_mono();
	return;
retry:
	if (fd != -1)
		close(fd);
	dial_later(dd);
}

void
daemon_start(struct daemon *d, const struct ipc_dispatch *parent_table)
{
	int p;

	if (!d->d_systemd) {
		d->d_parent = ipc_conn_new(d->d_base, DAEMON_CTL_FD,
		    PROC_PARENT, parent_table, daemon_parent_closed, d);
		if (d->d_parent == NULL)
			fatalx("control channel");
		return;
	}
	if (d->d_self != PROC_BROKER && d->d_listen_fd != -1) {
		d->d_accept_ev = event_new(d->d_base, d->d_listen_fd,
		    EV_READ | EV_PERSIST, daemon_accept_cb, d);
		if (d->d_accept_ev == NULL ||
		    event_add(d->d_accept_ev, NULL) == -1)
			fatalx("accept event");
	}
	for (p = 0; p < PROC_MAX; p++) {
		if (!dials(d->d_self, p))
			continue;
		d->d_dial[p].dd_d = d;
		d->d_dial[p].dd_p = p;
		d->d_dial[p].dd_ms = DIAL_MIN_MS;
		d->d_dial[p].dd_ev =
		    evtimer_new(d->d_base, daemon_dial_cb, &d->d_dial[p]);
		if (d->d_dial[p].dd_ev == NULL)
			fatalx("dial timer");
		/*
		 * Now, before the caller goes on: the spawner's channels are
		 * up before it runs any agent (a socket-activated peer
		 * queues the connection even while it is still starting).
		 */
		daemon_dial_cb(-1, 0, &d->d_dial[p]);
	}
}

int
daemon_loop(struct daemon *d)
{
	/*
	 * Start-up is over (configuration, the seccomp filter's build,
	 * manifests): give its freed heap back before idling.
	 */
	malloc_trim(0);
	if (event_base_dispatch(d->d_base) == -1)
		fatalx("event loop failed");
	return 0;
}

void
daemon_status_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct daemon *d = arg;
	struct json_object *st;

	if ((st = confine_status_json()) == NULL) {
		ipc_reply_error(c, m, "internal");
		return;
	}
	if (d->d_status_extra != NULL)
		d->d_status_extra(d, st);
	ipc_reply(c, m, MSG_STATUS_OK, st, -1);
	json_object_put(st);
}

static void
daemon_peer_closed(struct ipc_conn *c, void *arg)
{
	struct daemon *d = arg;
	enum proc_id p = ipc_conn_peer(c);

	/*
	 * The peer restarted (cordond hands us a new fd) or broke framing:
	 * then ask cordond to restart it (SU-3).
	 */
	if (ipc_conn_broken(c) && d->d_parent != NULL) {
		struct json_object *o = json_object_new_object();
		json_object_object_add(
		    o, "peer", json_object_new_string(proc_name(p)));
		ipc_send(d->d_parent, MSG_PEER_BAD, o, -1);
		json_object_put(o);
	}
	if (ipc_conn_broken(c) && d->d_systemd)
		log_warnx("%s broke framing; channel closed", proc_name(p));
	if (d->d_peers[p] == c)
		d->d_peers[p] = NULL;
	ipc_conn_free(c);
	/* systemd mode: systemd restarts the peer; dial it again. */
	if (d->d_systemd && dials(d->d_self, p) &&
	    !evtimer_pending(d->d_dial[p].dd_ev, NULL)) {
		/* Redial at once (the peer's socket queues it while systemd
		 * restarts the peer); a channel cut at once (a refused
		 * peer) backs off instead. */
		if (now_ms_mono() - d->d_dial[p].dd_since > 5000)
			d->d_dial[p].dd_ms = 0;
		dial_later(&d->d_dial[p]);
	}
}

const struct json_shape daemon_peer_fd_shape[1] = {
    JS_STR("peer", JS_REQ, 1, 16),
};

void
daemon_peer_fd_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct daemon *d = arg;
	const char *name;
	int p;

	name = json_shape_str(m->m_obj, "peer", NULL);
	if ((p = proc_lookup(name)) == -1 || p == PROC_PARENT ||
	    !proc_edge(d->d_self, p)) {
		log_warnx("peer fd for an unknown edge refused");
		return;
	}
	if (daemon_peer_attach(d, p, m->m_fd) == 0)
		m->m_fd = -1; /* else the codec closes it */
}

void
daemon_shutdown_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct daemon *d = arg;

	event_base_loopexit(d->d_base, NULL);
}
