/*
 * rd_lane's block test (SP-10, SP-11), 32 bytes at a time with AVX2 on
 * x86-64: for the bytes p[0..32) it gives, as bit masks, the places where
 * rd_lane's byte walk may do anything but the gate's step with nothing to
 * add to the line's windows.  rd_lane takes a block with no `bad` bit by
 * these masks alone (lane_block), and any other byte by byte, so each
 * mask must be a superset of the walk's own test at every place (and is,
 * as follows).
 *
 * - bad: the bytes the cleaner does not keep alone (RD_L_STOP), exactly:
 *   for a byte below 0x80 one bit of the lane table's own by (high
 *   nibble, low nibble); a byte of 0x80 or more is always one
 *   (rd_lvec_init checks), and hi has those alone.  rd_lane takes a block
 *   whose bad bytes are all hi when each is in a UTF-8 sequence the
 *   cleaner keeps (lane_hi); the other masks hold for those bytes too:
 *   the gate's class of each is 0, so it is in no class of asg and its
 *   nibbles pass wherever a window has class 0, and rd_lane adds to kv
 *   the ones with RD_L_KV (rd_lvec_kv's tables have bytes below 0x80
 *   alone as the first of a pair).
 * - kv: the places where a known value's form may start (RD_L_KV, then
 *   the pair of bytes: rd_kv_pair), by nibble tables of the keys' own
 *   (rd_lvec_kv); rd_lane then asks the table and the pair at each.
 * - rb: ']', the last byte of the clamp marker that line_stops reads.
 * - nl, asg: '\n', and the bytes of the gate's class of ':' and '=': a
 *   window has the bit G_ASSIGN exactly when it ends in one
 *   (rd_lvec_init checks), whatever its first two bytes.
 * - win: a window of three bytes ending at the place that may be one of
 *   the gate's windows with any other bit.  The windows come from the
 *   gate's table itself, each put into one of sixteen buckets; per bucket
 *   and per place in the window a byte passes if its low and its high
 *   nibble are each those of some byte of the window's class there (a
 *   product of the two sets: a superset of the class).  A window hits
 *   where its three places pass in one bucket.  The walk restarts its
 *   windows at 0 after each '\n', so the window it takes there is
 *   (0, 0, c) or (0, c, d): '\n' is itself of class 0, and a window whose
 *   first class is 0 passes any first byte, so the bytes (x, '\n', c) and
 *   ('\n', c, d) hit wherever those do.  rd_lane looks each hit up as the
 *   walk would (lane_window), so a hit that is no window costs time only.
 *
 * Which windows share a bucket decides how often a block has hits, never
 * what a bucket passes.  The block reads p[-2..32): the windows of its
 * first two places.  Other architectures, and a CPU without AVX2, build
 * and use the byte walk only (rd_lvec_init returns 0).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "redact_int.h"

/*
 * The keys' places where a form may start: bytes c below 0x80 with
 * RD_L_KV, one of eight buckets each (in turn), and per bucket the bytes
 * d for which some c of it has the pair (c, d).  Per place of the pair
 * the buckets a low and a high nibble pass: a superset of the pairs.
 */
void
rd_lvec_kv(const unsigned char lane[256], const uint8_t pair[256][32],
    unsigned char kv[RD_LVEC_KV])
{
	unsigned c, d, bit, n = 0;

	memset(kv, 0, RD_LVEC_KV);
	for (c = 0; c < 0x80; c++) {
		if (!(lane[c] & RD_L_KV))
			continue;
		bit = 1u << (n++ % 8);
		kv[c & 15] |= (unsigned char)bit;
		kv[16 + (c >> 4)] |= (unsigned char)bit;
		for (d = 0; d < 256; d++)
			if (pair[c][d >> 3] >> (d & 7) & 1u) {
				kv[32 + (d & 15)] |= (unsigned char)bit;
				kv[48 + (d >> 4)] |= (unsigned char)bit;
			}
	}
}

#if defined(__x86_64__)
#include <immintrin.h>

#define NB   16	 /* buckets: the bits of two bytes */
#define NWIN 256 /* more windows: no vector test */

/*
 * A lane table's bytes below 0x80 with flag f (with f 0, of class k), as
 * bit h of lo[l] for the byte h * 16 + l.
 */
static void
lo_table(
    const unsigned char lane[256], unsigned f, unsigned k, unsigned char lo[16])
{
	unsigned x;

	memset(lo, 0, 16);
	for (x = 0; x < 0x80; x++)
		if (f != 0 ? (lane[x] & f) != 0 : (lane[x] & RD_L_CLS) == k)
			lo[x & 15] |= (unsigned char)(1u << (x >> 4));
}

/* Per half of the buckets and window place: the buckets (bits) a low and
 * a high nibble pass. */
static unsigned char lv_lo[2][3][32], lv_hi[2][3][32];
/* The stop bytes below 0x80, and the high nibbles' bits (h & 7). */
static unsigned char lv_stop[32], lv_hib[32];
static unsigned char lv_asg[32]; /* the bytes of the class G_ASSIGN_C */

/* A window of the gate: per place the low and the high nibbles. */
struct lwin {
	unsigned lo[3], hi[3];
	double p;
};

/*
 * How often text has the printable byte x, roughly (letters by their
 * rank in English, capitals less, a blank most): only which windows share
 * a bucket depends on it, never what a bucket passes.
 */
static double
text_weight(unsigned x)
{
	static const char rank[] = "etaoinsrhldcumfpgwybvkxjqz";
	const char *r = memchr(rank, (int)(x | 0x20), sizeof(rank) - 1);

	if (x == ' ')
		return 30;
	if (r == NULL || ((x | 0x20) < 'a' || (x | 0x20) > 'z'))
		return 2;
	return (double)(sizeof(rank) - (size_t)(r - rank)) / (x < 'a' ? 8 : 1);
}

/* The share of printable text a nibble pair of sets passes. */
static double
pass_share(unsigned lo, unsigned hi)
{
	double in = 0, all = 0;
	unsigned x;

	for (x = 0x20; x < 0x7f; x++) {
		all += text_weight(x);
		if (lo >> (x & 15) & hi >> (x >> 4) & 1u)
			in += text_weight(x);
	}
	return in / all;
}

/* How often bucket b would hit on printable bytes with w in it. */
static double
bucket_p(int b, const struct lwin *w)
{
	double p = 1;
	unsigned l, h, j, x;

	for (j = 0; j < 3; j++) {
		l = w != NULL ? w->lo[j] : 0, h = w != NULL ? w->hi[j] : 0;
		for (x = 0; x < 16; x++) {
			l |= (lv_lo[b >> 3][j][x] >> (b & 7) & 1u) << x;
			h |= (lv_hi[b >> 3][j][x] >> (b & 7) & 1u) << x;
		}
		p *= pass_share(l, h);
	}
	return p;
}

/* The window of classes w (a window that starts with class 0 passes any
 * first byte: the walk's restart after a '\n'). */
static void
win_make(const unsigned char lane[256], unsigned w, struct lwin *lw)
{
	unsigned k, j, x;

	lw->p = 1;
	for (j = 0; j < 3; j++) {
		k = w >> (5 * (2 - j)) & 31;
		lw->lo[j] = lw->hi[j] = 0;
		for (x = 0; x < 256; x++)
			if ((j == 0 && k == 0) || (lane[x] & RD_L_CLS) == k) {
				lw->lo[j] |= 1u << (x & 15);
				lw->hi[j] |= 1u << (x >> 4);
			}
		lw->p *= pass_share(lw->lo[j], lw->hi[j]);
	}
}

static int
win_cmp(const void *a, const void *b)
{
	double pa = ((const struct lwin *)a)->p;
	double pb = ((const struct lwin *)b)->p;

	return pa < pb ? 1 : pa > pb ? -1 : 0;
}

/* Window w into the bucket it makes hit least more often. */
static void
win_put(const struct lwin *w)
{
	int b, pick = 0;
	double best = 2, d;
	unsigned j, x;

	for (b = 0; b < NB; b++)
		if ((d = bucket_p(b, w) - bucket_p(b, NULL)) < best) {
			best = d;
			pick = b;
		}
	for (j = 0; j < 3; j++)
		for (x = 0; x < 16; x++) {
			if (w->lo[j] >> x & 1u)
				lv_lo[pick >> 3][j][x] |=
				    (unsigned char)(1u << (pick & 7));
			if (w->hi[j] >> x & 1u)
				lv_hi[pick >> 3][j][x] |=
				    (unsigned char)(1u << (pick & 7));
		}
}

/*
 * The gate's windows with a bit but abit into the buckets, the widest
 * first.  0 if there are too many, or if abit is not exactly the bit of
 * the windows that end in the class acls.
 */
static int
lv_windows(const unsigned char lane[256], const unsigned char *tab,
    unsigned abit, unsigned acls)
{
	static struct lwin w[NWIN];
	size_t n = 0, k;
	unsigned x;

	for (x = 0; x < 1u << 15; x++) {
		if (((tab[x] & abit) != 0) != ((x & 31) == acls))
			return 0;
		if (!(tab[x] & ~abit))
			continue;
		if (n == NWIN)
			return 0;
		win_make(lane, x, &w[n++]);
	}
	qsort(w, n, sizeof(w[0]), win_cmp);
	for (k = 0; k < n; k++)
		win_put(&w[k]);
	return 1;
}

int
rd_lvec_init(const unsigned char lane[256], const unsigned char *tab,
    unsigned abit, unsigned acls)
{
	unsigned j, x;

	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2"))
		return 0;
	for (x = 0x80; x < 256; x++)
		if (!(lane[x] & RD_L_STOP))
			return 0;
	if (!lv_windows(lane, tab, abit, acls))
		return 0;
	lo_table(lane, RD_L_STOP, 0, lv_stop);
	lo_table(lane, 0, acls, lv_asg);
	for (x = 0; x < 16; x++) {
		lv_hib[x] = x < 8 ? (unsigned char)(1u << x) : 0;
		for (j = 0; j < 6; j++) {
			lv_lo[j / 3][j % 3][x + 16] = lv_lo[j / 3][j % 3][x];
			lv_hi[j / 3][j % 3][x + 16] = lv_hi[j / 3][j % 3][x];
		}
		lv_stop[x + 16] = lv_stop[x];
		lv_asg[x + 16] = lv_asg[x];
		lv_hib[x + 16] = lv_hib[x];
	}
	return 1;
}

/* Bit i: byte i of v is not 0. */
__attribute__((target("avx2"))) static inline uint32_t
nonzero(__m256i v)
{
	return ~(uint32_t)_mm256_movemask_epi8(
	    _mm256_cmpeq_epi8(v, _mm256_setzero_si256()));
}

/*
 * The bytes at q at window place j: their low and high nibbles, and per
 * half the buckets that pass them there.
 */
__attribute__((target("avx2"))) static inline void
place(const unsigned char *q, int j, __m256i *lo, __m256i *hi, __m256i w[2])
{
	const __m256i nib = _mm256_set1_epi8(0x0f);
	__m256i x = _mm256_loadu_si256((const void *)q);
	int k;

	*lo = _mm256_and_si256(x, nib);
	*hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), nib);
	for (k = 0; k < 2; k++)
		w[k] = _mm256_and_si256(
		    _mm256_shuffle_epi8(
			_mm256_loadu_si256((const void *)lv_lo[k][j]), *lo),
		    _mm256_shuffle_epi8(
			_mm256_loadu_si256((const void *)lv_hi[k][j]), *hi));
}

/* Where a pair of bytes at p may start a form (rd_lvec_kv's tables kv);
 * lo, hi: the nibbles of the bytes at p. */
__attribute__((target("avx2"))) static inline uint32_t
kv_pairs(
    const unsigned char *p, __m256i lo, __m256i hi, const unsigned char *kv)
{
	const __m256i nib = _mm256_set1_epi8(0x0f);
	__m256i y = _mm256_loadu_si256((const void *)(p + 1));

#define KV(k)                                                                  \
	_mm256_broadcastsi128_si256(                                           \
	    _mm_loadu_si128((const void *)(kv + 16 * k)))
	return nonzero(
	    _mm256_and_si256(_mm256_and_si256(_mm256_shuffle_epi8(KV(0), lo),
				 _mm256_shuffle_epi8(KV(1), hi)),
		_mm256_and_si256(
		    _mm256_shuffle_epi8(KV(2), _mm256_and_si256(y, nib)),
		    _mm256_shuffle_epi8(KV(3),
			_mm256_and_si256(_mm256_srli_epi16(y, 4), nib)))));
#undef KV
}

__attribute__((target("avx2"))) static void
block_avx2(const unsigned char *p, const unsigned char *kv, struct rd_lblk *b)
{
	__m256i x, lo, hi, hib, w0[2], w1[2], w[2];

	place(p - 2, 0, &lo, &hi, w0);
	place(p - 1, 1, &lo, &hi, w1);
	place(p, 2, &lo, &hi, w);
	x = _mm256_loadu_si256((const void *)p);
	b->win = nonzero(_mm256_or_si256(
	    _mm256_and_si256(_mm256_and_si256(w0[0], w1[0]), w[0]),
	    _mm256_and_si256(_mm256_and_si256(w0[1], w1[1]), w[1])));
	/* lo, hi: the block's own bytes. */
	hib = _mm256_shuffle_epi8(_mm256_loadu_si256((const void *)lv_hib), hi);
	b->nl = (uint32_t)_mm256_movemask_epi8(
	    _mm256_cmpeq_epi8(x, _mm256_set1_epi8('\n')));
	b->rb = (uint32_t)_mm256_movemask_epi8(
	    _mm256_cmpeq_epi8(x, _mm256_set1_epi8(']')));
	b->asg = nonzero(_mm256_and_si256(hib,
	    _mm256_shuffle_epi8(_mm256_loadu_si256((const void *)lv_asg), lo)));
	b->hi = (uint32_t)_mm256_movemask_epi8(x);
	b->cont = 0;
	b->bad =
	    b->hi | nonzero(_mm256_and_si256(hib,
			_mm256_shuffle_epi8(
			    _mm256_loadu_si256((const void *)lv_stop), lo)));
	b->kv = kv != NULL ? kv_pairs(p, lo, hi, kv) : 0;
}

void
rd_lvec_block(
    const unsigned char *p, const unsigned char *kv, struct rd_lblk *b)
{
	block_avx2(p, kv, b);
}
#else
int
rd_lvec_init(const unsigned char lane[256], const unsigned char *tab,
    unsigned abit, unsigned acls)
{
	(void)lane, (void)tab, (void)abit, (void)acls;
	return 0;
}

void
rd_lvec_block(
    const unsigned char *p, const unsigned char *kv, struct rd_lblk *b)
{
	(void)p, (void)kv;
	memset(b, 0xff, sizeof(*b));
	b->hi = b->cont = 0;
}
#endif
