/*
 * SP-16: the decoders' shared steps (streamjson_impl.h), Claude Code's
 * stream-json, and the choice of decoder by format (streamjson.h).
 * Claude Code's text comes as stream_event deltas
 * (--include-partial-messages) or, when none came, whole in assistant
 * messages; tool calls come whole in assistant messages, their results
 * in user messages.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "hook.h"
#include "json.h"
#include "streamjson_impl.h"
#include "util.h"

struct json_object *
sj_get(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (o == NULL || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, k, &v))
		return NULL;
	return v;
}

const char *
sj_str(struct json_object *o, const char *k, size_t *len)
{
	struct json_object *v = sj_get(o, k);

	if (v == NULL || !json_object_is_type(v, json_type_string))
		return NULL;
	*len = (size_t)json_object_get_string_len(v);
	return json_object_get_string(v);
}

int
sj_is(struct json_object *o, const char *k, const char *want)
{
	size_t n;
	const char *s = sj_str(o, k, &n);

	return s != NULL && n == strlen(want) && memcmp(s, want, n) == 0;
}

int
sj_int(struct json_object *o, const char *k, int lo, int hi, int dflt)
{
	struct json_object *v = sj_get(o, k);
	int64_t n;

	if (v == NULL || !json_object_is_type(v, json_type_int))
		return dflt;
	n = json_object_get_int64(v);
	return n >= lo && n <= hi ? (int)n : dflt;
}

const char *
sj_word(struct json_object *o, const char *k, const char *set)
{
	size_t n = 0;
	const char *s = sj_str(o, k, &n);

	if (s == NULL || n == 0 || n > SJ_ID_MAX || strlen(s) != n ||
	    strspn(s, set) != n)
		return NULL;
	return s;
}

struct sj_event *
sj_ev_add(struct sj_out *out, enum sj_kind k)
{
	struct sj_event *e;

	if (out->so_n == SJ_EVENTS_MAX)
		return NULL;
	e = &out->so_ev[out->so_n++];
	memset(e, 0, sizeof(*e));
	e->se_kind = k;
	return e;
}

static int
newlines(const char *s, size_t n, int from_end)
{
	int i = 0;

	while ((size_t)i < n && i < 2 &&
	       s[from_end ? n - 1 - i : (size_t)i] == '\n')
		i++;
	return i;
}

void
sj_text(struct sj_state *st, struct sj_out *out, const char *s, size_t n)
{
	static const char brk[] = "\n\n";
	struct sj_event *e;
	int have, tail;

	if (n == 0)
		return;
	have = st->ss_nl + newlines(s, n, 0);
	if (st->ss_break && st->ss_text && have < 2 &&
	    (e = sj_ev_add(out, SJ_TEXT)) != NULL) {
		e->se_text = brk + have;
		e->se_len = (size_t)(2 - have);
		st->ss_nl = 2 - newlines(s, n, 0);
	}
	st->ss_break = 0;
	if ((e = sj_ev_add(out, SJ_TEXT)) == NULL)
		return;
	e->se_text = s;
	e->se_len = n;
	st->ss_text = 1;
	tail = newlines(s, n, 1);
	if ((size_t)tail == n) /* only newlines: they add to those before */
		tail = st->ss_nl + tail < 2 ? st->ss_nl + tail : 2;
	st->ss_nl = tail;
}

struct sj_event *
sj_tool(struct sj_state *st, struct sj_out *out, enum hook_cli cli,
    const char *id, const char *name, struct json_object *in)
{
	const char *key, *s;
	struct sj_event *e;
	size_t n = 0;

	st->ss_break = 1;
	if ((e = sj_ev_add(out, SJ_TOOL)) == NULL)
		return NULL;
	e->se_id = id;
	e->se_tool = name != NULL ? name : "tool";
	key = name != NULL ? hook_input_key(cli, name) : NULL;
	if (key != NULL && (s = sj_str(in, key, &n)) != NULL) {
		e->se_text = s;
		e->se_len = n;
	} else if (in != NULL) {
		e->se_text = json_object_to_json_string_length(in,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		    &n);
		e->se_len = e->se_text != NULL ? n : 0;
	}
	return e;
}

struct sj_event *
sj_result(struct sj_state *st, struct sj_out *out, const char *id, int ok,
    const char *s, size_t n)
{
	struct sj_event *e;

	st->ss_break = 1;
	if ((e = sj_ev_add(out, SJ_TOOL_RESULT)) == NULL)
		return NULL;
	e->se_id = id;
	e->se_ok = ok;
	e->se_text = s;
	e->se_len = s != NULL ? n : 0;
	return e;
}

void
sj_usage(struct sj_out *out, struct json_object *o,
    const struct sj_usage_key *t, size_t nt)
{
	struct json_object *v;
	struct sj_num *sn;
	size_t i;

	sj_ev_add(out, SJ_FLUSH);
	for (i = 0; i < nt && out->so_nusage < SJ_USAGE_MAX; i++) {
		v = sj_get(
		    t[i].uk_parent != NULL ? sj_get(o, t[i].uk_parent) : o,
		    t[i].uk_key);
		if (v == NULL || !(json_object_is_type(v, json_type_int) ||
				     (t[i].uk_double && json_object_is_type(v,
							    json_type_double))))
			continue;
		sn = &out->so_usage[out->so_nusage++];
		sn->sn_name = t[i].uk_name;
		sn->sn_double = json_object_is_type(v, json_type_double);
		if (sn->sn_double)
			sn->sn_dbl = json_object_get_double(v);
		else
			sn->sn_int = json_object_get_int64(v);
	}
	sj_ev_add(out, SJ_USAGE);
}

/* A tool_use block: its name, id and what an operator reads first. */
static void
add_tool(struct sj_state *st, struct sj_out *out, struct json_object *c)
{
	(void)sj_tool(st, out, HOOK_CLAUDE, sj_word(c, "id", SJ_ID_SET),
	    sj_word(c, "name", SJ_TOOL_SET), sj_get(c, "input"));
}

/* A tool_result block: ok unless is_error, and its (first) text. */
static void
add_result(struct sj_state *st, struct sj_out *out, struct json_object *c)
{
	struct json_object *v = sj_get(c, "is_error"), *res, *b;
	size_t i, n = 0;
	const char *s = NULL;

	res = sj_get(c, "content");
	if (res != NULL && json_object_is_type(res, json_type_string))
		s = sj_str(c, "content", &n);
	else if (res != NULL && json_object_is_type(res, json_type_array))
		for (i = 0; s == NULL && i < json_object_array_length(res);
		     i++) {
			b = json_object_array_get_idx(res, i);
			if (sj_is(b, "type", "text"))
				s = sj_str(b, "text", &n);
		}
	(void)sj_result(st, out, sj_word(c, "tool_use_id", SJ_ID_SET),
	    !(v != NULL && json_object_is_type(v, json_type_boolean) &&
		json_object_get_boolean(v)),
	    s, n);
}

/* A message's content blocks: text (unless deltas carried it), tools. */
static void
on_content(struct sj_state *st, struct sj_out *out, struct json_object *msg)
{
	struct json_object *content = sj_get(msg, "content"), *c;
	const char *s;
	size_t i, n;

	if (content == NULL || !json_object_is_type(content, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(content); i++) {
		c = json_object_array_get_idx(content, i);
		if (sj_is(c, "type", "text") && !st->ss_delta &&
		    (s = sj_str(c, "text", &n)) != NULL)
			sj_text(st, out, s, n);
		else if (sj_is(c, "type", "tool_use"))
			add_tool(st, out, c);
		else if (sj_is(c, "type", "tool_result"))
			add_result(st, out, c);
	}
}

/* Whole messages: a new one (by id) starts a new paragraph. */
static void
on_assistant(struct sj_state *st, struct sj_out *out, struct json_object *msg)
{
	const char *id = sj_word(msg, "id", SJ_ID_SET);

	if (!st->ss_delta && (id == NULL || strcmp(id, st->ss_msg) != 0)) {
		st->ss_break = 1;
		snprintf(st->ss_msg, sizeof(st->ss_msg), "%s", id ? id : "");
	}
	on_content(st, out, msg);
}

static void
on_stream_event(struct sj_state *st, struct sj_out *out, struct json_object *ev)
{
	struct json_object *d = sj_get(ev, "delta");
	const char *s;
	size_t n;

	if (sj_is(ev, "type", "content_block_delta") &&
	    sj_is(d, "type", "text_delta") &&
	    (s = sj_str(d, "text", &n)) != NULL) {
		st->ss_delta = 1;
		sj_text(st, out, s, n);
	} else if (sj_is(ev, "type", "message_start"))
		st->ss_break = 1;
	else if (sj_is(ev, "type", "content_block_start") &&
		 sj_is(sj_get(ev, "content_block"), "type", "tool_use"))
		st->ss_break = 1;
	else if (sj_is(ev, "type", "message_stop"))
		sj_ev_add(out, SJ_FLUSH); /* the scrubber holds lines */
}

static void
on_system(struct sj_state *st, struct sj_out *out, struct json_object *o)
{
	struct sj_event *e;
	const char *s;
	size_t n;

	if (sj_is(o, "subtype", "init") &&
	    (s = sj_str(o, "model", &n)) != NULL &&
	    (e = sj_ev_add(out, SJ_MODEL)) != NULL) {
		e->se_text = s;
		e->se_len = n;
	} else if (sj_is(o, "subtype", "api_retry")) {
		st->ss_retries++;
		if ((e = sj_ev_add(out, SJ_RETRY)) == NULL)
			return;
		e->se_attempt = sj_int(o, "attempt", 1, 1000, 0);
		e->se_max = sj_int(o, "max_retries", 1, 1000, 0);
		/* null: no answer came (a connection error) */
		e->se_status = sj_int(o, "error_status", 100, 599, -1);
		if (sj_get(o, "error_status") == NULL &&
		    json_object_object_get_ex(o, "error_status", NULL))
			e->se_status = 0;
	}
}

/* The answer is complete: held text first, then the usage numbers. */
static const struct sj_usage_key claude_usage[] = {
    {NULL, "duration_ms", "duration_ms", 1},
    {NULL, "num_turns", "num_turns", 1},
    {NULL, "total_cost_usd", "total_cost_usd", 1},
    {"usage", "input_tokens", "input_tokens", 0},
    {"usage", "output_tokens", "output_tokens", 0},
    {"usage", "cache_creation_input_tokens", "cache_creation_input_tokens", 0},
    {"usage", "cache_read_input_tokens", "cache_read_input_tokens", 0},
};

static void
claude_line(struct sj_state *st, struct sj_out *out, struct json_object *o)
{
	if (sj_is(o, "type", "stream_event"))
		on_stream_event(st, out, sj_get(o, "event"));
	else if (sj_is(o, "type", "assistant"))
		on_assistant(st, out, sj_get(o, "message"));
	else if (sj_is(o, "type", "user"))
		on_content(st, out, sj_get(o, "message"));
	else if (sj_is(o, "type", "system"))
		on_system(st, out, o);
	else if (sj_is(o, "type", "result"))
		sj_usage(out, o, claude_usage, nitems(claude_usage));
}

/* One decoder per format: the manifest's transport picks it. */
static void (*const decoders[])(
    struct sj_state *, struct sj_out *, struct json_object *) = {
    [SJ_CLAUDE] = claude_line,
    [SJ_CODEX] = sj_codex_line,
    [SJ_GEMINI] = sj_gemini_line,
};

void
sj_init(struct sj_state *st, enum sj_format f)
{
	memset(st, 0, sizeof(*st));
	st->ss_format = (size_t)f < nitems(decoders) ? f : SJ_CLAUDE;
}

int
sj_decode(struct sj_state *st, const char *line, size_t len, struct sj_out *out)
{
	struct json_object *o;

	memset(out, 0, sizeof(*out));
	if (len > SJ_LINE_MAX ||
	    (o = json_parse_object(line, len, SJ_DEPTH)) == NULL)
		return -1;
	out->so_obj = o;
	decoders[st->ss_format](st, out, o);
	return 0;
}

void
sj_out_free(struct sj_out *out)
{
	json_object_put(out->so_obj);
	out->so_obj = NULL;
	out->so_n = out->so_nusage = 0;
}
