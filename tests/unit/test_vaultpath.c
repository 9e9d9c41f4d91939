/*
 * Unit tests for policy/vaultpath.c: URL decoding once, the VA-2 read and
 * list rules, the VA-3 folder and hint rules and VA-5 chat note names,
 * mostly with hostile inputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vaultpath.h"

static int
rd(const char *p)
{
	return vaultpath_read_ok(p, strlen(p));
}

static int
dir(const char *p)
{
	return vaultpath_dir_ok(p, strlen(p));
}

static long
dec(const char *in, char *out, size_t outsz)
{
	return vaultpath_decode(in, strlen(in), out, outsz);
}

static int
folder(const char *id, const char *f)
{
	return vaultpath_mission_folder_ok(id, f, strlen(f));
}

static int
hint(const char *h, char *out)
{
	return vaultpath_hint_name(h, strlen(h), out, VAULT_HINT_MAX + 4);
}

/* VA-2 */
static void
test_va2_decode_once(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(dec("a%2Fb.md", out, sizeof(out)), 6);
	assert_string_equal(out, "a/b.md");
	assert_int_equal(dec("%2e%2e%2fetc", out, sizeof(out)), 6);
	assert_string_equal(out, "../etc");
	/* Double encoding stays literal: one pass only. */
	assert_int_equal(dec("%252e%252e%252f", out, sizeof(out)), 9);
	assert_string_equal(out, "%2e%2e%2f");
	assert_int_equal(dec("", out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(dec("a+b", out, sizeof(out)), 3);
	assert_string_equal(out, "a+b");
	assert_int_equal(dec("%C3%A9.md", out, sizeof(out)), 5);
}

/* VA-2 */
static void
test_va2_decode_malformed_refused(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(dec("%ZZ", out, sizeof(out)), -1);
	assert_int_equal(dec("a%", out, sizeof(out)), -1);
	assert_int_equal(dec("a%4", out, sizeof(out)), -1);
	assert_int_equal(dec("%4g", out, sizeof(out)), -1);
	assert_int_equal(dec("%%41", out, sizeof(out)), -1);
	assert_int_equal(dec("% 41", out, sizeof(out)), -1);
	/* NUL, decoded or raw. */
	assert_int_equal(dec("x.md%00.txt", out, sizeof(out)), -1);
	assert_int_equal(vaultpath_decode("a\0b", 3, out, sizeof(out)), -1);
	/* Output bound, with room for the NUL. */
	assert_int_equal(dec("abcd", out, 4), -1);
	assert_int_equal(dec("abc", out, 4), 3);
	assert_int_equal(dec("abc", out, 0), -1);
	assert_int_equal(vaultpath_decode(NULL, 0, out, 4), -1);
}

/* VA-2 */
static void
test_va2_read_ok(void **state)
{
	(void)state;
	assert_int_equal(rd("Welcome.md"), 1);
	assert_int_equal(rd("10_Projects/cordon.md"), 1);
	assert_int_equal(rd("00_Inbox/cordon/chats/a.md"), 1);
	assert_int_equal(rd("a b/c d.md"), 1);
	assert_int_equal(rd("\xc3\xa9t\xc3\xa9.md"), 1);
	assert_int_equal(rd("%2e%2e%2f.md"), 1); /* literal, decoded once */
	assert_int_equal(rd("x..y.md"), 1);
}

/* VA-2 */
static void
test_va2_read_hostile_refused(void **state)
{
	char big[VAULT_PATH_MAX + 8];

	(void)state;
	assert_int_equal(rd("../../etc/passwd"), 0);
	assert_int_equal(rd("../vault-evil/x.md"), 0);
	assert_int_equal(rd("a/../b.md"), 0);
	assert_int_equal(rd("./a.md"), 0);
	assert_int_equal(rd("/etc/passwd"), 0);
	assert_int_equal(rd("/a.md"), 0);
	assert_int_equal(rd("a\\b.md"), 0);
	assert_int_equal(rd("..\\a.md"), 0);
	assert_int_equal(rd(".obsidian/x.md"), 0);
	assert_int_equal(rd("a/.obsidian/x.md"), 0);
	assert_int_equal(rd(".git/config.md"), 0);
	assert_int_equal(rd(".trash/x.md"), 0);
	assert_int_equal(rd("node_modules/x.md"), 0);
	assert_int_equal(rd("a/NODE_MODULES/x.md"), 0);
	assert_int_equal(rd("60_Attachments/z.md"), 0);
	assert_int_equal(rd("60_attachments/z.md"), 0);
	assert_int_equal(rd(".hidden.md"), 0);
	assert_int_equal(rd("a.txt"), 0);
	assert_int_equal(rd("a.MD"), 0);
	assert_int_equal(rd("a.md/"), 0);
	assert_int_equal(rd("a//b.md"), 0);
	assert_int_equal(rd(".md"), 0);
	assert_int_equal(rd("md"), 0);
	assert_int_equal(rd(""), 0);
	assert_int_equal(rd("a\tb.md"), 0);
	assert_int_equal(rd("a\nb.md"), 0);
	assert_int_equal(rd("a\x7f.md"), 0);
	assert_int_equal(vaultpath_read_ok("x.md\0.txt", 9), 0);
	assert_int_equal(vaultpath_read_ok(NULL, 0), 0);
	memset(big, 'a', sizeof(big));
	memcpy(big + VAULT_PATH_MAX - 3, ".md", 3);
	assert_int_equal(vaultpath_read_ok(big, VAULT_PATH_MAX), 0);
	/* ... because a segment is over VAULT_SEG_MAX; split it. */
	for (size_t i = 200; i < VAULT_PATH_MAX - 10; i += 200)
		big[i] = '/';
	assert_int_equal(vaultpath_read_ok(big, VAULT_PATH_MAX), 1);
	memcpy(big + VAULT_PATH_MAX - 2, ".md", 3);
	assert_int_equal(vaultpath_read_ok(big, VAULT_PATH_MAX + 1), 0);
}

/* VA-2 */
static void
test_va2_dir_rules(void **state)
{
	(void)state;
	assert_int_equal(dir(""), 1);
	assert_int_equal(dir("10_Projects"), 1);
	assert_int_equal(dir("00_Inbox/cordon"), 1);
	assert_int_equal(dir("/"), 0);
	assert_int_equal(dir(".."), 0);
	assert_int_equal(dir("."), 0);
	assert_int_equal(dir("a/"), 0);
	assert_int_equal(dir(".obsidian"), 0);
	assert_int_equal(dir("60_Attachments"), 0);
	assert_int_equal(dir("a\\b"), 0);
	assert_int_equal(vaultpath_dir_ok(NULL, 0), 0);
}

/* VA-3 */
static void
test_va3_mission_folder_ok(void **state)
{
	(void)state;
	assert_int_equal(folder("daily", "00_Inbox/cordon/missions/daily"), 1);
	assert_int_equal(folder("daily", "00_Inbox/cordon/missions/daily/"), 1);
	assert_int_equal(
	    folder("daily", "00_Inbox/cordon/missions/daily/summaries"), 1);
	assert_int_equal(
	    folder("daily", "00_Inbox/cordon/missions/daily/a/b/c/d"), 1);
}

/* VA-3 */
static void
test_va3_mission_folder_hostile_refused(void **state)
{
	(void)state;
	/* Segment boundary: summariesX is not beneath summaries. */
	assert_int_equal(
	    folder("summaries", "00_Inbox/cordon/missions/summariesX"), 0);
	assert_int_equal(
	    folder("summaries", "00_Inbox/cordon/missions/summariesX/a"), 0);
	assert_int_equal(folder("daily", "00_Inbox/cordon/missions/other"), 0);
	assert_int_equal(folder("daily", "00_Inbox/cordon/missions"), 0);
	assert_int_equal(folder("daily", "00_Inbox/cordon/chats"), 0);
	assert_int_equal(folder("daily", "10_Projects"), 0);
	assert_int_equal(folder("daily", "/00_Inbox/cordon/missions/daily"), 0);
	assert_int_equal(
	    folder("daily", "00_Inbox/cordon/missions/daily/../../x"), 0);
	assert_int_equal(
	    folder("daily", "00_Inbox/cordon/missions/daily/.."), 0);
	assert_int_equal(
	    folder("daily", "00_Inbox/cordon/missions/daily/.hidden"), 0);
	assert_int_equal(
	    folder("daily", "00_Inbox/cordon/missions/daily//a"), 0);
	assert_int_equal(
	    folder("daily", "00_Inbox/cordon/missions/daily/a//"), 0);
	assert_int_equal(
	    folder("daily", "00_Inbox/cordon/missions/daily\\a"), 0);
	assert_int_equal(
	    folder("daily", "00_Inbox/cordon/missions/daily/a\\b"), 0);
	assert_int_equal(
	    folder("daily", "00_Inbox/cordon/missions/daily/a b"), 0);
	assert_int_equal(
	    folder("daily", "00_Inbox/cordon/missions/daily/a/b/c/d/e"), 0);
	assert_int_equal(folder("daily", "00_inbox/cordon/missions/daily"), 0);
	/* A bad mission id is refused whatever the folder. */
	assert_int_equal(folder("Daily", "00_Inbox/cordon/missions/Daily"), 0);
	assert_int_equal(folder("../x", "00_Inbox/cordon/missions/../x"), 0);
	assert_int_equal(folder("", "00_Inbox/cordon/missions/"), 0);
	assert_int_equal(vaultpath_mission_folder_ok(NULL, "x", 1), 0);
}

/* VA-3 */
static void
test_va3_hint_ok(void **state)
{
	char out[VAULT_HINT_MAX + 4], h[VAULT_HINT_MAX + 2];

	(void)state;
	assert_int_equal(hint("summary", out), 0);
	assert_string_equal(out, "summary.md");
	assert_int_equal(hint("summary.md", out), 0);
	assert_string_equal(out, "summary.md");
	assert_int_equal(hint("2026-01-01_a.b", out), 0);
	assert_string_equal(out, "2026-01-01_a.b.md");
	memset(h, 'a', VAULT_HINT_MAX);
	h[VAULT_HINT_MAX] = '\0';
	assert_int_equal(hint(h, out), 0);
	assert_int_equal(strlen(out), VAULT_HINT_MAX + 3);
}

/* VA-3 */
static void
test_va3_hint_hostile_refused(void **state)
{
	char out[VAULT_HINT_MAX + 4], h[VAULT_HINT_MAX + 2];

	(void)state;
	assert_int_equal(hint("../escape", out), -1);
	assert_int_equal(hint(".hidden", out), -1);
	assert_int_equal(hint(".", out), -1);
	assert_int_equal(hint("..", out), -1);
	assert_int_equal(hint("", out), -1);
	assert_int_equal(hint("a/b", out), -1);
	assert_int_equal(hint("a\\b", out), -1);
	assert_int_equal(hint("a b", out), -1);
	assert_int_equal(hint("a%2fb", out), -1);
	assert_int_equal(hint("caf\xc3\xa9", out), -1);
	assert_int_equal(vaultpath_hint_name("a\0b", 3, out, sizeof(out)), -1);
	memset(h, 'a', VAULT_HINT_MAX + 1);
	h[VAULT_HINT_MAX + 1] = '\0';
	assert_int_equal(hint(h, out), -1); /* 97 characters */
	assert_int_equal(vaultpath_hint_name("a", 1, out, 8), -1);
}

/* VA-5 */
static void
test_va5_chat_name(void **state)
{
	char out[VAULT_CHAT_NAME_MAX];

	(void)state;
	/* 2026-05-16T10:12:13.456Z */
	assert_int_equal(vaultpath_chat_name(out, sizeof(out), 1778926333456LL,
			     "claude-code", "a1b2c3d4", 1),
	    0);
	assert_string_equal(out, "2026-05-16-1012-claude-code-a1b2c3d4.md");
	assert_int_equal(vaultpath_chat_name(out, sizeof(out), 1778926333456LL,
			     "claude-code", "a1b2c3d4", 2),
	    0);
	assert_string_equal(out, "2026-05-16-1012-claude-code-a1b2c3d4-02.md");
	assert_int_equal(
	    vaultpath_chat_name(out, sizeof(out), 0, "a", "00000000", 99), 0);
	assert_string_equal(out, "1970-01-01-0000-a-00000000-99.md");
	assert_int_equal(vaultpath_chat_name(out, sizeof(out), VAULT_TIME_MAX,
			     "a", "ffffffff", 1),
	    0);
	assert_string_equal(out, "9999-12-31-2359-a-ffffffff.md");
	/* Leap day. */
	assert_int_equal(vaultpath_chat_name(out, sizeof(out), 951782400000LL,
			     "a", "ffffffff", 1),
	    0);
	assert_string_equal(out, "2000-02-29-0000-a-ffffffff.md");
}

/* VA-5 */
static void
test_va5_chat_name_refused(void **state)
{
	char out[VAULT_CHAT_NAME_MAX];

	(void)state;
	assert_int_equal(
	    vaultpath_chat_name(out, sizeof(out), 0, "a", "0000000", 1), -1);
	assert_int_equal(
	    vaultpath_chat_name(out, sizeof(out), 0, "a", "0000000G", 1), -1);
	assert_int_equal(
	    vaultpath_chat_name(out, sizeof(out), 0, "a", "ABCDEF01", 1), -1);
	assert_int_equal(
	    vaultpath_chat_name(out, sizeof(out), 0, "../a", "00000000", 1),
	    -1);
	assert_int_equal(
	    vaultpath_chat_name(out, sizeof(out), 0, "A", "00000000", 1), -1);
	assert_int_equal(
	    vaultpath_chat_name(out, sizeof(out), 0, "-a", "00000000", 1), -1);
	assert_int_equal(
	    vaultpath_chat_name(out, sizeof(out), 0, "a", "00000000", 0), -1);
	assert_int_equal(
	    vaultpath_chat_name(out, sizeof(out), 0, "a", "00000000", 100), -1);
	assert_int_equal(
	    vaultpath_chat_name(out, sizeof(out), -1, "a", "00000000", 1), -1);
	assert_int_equal(vaultpath_chat_name(out, sizeof(out),
			     VAULT_TIME_MAX + 1, "a", "00000000", 1),
	    -1);
	assert_int_equal(
	    vaultpath_chat_name(out, 10, 0, "a", "00000000", 1), -1);
}

/* VA-5 */
static void
test_va5_name_pattern(void **state)
{
	char n[VAULT_NAME_MAX + 2];

	(void)state;
	assert_int_equal(vaultpath_name_ok("claude-code", 11), 1);
	assert_int_equal(vaultpath_name_ok("0", 1), 1);
	assert_int_equal(vaultpath_name_ok("", 0), 0);
	assert_int_equal(vaultpath_name_ok("-a", 2), 0);
	assert_int_equal(vaultpath_name_ok("a_b", 3), 0);
	assert_int_equal(vaultpath_name_ok("a.b", 3), 0);
	assert_int_equal(vaultpath_name_ok("a/b", 3), 0);
	memset(n, 'a', sizeof(n));
	assert_int_equal(vaultpath_name_ok(n, VAULT_NAME_MAX), 1);
	assert_int_equal(vaultpath_name_ok(n, VAULT_NAME_MAX + 1), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_va2_decode_once),
	    cmocka_unit_test(test_va2_decode_malformed_refused),
	    cmocka_unit_test(test_va2_read_ok),
	    cmocka_unit_test(test_va2_read_hostile_refused),
	    cmocka_unit_test(test_va2_dir_rules),
	    cmocka_unit_test(test_va3_mission_folder_ok),
	    cmocka_unit_test(test_va3_mission_folder_hostile_refused),
	    cmocka_unit_test(test_va3_hint_ok),
	    cmocka_unit_test(test_va3_hint_hostile_refused),
	    cmocka_unit_test(test_va5_chat_name),
	    cmocka_unit_test(test_va5_chat_name_refused),
	    cmocka_unit_test(test_va5_name_pattern),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
