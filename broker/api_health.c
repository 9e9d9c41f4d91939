/*
 * GET /api/health (API-1).  Under cordond, cordond gathers each daemon's
 * self-report and what /proc says of it.  Under systemd there is no
 * cordond: the broker asks each peer over its data channel through the
 * same gatherer cordond uses (common/health_gather.c), adds its own
 * report, and says so ("supervisor": "systemd"; restarts are systemd's,
 * see `systemctl status`).  The broker adds its version either way.
 */
#include <stdlib.h>

#include <json-c/json.h>

#include "broker.h"
#include "config.h"
#include "confine.h"
#include "health_gather.h"
#include "log.h"
#include "msg.h"

static void
health_send(struct evhttp_request *req, struct json_object *from,
    const char *supervisor)
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
	send_json(req, 200, o);
	json_object_put(o);
}

static void
health_reply_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct evhttp_request *req = api_release(arg);

	if (req == NULL)
		return;
	if (m == NULL || m->m_type != MSG_HEALTH_OK) {
		send_error(req, 503, "unavailable");
		return;
	}
	health_send(req, m->m_obj, "cordond");
}

/* ---- systemd mode: ask the peers ourselves ---- */

static const enum proc_id health_order[] = {
    PROC_AUDITD, PROC_VAULTD, PROC_EGRESSD, PROC_SPAWNER, PROC_BROKER};

static void
health_finish(struct json_object *const *status, void *arg)
{
	struct evhttp_request *req = api_release(arg);
	struct json_object *o, *arr;
	size_t i;
	int allup = 1;

	if (req == NULL)
		return;
	arr = json_object_new_array();
	for (i = 0; i < sizeof(health_order) / sizeof(health_order[0]); i++) {
		enum proc_id p = health_order[i];

		json_object_array_add(
		    arr, health_entry(p, status[p] != NULL, status[p]));
		if (status[p] == NULL)
			allup = 0;
	}
	o = health_answer(arr, allup);
	health_send(req, o, "systemd");
	json_object_put(o);
}

static void
health_systemd(struct evhttp_request *req)
{
	struct health_gather *g;
	void *hold;
	size_t i;

	if ((hold = api_hold(req)) == NULL) {
		send_error(req, 500, "internal");
		return;
	}
	if ((g = health_gather_new(health_finish, hold)) == NULL) {
		if ((req = api_release(hold)) != NULL)
			send_error(req, 500, "internal");
		return;
	}
	health_gather_own(g, PROC_BROKER, confine_status_json());
	for (i = 0; i < sizeof(health_order) / sizeof(health_order[0]); i++)
		if (health_order[i] != PROC_BROKER)
			health_gather_ask(
			    g, health_order[i], broker_peer(health_order[i]));
	health_gather_go(g);
}

void
api_health(struct evhttp_request *req, const struct api_params *p)
{
	if (broker.b_d.d_systemd) {
		health_systemd(req);
		return;
	}
	api_ask(req, broker.b_d.d_parent, MSG_HEALTH, NULL, MSG_HEALTH_OK,
	    health_reply_cb);
}
