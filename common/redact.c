/*
 * Streaming scrubber (SP-11, DATA.md "Output scrubbing"), the driver.  Two
 * stages: the known-value stage masks every form of every resolved secret
 * value (redact_keys.c) over the raw stream, across lines and chunks,
 * holding only a match still open; the line stage holds the partial line
 * and applies the pattern rules (redact_rules.c) in DATA.md's order, only
 * the passes the line gate (redact_gate.c) says a line needs, PEM blocks
 * across lines.  Touches only *out.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "redact.h"
#include "redact_int.h"
#include "sanitize.h"
#include "unicode.h"

#ifndef RD_HOLD_MAX /* the differential fuzzer builds with a small one */
#define RD_HOLD_MAX (64 * 1024) /* a line longer than this is cut */
#endif
#define RD_CUT_TOKEN_MIN 8    /* shortest token-like run masked at a cut */
#define RD_KV_RESCAN	 4096 /* a longer open tail is rescanned geometrically */

struct redact {
	const struct redact_keys *r_keys; /* shared, never NULL */
	struct sbuf r_hold;		  /* partial line */
	struct sbuf r_a, r_b;
	int r_in_pem;
	size_t r_done;	/* bytes of the held line flushed early */
	size_t r_retry; /* no early flush before the hold is this long */
	int r_cut;	/* the stream was cut short (redact_cut) */
	/* The known-value stage, ahead of the line stage. */
	struct sbuf r_kv; /* its undecided tail */
	size_t r_kvnext;  /* no rescan before the tail is this long */
};

static const struct redact_keys rd_nokeys;

/* --- small buffer ------------------------------------------------------ */

void
rd_sb_add(struct sbuf *s, const char *p, size_t n)
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
	if (s->len > s->hw)
		s->hw = s->len;
}

void
rd_sb_clear(struct sbuf *s)
{
	if (s->b != NULL)
		explicit_bzero(s->b, s->hw);
	s->hw = 0;
}

void
rd_sb_wipe(struct sbuf *s)
{
	if (s->b != NULL)
		explicit_bzero(s->b, s->cap);
	free(s->b);
	memset(s, 0, sizeof(*s));
}

static void line_feed(struct redact *, const char *, size_t, struct evbuffer *);

/*
 * The first place at or after i, before the last byte, where a form may
 * start (rd_kv_pair), or the last byte: four places a step, their first
 * bytes (k_nbucket) before their pairs, without a branch between them.
 */
static size_t
kv_next(const struct redact_keys *ks, const char *s, size_t i, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	for (; i + 4 < n; i += 4) {
		if ((ks->k_nbucket[u[i]] | ks->k_nbucket[u[i + 1]] |
			ks->k_nbucket[u[i + 2]] | ks->k_nbucket[u[i + 3]]) == 0)
			continue;
		if (rd_kv_pair(ks, u + i) | rd_kv_pair(ks, u + i + 1) |
		    rd_kv_pair(ks, u + i + 2) | rd_kv_pair(ks, u + i + 3))
			break;
	}
	for (; i + 1 < n; i++)
		if (rd_kv_pair(ks, u + i))
			break;
	return i;
}

/*
 * Mask every form in the held tail, leftmost first, the longest match at
 * a place; send what is decided on to the line stage and keep the rest
 * (from the first place where a match is still open).  final: the stream
 * ends, nothing is open.
 */
static void
kv_run(struct redact *r, int final, struct evbuffer *out)
{
	const struct redact_keys *ks = r->r_keys;
	struct sbuf *h = &r->r_kv;
	const char *s = h->b;
	size_t n = h->len, i = 0, lit = 0, best;

	while (i < n) {
		unsigned char c;

		if ((i = kv_next(ks, s, i, n)) >= n)
			break;
		c = (unsigned char)s[i];
		if (ks->k_nbucket[c] == 0 ||
		    (i + 1 < n &&
			!(ks->k_pair[c][(unsigned char)s[i + 1] >> 3] &
			    1u << ((unsigned char)s[i + 1] & 7)))) {
			i++;
			continue;
		}
		if (rd_kv_at(ks, s, n, i, &best) && !final)
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
	if (r->r_keys->k_nform == 0) {
		line_feed(r, in, len, out);
		return;
	}
	if (len == 0)
		return; /* nothing new to decide on (and maybe no tail yet) */
	rd_sb_add(&r->r_kv, in, len);
	if (r->r_kv.oom) {
		/* Fail closed: drop what is held. */
		rd_sb_wipe(&r->r_kv);
		line_feed(r, REDACT_MASK, 3, out);
		return;
	}
	/* A long open match is tried again once the tail grew by a
	 * quarter: linear overall. */
	if (r->r_kv.len >= r->r_kvnext)
		kv_run(r, 0, out);
}
void
rd_sb_swap(struct sbuf *a, struct sbuf *b)
{
	struct sbuf t = *a;

	*a = *b;
	*b = t;
}

/*
 * A secret cut short, by the cleaner's line clamp (the text before
 * " … [+N chars]") or by the end of the stream (a byte cap): a tail of at
 * least RD_PARTIAL_MIN bytes that is a prefix of a secret goes too.
 */
static void
mask_tail(struct redact *r, struct sbuf *a, struct sbuf *b, size_t end)
{
	const struct redact_keys *ks = r->r_keys;
	size_t k, n;

	for (k = 0; k < ks->k_n; k++)
		for (n = ks->k_slen[k] - 1 < end ? ks->k_slen[k] - 1 : end;
		     n >= RD_PARTIAL_MIN; n--) {
			if (memcmp(a->b + end - n, ks->k_sec[k], n) != 0)
				continue;
			b->len = 0;
			rd_sb_add(b, a->b, end - n);
			rd_sb_add(b, REDACT_MASK, 3);
			rd_sb_add(b, a->b + end, a->len - end);
			rd_sb_swap(a, b);
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
	rd_sb_add(b, a->b, k);
	rd_sb_add(b, REDACT_MASK, 3);
	rd_sb_add(b, a->b + end, a->len - end);
	rd_sb_swap(a, b);
}

/* Where the cleaner's clamp marker " … [+N chars]" ends this line, if. */
static int
clamp_marker(const struct sbuf *a, size_t *at)
{
	static const char mk[] = " \xE2\x80\xA6 [+";
	const char *p = NULL, *q = a->b;
	size_t i, left = a->len;

	/* It ends the line (below): a line that does not end so has none. */
	if (a->len < 14 || memcmp(a->b + a->len - 7, " chars]", 7) != 0)
		return 0;
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

/*
 * PEM private key blocks in the line in r_a: everything from BEGIN to END
 * goes, across lines.  The line's '\n' stays (nl) unless the line went
 * whole inside a block; what is left of nl.
 */
static int
pem_strip(struct redact *r, int nl)
{
	struct sbuf *a = &r->r_a, *b = &r->r_b;
	const char *q;
	size_t e;

	for (;;) {
		if (r->r_in_pem) {
			if ((q = rd_pem_find(a->b, a->len, "-----END", &e)) ==
				NULL &&
			    !rd_pem_body(a->b, a->len)) {
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
			rd_sb_add(b, a->b + e, a->len - e);
			rd_sb_swap(a, b);
			if (a->len == 0 && nl)
				nl = 0;
			continue;
		}
		if ((q = rd_pem_find(a->b, a->len, "-----BEGIN", &e)) == NULL)
			break;
		b->len = 0;
		rd_sb_add(b, a->b, (size_t)(q - a->b));
		rd_sb_add(b, REDACT_MASK, 3);
		r->r_in_pem = 1;
		/* The rest of the line is searched for the END marker. */
		{
			size_t pre = b->len;

			rd_sb_add(b, a->b + e, a->len - e);
			rd_sb_swap(a, b);
			if ((q = rd_pem_find(a->b + pre, a->len - pre,
				 "-----END", &e)) == NULL) {
				a->len = pre;
				break;
			}
			r->r_in_pem = 0;
			b->len = 0;
			rd_sb_add(b, a->b, pre);
			rd_sb_add(b, a->b + pre + e, a->len - pre - e);
			rd_sb_swap(a, b);
		}
	}
	return nl;
}

/* Scrub one line (with its '\n' if it had one) into out; final: the
 * stream ends here. */
static void
scrub_line(struct redact *r, const char *line, size_t len, int nl, int final,
    struct evbuffer *out)
{
	struct sbuf *a = &r->r_a, *b = &r->r_b;
	unsigned may;
	size_t k, e;

	/* Secret values went in the known-value stage already. */
	a->len = 0;
	rd_sb_add(a, line, len);
	if (a->len > 0 && clamp_marker(a, &e)) {
		if (r->r_keys->k_n > 0)
			mask_tail(r, a, b, e);
		if (clamp_marker(a, &e))
			mask_cut_token(a, b, e);
	} else if (a->len > 0 && final) {
		if (r->r_keys->k_n > 0)
			mask_tail(r, a, b, a->len);
		if (r->r_cut)
			mask_cut_token(a, b, a->len);
	}
	nl = pem_strip(r, nl);
	/* Only the passes that would change the line run (rd_may: one walk
	 * over it); after a change the rest are looked for again. */
	may = a->len > 0 ? rd_may(a->b, a->len) : 0;
	for (k = 0; rd_patterns[k] != NULL && may >> k != 0; k++) {
		if (a->len == 0)
			break;
		if (!(may & 1u << k))
			continue;
		if (rd_pass(a, b, rd_patterns[k])) {
			rd_sb_swap(a, b);
			may = a->len > 0 ? rd_may(a->b, a->len) : 0;
		}
	}
	if (a->oom || b->oom) {
		/* Fail closed: nothing of this line leaves. */
		(void)evbuffer_add(out, REDACT_MASK, 3);
		a->oom = b->oom = 0;
	} else if (a->len > 0)
		(void)evbuffer_add(out, a->b, a->len);
	if (nl)
		(void)evbuffer_add(out, "\n", 1);
	rd_sb_clear(a);
	rd_sb_clear(b);
}

/* --- early flush: a prefix of the held line that is already final ----- */

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
	const struct redact_keys *ks = r->r_keys;
	struct sbuf *a = &r->r_a, *b = &r->r_b;
	size_t k;
	int ok = 0;

	/* Whether an open PEM block goes on depends on the whole line. */
	if (r->r_in_pem)
		return 0;
	a->len = 0;
	rd_sb_add(a, s, c);
	if (a->len == 0 || !rd_is_blank((unsigned char)a->b[a->len - 1]))
		goto out;
	/* mask_tail: a cut-off secret before a clamp marker that starts
	 * at or after the blank, or at the end of the stream. */
	for (k = 0; k < ks->k_n; k++)
		if (tail_heads(a->b, a->len, ks->k_sec[k], ks->k_slen[k], 1) ||
		    tail_heads(
			a->b, a->len - 1, ks->k_sec[k], ks->k_slen[k], 1))
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
		if (!rd_pass_closed(rd_patterns[k], a))
			goto out;
		if (rd_pass(a, b, rd_patterns[k]))
			rd_sb_swap(a, b);
		if (a->len == 0 ||
		    !rd_is_blank((unsigned char)a->b[a->len - 1]))
			goto out;
	}
	ok = !a->oom && !b->oom;
out:
	a->oom = b->oom = 0;
	rd_sb_clear(a);
	rd_sb_clear(b);
	return ok;
}

void
redact_flush_partial(struct redact *r, struct evbuffer *out)
{
	struct sbuf *h = &r->r_hold;
	size_t keep, lim, c, tries = 0;

	if (r->r_keys->k_noearly || h->len == 0 || h->len < r->r_retry)
		return;
	/*
	 * An over-long line is cut at or after RD_HOLD_MAX + 1 - keep (or
	 * at a blank); a flush never goes past that, and always ends in a
	 * blank, so that cut never falls inside what already left.
	 */
	keep = r->r_keys->k_maxlen > 0 ? r->r_keys->k_maxlen - 1 : 0;
	if (keep + r->r_done > RD_HOLD_MAX + 1)
		return;
	lim = RD_HOLD_MAX + 1 - keep - r->r_done;
	if (lim > h->len)
		lim = h->len;
	for (c = lim; c > 0 && tries < 4; c--) {
		if (!rd_is_blank((unsigned char)h->b[c - 1]))
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

struct redact *
redact_new(const struct redact_keys *keys)
{
	struct redact *r;

	if (keys == NULL)
		keys = &rd_nokeys;
	/* An over-long line is cut keeping a secret's length of tail: a
	 * secret as long as half the hold cannot be kept. */
	if (keys->k_maxlen > RD_HOLD_MAX / 2 ||
	    (r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->r_keys = keys;
	return r;
}

/* The line stage: patterns, a line at a time. */
static void
line_feed(struct redact *r, const char *in, size_t len, struct evbuffer *out)
{
	char *nl;
	size_t n, cut, keep, off, run;

	rd_sb_add(&r->r_hold, in, len);
	if (r->r_hold.oom) {
		/* Fail closed: drop what is held. */
		rd_sb_wipe(&r->r_hold);
		r->r_done = r->r_retry = 0;
		(void)evbuffer_add(out, REDACT_MASK, 3);
		return;
	}
	/* Scrub every complete line, then move the rest down once.  Lines
	 * that need nothing leave together, straight from the hold: most
	 * are told in one pass over many (rd_plain_lines), the rest one at
	 * a time. */
	off = run = 0;
	while (off < r->r_hold.len) {
		if (!r->r_in_pem)
			off += rd_plain_lines(
			    r->r_hold.b + off, r->r_hold.len - off);
		if (off >= r->r_hold.len ||
		    (nl = memchr(
			 r->r_hold.b + off, '\n', r->r_hold.len - off)) == NULL)
			break;
		n = (size_t)(nl - (r->r_hold.b + off));
		if (!r->r_in_pem && rd_line_plain(r->r_hold.b + off, n)) {
			off += n + 1;
			continue;
		}
		if (off > run)
			(void)evbuffer_add(out, r->r_hold.b + run, off - run);
		scrub_line(r, r->r_hold.b + off, n, 1, 0, out);
		off += n + 1;
		run = off;
	}
	if (off > run)
		(void)evbuffer_add(out, r->r_hold.b + run, off - run);
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
	keep = r->r_keys->k_maxlen > 0 ? r->r_keys->k_maxlen - 1 : 0;
	cut = r->r_done + r->r_hold.len - keep;
	for (n = cut; n > cut / 2; n--) {
		if (n <= r->r_done) {
			cut = r->r_done;
			break;
		}
		if (rd_is_blank(
			(unsigned char)r->r_hold.b[n - r->r_done - 1])) {
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

/*
 * The lane is open where the scrubber holds nothing and stands at a
 * line's start (and the cleaner does too, clean_at_line): a line rd_lane
 * lets by then leaves both stages as it came, and both are where they
 * would be after it.
 */
static int
lane_open(const struct redact *r)
{
	return r->r_kv.len == 0 && r->r_kvnext == 0 && r->r_hold.len == 0 &&
	       r->r_done == 0 && !r->r_in_pem;
}

/*
 * The known-value stage on the lane's lines s[0..n): at each place rd_lane
 * found, every form the stage would try there, knowing only these bytes
 * (the stage's own, as the cleaner sends them on).  The lines end before
 * the first line where one says anything but no.
 */
static size_t
lane_kv(const struct redact_keys *ks, const char *s, size_t n,
    const struct rd_lane_kv *kv)
{
	size_t j, p;

	for (j = 0; j < kv->n && kv->at[j] < n; j++) {
		p = kv->at[j];
		if (!rd_kv_may(ks, s, n, p))
			continue;
		while (p > 0 && s[p - 1] != '\n')
			p--;
		return p;
	}
	return n;
}

void
redact_clean_feed(struct redact *r, struct clean *c, const char *in, size_t len,
    struct evbuffer *tmp, struct evbuffer *out)
{
	struct rd_lane_kv kv;
	size_t off = 0, n, k, lmax, min = 0, cont, all;
	const char *nl;
	int fits;

	/* Pieces may end at any line when every cleaned line (each byte
	 * up to 4, a one-byte value's mask 3 of them) fits the hold: no
	 * line is then cut where the pieces would decide.  Else one piece. */
	(void)clean_at_line(c, &lmax);
	fits = lmax <= (RD_HOLD_MAX - 64) / 12;
	while (off < len) {
		if (fits && clean_at_line(c, &lmax) && lane_open(r) &&
		    (all = rd_lane(in + off, len - off, lmax, r->r_keys, &kv,
			 &cont)) > 0 &&
		    (n = lane_kv(r->r_keys, in + off, all, &kv)) > 0) {
			(void)evbuffer_add(out, in + off, n);
			/* Each character one byte and its continuation
			 * bytes (counted again for fewer lines). */
			clean_passed(c, n,
			    n == all ? n - cont : uni_utf8_chars(in + off, n));
			r->r_retry = 0; /* as line_feed after whole lines */
			off += n;
			min = 0;
			continue;
		}
		/* Through both stages: to the end of the line, and after
		 * each miss in a row twice as far before the next try. */
		n = len - off < min || !fits ? len - off : min;
		nl = memchr(in + off + n, '\n', len - off - n);
		n = nl != NULL ? (size_t)(nl - in) + 1 - off : len - off;
		clean_feed(c, in + off, n, tmp);
		if ((k = evbuffer_get_length(tmp)) > 0) {
			redact_feed(r,
			    (const char *)evbuffer_pullup(tmp, (ev_ssize_t)k),
			    k, out);
			evbuffer_drain(tmp, k);
		}
		off += n;
		min = min == 0 ? 256 : min * 2;
	}
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
	if (r == NULL)
		return;
	rd_sb_wipe(&r->r_kv);
	rd_sb_wipe(&r->r_hold);
	rd_sb_wipe(&r->r_a);
	rd_sb_wipe(&r->r_b);
	free(r);
}

int
redact_buf(const struct redact_keys *keys, const char *in, size_t len, int cut,
    struct evbuffer *out)
{
	struct redact *r;

	if ((r = redact_new(keys)) == NULL)
		return -1;
	r->r_cut = cut;
	redact_feed(r, in, len, out);
	redact_finish(r, out);
	redact_free(r);
	return 0;
}
