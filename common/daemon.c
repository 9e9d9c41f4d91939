/*
 * Daemon scaffolding shared by auditd, vaultd, spawner and broker: event
 * base, signals, the control channel on fd 3, peer channels handed over by
 * cordond, and the status answer.  Touches no files.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

static struct event *daemon_sigterm, *daemon_sigint;

static void
daemon_signal_cb(evutil_socket_t sig, short ev, void *arg)
{
	struct daemon *d = arg;

	log_debug("signal %d, exiting", (int)sig);
	event_base_loopexit(d->d_base, NULL);
}

void
daemon_parse_args(int argc, char **argv, const char *pathopt,
    const struct daemon_numopt *nums, unsigned int flags, struct daemon_args *a)
{
	struct option opts[5 + DAEMON_MAX_NUMOPTS + 1];
	const struct daemon_numopt *n;
	size_t i, nn = 0;
	char *end;
	long v;
	int ch;

	memset(a, 0, sizeof(*a));
	memset(opts, 0, sizeof(opts));
	opts[0] = (struct option){"user", required_argument, NULL, 'u'};
	opts[1] = (struct option){"debug", no_argument, NULL, 'd'};
	opts[2] = (struct option){
	    pathopt ? pathopt : "unused-path", required_argument, NULL, 'p'};
	opts[3] = (struct option){"protect", required_argument, NULL, 'P'};
	opts[4] = (struct option){"state-dir", required_argument, NULL, 'S'};
	for (n = nums; n != NULL && n->dn_name != NULL; n++, nn++) {
		if (nn == DAEMON_MAX_NUMOPTS)
			fatalx("too many options");
		opts[5 + nn] = (struct option){
		    n->dn_name, required_argument, NULL, 0x100 + (int)nn};
	}
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'u':
			a->da_user = optarg;
			break;
		case 'd':
			a->da_debug = 1;
			break;
		case 'p':
			if (pathopt == NULL)
				fatalx("usage: unexpected option");
			a->da_path = optarg;
			break;
		case 'P':
			if ((flags & DAEMON_ARG_PROTECT) == 0 ||
			    a->da_nprotect == DAEMON_MAX_PROTECT ||
			    optarg[0] != '/')
				fatalx("usage: --protect: absolute, at most %d",
				    DAEMON_MAX_PROTECT);
			a->da_protect[a->da_nprotect++] = optarg;
			break;
		case 'S':
			if ((flags & DAEMON_ARG_STATE) == 0 ||
			    a->da_state != NULL || optarg[0] != '/')
				fatalx("usage: --state-dir: absolute, once");
			a->da_state = optarg;
			break;
		default:
			if (ch < 0x100 || (size_t)(ch - 0x100) >= nn)
				fatalx("usage: bad option");
			i = (size_t)(ch - 0x100);
			/* Plain decimal digits within the option's bounds. */
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (optarg[0] < '0' || optarg[0] > '9' || errno != 0 ||
			    *end != '\0' || v < nums[i].dn_min ||
			    v > nums[i].dn_max)
				fatalx("usage: --%s %ld..%ld", nums[i].dn_name,
				    nums[i].dn_min, nums[i].dn_max);
			*nums[i].dn_val = v;
		}
	}
	if (optind != argc)
		fatalx("usage: unexpected argument");
	if (pathopt != NULL && a->da_path == NULL)
		fatalx("usage: --%s is required", pathopt);
}

void
daemon_prepare(
    struct daemon *d, enum proc_id self, const struct ipc_dispatch *peer_table)
{
	struct event_config *cfg;

	memset(d, 0, sizeof(*d));
	d->d_self = self;
	d->d_peer_table = peer_table;
	/* The control channel must be there; cordond put it on fd 3. */
	if (fcntl(DAEMON_CTL_FD, F_GETFD) == -1)
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

static void
daemon_parent_closed(struct ipc_conn *c, void *arg)
{
	struct daemon *d = arg;

	/* Without cordond there is nobody to serve: exit cleanly. */
	log_debug("control channel closed, exiting");
	d->d_parent = NULL;
	ipc_conn_free(c);
	event_base_loopexit(d->d_base, NULL);
}

void
daemon_start(struct daemon *d, const struct ipc_dispatch *parent_table)
{
	d->d_parent = ipc_conn_new(d->d_base, DAEMON_CTL_FD, PROC_PARENT,
	    parent_table, daemon_parent_closed, d);
	if (d->d_parent == NULL)
		fatalx("control channel");
}

int
daemon_loop(struct daemon *d)
{
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
	if (d->d_peers[p] == c)
		d->d_peers[p] = NULL;
	ipc_conn_free(c);
}

void
daemon_peer_fd_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct daemon *d = arg;
	const char *name;
	int p;

	if ((name = json_get_str(m->m_obj, "peer", 16)) == NULL ||
	    (p = proc_lookup(name)) == -1 || p == PROC_PARENT ||
	    !proc_edge(d->d_self, p)) {
		log_warnx("peer fd for an unknown edge refused");
		return;
	}
	if (d->d_peers[p] != NULL)
		ipc_conn_free(d->d_peers[p]);
	d->d_peers[p] = ipc_conn_new(
	    d->d_base, m->m_fd, p, d->d_peer_table, daemon_peer_closed, d);
	if (d->d_peers[p] == NULL) {
		log_warnx("cannot set up channel to %s", name);
		return; /* m_fd is closed by the codec */
	}
	m->m_fd = -1;
	log_debug("channel to %s up", name);
	if (d->d_peer_up)
		d->d_peer_up(d, p);
}

void
daemon_shutdown_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct daemon *d = arg;

	event_base_loopexit(d->d_base, NULL);
}
