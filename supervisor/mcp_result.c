/*
 * The results of `cordon mcp`'s tools (MC-1): what each call's API
 * answer becomes for the model.  list_agents' summary of each agent,
 * the jobs' tools' API answer less its "ok" (MC-3), run_agent's NDJSON
 * stream (API-3) relayed as progress notifications and gathered into
 * its final text, tool calls and end, and a refusal as a fixed code.
 * Pure but for json-c, libevent's buffers and stdout (mcp_send);
 * touches no file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "charset.h"
#include "json.h"
#include "mcp.h"

#define MCP_TEXT_MAX  (8 * 1024 * 1024) /* SP-9: a run's output */
#define MCP_TOOLS_MAX 256		/* tool events kept per run */

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

struct json_object *
mcp_tool_error(const char *code, const char *text)
{
	struct json_object *sc = json_object_new_object();

	json_object_object_add(sc, "error", json_object_new_string(code));
	return tool_result(text, strlen(text), sc, 1);
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
	    charset_shape(s, strlen(s), "a-z0-9-", "a-z0-9-", 1, 40))
		snprintf(out, outsz, "%s", s);
	json_object_put(o);
	return out;
}

/*
 * The API's answer: a JSON object (with an array member arr when arr is
 * not NULL).  NULL, the call answered with bad-answer, when it is not.
 */
static struct json_object *
answer_obj(struct mcp_call *c, const char *arr)
{
	struct json_object *o = NULL, *v;
	size_t len = evbuffer_get_length(c->c_in);

	if (len <= MCP_TEXT_MAX)
		o = json_parse_object(
		    (const char *)evbuffer_pullup(c->c_in, -1), len, 16);
	if (o != NULL &&
	    (arr == NULL || (json_object_object_get_ex(o, arr, &v) &&
				json_object_is_type(v, json_type_array))))
		return o;
	json_object_put(o);
	mcp_result(c->c_mcp, c->c_id,
	    mcp_tool_error("bad-answer", "cordon's answer was not usable"));
	return NULL;
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
	struct json_object *o, *arr, *out, *a, *sb, *v, *sc;
	size_t i, n;

	if ((o = answer_obj(c, "agents")) == NULL)
		return;
	json_object_object_get_ex(o, "agents", &arr);
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

static void
api_done(struct mcp_call *c)
{
	struct json_object *o;

	if ((o = answer_obj(c, NULL)) == NULL)
		return;
	json_object_object_del(o, "ok");
	mcp_result(c->c_mcp, c->c_id, tool_result_doc(o));
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
	struct json_object *o, *v, **keep = NULL;
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
	} else if (strcmp(kind, "usage") == 0)
		keep = &c->c_usage;
	else if (strcmp(kind, "error") == 0)
		keep = &c->c_err;
	else if (strcmp(kind, "done") == 0)
		keep = &c->c_end;
	else if (strcmp(kind, "saved") == 0)
		keep = &c->c_saved;
	if (keep != NULL) { /* the last of its kind */
		json_object_put(*keep);
		*keep = json_object_get(o);
	}
	json_object_put(o);
}

void
mcp_run_lines(struct mcp_call *c)
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

	mcp_run_lines(c);
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

/* A call the API refused (status != 200) or did not answer (0): its
 * fixed code, and the reason class when there is one. */
static void
call_refused(struct mcp_call *c, int status)
{
	struct json_object *res, *sc;
	char code[48];

	res = mcp_tool_error(status == 0 ? "unreachable"
					 : api_code(c->c_in, "error", "refused",
					       code, sizeof(code)),
	    "cordon refused the call");
	/* MC-2: which rule refused it, as a fixed class. */
	if (status != 0 &&
	    api_code(c->c_in, "reason", "", code, sizeof(code))[0] != '\0' &&
	    json_object_object_get_ex(res, "structuredContent", &sc))
		json_object_object_add(
		    sc, "reason", json_object_new_string(code));
	mcp_result(c->c_mcp, c->c_id, res);
}

void
mcp_call_answer(struct mcp_call *c, int status)
{
	if (status != 200)
		call_refused(c, status);
	else if (c->c_tool == TOOL_LIST_AGENTS)
		list_done(c);
	else if (c->c_tool == TOOL_RUN_AGENT)
		run_done(c);
	else
		api_done(c);
}
