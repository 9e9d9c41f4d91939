/*
 * cordon-gated (SBX-6, SBX-7, SBX-8): the command gate, apart from the
 * spawner that holds the secrets, so what an agent sends is parsed where
 * nothing is held.  Takes each run's gate channel from the spawner
 * (MSG_GATE_OPEN, MSG_GATE_RELAY), decides its calls, and keeps the
 * approvals the broker lists and decides.  Opens no file and no network
 * socket; it only resolves paths (realpath, readlink, stat), which
 * Landlock leaves alone.  Its channels: cordond, the spawner, auditd
 * (verb.run), the broker (approvals, health).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "confine.h"
#include "gated.h"
#include "json.h"
#include "log.h"
#include "util.h"
#include "gated_shapes.h"

#define GATE_OPEN_MAX (16 * 1024) /* an OPEN payload: policy and paths */

struct gated gd;

static void gate_open_h(struct ipc_conn *, struct ipc_msg *, void *);
static void gate_relay_h(struct ipc_conn *, struct ipc_msg *, void *);
static void gate_close_h(struct ipc_conn *, struct ipc_msg *, void *);

static const struct ipc_dispatch parent_table[] = {
    DAEMON_PARENT_ROWS,
    IPC_END,
};

/* The spawner alone opens and closes runs; the broker lists and decides
 * approvals and asks for health. */
static const struct ipc_dispatch peer_table[] = {
    DAEMON_PEER_STATUS_ROW,
    {MSG_GATE_OPEN, PROC_BIT(PROC_SPAWNER), 2, GATE_OPEN_MAX, IPC_FD_REQUIRED,
	gate_open_h, IPC_KEYS(gate_open_shape)},
    {MSG_GATE_RELAY, PROC_BIT(PROC_SPAWNER), 2, 128, IPC_FD_REQUIRED,
	gate_relay_h, IPC_KEYS(gate_run_shape)},
    {MSG_GATE_CLOSE, PROC_BIT(PROC_SPAWNER), 2, 128, IPC_FD_NONE, gate_close_h,
	IPC_KEYS(gate_run_shape)},
    {MSG_APPROVAL_LIST, PROC_BIT(PROC_BROKER), 2, 64, IPC_FD_NONE,
	approval_list_h, IPC_EMPTY},
    {MSG_APPROVAL_DECIDE, PROC_BIT(PROC_BROKER), 2, 256, IPC_FD_NONE,
	approval_decide_h, IPC_KEYS(approval_decide_shape)},
    IPC_END,
};

static struct gate_chan *
run_find(const char *id)
{
	struct gate_chan *ch;

	TAILQ_FOREACH (ch, &gd.gd_runs, gc_entry)
		if (strcmp(ch->gc_run, id) == 0)
			return ch;
	return NULL;
}

static void
gate_open_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct gate_chan *ch;

	if ((ch = calloc(1, sizeof(*ch))) == NULL) {
		log_warnx("gate: a run's channel: out of memory");
		return;
	}
	ch->gc_fd = ch->gc_relay = -1;
	if (gate_open_parse(ch, m->m_obj) == -1 ||
	    run_find(ch->gc_run) != NULL || gd.gd_nruns >= GATED_RUNS_MAX) {
		log_warnx("refused a run's gate channel from the spawner");
		gate_policy_free(&ch->gc_policy);
		free(ch);
		return;
	}
	TAILQ_INSERT_TAIL(&gd.gd_runs, ch, gc_entry);
	gd.gd_nruns++;
	if (gate_chan_listen(ch, m->m_fd, 0) == -1) {
		m->m_fd = -1;
		log_warnx("gate: run %s: cannot listen", ch->gc_run);
		gate_chan_close(ch);
		return;
	}
	m->m_fd = -1; /* ours now */
	log_debug("run %s (%s): gate open", ch->gc_run, ch->gc_agent);
}

static void
gate_relay_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct gate_chan *ch;

	if ((ch = run_find(json_shape_str(m->m_obj, "runId", NULL))) == NULL ||
	    ch->gc_relay != -1) {
		log_warnx("refused a gate relay from the spawner");
		return;
	}
	if (gate_chan_listen(ch, m->m_fd, 1) == -1)
		log_warnx(
		    "gate: run %s: cannot listen to its relay", ch->gc_run);
	m->m_fd = -1;
}

static void
gate_close_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct gate_chan *ch;

	if ((ch = run_find(json_shape_str(m->m_obj, "runId", NULL))) != NULL)
		gate_chan_close(ch);
}

/*
 * A new spawner channel: the runs of the one before are over (a spawner
 * whose channel came back hands over its live runs again).
 */
static void
gated_peer_up(struct daemon *d, enum proc_id p)
{
	struct gate_chan *ch;

	if (p != PROC_SPAWNER)
		return;
	while ((ch = TAILQ_FIRST(&gd.gd_runs)) != NULL)
		gate_chan_close(ch);
}

static void
gated_status(struct daemon *d, struct json_object *st)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(
	    o, "runs", json_object_new_int64((int64_t)gd.gd_nruns));
	json_object_object_add(
	    o, "held", json_object_new_int64((int64_t)gd.gd_nheld));
	json_object_object_add(st, "gate", o);
}

static void
gated_stop(struct daemon *d)
{
	struct gate_chan *ch;

	while ((ch = TAILQ_FIRST(&gd.gd_runs)) != NULL)
		gate_chan_close(ch);
	event_base_loopexit(d->d_base, NULL);
}

int
main(int argc, char **argv)
{
	struct daemon_args a;
	struct confine_spec spec;

	log_init("gated", 0);
	daemon_parse_args(argc, argv, NULL, NULL, NULL, 0, &a);
	log_init("gated", a.da_debug);
	TAILQ_INIT(&gd.gd_runs);
	TAILQ_INIT(&gd.gd_items);
	daemon_prepare(&gd.gd_d, PROC_GATED, peer_table, &a);
	gd.gd_d.d_peer_up = gated_peer_up;
	gd.gd_d.d_status_extra = gated_status;
	gd.gd_d.d_stop = gated_stop;

	memset(&spec, 0, sizeof(spec));
	spec.cs_name = "gated";
	spec.cs_user = a.da_user;
	spec.cs_paths = NULL; /* no file access at all: realpath needs none */
	spec.cs_npaths = 0;
	spec.cs_seccomp = CONFINE_SECCOMP_ALLOW;
	spec.cs_syscalls = SC_BASE | SC_GATE | daemon_syscalls(&gd.gd_d);
	spec.cs_no_net = 1;
	spec.cs_nofile = 1024;
	confine_self(&spec);

	daemon_start(&gd.gd_d, parent_table);
	log_debug("ready");
	daemon_loop(&gd.gd_d);
	return 0;
}
