/*
 * GET /api/health (API-1).  Under cordond, cordond gathers each daemon's
 * self-report and what /proc says of it.  Under systemd there is no
 * cordond: the broker asks each peer over its data channel, adds its own
 * report, and says so ("supervisor": "systemd"; restarts are systemd's,
 * see `systemctl status`).  The broker adds its version either way.
 */
#include <stdlib.h>

#include <json-c/json.h>

#include "broker.h"
#include "config.h"
#include "confine.h"
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

struct health_wait {
	void *hw_hold; /* api_hold() of the request */
	int hw_waiting;
	struct json_object *hw_status[PROC_MAX];
};

struct health_ask {
	struct health_wait *ha_wait;
	enum proc_id ha_proc;
};

static void
health_finish(struct health_wait *hw)
{
	struct evhttp_request *req = api_release(hw->hw_hold);
	struct json_object *o, *arr, *d;
	size_t i;
	int allup = 1;

	if (req != NULL) {
		o = json_object_new_object();
		arr = json_object_new_array();
		for (i = 0; i < sizeof(health_order) / sizeof(health_order[0]);
		     i++) {
			enum proc_id p = health_order[i];

			d = json_object_new_object();
			json_object_object_add(
			    d, "name", json_object_new_string(proc_name(p)));
			json_object_object_add(d, "up",
			    json_object_new_boolean(hw->hw_status[p] != NULL));
			if (hw->hw_status[p] != NULL) {
				json_object_object_add(
				    d, "status", hw->hw_status[p]);
				hw->hw_status[p] = NULL;
			} else
				allup = 0;
			json_object_array_add(arr, d);
		}
		json_object_object_add(o, "status",
		    json_object_new_string(allup ? "ok" : "degraded"));
		json_object_object_add(o, "daemons", arr);
		health_send(req, o, "systemd");
		json_object_put(o);
	}
	for (i = 0; i < PROC_MAX; i++)
		json_object_put(hw->hw_status[i]);
	free(hw);
}

static void
health_peer_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct health_ask *ha = arg;
	struct health_wait *hw = ha->ha_wait;

	if (m != NULL && m->m_type == MSG_STATUS_OK)
		hw->hw_status[ha->ha_proc] = json_object_get(m->m_obj);
	free(ha);
	if (--hw->hw_waiting == 0)
		health_finish(hw);
}

static void
health_systemd(struct evhttp_request *req)
{
	struct timeval tv = {1, 0};
	struct health_wait *hw;
	struct health_ask *ha;
	struct ipc_conn *to;
	size_t i;

	if ((hw = calloc(1, sizeof(*hw))) == NULL ||
	    (hw->hw_hold = api_hold(req)) == NULL) {
		free(hw);
		send_error(req, 500, "internal");
		return;
	}
	hw->hw_status[PROC_BROKER] = confine_status_json();
	hw->hw_waiting = 1; /* held until every request is out */
	for (i = 0; i < sizeof(health_order) / sizeof(health_order[0]); i++) {
		enum proc_id p = health_order[i];

		if (p == PROC_BROKER || (to = broker_peer(p)) == NULL ||
		    (ha = calloc(1, sizeof(*ha))) == NULL)
			continue;
		ha->ha_wait = hw;
		ha->ha_proc = p;
		hw->hw_waiting++;
		if (ipc_request(to, MSG_STATUS, NULL, -1, MSG_STATUS_OK, &tv,
			health_peer_cb, ha) == -1) {
			free(ha);
			hw->hw_waiting--;
		}
	}
	if (--hw->hw_waiting == 0)
		health_finish(hw);
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
