/*
 * API-7 (MI-3, MI-4): missions, asked of the spawner.  GET /api/missions
 * lists the loaded missions (ids, labels, option schemas, triggers, the
 * last run's neutral result); POST /api/missions/{id}/run runs one by
 * hand and answers once the run has finished.  The id is URL-decoded
 * once; the body is exactly {} or {"options": {...}}; the options are
 * the spawner's to validate against the mission's schema.  Every answer
 * is built here from a fixed set of fields and codes: nothing the client
 * sent, no option value, no path and no output content is echoed.  The
 * perimeter (PER-*) ran in front.c.  Touches no files.
 */
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include <event2/http.h>
#include <json-c/json.h>

#include "broker.h"
#include "charset.h"
#include "json.h"
#include "manifest.h"
#include "mission.h"
#include "msg.h"
#include "util.h"
#include "vaultpath.h"

#define MISSION_ID_MAX 64
/*
 * The spawner ends a run at the mission's timeoutMs (at most
 * MI_TIMEOUT_MAX_MS) and then answers; this is the backstop for a
 * spawner that never does.
 */
#define MISSIONS_RUN_WAIT_S (MI_TIMEOUT_MAX_MS / 1000 + 60)

/* The spawner's refusals, as fixed HTTP answers (api_fail). */
static const struct api_code_map missions_codes[] = {
    {"mission-not-found", 404, NULL},
    {"mission-options-invalid", 400, NULL},
    {"mission-busy", 409, NULL},
    {"agent-unavailable", 409, NULL},
};

/* ---- GET /api/missions ---- */

static void
missions_list_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	static const struct json_shape keys[] = {
	    JS_ARR("missions", JS_REQ, LLONG_MAX), /* the frame bounds it */
	};
	api_relay(arg, m, MSG_MISSION_LIST_OK, keys, nitems(keys),
	    missions_codes, nitems(missions_codes));
}

void
api_missions_list(struct evhttp_request *req, const struct api_params *p)
{
	api_ask(req, broker_peer(PROC_SPAWNER), MSG_MISSION_LIST, NULL,
	    MSG_MISSION_LIST_OK, missions_list_cb);
}

/* ---- POST /api/missions/{id}/run ---- */

static int
word_in(const char *s, const char *const *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(s, set[i]) == 0)
			return 1;
	return 0;
}

/*
 * The run's result, rebuilt field by field from closed sets and bounded
 * integers: NULL if the spawner's answer does not have that shape.
 */
static struct json_object *
mission_result(struct json_object *in)
{
	static const char *const statuses[] = {
	    "success", "error", "denied", "skipped"};
	static const char *const classes[] = {"permission-denied",
	    "options-invalid", "timeout", "spawn-failed", "non-zero-exit",
	    "killed", "output-failed", "agent-unavailable", "audit-unavailable",
	    "skipped-missed", "busy"};
	struct json_object *o, *v;
	const char *run_id, *status, *ec = NULL;
	long long dur, persisted, emitted;

	if ((run_id = json_get_str(in, "runId", 64)) == NULL ||
	    !charset_shape(
		run_id, strlen(run_id), "0-9a-z-", "0-9a-z-", 1, 64) ||
	    (status = json_get_str(in, "status", 16)) == NULL ||
	    !word_in(status, statuses, nitems(statuses)) ||
	    json_get_int(in, "durationMs", 0, INT64_MAX / 2, &dur) == -1 ||
	    json_get_int(
		in, "outputsPersisted", 0, MI_OUTPUTS_MAX, &persisted) == -1 ||
	    json_get_int(in, "outputsEmitted", 0, MI_OUTPUTS_MAX, &emitted) ==
		-1)
		return NULL;
	if (json_object_object_get_ex(in, "errorClass", &v) &&
	    !json_object_is_type(v, json_type_null) &&
	    ((ec = json_get_str(in, "errorClass", 32)) == NULL ||
		!word_in(ec, classes, nitems(classes))))
		return NULL;
	o = json_object_new_object();
	json_object_object_add(
	    o, "ok", json_object_new_boolean(strcmp(status, "success") == 0));
	json_object_object_add(o, "runId", json_object_new_string(run_id));
	json_object_object_add(o, "status", json_object_new_string(status));
	json_object_object_add(o, "durationMs", json_object_new_int64(dur));
	json_object_object_add(
	    o, "outputsPersisted", json_object_new_int64(persisted));
	json_object_object_add(
	    o, "outputsEmitted", json_object_new_int64(emitted));
	if (ec != NULL)
		json_object_object_add(
		    o, "errorClass", json_object_new_string(ec));
	return o;
}

static void
mission_run_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct evhttp_request *req = api_release(arg);
	struct json_object *o;

	if (req == NULL)
		return;
	if (m == NULL || m->m_type != MSG_MISSION_RUN_OK) {
		api_fail(req, m, missions_codes, nitems(missions_codes));
		return;
	}
	if ((o = mission_result(m->m_obj)) == NULL) {
		send_error(req, 500, "internal");
		return;
	}
	send_json(req, 200, o);
	json_object_put(o);
}

/*
 * The path's id, URL-decoded exactly once (a malformed escape or a NUL
 * refuses it) and matching ^[a-z0-9][a-z0-9-]{0,63}$: 0, else -1.
 */
static int
mission_id(const struct api_params *p, char out[MISSION_ID_MAX + 1])
{
	char dec[API_PARAM_MAX + 1];
	long len;

	if (p->ap_n != 1 ||
	    (len = vaultpath_decode(
		 p->ap_val[0], p->ap_len[0], dec, sizeof(dec))) <= 0 ||
	    !mp_name_ok(dec, MISSION_ID_MAX))
		return -1;
	memcpy(out, dec, (size_t)len + 1);
	return 0;
}

/* PER-8: {} or {"options": {...}}, nothing else. */
static const struct json_shape run_shape[] = {
    JS_OBJ("options", JS_OPT),
};
static const struct api_body_key run_keys[] = {
    {"invalid-body", NULL},
};
const struct api_body missions_body = {
    run_shape, run_keys, nitems(run_shape), "invalid-body", 0};

void
api_mission_run(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *opts, *o;
	char id[MISSION_ID_MAX + 1];
	size_t n;

	if (mission_id(p, id) == -1) {
		send_error(req, 400, "mission-id-malformed");
		return;
	}
	if (api_body_ok(req, p) == -1)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(id));
	if (json_object_object_get_ex(p->ap_body, "options", &opts))
		json_object_object_add(o, "options", json_object_get(opts));
	/* What the spawner's row takes, as the IPC codec will write it. */
	if (json_object_to_json_string_length(o, IPC_JSON_FLAGS, &n) == NULL ||
	    n > MSG_MISSION_RUN_MAX) {
		json_object_put(o);
		send_error(req, 400, "mission-options-invalid");
		return;
	}
	api_ask_wait(req, broker_peer(PROC_SPAWNER), MSG_MISSION_RUN, o,
	    MSG_MISSION_RUN_OK, MISSIONS_RUN_WAIT_S, mission_run_cb);
	json_object_put(o);
}
