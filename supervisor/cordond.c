/*
 * cordond: supervise the five daemons.  Opens the listening socket and the
 * runtime files, starts each daemon with only its control fd (peer
 * channels and the listener follow over it by SCM_RIGHTS), restarts a
 * daemon that dies with backoff, aggregates health for the broker, and
 * stops everything in reverse order on SIGTERM/SIGINT.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <pwd.h>

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
#include "cgroup.h"
#include "config.h"
#include "cordond.h"
#include "daemon.h"
#include "env.h"
#include "ipc.h"
#include "log.h"
#include "msg.h"
#include "spawn_helper.h"
#include "util.h"
#include "yamljson.h"

#define BACKOFF_MIN_MS	100
#define BACKOFF_MAX_MS	5000
#define STABLE_AFTER_MS 10000 /* a daemon up this long resets backoff */
#define READY_TIMEOUT_S 10
#define STOP_GRACE_MS	3000
#define SPAWNER_CG_FD	4 /* the delegated pids cgroup, in the spawner */

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
    PROC_SPAWNER,
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
	uint64_t s_created;
} sessions[MSG_SESSIONS_MAX];
static int stopping;
static int booting = 1;
static int exit_code;
/* SP-7: cordond's own pids cgroup dir, and cordon.<pidns>.<pid> in it. */
static int cg_parent = -1;
static int cg_fd = -1;
static char cg_name[64];

static void health_h(struct ipc_conn *, struct ipc_msg *, void *);
static void login_used_h(struct ipc_conn *, struct ipc_msg *, void *);
static void session_add_h(struct ipc_conn *, struct ipc_msg *, void *);
static void peer_bad_h(struct ipc_conn *, struct ipc_msg *, void *);

static const struct ipc_dispatch parent_table[] = {
    {MSG_HEALTH, PROC_BIT(PROC_BROKER), 2, 64, IPC_FD_NONE, health_h},
    {MSG_LOGIN_USED, PROC_BIT(PROC_BROKER), 2, 64, IPC_FD_NONE, login_used_h},
    {MSG_SESSION_ADD, PROC_BIT(PROC_BROKER), 2, 128, IPC_FD_NONE,
	session_add_h},
    {MSG_PEER_BAD,
	PROC_BIT(PROC_AUDITD) | PROC_BIT(PROC_VAULTD) | PROC_BIT(PROC_SPAWNER) |
	    PROC_BIT(PROC_EGRESSD) | PROC_BIT(PROC_BROKER),
	2, 64, IPC_FD_NONE, peer_bad_h},
    {MSG_NONE, 0, 0, 0, 0, NULL},
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
		json_object_object_add(so, "createdMs",
		    json_object_new_int64((int64_t)sessions[i].s_created));
		json_object_array_add(arr, so);
	}
	json_object_object_add(o, "sessions", arr);
	if (ipc_send(ch->ch_conn, MSG_BROKER_CONFIG, o, fd) == -1)
		log_warnx("cannot configure the broker");
	json_object_put(o);
}

/*
 * The spawner's extra environment (SEC-2, SP-4): cordond's PATH and HOME
 * (agents resolve their binary and home from them; with --user as root,
 * that user's home, which SBX-2 then protects), TMPDIR (where the
 * runs' private tmps go; agents get their own) and every variable
 * that some agents/ YAML file maps under `secrets:` (ENV_NAME: dotted.path),
 * so secrets may come from cordond's own environment.  Nothing else of
 * ours reaches it.  Appends to envp from ne, at most max; returns ne.
 */
#define SPAWNER_ENV_MAX 64
static size_t
spawner_env(char **envp, size_t ne, size_t max)
{
	static char *held[SPAWNER_ENV_MAX];
	static size_t nheld;
	struct json_object *root, *sec;
	struct yaml_err ye;
	struct dirent *de;
	char file[PATH_MAX];
	const char *v;
	size_t i, len;
	DIR *d;

	for (i = 0; i < nheld; i++)
		free(held[i]);
	nheld = 0;
#define SPAWNER_ENV_ADD(name)                                                  \
	do {                                                                   \
		if ((v = getenv(name)) != NULL && ne < max &&                  \
		    nheld < SPAWNER_ENV_MAX &&                                 \
		    asprintf(&held[nheld], "%s=%s", name, v) != -1)            \
			envp[ne++] = held[nheld++];                            \
	} while (0)
	SPAWNER_ENV_ADD("PATH");
	/*
	 * The home the agents run in, and the one SBX-2 protects: with
	 * --user, that user's, never root's (whose HOME we may have).
	 */
	if (getuid() == 0 && conf->cf_user != NULL) {
		struct passwd *pw = getpwnam(conf->cf_user);

		if (pw != NULL && pw->pw_dir != NULL && pw->pw_dir[0] == '/' &&
		    ne < max && nheld < SPAWNER_ENV_MAX &&
		    asprintf(&held[nheld], "HOME=%s", pw->pw_dir) != -1)
			envp[ne++] = held[nheld++];
	} else
		SPAWNER_ENV_ADD("HOME");
	SPAWNER_ENV_ADD("TMPDIR");
	if ((d = opendir(conf->cf_agents)) == NULL)
		return ne;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 6 ||
		    strcmp(de->d_name + len - 5, ".yaml") != 0 ||
		    snprintf(file, sizeof(file), "%s/%s", conf->cf_agents,
			de->d_name) >= (int)sizeof(file) ||
		    (root = yaml_load_file(file, &ye)) == NULL)
			continue;
		if (json_object_object_get_ex(root, "secrets", &sec) &&
		    json_object_is_type(sec, json_type_object)) {
			json_object_object_foreach (sec, k, val) {
				(void)val;
				/*
				 * A name the manifest check accepts: never
				 * one that every agent gets (SEC-3).
				 */
				if (!env_name_ok(k) || env_shared(k))
					continue;
				for (i = 0; i < ne; i++)
					if (strncmp(envp[i], k, strlen(k)) ==
						0 &&
					    envp[i][strlen(k)] == '=')
						break;
				if (i == ne)
					SPAWNER_ENV_ADD(k);
			}
		}
		json_object_put(root);
	}
	closedir(d);
#undef SPAWNER_ENV_ADD
	return ne;
}

static int
test_egress(void)
{
	const char *v = getenv("CORDON_TEST_EGRESS");

	return v != NULL && strcmp(v, "1") == 0;
}

static int
child_start(struct child *ch)
{
	char path[PATH_MAX + 32], prog[32];
	char *argv[24], *envp[16 + SPAWNER_ENV_MAX]; /* bounded below */
	const char *name = proc_name(ch->ch_id);
	/* CORDON_TEST_CLOCK_FILE: the scheduler's test clock (a test hook). */
	const char *keep[] = {"JOURNAL_STREAM", "ASAN_OPTIONS", "UBSAN_OPTIONS",
	    "CORDON_SECCOMP_DEBUG", "CORDON_TEST_CLOCK_FILE"};
	char envbuf[nitems(keep)][512];
	struct spawn_fd fds[3];
	struct spawn_req req;
	size_t i, na = 0, ne = 0, nfds = 2;
	const char *v;
	int sp[2];

	snprintf(prog, sizeof(prog), "cordon-%s", name);
	if (cordon_program(prog, path, sizeof(path)) == -1) {
		log_warnx("%s: program path too long", name);
		return -1;
	}
	argv[na++] = path;
	switch (ch->ch_id) {
	case PROC_AUDITD: {
		static char days[16]; /* AU-8, from audit.retentionDays */

		snprintf(days, sizeof(days), "%ld", conf->cf_retention_days);
		argv[na++] = "--audit-dir";
		argv[na++] = conf->cf_audit;
		argv[na++] = "--retention-days";
		argv[na++] = days;
		break;
	}
	case PROC_VAULTD:
		argv[na++] = "--vault";
		argv[na++] = conf->cf_vault;
		break;
	case PROC_SPAWNER: {
		static char runs[16], runs_agent[16]; /* SP-14 bounds */
		static char cgfd[16];

		snprintf(runs, sizeof(runs), "%ld", conf->cf_max_runs);
		snprintf(runs_agent, sizeof(runs_agent), "%ld",
		    conf->cf_max_runs_agent);
		argv[na++] = "--home";
		argv[na++] = conf->cf_home[0] ? conf->cf_home : conf->cf_agents;
		argv[na++] = "--max-runs";
		argv[na++] = runs;
		argv[na++] = "--max-runs-per-agent";
		argv[na++] = runs_agent;
		/* SBX-2: no agent root may reach these either. */
		argv[na++] = "--protect";
		argv[na++] = conf->cf_audit;
		argv[na++] = "--protect";
		argv[na++] = conf->cf_vault;
		/* The scheduler state (missions.json): home_prepare made it. */
		argv[na++] = "--state-dir";
		argv[na++] = conf->cf_state;
		/* SP-7: its delegated pids cgroup, as fd 4. */
		if (cg_fd != -1) {
			snprintf(cgfd, sizeof(cgfd), "%d", SPAWNER_CG_FD);
			argv[na++] = "--pids-cgroup-fd";
			argv[na++] = cgfd;
		}
		break;
	}
	default:
		break;
	}
	/*
	 * EG-2 test hook: egress.testResolve/testAllowAddress honoured, in
	 * the spawner and egressd, only when cordon itself runs with
	 * CORDON_TEST_EGRESS=1; loud in the log and in health.
	 */
	if (test_egress() &&
	    (ch->ch_id == PROC_EGRESSD || ch->ch_id == PROC_SPAWNER)) {
		argv[na++] = "--test-egress";
		argv[na++] = "1";
	}
	if (getuid() == 0) {
		if (ch->ch_id == PROC_BROKER) {
			argv[na++] = "--user";
			argv[na++] = conf->cf_broker_user;
		} else if (conf->cf_user != NULL) {
			argv[na++] = "--user";
			argv[na++] = (char *)conf->cf_user;
		}
	}
	if (conf->cf_debug)
		argv[na++] = "--debug";
	argv[na] = NULL;

	/* A built environment: nothing of ours leaks into the daemons. */
	envp[ne++] = "LANG=C";
	envp[ne++] = "TZ=UTC"; /* no /etc/localtime read after confinement */
	for (i = 0; i < nitems(keep); i++) {
		if ((v = getenv(keep[i])) == NULL)
			continue;
		snprintf(envbuf[i], sizeof(envbuf[i]), "%s=%s", keep[i], v);
		envp[ne++] = envbuf[i];
	}
	if (ch->ch_id == PROC_SPAWNER)
		ne = spawner_env(envp, ne, nitems(envp) - 1);
	envp[ne] = NULL;

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

/* ---- health for the broker ---- */

struct health_req {
	unsigned int hr_gen; /* broker generation that asked */
	uint32_t hr_id;	     /* its request id */
	int hr_waiting;
	struct json_object *hr_status[PROC_MAX];
};

struct health_sub {
	struct health_req *hs_req;
	enum proc_id hs_proc;
};

/* What the kernel says about a daemon, read from outside. */
static struct json_object *
observed_status(pid_t pid)
{
	struct json_object *o;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return NULL;
	o = json_object_new_object();
	while (fgets(line, sizeof(line), f) != NULL) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(line, "NoNewPrivs:\t", 12) == 0)
			json_object_object_add(o, "noNewPrivs",
			    json_object_new_int(atoi(line + 12)));
		else if (strncmp(line, "Seccomp:\t", 9) == 0)
			json_object_object_add(
			    o, "seccomp", json_object_new_int(atoi(line + 9)));
		else if (strncmp(line, "CapEff:\t", 8) == 0)
			json_object_object_add(
			    o, "capEff", json_object_new_string(line + 8));
		else if (strncmp(line, "Uid:\t", 5) == 0)
			json_object_object_add(
			    o, "uid", json_object_new_int(atoi(line + 5)));
	}
	fclose(f);
	return o;
}

static void
health_finish(struct health_req *hr)
{
	struct child *broker = &children[PROC_BROKER];
	struct json_object *o, *arr, *d;
	struct ipc_msg req;
	struct child *ch;
	size_t i;
	int allup = 1;

	o = json_object_new_object();
	arr = json_object_new_array();
	for (i = 0; i < nitems(start_order); i++) {
		ch = &children[start_order[i]];
		d = json_object_new_object();
		json_object_object_add(
		    d, "name", json_object_new_string(proc_name(ch->ch_id)));
		json_object_object_add(d, "up",
		    json_object_new_boolean(
			child_up(ch) && hr->hr_status[ch->ch_id] != NULL));
		if (ch->ch_pid > 0)
			json_object_object_add(
			    d, "pid", json_object_new_int(ch->ch_pid));
		json_object_object_add(
		    d, "restarts", json_object_new_int((int)ch->ch_restarts));
		if (hr->hr_status[ch->ch_id] != NULL) {
			json_object_object_add(
			    d, "status", hr->hr_status[ch->ch_id]);
			hr->hr_status[ch->ch_id] = NULL;
		} else
			allup = 0;
		if (ch->ch_pid > 0) {
			struct json_object *obs = observed_status(ch->ch_pid);
			if (obs != NULL)
				json_object_object_add(d, "observed", obs);
		}
		json_object_array_add(arr, d);
	}
	json_object_object_add(
	    o, "status", json_object_new_string(allup ? "ok" : "degraded"));
	json_object_object_add(o, "daemons", arr);
	if (broker->ch_gen == hr->hr_gen && broker->ch_conn != NULL) {
		memset(&req, 0, sizeof(req));
		req.m_id = hr->hr_id;
		ipc_reply(broker->ch_conn, &req, MSG_HEALTH_OK, o, -1);
	}
	json_object_put(o);
	for (i = 0; i < PROC_MAX; i++)
		json_object_put(hr->hr_status[i]);
	free(hr);
}

static void
health_status_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct health_sub *hs = arg;
	struct health_req *hr = hs->hs_req;

	if (m != NULL && m->m_type == MSG_STATUS_OK)
		hr->hr_status[hs->hs_proc] = json_object_get(m->m_obj);
	free(hs);
	if (--hr->hr_waiting == 0)
		health_finish(hr);
}

static void
health_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct timeval tv = {1, 0};
	struct health_req *hr;
	struct health_sub *hs;
	struct child *ch;
	size_t i;

	if ((hr = calloc(1, sizeof(*hr))) == NULL) {
		ipc_reply_error(c, m, "internal");
		return;
	}
	hr->hr_gen = children[PROC_BROKER].ch_gen;
	hr->hr_id = m->m_id;
	hr->hr_waiting = 1; /* held until every request is out */
	for (i = 0; i < nitems(start_order); i++) {
		ch = &children[start_order[i]];
		if (!child_up(ch) || (hs = calloc(1, sizeof(*hs))) == NULL)
			continue;
		hs->hs_req = hr;
		hs->hs_proc = ch->ch_id;
		hr->hr_waiting++;
		if (ipc_request(ch->ch_conn, MSG_STATUS, NULL, -1,
			MSG_STATUS_OK, &tv, health_status_cb, hs) == -1) {
			free(hs);
			hr->hr_waiting--;
		}
	}
	if (--hr->hr_waiting == 0)
		health_finish(hr);
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
	const char *id;
	size_t i;

	if ((id = json_get_str(m->m_obj, "id", SESSION_ID_HEX)) == NULL ||
	    strlen(id) != SESSION_ID_HEX ||
	    strspn(id, "0123456789abcdef") != SESSION_ID_HEX) {
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

	if ((name = json_get_str(m->m_obj, "peer", 16)) == NULL ||
	    (p = proc_lookup(name)) == -1 ||
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

/* ---- the pids cgroup of agent runs (SP-7) ---- */

/*
 * As root: make cordon.<pidns>.<pid> beneath cordond's own cgroup in the pids
 * hierarchy and delegate it to the spawner (its uid owns it), which
 * makes one child group per run with pids.max = limits.nproc.  Without
 * one, a spawner running as root refuses every run (it says so in
 * health); a spawner with its own uid keeps RLIMIT_NPROC in each run's
 * user namespace.
 */
static void
cgroup_setup(void)
{
	char dir[PATH_MAX], prefix[40];
	struct passwd *pw;
	struct stat nst;
	uid_t uid = 0;
	gid_t gid = 0;
	/* What a spawner without the group does instead. */
	const char *then =
	    conf->cf_user == NULL
		? "agent runs are refused"
		: "runs keep RLIMIT_NPROC in their user namespace";
	int kind;

	if (getuid() != 0)
		return;
	if (cgroup_find_pids(dir, sizeof(dir), &kind) == -1) {
		log_warnx("no pids cgroup hierarchy: %s (SP-7)", then);
		return;
	}
	if (conf->cf_user != NULL) {
		if ((pw = getpwnam(conf->cf_user)) == NULL) {
			log_warnx("pids cgroup: unknown user; not delegated");
			return;
		}
		uid = pw->pw_uid;
		gid = pw->pw_gid;
		/*
		 * cgroup2 lets a process move another only with write access
		 * to the common ancestor's cgroup.procs: ours, root's.  The
		 * spawner keeps RLIMIT_NPROC in each run's user namespace.
		 */
		if (kind == CGROUP_V2 && uid != 0) {
			log_info("pids cgroup: cgroup2 is not delegated to "
				 "an unprivileged spawner");
			return;
		}
	}
	if ((cg_parent = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		log_warn("pids cgroup: open");
		return;
	}
	/*
	 * cordon.<pidns>.<pid>: a pid means something only in its own pid
	 * namespace, and cordons in other namespaces (containers, chroots
	 * with their own /proc) share this hierarchy.  Only the groups of
	 * our namespace whose cordond was killed with -9 are swept, once
	 * empty; another namespace's groups are never touched.
	 */
	if (stat("/proc/self/ns/pid", &nst) == -1)
		nst.st_ino = 0;
	snprintf(
	    prefix, sizeof(prefix), "cordon.%lu.", (unsigned long)nst.st_ino);
	if (cgroup_sweep(cg_parent, prefix, 1) > 0)
		log_warnx("pids cgroups of dead cordons still hold processes; "
			  "left in place");
	snprintf(cg_name, sizeof(cg_name), "%s%d", prefix, (int)getpid());
	if ((kind == CGROUP_V2 && cgroup_enable_pids(cg_parent) == -1) ||
	    cgroup_make(cg_parent, cg_name, 0, &cg_fd) == -1) {
		log_warn("pids cgroup: cannot make cordon's group (%s)", then);
		cg_fd = -1;
		goto fail;
	}
	if (kind == CGROUP_V2 && cgroup_enable_pids(cg_fd) == -1) {
		log_warn("pids cgroup: cannot enable pids for runs (%s)", then);
		goto fail_rm;
	}
	/*
	 * The directory only: the spawner makes and removes run groups in
	 * it.  cordon.<pidns>.<pid>'s own cgroup.procs stays root's, so nothing
	 * of that uid can move a process into it, out of its run's bound.
	 */
	if (uid != 0 && fchown(cg_fd, uid, gid) == -1) {
		log_warn("pids cgroup: chown (%s)", then);
		goto fail_rm;
	}
	log_debug("pids cgroup delegated to the spawner");
	return;
fail_rm:
	close(cg_fd);
	cg_fd = -1;
	(void)cgroup_remove(cg_parent, cg_name, 0);
fail:
	close(cg_parent);
	cg_parent = -1;
}

/* After the spawner stopped: end whatever is left, remove the group. */
static void
cgroup_teardown(void)
{
	if (cg_fd == -1)
		return;
	close(cg_fd);
	cg_fd = -1;
	if (cgroup_remove(cg_parent, cg_name, 0) == -1)
		log_warn("pids cgroup: removing cordon's group");
	close(cg_parent);
	cg_parent = -1;
}

/* ---- stop ---- */

static void
child_stop(struct child *ch)
{
	uint64_t deadline;
	struct timespec ts = {0, 10 * 1000 * 1000};
	int status;
	pid_t r;

	if (ch->ch_timer)
		evtimer_del(ch->ch_timer);
	if (ch->ch_pid <= 0)
		return;
	kill(ch->ch_pid, SIGTERM);
	deadline = now_ms_mono() + STOP_GRACE_MS;
	for (;;) {
		r = waitpid(ch->ch_pid, &status, WNOHANG);
		if (r == ch->ch_pid || (r == -1 && errno == ECHILD))
			break;
		if (now_ms_mono() >= deadline) {
			log_warnx(
			    "%s did not stop; killing", proc_name(ch->ch_id));
			kill(ch->ch_pid, SIGKILL);
			waitpid(ch->ch_pid, &status, 0);
			break;
		}
		nanosleep(&ts, NULL);
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

int
cordond_main(struct cordon_config *cf)
{
	struct event *ev_term, *ev_int, *ev_chld;
	struct timeval tv = {READY_TIMEOUT_S, 0};
	char portbuf[16];
	struct child *ch;
	size_t i;
	int n;

	conf = cf;
	signal(SIGPIPE, SIG_IGN);

	if (random_hex(token, sizeof(token), 32) == -1 ||
	    random_hex(login_code, sizeof(login_code), 16) == -1) {
		log_warn("random");
		return 1;
	}
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
	cgroup_setup();
	if (test_egress())
		log_warnx("CORDON_TEST_EGRESS=1: egress test hooks are ON "
			  "(test resolve maps honoured); never in production");
	for (i = 0; i < nitems(start_order); i++) {
		ch = &children[start_order[i]];
		if (child_start(ch) == -1) {
			exit_code = 1;
			goto stop;
		}
	}

	/* Boot: every daemon must confine itself and answer status. */
	for (i = 0; i < nitems(start_order); i++) {
		ch = &children[start_order[i]];
		if (ipc_request(ch->ch_conn, MSG_STATUS, NULL, -1,
			MSG_STATUS_OK, &tv, ready_cb, ch) == -1) {
			exit_code = 1;
			goto stop;
		}
	}
	event_base_dispatch(base);
	if (exit_code != 0 || stopping)
		goto stop;
	booting = 0;

	audit_system("system.boot", "version", CORDON_VERSION);
	n = printf("cordon: dashboard http://%s:%d/ui/login?code=%s\n",
	    strcmp(conf->cf_listen, "0.0.0.0") == 0 ? "127.0.0.1"
						    : conf->cf_listen,
	    listen_port, login_code);
	fflush(stdout);
	if (n < 0)
		log_warn("stdout");

	event_base_dispatch(base);

stop:
	stopping = 1;
	/* Reverse order; auditd last, after it has recorded the shutdown. */
	child_stop(&children[PROC_BROKER]);
	child_stop(&children[PROC_SPAWNER]);
	child_stop(&children[PROC_EGRESSD]);
	child_stop(&children[PROC_VAULTD]);
	if (!booting)
		audit_system("system.shutdown", "reason",
		    exit_code == 0 ? "signal" : "fatal");
	child_stop(&children[PROC_AUDITD]);
	cgroup_teardown();
	run_files_remove(portbuf);
	explicit_bzero(token, sizeof(token));
	explicit_bzero(login_code, sizeof(login_code));
	explicit_bzero(sessions, sizeof(sessions));
	close(listen_fd);
	log_info("stopped");
	return exit_code;
}
