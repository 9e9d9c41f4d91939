/*
 * Unit tests for policy/cron.c: five-field schedules (ranges, steps,
 * lists, 7 = Sunday), the day-of-month / day-of-week OR rule, and every
 * malformed form refused with a fixed phrase.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mission.h"

static struct mi_cron
ok(const char *text)
{
	struct mi_cron c;
	const char *why = NULL;

	if (cron_parse(text, &c, &why) != 0)
		fail_msg("refused: %s", why ? why : "?");
	return c;
}

static void
refused(const char *text, const char *phrase)
{
	struct mi_cron c;
	const char *why = NULL;

	assert_int_equal(cron_parse(text, &c, &why), -1);
	assert_non_null(why);
	if (phrase != NULL && strstr(why, phrase) == NULL)
		fail_msg("'%s': got '%s', want '%s'", text ? text : "(null)",
		    why, phrase);
	/* fixed phrases: never the input */
	if (text != NULL && strlen(text) > 2)
		assert_null(strstr(why, text));
}

static void
test_star(void **state)
{
	struct mi_cron c = ok("* * * * *");

	(void)state;
	assert_true(c.c_min == ((uint64_t)1 << 60) - 1);
	assert_int_equal(c.c_hour, (1u << 24) - 1);
	assert_int_equal(c.c_mday, 0xfffffffeu);
	assert_int_equal(c.c_mon, 0x1ffe);
	assert_int_equal(c.c_wday, 0x7f);
	assert_true(c.c_mday_star && c.c_wday_star);
	assert_true(cron_match(&c, 0, 0, 1, 0, 0));
	assert_true(cron_match(&c, 59, 23, 31, 11, 6));
}

static void
test_numbers_ranges_steps_lists(void **state)
{
	struct mi_cron c;

	(void)state;
	c = ok("0 18 * * 0");
	assert_true(c.c_min == 1);
	assert_int_equal(c.c_hour, 1u << 18);
	assert_int_equal(c.c_wday, 1);
	assert_true(c.c_mday_star);
	assert_false(c.c_wday_star);

	c = ok("*/15 9-17 * * 1-5");
	assert_true(c.c_min == (1 | 1ull << 15 | 1ull << 30 | 1ull << 45));
	assert_int_equal(c.c_hour, 0x3fe00);
	assert_int_equal(c.c_wday, 0x3e);

	c = ok("0-30/10 0 1,15,31 1,6-7,12 *");
	assert_true(c.c_min == (1 | 1ull << 10 | 1ull << 20 | 1ull << 30));
	assert_int_equal(c.c_mday, 1u << 1 | 1u << 15 | 1u << 31);
	assert_int_equal(c.c_mon, 1u << 1 | 1u << 6 | 1u << 7 | 1u << 12);

	c = ok("59 23 31 12 6");
	assert_true(c.c_min == 1ull << 59);
	c = ok("5-5/2 * * * *");
	assert_true(c.c_min == 1ull << 5);
	c = ok("*/59 * * * *");
	assert_true(c.c_min == (1 | 1ull << 59));
	/* runs of spaces between fields */
	c = ok("  0   0  *  *  * ");
	assert_true(c.c_min == 1);
	/* two-digit zero padding */
	c = ok("07 08 09 01 01");
	assert_true(c.c_min == 1ull << 7);
	assert_int_equal(c.c_mon, 1u << 1);
}

static void
test_sunday_seven(void **state)
{
	struct mi_cron c;

	(void)state;
	c = ok("0 0 * * 7");
	assert_int_equal(c.c_wday, 1);
	c = ok("0 0 * * 5-7");
	assert_int_equal(c.c_wday, 1u << 5 | 1u << 6 | 1);
	c = ok("0 0 * * 0,7");
	assert_int_equal(c.c_wday, 1);
	c = ok("0 0 * * */7");
	assert_int_equal(c.c_wday, 1);
	/* Sunday 2024-06-02, Monday 2024-06-03 */
	c = ok("0 0 * * 7");
	assert_true(cron_match(&c, 0, 0, 2, 5, 0));
	assert_false(cron_match(&c, 0, 0, 3, 5, 1));
}

static void
test_dom_dow_or(void **state)
{
	struct mi_cron c;

	(void)state;
	/* both restricted: either day matches (POSIX) */
	c = ok("0 12 1 * 1");
	assert_true(cron_match(&c, 0, 12, 1, 0, 3));  /* 1st, Wednesday */
	assert_true(cron_match(&c, 0, 12, 8, 0, 1));  /* 8th, Monday */
	assert_false(cron_match(&c, 0, 12, 8, 0, 2)); /* 8th, Tuesday */
	assert_false(cron_match(&c, 1, 12, 1, 0, 1)); /* wrong minute */
	/* only dow restricted */
	c = ok("0 12 * * 1");
	assert_true(cron_match(&c, 0, 12, 8, 0, 1));
	assert_false(cron_match(&c, 0, 12, 1, 0, 3));
	/* only dom restricted */
	c = ok("0 12 1 * *");
	assert_true(cron_match(&c, 0, 12, 1, 0, 3));
	assert_false(cron_match(&c, 0, 12, 8, 0, 1));
	/* "*" written as a step is not '*': both restricted */
	c = ok("0 12 */2 * 1");
	assert_false(c.c_mday_star);
	assert_true(cron_match(&c, 0, 12, 3, 0, 3));
	assert_true(cron_match(&c, 0, 12, 4, 0, 1));
	assert_false(cron_match(&c, 0, 12, 4, 0, 2));
}

static void
test_month_and_bounds(void **state)
{
	struct mi_cron c;

	(void)state;
	c = ok("30 6 * 2 *");
	assert_true(cron_match(&c, 30, 6, 10, 1, 4));  /* February */
	assert_false(cron_match(&c, 30, 6, 10, 2, 4)); /* March */
	/* out-of-range local time never matches */
	c = ok("* * * * *");
	assert_false(cron_match(&c, 60, 0, 1, 0, 0));
	assert_false(cron_match(&c, -1, 0, 1, 0, 0));
	assert_false(cron_match(&c, 0, 24, 1, 0, 0));
	assert_false(cron_match(&c, 0, 0, 0, 0, 0));
	assert_false(cron_match(&c, 0, 0, 32, 0, 0));
	assert_false(cron_match(&c, 0, 0, 1, 12, 0));
	assert_false(cron_match(&c, 0, 0, 1, 0, 7));
	assert_false(cron_match(NULL, 0, 0, 1, 0, 0));
}

static void
test_refused(void **state)
{
	(void)state;
	refused("60 * * * *", "out of range");
	refused("* 24 * * *", "out of range");
	refused("* * 0 * *", "out of range");
	refused("* * 32 * *", "out of range");
	refused("* * * 0 *", "out of range");
	refused("* * * 13 *", "out of range");
	refused("* * * * 8", "out of range");
	refused("0-60 * * * *", "out of range");
	refused("*/0 * * * *", "bad step");
	refused("*/61 * * * *", "bad step");
	refused("*/ * * * *", "bad step");
	refused("1- * * * *", "malformed range");
	refused("-1 * * * *", "malformed");
	refused("5-1 * * * *", "range reversed");
	refused("5/2 * * * *", "needs * or a range");
	refused("", "empty");
	refused("   ", "five fields");
	refused("* * * *", "five fields");
	refused("0 0 * * * *", "five fields");
	refused("1,,2 * * * *", "empty list element");
	refused("1, * * * *", "empty list element");
	refused(",1 * * * *", "empty list element");
	refused("100 * * * *", "malformed");
	refused("** * * * *", "malformed");
	refused("*1 * * * *", "malformed");
	refused("1-2-3 * * * *", "malformed");
	refused("1-5/2/3 * * * *", "malformed");
	refused("0 0 * * MON", "unsupported character");
	refused("@daily", "unsupported character");
	refused("0\t0 * * *", "unsupported character");
	refused("0 0 * * *\n", "unsupported character");
	refused("0 0 L * *", "unsupported character");
	refused("0 0 ? * *", "unsupported character");
	refused("0 0 1 * +1", "unsupported character");
	refused(
	    "0 0 * * *                                                      "
	    "                                                                 "
	    "       ",
	    "too long");
	refused(NULL, "empty");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_star),
	    cmocka_unit_test(test_numbers_ranges_steps_lists),
	    cmocka_unit_test(test_sunday_seven),
	    cmocka_unit_test(test_dom_dow_or),
	    cmocka_unit_test(test_month_and_bounds),
	    cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
