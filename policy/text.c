/*
 * Pure text helpers for policy/: see text.h.
 */
#include <string.h>

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

size_t
text_utf8_chars(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}
