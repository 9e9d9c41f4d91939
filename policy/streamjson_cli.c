/*
 * SP-16: `codex exec --json` and Gemini CLI's `--output-format
 * stream-json` lines to the typed events of streamjson.h, with the
 * shared steps of streamjson_impl.h.  Codex sends whole items (a
 * message, a command started then completed, a patch applied); Gemini
 * CLI sends text deltas, tool_use and tool_result lines, and a result.
 */
#include <string.h>

#include <json-c/json.h>

#include "streamjson_impl.h"
#include "util.h"

/* ---- Codex ---- */

/*
 * Codex runs each shell line as `/bin/bash -lc 'LINE'`: what the
 * operator reads is LINE (s itself when it is not of that shape).
 */
static void
codex_unwrap(const char **s, size_t *n)
{
	static const char *const shells[] = {"/bin/bash -lc ", "/bin/bash -c ",
	    "/usr/bin/bash -lc ", "/usr/bin/bash -c ", "bash -lc ", "bash -c ",
	    "/bin/sh -c ", "sh -c ", "/bin/zsh -lc ", "zsh -lc "};
	const char *p = *s;
	size_t i, k, m = *n;

	for (i = 0; i < nitems(shells); i++) {
		k = strlen(shells[i]);
		if (m > k && memcmp(p, shells[i], k) == 0)
			break;
	}
	if (i == nitems(shells))
		return;
	p += k;
	m -= k;
	/* One single-quoted word holds the line exactly. */
	if (m >= 2 && p[0] == '\'' && p[m - 1] == '\'' &&
	    memchr(p + 1, '\'', m - 2) == NULL) {
		p++;
		m -= 2;
	}
	if (m > 0) {
		*s = p;
		*n = m;
	}
}

/* A file_change item: the paths it names, as compact JSON. */
static void
codex_patch(struct sj_state *st, struct sj_out *out, struct json_object *it,
    const char *id)
{
	struct json_object *ch = sj_get(it, "changes");
	struct sj_event *e;

	if ((e = sj_tool(st, out, HOOK_CODEX, id, "apply_patch", ch)) == NULL)
		return;
	(void)sj_result(st, out, id, sj_is(it, "status", "completed"), NULL, 0);
}

/* An item began: a command, an MCP tool or a web search is a call. */
static void
codex_started(struct sj_state *st, struct sj_out *out, struct json_object *it)
{
	const char *id = sj_word(it, "id", SJ_ID_SET), *s;
	struct sj_event *e;
	size_t n = 0;

	if (sj_is(it, "type", "command_execution")) {
		if ((e = sj_tool(st, out, HOOK_CODEX, id, "Bash", NULL)) ==
			NULL ||
		    (s = sj_str(it, "command", &n)) == NULL)
			return;
		codex_unwrap(&s, &n);
		e->se_text = s;
		e->se_len = n;
	} else if (sj_is(it, "type", "mcp_tool_call"))
		(void)sj_tool(st, out, HOOK_CODEX, id,
		    sj_word(it, "tool", SJ_TOOL_SET), sj_get(it, "arguments"));
	else if (sj_is(it, "type", "web_search") &&
		 (e = sj_tool(st, out, HOOK_CODEX, id, "web_search", NULL)) !=
		     NULL &&
		 (s = sj_str(it, "query", &n)) != NULL) {
		e->se_text = s;
		e->se_len = n;
	}
}

/* The first text block of an MCP result, else its error's message. */
static const char *
codex_mcp_text(struct json_object *it, size_t *n)
{
	struct json_object *c = sj_get(sj_get(it, "result"), "content"), *b;
	const char *s = NULL;
	size_t i;

	if (c != NULL && json_object_is_type(c, json_type_array))
		for (i = 0; s == NULL && i < json_object_array_length(c); i++) {
			b = json_object_array_get_idx(c, i);
			if (sj_is(b, "type", "text"))
				s = sj_str(b, "text", n);
		}
	return s != NULL ? s : sj_str(sj_get(it, "error"), "message", n);
}

static void
codex_completed(struct sj_state *st, struct sj_out *out, struct json_object *it)
{
	const char *id = sj_word(it, "id", SJ_ID_SET), *s = NULL;
	struct sj_event *e;
	size_t n = 0;

	if (sj_is(it, "type", "agent_message") &&
	    (s = sj_str(it, "text", &n)) != NULL) {
		st->ss_break = 1; /* each message a paragraph */
		sj_text(st, out, s, n);
		sj_ev_add(out, SJ_FLUSH);
	} else if (sj_is(it, "type", "command_execution")) {
		s = sj_str(it, "aggregated_output", &n);
		(void)sj_result(st, out, id,
		    sj_is(it, "status", "completed") &&
			sj_int(it, "exit_code", 0, 0, -1) == 0,
		    s, n);
	} else if (sj_is(it, "type", "mcp_tool_call")) {
		s = codex_mcp_text(it, &n);
		(void)sj_result(
		    st, out, id, sj_is(it, "status", "completed"), s, n);
	} else if (sj_is(it, "type", "web_search"))
		(void)sj_result(st, out, id, 1, NULL, 0);
	else if (sj_is(it, "type", "file_change"))
		codex_patch(st, out, it, id);
	else if (sj_is(it, "type", "error") &&
		 (e = sj_ev_add(out, SJ_ERROR)) != NULL) {
		e->se_ok = 1; /* an item: the turn goes on */
		e->se_text = sj_str(it, "message", &e->se_len);
	}
}

/*
 * A stream error: "Reconnecting... N/M (...)" while Codex retries its
 * model API, anything else an error.  The words are matched, never
 * passed on for a retry.
 */
static void
codex_error(
    struct sj_state *st, struct sj_out *out, struct json_object *o, int fatal)
{
	static const char retry[] = "Reconnecting...";
	const char *s, *p;
	struct sj_event *e;
	size_t n = 0;
	int a = 0, m = 0;

	s = fatal ? sj_str(sj_get(o, "error"), "message", &n)
		  : sj_str(o, "message", &n);
	if (!fatal && s != NULL && n >= sizeof(retry) - 1 &&
	    memcmp(s, retry, sizeof(retry) - 1) == 0) {
		st->ss_retries++;
		if ((e = sj_ev_add(out, SJ_RETRY)) == NULL)
			return;
		/* " N/M" right after the word, both 1..1000 */
		for (p = s + sizeof(retry) - 1; p < s + n && *p == ' '; p++)
			;
		while (p < s + n && *p >= '0' && *p <= '9' && a <= 1000)
			a = a * 10 + (*p++ - '0');
		if (p < s + n && *p == '/' && a >= 1 && a <= 1000)
			for (p++;
			     p < s + n && *p >= '0' && *p <= '9' && m <= 1000;)
				m = m * 10 + (*p++ - '0');
		e->se_attempt =
		    a >= 1 && a <= 1000 && m >= 1 && m <= 1000 ? a : 0;
		e->se_max = e->se_attempt > 0 ? m : 0;
		e->se_status = -1;
		return;
	}
	sj_ev_add(out, SJ_FLUSH);
	if ((e = sj_ev_add(out, SJ_ERROR)) != NULL) {
		e->se_text = s;
		e->se_len = s != NULL ? n : 0;
	}
}

static const struct sj_usage_key codex_usage[] = {
    {"usage", "input_tokens", "input_tokens", 0},
    {"usage", "output_tokens", "output_tokens", 0},
    {"usage", "cached_input_tokens", "cache_read_input_tokens", 0},
    {"usage", "reasoning_output_tokens", "reasoning_output_tokens", 0},
};

void
sj_codex_line(struct sj_state *st, struct sj_out *out, struct json_object *o)
{
	if (sj_is(o, "type", "item.started"))
		codex_started(st, out, sj_get(o, "item"));
	else if (sj_is(o, "type", "item.completed"))
		codex_completed(st, out, sj_get(o, "item"));
	else if (sj_is(o, "type", "turn.completed"))
		sj_usage(out, o, codex_usage, nitems(codex_usage));
	else if (sj_is(o, "type", "turn.failed"))
		codex_error(st, out, o, 1);
	else if (sj_is(o, "type", "error"))
		codex_error(st, out, o, 0);
}

/* ---- Gemini CLI ---- */

static void
gemini_message(struct sj_state *st, struct sj_out *out, struct json_object *o)
{
	struct json_object *d = sj_get(o, "delta");
	const char *s;
	size_t n = 0;

	if (!sj_is(o, "role", "assistant") ||
	    (s = sj_str(o, "content", &n)) == NULL)
		return;
	/* A whole message (no delta flag) is a paragraph of its own. */
	if (d == NULL || !json_object_is_type(d, json_type_boolean) ||
	    !json_object_get_boolean(d))
		st->ss_break = 1;
	sj_text(st, out, s, n);
}

static void
gemini_result(struct sj_state *st, struct sj_out *out, struct json_object *o)
{
	const char *s;
	size_t n = 0;
	int ok = sj_is(o, "status", "success");

	s = ok ? sj_str(o, "output", &n)
	       : sj_str(sj_get(o, "error"), "message", &n);
	if (s == NULL && !ok)
		s = sj_str(o, "output", &n);
	(void)sj_result(st, out, sj_word(o, "tool_id", SJ_ID_SET), ok, s, n);
}

static const struct sj_usage_key gemini_usage[] = {
    {"stats", "duration_ms", "duration_ms", 0},
    {"stats", "input_tokens", "input_tokens", 0},
    {"stats", "output_tokens", "output_tokens", 0},
    {"stats", "cached", "cache_read_input_tokens", 0},
    {"stats", "tool_calls", "tool_calls", 0},
};

void
sj_gemini_line(struct sj_state *st, struct sj_out *out, struct json_object *o)
{
	struct sj_event *e;
	size_t n = 0;

	if (sj_is(o, "type", "message"))
		gemini_message(st, out, o);
	else if (sj_is(o, "type", "tool_use"))
		(void)sj_tool(st, out, HOOK_GEMINI,
		    sj_word(o, "tool_id", SJ_ID_SET),
		    sj_word(o, "tool_name", SJ_TOOL_SET),
		    sj_get(o, "parameters"));
	else if (sj_is(o, "type", "tool_result"))
		gemini_result(st, out, o);
	else if (sj_is(o, "type", "init") && sj_str(o, "model", &n) != NULL &&
		 (e = sj_ev_add(out, SJ_MODEL)) != NULL)
		e->se_text = sj_str(o, "model", &e->se_len);
	else if (sj_is(o, "type", "error") &&
		 (e = sj_ev_add(out, SJ_ERROR)) != NULL) {
		e->se_ok = sj_is(o, "severity", "warning");
		e->se_text = sj_str(o, "message", &e->se_len);
	} else if (sj_is(o, "type", "result")) {
		if (!sj_is(o, "status", "success")) {
			sj_ev_add(out, SJ_FLUSH);
			if ((e = sj_ev_add(out, SJ_ERROR)) != NULL) {
				e->se_text =
				    sj_str(sj_get(o, "error"), "message", &n);
				e->se_len = e->se_text != NULL ? n : 0;
			}
		}
		sj_usage(out, o, gemini_usage, nitems(gemini_usage));
	}
}
