/*
 * Small pure text helpers shared by the policy rules (and by daemons
 * that need the same counting): ASCII case-insensitive span compare,
 * UTF-8 code point counting and the nearest known word.  No I/O, no
 * allocation.
 */
#ifndef CORDON_POLICY_TEXT_H
#define CORDON_POLICY_TEXT_H

#include <stddef.h>

/* Span [s, s + len) equals the literal lit, ignoring ASCII case. */
int text_span_ci_eq(const char *s, size_t len, const char *lit);
/* dst = [s, s + len) with ASCII upper case lowered, then a NUL (dst holds
 * len + 1 bytes): the one way a host name is folded. */
void text_lower_copy(char *dst, const char *s, size_t len);
/* Code points in a valid UTF-8 span (the bytes that are not continuations). */
size_t text_utf8_chars(const char *s, size_t len);
/* Bytes of the longest head of the span holding at most chars code
 * points (never a part of one). */
size_t text_utf8_prefix(const char *s, size_t len, size_t chars);

#define TEXT_NEAR_MAX 40
/*
 * "Did you mean": the candidate of the NULL-terminated list nearest to
 * word (edit distance, ASCII case folded, at most a third of the word; a
 * word that begins a candidate counts as near), or NULL if none is near.
 */
const char *text_nearest(const char *word, const char *const *cands);

#endif
