/*
 * Unit tests for policy/http.c: the broker's perimeter rules (PER-2,
 * PER-3, PER-4, PER-5, PER-8), mostly with hostile inputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "http.h"

#define PORT 8787

/* PER-2 */
static void
test_per2_host_loopback_ok(void **state)
{
	(void)state;
	assert_int_equal(http_host_ok("127.0.0.1:8787", PORT), 1);
	assert_int_equal(http_host_ok("localhost:8787", PORT), 1);
	assert_int_equal(http_host_ok("LocalHost:8787", PORT), 1);
	assert_int_equal(http_host_ok("LOCALHOST:8787", PORT), 1);
	assert_int_equal(http_host_ok("[::1]:8787", PORT), 1);
	assert_int_equal(http_host_ok("127.0.0.1:1", 1), 1);
	assert_int_equal(http_host_ok("127.0.0.1:65535", 65535), 1);
}

/* PER-2 */
static void
test_per2_host_port_refused(void **state)
{
	(void)state;
	assert_int_equal(http_host_ok("127.0.0.1", PORT), 0);
	assert_int_equal(http_host_ok("localhost", PORT), 0);
	assert_int_equal(http_host_ok("[::1]", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1:", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1:8788", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1:878", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1:87870", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1:08787", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1:008787", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1:+8787", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1:-8787", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1: 8787", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1:8787 ", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1:0x2253", PORT), 0);
	/* 2^32 + 8787 must not wrap onto 8787. */
	assert_int_equal(http_host_ok("127.0.0.1:4294975883", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1:0", 0), 0);
	assert_int_equal(http_host_ok("127.0.0.1:70000", 70000), 0);
	assert_int_equal(http_host_ok("127.0.0.1:8787:8787", PORT), 0);
	assert_int_equal(http_host_ok(":8787", PORT), 0);
}

/* PER-2: DNS rebinding and look-alike hosts. */
static void
test_per2_host_hostile(void **state)
{
	(void)state;
	assert_int_equal(http_host_ok(NULL, PORT), 0);
	assert_int_equal(http_host_ok("", PORT), 0);
	assert_int_equal(http_host_ok("evil.example:8787", PORT), 0);
	assert_int_equal(http_host_ok("localhost.:8787", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1.:8787", PORT), 0);
	assert_int_equal(http_host_ok("a@127.0.0.1:8787", PORT), 0);
	assert_int_equal(http_host_ok("user:pw@localhost:8787", PORT), 0);
	assert_int_equal(http_host_ok(" localhost:8787", PORT), 0);
	assert_int_equal(http_host_ok("local host:8787", PORT), 0);
	assert_int_equal(http_host_ok("localhost.evil.example:8787", PORT), 0);
	assert_int_equal(http_host_ok("localhost\t:8787", PORT), 0);
	assert_int_equal(http_host_ok("localhost\r\n:8787", PORT), 0);
	assert_int_equal(http_host_ok("127.1:8787", PORT), 0);
	assert_int_equal(http_host_ok("2130706433:8787", PORT), 0);
	assert_int_equal(http_host_ok("0.0.0.0:8787", PORT), 0);
	assert_int_equal(http_host_ok("[::ffff:127.0.0.1]:8787", PORT), 0);
	assert_int_equal(http_host_ok("[0:0:0:0:0:0:0:1]:8787", PORT), 0);
	assert_int_equal(http_host_ok("::1:8787", PORT), 0);
	assert_int_equal(http_host_ok("[::1:8787", PORT), 0);
	assert_int_equal(http_host_ok("::1]:8787", PORT), 0);
	assert_int_equal(http_host_ok("127.0.0.1/:8787", PORT), 0);
	assert_int_equal(http_host_ok("xn--localhost:8787", PORT), 0);
}

/* PER-2 with PER-1 allowRemote. */
static void
test_per2_host_listen_addr(void **state)
{
	(void)state;
	assert_int_equal(
	    http_host_ok_addr("192.0.2.1:8787", "192.0.2.1", PORT), 1);
	assert_int_equal(
	    http_host_ok_addr("localhost:8787", "192.0.2.1", PORT), 1);
	assert_int_equal(http_host_ok_addr("localhost:8787", NULL, PORT), 1);
	assert_int_equal(
	    http_host_ok_addr("192.0.2.1:8788", "192.0.2.1", PORT), 0);
	assert_int_equal(http_host_ok_addr("192.0.2.1", "192.0.2.1", PORT), 0);
	assert_int_equal(
	    http_host_ok_addr("192.0.2.10:8787", "192.0.2.1", PORT), 0);
	assert_int_equal(
	    http_host_ok_addr("192.0.2.1.:8787", "192.0.2.1", PORT), 0);
	assert_int_equal(
	    http_host_ok_addr("a@192.0.2.1:8787", "192.0.2.1", PORT), 0);
	assert_int_equal(http_host_ok_addr("192.0.2.1:8787", NULL, PORT), 0);
	assert_int_equal(http_host_ok_addr("192.0.2.1:8787", "", PORT), 0);
	assert_int_equal(http_host_ok_addr(":8787", "", PORT), 0);
	/* IPv6 listen addresses appear bracketed. */
	assert_int_equal(
	    http_host_ok_addr("[2001:db8::1]:8787", "2001:db8::1", PORT), 1);
	assert_int_equal(
	    http_host_ok_addr("[2001:DB8::1]:8787", "2001:db8::1", PORT), 1);
	assert_int_equal(
	    http_host_ok_addr("[2001:db8::1]:8787", "[2001:db8::1]", PORT), 1);
	assert_int_equal(
	    http_host_ok_addr("2001:db8::1:8787", "2001:db8::1", PORT), 0);
	assert_int_equal(
	    http_host_ok_addr("[2001:db8::1]", "2001:db8::1", PORT), 0);
	/* Wildcards and odd listen addresses never become acceptable names. */
	assert_int_equal(http_host_ok_addr("0.0.0.0:8787", "0.0.0.0", PORT), 0);
	assert_int_equal(http_host_ok_addr("[::]:8787", "::", PORT), 0);
	assert_int_equal(http_host_ok_addr("[::]:8787", "[::]", PORT), 0);
	assert_int_equal(http_host_ok_addr("a b:8787", "a b", PORT), 0);
	assert_int_equal(http_host_ok_addr("[x:8787", "[x", PORT), 0);
	assert_int_equal(http_host_ok_addr("host.:8787", "host.", PORT), 0);
}

/* PER-3 */
static void
test_per3_origin_loopback_ok(void **state)
{
	(void)state;
	assert_int_equal(
	    http_origin_ok("http://127.0.0.1:8787", PORT, NULL, 0), 1);
	assert_int_equal(
	    http_origin_ok("http://localhost:8787", PORT, NULL, 0), 1);
	assert_int_equal(http_origin_ok("http://[::1]:8787", PORT, NULL, 0), 1);
}

/* PER-3 */
static void
test_per3_origin_hostile(void **state)
{
	(void)state;
	assert_int_equal(http_origin_ok(NULL, PORT, NULL, 0), 0);
	assert_int_equal(http_origin_ok("", PORT, NULL, 0), 0);
	assert_int_equal(http_origin_ok("null", PORT, NULL, 0), 0);
	assert_int_equal(
	    http_origin_ok("http://127.0.0.1:8787/", PORT, NULL, 0), 0);
	assert_int_equal(http_origin_ok("http://127.0.0.1", PORT, NULL, 0), 0);
	assert_int_equal(
	    http_origin_ok("http://127.0.0.1:8788", PORT, NULL, 0), 0);
	assert_int_equal(
	    http_origin_ok("http://127.0.0.1:08787", PORT, NULL, 0), 0);
	assert_int_equal(
	    http_origin_ok("https://127.0.0.1:8787", PORT, NULL, 0), 0);
	assert_int_equal(
	    http_origin_ok("HTTP://127.0.0.1:8787", PORT, NULL, 0), 0);
	assert_int_equal(
	    http_origin_ok("http://LOCALHOST:8787", PORT, NULL, 0), 0);
	assert_int_equal(
	    http_origin_ok("http://localhost.:8787", PORT, NULL, 0), 0);
	assert_int_equal(
	    http_origin_ok("http://a@localhost:8787", PORT, NULL, 0), 0);
	assert_int_equal(
	    http_origin_ok("http://evil.example:8787", PORT, NULL, 0), 0);
	assert_int_equal(
	    http_origin_ok("http://localhost:8787.evil.example", PORT, NULL, 0),
	    0);
	assert_int_equal(
	    http_origin_ok(" http://localhost:8787", PORT, NULL, 0), 0);
	assert_int_equal(
	    http_origin_ok("http://localhost:8787 ", PORT, NULL, 0), 0);
	assert_int_equal(http_origin_ok("http://[::1]", PORT, NULL, 0), 0);
	assert_int_equal(http_origin_ok("http://", PORT, NULL, 0), 0);
	assert_int_equal(http_origin_ok("file://", PORT, NULL, 0), 0);
}

/* PER-3: configured origins are compared exactly. */
static void
test_per3_origin_extra(void **state)
{
	const char *const extra[] = {NULL, "", "https://cordon.example"};

	(void)state;
	assert_int_equal(
	    http_origin_ok("https://cordon.example", PORT, extra, 3), 1);
	assert_int_equal(
	    http_origin_ok("https://cordon.example/", PORT, extra, 3), 0);
	assert_int_equal(
	    http_origin_ok("https://CORDON.example", PORT, extra, 3), 0);
	assert_int_equal(
	    http_origin_ok("https://cordon.example", PORT, extra, 2), 0);
	assert_int_equal(
	    http_origin_ok("https://cordon.exampl", PORT, extra, 3), 0);
	assert_int_equal(
	    http_origin_ok("https://cordon.example.evil", PORT, extra, 3), 0);
	/* Empty entries in the list never match an empty Origin. */
	assert_int_equal(http_origin_ok("", PORT, extra, 3), 0);
	assert_int_equal(
	    http_origin_ok("http://localhost:8787", PORT, extra, 3), 1);
}

/* PER-4 */
static void
test_per4_fetch_site(void **state)
{
	(void)state;
	assert_int_equal(http_fetch_site_ok("same-origin"), 1);
	assert_int_equal(http_fetch_site_ok("none"), 1);
	assert_int_equal(http_fetch_site_ok("Same-Origin"), 1);
	assert_int_equal(http_fetch_site_ok("NONE"), 1);
	assert_int_equal(http_fetch_site_ok("  same-origin\t"), 1);
	assert_int_equal(http_fetch_site_ok("same-site"), 0);
	assert_int_equal(http_fetch_site_ok("cross-site"), 0);
	assert_int_equal(http_fetch_site_ok("Same-Site"), 0);
	assert_int_equal(http_fetch_site_ok("CROSS-SITE"), 0);
	assert_int_equal(http_fetch_site_ok("cRoSs-SiTe"), 0);
	assert_int_equal(http_fetch_site_ok(" cross-site "), 0);
	/* Unknown values fail closed. */
	assert_int_equal(http_fetch_site_ok(NULL), 0);
	assert_int_equal(http_fetch_site_ok(""), 0);
	assert_int_equal(http_fetch_site_ok("   "), 0);
	assert_int_equal(http_fetch_site_ok("same-origin, cross-site"), 0);
	assert_int_equal(http_fetch_site_ok("same-origin;x"), 0);
	assert_int_equal(http_fetch_site_ok("same origin"), 0);
	assert_int_equal(http_fetch_site_ok("same-origin\r\n"), 0);
	assert_int_equal(http_fetch_site_ok("nonee"), 0);
	assert_int_equal(http_fetch_site_ok("non"), 0);
}

static int
target(const char *s)
{
	return http_target_ok(s, strlen(s));
}

/* PER-8 */
static void
test_per8_target_ok(void **state)
{
	(void)state;
	assert_int_equal(target("/"), 1);
	assert_int_equal(target("/api/health"), 1);
	assert_int_equal(target("/ui/"), 1);
	assert_int_equal(target("/api/vault/note?path=inbox%2Fa.md"), 1);
	assert_int_equal(target("/api/audit?kind=run&limit=10"), 1);
}

/* PER-8 */
static void
test_per8_target_hostile(void **state)
{
	static const char nul[] = "/api/\0health";

	(void)state;
	assert_int_equal(http_target_ok(NULL, 0), 0);
	assert_int_equal(target(""), 0);
	assert_int_equal(target("*"), 0);
	assert_int_equal(target("http://127.0.0.1:8787/api/health"), 0);
	assert_int_equal(target("api/health"), 0);
	assert_int_equal(target("//evil.example/api"), 0);
	assert_int_equal(target("/api/health#frag"), 0);
	assert_int_equal(target("/api/he alth"), 0);
	assert_int_equal(target("/api/health\r\nX: y"), 0);
	assert_int_equal(target("/api/\thealth"), 0);
	assert_int_equal(target("/api/\x7f"), 0);
	assert_int_equal(target("/api/\x1b[31m"), 0);
	assert_int_equal(target("/\\evil.example"), 0);
	assert_int_equal(target("/caf\xc3\xa9"), 0);
	assert_int_equal(http_target_ok(nul, sizeof(nul) - 1), 0);
}

/* PER-8: URI <= 8 KiB. */
static void
test_per8_target_length(void **state)
{
	char *buf;

	(void)state;
	buf = malloc(HTTP_TARGET_MAX + 2);
	assert_non_null(buf);
	memset(buf, 'a', HTTP_TARGET_MAX + 1);
	buf[0] = '/';
	buf[HTTP_TARGET_MAX + 1] = '\0';
	assert_int_equal(http_target_ok(buf, HTTP_TARGET_MAX), 1);
	assert_int_equal(http_target_ok(buf, HTTP_TARGET_MAX + 1), 0);
	assert_int_equal(http_target_ok(buf, (size_t)-1), 0);
	free(buf);
}

/* PER-5 */
static void
test_per5_bearer_ok(void **state)
{
	const char *tok;
	size_t len;

	(void)state;
	assert_int_equal(http_bearer_parse("Bearer abc", &tok, &len), 1);
	assert_int_equal(len, 3);
	assert_memory_equal(tok, "abc", 3);
	assert_int_equal(http_bearer_parse("bearer x", &tok, &len), 1);
	assert_int_equal(len, 1);
	assert_int_equal(
	    http_bearer_parse("BEARER A-Z.a_z~0+9/==", &tok, &len), 1);
	assert_int_equal(len, 14);
}

/* PER-5 */
static void
test_per5_bearer_hostile(void **state)
{
	const char *tok = "stale";
	size_t len = 99;

	(void)state;
	assert_int_equal(http_bearer_parse("Bearer  x", &tok, &len), 0);
	assert_null(tok);
	assert_int_equal(len, 0);
	assert_int_equal(http_bearer_parse(NULL, &tok, &len), 0);
	assert_int_equal(http_bearer_parse("Bearer x", NULL, &len), 0);
	assert_int_equal(http_bearer_parse("Bearer x", &tok, NULL), 0);
	assert_int_equal(http_bearer_parse("", &tok, &len), 0);
	assert_int_equal(http_bearer_parse("Bearer", &tok, &len), 0);
	assert_int_equal(http_bearer_parse("Bearer ", &tok, &len), 0);
	assert_int_equal(http_bearer_parse("Bearer\tx", &tok, &len), 0);
	assert_int_equal(http_bearer_parse("Bearerx", &tok, &len), 0);
	assert_int_equal(http_bearer_parse(" Bearer x", &tok, &len), 0);
	assert_int_equal(http_bearer_parse("Bearer x ", &tok, &len), 0);
	assert_int_equal(http_bearer_parse("Bearer x y", &tok, &len), 0);
	assert_int_equal(http_bearer_parse("Bearer x\r\n", &tok, &len), 0);
	assert_int_equal(http_bearer_parse("Bearer x,y", &tok, &len), 0);
	assert_int_equal(http_bearer_parse("Bearer \"x\"", &tok, &len), 0);
	assert_int_equal(
	    http_bearer_parse("Basic dXNlcjpwdw==", &tok, &len), 0);
	assert_int_equal(http_bearer_parse("Bearér x", &tok, &len), 0);
	assert_int_equal(http_bearer_parse("Bearer x\xc3\xa9", &tok, &len), 0);
	assert_null(tok);
}

/* PER-5: token length 1..256. */
static void
test_per5_bearer_length(void **state)
{
	char buf[7 + HTTP_BEARER_MAX + 2];
	const char *tok;
	size_t len;

	(void)state;
	memcpy(buf, "Bearer ", 7);
	memset(buf + 7, 'k', HTTP_BEARER_MAX + 1);
	buf[7 + HTTP_BEARER_MAX] = '\0';
	assert_int_equal(http_bearer_parse(buf, &tok, &len), 1);
	assert_int_equal(len, HTTP_BEARER_MAX);
	buf[7 + HTTP_BEARER_MAX] = 'k';
	buf[7 + HTTP_BEARER_MAX + 1] = '\0';
	assert_int_equal(http_bearer_parse(buf, &tok, &len), 0);
}

static int
cookie_is(const char *hdr, const char *name, const char *want)
{
	const char *v;
	size_t n;

	if (!http_cookie_get(hdr, name, &v, &n))
		return 0;
	return n == strlen(want) && memcmp(v, want, n) == 0;
}

/* PER-5 */
static void
test_per5_cookie_ok(void **state)
{
	(void)state;
	assert_true(cookie_is("cordon_session=abc", "cordon_session", "abc"));
	assert_true(
	    cookie_is("a=1; cordon_session=abc; b=2", "cordon_session", "abc"));
	assert_true(
	    cookie_is("a=1;cordon_session=abc", "cordon_session", "abc"));
	assert_true(
	    cookie_is("a=1; cordon_session=abc ", "cordon_session", "abc"));
	assert_true(cookie_is(
	    "x_cordon_session=1; cordon_session=abc", "cordon_session", "abc"));
	assert_true(cookie_is("cordon_session=a=b", "cordon_session", "a=b"));
	assert_true(cookie_is(
	    "junk; cordon_session=abc; =x; ;", "cordon_session", "abc"));
}

/* PER-5: absent, ambiguous or malformed → refused. */
static void
test_per5_cookie_hostile(void **state)
{
	const char *v = "stale";
	size_t n = 9;

	(void)state;
	assert_int_equal(http_cookie_get("cordon_session=a; cordon_session=b",
			     "cordon_session", &v, &n),
	    0);
	assert_null(v);
	assert_int_equal(n, 0);
	assert_int_equal(http_cookie_get("cordon_session=a; cordon_session=a",
			     "cordon_session", &v, &n),
	    0);
	assert_int_equal(http_cookie_get("cordon_session=a;cordon_session =b",
			     "cordon_session", &v, &n),
	    0);
	assert_int_equal(http_cookie_get("cordon_session=; cordon_session=b",
			     "cordon_session", &v, &n),
	    0);
	assert_int_equal(http_cookie_get(NULL, "cordon_session", &v, &n), 0);
	assert_int_equal(http_cookie_get("a=1", NULL, &v, &n), 0);
	assert_int_equal(http_cookie_get("a=1", "", &v, &n), 0);
	assert_int_equal(http_cookie_get("=1", "", &v, &n), 0);
	assert_int_equal(http_cookie_get("a=1", "a", NULL, &n), 0);
	assert_int_equal(http_cookie_get("a=1", "a", &v, NULL), 0);
	assert_int_equal(http_cookie_get("", "cordon_session", &v, &n), 0);
	assert_int_equal(
	    http_cookie_get("a=1; b=2", "cordon_session", &v, &n), 0);
	assert_int_equal(
	    http_cookie_get("cordon_session", "cordon_session", &v, &n), 0);
	assert_int_equal(
	    http_cookie_get("cordon_session=", "cordon_session", &v, &n), 0);
	assert_int_equal(
	    http_cookie_get("Cordon_Session=abc", "cordon_session", &v, &n), 0);
	assert_int_equal(
	    http_cookie_get("cordon_sessionx=abc", "cordon_session", &v, &n),
	    0);
	assert_int_equal(
	    http_cookie_get("cordon_session=a b", "cordon_session", &v, &n), 0);
	assert_int_equal(
	    http_cookie_get("cordon_session=a\x01", "cordon_session", &v, &n),
	    0);
	assert_int_equal(
	    http_cookie_get("cordon_session=\"abc\"", "cordon_session", &v, &n),
	    0);
	assert_int_equal(
	    http_cookie_get("cordon_session=a,b", "cordon_session", &v, &n), 0);
	assert_int_equal(http_cookie_get("a=1", "a=1", &v, &n), 0);
	assert_int_equal(http_cookie_get("a b=1", "a b", &v, &n), 0);
	assert_null(v);
}

/* PER-8: huge values are refused or handled without overrun. */
static void
test_per8_huge_inputs(void **state)
{
	const size_t big = 1 << 20;
	const char *p;
	char *buf;
	size_t n;

	(void)state;
	buf = malloc(big + 1);
	assert_non_null(buf);
	memset(buf, 'a', big);
	buf[big] = '\0';
	assert_int_equal(http_host_ok(buf, PORT), 0);
	assert_int_equal(http_host_ok_addr(buf, buf, PORT), 0);
	assert_int_equal(http_origin_ok(buf, PORT, NULL, 0), 0);
	assert_int_equal(http_fetch_site_ok(buf), 0);
	assert_int_equal(http_bearer_parse(buf, &p, &n), 0);
	memcpy(buf, "Bearer ", 7);
	assert_int_equal(http_bearer_parse(buf, &p, &n), 0);
	buf[0] = '/';
	assert_int_equal(http_target_ok(buf, big), 0);
	memset(buf, 'a', big);
	memcpy(buf, "c=", 2);
	assert_int_equal(http_cookie_get(buf, "c", &p, &n), 1);
	assert_int_equal(n, big - 2);
	memset(buf, ';', big);
	assert_int_equal(http_cookie_get(buf, "c", &p, &n), 0);
	free(buf);
}

/* PER-8: header lines for http_headers_ok, walked like the broker's list. */
struct hdrs {
	const char *const *h_kv; /* name, value, name, value, ..., NULL */
	size_t h_i;
};

static int
hdrs_next(void *arg, const char **name, const char **value)
{
	struct hdrs *h = arg;

	if (h->h_kv[h->h_i] == NULL)
		return 0;
	*name = h->h_kv[h->h_i];
	*value = h->h_kv[h->h_i + 1];
	h->h_i += 2;
	return 1;
}

static int
hdrs_ok(const char *const *kv)
{
	struct hdrs h = {kv, 0};

	return http_headers_ok(hdrs_next, &h);
}

#define HDRS(...) hdrs_ok((const char *const[]){__VA_ARGS__, NULL})

/* PER-8: RFC 9110 token names. */
static void
test_per8_header_name(void **state)
{
	char all[256];
	size_t i, n = 0;
	int c;

	(void)state;
	assert_int_equal(http_header_name_ok("Host", 4), 1);
	assert_int_equal(http_header_name_ok("X-A", 3), 1);
	assert_int_equal(http_header_name_ok("!#$%&'*+-.^_`|~09azAZ", 21), 1);
	assert_int_equal(http_header_name_ok("", 0), 0);
	assert_int_equal(http_header_name_ok(NULL, 0), 0);
	assert_int_equal(http_header_name_ok("X-A ", 4), 0);
	assert_int_equal(http_header_name_ok(" X-A", 4), 0);
	assert_int_equal(http_header_name_ok("X A", 3), 0);
	assert_int_equal(http_header_name_ok("X\tA", 3), 0);
	assert_int_equal(http_header_name_ok("X:A", 3), 0);
	assert_int_equal(http_header_name_ok("X-A:", 4), 0);
	assert_int_equal(http_header_name_ok("X-\0A", 4), 0);
	assert_int_equal(http_header_name_ok("X-\x80", 3), 0);
	assert_int_equal(http_header_name_ok("X-\xff", 3), 0);
	assert_int_equal(http_header_name_ok("X-\x7f", 3), 0);
	assert_int_equal(http_header_name_ok("X-\r\n", 4), 0);
	assert_int_equal(http_header_name_ok("(X)", 3), 0);
	assert_int_equal(http_header_name_ok("X\"", 2), 0);
	/* Exactly the 77 tchar bytes pass, one at a time. */
	for (c = 0; c < 256; c++) {
		all[0] = (char)c;
		if (http_header_name_ok(all, 1))
			n++;
	}
	assert_int_equal(n, 77);
	for (i = 0; i < sizeof(all); i++)
		all[i] = 'a';
	assert_int_equal(http_header_name_ok(all, sizeof(all)), 1);
}

/* PER-8: Content-Length is 1*DIGIT, canonical and bounded. */
static void
test_per8_content_length(void **state)
{
	unsigned long long n = 7;

	(void)state;
	assert_int_equal(http_content_length_ok("19", &n), 1);
	assert_true(n == 19);
	assert_int_equal(http_content_length_ok("0", &n), 1);
	assert_true(n == 0);
	assert_int_equal(http_content_length_ok("999999999999999999", &n), 1);
	assert_true(n == 999999999999999999ULL);
	assert_int_equal(http_content_length_ok("1048576", NULL), 1);
	n = 7;
	assert_int_equal(http_content_length_ok("1000000000000000000", &n), 0);
	assert_true(n == 0);
	assert_int_equal(
	    http_content_length_ok("123456789012345678901234567890", &n), 0);
	assert_int_equal(
	    http_content_length_ok("99999999999999999999999", &n), 0);
	assert_int_equal(http_content_length_ok("0019", &n), 0);
	assert_int_equal(http_content_length_ok("00", &n), 0);
	assert_int_equal(http_content_length_ok("+19", &n), 0);
	assert_int_equal(http_content_length_ok("-1", &n), 0);
	assert_int_equal(http_content_length_ok("19 ", &n), 0);
	assert_int_equal(http_content_length_ok(" 19", &n), 0);
	assert_int_equal(http_content_length_ok("1 9", &n), 0);
	assert_int_equal(http_content_length_ok("\t19", &n), 0);
	assert_int_equal(http_content_length_ok("19\t", &n), 0);
	assert_int_equal(http_content_length_ok("19, 19", &n), 0);
	assert_int_equal(http_content_length_ok("19,19", &n), 0);
	assert_int_equal(http_content_length_ok("0x13", &n), 0);
	assert_int_equal(http_content_length_ok("1e3", &n), 0);
	assert_int_equal(http_content_length_ok("19\r\n", &n), 0);
	assert_int_equal(http_content_length_ok("\xd9\xa1", &n), 0);
	assert_int_equal(http_content_length_ok("", &n), 0);
	assert_int_equal(http_content_length_ok(NULL, &n), 0);
	assert_true(n == 0);
}

/* PER-8: the whole header list, every rule. */
static void
test_per8_headers_ok(void **state)
{
	struct hdrs none = {(const char *const[]){NULL}, 0};

	(void)state;
	assert_int_equal(http_headers_ok(hdrs_next, &none), 1);
	assert_int_equal(http_headers_ok(NULL, &none), 0);
	assert_int_equal(HDRS("Host", "127.0.0.1:1", "X-A", "a folded"), 1);
	assert_int_equal(HDRS("Content-Length", "19"), 1);
	assert_int_equal(HDRS("Content-Length", "0"), 1);
	/* Identical duplicates carry no ambiguity. */
	assert_int_equal(
	    HDRS("Content-Length", "19", "X-A", "", "content-length", "19"), 1);
	assert_int_equal(HDRS("Transfer-Encoding", "chunked"), 1);
	assert_int_equal(HDRS("transfer-encoding", "Chunked"), 1);
	assert_int_equal(HDRS("TRANSFER-ENCODING", "CHUNKED"), 1);
	/* Values of other headers are not this rule's business. */
	assert_int_equal(HDRS("X-Content-Length", "+19", "X-TE", "gzip"), 1);
}

static void
test_per8_headers_hostile(void **state)
{
	(void)state;
	/* Names. */
	assert_int_equal(HDRS("X-A ", "b"), 0);
	assert_int_equal(HDRS("X A", "b"), 0);
	assert_int_equal(HDRS("", "b"), 0);
	assert_int_equal(HDRS("X:A", "b"), 0);
	assert_int_equal(HDRS("X-\x80", "b"), 0);
	assert_int_equal(HDRS("Host", "h", "X\tA", "b"), 0);
	assert_int_equal(HDRS("Content-Length ", "19"), 0);
	assert_int_equal(HDRS("X-A", NULL), 0);
	/* Content-Length. */
	assert_int_equal(HDRS("Content-Length", "+19"), 0);
	assert_int_equal(HDRS("Content-Length", "-1"), 0);
	assert_int_equal(HDRS("Content-Length", "0019"), 0);
	assert_int_equal(HDRS("Content-Length", "19 "), 0);
	assert_int_equal(HDRS("Content-Length", "19, 19"), 0);
	assert_int_equal(HDRS("Content-Length", ""), 0);
	assert_int_equal(
	    HDRS("Content-Length", "123456789012345678901234567890"), 0);
	assert_int_equal(
	    HDRS("Content-Length", "19", "Content-Length", "20"), 0);
	assert_int_equal(
	    HDRS("Content-Length", "20", "content-length", "19"), 0);
	assert_int_equal(
	    HDRS("Content-Length", "19", "Content-Length", "019"), 0);
	assert_int_equal(HDRS("Content-Length", "19", "Content-Length", "19",
			     "Content-Length", "2"),
	    0);
	assert_int_equal(
	    HDRS("Content-Length", "19", "Content-Length", "+19"), 0);
	/* Transfer-Encoding. */
	assert_int_equal(HDRS("Transfer-Encoding", "identity, chunked"), 0);
	assert_int_equal(HDRS("Transfer-Encoding", "chunked, chunked"), 0);
	assert_int_equal(HDRS("Transfer-Encoding", "gzip, chunked"), 0);
	assert_int_equal(HDRS("Transfer-Encoding", "chunked;x"), 0);
	assert_int_equal(HDRS("Transfer-Encoding", "chunked "), 0);
	assert_int_equal(HDRS("Transfer-Encoding", " chunked"), 0);
	assert_int_equal(HDRS("Transfer-Encoding", "xchunked"), 0);
	assert_int_equal(HDRS("Transfer-Encoding", "chunke"), 0);
	assert_int_equal(HDRS("Transfer-Encoding", "identity"), 0);
	assert_int_equal(HDRS("Transfer-Encoding", "gzip"), 0);
	assert_int_equal(HDRS("Transfer-Encoding", ""), 0);
	assert_int_equal(HDRS("Transfer-Encoding", "chunked",
			     "Transfer-Encoding", "chunked"),
	    0);
	assert_int_equal(HDRS("Transfer-Encoding", "chunked",
			     "transfer-encoding", "identity"),
	    0);
	/* Both framings at once, in either order. */
	assert_int_equal(
	    HDRS("Content-Length", "24", "Transfer-Encoding", "chunked"), 0);
	assert_int_equal(
	    HDRS("Transfer-Encoding", "chunked", "Content-Length", "24"), 0);
	assert_int_equal(
	    HDRS("Transfer-Encoding", "chunked", "Content-Length", "0"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_per2_host_loopback_ok),
	    cmocka_unit_test(test_per2_host_port_refused),
	    cmocka_unit_test(test_per2_host_hostile),
	    cmocka_unit_test(test_per2_host_listen_addr),
	    cmocka_unit_test(test_per3_origin_loopback_ok),
	    cmocka_unit_test(test_per3_origin_hostile),
	    cmocka_unit_test(test_per3_origin_extra),
	    cmocka_unit_test(test_per4_fetch_site),
	    cmocka_unit_test(test_per8_target_ok),
	    cmocka_unit_test(test_per8_target_hostile),
	    cmocka_unit_test(test_per8_target_length),
	    cmocka_unit_test(test_per5_bearer_ok),
	    cmocka_unit_test(test_per5_bearer_hostile),
	    cmocka_unit_test(test_per5_bearer_length),
	    cmocka_unit_test(test_per5_cookie_ok),
	    cmocka_unit_test(test_per5_cookie_hostile),
	    cmocka_unit_test(test_per8_huge_inputs),
	    cmocka_unit_test(test_per8_header_name),
	    cmocka_unit_test(test_per8_content_length),
	    cmocka_unit_test(test_per8_headers_ok),
	    cmocka_unit_test(test_per8_headers_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
