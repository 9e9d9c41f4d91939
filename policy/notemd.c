/*
 * VA-5: untrusted text as literal Markdown (see notemd.h).  CommonMark
 * makes every backslash-escaped ASCII punctuation character a literal, so
 * escaping all of them leaves no construct to start; Templater, Dataview
 * and Obsidian's own syntax (`<%`, `::`, `[[`, `%%`, `==`, `$`, `#tag`)
 * are made of the same characters, so the raw file holds none of them
 * either.  What is left to handle is whitespace at a line's start.
 */
#include <stdint.h>
#include <string.h>

#include "notemd.h"
#include "unicode.h"

size_t
notemd_max(size_t len)
{
	/* Worst case: a two-byte hidden code point becomes "\<U\+00AD\>". */
	return 6 * len + 8;
}

static int
is_punct(uint32_t cp)
{
	return cp != 0 && cp < 0x80 &&
	       strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", (int)cp) != NULL;
}

/* Dropped: C0 but tab and newline, DEL, C1. */
static int
is_control(uint32_t cp)
{
	return (cp < 0x20 && cp != '\t' && cp != '\n') ||
	       (cp >= 0x7F && cp <= 0x9F);
}

static size_t
put_utf8(char *d, uint32_t cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xC0 | (cp >> 6));
		d[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xE0 | (cp >> 12));
		d[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		d[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	d[0] = (char)(0xF0 | (cp >> 18));
	d[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	d[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	d[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* One code point that is neither a control nor a line break, escaped. */
static size_t
put_escaped(char *d, uint32_t cp)
{
	char m[UNI_MARK_MAX];
	size_t n, i, o = 0;

	if (uni_class(cp) == UNI_HIDDEN) {
		n = uni_mark(cp, m);
		for (i = 0; i < n; i++) {
			if (is_punct((unsigned char)m[i]))
				d[o++] = '\\';
			d[o++] = m[i];
		}
		return o;
	}
	if (is_punct(cp))
		d[o++] = '\\';
	return o + put_utf8(d + o, cp);
}

/* The line [s, e) holds something that shows: not only blanks and
 * controls. */
static int
line_shows(const char *s, size_t e, size_t i)
{
	uint32_t cp;

	while (i < e) {
		if (uni_utf8_next(s, e, &i, &cp) == -1)
			return 1;
		if (cp != ' ' && cp != '\t' && !is_control(cp))
			return 1;
	}
	return 0;
}

size_t
notemd_text(char *dst, const char *src, size_t len)
{
	size_t i = 0, e, o = 0;
	int prev = 0, lead;
	uint32_t cp;
	const char *nl;

	while (i <= len) {
		nl = i < len ? memchr(src + i, '\n', len - i) : NULL;
		e = nl != NULL ? (size_t)(nl - src) : len;
		if (!line_shows(src, e, i)) {
			prev = 0;
		} else {
			/* A line break inside a paragraph is a hard break; a
			 * blank line before starts a new paragraph. */
			if (prev) {
				memcpy(dst + o, "\\\n", 2);
				o += 2;
			} else if (o > 0) {
				memcpy(dst + o, "\n\n", 2);
				o += 2;
			}
			prev = 1;
			lead = 1;
			while (i < e) {
				(void)uni_utf8_next(src, e, &i, &cp);
				if (is_control(cp))
					continue;
				/* Its first blank as a reference: no code
				 * block, nothing stripped. */
				if (lead && (cp == ' ' || cp == '\t')) {
					memcpy(dst + o,
					    cp == ' ' ? "&#32;" : "&#9;",
					    cp == ' ' ? 5 : 4);
					o += cp == ' ' ? 5 : 4;
					lead = 0;
					continue;
				}
				lead = 0;
				o += put_escaped(dst + o, cp);
			}
		}
		if (nl == NULL)
			break;
		i = e + 1;
	}
	return o;
}

size_t
notemd_title(char *dst, const char *src, size_t len)
{
	uint32_t cps[NOTEMD_TITLE_CHARS + 1], cp;
	size_t i = 0, n = 0, cut, o = 0, k;
	int more = 0, blank = 0;

	while (i < len) {
		(void)uni_utf8_next(src, len, &i, &cp);
		if (is_control(cp))
			continue;
		if (cp == ' ' || cp == '\t' || cp == '\n') {
			blank = n > 0;
			continue;
		}
		if (n + (size_t)blank >= NOTEMD_TITLE_CHARS) {
			more = 1 + blank; /* 2: cut on a word's end */
			break;
		}
		if (blank)
			cps[n++] = ' ';
		blank = 0;
		cps[n++] = cp;
	}
	cut = n;
	if (more == 1) {
		/* Back to the last blank, unless that leaves too little. */
		for (k = n; k > 0 && cps[k - 1] != ' '; k--)
			;
		if (k > NOTEMD_TITLE_CHARS / 2)
			cut = k - 1;
		while (cut > 0 && cps[cut - 1] == ' ')
			cut--;
	}
	if (cut == 0) {
		memcpy(dst, "chat", 4);
		return 4;
	}
	for (k = 0; k < cut; k++)
		o += put_escaped(dst + o, cps[k]);
	if (more)
		o += put_utf8(dst + o, 0x2026);
	return o;
}
