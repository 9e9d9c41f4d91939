/*
 * YAML -> json-c loader.  Config, manifests and missions are YAML files
 * read by trusted processes; the loader turns one document into a json-c
 * tree so every validator works on one representation.
 *
 * Strict: one document, mappings with scalar keys, no duplicate keys, no
 * anchors/aliases, no tags other than the core ones.  Plain scalars stay
 * strings unless they are YAML 1.2 core ints/floats/bools/null.
 */
#ifndef CORDON_YAMLJSON_H
#define CORDON_YAMLJSON_H

#include <stddef.h>

struct json_object;

struct yaml_err {
	unsigned long ye_line; /* 1-based; 0 if unknown */
	unsigned long ye_col;  /* 1-based */
	char ye_msg[160];      /* neutral: never echoes document content */
};

/* Returns a new json-c object (caller puts it) or NULL with *err filled. */
struct json_object *yaml_load_buf(
    const char *buf, size_t len, struct yaml_err *err);
struct json_object *yaml_load_file(const char *path, struct yaml_err *err);
/* The same for secrets.yaml: libyaml's copies of the input and of every
 * scalar are wiped before they are freed.  Put the result with
 * json_wipe_put(). */
struct json_object *yaml_load_secret(
    const char *buf, size_t len, struct yaml_err *err);

/*
 * Where a loaded node came from (a mapping value: where its key is), so
 * validators can report "file:line:col".  -1 and 0:0 when unknown (a
 * null value is a NULL json_object and carries no mark).
 */
int yaml_mark(struct json_object *, unsigned long *line, unsigned long *col);

#endif
