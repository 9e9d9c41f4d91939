/*
 * Streaming output cleaner (SP-10).  Bytes -> UTF-8 decoder -> escape
 * state machine on code points -> line clamp -> evbuffer.  Every piece of
 * state lives in struct clean, so a sequence split at any byte position
 * over two feeds comes out exactly as if fed whole.  Touches only *out.
 */
#include <stdint.h>
#include <string.h>

#include <event2/buffer.h>

#include "sanitize.h"
#include "unicode.h"

#define CLEAN_LINE_MAX_DEF 1000 /* LIM_LINE_MAX; common/ sits below policy/ */
#define REPL		   0xFFFDu

enum {
	CS_GROUND = 0,
	CS_ESC,	    /* after ESC */
	CS_ESC_INT, /* ESC + intermediates, waiting for the final byte */
	CS_CSI,	    /* ESC [ or 0x9b: params/intermediates until final */
	CS_STR,	    /* OSC/DCS/SOS/PM/APC body */
	CS_STR_ESC, /* ESC inside a string: '\' ends it (ST) */
};

/* Output staging so the evbuffer sees few, larger adds. */
struct clean_out {
	struct evbuffer *o_buf;
	char o_tmp[1024];
	size_t o_len;
};

static void
out_flush(struct clean_out *o)
{
	if (o->o_len > 0)
		(void)evbuffer_add(o->o_buf, o->o_tmp, o->o_len);
	o->o_len = 0;
}

static void
out_bytes(struct clean *c, struct clean_out *o, const char *s, size_t n)
{
	c->c_out_bytes += n;
	if (o->o_len + n > sizeof(o->o_tmp))
		out_flush(o);
	if (n > sizeof(o->o_tmp)) {
		(void)evbuffer_add(o->o_buf, s, n);
		return;
	}
	memcpy(o->o_tmp + o->o_len, s, n);
	o->o_len += n;
}

static void
out_cp(struct clean *c, struct clean_out *o, uint32_t cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xC0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xE0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		b[0] = (char)(0xF0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	out_bytes(c, o, b, n);
	c->c_out_chars++;
}

/* " … [+N chars]" for the cut tail of the current line. */
static void
out_marker(struct clean *c, struct clean_out *o)
{
	char m[64];
	size_t i, n;
	uint64_t v = c->c_dropped;
	char digits[24];

	if (c->c_dropped == 0)
		return;
	n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	memcpy(m, " \xE2\x80\xA6 [+", 7);
	for (i = 0; i < n; i++)
		m[7 + i] = digits[n - 1 - i];
	memcpy(m + 7 + n, " chars]", 7);
	out_bytes(c, o, m, 14 + n);
	c->c_out_chars += 12 + n; /* the ellipsis is one code point */
	c->c_dropped = 0;
}

/* A printable code point (or \t), subject to the line clamp. */
static void
emit_text(struct clean *c, struct clean_out *o, uint32_t cp)
{
	if (c->c_line_chars >= c->c_line_max) {
		c->c_dropped++;
		return;
	}
	c->c_line_chars++;
	out_cp(c, o, cp);
}

/*
 * An invisible or reordering code point (SBX-7): shown as "<U+XXXX>", a
 * whole marker or none.  One that no longer fits ends the line's kept
 * part, so what follows is cut too and the order is never changed.
 */
static void
emit_hidden(struct clean *c, struct clean_out *o, uint32_t cp)
{
	char m[UNI_MARK_MAX];
	size_t n = uni_mark(cp, m);

	if (c->c_line_chars + n > c->c_line_max) {
		c->c_line_chars = c->c_line_max;
		c->c_dropped++;
		return;
	}
	out_bytes(c, o, m, n);
	c->c_out_chars += n;
	c->c_line_chars += n;
}

static void
emit_newline(struct clean *c, struct clean_out *o)
{
	out_marker(c, o);
	out_cp(c, o, '\n');
	c->c_line_chars = 0;
}

static void ground(struct clean *, struct clean_out *, uint32_t);

/* Start of a string sequence (OSC, DCS, SOS, PM, APC). */
static void
start_str(struct clean *c, int osc)
{
	c->c_state = CS_STR;
	c->c_str_osc = osc;
	c->c_str_raw = 0;
}

static void
esc(struct clean *c, struct clean_out *o, uint32_t cp)
{
	switch (cp) {
	case '[':
		c->c_state = CS_CSI;
		return;
	case ']':
		start_str(c, 1);
		return;
	case 'P':
	case 'X':
	case '^':
	case '_':
		start_str(c, 0);
		return;
	case 0x1B: /* the first ESC was a lone one: dropped */
		return;
	}
	if (cp >= 0x20 && cp <= 0x2F) {
		c->c_state = CS_ESC_INT;
		return;
	}
	c->c_state = CS_GROUND;
	if (cp >= 0x30 && cp <= 0x7E)
		return;	  /* single-character escape, consumed */
	ground(c, o, cp); /* lone ESC dropped; the code point stands */
}

/* What plain text shows of a code point but '\n'. */
enum { CP_TEXT, CP_HIDDEN, CP_CONTROL };

static int
cp_kind(uint32_t cp)
{
	if (cp >= 0xA0 && uni_class(cp) == UNI_HIDDEN)
		return CP_HIDDEN; /* as "<U+XXXX>" */
	if (cp == '\t' ||
	    (cp >= 0x20 && cp != 0x7F && (cp < 0x80 || cp > 0x9F)))
		return CP_TEXT; /* as it is, one character of its line */
	return CP_CONTROL;	/* dropped, or starts a sequence */
}

static void
ground(struct clean *c, struct clean_out *o, uint32_t cp)
{
	if (cp == '\n') {
		emit_newline(c, o);
		return;
	}
	switch (cp_kind(cp)) {
	case CP_HIDDEN:
		emit_hidden(c, o, cp);
		return;
	case CP_TEXT:
		emit_text(c, o, cp);
		return;
	}
	switch (cp) {
	case 0x1B:
		c->c_state = CS_ESC;
		break;
	case 0x9B: /* 8-bit CSI */
		c->c_state = CS_CSI;
		break;
	case 0x9D: /* 8-bit OSC */
		start_str(c, 1);
		break;
	case 0x90: /* DCS */
	case 0x98: /* SOS */
	case 0x9E: /* PM */
	case 0x9F: /* APC */
		start_str(c, 0);
		break;
	default:
		break; /* other C0 (incl. CR), DEL, C1: dropped */
	}
}

static void
step(struct clean *c, struct clean_out *o, uint32_t cp)
{
	switch (c->c_state) {
	case CS_GROUND:
		ground(c, o, cp);
		break;
	case CS_ESC:
		esc(c, o, cp);
		break;
	case CS_ESC_INT:
		if (cp >= 0x20 && cp <= 0x2F)
			break;
		c->c_state = CS_GROUND;
		if (cp < 0x30 || cp > 0x7E)
			ground(c, o, cp);
		break;
	case CS_CSI:
		if (cp >= 0x20 && cp <= 0x3F)
			break;
		c->c_state = CS_GROUND;
		if (cp < 0x40 || cp > 0x7E)
			ground(c, o, cp); /* aborted: ESC, CAN, \n, ... */
		break;
	case CS_STR:
		if (cp == '\n' && c->c_str_raw) {
			c->c_state = CS_GROUND;
			emit_newline(c, o);
		} else if ((cp == 0x07 && c->c_str_osc) || cp == 0x9C ||
			   cp == 0x18 || cp == 0x1A)
			c->c_state = CS_GROUND;
		else if (cp == 0x1B)
			c->c_state = CS_STR_ESC;
		break;
	case CS_STR_ESC:
		if (cp == '\\') {
			c->c_state = CS_GROUND;
			break;
		}
		/* ESC ended the string and starts a new sequence. */
		c->c_state = CS_ESC;
		esc(c, o, cp);
		break;
	}
}

void
clean_init(struct clean *c, size_t line_max)
{
	memset(c, 0, sizeof(*c));
	c->c_line_max = line_max == 0 ? CLEAN_LINE_MAX_DEF : line_max;
	c->c_state = CS_GROUND;
}

/* Abandon a truncated UTF-8 sequence: one U+FFFD for it. */
static void
utf8_abandon(struct clean *c, struct clean_out *o)
{
	c->c_need = 0;
	c->c_have = 0;
	step(c, o, REPL);
}

static void
feed_byte(struct clean *c, struct clean_out *o, uint8_t b)
{
	if (c->c_need > 0) {
		int ok = (b & 0xC0) == 0x80;

		/* Second byte ranges that rule out overlongs, surrogates
		 * and code points above U+10FFFF (RFC 3629). */
		if (ok && c->c_have == 1) {
			if (c->c_min == 0x800 && c->c_cp == 0 && b < 0xA0)
				ok = 0;
			if (c->c_min == 0x800 && c->c_cp == 0xD && b > 0x9F)
				ok = 0;
			if (c->c_min == 0x10000 && c->c_cp == 0 && b < 0x90)
				ok = 0;
			if (c->c_min == 0x10000 && c->c_cp == 4 && b > 0x8F)
				ok = 0;
		}
		if (!ok) {
			utf8_abandon(c, o);
			/* A refused continuation byte is invalid itself (never
			 * an 8-bit introducer); anything else starts afresh. */
			if ((b & 0xC0) == 0x80)
				step(c, o, REPL);
			else
				feed_byte(c, o, b);
			return;
		}
		c->c_cp = (c->c_cp << 6) | (b & 0x3F);
		c->c_have++;
		if (--c->c_need == 0)
			step(c, o, c->c_cp);
		return;
	}
	if (b < 0x80) {
		step(c, o, b);
	} else if (b <= 0x9F) {
		/* A raw 8-bit sequence introducer or ST acts as one (0x9b
		 * CSI, ...); any other stray continuation byte is invalid. */
		if (b == 0x9B || b == 0x9D || b == 0x90 || b == 0x98 ||
		    b == 0x9E || b == 0x9F || b == 0x9C) {
			int was = c->c_state;

			step(c, o, b);
			/*
			 * A string a raw byte opened is as likely a stray
			 * byte of another charset (0x9E is CP1252's z-caron)
			 * as a terminal's: it ends at the line's end, so it
			 * cannot swallow the rest of the output.
			 */
			if (was != CS_STR && c->c_state == CS_STR)
				c->c_str_raw = 1;
		} else
			step(c, o, REPL);
	} else if (b >= 0xC2 && b <= 0xDF) {
		c->c_cp = b & 0x1F;
		c->c_need = 1;
		c->c_have = 1;
		c->c_min = 0x80;
	} else if (b >= 0xE0 && b <= 0xEF) {
		c->c_cp = b & 0x0F;
		c->c_need = 2;
		c->c_have = 1;
		c->c_min = 0x800;
	} else if (b >= 0xF0 && b <= 0xF4) {
		c->c_cp = b & 0x07;
		c->c_need = 3;
		c->c_have = 1;
		c->c_min = 0x10000;
	} else {
		step(c, o, REPL); /* 0xA0-0xC1, 0xF5-0xFF */
	}
}

/*
 * Plain text, a word (8 bytes) at a time: the high bit of each byte of w
 * that is not printable ASCII or '\t' (a C0 control, '\n' among them,
 * DEL, or any byte >= 0x80).  Exact per byte: no sum carries into the
 * next byte.
 */
#define W_ONES	0x0101010101010101ull
#define W_HIGHS (W_ONES * 0x80)

static uint64_t
w_stops(uint64_t w)
{
	uint64_t x = w & ~W_HIGHS, t = x ^ W_ONES * '\t';
	/* x >= 0x20 and x != 0x7f; or x == '\t' (t + 0x7f has no high
	 * bit only for t == 0). */
	uint64_t ok =
	    ((x + W_ONES * 0x60) & ~(x + W_ONES)) | ~((t + ~W_HIGHS) | t);

	return (w | ~ok) & W_HIGHS;
}

int
clean_plain_byte(unsigned char b)
{
	return b < 0x80 && cp_kind(b) == CP_TEXT;
}

size_t
clean_kept(const unsigned char *s, size_t len)
{
	size_t i = 0;
	uint32_t cp;

	if (len == 0 || s[0] < 0x80 ||
	    uni_utf8_next((const char *)s, len, &i, &cp) == -1 ||
	    cp_kind(cp) != CP_TEXT)
		return 0;
	return i;
}

/* How many of the first n bytes of s are printable ASCII or '\t'. */
static size_t
plain_run(const char *s, size_t n)
{
	size_t k = 0;
	uint64_t w, st;

	for (; k + 8 <= n; k += 8) {
		memcpy(&w, s + k, 8);
		if ((st = w_stops(w)) == 0)
			continue;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		return k + (size_t)__builtin_ctzll(st) / 8;
#else
		break;
#endif
	}
	while (k < n && clean_plain_byte((unsigned char)s[k]))
		k++;
	return k;
}

void
clean_feed(struct clean *c, const char *in, size_t len, struct evbuffer *out)
{
	struct clean_out o = {.o_buf = out, .o_len = 0};
	size_t i = 0, j, room, k;

	while (i < len) {
		if (c->c_state != CS_GROUND || c->c_need != 0) {
			feed_byte(c, &o, (uint8_t)in[i++]);
			continue;
		}
		/*
		 * Fast path: runs of printable ASCII and \t, with the \n
		 * between them, in plain text.  Within its line's room a
		 * run is kept whole (no line in it owes a marker, each byte
		 * is one character out); past it, a run is cut whole (each
		 * byte one character dropped).
		 */
		if (c->c_line_chars >= c->c_line_max) {
			k = plain_run(in + i, len - i);
			c->c_dropped += k;
			i += k;
			if (i < len)
				feed_byte(c, &o, (uint8_t)in[i++]);
			continue;
		}
		for (j = i;;) {
			room = c->c_line_max - c->c_line_chars;
			k = plain_run(in + j, len - j < room ? len - j : room);
			c->c_line_chars += k;
			j += k;
			if (j < len && in[j] == '\n') {
				c->c_line_chars = 0;
				j++;
				continue;
			}
			break;
		}
		if (j > i) {
			out_bytes(c, &o, in + i, j - i);
			c->c_out_chars += j - i;
			i = j;
			continue;
		}
		feed_byte(c, &o, (uint8_t)in[i++]);
	}
	out_flush(&o);
}

void
clean_finish(struct clean *c, struct evbuffer *out)
{
	struct clean_out o = {.o_buf = out, .o_len = 0};

	if (c->c_need > 0)
		utf8_abandon(c, &o);
	out_marker(c, &o);
	c->c_state = CS_GROUND;
	c->c_line_chars = 0;
	out_flush(&o);
}

int
clean_at_line(const struct clean *c, size_t *line_max)
{
	*line_max = c->c_line_max;
	return c->c_state == CS_GROUND && c->c_need == 0 &&
	       c->c_line_chars == 0 && c->c_dropped == 0;
}

void
clean_passed(struct clean *c, size_t n, size_t chars)
{
	c->c_out_chars += chars;
	c->c_out_bytes += n;
}

uint64_t
clean_chars(const struct clean *c)
{
	return c->c_out_chars;
}

uint64_t
clean_bytes(const struct clean *c)
{
	return c->c_out_bytes;
}

int
clean_buf(const char *in, size_t len, size_t line_max, struct evbuffer *out)
{
	struct clean c;

	clean_init(&c, line_max);
	clean_feed(&c, in, len, out);
	clean_finish(&c, out);
	return 0;
}
