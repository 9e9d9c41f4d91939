/*
 * GET /api/health (API-1).  Under cordond, cordond gathers each daemon's
 * self-report and what /proc says of it.  Under systemd there is no
 * cordond: the broker asks each peer over its data channel through the
 * same gatherer cordond uses (common/health_gather.c), adds its own
 * report, and says so ("supervisor": "systemd"; restarts are systemd's,
 * see `systemctl status`).  The broker adds its version either way.
 * Requests are answered from the last gathering while it is fresh
 * enough (health_snap.c).
 */
#include <stdlib.h>

#include <json-c/json.h>

#include "broker.h"
#include "config.h"
#include "confine.h"
#include "health_gather.h"
#include "health_snap.h"
#include "log.h"
#include "msg.h"

static void
health_send(struct json_object *from, const char *supervisor)
{
	struct json_object *o, *v;

	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(
	    o, "version", json_object_new_string(CORDON_VERSION));
	json_object_object_add(
	    o, "supervisor", json_object_new_string(supervisor));
	if (json_object_object_get_ex(from, "status", &v))
		json_object_object_add(o, "status", json_object_get(v));
	if (json_object_object_get_ex(from, "daemons", &v))
		json_object_object_add(o, "daemons", json_object_get(v));
	health_snap_done(o);
	json_object_put(o);
}

static void
health_reply_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	if (m == NULL || m->m_type != MSG_HEALTH_OK) {
		health_snap_done(NULL);
		return;
	}
	health_send(m->m_obj, "cordond");
}

/* ---- systemd mode: ask the peers ourselves ---- */

static const enum proc_id health_order[] = {PROC_AUDITD, PROC_VAULTD,
    PROC_EGRESSD, PROC_GATED, PROC_SPAWNER, PROC_BROKER};

static void
health_finish(struct json_object *const *status, void *arg)
{
	struct json_object *o, *arr;
	size_t i;
	int allup = 1;

	arr = json_object_new_array();
	for (i = 0; i < sizeof(health_order) / sizeof(health_order[0]); i++) {
		enum proc_id p = health_order[i];

		json_object_array_add(
		    arr, health_entry(p, status[p] != NULL, status[p]));
		if (status[p] == NULL)
			allup = 0;
	}
	o = health_answer(arr, allup);
	health_send(o, "systemd");
	json_object_put(o);
}

static void
health_systemd(void)
{
	struct health_gather *g;
	size_t i;

	if ((g = health_gather_new(health_finish, NULL)) == NULL) {
		health_snap_done(NULL);
		return;
	}
	health_gather_own(g, PROC_BROKER, confine_status_json());
	for (i = 0; i < sizeof(health_order) / sizeof(health_order[0]); i++)
		if (health_order[i] != PROC_BROKER)
			health_gather_ask(
			    g, health_order[i], broker_peer(health_order[i]));
	health_gather_go(g);
}

/* One gathering; it ends in health_snap_done() either way. */
static void
health_refresh(void)
{
	struct timeval tv = {3, 0};

	if (broker.b_d.d_systemd) {
		health_systemd();
		return;
	}
	if (broker.b_d.d_parent == NULL ||
	    ipc_request(broker.b_d.d_parent, MSG_HEALTH, NULL, -1,
		MSG_HEALTH_OK, &tv, health_reply_cb, NULL) == -1)
		health_snap_done(NULL);
}

void
api_health(struct evhttp_request *req, const struct api_params *p)
{
	health_snap_get(req, health_refresh);
}
