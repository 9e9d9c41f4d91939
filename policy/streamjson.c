/*
 * SP-16: Claude Code's stream-json lines to typed events (streamjson.h).
 * Text comes as stream_event deltas (--include-partial-messages) or, when
 * none came, whole in assistant messages; tool calls come whole in
 * assistant messages, their results in user messages.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "hook.h"
#include "json.h"
#include "streamjson.h"
#include "util.h"

static struct json_object *
jget(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (o == NULL || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, k, &v))
		return NULL;
	return v;
}

/* The string at k, and its length; NULL if there is none. */
static const char *
jstr(struct json_object *o, const char *k, size_t *len)
{
	struct json_object *v = jget(o, k);

	if (v == NULL || !json_object_is_type(v, json_type_string))
		return NULL;
	*len = (size_t)json_object_get_string_len(v);
	return json_object_get_string(v);
}

static int
jis(struct json_object *o, const char *k, const char *want)
{
	size_t n;
	const char *s = jstr(o, k, &n);

	return s != NULL && n == strlen(want) && memcmp(s, want, n) == 0;
}

/* The integer at k if it lies in [lo, hi]; else dflt. */
static int
jint(struct json_object *o, const char *k, int lo, int hi, int dflt)
{
	struct json_object *v = jget(o, k);
	int64_t n;

	if (v == NULL || !json_object_is_type(v, json_type_int))
		return dflt;
	n = json_object_get_int64(v);
	return n >= lo && n <= hi ? (int)n : dflt;
}

/* s if it is 1..SJ_ID_MAX bytes of the set, else NULL. */
static const char *
word(const char *s, size_t n, const char *set)
{
	if (s == NULL || n == 0 || n > SJ_ID_MAX || strlen(s) != n ||
	    strspn(s, set) != n)
		return NULL;
	return s;
}

#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

static const char *
jid(struct json_object *o, const char *k)
{
	size_t n = 0;
	const char *s = jstr(o, k, &n);

	return word(s, n, ALNUM "_-");
}

static struct sj_event *
ev_add(struct sj_out *out, enum sj_kind k)
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

/* Text of the answer, after the paragraph break that is due. */
static void
add_text(struct sj_state *st, struct sj_out *out, const char *s, size_t n)
{
	static const char brk[] = "\n\n";
	struct sj_event *e;
	int have, tail;

	if (n == 0)
		return;
	have = st->ss_nl + newlines(s, n, 0);
	if (st->ss_break && st->ss_text && have < 2 &&
	    (e = ev_add(out, SJ_TEXT)) != NULL) {
		e->se_text = brk + have;
		e->se_len = (size_t)(2 - have);
		st->ss_nl = 2 - newlines(s, n, 0);
	}
	st->ss_break = 0;
	if ((e = ev_add(out, SJ_TEXT)) == NULL)
		return;
	e->se_text = s;
	e->se_len = n;
	st->ss_text = 1;
	tail = newlines(s, n, 1);
	if ((size_t)tail == n) /* only newlines: they add to those before */
		tail = st->ss_nl + tail < 2 ? st->ss_nl + tail : 2;
	st->ss_nl = tail;
}

/* A tool_use block: its name, id and what an operator reads first. */
static void
add_tool(struct sj_state *st, struct sj_out *out, struct json_object *c)
{
	struct json_object *in = jget(c, "input");
	const char *name, *key, *s;
	struct sj_event *e;
	size_t n = 0;

	st->ss_break = 1;
	if ((e = ev_add(out, SJ_TOOL)) == NULL)
		return;
	e->se_id = jid(c, "id");
	name = jstr(c, "name", &n);
	name = word(name, n, ALNUM "_.:-");
	e->se_tool = name != NULL ? name : "tool";
	key = name != NULL ? hook_input_key(HOOK_CLAUDE, name) : NULL;
	if (key != NULL && (s = jstr(in, key, &n)) != NULL) {
		e->se_text = s;
		e->se_len = n;
	} else if (in != NULL) {
		e->se_text = json_object_to_json_string_length(in,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		    &n);
		e->se_len = e->se_text != NULL ? n : 0;
	}
}

/* A tool_result block: ok unless is_error, and its (first) text. */
static void
add_result(struct sj_state *st, struct sj_out *out, struct json_object *c)
{
	struct json_object *v = jget(c, "is_error"), *res = jget(c, "content");
	struct sj_event *e;
	size_t i, n = 0;
	const char *s = NULL;

	st->ss_break = 1;
	if ((e = ev_add(out, SJ_TOOL_RESULT)) == NULL)
		return;
	e->se_id = jid(c, "tool_use_id");
	e->se_ok = !(v != NULL && json_object_is_type(v, json_type_boolean) &&
		     json_object_get_boolean(v));
	if (res != NULL && json_object_is_type(res, json_type_string))
		s = jstr(c, "content", &n);
	else if (res != NULL && json_object_is_type(res, json_type_array))
		for (i = 0; s == NULL && i < json_object_array_length(res); i++)
			if (jis(json_object_array_get_idx(res, i), "type",
				"text"))
				s = jstr(json_object_array_get_idx(res, i),
				    "text", &n);
	e->se_text = s;
	e->se_len = s != NULL ? n : 0;
}

/* A message's content blocks: text (unless deltas carried it), tools. */
static void
on_content(struct sj_state *st, struct sj_out *out, struct json_object *msg)
{
	struct json_object *content = jget(msg, "content"), *c;
	const char *s;
	size_t i, n;

	if (content == NULL || !json_object_is_type(content, json_type_array))
		return;
	for (i = 0; i < json_object_array_length(content); i++) {
		c = json_object_array_get_idx(content, i);
		if (jis(c, "type", "text") && !st->ss_delta &&
		    (s = jstr(c, "text", &n)) != NULL)
			add_text(st, out, s, n);
		else if (jis(c, "type", "tool_use"))
			add_tool(st, out, c);
		else if (jis(c, "type", "tool_result"))
			add_result(st, out, c);
	}
}

/* Whole messages: a new one (by id) starts a new paragraph. */
static void
on_assistant(struct sj_state *st, struct sj_out *out, struct json_object *msg)
{
	const char *id = jid(msg, "id");

	if (!st->ss_delta && (id == NULL || strcmp(id, st->ss_msg) != 0)) {
		st->ss_break = 1;
		snprintf(st->ss_msg, sizeof(st->ss_msg), "%s", id ? id : "");
	}
	on_content(st, out, msg);
}

static void
on_stream_event(struct sj_state *st, struct sj_out *out, struct json_object *ev)
{
	struct json_object *d = jget(ev, "delta");
	const char *s;
	size_t n;

	if (jis(ev, "type", "content_block_delta") &&
	    jis(d, "type", "text_delta") && (s = jstr(d, "text", &n)) != NULL) {
		st->ss_delta = 1;
		add_text(st, out, s, n);
	} else if (jis(ev, "type", "message_start"))
		st->ss_break = 1;
	else if (jis(ev, "type", "content_block_start") &&
		 jis(jget(ev, "content_block"), "type", "tool_use"))
		st->ss_break = 1;
	else if (jis(ev, "type", "message_stop"))
		ev_add(out, SJ_FLUSH); /* the scrubber holds lines */
}

static void
on_system(struct sj_state *st, struct sj_out *out, struct json_object *o)
{
	struct sj_event *e;
	const char *s;
	size_t n;

	if (jis(o, "subtype", "init") && (s = jstr(o, "model", &n)) != NULL &&
	    (e = ev_add(out, SJ_MODEL)) != NULL) {
		e->se_text = s;
		e->se_len = n;
	} else if (jis(o, "subtype", "api_retry")) {
		st->ss_retries++;
		if ((e = ev_add(out, SJ_RETRY)) == NULL)
			return;
		e->se_attempt = jint(o, "attempt", 1, 1000, 0);
		e->se_max = jint(o, "max_retries", 1, 1000, 0);
		/* null: no answer came (a connection error) */
		e->se_status = jint(o, "error_status", 100, 599, -1);
		if (jget(o, "error_status") == NULL &&
		    json_object_object_get_ex(o, "error_status", NULL))
			e->se_status = 0;
	}
}

/* The answer is complete: held text first, then the usage numbers. */
static void
on_result(struct sj_out *out, struct json_object *res)
{
	static const char *const top[] = {
	    "duration_ms", "num_turns", "total_cost_usd"};
	static const char *const use[] = {"input_tokens", "output_tokens",
	    "cache_creation_input_tokens", "cache_read_input_tokens"};
	struct json_object *u = jget(res, "usage"), *v;
	struct sj_num *sn;
	size_t i;

	ev_add(out, SJ_FLUSH);
	for (i = 0; i < nitems(top) + nitems(use); i++) {
		v = i < nitems(top) ? jget(res, top[i])
				    : jget(u, use[i - nitems(top)]);
		if (v == NULL ||
		    !(json_object_is_type(v, json_type_int) ||
			(i < nitems(top) &&
			    json_object_is_type(v, json_type_double))))
			continue;
		sn = &out->so_usage[out->so_nusage++];
		sn->sn_name = i < nitems(top) ? top[i] : use[i - nitems(top)];
		sn->sn_double = json_object_is_type(v, json_type_double);
		if (sn->sn_double)
			sn->sn_dbl = json_object_get_double(v);
		else
			sn->sn_int = json_object_get_int64(v);
	}
	ev_add(out, SJ_USAGE);
}

void
sj_init(struct sj_state *st)
{
	memset(st, 0, sizeof(*st));
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
	if (jis(o, "type", "stream_event"))
		on_stream_event(st, out, jget(o, "event"));
	else if (jis(o, "type", "assistant"))
		on_assistant(st, out, jget(o, "message"));
	else if (jis(o, "type", "user"))
		on_content(st, out, jget(o, "message"));
	else if (jis(o, "type", "system"))
		on_system(st, out, o);
	else if (jis(o, "type", "result"))
		on_result(out, o);
	return 0;
}

void
sj_out_free(struct sj_out *out)
{
	json_object_put(out->so_obj);
	out->so_obj = NULL;
	out->so_n = out->so_nusage = 0;
}
