/*
 * Unit tests for common/sanitize.c (SP-10): escape sequences that naive
 * strippers miss, controls, CR handling, the line clamp on code-point
 * boundaries, invalid UTF-8, and sameness across every chunk split.
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

#include "sanitize.h"
#include "util.h"

/* Clean in, fed in pieces of at most step bytes (0: whole). */
static char *
cleaned(const char *in, size_t len, size_t line_max, size_t step,
    struct clean *cout)
{
	struct evbuffer *b = evbuffer_new();
	struct clean c;
	size_t off = 0, n;
	char *s;

	assert_non_null(b);
	clean_init(&c, line_max);
	while (off < len) {
		n = step == 0 || len - off < step ? len - off : step;
		clean_feed(&c, in + off, n, b);
		off += n;
	}
	clean_finish(&c, b);
	n = evbuffer_get_length(b);
	s = calloc(1, n + 1);
	assert_non_null(s);
	evbuffer_remove(b, s, n);
	evbuffer_free(b);
	if (cout != NULL)
		*cout = c;
	return s;
}

static void
expect(const char *in, size_t len, const char *want)
{
	char *s = cleaned(in, len, 0, 0, NULL);

	assert_string_equal(s, want);
	free(s);
}

#define EXPECT(lit, want) expect(lit, sizeof(lit) - 1, want)

/* SP-10 */
static void
test_sp10_plain_text_unchanged(void **state)
{
	(void)state;
	EXPECT("hello, world\n\tindented\n", "hello, world\n\tindented\n");
	EXPECT("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80",
	    "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80");
	EXPECT("", "");
}

/* SP-10: CSI and SGR, 7-bit and 8-bit. */
static void
test_sp10_csi_sgr_stripped(void **state)
{
	(void)state;
	EXPECT("\x1b[31mred\x1b[0m", "red");
	EXPECT("\x1b[1;38;5;208mX\x1b[m", "X");
	EXPECT("a\x1b[2Kb\x1b[10;20Hc\x1b[?25ld", "abcd");
	EXPECT("a\x1b[>4;2mb", "ab");
	EXPECT("a\x9b"
	       "31mb",
	    "ab"); /* raw 8-bit CSI */
	EXPECT("a\xc2\x9b"
	       "31mb",
	    "ab");			   /* U+009B CSI */
	EXPECT("a\x1b[31\x1b[32mb", "ab"); /* ESC aborts a CSI */
}

/* SP-10: OSC ended by BEL or by ST (ESC \), 7- and 8-bit. */
static void
test_sp10_osc_stripped(void **state)
{
	(void)state;
	EXPECT("a\x1b]0;title\x07"
	       "b",
	    "ab");
	EXPECT("a\x1b]0;title\x1b\\b", "ab");
	EXPECT("a\x1b]8;;http://x/\x1b\\link\x1b]8;;\x1b\\b", "alinkb");
	EXPECT("a\x1b]52;c;ZXZpbA==\x07"
	       "b",
	    "ab");
	EXPECT("a\x9d"
	       "0;t\x9c"
	       "b",
	    "ab");
	EXPECT("a\x1b]0;t\xc2\x9c"
	       "b",
	    "ab");
	/* An OSC title holding UTF-8 and text that looks like a newline */
	EXPECT("a\x1b]2;caf\xc3\xa9 \n x\x07"
	       "b",
	    "ab");
}

/* SP-10: DCS, SOS, PM, APC end only at ST. */
static void
test_sp10_dcs_sos_pm_apc_stripped(void **state)
{
	(void)state;
	EXPECT("a\x1bPq#0;2;0;0;0#0~~@@\x1b\\b", "ab");
	EXPECT("a\x1bP$q\"p\x07still\x1b\\b", "ab"); /* BEL does not end DCS */
	EXPECT("a\x1bXsos\x1b\\b", "ab");
	EXPECT("a\x1b^pm\x1b\\b", "ab");
	EXPECT("a\x1b_Gf=100;AAAA\x1b\\b", "ab"); /* kitty graphics APC */
	EXPECT("a\x90q\x9c"
	       "b",
	    "ab");
	EXPECT("a\x9f"
	       "apc\x9c"
	       "b",
	    "ab");
	/*
	 * A string opened by a raw byte ends at the line's end: a stray
	 * 0x9E (CP1252's z-caron) must not swallow the rest of the output.
	 * One opened by ESC, or by a C1 code point in UTF-8, does not.
	 */
	EXPECT("Ol\x9e s\x9a k\n second line\n", "Ol\n second line\n");
	EXPECT("a\x9d"
	       "0;t\nb",
	    "a\nb");
	EXPECT("a\xc2\x9d"
	       "0;t\nb\x07"
	       "c",
	    "ac");
	EXPECT("a\x1b_x\ny\x1b\\b", "ab");
	EXPECT("a\x1bPx\x18"
	       "b",
	    "ab"); /* CAN aborts */
	/* ESC inside a string ends it and starts a new sequence */
	EXPECT("a\x1bPx\x1b[31mb", "ab");
}

/* SP-10: single-char escapes and a lone ESC. */
static void
test_sp10_lone_and_short_esc(void **state)
{
	(void)state;
	EXPECT("a\x1b"
	       "7b\x1b"
	       "8c",
	    "abc");
	EXPECT("a\x1b(Bb", "ab"); /* charset designation */
	EXPECT("a\x1b#8b", "ab");
	EXPECT("a\x1b", "a");		/* lone ESC at the end */
	EXPECT("a\x1b\nb", "a\nb");	/* lone ESC before a newline */
	EXPECT("a\x1b\x1b[31mb", "ab"); /* ESC ESC [ */
	EXPECT("a\x1b\xc3\xa9", "a\xc3\xa9");
}

/* SP-10: C0 controls, DEL and C1 dropped; \n and \t kept. */
static void
test_sp10_c0_controls_stripped(void **state)
{
	char in[40], want[8];
	size_t i, n = 0;

	(void)state;
	for (i = 0; i < 0x20; i++)
		if (i != 0x1b)
			in[n++] = (char)i;
	in[n++] = 0x7f;
	EXPECT("a\x07"
	       "b\x08"
	       "c\x00"
	       "d\x7f"
	       "e",
	    "abcde");
	EXPECT("a\xc2\x85"
	       "b\xc2\x8d"
	       "c",
	    "abc"); /* NEL, RI as C1 */
	snprintf(want, sizeof(want), "\t\n");
	expect(in, n, want);
}

/* SP-10: CRLF -> LF; bare CR dropped. */
static void
test_sp10_cr_handling(void **state)
{
	(void)state;
	EXPECT("a\r\nb\r\n", "a\nb\n");
	EXPECT("10%\r20%\r100%\n", "10%20%100%\n");
	EXPECT("\r\r\n\r", "\n");
}

/* SP-10: 3000 emoji on one line: 1000 kept, marker, no split. */
static void
test_sp10_emoji_line_clamped(void **state)
{
	const char *e = "\xf0\x9f\x98\x80";
	char *in, *s, want_tail[64];
	struct clean c;
	size_t i, step;

	(void)state;
	in = malloc(3000 * 4 + 2);
	assert_non_null(in);
	for (i = 0; i < 3000; i++)
		memcpy(in + 4 * i, e, 4);
	in[12000] = '\n';
	in[12001] = 'x';
	for (step = 0; step <= 7; step++) {
		s = cleaned(in, 12002, 1000, step, &c);
		assert_true(utf8_valid(s, strlen(s)));
		assert_memory_equal(s, in, 4000);
		snprintf(want_tail, sizeof(want_tail),
		    " \xe2\x80\xa6 [+2000 chars]\nx");
		assert_string_equal(s + 4000, want_tail);
		assert_int_equal(clean_bytes(&c), strlen(s));
		/* 1000 + 12 + 4 marker chars + \n + x */
		assert_int_equal(clean_chars(&c), 1000 + 16 + 2);
		free(s);
	}
	/* unterminated long line: marker at finish */
	s = cleaned(in, 8000, 10, 0, NULL);
	assert_int_equal(strncmp(s + 40, " \xe2\x80\xa6 [+1990 chars]", 20), 0);
	free(s);
	free(in);
}

/* SP-10: invalid UTF-8 -> U+FFFD. */
static void
test_sp10_invalid_utf8_replaced(void **state)
{
	(void)state;
	EXPECT("a\xff"
	       "b",
	    "a\xef\xbf\xbd"
	    "b");
	EXPECT("a\xc0\xaf"
	       "b",
	    "a\xef\xbf\xbd\xef\xbf\xbd"
	    "b"); /* overlong */
	EXPECT("a\xed\xa0\x80"
	       "b",
	    "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	    "b"); /* surrogate */
	EXPECT("a\xf4\x90\x80\x80"
	       "b",
	    "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	    "b");
	EXPECT("a\xe2\x9c"
	       "b",
	    "a\xef\xbf\xbd"
	    "b");			      /* truncated */
	EXPECT("a\xe2\x9c", "a\xef\xbf\xbd"); /* truncated at end */
	EXPECT("\xe0\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

static const char *const split_cases[] = {
    "x\033[1;31mred\033[0m\n",
    "\033]0;title\033\\after",
    "\033]8;;http://e/\007link\033]8;;\007",
    "\033Pq#0;2;0;0;0\033\\z",
    "a\2332Jb\2350;t\234c",
    "\360\237\230\200\342\234\223\303\251\357\277\275",
    "bad\342\234x\377\355\240\200y",
    "line\r\nnext\rover\n",
    "\033\033[mq\0337\033(B\033",
    "\033_apc\033[31mz",
    /* SBX-7: bidi and zero-width code points, split anywhere */
    "git push \342\200\256niam nigiro\342\200\254",
    "a\342\200\213b\302\255c\363\240\200\201d\357\273\277",
};

/* SP-10: every split position over two feeds gives the same output. */
static void
test_sp10_split_every_byte(void **state)
{
	struct evbuffer *b;
	struct clean c;
	char *whole, *got;
	size_t i, k, len, n;

	(void)state;
	for (i = 0; i < sizeof(split_cases) / sizeof(split_cases[0]); i++) {
		len = strlen(split_cases[i]);
		whole = cleaned(split_cases[i], len, 0, 0, NULL);
		for (k = 0; k <= len; k++) {
			b = evbuffer_new();
			clean_init(&c, 0);
			clean_feed(&c, split_cases[i], k, b);
			clean_feed(&c, split_cases[i] + k, len - k, b);
			clean_finish(&c, b);
			n = evbuffer_get_length(b);
			got = calloc(1, n + 1);
			evbuffer_remove(b, got, n);
			assert_string_equal(got, whole);
			free(got);
			evbuffer_free(b);
		}
		got = cleaned(split_cases[i], len, 0, 1, NULL);
		assert_string_equal(got, whole);
		free(got);
		free(whole);
	}
}

/* SP-10: the line clamp counts per line and restarts after \n. */
/*
 * SP-10: plain text is taken a word (8 bytes) at a time, any other byte a
 * byte at a time.  Every byte value at every place of a word, in lines
 * under, at and over the clamp, comes out as when fed one byte per call
 * (which takes the byte-at-a-time path).
 */
static void
test_sp10_every_byte_every_lane(void **state)
{
	static const char text[] = "abc\tdefghijklmnop\nqrstuvwxyz0123456789";
	static const size_t clamps[] = {0, 5, 8, 13};
	char in[sizeof(text) - 1], *whole, *bytes;
	size_t b, p, k;

	(void)state;
	for (k = 0; k < sizeof(clamps) / sizeof(clamps[0]); k++)
		for (b = 0; b < 256; b++)
			for (p = 0; p < 24; p++) {
				memcpy(in, text, sizeof(in));
				in[p] = (char)b;
				whole =
				    cleaned(in, sizeof(in), clamps[k], 0, NULL);
				bytes =
				    cleaned(in, sizeof(in), clamps[k], 1, NULL);
				assert_string_equal(whole, bytes);
				free(whole);
				free(bytes);
			}
}

/* Does the cleaner send "a" x "\n" as it came, x one character? */
static int
kept_whole(struct evbuffer *b, const unsigned char *x, size_t n)
{
	unsigned char in[8];
	struct clean c;
	int same;

	in[0] = 'a';
	memcpy(in + 1, x, n);
	in[n + 1] = '\n';
	clean_init(&c, 0);
	clean_feed(&c, (const char *)in, n + 2, b);
	clean_finish(&c, b);
	same = evbuffer_get_length(b) == n + 2 && clean_chars(&c) == 3 &&
	       memcmp(evbuffer_pullup(b, -1), in, n + 2) == 0;
	evbuffer_drain(b, evbuffer_get_length(b));
	return same;
}

/*
 * SP-10: clean_kept (the lane's question) is the cleaner's own answer.
 * Every code point from U+0080 on, encoded: clean_kept gives its length
 * exactly when the cleaner sends it as it came, as one character (not
 * C1, bidi, zero-width or any other hidden one; noncharacters, private
 * use and the other spaces are text).  Any four bytes from 0x80 on, the
 * later ones continuation bytes and others: where clean_kept says k, the
 * cleaner sends those k bytes as one character (never an overlong, a
 * surrogate, a value over U+10FFFF or a cut sequence).
 */
static void
test_sp10_clean_kept_exact(void **state)
{
	static const unsigned char tail[] = {
	    0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
	const size_t nt = sizeof(tail);
	struct evbuffer *b = evbuffer_new();
	unsigned char x[4];
	uint32_t cp;
	size_t n, k, t;

	(void)state;
	assert_non_null(b);
	for (cp = 0x80; cp <= 0x10FFFF; cp++) {
		if (cp >= 0xD800 && cp <= 0xDFFF)
			continue;
		n = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
		x[0] = (unsigned char)(n == 2	? 0xC0 | cp >> 6
				       : n == 3 ? 0xE0 | cp >> 12
						: 0xF0 | cp >> 18);
		for (k = 1; k < n; k++)
			x[k] = (unsigned char)(0x80 |
					       (cp >> 6 * (n - 1 - k) & 0x3F));
		assert_int_equal(clean_kept(x, n), kept_whole(b, x, n) ? n : 0);
		assert_int_equal(clean_kept(x, n - 1), 0);
	}
	for (n = 0x80 * 256 * nt * nt; n-- > 0;) {
		x[0] = (unsigned char)(0x80 + n % 0x80);
		x[1] = (unsigned char)(n / 0x80 % 256);
		t = n / 0x80 / 256;
		x[2] = tail[t % nt];
		x[3] = tail[t / nt];
		if ((k = clean_kept(x, 4)) != 0)
			assert_true(kept_whole(b, x, k));
	}
	evbuffer_free(b);
}

static void
test_sp10_clamp_per_line(void **state)
{
	char *s;

	(void)state;
	s = cleaned("abcdef\nab\nabcd", 14, 3, 0, NULL);
	assert_string_equal(
	    s, "abc \xe2\x80\xa6 [+3 chars]\nab\nabc \xe2\x80\xa6 [+1 chars]");
	free(s);
	/* escapes are not counted as characters */
	s = cleaned("\x1b[31mabc\x1b[0m\n", 13, 3, 0, NULL);
	assert_string_equal(s, "abc\n");
	free(s);
}

/* SP-10: long ASCII lines, whole and in odd pieces, clamp exactly. */
static void
test_sp10_long_ascii_lines(void **state)
{
	char *in, *s, want[64];
	size_t step;

	(void)state;
	in = malloc(6001);
	assert_non_null(in);
	memset(in, 'q', 6000);
	in[6000] = '\0';
	s = cleaned(in, 6000, 5000, 0, NULL);
	assert_int_equal(strncmp(s, in, 5000), 0);
	assert_string_equal(s + 5000, " \xe2\x80\xa6 [+1000 chars]");
	free(s);
	for (step = 1; step < 2000; step += 333) {
		s = cleaned(in, 6000, 1000, step, NULL);
		snprintf(want, sizeof(want), " \xe2\x80\xa6 [+5000 chars]");
		assert_int_equal(strlen(s), 1000 + strlen(want));
		assert_string_equal(s + 1000, want);
		free(s);
	}
	free(in);
}

/* SBX-7, SP-10: invisible and reordering code points are shown. */
static void
test_sbx7_hidden_code_points_shown(void **state)
{
	(void)state;
	/* U+202E U+202C: the reversal the operator would not see */
	EXPECT("git push \xe2\x80\xaeniam nigiro\xe2\x80\xac",
	    "git push <U+202E>niam nigiro<U+202C>");
	/* zero-width space, soft hyphen, tag 'A', BOM, LRI, ALM */
	EXPECT("a\xe2\x80\x8b"
	       "b\xc2\xad"
	       "c\xf3\xa0\x81\x81"
	       "d\xef\xbb\xbf"
	       "e\xe2\x81\xa6"
	       "f\xd8\x9c",
	    "a<U+200B>b<U+00AD>c<U+E0041>d<U+FEFF>e<U+2066>f<U+061C>");
	/* line separator and variation selector-16; NBSP and é unchanged */
	EXPECT("x\xe2\x80\xa8y\xef\xb8\x8fz\xc2\xa0\xc3\xa9",
	    "x<U+2028>y<U+FE0F>z\xc2\xa0\xc3\xa9");
}

/* SBX-7, SP-10: a marker is whole or cut with what follows, never split
 * and never reordered; it counts as its characters of the line. */
static void
test_sbx7_hidden_marker_and_clamp(void **state)
{
	struct clean c;
	char *s;

	(void)state;
	/* "ab" + 8-char marker fits 10 exactly */
	s = cleaned("ab\xe2\x80\xae"
		    "cd\nok",
	    10, 10, 0, NULL);
	assert_string_equal(s, "ab<U+202E> \xe2\x80\xa6 [+2 chars]\nok");
	free(s);
	/* "abc" + marker does not fit 10: cut there, "d" after it too */
	s = cleaned("abc\xe2\x80\xae"
		    "d",
	    7, 10, 0, NULL);
	assert_string_equal(s, "abc \xe2\x80\xa6 [+2 chars]");
	free(s);
	/* byte by byte: the same, and the counts are of what went out */
	s = cleaned("ab\xe2\x80\x8b", 5, 0, 1, &c);
	assert_string_equal(s, "ab<U+200B>");
	assert_int_equal(clean_chars(&c), 10);
	assert_int_equal(clean_bytes(&c), 10);
	free(s);
}

/* SP-10: the one-shot helper. */
static void
test_sp10_clean_buf(void **state)
{
	struct evbuffer *b = evbuffer_new();
	char out[16] = {0};

	(void)state;
	assert_int_equal(clean_buf("\x1b[1mok\x1b", 8, 0, b), 0);
	evbuffer_remove(b, out, sizeof(out) - 1);
	assert_string_equal(out, "ok");
	evbuffer_free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sp10_plain_text_unchanged),
	    cmocka_unit_test(test_sp10_csi_sgr_stripped),
	    cmocka_unit_test(test_sp10_osc_stripped),
	    cmocka_unit_test(test_sp10_dcs_sos_pm_apc_stripped),
	    cmocka_unit_test(test_sp10_lone_and_short_esc),
	    cmocka_unit_test(test_sp10_c0_controls_stripped),
	    cmocka_unit_test(test_sp10_cr_handling),
	    cmocka_unit_test(test_sp10_emoji_line_clamped),
	    cmocka_unit_test(test_sp10_invalid_utf8_replaced),
	    cmocka_unit_test(test_sp10_split_every_byte),
	    cmocka_unit_test(test_sp10_every_byte_every_lane),
	    cmocka_unit_test(test_sp10_clean_kept_exact),
	    cmocka_unit_test(test_sp10_clamp_per_line),
	    cmocka_unit_test(test_sp10_long_ascii_lines),
	    cmocka_unit_test(test_sp10_clean_buf),
	    cmocka_unit_test(test_sbx7_hidden_code_points_shown),
	    cmocka_unit_test(test_sbx7_hidden_marker_and_clamp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
