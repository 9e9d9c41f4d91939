/*
 * Byte sets written as bracket expressions, and the shape check that
 * every name, id and token rule is built from (see charset.h).
 */
#include <stddef.h>

#include "charset.h"

int
charset_has(const char *set, char c)
{
	unsigned char u = (unsigned char)c;
	size_t i;

	if (u == '\0')
		return 0;
	for (i = 0; set[i] != '\0'; i++) {
		if (set[i + 1] == '-' && set[i + 2] != '\0') {
			if (u >= (unsigned char)set[i] &&
			    u <= (unsigned char)set[i + 2])
				return 1;
			i += 2;
		} else if (u == (unsigned char)set[i])
			return 1;
	}
	return 0;
}

int
charset_shape(const char *s, size_t len, const char *first, const char *rest,
    size_t min, size_t max)
{
	size_t i;

	if (len < min || len > max)
		return 0;
	for (i = 0; i < len; i++)
		if (!charset_has(i == 0 ? first : rest, s[i]))
			return 0;
	return 1;
}
