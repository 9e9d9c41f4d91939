/*
 * Streaming scrubber (SP-11): every resolved secret value and DATA.md's
 * pattern set -> "***", then /home/<user>/ -> "~/".  Line-based (a line
 * is held until its '\n'), except secret values, which are caught across
 * any split.  Pure but for malloc; POSIX <regex.h> for patterns.
 */
#ifndef CORDON_REDACT_H
#define CORDON_REDACT_H

#include <stddef.h>

struct evbuffer;
struct redact;

#define REDACT_MASK "***"

/*
 * secrets: resolved values (copied; empty ones ignored).  NULL on
 * allocation or regex failure: the caller must then refuse to emit.
 */
struct redact *redact_new(const char *const *secrets, size_t n);
void redact_feed(
    struct redact *, const char *in, size_t len, struct evbuffer *out);
/*
 * Flush the held partial line (scrubbed).  Call once at the end: a tail
 * of >= 4 bytes that is the head of a secret (cut by a byte cap) is
 * masked too, as is one just before the cleaner's " … [+N chars]".
 */
void redact_finish(struct redact *, struct evbuffer *out);
/* Wipes the secret copies. */
void redact_free(struct redact *);

/* One-shot: scrub buf into out.  0, or -1. */
int redact_buf(const char *const *secrets, size_t n, const char *in, size_t len,
    struct evbuffer *out);

/*
 * Shared "looks like a secret" rules (also used by policy/ to refuse
 * secrets in manifests and to redact argv for audit):
 * redact_value_secretish: s contains something the pattern set would
 * scrub (PEM header, JWT, Bearer token, AWS key id, Slack, GitHub,
 * provider prefixes, a run of 40+ [A-Za-z0-9_-], secret-looking
 * key=value).  redact_key_secretish: DATA.md's secret-looking name rule
 * (token, api_key, secret, password, ..., *_pat, *_dsn, db URLs),
 * case-insensitive.  1 yes, 0 no.
 */
int redact_value_secretish(const char *s);
int redact_key_secretish(const char *key, size_t len);

#endif
