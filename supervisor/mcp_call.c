/*
 * The calls of `cordon mcp`'s tools in flight (MC-1): each tool's
 * request on the running cordon's HTTP API (GET /api/agents, POST
 * /api/agents/NAME/run or /jobs, the jobs' /api/jobs routes), made with
 * the endpoint's token resolved again per call, its answer handed to
 * mcp_result.c, and a call cancelled by dropping its connection (which
 * cancels its run, API-3).  Reads the endpoint's runtime or token
 * files; writes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <json-c/json.h>

#include "cordon_limits.h"
#include "json.h"
#include "mcp.h"
#include "util.h"

#define MCP_LIST_TIMEOUT_S 10
#define MCP_RUN_TIMEOUT_S  3600 /* of silence; a run ends by SP-8 */
#define MCP_WAIT_TIMEOUT_S (LIM_JOB_WAIT_MS_MAX / 1000 + 15)

static int call_start(
    struct mcp *, struct mcp_call *, const char *, const char *, int);

static void
call_free(struct mcp_call *c)
{
	if (c == NULL)
		return;
	json_object_put(c->c_id);
	json_object_put(c->c_progress);
	json_object_put(c->c_tools);
	json_object_put(c->c_end);
	json_object_put(c->c_err);
	json_object_put(c->c_saved);
	json_object_put(c->c_usage);
	if (c->c_in != NULL)
		evbuffer_free(c->c_in);
	if (c->c_text != NULL)
		evbuffer_free(c->c_text);
	free(c);
}

static void
call_unlink(struct mcp_call *c)
{
	TAILQ_REMOVE(&c->c_mcp->m_calls, c, c_entry);
	c->c_mcp->m_ncalls--;
}

/*
 * run_agent's and start_job's API body, as JSON text: the caller's
 * prompt, session and worktree, audited as a run via mcp (MC-1).
 */
static int
run_request(struct mcp *m, struct mcp_call *c, struct json_object *args,
    const char *what, int timeout)
{
	static const char *const keys[] = {"prompt", "session", "worktree"};
	struct json_object *v, *body = json_object_new_object();
	char uri[128];
	size_t i;
	int rc;

	json_object_object_get_ex(args, "agent", &v);
	snprintf(uri, sizeof(uri), "/api/agents/%s/%s",
	    json_object_get_string(v), what);
	for (i = 0; i < nitems(keys); i++)
		if (json_object_object_get_ex(args, keys[i], &v))
			json_object_object_add(
			    body, keys[i], json_object_get(v));
	json_object_object_add(body, "via", json_object_new_string("mcp"));
	rc = call_start(m, c, uri,
	    json_object_to_json_string_ext(
		body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
	    timeout);
	json_object_put(body);
	return rc;
}

/* The API request of a jobs' tool: its uri, and a body for a POST. */
static int
job_request(struct mcp *m, struct mcp_call *c, enum mcp_tool_id tool,
    struct json_object *args)
{
	struct json_object *v;
	const char *id = NULL;
	char uri[256];

	if (json_object_object_get_ex(args, "jobId", &v))
		id = json_object_get_string(v);
	switch (tool) {
	case TOOL_START_JOB:
		return run_request(m, c, args, "jobs", MCP_LIST_TIMEOUT_S);
	case TOOL_JOB_STATUS:
		snprintf(uri, sizeof(uri), "/api/jobs/%s", id);
		return call_start(m, c, uri, NULL, MCP_LIST_TIMEOUT_S);
	case TOOL_JOB_EVENTS: {
		long long off = 0, lim = LIM_JOB_PAGE_MAX;

		if (json_object_object_get_ex(args, "offset", &v))
			off = json_object_get_int64(v);
		if (json_object_object_get_ex(args, "limit", &v))
			lim = json_object_get_int64(v);
		snprintf(uri, sizeof(uri),
		    "/api/jobs/%s/events?offset=%lld&limit=%lld", id, off, lim);
		return call_start(m, c, uri, NULL, MCP_LIST_TIMEOUT_S);
	}
	case TOOL_WAIT_JOB: {
		long long ms = 30000;

		if (json_object_object_get_ex(args, "timeoutMs", &v))
			ms = json_object_get_int64(v);
		snprintf(uri, sizeof(uri), "/api/jobs/%s/wait?timeoutMs=%lld",
		    id, ms);
		return call_start(m, c, uri, NULL, MCP_WAIT_TIMEOUT_S);
	}
	case TOOL_CANCEL_JOB:
		snprintf(uri, sizeof(uri), "/api/jobs/%s/cancel", id);
		return call_start(m, c, uri, "{}", MCP_LIST_TIMEOUT_S);
	default:
		return call_start(m, c, "/api/jobs", NULL, MCP_LIST_TIMEOUT_S);
	}
}

/* ---- the HTTP side */

static void
call_chunk_cb(struct evhttp_request *req, void *arg)
{
	struct mcp_call *c = arg;
	struct evbuffer *b = evhttp_request_get_input_buffer(req);

	evbuffer_add_buffer(c->c_in, b);
	if (evhttp_request_get_response_code(req) == 200) {
		if (c->c_tool == TOOL_RUN_AGENT)
			mcp_run_lines(c);
	} else if (evbuffer_get_length(c->c_in) > MCP_ERRBODY_MAX)
		evbuffer_drain(c->c_in, evbuffer_get_length(c->c_in));
}

static void
conn_free_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	evhttp_connection_free(arg);
}

static void
call_done_cb(struct evhttp_request *req, void *arg)
{
	static const struct timeval now = {0, 0};
	struct mcp_call *c = arg;
	int status = 0;

	if (req != NULL) {
		status = evhttp_request_get_response_code(req);
		evbuffer_add_buffer(
		    c->c_in, evhttp_request_get_input_buffer(req));
	}
	call_unlink(c);
	/* The connection is still evhttp's until this returns. */
	event_base_once(
	    c->c_mcp->m_base, -1, EV_TIMEOUT, conn_free_cb, c->c_conn, &now);
	c->c_conn = NULL;
	mcp_call_answer(c, status);
	call_free(c);
}

static int
call_start(struct mcp *m, struct mcp_call *c, const char *uri, const char *body,
    int timeout)
{
	struct evhttp_request *req;
	struct endpoint ep;
	int rc;

	if ((rc = endpoint_args("mcp", m->m_argc, m->m_argv, NULL, &ep)) != 0)
		return rc == 3 ? -2 : -1;
	c->c_conn = evhttp_connection_base_new(
	    m->m_base, NULL, "127.0.0.1", (unsigned short)ep.ep_port);
	req = c->c_conn != NULL ? endpoint_request(&ep, call_done_cb, c, body)
				: NULL;
	explicit_bzero(&ep, sizeof(ep));
	if (req == NULL) {
		if (c->c_conn != NULL)
			evhttp_connection_free(c->c_conn);
		c->c_conn = NULL;
		return -1;
	}
	evhttp_connection_set_timeout(c->c_conn, timeout);
	evhttp_request_set_chunked_cb(req, call_chunk_cb);
	if (evhttp_make_request(c->c_conn, req,
		body != NULL ? EVHTTP_REQ_POST : EVHTTP_REQ_GET, uri) == -1) {
		evhttp_connection_free(c->c_conn);
		c->c_conn = NULL;
		return -1;
	}
	return 0;
}

void
mcp_call_begin(struct mcp *m, struct json_object *id, enum mcp_tool_id tool,
    struct json_object *args, struct json_object *tok)
{
	struct mcp_call *c;
	int rc;

	if (m->m_ncalls >= MCP_CALLS_MAX) {
		mcp_result(
		    m, id, mcp_tool_error("busy", "too many calls at once"));
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->c_in = evbuffer_new()) == NULL ||
	    (c->c_text = evbuffer_new()) == NULL) {
		call_free(c);
		mcp_error(m, id, MCP_EINTERNAL, "Internal error", "internal");
		return;
	}
	c->c_mcp = m;
	c->c_tool = tool;
	c->c_id = json_object_get(id);
	c->c_progress = json_object_get(tok);
	c->c_tools = json_object_new_array();
	if (tool == TOOL_LIST_AGENTS)
		rc = call_start(m, c, "/api/agents", NULL, MCP_LIST_TIMEOUT_S);
	else if (tool != TOOL_RUN_AGENT)
		rc = job_request(m, c, tool, args);
	else
		rc = run_request(m, c, args, "run", MCP_RUN_TIMEOUT_S);
	if (rc != 0) {
		mcp_result(m, id,
		    rc == -2
			? mcp_tool_error("not-running", "cordon is not running")
			: mcp_tool_error(
			      "unreachable", "cordon's API cannot be reached"));
		call_free(c);
		return;
	}
	TAILQ_INSERT_TAIL(&m->m_calls, c, c_entry);
	m->m_ncalls++;
}

static int
id_equal(struct json_object *a, struct json_object *b)
{
	if (json_object_get_type(a) != json_object_get_type(b))
		return 0;
	if (json_object_is_type(a, json_type_int))
		return json_object_get_int64(a) == json_object_get_int64(b);
	return json_object_is_type(a, json_type_string) &&
	       strcmp(json_object_get_string(a), json_object_get_string(b)) ==
		   0;
}

static void
call_cancel(struct mcp_call *c)
{
	call_unlink(c);
	/* Freeing the connection drops the request unanswered; the broker
	 * sees its client gone and cancels the run (API-3). */
	if (c->c_conn != NULL)
		evhttp_connection_free(c->c_conn);
	call_free(c);
}

void
mcp_tools_cancel(struct mcp *m, struct json_object *id)
{
	struct mcp_call *c;

	TAILQ_FOREACH (c, &m->m_calls, c_entry)
		if (id_equal(c->c_id, id)) {
			call_cancel(c);
			return;
		}
}

void
mcp_tools_cancel_all(struct mcp *m)
{
	struct mcp_call *c;

	while ((c = TAILQ_FIRST(&m->m_calls)) != NULL)
		call_cancel(c);
}
