/*
 * What manifest.c shares with the files that validate parts of a
 * manifest (manifest_actions.c); not for callers, who see manifest.h.
 */
#ifndef CORDON_MANIFEST_PARSE_H
#define CORDON_MANIFEST_PARSE_H

#include <stddef.h>

#include <json-c/json.h>

#include "manifest.h"
#include "schema.h"

#define S_NOCTL 1 /* no control characters at all */
#define S_NONL	2 /* no \n \r (SP-2) */
#define S_TEXT	4 /* no control characters but \n and \t */

/* manifest.c: a string at key (NULL: absent or refused, said), one of
 * vals (its index, or def), an argv-like list (SP-2),
 * the "{prompt}" references in s. */
char *mp_str(struct schema *, struct json_object *obj, const char *key,
    const char *path, int required, size_t minc, size_t maxc, int flags);
int mp_enum(struct schema *, struct json_object *obj, const char *key,
    const char *path, const char *const *vals, int def);
char **mp_argv(struct schema *, const struct manifest *, struct json_object *v,
    struct json_object *parent, const char *path, int nonempty, size_t *np);
char **mp_command(struct schema *, const struct manifest *,
    struct json_object *v, struct json_object *parent, const char *path,
    size_t *np);
size_t mp_prompt_refs(const char *s);

/* manifest_actions.c: `probe:` and `actions:` */
void mp_probe(struct schema *, struct manifest *, struct json_object *root);
void mp_actions(struct schema *, struct manifest *, struct json_object *root);

#endif
