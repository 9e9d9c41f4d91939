/*
 * The known values of one secret resolution (SP-11): every form of each
 * value (itself, %-encoded, reversed, hex, base64 alone and at each
 * alignment inside a blob), derived once and shared read-only by every
 * redactor of a run, an action or a gate call; and how a form is matched
 * at a place in the stream.  Pure but for malloc; wiped on free.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"
#include "redact_int.h"
#include "unicode.h"
#include "util.h"

/* --- matching a form at a place ----------------------------------------- */

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
			   hex_digit(c) >= 0);
	/* '%': %XX first, else a '%' of the value itself */
	if (i + 2 >= len)
		return -1;
	h = hex_digit((unsigned char)s[i + 1]);
	l = hex_digit((unsigned char)s[i + 2]);
	if (h >= 0 && l >= 0 && (h << 4 | l) == want) {
		*adv = 3;
		return 1;
	}
	return want == '%';
}

/*
 * "<U+XXXX>" (4 to 6 upper-case hex digits) at u: what the cleaner shows
 * for an invisible code point (SP-10), which runs before the scrubber.
 * Its bytes, 0 if it is not one, -1 if cut short.
 */
static int
kv_marker(const unsigned char *u, size_t n)
{
	size_t k;

	for (k = 1; k < 3; k++) {
		if (k >= n)
			return -1;
		if (u[k] != (k == 1 ? 'U' : '+'))
			return 0;
	}
	for (k = 3; k < 10; k++) {
		if (k >= n)
			return -1;
		if (u[k] == '>')
			return k >= 7 ? (int)k + 1 : 0;
		if (!((u[k] >= '0' && u[k] <= '9') ||
			(u[k] >= 'A' && u[k] <= 'F')))
			return 0;
	}
	return 0;
}

/*
 * A separator (UNI_SPACE: NBSP, the en quad .. hair spaces, ...) at u,
 * n bytes, whose lead byte is u[0] and whose second byte must be b1: its
 * bytes, 0 none, -1 cut short.  unicode.c says which are separators.
 */
static int
kv_space(const unsigned char *u, size_t n, unsigned char b1)
{
	size_t i = 0;
	uint32_t cp;
	size_t need = u[0] < 0xe0 ? 2 : 3;

	if (n < 2)
		return -1;
	if (u[1] != b1)
		return 0;
	if (n < need)
		return -1;
	if (uni_utf8_next((const char *)u, need, &i, &cp) == -1 || i != need)
		return 0;
	return uni_class(cp) == UNI_SPACE ? (int)need : 0;
}

/* The ignorable character at s[i]: its bytes, 0 none, -1 cut short. */
static int
kv_ign(const char *s, size_t len, size_t i)
{
	const unsigned char *u = (const unsigned char *)s + i;
	size_t n = len - i;

	switch (u[0]) {
	case '<':
		return kv_marker(u, n);
	case ' ':
	case '\t':
	case '\n':
	case '\r':
	case '\v':
	case '\f':
		return 1;
	case 0xc2: /* U+00AD soft hyphen; U+00A0 */
		if (n >= 2 && u[1] == 0xad)
			return 2;
		return kv_space(u, n, 0xa0);
	case 0xe1: /* U+1680 */
		return kv_space(u, n, 0x9a);
	case 0xe3: /* U+3000 */
		return kv_space(u, n, 0x80);
	case 0xe2: /* U+200B..U+200D, U+2060; U+2000..U+200A, U+202F,
		    * U+205F */
		if (n < 2)
			return -1;
		if (u[1] != 0x80 && u[1] != 0x81)
			return 0;
		if (n < 3)
			return -1;
		return (u[1] == 0x80 && u[2] >= 0x8b && u[2] <= 0x8d) ||
			       (u[1] == 0x81 && u[2] == 0xa0)
			   ? 3
			   : kv_space(u, n, u[1]);
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
	h = hex_digit((unsigned char)s[i + 1]);
	l = hex_digit((unsigned char)s[i + 2]);
	return h == 2 && l == 0 ? 3 : h == 0 && l >= 9 && l <= 13 ? 3 : 0;
}

int
rd_kv_try(
    const struct kform *f, const char *s, size_t len, size_t i, size_t *end)
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

#define KV_BLANK(c)	  ((c) == ' ' || (c) == '\t')
#define KV_BIT(tab, c, d) ((tab)[c][(d) >> 3] >> ((d)&7) & 1u)

/*
 * A form's character that is the one byte c, then a run of blanks at
 * u[j]: 1 if the byte that ends the run may come next by tab (k_pair
 * after a first character, k_tail after a second), or the run reaches len
 * or is longer than a form lets stand between two characters.
 */
static int
kv_blanks(const uint8_t tab[256][32], unsigned char c, const unsigned char *u,
    size_t len, size_t j)
{
	size_t k;

	for (k = j; k < len && k - j <= RD_SEP_MAX && KV_BLANK(u[k]); k++)
		;
	return k >= len || k - j > RD_SEP_MAX || KV_BIT(tab, c, u[k]);
}

/*
 * rd_kv_at's first test, on the bytes at u[i] (i + 2 < len): 0 if every
 * form says no there.  A '%' starts a form only as %XX or as a '%' of its
 * own.  Any other byte is a form's first character alone, and the form
 * goes on at u[i + 1] in one of two ways.  Its second character may be
 * there: the rest of the form is then a form at u[i + 1] (k_tail; when
 * u[i + 2] is a blank that no form has for its second or third character,
 * it can only be a separator, and the byte after the blanks decides: a
 * '%' before a blank is no %XX, so that character too is one byte).  Or, where
 * ignorables may stand between characters (KF_SEP), u[i + 1] may start one:
 * after a run of blanks the byte that ends it must be one the form could take
 * right after its first character (k_pair); after any other, the test says yes.
 */
static int
kv_may3(
    const struct redact_keys *ks, const unsigned char *u, size_t len, size_t i)
{
	unsigned char d = u[i + 1];

	if (u[i] == '%')
		return ks->k_pctlit ||
		       (hex_digit(d) >= 0 && hex_digit(u[i + 2]) >= 0);
	if (KV_BIT(ks->k_tail, d, u[i + 2]) &&
	    (ks->k_blank || !KV_BLANK(u[i + 2]) ||
		kv_blanks(ks->k_tail, d, u, len, i + 2)))
		return 1;
	if (!KV_BLANK(d))
		return kv_ign((const char *)u, len, i + 1) != 0 || d == '+' ||
		       d == '%';
	return kv_blanks(ks->k_pair, u[i], u, len, i + 1);
}

int
rd_kv_at(const struct redact_keys *ks, const char *s, size_t len, size_t i,
    size_t *best)
{
	*best = 0;
	if (i + 2 < len && !ks->k_short &&
	    !kv_may3(ks, (const unsigned char *)s, len, i))
		return 0;
	return rd_kv_forms(ks, s, len, i, best);
}

int
rd_kv_forms(const struct redact_keys *ks, const char *s, size_t len, size_t i,
    size_t *best)
{
	unsigned char c = (unsigned char)s[i];
	size_t k, e;
	int rc, open = 0;

	*best = 0;
	for (k = 0; k < ks->k_nbucket[c]; k++) {
		rc = rd_kv_try(&ks->k_form[ks->k_bucket[c][k]], s, len, i, &e);
		if (rc < 0)
			open = 1;
		else if (rc > 0 && e > *best)
			*best = e;
	}
	return open;
}

/* --- deriving the forms ------------------------------------------------- */

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
kv_add(struct redact_keys *ks, const char *f, size_t len, int flags, size_t cap)
{
	struct kform *x;
	size_t k;

	if (len < RD_FORM_MIN && !(flags & KF_PCT))
		return 0;
	for (k = 0; k < ks->k_nform; k++) {
		x = &ks->k_form[k];
		if (x->len == len && memcmp(x->f, f, len) == 0) {
			x->flags |= flags;
			return 0;
		}
	}
	if (ks->k_nform == cap ||
	    (x = &ks->k_form[ks->k_nform], x->f = malloc(len + 1)) == NULL)
		return -1;
	memcpy(x->f, f, len);
	x->f[len] = '\0';
	x->len = len;
	x->flags = flags;
	ks->k_nform++;
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
kv_derive(struct redact_keys *ks, const char *v, size_t cap)
{
	static const char hx[] = "0123456789abcdef";
	size_t n = strlen(v), k, m, a, t, lead;
	int sep = KF_SEP, rc = -1, g;
	unsigned char *raw = NULL;
	char *o = NULL;

	if (n < RD_FORM_MIN)
		return kv_add(ks, v, n, KF_PCT, cap);
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
	if (kv_add(ks, o, m, KF_PCT | sep, cap) == -1)
		goto out;
	for (k = 0; k < m / 2; k++) {
		char x = o[k];

		o[k] = o[m - 1 - k];
		o[m - 1 - k] = x;
	}
	if (kv_add(ks, o, m, KF_PCT | sep, cap) == -1)
		goto out;
	sep = n >= RD_SEP_MIN ? KF_SEP : 0;
	for (k = 0; k < n; k++) {
		o[2 * k] = hx[(unsigned char)v[k] >> 4];
		o[2 * k + 1] = hx[(unsigned char)v[k] & 15];
	}
	if (kv_add(ks, o, 2 * n, KF_CI | sep, cap) == -1)
		goto out;
	for (k = 0; k < 2; k++) {
		/* alone, with and without '=' */
		m = b64_enc((const unsigned char *)v, n, rd_b64[k], o);
		if (kv_add(ks, o, m, sep, cap) == -1)
			goto out;
		while (m % 4 != 0)
			o[m++] = '=';
		if (kv_add(ks, o, m, sep, cap) == -1)
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
			    kv_add(ks, o + lead, m - lead, sep, cap) == -1)
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
	       ((f->flags & KF_CI) && hex_digit(f0) >= 0 &&
		   (c | 0x20) == (f0 | 0x20)) ||
	       ((f->flags & KF_PCT) && (c == '%' || (c == '+' && f0 == ' ')));
}

/*
 * k_tail: each form from its second character on, tried on two bytes as
 * k_pair (k_short where a form has no second character); k_pctlit and
 * k_blank.
 */
static void
kv_tails(struct redact_keys *ks)
{
	struct kform t;
	size_t k, d, e, x;
	char two[2];

	for (k = 0; k < ks->k_nform; k++) {
		if (ks->k_form[k].f[0] == '%')
			ks->k_pctlit = 1;
		for (d = 1; d < 3 && d < ks->k_form[k].len; d++)
			if (KV_BLANK(ks->k_form[k].f[d]))
				ks->k_blank = 1;
		if (ks->k_form[k].len < 2) {
			ks->k_short = 1;
			continue;
		}
		t.f = ks->k_form[k].f + 1;
		t.len = ks->k_form[k].len - 1;
		t.flags = ks->k_form[k].flags;
		for (d = 0; d < 256; d++) {
			if (!kv_starts(&t, (unsigned char)d))
				continue;
			two[0] = (char)d;
			for (e = 0; e < 256; e++) {
				two[1] = (char)e;
				if (rd_kv_try(&t, two, 2, 0, &x) != 0)
					ks->k_tail[d][e >> 3] |=
					    (uint8_t)(1u << (e & 7));
			}
		}
	}
}

static int
kv_buckets(struct redact_keys *ks)
{
	size_t k, c, d, e;
	char two[2];

	for (k = 0; k < ks->k_nform; k++) {
		for (c = 0; c < 256; c++)
			if (kv_starts(&ks->k_form[k], (unsigned char)c))
				ks->k_nbucket[c]++;
	}
	for (c = 0; c < 256; c++) {
		if (ks->k_nbucket[c] == 0)
			continue;
		if ((ks->k_bucket[c] =
			    calloc(ks->k_nbucket[c], sizeof(size_t))) == NULL)
			return -1;
		ks->k_nbucket[c] = 0;
	}
	for (k = 0; k < ks->k_nform; k++) {
		for (c = 0; c < 256; c++)
			if (kv_starts(&ks->k_form[k], (unsigned char)c))
				ks->k_bucket[c][ks->k_nbucket[c]++] = k;
	}
	/* A form tried on two bytes alone says no only if no byte after
	 * them could make it match: that pair never starts it. */
	for (c = 0; c < 256; c++)
		for (k = 0; k < ks->k_nbucket[c]; k++)
			for (d = 0; d < 256; d++) {
				two[0] = (char)c;
				two[1] = (char)d;
				if (rd_kv_try(&ks->k_form[ks->k_bucket[c][k]],
					two, 2, 0, &e) != 0)
					ks->k_pair[c][d >> 3] |=
					    (uint8_t)(1u << (d & 7));
			}
	kv_tails(ks);
	rd_lane_table(ks->k_lane);
	for (c = 0; c < 256; c++)
		if (ks->k_nbucket[c] > 0)
			ks->k_lane[c] |= RD_L_KV;
	rd_lvec_kv(ks->k_lane, (const uint8_t(*)[32])ks->k_pair, ks->k_kv);
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

/* --- the keys ------------------------------------------------------------ */

static int
cmp_len_desc(const void *x, const void *y)
{
	size_t a = strlen(*(char *const *)x), b = strlen(*(char *const *)y);

	return a < b ? 1 : a > b ? -1 : 0;
}

/*
 * Keep value v (its forms derived) as the next k_sec: the form that is
 * v itself where there is one (no second copy), else a copy.
 */
static int
keys_keep(struct redact_keys *ks, const char *v)
{
	size_t i, n = strlen(v), n0;
	char *s = NULL;

	for (i = 0; i < ks->k_nform && s == NULL; i++)
		if (ks->k_form[i].len == n &&
		    memcmp(ks->k_form[i].f, v, n) == 0)
			s = ks->k_form[i].f;
	if (s == NULL) {
		if ((s = strdup(v)) == NULL)
			return -1;
		ks->k_own[ks->k_n] = 1;
	}
	ks->k_sec[ks->k_n] = s;
	ks->k_slen[ks->k_n++] = n;
	if (n > ks->k_maxlen)
		ks->k_maxlen = n;
	/* A secret whose head could be the end of a clamp marker: a marker
	 * split at the cut would change what mask_tail sees. */
	for (n0 = RD_PARTIAL_MIN; n0 < n; n0++)
		if (marker_end(v, n0))
			ks->k_noearly = 1;
	return 0;
}

struct redact_keys *
redact_keys_new(const char *const *secrets, size_t n)
{
	struct redact_keys *ks;
	const char **v = NULL;
	size_t i, nv = 0;

	if ((ks = calloc(1, sizeof(*ks))) == NULL)
		return NULL;
	if (n > 0 && ((v = calloc(n, sizeof(*v))) == NULL ||
			 (ks->k_sec = calloc(n, sizeof(char *))) == NULL ||
			 (ks->k_slen = calloc(n, sizeof(size_t))) == NULL ||
			 (ks->k_own = calloc(n, 1)) == NULL))
		goto fail;
	for (i = 0; i < n; i++)
		if (secrets[i] != NULL && secrets[i][0] != '\0')
			v[nv++] = secrets[i];
	if (nv > 1)
		qsort(v, nv, sizeof(*v), cmp_len_desc);
	if (nv > 0 &&
	    (ks->k_form = calloc(nv * KV_FORMS, sizeof(*ks->k_form))) == NULL)
		goto fail;
	for (i = 0; i < nv; i++)
		if (kv_derive(ks, v[i], nv * KV_FORMS) == -1 ||
		    keys_keep(ks, v[i]) == -1)
			goto fail;
	if (kv_buckets(ks) == -1)
		goto fail;
	free(v);
	return ks;
fail:
	free(v);
	redact_keys_free(ks);
	return NULL;
}

void
redact_keys_free(struct redact_keys *ks)
{
	size_t i;

	if (ks == NULL)
		return;
	for (i = 0; i < ks->k_n; i++)
		if (ks->k_own[i]) {
			explicit_bzero(ks->k_sec[i], ks->k_slen[i]);
			free(ks->k_sec[i]);
		}
	free(ks->k_sec);
	free(ks->k_slen);
	free(ks->k_own);
	for (i = 0; i < ks->k_nform; i++) {
		explicit_bzero(ks->k_form[i].f, ks->k_form[i].len);
		free(ks->k_form[i].f);
	}
	free(ks->k_form);
	for (i = 0; i < 256; i++)
		free(ks->k_bucket[i]);
	explicit_bzero(ks->k_pair, sizeof(ks->k_pair));
	explicit_bzero(ks->k_tail, sizeof(ks->k_tail));
	free(ks);
}
