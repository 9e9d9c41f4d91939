/*
 * A mission option's pattern (MI-2): bounded, without backreferences,
 * cheap for glibc's regcomp and regexec (a size budget and a star height
 * of 1), and compiling.  Pure: no I/O, no clock, no globals; refusals are
 * fixed phrases.
 */
#include <regex.h>
#include <string.h>

#include "mission.h"

#define MI_PATTERN_COST 1024 /* rough regcomp node budget */

/* Saturating a * b and a + b below the pattern budget. */
static unsigned long
cost_mul(unsigned long a, unsigned long b)
{
	if (a != 0 && b > (MI_PATTERN_COST + 1) / a)
		return MI_PATTERN_COST + 1;
	return a * b;
}

static unsigned long
cost_add(unsigned long a, unsigned long b)
{
	return a + b > MI_PATTERN_COST ? MI_PATTERN_COST + 1 : a + b;
}

/* Past a bracket expression starting at s[i] == '['. */
static size_t
skip_bracket(const char *s, size_t len, size_t i)
{
	i++;
	if (i < len && s[i] == '^')
		i++;
	if (i < len && s[i] == ']')
		i++;
	while (i < len && s[i] != ']') {
		if (s[i] == '[' && i + 1 < len &&
		    (s[i + 1] == ':' || s[i + 1] == '=' || s[i + 1] == '.')) {
			char c = s[i + 1];

			for (i += 2;
			     i + 1 < len && !(s[i] == c && s[i + 1] == ']');
			     i++)
				;
			i += 2;
			continue;
		}
		i++;
	}
	return i < len ? i + 1 : len;
}

/* Digits at s[*i], saturating above the budget. */
static unsigned long
digits(const char *s, size_t len, size_t *i, int *any)
{
	unsigned long v = 0;

	*any = 0;
	for (; *i < len && s[*i] >= '0' && s[*i] <= '9'; (*i)++) {
		*any = 1;
		if (v <= MI_PATTERN_COST)
			v = v * 10 + (unsigned long)(s[*i] - '0');
	}
	return v;
}

/*
 * An interval "{m}", "{m,}" or "{m,n}" whose body starts at s[i]: the
 * copies regcomp makes of the atom before it (at least 1) in *copies,
 * and the index past it.  Anything else counts as one copy.
 */
static size_t
interval(const char *s, size_t len, size_t i, unsigned long *copies)
{
	unsigned long m, n;
	int any;

	m = digits(s, len, &i, &any);
	n = m;
	if (i < len && s[i] == ',') {
		i++;
		n = digits(s, len, &i, &any);
		if (!any)
			n = m + 1; /* m copies and a star */
	}
	if (i < len && s[i] == '}')
		i++;
	*copies = n > m ? n : m;
	if (*copies == 0)
		*copies = 1;
	return i;
}

/*
 * Bounds on what regcomp builds and regexec walks.  A rough size: one per
 * atom, each interval {m,n} multiplying the atom before it by max(m, n)
 * and '+' doubling it (glibc copies the tree for both), at most
 * MI_PATTERN_COST.  And a star height of 1: no quantifier on a group
 * that holds one ("(a*){1,1000}", "(a+)+") and no quantifier right
 * after another ("a**"), since glibc's matcher is polynomial in those
 * only with a degree that makes a 4096-char value take minutes.
 * 1 if the pattern stays within both.
 */
struct pcost {
	unsigned long sum[MI_PATTERN_MAX + 2];	 /* each open group's size */
	unsigned long last[MI_PATTERN_MAX + 2];	 /* its last atom's */
	unsigned char q[MI_PATTERN_MAX + 2];	 /* it holds a quantifier */
	unsigned char lastq[MI_PATTERN_MAX + 2]; /* its last atom does */
	size_t d;				 /* depth */
};

/* One plain atom (a character, a bracket, an escape, a lone ')'). */
static void
pcost_atom(struct pcost *pc)
{
	pc->last[pc->d] = 1;
	pc->lastq[pc->d] = 0;
	pc->sum[pc->d] = cost_add(pc->sum[pc->d], 1);
}

/* '(' : 0, or -1 past the depth bound. */
static int
pcost_open(struct pcost *pc)
{
	if (++pc->d > MI_PATTERN_MAX)
		return -1;
	pc->sum[pc->d] = pc->last[pc->d] = 0;
	pc->q[pc->d] = pc->lastq[pc->d] = 0;
	return 0;
}

/* ')' closing a group: the group is the last atom of its parent. */
static void
pcost_close(struct pcost *pc)
{
	size_t d = pc->d;
	unsigned long g = pc->sum[d] ? pc->sum[d] : 1;

	pc->lastq[d - 1] = pc->q[d];
	pc->q[d - 1] |= pc->q[d];
	pc->d = --d;
	pc->last[d] = g;
	pc->sum[d] = cost_add(pc->sum[d], g);
}

/* A quantifier at s[i] on the last atom: the index past it. */
static size_t
pcost_quant(struct pcost *pc, const char *s, size_t len, size_t i)
{
	size_t d = pc->d;
	unsigned long n = 1;

	pc->q[d] = 1;
	if (s[i] == '+')
		n = 2;
	if (s[i] == '{')
		i = interval(s, len, i + 1, &n);
	else
		i++;
	pc->sum[d] = cost_add(pc->sum[d], cost_mul(pc->last[d], n - 1));
	pc->last[d] = cost_mul(pc->last[d], n);
	return i;
}

static int
pattern_cost_ok(const char *s, size_t len)
{
	struct pcost pc;
	unsigned long g;
	size_t i;
	int prevq = 0, isq;

	pc.d = 0;
	pc.sum[0] = pc.last[0] = 0;
	pc.q[0] = pc.lastq[0] = 0;
	for (i = 0; i < len;) {
		isq = 0;
		if (s[i] == '(') {
			if (pcost_open(&pc) == -1)
				return 0;
			i++;
		} else if (s[i] == ')') {
			if (pc.d == 0) /* literal in glibc ERE */
				pcost_atom(&pc);
			else
				pcost_close(&pc);
			i++;
		} else if (s[i] == '|') {
			pc.last[pc.d] = 0;
			pc.lastq[pc.d] = 0;
			i++;
		} else if (s[i] != '\0' && strchr("*?+{", s[i]) != NULL) {
			if (prevq || pc.lastq[pc.d])
				return 0;
			isq = 1;
			i = pcost_quant(&pc, s, len, i);
		} else {
			pcost_atom(&pc);
			i = s[i] == '['	   ? skip_bracket(s, len, i)
			    : s[i] == '\\' ? i + 2
					   : i + 1;
		}
		prevq = isq;
		if (pc.sum[pc.d] > MI_PATTERN_COST ||
		    pc.last[pc.d] > MI_PATTERN_COST)
			return 0;
	}
	while (pc.d > 0) {
		g = pc.sum[pc.d] ? pc.sum[pc.d] : 1;
		pc.d--;
		pc.sum[pc.d] = cost_add(pc.sum[pc.d], g);
	}
	return pc.sum[0] <= MI_PATTERN_COST;
}

_Static_assert(MI_PATTERN_MAX == 256 && MI_PROMPT_MAX == 16384,
    "the limits the messages below name");

/* An options pattern: bounded, no backreference, cheap, compiles. */
const char *
mission_pattern_refusal(const char *s)
{
	regex_t re;
	size_t i, len = strlen(s);

	if (len == 0 || len > MI_PATTERN_MAX)
		return "length must be 1..256 bytes";
	for (i = 0; i < len; i++)
		if (s[i] == '\\' && i + 1 < len && s[i + 1] >= '0' &&
		    s[i + 1] <= '9')
			return "backreferences are refused";
		else if (s[i] == '\\')
			i++;
	if (!pattern_cost_ok(s, len))
		return "pattern too complex";
	if (regcomp(&re, s, REG_EXTENDED | REG_NOSUB) != 0)
		return "pattern does not compile";
	regfree(&re);
	return NULL;
}
