/*
 * The scrubber's line gate (SP-11): which of redact_rules.c's pattern
 * passes a line needs.  rd_plain_lines lets by, in one pass, the complete
 * lines no pass changes; rd_may names, for a line it stops at, the passes
 * that would change it, by trying each matcher only where it can start.
 * Both are conservative: a pass they leave in may still change nothing,
 * a pass they leave out never changes a byte (fuzz_redact_stream proves
 * it against rd_pass).  Reads the rules' tables and matchers through
 * redact_int.h; pure, no allocation.
 */
#include <stdint.h>
#include <string.h>
#include <threads.h>

#include "redact_int.h"
#include "sanitize.h"

/* --- the line gate ----------------------------------------------------- */

/*
 * Before rd_may's walk, one pass over the line with a table look-up per
 * byte: can any matcher fire at all?  Every match holds one of a few
 * three-byte strings, compared case-folded (a superset):
 *   rd_m_jwt "eyJ", rd_m_bearer "bearer", rd_m_home "/home/", rd_m_prefix a
 * prefix's first three bytes (every prefix has three or more), or for a prefix
 * that holds one of prefix_rare's, that one; rd_m_header and
 * rd_m_keyval a ':' or '=' (after_assign), and a secret-looking name
 * (redact_key_secretish, which reads '-' and '.' as '_'): every header name
 * holds "aut", "[-._]ke" or "ike"; every name word "tok" (token), "[-._]ke"
 * (api_key and the other *_key), "ike" (apikey), "ecr" (secret), "ssw"
 * (password, passwd), "ede" (credential), "bea" (bearer) or "aut" (auth);
 * "_pat" and "_dsn" hold "[-._]pa" and "dsn"; a database URL name "[-._]ur" and
 * the first three bytes of one of rd_db_words; a name over RD_KEY_MAX is a run
 * of that many key bytes (looked for only when nothing else decides).  The
 * rarest three bytes of each word are the ones used. A line with none of these
 * goes without the walk (tests/fuzz's fuzz_redact_stream proves rd_may against
 * rd_pass), and the walk tries only the matchers whose strings the line holds:
 * the word matchers (JWT, Bearer, prefixes: G_WORD), /home/ (G_HOME), the named
 * ones (header, key=value: G_ASSIGN with a name).
 */
#define G_CLS_BITS 5
#define G_MASK	   ((1u << (3 * G_CLS_BITS)) - 1)
#define G_WORD	   1 /* rd_m_jwt, rd_m_bearer, rd_m_prefix may match */
#define G_NAME	   2 /* a secret-looking name, with G_ASSIGN */
#define G_URL	   4 /* "_url"/"_uri", with G_DB and G_ASSIGN */
#define G_DB	   8
#define G_ASSIGN   16 /* a ':' or '=' */
#define G_ASSIGN_C 29 /* its class */
#define G_PEM	   32 /* "-be": a PEM "-----BEGIN" (rd_plain_lines) */
#define G_HOME	   64 /* rd_m_home may match */

/* Byte classes: letters 1-26 (either case), '-' 27, '_' 28, ':' and '='
 * 29, '/' 30, '.' 31, any other byte 0 (digits too: a superset). */
static unsigned char rd_gcls[256];
static unsigned char rd_gtab[1u << (3 * G_CLS_BITS)];
static unsigned char rd_lcls[256]; /* rd_lane's table, no known values */
static once_flag rd_gonce = ONCE_FLAG_INIT;
static int rd_lvec;    /* rd_lvec_block may be used */
static int rd_lscalar; /* rd_lane_force_scalar */

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

/*
 * Three bytes of a prefix (rd_m_prefix matches it whole): its first three,
 * or one of these in it where the first three are common in text ("git"
 * in github_pat_, "aki" and "asi" case-folded in AKIA and ASIA).
 */
static const char *
prefix_rare(const char *p)
{
	static const char *const rare[] = {"hub", "KIA", "SIA", NULL};
	const char *q;
	size_t k;

	for (k = 0; rare[k] != NULL; k++)
		if ((q = strstr(p, rare[k])) != NULL)
			return q;
	return p;
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

	for (k = 0; k < 256; k++) {
		rd_gcls[k] = (unsigned char)gcls((unsigned char)k);
		rd_lcls[k] =
		    (unsigned char)(rd_gcls[k] |
				    (k == '\n' ? RD_L_NL
					: clean_plain_byte((unsigned char)k)
					    ? 0
					    : RD_L_STOP));
	}
	for (k = 0; word[k] != NULL; k++)
		gadd(word[k], G_WORD);
	for (p = rd_prefixes; p->p != NULL; p++)
		gadd(prefix_rare(p->p), G_WORD);
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
	rd_lvec = rd_lvec_init(rd_lcls, rd_gtab, G_ASSIGN, G_ASSIGN_C);
}

/*
 * Of the named matchers (header, key=value), with the windows of a line
 * (acc): 1 one may fire in s[0..len), 0 neither can.
 */
static int
rd_gate_named(unsigned acc, const unsigned char *u, size_t len)
{
	const size_t over = RD_KEY_MAX + 1;
	size_t i, a, b;

	if (!(acc & G_ASSIGN))
		return 0;
	if ((acc & G_NAME) || ((acc & G_URL) && (acc & G_DB)))
		return 1;
	/* A run of key bytes longer than any name: every run of over bytes
	 * holds one of the places looked at, each read out to its run's
	 * ends (or to over bytes). */
	for (i = over - 1; i < len; i += over) {
		if (!rd_is_key(u[i]))
			continue;
		for (a = i; a > 0 && i - a < over && rd_is_key(u[a - 1]); a--)
			;
		for (b = i + 1; b < len && b - a < over && rd_is_key(u[b]); b++)
			;
		if (b - a >= over)
			return 1;
	}
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
	for (k = p; k > 0 && rd_is_key((unsigned char)s[k - 1]); k--)
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

/*
 * Does the gate stop at the line s[0..n) with the windows acc?  The
 * named matchers by the line's windows first, then by the key runs
 * before its assignments; and the clamp marker's end.
 */
static int
line_stops(unsigned acc, const char *s, size_t n)
{
	return (acc & (G_PEM | G_WORD | G_HOME)) ||
	       (rd_gate_named(acc, (const unsigned char *)s, n) &&
		   rd_named_assign(s, n)) ||
	       (n >= 7 && s[n - 1] == ']' &&
		   memcmp(s + n - 7, " chars]", 7) == 0);
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
		if (line_stops(acc, s + start, i - start))
			return start;
		start = i + 1;
		h = 0;
		acc = 0;
	}
	return start;
}

static unsigned may_acc(const char *, size_t, unsigned);

/* rd_line_plain with the line's windows acc (rd_gate's, or more): a PEM
 * BEGIN needs the window "-be". */
static int
line_plain(const char *s, size_t len, unsigned acc)
{
	size_t e;

	if (len == 0)
		return 1;
	if (len >= 7 && memcmp(s + len - 7, " chars]", 7) == 0)
		return 0;
	return (!(acc & G_PEM) ||
		   rd_pem_find(s, len, "-----BEGIN", &e) == NULL) &&
	       may_acc(s, len, acc) == 0;
}

int
rd_line_plain(const char *s, size_t len)
{
	return line_plain(s, len, rd_gate(s, len));
}

void
rd_lane_table(unsigned char t[256])
{
	call_once(&rd_gonce, rd_gate_init);
	memcpy(t, rd_lcls, sizeof(rd_lcls));
}

/* rd_lane's walk: where it stands. */
struct lane {
	const char *s;
	const unsigned char *t; /* the lane table */
	const struct redact_keys *ks;
	struct rd_lane_kv *kv;
	size_t len, line_max, start, n;
	unsigned acc;
	uint32_t h;
	/* UTF-8 continuation bytes: of the line so far, of the lines taken,
	 * and of the sequence the walk is in still to come. */
	size_t cont, taken_cont;
	unsigned seq;
};

#define LANE_KV_LOOK 48 /* bytes rd_kv_may reads at most at a place */

/*
 * The place s[i] whose pair may start a form (RD_L_KV, rd_kv_pair): 1 if
 * one may match there, knowing only its line up to its '\n' (and
 * LANE_KV_LOOK bytes at most).  Those bytes are the known-value stage's
 * own when the lane takes the line, and lane_kv in redact.c knows at
 * least them: a no here is its no (rd_kv_may).  That keeps a pair that
 * is open on two bytes alone (a blank after a form's first character, a
 * '%') from stopping a block or filling kv.
 */
static int
lane_kv_at(const struct lane *l, size_t i)
{
	size_t n =
	    l->len - i - 1 < LANE_KV_LOOK ? l->len - i - 1 : LANE_KV_LOOK;
	const char *nl = memchr(l->s + i + 1, '\n', n);

	return rd_kv_may(
	    l->ks, l->s, nl != NULL ? (size_t)(nl - l->s) : i + 1 + n, i);
}

void
rd_lane_force_scalar(int on)
{
	rd_lscalar = on;
}

/*
 * The '\n' at s[i] ends the line: 1 if the lane takes it, 0 if not: a
 * line within the clamp that the gate lets by, or one it stops at that
 * the line stage would send as it is all the same (rd_line_plain, with
 * the windows the walk has: rd_gate's).
 * line_stops is asked only when its answer may be yes: it is no for a
 * line with no window but G_ASSIGN's (so a named matcher only for a name
 * over RD_KEY_MAX) that does not end in ']'.
 */
static inline int
lane_line(struct lane *l, size_t i)
{
	size_t n = i - l->start;
	unsigned a = l->acc;

	if (n - l->cont > l->line_max) /* in characters, as the cleaner */
		return 0;
	if (((a & ~G_ASSIGN) != 0 || (a != 0 && n > RD_KEY_MAX) ||
		(n >= 7 && l->s[i - 1] == ']')) &&
	    line_stops(a, l->s + l->start, n) &&
	    !line_plain(l->s + l->start, n, a))
		return 0;
	l->kv->n = l->n;
	l->start = i + 1;
	l->acc = l->h = 0;
	l->taken_cont += l->cont;
	l->cont = 0;
	return 1;
}

/*
 * The byte s[i] the cleaner does not keep alone: 1 if it is in a UTF-8
 * sequence the cleaner keeps as it is (clean_kept: one character, which
 * the line counts as such), 0 if the lane stops.  The sequence is read
 * whole where it starts; its later bytes only count down, each one
 * continuation byte of the line.
 */
static int
lane_utf8(struct lane *l, size_t i)
{
	size_t k;

	if (l->seq > 0) {
		l->seq--;
		l->cont++;
		return 1;
	}
	if ((k = clean_kept((const unsigned char *)l->s + i, l->len - i)) == 0)
		return 0;
	l->seq = (unsigned)k - 1;
	return 1;
}

/*
 * s[i..e) a byte at a time, with the cleaner's test and the known-value
 * stage's first one in the gate's table look-up: one read of each byte.
 * A byte with no flag takes the gate's step alone; one that may start a
 * form has its pair looked at, then takes the step; a '\n' gets its
 * line's verdict, a stop ends the walk.  0 where the lane stops.
 */
static int
lane_bytes(struct lane *l, size_t i, size_t e)
{
	const unsigned char *u = (const unsigned char *)l->s, *t = l->t;
	unsigned acc = l->acc, c;
	uint32_t h = l->h;

	for (; i < e; i++) {
		c = t[u[i]];
		if (c <= RD_L_CLS) {
			h = h << G_CLS_BITS | c;
			acc |= rd_gtab[h & G_MASK];
			continue;
		}
		if (c & RD_L_KV && rd_kv_pair(l->ks, u + i) &&
		    lane_kv_at(l, i)) {
			if (l->n == RD_LANE_KV)
				return 0;
			l->kv->at[l->n++] = i;
		}
		if (!(c & (RD_L_STOP | RD_L_NL)) ||
		    ((c & RD_L_STOP) && lane_utf8(l, i))) {
			h = h << G_CLS_BITS | (c & RD_L_CLS);
			acc |= rd_gtab[h & G_MASK];
			continue;
		}
		l->acc = acc;
		if ((c & RD_L_STOP) || !lane_line(l, i))
			return 0;
		acc = h = 0;
	}
	l->acc = acc;
	l->h = h;
	return 1;
}

/*
 * The gate's window that ends at u[q] as the byte walk has it: its
 * classes from the line's start on (after a '\n', or the walk's start,
 * which is never within two bytes of a block's).
 */
static inline unsigned
lane_window(const unsigned char *u, unsigned q)
{
	const unsigned char *p = u + q;
	unsigned w = rd_gcls[p[0]];

	if (p[-1] != '\n') {
		w |= (unsigned)rd_gcls[p[-1]] << G_CLS_BITS;
		if (p[-2] != '\n')
			w |= (unsigned)rd_gcls[p[-2]] << 2 * G_CLS_BITS;
	}
	return rd_gtab[w];
}

/* After the block at u: the line's windows so far (acc has them) and the
 * window the next byte ends (the last two bytes, after a '\n'). */
static inline void
lane_block_end(struct lane *l, const unsigned char *u, const struct rd_lblk *b,
    uint64_t from)
{
	if (b->asg & from)
		l->acc |= G_ASSIGN;
	l->h = b->nl >> (RD_LBLK - 1) ? 0 : rd_gcls[u[RD_LBLK - 1]];
	if (!(b->nl >> (RD_LBLK - 2) & 3u))
		l->h |= (uint32_t)rd_gcls[u[RD_LBLK - 2]] << G_CLS_BITS;
}

/* The continuation bytes at the places m of a block (most have none: no
 * count then). */
static inline size_t
lane_conts(uint64_t m)
{
	return m == 0 ? 0 : (size_t)__builtin_popcountll(m);
}

/*
 * The block s[i..i+RD_LBLK) by its masks b (no stop in it) when it is
 * plain: no window hit has a bit but G_ASSIGN's, no place where a form
 * may start has its pair, and every line that ends in it is let by
 * whatever the windows (with none but G_ASSIGN's: at most line_max and
 * RD_KEY_MAX bytes, no ']' before its '\n').  Then each ends as
 * lane_line would end it.  1 if taken so, 0 if lane_block walks it.
 */
static int
lane_plain(struct lane *l, size_t i, const struct rd_lblk *b)
{
	const unsigned char *u = (const unsigned char *)l->s + i;
	size_t lim = l->line_max < RD_KEY_MAX ? l->line_max : RD_KEY_MAX;
	uint32_t m, nl = b->nl;
	unsigned acc = 0, q;

	for (m = b->win & ~nl; m != 0; m &= m - 1)
		acc |= lane_window(u, (unsigned)__builtin_ctz(m));
	for (m = b->kv; m != 0; m &= m - 1) {
		q = (unsigned)__builtin_ctz(m);
		if ((l->t[u[q]] & RD_L_KV) && rd_kv_pair(l->ks, u + q) &&
		    lane_kv_at(l, i + q))
			return 0;
	}
	if (acc & ~G_ASSIGN)
		return 0;
	if (nl == 0) {
		l->cont += lane_conts(b->cont);
		lane_block_end(l, u, b, ~0ull);
		return 1;
	}
	q = (unsigned)__builtin_ctz(nl);
	if ((l->acc & ~G_ASSIGN) || i + q - l->start > lim ||
	    (lim < RD_LBLK && (nl & (nl - 1))) || (b->rb << 1 & nl) ||
	    ((nl & 1u) && u[-1] == ']'))
		return 0;
	q = 31 - (unsigned)__builtin_clz(nl);
	l->kv->n = l->n;
	l->start = i + q + 1;
	l->acc = 0;
	l->taken_cont += l->cont + lane_conts(b->cont & ((2ull << q) - 1));
	l->cont = lane_conts(b->cont & ~((2ull << q) - 1));
	lane_block_end(l, u, b, ~0ull << (q + 1));
	return 1;
}

/*
 * The block s[i..i+RD_LBLK) by its masks b (no stop in it), as lane_bytes
 * would take it: in order, the places where a form may start, the '\n's,
 * and the windows that may have a bit but G_ASSIGN's, looked up as the
 * byte walk would; G_ASSIGN where the line has a ':' or '='.  Every other
 * window has no bit or G_ASSIGN's alone (rd_lvec_block).  0 where the
 * lane stops.
 */
static int
lane_block(struct lane *l, size_t i, const struct rd_lblk *b)
{
	const unsigned char *u = (const unsigned char *)l->s + i;
	uint32_t ev = b->nl | b->kv | b->win;
	uint64_t from = ~0ull; /* the line's part of the block */
	unsigned q;

	if (lane_plain(l, i, b))
		return 1;
	while (ev != 0) {
		q = (unsigned)__builtin_ctz(ev);
		ev &= ev - 1;
		if ((b->kv >> q & 1u) && (l->t[u[q]] & RD_L_KV) &&
		    rd_kv_pair(l->ks, u + q) && lane_kv_at(l, i + q)) {
			if (l->n == RD_LANE_KV)
				return 0;
			l->kv->at[l->n++] = i + q;
		}
		if (!(b->nl >> q & 1u)) {
			if (b->win >> q & 1u)
				l->acc |= lane_window(u, q);
			continue;
		}
		if (b->asg & from & ((1ull << q) - 1))
			l->acc |= G_ASSIGN;
		l->cont += lane_conts(b->cont & from & ((1ull << q) - 1));
		if (!lane_line(l, i + q))
			return 0;
		from = ~0ull << (q + 1);
	}
	l->cont += lane_conts(b->cont & from);
	lane_block_end(l, u, b, from);
	return 1;
}

/*
 * The bytes from 0x80 on of the block s[i..i+RD_LBLK) (b->hi, its only
 * stops), in order: 1 if each is in a UTF-8 sequence the cleaner keeps
 * as it is (lane_utf8's test, a sequence read whole where it starts,
 * which may be in the block before), with b->cont their continuation
 * bytes and in b->kv the ones a form may start with; 0 (nothing
 * changed) if lane_bytes walks the block.
 */
static int
lane_hi(struct lane *l, size_t i, struct rd_lblk *b)
{
	const unsigned char *u = (const unsigned char *)l->s + i;
	unsigned seq = l->seq, q;
	uint32_t m, cont = 0, kv = 0;
	size_t k;

	for (m = b->hi; m != 0; m &= m - 1) {
		q = (unsigned)__builtin_ctz(m);
		if (l->t[u[q]] & RD_L_KV)
			kv |= 1u << q;
		if (seq > 0) {
			seq--;
			cont |= 1u << q;
			continue;
		}
		if ((k = clean_kept(u + q, l->len - i - q)) == 0)
			return 0;
		seq = (unsigned)k - 1;
	}
	l->seq = seq;
	b->cont = cont;
	b->kv |= kv;
	return 1;
}

/*
 * rd_plain_lines' walk on the bytes before the cleaner.  Where the vector
 * test may be used, a block with no stop in it is taken by its masks
 * (lane_block), any other byte by byte (lane_bytes); the two take the
 * same lines, with the same places in kv (test_outlane, fuzz_cleaner).
 */
size_t
rd_lane(const char *s, size_t len, size_t line_max,
    const struct redact_keys *ks, struct rd_lane_kv *kv, size_t *cont)
{
	struct lane l = {s, NULL, ks, kv, len, line_max, 0, 0, 0, 0, 0, 0, 0};
	const unsigned char *kvt;
	struct rd_lblk b;
	size_t i = 0, e;
	int vec;

	call_once(&rd_gonce, rd_gate_init);
	l.t = ks->k_nform > 0 ? ks->k_lane : rd_lcls;
	kvt = ks->k_nform > 0 ? ks->k_kv : NULL;
	vec = rd_lvec && !rd_lscalar;
	kv->n = 0;
	/* The last byte's pair is not known: it is taken only as a line's
	 * end that no form may start with (below). */
	while (i + 1 < len) {
		if (vec && i >= 2 && len - i > RD_LBLK) {
			rd_lvec_block((const unsigned char *)s + i, kvt, &b);
			if (b.bad == 0 ||
			    (b.bad == b.hi && lane_hi(&l, i, &b))) {
				if (!lane_block(&l, i, &b))
					goto out;
				i += RD_LBLK;
				continue;
			}
		}
		e = vec && len - 1 - i > RD_LBLK ? i + RD_LBLK : len - 1;
		if (!lane_bytes(&l, i, e))
			goto out;
		i = e;
	}
	if (i < len && (l.t[(unsigned char)s[i]] & ~RD_L_CLS) == RD_L_NL)
		(void)lane_line(&l, i);
out:
	*cont = l.taken_cont;
	return l.start;
}

/* --- which passes a line needs ----------------------------------------- */

/*
 * rd_may's verdict per matcher: 1 once it is decided (found, or not
 * tried: the line's windows leave it shut), 0 while it is still looked
 * for.
 */
struct may {
	int jwt, bearer, header, keyval, prefix, home;
};

/*
 * A header name and a secret-looking key fire only at the start of a key
 * run that an assignment follows (after_assign: a quote, blanks, then ':'
 * or '='): from each ':' and '=', back over the blanks and the quote to
 * that run.  The stretches walked back lie between two assignments, so
 * each byte is read once.
 */
static void
may_named(const char *s, size_t len, struct may *f)
{
	size_t i, p, k, rs, re;
	const char *rep;

	for (i = 0; !(f->header && f->keyval) && i < len; i++) {
		if ((s[i] != ':' && s[i] != '=') ||
		    (k = assign_key(s, i, &p)) == i)
			continue;
		if (!f->header && rd_m_header(s, len, k, &rs, &re, &rep))
			f->header = 1;
		if (!f->keyval && rd_m_keyval(s, len, k, &rs, &re, &rep))
			f->keyval = 1;
	}
}

/* /home/ where it is. */
static void
may_home(const char *s, size_t len, struct may *f)
{
	size_t p, rs, re;
	const char *rep, *q;

	for (p = 0; !f->home && p < len &&
		    (q = memmem(s + p, len - p, "/home/", 6)) != NULL;
	     p = (size_t)(q - s) + 1)
		if (rd_m_home(s, len, (size_t)(q - s), &rs, &re, &rep))
			f->home = 1;
}

/*
 * The word matchers at the word starts of the key runs ([A-Za-z0-9_.-]+):
 * a run's start, or after a '.' in it.  The tests before each call are
 * the matcher's own first ones.
 */
static void
may_words(const char *s, size_t len, struct may *f)
{
	size_t i, p, k, rs, re;
	const char *rep;

	for (i = 0; !(f->jwt && f->bearer && f->prefix) && i < len;) {
		if (!rd_is_key((unsigned char)s[i])) {
			i++;
			continue;
		}
		k = rd_run(s, len, i, rd_is_key);
		for (p = i; !(f->jwt && f->bearer && f->prefix) && p < i + k;
		     p++) {
			unsigned char c = (unsigned char)s[p];

			if (p > i && s[p - 1] != '.')
				continue; /* not a word start */
			if (!f->jwt && c == 'e' &&
			    rd_m_jwt(s, len, p, &rs, &re, &rep))
				f->jwt = 1;
			if (!f->bearer && (c | 0x20) == 'b' &&
			    rd_m_bearer(s, len, p, &rs, &re, &rep))
				f->bearer = 1;
			if (!f->prefix && rd_prefix_start((char)c) &&
			    rd_m_prefix(s, len, p, &rs, &re, &rep))
				f->prefix = 1;
		}
		i += k;
	}
}

/* The found matchers as rd_may's bits, in rd_patterns' order. */
static unsigned
may_bits(const struct may *f)
{
	unsigned m = 0;
	size_t k;

	for (k = 0; rd_patterns[k] != NULL; k++) {
		if (rd_patterns[k] == rd_m_jwt)
			m |= (unsigned)f->jwt << k;
		else if (rd_patterns[k] == rd_m_bearer)
			m |= (unsigned)f->bearer << k;
		else if (rd_patterns[k] == rd_m_header)
			m |= (unsigned)f->header << k;
		else if (rd_patterns[k] == rd_m_keyval)
			m |= (unsigned)f->keyval << k;
		else if (rd_patterns[k] == rd_m_prefix)
			m |= (unsigned)f->prefix << k;
		else if (rd_patterns[k] == rd_m_home)
			m |= (unsigned)f->home << k;
		else
			m |= 1u << k; /* a pattern not looked for here: runs */
	}
	return m;
}

/*
 * The passes of rd_patterns that would change s[0..len): bit k for
 * rd_patterns[k].  Each matcher is tried only where it can start, found
 * in one walk over the key runs ([A-Za-z0-9_.-]+): JWT, Bearer and the
 * key prefixes at a word start (the run's start, or after a '.' in it),
 * a header name and key=value at the run's start, /home/ at a '/'
 * between them.  rd_pass tries the same matcher at a superset of these
 * places on the same input, and a matcher fires nowhere else, so a
 * clear bit is a pass that would copy its input unchanged.  acc: the
 * line's windows (rd_gate's; more only tries more).
 */
static unsigned
may_acc(const char *s, size_t len, unsigned acc)
{
	struct may f;
	int word, named;

	/* The matchers the line's windows leave open; the others count as
	 * done (not found) from the start. */
	word = (acc & G_WORD) != 0;
	named = rd_gate_named(acc, (const unsigned char *)s, len);
	f.home = !(acc & G_HOME);
	f.jwt = f.bearer = f.prefix = !word;
	f.header = f.keyval = !named;
	may_named(s, len, &f);
	may_home(s, len, &f);
	may_words(s, len, &f);
	/* Found, of those tried. */
	f.jwt &= word;
	f.bearer &= word;
	f.prefix &= word;
	f.header &= named;
	f.keyval &= named;
	f.home &= (acc & G_HOME) != 0;
	return may_bits(&f);
}

unsigned
rd_may(const char *s, size_t len)
{
	return may_acc(s, len, rd_gate(s, len));
}
