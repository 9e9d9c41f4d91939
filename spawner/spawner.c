/*
 * cordon-spawner: runs agent CLIs from manifests.  The only daemon that
 * executes programs or holds secret values.  Its seccomp layer is a deny
 * set inherited by every agent; it has no Landlock ruleset of its own
 * (each agent gets its own, sandbox/).  This file: start-up, the
 * dispatch tables, child reaping, agent listing and the audit sender.
 * Reads the agents and missions directories and secrets.yaml; writes
 * only in its state dir (detached jobs, job.c; agents' homes; worktrees)
 * and, beneath the pids cgroup cordond delegates (fd 4), one group per
 * run (child.c).  Cron missions are scheduled by cordon-sched, which
 * fires them here (mission.c).
 */
#include <sys/stat.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "cgroup.h"
#include "audit_emit.h"
#include "confine.h"
#include "daemon.h"
#include "gatechan.h"
#include "json.h"
#include "log.h"
#include "msg.h"
#include "roots.h"
#include "spawner.h"
#include "util.h"
#include "spawner_shapes.h"
#include "worktree.h"

struct spawner sp;

static void agent_list_h(struct ipc_conn *, struct ipc_msg *, void *);
static void agent_get_h(struct ipc_conn *, struct ipc_msg *, void *);

static const struct ipc_dispatch parent_table[] = {
    DAEMON_PARENT_ROWS,
    IPC_END,
};

/* Requests come from the broker; audit and vault answers are replies;
 * egressd reports its connections and sched its fires (one-way); gated
 * asks for a held call's line scrubbed (SP-11). */
static const struct ipc_dispatch peer_table[] = {
    {MSG_AGENT_LIST, PROC_BIT(PROC_BROKER), 2, 64, IPC_FD_NONE, agent_list_h,
	IPC_EMPTY},
    {MSG_AGENT_GET, PROC_BIT(PROC_BROKER), 2, 512, IPC_FD_NONE, agent_get_h,
	IPC_KEYS(agent_get_shape)},
    {MSG_RUN_START, PROC_BIT(PROC_BROKER), 2, RUN_START_MAX, IPC_FD_NONE,
	run_start_h, IPC_KEYS(run_start_shape)},
    {MSG_RUN_CANCEL, PROC_BIT(PROC_BROKER), 2, 256, IPC_FD_NONE, run_cancel_h,
	IPC_KEYS(run_id_shape)},
    {MSG_ACTION_RUN, PROC_BIT(PROC_BROKER), 2, 1024, IPC_FD_NONE, action_run_h,
	IPC_KEYS(action_run_shape)},
    {MSG_RUN_CREDIT, PROC_BIT(PROC_BROKER), 2, 256, IPC_FD_NONE, run_credit_h,
	IPC_KEYS(run_credit_shape)},
    {MSG_MISSION_LIST, PROC_BIT(PROC_BROKER), 2, 64, IPC_FD_NONE,
	mission_list_h, IPC_EMPTY},
    {MSG_MISSION_RUN, PROC_BIT(PROC_BROKER), 2, MSG_MISSION_RUN_MAX,
	IPC_FD_NONE, mission_run_h, IPC_KEYS(mission_run_shape)},
    {MSG_MISSION_FIRE, PROC_BIT(PROC_SCHED), 2, 256, IPC_FD_NONE,
	mission_fire_h, IPC_KEYS(mission_fire_shape)},
    {MSG_EGRESS_CONN, PROC_BIT(PROC_EGRESSD), 2, 1024, IPC_FD_NONE,
	egress_conn_h, IPC_KEYS(egress_conn_shape)},
    {MSG_GATE_SCRUB, PROC_BIT(PROC_GATED), 2, GATE_LINE_MAX + 256, IPC_FD_NONE,
	gate_scrub_h, IPC_KEYS(gate_scrub_shape)},
    {MSG_JOB_START, PROC_BIT(PROC_BROKER), 2, RUN_START_MAX, IPC_FD_NONE,
	job_start_h, IPC_KEYS(run_start_shape)},
    {MSG_JOB_LIST, PROC_BIT(PROC_BROKER), 2, 64, IPC_FD_NONE, job_list_h,
	IPC_EMPTY},
    {MSG_JOB_GET, PROC_BIT(PROC_BROKER), 2, 256, IPC_FD_NONE, job_get_h,
	IPC_KEYS(job_id_shape)},
    {MSG_JOB_EVENTS, PROC_BIT(PROC_BROKER), 2, 256, IPC_FD_NONE, job_events_h,
	IPC_KEYS(job_events_shape)},
    {MSG_JOB_WAIT, PROC_BIT(PROC_BROKER), 2, 256, IPC_FD_NONE, job_wait_h,
	IPC_KEYS(job_wait_shape)},
    {MSG_JOB_CANCEL, PROC_BIT(PROC_BROKER), 2, 256, IPC_FD_NONE, job_cancel_h,
	IPC_KEYS(job_id_shape)},
    {MSG_WORKTREE_LIST, PROC_BIT(PROC_BROKER), 2, 64, IPC_FD_NONE,
	worktree_list_h, IPC_EMPTY},
    {MSG_WORKTREE_REMOVE, PROC_BIT(PROC_BROKER), 2, 256, IPC_FD_NONE,
	worktree_remove_h, IPC_KEYS(worktree_id_shape)},
    DAEMON_PEER_STATUS_ROW,
    IPC_END,
};

int
spawner_audit(struct json_object *rec, ipc_reply_fn cb, void *arg)
{
	return audit_emit(sp.sp_d.d_peers[PROC_AUDITD], rec, cb, arg);
}

int
spawner_audit_acked(const struct ipc_msg *m)
{
	return audit_emit_acked(m);
}

/* Is this still the live broker channel the request arrived on? */
int
spawner_broker_ok(struct ipc_conn *c, unsigned int gen)
{
	return c != NULL && sp.sp_d.d_peers[PROC_BROKER] == c &&
	       sp.sp_broker_gen == gen;
}

void
spawner_req_keep(struct ipc_conn *c, const struct ipc_msg *m,
    struct ipc_conn **conn, unsigned int *gen, struct ipc_msg *keep)
{
	*conn = c;
	*gen = sp.sp_broker_gen;
	*keep = *m;
	keep->m_obj = NULL; /* the codec's, freed once the handler returns */
	keep->m_fd = -1;
}

static void
agent_list_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o, *arr;
	size_t i;

	o = json_object_new_object();
	arr = json_object_new_array();
	for (i = 0; i < sp.sp_nagents; i++)
		json_object_array_add(arr, agent_json(sp.sp_agents[i], 0));
	json_object_object_add(o, "agents", arr);
	ipc_reply(c, m, MSG_AGENT_LIST_OK, o, -1);
	json_object_put(o);
}

static void
agent_get_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o;
	struct agent *ag;
	const char *name;

	name = json_shape_str(m->m_obj, "name", NULL);
	if ((ag = agent_find(name)) == NULL) {
		ipc_reply_error(c, m, "unknown-agent");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "agent", agent_json(ag, 1));
	ipc_reply(c, m, MSG_AGENT_GET_OK, o, -1);
	json_object_put(o);
}

static void
sigchld_cb(evutil_socket_t sig, short ev, void *arg)
{
	aproc_reap();
}

/*
 * SBX-5: health says which sandbox layers this host offers; each agent's
 * own layers are in its agent_json ("sandbox").  SP-7: pidsCgroup says
 * whether runs get their own pids.max, and what bounds them if not.
 */
static void
status_extra(struct daemon *d, struct json_object *st)
{
	json_object_object_add(st, "sandboxHost", sandbox_host_json());
	json_object_object_add(st, "pidsCgroup", sandbox_pids_json());
}

static void
peer_up(struct daemon *d, enum proc_id p)
{
	if (p == PROC_BROKER) {
		sp.sp_broker_gen++;
		runs_broker_lost();
	}
	if (p == PROC_EGRESSD)
		egress_peer_up();
	if (p == PROC_GATED)
		gate_peer_up();
	if (p == PROC_AUDITD)
		jobs_audit_lost();
	if (p == PROC_SCHED)
		sp.sp_declared = 0;
	missions_declare(); /* MI-1: once sched, auditd and vaultd are up */
}

/*
 * --home DIR: a cordon home (DIR/agents, DIR/missions, DIR/secrets.yaml);
 * in XDG mode cordond passes the agents directory itself, whose parent
 * holds secrets.yaml and missions/.
 */
static void
spawner_paths(const char *home)
{
	size_t len = strlen(home);
	const char *slash;

	if (len >= 7 && strcmp(home + len - 7, "/agents") == 0) {
		slash = home + len - 7;
		if (snprintf(sp.sp_agents_dir, sizeof(sp.sp_agents_dir), "%s",
			home) >= (int)sizeof(sp.sp_agents_dir) ||
		    snprintf(sp.sp_secrets, sizeof(sp.sp_secrets),
			"%.*s/secrets.yaml", (int)(slash - home),
			home) >= (int)sizeof(sp.sp_secrets) ||
		    snprintf(sp.sp_missions_dir, sizeof(sp.sp_missions_dir),
			"%.*s/missions", (int)(slash - home),
			home) >= (int)sizeof(sp.sp_missions_dir))
			fatalx("home path too long");
		return;
	}
	if (snprintf(sp.sp_agents_dir, sizeof(sp.sp_agents_dir), "%s/agents",
		home) >= (int)sizeof(sp.sp_agents_dir) ||
	    snprintf(sp.sp_secrets, sizeof(sp.sp_secrets), "%s/secrets.yaml",
		home) >= (int)sizeof(sp.sp_secrets) ||
	    snprintf(sp.sp_missions_dir, sizeof(sp.sp_missions_dir),
		"%s/missions", home) >= (int)sizeof(sp.sp_missions_dir))
		fatalx("home path too long");
}

/*
 * SBX-2: what no agent root may be, contain or lie inside, besides the
 * fixed list: cordon's config dir, what cordond names with --protect and
 * our state dir (jobs, sched's state and every agent's home, SBX-9:
 * each agent's plan adds its own home alone).  Resolved now, before
 * confinement; a dir that does not exist yet is kept as written.
 */
static void
spawner_protect(const char *const *protect, size_t nprotect, const char *state)
{
	struct protect_ctx *pc = &sp.sp_protect;
	const char *dirs[2 + SPAWNER_MAX_PROTECT];
	char cfg[PATH_MAX], *slash;
	size_t i, n = 0;

	if (roots_protect_init(pc, sp.sp_home, sizeof(sp.sp_home)) == -1)
		fatalx("no home directory to protect");
	snprintf(cfg, sizeof(cfg), "%s", sp.sp_secrets);
	if ((slash = strrchr(cfg, '/')) != NULL && slash != cfg)
		*slash = '\0'; /* the dir of secrets.yaml */
	dirs[n++] = cfg;
	for (i = 0; i < nprotect; i++)
		dirs[n++] = protect[i];
	if (state != NULL) {
		if (snprintf(sp.sp_state, sizeof(sp.sp_state), "%s", state) >=
		    (int)sizeof(sp.sp_state))
			fatalx("state dir path too long");
		dirs[n++] = sp.sp_state;
	}
	for (i = 0; i < n && pc->pc_nextra < PROTECT_EXTRA_MAX; i++)
		if (roots_protect_add(pc, dirs[i], sp.sp_protect_buf[i]) == -1)
			fatalx("protected path too long");
}

/*
 * SIGTERM (cordond stops the broker first and auditd after us): no new
 * child starts, and every run is killed and ends as a killed run does,
 * its end record (agent.invoke.error, agent.action, mission.run with
 * errorClass killed) sent to auditd.  We leave once no run is left and
 * auditd and vaultd (stopped after us too) have answered every request,
 * or after SPAWNER_DRAIN_MS, within cordond's stop grace; main then
 * removes what is left.
 */
#define SPAWNER_DRAIN_MS      2000
#define SPAWNER_DRAIN_POLL_MS 5

static struct event *drain_ev;
static uint64_t drain_until;

static void
drain_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct timeval tv = {0, SPAWNER_DRAIN_POLL_MS * 1000};
	struct ipc_conn *a = sp.sp_d.d_peers[PROC_AUDITD];
	struct ipc_conn *v = sp.sp_d.d_peers[PROC_VAULTD];

	/* A note in vaultd's hands still has its mission.run to come. */
	if (TAILQ_EMPTY(&sp.sp_procs) && (a == NULL || !ipc_conn_waiting(a)) &&
	    (v == NULL || !ipc_conn_waiting(v))) {
		event_base_loopexit(sp.sp_d.d_base, NULL);
		return;
	}
	if (now_ms_mono() >= drain_until) {
		log_warnx("stopping: a run or its end record was still "
			  "outstanding after %d ms",
		    SPAWNER_DRAIN_MS);
		event_base_loopexit(sp.sp_d.d_base, NULL);
		return;
	}
	evtimer_add(drain_ev, &tv);
}

static void
spawner_stop(struct daemon *d)
{
	sp.sp_stopping = 1;
	aproc_kill_all();
	drain_until = now_ms_mono() + SPAWNER_DRAIN_MS;
	if ((drain_ev = evtimer_new(d->d_base, drain_cb, NULL)) == NULL) {
		event_base_loopexit(d->d_base, NULL);
		return;
	}
	drain_cb(-1, 0, NULL);
}

/* What a previous spawner left in the state dir: jobs it lost (MC-3),
 * checkouts it was still making (MC-2). */
static void
state_open(const char *state, long jobs_keep, long jobs_mib)
{
	jobs_open(state, jobs_keep, jobs_mib);
	worktrees_sweep();
}

/*
 * SP-7: --pids-cgroup-fd N is a cgroup directory cordond made for us;
 * anything else there is a usage error.  Under cordond as root without
 * one, every run is refused (aproc_start); under systemd the unit's
 * TasksMax bounds the spawner and everything it starts.
 */
static void
spawner_cgroup(long fd)
{
	struct stat st;

	sp.sp_cgfd = -1;
	if (fd != -1) {
		if (fstat((int)fd, &st) == -1 || !S_ISDIR(st.st_mode) ||
		    cgroup_kind_of((int)fd) == -1 ||
		    set_cloexec((int)fd, 1) == -1)
			fatalx("usage: --pids-cgroup-fd: not a cgroup dir");
		sp.sp_cgfd = (int)fd;
	}
	sbx_host.sh_pids_cg = sp.sp_cgfd != -1;
	sbx_host.sh_pids_systemd = sp.sp_d.d_systemd;
	sbx_host.sh_pids_required =
	    sp.sp_cgfd == -1 && geteuid() == 0 && !sp.sp_d.d_systemd;
	if (sbx_host.sh_pids_required)
		log_warnx("no pids cgroup and running as root: agent runs are "
			  "refused (SP-7)");
	else if (sp.sp_cgfd != -1)
		aproc_cgroup_sweep();
}

int
main(int argc, char **argv)
{
	struct daemon_args a;
	struct confine_spec spec;
	long cgfd = -1, jobs_keep = LIM_JOBS_KEEP, jobs_mib = LIM_JOBS_KEEP_MIB;

	log_init("spawner", 0);
	const struct daemon_numopt nums[] = {
	    {"max-runs", 1, LIM_RUNS_TOTAL_MAX, &sp.sp_max_runs},
	    {"max-runs-per-agent", 1, LIM_RUNS_PER_AGENT_MAX,
		&sp.sp_max_runs_agent},
	    {"jobs-keep", 1, LIM_JOBS_KEEP_MAX, &jobs_keep}, /* MC-3 */
	    {"jobs-keep-mib", 1, LIM_JOBS_KEEP_MIB_MAX, &jobs_mib},
	    {"pids-cgroup-fd", 4, 4, &cgfd},
	    {"test-egress", 0, 1, &sp.sp_test_egress}, /* cordond's hook */
	    {NULL, 0, 0, NULL},
	};
	/* --protect DIR: dirs no agent may reach besides the fixed SBX-2
	 * list; --state-dir DIR: jobs and agents' homes, cordond makes it
	 * 0700. */
	const char *protect[SPAWNER_MAX_PROTECT], *state = NULL;
	size_t nprotect, nstate;
	const struct daemon_diropt dirs[] = {
	    {"protect", SPAWNER_MAX_PROTECT, protect, &nprotect},
	    {"state-dir", 1, &state, &nstate},
	    {NULL, 0, NULL, NULL},
	};

	sp.sp_max_runs = LIM_RUNS_TOTAL;
	sp.sp_max_runs_agent = LIM_RUNS_PER_AGENT;
	daemon_parse_args(argc, argv, "home", nums, dirs, 0, &a);
	log_init("spawner", a.da_debug);
	if (a.da_path[0] != '/')
		fatalx("usage: --home must be absolute");
	spawner_paths(a.da_path);
	spawner_protect(protect, nprotect, state);
	TAILQ_INIT(&sp.sp_procs);
	daemon_prepare(&sp.sp_d, PROC_SPAWNER, peer_table, &a);
	if (sp.sp_d.d_systemd)
		sandbox_hide_dir(sp.sp_d.d_sockdir);
	sp.sp_d.d_peer_up = peer_up;
	sp.sp_d.d_status_extra = status_extra;
	sp.sp_d.d_stop = spawner_stop;
	sp.sp_d.d_arg = &sp;
	sp.sp_sigchld = evsignal_new(sp.sp_d.d_base, SIGCHLD, sigchld_cb, NULL);
	if (sp.sp_sigchld == NULL || evsignal_add(sp.sp_sigchld, NULL) == -1)
		fatalx("signal events");

	/*
	 * No Landlock on the spawner itself: every agent inherits it, and
	 * agents get their own per-run ruleset instead (SBX-1).
	 */
	memset(&spec, 0, sizeof(spec));
	spec.cs_name = "spawner";
	spec.cs_user = a.da_user;
	spec.cs_seccomp = CONFINE_SECCOMP_DENY;
	spec.cs_nofile = 4096;
	spec.cs_no_landlock = 1;
	confine_self(&spec);
	spawner_cgroup(cgfd);
	if (sandbox_tmp_open() == -1)
		log_warn("sandbox: no dir for the runs' private tmps; every "
			 "agent is disabled");
	sp.sp_protect.pc_runs = sandbox_tmp_dir();

	/* Manifests are parsed confined: they are operator files, but input. */
	agents_load();
	missions_start();
	state_open(state, jobs_keep, jobs_mib);
	daemon_start(&sp.sp_d, parent_table);
	probe_start_all();
	log_debug("ready");
	daemon_loop(&sp.sp_d);

	/* Whatever the drain left: no run outlives us, nor its private tmp. */
	aproc_kill_all();
	sandbox_tmp_close();
	if (drain_ev != NULL)
		event_free(drain_ev);
	return 0;
}
