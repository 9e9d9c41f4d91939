/*
 * GET /api/health (API-1): cordond gathers each daemon's self-report and
 * what /proc says of it; the broker adds its version.
 */
#include <json-c/json.h>

#include "broker.h"
#include "config.h"
#include "msg.h"

static void
health_reply_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct evhttp_request *req = api_release(arg);
	struct json_object *o, *v;

	if (req == NULL)
		return;
	if (m == NULL || m->m_type != MSG_HEALTH_OK) {
		send_error(req, 503, "unavailable");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(
	    o, "version", json_object_new_string(CORDON_VERSION));
	if (json_object_object_get_ex(m->m_obj, "status", &v))
		json_object_object_add(o, "status", json_object_get(v));
	if (json_object_object_get_ex(m->m_obj, "daemons", &v))
		json_object_object_add(o, "daemons", json_object_get(v));
	send_json(req, 200, o);
	json_object_put(o);
}

void
api_health(struct evhttp_request *req, const struct api_params *p)
{
	api_ask(req, broker.b_d.d_parent, MSG_HEALTH, NULL, MSG_HEALTH_OK,
	    health_reply_cb);
}
