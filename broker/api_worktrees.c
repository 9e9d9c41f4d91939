/*
 * Worktree runs (MC-2): the operator's list of the worktrees cordon made
 * and their removal, asked of the spawner, which keeps them.  An id is
 * decoded once and must match ^[A-Za-z0-9_-]{1,80}$ (else 400
 * invalid-worktree-id, nothing asked).  Touches no files.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <json-c/json.h>

#include "broker.h"
#include "cordon_limits.h"
#include "json.h"
#include "msg.h"
#include "schema.h"
#include "util.h"

/* The spawner's answer of type, or its refusal as a fixed code. */
static void
wt_answer(struct evhttp_request *req, const struct ipc_msg *m, uint32_t type)
{
	struct json_object *o, *v;
	const char *code = NULL;

	if (m != NULL && m->m_type == type) {
		o = json_object_new_object();
		json_object_object_add(o, "ok", json_object_new_boolean(1));
		if (type == MSG_WORKTREE_LIST_OK &&
		    json_object_object_get_ex(m->m_obj, "worktrees", &v) &&
		    json_object_is_type(v, json_type_array))
			json_object_object_add(
			    o, "worktrees", json_object_get(v));
		send_json(req, 200, o);
		json_object_put(o);
		return;
	}
	if (m != NULL && m->m_type == MSG_ERROR)
		code = json_get_str(m->m_obj, "error", 32);
	if (code != NULL && strcmp(code, "unknown-worktree") == 0)
		send_error(req, 404, "unknown-worktree");
	else if (code != NULL && strcmp(code, "busy") == 0)
		send_error(req, 409, "worktree-in-use");
	else if (m == NULL)
		send_error(req, 503, "unavailable");
	else
		send_error(req, 500, "internal");
}

static void
wt_list_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct evhttp_request *req = api_release(arg);

	if (req != NULL)
		wt_answer(req, m, MSG_WORKTREE_LIST_OK);
}

/* GET /api/worktrees */
void
api_worktrees_list(struct evhttp_request *req, const struct api_params *p)
{
	api_ask(req, broker_peer(PROC_SPAWNER), MSG_WORKTREE_LIST, NULL,
	    MSG_WORKTREE_LIST_OK, wt_list_cb);
}

static void
wt_remove_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct evhttp_request *req = api_release(arg);

	if (req != NULL)
		wt_answer(req, m, MSG_WORKTREE_REMOVE_OK);
}

/* POST /api/worktrees/{id}/remove */
void
api_worktree_remove(struct evhttp_request *req, const struct api_params *p)
{
	char raw[API_PARAM_MAX + 1], *dec = NULL;
	struct json_object *o;
	size_t len = 0;

	if (p->ap_n == 1 && p->ap_len[0] <= API_PARAM_MAX) {
		memcpy(raw, p->ap_val[0], p->ap_len[0]);
		raw[p->ap_len[0]] = '\0';
		dec = evhttp_uridecode(raw, 0, &len);
	}
	if (dec == NULL || strlen(dec) != len || !schema_job_id_ok(dec)) {
		free(dec);
		send_error(req, 400, "invalid-worktree-id");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(dec));
	free(dec);
	if (api_body_none(req) == 0)
		api_ask(req, broker_peer(PROC_SPAWNER), MSG_WORKTREE_REMOVE, o,
		    MSG_WORKTREE_REMOVE_OK, wt_remove_cb);
	json_object_put(o);
}
