/*
 * What the API routes that relay a daemon's answer share (MC-2, MC-3): an
 * id from the path, decoded once and checked, and the daemon's answer
 * turned into the HTTP one, its refusals mapped to fixed codes.  Touches
 * no files.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <json-c/json.h>

#include "broker.h"
#include "json.h"
#include "msg.h"
#include "schema.h"

struct json_object *
api_path_id(struct evhttp_request *req, const struct api_params *p,
    const char *key, const char *bad)
{
	char raw[API_PARAM_MAX + 1], *dec = NULL;
	struct json_object *o = NULL;
	size_t len = 0;

	if (p->ap_n == 1 && p->ap_len[0] <= API_PARAM_MAX) {
		memcpy(raw, p->ap_val[0], p->ap_len[0]);
		raw[p->ap_len[0]] = '\0';
		dec = evhttp_uridecode(raw, 0, &len);
	}
	if (dec != NULL && strlen(dec) == len && schema_job_id_ok(dec)) {
		o = json_object_new_object();
		json_object_object_add(o, key, json_object_new_string(dec));
	} else
		send_error(req, 400, bad);
	free(dec);
	return o;
}

void
api_answer(struct evhttp_request *req, const struct ipc_msg *m, uint32_t type,
    const struct json_shape *keys, size_t n, const struct api_code_map *map,
    size_t nmap)
{
	struct json_object *o, *v;
	size_t i;

	if (m != NULL && m->m_type == type &&
	    json_shape_ok(m->m_obj, keys, n)) {
		o = json_object_new_object();
		json_object_object_add(o, "ok", json_object_new_boolean(1));
		for (i = 0; i < n; i++)
			if (json_object_object_get_ex(
				m->m_obj, keys[i].js_key, &v))
				json_object_object_add(
				    o, keys[i].js_key, json_object_get(v));
		send_json(req, 200, o);
		json_object_put(o);
	} else
		api_fail(req, m, map, nmap);
}

void
api_relay(void *handle, const struct ipc_msg *m, uint32_t type,
    const struct json_shape *keys, size_t n, const struct api_code_map *map,
    size_t nmap)
{
	struct evhttp_request *req = api_release(handle);

	if (req != NULL)
		api_answer(req, m, type, keys, n, map, nmap);
}

void
api_fail(struct evhttp_request *req, const struct ipc_msg *m,
    const struct api_code_map *map, size_t nmap)
{
	const char *code = NULL;
	size_t i;

	if (m != NULL && m->m_type == MSG_ERROR &&
	    (code = json_get_str(m->m_obj, "error", 32)) != NULL)
		for (i = 0; i < nmap; i++)
			if (strcmp(map[i].am_code, code) == 0) {
				send_error(req, map[i].am_status,
				    map[i].am_as != NULL ? map[i].am_as
							 : map[i].am_code);
				return;
			}
	if (m == NULL)
		send_error(req, 503, "unavailable");
	else
		send_error(req, 500, "internal");
}
