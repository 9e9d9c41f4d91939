/*
 * The scrubber's pattern rules (SP-11, DATA.md "Output scrubbing"): fixed
 * token scanners (no regex engine) for PEM blocks, JWTs, Bearer tokens,
 * auth header values, secret-looking key=value, known key prefixes and
 * /home/<u>/; one pattern's pass over a line, and when no continuation
 * can change it (early flush); and the "looks like a secret" predicates
 * policy/ shares.  Its tables and matchers are shared with the line gate
 * (redact_gate.c) through redact_int.h.  Pure but for malloc.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "redact.h"
#include "redact_int.h"

/* --- character classes ------------------------------------------------- */

/* Class bits per byte: 1 [A-Za-z0-9], 2 [_-]. */
#define W_ALNUM 1
#define W_PUNCT 2
const unsigned char rd_cls[256] = {
    ['0'] = 1,
    ['1'] = 1,
    ['2'] = 1,
    ['3'] = 1,
    ['4'] = 1,
    ['5'] = 1,
    ['6'] = 1,
    ['7'] = 1,
    ['8'] = 1,
    ['9'] = 1,
    ['A'] = 1,
    ['B'] = 1,
    ['C'] = 1,
    ['D'] = 1,
    ['E'] = 1,
    ['F'] = 1,
    ['G'] = 1,
    ['H'] = 1,
    ['I'] = 1,
    ['J'] = 1,
    ['K'] = 1,
    ['L'] = 1,
    ['M'] = 1,
    ['N'] = 1,
    ['O'] = 1,
    ['P'] = 1,
    ['Q'] = 1,
    ['R'] = 1,
    ['S'] = 1,
    ['T'] = 1,
    ['U'] = 1,
    ['V'] = 1,
    ['W'] = 1,
    ['X'] = 1,
    ['Y'] = 1,
    ['Z'] = 1,
    ['a'] = 1,
    ['b'] = 1,
    ['c'] = 1,
    ['d'] = 1,
    ['e'] = 1,
    ['f'] = 1,
    ['g'] = 1,
    ['h'] = 1,
    ['i'] = 1,
    ['j'] = 1,
    ['k'] = 1,
    ['l'] = 1,
    ['m'] = 1,
    ['n'] = 1,
    ['o'] = 1,
    ['p'] = 1,
    ['q'] = 1,
    ['r'] = 1,
    ['s'] = 1,
    ['t'] = 1,
    ['u'] = 1,
    ['v'] = 1,
    ['w'] = 1,
    ['x'] = 1,
    ['y'] = 1,
    ['z'] = 1,
    ['_'] = 2,
    ['-'] = 2,
};

static int
is_alnum(unsigned char c)
{
	return rd_cls[c] & W_ALNUM;
}

static int
is_b64url(unsigned char c)
{
	return rd_is_word(c);
}

static int
is_tok68(unsigned char c) /* RFC 7235 token68 */
{
	return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
	       c == '+' || c == '/' || c == '=';
}

static int
is_upnum(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* lit starts with a letter (its first byte is tried first). */
static int
at_ci(const char *s, size_t len, size_t i, const char *lit)
{
	size_t n = strlen(lit);

	return i + n <= len && (s[i] | 0x20) == (lit[0] | 0x20) &&
	       strncasecmp(s + i, lit, n) == 0;
}

/* --- the secret-looking name rule (DATA.md) ---------------------------- */

static const char *const rd_name_words[] = {"token", "api_key", "apikey",
    "secret", "password", "passwd", "credential", "bearer", "private_key",
    "access_key", "session_key", "signing_key", NULL};
const char *const rd_db_words[] = {
    "database", "postgres", "redis", "mongodb", "mysql", NULL};

int
redact_key_secretish(const char *key, size_t len)
{
	char k[RD_KEY_MAX + 1];
	size_t i;
	const char *p;

	if (len == 0 || len > RD_KEY_MAX)
		return len > RD_KEY_MAX;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)key[i];

		if (c == '-' || c == '.')
			c = '_';
		k[i] = (char)tolower(c);
	}
	k[len] = '\0';
	/* A key ending in "tokens" counts tokens (max_tokens, --max-tokens,
	 * total_tokens): usage, not a credential. */
	if (len >= 6 && strcmp(k + len - 6, "tokens") == 0)
		k[len - 1] = '\0';
	for (i = 0; rd_name_words[i] != NULL; i++)
		if ((p = strstr(k, rd_name_words[i])) != NULL &&
		    !(i == 0 && p + 5 == k + len - 1))
			return 1;
	/* "auth" as a whole segment (auth, x_auth_key, auth_header), not
	 * inside "author". */
	for (p = k; (p = strstr(p, "auth")) != NULL; p++)
		if ((p == k || p[-1] == '_') &&
		    (p[4] == '\0' || p[4] == '_' ||
			strncmp(p + 4, "orization", 9) == 0))
			return 1;
	if (len >= 4 && (strcmp(k + len - 4, "_pat") == 0 ||
			    strcmp(k + len - 4, "_dsn") == 0))
		return 1;
	if (len >= 4 && (strcmp(k + len - 4, "_url") == 0 ||
			    strcmp(k + len - 4, "_uri") == 0))
		for (i = 0; rd_db_words[i] != NULL; i++)
			if (strstr(k, rd_db_words[i]) != NULL)
				return 1;
	return 0;
}

/* --- matchers: at position i, the span [*rs, *re) to replace ----------- */

/*
 * Could the value v[0..n), followed by the byte after (0: none), be a
 * credential rather than code or prose?  Not a reference or placeholder
 * (${X}, $X, %s, {x}, <token>, `x`), a keyword (None, true, null ...), a
 * call or argument (tok(, tok), tok,), a member (self.token), a short
 * number.  strict (Bearer, header values, "key: value" with a blank):
 * not a word of letters alone under 20 ("bearer token", "token: the").
 */
static const char *const rd_words[] = {"none", "null", "nil", "true", "false",
    "undefined", "yes", "no", "on", "off", NULL};

static int
cred_like(const char *v, size_t n, char after, int strict)
{
	size_t k, letters = 0, digits = 0, dots = 0;
	int ident = 1;

	if (n == 0 || strchr("$%{<[(`*\\", v[0]) != NULL || after == '(')
		return 0;
	for (k = 0; rd_words[k] != NULL; k++)
		if (strlen(rd_words[k]) == n &&
		    strncasecmp(v, rd_words[k], n) == 0)
			return 0;
	for (k = 0; k < n; k++) {
		unsigned char c = (unsigned char)v[k];

		if (isalpha(c))
			letters++;
		else if (isdigit(c))
			digits++;
		else if (c == '.' && k > 0 && k + 1 < n && v[k - 1] != '.')
			dots++;
		else if (c != '_')
			ident = 0;
		if (k == 0 && isdigit(c))
			ident = 0;
	}
	if (ident && (dots > 0 || after == ')' || after == ',' || after == ';'))
		return 0;
	if (digits == n && n < 8)
		return 0;
	return !(strict && letters == n && n < 20);
}

/* JWT: eyJ<b64url>.<b64url>.<b64url>* */
int
rd_m_jwt(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	size_t a, b, c;

	if (s[i] != 'e' || (i > 0 && rd_is_word((unsigned char)s[i - 1])) ||
	    i + 3 > len || memcmp(s + i, "eyJ", 3) != 0)
		return 0;
	a = rd_run(s, len, i, is_b64url);
	if (a < 10 || i + a >= len || s[i + a] != '.')
		return 0;
	b = rd_run(s, len, i + a + 1, is_b64url);
	if (b < 4 || i + a + 1 + b >= len || s[i + a + 1 + b] != '.')
		return 0;
	c = rd_run(s, len, i + a + b + 2, is_b64url);
	*rs = i;
	*re = i + a + b + 2 + c;
	*rep = REDACT_MASK;
	return 1;
}

/* "Bearer <token68>": the word stays.  strict: see cred_like. */
static int
bearer_at(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep, int strict)
{
	size_t j, t;

	if ((s[i] | 0x20) != 'b' ||
	    (i > 0 && rd_is_word((unsigned char)s[i - 1])) ||
	    !at_ci(s, len, i, "bearer"))
		return 0;
	j = i + 6;
	if (j >= len || (s[j] != ' ' && s[j] != '\t'))
		return 0;
	while (j < len && (s[j] == ' ' || s[j] == '\t'))
		j++;
	t = rd_run(s, len, j, is_tok68);
	if (!cred_like(s + j, t, j + t < len ? s[j + t] : 0, strict))
		return 0;
	*rs = j;
	*re = j + t;
	*rep = REDACT_MASK;
	return 1;
}

int
rd_m_bearer(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	return bearer_at(s, len, i, rs, re, rep, 1);
}

/* The predicate's: any token after Bearer (a manifest has no prose). */
static int
m_bearer_any(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	return bearer_at(s, len, i, rs, re, rep, 0);
}

/*
 * After a name that ends at j: a closing quote, blanks, then ':' or '=';
 * where that ends, or 0 (none).
 */
static size_t
after_assign(const char *s, size_t len, size_t j)
{
	if (j < len && (s[j] == '"' || s[j] == '\''))
		j++;
	while (j < len && rd_is_blank((unsigned char)s[j]))
		j++;
	if (j >= len || (s[j] != ':' && s[j] != '='))
		return 0;
	return j + 1;
}

static const char *const rd_headers[] = {"proxy-authorization", "authorization",
    "x-api-key", "x-auth-token", "x-auth-key", "api-key", "apikey",
    "x-goog-api-key", "x-openai-key", "x-anthropic-key", NULL};

/* Header "Name: value" (or "name": "value" in JSON): the value to EOL or
 * the closing quote. */
int
rd_m_header(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	size_t k, j, v;
	char q = 0;

	/* every listed name starts with a, p or x */
	if (((s[i] | 0x20) != 'a' && (s[i] | 0x20) != 'p' &&
		(s[i] | 0x20) != 'x') ||
	    (i > 0 && (rd_is_key((unsigned char)s[i - 1]))))
		return 0;
	for (k = 0; rd_headers[k] != NULL; k++)
		if (at_ci(s, len, i, rd_headers[k]) &&
		    (i + strlen(rd_headers[k]) >= len ||
			!rd_is_key(
			    (unsigned char)s[i + strlen(rd_headers[k])])))
			break;
	if (rd_headers[k] == NULL)
		return 0;
	if ((j = after_assign(s, len, i + strlen(rd_headers[k]))) == 0)
		return 0;
	while (j < len && (s[j] == ' ' || s[j] == '\t'))
		j++;
	if (j < len && (s[j] == '"' || s[j] == '\''))
		q = s[j++];
	for (v = j; v < len && s[v] != '\n' && s[v] != '\r' && s[v] != q &&
		    !(q == 0 && (s[v] == '"' || s[v] == '\''));
	     v++)
		;
	while (v > j && (s[v - 1] == ' ' || s[v - 1] == '\t'))
		v--;
	/* "Scheme credentials": the credentials are what is judged */
	for (k = j; k < v && s[k] != ' '; k++)
		;
	k = k < v ? k + 1 : j;
	if (!cred_like(s + k, rd_run(s, v, k, is_tok68), 0, 0))
		return 0;
	*rs = j;
	*re = v;
	*rep = REDACT_MASK;
	return 1;
}

static int
is_value(unsigned char c)
{
	return c > 0x20 && c != 0x7f && strchr("\"',;&<>(){}[]", c) == NULL;
}

/* key=value / key: value with a secret-looking key: the value goes. */
int
rd_m_keyval(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	size_t k, j, v;
	int blank;

	if (!rd_is_key((unsigned char)s[i]) ||
	    (i > 0 && rd_is_key((unsigned char)s[i - 1])))
		return 0;
	k = rd_run(s, len, i, rd_is_key);
	j = i + k;
	/* The key first: a value is only scanned behind a secret key, so a
	 * line of "a:a:a:..." stays linear. */
	if (j >= len || (s[j] != ':' && s[j] != '=' && s[j] != '"' &&
			    s[j] != '\'' && s[j] != ' ' && s[j] != '\t'))
		return 0;
	/* The assignment before the name's test (cheap first, the same
	 * answer): after_assign reads only the quote and blanks behind
	 * this name, so every byte is read at most once per pass. */
	if ((j = after_assign(s, len, j)) == 0 ||
	    !redact_key_secretish(s + i, k))
		return 0;
	if (j < len && s[j] == '=')
		j++; /* key == value */
	blank = j < len && (s[j] == ' ' || s[j] == '\t');
	while (j < len && (s[j] == ' ' || s[j] == '\t'))
		j++;
	if (j < len && (s[j] == '"' || s[j] == '\''))
		j++, blank = 0;
	v = rd_run(s, len, j, is_value);
	if (!cred_like(s + j, v, j + v < len ? s[j + v] : 0, blank))
		return 0;
	*rs = j;
	*re = j + v;
	*rep = REDACT_MASK;
	return 1;
}

const struct rd_prefix rd_prefixes[] = {
    {"AKIA", is_upnum, 16},
    {"ASIA", is_upnum, 16},
    {"AROA", is_upnum, 16},
    {"AGPA", is_upnum, 16},
    {"AIDA", is_upnum, 16},
    {"ANPA", is_upnum, 16},
    {"ANVA", is_upnum, 16},
    {"xoxa-", rd_is_word, 8},
    {"xoxb-", rd_is_word, 8},
    {"xoxe-", rd_is_word, 8},
    {"xoxp-", rd_is_word, 8},
    {"xoxr-", rd_is_word, 8},
    {"xoxs-", rd_is_word, 8},
    {"xapp-", rd_is_word, 8},
    {"github_pat_", rd_is_word, 16},
    {"ghp_", is_alnum, 16},
    {"gho_", is_alnum, 16},
    {"ghu_", is_alnum, 16},
    {"ghs_", is_alnum, 16},
    {"ghr_", is_alnum, 16},
    {"sk-ant-", rd_is_word, 8},
    {"sk-", rd_is_word, 16},
    {"sk_live_", is_alnum, 8},
    {"sk_test_", is_alnum, 8},
    {"rk_live_", is_alnum, 8},
    {"rk_test_", is_alnum, 8},
    {"pk_live_", is_alnum, 8},
    {"pk_test_", is_alnum, 8},
    {"whsec_", is_alnum, 8},
    {"glpat-", rd_is_word, 16},
    {"hf_", is_alnum, 16},
    {"AIza", rd_is_word, 30},
    {"ya29.", rd_is_word, 16},
    {NULL, NULL, 0},
};

int
rd_m_prefix(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	const struct rd_prefix *p;
	size_t n, r;

	if (!rd_prefix_start(s[i]) ||
	    (i > 0 && rd_is_word((unsigned char)s[i - 1])))
		return 0;
	for (p = rd_prefixes; p->p != NULL; p++) {
		if (s[i] != p->p[0] || s[i + 1 < len ? i + 1 : i] != p->p[1])
			continue;
		n = strlen(p->p);
		if (i + n > len || memcmp(s + i, p->p, n) != 0)
			continue;
		r = rd_run(s, len, i + n, p->cls);
		if (r < p->min)
			continue;
		*rs = i;
		*re = i + n + r;
		*rep = REDACT_MASK;
		return 1;
	}
	return 0;
}

static int
is_flagword(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || c == '-';
}

/*
 * Any run of 40+ [A-Za-z0-9_-] but words: a run of lowercase letters and
 * hyphens (--dangerously-bypass-approvals-and-sandbox) is a flag or a
 * name; a random key of that length all but never avoids digits,
 * capitals and '_'.
 */
static int
m_long(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	size_t r;

	if (!rd_is_word((unsigned char)s[i]) ||
	    (i > 0 && rd_is_word((unsigned char)s[i - 1])))
		return 0;
	r = rd_run(s, len, i, rd_is_word);
	if (r < 40 || rd_run(s, len, i, is_flagword) == r)
		return 0;
	*rs = i;
	*re = i + r;
	*rep = REDACT_MASK;
	return 1;
}

static int
is_user(unsigned char c)
{
	return c > 0x20 && c != 0x7f && c != '/' && c != '"' && c != '\'';
}

/* /home/<user>/ -> ~/ */
int
rd_m_home(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	size_t u;

	if (s[i] != '/' || i + 6 >= len || memcmp(s + i, "/home/", 6) != 0)
		return 0;
	u = rd_run(s, len, i + 6, is_user);
	if (u == 0 || i + 6 + u >= len || s[i + 6 + u] != '/')
		return 0;
	*rs = i;
	*re = i + 7 + u;
	*rep = "~/";
	return 1;
}

/*
 * The output scrubber's patterns, in DATA.md's order.  A bare run of 40+
 * token characters (m_long) is not among them: in output it is far more
 * often a commit id, a digest, a base64 blob or an identifier than a key.
 * It stays in the "looks like a secret" predicate (manifests, argv).
 */
const rd_match rd_patterns[] = {rd_m_jwt, rd_m_bearer, rd_m_header, rd_m_keyval,
    rd_m_prefix, rd_m_home, NULL};

/* --- passes ------------------------------------------------------------ */

int
rd_pass(const struct sbuf *in, struct sbuf *out, rd_match m)
{
	size_t i = 0, rs, re, lit = 0;
	const char *rep;
	int hit = 0;

	while (i < in->len) {
		/* Every matcher starts at a word boundary or at '/'. */
		if (i > 0 && rd_is_word((unsigned char)in->b[i - 1]) &&
		    in->b[i] != '/') {
			i++;
			continue;
		}
		if (m(in->b, in->len, i, &rs, &re, &rep)) {
			if (!hit)
				out->len = 0;
			hit = 1;
			rd_sb_add(out, in->b + lit, rs - lit);
			rd_sb_add(out, rep, strlen(rep));
			i = lit = re;
			continue;
		}
		i++;
	}
	/* Nothing matched: nothing copied, out is left as it was. */
	if (hit)
		rd_sb_add(out, in->b + lit, in->len - lit);
	return hit;
}

/* --- PEM private key blocks ------------------------------------------- */

/* Find "-----BEGIN ... PRIVATE KEY" / "-----END ... PRIVATE KEY" and the
 * end of its closing "-----". */
const char *
rd_pem_find(const char *s, size_t len, const char *what, size_t *endoff)
{
	const char *p = s, *q, *k;
	size_t left = len, wl = strlen(what);

	if (s == NULL || len == 0)
		return NULL;
	/* what starts with '-': memchr is memmem's first step, cheaper
	 * on short lines. */
	while ((q = memchr(p, '-', left)) != NULL) {
		const char *lim = s + len;

		if ((size_t)(lim - q) < wl || memcmp(q, what, wl) != 0) {
			left -= (size_t)(q - p) + 1;
			p = q + 1;
			continue;
		}

		for (k = q + wl;
		     k < lim && (is_upnum((unsigned char)*k) || *k == ' '); k++)
			if (k + 11 <= lim && memcmp(k, "PRIVATE KEY", 11) == 0)
				break;
		if (k + 11 <= lim && memcmp(k, "PRIVATE KEY", 11) == 0) {
			k += 11;
			while (k < lim && *k != '-' && *k != '\n')
				k++; /* " BLOCK" */
			while (k < lim && *k == '-')
				k++;
			*endoff = (size_t)(k - s);
			return q;
		}
		left -= (size_t)(q - p) + 1;
		p = q + 1;
	}
	return NULL;
}

/*
 * Can this line be inside an open PEM block: base64 (or a header such as
 * Proc-Type:, or empty) once the decoration of a diff, a quote, a comment
 * or a string with "\n" escapes is trimmed?  Any other line (prose, code)
 * ends the block, so a BEGIN line quoted alone cannot swallow the rest of
 * the output.
 */
int
rd_pem_body(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && strchr(" \t+->\"'`*#/", s[i]) != NULL)
		i++;
	for (;;) {
		while (len > i && strchr(" \t\"',;`)", s[len - 1]) != NULL)
			len--;
		if (len >= i + 2 && s[len - 2] == '\\' && s[len - 1] == 'n')
			len -= 2;
		else
			break;
	}
	if (at_ci(s, len, i, "Proc-Type:") || at_ci(s, len, i, "DEK-Info:") ||
	    at_ci(s, len, i, "Comment:"))
		return 1;
	for (; i < len; i++)
		if (!rd_is_word((unsigned char)s[i]) && s[i] != '+' &&
		    s[i] != '/' && s[i] != '=')
			return 0;
	return 1;
}

/* --- early flush: a pass that no continuation can change --------------- */

/* s[0..*len) without its trailing bytes of class cls. */
static void
rstrip(const char *s, size_t *len, int (*cls)(unsigned char))
{
	while (*len > 0 && cls((unsigned char)s[*len - 1]))
		(*len)--;
}

static int
is_assign(unsigned char c)
{
	return c == ':' || c == '=';
}

/*
 * The line so far, a (ending in a blank), is the input of the pass of m:
 * can no continuation change what that pass does to a?  Only three
 * matchers look past a blank: Bearer (to its token), a header name (its
 * value runs to the end of the line or a quote) and a secret-looking key
 * (to its value).  The others stop at the blank.
 */
int
rd_pass_closed(rd_match m, const struct sbuf *a)
{
	size_t i, k, n = a->len;

	if (m == rd_m_bearer) {
		rstrip(a->b, &n, rd_is_blank);
		return !(n >= 6 && strncasecmp(a->b + n - 6, "bearer", 6) == 0);
	}
	if (m == rd_m_header) {
		for (i = 0; i < a->len; i++)
			for (k = 0; rd_headers[k] != NULL; k++)
				if (at_ci(a->b, a->len, i, rd_headers[k]))
					return 0;
		return 1;
	}
	if (m == rd_m_keyval) {
		rstrip(a->b, &n, rd_is_blank);
		rstrip(a->b, &n, is_assign);
		rstrip(a->b, &n, rd_is_blank);
		if (n > 0 && (a->b[n - 1] == '"' || a->b[n - 1] == '\''))
			n--;
		k = n;
		rstrip(a->b, &k, rd_is_key);
		return k == n || !redact_key_secretish(a->b + k, n - k);
	}
	return 1;
}

/* --- the "looks like a secret" predicate -------------------------------- */

int
redact_value_secretish(const char *s)
{
	struct sbuf a = {0}, b = {0};
	size_t k, e;
	int hit = 0;

	if (rd_pem_find(s, strlen(s), "-----BEGIN", &e) != NULL)
		return 1;
	rd_sb_add(&a, s, strlen(s));
	/* rd_m_home is not a secret; here a bare long run (m_long) is, and any
	 * Bearer token. */
	for (k = 0; rd_patterns[k] != NULL; k++) {
		if (rd_pass(&a, &b,
			rd_patterns[k] == rd_m_home	? m_long
			: rd_patterns[k] == rd_m_bearer ? m_bearer_any
							: rd_patterns[k])) {
			hit = 1;
			rd_sb_swap(&a, &b);
		}
	}
	if (a.oom || b.oom)
		hit = 1; /* fail closed */
	rd_sb_wipe(&a);
	rd_sb_wipe(&b);
	return hit;
}
