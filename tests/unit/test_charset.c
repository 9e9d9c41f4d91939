/*
 * Unit tests for common/charset.c, and the proof that every name, id and
 * token checker built on it decides as the hand-written loop it replaced:
 * each old loop is kept here as the reference and run against the new
 * call over every string of length 0..3 on an alphabet holding each
 * boundary byte and some outside ones, and over strings around each
 * maximum length.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "audit_schema.h"
#include "charset.h"
#include "env.h"
#include "egress.h"
#include "gate_impl.h"
#include "hook.h"
#include "hookenv.h"
#include "http.h"
#include "manifest.h"
#include "mission.h"
#include "schema.h"
#include "text.h"
#include "util.h"
#include "vaultpath.h"

/* Each set's first and last byte, their outer neighbours, and bytes no
 * set holds (NUL, controls, high bytes). */
static const char alpha[] = {'\0', '\x01', '\x1f', ' ', '\'', '+', ',', '-',
    '.', '/', '0', '1', '9', ':', '@', 'A', 'F', 'Z', '[', ']', '_', '`', 'a',
    'f', 'g', 'z', '{', '}', '~', '\x7f', '\x80', '\xff'};
#define NALPHA sizeof(alpha)

/* A checker over (s, len); s is NUL-terminated at len as well. */
typedef int (*check_fn)(const char *, size_t);

/* A checker of a C string, over the (s, len) of the comparison. */
#define BY_STR(fn, expr)                                                       \
	static int fn(const char *s, size_t len)                               \
	{                                                                      \
		(void)len;                                                     \
		return expr;                                                   \
	}

/* ---- the replaced loops, as they were ---- */

static int
old_env_name_syntax(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > 128 ||
	    !((s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
		return 0;
	for (i = 1; i < len; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

static int
old_env_name_ok(const char *name, size_t len)
{
	(void)len;
	len = strlen(name);
	return old_env_name_syntax(name, len) && !env_runtime_control(name);
}

BY_STR(new_env_name_ok, env_name_ok(s))

static int
old_mp_name_ok(const char *s, size_t maxlen)
{
	size_t i, len = strlen(s);

	if (len == 0 || len > maxlen ||
	    !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (i = 1; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return 0;
	return 1;
}

BY_STR(old_mp_name_16, old_mp_name_ok(s, 16))

BY_STR(new_mp_name_16, mp_name_ok(s, 16))

static int
old_vaultpath_name_ok(const char *name, size_t len)
{
	size_t i;
	int c;

	if (name == NULL || len == 0 || len > VAULT_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++) {
		c = (unsigned char)name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			(c == '-' && i > 0)))
			return 0;
	}
	return 1;
}

/* policy/mission.c opt_name_ok, max MI_OPT_NAME_MAX (32). */
static int
old_opt_name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > 32 || s[0] < 'a' || s[0] > 'z')
		return 0;
	for (i = 1; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

static int
new_opt_name_ok(const char *s, size_t len)
{
	return charset_shape(s, len, "a-z", "a-zA-Z0-9_", 1, 32);
}

/* policy/mission.c event_ok. */
static int
old_event_ok(const char *s, size_t len)
{
	size_t i;

	(void)len;
	len = strlen(s);
	if (len == 0 || len > 64 ||
	    !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (i = 1; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
			s[i] == '-'))
			return 0;
	return 1;
}

BY_STR(new_event_ok, charset_shape(s, strlen(s), "a-z0-9", "a-z0-9.-", 1, 64))

static int
old_schema_token_ok(const char *s, size_t max)
{
	size_t i, len = strlen(s);

	if (len == 0 || len > max)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
			s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

BY_STR(old_token_20, old_schema_token_ok(s, 20))

BY_STR(new_token_20, schema_token_ok(s, 20))

static int
old_gate_name_ok(const char *s, size_t len)
{
	size_t i, n = strlen(s);

	(void)len;
	if (n == 0 || n > 64)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
			s[i] == '_' || s[i] == '+' || s[i] == '-'))
			return 0;
	return 1;
}

BY_STR(new_gate_name_ok, gate_name_ok(s))

/* supervisor/config_yaml.c connector_key_shown, as 1 for "shown". */
static int
old_key_shown(const char *key, size_t len)
{
	size_t i;

	len = strlen(key);
	if (len == 0 || len > 64)
		return 0;
	for (i = 0; i < len; i++)
		if (!((key[i] >= 'a' && key[i] <= 'z') ||
			(key[i] >= 'A' && key[i] <= 'Z') ||
			(key[i] >= '0' && key[i] <= '9') || key[i] == '_' ||
			key[i] == '-'))
			return 0;
	return 1;
}

static int
new_key_shown(const char *key, size_t len)
{
	(void)len;
	return charset_shape(
	    key, strlen(key), "a-zA-Z0-9_-", "a-zA-Z0-9_-", 1, 64);
}

/* supervisor/config_yaml.c connector_authref_ok. */
static int
old_authref_ok(const char *s, size_t len)
{
	size_t i;

	if (strlen(s) != len)
		return 0;
	if (strcmp(s, "none") == 0)
		return 1;
	if (len < 5 || len > 4 + 64 || strncmp(s, "env:", 4) != 0 ||
	    !((s[4] >= 'A' && s[4] <= 'Z') || s[4] == '_'))
		return 0;
	for (i = 5; i < len; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

static int
new_authref_ok(const char *s, size_t len)
{
	if (strlen(s) != len)
		return 0;
	if (strcmp(s, "none") == 0)
		return 1;
	return strncmp(s, "env:", 4) == 0 &&
	       charset_shape(s + 4, len - 4, "A-Z_", "A-Z0-9_", 1, 64);
}

/* gated/gate.c verb_set's test (dstsz past 64), 1 for "kept". */
static int
old_verb_kept(const char *src, size_t n)
{
	n = strlen(src);
	return !(
	    n == 0 || n > 64 ||
	    strspn(src, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"0123456789._+-") != n);
}

static int
new_verb_kept(const char *src, size_t n)
{
	n = strlen(src);
	return audit_pattern_ok(AP_BIN, src, n);
}

/* gated/gate.c gate_rule_set's test, 1 for "kept". */
static int
old_rule_kept(const char *src, size_t n)
{
	n = strlen(src);
	return !(n == 0 || n > 64 ||
		 !((src[0] >= 'a' && src[0] <= 'z') ||
		     (src[0] >= '0' && src[0] <= '9')) ||
		 strspn(src, "abcdefghijklmnopqrstuvwxyz0123456789.-") != n);
}

static int
new_rule_kept(const char *src, size_t n)
{
	n = strlen(src);
	return audit_pattern_ok(AP_RULE, src, n);
}

/* gated/gate.c and policy/hook.c tool_name_ok (HOOK_TOOL_MAX 64), against
 * hook_tool_name_ok. */
static int
old_tool_name_ok(const char *s, size_t n)
{
	n = strlen(s);
	return n >= 1 && n <= 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_.-") == n;
}

BY_STR(new_tool_name_ok, hook_tool_name_ok(s))

/* supervisor/mcp_result.c: an error word (json_get_str bounds it to 40). */
static int
old_mcp_word(const char *s, size_t n)
{
	if (strlen(s) > 40)
		return -1; /* not reachable there */
	(void)n;
	return s[0] != '\0' &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(s);
}

static int
new_mcp_word(const char *s, size_t n)
{
	if (strlen(s) > 40)
		return -1;
	(void)n;
	return charset_shape(s, strlen(s), "a-z0-9-", "a-z0-9-", 1, 40);
}

/* supervisor/gate_cli.c: the verdict's rule (bounded to 64) and message
 * (bounded to 128). */
static int
old_cli_rule(const char *s, size_t n)
{
	(void)n;
	if (strlen(s) > 64)
		return -1;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789.-") == strlen(s);
}

static int
new_cli_rule(const char *s, size_t n)
{
	(void)n;
	if (strlen(s) > 64)
		return -1;
	return charset_shape(s, strlen(s), "a-z0-9.-", "a-z0-9.-", 0, 64);
}

static int
old_cli_msg(const char *s, size_t n)
{
	(void)n;
	if (strlen(s) > 128)
		return -1;
	return strspn(s,
		   "abcdefghijklmnopqrstuvwxyz"
		   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,'-") == strlen(s);
}

static int
new_cli_msg(const char *s, size_t n)
{
	(void)n;
	if (strlen(s) > 128)
		return -1;
	return charset_shape(
	    s, strlen(s), "a-zA-Z0-9 .,'-", "a-zA-Z0-9 .,'-", 0, 128);
}

/* supervisor/check.c: a key path before ": " (klen bytes, then ':'). */
static int
old_check_key(const char *s, size_t klen)
{
	char buf[600];

	snprintf(buf, sizeof(buf), "%.*s: x", (int)klen, s);
	if (memchr(s, '\0', klen) != NULL)
		return -1; /* klen is where strstr found ": " */
	if (klen == 0 || strspn(buf, "abcdefghijklmnopqrstuvwxyz"
				     "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "0123456789_.[]") != klen)
		return 0;
	return 1;
}

static int
new_check_key(const char *s, size_t klen)
{
	if (memchr(s, '\0', klen) != NULL)
		return -1;
	return charset_shape(
	    s, klen, "A-Za-z0-9_.[]", "A-Za-z0-9_.[]", 1, klen);
}

/* common/audit_schema.c, as it was: shape() over class functions. */
static int
c_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static int
c_lower_digit(char c)
{
	return c_lower(c) || (c >= '0' && c <= '9');
}

static int
c_alnum(char c)
{
	return c_lower_digit(c) || (c >= 'A' && c <= 'Z');
}

static int
c_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int
c_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int
shape(const char *s, size_t len, int (*first)(char), const char *fextra,
    int (*rest)(char), const char *rextra, size_t min, size_t max)
{
	size_t i;

	if (len < min || len > max)
		return 0;
	for (i = 0; i < len; i++) {
		int (*cls)(char) = i == 0 ? first : rest;
		const char *extra = i == 0 ? fextra : rextra;

		if (s[i] == '\0')
			return 0;
		if (!cls(s[i]) &&
		    (extra == NULL || strchr(extra, s[i]) == NULL))
			return 0;
	}
	return 1;
}

static int
old_vpath_ok(const char *s, size_t len)
{
	size_t i, start = 0;

	if (!shape(s, len, c_alnum, "._/-", c_alnum, "._/-", 1, 512))
		return 0;
	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '/')
			continue;
		if (i == start || (i - start == 1 && s[start] == '.') ||
		    (i - start == 2 && s[start] == '.' && s[start + 1] == '.'))
			return 0;
		start = i + 1;
	}
	return 1;
}

static int
old_date_ok(const char *s, size_t len)
{
	size_t i;

	if (len != 10)
		return 0;
	for (i = 0; i < len; i++)
		if ((i == 4 || i == 7) ? s[i] != '-' : !c_digit(s[i]))
			return 0;
	return 1;
}

static int
old_audit_pattern_ok(enum audit_pat p, const char *s, size_t len)
{
	switch (p) {
	case AP_NAME:
		return shape(
		    s, len, c_lower_digit, NULL, c_lower_digit, "-", 1, 64);
	case AP_ACTIONID:
		return shape(
		    s, len, c_lower_digit, NULL, c_lower_digit, "-", 1, 32);
	case AP_RUNID:
		return shape(s, len, c_hex, NULL, c_hex, NULL, 16, 16);
	case AP_HEX8:
		return shape(s, len, c_hex, NULL, c_hex, NULL, 8, 8);
	case AP_BIN:
		return shape(s, len, c_alnum, "._+-", c_alnum, "._+-", 1, 64);
	case AP_VPATH:
		return old_vpath_ok(s, len);
	case AP_VERSION:
		return shape(s, len, c_alnum, ".+-", c_alnum, ".+-", 1, 32);
	case AP_ROUTE:
		return shape(s, len, c_lower_digit, "/{}._-", c_lower_digit,
		    "/{}._-", 1, 64);
	case AP_RULE:
		return shape(
		    s, len, c_lower_digit, NULL, c_lower_digit, ".-", 1, 64);
	case AP_ERRWORD:
		return shape(s, len, c_lower, NULL, c_lower, "-", 1, 32);
	case AP_DATE:
		return old_date_ok(s, len);
	case AP_HOST:
		return shape(
		    s, len, c_lower_digit, ":", c_lower_digit, ".:-", 1, 253);
	}
	return 0;
}

#define AUDIT_PAIR(P, fn)                                                      \
	static int old_##fn(const char *s, size_t len)                         \
	{                                                                      \
		return old_audit_pattern_ok(P, s, len);                        \
	}                                                                      \
	static int new_##fn(const char *s, size_t len)                         \
	{                                                                      \
		return audit_pattern_ok(P, s, len);                            \
	}

AUDIT_PAIR(AP_NAME, ap_name)
AUDIT_PAIR(AP_ACTIONID, ap_actionid)
AUDIT_PAIR(AP_RUNID, ap_runid)
AUDIT_PAIR(AP_HEX8, ap_hex8)
AUDIT_PAIR(AP_BIN, ap_bin)
AUDIT_PAIR(AP_VPATH, ap_vpath)
AUDIT_PAIR(AP_VERSION, ap_version)
AUDIT_PAIR(AP_ROUTE, ap_route)
AUDIT_PAIR(AP_RULE, ap_rule)
AUDIT_PAIR(AP_ERRWORD, ap_errword)
AUDIT_PAIR(AP_DATE, ap_date)
AUDIT_PAIR(AP_HOST, ap_host)

/* policy/vaultpath.c write_seg_ok with its write_char, max 16. */
static int
old_write_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

static int
old_write_seg(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > 16 || s[0] == '.')
		return 0;
	for (i = 0; i < len; i++)
		if (!old_write_char((unsigned char)s[i]))
			return 0;
	return 1;
}

static int
new_write_seg(const char *s, size_t len)
{
	return len > 0 && s[0] != '.' &&
	       charset_shape(s, len, "A-Za-z0-9._-", "A-Za-z0-9._-", 1, 16);
}

/* policy/http.c tchar, bearer_char; policy/egress_req.c tchar. */
static int
old_tchar(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int
old_header_name_ok(const char *name, size_t len)
{
	size_t i;

	if (name == NULL || len == 0)
		return 0;
	for (i = 0; i < len; i++)
		if (!old_tchar((unsigned char)name[i]))
			return 0;
	return 1;
}

static int
old_bearer_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '~' ||
	       c == '+' || c == '/' || c == '=' || c == '-';
}

/* http_bearer_parse's token loop: its answer and length, as one int. */
static int
old_bearer(const char *t, size_t len)
{
	size_t n;

	(void)len;
	for (n = 0; t[n] != '\0'; n++)
		if (n >= HTTP_BEARER_MAX ||
		    !old_bearer_char((unsigned char)t[n]))
			return 0;
	return n == 0 ? 0 : 1000 + (int)n;
}

static int
new_bearer(const char *t, size_t len)
{
	char authz[600];
	const char *tok;
	size_t toklen;

	(void)len;
	snprintf(authz, sizeof(authz), "Bearer %s", t);
	return http_bearer_parse(authz, &tok, &toklen) ? 1000 + (int)toklen : 0;
}

/* policy/egress.c egress_hostname_ok with its c_alnum. */
static int
old_c_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

static int
old_hostname_ok(const char *s, size_t len)
{
	size_t i, start = 0;
	int digits = 1;

	if (len == 0 || len > EGRESS_HOST_MAX)
		return 0;
	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '.') {
			if (!old_c_alnum(s[i]) && s[i] != '-')
				return 0;
			continue;
		}
		if (i == start || i - start > 63 || s[start] == '-' ||
		    s[i - 1] == '-')
			return 0;
		digits = 1;
		for (size_t k = start; k < i; k++)
			if (s[k] < '0' || s[k] > '9')
				digits = 0;
		start = i + 1;
	}
	return !digits;
}

/* policy/gate_tables.c gate_dns_ok: the lower-case DNS rule of
 * `commands.hosts` and of a curl/wget URL host. */
static int
old_gate_dns_ok_str(const char *h)
{
	size_t i, lab = 0, n = strlen(h);

	if (n == 0 || n > 253)
		return 0;
	for (i = 0; i < n; i++) {
		char c = h[i];

		if (c == '.') {
			if (lab == 0 || h[i - 1] == '-')
				return 0;
			lab = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			   (c == '-' && lab > 0)) {
			if (++lab > 63)
				return 0;
		} else
			return 0;
	}
	return lab > 0 && h[n - 1] != '-';
}

BY_STR(old_gate_dns_ok, old_gate_dns_ok_str(s))
BY_STR(new_gate_dns_ok, text_dns_name(s, strlen(s), TEXT_DNS_LOWER))

/* policy/cron.c mission_tz_name_ok. */
static int
old_tz_name_ok(const char *s, size_t len)
{
	size_t i, segs = 0;

	len = strlen(s);
	if (len == 0 || len > MI_TZ_MAX)
		return 0;
	for (i = 0; i < len && s[i] != '/'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_'))
			return 0;
	if (i == 0)
		return 0;
	while (i < len) {
		size_t st = ++i;

		if (++segs > 2)
			return 0;
		for (; i < len && s[i] != '/'; i++)
			if (!((s[i] >= 'a' && s[i] <= 'z') ||
				(s[i] >= 'A' && s[i] <= 'Z') ||
				(s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
				s[i] == '+' || s[i] == '-'))
				return 0;
		if (i == st)
			return 0;
	}
	return 1;
}

BY_STR(new_tz_name_ok, mission_tz_name_ok(s))

/* policy/hookenv.c hookenv_dotenv_bad with its name_char. */
static int
old_name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

static int
old_dotenv_bad(const char *buf, size_t len)
{
	char b[16];
	size_t i = 0, j;

	/* "LD_" before the string: a name that is pinned, or not. */
	if (len + 4 > sizeof(b))
		return -1;
	memcpy(b, "LD_", 3);
	memcpy(b + 3, buf, len);
	len += 3;
	buf = b;
	while (i < len) {
		if (!old_name_char(buf[i])) {
			i++;
			continue;
		}
		for (j = i; j < len && old_name_char(buf[j]); j++)
			;
		if (j - i >= 3 && memcmp(buf + i, "LD_", 3) == 0 &&
		    !(j - i == 10 && memcmp(buf + i, "LD_PRELOAD", 10) == 0))
			return 1;
		i = j;
	}
	return 0;
}

static int
new_dotenv_bad(const char *buf, size_t len)
{
	char b[16];

	if (len + 4 > sizeof(b))
		return -1;
	memcpy(b, "LD_", 3);
	memcpy(b + 3, buf, len);
	return hookenv_dotenv_bad(b, len + 3);
}

/* policy/hook.c: the Gemini hook's name and the cordon path;
 * sandbox/sandbox_host.c cordon_path_ok's test. */
static int
old_hook_name(const char *name, size_t n)
{
	n = strlen(name);
	return !(
	    n == 0 || n > 64 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789-") != n);
}

static int
new_hook_name(const char *name, size_t n)
{
	n = strlen(name);
	return charset_shape(name, n, "a-zA-Z0-9-", "a-zA-Z0-9-", 1, 64);
}

static int
old_cordon_path(const char *p, size_t n)
{
	(void)n;
	return p[0] == '/' &&
	       strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789/._+-") == strlen(p);
}

static int
new_cordon_path(const char *p, size_t n)
{
	(void)n;
	return charset_shape(p, strlen(p), "/", "a-zA-Z0-9/._+-", 1, SIZE_MAX);
}

/* common/util.c hex_lower_n, at lengths 2 and 8. */
static int
old_hex_lower_n(const char *s, size_t len)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
			(s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return i == len;
}

BY_STR(old_hex2, old_hex_lower_n(s, 2))

BY_STR(new_hex2, hex_lower_n(s, 2))

BY_STR(old_hex8, old_hex_lower_n(s, 8))

BY_STR(new_hex8, hex_lower_n(s, 8))

/* common/yamljson.c yj_phrase_ok. */
static int
old_phrase_ok(const char *s, size_t len)
{
	size_t i;

	(void)len;
	if (s == NULL || *s == '\0')
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		if (i >= 100)
			return 0;
		if ((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') ||
		    strchr(" ,.:;'%-()[]{}<>!", s[i]))
			continue;
		return 0;
	}
	return 1;
}

static int
new_phrase_ok(const char *s, size_t len)
{
	(void)len;
	return s != NULL &&
	       charset_shape(s, strnlen(s, 101), "a-zA-Z0-9 ,.:;'%()[]{}<>!-",
		   "a-zA-Z0-9 ,.:;'%()[]{}<>!-", 1, 100);
}

/* policy/http.c listen_addr_usable's byte and length test. */
static int
old_listen_addr(const char *addr, size_t len)
{
	size_t i;
	int c;

	if (len == 0 || len > 253)
		return 0;
	for (i = 0; i < len; i++) {
		c = (unsigned char)addr[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '.' || c == ':' ||
			c == '-' || c == '[' || c == ']'))
			return 0;
	}
	return 1;
}

static int
new_listen_addr(const char *addr, size_t len)
{
	return charset_shape(
	    addr, len, "a-zA-Z0-9.:[]-", "a-zA-Z0-9.:[]-", 1, 253);
}

/* ---- byte predicates replaced by a set ---- */

static int
old_sh_name1(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int
old_sh_namec(char c)
{
	return old_sh_name1(c) || (c >= '0' && c <= '9');
}

/* policy/manifest.c: a $NAME's bytes; a secret's dotted path. */
static int
old_mf_refname(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static int
old_mf_dotted(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

/* policy/egress_route.c: an upstream path's bytes. */
static int
old_route_path(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("._~%-", c) != NULL);
}

/* supervisor/config_yaml.c connector_url_ok: the host's bytes. */
static int
old_url_host(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':' ||
	       c == '[' || c == ']';
}

static int
old_tchar_c(char c)
{
	return old_tchar((unsigned char)c);
}

static int
old_bearer_c(char c)
{
	return old_bearer_char((unsigned char)c);
}

static int
old_egress_host_c(char c)
{
	return old_c_alnum(c) || c == '-';
}

static int
old_cron_first(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int
old_cron_rest(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-';
}

static const struct {
	const char *bp_name;
	int (*bp_old)(char);
	const char *bp_set;
} bytepreds[] = {
    {"shlex sh_name1", old_sh_name1, "A-Za-z_"},
    {"shlex sh_namec", old_sh_namec, "A-Za-z0-9_"},
    {"manifest $NAME", old_mf_refname, "A-Za-z0-9_"},
    {"manifest dotted path", old_mf_dotted, "A-Za-z0-9_.-"},
    {"egress_route path", old_route_path, "a-zA-Z0-9._~%-"},
    {"config_yaml url host", old_url_host, "a-zA-Z0-9.:[]-"},
    {"hookenv name_char", old_name_char, "A-Za-z0-9_.-"},
    {"http/egress_req tchar", old_tchar_c, HTTP_TCHARS},
    {"http bearer_char", old_bearer_c, "a-zA-Z0-9._~+/=-"},
    {"egress hostname byte", old_egress_host_c, "a-zA-Z0-9-"},
    {"cron zone first part", old_cron_first, "a-zA-Z_"},
    {"cron zone later parts", old_cron_rest, "a-zA-Z0-9_+-"},
};

/* Every byte value. */
static void
test_charset_replaced_predicates_agree(void **state)
{
	size_t i;
	int c;

	(void)state;
	for (i = 0; i < sizeof(bytepreds) / sizeof(bytepreds[0]); i++)
		for (c = 0; c < 256; c++)
			if (!bytepreds[i].bp_old((char)c) !=
			    !charset_has(bytepreds[i].bp_set, (char)c))
				fail_msg(
				    "%s: byte %d", bytepreds[i].bp_name, c);
}

/* ---- the comparison ---- */

struct pair {
	const char *p_name;
	check_fn p_old, p_new;
	size_t p_max;	      /* its longest accepted string */
	const char *p_sample; /* one accepted string, its bytes repeated */
	int p_unbounded;      /* p_max is a test length, not a limit */
	size_t p_cycle;	      /* filling repeats this many last bytes (0: 1) */
};

static const struct pair pairs[] = {
    {"env_name_ok", old_env_name_ok, new_env_name_ok, 128, "A", 0, 0},
    {"mp_name_ok", old_mp_name_16, new_mp_name_16, 16, "a", 0, 0},
    {"vaultpath_name_ok", old_vaultpath_name_ok, vaultpath_name_ok,
	VAULT_NAME_MAX, "a", 0, 0},
    {"opt_name_ok", old_opt_name_ok, new_opt_name_ok, 32, "a", 0, 0},
    {"event_ok", old_event_ok, new_event_ok, 64, "a", 0, 0},
    {"schema_token_ok", old_token_20, new_token_20, 20, "a", 0, 0},
    {"gate_name_ok", old_gate_name_ok, new_gate_name_ok, 64, "a", 0, 0},
    {"connector_key_shown", old_key_shown, new_key_shown, 64, "a", 0, 0},
    {"connector_authref_ok", old_authref_ok, new_authref_ok, 68, "env:A", 0, 0},
    {"verb_set", old_verb_kept, new_verb_kept, 64, "a", 0, 0},
    {"gate_rule_set", old_rule_kept, new_rule_kept, 64, "a", 0, 0},
    {"hook_tool_name_ok", old_tool_name_ok, new_tool_name_ok, 64, "a", 0, 0},
    {"mcp error word", old_mcp_word, new_mcp_word, 40, "a", 0, 0},
    {"gate_cli rule", old_cli_rule, new_cli_rule, 64, "a", 0, 0},
    {"gate_cli message", old_cli_msg, new_cli_msg, 128, "a", 0, 0},
    {"check key path", old_check_key, new_check_key, 512, "a", 1, 0},
    {"AP_NAME", old_ap_name, new_ap_name, 64, "a", 0, 0},
    {"AP_ACTIONID", old_ap_actionid, new_ap_actionid, 32, "a", 0, 0},
    {"AP_RUNID", old_ap_runid, new_ap_runid, 16, "0123456789abcdef", 0, 0},
    {"AP_HEX8", old_ap_hex8, new_ap_hex8, 8, "0123abcd", 0, 0},
    {"AP_BIN", old_ap_bin, new_ap_bin, 64, "a", 0, 0},
    {"AP_VPATH", old_ap_vpath, new_ap_vpath, 512, "a/b", 0, 0},
    {"AP_VERSION", old_ap_version, new_ap_version, 32, "1", 0, 0},
    {"AP_ROUTE", old_ap_route, new_ap_route, 64, "a", 0, 0},
    {"AP_RULE", old_ap_rule, new_ap_rule, 64, "a", 0, 0},
    {"AP_ERRWORD", old_ap_errword, new_ap_errword, 32, "a", 0, 0},
    {"AP_DATE", old_ap_date, new_ap_date, 10, "2026-11-27", 0, 0},
    {"AP_HOST", old_ap_host, new_ap_host, 253, "a", 0, 0},
    {"write_seg_ok", old_write_seg, new_write_seg, 16, "a", 0, 0},
    {"http_header_name_ok", old_header_name_ok, http_header_name_ok, 300, "a",
	1, 0},
    {"http_bearer_parse", old_bearer, new_bearer, HTTP_BEARER_MAX, "a", 0, 0},
    {"egress_hostname_ok", old_hostname_ok, egress_hostname_ok, EGRESS_HOST_MAX,
	"b.a", 0, 2},
    {"gate_dns_ok", old_gate_dns_ok, new_gate_dns_ok, TEXT_DNS_MAX, "b.a", 0,
	2},
    {"mission_tz_name_ok", old_tz_name_ok, new_tz_name_ok, MI_TZ_MAX,
	"Europe/Paris", 0, 0},
    {"hookenv_dotenv_bad", old_dotenv_bad, new_dotenv_bad, 12, "a", 1, 0},
    {"hook gemini name", old_hook_name, new_hook_name, 64, "a", 0, 0},
    {"cordon path", old_cordon_path, new_cordon_path, 500, "/a", 1, 0},
    {"hex_lower_n 2", old_hex2, new_hex2, 2, "0f", 0, 0},
    {"hex_lower_n 8", old_hex8, new_hex8, 8, "0123abcd", 0, 0},
    {"yj_phrase_ok", old_phrase_ok, new_phrase_ok, 100, "a", 0, 0},
    {"listen_addr_usable", old_listen_addr, new_listen_addr, 253, "a", 0, 0},
};

static void
agree(const struct pair *p, const char *s, size_t len)
{
	int o = p->p_old(s, len), n = p->p_new(s, len);

	if (o != n)
		fail_msg(
		    "%s: old %d new %d on %zu bytes", p->p_name, o, n, len);
}

/* Every string of length 0..3 over alpha. */
static void
small_space(const struct pair *p)
{
	char b[4];
	size_t len, i, j, k, n;

	for (len = 0; len <= 3; len++) {
		n = 1;
		for (i = 0; i < len; i++)
			n *= NALPHA;
		for (i = 0; i < n; i++) {
			for (j = 0, k = i; j < len; j++, k /= NALPHA)
				b[j] = alpha[k % NALPHA];
			b[len] = '\0';
			agree(p, b, len);
		}
	}
}

/* b gets len bytes: the sample, then its last p_cycle bytes repeated. */
static void
fill(const struct pair *p, char *b, size_t len)
{
	size_t i, sl = strlen(p->p_sample), cy = p->p_cycle ? p->p_cycle : 1;

	for (i = 0; i < len; i++)
		b[i] = p->p_sample[i < sl ? i : sl - cy + (i - sl) % cy];
	b[len] = '\0';
}

/* Lengths max-1..max+1: the filled string, then each byte of it in turn
 * (first, a middle one, the last) replaced by each of alpha. */
static void
near_max(const struct pair *p)
{
	static char b[600];
	size_t len, i, j;
	size_t at[3];

	for (len = p->p_max - 1; len <= p->p_max + 1; len++) {
		fill(p, b, len);
		agree(p, b, len);
		at[0] = 0;
		at[1] = len / 2;
		at[2] = len - 1;
		for (j = 0; j < 3; j++)
			for (i = 0; i < NALPHA; i++) {
				char keep = b[at[j]];

				b[at[j]] = alpha[i];
				agree(p, b, len);
				b[at[j]] = keep;
			}
	}
}

/* The sample itself (a full length accepted string for AP_DATE) with
 * every position replaced by every byte of alpha. */
static void
sample_mutations(const struct pair *p)
{
	char b[64];
	size_t sl = strlen(p->p_sample), i, j;

	memcpy(b, p->p_sample, sl + 1);
	agree(p, b, sl);
	for (i = 0; i < sl; i++)
		for (j = 0; j < NALPHA; j++) {
			b[i] = alpha[j];
			agree(p, b, sl);
			b[i] = p->p_sample[i];
		}
}

static void
test_charset_replaced_checkers_agree(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		small_space(&pairs[i]);
		near_max(&pairs[i]);
		sample_mutations(&pairs[i]);
	}
}

/* The sample and the filled string of the maximum length get a positive
 * answer, one byte more does not: the comparison sees both answers. */
static void
test_charset_samples_accepted(void **state)
{
	static char b[600];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const struct pair *p = &pairs[i];

		if (p->p_new(p->p_sample, strlen(p->p_sample)) <= 0)
			fail_msg("%s refuses its sample", p->p_name);
		fill(p, b, p->p_max);
		if (p->p_new(b, p->p_max) <= 0)
			fail_msg("%s refuses its longest", p->p_name);
		fill(p, b, p->p_max + 1);
		if (p->p_unbounded)
			continue;
		if (p->p_new(b, p->p_max + 1) > 0)
			fail_msg("%s takes one byte more", p->p_name);
	}
}

static void
test_charset_has(void **state)
{
	(void)state;
	assert_true(charset_has("a-z0-9-", 'a'));
	assert_true(charset_has("a-z0-9-", 'z'));
	assert_true(charset_has("a-z0-9-", '5'));
	assert_true(charset_has("a-z0-9-", '-'));
	assert_false(charset_has("a-z0-9-", '`'));
	assert_false(charset_has("a-z0-9-", '{'));
	assert_false(charset_has("a-z0-9-", ':'));
	assert_false(charset_has("a-z0-9-", 'A'));
	/* '-' first or last is itself, not a range. */
	assert_true(charset_has("-a", '-'));
	assert_false(charset_has("-a", ','));
	assert_true(charset_has("_+-", '+'));
	assert_false(charset_has("_+-", ','));
	/* NUL and high bytes are in no ASCII set. */
	assert_false(charset_has("a-z", '\0'));
	assert_false(charset_has(" -~", '\0'));
	assert_false(charset_has(" -~", '\x80'));
	assert_false(charset_has(" -~", '\xff'));
	assert_false(charset_has("", 'a'));
}

static void
test_charset_shape(void **state)
{
	(void)state;
	assert_true(charset_shape("a", 1, "a-z", "a-z0-9", 1, 1));
	assert_false(charset_shape("a", 1, "a-z", "a-z0-9", 2, 3));
	assert_false(charset_shape("abcd", 4, "a-z", "a-z0-9", 1, 3));
	assert_true(charset_shape("a9", 2, "a-z", "a-z0-9", 1, 3));
	assert_false(charset_shape("9a", 2, "a-z", "a-z0-9", 1, 3));
	assert_true(charset_shape("", 0, "a-z", "a-z", 0, 3));
	assert_false(charset_shape("a\0b", 3, "a-z", "a-z", 1, 3));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_charset_has),
	    cmocka_unit_test(test_charset_shape),
	    cmocka_unit_test(test_charset_samples_accepted),
	    cmocka_unit_test(test_charset_replaced_checkers_agree),
	    cmocka_unit_test(test_charset_replaced_predicates_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
