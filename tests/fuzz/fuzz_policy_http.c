/*
 * libFuzzer target for policy/http.c: every perimeter rule on the same
 * hostile bytes, checking that accepted values keep their promises.
 * Input "A\nB": A is the header value, B the cookie name / listen address.
 * The same input split into "name:value" lines is a header list for
 * http_headers_ok, whose acceptance is checked against its rules.
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

static int
is_tchar(int c)
{
	return c != '\0' &&
	       (memchr("!#$%&'*+-.^_`|~", c, 15) != NULL ||
		   (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		   (c >= 'A' && c <= 'Z'));
}

/* ASCII case-insensitive equality, independent of policy/text.c. */
static int
ci_eq(const char *a, const char *b)
{
	for (; *a != '\0' && *b != '\0'; a++, b++) {
		int x = (unsigned char)*a, y = (unsigned char)*b;

		if (x >= 'A' && x <= 'Z')
			x += 'a' - 'A';
		if (y >= 'A' && y <= 'Z')
			y += 'a' - 'A';
		if (x != y)
			return 0;
	}
	return *a == *b;
}

struct lines {
	char **l_name, **l_value;
	size_t l_n, l_i;
};

static int
lines_next(void *arg, const char **name, const char **value)
{
	struct lines *l = arg;

	if (l->l_i == l->l_n)
		return 0;
	*name = l->l_name[l->l_i];
	*value = l->l_value[l->l_i];
	l->l_i++;
	return 1;
}

/* s (NUL-terminated, modified) as header lines; accepted means lawful. */
static void
check_headers(char *s, size_t size)
{
	struct lines l = {NULL, NULL, 0, 0};
	const char *cl = NULL;
	char *p, *nl, *colon;
	size_t i, j, te = 0;

	l.l_name = calloc(size + 1, sizeof(char *));
	l.l_value = calloc(size + 1, sizeof(char *));
	if (l.l_name == NULL || l.l_value == NULL)
		goto out;
	for (p = s;; p = nl + 1) {
		if ((nl = strchr(p, '\n')) != NULL)
			*nl = '\0';
		if ((colon = strchr(p, ':')) != NULL)
			*colon = '\0';
		l.l_name[l.l_n] = p;
		l.l_value[l.l_n] = colon != NULL ? colon + 1 : "";
		l.l_n++;
		if (nl == NULL)
			break;
	}
	if (!http_headers_ok(lines_next, &l))
		goto out;
	for (i = 0; i < l.l_n; i++) {
		const char *n = l.l_name[i], *v = l.l_value[i];

		check(n[0] != '\0');
		for (j = 0; n[j] != '\0'; j++)
			check(is_tchar((unsigned char)n[j]));
		if (ci_eq(n, "content-length")) {
			check(v[0] != '\0' && strlen(v) <= HTTP_CL_DIGITS_MAX);
			check(v[0] != '0' || v[1] == '\0');
			for (j = 0; v[j] != '\0'; j++)
				check(v[j] >= '0' && v[j] <= '9');
			check(cl == NULL || strcmp(cl, v) == 0);
			cl = v;
		}
		if (ci_eq(n, "transfer-encoding")) {
			check(ci_eq(v, "chunked"));
			te++;
		}
	}
	check(te <= 1 && !(te == 1 && cl != NULL));
out:
	free(l.l_name);
	free(l.l_value);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *extra[] = {"https://cordon.example"};
	const char *tok, *val, *name;
	char *s, *raw, *nl;
	size_t toklen, vallen, i;
	unsigned long long cln;

	/* Exact-size copy without NUL: catches reads past len. */
	if ((raw = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(raw, data, size);
	if (http_header_name_ok(raw, size)) {
		check(size >= 1);
		for (i = 0; i < size; i++)
			check(is_tchar((unsigned char)raw[i]));
	}
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
	if (http_content_length_ok(s, &cln)) {
		check(strlen(s) >= 1 && strlen(s) <= HTTP_CL_DIGITS_MAX);
		check(strspn(s, "0123456789") == strlen(s));
		check(cln == strtoull(s, NULL, 10));
	}
	memcpy(s, data, size);
	s[size] = '\0';
	check_headers(s, size);
	free(s);
	return 0;
}
