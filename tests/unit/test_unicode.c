/*
 * Unit tests for common/unicode.c (SBX-7, SP-10, VA-5): the table of
 * invisible and reordering code points, the <U+XXXX> marker, the strict
 * UTF-8 decoder and the gate's refusal test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "unicode.h"

/* SBX-7: every listed code point is hidden, its neighbours are not. */
static void
test_sbx7_hidden_table(void **state)
{
	static const uint32_t ranges[][2] = {
	    {0x061C, 0x061C},
	    {0x200E, 0x200F},
	    {0x202A, 0x202E},
	    {0x2066, 0x2069},
	    {0x200B, 0x200D},
	    {0x2060, 0x2064},
	    {0xFEFF, 0xFEFF},
	    {0x00AD, 0x00AD},
	    {0x180E, 0x180E},
	    {0x034F, 0x034F},
	    {0x115F, 0x1160},
	    {0x3164, 0x3164},
	    {0xFFA0, 0xFFA0},
	    {0xFE00, 0xFE0F},
	    {0xE0100, 0xE01EF},
	    {0xE0000, 0xE007F},
	    {0x2028, 0x2029},
	    /* default-ignorable: shorthand format controls, and the
	     * unassigned ones a renderer hides */
	    {0x1BCA0, 0x1BCA3},
	    {0xFFF0, 0xFFF8},
	    {0xE0080, 0xE00FF},
	    {0xE01F0, 0xE0FFF},
	};
	static const uint32_t plain[] = {'a', ' ', '\t', 0x9F, 0xA1, 0xE9,
	    0x2027, 0x2030, 0x2070, 0x27FF, 0x2801, 0xFDFF, 0xFE10, 0xFEFE,
	    0xFF00, 0xFFEF, 0xFFFD, 0x1BC9F, 0x1BCA4, 0x1F600, 0xDFFFF, 0xE1000,
	    0x10FFFF};
	size_t i;
	uint32_t cp;

	(void)state;
	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		for (cp = ranges[i][0]; cp <= ranges[i][1]; cp++)
			assert_int_equal(uni_class(cp), UNI_HIDDEN);
	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		assert_int_equal(uni_class(plain[i]), UNI_PLAIN);
	assert_int_equal(uni_class(0x00A0), UNI_SPACE);
	assert_int_equal(uni_class(0x2007), UNI_SPACE);
	assert_int_equal(uni_class(0x3000), UNI_SPACE);
}

/*
 * SBX-7, SP-10: every code point (and beyond U+10FFFF) has the class of
 * the range that holds it, plain outside them: the class comes from the
 * table through an index of it by blocks of 64, whose edges these ranges
 * cross (the soft hyphen and the no-break space share a block, as do the
 * ideographic space and the plain kana).
 */
static void
test_sbx7_every_code_point(void **state)
{
	static const struct {
		uint32_t lo, hi;
		enum uni_class c;
	} r[] = {
	    {0x00A0, 0x00A0, UNI_SPACE},
	    {0x00AD, 0x00AD, UNI_HIDDEN},
	    {0x034F, 0x034F, UNI_HIDDEN},
	    {0x061C, 0x061C, UNI_HIDDEN},
	    {0x115F, 0x1160, UNI_HIDDEN},
	    {0x1680, 0x1680, UNI_SPACE},
	    {0x17B4, 0x17B5, UNI_HIDDEN},
	    {0x180B, 0x180F, UNI_HIDDEN},
	    {0x2000, 0x200A, UNI_SPACE},
	    {0x200B, 0x200F, UNI_HIDDEN},
	    {0x2028, 0x202E, UNI_HIDDEN},
	    {0x202F, 0x202F, UNI_SPACE},
	    {0x205F, 0x205F, UNI_SPACE},
	    {0x2060, 0x206F, UNI_HIDDEN},
	    {0x2800, 0x2800, UNI_HIDDEN},
	    {0x3000, 0x3000, UNI_SPACE},
	    {0x3164, 0x3164, UNI_HIDDEN},
	    {0xFE00, 0xFE0F, UNI_HIDDEN},
	    {0xFEFF, 0xFEFF, UNI_HIDDEN},
	    {0xFFA0, 0xFFA0, UNI_HIDDEN},
	    {0xFFF0, 0xFFFB, UNI_HIDDEN},
	    {0x1BCA0, 0x1BCA3, UNI_HIDDEN},
	    {0x1D173, 0x1D17A, UNI_HIDDEN},
	    {0xE0000, 0xE0FFF, UNI_HIDDEN},
	};
	uint32_t cp;
	size_t k = 0;

	(void)state;
	for (cp = 0; cp <= 0x11FFFF; cp++) {
		if (k < sizeof(r) / sizeof(r[0]) && cp > r[k].hi)
			k++;
		assert_int_equal(uni_class(cp),
		    k < sizeof(r) / sizeof(r[0]) && cp >= r[k].lo ? r[k].c
								  : UNI_PLAIN);
	}
	assert_int_equal(uni_class(0xFFFFFFFFu), UNI_PLAIN);
}

/* SBX-7: the marker names the code point in 4 to 6 hex digits. */
static void
test_sbx7_marker(void **state)
{
	char m[UNI_MARK_MAX + 1];
	size_t n;

	(void)state;
	n = uni_mark(0xAD, m);
	m[n] = '\0';
	assert_string_equal(m, "<U+00AD>");
	n = uni_mark(0x202E, m);
	m[n] = '\0';
	assert_string_equal(m, "<U+202E>");
	n = uni_mark(0xE0041, m);
	m[n] = '\0';
	assert_string_equal(m, "<U+E0041>");
	n = uni_mark(0x10FFFF, m);
	m[n] = '\0';
	assert_string_equal(m, "<U+10FFFF>");
}

/* SBX-7: the decoder refuses what RFC 3629 forbids, one byte at a time. */
static void
test_sbx7_utf8_strict(void **state)
{
	static const char *const bad[] = {"\xc0\xaf", "\xe0\x80\xaf",
	    "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\x80",
	    "\xe2\x80"};
	size_t i, k;
	uint32_t cp;

	(void)state;
	i = 0;
	assert_int_equal(uni_utf8_next("\xe2\x80\xae", 3, &i, &cp), 0);
	assert_int_equal(cp, 0x202E);
	assert_int_equal(i, 3);
	i = 0;
	assert_int_equal(uni_utf8_next("\xf3\xa0\x81\x81", 4, &i, &cp), 0);
	assert_int_equal(cp, 0xE0041);
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		i = 0;
		assert_int_equal(
		    uni_utf8_next(bad[k], strlen(bad[k]), &i, &cp), -1);
		assert_int_equal(cp, 0xFFFD);
		assert_int_equal(i, 1);
	}
}

/* SBX-7: what the gate refuses in a command. */
static void
test_sbx7_gate_refused(void **state)
{
	static const char *const refused[] = {
	    "git push \xe2\x80\xaeniam nigiro\xe2\x80\xac", /* RLO, PDF */
	    "gi\xe2\x80\x8bt status",			    /* ZWSP */
	    "git\xc2\xa0push",				    /* NBSP */
	    "ls \xf3\xa0\x80\x81",			    /* tag */
	    "echo \x1b[8mhidden",			    /* ESC */
	    "echo a\rb",				    /* CR */
	    "echo \xc2\x85",				    /* NEL (C1) */
	    "echo \xff",				    /* invalid */
	    "echo \x7f",				    /* DEL */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		assert_true(uni_gate_refused(refused[i], strlen(refused[i])));
	assert_false(uni_gate_refused("git push origin main", 20));
	assert_false(uni_gate_refused("ls caf\xc3\xa9\tx\ny", 11));
	assert_false(uni_gate_refused("", 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sbx7_hidden_table),
	    cmocka_unit_test(test_sbx7_every_code_point),
	    cmocka_unit_test(test_sbx7_marker),
	    cmocka_unit_test(test_sbx7_utf8_strict),
	    cmocka_unit_test(test_sbx7_gate_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
