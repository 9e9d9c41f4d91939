/*
 * The tools of `cordon mcp` (MC-1): their input schemas as data (the
 * schema a caller sees and the check this server makes are one table),
 * and each call made on the running cordon's HTTP API: list_agents
 * (GET /api/agents), run_agent (POST /api/agents/NAME/run, API-3, its
 * NDJSON relayed as progress notifications, its end as the result),
 * and the detached jobs' tools (MC-3: /api/agents/NAME/jobs, /api/jobs),
 * whose API answer is the result.
 * Touches no file but the endpoint's; every error is a fixed code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <json-c/json.h>

#include "argv.h"
#include "cordon_limits.h"
#include "json.h"
#include "log.h"
#include "manifest_parse.h"
#include "mcp.h"
#include "schema.h"
#include "text.h"

#define MCP_TEXT_MAX	   (8 * 1024 * 1024) /* SP-9: a run's output */
#define MCP_TOOLS_MAX	   256		     /* tool events kept per run */
#define MCP_ERRBODY_MAX	   (64 * 1024)
#define MCP_LIST_TIMEOUT_S 10
#define MCP_RUN_TIMEOUT_S  3600 /* of silence; a run ends by SP-8 */
#define MCP_WAIT_TIMEOUT_S (LIM_JOB_WAIT_MS_MAX / 1000 + 15)

/* ---- schemas */

struct mcp_arg {
	const char *a_key;
	int a_required;
	size_t a_min, a_max;   /* characters; an integer's bounds */
	int a_int;	       /* an integer, not a string */
	const char *a_pattern; /* for the caller; a_ok is the check */
	int (*a_ok)(const char *, size_t);
	const char *a_desc;
};

enum mcp_tool_id {
	TOOL_LIST_AGENTS,
	TOOL_RUN_AGENT,
	TOOL_START_JOB,
	TOOL_JOB_STATUS,
	TOOL_JOB_EVENTS,
	TOOL_WAIT_JOB,
	TOOL_CANCEL_JOB,
	TOOL_LIST_JOBS,
};

struct mcp_tool {
	const char *t_name;
	enum mcp_tool_id t_id;
	const char *t_desc;
	const struct mcp_arg *t_args;
	size_t t_nargs;
};

static int
agent_ok(const char *s, size_t len)
{
	(void)len;
	return mp_name_ok(s, LIM_NAME_MAX);
}

static int
prompt_ok(const char *s, size_t len)
{
	return argv_prompt_ok(s, len) == 0;
}

static int
session_ok(const char *s, size_t len)
{
	(void)len;
	return schema_session_ok(s);
}

/* MC-2: absolute; the spawner checks the rest (roots, links, .git). */
static int
worktree_ok(const char *s, size_t len)
{
	(void)len;
	return s[0] == '/';
}

/* MC-3: ^[A-Za-z0-9_-]{1,80}$ */
static int
job_id_ok(const char *s, size_t len)
{
	(void)len;
	return schema_job_id_ok(s);
}

static const struct mcp_arg run_args[] = {
    {"agent", 1, 1, LIM_NAME_MAX, 0, "^[a-z0-9][a-z0-9-]{0,63}$", agent_ok,
	"the agent's name, as list_agents gives it"},
    {"prompt", 1, LIM_PROMPT_MIN_CHARS, LIM_PROMPT_MAX_CHARS, 0, NULL,
	prompt_ok, "what to ask the agent (no NUL)"},
    {"session", 0, 1, LIM_SESSION_MAX, 0, "^[A-Za-z0-9_-]{1,96}$", session_ok,
	"a session id, to continue an earlier conversation"},
    {"worktree", 0, 2, LIM_PATH_MAX, 0, "^/", worktree_ok,
	"MC-2: the absolute path of a git repository in the agent's roots; "
	"the agent then runs in a disposable checkout of it on a fresh "
	"branch, and the result names the branch and what changed (the "
	"agent's manifest must allow worktrees)"},
};

#define JOB_ID_ARG                                                             \
	{                                                                      \
		"jobId", 1, 1, LIM_JOB_ID_MAX, 0, "^[A-Za-z0-9_-]{1,80}$",     \
		    job_id_ok,                                                 \
		    "the job's id, as start_job or list_jobs gives it"         \
	}

static const struct mcp_arg job_args[] = {JOB_ID_ARG};

static const struct mcp_arg events_args[] = {
    JOB_ID_ARG,
    {"offset", 0, 0, 1ULL << 53, 1, NULL, NULL,
	"the first event to read (0 = the start); the previous answer's next"},
    {"limit", 0, 1, LIM_JOB_PAGE_MAX, 1, NULL, NULL,
	"at most this many events"},
};

static const struct mcp_arg wait_args[] = {
    JOB_ID_ARG,
    {"timeoutMs", 0, 0, LIM_JOB_WAIT_MS_MAX, 1, NULL, NULL,
	"how long to wait for the job to end, in ms (default 30000)"},
};

static const struct mcp_tool tools[] = {
    {"list_agents", TOOL_LIST_AGENTS,
	"List the agents cordon can run: name, label, readiness (and the "
	"names of missing secrets), and each one's sandbox and network.",
	NULL, 0},
    {"run_agent", TOOL_RUN_AGENT,
	"Run one agent on a prompt in cordon's sandbox, audited. Its "
	"output streams as progress; the result is its final text and the "
	"tool calls it made.",
	run_args, sizeof(run_args) / sizeof(run_args[0])},
    {"start_job", TOOL_START_JOB,
	"Start one agent on a prompt as a detached job: it runs on after "
	"this call, its events kept by cordon. Returns the job's id.",
	run_args, sizeof(run_args) / sizeof(run_args[0])},
    {"job_status", TOOL_JOB_STATUS,
	"A job's state (running, succeeded, failed, cancelled, lost), "
	"times, exit code, cancel reason and event count.",
	job_args, 1},
    {"job_events", TOOL_JOB_EVENTS,
	"A job's events (start, token, tool, tool_result, usage, error, "
	"done, saved) from an offset; next is where to read on.",
	events_args, sizeof(events_args) / sizeof(events_args[0])},
    {"wait_job", TOOL_WAIT_JOB,
	"Wait (at most timeoutMs, 60000 at most) for a job to end; its "
	"status, and whether the time ran out.",
	wait_args, sizeof(wait_args) / sizeof(wait_args[0])},
    {"cancel_job", TOOL_CANCEL_JOB, "Cancel a running job.", job_args, 1},
    {"list_jobs", TOOL_LIST_JOBS,
	"The jobs cordon keeps, newest first, with their status.", NULL, 0},
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

static struct json_object *
tool_schema(const struct mcp_tool *t)
{
	struct json_object *s, *props, *req, *p;
	size_t i;

	s = json_object_new_object();
	json_object_object_add(s, "type", json_object_new_string("object"));
	props = json_object_new_object();
	req = json_object_new_array();
	for (i = 0; i < t->t_nargs; i++) {
		p = json_object_new_object();
		json_object_object_add(p, "type",
		    json_object_new_string(
			t->t_args[i].a_int ? "integer" : "string"));
		json_object_object_add(p,
		    t->t_args[i].a_int ? "minimum" : "minLength",
		    json_object_new_int64((int64_t)t->t_args[i].a_min));
		json_object_object_add(p,
		    t->t_args[i].a_int ? "maximum" : "maxLength",
		    json_object_new_int64((int64_t)t->t_args[i].a_max));
		if (t->t_args[i].a_pattern != NULL)
			json_object_object_add(p, "pattern",
			    json_object_new_string(t->t_args[i].a_pattern));
		json_object_object_add(p, "description",
		    json_object_new_string(t->t_args[i].a_desc));
		json_object_object_add(props, t->t_args[i].a_key, p);
		if (t->t_args[i].a_required)
			json_object_array_add(
			    req, json_object_new_string(t->t_args[i].a_key));
	}
	json_object_object_add(s, "properties", props);
	json_object_object_add(s, "required", req);
	json_object_object_add(
	    s, "additionalProperties", json_object_new_boolean(0));
	return s;
}

struct json_object *
mcp_tools_list(void)
{
	struct json_object *arr = json_object_new_array(), *o;
	size_t i;

	for (i = 0; i < NTOOLS; i++) {
		o = json_object_new_object();
		json_object_object_add(
		    o, "name", json_object_new_string(tools[i].t_name));
		json_object_object_add(
		    o, "description", json_object_new_string(tools[i].t_desc));
		json_object_object_add(
		    o, "inputSchema", tool_schema(&tools[i]));
		json_object_array_add(arr, o);
	}
	return arr;
}

/*
 * args against t's table: every key declared, every required one
 * there, each a string within its bounds and rule.  NULL if it fits,
 * else the schema key that does not ("" for an undeclared key, which
 * is never named back).
 */
static const char *
args_check(const struct mcp_tool *t, struct json_object *args)
{
	struct json_object *v;
	const struct mcp_arg *a;
	size_t i, n = 0, len, chars;
	const char *s;

	for (i = 0; i < t->t_nargs; i++) {
		a = &t->t_args[i];
		if (!json_object_object_get_ex(args, a->a_key, &v)) {
			if (a->a_required)
				return a->a_key;
			continue;
		}
		n++;
		if (a->a_int) {
			if (!json_object_is_type(v, json_type_int) ||
			    json_object_get_int64(v) < (int64_t)a->a_min ||
			    json_object_get_int64(v) > (int64_t)a->a_max)
				return a->a_key;
			continue;
		}
		if (!json_object_is_type(v, json_type_string))
			return a->a_key;
		s = json_object_get_string(v);
		len = (size_t)json_object_get_string_len(v);
		/* bytes first: a bound before any count over the text */
		if (len > 4 * a->a_max || strlen(s) != len)
			return a->a_key;
		chars = text_utf8_chars(s, len);
		if (chars < a->a_min || chars > a->a_max || !a->a_ok(s, len))
			return a->a_key;
	}
	return (size_t)json_object_object_length(args) == n ? NULL : "";
}

/* ---- calls in flight */

struct mcp_call {
	TAILQ_ENTRY(mcp_call) c_entry;
	struct mcp *c_mcp;
	enum mcp_tool_id c_tool;
	struct json_object *c_id;	/* the request's id */
	struct json_object *c_progress; /* its progressToken, or NULL */
	struct evhttp_connection *c_conn;
	struct evbuffer *c_in; /* body bytes not yet a whole line */
	int64_t c_nprogress;
	/* run_agent: what the stream said */
	struct evbuffer *c_text;
	struct json_object *c_tools, *c_end, *c_err, *c_saved, *c_usage;
	char c_run_id[40];
	int c_text_cut, c_tools_cut;
};

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

/* A tool's own failure: a result with isError and {error: code}. */
static struct json_object *
tool_error(const char *code, const char *text)
{
	struct json_object *res = json_object_new_object(), *arr, *t, *sc;

	arr = json_object_new_array();
	t = json_object_new_object();
	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(t, "text", json_object_new_string(text));
	json_object_array_add(arr, t);
	json_object_object_add(res, "content", arr);
	sc = json_object_new_object();
	json_object_object_add(sc, "error", json_object_new_string(code));
	json_object_object_add(res, "structuredContent", sc);
	json_object_object_add(res, "isError", json_object_new_boolean(1));
	return res;
}

/* A result: text for the model, sc as structured content (consumed). */
static struct json_object *
tool_result(const char *text, size_t len, struct json_object *sc, int err)
{
	struct json_object *res = json_object_new_object(), *arr, *t;

	arr = json_object_new_array();
	t = json_object_new_object();
	json_object_object_add(t, "type", json_object_new_string("text"));
	json_object_object_add(
	    t, "text", json_object_new_string_len(text, (int)len));
	json_object_array_add(arr, t);
	json_object_object_add(res, "content", arr);
	json_object_object_add(res, "structuredContent", sc);
	json_object_object_add(res, "isError", json_object_new_boolean(err));
	return res;
}

/* A document as a tool result: structured, and the same serialized as
 * the text the model reads. */
static struct json_object *
tool_result_doc(struct json_object *doc)
{
	const char *t = json_object_to_json_string_ext(
	    doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

	return tool_result(t, strlen(t), doc, 0);
}

/* An API error body {ok:false, error:CODE, reason?}: key's value if it
 * has the shape of one of the API's fixed codes or reason classes
 * (PER-9, MC-2), else dflt. */
static const char *
api_code(struct evbuffer *b, const char *key, const char *dflt, char *out,
    size_t outsz)
{
	struct json_object *o;
	const char *s;
	size_t len = evbuffer_get_length(b);

	snprintf(out, outsz, "%s", dflt);
	if (len == 0 || len > MCP_ERRBODY_MAX)
		return out;
	o = json_parse_object((const char *)evbuffer_pullup(b, -1), len, 4);
	if (o != NULL && (s = json_get_str(o, key, 40)) != NULL &&
	    s[0] != '\0' &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(s))
		snprintf(out, outsz, "%s", s);
	json_object_put(o);
	return out;
}

/* ---- list_agents */

static struct json_object *
pick(struct json_object *from, const char *const *keys)
{
	struct json_object *o = json_object_new_object(), *v;
	size_t i;

	for (i = 0; keys[i] != NULL; i++)
		if (json_object_object_get_ex(from, keys[i], &v))
			json_object_object_add(o, keys[i], json_object_get(v));
	return o;
}

static void
list_done(struct mcp_call *c)
{
	/* API-2's summary of each agent, less what a caller has no use
	 * for (actions, hasKey). */
	static const char *const agent_keys[] = {"name", "displayName",
	    "description", "transport", "readiness", "missingSecrets", NULL};
	static const char *const sandbox_keys[] = {"enforced", "isolation",
	    "network", "egress", "layers", "reason", NULL};
	struct json_object *o = NULL, *arr, *out, *a, *sb, *v, *sc;
	size_t i, n, len = evbuffer_get_length(c->c_in);

	if (len <= MCP_TEXT_MAX)
		o = json_parse_object(
		    (const char *)evbuffer_pullup(c->c_in, -1), len, 16);
	if (o == NULL || !json_object_object_get_ex(o, "agents", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		json_object_put(o);
		mcp_result(c->c_mcp, c->c_id,
		    tool_error("bad-answer", "cordon's answer was not usable"));
		return;
	}
	out = json_object_new_array();
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		v = json_object_array_get_idx(arr, i);
		a = pick(v, agent_keys);
		if (json_object_object_get_ex(v, "sandbox", &sb))
			json_object_object_add(
			    a, "sandbox", pick(sb, sandbox_keys));
		json_object_array_add(out, a);
	}
	json_object_put(o);
	sc = json_object_new_object();
	json_object_object_add(sc, "agents", out);
	mcp_result(c->c_mcp, c->c_id, tool_result_doc(sc));
}

/* ---- the jobs' tools (MC-3): the API's answer, less its "ok" */

static int call_start(
    struct mcp *, struct mcp_call *, const char *, const char *, int);

static void
api_done(struct mcp_call *c)
{
	struct json_object *o = NULL;
	size_t len = evbuffer_get_length(c->c_in);

	if (len <= MCP_TEXT_MAX)
		o = json_parse_object(
		    (const char *)evbuffer_pullup(c->c_in, -1), len, 16);
	if (o == NULL) {
		mcp_result(c->c_mcp, c->c_id,
		    tool_error("bad-answer", "cordon's answer was not usable"));
		return;
	}
	json_object_object_del(o, "ok");
	mcp_result(c->c_mcp, c->c_id, tool_result_doc(o));
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
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
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
job_request(struct mcp *m, struct mcp_call *c, const struct mcp_tool *t,
    struct json_object *args)
{
	struct json_object *v;
	const char *id = NULL;
	char uri[256];

	if (json_object_object_get_ex(args, "jobId", &v))
		id = json_object_get_string(v);
	switch (t->t_id) {
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

/* ---- run_agent */

static void
run_progress(struct mcp_call *c, const char *msg, size_t len)
{
	struct json_object *o, *p;

	if (c->c_progress == NULL)
		return;
	p = json_object_new_object();
	json_object_object_add(
	    p, "progressToken", json_object_get(c->c_progress));
	json_object_object_add(
	    p, "progress", json_object_new_int64(++c->c_nprogress));
	json_object_object_add(
	    p, "message", json_object_new_string_len(msg, (int)len));
	o = json_object_new_object();
	json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(
	    o, "method", json_object_new_string("notifications/progress"));
	json_object_object_add(o, "params", p);
	mcp_send(c->c_mcp, o);
	json_object_put(o);
}

/* One NDJSON event of API-3; its strings were cleaned and scrubbed by
 * the spawner (SP-10, SP-11) and pass on as they are. */
static void
run_event(struct mcp_call *c, const char *line, size_t len)
{
	struct json_object *o, *v;
	const char *kind, *s;
	char msg[160];
	size_t n;

	if ((o = json_parse_object(line, len, 8)) == NULL ||
	    (kind = json_get_str(o, "kind", 16)) == NULL) {
		json_object_put(o);
		return;
	}
	if (strcmp(kind, "start") == 0 &&
	    (s = json_get_str(o, "runId", sizeof(c->c_run_id) - 1)) != NULL)
		snprintf(c->c_run_id, sizeof(c->c_run_id), "%s", s);
	else if (strcmp(kind, "token") == 0 &&
		 json_object_object_get_ex(o, "text", &v) &&
		 json_object_is_type(v, json_type_string)) {
		n = (size_t)json_object_get_string_len(v);
		if (evbuffer_get_length(c->c_text) + n > MCP_TEXT_MAX)
			c->c_text_cut = 1;
		else
			evbuffer_add(c->c_text, json_object_get_string(v), n);
		run_progress(c, json_object_get_string(v), n);
	} else if (strcmp(kind, "tool") == 0 ||
		   strcmp(kind, "tool_result") == 0) {
		if (json_object_array_length(c->c_tools) >= MCP_TOOLS_MAX)
			c->c_tools_cut = 1;
		else
			json_object_array_add(c->c_tools, json_object_get(o));
		s = json_get_str(o, "tool", 64);
		snprintf(msg, sizeof(msg), "%s%s",
		    kind[4] == '\0' ? "tool: " : "tool result",
		    kind[4] == '\0' && s != NULL ? s : "");
		run_progress(c, msg, strlen(msg));
	} else if (strcmp(kind, "usage") == 0) {
		json_object_put(c->c_usage);
		c->c_usage = json_object_get(o);
	} else if (strcmp(kind, "error") == 0) {
		json_object_put(c->c_err);
		c->c_err = json_object_get(o);
	} else if (strcmp(kind, "done") == 0) {
		json_object_put(c->c_end);
		c->c_end = json_object_get(o);
	} else if (strcmp(kind, "saved") == 0) {
		json_object_put(c->c_saved);
		c->c_saved = json_object_get(o);
	}
	json_object_put(o);
}

static void
run_lines(struct mcp_call *c)
{
	struct evbuffer_ptr p;
	size_t len;

	for (;;) {
		p = evbuffer_search_eol(c->c_in, NULL, NULL, EVBUFFER_EOL_LF);
		if (p.pos == -1)
			return;
		len = (size_t)p.pos;
		run_event(c,
		    (const char *)evbuffer_pullup(c->c_in, (ssize_t)len + 1),
		    len);
		evbuffer_drain(c->c_in, len + 1);
	}
}

static void
copy_key(struct json_object *to, struct json_object *from, const char *k,
    const char *as)
{
	struct json_object *v;

	if (from != NULL && json_object_object_get_ex(from, k, &v))
		json_object_object_add(to, as, json_object_get(v));
}

static void
run_done(struct mcp_call *c)
{
	struct json_object *sc, *v;
	const char *text;
	size_t len;
	int failed;

	run_lines(c);
	failed = c->c_end == NULL || c->c_err != NULL;
	sc = json_object_new_object();
	if (c->c_run_id[0] != '\0')
		json_object_object_add(
		    sc, "runId", json_object_new_string(c->c_run_id));
	len = evbuffer_get_length(c->c_text);
	text = (const char *)evbuffer_pullup(c->c_text, -1);
	json_object_object_add(sc, "text",
	    json_object_new_string_len(text != NULL ? text : "", (int)len));
	json_object_object_add(sc, "tools", json_object_get(c->c_tools));
	copy_key(sc, c->c_end, "exitCode", "exitCode");
	copy_key(sc, c->c_end, "durationMs", "durationMs");
	copy_key(sc, c->c_end, "truncated", "truncated");
	copy_key(sc, c->c_end, "worktree", "worktree"); /* MC-2 */
	if (c->c_text_cut || c->c_tools_cut)
		json_object_object_add(
		    sc, "truncated", json_object_new_boolean(1));
	copy_key(sc, c->c_err, "errorClass", "errorClass");
	copy_key(sc, c->c_err, "errorMessage", "errorMessage");
	copy_key(sc, c->c_err, "error", "error"); /* MC-2: its fixed code */
	copy_key(sc, c->c_err, "reason", "reason");
	if (c->c_end == NULL && c->c_err == NULL)
		json_object_object_add(
		    sc, "error", json_object_new_string("stream-ended"));
	if (c->c_usage != NULL) {
		v = json_object_get(c->c_usage);
		json_object_object_del(v, "kind");
		json_object_object_add(sc, "usage", v);
	}
	copy_key(sc, c->c_saved, "path", "notePath");
	/* A failed run's text for the model is its stock error message. */
	if (failed && len == 0 && c->c_err != NULL &&
	    (text = json_get_str(c->c_err, "errorMessage", 4096)) != NULL)
		len = strlen(text);
	else if (failed && len == 0)
		text = "the run did not finish", len = strlen(text);
	mcp_result(c->c_mcp, c->c_id,
	    tool_result(text != NULL ? text : "", len, sc, failed));
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
			run_lines(c);
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
	struct json_object *res, *sc;
	struct mcp_call *c = arg;
	char code[48];
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
	if (status != 200) {
		res =
		    tool_error(status == 0 ? "unreachable"
					   : api_code(c->c_in, "error",
						 "refused", code, sizeof(code)),
			"cordon refused the call");
		/* MC-2: which rule refused it, as a fixed class. */
		if (status != 0 &&
		    api_code(c->c_in, "reason", "", code, sizeof(code))[0] !=
			'\0' &&
		    json_object_object_get_ex(res, "structuredContent", &sc))
			json_object_object_add(
			    sc, "reason", json_object_new_string(code));
		mcp_result(c->c_mcp, c->c_id, res);
	} else if (c->c_tool == TOOL_LIST_AGENTS)
		list_done(c);
	else if (c->c_tool == TOOL_RUN_AGENT)
		run_done(c);
	else
		api_done(c);
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
mcp_tools_call(struct mcp *m, struct json_object *id, struct json_object *p)
{
	static const struct json_shape shape[] = {
	    JS_STR("name", JS_REQ, 0, 64),
	    JS_OBJ("arguments", JS_OPT),
	    JS_OBJ("_meta", JS_OPT),
	};
	struct json_object *args = NULL, *meta, *tok = NULL;
	const struct mcp_tool *t = NULL;
	struct mcp_call *c;
	const char *name, *bad;
	size_t i;
	int rc;

	if (p == NULL || !json_shape_ok(p, shape, 3) ||
	    (name = json_shape_str(p, "name", NULL)) == NULL) {
		mcp_error(
		    m, id, MCP_EPARAMS, "Invalid params", "invalid-params");
		return;
	}
	for (i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i].t_name, name) == 0)
			t = &tools[i];
	if (t == NULL) {
		mcp_error(m, id, MCP_EPARAMS, "Unknown tool", "unknown-tool");
		return;
	}
	if (json_object_object_get_ex(p, "arguments", &args) &&
	    (bad = args_check(t, args)) != NULL) {
		mcp_error(m, id, MCP_EPARAMS,
		    bad[0] != '\0' ? "Invalid arguments"
				   : "Invalid arguments: an unknown field",
		    bad[0] != '\0' ? "invalid-argument" : "unknown-field");
		return;
	}
	if (args == NULL && t->t_nargs > 0 && t->t_args[0].a_required) {
		mcp_error(m, id, MCP_EPARAMS, "Invalid arguments",
		    "invalid-argument");
		return;
	}
	if (json_object_object_get_ex(p, "_meta", &meta) &&
	    json_object_object_get_ex(meta, "progressToken", &tok) &&
	    !json_object_is_type(tok, json_type_int) &&
	    !(json_object_is_type(tok, json_type_string) &&
		json_object_get_string_len(tok) <= MCP_ID_MAX)) {
		mcp_error(
		    m, id, MCP_EPARAMS, "Invalid params", "invalid-params");
		return;
	}
	if (m->m_ncalls >= MCP_CALLS_MAX) {
		mcp_result(m, id, tool_error("busy", "too many calls at once"));
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
	c->c_tool = t->t_id;
	c->c_id = json_object_get(id);
	c->c_progress = json_object_get(tok);
	c->c_tools = json_object_new_array();
	if (t->t_id == TOOL_LIST_AGENTS)
		rc = call_start(m, c, "/api/agents", NULL, MCP_LIST_TIMEOUT_S);
	else if (t->t_id != TOOL_RUN_AGENT)
		rc = job_request(m, c, t, args);
	else
		rc = run_request(m, c, args, "run", MCP_RUN_TIMEOUT_S);
	if (rc != 0) {
		mcp_result(m, id,
		    rc == -2
			? tool_error("not-running", "cordon is not running")
			: tool_error(
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
