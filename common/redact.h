/*
 * Streaming scrubber (SP-11): every resolved secret value (also reversed,
 * %-encoded, hex, base64, and with ignorable characters between its
 * characters) and DATA.md's pattern set -> "***", then /home/<user>/ ->
 * "~/".  Line-based (a line is held until its '\n'), except secret values,
 * which are caught across any split and line; redact_flush_partial lets a
 * held line's settled head out early, with the same bytes in the end.
 * Pure but for malloc.
 */
#ifndef CORDON_REDACT_H
#define CORDON_REDACT_H

#include <stddef.h>

struct clean;
struct evbuffer;
struct redact;
struct redact_keys;

#define REDACT_MASK "***"

/*
 * The known values of one secret resolution: secrets are the resolved
 * values (copied; empty ones ignored), every form of each derived here,
 * once, for every redactor of that run, action or gate call.  Read-only
 * once made, so shared freely; it must outlive every redactor made from
 * it.  NULL on allocation failure.
 */
struct redact_keys *redact_keys_new(const char *const *secrets, size_t n);
/* Wipes the values and their forms.  NULL is fine. */
void redact_keys_free(struct redact_keys *);

/*
 * keys: as redact_keys_new made them, or NULL for none (the patterns and
 * home paths only).  NULL on allocation failure, or for a value over half
 * the line hold (32 KiB): the caller must then refuse to emit.
 */
struct redact *redact_new(const struct redact_keys *keys);
void redact_feed(
    struct redact *, const char *in, size_t len, struct evbuffer *out);
/*
 * clean_feed (SP-10) of in into tmp, then redact_feed of what came out,
 * as one: the same bytes in out as those two calls on the same chunks
 * (and the same early flushes).  Complete lines of plain text that
 * neither changes, found in one pass over in (rd_lane), go straight to
 * out; the rest goes through the two, a line or more at a time.  tmp is
 * the cleaner's scratch buffer, empty between calls.
 */
void redact_clean_feed(struct redact *, struct clean *, const char *in,
    size_t len, struct evbuffer *tmp, struct evbuffer *out);
/*
 * Early flush (streaming): emit the scrubbed head of the held partial line
 * when no continuation can change how that head is scrubbed (it ends in a
 * blank, no secret, PEM block, clamp marker, Bearer, header value or
 * secret-looking key is open across the cut; conservative: it may hold
 * more than needed, never less).  Call at any point, as often as wanted:
 * whatever the chunks and wherever the calls, the bytes emitted in all
 * are those of redact_feed/redact_finish alone.
 */
void redact_flush_partial(struct redact *, struct evbuffer *out);
/*
 * Flush the held partial line (scrubbed).  Call once at the end: a tail
 * of >= 4 bytes that is the head of a secret (cut by a byte cap) is
 * masked too, as is one just before the cleaner's " … [+N chars]".
 */
void redact_finish(struct redact *, struct evbuffer *out);
/*
 * The stream was cut short (a byte cap): at redact_finish a token-like
 * run of 8 or more bytes at its very end goes too, as one before the
 * cleaner's clamp marker always does (a key cut shorter than its pattern).
 */
void redact_cut(struct redact *);
/* Wipes what it held; the keys stay. */
void redact_free(struct redact *);

/* One-shot: scrub buf into out (cut: as redact_cut).  0, or -1. */
int redact_buf(const struct redact_keys *keys, const char *in, size_t len,
    int cut, struct evbuffer *out);

/*
 * Shared "looks like a secret" rules (also used by policy/ to refuse
 * secrets in manifests and to redact argv for audit):
 * redact_value_secretish: s contains something the pattern set would
 * scrub (PEM header, JWT, Bearer token, AWS key id, Slack, GitHub,
 * provider prefixes, secret-looking key=value; and, unlike output, a
 * bare run of 40+ [A-Za-z0-9_-] and any Bearer token).  redact_key_secretish:
 * DATA.md's secret-looking name rule (token, api_key, secret, password, ...,
 * *_pat, *_dsn, db URLs), case-insensitive.  1 yes, 0 no.
 */
int redact_value_secretish(const char *s);
int redact_key_secretish(const char *key, size_t len);

#endif
