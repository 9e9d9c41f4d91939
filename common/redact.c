/*
 * Streaming scrubber (SP-11, DATA.md "Output scrubbing").  Two stages: the
 * known-value stage masks every resolved secret value in each of its
 * forms over the raw stream (across lines and chunks, holding only a match
 * still open); the line stage holds the partial line and applies, in
 * DATA.md's order, PEM blocks (across lines), JWTs, Bearer tokens, auth
 * header values, secret-looking key=value, known key prefixes, then
 * /home/<u>/ -> ~/.  The matchers are fixed token scanners (no regex
 * engine).  Touches only *out.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "redact.h"

#ifndef RD_HOLD_MAX /* the differential fuzzer builds with a small one */
#define RD_HOLD_MAX (64 * 1024) /* a line longer than this is cut */
#endif
#define RD_KEY_MAX	 128
#define RD_PARTIAL_MIN	 4 /* shortest cut-off secret prefix masked */
#define RD_CUT_TOKEN_MIN 8 /* shortest token-like run masked at a cut */
/*
 * Known values: a value of RD_FORM_MIN bytes or more is matched in every
 * derived form (reversed, hex, base64); one of RD_SEP_MIN or more also
 * with runs of at most RD_SEP_MAX ignorable bytes (blanks, line breaks,
 * zero-width characters, soft hyphens) between two of its characters.
 * Shorter values would match ordinary text too often.  The stage holds
 * only a match still open at the end of what came: at most
 * len * 3 + (len - 1) * RD_SEP_MAX bytes for a form of len characters.
 */
#define RD_FORM_MIN  4
#define RD_SEP_MIN   8
#define RD_SEP_MAX   8
#define RD_KV_RESCAN 4096 /* a longer open tail is rescanned geometrically */

struct sbuf {
	char *b;
	size_t len, cap;
	int oom;
};

/*
 * A known value in one of its forms (raw, reversed, hex, base64 ...).
 * KF_PCT: a character may also come as %XX (either case), a blank as '+';
 * KF_CI: letters of either case (hex); KF_SEP: up to RD_SEP_MAX ignorable
 * bytes may stand between two characters.
 */
#define KF_PCT 1
#define KF_CI  2
#define KF_SEP 4
struct kform {
	char *f;
	size_t len;
	int flags;
};

struct redact {
	char **r_sec; /* longest first */
	size_t *r_slen;
	size_t r_n;
	size_t r_maxlen;
	struct sbuf r_hold; /* partial line */
	struct sbuf r_a, r_b;
	int r_in_pem;
	size_t r_done;	/* bytes of the held line flushed early */
	size_t r_retry; /* no early flush before the hold is this long */
	int r_noearly;	/* a secret could hide in a clamp marker */
	int r_cut;	/* the stream was cut short (redact_cut) */
	/* The known-value stage, ahead of the line stage. */
	struct kform *r_form;
	size_t r_nform;
	size_t *r_bucket[256]; /* forms that may start with this byte */
	size_t r_nbucket[256];
	struct sbuf r_kv; /* its undecided tail */
	size_t r_kvnext;  /* no rescan before the tail is this long */
};

/* --- small buffer ------------------------------------------------------ */

static void
sb_add(struct sbuf *s, const char *p, size_t n)
{
	char *nb;
	size_t nc;

	if (s->oom || n == 0)
		return;
	if (s->len + n > s->cap) {
		nc = s->cap ? s->cap : 256;
		while (nc < s->len + n)
			nc *= 2;
		/* Not realloc: the old block, with what it held, is wiped. */
		if ((nb = malloc(nc)) == NULL) {
			s->oom = 1;
			return;
		}
		if (s->b != NULL) {
			memcpy(nb, s->b, s->len);
			explicit_bzero(s->b, s->cap);
			free(s->b);
		}
		s->b = nb;
		s->cap = nc;
	}
	memcpy(s->b + s->len, p, n);
	s->len += n;
}

static void
sb_wipe(struct sbuf *s)
{
	if (s->b != NULL)
		explicit_bzero(s->b, s->cap);
	free(s->b);
	memset(s, 0, sizeof(*s));
}

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

static int
at_ci(const char *s, size_t len, size_t i, const char *lit)
{
	size_t n = strlen(lit);

	return i + n <= len && strncasecmp(s + i, lit, n) == 0;
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

typedef int (*rd_match)(
    const char *, size_t, size_t, size_t *, size_t *, const char **);

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
	j = i + strlen(rd_headers[k]);
	if (j < len && (s[j] == '"' || s[j] == '\''))
		j++;
	while (j < len && (s[j] == ' ' || s[j] == '\t'))
		j++;
	if (j >= len || (s[j] != ':' && s[j] != '='))
		return 0;
	j++;
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
	if (j >= len ||
	    (s[j] != ':' && s[j] != '=' && s[j] != '"' && s[j] != '\'' &&
		s[j] != ' ' && s[j] != '\t') ||
	    !redact_key_secretish(s + i, k))
		return 0;
	if (j < len && (s[j] == '"' || s[j] == '\''))
		j++;
	while (j < len && (s[j] == ' ' || s[j] == '\t'))
		j++;
	if (j >= len || (s[j] != ':' && s[j] != '='))
		return 0;
	j++;
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
static const rd_match rd_patterns[] = {
    m_jwt, m_bearer, m_header, m_keyval, m_prefix, m_home, NULL};

/* --- the known-value stage ------------------------------------------------ */

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * Does want come at s[i] (form flags fl)?  1 with *adv its bytes, 0 no,
 * -1 the buffer ends before that can be told.
 */
static int
kv_unit(const char *s, size_t len, size_t i, unsigned char want, int fl,
    size_t *adv)
{
	unsigned char c = (unsigned char)s[i];
	int h, l;

	*adv = 1;
	if (!(fl & KF_PCT) || c != '%')
		return c == want ||
		       ((fl & KF_PCT) && c == '+' && want == ' ') ||
		       ((fl & KF_CI) && (c | 0x20) == (want | 0x20) &&
			   hexval(c) >= 0);
	/* '%': %XX first, else a '%' of the value itself */
	if (i + 2 >= len)
		return -1;
	h = hexval((unsigned char)s[i + 1]);
	l = hexval((unsigned char)s[i + 2]);
	if (h >= 0 && l >= 0 && (h << 4 | l) == want) {
		*adv = 3;
		return 1;
	}
	return want == '%';
}

/* The ignorable character at s[i]: its bytes, 0 none, -1 cut short. */
static int
kv_ign(const char *s, size_t len, size_t i)
{
	const unsigned char *u = (const unsigned char *)s + i;
	size_t n = len - i;

	switch (u[0]) {
	case ' ':
	case '\t':
	case '\n':
	case '\r':
	case '\v':
	case '\f':
		return 1;
	case 0xc2: /* U+00AD soft hyphen */
		if (n < 2)
			return -1;
		return u[1] == 0xad ? 2 : 0;
	case 0xe2: /* U+200B..U+200D, U+2060 */
		if (n < 2)
			return -1;
		if (u[1] != 0x80 && u[1] != 0x81)
			return 0;
		if (n < 3)
			return -1;
		return (u[1] == 0x80 && u[2] >= 0x8b && u[2] <= 0x8d) ||
			       (u[1] == 0x81 && u[2] == 0xa0)
			   ? 3
			   : 0;
	case 0xef: /* U+FEFF */
		if (n < 2)
			return -1;
		if (u[1] != 0xbb)
			return 0;
		if (n < 3)
			return -1;
		return u[2] == 0xbf ? 3 : 0;
	}
	return 0;
}

/* kv_ign, and in a %-encoded form also '+' and %20, %09, %0A .. %0D. */
static int
kv_sep(const char *s, size_t len, size_t i, int fl)
{
	int g = kv_ign(s, len, i), h, l;

	if (g != 0 || !(fl & KF_PCT))
		return g;
	if (s[i] == '+')
		return 1;
	if (s[i] != '%')
		return 0;
	if (i + 2 >= len)
		return -1;
	h = hexval((unsigned char)s[i + 1]);
	l = hexval((unsigned char)s[i + 2]);
	return h == 2 && l == 0 ? 3 : h == 0 && l >= 9 && l <= 13 ? 3 : 0;
}

/* Form f at s[i]: 1 with *end, 0 no, -1 undecided (the buffer ends). */
static int
kv_try(const struct kform *f, const char *s, size_t len, size_t i, size_t *end)
{
	size_t k, pos = i, adv, q, skip;
	int rc, g;

	for (k = 0; k < f->len; k++) {
		if (pos >= len)
			return -1;
		rc = kv_unit(
		    s, len, pos, (unsigned char)f->f[k], f->flags, &adv);
		if (rc == 0 && k > 0 && (f->flags & KF_SEP)) {
			/* a run of ignorables between two characters */
			for (q = pos, skip = 0;;
			     q += (size_t)g, skip += (size_t)g) {
				if (q >= len)
					return -1;
				/* the character as soon as it comes ('+' may be
				 * either) */
				if (skip > 0 && (rc = kv_unit(s, len, q,
						     (unsigned char)f->f[k],
						     f->flags, &adv)) != 0)
					break;
				if ((g = kv_sep(s, len, q, f->flags)) <= 0)
					return g;
				if (skip + (size_t)g > RD_SEP_MAX)
					return 0;
			}
			pos = q;
		}
		if (rc <= 0)
			return rc;
		pos += adv;
	}
	*end = pos;
	return 1;
}

static void line_feed(struct redact *, const char *, size_t, struct evbuffer *);

/*
 * Mask every form in the held tail, leftmost first, the longest match at
 * a place; send what is decided on to the line stage and keep the rest
 * (from the first place where a match is still open).  final: the stream
 * ends, nothing is open.
 */
static void
kv_run(struct redact *r, int final, struct evbuffer *out)
{
	struct sbuf *h = &r->r_kv;
	const char *s = h->b;
	size_t n = h->len, i = 0, lit = 0, e, best, k;
	const size_t *bk;
	int rc, open;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];

		if (r->r_nbucket[c] == 0) {
			i++;
			continue;
		}
		bk = r->r_bucket[c];
		best = 0;
		open = 0;
		for (k = 0; k < r->r_nbucket[c]; k++) {
			rc = kv_try(&r->r_form[bk[k]], s, n, i, &e);
			if (rc < 0 && !final)
				open = 1;
			else if (rc > 0 && e > best)
				best = e;
		}
		if (open)
			break;
		if (best > 0) {
			line_feed(r, s + lit, i - lit, out);
			line_feed(r, REDACT_MASK, 3, out);
			i = lit = best;
			continue;
		}
		i++;
	}
	line_feed(r, s + lit, i - lit, out);
	if (i > 0) {
		memmove(h->b, h->b + i, n - i);
		explicit_bzero(h->b + n - i, i);
		h->len = n - i;
	}
	r->r_kvnext = h->len >= RD_KV_RESCAN ? h->len + h->len / 4 : 0;
}

static void
kv_feed(struct redact *r, const char *in, size_t len, struct evbuffer *out)
{
	if (r->r_nform == 0) {
		line_feed(r, in, len, out);
		return;
	}
	sb_add(&r->r_kv, in, len);
	if (r->r_kv.oom) {
		/* Fail closed: drop what is held. */
		sb_wipe(&r->r_kv);
		line_feed(r, REDACT_MASK, 3, out);
		return;
	}
	/* A long open match is tried again once the tail grew by a
	 * quarter: linear overall. */
	if (r->r_kv.len >= r->r_kvnext)
		kv_run(r, 0, out);
}

/* base64 of p[0..n) with alphabet al, no padding; its length. */
static size_t
b64_enc(const unsigned char *p, size_t n, const char *al, char *o)
{
	size_t i, k = 0;
	uint32_t v;

	for (i = 0; i < n; i += 3) {
		v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		o[k++] = al[v >> 18 & 63];
		o[k++] = al[v >> 12 & 63];
		if (i + 1 < n)
			o[k++] = al[v >> 6 & 63];
		if (i + 2 < n)
			o[k++] = al[v & 63];
	}
	return k;
}

/* Add a copy of f[0..len) (unless shorter than RD_FORM_MIN or known). */
static int
kv_add(struct redact *r, const char *f, size_t len, int flags, size_t cap)
{
	struct kform *x;
	size_t k;

	if (len < RD_FORM_MIN && !(flags & KF_PCT))
		return 0;
	for (k = 0; k < r->r_nform; k++) {
		x = &r->r_form[k];
		if (x->len == len && memcmp(x->f, f, len) == 0) {
			x->flags |= flags;
			return 0;
		}
	}
	if (r->r_nform == cap ||
	    (x = &r->r_form[r->r_nform], x->f = malloc(len + 1)) == NULL)
		return -1;
	memcpy(x->f, f, len);
	x->f[len] = '\0';
	x->len = len;
	x->flags = flags;
	r->r_nform++;
	return 0;
}

static const char rd_b64[2][65] = {
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"};
#define KV_FORMS 14 /* per value, at most */

/*
 * Every form of v: itself (also %XX-encoded), reversed, hex (either
 * case), and base64 (standard and URL-safe): alone with and without
 * padding, and the characters that depend on v alone when it sits at
 * offset 0, 1 or 2 mod 3 inside a larger blob.
 */
static int
kv_derive(struct redact *r, const char *v, size_t cap)
{
	static const char hx[] = "0123456789abcdef";
	size_t n = strlen(v), k, m, a, t, lead;
	int sep = KF_SEP, rc = -1, g;
	unsigned char *raw = NULL;
	char *o = NULL;

	if (n < RD_FORM_MIN)
		return kv_add(r, v, n, KF_PCT, cap);
	if ((o = malloc(2 * n + 8)) == NULL || (raw = malloc(n + 2)) == NULL)
		goto out;
	/* Itself and reversed: where separators may stand anywhere, the
	 * value's own ones are separators too. */
	for (k = 0, m = 0; k<n; k += g> 0 ? (size_t)g : 1)
		if ((g = kv_ign(v, n, k)) <= 0)
			o[m++] = v[k];
	if (m < RD_SEP_MIN) {
		memcpy(o, v, n);
		m = n;
		sep = 0;
	}
	if (kv_add(r, o, m, KF_PCT | sep, cap) == -1)
		goto out;
	for (k = 0; k < m / 2; k++) {
		char x = o[k];

		o[k] = o[m - 1 - k];
		o[m - 1 - k] = x;
	}
	if (kv_add(r, o, m, KF_PCT | sep, cap) == -1)
		goto out;
	sep = n >= RD_SEP_MIN ? KF_SEP : 0;
	for (k = 0; k < n; k++) {
		o[2 * k] = hx[(unsigned char)v[k] >> 4];
		o[2 * k + 1] = hx[(unsigned char)v[k] & 15];
	}
	if (kv_add(r, o, 2 * n, KF_CI | sep, cap) == -1)
		goto out;
	for (k = 0; k < 2; k++) {
		/* alone, with and without '=' */
		m = b64_enc((const unsigned char *)v, n, rd_b64[k], o);
		if (kv_add(r, o, m, sep, cap) == -1)
			goto out;
		while (m % 4 != 0)
			o[m++] = '=';
		if (kv_add(r, o, m, sep, cap) == -1)
			goto out;
		/* at offset a in a blob: drop the characters that share
		 * bits with the bytes around v */
		for (a = 0; a < 3; a++) {
			memset(raw, 0, a);
			memcpy(raw + a, v, n);
			t = a + n;
			m = b64_enc(raw, t, rd_b64[k], o);
			if (t % 3 != 0)
				m--;
			lead = a == 0 ? 0 : a == 1 ? 2 : 3;
			if (m > lead &&
			    kv_add(r, o + lead, m - lead, sep, cap) == -1)
				goto out;
		}
	}
	rc = 0;
out:
	if (o != NULL)
		explicit_bzero(o, 2 * n + 8);
	if (raw != NULL)
		explicit_bzero(raw, n + 2);
	free(o);
	free(raw);
	return rc;
}

/* May form f start with byte c: its own, either case (hex), '%'. */
static int
kv_starts(const struct kform *f, unsigned char c)
{
	unsigned char f0 = (unsigned char)f->f[0];

	return c == f0 ||
	       ((f->flags & KF_CI) && hexval(f0) >= 0 &&
		   (c | 0x20) == (f0 | 0x20)) ||
	       ((f->flags & KF_PCT) && (c == '%' || (c == '+' && f0 == ' ')));
}

static int
kv_buckets(struct redact *r)
{
	size_t k, c;

	for (k = 0; k < r->r_nform; k++) {
		for (c = 0; c < 256; c++)
			if (kv_starts(&r->r_form[k], (unsigned char)c))
				r->r_nbucket[c]++;
	}
	for (c = 0; c < 256; c++) {
		if (r->r_nbucket[c] == 0)
			continue;
		if ((r->r_bucket[c] =
			    calloc(r->r_nbucket[c], sizeof(size_t))) == NULL)
			return -1;
		r->r_nbucket[c] = 0;
	}
	for (k = 0; k < r->r_nform; k++) {
		for (c = 0; c < 256; c++)
			if (kv_starts(&r->r_form[k], (unsigned char)c))
				r->r_bucket[c][r->r_nbucket[c]++] = k;
	}
	return 0;
}

/* --- passes ------------------------------------------------------------ */

static void
pass(const struct sbuf *in, struct sbuf *out, rd_match m)
{
	size_t i = 0, rs, re, lit = 0;
	const char *rep;

	out->len = 0;
	if (in->len == 0)
		return;
	while (i < in->len) {
		/* Every matcher starts at a word boundary or at '/'. */
		if (i > 0 && is_word((unsigned char)in->b[i - 1]) &&
		    in->b[i] != '/') {
			i++;
			continue;
		}
		if (m(in->b, in->len, i, &rs, &re, &rep)) {
			sb_add(out, in->b + lit, rs - lit);
			sb_add(out, rep, strlen(rep));
			i = lit = re;
			continue;
		}
		i++;
	}
	sb_add(out, in->b + lit, in->len - lit);
}

static void
swap(struct sbuf *a, struct sbuf *b)
{
	struct sbuf t = *a;

	*a = *b;
	*b = t;
}

/* Find "-----BEGIN ... PRIVATE KEY" / "-----END ... PRIVATE KEY" and the
 * end of its closing "-----". */
static const char *
pem_find(const char *s, size_t len, const char *what, size_t *endoff)
{
	const char *p = s, *q, *k;
	size_t left = len, wl = strlen(what);

	if (s == NULL || len == 0)
		return NULL;
	while ((q = memmem(p, left, what, wl)) != NULL) {
		const char *lim = s + len;

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
static int
pem_body(const char *s, size_t len)
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

/*
 * A secret cut short, by the cleaner's line clamp (the text before
 * " … [+N chars]") or by the end of the stream (a byte cap): a tail of at
 * least RD_PARTIAL_MIN bytes that is a prefix of a secret goes too.
 */
static void
mask_tail(struct redact *r, struct sbuf *a, struct sbuf *b, size_t end)
{
	size_t k, n;

	for (k = 0; k < r->r_n; k++)
		for (n = r->r_slen[k] - 1; n >= RD_PARTIAL_MIN; n--) {
			if (n > end ||
			    memcmp(a->b + end - n, r->r_sec[k], n) != 0)
				continue;
			b->len = 0;
			sb_add(b, a->b, end - n);
			sb_add(b, REDACT_MASK, 3);
			sb_add(b, a->b + end, a->len - end);
			swap(a, b);
			return;
		}
}

/*
 * At a cut (the cleaner's clamp, a byte cap) a key may be cut short of
 * the length its pattern needs (ghp_ and sk- want 16 characters, a bare
 * run 40): a token-like run of RD_CUT_TOKEN_MIN or more that ends at the
 * cut goes, whatever it was.
 */
static int
is_cut_tok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '+' ||
	       c == '/' || c == '=' || c == '.';
}

static void
mask_cut_token(struct sbuf *a, struct sbuf *b, size_t end)
{
	size_t k = end;

	while (k > 0 && is_cut_tok((unsigned char)a->b[k - 1]))
		k--;
	if (end - k < RD_CUT_TOKEN_MIN)
		return;
	b->len = 0;
	sb_add(b, a->b, k);
	sb_add(b, REDACT_MASK, 3);
	sb_add(b, a->b + end, a->len - end);
	swap(a, b);
}

/* Where the cleaner's clamp marker " … [+N chars]" ends this line, if. */
static int
clamp_marker(const struct sbuf *a, size_t *at)
{
	static const char mk[] = " \xE2\x80\xA6 [+";
	const char *p = NULL, *q = a->b;
	size_t i, left = a->len;

	while (left >= 7 && (q = memmem(q, left, mk, 7)) != NULL) {
		p = q++;
		left = a->len - (size_t)(q - a->b);
	}
	if (p == NULL)
		return 0;
	for (i = (size_t)(p - a->b) + 7;
	     i < a->len && a->b[i] >= '0' && a->b[i] <= '9'; i++)
		;
	if (a->len - i != 7 || memcmp(a->b + i, " chars]", 7) != 0)
		return 0;
	*at = (size_t)(p - a->b);
	return 1;
}

/* Scrub one line (with its '\n' if it had one) into out; final: the
 * stream ends here. */
static void
scrub_line(struct redact *r, const char *line, size_t len, int nl, int final,
    struct evbuffer *out)
{
	struct sbuf *a = &r->r_a, *b = &r->r_b;
	const char *q;
	size_t k, e;

	/* Secret values went in the known-value stage already. */
	a->len = 0;
	sb_add(a, line, len);
	if (a->len > 0 && clamp_marker(a, &e)) {
		if (r->r_n > 0)
			mask_tail(r, a, b, e);
		if (clamp_marker(a, &e))
			mask_cut_token(a, b, e);
	} else if (a->len > 0 && final) {
		if (r->r_n > 0)
			mask_tail(r, a, b, a->len);
		if (r->r_cut)
			mask_cut_token(a, b, a->len);
	}
	/* PEM private key blocks: everything from BEGIN to END goes. */
	for (;;) {
		if (r->r_in_pem) {
			if ((q = pem_find(a->b, a->len, "-----END", &e)) ==
				NULL &&
			    !pem_body(a->b, a->len)) {
				/* not a key's line: the block ended unseen */
				r->r_in_pem = 0;
				continue;
			}
			if (q == NULL) {
				a->len = 0;
				nl = 0;
				break;
			}
			r->r_in_pem = 0;
			b->len = 0;
			sb_add(b, a->b + e, a->len - e);
			swap(a, b);
			if (a->len == 0 && nl)
				nl = 0;
			continue;
		}
		if ((q = pem_find(a->b, a->len, "-----BEGIN", &e)) == NULL)
			break;
		b->len = 0;
		sb_add(b, a->b, (size_t)(q - a->b));
		sb_add(b, REDACT_MASK, 3);
		r->r_in_pem = 1;
		/* The rest of the line is searched for the END marker. */
		{
			size_t pre = b->len;

			sb_add(b, a->b + e, a->len - e);
			swap(a, b);
			if ((q = pem_find(a->b + pre, a->len - pre, "-----END",
				 &e)) == NULL) {
				a->len = pre;
				break;
			}
			r->r_in_pem = 0;
			b->len = 0;
			sb_add(b, a->b, pre);
			sb_add(b, a->b + pre + e, a->len - pre - e);
			swap(a, b);
		}
	}
	for (k = 0; rd_patterns[k] != NULL; k++) {
		if (a->len == 0)
			break;
		pass(a, b, rd_patterns[k]);
		swap(a, b);
	}
	if (a->oom || b->oom) {
		/* Fail closed: nothing of this line leaves. */
		(void)evbuffer_add(out, REDACT_MASK, 3);
		a->oom = b->oom = 0;
	} else if (a->len > 0)
		(void)evbuffer_add(out, a->b, a->len);
	if (nl)
		(void)evbuffer_add(out, "\n", 1);
	if (a->b != NULL)
		explicit_bzero(a->b, a->cap);
	if (b->b != NULL)
		explicit_bzero(b->b, b->cap);
}

/* --- early flush: a prefix of the held line that is already final ----- */

static int
is_blank(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* Does a suffix of s[0..len) of at least min bytes equal a proper prefix
 * of sec? */
static int
tail_heads(const char *s, size_t len, const char *sec, size_t slen, size_t min)
{
	size_t n, max = slen - 1 < len ? slen - 1 : len;

	for (n = min; n <= max; n++)
		if (s[len - n] == sec[0] && memcmp(s + len - n, sec, n) == 0)
			return 1;
	return 0;
}

/* Is p[0..n) the end of some clamp marker " … [+<digits> chars]"? */
static int
marker_end(const char *p, size_t n)
{
	static const char head[] = " \xE2\x80\xA6 [+", tail[] = " chars]";

	if (n <= 7)
		return memcmp(p, tail + 7 - n, n) == 0;
	if (memcmp(p + n - 7, tail, 7) != 0)
		return 0;
	n -= 7;
	while (n > 0 && p[n - 1] >= '0' && p[n - 1] <= '9')
		n--;
	return n <= 7 && memcmp(p, head + 7 - n, n) == 0;
}

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
static int
pass_closed(rd_match m, const struct sbuf *a)
{
	size_t i, k, n = a->len;

	if (m == m_bearer) {
		rstrip(a->b, &n, is_blank);
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
		rstrip(a->b, &n, is_blank);
		rstrip(a->b, &n, is_assign);
		rstrip(a->b, &n, is_blank);
		if (n > 0 && (a->b[n - 1] == '"' || a->b[n - 1] == '\''))
			n--;
		k = n;
		rstrip(a->b, &k, is_key);
		return k == n || !redact_key_secretish(a->b + k, n - k);
	}
	return 1;
}

/*
 * May the held line be cut after its first c bytes: for every rest, is
 * scrub(head + rest) == scrub(head) + scrub(rest)?  Conservative: yes only
 * when head ends in a blank, no secret can straddle the cut (no suffix of
 * head, at any secret pass, is a proper prefix of a secret), no PEM or
 * clamp marker is open, and every pattern pass is closed (pass_closed).
 */
static int
cut_ok(struct redact *r, const char *s, size_t c)
{
	static const char mk[] = " \xE2\x80\xA6 [+";
	struct sbuf *a = &r->r_a, *b = &r->r_b;
	size_t k;
	int ok = 0;

	/* Whether an open PEM block goes on depends on the whole line. */
	if (r->r_in_pem)
		return 0;
	a->len = 0;
	sb_add(a, s, c);
	if (a->len == 0 || !is_blank((unsigned char)a->b[a->len - 1]))
		goto out;
	/* mask_tail: a cut-off secret before a clamp marker that starts
	 * at or after the blank, or at the end of the stream. */
	for (k = 0; k < r->r_n; k++)
		if (tail_heads(a->b, a->len, r->r_sec[k], r->r_slen[k], 1) ||
		    tail_heads(a->b, a->len - 1, r->r_sec[k], r->r_slen[k], 1))
			goto out;
	/* mask_cut_token: the blank may start a clamp marker after a run. */
	for (k = a->len - 1; k > 0 && is_cut_tok((unsigned char)a->b[k - 1]);
	     k--)
		;
	if (a->len - 1 - k >= RD_CUT_TOKEN_MIN)
		goto out;
	if (memmem(a->b, a->len, "-----BEGIN", 10) != NULL ||
	    memmem(a->b, a->len, "-----END", 8) != NULL ||
	    memmem(a->b, a->len, mk, 7) != NULL ||
	    (a->len >= 5 && memcmp(a->b + a->len - 5, mk, 5) == 0))
		goto out;
	for (k = 0; rd_patterns[k] != NULL; k++) {
		if (!pass_closed(rd_patterns[k], a))
			goto out;
		pass(a, b, rd_patterns[k]);
		swap(a, b);
		if (a->len == 0 || !is_blank((unsigned char)a->b[a->len - 1]))
			goto out;
	}
	ok = !a->oom && !b->oom;
out:
	a->oom = b->oom = 0;
	if (a->b != NULL)
		explicit_bzero(a->b, a->cap);
	if (b->b != NULL)
		explicit_bzero(b->b, b->cap);
	return ok;
}

void
redact_flush_partial(struct redact *r, struct evbuffer *out)
{
	struct sbuf *h = &r->r_hold;
	size_t keep, lim, c, tries = 0;

	if (r->r_noearly || h->len == 0 || h->len < r->r_retry)
		return;
	/*
	 * An over-long line is cut at or after RD_HOLD_MAX + 1 - keep (or
	 * at a blank); a flush never goes past that, and always ends in a
	 * blank, so that cut never falls inside what already left.
	 */
	keep = r->r_maxlen > 0 ? r->r_maxlen - 1 : 0;
	if (keep + r->r_done > RD_HOLD_MAX + 1)
		return;
	lim = RD_HOLD_MAX + 1 - keep - r->r_done;
	if (lim > h->len)
		lim = h->len;
	for (c = lim; c > 0 && tries < 4; c--) {
		if (!is_blank((unsigned char)h->b[c - 1]))
			continue;
		tries++;
		if (!cut_ok(r, h->b, c))
			continue;
		scrub_line(r, h->b, c, 0, 0, out);
		memmove(h->b, h->b + c, h->len - c);
		h->len -= c;
		r->r_done += c;
		r->r_retry = 0;
		return;
	}
	/* Nothing to cut: a long hold is tried again once it grew by a
	 * quarter, which keeps the rescans linear overall. */
	if (h->len >= 256)
		r->r_retry = h->len + h->len / 4;
}

static int
cmp_len_desc(const void *x, const void *y)
{
	size_t a = strlen(*(char *const *)x), b = strlen(*(char *const *)y);

	return a < b ? 1 : a > b ? -1 : 0;
}

struct redact *
redact_new(const char *const *secrets, size_t n)
{
	struct redact *r;
	size_t i, n0;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	if (n > 0 && ((r->r_sec = calloc(n, sizeof(char *))) == NULL ||
			 (r->r_slen = calloc(n, sizeof(size_t))) == NULL))
		goto fail;
	for (i = 0; i < n; i++) {
		if (secrets[i] == NULL || secrets[i][0] == '\0')
			continue;
		/*
		 * An over-long line is cut keeping a secret's length of
		 * tail: a secret as long as half the hold cannot be kept.
		 */
		if (strlen(secrets[i]) > RD_HOLD_MAX / 2)
			goto fail;
		if ((r->r_sec[r->r_n] = strdup(secrets[i])) == NULL)
			goto fail;
		r->r_n++;
	}
	if (r->r_n > 1)
		qsort(r->r_sec, r->r_n, sizeof(char *), cmp_len_desc);
	for (i = 0; i < r->r_n; i++) {
		r->r_slen[i] = strlen(r->r_sec[i]);
		if (r->r_slen[i] > r->r_maxlen)
			r->r_maxlen = r->r_slen[i];
		/* A secret whose head could be the end of a clamp marker: a
		 * marker split at the cut would change what mask_tail sees. */
		for (n0 = RD_PARTIAL_MIN; n0 < r->r_slen[i]; n0++)
			if (marker_end(r->r_sec[i], n0))
				r->r_noearly = 1;
	}
	if (r->r_n > 0 &&
	    (r->r_form = calloc(r->r_n * KV_FORMS, sizeof(*r->r_form))) == NULL)
		goto fail;
	for (i = 0; i < r->r_n; i++)
		if (kv_derive(r, r->r_sec[i], r->r_n * KV_FORMS) == -1)
			goto fail;
	if (kv_buckets(r) == -1)
		goto fail;
	return r;
fail:
	redact_free(r);
	return NULL;
}

/* The line stage: patterns, a line at a time. */
static void
line_feed(struct redact *r, const char *in, size_t len, struct evbuffer *out)
{
	char *nl;
	size_t n, cut, keep, off;

	sb_add(&r->r_hold, in, len);
	if (r->r_hold.oom) {
		/* Fail closed: drop what is held. */
		sb_wipe(&r->r_hold);
		r->r_done = r->r_retry = 0;
		(void)evbuffer_add(out, REDACT_MASK, 3);
		return;
	}
	/* Scrub every complete line, then move the rest down once. */
	off = 0;
	while (off < r->r_hold.len && (nl = memchr(r->r_hold.b + off, '\n',
					   r->r_hold.len - off)) != NULL) {
		n = (size_t)(nl - (r->r_hold.b + off));
		scrub_line(r, r->r_hold.b + off, n, 1, 0, out);
		off += n + 1;
	}
	if (off > 0) {
		memmove(r->r_hold.b, r->r_hold.b + off, r->r_hold.len - off);
		r->r_hold.len -= off;
		r->r_done = r->r_retry = 0;
	}
	/* The line's length counts what an early flush sent already. */
	if (r->r_done + r->r_hold.len <= RD_HOLD_MAX)
		return;
	/* An over-long line: scrub its head, keep a tail long enough for a
	 * secret split at the cut (at a blank if one is near).  Positions
	 * are the line's; its first r_done bytes left already, the last of
	 * them a blank (redact_flush_partial), never past the cut. */
	keep = r->r_maxlen > 0 ? r->r_maxlen - 1 : 0;
	cut = r->r_done + r->r_hold.len - keep;
	for (n = cut; n > cut / 2; n--) {
		if (n <= r->r_done) {
			cut = r->r_done;
			break;
		}
		if (is_blank((unsigned char)r->r_hold.b[n - r->r_done - 1])) {
			cut = n;
			break;
		}
	}
	cut -= r->r_done;
	scrub_line(r, r->r_hold.b, cut, 0, 0, out);
	memmove(r->r_hold.b, r->r_hold.b + cut, r->r_hold.len - cut);
	r->r_hold.len -= cut;
	r->r_done = r->r_retry = 0;
}

void
redact_feed(struct redact *r, const char *in, size_t len, struct evbuffer *out)
{
	kv_feed(r, in, len, out);
}

void
redact_cut(struct redact *r)
{
	r->r_cut = 1;
}

void
redact_finish(struct redact *r, struct evbuffer *out)
{
	if (r->r_kv.len > 0)
		kv_run(r, 1, out);
	if (r->r_hold.len > 0)
		scrub_line(r, r->r_hold.b, r->r_hold.len, 0, 1, out);
	r->r_hold.len = 0;
	r->r_in_pem = 0;
	r->r_done = r->r_retry = 0;
}

void
redact_free(struct redact *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->r_n; i++) {
		explicit_bzero(r->r_sec[i], strlen(r->r_sec[i]));
		free(r->r_sec[i]);
	}
	free(r->r_sec);
	free(r->r_slen);
	for (i = 0; i < r->r_nform; i++) {
		explicit_bzero(r->r_form[i].f, r->r_form[i].len);
		free(r->r_form[i].f);
	}
	free(r->r_form);
	for (i = 0; i < 256; i++)
		free(r->r_bucket[i]);
	sb_wipe(&r->r_kv);
	sb_wipe(&r->r_hold);
	sb_wipe(&r->r_a);
	sb_wipe(&r->r_b);
	free(r);
}

int
redact_buf(const char *const *secrets, size_t n, const char *in, size_t len,
    int cut, struct evbuffer *out)
{
	struct redact *r;

	if ((r = redact_new(secrets, n)) == NULL)
		return -1;
	r->r_cut = cut;
	redact_feed(r, in, len, out);
	redact_finish(r, out);
	redact_free(r);
	return 0;
}

int
redact_value_secretish(const char *s)
{
	struct sbuf a = {0}, b = {0};
	size_t k, e;
	int hit = 0;

	if (pem_find(s, strlen(s), "-----BEGIN", &e) != NULL)
		return 1;
	sb_add(&a, s, strlen(s));
	/* m_home is not a secret; here a bare long run (m_long) is, and any
	 * Bearer token. */
	for (k = 0; rd_patterns[k] != NULL; k++) {
		pass(&a, &b,
		    rd_patterns[k] == m_home	 ? m_long
		    : rd_patterns[k] == m_bearer ? m_bearer_any
						 : rd_patterns[k]);
		if (b.len != a.len ||
		    (a.len > 0 && memcmp(a.b, b.b, a.len) != 0))
			hit = 1;
		swap(&a, &b);
	}
	if (a.oom || b.oom)
		hit = 1; /* fail closed */
	sb_wipe(&a);
	sb_wipe(&b);
	return hit;
}
