/*
 * The strict-validator toolkit shared by the policy parsers: see schema.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "charset.h"
#include "cordon_limits.h"
#include "redact.h"
#include "schema.h"
#include "text.h"
#include "unicode.h"
#include "yamljson.h"

void
schema_err(struct schema *p, struct json_object *at, struct json_object *parent,
    const char *path, const char *msg)
{
	schema_errc(p, at, parent, path, "invalid", msg);
}

void
schema_errc(struct schema *p, struct json_object *at,
    struct json_object *parent, const char *path, const char *code,
    const char *msg)
{
	struct policy_err *e;
	unsigned long l, c;

	if (p->n < p->max) {
		e = &p->errs[p->n];
		if (yaml_mark(at, &l, &c) == -1)
			(void)yaml_mark(parent, &l, &c); /* 0:0 if none */
		e->pe_line = l;
		e->pe_col = c;
		snprintf(e->pe_msg, sizeof(e->pe_msg), "%s%s%s",
		    path ? path : "", path && *path ? ": " : "", msg);
		e->pe_code = code;
	}
	p->n++;
}

char *
schema_dup(struct schema *p, const char *s)
{
	char *d;

	if ((d = strdup(s)) == NULL)
		p->oom = 1;
	return d;
}

int
schema_in_list(const char *const *l, const char *s)
{
	for (; *l != NULL; l++)
		if (strcmp(*l, s) == 0)
			return 1;
	return 0;
}

void
schema_keys(struct schema *p, struct json_object *obj, const char *path,
    const char *const *allowed)
{
	char kpath[160], msg[96];
	const char *near;

	json_object_object_foreach (obj, k, v) {
		if (schema_in_list(allowed, k))
			continue;
		/* A plain name is shown; anything else only classified. */
		if (!schema_token_ok(k, SCHEMA_KEY_SHOW_MAX) ||
		    redact_value_secretish(k)) {
			schema_errc(p, v, obj, path, "unknown-key",
			    "unknown key (name not shown: not a plain name)");
			continue;
		}
		snprintf(kpath, sizeof(kpath), "%s%s%s", path ? path : "",
		    path && *path ? "." : "", k);
		if ((near = text_nearest(k, allowed)) != NULL)
			snprintf(msg, sizeof(msg),
			    "unknown key; did you mean %s?", near);
		else
			snprintf(msg, sizeof(msg), "unknown key");
		schema_errc(p, v, obj, kpath, "unknown-key", msg);
	}
}

int
schema_get(struct json_object *obj, const char *key, struct json_object **v)
{
	return json_object_object_get_ex(obj, key, v);
}

int
schema_key(struct schema *p, struct json_object *obj, const char *key,
    const char *path, int required, struct json_object **v)
{
	if (schema_get(obj, key, v))
		return 1;
	if (required)
		schema_errc(p, NULL, obj, path, "missing", "missing");
	return 0;
}

int
schema_is(struct json_object *v, enum json_type t)
{
	return v != NULL && json_object_is_type(v, t);
}

const char *
schema_string(struct schema *p, struct json_object *v,
    struct json_object *parent, const char *path, size_t *len)
{
	if (!schema_is(v, json_type_string)) {
		schema_errc(
		    p, v, parent, path, "wrong-type", "must be a string");
		return NULL;
	}
	*len = (size_t)json_object_get_string_len(v);
	return json_object_get_string(v);
}

int
schema_chars(struct schema *p, struct json_object *v,
    struct json_object *parent, const char *path, const char *s, size_t len,
    size_t minc, size_t maxc)
{
	size_t n = uni_utf8_chars(s, len);
	char msg[80];

	if (n < minc || n > maxc) {
		snprintf(msg, sizeof(msg), "length must be %zu..%zu characters",
		    minc, maxc);
		schema_errc(p, v, parent, path, "bad-length", msg);
		return -1;
	}
	return 0;
}

int
schema_intval(struct schema *p, struct json_object *v,
    struct json_object *parent, const char *path, long long min, long long max,
    long long *out)
{
	char msg[80];
	long long x;

	if (!schema_is(v, json_type_int)) {
		schema_errc(
		    p, v, parent, path, "wrong-type", "must be an integer");
		return -1;
	}
	x = (long long)json_object_get_int64(v);
	if (x < min || x > max) {
		/* The range, never the value. */
		if (max == INT64_MAX)
			snprintf(
			    msg, sizeof(msg), "must be at least %lld", min);
		else
			snprintf(
			    msg, sizeof(msg), "must be %lld..%lld", min, max);
		schema_errc(p, v, parent, path, "out-of-range", msg);
		return -1;
	}
	*out = x;
	return 0;
}

int
schema_int(struct schema *p, struct json_object *obj, const char *key,
    const char *path, long long min, long long max, long long *out)
{
	struct json_object *v;

	if (!schema_get(obj, key, &v))
		return 0;
	return schema_intval(p, v, obj, path, min, max, out) == 0 ? 1 : -1;
}

int
schema_bool(struct schema *p, struct json_object *obj, const char *key,
    const char *path, int def)
{
	struct json_object *v;

	if (!schema_get(obj, key, &v))
		return def;
	if (!schema_is(v, json_type_boolean)) {
		schema_errc(
		    p, v, obj, path, "wrong-type", "must be true or false");
		return def;
	}
	return json_object_get_boolean(v) ? 1 : 0;
}

int
schema_finish(struct schema *p, struct json_object *root, size_t *nerrs)
{
	if (p->oom)
		schema_err(p, NULL, root, "", "out of memory");
	if (nerrs != NULL)
		*nerrs = p->n;
	return p->n > 0 ? -1 : 0;
}

int
schema_token_ok(const char *s, size_t max)
{
	return charset_shape(
	    s, strlen(s), "a-zA-Z0-9._-", "a-zA-Z0-9._-", 1, max);
}

int
schema_session_ok(const char *s)
{
	return schema_token_ok(s, LIM_SESSION_MAX) && strchr(s, '.') == NULL;
}

int
schema_job_id_ok(const char *s)
{
	return schema_token_ok(s, LIM_JOB_ID_MAX) && strchr(s, '.') == NULL;
}
