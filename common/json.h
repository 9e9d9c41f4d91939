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
 * A payload's declared shape: each key with its JSON type, whether it
 * must be there and its bounds.  json_shape_ok checks o against it in
 * one place, before a handler reads a field: every required key
 * present, every key of o declared, each of the declared type and
 * within its bounds (a string's bytes, without NUL; an integer's value;
 * an array's items).  1 if it fits, else 0.  Patterns and values that
 * depend on state (a known agent, a session's alphabet) stay the
 * handler's.  One row of type JSON_SHAPE_REST lets undeclared keys
 * through, for the tagged payloads a schema of their own reads in full
 * (audit records: audit_schema.c); the shape's comment names it.
 */
#define JSON_SHAPE_REST (-1)
struct json_shape {
	const char *js_key;
	int js_type; /* enum json_type, or JSON_SHAPE_REST */
	int js_required;
	long long js_min;
	long long js_max;
};
/* clang-format off */
#define JS_REQ 1
#define JS_OPT 0
#define JS_STR(key, req, min, max) {(key), json_type_string, (req), (min), (max)}
#define JS_INT(key, req, min, max) {(key), json_type_int, (req), (min), (max)}
#define JS_ARR(key, req, max)	   {(key), json_type_array, (req), 0, (max)}
#define JS_BOOL(key, req)	   {(key), json_type_boolean, (req), 0, 0}
#define JS_OBJ(key, req)	   {(key), json_type_object, (req), 0, 0}
#define JS_REST			   {NULL, JSON_SHAPE_REST, 0, 0, 0}
/* clang-format on */
int json_shape_ok(
    struct json_object *o, const struct json_shape *shape, size_t n);
/*
 * json_shape_ok in its two steps, for a caller that answers each with
 * its own code (the broker's routes): the keys (o an object, every
 * required key there, no leftover), then one row (its key's value, if
 * there, of its type and within its bounds).  1 if it fits, else 0.
 */
int json_shape_keys_ok(
    struct json_object *o, const struct json_shape *shape, size_t n);
int json_shape_row_ok(struct json_object *o, const struct json_shape *js);
/*
 * After json_shape_ok: the string (and its length into *len, if len is
 * not NULL) or the integer at key, which the shape typed and bounded;
 * NULL or dflt when an optional key is absent.
 */
const char *json_shape_str(struct json_object *, const char *key, size_t *len);
long long json_shape_int(struct json_object *, const char *key, long long dflt);

/* Wipe the bytes of every string in the tree, then put it: for trees
 * that held secret values (secrets.yaml).  NULL is fine. */
void json_wipe_put(struct json_object *);

#endif
