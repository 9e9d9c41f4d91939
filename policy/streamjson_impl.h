/*
 * SP-16: what the per-format decoders of streamjson.c and
 * streamjson_cli.c share: typed reads of a line's JSON, the event list,
 * the answer's paragraphs, tool input summaries and usage numbers.
 * Private to policy/.
 */
#ifndef CORDON_POLICY_STREAMJSON_IMPL_H
#define CORDON_POLICY_STREAMJSON_IMPL_H

#include "hook.h"
#include "streamjson.h"

#define SJ_ALNUM                                                               \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
#define SJ_ID_SET   SJ_ALNUM "_-"
#define SJ_TOOL_SET SJ_ALNUM "_.:-"

struct json_object *sj_get(struct json_object *, const char *key);
/* The string at key and its length; NULL if there is none. */
const char *sj_str(struct json_object *, const char *key, size_t *len);
int sj_is(struct json_object *, const char *key, const char *want);
/* The integer at key if it lies in [lo, hi]; else dflt. */
int sj_int(struct json_object *, const char *key, int lo, int hi, int dflt);
/* The string at key if it is 1..SJ_ID_MAX bytes of set, else NULL. */
const char *sj_word(struct json_object *, const char *key, const char *set);

/* A new event of the line, or NULL once SJ_EVENTS_MAX are there. */
struct sj_event *sj_ev_add(struct sj_out *, enum sj_kind);
/* Text of the answer, after the paragraph break that is due. */
void sj_text(struct sj_state *, struct sj_out *, const char *, size_t);
/*
 * A tool call of cli: its name (or "tool"), its id, and as its text
 * the input's shell line or path (hook_input_key) or else the input as
 * compact JSON.  Text that follows starts a new paragraph.
 */
struct sj_event *sj_tool(struct sj_state *, struct sj_out *, enum hook_cli,
    const char *id, const char *name, struct json_object *input);
/* A tool's result: ok or not, and its text (may be NULL). */
struct sj_event *sj_result(struct sj_state *, struct sj_out *, const char *id,
    int ok, const char *text, size_t len);

/* One usage number: parent (NULL: the object itself) . key -> name. */
struct sj_usage_key {
	const char *uk_parent;
	const char *uk_key;
	const char *uk_name;
	int uk_double; /* a fractional value is kept too */
};
/* Flush, then the numbers of o that the table names, then SJ_USAGE. */
void sj_usage(struct sj_out *, struct json_object *o,
    const struct sj_usage_key *, size_t n);

void sj_codex_line(struct sj_state *, struct sj_out *, struct json_object *);
void sj_gemini_line(struct sj_state *, struct sj_out *, struct json_object *);

#endif
