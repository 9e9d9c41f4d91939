/*
 * The strict-validator toolkit the policy parsers share (manifests, missions,
 * the gate's `commands:` block): an error collector that records each
 * problem at its YAML line:col as "path: msg", and the small readers over a
 * json-c tree built by yaml_load_*.  Pure: no I/O, no globals.  Messages are
 * fixed phrases with a fixed code; no value of the input is ever quoted, and
 * an unknown key is named only when it is a plain name that does not look
 * like a secret (with the nearest allowed key: "did you mean").
 */
#ifndef CORDON_POLICY_SCHEMA_H
#define CORDON_POLICY_SCHEMA_H

#include <stddef.h>

#include <json-c/json.h>

#include "policy.h"

struct schema {
	struct policy_err *errs; /* the caller's array */
	size_t max;		 /* its size */
	size_t n;		 /* problems seen, counted beyond max */
	int oom;		 /* an allocation failed */
};

#define SCHEMA_INIT(e, m)                                                      \
	{                                                                      \
		.errs = (e), .max = (m), .n = 0, .oom = 0                      \
	}

#define SCHEMA_KEY_SHOW_MAX 64

/* Record "path: msg" with code at the mark of at, else of parent (0:0 if
 * neither).  code is a static string: "unknown-key", "missing",
 * "wrong-type", "bad-length", "out-of-range", "unsupported-value", ... */
void schema_errc(struct schema *, struct json_object *at,
    struct json_object *parent, const char *path, const char *code,
    const char *msg);
/* schema_errc with the code "invalid". */
void schema_err(struct schema *, struct json_object *at,
    struct json_object *parent, const char *path, const char *msg);
/* strdup that sets oom on failure. */
char *schema_dup(struct schema *, const char *);
/* 1 if s is one of the NULL-terminated list l. */
int schema_in_list(const char *const *l, const char *s);
/* "PATH.KEY: unknown key; did you mean K?" for each key of obj not in
 * allowed. */
void schema_keys(struct schema *, struct json_object *obj, const char *path,
    const char *const *allowed);
/* The value at key: 1 present (*v may be NULL for a YAML null), 0 not. */
int schema_get(
    struct json_object *obj, const char *key, struct json_object **v);
/* As schema_get; if absent and required, "missing" is reported. */
int schema_key(struct schema *, struct json_object *obj, const char *key,
    const char *path, int required, struct json_object **v);
/* v is non-NULL and of type t. */
int schema_is(struct json_object *v, enum json_type t);
/* A string node's text and byte length, or NULL (reported). */
const char *schema_string(struct schema *, struct json_object *v,
    struct json_object *parent, const char *path, size_t *len);
/* Valid UTF-8 [s, s + len) has minc..maxc code points: 0, or -1 (reported). */
int schema_chars(struct schema *, struct json_object *v,
    struct json_object *parent, const char *path, const char *s, size_t len,
    size_t minc, size_t maxc);
/* An integer node in [min, max]: 0 and *out, or -1 (reported). */
int schema_intval(struct schema *, struct json_object *v,
    struct json_object *parent, const char *path, long long min, long long max,
    long long *out);
/* The integer at key: 1 stored in *out, 0 absent, -1 refused (reported). */
int schema_int(struct schema *, struct json_object *obj, const char *key,
    const char *path, long long min, long long max, long long *out);
/* The boolean at key: its value; def if absent or refused (reported). */
int schema_bool(struct schema *, struct json_object *obj, const char *key,
    const char *path, int def);
/*
 * The end of a parse: "out of memory" at root if an allocation failed, the
 * count in *nerrs (if not NULL); 0 if nothing was reported, else -1.
 */
int schema_finish(struct schema *, struct json_object *root, size_t *nerrs);
/* s matches ^[A-Za-z0-9._-]{1,max}$ (enum values). */
int schema_token_ok(const char *s, size_t max);
/* API-3: a run's session id, ^[A-Za-z0-9_-]{1,LIM_SESSION_MAX}$ (no dot). */
int schema_session_ok(const char *s);
/* MC-3: a job id, ^[A-Za-z0-9_-]{1,LIM_JOB_ID_MAX}$. */
int schema_job_id_ok(const char *s);

#endif
