/*
 * SBX-7: approvals, asked of gated.  GET /api/approvals lists the
 * commands a gate rule held for the operator (agent, command name, rule,
 * cwd relative to the workspace, scrubbed args, times); POST
 * /api/approvals/{id} {"decision": "allow"|"deny"} answers one.  The
 * perimeter (PER-*) ran in front.c.  Touches no files.
 */
#include <limits.h>
#include <string.h>

#include <event2/http.h>
#include <json-c/json.h>

#include "broker.h"
#include "json.h"
#include "msg.h"
#include "util.h"

/* gated's refusal, as a fixed HTTP answer (api_fail). */
static const struct api_code_map approvals_codes[] = {
    {"unknown-approval", 404, NULL},
};

static void
approvals_list_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	static const struct json_shape keys[] = {
	    JS_ARR("approvals", JS_REQ, LLONG_MAX), /* the frame bounds it */
	    JS_INT("now", JS_REQ, LLONG_MIN, LLONG_MAX),
	};
	api_relay(arg, m, MSG_APPROVAL_LIST_OK, keys, nitems(keys),
	    approvals_codes, nitems(approvals_codes));
}

void
api_approvals_list(struct evhttp_request *req, const struct api_params *p)
{
	api_ask(req, broker_peer(PROC_GATED), MSG_APPROVAL_LIST, NULL,
	    MSG_APPROVAL_LIST_OK, approvals_list_cb);
}

static void
approval_decide_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	api_relay(arg, m, MSG_APPROVAL_DECIDE_OK, NULL, 0, approvals_codes,
	    nitems(approvals_codes));
}

/* An approval id is 16 lowercase hex, taken as sent: nothing to decode. */
static int
approval_id_ok(const struct api_params *p, char out[17])
{
	if (p->ap_n != 1 || p->ap_len[0] != 16)
		return 0;
	memcpy(out, p->ap_val[0], 16);
	out[16] = '\0';
	return hex_lower_n(out, 16);
}

static int
decision_ok(const char *s, size_t len)
{
	return strcmp(s, "allow") == 0 || strcmp(s, "deny") == 0;
}

/* PER-8: {decision} and nothing else. */
static const struct json_shape decide_shape[] = {
    JS_STR("decision", JS_REQ, 0, 8),
};
static const struct api_body_key decide_keys[] = {
    {"invalid-decision", decision_ok},
};
const struct api_body approvals_body = {
    decide_shape, decide_keys, nitems(decide_shape), "invalid-body", 0};

void
api_approval_decide(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *o;
	char id[17];

	if (!approval_id_ok(p, id)) {
		send_error(req, 404, "unknown-approval");
		return;
	}
	if (api_body_ok(req, p) == -1)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "decision",
	    json_object_new_string(
		json_shape_str(p->ap_body, "decision", NULL)));
	api_ask(req, broker_peer(PROC_GATED), MSG_APPROVAL_DECIDE, o,
	    MSG_APPROVAL_DECIDE_OK, approval_decide_cb);
	json_object_put(o);
}
