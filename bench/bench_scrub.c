/*
 * The output scrubber (SP-11, common/redact.c): recall, precision and
 * throughput.
 *
 * Recall: (1) synthesised tokens of each provider format DATA.md names,
 * in the contexts agents print them (prose, export, JSON, headers), from
 * a fixed seed; (2) known secret values, each under every evasion the
 * scrubber claims to catch (line-wrapped halves, separators, one
 * character per line, reversed, URL-encoded, hex, base64 alone and inside
 * a larger blob at each alignment, a wrapped blob).  A case is caught when
 * no 8 characters in a row of its secret part survive (separators
 * ignored).  Precision: the share of lines changed in corpora without
 * secrets: `git log -p` of SRCDIR (but tests/ and this file, whose
 * fixtures are fake secrets on purpose), `ninja -t commands` of BUILDDIR and
 * stream-json transcripts (the .jsonl files of tests/fixtures/scrub/), with a
 * run's worth of known values loaded.  Throughput: the same bytes in
 * 4 KiB pieces through redact_feed + redact_flush_partial (a chat's path)
 * against memcpy of the same pieces, best of five, in the same run.
 * One-shot: a redact_buf call on one piece with the keys of a run's
 * largest secrets, made once as a run's are, against memcpy of the piece;
 * and what making those keys costs.
 *
 * bench_scrub [--check] SRCDIR BUILDDIR: --check exits 1 unless every
 * case is caught and each corpus has under 0.1 % of its lines changed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "bench_util.h"
#include "redact.h"

#define SEED	      0x5c12ab5eedULL
#define WIN	      8 /* characters in a row that must not survive */
#define CHUNK	      4096
#define NKNOWN	      4	   /* known values loaded for the precision corpora */
#define PREC_PPM      1000 /* < 0.1 % */
#define MAXCASES      4096
#define CASE_MAX      1024
#define ONESHOT_N     16   /* LIM_SECRETS_MAX */
#define ONESHOT_LEN   8192 /* LIM_SECRET_VALUE_MAX */
#define ONESHOT_CALLS 20

static uint64_t rng = SEED;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
rstr(char *o, size_t n, const char *alpha)
{
	size_t k = strlen(alpha), i;

	for (i = 0; i < n; i++)
		o[i] = alpha[rnd() % k];
	o[n] = '\0';
}

static const char AN[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
static const char UPNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
static const char URLB64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwx"
    "yz0123456789-_";
static const char HEX[] = "0123456789abcdef";
static const char DIG[] = "0123456789";

/* --- scrubbing ----------------------------------------------------------- */

static char *
scrub(const struct redact_keys *ks, const char *in, size_t len, size_t *ol)
{
	struct evbuffer *b = evbuffer_new();
	char *o;

	if (b == NULL || redact_buf(ks, in, len, 0, b) == -1)
		abort();
	*ol = evbuffer_get_length(b);
	if ((o = malloc(*ol + 1)) == NULL)
		abort();
	evbuffer_remove(b, o, *ol);
	o[*ol] = '\0';
	evbuffer_free(b);
	return o;
}

/* s without separators (whitespace, U+200B-D, U+2060, U+FEFF, U+00AD). */
static size_t
squeeze(const char *s, size_t len, char *o)
{
	size_t i = 0, n = 0;
	const unsigned char *u = (const unsigned char *)s;

	while (i < len) {
		if (u[i] == ' ' || u[i] == '\t' || u[i] == '\n' || u[i] == '\r')
			i++;
		else if (i + 1 < len && u[i] == 0xc2 && u[i + 1] == 0xad)
			i += 2;
		else if (i + 2 < len && u[i] == 0xe2 && u[i + 1] == 0x80 &&
			 u[i + 2] >= 0x8b && u[i + 2] <= 0x8d)
			i += 3;
		else if (i + 2 < len && u[i] == 0xe2 && u[i + 1] == 0x81 &&
			 u[i + 2] == 0xa0)
			i += 3;
		else if (i + 2 < len && u[i] == 0xef && u[i + 1] == 0xbb &&
			 u[i + 2] == 0xbf)
			i += 3;
		else
			o[n++] = s[i++];
	}
	o[n] = '\0';
	return n;
}

/* No WIN characters in a row of core (all of it if shorter) in out. */
static int
caught(const char *out, size_t olen, const char *core)
{
	char *sq = malloc(olen + 1), w[WIN + 1];
	size_t n = strlen(core), k, m = n < WIN ? n : WIN;
	int ok = 1;

	if (sq == NULL)
		abort();
	squeeze(out, olen, sq);
	for (k = 0; k + m <= n && ok; k++) {
		memcpy(w, core + k, m);
		w[m] = '\0';
		if (strstr(sq, w) != NULL)
			ok = 0;
	}
	free(sq);
	return ok;
}

/* dst = a b c (NUL-terminated), or abort. */
static void
cat3(char *dst, size_t sz, const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);

	if (la + lb + lc >= sz)
		abort();
	memcpy(dst, a, la);
	memcpy(dst + la, b, lb);
	memcpy(dst + la + lb, c, lc + 1);
}

#define SET3(d, a, b, c) cat3((d), sizeof(d), (a), (b), (c))

/* --- cases --------------------------------------------------------------- */

struct rcase {
	char cls[40];
	char in[CASE_MAX];
	char core[CASE_MAX];
	int known; /* an evasion of a known value (else a format) */
};

static struct rcase *cases;
static size_t ncases;

static struct rcase *
add(const char *cls, int known)
{
	struct rcase *c;

	if (ncases == MAXCASES)
		abort();
	c = &cases[ncases++];
	SET3(c->cls, "", cls, "");
	c->known = known;
	return c;
}

static const char *const contexts[][2] = {
    {"here it is: ", " - done\n"},
    {"export THE_VAR=", "\n"},
    {"{\"type\":\"text\",\"text\":\"use ", " now\"}\n"},
    {"  value = \"", "\"\n"},
};

static void
fmt_case(const char *cls, const char *tok)
{
	size_t k;
	struct rcase *c;

	for (k = 0; k < sizeof(contexts) / sizeof(contexts[0]); k++) {
		c = add(cls, 0);
		SET3(c->in, contexts[k][0], tok, contexts[k][1]);
		SET3(c->core, "", tok, "");
	}
}

static void
formats(void)
{
	char t[1024], a[256], b[256], x[256];
	int i;

	for (i = 0; i < 8; i++) {
		rstr(a, 16, UPNUM);
		SET3(t, "AKIA", a, "");
		fmt_case("aws-key-id", t);
		rstr(a, 16, UPNUM);
		SET3(t, "ASIA", a, "");
		fmt_case("aws-key-id", t);
		rstr(a, 36, AN);
		SET3(t, "ghp_", a, "");
		fmt_case("github", t);
		rstr(a, 36, AN);
		SET3(t, "ghs_", a, "");
		fmt_case("github", t);
		rstr(a, 22, AN);
		rstr(b, 59, AN);
		snprintf(t, sizeof(t), "github_pat_%s_%s", a, b);
		fmt_case("github", t);
		rstr(a, 12, DIG);
		rstr(b, 13, DIG);
		rstr(x, 24, AN);
		snprintf(t, sizeof(t), "xoxb-%s-%s-%s", a, b, x);
		fmt_case("slack", t);
		snprintf(t, sizeof(t), "xoxp-%s-%s-%s", a, b, x);
		fmt_case("slack", t);
		rstr(a, 120, URLB64);
		SET3(t, "sk-proj-", a, "");
		fmt_case("openai", t);
		rstr(a, 48, AN);
		SET3(t, "sk-", a, "");
		fmt_case("openai", t);
		rstr(a, 93, URLB64);
		SET3(t, "sk-ant-api03-", a, "AA");
		fmt_case("anthropic", t);
		rstr(a, 24, AN);
		SET3(t, "sk_live_", a, "");
		fmt_case("stripe", t);
		SET3(t, "rk_test_", a, "");
		fmt_case("stripe", t);
		rstr(a, 32, AN);
		SET3(t, "whsec_", a, "");
		fmt_case("stripe", t);
		rstr(a, 20, URLB64);
		SET3(t, "glpat-", a, "");
		fmt_case("gitlab", t);
		rstr(a, 34, AN);
		SET3(t, "hf_", a, "");
		fmt_case("huggingface", t);
		rstr(a, 35, URLB64);
		SET3(t, "AIza", a, "");
		fmt_case("google", t);
		rstr(a, 100, URLB64);
		SET3(t, "ya29.", a, "");
		fmt_case("google", t);
		rstr(a, 40, URLB64);
		rstr(b, 60, URLB64);
		rstr(x, 43, URLB64);
		snprintf(
		    t, sizeof(t), "eyJhbGciOiJSUzI1NiJ9%s.eyJ%s.%s", a, b, x);
		fmt_case("jwt", t);
	}
	for (i = 0; i < 8; i++) {
		struct rcase *c;

		rstr(a, 40, URLB64);
		c = add("bearer-header", 0);
		SET3(c->in, "curl -H 'Authorization: Bearer ", a,
		    "' https://x\n");
		SET3(c->core, "", a, "");
		c = add("bearer-header", 0);
		SET3(c->in, "> Authorization: Bearer ", a, "\n");
		SET3(c->core, "", a, "");
		c = add("bearer-header", 0);
		SET3(c->in, "x-api-key: ", a, "\n");
		SET3(c->core, "", a, "");
		rstr(a, 40, AN);
		c = add("key=value", 0);
		SET3(c->in, "aws_secret_access_key = ", a, "\n");
		SET3(c->core, "", a, "");
		c = add("key=value", 0);
		SET3(c->in, "  \"api_key\": \"", a, "\",\n");
		SET3(c->core, "", a, "");
		rstr(b, 20, AN);
		c = add("key=value", 0);
		SET3(
		    c->in, "DATABASE_URL=postgres://app:", b, "@db:5432/app\n");
		SET3(c->core, "", b, "");
		c = add("pem", 0);
		rstr(a, 64, URLB64);
		rstr(b, 64, URLB64);
		snprintf(c->in, sizeof(c->in),
		    "-----BEGIN RSA PRIVATE KEY-----\n%s\n%s\n-----END RSA "
		    "PRIVATE KEY-----\n",
		    a, b);
		SET3(c->core, "", a, "");
	}
}

/* --- evasions of known values ------------------------------------------ */

static const char B64S[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char B64U[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* base64 of p[0..n) (pad: with '='); returns its length. */
static size_t
b64(const unsigned char *p, size_t n, const char *al, int pad, char *o)
{
	size_t i, k = 0;
	uint32_t v;

	for (i = 0; i + 3 <= n; i += 3) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		o[k++] = al[v >> 18 & 63];
		o[k++] = al[v >> 12 & 63];
		o[k++] = al[v >> 6 & 63];
		o[k++] = al[v & 63];
	}
	if (n - i == 1) {
		v = (uint32_t)p[i] << 16;
		o[k++] = al[v >> 18 & 63];
		o[k++] = al[v >> 12 & 63];
		if (pad) {
			o[k++] = '=';
			o[k++] = '=';
		}
	} else if (n - i == 2) {
		v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		o[k++] = al[v >> 18 & 63];
		o[k++] = al[v >> 12 & 63];
		o[k++] = al[v >> 6 & 63];
		if (pad)
			o[k++] = '=';
	}
	o[k] = '\0';
	return k;
}

/*
 * v inside a blob: off random bytes before, 7 after, base64 with al;
 * core: the characters that depend on v's bits alone.  wrap: lines of
 * 76 characters.
 */
static void
blob_case(const char *cls, const char *v, size_t off, const char *al, int wrap)
{
	unsigned char raw[CASE_MAX];
	char enc[CASE_MAX], w[CASE_MAX];
	size_t n = strlen(v), t, j, k = 0, e;
	struct rcase *c = add(cls, 1);

	for (j = 0; j < off; j++)
		raw[j] = (unsigned char)rnd();
	memcpy(raw + off, v, n);
	for (j = 0; j < 7; j++)
		raw[off + n + j] = (unsigned char)rnd();
	t = off + n + 7;
	e = b64(raw, t, al, 1, enc);
	for (j = 0; j < e; j++)
		if (6 * j >= 8 * off && 6 * j + 6 <= 8 * (off + n))
			c->core[k++] = enc[j];
	c->core[k] = '\0';
	if (wrap) {
		for (j = 0, k = 0; j < e; j++) {
			if (j > 0 && j % 76 == 0)
				w[k++] = '\n';
			w[k++] = enc[j];
		}
		w[k] = '\0';
		SET3(c->in, "data:\n", w, "\nend\n");
	} else
		SET3(c->in, "blob ", enc, " end\n");
}

static void
sep_case(const char *cls, const char *v, const char *sep, size_t every)
{
	struct rcase *c = add(cls, 1);
	size_t i, k = 0, n = strlen(v);

	k = (size_t)snprintf(c->in, sizeof(c->in), "key: ");
	for (i = 0; i < n; i++) {
		if (i > 0 && (every == 0 ? i == n / 2 : i % every == 0)) {
			memcpy(c->in + k, sep, strlen(sep));
			k += strlen(sep);
		}
		c->in[k++] = v[i];
	}
	memcpy(c->in + k, " ok\n", 5);
	SET3(c->core, "", v, "");
}

static void
enc_case(const char *cls, const char *enc)
{
	struct rcase *c = add(cls, 1);

	SET3(c->in, "out: ", enc, " (end)\n");
	SET3(c->core, "", enc, "");
}

static const char *known[32];
static size_t nknown;

static void
evasions(void)
{
	static char vals[32][CASE_MAX];
	static const size_t lens[] = {
	    8, 9, 10, 12, 16, 20, 24, 31, 32, 40, 48, 64, 100};
	static const char PUNCT[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
				    "qrstuvwxyz0123456789+/=&%?@:_- .~";
	char e[CASE_MAX], rv[CASE_MAX];
	size_t i, j, n, k, off;
	const char *v;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		rstr(vals[nknown], lens[i], i % 3 == 2 ? PUNCT : AN);
		/* no blank at either end (a value is printed trimmed) */
		if (vals[nknown][0] == ' ')
			vals[nknown][0] = 'x';
		if (vals[nknown][lens[i] - 1] == ' ')
			vals[nknown][lens[i] - 1] = 'y';
		known[nknown] = vals[nknown];
		nknown++;
	}
	for (i = 0; i < nknown; i++) {
		v = known[i];
		n = strlen(v);
		enc_case("value", v);
		sep_case("halves-on-two-lines", v, "\n", 0);
		sep_case("halves-indented", v, "\n    ", 0);
		sep_case("tab-inside", v, "\t", 0);
		sep_case("zwsp-inside", v, "\xe2\x80\x8b", 0);
		sep_case("soft-hyphen-inside", v, "\xc2\xad", 0);
		sep_case("word-joiner-inside", v, "\xe2\x81\xa0", 0);
		sep_case("bom-inside", v, "\xef\xbb\xbf", 0);
		sep_case("zwj-every-3", v, "\xe2\x80\x8d", 3);
		sep_case("one-char-per-line", v, "\n", 1);
		sep_case("spaced", v, " ", 1);
		sep_case("wrapped-at-7", v, "\n", 7);
		for (j = 0; j < n; j++)
			rv[j] = v[n - 1 - j];
		rv[n] = '\0';
		enc_case("reversed", rv);
		for (j = 0, k = 0; j < n; j++)
			k += (size_t)sprintf(
			    e + k, "%%%02X", (unsigned char)v[j]);
		enc_case("url-%XX-all", e);
		for (j = 0, k = 0; j < n; j++)
			k += (size_t)sprintf(
			    e + k, "%%%02x", (unsigned char)v[j]);
		enc_case("url-%xx-all", e);
		for (j = 0, k = 0; j < n; j++) {
			unsigned char u = (unsigned char)v[j];

			if (u == ' ')
				e[k++] = '+';
			else if (strchr(AN, u) != NULL || strchr("-._~", u))
				e[k++] = (char)u;
			else
				k += (size_t)sprintf(e + k, "%%%02X", u);
		}
		e[k] = '\0';
		enc_case("url-form", e);
		for (j = 0, k = 0; j < n; j++)
			k +=
			    (size_t)sprintf(e + k, "%02x", (unsigned char)v[j]);
		enc_case("hex-lower", e);
		for (j = 0, k = 0; j < n; j++)
			k +=
			    (size_t)sprintf(e + k, "%02X", (unsigned char)v[j]);
		enc_case("hex-upper", e);
		b64((const unsigned char *)v, n, B64S, 1, e);
		enc_case("base64", e);
		b64((const unsigned char *)v, n, B64S, 0, e);
		enc_case("base64-unpadded", e);
		b64((const unsigned char *)v, n, B64U, 1, e);
		enc_case("base64url", e);
		b64((const unsigned char *)v, n, B64U, 0, e);
		enc_case("base64url-unpadded", e);
		for (off = 0; off < 3; off++) {
			blob_case("base64-in-blob-0/1/2", v, 3 + off, B64S, 0);
			blob_case(
			    "base64url-in-blob-0/1/2", v, 3 + off, B64U, 0);
		}
		blob_case("base64-blob-wrapped-76", v, 52, B64S, 1);
	}
}

/* --- precision ----------------------------------------------------------- */

static char *
slurp_cmd(const char *cmd, size_t *len)
{
	FILE *f = popen(cmd, "r");
	char *b = NULL;
	size_t cap = 0, n;

	*len = 0;
	if (f == NULL)
		return NULL;
	for (;;) {
		if (*len + 65536 > cap) {
			cap = cap ? cap * 2 : 1 << 20;
			if ((b = realloc(b, cap)) == NULL)
				abort();
		}
		if ((n = fread(b + *len, 1, 65536, f)) == 0)
			break;
		*len += n;
	}
	if (pclose(f) != 0 || *len == 0) {
		free(b);
		return NULL;
	}
	return b;
}

struct corpus {
	const char *name;
	char *b;
	size_t len;
	size_t lines, touched;
	char example[160];
};

/*
 * Lines changed: each line scrubbed by itself (with its '\n'), plus the
 * lines the whole corpus, scrubbed as one stream, has fewer or more
 * (a mask across lines, a PEM block).
 */
static void
precision(struct corpus *c, const struct redact_keys *ks)
{
	const char *p = c->b, *end = c->b + c->len, *nl;
	size_t ol, k, slines = 0;
	char *s;

	for (; p < end; p = nl) {
		nl = memchr(p, '\n', (size_t)(end - p));
		nl = nl ? nl + 1 : end;
		c->lines++;
		s = scrub(ks, p, (size_t)(nl - p), &ol);
		if (ol != (size_t)(nl - p) || memcmp(s, p, ol) != 0) {
			if (c->touched++ == 0)
				snprintf(c->example, sizeof(c->example),
				    "%.*s -> %.*s",
				    (int)(nl - p > 70 ? 70 : nl - p), p,
				    (int)(ol > 70 ? 70 : ol), s);
		}
		free(s);
	}
	s = scrub(ks, c->b, c->len, &ol);
	for (k = 0; k < ol; k++)
		slines += s[k] == '\n';
	if (ol > 0 && s[ol - 1] != '\n')
		slines++;
	c->touched += slines > c->lines ? slines - c->lines : c->lines - slines;
	free(s);
}

static double
time_scrub(const char *b, size_t len, const struct redact_keys *ks)
{
	struct evbuffer *o = evbuffer_new();
	struct redact *r = redact_new(ks);
	size_t off, k;
	double t0 = bench_now();

	for (off = 0; off < len; off += k) {
		k = len - off < CHUNK ? len - off : CHUNK;
		redact_feed(r, b + off, k, o);
		redact_flush_partial(r, o);
		evbuffer_drain(o, evbuffer_get_length(o));
	}
	redact_finish(r, o);
	t0 = bench_now() - t0;
	redact_free(r);
	evbuffer_free(o);
	return t0;
}

/*
 * One-shot redact_buf calls (a stderr tail, a gate call's arguments, the
 * prompt note) on one piece, with a run's worth of the largest secrets
 * loaded (ONESHOT_N values of ONESHOT_LEN bytes): the run's keys, made
 * once when its secrets were resolved.
 */
static double
time_oneshot(const char *b, size_t len, const struct redact_keys *ks)
{
	struct evbuffer *o = evbuffer_new();
	double t0 = bench_now();
	int i;

	for (i = 0; i < ONESHOT_CALLS; i++) {
		if (redact_buf(ks, b, len, 0, o) == -1)
			abort();
		evbuffer_drain(o, evbuffer_get_length(o));
	}
	t0 = bench_now() - t0;
	evbuffer_free(o);
	return t0 / ONESHOT_CALLS;
}

/* memcpy of the same pieces, reps times over; the time of one. */
static double
time_memcpy(const char *b, size_t len, int reps)
{
	char *d = malloc(CHUNK);
	volatile char sink = 0;
	size_t off, k;
	double t0 = bench_now();
	int i;

	for (i = 0; i < reps; i++)
		for (off = 0; off < len; off += k) {
			k = len - off < CHUNK ? len - off : CHUNK;
			memcpy(d, b + off, k);
			sink ^= d[k / 2];
		}
	t0 = bench_now() - t0;
	free(d);
	(void)sink;
	return t0 / reps;
}

/*
 * The cost of one redact_buf call against memcpy of the same bytes; and,
 * once per resolution, what deriving the keys costs.
 */
static void
oneshot(const char *b, size_t len)
{
	static char big[ONESHOT_N][ONESHOT_LEN + 1];
	const char *pb[ONESHOT_N];
	struct redact_keys *ks;
	double to = 1e9, tm = 1e9, tk = 1e9, t;
	size_t i;
	int rep;

	for (i = 0; i < ONESHOT_N; i++) {
		rstr(big[i], ONESHOT_LEN, AN);
		pb[i] = big[i];
	}
	for (rep = 0; rep < 5; rep++) {
		t = bench_now();
		if ((ks = redact_keys_new(pb, ONESHOT_N)) == NULL)
			abort();
		if ((t = bench_now() - t) < tk)
			tk = t;
		if ((t = time_oneshot(b, len, ks)) < to)
			to = t;
		redact_keys_free(ks);
		if ((t = time_memcpy(b, len, 10000)) < tm)
			tm = t;
	}
	printf("one-shot redact_buf (%zu bytes, %d secrets of %d bytes, "
	       "best of 5)\n",
	    len, ONESHOT_N, ONESHOT_LEN);
	printf("  keys      %10.1f us (once per resolution)\n", tk * 1e6);
	printf("  per call  %10.1f us\n", to * 1e6);
	printf("  memcpy    %10.3f us (floor)\n", tm * 1e6);
	printf("  ratio     %10.0fx the floor's time\n", to / tm);
}

int
main(int argc, char **argv)
{
	struct corpus cs[8];
	size_t ncs = 0, i, j, all = 0;
	int check = 0, fail = 0;
	char cmd[4096], v[NKNOWN][64];
	const char *pv[NKNOWN];
	struct redact_keys *ks;
	char *b;

	if (argc > 1 && strcmp(argv[1], "--check") == 0) {
		check = 1;
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(
		    stderr, "usage: bench_scrub [--check] SRCDIR BUILDDIR\n");
		return 2;
	}
	if ((cases = calloc(MAXCASES, sizeof(*cases))) == NULL)
		return 2;
	formats();
	evasions();

	/* recall, per class */
	{
		const char *cls[128];
		size_t tot[128] = {0}, hit[128] = {0}, nc = 0, k;
		int isknown[128];
		char *o;
		size_t ol;

		if ((ks = redact_keys_new(known, nknown)) == NULL)
			return 2;
		for (i = 0; i < ncases; i++) {
			for (k = 0; k < nc && strcmp(cls[k], cases[i].cls); k++)
				;
			if (k == nc) {
				cls[nc] = cases[i].cls;
				isknown[nc++] = cases[i].known;
			}
			o = scrub(ks, cases[i].in, strlen(cases[i].in), &ol);
			tot[k]++;
			if (caught(o, ol, cases[i].core))
				hit[k]++;
			else if (check)
				fprintf(stderr, "missed %s: %.60s -> %.60s\n",
				    cases[i].cls, cases[i].in, o);
			free(o);
		}
		printf("recall (seed %#llx; %zu known values of 8-100 chars)\n",
		    (unsigned long long)SEED, nknown);
		for (k = 0; k < nc; k++) {
			printf("  %-8s %-26s %4zu/%-4zu %6.1f %%\n",
			    isknown[k] ? "evasion" : "format", cls[k], hit[k],
			    tot[k], 100.0 * (double)hit[k] / (double)tot[k]);
			if (hit[k] != tot[k])
				fail = 1;
		}
		redact_keys_free(ks);
	}

	/* precision */
	for (j = 0; j < NKNOWN; j++) {
		rstr(v[j],
		    j == 0   ? 32
		    : j == 1 ? 40
		    : j == 2 ? 20
			     : 12,
		    j == 1 ? HEX : AN);
		pv[j] = v[j];
	}
	if ((ks = redact_keys_new(pv, NKNOWN)) == NULL)
		return 2;
	snprintf(cmd, sizeof(cmd),
	    "git -C '%s' log -p --no-color -- . ':!tests' "
	    "':!bench/bench_scrub.c' 2>/dev/null",
	    argv[1]);
	if ((b = slurp_cmd(cmd, &cs[ncs].len)) != NULL)
		cs[ncs].name = "git log -p (no tests/)", cs[ncs++].b = b;
	else
		fail = 1, fprintf(stderr, "no git log of %s\n", argv[1]);
	snprintf(
	    cmd, sizeof(cmd), "ninja -C '%s' -t commands 2>/dev/null", argv[2]);
	if ((b = slurp_cmd(cmd, &cs[ncs].len)) != NULL)
		cs[ncs].name = "build log (ninja -t commands)", cs[ncs++].b = b;
	else
		fail = 1, fprintf(stderr, "no build commands in %s\n", argv[2]);
	snprintf(
	    cmd, sizeof(cmd), "cat '%s'/tests/fixtures/scrub/*.jsonl", argv[1]);
	if ((b = slurp_cmd(cmd, &cs[ncs].len)) != NULL)
		cs[ncs].name = "stream-json transcripts", cs[ncs++].b = b;
	else
		fail = 1, fprintf(stderr, "no transcripts in %s\n", argv[1]);
	printf("precision (lines changed, %d known values loaded)\n", NKNOWN);
	for (i = 0; i < ncs; i++) {
		cs[i].lines = cs[i].touched = 0;
		cs[i].example[0] = '\0';
		precision(&cs[i], ks);
		printf("  %-30s %7zu lines %6zu changed %7.3f %%\n", cs[i].name,
		    cs[i].lines, cs[i].touched,
		    100.0 * (double)cs[i].touched / (double)cs[i].lines);
		if (cs[i].touched > 0)
			printf("    e.g. %s\n", cs[i].example);
		if (cs[i].touched * 1000000 / cs[i].lines >= PREC_PPM)
			fail = 1;
		all += cs[i].len;
	}

	/* throughput */
	if (!check && ncs > 0) {
		char *cat = malloc(all), *p = cat;
		double ts = 1e9, tm = 1e9, t;
		int rep;

		if (cat == NULL)
			return 2;
		for (i = 0; i < ncs; i++) {
			memcpy(p, cs[i].b, cs[i].len);
			p += cs[i].len;
		}
		for (rep = 0; rep < 5; rep++) {
			if ((t = time_scrub(cat, all, ks)) < ts)
				ts = t;
			if ((t = time_memcpy(cat, all, 1)) < tm)
				tm = t;
		}
		printf("throughput (%zu bytes in %d-byte pieces, best of 5)\n",
		    all, CHUNK);
		printf("  scrubber  %8.1f MB/s\n", (double)all / ts / 1e6);
		printf(
		    "  memcpy    %8.1f MB/s (floor)\n", (double)all / tm / 1e6);
		printf("  ratio     %8.0fx the floor's time\n", ts / tm);
		free(cat);
		oneshot(cs[0].b, cs[0].len < CHUNK ? cs[0].len : CHUNK);
	}
	for (i = 0; i < ncs; i++)
		free(cs[i].b);
	redact_keys_free(ks);
	free(cases);
	return check && fail ? 1 : 0;
}
