/*
 * A `network: proxy` run's side of egress (EG-1): the listener its child
 * made inside the run's own network namespace goes to egressd with the
 * run's id, agent and allowlist (MSG_EGRESS_OPEN), again to a restarted
 * egressd, and is closed there when the run ends (MSG_EGRESS_CLOSE).
 * The spawner keeps its own copy meanwhile, so connections wait in the
 * backlog while egressd restarts.  Actions and probes get no proxy:
 * their listener is closed, so a connection is refused at once.
 * Touches only the listener it is given.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "log.h"
#include "msg.h"
#include "spawner.h"

static struct json_object *
open_payload(const struct aproc *ap, const struct mf_egress *e)
{
	struct json_object *o = mf_egress_json(e), *m;
	size_t i;

	json_object_object_add(
	    o, "runId", json_object_new_string(ap->ap_run_id));
	json_object_object_add(
	    o, "agent", json_object_new_string(ap->ap_agent));
	/* Test-only keys: manifests.c loads them only in test mode. */
	if (e->eg_ntest > 0) {
		m = json_object_new_object();
		for (i = 0; i < e->eg_ntest; i++)
			json_object_object_add(m, e->eg_test[i].et_host,
			    json_object_new_string(e->eg_test[i].et_addr));
		json_object_object_add(o, "testResolve", m);
	}
	if (e->eg_test_allow[0] != '\0')
		json_object_object_add(o, "testAllowAddress",
		    json_object_new_string(e->eg_test_allow));
	return o;
}

static void
egress_send(struct aproc *ap)
{
	struct ipc_conn *c = sp.sp_d.d_peers[PROC_EGRESSD];
	struct json_object *o;
	int fd;

	if (c == NULL) {
		log_warnx("run %s: egressd is down; its proxy waits for it",
		    ap->ap_run_id);
		return;
	}
	if ((fd = fcntl(ap->ap_egress_fd, F_DUPFD_CLOEXEC, 3)) == -1) {
		log_warn("run %s: egress listener", ap->ap_run_id);
		return;
	}
	o = open_payload(ap, ap->ap_egress);
	if (ipc_send(c, MSG_EGRESS_OPEN, o, fd) == -1)
		log_warnx(
		    "run %s: cannot hand its proxy to egressd", ap->ap_run_id);
	json_object_put(o);
}

void
egress_run_open(
    struct aproc *ap, const char *run_id, const struct mf_egress *e, int fd)
{
	if (run_id == NULL || strlen(run_id) != 16 || e == NULL) {
		close(fd); /* no proxy: connections are refused at once */
		return;
	}
	memcpy(ap->ap_run_id, run_id, 17);
	ap->ap_egress = e;
	ap->ap_egress_fd = fd;
	egress_send(ap);
}

void
egress_run_close(struct aproc *ap)
{
	struct ipc_conn *c = sp.sp_d.d_peers[PROC_EGRESSD];
	struct json_object *o;

	if (ap->ap_egress_fd == -1)
		return;
	if (c != NULL) {
		o = json_object_new_object();
		json_object_object_add(
		    o, "runId", json_object_new_string(ap->ap_run_id));
		(void)ipc_send(c, MSG_EGRESS_CLOSE, o, -1);
		json_object_put(o);
	}
	close(ap->ap_egress_fd);
	ap->ap_egress_fd = -1;
}

void
egress_peer_up(void)
{
	struct aproc *ap;

	TAILQ_FOREACH (ap, &sp.sp_procs, ap_entry)
		if (ap->ap_egress_fd != -1)
			egress_send(ap);
}
