/*
 * Unit tests for redact_clean_feed (SP-10 + SP-11): the cleaner and the
 * scrubber as one call, whose lane sends complete plain lines straight
 * out, must give the same bytes and the same counts as clean_feed then
 * redact_feed, whatever the chunks, the clamp, the known values and the
 * early flushes; no known value may pass through the lane; and the lane's
 * block test (where the CPU has one) takes the same lines, with the same
 * places of forms, as its byte walk.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/buffer.h>

#include "redact.h"
#include "redact_int.h"
#include "sanitize.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Lines of every kind the two stages treat apart. */
static const char *const frag[] = {
    "static int\n",
    "\tsize_t i, n = 0;\n",
    "/* a comment: plain */\n",
    "return a == b;\n",
    "x = 1\n",
    "token = 'abc'\n",
    "password: hunter22\n",
    "Authorization: Bearer abcdefghijklmnop1234\n",
    "api_key=sk-abcdefghijklmnopqrstuvwx\n",
    "see /home/alice/x.c\n",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijkl\n",
    "-----BEGIN RSA PRIVATE KEY-----\n",
    "MIIEpAIBAAKCAQEA12345678\n",
    "-----END RSA PRIVATE KEY-----\n",
    "AKIAIOSFODNN7EXAMPLE\n",
    "\x1b[31mred\x1b[0m\n",
    "cr\r\n",
    "caf\xc3\xa9 \xe2\x80\xa6\n",
    "bad \xff\xc3\n",
    "zw\xe2\x80\x8bsp\n",
    "ab \xe2\x80\xa6 [+3 chars]\n",
    " chars]\n",
    "\n",
    "\t\n",
    "printf(\"%d %s\", n, s);\n",
    "key bq0Xk3f9ZtLw0PvRa7sYc20HnDmJe5uGi8oQ end\n",
    "say hunter2 now\n",
    "p@ss word\n",
    "p%40ss+word\n",
    "Lw0PvRa7\n",
    "bq0Xk3f9Zt\n",
    "Q8oiG5eJmDnH\n",
    "62713058 6b33663939\n",
    "YnEwWGszZjlaVH\n",
    "%62%71%30\n",
    "bq0Xk3f9ZtLw0PvRa7sYc2\n",
    "b q 0 X k 3 f 9\n",
    "b\nq\n0\nX\nk\n3\n",
    "DATABASE_URL=postgres://u:p@h/db\n",
    "a_key_name_is_long = 1\n",
    "the auth token, the redis database url\n",
    "tok\n",
    "na\xc3\xafve r\xc3\xa9sum\xc3\xa9, \xe2\x82\xac"
    "5, \xf0\x9f\x98\x80 ok\n",
    "\xe4\xb8\xad\xe6\x96\x87\xe6\x96\x87\xe6\x9c\xac\xe3\x81\xa7\xe3\x81\x99"
    "\n",
    "nbsp\xc2\xa0here \xef\xbf\xbf \xef\xbf\xbd\n",
    "c1 \xc2\x85 \xc2\x9b"
    "1m x\n",
    "rlo \xe2\x80\xae evil \xf3\xa0\x80\x81\n",
    "over \xc0\xaf \xe0\x80\xaf sur \xed\xa0\x80 big \xf4\x90\x80\x80\n",
    "cut \xe2\x82 then \xf0\x9f\x98\n",
    "token: \xc3\xa9t\xc3\xa9 "
    "\xd0\xbf\xd0\xb0\xd1\x80\xd0\xbe\xd0\xbb\xd1\x8c\n",
    "mot de passe p\xc3\xa4ss\xe2\x82\xacw0rd! fin\n",
    "p\xc3\xa4ss\xe2\x82\xac\n",
};

static const char *const uchar[] = {
    "a", " ", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};

/* A text of n fragments and, now and then, a line over the clamp. */
static char *
corpus(size_t n, size_t *len)
{
	struct evbuffer *b = evbuffer_new();
	size_t i, k;
	char *s;

	assert_non_null(b);
	for (i = 0; i < n; i++) {
		if (rnd() % 50 == 0) {
			for (k = 40 + rnd() % 1200; k > 0; k--)
				evbuffer_add(b, &"abc =_-./"[rnd() % 9], 1);
			evbuffer_add(b, "\n", 1);
		}
		if (rnd() % 50 == 0) { /* characters of 1 to 4 bytes */
			for (k = 2 + rnd() % 1100; k > 0; k--) {
				const char *u = uchar[rnd() % 5];

				evbuffer_add(b, u, strlen(u));
			}
			evbuffer_add(b, "\n", 1);
		}
		k = rnd() % (sizeof(frag) / sizeof(frag[0]));
		evbuffer_add(b, frag[k], strlen(frag[k]));
	}
	*len = evbuffer_get_length(b);
	s = malloc(*len);
	assert_non_null(s);
	evbuffer_remove(b, s, *len);
	evbuffer_free(b);
	return s;
}

/* in through both stages in random chunks; lane: as one call. */
static char *
run(const struct redact_keys *ks, size_t line_max, const char *in, size_t len,
    uint64_t seed, int lane, size_t *outlen, uint64_t *chars)
{
	struct evbuffer *tmp = evbuffer_new(), *out = evbuffer_new();
	struct redact *r = redact_new(ks);
	struct clean c;
	size_t off = 0, k, n;
	char *s;

	assert_non_null(tmp);
	assert_non_null(out);
	assert_non_null(r);
	rng = seed;
	clean_init(&c, line_max);
	for (; off < len; off += k) {
		k = rnd() % 4 == 0 ? 1 + rnd() % 7 : 1 + rnd() % 3000;
		if (k > len - off)
			k = len - off;
		if (lane) {
			redact_clean_feed(r, &c, in + off, k, tmp, out);
		} else {
			clean_feed(&c, in + off, k, tmp);
			if ((n = evbuffer_get_length(tmp)) > 0) {
				redact_feed(r,
				    (const char *)evbuffer_pullup(tmp, -1), n,
				    out);
				evbuffer_drain(tmp, n);
			}
		}
		if (rnd() % 3 == 0)
			redact_flush_partial(r, out);
	}
	clean_finish(&c, tmp);
	if ((n = evbuffer_get_length(tmp)) > 0)
		redact_feed(r, (const char *)evbuffer_pullup(tmp, -1), n, out);
	redact_finish(r, out);
	redact_free(r);
	*chars = clean_chars(&c) ^ clean_bytes(&c) << 32;
	*outlen = evbuffer_get_length(out);
	s = malloc(*outlen + 1);
	assert_non_null(s);
	evbuffer_remove(out, s, *outlen);
	s[*outlen] = '\0';
	evbuffer_free(tmp);
	evbuffer_free(out);
	return s;
}

/* SP-10, SP-11: the same bytes and counts with the lane as without. */
static void
lane_same_bytes(void)
{
	static const char *const sec[] = {
	    "bq0Xk3f9ZtLw0PvRa7sYc20HnDmJe5uGi8oQ", "hunter2", "p@ss word",
	    "p\xc3\xa4ss\xe2\x82\xacw0rd"};
	static const size_t clamp[] = {1, 7, 40, 1000};
	size_t nk, ci, len, al, bl, round;
	uint64_t ac, bc, seed;
	char *in, *a, *b;

	for (round = 0; round < 6; round++)
		for (nk = 0; nk <= 4; nk += 2) {
			struct redact_keys *ks = redact_keys_new(sec, nk);

			assert_non_null(ks);
			rng = 0x1234567ull + round;
			in = corpus(1500, &len);
			for (ci = 0; ci < 4; ci++) {
				seed = rnd() | 1;
				a = run(
				    ks, clamp[ci], in, len, seed, 0, &al, &ac);
				b = run(
				    ks, clamp[ci], in, len, seed, 1, &bl, &bc);
				assert_int_equal(al, bl);
				assert_memory_equal(a, b, al);
				assert_int_equal(ac, bc);
				free(a);
				free(b);
			}
			free(in);
			redact_keys_free(ks);
		}
}

/* SP-10, SP-11: the same bytes and counts with the lane as without,
 * with its block test and with its byte walk alone. */
static void
test_sp11_lane_same_bytes(void **state)
{
	(void)state;
	lane_same_bytes();
	rd_lane_force_scalar(1);
	lane_same_bytes();
	rd_lane_force_scalar(0);
}

/* rd_lane on s[0..len) with the block test and with the byte walk: the
 * same lines and the same places of forms. */
static void
lane_both(const struct redact_keys *ks, const char *s, size_t len, size_t max)
{
	struct rd_lane_kv a, b;
	size_t na, nb, ca, cb;

	rd_lane_force_scalar(1);
	na = rd_lane(s, len, max, ks, &a, &ca);
	rd_lane_force_scalar(0);
	nb = rd_lane(s, len, max, ks, &b, &cb);
	assert_int_equal(na, nb);
	assert_int_equal(ca, cb);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.at, b.at, a.n * sizeof(a.at[0]));
}

/*
 * The bytes of every class of the line gate's windows: each letter (in
 * either case), '-', '_', ':', '=', '/', '.', and the others (digits,
 * blanks, punctuation) in turn.
 */
static const char gsym[] = "abcdefghijklmnopqrstuvwxyz-_:/.=?";
static const char gother[] = "0 9\t\"#$%&'()*+,;<>?@[\\]^`{|}~!7";

static char
gbyte(size_t k, size_t turn)
{
	char c = gsym[k];

	if (c == '?')
		return gother[turn % (sizeof(gother) - 1)];
	return turn & 1 && c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
}

/*
 * buf: lines of 22 bytes of digits, the window w ending at e, a '\n'
 * before it (cut 0), between its bytes (1, 2) or after it (3), or none
 * (4); a line's end 3 bytes after it; with stop, a byte the cleaner
 * changes at 94 (the block after a window at 64 is walked byte by byte).
 */
static void
window_at(
    char *buf, size_t len, const char w[3], size_t e, size_t cut, int stop)
{
	size_t k, pos = e - 2 - (cut < 4);

	memset(buf, '1', len);
	for (k = 20; k < len; k += 23)
		buf[k] = '\n';
	memcpy(buf + pos + (cut < 4), w, 3);
	if (cut < 4) {
		memmove(buf + pos, buf + pos + 1, cut);
		buf[pos + cut] = '\n';
	}
	buf[e + 3] = '\n';
	if (stop)
		buf[94] = '\x01';
}

/*
 * SP-11: every window of three bytes of the gate's classes, ending at
 * every place around the lane's first block ends (31 to 34 and 63 to 66),
 * cut by a '\n' before it, between its bytes or right after it, and
 * with the next block walked byte by byte or not: the
 * block test takes the same lines as the byte walk, with and without
 * known values, with clamps that stop at the line or let it by.
 */
static void
test_sp11_lane_block_windows(void **state)
{
	static const char *const sec[] = {
	    "bq0Xk3f9ZtLw0PvRa7sYc20HnDmJe5uGi8oQ"};
	static const size_t end[] = {31, 32, 33, 34, 63, 64, 65, 66};
	const size_t ns = sizeof(gsym) - 1;
	struct redact_keys *ks[2];
	char buf[160], w[3];
	size_t a, b, c, turn = 0, k;

	(void)state;
	ks[0] = redact_keys_new(sec, 0);
	ks[1] = redact_keys_new(sec, 1);
	assert_non_null(ks[0]);
	assert_non_null(ks[1]);
	for (a = 0; a < ns; a++)
		for (b = 0; b < ns; b++)
			for (c = 0; c < ns; c++)
				for (k = 0; k < 8; k++, turn++) {
					w[0] = gbyte(a, turn);
					w[1] = gbyte(b, turn / 3);
					w[2] = gbyte(c, turn / 5);
					window_at(buf, sizeof(buf), w, end[k],
					    turn / 7 % 5, turn / 11 % 2);
					lane_both(ks[turn / 2 % 2], buf,
					    sizeof(buf), 1000);
					lane_both(ks[turn / 2 % 2], buf,
					    sizeof(buf), 22);
				}
	redact_keys_free(ks[0]);
	redact_keys_free(ks[1]);
}

/*
 * SP-10, SP-11: lines of two bytes and one of len bytes at pos, around
 * the lane's block ends, with every clamp up to 40: the block test stops
 * at the same line as the byte walk.
 */
static void
test_sp10_lane_block_clamp(void **state)
{
	struct redact_keys *ks = redact_keys_new(NULL, 0);
	char buf[160];
	size_t clamp, len, pos, k;

	(void)state;
	assert_non_null(ks);
	for (clamp = 1; clamp <= 40; clamp++)
		for (len = 0; len <= 40; len++)
			for (pos = 30; pos < 72; pos++) {
				for (k = 0; k < sizeof(buf); k++)
					buf[k] = k % 3 == 2 ? '\n' : 'a';
				memset(buf + pos, 'x', len);
				buf[pos + len] = '\n';
				lane_both(ks, buf, sizeof(buf), clamp);
			}
	redact_keys_free(ks);
}

/* Multi-byte sequences of every class the cleaner tells apart; kept: it
 * sends them as they came. */
static const struct {
	const char *s;
	int kept;
} useq[] = {
    {"\xc3\xa9", 1},		 /* e acute */
    {"\xc2\xa0", 1},		 /* no-break space (UNI_SPACE: text) */
    {"\xdf\xbf", 1},		 /* U+07FF */
    {"\xe0\xa0\x80", 1},	 /* U+0800 */
    {"\xe2\x82\xac", 1},	 /* euro sign */
    {"\xe2\x80\xa6", 1},	 /* ellipsis, as in the clamp marker */
    {"\xef\xbf\xbd", 1},	 /* U+FFFD */
    {"\xef\xbf\xbf", 1},	 /* noncharacter U+FFFF */
    {"\xee\x80\x80", 1},	 /* private use */
    {"\xf0\x9f\x98\x80", 1},	 /* emoji */
    {"\xf4\x8f\xbf\xbf", 1},	 /* U+10FFFF */
    {"\xc2\x85", 0},		 /* C1 NEL */
    {"\xc2\x9b", 0},		 /* C1 CSI */
    {"\xc2\xad", 0},		 /* soft hyphen */
    {"\xe2\x80\x8b", 0},	 /* zero-width space */
    {"\xe2\x80\xae", 0},	 /* RLO */
    {"\xe2\x81\xa6", 0},	 /* LRI */
    {"\xef\xbb\xbf", 0},	 /* BOM */
    {"\xf3\xa0\x80\x81", 0},	 /* tag */
    {"\xc0\xaf", 0},		 /* overlong */
    {"\xe0\x80\xaf", 0},	 /* overlong */
    {"\xed\xa0\x80", 0},	 /* surrogate */
    {"\xf4\x90\x80\x80", 0},	 /* over U+10FFFF */
    {"\xe2\x82", 0},		 /* cut short */
    {"\x80", 0},		 /* lone continuation */
    {"\xf8\x88\x80\x80\x80", 0}, /* five bytes */
};

/* Both ways through the stages on s[0..len): the same bytes and counts. */
static void
same_both(const struct redact_keys *ks, size_t max, const char *s, size_t len,
    uint64_t seed)
{
	size_t al, bl;
	uint64_t ac, bc;
	char *a = run(ks, max, s, len, seed, 0, &al, &ac);
	char *b = run(ks, max, s, len, seed, 1, &bl, &bc);

	assert_int_equal(al, bl);
	assert_memory_equal(a, b, al);
	assert_int_equal(ac, bc);
	free(a);
	free(b);
}

/*
 * SP-10, SP-11: every class of multi-byte sequence at every place around
 * the lane's block ends (26 to 72), right after a '\n', right before one
 * or inside a line, with clamps of 1, 7, 40 and 1000 and with and without
 * a known value of multi-byte characters: the block test and the byte
 * walk take the same lines, and the lane sends the same bytes and counts
 * as the stages.  A line of a kept sequence goes through the lane; any
 * other stops it.
 */
static void
test_sp10_lane_utf8_classes(void **state)
{
	static const char *const sec[] = {"\xc3\xa9t\xc3\xa9\xe2\x82\xac!"};
	static const size_t clamp[] = {1, 7, 40, 1000};
	struct redact_keys *ks[2];
	struct rd_lane_kv kv;
	char buf[160], one[16];
	size_t u, pos, nl, c, k, n, cont;

	(void)state;
	ks[0] = redact_keys_new(sec, 0);
	ks[1] = redact_keys_new(sec, 1);
	assert_non_null(ks[0]);
	assert_non_null(ks[1]);
	for (u = 0; u < sizeof(useq) / sizeof(useq[0]); u++) {
		n = strlen(useq[u].s);
		one[0] = 'x';
		memcpy(one + 1, useq[u].s, n);
		memcpy(one + 1 + n, "y\nz", 3);
		assert_int_equal(rd_lane(one, n + 4, 1000, ks[0], &kv, &cont),
		    useq[u].kept ? n + 3 : 0);
		assert_int_equal(cont, useq[u].kept ? n - 1 : 0);
		for (pos = 26; pos <= 72; pos++)
			for (nl = 0; nl < 3; nl++) {
				for (k = 0; k < sizeof(buf); k++)
					buf[k] = k % 23 == 22 ? '\n' : 'a';
				memcpy(buf + pos, useq[u].s, n);
				if (nl == 1)
					buf[pos - 1] = '\n';
				else if (nl == 2)
					buf[pos + n] = '\n';
				for (c = 0; c < 4; c++) {
					lane_both(ks[c % 2], buf, sizeof(buf),
					    clamp[c]);
					same_both(ks[(c + nl) % 2], clamp[c],
					    buf, sizeof(buf), pos * 7 + c);
				}
			}
	}
	redact_keys_free(ks[0]);
	redact_keys_free(ks[1]);
}

/*
 * SP-10: the clamp counts characters, as the cleaner does: a line of
 * characters of 1 to 4 bytes goes through the lane when it has at most
 * the clamp's characters (1, 7, 40, 1000), whatever its bytes, and not
 * with one more; the same bytes and counts leave as through the stages.
 */
static void
test_sp10_lane_utf8_clamp(void **state)
{
	static const size_t clamp[] = {1, 7, 40, 1000};
	struct redact_keys *ks = redact_keys_new(NULL, 0);
	struct rd_lane_kv kv;
	static char buf[4 * 1001 + 8];
	size_t c, d, k, n, want, cont, got;

	(void)state;
	assert_non_null(ks);
	for (c = 0; c < 4; c++)
		for (d = 0; d < 3; d++) {
			n = want = 0;
			for (k = 0; k < clamp[c] + d - 1; k++) {
				const char *u = uchar[(k * 7 + d) % 5];

				memcpy(buf + n, u, strlen(u));
				n += strlen(u);
				want += strlen(u) - 1;
			}
			buf[n++] = '\n';
			memcpy(buf + n, "z\n", 2);
			got = rd_lane(buf, n + 2, clamp[c], ks, &kv, &cont);
			assert_int_equal(got, d < 2 ? n + 2 : 0);
			assert_int_equal(cont, d < 2 ? want : 0);
			lane_both(ks, buf, n + 2, clamp[c]);
			same_both(ks, clamp[c], buf, n + 2, c * 3 + d + 1);
		}
	redact_keys_free(ks);
}

/*
 * SP-10, SP-11: the block test and the byte walk on the same chunks of
 * text of every kind the stages treat apart (and every byte value), at
 * every start and length, with clamps of 1, 7, 40 and 1000 and with and
 * without known values.
 */
static void
test_sp11_lane_block_chunks(void **state)
{
	static const char *const sec[] = {
	    "bq0Xk3f9ZtLw0PvRa7sYc20HnDmJe5uGi8oQ", "hunter2", "p@ss word"};
	static const size_t clamp[] = {1, 7, 40, 1000};
	size_t nk, len, off, n, i;
	char *in;

	(void)state;
	for (nk = 0; nk <= 3; nk += 3) {
		struct redact_keys *ks = redact_keys_new(sec, nk);

		assert_non_null(ks);
		rng = 0xabcdefull + nk;
		in = corpus(3000, &len);
		for (i = 0; i < 256; i++) /* every byte value, now and then */
			in[rnd() % len] = (char)i;
		for (off = 0; off < len; off += 1 + rnd() % 200) {
			n = rnd() % 4 == 0 ? rnd() % 70 : rnd() % 5000;
			if (n > len - off)
				n = len - off;
			lane_both(ks, in + off, n, clamp[rnd() % 4]);
		}
		free(in);
		redact_keys_free(ks);
	}
}

/*
 * SP-11: a known value in plain lines, whole, across lines with a line
 * break between its characters, and cut by the end of a chunk, never
 * leaves through the lane.
 */
static void
test_sp11_lane_known_values(void **state)
{
	static const char *const sec[] = {"Zq9vK2mPw7Lx"};
	static const char *const in[] = {
	    "plain line\nvalue Zq9vK2mPw7Lx here\nmore\n",
	    "plain\nZq9vK2\nmPw7Lx\nafter\n",
	    "a\nZ\nq\n9\nv\nK\n2\nm\nP\nw\n7\nL\nx\nb\n",
	    "one\ntwo Zq9vK2mPw7Lx\n",
	};
	struct redact_keys *ks = redact_keys_new(sec, 1);
	size_t i, cut, len, al, bl;
	uint64_t ac, bc;
	char *a, *b;

	(void)state;
	assert_non_null(ks);
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		len = strlen(in[i]);
		for (cut = 1; cut < 8; cut++) {
			a = run(ks, 0, in[i], len, cut, 0, &al, &ac);
			b = run(ks, 0, in[i], len, cut, 1, &bl, &bc);
			assert_int_equal(al, bl);
			assert_memory_equal(a, b, al);
			assert_null(strstr(b, "Zq9v"));
			assert_null(strstr(b, "mPw7"));
			free(a);
			free(b);
		}
	}
	redact_keys_free(ks);
}

/*
 * SP-11: a place whose first two bytes leave a form open only on them (a
 * blank after a form's first character, a '%') is no place when the rest
 * of its line says no: C lines full of them go through the lane whole,
 * with no place kept, more than RD_LANE_KV of them in a row.  The value
 * itself, spaced, on the last line is its one place, and the same bytes
 * leave as through the stages, the value masked.
 */
static void
test_sp11_lane_open_pairs(void **state)
{
	static const char *const sec[] = {"ibq0Xk3f9ZtLw0Pv"};
	static const char line[] = "\tif (i == 0) printf(\"%s %d\", b, i);\n";
	static const char val[] = "x = i b q 0 X k 3 f 9 Z t L w 0 P v;\n";
	struct redact_keys *ks = redact_keys_new(sec, 1);
	struct rd_lane_kv kv;
	size_t k, len, al, bl;
	uint64_t ac, bc;
	char *in, *a, *b;

	(void)state;
	assert_non_null(ks);
	len = 3 * RD_LANE_KV * (sizeof(line) - 1) + sizeof(val) - 1;
	in = malloc(len);
	assert_non_null(in);
	for (k = 0; k < 3 * RD_LANE_KV; k++)
		memcpy(in + k * (sizeof(line) - 1), line, sizeof(line) - 1);
	memcpy(in + len - (sizeof(val) - 1), val, sizeof(val) - 1);
	assert_int_equal(rd_lane(in, len, 1000, ks, &kv, &k), len);
	assert_int_equal(k, 0);
	assert_int_equal(kv.n, 1);
	assert_int_equal(kv.at[0], len - (sizeof(val) - 1) + 4);
	lane_both(ks, in, len, 1000);
	a = run(ks, 0, in, len, 7, 0, &al, &ac);
	b = run(ks, 0, in, len, 7, 1, &bl, &bc);
	assert_int_equal(al, bl);
	assert_memory_equal(a, b, al);
	assert_null(strstr(b, "i b q 0"));
	free(a);
	free(b);
	free(in);
	redact_keys_free(ks);
}

/* Text near the forms of ks: their pieces with blanks, separators, %XX
 * and changed bytes between and in them. */
static size_t
near_forms(const struct redact_keys *ks, char *o, size_t cap)
{
	static const char *const sep[] = {" ", "\t", "  \t ", "\n", "+", "%20",
	    "<U+200B>", "\xe2\x80\x8b", "%", "%4", "           "};
	const struct kform *f;
	size_t n = 0, a, b, k;

	while (n + 64 < cap) {
		f = &ks->k_form[rnd() % ks->k_nform];
		if (rnd() % 4 == 0 && f->len < 32) { /* whole */
			memcpy(o + n, f->f, f->len);
			n += f->len;
			continue;
		}
		a = rnd() % f->len;
		b = a + 1 + rnd() % 6;
		for (k = a; k < b && k < f->len && n + 16 < cap; k++) {
			if (rnd() % 3 == 0)
				n += (size_t)snprintf(
				    o + n, 4, "%%%02X", (unsigned char)f->f[k]);
			else
				o[n++] = rnd() % 9 == 0 ? (char)rnd() : f->f[k];
			if (rnd() % 2 == 0) {
				const char *x = sep[rnd() % 11];

				memcpy(o + n, x, strlen(x));
				n += strlen(x);
			}
		}
	}
	return n;
}

/*
 * SP-11: rd_kv_at's first test on three bytes and the blanks after them
 * says no only where every form says no: at every place of text near the
 * forms, for every end of the bytes known, its answer is that of every
 * form tried, for values with blanks, '%', two or one characters.
 */
static void
test_sp11_kv_first_test_exact(void **state)
{
	static const char *const sec[][3] = {
	    {"ibq0Xk3f9ZtLw0Pv", "a b", "%x9"},
	    {"q\tz1", "Zq9vK2mPw7Lx", "1%"},
	    {"ab", "c d e f g h i", "p%40ss word"},
	    {"x", "Zq9vK2mPw7Lx", "i cT"},
	    {"ab cd", "Zq9vK2mPw7Lx", "bc\tx"},
	};
	static char buf[8192];
	size_t v, n, i, len, ba, bb;
	int oa, ob;

	(void)state;
	for (v = 0; v < sizeof(sec) / sizeof(sec[0]); v++) {
		struct redact_keys *ks = redact_keys_new(sec[v], 3);

		assert_non_null(ks);
		rng = 0x5eedull + v;
		n = near_forms(ks, buf, sizeof(buf));
		for (i = 0; i + 1 < n; i++)
			for (len = i + 1; len <= n && len <= i + 40; len++) {
				oa = rd_kv_at(ks, buf, len, i, &ba);
				ob = rd_kv_forms(ks, buf, len, i, &bb);
				assert_int_equal(oa, ob);
				assert_int_equal(ba, bb);
			}
		redact_keys_free(ks);
	}
}

/*
 * SP-11: the gate looks for a key prefix by three bytes of it that text
 * seldom holds: lines with "git", "digit", "basic" or "akin" go by, and
 * each prefix whole is still masked.
 */
static void
test_sp11_gate_prefix_windows(void **state)
{
	static const char plain[] = "run git log, a digit, basic, akin to it\n";
	static const char *const key[] = {
	    "tok github_pat_11ABCDEFG0123456789abcdef end\n",
	    "id AKIAIOSFODNN7EXAMPLE end\n",
	    "id ASIAIOSFODNN7EXAMPLE end\n",
	};
	struct evbuffer *out = evbuffer_new();
	size_t k;

	(void)state;
	assert_non_null(out);
	assert_int_equal(
	    rd_plain_lines(plain, sizeof(plain) - 1), sizeof(plain) - 1);
	for (k = 0; k < sizeof(key) / sizeof(key[0]); k++) {
		assert_int_equal(rd_plain_lines(key[k], strlen(key[k])), 0);
		assert_int_equal(
		    redact_buf(NULL, key[k], strlen(key[k]), 0, out), 0);
		assert_non_null(evbuffer_pullup(out, -1));
		assert_non_null(strstr(
		    (const char *)evbuffer_pullup(out, -1), REDACT_MASK));
		evbuffer_drain(out, evbuffer_get_length(out));
	}
	evbuffer_free(out);
}

/*
 * SP-11: the gate stops at a line whose name before '=' is a run of key
 * bytes longer than any name (RD_KEY_MAX), and lets it by when the run
 * is one shorter: runs of every length around the bound, at every place
 * of a line (the gate looks at some places only, reading each run out).
 */
static void
test_sp11_gate_long_key_run(void **state)
{
	static char line[512];
	size_t run, at, n;

	(void)state;
	for (run = RD_KEY_MAX - 8; run <= RD_KEY_MAX + 8; run++)
		for (at = 0; at <= RD_KEY_MAX + 20; at++) {
			memset(line, ' ', at);
			memset(line + at, 'x', run);
			memcpy(line + at + run, "=1 and more text\n", 17);
			n = at + run + 17;
			assert_int_equal(
			    rd_plain_lines(line, n), run > RD_KEY_MAX ? 0 : n);
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sp11_lane_same_bytes),
	    cmocka_unit_test(test_sp11_lane_known_values),
	    cmocka_unit_test(test_sp11_lane_block_windows),
	    cmocka_unit_test(test_sp10_lane_block_clamp),
	    cmocka_unit_test(test_sp10_lane_utf8_classes),
	    cmocka_unit_test(test_sp10_lane_utf8_clamp),
	    cmocka_unit_test(test_sp11_lane_block_chunks),
	    cmocka_unit_test(test_sp11_lane_open_pairs),
	    cmocka_unit_test(test_sp11_kv_first_test_exact),
	    cmocka_unit_test(test_sp11_gate_prefix_windows),
	    cmocka_unit_test(test_sp11_gate_long_key_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
