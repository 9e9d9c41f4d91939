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

void
api_approval_decide(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *body, *o;
	const char *dec;
	char id[17];

	if (!approval_id_ok(p, id)) {
		send_error(req, 404, "unknown-approval");
		return;
	}
	if (api_body(req, &body) == -1)
		return;
	/* PER-8 strict body: {decision} and nothing else. */
	if (json_object_object_length(body) != 1 ||
	    !json_object_object_get_ex(body, "decision", NULL)) {
		json_object_put(body);
		send_error(req, 400, "invalid-body");
		return;
	}
	if ((dec = json_get_str(body, "decision", 8)) == NULL ||
	    (strcmp(dec, "allow") != 0 && strcmp(dec, "deny") != 0)) {
		json_object_put(body);
		send_error(req, 400, "invalid-decision");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "decision", json_object_new_string(dec));
	json_object_put(body);
	api_ask(req, broker_peer(PROC_GATED), MSG_APPROVAL_DECIDE, o,
	    MSG_APPROVAL_DECIDE_OK, approval_decide_cb);
	json_object_put(o);
}
