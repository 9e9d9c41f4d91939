/*
 * libFuzzer target for policy/http.c: every perimeter rule on the same
 * hostile bytes, checking that accepted values keep their promises.
 * Input "A\nB": A is the header value, B the cookie name / listen address.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

#define PORT 8787

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check(int cond)
{
	if (!cond)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *extra[] = {"https://cordon.example"};
	const char *tok, *val, *name;
	char *s, *raw, *nl;
	size_t toklen, vallen, i;

	/* Exact-size copy without NUL: catches reads past len. */
	if ((raw = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(raw, data, size);
	if (http_target_ok(raw, size)) {
		check(size >= 1 && size <= HTTP_TARGET_MAX && raw[0] == '/');
		check(memchr(raw, '#', size) == NULL);
		check(memchr(raw, '\0', size) == NULL);
	}
	free(raw);

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	if (http_host_ok(s, PORT))
		check(http_host_ok_addr(s, NULL, PORT));
	(void)http_host_ok(s, size);
	(void)http_origin_ok(s, PORT, extra, 1);
	(void)http_fetch_site_ok(s);
	if (http_bearer_parse(s, &tok, &toklen)) {
		check(tok == s + 7 && toklen >= 1 &&
		      toklen <= HTTP_BEARER_MAX && tok[toklen] == '\0');
		for (i = 0; i < toklen; i++)
			check(tok[i] != ' ' && tok[i] != '\0');
	}

	name = "cordon_session";
	if ((nl = strchr(s, '\n')) != NULL) {
		*nl = '\0';
		name = nl + 1;
		(void)http_host_ok_addr(s, name, PORT);
	}
	if (http_cookie_get(s, name, &val, &vallen)) {
		check(val > s && val + vallen <= s + strlen(s) && vallen > 0);
		check(memchr(val, ';', vallen) == NULL);
		check(memchr(val, ' ', vallen) == NULL);
	}
	free(s);
	return 0;
}
