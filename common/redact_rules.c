/*
 * The scrubber's pattern rules (SP-11, DATA.md "Output scrubbing"): fixed
 * token scanners (no regex engine) for PEM blocks, JWTs, Bearer tokens,
 * auth header values, secret-looking key=value, known key prefixes and
 * /home/<u>/; and the "looks like a secret" predicates policy/ shares.
 * Pure but for malloc.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <threads.h>

#include "redact.h"
#include "redact_int.h"

#define RD_KEY_MAX 128

/* --- character classes ------------------------------------------------- */

/* Class bits per byte: 1 [A-Za-z0-9], 2 [_-]. */
#define W_ALNUM 1
#define W_PUNCT 2
static const unsigned char rd_cls[256] = {
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
is_word(unsigned char c) /* [A-Za-z0-9_-] */
{
	return rd_cls[c] != 0;
}

static int
is_key(unsigned char c)
{
	return is_word(c) || c == '.';
}

static int
is_b64url(unsigned char c)
{
	return is_word(c);
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

static size_t
run(const char *s, size_t len, size_t i, int (*cls)(unsigned char))
{
	size_t j = i;

	while (j < len && cls((unsigned char)s[j]))
		j++;
	return j - i;
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
static const char *const rd_db_words[] = {
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
static int
m_jwt(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	size_t a, b, c;

	if (s[i] != 'e' || (i > 0 && is_word((unsigned char)s[i - 1])) ||
	    i + 3 > len || memcmp(s + i, "eyJ", 3) != 0)
		return 0;
	a = run(s, len, i, is_b64url);
	if (a < 10 || i + a >= len || s[i + a] != '.')
		return 0;
	b = run(s, len, i + a + 1, is_b64url);
	if (b < 4 || i + a + 1 + b >= len || s[i + a + 1 + b] != '.')
		return 0;
	c = run(s, len, i + a + b + 2, is_b64url);
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
	    (i > 0 && is_word((unsigned char)s[i - 1])) ||
	    !at_ci(s, len, i, "bearer"))
		return 0;
	j = i + 6;
	if (j >= len || (s[j] != ' ' && s[j] != '\t'))
		return 0;
	while (j < len && (s[j] == ' ' || s[j] == '\t'))
		j++;
	t = run(s, len, j, is_tok68);
	if (!cred_like(s + j, t, j + t < len ? s[j + t] : 0, strict))
		return 0;
	*rs = j;
	*re = j + t;
	*rep = REDACT_MASK;
	return 1;
}

static int
m_bearer(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
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
static int
m_header(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	size_t k, j, v;
	char q = 0;

	/* every listed name starts with a, p or x */
	if (((s[i] | 0x20) != 'a' && (s[i] | 0x20) != 'p' &&
		(s[i] | 0x20) != 'x') ||
	    (i > 0 && (is_key((unsigned char)s[i - 1]))))
		return 0;
	for (k = 0; rd_headers[k] != NULL; k++)
		if (at_ci(s, len, i, rd_headers[k]) &&
		    (i + strlen(rd_headers[k]) >= len ||
			!is_key((unsigned char)s[i + strlen(rd_headers[k])])))
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
	if (!cred_like(s + k, run(s, v, k, is_tok68), 0, 0))
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
static int
m_keyval(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	size_t k, j, v;
	int blank;

	if (!is_key((unsigned char)s[i]) ||
	    (i > 0 && is_key((unsigned char)s[i - 1])))
		return 0;
	k = run(s, len, i, is_key);
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
	v = run(s, len, j, is_value);
	if (!cred_like(s + j, v, j + v < len ? s[j + v] : 0, blank))
		return 0;
	*rs = j;
	*re = j + v;
	*rep = REDACT_MASK;
	return 1;
}

struct rd_prefix {
	const char *p;
	int (*cls)(unsigned char);
	size_t min; /* characters after the prefix */
};

/* First characters of the prefixes below: a cheap reject. */
static int
prefix_start(char c)
{
	return c == 'A' || c == 'x' || c == 'g' || c == 's' || c == 'r' ||
	       c == 'p' || c == 'w' || c == 'h' || c == 'y';
}

static const struct rd_prefix rd_prefixes[] = {
    {"AKIA", is_upnum, 16},
    {"ASIA", is_upnum, 16},
    {"AROA", is_upnum, 16},
    {"AGPA", is_upnum, 16},
    {"AIDA", is_upnum, 16},
    {"ANPA", is_upnum, 16},
    {"ANVA", is_upnum, 16},
    {"xoxa-", is_word, 8},
    {"xoxb-", is_word, 8},
    {"xoxe-", is_word, 8},
    {"xoxp-", is_word, 8},
    {"xoxr-", is_word, 8},
    {"xoxs-", is_word, 8},
    {"xapp-", is_word, 8},
    {"github_pat_", is_word, 16},
    {"ghp_", is_alnum, 16},
    {"gho_", is_alnum, 16},
    {"ghu_", is_alnum, 16},
    {"ghs_", is_alnum, 16},
    {"ghr_", is_alnum, 16},
    {"sk-ant-", is_word, 8},
    {"sk-", is_word, 16},
    {"sk_live_", is_alnum, 8},
    {"sk_test_", is_alnum, 8},
    {"rk_live_", is_alnum, 8},
    {"rk_test_", is_alnum, 8},
    {"pk_live_", is_alnum, 8},
    {"pk_test_", is_alnum, 8},
    {"whsec_", is_alnum, 8},
    {"glpat-", is_word, 16},
    {"hf_", is_alnum, 16},
    {"AIza", is_word, 30},
    {"ya29.", is_word, 16},
    {NULL, NULL, 0},
};

static int
m_prefix(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	const struct rd_prefix *p;
	size_t n, r;

	if (!prefix_start(s[i]) || (i > 0 && is_word((unsigned char)s[i - 1])))
		return 0;
	for (p = rd_prefixes; p->p != NULL; p++) {
		if (s[i] != p->p[0] || s[i + 1 < len ? i + 1 : i] != p->p[1])
			continue;
		n = strlen(p->p);
		if (i + n > len || memcmp(s + i, p->p, n) != 0)
			continue;
		r = run(s, len, i + n, p->cls);
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

	if (!is_word((unsigned char)s[i]) ||
	    (i > 0 && is_word((unsigned char)s[i - 1])))
		return 0;
	r = run(s, len, i, is_word);
	if (r < 40 || run(s, len, i, is_flagword) == r)
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
static int
m_home(const char *s, size_t len, size_t i, size_t *rs, size_t *re,
    const char **rep)
{
	size_t u;

	if (s[i] != '/' || i + 6 >= len || memcmp(s + i, "/home/", 6) != 0)
		return 0;
	u = run(s, len, i + 6, is_user);
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
const rd_match rd_patterns[] = {
    m_jwt, m_bearer, m_header, m_keyval, m_prefix, m_home, NULL};

/* --- passes ------------------------------------------------------------ */

/* --- the line gate ----------------------------------------------------- */

/*
 * Before rd_may's walk, one pass over the line with a table look-up per
 * byte: can any matcher fire at all?  Every match holds one of a few
 * three-byte strings, compared case-folded (a superset):
 *   m_jwt "eyJ", m_bearer "bearer", m_home "/home/", m_prefix a prefix's
 *   first three bytes (every prefix has three or more);
 *   m_header and m_keyval a ':' or '=' (after_assign), and a
 *   secret-looking name (redact_key_secretish, which reads '-' and '.'
 *   as '_'): every header name holds "aut", "[-._]ke" or "ike"; every
 *   name word "tok" (token), "[-._]ke" (api_key and the other *_key),
 *   "ike" (apikey), "ecr" (secret), "ssw" (password, passwd), "ede"
 *   (credential), "bea" (bearer) or "aut" (auth); "_pat" and "_dsn"
 *   hold "[-._]pa" and "dsn"; a database URL name "[-._]ur" and the
 *   first three bytes of one of rd_db_words; a name over RD_KEY_MAX is
 *   a run of that many key bytes (looked for only when nothing else
 *   decides).  The rarest three bytes of each word are the ones used.
 * A line with none of these goes without the walk (tests/fuzz's
 * fuzz_redact_stream proves rd_may against rd_pass), and the walk tries
 * only the matchers whose strings the line holds: the word matchers
 * (JWT, Bearer, prefixes: G_WORD), /home/ (G_HOME), the named ones
 * (header, key=value: G_ASSIGN with a name).
 */
#define G_CLS_BITS 5
#define G_MASK	   ((1u << (3 * G_CLS_BITS)) - 1)
#define G_WORD	   1 /* m_jwt, m_bearer, m_prefix may match */
#define G_NAME	   2 /* a secret-looking name, with G_ASSIGN */
#define G_URL	   4 /* "_url"/"_uri", with G_DB and G_ASSIGN */
#define G_DB	   8
#define G_ASSIGN   16 /* a ':' or '=' */
#define G_ASSIGN_C 29 /* its class */
#define G_PEM	   32 /* "-be": a PEM "-----BEGIN" (rd_plain_lines) */
#define G_HOME	   64 /* m_home may match */

/* Byte classes: letters 1-26 (either case), '-' 27, '_' 28, ':' and '='
 * 29, '/' 30, '.' 31, any other byte 0 (digits too: a superset). */
static unsigned char rd_gcls[256];
static unsigned char rd_gtab[1u << (3 * G_CLS_BITS)];
static once_flag rd_gonce = ONCE_FLAG_INIT;

static unsigned
gcls(unsigned char c)
{
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
		return (unsigned)((c | 0x20) - 'a' + 1);
	switch (c) {
	case '-':
		return 27;
	case '_':
		return 28;
	case ':':
	case '=':
		return G_ASSIGN_C;
	case '/':
		return 30;
	case '.':
		return 31;
	}
	return 0;
}

static void
gadd(const char *t, unsigned bit)
{
	rd_gtab[gcls((unsigned char)t[0]) << 2 * G_CLS_BITS |
		gcls((unsigned char)t[1]) << G_CLS_BITS |
		gcls((unsigned char)t[2])] |= (unsigned char)bit;
}

static void
rd_gate_init(void)
{
	static const char *const word[] = {"eyj", "bea", NULL};
	static const char *const name[] = {
	    "aut", "ike", "tok", "ecr", "ssw", "ede", "bea", "dsn", NULL};
	static const char *const sep = "-._";
	const struct rd_prefix *p;
	size_t k;
	char t[3];

	for (k = 0; k < 256; k++)
		rd_gcls[k] = (unsigned char)gcls((unsigned char)k);
	for (k = 0; word[k] != NULL; k++)
		gadd(word[k], G_WORD);
	for (p = rd_prefixes; p->p != NULL; p++)
		gadd(p->p, G_WORD);
	gadd("/ho", G_HOME);
	gadd("-be", G_PEM);
	for (k = 0; name[k] != NULL; k++)
		gadd(name[k], G_NAME);
	for (k = 0; rd_db_words[k] != NULL; k++)
		gadd(rd_db_words[k], G_DB);
	for (k = 0; k < 3; k++) {
		t[0] = sep[k];
		memcpy(t + 1, "pa", 2);
		gadd(t, G_NAME);
		memcpy(t + 1, "ke", 2);
		gadd(t, G_NAME);
		memcpy(t + 1, "ur", 2);
		gadd(t, G_URL);
	}
	/* Every window that ends in ':' or '=' (each one does, once). */
	for (k = 0; k < 1u << 2 * G_CLS_BITS; k++)
		rd_gtab[k << G_CLS_BITS | G_ASSIGN_C] |= G_ASSIGN;
}

/*
 * Of the named matchers (header, key=value), with the windows of a line
 * (acc): 1 one may fire in s[0..len), 0 neither can.
 */
static int
rd_gate_named(unsigned acc, const unsigned char *u, size_t len)
{
	size_t i, run;

	if (!(acc & G_ASSIGN))
		return 0;
	if ((acc & G_NAME) || ((acc & G_URL) && (acc & G_DB)))
		return 1;
	for (i = 0, run = 0; len > RD_KEY_MAX && i < len; i++)
		if ((run = is_key(u[i]) ? run + 1 : 0) > RD_KEY_MAX)
			return 1;
	return 0;
}

/*
 * The windows of s[0..len), or-ed.  They are shifted through a word: its
 * old classes fall off the top, the mask takes the last three, and no
 * step waits on a mask.
 */
static unsigned
rd_gate(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	uint64_t h = 0;
	unsigned acc = 0;
	size_t i;

	call_once(&rd_gonce, rd_gate_init);
	for (i = 0; i < len; i++) {
		h = h << G_CLS_BITS | rd_gcls[u[i]];
		acc |= rd_gtab[h & G_MASK];
	}
	return acc;
}

/*
 * Where the key run that the assignment at s[i] follows starts (back over
 * blanks and a quote: after_assign read backwards); *end: where it ends.
 * i when there is none.
 */
static size_t
assign_key(const char *s, size_t i, size_t *end)
{
	size_t p = i, k;

	while (p > 0 && rd_is_blank((unsigned char)s[p - 1]))
		p--;
	if (p > 0 && (s[p - 1] == '"' || s[p - 1] == '\''))
		p--;
	for (k = p; k > 0 && is_key((unsigned char)s[k - 1]); k--)
		;
	*end = p;
	return k == p ? i : k;
}

/*
 * Can a named matcher (header, key=value) fire in s[0..len)?  Only at a
 * key run that an assignment follows, and only if that run holds a
 * name's windows (the gate's argument, on the run alone) or is longer
 * than any name.  Conservative.
 */
static int
rd_named_assign(const char *s, size_t len)
{
	size_t i, k, e;
	unsigned acc;

	for (i = 0; i < len; i++) {
		if ((s[i] != ':' && s[i] != '=') ||
		    (k = assign_key(s, i, &e)) == i)
			continue;
		if (e - k > RD_KEY_MAX)
			return 1;
		acc = rd_gate(s + k, e - k);
		if ((acc & G_NAME) || ((acc & G_URL) && (acc & G_DB)))
			return 1;
	}
	return 0;
}

size_t
rd_plain_lines(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	uint64_t h = 0;
	unsigned acc = 0;
	size_t i, start = 0;

	call_once(&rd_gonce, rd_gate_init);
	for (i = 0; i < len; i++) {
		if (u[i] != '\n') {
			h = h << G_CLS_BITS | rd_gcls[u[i]];
			acc |= rd_gtab[h & G_MASK];
			continue;
		}
		/* The named matchers: the line's windows first, then the
		 * key runs before its assignments. */
		if ((acc & (G_PEM | G_WORD | G_HOME)) ||
		    (rd_gate_named(acc, u + start, i - start) &&
			rd_named_assign(s + start, i - start)) ||
		    (i - start >= 7 && u[i - 1] == ']' &&
			memcmp(s + i - 7, " chars]", 7) == 0))
			return start;
		start = i + 1;
		h = 0;
		acc = 0;
	}
	return start;
}

/*
 * The passes of rd_patterns that would change s[0..len): bit k for
 * rd_patterns[k].  Each matcher is tried only where it can start, found
 * in one walk over the key runs ([A-Za-z0-9_.-]+): JWT, Bearer and the
 * key prefixes at a word start (the run's start, or after a '.' in it),
 * a header name and key=value at the run's start, /home/ at a '/'
 * between them.  rd_pass tries the same matcher at a superset of these
 * places on the same input, and a matcher fires nowhere else, so a
 * clear bit is a pass that would copy its input unchanged.
 */
unsigned
rd_may(const char *s, size_t len)
{
	size_t i, p, k, rs, re;
	const char *rep, *q;
	int jwt = 0, bearer = 0, header = 0, keyval = 0, prefix = 0, home = 0;
	int word, named;
	unsigned m = 0, acc = rd_gate(s, len);

	/* The matchers the line's windows leave open; the others count as
	 * done (not found) from the start. */
	word = (acc & G_WORD) != 0;
	named = rd_gate_named(acc, (const unsigned char *)s, len);
	home = !(acc & G_HOME);
	jwt = bearer = prefix = !word;
	header = keyval = !named;
	/*
	 * A header name and a secret-looking key fire only at the start
	 * of a key run that an assignment follows (after_assign: a quote,
	 * blanks, then ':' or '='): from each ':' and '=', back over the
	 * blanks and the quote to that run.  The stretches walked back
	 * lie between two assignments, so each byte is read once.
	 */
	for (i = 0; !(header && keyval) && i < len; i++) {
		if ((s[i] != ':' && s[i] != '=') ||
		    (k = assign_key(s, i, &p)) == i)
			continue;
		if (!header && m_header(s, len, k, &rs, &re, &rep))
			header = 1;
		if (!keyval && m_keyval(s, len, k, &rs, &re, &rep))
			keyval = 1;
	}
	/* /home/ where it is. */
	for (p = 0; !home && p < len &&
		    (q = memmem(s + p, len - p, "/home/", 6)) != NULL;
	     p = (size_t)(q - s) + 1)
		if (m_home(s, len, (size_t)(q - s), &rs, &re, &rep))
			home = 1;
	/* The word matchers at the word starts of the key runs
	 * ([A-Za-z0-9_.-]+): a run's start, or after a '.' in it.  The
	 * tests before each call are the matcher's own first ones. */
	for (i = 0; !(jwt && bearer && prefix) && i < len;) {
		if (!is_key((unsigned char)s[i])) {
			i++;
			continue;
		}
		k = run(s, len, i, is_key);
		for (p = i; !(jwt && bearer && prefix) && p < i + k; p++) {
			unsigned char c = (unsigned char)s[p];

			if (p > i && s[p - 1] != '.')
				continue; /* not a word start */
			if (!jwt && c == 'e' &&
			    m_jwt(s, len, p, &rs, &re, &rep))
				jwt = 1;
			if (!bearer && (c | 0x20) == 'b' &&
			    m_bearer(s, len, p, &rs, &re, &rep))
				bearer = 1;
			if (!prefix && prefix_start((char)c) &&
			    m_prefix(s, len, p, &rs, &re, &rep))
				prefix = 1;
		}
		i += k;
	}
	/* Found, of those tried. */
	jwt &= word;
	bearer &= word;
	prefix &= word;
	header &= named;
	keyval &= named;
	home &= (acc & G_HOME) != 0;
	for (k = 0; rd_patterns[k] != NULL; k++) {
		if (rd_patterns[k] == m_jwt)
			m |= (unsigned)jwt << k;
		else if (rd_patterns[k] == m_bearer)
			m |= (unsigned)bearer << k;
		else if (rd_patterns[k] == m_header)
			m |= (unsigned)header << k;
		else if (rd_patterns[k] == m_keyval)
			m |= (unsigned)keyval << k;
		else if (rd_patterns[k] == m_prefix)
			m |= (unsigned)prefix << k;
		else if (rd_patterns[k] == m_home)
			m |= (unsigned)home << k;
		else
			m |= 1u << k; /* a pattern not looked for here: runs */
	}
	return m;
}

int
rd_pass(const struct sbuf *in, struct sbuf *out, rd_match m)
{
	size_t i = 0, rs, re, lit = 0;
	const char *rep;
	int hit = 0;

	while (i < in->len) {
		/* Every matcher starts at a word boundary or at '/'. */
		if (i > 0 && is_word((unsigned char)in->b[i - 1]) &&
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
		if (!is_word((unsigned char)s[i]) && s[i] != '+' &&
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

	if (m == m_bearer) {
		rstrip(a->b, &n, rd_is_blank);
		return !(n >= 6 && strncasecmp(a->b + n - 6, "bearer", 6) == 0);
	}
	if (m == m_header) {
		for (i = 0; i < a->len; i++)
			for (k = 0; rd_headers[k] != NULL; k++)
				if (at_ci(a->b, a->len, i, rd_headers[k]))
					return 0;
		return 1;
	}
	if (m == m_keyval) {
		rstrip(a->b, &n, rd_is_blank);
		rstrip(a->b, &n, is_assign);
		rstrip(a->b, &n, rd_is_blank);
		if (n > 0 && (a->b[n - 1] == '"' || a->b[n - 1] == '\''))
			n--;
		k = n;
		rstrip(a->b, &k, is_key);
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
	/* m_home is not a secret; here a bare long run (m_long) is, and any
	 * Bearer token. */
	for (k = 0; rd_patterns[k] != NULL; k++) {
		if (rd_pass(&a, &b,
			rd_patterns[k] == m_home     ? m_long
			: rd_patterns[k] == m_bearer ? m_bearer_any
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
