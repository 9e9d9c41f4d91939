/*
 * The tools of `cordon mcp` (MC-1): their input schemas as data (the
 * schema a caller sees and the check this server makes are one table),
 * and a tools/call checked against them before mcp_call.c makes it on
 * the running cordon's HTTP API: list_agents, run_agent (API-3), and
 * the detached jobs' tools (MC-3).  Pure but for json-c and stdout
 * (mcp_error); every error is a fixed code.
 */
#include <string.h>

#include <json-c/json.h>

#include "argv.h"
#include "cordon_limits.h"
#include "json.h"
#include "manifest_parse.h"
#include "mcp.h"
#include "schema.h"
#include "text.h"
#include "unicode.h"
#include "util.h"

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

/* A tool's arguments: its table and how many. */
#define TOOL_ARGS(a) a, nitems(a)

static const struct mcp_tool tools[] = {
    {"list_agents", TOOL_LIST_AGENTS,
	"List the agents cordon can run: name, label, readiness (and the "
	"names of missing secrets), and each one's sandbox and network.",
	NULL, 0},
    {"run_agent", TOOL_RUN_AGENT,
	"Run one agent on a prompt in cordon's sandbox, audited. Its "
	"output streams as progress; the result is its final text and the "
	"tool calls it made.",
	TOOL_ARGS(run_args)},
    {"start_job", TOOL_START_JOB,
	"Start one agent on a prompt as a detached job: it runs on after "
	"this call, its events kept by cordon. Returns the job's id.",
	TOOL_ARGS(run_args)},
    {"job_status", TOOL_JOB_STATUS,
	"A job's state (running, succeeded, failed, cancelled, lost), "
	"times, exit code, cancel reason and event count.",
	TOOL_ARGS(job_args)},
    {"job_events", TOOL_JOB_EVENTS,
	"A job's events (start, token, tool, tool_result, usage, error, "
	"done, saved) from an offset; next is where to read on.",
	TOOL_ARGS(events_args)},
    {"wait_job", TOOL_WAIT_JOB,
	"Wait (at most timeoutMs, 60000 at most) for a job to end; its "
	"status, and whether the time ran out.",
	TOOL_ARGS(wait_args)},
    {"cancel_job", TOOL_CANCEL_JOB, "Cancel a running job.",
	TOOL_ARGS(job_args)},
    {"list_jobs", TOOL_LIST_JOBS,
	"The jobs cordon keeps, newest first, with their status.", NULL, 0},
};
#define NTOOLS nitems(tools)

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
		chars = uni_utf8_chars(s, len);
		if (chars < a->a_min || chars > a->a_max || !a->a_ok(s, len))
			return a->a_key;
	}
	return (size_t)json_object_object_length(args) == n ? NULL : "";
}

/* _meta.progressToken when there is one: an integer or a short string.
 * 0 with *tok (NULL: none), or -1. */
static int
progress_token(struct json_object *p, struct json_object **tok)
{
	struct json_object *meta;

	*tok = NULL;
	if (!json_object_object_get_ex(p, "_meta", &meta) ||
	    !json_object_object_get_ex(meta, "progressToken", tok))
		return 0;
	if (json_object_is_type(*tok, json_type_int) ||
	    (json_object_is_type(*tok, json_type_string) &&
		json_object_get_string_len(*tok) <= MCP_ID_MAX))
		return 0;
	return -1;
}

/*
 * tools/call's params: a known tool, its arguments fit its schema, a
 * usable progressToken.  The tool with *args and *tok (either NULL:
 * none), or NULL with the request answered.
 */
static const struct mcp_tool *
call_check(struct mcp *m, struct json_object *id, struct json_object *p,
    struct json_object **args, struct json_object **tok)
{
	static const struct json_shape shape[] = {
	    JS_STR("name", JS_REQ, 0, 64),
	    JS_OBJ("arguments", JS_OPT),
	    JS_OBJ("_meta", JS_OPT),
	};
	const struct mcp_tool *t = NULL;
	const char *name, *bad;
	size_t i;

	*args = NULL;
	if (p == NULL || !json_shape_ok(p, shape, nitems(shape)) ||
	    (name = json_shape_str(p, "name", NULL)) == NULL) {
		mcp_error(
		    m, id, MCP_EPARAMS, "Invalid params", "invalid-params");
		return NULL;
	}
	for (i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i].t_name, name) == 0)
			t = &tools[i];
	if (t == NULL) {
		mcp_error(m, id, MCP_EPARAMS, "Unknown tool", "unknown-tool");
		return NULL;
	}
	if (json_object_object_get_ex(p, "arguments", args) &&
	    (bad = args_check(t, *args)) != NULL) {
		mcp_error(m, id, MCP_EPARAMS,
		    bad[0] != '\0' ? "Invalid arguments"
				   : "Invalid arguments: an unknown field",
		    bad[0] != '\0' ? "invalid-argument" : "unknown-field");
		return NULL;
	}
	if (*args == NULL && t->t_nargs > 0 && t->t_args[0].a_required) {
		mcp_error(m, id, MCP_EPARAMS, "Invalid arguments",
		    "invalid-argument");
		return NULL;
	}
	if (progress_token(p, tok) == -1) {
		mcp_error(
		    m, id, MCP_EPARAMS, "Invalid params", "invalid-params");
		return NULL;
	}
	return t;
}

void
mcp_tools_call(struct mcp *m, struct json_object *id, struct json_object *p)
{
	struct json_object *args, *tok;
	const struct mcp_tool *t;

	if ((t = call_check(m, id, p, &args, &tok)) != NULL)
		mcp_call_begin(m, id, t->t_id, args, tok);
}
