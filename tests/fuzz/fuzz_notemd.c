/*
 * libFuzzer target for policy/notemd.c (VA-5): whatever the bytes, the
 * rendering fits notemd_max, is valid UTF-8 with no control but newline
 * and tab, leaves every ASCII punctuation character escaped (but the
 * renderer's own "&#32;"/"&#9;" and hard-break backslash), and the title
 * fits NOTEMD_TITLE_MAX on one line.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "notemd.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_escaped(const char *s, size_t n, int oneline)
{
	size_t i;

	if (!utf8_valid(s, n))
		abort();
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			abort();
		if (c == '\n' && oneline)
			abort();
		if (c == '&' && (i == 0 || s[i - 1] == '\n') &&
		    (strncmp(s + i, "&#32;", 5) == 0 ||
			strncmp(s + i, "&#9;", 4) == 0)) {
			i += s[i + 2] == '3' ? 4 : 3;
			continue;
		}
		if (c == '\\' && i + 1 < n && s[i + 1] == '\n')
			continue; /* a hard break */
		if (c == '\\') {
			/* escapes exactly one ASCII punctuation character */
			if (i + 1 == n ||
			    strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
				s[i + 1]) == NULL ||
			    s[i + 1] == '\0')
				abort();
			i++;
			continue;
		}
		if (c < 0x80 && c != 0 &&
		    strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) != NULL)
			abort(); /* punctuation left bare */
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char *out, title[NOTEMD_TITLE_MAX];
	size_t n;

	if ((out = malloc(notemd_max(len))) == NULL)
		return 0;
	n = notemd_text(out, (const char *)data, len);
	if (n > notemd_max(len))
		abort();
	check_escaped(out, n, 0);
	free(out);
	n = notemd_title(title, (const char *)data, len);
	if (n == 0 || n > NOTEMD_TITLE_MAX)
		abort();
	check_escaped(title, n, 1);
	return 0;
}
