/*
 * Strict JSON for untrusted input (IPC payloads, HTTP bodies) and typed
 * field getters.  Built on json-c; see json.c for what json-c alone lets
 * through and how it is closed.
 */
#ifndef CORDON_JSON_H
#define CORDON_JSON_H

#include <stddef.h>

struct json_object;

#define JSON_MAX_DEPTH 16
/* The deepest nesting json_parse_object accepts at all (its lexer's stack). */
#define JSON_LEX_DEPTH 64

/*
 * Parse exactly one JSON object from buf: strict RFC 8259 (no single
 * quotes, comments, NaN/Infinity, raw control bytes in strings), strict
 * UTF-8, at most depth levels, no trailing bytes.  NULL if anything is off.
 */
struct json_object *json_parse_object(const char *buf, size_t len, int depth);

/* The string at key, if it is one, has no NUL and is <= maxlen bytes. */
const char *json_get_str(struct json_object *, const char *key, size_t maxlen);
/* The integer at key within [min, max]: 0, else -1. */
int json_get_int(struct json_object *, const char *key, long long min,
    long long max, long long *out);

/*
 * A payload's declared shape: each key with its JSON type and whether it
 * must be there.  json_shape_ok checks o against it in one place, before
 * a handler reads a field: every required key present, every key of o
 * declared, each of the declared type.  1 if it fits, else 0.  Values
 * (bounds, patterns) are the handler's to check.
 */
struct json_shape {
	const char *js_key;
	int js_type; /* enum json_type */
	int js_required;
};
int json_shape_ok(
    struct json_object *o, const struct json_shape *shape, size_t n);

/* Wipe the bytes of every string in the tree, then put it: for trees
 * that held secret values (secrets.yaml).  NULL is fine. */
void json_wipe_put(struct json_object *);

#endif
