/*
 * Five-field cron (MI-1 triggers): minute hour day-of-month month
 * day-of-week.  Numbers, '*', ranges a-b, steps (* / n, a-b/n) and lists;
 * no names, no a/n, no @macros.  Day-of-week 7 is Sunday (0).  Also
 * the zone names a schedule is read in.  Pure.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "charset.h"
#include "mission.h"

struct cron_field {
	int lo, hi; /* accepted values */
};

static const struct cron_field fields[5] = {
    {0, 59}, /* minute */
    {0, 23}, /* hour */
    {1, 31}, /* day of month */
    {1, 12}, /* month */
    {0, 7},  /* day of week, 7 = 0 */
};

/* A decimal of 1..2 digits at *p: its value, or -1. */
static int
cron_num(const char **p, const char *end)
{
	const char *s = *p;
	int v = 0, n = 0;

	while (s < end && *s >= '0' && *s <= '9' && n < 3) {
		v = v * 10 + (*s - '0');
		s++;
		n++;
	}
	if (n == 0 || n > 2)
		return -1;
	*p = s;
	return v;
}

/* One field [s, end) into bits (bit i = value i); 0, or -1 and *why. */
static int
cron_field_parse(const char *s, const char *end, const struct cron_field *f,
    uint64_t *bits, int *star, const char **why)
{
	const char *p = s, *q;
	int a, b, step, v, range;

	*bits = 0;
	*star = (end - s == 1 && *s == '*');
	for (;;) {
		/* one list element up to ',' or end */
		for (q = p; q < end && *q != ','; q++)
			;
		if (q == p) {
			*why = "empty list element";
			return -1;
		}
		step = 1;
		range = 1;
		if (*p == '*') {
			a = f->lo;
			b = f->hi;
			p++;
		} else {
			if ((a = cron_num(&p, q)) == -1) {
				*why = "malformed field";
				return -1;
			}
			b = a;
			range = 0;
			if (p < q && *p == '-') {
				range = 1;
				p++;
				if ((b = cron_num(&p, q)) == -1) {
					*why = "malformed range";
					return -1;
				}
			}
			if (a < f->lo || a > f->hi || b < f->lo || b > f->hi) {
				*why = "value out of range";
				return -1;
			}
			if (a > b) {
				*why = "range reversed";
				return -1;
			}
			if (p < q && *p == '/' && !range) {
				*why = "a step needs * or a range";
				return -1;
			}
		}
		if (p < q && *p == '/') {
			p++;
			if ((step = cron_num(&p, q)) == -1 || step == 0 ||
			    step > f->hi - f->lo + 1) {
				*why = "bad step";
				return -1;
			}
		}
		if (p != q) {
			*why = "malformed field";
			return -1;
		}
		for (v = a; v <= b; v += step)
			*bits |= (uint64_t)1 << v;
		if (q == end)
			break;
		p = q + 1;
		if (p == end) {
			*why = "empty list element";
			return -1;
		}
	}
	return 0;
}

int
cron_parse(const char *text, struct mi_cron *out, const char **why)
{
	const char *p, *s, *end;
	uint64_t bits[5];
	int stars[5];
	size_t len, n = 0;
	static const char *dummy;

	if (why == NULL)
		why = &dummy;
	memset(out, 0, sizeof(*out));
	if (text == NULL || (len = strlen(text)) == 0) {
		*why = "empty schedule";
		return -1;
	}
	if (len > MI_CRON_TEXT_MAX) {
		*why = "schedule too long";
		return -1;
	}
	for (p = text; *p != '\0'; p++)
		if (strchr("0123456789*/-, ", *p) == NULL) {
			*why = "unsupported character in schedule";
			return -1;
		}
	end = text + len;
	p = text;
	for (;;) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		for (s = p; p < end && *p != ' '; p++)
			;
		if (n == 5) {
			*why = "needs exactly five fields";
			return -1;
		}
		if (cron_field_parse(
			s, p, &fields[n], &bits[n], &stars[n], why) == -1)
			return -1;
		n++;
	}
	if (n != 5) {
		*why = "needs exactly five fields";
		return -1;
	}
	out->c_min = bits[0];
	out->c_hour = (uint32_t)bits[1];
	out->c_mday = (uint32_t)bits[2];
	out->c_mon = (uint16_t)bits[3];
	/* 7 is Sunday */
	out->c_wday = (uint8_t)((bits[4] & 0x7f) | ((bits[4] >> 7) & 1));
	out->c_mday_star = stars[2];
	out->c_wday_star = stars[4];
	return 0;
}

int
cron_match(
    const struct mi_cron *c, int min, int hour, int mday, int mon0, int wday)
{
	int dom, dow;

	if (c == NULL || min < 0 || min > 59 || hour < 0 || hour > 23 ||
	    mday < 1 || mday > 31 || mon0 < 0 || mon0 > 11 || wday < 0 ||
	    wday > 6)
		return 0;
	if (!(c->c_min & ((uint64_t)1 << min)) ||
	    !(c->c_hour & ((uint32_t)1 << hour)) ||
	    !(c->c_mon & (1u << (mon0 + 1))))
		return 0;
	dom = (c->c_mday & ((uint32_t)1 << mday)) != 0;
	dow = (c->c_wday & (1u << wday)) != 0;
	/* POSIX: both restricted -> either matches; else both must. */
	if (c->c_mday_star || c->c_wday_star)
		return dom && dow;
	return dom || dow;
}

/* A schedule's zone name (mission.h); kept here so that sched links
 * the schedule's parsers without the mission schema. */
int
mission_tz_name_ok(const char *s)
{
	size_t i, len = strlen(s), segs = 0;

	if (len == 0 || len > MI_TZ_MAX)
		return 0;
	for (i = 0; i < len && s[i] != '/'; i++)
		if (!charset_has("a-zA-Z_", s[i]))
			return 0;
	if (i == 0)
		return 0;
	while (i < len) {
		size_t st = ++i; /* past '/' */

		if (++segs > 2)
			return 0;
		for (; i < len && s[i] != '/'; i++)
			if (!charset_has("a-zA-Z0-9_+-", s[i]))
				return 0;
		if (i == st)
			return 0;
	}
	return 1;
}
