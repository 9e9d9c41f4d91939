/*
 * MI-1: the cron scheduler's decisions (policy/mission_fire.c): the
 * slots since the last one seen, with a look-back bound, and what a fire
 * does to a mission (run, busy, skipped-missed, catchUp).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "mission.h"

#define DAY 86400LL

/* A fake cron: matches the slots listed (epoch seconds); counts calls. */
struct fake {
	const long long *f_slots;
	size_t f_n;
	int f_calls;
};

static int
fake_match(long long slot, void *arg)
{
	struct fake *f = arg;
	size_t i;

	f->f_calls++;
	for (i = 0; i < f->f_n; i++)
		if (f->f_slots[i] == slot)
			return 1;
	return 0;
}

static void
scan(const long long *slots, size_t n, long long last, long long now, int *cur,
    int *missed, int *calls)
{
	struct fake f = {slots, n, 0};

	mission_slots_scan(last, now, 7 * DAY, fake_match, &f, cur, missed);
	*calls = f.f_calls;
}

static void
test_mi1_slots_now_and_missed(void **state)
{
	static const long long at[] = {6000, 6120};
	/* last slot seen, now's slot -> cur, missed */
	static const struct {
		long long last, now;
		int cur, missed;
	} t[] = {
	    {6060, 6120, 1, 0}, /* the next minute matches */
	    {6000, 6060, 0, 0}, /* the last slot seen is not looked at again */
	    {5940, 6060, 0, 1}, /* one between the last and now was missed */
	    {5940, 6120, 1, 1}, /* both */
	};
	size_t i;
	int cur, missed, calls;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		scan(at, 2, t[i].last, t[i].now, &cur, &missed, &calls);
		assert_int_equal(cur, t[i].cur);
		assert_int_equal(missed, t[i].missed);
	}
}

static void
test_mi1_slots_lookback_bounded(void **state)
{
	const long long old[] = {60};
	long long now = 30 * DAY;
	int cur, missed, calls;

	/* Down for a month: a match older than seven days is not missed,
	 * and no more than seven days of slots are looked at. */
	scan(old, 1, 0, now, &cur, &missed, &calls);
	assert_false(cur);
	assert_false(missed);
	assert_true(calls <= 7 * 24 * 60 + 1);
}

static void
fire(
    int cur, int missed, int catch_up, int running, int skip, int run, int busy)
{
	struct mission_fire f;

	mission_fire_decide(cur, missed, catch_up, running, &f);
	assert_int_equal(f.mf_skip_missed, skip);
	assert_int_equal(f.mf_run, run);
	assert_int_equal(f.mf_busy, busy);
}

static void
test_mi1_fire_decide(void **state)
{
	/* cur missed catchUp running -> skip-missed run busy */
	fire(1, 0, 0, 0, 0, 1, 0); /* on time */
	fire(1, 0, 0, 1, 0, 0, 1); /* still running: busy */
	fire(0, 1, 0, 0, 1, 0, 0); /* missed, no catchUp: recorded */
	fire(0, 1, 1, 0, 0, 1, 0); /* missed with catchUp: run late */
	fire(0, 1, 1, 1, 0, 0, 1); /* ... unless still running */
	fire(1, 1, 0, 0, 1, 1, 0); /* both: recorded, and run now */
	fire(1, 1, 1, 0, 0, 1, 0); /* both with catchUp: one run */
	fire(0, 0, 1, 0, 0, 0, 0); /* nothing */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mi1_slots_now_and_missed),
	    cmocka_unit_test(test_mi1_slots_lookback_bounded),
	    cmocka_unit_test(test_mi1_fire_decide),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
