/*
 * Invisible and reordering code points (see unicode.h).  One sorted table
 * of ranges, and an index of it by blocks of 64; everything else is plain
 * text.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <threads.h>

#include "unicode.h"

struct uni_range {
	uint32_t ur_lo, ur_hi;
	enum uni_class ur_class;
};

/*
 * Sorted, not overlapping.  UNI_HIDDEN: the bidi controls, every default-
 * ignorable or format (Cf) code point that renders as nothing (also the
 * unassigned ones Unicode keeps default-ignorable, which a renderer
 * hides: U+FFF0..U+FFF8, the rest of U+E0000..U+E0FFF), the fillers that
 * render as blank letters, and U+2028/U+2029 (a line break no line-based
 * check sees).  UNI_SPACE: the Zs separators but U+0020.
 */
static const struct uni_range uni_table[] = {
    {0x00A0, 0x00A0, UNI_SPACE},    /* no-break space */
    {0x00AD, 0x00AD, UNI_HIDDEN},   /* soft hyphen */
    {0x034F, 0x034F, UNI_HIDDEN},   /* combining grapheme joiner */
    {0x061C, 0x061C, UNI_HIDDEN},   /* Arabic letter mark */
    {0x115F, 0x1160, UNI_HIDDEN},   /* Hangul fillers */
    {0x1680, 0x1680, UNI_SPACE},    /* Ogham space mark */
    {0x17B4, 0x17B5, UNI_HIDDEN},   /* Khmer inherent vowels */
    {0x180B, 0x180F, UNI_HIDDEN},   /* Mongolian selectors, vowel sep. */
    {0x2000, 0x200A, UNI_SPACE},    /* en quad .. hair space */
    {0x200B, 0x200F, UNI_HIDDEN},   /* ZWSP ZWNJ ZWJ LRM RLM */
    {0x2028, 0x202E, UNI_HIDDEN},   /* LS PS LRE RLE PDF LRO RLO */
    {0x202F, 0x202F, UNI_SPACE},    /* narrow no-break space */
    {0x205F, 0x205F, UNI_SPACE},    /* medium mathematical space */
    {0x2060, 0x206F, UNI_HIDDEN},   /* WJ, invisible operators, isolates */
    {0x2800, 0x2800, UNI_HIDDEN},   /* Braille blank */
    {0x3000, 0x3000, UNI_SPACE},    /* ideographic space */
    {0x3164, 0x3164, UNI_HIDDEN},   /* Hangul filler */
    {0xFE00, 0xFE0F, UNI_HIDDEN},   /* variation selectors */
    {0xFEFF, 0xFEFF, UNI_HIDDEN},   /* BOM, zero-width no-break space */
    {0xFFA0, 0xFFA0, UNI_HIDDEN},   /* halfwidth Hangul filler */
    {0xFFF0, 0xFFFB, UNI_HIDDEN},   /* (unassigned), annotation */
    {0x1BCA0, 0x1BCA3, UNI_HIDDEN}, /* shorthand format controls */
    {0x1D173, 0x1D17A, UNI_HIDDEN}, /* musical format controls */
    {0xE0000, 0xE0FFF, UNI_HIDDEN}, /* tags, selectors supplement, ... */
};

/*
 * An index of uni_table, made from it once: bit b of uni_blk[b / 64] is
 * set if the 64 code points from b * 64 on meet a range.  A code point
 * below UNI_BLK_END in a block with no bit is plain without the search.
 */
#define UNI_BLK_END 0x20000
static uint64_t uni_blk[UNI_BLK_END / 64 / 64];
static atomic_int uni_blk_ready;
static once_flag uni_blk_once = ONCE_FLAG_INIT;

static void
uni_blk_make(void)
{
	size_t k;
	uint32_t b;

	for (k = 0; k < sizeof(uni_table) / sizeof(uni_table[0]); k++)
		for (b = uni_table[k].ur_lo / 64;
		     b <= uni_table[k].ur_hi / 64 && b < UNI_BLK_END / 64; b++)
			uni_blk[b / 64] |= 1ull << (b % 64);
	atomic_store_explicit(&uni_blk_ready, 1, memory_order_release);
}

enum uni_class
uni_class(uint32_t cp)
{
	const struct uni_range *r = uni_table;
	size_t n = sizeof(uni_table) / sizeof(uni_table[0]), half;

	if (cp < uni_table[0].ur_lo)
		return UNI_PLAIN;
	if (!atomic_load_explicit(&uni_blk_ready, memory_order_acquire))
		call_once(&uni_blk_once, uni_blk_make);
	if (cp < UNI_BLK_END && !(uni_blk[cp / 4096] >> (cp / 64 % 64) & 1u))
		return UNI_PLAIN;
	/* The last range that starts at or before cp, in a fixed number
	 * of steps whatever cp (no branch on it to mispredict). */
	while (n > 1) {
		half = n / 2;
		r = r[half].ur_lo <= cp ? r + half : r;
		n -= half;
	}
	return cp <= r->ur_hi ? r->ur_class : UNI_PLAIN;
}

size_t
uni_mark(uint32_t cp, char m[UNI_MARK_MAX])
{
	static const char hex[] = "0123456789ABCDEF";
	size_t nd = cp > 0xFFFFF ? 6 : cp > 0xFFFF ? 5 : 4, i;

	memcpy(m, "<U+", 3);
	for (i = 0; i < nd; i++)
		m[3 + i] = hex[(cp >> (4 * (nd - 1 - i))) & 0xF];
	m[3 + nd] = '>';
	return 4 + nd;
}

size_t
uni_utf8_chars(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

int
uni_utf8_next(const char *s, size_t len, size_t *i, uint32_t *cp)
{
	const unsigned char *p = (const unsigned char *)s + *i;
	size_t left = len - *i, need, k;
	uint32_t v, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		(*i)++;
		return 0;
	}
	if (p[0] >= 0xC2 && p[0] <= 0xDF) {
		need = 1;
		v = p[0] & 0x1F;
		min = 0x80;
	} else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
		need = 2;
		v = p[0] & 0x0F;
		min = 0x800;
	} else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
		need = 3;
		v = p[0] & 0x07;
		min = 0x10000;
	} else
		goto bad;
	if (left <= need)
		goto bad;
	for (k = 1; k <= need; k++) {
		if ((p[k] & 0xC0) != 0x80)
			goto bad;
		v = (v << 6) | (p[k] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		goto bad;
	*cp = v;
	*i += need + 1;
	return 0;
bad:
	*cp = 0xFFFD;
	(*i)++;
	return -1;
}

int
uni_gate_refused(const char *s, size_t len)
{
	size_t i = 0;
	uint32_t cp;

	while (i < len) {
		if (uni_utf8_next(s, len, &i, &cp) == -1 ||
		    uni_class(cp) != UNI_PLAIN ||
		    (cp < 0x20 && cp != '\t' && cp != '\n') ||
		    (cp >= 0x7F && cp <= 0x9F))
			return 1;
	}
	return 0;
}
