/*
 * The one place cordon turns untrusted bytes into JSON and reads fields
 * back out: a strict object parser on top of json-c, and typed getters
 * that refuse wrong types, embedded NULs and out-of-range values.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include "json.h"
#include "util.h"

/*
 * json-c's strict mode still lets through single-quoted keys, NaN and
 * Infinity, and raw control bytes in strings, and its UTF-8 check admits
 * overlongs and surrogates.  A lexical pass (not a parser) closes those
 * before json-c sees the bytes: strict UTF-8, no raw byte < 0x20 inside a
 * string and no escaped NUL in a key (json-c would cut the key there; a
 * value's NUL is refused by json_get_str), and outside strings only the
 * characters JSON grammar uses.  It
 * also counts the keys as written, so that a duplicate key (which json-c
 * keeps silently, the last one winning) can be refused after the parse.
 */
static int
json_lex_ok(const char *buf, size_t len, size_t *nkeys)
{
	char stack[JSON_LEX_DEPTH];
	size_t i, top = 0;
	int instr = 0, inkey = 0, esc = 0, want_key = 0;
	unsigned char ch;

	*nkeys = 0;
	if (!utf8_valid(buf, len))
		return 0;
	for (i = 0; i < len; i++) {
		ch = (unsigned char)buf[i];
		if (instr) {
			if (ch < 0x20)
				return 0;
			if (esc) {
				esc = 0;
				if (inkey && ch == 'u' && len - i > 4 &&
				    memcmp(buf + i + 1, "0000", 4) == 0)
					return 0;
			} else if (ch == '\\')
				esc = 1;
			else if (ch == '"')
				instr = 0;
			continue;
		}
		switch (ch) {
		case '"':
			instr = 1;
			inkey = want_key && top > 0 && stack[top - 1] == '{';
			if (inkey)
				(*nkeys)++;
			want_key = 0;
			continue;
		case '{':
		case '[':
			if (top == sizeof(stack))
				return 0;
			stack[top++] = (char)ch;
			want_key = ch == '{';
			continue;
		case '}':
		case ']':
			if (top == 0)
				return 0;
			top--;
			continue;
		case ',':
			want_key = top > 0 && stack[top - 1] == '{';
			continue;
		}
		if (strchr(" \t\n\r:-+.0123456789eEtrufalsn", ch) == NULL ||
		    ch == '\0')
			return 0;
	}
	return !instr;
}

/* Keys in the parsed tree (a duplicate key leaves fewer than written). */
static size_t
json_keys(struct json_object *o, int depth)
{
	size_t i, n, k = 0;

	if (depth > JSON_LEX_DEPTH)
		return 0;
	switch (json_object_get_type(o)) {
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			k += json_keys(
			    json_object_array_get_idx(o, i), depth + 1);
		return k;
	case json_type_object: {
		json_object_object_foreach (o, key, val) {
			(void)key;
			k += 1 + json_keys(val, depth + 1);
		}
		return k;
	}
	default:
		return 0;
	}
}

/* Numbers must be finite: refuse nan/inf however json-c spelled them. */
static int
json_finite(struct json_object *o, int depth)
{
	size_t i, n;

	if (depth > JSON_MAX_DEPTH)
		return 0;
	switch (json_object_get_type(o)) {
	case json_type_double:
		return isfinite(json_object_get_double(o));
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			if (!json_finite(
				json_object_array_get_idx(o, i), depth + 1))
				return 0;
		return 1;
	case json_type_object: {
		json_object_object_foreach (o, key, val) {
			(void)key;
			if (!json_finite(val, depth + 1))
				return 0;
		}
		return 1;
	}
	default:
		return 1;
	}
}

struct json_object *
json_parse_object(const char *buf, size_t len, int depth)
{
	struct json_tokener *tok;
	struct json_object *obj;
	size_t nkeys;

	if (len < 2 || len > INT_MAX || depth > JSON_LEX_DEPTH ||
	    !json_lex_ok(buf, len, &nkeys))
		return NULL;
	if ((tok = json_tokener_new_ex(depth)) == NULL)
		return NULL;
	json_tokener_set_flags(
	    tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	if (obj == NULL ||
	    json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len ||
	    !json_object_is_type(obj, json_type_object) ||
	    !json_finite(obj, 0) || json_keys(obj, 0) != nkeys) {
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

const char *
json_get_str(struct json_object *o, const char *key, size_t maxlen)
{
	struct json_object *v;
	const char *s;
	int len;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	s = json_object_get_string(v);
	len = json_object_get_string_len(v);
	if (len < 0 || (size_t)len > maxlen || strlen(s) != (size_t)len)
		return NULL;
	return s;
}

int
json_get_int(struct json_object *o, const char *key, long long min,
    long long max, long long *out)
{
	struct json_object *v;
	int64_t x;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return -1;
	errno = 0;
	x = json_object_get_int64(v);
	if (errno != 0 || x < min || x > max)
		return -1;
	*out = x;
	return 0;
}

/* One declared value within its bounds: 1, else 0. */
static int
json_shape_value(struct json_object *v, const struct json_shape *js)
{
	long long x;
	size_t len;

	if (!json_object_is_type(v, (enum json_type)js->js_type))
		return 0;
	switch (js->js_type) {
	case json_type_string:
		len = (size_t)json_object_get_string_len(v);
		return (long long)len >= js->js_min &&
		       (long long)len <= js->js_max &&
		       memchr(json_object_get_string(v), '\0', len) == NULL;
	case json_type_int:
		errno = 0;
		x = json_object_get_int64(v);
		return errno == 0 && x >= js->js_min && x <= js->js_max;
	case json_type_array:
		return (long long)json_object_array_length(v) <= js->js_max;
	default:
		return 1;
	}
}

int
json_shape_keys_ok(
    struct json_object *o, const struct json_shape *shape, size_t n)
{
	size_t i, seen = 0;
	int rest = 0;

	if (o == NULL || !json_object_is_type(o, json_type_object))
		return 0;
	for (i = 0; i < n; i++) {
		if (shape[i].js_type == JSON_SHAPE_REST)
			rest = 1;
		else if (json_object_object_get_ex(o, shape[i].js_key, NULL))
			seen++;
		else if (shape[i].js_required)
			return 0;
	}
	/* Leftovers: a key the shape does not declare. */
	return rest || (size_t)json_object_object_length(o) == seen;
}

int
json_shape_row_ok(struct json_object *o, const struct json_shape *js)
{
	struct json_object *v;

	if (js->js_type == JSON_SHAPE_REST)
		return 1;
	if (!json_object_object_get_ex(o, js->js_key, &v))
		return !js->js_required;
	return json_shape_value(v, js);
}

int
json_shape_ok(struct json_object *o, const struct json_shape *shape, size_t n)
{
	size_t i;

	if (!json_shape_keys_ok(o, shape, n))
		return 0;
	for (i = 0; i < n; i++)
		if (!json_shape_row_ok(o, &shape[i]))
			return 0;
	return 1;
}

const char *
json_shape_str(struct json_object *o, const char *key, size_t *len)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	if (len != NULL)
		*len = (size_t)json_object_get_string_len(v);
	return json_object_get_string(v);
}

long long
json_shape_int(struct json_object *o, const char *key, long long dflt)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return dflt;
	return json_object_get_int64(v);
}

static void
json_wipe(struct json_object *o, int depth)
{
	size_t i, n;

	/* Deeper than any loader builds (YAML: 32, JSON: 16). */
	if (o == NULL || depth > 64)
		return;
	switch (json_object_get_type(o)) {
	case json_type_string:
		/* json-c's own buffer; its length is the string's. */
		explicit_bzero((char *)(uintptr_t)json_object_get_string(o),
		    (size_t)json_object_get_string_len(o));
		break;
	case json_type_object: {
		json_object_object_foreach (o, k, v) {
			(void)k;
			json_wipe(v, depth + 1);
		}
		break;
	}
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			json_wipe(json_object_array_get_idx(o, i), depth + 1);
		break;
	default:
		break;
	}
}

void
json_wipe_put(struct json_object *o)
{
	json_wipe(o, 0);
	json_object_put(o);
}
