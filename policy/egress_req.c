/*
 * The proxy request parser (EG-2): the head an agent sends its loopback
 * proxy, untrusted input.  One form only, CONNECT host:port, read
 * strictly and bounded; anything else is refused whole.  Pure: no I/O,
 * no globals, no allocation.
 */
#include <string.h>
#include <strings.h>

#include "egress.h"

#define METHOD "CONNECT "

/* RFC 9110 tchar. */
static int
tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

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
	for (i = 0; i < hlen; i++)
		rq->rq_host[i] = (host[i] >= 'A' && host[i] <= 'Z')
				     ? (char)(host[i] + 32)
				     : host[i];
	rq->rq_host[hlen] = '\0';
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

/* One header line s[0, len) (no CRLF). */
static int
header_line(
    const char *s, size_t len, const char *auth, size_t alen, int *hosts)
{
	size_t i, n = 0, v, e;

	while (n < len && tchar((unsigned char)s[n]))
		n++;
	/* A name, then at once a colon: no obs-fold, no space before it. */
	if (n == 0 || n == len || s[n] != ':')
		return -1;
	for (i = n + 1; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return -1;
	}
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

int
egress_req_parse(const char *buf, size_t len, struct egress_req *rq)
{
	size_t end, i, start, ml = sizeof(METHOD) - 1, alen = 0;
	const char *auth = NULL;
	int line = 0, hosts = 0;

	memset(rq, 0, sizeof(*rq));
	/* Refuse early what can never become a CONNECT. */
	if (memcmp(buf, METHOD, len < ml ? len : ml) != 0)
		return -1;
	end = head_end(buf, len < EGRESS_HEAD_MAX ? len : EGRESS_HEAD_MAX);
	if (end == 0 && (len >= EGRESS_HEAD_MAX || memchr(buf, '\0', len)))
		return -1;
	/* CRLF only: every CR is followed by LF and every LF preceded by CR
	 * (a CR may end what has arrived so far). */
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
		if (line == 0) {
			if (request_line(buf, i, rq, &auth, &alen) == -1)
				return -1;
		} else if (line > EGRESS_HEADERS_MAX ||
			   header_line(buf + start, i - start, auth, alen,
			       &hosts) == -1)
			return -1;
		line++;
		start = i + 2;
		i++;
	}
	if (line == 0)
		return -1;
	rq->rq_head_len = end;
	return 1;
}
