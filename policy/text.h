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
/*
 * The one DNS-name rule (RFC 1123): 1..253 bytes of dot-separated labels,
 * each 1..63 of [A-Za-z0-9-] with no '-' at either end.  Callers differ
 * on purpose, by flag:
 *   TEXT_DNS_LOWER   upper case refused: the command gate compares a
 *                    `commands.hosts` entry byte for byte with a URL host
 *                    it has folded, so an entry must be written folded;
 *   TEXT_DNS_NAMED   an all-digit last label refused: egress parses IP
 *                    literals apart (EG-2), so a name never reads as one.
 *                    The gate keeps such hosts ("10.0.0.1") as names: a
 *                    URL host is matched against the list either way.
 */
#define TEXT_DNS_MAX   253
#define TEXT_DNS_LOWER 0x1u
#define TEXT_DNS_NAMED 0x2u
int text_dns_name(const char *s, size_t len, unsigned flags);
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
