/*
 * The scrubber's insides (SP-11), shared by its four files and by
 * nothing else: redact_keys.c derives the known values' forms and matches
 * one at a place, redact_rules.c holds DATA.md's pattern rules and their
 * passes, redact_gate.c decides which of those passes a line needs,
 * redact.c streams bytes through all three.
 */
#ifndef CORDON_REDACT_INT_H
#define CORDON_REDACT_INT_H

#include <stddef.h>
#include <stdint.h>

#define RD_PARTIAL_MIN 4 /* shortest cut-off secret prefix masked */
/*
 * Known values: a value of RD_FORM_MIN bytes or more is matched in every
 * derived form (reversed, hex, base64); one of RD_SEP_MIN or more also
 * with runs of at most RD_SEP_MAX ignorable bytes (blanks, line breaks,
 * unicode.c's other blanks (UNI_SPACE), zero-width characters, soft
 * hyphens, and the cleaner's visible form of an invisible code point,
 * "<U+200B>") between two of its characters.
 * Shorter values would match ordinary text too often.  The stage holds
 * only a match still open at the end of what came: at most
 * len * 3 + (len - 1) * RD_SEP_MAX bytes for a form of len characters.
 */
#define RD_FORM_MIN 4
#define RD_SEP_MIN  8
#define RD_SEP_MAX  10

/* A growable buffer whose old blocks are wiped. */
struct sbuf {
	char *b;
	size_t len, cap;
	size_t hw; /* bytes written since the last rd_sb_clear */
	int oom;
};

void rd_sb_add(struct sbuf *, const char *, size_t);
void rd_sb_wipe(struct sbuf *);
/* Wipes what was written since the last call (not the whole block). */
void rd_sb_clear(struct sbuf *);
void rd_sb_swap(struct sbuf *, struct sbuf *);

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

#define RD_LVEC_KV 64 /* rd_lvec_kv's tables */

/* The known values of one resolution; read-only once made. */
struct redact_keys {
	char **k_sec; /* the values, longest first */
	size_t *k_slen;
	unsigned char *k_own; /* k_sec[i] is a copy of its own (else a form) */
	size_t k_n;
	size_t k_maxlen;
	int k_noearly; /* a secret could hide in a clamp marker */
	struct kform *k_form;
	size_t k_nform;
	size_t *k_bucket[256]; /* forms that may start with this byte */
	size_t k_nbucket[256];
	/* Bit d of k_pair[c]: some form may start with the bytes c, d. */
	uint8_t k_pair[256][32];
	/* Bit e of k_tail[d]: some form from its second character on may
	 * start with the bytes d, e (rd_kv_at). */
	uint8_t k_tail[256][32];
	int k_short;  /* some form is one character */
	int k_pctlit; /* some form starts with a '%' of its own */
	int k_blank;  /* some form's second or third character is a blank */
	unsigned char k_lane[256];	/* rd_lane's table, with RD_L_KV */
	unsigned char k_kv[RD_LVEC_KV]; /* its pairs, for rd_lvec_block */
};

/* Bit s[1] of k_pair[s[0]]: some form may start with these two bytes. */
static inline unsigned
rd_kv_pair(const struct redact_keys *ks, const unsigned char *s)
{
	return ks->k_pair[s[0]][s[1] >> 3] >> (s[1] & 7) & 1u;
}

/* Form f at s[i]: 1 with *end, 0 no, -1 undecided (the buffer ends). */
int rd_kv_try(
    const struct kform *f, const char *s, size_t len, size_t i, size_t *end);
/*
 * Every form of ks that may start with s[i] tried there, knowing s[0..len)
 * only (rd_kv_try): 1 if one is undecided, and *best the end of the
 * longest match (0 none).  A 0 with *best 0 holds for any longer buffer
 * with the same bytes.
 */
int rd_kv_at(const struct redact_keys *ks, const char *s, size_t len, size_t i,
    size_t *best);
/* The same, trying every form without rd_kv_at's first test (which
 * says no only where every form would: test_outlane compares the two). */
int rd_kv_forms(const struct redact_keys *ks, const char *s, size_t len,
    size_t i, size_t *best);

/* May some form of ks match at s[i], knowing s[0..len) only. */
static inline int
rd_kv_may(const struct redact_keys *ks, const char *s, size_t len, size_t i)
{
	size_t e;

	return rd_kv_at(ks, s, len, i, &e) || e > 0;
}

/* A pattern matcher: at position i, the span [*rs, *re) to replace. */
typedef int (*rd_match)(
    const char *, size_t, size_t, size_t *, size_t *, const char **);

/* The output scrubber's patterns, in DATA.md's order; NULL-terminated. */
extern const rd_match rd_patterns[];
/* Its matchers (redact_rules.c), named for the line gate's walk. */
int rd_m_jwt(const char *, size_t, size_t, size_t *, size_t *, const char **);
int rd_m_bearer(
    const char *, size_t, size_t, size_t *, size_t *, const char **);
int rd_m_header(
    const char *, size_t, size_t, size_t *, size_t *, const char **);
int rd_m_keyval(
    const char *, size_t, size_t, size_t *, size_t *, const char **);
int rd_m_prefix(
    const char *, size_t, size_t, size_t *, size_t *, const char **);
int rd_m_home(const char *, size_t, size_t, size_t *, size_t *, const char **);

#define RD_KEY_MAX 128 /* the longest name a named matcher reads */

/* The database words of a "*_url" name (DATA.md); NULL-terminated. */
extern const char *const rd_db_words[];

/* A known key prefix: p, then at least min bytes of class cls. */
struct rd_prefix {
	const char *p;
	int (*cls)(unsigned char);
	size_t min; /* characters after the prefix */
};
/* DATA.md's key prefixes; ends with a NULL p. */
extern const struct rd_prefix rd_prefixes[];

/* First characters of rd_prefixes: a cheap reject. */
static inline int
rd_prefix_start(char c)
{
	return c == 'A' || c == 'x' || c == 'g' || c == 's' || c == 'r' ||
	       c == 'p' || c == 'w' || c == 'h' || c == 'y';
}

/* Class bits per byte (redact_rules.c): 1 [A-Za-z0-9], 2 [_-]. */
extern const unsigned char rd_cls[256];

static inline int
rd_is_word(unsigned char c) /* [A-Za-z0-9_-] */
{
	return rd_cls[c] != 0;
}

static inline int
rd_is_key(unsigned char c) /* [A-Za-z0-9_.-] */
{
	return rd_is_word(c) || c == '.';
}

/* The length of the run of cls bytes at s[i]. */
static inline size_t
rd_run(const char *s, size_t len, size_t i, int (*cls)(unsigned char))
{
	size_t j = i;

	while (j < len && cls((unsigned char)s[j]))
		j++;
	return j - i;
}

/*
 * Which passes of rd_patterns would change s[0..len): bit k for
 * rd_patterns[k] (a clear bit: rd_pass would return 0).
 */
unsigned rd_may(const char *s, size_t len);
/*
 * The complete lines at the head of s[0..len) that need nothing, in one
 * pass over their bytes: the line gate lets each by (no matcher can
 * fire: rd_may would be 0), none holds a PEM "-----BEGIN" (its "-BE",
 * either case), none ends in the clamp marker's " chars]".  Their length
 * with their '\n's; conservative: the line it stops at may need nothing
 * either.
 */
size_t rd_plain_lines(const char *s, size_t len);
/*
 * The complete line s[0..len) (no '\n'), outside a PEM block, is one the
 * line stage sends as it is: no clamp marker ends it, no BEGIN of a
 * private key, no pattern that could match (rd_may).
 */
int rd_line_plain(const char *s, size_t len);
/*
 * The lane (redact_clean_feed): one pass over bytes as they come from the
 * agent, before the cleaner.  Its table holds per byte the gate's class
 * (the low five bits) and these flags.
 */
#define RD_L_CLS  0x1f
#define RD_L_STOP 0x20 /* not clean_plain_byte: kept only in clean_kept */
#define RD_L_NL	  0x40 /* '\n' */
#define RD_L_KV	  0x80 /* a known value's form may start with it */
/* The table without RD_L_KV (a keys' k_lane adds it). */
void rd_lane_table(unsigned char t[256]);
/*
 * The complete lines at the head of s[0..len) that the cleaner and the
 * line stage send as they are, when each stands at a line's start with
 * nothing held: every byte clean_plain_byte or in a UTF-8 sequence
 * clean_kept, at most line_max characters (as the cleaner counts) a
 * line, the line gate lets each by (as rd_plain_lines).  Their length
 * with their '\n's; conservative; *cont: the UTF-8 continuation bytes
 * in them (the length less *cont is their characters).  kv gets the
 * places among them where a form of ks may start (RD_L_KV, then
 * rd_kv_pair, then rd_kv_may on the place's line); when it is full, the
 * lines end before the line that has one more.
 */
#define RD_LANE_KV 64
struct rd_lane_kv {
	size_t n;
	size_t at[RD_LANE_KV];
};
size_t rd_lane(const char *s, size_t len, size_t line_max,
    const struct redact_keys *ks, struct rd_lane_kv *kv, size_t *cont);
/* With 1, rd_lane walks byte by byte only (for tests and fuzzers). */
void rd_lane_force_scalar(int);
/*
 * rd_lane's block test (redact_lane_x86.c): for the RD_LBLK bytes at p
 * (reading p[-2..RD_LBLK)), bit i of each mask for the byte p[i].  bad:
 * a byte the cleaner does not keep alone (RD_L_STOP); hi: a byte from
 * 0x80 on (of bad); cont: left 0, for rd_lane (the continuation bytes of
 * the UTF-8 sequences it found in the block); win: a window of the gate
 * ending there
 * that may have a bit but G_ASSIGN (every other has that one or none);
 * nl: '\n'; asg: the class G_ASSIGN_C; rb: ']'; kv: a place where a
 * form of the keys may start (kv from rd_lvec_kv, or NULL: reads
 * p[RD_LBLK] too).
 */
#define RD_LBLK 32
struct rd_lblk {
	uint32_t bad, hi, cont, win, nl, asg, rb, kv;
};
/* 1 if rd_lvec_block may be used, with the lane table (no RD_L_KV), the
 * gate's window table, its bit of ':' and '=' and their class. */
int rd_lvec_init(const unsigned char lane[256], const unsigned char *tab,
    unsigned abit, unsigned acls);
void rd_lvec_block(
    const unsigned char *p, const unsigned char *kv, struct rd_lblk *);
void rd_lvec_kv(const unsigned char lane[256], const uint8_t pair[256][32],
    unsigned char kv[RD_LVEC_KV]);
/*
 * One pass of m over in: 1 with the result in out, 0 if m matched
 * nowhere (out untouched: in is the result).
 */
int rd_pass(const struct sbuf *in, struct sbuf *out, rd_match m);
/*
 * The line so far, a (ending in a blank), is the input of the pass of m:
 * can no continuation change what that pass does to a?
 */
int rd_pass_closed(rd_match m, const struct sbuf *a);
/* Find "-----BEGIN ... PRIVATE KEY" / "-----END ... PRIVATE KEY" and the
 * end of its closing "-----". */
const char *rd_pem_find(
    const char *s, size_t len, const char *what, size_t *endoff);
/* Can this line be inside an open PEM block? */
int rd_pem_body(const char *s, size_t len);

static inline int
rd_is_blank(unsigned char c)
{
	return c == ' ' || c == '\t';
}

#endif
