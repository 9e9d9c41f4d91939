/*
 * Worktree runs (MC-2): the operator's list of the worktrees cordon made
 * and their removal, asked of the spawner, which keeps them.  An id is
 * decoded once and must match ^[A-Za-z0-9_-]{1,80}$ (else 400
 * invalid-worktree-id, nothing asked).  Touches no files.
 */
#include <limits.h>

#include <event2/http.h>
#include <json-c/json.h>

#include "broker.h"
#include "json.h"
#include "msg.h"
#include "util.h"

static const struct json_shape wt_keys[] = {
    JS_ARR("worktrees", JS_OPT, LLONG_MAX), /* the frame bounds it */
};
static const struct api_code_map wt_codes[] = {
    {"unknown-worktree", 404, NULL},
    {"busy", 409, "worktree-in-use"},
};

/* The spawner's answer of type, or its refusal as a fixed code. */
static void
wt_relay(void *arg, const struct ipc_msg *m, uint32_t type)
{
	api_relay(arg, m, type, wt_keys,
	    type == MSG_WORKTREE_LIST_OK ? nitems(wt_keys) : 0, wt_codes,
	    nitems(wt_codes));
}

static void
wt_list_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	wt_relay(arg, m, MSG_WORKTREE_LIST_OK);
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
	wt_relay(arg, m, MSG_WORKTREE_REMOVE_OK);
}

/* POST /api/worktrees/{id}/remove */
void
api_worktree_remove(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *o;

	if ((o = api_path_id(req, p, "id", "invalid-worktree-id")) == NULL)
		return;
	if (api_body_ok(req, p) == 0)
		api_ask(req, broker_peer(PROC_SPAWNER), MSG_WORKTREE_REMOVE, o,
		    MSG_WORKTREE_REMOVE_OK, wt_remove_cb);
	json_object_put(o);
}
