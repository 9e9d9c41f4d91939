/*
 * libFuzzer target for policy/egress_req.c and egress.c (EG-2): the
 * proxy's request head and allowlist entries on hostile bytes.  An
 * accepted head must keep the parser's promises: within the bound, a
 * valid host and port, and the same answer for every longer prefix.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check(int cond)
{
	if (!cond)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct egress_req rq, rq2;
	struct egress_rule r, r2;
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
	if (size <= EGRESS_RULE_MAX && egress_rule_parse(s, size, &r) == 0) {
		check(egress_rule_format(&r, buf, sizeof(buf)) == 0);
		check(egress_rule_parse(buf, strlen(buf), &r2) == 0);
		check(memcmp(&r, &r2, sizeof(r)) == 0);
	}
	return 0;
}
