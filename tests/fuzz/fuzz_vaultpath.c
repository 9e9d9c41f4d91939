/*
 * libFuzzer target for policy/vaultpath.c: decode once, then every path
 * rule on the result, checking that accepted values keep their promises
 * (no "..", no leading '/', no backslash, no NUL, bounded, right ending).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vaultpath.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check(int cond)
{
	if (!cond)
		abort();
}

/* What every accepted path or folder must satisfy. */
static void
check_lexical(const char *p, size_t len)
{
	size_t i, start = 0;

	check(len <= VAULT_PATH_MAX && memchr(p, '\0', len) == NULL);
	check(memchr(p, '\\', len) == NULL);
	check(len == 0 || p[0] != '/');
	for (i = 0; i <= len; i++) {
		if (i < len && p[i] != '/')
			continue;
		/* No empty, "." or ".." segment, except one trailing '/'. */
		check(i - start > 0 || i == len);
		check(!(i - start == 1 && p[start] == '.'));
		check(!(
		    i - start == 2 && p[start] == '.' && p[start + 1] == '.'));
		start = i + 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[VAULT_PATH_MAX + 1], name[VAULT_HINT_MAX + 4];
	char chat[VAULT_CHAT_NAME_MAX];
	char *raw;
	long n;
	size_t i;

	/* Exact-size copy without NUL: catches reads past len. */
	if ((raw = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(raw, data, size);

	n = vaultpath_decode(raw, size, out, sizeof(out));
	if (n >= 0) {
		check((size_t)n <= size && out[n] == '\0');
		check(memchr(out, '\0', (size_t)n) == NULL);
		if (vaultpath_read_ok(out, (size_t)n)) {
			check_lexical(out, (size_t)n);
			check(n >= 4 && memcmp(out + n - 3, ".md", 3) == 0);
		}
		if (vaultpath_dir_ok(out, (size_t)n))
			check_lexical(out, (size_t)n);
		if (vaultpath_mission_folder_ok("m1", out, (size_t)n)) {
			size_t rl = sizeof(VAULT_MISSIONS "/m1") - 1;

			check_lexical(out, (size_t)n);
			check(strncmp(out, VAULT_MISSIONS "/m1", rl) == 0);
			check(out[rl] == '\0' || out[rl] == '/');
		}
	}
	if (vaultpath_hint_name(raw, size, name, sizeof(name)) == 0) {
		check(size >= 1 && size <= VAULT_HINT_MAX && raw[0] != '.');
		check(strchr(name, '/') == NULL && name[0] != '.');
		check(strlen(name) >= 4 &&
		      strcmp(name + strlen(name) - 3, ".md") == 0);
	}
	if (size <= VAULT_NAME_MAX && vaultpath_name_ok(raw, size)) {
		memcpy(out, raw, size);
		out[size] = '\0';
		if (vaultpath_chat_name(chat, sizeof(chat), 1778926333456LL,
			out, "0123abcd", (unsigned)(size % 100)) == 0)
			for (i = 0; chat[i] != '\0'; i++)
				check(chat[i] != '/' &&
				      (chat[i] != '.' ||
					  strcmp(chat + i, ".md") == 0));
	}
	free(raw);
	return 0;
}
