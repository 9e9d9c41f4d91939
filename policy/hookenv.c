/*
 * SBX-8: the variables pinned empty in a Gemini CLI run, and the .env
 * names they cannot cover (hookenv.h).
 */
#include <string.h>

#include "charset.h"
#include "hookenv.h"

/*
 * Empty is harmless for each: ld.so ignores an empty LD_PRELOAD,
 * LD_AUDIT, LD_LIBRARY_PATH (and needs a non-empty value for the other
 * LD_* it reads by value), glibc an empty GLIBC_TUNABLES and GCONV_PATH
 * (its iconv modules are libraries), bash an empty BASH_ENV, ENV,
 * SHELLOPTS (xtrace would expand PS4), BASHOPTS and PS4, node an empty
 * NODE_OPTIONS and NODE_PATH.
 */
const char *const hookenv_pinned[] = {"LD_PRELOAD", "LD_AUDIT",
    "LD_LIBRARY_PATH", "LD_BIND_NOW", "LD_BIND_NOT", "LD_DEBUG",
    "LD_DEBUG_OUTPUT", "LD_PROFILE", "LD_PROFILE_OUTPUT", "LD_ORIGIN_PATH",
    "LD_HWCAP_MASK", "LD_USE_LOAD_BIAS", "LD_WARN", "LD_VERBOSE",
    "GLIBC_TUNABLES", "GCONV_PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS",
    "PS4", "NODE_OPTIONS", "NODE_PATH", NULL};

#define NAME_CHARS "A-Za-z0-9_.-"

static int
pinned(const char *s, size_t n)
{
	size_t i;

	for (i = 0; hookenv_pinned[i] != NULL; i++)
		if (strlen(hookenv_pinned[i]) == n &&
		    memcmp(hookenv_pinned[i], s, n) == 0)
			return 1;
	return 0;
}

int
hookenv_dotenv_bad(const char *buf, size_t len)
{
	size_t i = 0, j;

	while (i < len) {
		if (!charset_has(NAME_CHARS, buf[i])) {
			i++;
			continue;
		}
		for (j = i; j < len && charset_has(NAME_CHARS, buf[j]); j++)
			;
		if (j - i >= 3 && memcmp(buf + i, "LD_", 3) == 0 &&
		    !pinned(buf + i, j - i))
			return 1;
		i = j;
	}
	return 0;
}
