/*
 * Pure HTTP perimeter rules for the broker: exact matching of Host,
 * Origin, Sec-Fetch-Site, request target, bearer token and cookie, and
 * the syntax and framing headers libevent is lenient about.
 * Touches nothing but its arguments; anything unexpected is refused.
 */
#include <stdint.h>
#include <string.h>

#include "charset.h"
#include "text.h"

#include "http.h"

#define HTTP_HOSTNAME_MAX 253

/* Span equals the literal exactly. */
static int
span_eq(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

/* Strict decimal port: digits only, no leading zero, equal to port. */
static int
port_ok(const char *s, size_t len, unsigned port)
{
	unsigned long v = 0;
	size_t i;

	if (port == 0 || port > 65535 || len == 0 || len > 5 || s[0] == '0')
		return 0;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	return v == port;
}

/*
 * Split "name:port" at the last colon ("[::1]:80" splits after the
 * bracket).  A value without a colon has no port and is refused.
 */
static int
split_hostport(const char *hp, const char **name, size_t *namelen,
    const char **portp, size_t *portlen)
{
	const char *colon;
	size_t len;

	len = strlen(hp);
	if ((colon = strrchr(hp, ':')) == NULL || colon == hp)
		return 0;
	*name = hp;
	*namelen = (size_t)(colon - hp);
	*portp = colon + 1;
	*portlen = len - *namelen - 1;
	return 1;
}

/* The three loopback names; localhost in any case. */
static int
loopback_name_ok(const char *name, size_t len)
{
	return span_eq(name, len, "127.0.0.1") ||
	       text_span_ci_eq(name, len, "localhost") ||
	       span_eq(name, len, "[::1]");
}

int
http_host_ok(const char *host, unsigned port)
{
	const char *name, *p;
	size_t namelen, plen;

	if (host == NULL || !split_hostport(host, &name, &namelen, &p, &plen))
		return 0;
	return loopback_name_ok(name, namelen) && port_ok(p, plen, port);
}

/*
 * A configured listen address is an IP literal or plain name; a
 * wildcard is not a name any honest client would put in Host.
 */
static int
listen_addr_usable(const char *addr, size_t len)
{
	if (!charset_shape(addr, len, "a-zA-Z0-9.:[]-", "a-zA-Z0-9.:[]-", 1,
		HTTP_HOSTNAME_MAX))
		return 0;
	if (addr[len - 1] == '.')
		return 0;
	/* Brackets only as one pair around the whole address. */
	if (addr[0] == '[') {
		if (len < 3 || addr[len - 1] != ']' ||
		    memchr(addr + 1, '[', len - 1) != NULL ||
		    memchr(addr + 1, ']', len - 2) != NULL)
			return 0;
	} else if (memchr(addr, '[', len) != NULL ||
		   memchr(addr, ']', len) != NULL)
		return 0;
	return !span_eq(addr, len, "0.0.0.0") && !span_eq(addr, len, "::") &&
	       !span_eq(addr, len, "[::]");
}

int
http_host_ok_addr(const char *host, const char *listen_addr, unsigned port)
{
	const char *name, *p;
	size_t namelen, plen, alen;

	if (host == NULL || !split_hostport(host, &name, &namelen, &p, &plen))
		return 0;
	if (!port_ok(p, plen, port))
		return 0;
	if (loopback_name_ok(name, namelen))
		return 1;
	if (listen_addr == NULL)
		return 0;
	alen = strlen(listen_addr);
	if (!listen_addr_usable(listen_addr, alen))
		return 0;
	/* A bare IPv6 literal appears bracketed in Host. */
	if (listen_addr[0] != '[' && memchr(listen_addr, ':', alen) != NULL) {
		if (namelen != alen + 2 || name[0] != '[' ||
		    name[namelen - 1] != ']')
			return 0;
		name++;
		namelen -= 2;
	}
	return text_span_ci_eq(name, namelen, listen_addr);
}

int
http_origin_ok(
    const char *origin, unsigned port, const char *const *extra, size_t nextra)
{
	const char *name, *p;
	size_t i, namelen, plen;

	if (origin == NULL || origin[0] == '\0')
		return 0;
	for (i = 0; extra != NULL && i < nextra; i++)
		if (extra[i] != NULL && extra[i][0] != '\0' &&
		    strcmp(origin, extra[i]) == 0)
			return 1;
	/* Browsers serialise origins in lower case: compare exactly. */
	if (strncmp(origin, "http://", 7) != 0 ||
	    !split_hostport(origin + 7, &name, &namelen, &p, &plen))
		return 0;
	if (!span_eq(name, namelen, "127.0.0.1") &&
	    !span_eq(name, namelen, "localhost") &&
	    !span_eq(name, namelen, "[::1]"))
		return 0;
	return port_ok(p, plen, port);
}

int
http_fetch_site_ok(const char *value)
{
	const char *s, *e;

	if (value == NULL)
		return 0;
	s = value;
	e = value + strlen(value);
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	/* same-site and cross-site, and anything unknown, fail closed. */
	return text_span_ci_eq(s, (size_t)(e - s), "same-origin") ||
	       text_span_ci_eq(s, (size_t)(e - s), "none");
}

int
http_target_ok(const char *uri, size_t len)
{
	size_t i;
	int c;

	if (uri == NULL || len == 0 || len > HTTP_TARGET_MAX)
		return 0;
	/* Origin-form only: no absolute-form, no "*", no "//host". */
	if (uri[0] != '/' || (len > 1 && uri[1] == '/'))
		return 0;
	for (i = 0; i < len; i++) {
		c = (unsigned char)uri[i];
		/* Browsers percent-encode these; raw means a crafted client. */
		if (c < 0x20 || c >= 0x7f || c == ' ' || c == '#' || c == '\\')
			return 0;
	}
	return 1;
}

int
http_bearer_parse(const char *authz, const char **tok, size_t *toklen)
{
	const char *t;
	size_t n;

	if (tok != NULL)
		*tok = NULL;
	if (toklen != NULL)
		*toklen = 0;
	if (authz == NULL || tok == NULL || toklen == NULL)
		return 0;
	/* Scheme, then exactly one space. */
	if (strlen(authz) < 7 || !text_span_ci_eq(authz, 6, "bearer") ||
	    authz[6] != ' ')
		return 0;
	t = authz + 7;
	for (n = 0; t[n] != '\0'; n++)
		if (n >= HTTP_BEARER_MAX ||
		    !charset_has("a-zA-Z0-9._~+/=-", t[n]))
			return 0;
	if (n == 0)
		return 0;
	*tok = t;
	*toklen = n;
	return 1;
}

/* RFC 6265 cookie-octet. */
static int
cookie_octet(int c)
{
	return c == 0x21 || (c >= 0x23 && c <= 0x2b) ||
	       (c >= 0x2d && c <= 0x3a) || (c >= 0x3c && c <= 0x5b) ||
	       (c >= 0x5d && c <= 0x7e);
}

static int
ows(int c)
{
	return c == ' ' || c == '\t';
}

int
http_cookie_get(
    const char *cookie_hdr, const char *name, const char **val, size_t *vallen)
{
	const char *p, *end, *eq, *ns, *ne, *vs, *ve;
	const char *found = NULL;
	size_t i, namelen, foundlen = 0;

	if (val != NULL)
		*val = NULL;
	if (vallen != NULL)
		*vallen = 0;
	if (cookie_hdr == NULL || name == NULL || val == NULL || vallen == NULL)
		return 0;
	namelen = strlen(name);
	if (namelen == 0)
		return 0;
	for (i = 0; i < namelen; i++)
		if (!cookie_octet((unsigned char)name[i]) || name[i] == '=')
			return 0;

	for (p = cookie_hdr;; p = end + 1) {
		if ((end = strchr(p, ';')) == NULL)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq != NULL) {
			for (ns = p; ns < eq && ows((unsigned char)*ns); ns++)
				;
			for (ne = eq; ne > ns && ows((unsigned char)ne[-1]);
			     ne--)
				;
			if ((size_t)(ne - ns) == namelen &&
			    memcmp(ns, name, namelen) == 0) {
				/* Two of ours: which one is real?  Neither. */
				if (found != NULL)
					return 0;
				for (vs = eq + 1;
				     vs < end && ows((unsigned char)*vs); vs++)
					;
				for (ve = end;
				     ve > vs && ows((unsigned char)ve[-1]);
				     ve--)
					;
				found = vs;
				foundlen = (size_t)(ve - vs);
			}
		}
		if (*end == '\0')
			break;
	}
	if (found == NULL || foundlen == 0)
		return 0;
	for (i = 0; i < foundlen; i++)
		if (!cookie_octet((unsigned char)found[i]))
			return 0;
	*val = found;
	*vallen = foundlen;
	return 1;
}

int
http_header_name_ok(const char *name, size_t len)
{
	return name != NULL &&
	       charset_shape(name, len, HTTP_TCHARS, HTTP_TCHARS, 1, SIZE_MAX);
}

int
http_content_length_ok(const char *value, unsigned long long *n)
{
	unsigned long long v = 0;
	size_t i;

	if (n != NULL)
		*n = 0;
	if (value == NULL || value[0] == '\0')
		return 0;
	/*
	 * One canonical spelling per number ("0" alone may start with a
	 * zero), so that two headers agree exactly when their strings do.
	 */
	if (value[0] == '0' && value[1] != '\0')
		return 0;
	for (i = 0; value[i] != '\0'; i++) {
		if (i >= HTTP_CL_DIGITS_MAX || value[i] < '0' || value[i] > '9')
			return 0;
		v = v * 10 + (unsigned long long)(value[i] - '0');
	}
	if (n != NULL)
		*n = v;
	return 1;
}

/*
 * libevent 2.1 is lenient where a front proxy may not be: it keeps the
 * first of two Content-Lengths, reads "+19" as 19, and ignores a
 * Transfer-Encoding it does not know.  Any such disagreement is a
 * smuggling shape, so the whole request is refused.
 */
int
http_headers_ok(http_header_next_fn next, void *arg)
{
	const char *name, *value, *cl = NULL;
	size_t namelen;
	int te = 0;

	if (next == NULL)
		return 0;
	while (next(arg, &name, &value)) {
		if (name == NULL || value == NULL)
			return 0;
		namelen = strlen(name);
		if (!http_header_name_ok(name, namelen))
			return 0;
		if (text_span_ci_eq(name, namelen, "Content-Length")) {
			if (!http_content_length_ok(value, NULL) ||
			    (cl != NULL && strcmp(cl, value) != 0))
				return 0;
			cl = value;
		} else if (text_span_ci_eq(
			       name, namelen, "Transfer-Encoding")) {
			if (te ||
			    !text_span_ci_eq(value, strlen(value), "chunked"))
				return 0;
			te = 1;
		}
	}
	return !(te && cl != NULL);
}
