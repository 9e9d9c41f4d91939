/*
 * Pure text helpers for policy/: see text.h.
 */
#include <string.h>

#include "charset.h"
#include "text.h"

static int
text_lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

int
text_span_ci_eq(const char *s, size_t len, const char *lit)
{
	size_t i;

	if (strlen(lit) != len)
		return 0;
	for (i = 0; i < len; i++)
		if (text_lower((unsigned char)s[i]) !=
		    text_lower((unsigned char)lit[i]))
			return 0;
	return 1;
}

void
text_lower_copy(char *dst, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		dst[i] = (char)text_lower((unsigned char)s[i]);
	dst[len] = '\0';
}

int
text_dns_name(const char *s, size_t len, unsigned flags)
{
	const char *set = (flags & TEXT_DNS_LOWER) ? "a-z0-9-" : "a-zA-Z0-9-";
	size_t i, k, start = 0;
	int digits = 1;

	if (len == 0 || len > TEXT_DNS_MAX)
		return 0;
	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '.') {
			if (!charset_has(set, s[i]))
				return 0;
			continue;
		}
		if (i == start || i - start > 63 || s[start] == '-' ||
		    s[i - 1] == '-')
			return 0;
		for (k = start, digits = 1; k < i; k++)
			if (s[k] < '0' || s[k] > '9')
				digits = 0;
		start = i + 1;
	}
	return !(flags & TEXT_DNS_NAMED) || !digits;
}

size_t
text_utf8_prefix(const char *s, size_t len, size_t chars)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n++ == chars)
			return i;
	return len;
}

/* Edit distance of a and b (both at most TEXT_NEAR_MAX bytes), ASCII case
 * folded; adjacent swaps count one. */
static size_t
text_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t d[TEXT_NEAR_MAX + 1][TEXT_NEAR_MAX + 1], i, j, x, y;

	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			x = d[i - 1][j - 1] +
			    (text_lower(a[i - 1]) != text_lower(b[j - 1]));
			y = d[i - 1][j] + 1;
			x = y < x ? y : x;
			y = d[i][j - 1] + 1;
			x = y < x ? y : x;
			if (i > 1 && j > 1 &&
			    text_lower(a[i - 1]) == text_lower(b[j - 2]) &&
			    text_lower(a[i - 2]) == text_lower(b[j - 1]) &&
			    d[i - 2][j - 2] + 1 < x)
				x = d[i - 2][j - 2] + 1;
			d[i][j] = x;
		}
	return d[la][lb];
}

const char *
text_nearest(const char *word, const char *const *cands)
{
	const char *best = NULL;
	size_t lw = strlen(word), lc, dist, bestd, limit;

	if (lw == 0 || lw > TEXT_NEAR_MAX)
		return NULL;
	/* A third of the word, at least one and at most three edits. */
	limit = lw / 3 < 1 ? 1 : lw / 3 > 3 ? 3 : lw / 3;
	bestd = limit + 1;
	for (; *cands != NULL; cands++) {
		if ((lc = strlen(*cands)) > TEXT_NEAR_MAX)
			continue;
		dist = text_distance(word, lw, *cands, lc);
		/* A word that starts a known one ("stat") is near it. */
		if (dist > limit && lw >= 3 && lw < lc &&
		    text_span_ci_eq(*cands, lw, word))
			dist = limit;
		if (dist < bestd) {
			bestd = dist;
			best = *cands;
		}
	}
	return best;
}
