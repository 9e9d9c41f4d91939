/*
 * Streaming output cleaner (SP-10): agent bytes in, plain UTF-8 text out.
 * Correct across chunk boundaries: any escape or UTF-8 sequence may be
 * split over feeds.  Pure state machine; writes only to the evbuffer.
 */
#ifndef CORDON_SANITIZE_H
#define CORDON_SANITIZE_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

struct clean {
	/* UTF-8 decoder */
	uint32_t c_cp;	 /* code point being assembled */
	unsigned c_need; /* continuation bytes still expected */
	unsigned c_have; /* bytes of the sequence seen */
	uint32_t c_min;	 /* smallest code point for this length */
	/* escape-sequence state (see sanitize.c) */
	int c_state;
	int c_str_osc; /* in a string: 1 for OSC (BEL ends it) */
	int c_str_raw; /* opened by a raw 8-bit byte: a newline ends it */
	/* line clamp */
	size_t c_line_max;   /* code points kept per line */
	size_t c_line_chars; /* code points of the current line so far */
	size_t c_dropped;    /* code points cut from the current line */
	/* totals of what was written out (for audit lengths, AU-4) */
	uint64_t c_out_chars;
	uint64_t c_out_bytes;
};

/* line_max 0 means LIM_LINE_MAX (1000). */
void clean_init(struct clean *, size_t line_max);
/*
 * Strips CSI (ESC [ and 8-bit 0x9b) incl. SGR, OSC (ended by BEL or ST),
 * DCS/SOS/PM/APC (ended by ST = ESC \ or 0x9c), single-char ESC
 * sequences, a lone ESC, C0 controls but \n and \t, DEL and C1 controls;
 * drops every CR (so CRLF -> LF and bare CR vanishes); cuts lines over
 * line_max code points with " … [+N chars]" at the line's end, never
 * inside a code point; invalid UTF-8 -> U+FFFD; an invisible or
 * reordering code point (unicode.h, UNI_HIDDEN) -> "<U+XXXX>", which
 * counts as that many characters of its line and is never cut in two.
 */
void clean_feed(
    struct clean *, const char *in, size_t len, struct evbuffer *out);
/* Flush: a truncated UTF-8 tail -> U+FFFD, a pending clamp marker. */
void clean_finish(struct clean *, struct evbuffer *out);
/* Code points / bytes written out so far. */
uint64_t clean_chars(const struct clean *);
uint64_t clean_bytes(const struct clean *);

/*
 * The lane around the cleaner (redact_clean_feed): clean_plain_byte is 1
 * for printable ASCII and '\t', the bytes plain text keeps as they are;
 * clean_kept is the length (2 to 4) of the UTF-8 sequence at s[0..len)
 * when plain text keeps it as it is, one character of its line (valid,
 * neither a C1 control nor UNI_HIDDEN), else 0.  clean_at_line: 1 with
 * *line_max when the cleaner stands at a line's start in plain text, so
 * that complete lines of such bytes and sequences, each of at most
 * *line_max characters, would come out as they went in; clean_passed
 * counts n bytes, chars characters, of such lines that went around it.
 */
int clean_plain_byte(unsigned char);
size_t clean_kept(const unsigned char *s, size_t len);
int clean_at_line(const struct clean *, size_t *line_max);
void clean_passed(struct clean *, size_t n, size_t chars);

/* One-shot helper: clean buf into out.  0, or -1 on allocation failure. */
int clean_buf(
    const char *in, size_t len, size_t line_max, struct evbuffer *out);

#endif
