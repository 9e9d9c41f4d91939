/*
 * libFuzzer target for policy/egress_req.c, egress.c and egress_route.c
 * (EG-2, EG-3): the proxy's request heads (CONNECT and a route's plain
 * request) and allowlist entries and upstreams on hostile bytes.  An
 * accepted head must keep the parser's promises: within the bound, a
 * valid host and port, and the same answer for every longer prefix; a
 * route's target with no dot segment however spelt and no TRACE; a
 * rewritten head has one line per kept header, no credential header but
 * the route's, and no bare CR or LF.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static char out[EGRESS_UP_HEAD_MAX];

static void
check(int cond)
{
	if (!cond)
		abort();
}

/*
 * A route's target an upstream would read as leaving its base: a path
 * (before '?') with a back slash, or a segment of one or two dots, each
 * '.' or "%2e", between raw or encoded slashes or back slashes, or
 * before a ';'.  Independent of the parser's own decoding.
 */
static int
escapes(const char *t, size_t n)
{
	static const char *const sep[] = {"/", "%2f", "%5c"};
	static const char *const end[] = {"/", "%2f", "%5c", ";"};
	static const char *const dots[] = {
	    ".", "%2e", "..", ".%2e", "%2e.", "%2e%2e"};
	char path[EGRESS_TARGET_MAX + 2], pat[16];
	const char *q = memchr(t, '?', n);
	size_t len = q ? (size_t)(q - t) : n, i, j, k;

	if (len > EGRESS_TARGET_MAX || memchr(t, '\\', len) != NULL)
		return 1;
	for (i = 0; i < len; i++)
		path[i] = (char)tolower((unsigned char)t[i]);
	path[len] = '/'; /* a last segment ends as any other */
	path[len + 1] = '\0';
	for (i = 0; i < 3; i++)
		for (j = 0; j < 6; j++)
			for (k = 0; k < 4; k++) {
				snprintf(pat, sizeof(pat), "%s%s%s", sep[i],
				    dots[j], end[k]);
				if (strstr(path, pat) != NULL)
					return 1;
			}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct egress_req rq, rq2;
	struct egress_rule r, r2;
	struct egress_http hp, hp2;
	struct egress_route u, u2;
	char buf[EGRESS_RULE_MAX + 1];
	unsigned char a[16];
	int rc;

	rc = egress_req_parse(s, size, &rq);
	check(rc >= -1 && rc <= 1);
	if (rc == 1) {
		check(rq.rq_head_len <= size &&
		      rq.rq_head_len <= EGRESS_HEAD_MAX);
		check(rq.rq_port >= 1 && rq.rq_port <= 65535);
		check(rq.rq_ip == 0
			  ? egress_hostname_ok(rq.rq_host, strlen(rq.rq_host))
			  : egress_ip_parse(
				rq.rq_host, strlen(rq.rq_host), a) == rq.rq_ip);
		check(memchr(s, '\n', rq.rq_head_len) != NULL);
		/* The head alone parses the same. */
		check(egress_req_parse(s, rq.rq_head_len, &rq2) == 1);
		check(strcmp(rq.rq_host, rq2.rq_host) == 0 &&
		      rq.rq_port == rq2.rq_port);
		(void)egress_addr_class(rq.rq_ip ? rq.rq_ip : 4, rq.rq_addr);
	}
	/* EG-3: a plain request, matched and rewritten for a route. */
	if (egress_http_parse(s, size, &hp) == 1) {
		struct egress_route ro;
		size_t rest, i;
		int n;

		check(hp.hp_head_len <= size &&
		      hp.hp_head_len <= EGRESS_HEAD_MAX);
		check(hp.hp_target_off + hp.hp_target_len < hp.hp_head_len);
		check(s[hp.hp_target_off] == '/');
		check(egress_http_parse(s, hp.hp_head_len, &hp2) == 1 &&
		      hp2.hp_clen == hp.hp_clen);
		check(!escapes(s + hp.hp_target_off, hp.hp_target_len));
		check(hp.hp_method_len != 5 || memcmp(s, "TRACE", 5) != 0);
		memset(&ro, 0, sizeof(ro));
		check(
		    egress_upstream_parse("https://a.example/b", 19, &ro) == 0);
		memcpy(ro.ro_name, "r", 2);
		if (egress_route_match(&ro, 1, s + hp.hp_target_off,
			hp.hp_target_len, &rest) == 0) {
			n = egress_route_head(
			    s, &hp, &ro, rest, "K3y", out, sizeof(out));
			check(n > 0 && (size_t)n < sizeof(out));
			for (i = 0; i < (size_t)n; i++)
				check((out[i] != '\r' || out[i + 1] == '\n') &&
				      (out[i] != '\n' ||
					  (i > 0 && out[i - 1] == '\r')));
			check(memcmp(out + n - 4, "\r\n\r\n", 4) == 0);
			out[n] = '\0';
			check(strstr(out, "\r\nx-api-key: K3y\r\n") != NULL);
			check(strcasestr(out, "\r\nauthorization:") == NULL &&
			      strcasestr(out, "\r\ncookie:") == NULL &&
			      strcasestr(out, "\r\nx-api-key:") ==
				  strstr(out, "\r\nx-api-key: K3y\r\n"));
		}
	}
	/* EG-3: an upstream's answer head, rewritten for the agent. */
	{
		char ro[EGRESS_RESP_OUT_MAX];
		struct egress_resp rs;

		if (egress_resp_head(s, size, ro, sizeof(ro), &rs) == 1) {
			check(rs.rs_head_len <= size &&
			      rs.rs_out_len <= sizeof(ro));
			check(rs.rs_status >= 100 && rs.rs_status <= 599);
			check(rs.rs_out_len >= 21 &&
			      memcmp(ro + rs.rs_out_len - 21,
				  "Connection: close\r\n\r\n", 21) == 0);
		}
	}
	memset(&u, 0, sizeof(u));
	memset(&u2, 0, sizeof(u2));
	if (size <= EGRESS_BASE_MAX + 300 &&
	    egress_upstream_parse(s, size, &u) == 0) {
		check(egress_upstream_format(&u, out, sizeof(out)) == 0);
		check(egress_upstream_parse(out, strlen(out), &u2) == 0);
		check(memcmp(&u, &u2, sizeof(u)) == 0);
	}
	if (size <= EGRESS_RULE_MAX && egress_rule_parse(s, size, &r) == 0) {
		check(egress_rule_format(&r, buf, sizeof(buf)) == 0);
		check(egress_rule_parse(buf, strlen(buf), &r2) == 0);
		check(memcmp(&r, &r2, sizeof(r)) == 0);
	}
	return 0;
}
