/*
 * Unit tests for policy/egress.c, egress_req.c, egress_mf.c and
 * egress_route.c (EG-2, EG-3, EG-4): allowlist entries, matching, the
 * address classes refused after resolution, the strict CONNECT and plain
 * request parsers, the manifest's egress block and its credential
 * routes, the head sent upstream, and the agent env of a routed secret
 * (the placeholder, never the key).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <json-c/json.h>

#include "egress.h"
#include "env.h"
#include "manifest.h"
#include "yamljson.h"
#include "util.h"

static int
rule_ok(const char *s, struct egress_rule *r)
{
	return egress_rule_parse(s, strlen(s), r);
}

static void
test_eg2_rules_accepted(void **state)
{
	static const struct {
		const char *in, *canon;
		enum egress_kind kind;
	} ok[] = {
	    {"api.anthropic.com", "api.anthropic.com:443", EK_NAME},
	    {"API.Example.COM:8443", "api.example.com:8443", EK_NAME},
	    {"*.example.org", "*.example.org:443", EK_WILDCARD},
	    {"localhost", "localhost:443", EK_NAME},
	    {"203.0.113.7:80", "203.0.113.7:80", EK_IP4},
	    {"[2001:db8::1]", "[2001:db8::1]:443", EK_IP6},
	    {"[2001:db8::1]:65535", "[2001:db8::1]:65535", EK_IP6},
	    {"a-b.c0:1", "a-b.c0:1", EK_NAME},
	};
	struct egress_rule r, r2;
	char buf[EGRESS_RULE_MAX + 1];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(rule_ok(ok[i].in, &r), 0);
		assert_int_equal(r.er_kind, ok[i].kind);
		assert_int_equal(egress_rule_format(&r, buf, sizeof(buf)), 0);
		assert_string_equal(buf, ok[i].canon);
		/* The canonical form is what egressd parses again. */
		assert_int_equal(rule_ok(buf, &r2), 0);
		assert_memory_equal(&r, &r2, sizeof(r));
	}
}

static void
test_eg2_rules_refused(void **state)
{
	static const char *const bad[] = {"", "*", "*.com", "**.a.com",
	    "a.*.com", "-a.com", "a-.com", "a..com", ".a.com", "a.com.",
	    "a.com:0", "a.com:65536", "a.com:08", "a.com:", "a.com:1:2",
	    "a.com:+1", "a_b.com", "a com", "1.2.3", "1.2.3.4.5", "01.2.3.4",
	    "::1", "[::1", "[::1]x", "[1.2.3.4]", "[fe80::1%eth0]", "a.123",
	    "http://a.com", "a.com/x", "a.com\n"};
	char big[300];
	struct egress_rule r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(rule_ok(bad[i], &r), -1);
	/* A 64-byte label, and a name over 253. */
	memset(big, 'a', 64);
	strcpy(big + 64, ".com");
	assert_int_equal(rule_ok(big, &r), -1);
	for (i = 0; i < 254; i++)
		big[i] = (i % 2) ? '.' : 'a';
	big[254] = '\0';
	assert_int_equal(rule_ok(big, &r), -1);
	assert_int_equal(egress_rule_parse("a.com\0x", 7, &r), -1);
}

static void
test_eg2_match(void **state)
{
	struct egress_rule rules[4];
	unsigned char a[16] = {0};
	enum egress_reason why = ER_NONE;

	(void)state;
	assert_int_equal(rule_ok("api.example.com", &rules[0]), 0);
	assert_int_equal(rule_ok("*.cdn.example.net:8443", &rules[1]), 0);
	assert_int_equal(rule_ok("203.0.113.7:443", &rules[2]), 0);
	assert_int_equal(rule_ok("api.example.com:8080", &rules[3]), 0);
	assert_int_equal(
	    egress_match(rules, 4, "api.example.com", 0, a, 443, &why), 0);
	assert_int_equal(
	    egress_match(rules, 4, "api.example.com", 0, a, 8080, &why), 3);
	assert_int_equal(
	    egress_match(rules, 4, "api.example.com", 0, a, 22, &why), -1);
	assert_int_equal(why, ER_PORT_NOT_ALLOWED);
	assert_int_equal(
	    egress_match(rules, 4, "x.cdn.example.net", 0, a, 8443, &why), 1);
	assert_int_equal(
	    egress_match(rules, 4, "a.b.cdn.example.net", 0, a, 8443, &why), 1);
	/* The apex is not "*.": and no suffix trick. */
	assert_int_equal(
	    egress_match(rules, 4, "cdn.example.net", 0, a, 8443, &why), -1);
	assert_int_equal(why, ER_HOST_NOT_ALLOWED);
	assert_int_equal(
	    egress_match(rules, 4, "evilcdn.example.net", 0, a, 8443, &why),
	    -1);
	assert_int_equal(
	    egress_match(rules, 4, "evil.com", 0, a, 443, &why), -1);
	assert_int_equal(why, ER_HOST_NOT_ALLOWED);
	assert_int_equal(
	    egress_match(rules, 4, "api.example.com.evil.com", 0, a, 443, &why),
	    -1);
	/* An address only where it is listed as one. */
	a[0] = 203, a[1] = 0, a[2] = 113, a[3] = 7;
	assert_int_equal(
	    egress_match(rules, 4, "203.0.113.7", 4, a, 443, &why), 2);
	a[3] = 8;
	assert_int_equal(
	    egress_match(rules, 4, "203.0.113.8", 4, a, 443, &why), -1);
	assert_int_equal(why, ER_HOST_NOT_ALLOWED);
}

/* EG-4: a name is written only where a rule names it itself; the
 * labels a wildcard leaves open are the agent's. */
static void
test_eg4_named_only_when_listed(void **state)
{
	struct egress_rule rules[3];
	unsigned char a[16] = {0};

	(void)state;
	assert_int_equal(rule_ok("api.example.com", &rules[0]), 0);
	assert_int_equal(rule_ok("*.cdn.example.net:8443", &rules[1]), 0);
	assert_int_equal(rule_ok("203.0.113.7", &rules[2]), 0);
	assert_int_equal(egress_listed(rules, 3, "api.example.com", 0, a), 1);
	assert_int_equal(egress_listed(rules, 3, "x.cdn.example.net", 0, a), 0);
	assert_int_equal(egress_listed(rules, 3, "cdn.example.net", 0, a), 0);
	assert_int_equal(egress_listed(rules, 3, "evil.com", 0, a), 0);
	a[0] = 203, a[1] = 0, a[2] = 113, a[3] = 7;
	assert_int_equal(egress_listed(rules, 3, "203.0.113.7", 4, a), 1);
}

static enum egress_addr_class
cls(const char *s)
{
	unsigned char a[16];
	int fam = egress_ip_parse(s, strlen(s), a);

	assert_true(fam == 4 || fam == 6);
	return egress_addr_class(fam, a);
}

static void
test_eg2_address_classes(void **state)
{
	(void)state;
	assert_int_equal(cls("93.184.216.34"), EA_PUBLIC);
	assert_int_equal(cls("2606:4700::1111"), EA_PUBLIC);
	assert_int_equal(cls("0.0.0.0"), EA_UNSPECIFIED);
	assert_int_equal(cls("::"), EA_UNSPECIFIED);
	assert_int_equal(cls("127.0.0.1"), EA_LOOPBACK);
	assert_int_equal(cls("127.255.0.9"), EA_LOOPBACK);
	assert_int_equal(cls("::1"), EA_LOOPBACK);
	assert_int_equal(cls("10.1.2.3"), EA_PRIVATE);
	assert_int_equal(cls("172.16.0.1"), EA_PRIVATE);
	assert_int_equal(cls("172.31.255.255"), EA_PRIVATE);
	assert_int_equal(cls("172.32.0.1"), EA_PUBLIC);
	assert_int_equal(cls("192.168.1.1"), EA_PRIVATE);
	assert_int_equal(cls("100.64.0.1"), EA_PRIVATE);
	assert_int_equal(cls("100.127.255.255"), EA_PRIVATE);
	assert_int_equal(cls("100.128.0.1"), EA_PUBLIC);
	assert_int_equal(cls("fc00::1"), EA_PRIVATE);
	assert_int_equal(cls("fdff::1"), EA_PRIVATE);
	assert_int_equal(cls("169.254.1.1"), EA_LINKLOCAL);
	assert_int_equal(cls("fe80::1"), EA_LINKLOCAL);
	assert_int_equal(cls("169.254.169.254"), EA_METADATA);
	assert_int_equal(cls("fd00:ec2::254"), EA_METADATA);
	assert_int_equal(cls("224.0.0.1"), EA_MULTICAST);
	assert_int_equal(cls("ff02::1"), EA_MULTICAST);
	assert_int_equal(cls("255.255.255.255"), EA_RESERVED);
	/* IPv6 carriers of IPv4 addresses take their class. */
	assert_int_equal(cls("::ffff:127.0.0.1"), EA_LOOPBACK);
	assert_int_equal(cls("::ffff:169.254.169.254"), EA_METADATA);
	assert_int_equal(cls("::ffff:10.0.0.1"), EA_PRIVATE);
	assert_int_equal(cls("::127.0.0.1"), EA_LOOPBACK);
	assert_int_equal(cls("64:ff9b::a00:1"), EA_PRIVATE);
	assert_int_equal(cls("2002:7f00:1::"), EA_LOOPBACK);
	assert_int_equal(cls("::ffff:93.184.216.34"), EA_PUBLIC);
	/* IPv4-translated (SIIT) carries its IPv4 address too. */
	assert_int_equal(cls("::ffff:0:127.0.0.1"), EA_LOOPBACK);
	assert_int_equal(cls("::ffff:0:169.254.169.254"), EA_METADATA);
	/* Local-use NAT64: where its IPv4 address sits is the network's
	 * choice, so none of it is reached. */
	assert_int_equal(cls("64:ff9b:1::a00:1"), EA_RESERVED);
	assert_int_equal(cls("64:ff9b:1:ffff::7f00:1"), EA_RESERVED);
	assert_int_equal(cls("64:ff9b:2::1"), EA_PUBLIC);
}

static int
req(const char *s, struct egress_req *rq)
{
	return egress_req_parse(s, strlen(s), rq);
}

static void
test_eg2_connect_parsed(void **state)
{
	struct egress_req rq;

	(void)state;
	assert_int_equal(req("CONNECT api.example.com:443 HTTP/1.1\r\n"
			     "Host: api.example.com:443\r\n"
			     "User-Agent: curl/7.88.1\r\n"
			     "Proxy-Connection: Keep-Alive\r\n\r\nTLS",
			     &rq),
	    1);
	assert_string_equal(rq.rq_host, "api.example.com");
	assert_int_equal(rq.rq_port, 443);
	assert_int_equal(rq.rq_ip, 0);
	assert_int_equal(
	    rq.rq_head_len, strlen("CONNECT api.example.com:443 HTTP/1.1\r\n"
				   "Host: api.example.com:443\r\n"
				   "User-Agent: curl/7.88.1\r\n"
				   "Proxy-Connection: Keep-Alive\r\n\r\n"));
	assert_int_equal(
	    req("CONNECT API.Example.com:8443 HTTP/1.0\r\n\r\n", &rq), 1);
	assert_string_equal(rq.rq_host, "api.example.com");
	assert_int_equal(req("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n"
			     "host: [2001:DB8::1]:443\r\n\r\n",
			     &rq),
	    1);
	assert_int_equal(rq.rq_ip, 6);
	assert_string_equal(rq.rq_host, "2001:db8::1");
	assert_int_equal(req("CONNECT 10.0.0.1:22 HTTP/1.1\r\n\r\n", &rq), 1);
	assert_int_equal(rq.rq_ip, 4);
	/* Not complete yet. */
	assert_int_equal(req("", &rq), 0);
	assert_int_equal(req("CONN", &rq), 0);
	assert_int_equal(req("CONNECT a.com:443 HTTP/1.1\r\n", &rq), 0);
}

static void
test_eg2_connect_refused(void **state)
{
	static const char *const bad[] = {
	    "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\n\r\n",
	    "POST http://a.com/ HTTP/1.1\r\n\r\n",
	    "connect a.com:443 HTTP/1.1\r\n\r\n",
	    "CONNECT a.com HTTP/1.1\r\n\r\n",
	    "CONNECT a.com:0 HTTP/1.1\r\n\r\n",
	    "CONNECT a.com:99999 HTTP/1.1\r\n\r\n",
	    "CONNECT a.com:443  HTTP/1.1\r\n\r\n",
	    "CONNECT  a.com:443 HTTP/1.1\r\n\r\n",
	    "CONNECT a.com:443 HTTP/2.0\r\n\r\n",
	    "CONNECT http://a.com:443 HTTP/1.1\r\n\r\n",
	    "CONNECT a.com:443/x HTTP/1.1\r\n\r\n",
	    "CONNECT user@a.com:443 HTTP/1.1\r\n\r\n",
	    /* CRLF tricks */
	    "CONNECT a.com:443\r\nX: HTTP/1.1\r\n\r\n",
	    "CONNECT a.com:443 HTTP/1.1\n\n",
	    "CONNECT a.com:443 HTTP/1.1\r\nHost: a.com:443\n\r\n",
	    "CONNECT a.com:443 HTTP/1.1\r\nX: a\rb\r\n\r\n",
	    "CONNECT a.com%0d%0a:443 HTTP/1.1\r\n\r\n",
	    /* duplicate or foreign Host */
	    ("CONNECT a.com:443 HTTP/1.1\r\nHost: a.com:443\r\n"
	     "Host: a.com:443\r\n\r\n"),
	    "CONNECT a.com:443 HTTP/1.1\r\nHost: b.com:443\r\n\r\n",
	    "CONNECT a.com:443 HTTP/1.1\r\nHost: a.com\r\n\r\n",
	    /* obs-fold, space before colon, bodies */
	    "CONNECT a.com:443 HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
	    "CONNECT a.com:443 HTTP/1.1\r\nHost : a.com:443\r\n\r\n",
	    "CONNECT a.com:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
	    "CONNECT a.com:443 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
	    "CONNECT a.com:443 HTTP/1.1\r\nX:\x01\r\n\r\n",
	    "CONNECT a.com:443 HTTP/1.1\r\n: v\r\n\r\n",
	    /* host and port spellings an allowlist entry might be read as */
	    "CONNECT a.com:0443 HTTP/1.1\r\n\r\n",
	    "CONNECT a.com:+443 HTTP/1.1\r\n\r\n",
	    "CONNECT a.com: HTTP/1.1\r\n\r\n",
	    "CONNECT a.com:443:443 HTTP/1.1\r\n\r\n",
	    "CONNECT a.com.:443 HTTP/1.1\r\n\r\n",
	    "CONNECT %61.com:443 HTTP/1.1\r\n\r\n",
	    "CONNECT \xc3\xa9.com:443 HTTP/1.1\r\n\r\n",
	    "CONNECT b.com@a.com:443 HTTP/1.1\r\n\r\n",
	    "CONNECT 127.1:443 HTTP/1.1\r\n\r\n",
	    "CONNECT 0177.0.0.1:443 HTTP/1.1\r\n\r\n",
	    "CONNECT 0x7f.0.0.1:443 HTTP/1.1\r\n\r\n",
	    "CONNECT 2130706433:443 HTTP/1.1\r\n\r\n",
	    "CONNECT 0:443 HTTP/1.1\r\n\r\n",
	    "CONNECT ::1:443 HTTP/1.1\r\n\r\n",
	    "CONNECT [::1]443 HTTP/1.1\r\n\r\n",
	    "CONNECT [fe80::1%eth0]:443 HTTP/1.1\r\n\r\n",
	    "CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n",
	    "CONNECT [a.com]:443 HTTP/1.1\r\n\r\n",
	};
	struct egress_req rq;
	char *big;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (req(bad[i], &rq) != -1)
			fail_msg("accepted case %zu", i);
	}
	/* NUL in the head. */
	assert_int_equal(egress_req_parse("CONNECT a.com:443 HTTP/1.1\r\n"
					  "X: a\0b\r\n\r\n",
			     37, &rq),
	    -1);
	assert_int_equal(egress_req_parse("CONNECT a\0", 10, &rq), -1);
	/* A head that never ends within the bound. */
	big = malloc(EGRESS_HEAD_MAX + 64);
	assert_non_null(big);
	memcpy(big, "CONNECT a.com:443 HTTP/1.1\r\nX: ", 31);
	memset(big + 31, 'a', EGRESS_HEAD_MAX + 32);
	assert_int_equal(egress_req_parse(big, EGRESS_HEAD_MAX - 1, &rq), 0);
	assert_int_equal(egress_req_parse(big, EGRESS_HEAD_MAX, &rq), -1);
	assert_int_equal(egress_req_parse(big, EGRESS_HEAD_MAX + 40, &rq), -1);
	free(big);
	/* Too many header lines. */
	big = malloc(64 * 1024);
	assert_non_null(big);
	strcpy(big, "CONNECT a.com:443 HTTP/1.1\r\n");
	for (i = 0; i <= EGRESS_HEADERS_MAX; i++)
		strcat(big, "X: y\r\n");
	strcat(big, "\r\n");
	assert_int_equal(req(big, &rq), -1);
	free(big);
}

static int
mf(const char *yaml, struct manifest *m, char *why, size_t whysz)
{
	struct policy_err errs[8];
	struct json_object *root;
	struct yaml_err ye;
	size_t n = 0;
	int r;

	root = yaml_load_buf(yaml, strlen(yaml), &ye);
	assert_non_null(root);
	r = manifest_parse(root, m, errs, 8, &n);
	if (r == -1 && n > 0)
		snprintf(why, whysz, "%s", errs[0].pe_msg);
	json_object_put(root);
	return r;
}

#define MF_HEAD                                                                \
	"name: a\ntransport: subprocess\n"                                     \
	"transportConfig: {bin: /bin/true, args: ['{prompt}']}\n"

static void
test_eg2_manifest_block(void **state)
{
	struct manifest m;
	char why[200] = "";

	(void)state;
	assert_int_equal(mf(MF_HEAD "sandbox: {network: proxy}\n"
				    "egress:\n  allow: [api.example.com, "
				    "'*.example.org:8443']\n"
				    "  maxConnections: 4\n  maxBytes: 1000\n"
				    "  idleTimeoutSec: 5\n",
			     &m, why, sizeof(why)),
	    0);
	assert_int_equal(m.m_sandbox.sb_network, MF_NET_PROXY);
	assert_int_equal(m.m_egress.eg_nallow, 2);
	assert_int_equal(m.m_egress.eg_allow[1].er_port, 8443);
	assert_int_equal(m.m_egress.eg_max_conns, 4);
	assert_int_equal(m.m_egress.eg_max_bytes, 1000);
	assert_int_equal(m.m_egress.eg_idle_sec, 5);
	assert_int_equal(m.m_egress.eg_ntest, 0);
	manifest_free(&m);
	/* Defaults. */
	assert_int_equal(mf(MF_HEAD "sandbox: {network: proxy}\n"
				    "egress: {allow: [a.com]}\n",
			     &m, why, sizeof(why)),
	    0);
	assert_int_equal(m.m_egress.eg_max_conns, EGRESS_CONNS_DEF);
	assert_int_equal(m.m_egress.eg_max_bytes, EGRESS_BYTES_DEF);
	assert_int_equal(m.m_egress.eg_idle_sec, EGRESS_IDLE_DEF);
	manifest_free(&m);
	/* The test-only keys parse (the spawner decides if they may run). */
	assert_int_equal(mf(MF_HEAD "sandbox: {network: proxy}\n"
				    "egress: {allow: [up.test], testResolve: "
				    "{up.test: 127.0.0.2}, testAllowAddress: "
				    "127.0.0.2}\n",
			     &m, why, sizeof(why)),
	    0);
	assert_int_equal(m.m_egress.eg_ntest, 1);
	assert_string_equal(m.m_egress.eg_test[0].et_addr, "127.0.0.2");
	assert_string_equal(m.m_egress.eg_test_allow, "127.0.0.2");
	manifest_free(&m);
}

static void
test_eg2_manifest_refused(void **state)
{
	static const char *const bad[] = {
	    MF_HEAD "sandbox: {network: proxy}\n",
	    MF_HEAD "sandbox: {network: none}\negress: {allow: [a.com]}\n",
	    MF_HEAD "egress: {allow: [a.com]}\n",
	    MF_HEAD "sandbox: {network: proxy}\negress: {allow: []}\n",
	    MF_HEAD "sandbox: {network: proxy}\negress: {allow: ['*']}\n",
	    MF_HEAD "sandbox: {network: proxy}\negress: {allow: [a.com:0]}\n",
	    MF_HEAD "sandbox: {network: proxy}\negress: {allow: [a.com], "
		    "maxConnections: 100000}\n",
	    MF_HEAD "sandbox: {network: proxy}\negress: {allow: [a.com], "
		    "idleTimeoutSec: 0}\n",
	    MF_HEAD "sandbox: {network: proxy}\negress: {allow: [a.com], "
		    "extra: 1}\n",
	    MF_HEAD "sandbox: {network: proxy}\negress: {allow: [a.com], "
		    "testResolve: {a.com: nothere}}\n",
	    MF_HEAD "sandbox: {network: proxy}\negress: {allow: [a.com], "
		    "testAllowAddress: a.com}\n",
	};
	struct manifest m;
	char why[200];
	char many[2048];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (mf(bad[i], &m, why, sizeof(why)) != -1)
			fail_msg("accepted case %zu", i);
	/* 33 entries. */
	snprintf(many, sizeof(many), "%s",
	    MF_HEAD "sandbox: {network: proxy}\n"
		    "egress: {allow: [");
	for (i = 0; i < 33; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
		    "%sh%zu.com", i ? ", " : "", i);
	strcat(many, "]}\n");
	assert_int_equal(mf(many, &m, why, sizeof(why)), -1);
}

static void
test_eg4_reason_names(void **state)
{
	(void)state;
	assert_string_equal(
	    egress_reason_name(ER_HOST_NOT_ALLOWED), "host-not-allowed");
	assert_string_equal(
	    egress_reason_name(ER_BUDGET_EXCEEDED), "budget-exceeded");
	assert_string_equal(
	    egress_reason_name(ER_UPSTREAM_CLOSED), "upstream-closed");
	assert_string_equal(egress_reason_name(ER_MAX), "bad-request");
}

#define KEY "sk-ant-real-key-0123456789"

static int
up(const char *s, struct egress_route *ro)
{
	memset(ro, 0, sizeof(*ro));
	return egress_upstream_parse(s, strlen(s), ro);
}

static void
test_eg3_upstream_parsed(void **state)
{
	static const struct {
		const char *in, *canon, *base;
		unsigned int port;
	} ok[] = {
	    {"https://api.anthropic.com", "https://api.anthropic.com:443", "",
		443},
	    {"https://API.openai.com/v1/", "https://api.openai.com:443/v1",
		"/v1", 443},
	    {"HTTPS://mock.test:8443/a/b", "https://mock.test:8443/a/b", "/a/b",
		8443},
	    {"https://203.0.113.7:444", "https://203.0.113.7:444", "", 444},
	    {"https://[2001:db8::1]/x", "https://[2001:db8::1]:443/x", "/x",
		443},
	};
	static const char *const bad[] = {
	    "http://api.anthropic.com",
	    "https://",
	    "https:///v1",
	    "https://user@api.x.com",
	    "https://*.x.com",
	    "https://a.com:0",
	    "https://a.com/v1?x=1",
	    "https://a.com/v1#f",
	    "https://a.com/../x",
	    "https://a.com/a/./b",
	    "https://a.com//b",
	    "https://a b.com",
	    "https://a.com/\x01",
	    "ftp://a.com",
	};
	struct egress_route ro, ro2;
	char buf[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(up(ok[i].in, &ro), 0);
		assert_int_equal(ro.ro_port, ok[i].port);
		assert_string_equal(ro.ro_base, ok[i].base);
		assert_int_equal(
		    egress_upstream_format(&ro, buf, sizeof(buf)), 0);
		assert_string_equal(buf, ok[i].canon);
		assert_int_equal(up(buf, &ro2), 0);
		assert_memory_equal(&ro, &ro2, sizeof(ro));
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (up(bad[i], &ro) != -1)
			fail_msg("accepted %s", bad[i]);
	/* A NUL in the base path is not one of its characters. */
	memset(&ro, 0, sizeof(ro));
	assert_int_equal(
	    egress_upstream_parse("https://a.com/v\0x", 16, &ro), -1);
}

static int
http(const char *s, struct egress_http *hp)
{
	return egress_http_parse(s, strlen(s), hp);
}

static void
test_eg3_http_parsed(void **state)
{
	static const char req[] =
	    "POST /anthropic/v1/messages?beta=true HTTP/1.1\r\n"
	    "Host: 127.0.0.1:3128\r\nContent-Length: 12\r\n"
	    "x-api-key: " EGRESS_PLACEHOLDER "\r\n\r\n{\"a\":1}";
	struct egress_http hp;

	(void)state;
	assert_int_equal(http(req, &hp), 1);
	assert_int_equal(hp.hp_method_len, 4);
	assert_int_equal(
	    hp.hp_target_len, strlen("/anthropic/v1/messages?beta=true"));
	assert_memory_equal(req + hp.hp_target_off, "/anthropic/", 11);
	assert_int_equal(hp.hp_clen, 12);
	assert_int_equal(hp.hp_nheaders, 3);
	assert_int_equal(hp.hp_head_len, strlen(req) - strlen("{\"a\":1}"));
	/* Not complete yet. */
	assert_int_equal(http("GET /a HTTP/1.1\r\nHost: x\r\n", &hp), 0);
	assert_int_equal(http("GET /a HTTP/1.1\r", &hp), 0);
}

static void
test_eg3_http_refused(void **state)
{
	static const char *const bad[] = {
	    "CONNECT a.com:443 HTTP/1.1\r\n\r\n",
	    "GET http://evil.com/ HTTP/1.1\r\nHost: evil.com\r\n\r\n",
	    "GET * HTTP/1.1\r\n\r\n",
	    "GET /a HTTP/2\r\n\r\n",
	    "GET /a  HTTP/1.1\r\n\r\n",
	    "GET /a b HTTP/1.1\r\n\r\n",
	    "GET /a/../b HTTP/1.1\r\n\r\n",
	    "GET /a/.. HTTP/1.1\r\n\r\n",
	    "GET /./a HTTP/1.1\r\n\r\n",
	    "GET /a#x HTTP/1.1\r\n\r\n",
	    "GET /a HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	    "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
	    "POST /a HTTP/1.1\r\nTransfer_Encoding: chunked\r\n\r\n",
	    "POST /a HTTP/1.1\r\ntransfer_encoding: chunked\r\n\r\n",
	    ("POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent_Length: "
	     "9\r\n\r\n"),
	    ("POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: "
	     "1\r\n\r\n"),
	    "POST /a HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
	    "POST /a HTTP/1.1\r\nContent-Length: 1,1\r\n\r\n",
	    "POST /a HTTP/1.1\r\nContent-Length: 99999999999999\r\n\r\n",
	    "GET /a HTTP/1.1\nHost: a\n\n",
	    "GET /a HTTP/1.1\r\nX: a\rb\r\n\r\n",
	    "GET /a HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
	    "GET /a HTTP/1.1\r\nX : a\r\n\r\n",
	    "GET /a HTTP/1.1\r\nX: a\x01\r\n\r\n",
	    "G(T /a HTTP/1.1\r\n\r\n",
	};
	struct egress_http hp;
	char *big;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (http(bad[i], &hp) != -1)
			fail_msg("accepted case %zu", i);
	/* A NUL in a header's name (never a token character). */
	{
		static const char nul[] = "GET /a HTTP/1.1\r\n\0X: a\r\n\r\n";
		static const char cnul[] =
		    "CONNECT a.com:443 HTTP/1.1\r\n\0X: a\r\n\r\n";
		struct egress_req rq;

		assert_int_equal(
		    egress_http_parse(nul, sizeof(nul) - 1, &hp), -1);
		assert_int_equal(
		    egress_req_parse(cnul, sizeof(cnul) - 1, &rq), -1);
	}
	/* A head that never ends within EGRESS_HEAD_MAX. */
	big = malloc(EGRESS_HEAD_MAX + 64);
	assert_non_null(big);
	strcpy(big, "GET /a HTTP/1.1\r\nX: ");
	memset(big + strlen(big), 'a', EGRESS_HEAD_MAX);
	big[EGRESS_HEAD_MAX + 20] = '\0';
	assert_int_equal(http(big, &hp), -1);
	free(big);
}

/*
 * EG-3: a routed target an upstream would read as leaving the route's
 * base once it decodes the path, and methods that echo the request (and
 * with it the key) back: refused; near misses taken.
 */
static void
test_eg3_http_target_escapes(void **state)
{
	static const char *const bad[] = {
	    "GET /r/%2e%2e/admin HTTP/1.1\r\n\r\n",
	    "GET /r/%2E%2e/admin HTTP/1.1\r\n\r\n",
	    "GET /r/.%2e/admin HTTP/1.1\r\n\r\n",
	    "GET /r/%2e HTTP/1.1\r\n\r\n",
	    "GET /r/..%2fadmin HTTP/1.1\r\n\r\n",
	    "GET /r/..%2Fadmin HTTP/1.1\r\n\r\n",
	    "GET /r/..%5cadmin HTTP/1.1\r\n\r\n",
	    "GET /r/x%2f..%2f..%2fadmin HTTP/1.1\r\n\r\n",
	    "GET /r/..\\admin HTTP/1.1\r\n\r\n",
	    "GET /r/..;/admin HTTP/1.1\r\n\r\n",
	    "GET /r/.;x/admin HTTP/1.1\r\n\r\n",
	    "GET /r/%2e%2e;x HTTP/1.1\r\n\r\n",
	    "GET /r/%00x HTTP/1.1\r\n\r\n",
	    "GET /r/%zz HTTP/1.1\r\n\r\n",
	    "GET /r/%c0%ae%c0%ae/admin HTTP/1.1\r\n\r\n",
	    "GET /r/%ff HTTP/1.1\r\n\r\n",
	    "GET /r/% HTTP/1.1\r\n\r\n",
	    "GET //r HTTP/1.1\r\n\r\n",
	    "TRACE /r/v1 HTTP/1.1\r\n\r\n",
	    "TRACK /r/v1 HTTP/1.1\r\n\r\n",
	    "trace /r/v1 HTTP/1.1\r\n\r\n",
	    "get /r/v1 HTTP/1.1\r\n\r\n",
	    "PROPFIND /r/v1 HTTP/1.1\r\n\r\n",
	    "DEBUG /r/v1 HTTP/1.1\r\n\r\n",
	};
	static const char *const good[] = {
	    "GET /r/%2e%2ex HTTP/1.1\r\n\r\n",
	    "GET /r/...%2f HTTP/1.1\r\n\r\n",
	    "GET /r/.well-known/x HTTP/1.1\r\n\r\n",
	    "GET /r/caf%C3%A9 HTTP/1.1\r\n\r\n",
	    "GET /r/projects/a%2Fb HTTP/1.1\r\n\r\n",
	    "GET /r/x;a=.. HTTP/1.1\r\n\r\n",
	    "GET /r/v1?next=/../%2e%2e/&q=%zz HTTP/1.1\r\n\r\n",
	    "HEAD /r HTTP/1.1\r\n\r\n",
	    "PUT /r/x HTTP/1.1\r\n\r\n",
	    "PATCH /r/x HTTP/1.1\r\n\r\n",
	    "DELETE /r/x HTTP/1.1\r\n\r\n",
	    "OPTIONS /r/x HTTP/1.1\r\n\r\n",
	};
	struct egress_http hp;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (http(bad[i], &hp) != -1)
			fail_msg("accepted case %zu", i);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (http(good[i], &hp) != 1)
			fail_msg("refused case %zu", i);
}

static void
test_eg3_route_match(void **state)
{
	struct egress_route ro[2];
	size_t rest;

	(void)state;
	memset(ro, 0, sizeof(ro));
	strcpy(ro[0].ro_name, "anthropic");
	strcpy(ro[1].ro_name, "openai");
	assert_int_equal(egress_route_match(ro, 2, "/openai/v1", 10, &rest), 1);
	assert_int_equal(rest, 7);
	assert_int_equal(egress_route_match(ro, 2, "/anthropic", 10, &rest), 0);
	assert_int_equal(rest, 10);
	assert_int_equal(egress_route_match(ro, 2, "/openai?x", 9, &rest), 1);
	assert_int_equal(
	    egress_route_match(ro, 2, "/openaix/v1", 11, &rest), -1);
	assert_int_equal(egress_route_match(ro, 2, "/other/v1", 9, &rest), -1);
	assert_int_equal(egress_route_match(ro, 2, "/", 1, &rest), -1);
}

static void
test_eg3_head_rewritten(void **state)
{
	static const char req[] =
	    "POST /anthropic/v1/messages HTTP/1.1\r\n"
	    "Host: 127.0.0.1:3128\r\n"
	    "x-api-key: " EGRESS_PLACEHOLDER "\r\n"
	    "Authorization: Bearer stolen\r\n"
	    "X-Goog-Api-Key: g\r\nProxy-Authorization: p\r\nCookie: c\r\n"
	    "Connection: keep-alive\r\nanthropic-version: 2023-06-01\r\n"
	    "X-HTTP-Method-Override: TRACE\r\nx-http-method: TRACE\r\n"
	    "X-Method-Override: TRACE\r\nX_Api_Key: agents-own\r\n"
	    "proxy_authorization: p\r\nX_HTTP_METHOD_OVERRIDE: TRACE\r\n"
	    "Content-Length: 2\r\n\r\n{}";
	struct egress_route ro;
	struct egress_http hp;
	char out[EGRESS_UP_HEAD_MAX];
	size_t rest;
	int n;

	(void)state;
	assert_int_equal(http(req, &hp), 1);
	assert_int_equal(up("https://api.anthropic.com", &ro), 0);
	strcpy(ro.ro_name, "anthropic");
	ro.ro_auth = EGA_X_API_KEY;
	assert_int_equal(egress_route_match(&ro, 1, req + hp.hp_target_off,
			     hp.hp_target_len, &rest),
	    0);
	n = egress_route_head(req, &hp, &ro, rest, KEY, out, sizeof(out));
	assert_true(n > 0);
	out[n] = '\0';
	assert_string_equal(out,
	    "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.com\r\n"
	    "anthropic-version: 2023-06-01\r\nContent-Length: 2\r\n"
	    "x-api-key: " KEY "\r\nConnection: close\r\n\r\n");
	/* Bearer, a base path and a port. */
	assert_int_equal(up("https://mock.test:8443/v1beta/openai", &ro), 0);
	strcpy(ro.ro_name, "anthropic");
	ro.ro_auth = EGA_BEARER;
	n = egress_route_head(req, &hp, &ro, rest, KEY, out, sizeof(out));
	assert_true(n > 0);
	out[n] = '\0';
	assert_non_null(
	    strstr(out, "POST /v1beta/openai/v1/messages HTTP/1.1\r\n"
			"Host: mock.test:8443\r\n"));
	assert_non_null(strstr(out, "\r\nAuthorization: Bearer " KEY "\r\n"));
	assert_null(strstr(out, "stolen"));
	assert_null(strstr(out, EGRESS_PLACEHOLDER));
	/* The route's bare URL is its base. */
	assert_int_equal(http("GET /anthropic HTTP/1.1\r\n\r\n", &hp), 1);
	assert_int_equal(up("https://a.com", &ro), 0);
	strcpy(ro.ro_name, "anthropic");
	n = egress_route_head("GET /anthropic HTTP/1.1\r\n\r\n", &hp, &ro, 10,
	    KEY, out, sizeof(out));
	assert_true(n > 0);
	assert_memory_equal(out, "GET / HTTP/1.1\r\n", 16);
	/* "//" first upstream (a host to some URL parsers): nothing; under
	 * a base path it is a path. */
	assert_int_equal(
	    http("GET /anthropic//evil.example/x HTTP/1.1\r\n\r\n", &hp), 1);
	assert_int_equal(
	    egress_route_head("GET /anthropic//evil.example/x HTTP/1.1\r\n\r\n",
		&hp, &ro, 10, KEY, out, sizeof(out)),
	    -1);
	assert_int_equal(up("https://a.com/v1", &ro), 0);
	strcpy(ro.ro_name, "anthropic");
	n = egress_route_head("GET /anthropic//evil.example/x HTTP/1.1\r\n\r\n",
	    &hp, &ro, 10, KEY, out, sizeof(out));
	assert_true(n > 0);
	assert_memory_equal(out, "GET /v1//evil.example/x HTTP/1.1\r\n", 34);
	assert_int_equal(up("https://a.com", &ro), 0);
	strcpy(ro.ro_name, "anthropic");
	assert_int_equal(http("GET /anthropic HTTP/1.1\r\n\r\n", &hp), 1);
	/* No room, or a key that would split the head: nothing. */
	assert_int_equal(egress_route_head("GET /anthropic HTTP/1.1\r\n\r\n",
			     &hp, &ro, 10, KEY, out, 20),
	    -1);
	assert_int_equal(egress_route_head("GET /anthropic HTTP/1.1\r\n\r\n",
			     &hp, &ro, 10, "a\r\nX: b", out, sizeof(out)),
	    -1);
}

#define MF_ROUTED                                                              \
	"name: a\ntransport: subprocess\n"                                     \
	"transportConfig: {bin: /bin/true, args: ['{prompt}']}\n"              \
	"secrets: {ANTHROPIC_API_KEY: anthropic.apiKey}\n"                     \
	"sandbox: {network: proxy}\n"

static void
test_eg3_answer_head_says_close(void **state)
{
	static const char ka[] =
	    "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n"
	    "Keep-Alive: timeout=5\r\nSet-Cookie: sess=k3y; Secure\r\n"
	    "Content-Length: 2\r\nset-cookie2: t=1\r\n"
	    "\r\nok";
	static const char want[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
				   "Connection: close\r\n\r\n";
	static const char *const bad[] = {"HTTP/2 200 OK\r\n\r\n",
	    "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 700 X\r\n\r\n",
	    "HTTP/1.1 200OK\r\n\r\n", "HTTP/1.1 200 OK\r\n folded\r\n\r\n",
	    "HTTP/1.1 200 OK\nA: b\r\n\r\n", "HTTP/1.1 200 O\x01K\r\n\r\n",
	    "HTTP/1.1 200 OK\r\nA : b\r\n\r\n", NULL};
	char out[EGRESS_RESP_OUT_MAX], *big;
	struct egress_resp rs;
	size_t i;

	(void)state;
	assert_int_equal(
	    egress_resp_head(ka, sizeof(ka) - 1, out, sizeof(out), &rs), 1);
	assert_int_equal(rs.rs_status, 200);
	assert_int_equal(rs.rs_head_len, sizeof(ka) - 3); /* not the body */
	assert_int_equal(rs.rs_out_len, sizeof(want) - 1);
	assert_memory_equal(out, want, sizeof(want) - 1);
	/* Not whole yet: wait. */
	assert_int_equal(egress_resp_head(ka, 30, out, sizeof(out), &rs), 0);
	for (i = 0; bad[i] != NULL; i++)
		assert_int_equal(egress_resp_head(bad[i], strlen(bad[i]), out,
				     sizeof(out), &rs),
		    -1);
	/* A head past EGRESS_HEAD_MAX is refused, not held for ever. */
	big = malloc(EGRESS_HEAD_MAX + 16);
	assert_non_null(big);
	memcpy(big, "HTTP/1.1 200 OK\r\nA: ", 20);
	memset(big + 20, 'a', EGRESS_HEAD_MAX - 4);
	assert_int_equal(
	    egress_resp_head(big, EGRESS_HEAD_MAX + 16, out, sizeof(out), &rs),
	    -1);
	free(big);
}

static void
test_eg3_manifest_routes(void **state)
{
	static const struct {
		const char *yaml, *why;
	} bad[] = {
	    {"egress: {allow: [api.anthropic.com], routes: {anthropic: "
	     "{upstream: 'http://api.anthropic.com', secret: "
	     "ANTHROPIC_API_KEY, auth: x-api-key}}}\n",
		"egress.routes.anthropic.upstream: must be https://"},
	    {"egress: {allow: [api.anthropic.com], routes: {anthropic: "
	     "{upstream: 'https://evil.com', secret: ANTHROPIC_API_KEY, "
	     "auth: x-api-key}}}\n",
		"egress.routes.anthropic.upstream: its host and port must be "
		"on egress.allow"},
	    {"egress: {allow: [api.anthropic.com], routes: {anthropic: "
	     "{upstream: 'https://api.anthropic.com', secret: OTHER_KEY, "
	     "auth: x-api-key}}}\n",
		"egress.routes.anthropic.secret: must name an entry of "
		"secrets:"},
	    {"egress: {allow: [api.anthropic.com], routes: {anthropic: "
	     "{upstream: 'https://api.anthropic.com', secret: "
	     "ANTHROPIC_API_KEY, auth: basic}}}\n",
		"egress.routes.anthropic.auth: must be x-api-key, bearer or "
		"x-goog-api-key"},
	    {"egress: {allow: [api.anthropic.com], routes: {anthropic: "
	     "{upstream: 'https://api.anthropic.com', secret: "
	     "ANTHROPIC_API_KEY, auth: x-api-key, baseUrlEnv: LD_PRELOAD}}}\n",
		"egress.routes.anthropic.baseUrlEnv: must be an environment "
		"name"},
	    {"egress: {allow: [api.anthropic.com], routes: {anthropic: "
	     "{upstream: 'https://api.anthropic.com', secret: "
	     "ANTHROPIC_API_KEY, auth: x-api-key, extra: 1}}}\n",
		"egress.routes.anthropic.extra: unknown key"},
	    {"egress: {allow: [api.anthropic.com], routes: {anthropic: "
	     "{secret: ANTHROPIC_API_KEY, auth: x-api-key}}}\n",
		"egress.routes.anthropic.upstream: missing"},
	    {"egress: {allow: [api.anthropic.com], routes: {Bad_Name: "
	     "{upstream: 'https://api.anthropic.com', secret: "
	     "ANTHROPIC_API_KEY, auth: x-api-key}}}\n",
		"egress.routes: route names"},
	    {"egress: {allow: [api.anthropic.com], routes: {}}\n",
		"egress.routes: must be a mapping of 1 to 4 routes"},
	};
	struct manifest m;
	char why[200], yaml[1024];
	size_t i;

	(void)state;
	snprintf(yaml, sizeof(yaml), "%s",
	    MF_ROUTED
	    "egress:\n  allow: [api.anthropic.com]\n  routes:\n"
	    "    anthropic:\n      upstream: https://api.anthropic.com\n"
	    "      secret: ANTHROPIC_API_KEY\n      auth: x-api-key\n"
	    "      baseUrlEnv: ANTHROPIC_BASE_URL\n");
	assert_int_equal(mf(yaml, &m, why, sizeof(why)), 0);
	assert_int_equal(m.m_egress.eg_nroutes, 1);
	assert_string_equal(
	    m.m_egress.eg_routes[0].mr_route.ro_name, "anthropic");
	assert_string_equal(
	    m.m_egress.eg_routes[0].mr_secret, "ANTHROPIC_API_KEY");
	assert_string_equal(
	    m.m_egress.eg_routes[0].mr_base_env, "ANTHROPIC_BASE_URL");
	manifest_free(&m);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(yaml, sizeof(yaml), "%s%s", MF_ROUTED, bad[i].yaml);
		why[0] = '\0';
		if (mf(yaml, &m, why, sizeof(why)) != -1)
			fail_msg("accepted case %zu", i);
		if (strncmp(why, bad[i].why, strlen(bad[i].why)) != 0)
			fail_msg("case %zu: %s", i, why);
	}
}

/* EG-3: the agent's env holds the placeholder and the route's URL. */
static void
test_eg3_env_placeholder(void **state)
{
	const char *names[] = {"ANTHROPIC_API_KEY"}, *values[] = {KEY};
	const char *parent[] = {"PATH=/usr/bin", NULL};
	struct manifest m;
	char why[200], **envp;
	const char *code;
	size_t i;
	int placeholder = 0, url = 0;

	(void)state;
	assert_int_equal(
	    mf(MF_ROUTED
		"egress:\n  allow: [api.anthropic.com]\n  routes:\n"
		"    anthropic: {upstream: 'https://api.anthropic.com', "
		"secret: ANTHROPIC_API_KEY, auth: x-api-key, "
		"baseUrlEnv: ANTHROPIC_BASE_URL}\n",
		&m, why, sizeof(why)),
	    0);
	assert_int_equal(
	    env_build(parent, &m, "/", names, values, 1, &envp, &code), 0);
	for (i = 0; envp[i] != NULL; i++) {
		assert_null(strstr(envp[i], KEY));
		placeholder |=
		    strcmp(envp[i], "ANTHROPIC_API_KEY=" EGRESS_PLACEHOLDER) ==
		    0;
		url |=
		    strcmp(envp[i],
			"ANTHROPIC_BASE_URL=http://127.0.0.1:3128/anthropic") ==
		    0;
	}
	assert_true(placeholder && url);
	strv_free(envp);
	manifest_free(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_eg2_rules_accepted),
	    cmocka_unit_test(test_eg2_rules_refused),
	    cmocka_unit_test(test_eg2_match),
	    cmocka_unit_test(test_eg4_named_only_when_listed),
	    cmocka_unit_test(test_eg2_address_classes),
	    cmocka_unit_test(test_eg2_connect_parsed),
	    cmocka_unit_test(test_eg2_connect_refused),
	    cmocka_unit_test(test_eg2_manifest_block),
	    cmocka_unit_test(test_eg2_manifest_refused),
	    cmocka_unit_test(test_eg4_reason_names),
	    cmocka_unit_test(test_eg3_upstream_parsed),
	    cmocka_unit_test(test_eg3_http_parsed),
	    cmocka_unit_test(test_eg3_http_refused),
	    cmocka_unit_test(test_eg3_http_target_escapes),
	    cmocka_unit_test(test_eg3_route_match),
	    cmocka_unit_test(test_eg3_head_rewritten),
	    cmocka_unit_test(test_eg3_answer_head_says_close),
	    cmocka_unit_test(test_eg3_manifest_routes),
	    cmocka_unit_test(test_eg3_env_placeholder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
