/*
 * cordond: supervise the six daemons.  Opens the listening socket and the
 * runtime files, starts each daemon with only its control fd (peer
 * channels and the listener follow over it by SCM_RIGHTS), restarts a
 * daemon that dies with backoff, and stops everything in reverse order
 * on SIGTERM/SIGINT.  What each daemon is started with is launch.c's,
 * the health answer health.c's, the runs' pids cgroup runcg.c's.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "audit_emit.h"
#include "config.h"
#include "cordond.h"
#include "daemon.h"
#include "ipc.h"
#include "log.h"
#include "msg.h"
#include "spawn_helper.h"
#include "util.h"
#include "cordond_shapes.h"

#define BACKOFF_MIN_MS	100
#define BACKOFF_MAX_MS	5000
#define STABLE_AFTER_MS 10000 /* a daemon up this long resets backoff */
#define READY_TIMEOUT_S 10
/* Beyond the spawner's drain (SPAWNER_DRAIN_MS) and the clean-up of its
 * runs' tmps after it, with room for a loaded machine: a daemon killed
 * here leaves its clean-up undone. */
#define STOP_GRACE_MS 5000

struct child {
	enum proc_id ch_id;
	pid_t ch_pid;
	struct ipc_conn *ch_conn;
	unsigned int ch_gen; /* bumped on every start */
	unsigned int ch_restarts;
	unsigned int ch_backoff; /* ms before the next restart */
	uint64_t ch_started;	 /* monotonic ms */
	struct event *ch_timer;	 /* pending restart */
	int ch_ready;
};

static const enum proc_id start_order[] = {
    PROC_AUDITD,
    PROC_VAULTD,
    PROC_EGRESSD,
    PROC_GATED,
    PROC_SPAWNER,
    PROC_SCHED,
    PROC_BROKER,
};

static struct child children[PROC_MAX];
static struct cordon_config *conf;
static struct event_base *base;
static int listen_fd = -1;
static int listen_port;
static char token[65];
static char login_code[33];
/*
 * PER-5: the dashboard sessions the broker has issued, with when (the
 * system-wide monotonic clock), so a restarted broker keeps every
 * browser signed in.  The broker decides their expiry; the oldest makes
 * room.
 */
static struct session {
	char s_id[SESSION_ID_HEX + 1];
	char s_page[SESSION_PAGE_HEX + 1];
	uint64_t s_created;
} sessions[MSG_SESSIONS_MAX];
static int stopping;
static int booting = 1;
static int exit_code;
static int cg_fd = -1; /* SP-7: the runs' pids cgroup (runcg.c) */

static void login_used_h(struct ipc_conn *, struct ipc_msg *, void *);
static void session_add_h(struct ipc_conn *, struct ipc_msg *, void *);
static void peer_bad_h(struct ipc_conn *, struct ipc_msg *, void *);

static const struct ipc_dispatch parent_table[] = {
    {MSG_HEALTH, PROC_BIT(PROC_BROKER), 2, 64, IPC_FD_NONE, health_h,
	IPC_EMPTY},
    {MSG_LOGIN_USED, PROC_BIT(PROC_BROKER), 2, 64, IPC_FD_NONE, login_used_h,
	IPC_EMPTY},
    {MSG_SESSION_ADD, PROC_BIT(PROC_BROKER), 2, 192, IPC_FD_NONE, session_add_h,
	IPC_KEYS_OR(session_add_shape, "bad-request")},
    {MSG_PEER_BAD,
	PROC_BIT(PROC_AUDITD) | PROC_BIT(PROC_VAULTD) | PROC_BIT(PROC_SPAWNER) |
	    PROC_BIT(PROC_EGRESSD) | PROC_BIT(PROC_GATED) |
	    PROC_BIT(PROC_BROKER) | PROC_BIT(PROC_SCHED),
	2, 64, IPC_FD_NONE, peer_bad_h, IPC_KEYS(peer_bad_shape)},
    IPC_END,
};

static int child_start(struct child *);

static int
open_listener(void)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd, one = 1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)conf->cf_port);
	if (inet_pton(AF_INET, conf->cf_listen, &sin.sin_addr) != 1) {
		log_warnx("listen address is not an IPv4 address");
		return -1;
	}
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 128) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1) {
		log_warn("listen on %s:%d", conf->cf_listen, conf->cf_port);
		close(fd);
		return -1;
	}
	listen_port = ntohs(sin.sin_port);
	return fd;
}

static struct child *
child_by_pid(pid_t pid)
{
	size_t i;

	for (i = 0; i < nitems(start_order); i++)
		if (children[start_order[i]].ch_pid == pid)
			return &children[start_order[i]];
	return NULL;
}

static int
child_up(const struct child *ch)
{
	return ch->ch_pid > 0 && ch->ch_conn != NULL;
}

int
cordond_daemon(size_t i, struct daemon_view *v)
{
	if (i >= nitems(start_order))
		return 0;
	cordond_daemon_of(start_order[i], v);
	return 1;
}

void
cordond_daemon_of(enum proc_id id, struct daemon_view *v)
{
	const struct child *ch = &children[id];

	v->dv_id = id;
	v->dv_pid = ch->ch_pid;
	v->dv_restarts = ch->ch_restarts;
	v->dv_gen = ch->ch_gen;
	v->dv_conn = ch->ch_conn;
}

static void
child_conn_closed(struct ipc_conn *c, void *arg)
{
	struct child *ch = arg;

	/* EOF or broken framing: make sure the process is gone; SIGCHLD
	 * then schedules the restart. */
	if (ch->ch_conn == c)
		ch->ch_conn = NULL;
	ipc_conn_free(c);
	if (ch->ch_pid > 0 && !stopping)
		kill(ch->ch_pid, SIGKILL);
}

static void
send_peer_fd(struct child *ch, enum proc_id peer, int fd)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(
	    o, "peer", json_object_new_string(proc_name(peer)));
	if (ipc_send(ch->ch_conn, MSG_PEER_FD, o, fd) == -1)
		log_warnx("cannot hand %s its channel to %s",
		    proc_name(ch->ch_id), proc_name(peer));
	json_object_put(o);
}

/* Give a (re)started daemon a fresh channel to every live peer. */
static void
wire_edges(struct child *ch)
{
	struct child *peer;
	size_t i;
	int sp[2];

	for (i = 0; i < nitems(start_order); i++) {
		peer = &children[start_order[i]];
		if (peer == ch || !child_up(peer) ||
		    !proc_edge(ch->ch_id, peer->ch_id))
			continue;
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp)) {
			log_warn("socketpair");
			continue;
		}
		send_peer_fd(ch, peer->ch_id, sp[0]);
		send_peer_fd(peer, ch->ch_id, sp[1]);
	}
}

static void
send_broker_config(struct child *ch)
{
	struct json_object *o, *arr;
	size_t i;
	int fd;

	if ((fd = fcntl(listen_fd, F_DUPFD_CLOEXEC, 3)) == -1) {
		log_warn("dup listener");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "token", json_object_new_string(token));
	if (login_code[0] != '\0')
		json_object_object_add(
		    o, "loginCode", json_object_new_string(login_code));
	json_object_object_add(o, "port", json_object_new_int(listen_port));
	json_object_object_add(
	    o, "listen", json_object_new_string(conf->cf_listen));
	arr = json_object_new_array();
	for (i = 0; i < conf->cf_norigins; i++)
		json_object_array_add(
		    arr, json_object_new_string(conf->cf_origins[i]));
	json_object_object_add(o, "origins", arr);
	arr = json_object_new_array();
	for (i = 0; i < nitems(sessions); i++) {
		struct json_object *so;

		if (sessions[i].s_id[0] == '\0')
			continue;
		so = json_object_new_object();
		json_object_object_add(
		    so, "id", json_object_new_string(sessions[i].s_id));
		json_object_object_add(
		    so, "page", json_object_new_string(sessions[i].s_page));
		json_object_object_add(so, "createdMs",
		    json_object_new_int64((int64_t)sessions[i].s_created));
		json_object_array_add(arr, so);
	}
	json_object_object_add(o, "sessions", arr);
	if (ipc_send(ch->ch_conn, MSG_BROKER_CONFIG, o, fd) == -1)
		log_warnx("cannot configure the broker");
	json_object_put(o);
}

static int
child_start(struct child *ch)
{
	char path[PATH_MAX + 32];
	char *argv[LAUNCH_ARGV_MAX], *envp[LAUNCH_ENVP_MAX];
	const char *name = proc_name(ch->ch_id);
	struct spawn_fd fds[3];
	struct spawn_req req;
	size_t nfds = 2;
	int sp[2];

	if (launch_cmd(
		conf, ch->ch_id, cg_fd != -1, path, sizeof(path), argv) == -1) {
		log_warnx("%s: program path too long", name);
		return -1;
	}
	launch_env(conf, ch->ch_id, envp);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1) {
		log_warn("socketpair");
		return -1;
	}
	fds[0].sf_src = sp[1];
	fds[0].sf_dst = 3;
	fds[1].sf_src = STDERR_FILENO;
	fds[1].sf_dst = STDERR_FILENO;
	if (ch->ch_id == PROC_SPAWNER && cg_fd != -1) {
		fds[2].sf_src = cg_fd;
		fds[2].sf_dst = SPAWNER_CG_FD;
		nfds = 3;
	}
	memset(&req, 0, sizeof(req));
	req.sr_path = path;
	req.sr_argv = argv;
	req.sr_envp = envp;
	req.sr_fds = fds;
	req.sr_nfds = nfds;
	req.sr_setsid = 1; /* terminal signals reach cordond only */
	req.sr_pdeathsig = SIGTERM;
	req.sr_cwd = "/";
	ch->ch_pid = spawn_exec(&req);
	close(sp[1]);
	if (ch->ch_pid == -1) {
		log_warn("start %s", name);
		ch->ch_pid = 0;
		close(sp[0]);
		return -1;
	}
	ch->ch_gen++;
	ch->ch_ready = 0;
	ch->ch_started = now_ms_mono();
	ch->ch_conn = ipc_conn_new(
	    base, sp[0], ch->ch_id, parent_table, child_conn_closed, ch);
	if (ch->ch_conn == NULL) {
		close(sp[0]);
		kill(ch->ch_pid, SIGKILL);
		return -1;
	}
	log_debug("started %s, pid %d", name, (int)ch->ch_pid);
	wire_edges(ch);
	if (ch->ch_id == PROC_BROKER)
		send_broker_config(ch);
	return 0;
}

/* system.restart {daemon, restarts}: queued, never waited for here (a
 * restarted auditd reads it once it has confined itself). */
static void
audit_restart(const struct child *ch)
{
	struct child *ad = &children[PROC_AUDITD];
	struct json_object *o;

	if (!child_up(ad))
		return;
	o = json_object_new_object();
	json_object_object_add(
	    o, "kind", json_object_new_string("system.restart"));
	json_object_object_add(
	    o, "daemon", json_object_new_string(proc_name(ch->ch_id)));
	json_object_object_add(
	    o, "restarts", json_object_new_int64(ch->ch_restarts));
	if (audit_emit(ad->ch_conn, o, NULL, NULL) == -1)
		log_warnx("system.restart not recorded");
	json_object_put(o);
}

static void
restart_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct child *ch = arg;

	if (stopping)
		return;
	if (child_start(ch) == -1) {
		struct timeval tv = {BACKOFF_MAX_MS / 1000, 0};
		evtimer_add(ch->ch_timer, &tv);
	} else
		audit_restart(ch);
}

static void
child_died(struct child *ch, int status)
{
	struct timeval tv;
	uint64_t up = now_ms_mono() - ch->ch_started;

	if (WIFSIGNALED(status))
		log_warnx("%s (pid %d) killed by signal %d",
		    proc_name(ch->ch_id), (int)ch->ch_pid, WTERMSIG(status));
	else if (!stopping || WEXITSTATUS(status) != 0)
		log_warnx("%s (pid %d) exited with status %d",
		    proc_name(ch->ch_id), (int)ch->ch_pid, WEXITSTATUS(status));
	ch->ch_pid = 0;
	if (ch->ch_conn != NULL) {
		ipc_conn_free(ch->ch_conn);
		ch->ch_conn = NULL;
	}
	if (stopping)
		return;
	if (booting && !ch->ch_ready) {
		log_warnx("%s failed to start; stopping", proc_name(ch->ch_id));
		exit_code = 1;
		event_base_loopbreak(base);
		return;
	}
	if (up >= STABLE_AFTER_MS || ch->ch_backoff == 0)
		ch->ch_backoff = BACKOFF_MIN_MS;
	ch->ch_restarts++;
	tv.tv_sec = ch->ch_backoff / 1000;
	tv.tv_usec = (ch->ch_backoff % 1000) * 1000;
	log_info("restarting %s in %u ms (restart %u)", proc_name(ch->ch_id),
	    ch->ch_backoff, ch->ch_restarts);
	evtimer_add(ch->ch_timer, &tv);
	ch->ch_backoff *= 2;
	if (ch->ch_backoff > BACKOFF_MAX_MS)
		ch->ch_backoff = BACKOFF_MAX_MS;
}

static void
sigchld_cb(evutil_socket_t sig, short ev, void *arg)
{
	struct child *ch;
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if ((ch = child_by_pid(pid)) != NULL)
			child_died(ch, status);
}

static void
sigterm_cb(evutil_socket_t sig, short ev, void *arg)
{
	log_info("signal %d: stopping", (int)sig);
	stopping = 1;
	event_base_loopbreak(base);
}

/* ---- readiness at boot ---- */

static void
ready_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct child *ch = arg;
	size_t i;

	if (m == NULL || m->m_type != MSG_STATUS_OK) {
		if (exit_code == 0 && !stopping)
			log_warnx(
			    "%s did not become ready", proc_name(ch->ch_id));
		exit_code = 1;
		event_base_loopbreak(base);
		return;
	}
	ch->ch_ready = 1;
	for (i = 0; i < nitems(start_order); i++)
		if (!children[start_order[i]].ch_ready)
			return;
	event_base_loopbreak(base); /* all four ready */
}

static void
login_used_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	/* One-time: a restarted broker must not accept the code again. */
	explicit_bzero(login_code, sizeof(login_code));
	ipc_reply(c, m, MSG_LOGIN_USED_OK, NULL, -1);
}

/* PER-5: keep a session the broker issued for the brokers after it. */
static void
session_add_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct session *s = &sessions[0];
	const char *id, *page;
	size_t i;

	id = json_shape_str(m->m_obj, "id", NULL);
	page = json_shape_str(m->m_obj, "page", NULL);
	if (!hex_lower_n(id, SESSION_ID_HEX) ||
	    !hex_lower_n(page, SESSION_PAGE_HEX)) {
		ipc_reply_error(c, m, "bad-request");
		return;
	}
	for (i = 0; i < nitems(sessions); i++) {
		if (sessions[i].s_id[0] == '\0') {
			s = &sessions[i];
			break;
		}
		if (sessions[i].s_created < s->s_created)
			s = &sessions[i];
	}
	memcpy(s->s_id, id, SESSION_ID_HEX + 1);
	memcpy(s->s_page, page, SESSION_PAGE_HEX + 1);
	s->s_created = now_ms_mono();
	ipc_reply(c, m, MSG_SESSION_ADD_OK, NULL, -1);
}

/*
 * A daemon reports that a peer broke framing on their channel: cut the
 * less trusted of the two off entirely (proc_blame); SIGCHLD then
 * restarts it with fresh channels.  A broker cannot take auditd down by
 * saying so: it is restarted itself.
 */
static void
peer_bad_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct child *reporter = arg;
	const char *name;
	int p, victim;

	name = json_shape_str(m->m_obj, "peer", NULL);
	if ((p = proc_lookup(name)) == -1 ||
	    (victim = proc_blame(reporter->ch_id, p)) == -1)
		return;
	if (children[victim].ch_pid > 0 && !stopping) {
		log_warnx("%s reports that %s broke framing; restarting %s",
		    proc_name(reporter->ch_id), name, proc_name(victim));
		kill(children[victim].ch_pid, SIGKILL);
	}
}

/* ---- audit records from the supervisor ---- */

struct audit_wait {
	int aw_done;
};

static void
audit_ack_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct audit_wait *aw = arg;

	if (!audit_emit_acked(m))
		log_warnx("audit record not acknowledged");
	aw->aw_done = 1;
	event_base_loopbreak(base);
}

/* Send one system.* record and wait (bounded) for its acknowledgement. */
static void
audit_system(const char *kind, const char *key, const char *val)
{
	struct child *ad = &children[PROC_AUDITD];
	struct audit_wait aw = {0};
	struct json_object *o;

	if (!child_up(ad)) {
		log_warnx("auditd is down: %s not recorded", kind);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(o, key, json_object_new_string(val));
	if (audit_emit(ad->ch_conn, o, audit_ack_cb, &aw) == 0) {
		while (!aw.aw_done)
			if (event_base_loop(base, EVLOOP_ONCE) == -1)
				break;
	}
	json_object_put(o);
}

/* ---- stop ---- */

static void
child_stop(struct child *ch)
{
	int status;

	if (ch->ch_timer)
		evtimer_del(ch->ch_timer);
	if (ch->ch_pid <= 0)
		return;
	kill(ch->ch_pid, SIGTERM);
	if (reap_within(ch->ch_pid, &status, STOP_GRACE_MS) == 0) {
		log_warnx("%s did not stop; killing", proc_name(ch->ch_id));
		kill(ch->ch_pid, SIGKILL);
		waitpid(ch->ch_pid, &status, 0);
	}
	ch->ch_pid = 0;
	if (ch->ch_conn != NULL) {
		ipc_conn_free(ch->ch_conn);
		ch->ch_conn = NULL;
	}
}

/*
 * A stopped cordon leaves no token or port behind (`cordon status` then
 * says "not running"); only files that are still ours: the home's lock
 * keeps other cordons out, but not a person.
 */
static void
run_files_remove(const char *portbuf)
{
	home_remove_private(conf->cf_rundir, "token", token);
	home_remove_private(conf->cf_rundir, "port", portbuf);
}

/* Signals and each daemon's restart timer. */
static void
cordond_events(void)
{
	struct event *ev_term, *ev_int, *ev_chld;
	struct child *ch;
	size_t i;

	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	ev_term = evsignal_new(base, SIGTERM, sigterm_cb, NULL);
	ev_int = evsignal_new(base, SIGINT, sigterm_cb, NULL);
	ev_chld = evsignal_new(base, SIGCHLD, sigchld_cb, NULL);
	if (evsignal_add(ev_term, NULL) || evsignal_add(ev_int, NULL) ||
	    evsignal_add(ev_chld, NULL))
		fatalx("signal events");
	for (i = 0; i < nitems(start_order); i++) {
		ch = &children[start_order[i]];
		ch->ch_id = start_order[i];
		ch->ch_timer = evtimer_new(base, restart_cb, ch);
		if (ch->ch_timer == NULL)
			fatalx("evtimer_new");
	}
}

/* Start every daemon in order; each must confine itself and answer
 * status.  0 once all are ready, else -1 (exit_code says why). */
static int
cordond_boot(void)
{
	struct timeval tv = {READY_TIMEOUT_S, 0};
	struct child *ch;
	size_t i;

	for (i = 0; i < nitems(start_order); i++) {
		ch = &children[start_order[i]];
		if (child_start(ch) == -1) {
			exit_code = 1;
			return -1;
		}
	}
	for (i = 0; i < nitems(start_order); i++) {
		ch = &children[start_order[i]];
		if (ipc_request(ch->ch_conn, MSG_STATUS, NULL, -1,
			MSG_STATUS_OK, &tv, ready_cb, ch) == -1) {
			exit_code = 1;
			return -1;
		}
	}
	event_base_dispatch(base);
	return exit_code != 0 || stopping ? -1 : 0;
}

/* Reverse order; auditd last, after it has recorded the shutdown. */
static void
cordond_stop(void)
{
	stopping = 1;
	child_stop(&children[PROC_BROKER]);
	child_stop(&children[PROC_SCHED]); /* no fire while runs drain */
	child_stop(&children[PROC_SPAWNER]);
	child_stop(&children[PROC_GATED]);
	child_stop(&children[PROC_EGRESSD]);
	child_stop(&children[PROC_VAULTD]);
	if (!booting)
		audit_system("system.shutdown", "reason",
		    exit_code == 0 ? "signal" : "fatal");
	child_stop(&children[PROC_AUDITD]);
	runcg_teardown();
	cg_fd = -1;
}

/* The dashboard line: its one-time login URL, unless others can read
 * stdout (PER-5). */
static void
print_dashboard(void)
{
	const char *host = strcmp(conf->cf_listen, "0.0.0.0") == 0
			       ? "127.0.0.1"
			       : conf->cf_listen;
	int n;

	if (login_code[0] != '\0')
		n = printf("cordon: dashboard http://%s:%d/ui/login?code=%s\n",
		    host, listen_port, login_code);
	else
		n = printf("cordon: dashboard http://%s:%d/ui/ (no login code: "
			   "others can read this output; `cordon login` "
			   "prints one)\n",
		    host, listen_port);
	fflush(stdout);
	if (n < 0)
		log_warn("stdout");
}

int
cordond_main(struct cordon_config *cf)
{
	char portbuf[16];

	conf = cf;
	signal(SIGPIPE, SIG_IGN);

	if (random_hex(token, sizeof(token), 32) == -1 ||
	    random_hex(login_code, sizeof(login_code), 16) == -1) {
		log_warn("random");
		return 1;
	}
	if (!home_stdout_private()) /* PER-5: no code for others to read */
		explicit_bzero(login_code, sizeof(login_code));
	if ((listen_fd = open_listener()) == -1)
		return 1;
	snprintf(portbuf, sizeof(portbuf), "%d\n", listen_port);
	if (home_write_private(
		conf->cf_rundir, "token", token, (uid_t)-1, (gid_t)-1) == -1 ||
	    home_write_private(
		conf->cf_rundir, "port", portbuf, (uid_t)-1, (gid_t)-1) == -1) {
		run_files_remove(portbuf);
		return 1;
	}
	cordond_events();
	cg_fd = runcg_setup(conf->cf_user);
	if (launch_test_egress())
		log_warnx("CORDON_TEST_EGRESS=1: egress test hooks are ON "
			  "(test resolve maps honoured); never in production");
	if (cordond_boot() == -1)
		goto stop;
	booting = 0;

	audit_system("system.boot", "version", CORDON_VERSION);
	print_dashboard();

	event_base_dispatch(base);

stop:
	cordond_stop();
	run_files_remove(portbuf);
	explicit_bzero(token, sizeof(token));
	explicit_bzero(login_code, sizeof(login_code));
	explicit_bzero(sessions, sizeof(sessions));
	close(listen_fd);
	log_info("stopped");
	return exit_code;
}
