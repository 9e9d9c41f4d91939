/*
 * The proxy request parsers (EG-2, EG-3): the head an agent sends its
 * loopback proxy, untrusted input.  Two forms only, CONNECT host:port
 * and a plain origin-form request for a credential route, read strictly
 * and bounded by one line scanner; anything else is refused whole.  Pure: no
 * I/O, no globals, no allocation.
 */
#include <string.h>
#include <strings.h>

#include "charset.h"
#include "egress.h"
#include "http.h"
#include "text.h"
#include "util.h"
#include "vaultpath.h"

#define METHOD "CONNECT "

/* End of the head: the offset just past "\r\n\r\n", or 0. */
static size_t
head_end(const char *buf, size_t len)
{
	size_t i;

	for (i = 3; i < len; i++)
		if (buf[i] == '\n' && buf[i - 1] == '\r' &&
		    buf[i - 2] == '\n' && buf[i - 3] == '\r')
			return i + 1;
	return 0;
}

/* "host:port" or "[v6]:port" at s[0, len) into rq. */
static int
authority_parse(const char *s, size_t len, struct egress_req *rq)
{
	const char *colon, *host = s;
	size_t hlen, i;
	unsigned int port = 0;

	if (len == 0)
		return -1;
	if (s[0] == '[') {
		if ((colon = memchr(s, ']', len)) == NULL ||
		    (size_t)(colon + 1 - s) >= len || colon[1] != ':')
			return -1;
		host = s + 1;
		hlen = (size_t)(colon - host);
		colon++;
		if (egress_ip_parse(host, hlen, rq->rq_addr) != 6)
			return -1;
		rq->rq_ip = 6;
	} else {
		if ((colon = memchr(s, ':', len)) == NULL)
			return -1;
		hlen = (size_t)(colon - s);
		if (egress_ip_parse(host, hlen, rq->rq_addr) == 4)
			rq->rq_ip = 4;
		else if (!egress_hostname_ok(host, hlen))
			return -1;
	}
	/* The port: 1..65535, digits, no leading zero. */
	i = (size_t)(colon - s) + 1;
	if (i >= len || len - i > 5 || s[i] == '0')
		return -1;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		port = port * 10 + (unsigned)(s[i] - '0');
	}
	if (port < 1 || port > 65535 || hlen > EGRESS_HOST_MAX)
		return -1;
	rq->rq_port = port;
	text_lower_copy(rq->rq_host, host, hlen);
	return 0;
}

/* "CONNECT authority HTTP/1.x" (single spaces). */
static int
request_line(const char *s, size_t len, struct egress_req *rq,
    const char **auth, size_t *alen)
{
	const char *sp;
	size_t ml = sizeof(METHOD) - 1, vl = sizeof(" HTTP/1.1") - 1;

	if (len < ml + vl + 1 || memcmp(s, METHOD, ml) != 0)
		return -1;
	if (memcmp(s + len - vl, " HTTP/1.1", vl) != 0 &&
	    memcmp(s + len - vl, " HTTP/1.0", vl) != 0)
		return -1;
	*auth = s + ml;
	*alen = len - ml - vl;
	if ((sp = memchr(*auth, ' ', *alen)) != NULL)
		return -1;
	return authority_parse(*auth, *alen, rq);
}

static int
name_is(const char *s, size_t len, const char *name)
{
	return strlen(name) == len && strncasecmp(s, name, len) == 0;
}

int
egress_header_like(const char *s, size_t len, const char *name)
{
	size_t i;

	if (strlen(name) != len)
		return 0;
	for (i = 0; i < len; i++) {
		char c = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] + 32) : s[i];

		if (c != name[i] && !(c == '_' && name[i] == '-'))
			return 0;
	}
	return 1;
}

/*
 * A header line s[0, len) (no CRLF): a name, then at once a colon (no
 * obs-fold, no space before it), no control character in the value.
 * 0 (*nlen: the name's length), or -1.
 */
static int
header_name(const char *s, size_t len, size_t *nlen)
{
	size_t i, n = 0;

	while (n < len && charset_has(HTTP_TCHARS, s[n]))
		n++;
	if (n == 0 || n == len || s[n] != ':')
		return -1;
	for (i = n + 1; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return -1;
	}
	if (nlen != NULL)
		*nlen = n;
	return 0;
}

/* A CONNECT's header line (checked by header_name). */
static int
header_line(
    const char *s, size_t len, const char *auth, size_t alen, int *hosts)
{
	size_t n = (size_t)((const char *)memchr(s, ':', len) - s), v, e;

	if (name_is(s, n, "content-length") ||
	    name_is(s, n, "transfer-encoding"))
		return -1;
	if (!name_is(s, n, "host"))
		return 0;
	if (++*hosts > 1)
		return -1;
	for (v = n + 1; v < len && (s[v] == ' ' || s[v] == '\t'); v++)
		;
	for (e = len; e > v && (s[e - 1] == ' ' || s[e - 1] == '\t'); e--)
		;
	/* Host names the authority the request line names, no other. */
	if (e - v != alen || strncasecmp(s + v, auth, alen) != 0)
		return -1;
	return 0;
}

/*
 * The head's lines, CRLF only: every CR followed by LF, every LF preceded
 * by CR (a CR may end what has arrived so far).  Each line but the blank
 * one goes to line(ctx, s, len, index).  1 complete (*endp: the head's
 * length), 0 not complete yet, -1 refused.
 */
static int
head_scan(const char *buf, size_t len,
    int (*line)(void *, const char *, size_t, int), void *ctx, size_t *endp)
{
	size_t end, i, start;
	int n = 0;

	end = head_end(buf, len < EGRESS_HEAD_MAX ? len : EGRESS_HEAD_MAX);
	if (end == 0 && (len >= EGRESS_HEAD_MAX || memchr(buf, '\0', len)))
		return -1;
	for (i = 0; i < (end ? end : len); i++)
		if ((buf[i] == '\r' && i + 1 < len && buf[i + 1] != '\n') ||
		    (buf[i] == '\r' && end != 0 && i + 1 == end) ||
		    (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r')))
			return -1;
	if (end == 0)
		return 0;
	for (start = 0, i = 0; i + 1 < end; i++) {
		if (buf[i] != '\r')
			continue;
		if (i == start) /* the blank line: the end */
			break;
		if (n > EGRESS_HEADERS_MAX ||
		    line(ctx, buf + start, i - start, n) == -1)
			return -1;
		n++;
		start = i + 2;
		i++;
	}
	if (n == 0)
		return -1;
	*endp = end;
	return 1;
}

struct connect_ctx {
	struct egress_req *rq;
	const char *auth;
	size_t alen;
	int hosts;
};

static int
connect_line(void *arg, const char *s, size_t len, int n)
{
	struct connect_ctx *c = arg;

	if (n == 0)
		return request_line(s, len, c->rq, &c->auth, &c->alen);
	if (header_name(s, len, NULL) == -1)
		return -1;
	return header_line(s, len, c->auth, c->alen, &c->hosts);
}

int
egress_req_parse(const char *buf, size_t len, struct egress_req *rq)
{
	struct connect_ctx c = {rq, NULL, 0, 0};
	size_t ml = sizeof(METHOD) - 1, end = 0;
	int rc;

	memset(rq, 0, sizeof(*rq));
	/* Refuse early what can never become a CONNECT. */
	if (memcmp(buf, METHOD, len < ml ? len : ml) != 0)
		return -1;
	if ((rc = head_scan(buf, len, connect_line, &c, &end)) != 1)
		return rc;
	rq->rq_head_len = end;
	return 1;
}

/*
 * The methods a routed request may use: what provider APIs take.  Never
 * TRACE or TRACK (an upstream that honours one echoes the request, the
 * route's key with it, back to the agent), nor CONNECT or WebDAV's.
 */
static const char *const route_methods[] = {
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", NULL};

static int
method_ok(const char *s, size_t len)
{
	size_t i;

	for (i = 0; route_methods[i] != NULL; i++)
		if (strlen(route_methods[i]) == len &&
		    memcmp(s, route_methods[i], len) == 0)
			return 1;
	return 0;
}

/*
 * A dot segment in the path of target t[0, n), as an upstream may read
 * one once it has decoded the path: "." or ".." spelt plain or
 * percent-encoded ("%2e%2E"), between '/' or '\' (raw or encoded), up to
 * a ';' (a path parameter: "..;").  A malformed escape, an encoded NUL
 * or bytes that are not UTF-8 (an overlong "%c0%ae" is a '.' to a lax
 * decoder) count as one too: refused the same way.
 */
static int
dot_segment(const char *t, size_t n)
{
	char path[EGRESS_TARGET_MAX + 1];
	const char *q = memchr(t, '?', n);
	size_t i, start = 0, name = 0, seg;
	long len;

	if ((len = vaultpath_decode(
		 t, q ? (size_t)(q - t) : n, path, sizeof(path))) < 0 ||
	    !utf8_valid(path, (size_t)len))
		return 1;
	for (i = 0; i <= (size_t)len; i++) {
		if (i < (size_t)len && path[i] != '/' && path[i] != '\\') {
			if (path[i] == ';' && name == 0)
				name = i - start + 1;
			continue;
		}
		/* The segment's name: up to a ';' if it has one. */
		seg = name ? name - 1 : i - start;
		if ((seg == 1 && path[start] == '.') ||
		    (seg == 2 && path[start] == '.' && path[start + 1] == '.'))
			return 1;
		start = i + 1;
		name = 0;
	}
	return 0;
}

/* "METHOD /target HTTP/1.x" (single spaces, origin-form only). */
static int
http_request_line(const char *s, size_t len, struct egress_http *hp)
{
	size_t m = 0, vl = sizeof(" HTTP/1.1") - 1;

	while (m < len && m <= 16 && charset_has(HTTP_TCHARS, s[m]))
		m++;
	if (m == 0 || m > 16 || m + 2 + vl > len || s[m] != ' ' ||
	    s[m + 1] != '/')
		return -1;
	if (memcmp(s + len - vl, " HTTP/1.1", vl) != 0 &&
	    memcmp(s + len - vl, " HTTP/1.0", vl) != 0)
		return -1;
	hp->hp_method_len = m;
	hp->hp_target_off = m + 1;
	hp->hp_target_len = len - vl - m - 1;
	if (hp->hp_target_len > EGRESS_TARGET_MAX)
		return -1;
	/* Visible ASCII, no '#', no backslash (PER-8's rule for a target). */
	if (!method_ok(s, m) ||
	    !http_target_ok(s + hp->hp_target_off, hp->hp_target_len) ||
	    dot_segment(s + hp->hp_target_off, hp->hp_target_len))
		return -1;
	return 0;
}

struct http_ctx {
	struct egress_http *hp;
	const char *buf;
	int hosts, clens;
};

/* Content-Length: digits only, one, bounded. */
static int
clen_value(const char *s, size_t len, size_t n, unsigned long long *out)
{
	size_t v, e, i;
	unsigned long long x = 0;

	for (v = n + 1; v < len && (s[v] == ' ' || s[v] == '\t'); v++)
		;
	for (e = len; e > v && (s[e - 1] == ' ' || s[e - 1] == '\t'); e--)
		;
	if (e == v || e - v > 12)
		return -1;
	for (i = v; i < e; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = x * 10 + (unsigned)(s[i] - '0');
	}
	if (x > EGRESS_BODY_MAX)
		return -1;
	*out = x;
	return 0;
}

static int
http_line(void *arg, const char *s, size_t len, int n)
{
	struct http_ctx *c = arg;
	struct egress_http *hp = c->hp;
	size_t nl;

	if (n == 0)
		return http_request_line(s, len, hp);
	if (header_name(s, len, &nl) == -1)
		return -1;
	/* Framing an upstream may read off "_" spellings too (CGI, WSGI). */
	if (egress_header_like(s, nl, "transfer-encoding") ||
	    (egress_header_like(s, nl, "content-length") &&
		!name_is(s, nl, "content-length")))
		return -1;
	if (name_is(s, nl, "host") && ++c->hosts > 1)
		return -1;
	if (name_is(s, nl, "content-length") &&
	    (++c->clens > 1 || clen_value(s, len, nl, &hp->hp_clen) == -1))
		return -1;
	hp->hp_hoff[hp->hp_nheaders] = (size_t)(s - c->buf);
	hp->hp_hlen[hp->hp_nheaders] = len;
	hp->hp_nheaders++;
	return 0;
}

int
egress_http_parse(const char *buf, size_t len, struct egress_http *hp)
{
	struct http_ctx c = {hp, buf, 0, 0};
	size_t end = 0;
	int rc;

	memset(hp, 0, sizeof(*hp));
	if (len > 0 && buf[0] == 'C' &&
	    memcmp(buf, METHOD,
		len < sizeof(METHOD) - 1 ? len : sizeof(METHOD) - 1) == 0)
		return -1; /* a CONNECT is not a plain request */
	if ((rc = head_scan(buf, len, http_line, &c, &end)) != 1)
		return rc;
	hp->hp_head_len = end;
	return 1;
}

/* ---- EG-3: a routed request's response head, for the agent ---- */

struct resp_ctx {
	char *out;
	size_t sz, off;
	int status;
};

static int
resp_put(struct resp_ctx *c, const char *s, size_t n)
{
	if (n > c->sz - c->off)
		return -1;
	memcpy(c->out + c->off, s, n);
	c->off += n;
	return 0;
}

/* "HTTP/1.x NNN[ reason]", the reason without control characters. */
static int
status_line(const char *s, size_t len, int *status)
{
	size_t i;
	int st = 0;

	if (len < 12 || memcmp(s, "HTTP/1.", 7) != 0 || s[7] < '0' ||
	    s[7] > '9' || s[8] != ' ' || (len > 12 && s[12] != ' '))
		return -1;
	for (i = 9; i < 12; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		st = st * 10 + (s[i] - '0');
	}
	for (i = 12; i < len; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') ||
		    s[i] == 0x7f)
			return -1;
	if (st < 100 || st > 599)
		return -1;
	*status = st;
	return 0;
}

static int
resp_line(void *arg, const char *s, size_t len, int n)
{
	struct resp_ctx *c = arg;
	size_t nl;

	if (n == 0) {
		if (status_line(s, len, &c->status) == -1)
			return -1;
	} else {
		if (header_name(s, len, &nl) == -1)
			return -1;
		/* Hop-by-hop: the agent's connection is cordon's, not the
		 * upstream's.  A cookie the route's key earned would be a
		 * credential the agent could take to the upstream through a
		 * tunnel (a route never sends one up). */
		if (name_is(s, nl, "connection") ||
		    name_is(s, nl, "keep-alive") ||
		    name_is(s, nl, "proxy-connection") ||
		    name_is(s, nl, "set-cookie") ||
		    name_is(s, nl, "set-cookie2"))
			return 0;
	}
	if (resp_put(c, s, len) == -1 || resp_put(c, "\r\n", 2) == -1)
		return -1;
	return 0;
}

int
egress_resp_head(
    const char *buf, size_t len, char *out, size_t sz, struct egress_resp *rs)
{
	static const char closing[] = "Connection: close\r\n\r\n";
	struct resp_ctx c = {out, sz, 0, 0};
	size_t end = 0;
	int rc;

	memset(rs, 0, sizeof(*rs));
	if ((rc = head_scan(buf, len, resp_line, &c, &end)) != 1)
		return rc;
	if (resp_put(&c, closing, sizeof(closing) - 1) == -1)
		return -1;
	rs->rs_head_len = end;
	rs->rs_out_len = c.off;
	rs->rs_status = c.status;
	return 1;
}
