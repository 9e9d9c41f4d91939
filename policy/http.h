/*
 * Pure HTTP perimeter rules (PER-2, PER-3, PER-4, PER-5, PER-8): no I/O,
 * no globals, no allocation.  Every function returns 1 if the input is
 * acceptable and 0 if it must be refused; NULL input is always refused,
 * so callers decide themselves what an absent header means.
 */
#ifndef CORDON_POLICY_HTTP_H
#define CORDON_POLICY_HTTP_H

#include <stddef.h>

#define HTTP_TARGET_MAX 8192 /* PER-8: URI <= 8 KiB */
#define HTTP_BEARER_MAX 256  /* longest token accepted */
/* RFC 9110 5.6.2 tchar, as a charset.h set ('-' last is itself). */
#define HTTP_TCHARS "a-zA-Z0-9!#$%&'*+.^_`|~-"

/* PER-2: Host is 127.0.0.1:PORT, localhost:PORT or [::1]:PORT. */
int http_host_ok(const char *host, unsigned port);
/* PER-2 with PER-1 allowRemote: also listen_addr:PORT ([addr]:PORT if v6). */
int http_host_ok_addr(const char *host, const char *listen_addr, unsigned port);
/* PER-3: Origin is a loopback origin with our port, or one of extra. */
int http_origin_ok(
    const char *origin, unsigned port, const char *const *extra, size_t nextra);
/* PER-4: Sec-Fetch-Site value is same-origin or none. */
int http_fetch_site_ok(const char *value);
/* PER-8: request target is origin-form, bounded, without raw oddities. */
int http_target_ok(const char *uri, size_t len);
/* PER-5: "Bearer <token>"; *tok points into authz. */
int http_bearer_parse(const char *authz, const char **tok, size_t *toklen);
/* PER-5: the single, non-empty value of cookie name; *val points into hdr. */
int http_cookie_get(
    const char *cookie_hdr, const char *name, const char **val, size_t *vallen);

#define HTTP_CL_DIGITS_MAX 18 /* Content-Length below 10^18: no overflow */

/* PER-8: a header name of 1..len RFC 9110 tchar bytes. */
int http_header_name_ok(const char *name, size_t len);
/* PER-8: Content-Length is 1*DIGIT, no leading zero, bounded; *n its value. */
int http_content_length_ok(const char *value, unsigned long long *n);
/*
 * PER-8: the parsed request's header lines, one per call of next(arg,
 * &name, &value) (1 while there is a line, 0 at the end), so the caller
 * walks its own list without copying.  Refused: a name that is not a
 * token; a bad Content-Length or two that differ; Transfer-Encoding
 * other than one header saying exactly "chunked" (any case); both
 * Content-Length and Transfer-Encoding.
 */
typedef int (*http_header_next_fn)(
    void *arg, const char **name, const char **value);
int http_headers_ok(http_header_next_fn next, void *arg);

#endif
