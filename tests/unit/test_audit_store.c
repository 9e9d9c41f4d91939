/*
 * Unit tests for auditd's store, retention and tail ring (auditd/),
 * in-process on a temp dir: group writes and the chain, rollover inside
 * one group, a clock that steps back, torn and empty newest files, the
 * heads file bound, retention records, and the ring's bounds.  The
 * store's ftruncate goes through __wrap_ftruncate64 (linked with
 * --wrap=ftruncate64), which fails on a day file when cut_fails is set.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "../../auditd/auditd.h"
#include "audit_schema.h"
#include "json.h"
#include "sha256.h"

#define D1 1795564800 /* 2026-11-25T00:00:00Z */
#define D2 (D1 + 86400)

static char dir[64];
static int cut_fails; /* ftruncate of a DAY.jsonl fails with EIO */

int __real_ftruncate64(int, off_t);
int __wrap_ftruncate64(int, off_t);

int
__wrap_ftruncate64(int fd, off_t len)
{
	char link[64], path[512];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	if (cut_fails && n > 6 && strcmp(path + n - 6, ".jsonl") == 0) {
		errno = EIO;
		return -1;
	}
	return __real_ftruncate64(fd, len);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_audit_store.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int
teardown(void **state)
{
	char path[384];
	struct dirent *de;
	DIR *d;

	(void)state;
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.' &&
			    (de->d_name[1] == '\0' || de->d_name[1] == '.'))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
	return 0;
}

static void
store_init(struct audit_store *st, unsigned int retention)
{
	memset(st, 0, sizeof(*st));
	st->as_dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(st->as_dirfd >= 0);
	st->as_fd = -1;
	st->as_retention = retention;
	assert_int_equal(audit_store_open(st), 0);
}

static void
store_close(struct audit_store *st)
{
	if (st->as_fd != -1)
		close(st->as_fd);
	close(st->as_dirfd);
}

static void
item(struct audit_item *it, time_t t, long long n)
{
	struct json_object *rec = json_object_new_object();

	memset(it, 0, sizeof(*it));
	json_object_object_add(
	    rec, "kind", json_object_new_string("system.restart"));
	json_object_object_add(rec, "daemon", json_object_new_string("broker"));
	json_object_object_add(rec, "restarts", json_object_new_int64(n));
	assert_int_equal(audit_validate(rec, PROC_PARENT, &it->ai_rec), 0);
	json_object_put(rec);
	it->ai_ts.tv_sec = t;
}

static void
append(struct audit_store *st, const time_t *t, size_t n)
{
	struct audit_item its[8];
	size_t i;

	for (i = 0; i < n; i++)
		item(&its[i], t[i], (long long)i);
	assert_int_equal(audit_store_append(st, its, n), 0);
	for (i = 0; i < n; i++)
		json_object_put(its[i].ai_rec);
}

/* The file's bytes, NUL-terminated, or NULL if absent. */
static char *
slurp(const char *name, size_t *len)
{
	char path[384], *buf;
	struct stat sb;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	assert_int_equal(fstat(fileno(f), &sb), 0);
	buf = calloc(1, (size_t)sb.st_size + 1);
	*len = fread(buf, 1, (size_t)sb.st_size, f);
	fclose(f);
	return buf;
}

static void
put(const char *name, const char *data)
{
	char path[384];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(data, f);
	fclose(f);
}

static size_t
count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void
test_au7_group_chain_and_reopen(void **state)
{
	struct audit_store st, st2;
	time_t t[3] = {D1 + 10, D1 + 10, D1 + 11};
	char hash[SHA256_HEX_LEN + 1], *buf, *l2, *l3;
	size_t len;

	(void)state;
	store_init(&st, 0);
	append(&st, t, 3);
	assert_int_equal(st.as_seq, 3);
	assert_non_null(buf = slurp("2026-11-25.jsonl", &len));
	assert_int_equal(count_lines(buf), 3);
	assert_non_null(strstr(buf, "\"seq\":1,\"prev\":\"" AUDIT_GENESIS));
	l2 = strchr(buf, '\n') + 1;
	l3 = strchr(l2, '\n') + 1;
	assert_int_equal(sha256_hex(l2, (size_t)(l3 - l2 - 1), hash), 0);
	assert_non_null(strstr(l3, hash));
	assert_int_equal(sha256_hex(l3, strlen(l3) - 1, hash), 0);
	assert_string_equal(st.as_prev, hash);
	store_close(&st);
	/* A restart continues from the last line. */
	store_init(&st2, 0);
	assert_int_equal(st2.as_seq, 3);
	assert_string_equal(st2.as_prev, hash);
	assert_string_equal(st2.as_last, "2026-11-25");
	store_close(&st2);
	free(buf);
}

static void
test_au1_rollover_inside_one_group(void **state)
{
	struct audit_store st;
	time_t t[3] = {D2 - 1, D2, D2 + 1};
	char *a, *b, *h;
	size_t len;

	(void)state;
	store_init(&st, 0);
	append(&st, t, 3);
	assert_non_null(a = slurp("2026-11-25.jsonl", &len));
	assert_non_null(b = slurp("2026-11-26.jsonl", &len));
	assert_int_equal(count_lines(a), 1);
	assert_int_equal(count_lines(b), 2);
	assert_non_null(strstr(b, "\"seq\":2,"));
	/* The old day's head was anchored at the rollover. */
	assert_non_null(h = slurp("heads", &len));
	assert_non_null(strstr(h, "cordon-audit-head day=2026-11-25 seq=1 "));
	store_close(&st);
	free(a);
	free(b);
	free(h);
}

static void
test_au1_clock_stepping_back_stays_in_newer_file(void **state)
{
	struct audit_store st;
	time_t t[2] = {D2 + 5, D1 + 5};
	char *b;
	size_t len;

	(void)state;
	store_init(&st, 0);
	append(&st, t, 2);
	assert_null(slurp("2026-11-25.jsonl", &len));
	assert_non_null(b = slurp("2026-11-26.jsonl", &len));
	assert_int_equal(count_lines(b), 2);
	store_close(&st);
	free(b);
}

static void
test_au6_wholly_torn_newest_file_defers_to_older(void **state)
{
	struct audit_store st, st2;
	time_t t[2] = {D1 + 1, D1 + 2};
	char *torn, *b, prev[SHA256_HEX_LEN + 1];
	size_t len;

	(void)state;
	store_init(&st, 0);
	append(&st, t, 2);
	memcpy(prev, st.as_prev, sizeof(prev));
	store_close(&st);
	put("2026-11-26.jsonl", "{\"ts\":\"2026-11-26T00:00");
	put("2026-11-27.jsonl", "");
	store_init(&st2, 0);
	assert_int_equal(st2.as_seq, 2);
	assert_string_equal(st2.as_prev, prev);
	assert_non_null(torn = slurp("2026-11-26.jsonl.torn", &len));
	assert_string_equal(torn, "{\"ts\":\"2026-11-26T00:00");
	assert_non_null(b = slurp("2026-11-26.jsonl", &len));
	assert_int_equal(len, 0);
	store_close(&st2);
	free(torn);
	free(b);
}

/*
 * AU-6: the torn tail was copied to .torn, then cutting it from the day
 * file failed: the copy is undone, so the next start sets it aside once.
 */
static void
test_au6_torn_tail_set_aside_once_after_a_failed_cut(void **state)
{
	struct audit_store st, st2;
	time_t t[1] = {D1 + 1};
	char *torn, *b;
	size_t len, whole;

	(void)state;
	store_init(&st, 0);
	append(&st, t, 1);
	store_close(&st);
	assert_non_null(b = slurp("2026-11-25.jsonl", &whole));
	free(b);
	put("2026-11-25.jsonl.torn", "earlier\n");
	{
		char path[384];
		FILE *f;

		snprintf(path, sizeof(path), "%s/2026-11-25.jsonl", dir);
		assert_non_null(f = fopen(path, "a"));
		fputs("{\"ts\":\"2026-11-25T00:0", f);
		fclose(f);
	}
	cut_fails = 1;
	memset(&st, 0, sizeof(st));
	st.as_dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(st.as_dirfd >= 0);
	st.as_fd = -1;
	assert_int_equal(audit_store_open(&st), -1);
	cut_fails = 0;
	close(st.as_dirfd);
	if (st.as_fd != -1)
		close(st.as_fd);
	/* Nothing lost: the tail is still in the day file, .torn as was. */
	assert_non_null(torn = slurp("2026-11-25.jsonl.torn", &len));
	assert_string_equal(torn, "earlier\n");
	free(torn);
	assert_non_null(b = slurp("2026-11-25.jsonl", &len));
	assert_int_equal(len, whole + strlen("{\"ts\":\"2026-11-25T00:0"));
	free(b);
	/* The next start: set aside once, the chain goes on. */
	store_init(&st2, 0);
	assert_int_equal(st2.as_seq, 1);
	assert_non_null(torn = slurp("2026-11-25.jsonl.torn", &len));
	assert_string_equal(torn, "earlier\n{\"ts\":\"2026-11-25T00:0");
	assert_non_null(b = slurp("2026-11-25.jsonl", &len));
	assert_int_equal(len, whole);
	store_close(&st2);
	free(torn);
	free(b);
}

static void
test_au7_heads_file_keeps_the_newest_1000(void **state)
{
	struct audit_store st;
	char *h, want[64];
	size_t len, i;

	(void)state;
	store_init(&st, 0);
	memcpy(st.as_last, "2026-11-25", 11);
	for (i = 1; i <= AUDIT_HEADS_KEEP + 5; i++) {
		st.as_seq = i;
		audit_anchor(&st, "hourly");
	}
	/* Nothing new: no new anchor line. */
	audit_anchor(&st, "hourly");
	assert_non_null(h = slurp("heads", &len));
	assert_int_equal(count_lines(h), AUDIT_HEADS_KEEP);
	snprintf(want, sizeof(want), " seq=%d ", 6);
	assert_true(
	    strncmp(h, "cordon-audit-head day=2026-11-25 seq=6 ",
		strlen("cordon-audit-head day=2026-11-25 seq=6 ")) == 0);
	snprintf(want, sizeof(want), " seq=%d ", AUDIT_HEADS_KEEP + 5);
	assert_non_null(strstr(h + len - 120, want));
	store_close(&st);
	free(h);
}

static void
test_au8_retention_records_deleted_dates(void **state)
{
	struct audit_store st;
	char *b, name[32];
	size_t len;

	(void)state;
	put("2020-01-02.jsonl", "");
	put("2020-01-01.jsonl", "");
	put("2020-01-01.jsonl.torn", "x");
	put("notes.txt", "keep");
	store_init(&st, 30);
	assert_int_equal(audit_retention_run(&st), 0);
	assert_null(slurp("2020-01-01.jsonl", &len));
	assert_null(slurp("2020-01-01.jsonl.torn", &len));
	assert_null(slurp("2020-01-02.jsonl", &len));
	assert_non_null(b = slurp("notes.txt", &len));
	free(b);
	assert_int_equal(st.as_seq, 1);
	assert_int_equal(st.as_fd != -1, 1);
	snprintf(name, sizeof(name), "%s.jsonl", st.as_day);
	assert_non_null(b = slurp(name, &len));
	assert_non_null(strstr(b, "\"kind\":\"audit.retention\",\"deleted\":["
				  "\"2020-01-01\",\"2020-01-02\"]}\n"));
	free(b);
	/* Once a day: a second sweep the same day does nothing. */
	put("2020-01-03.jsonl", "");
	assert_int_equal(audit_retention_run(&st), 0);
	assert_non_null(b = slurp("2020-01-03.jsonl", &len));
	free(b);
	store_close(&st);
}

static void
test_api8_tail_ring_bounds_and_order(void **state)
{
	struct audit_store st;
	struct json_object *q, *arr;
	time_t t[8];
	size_t i, n;

	(void)state;
	store_init(&st, 0);
	for (i = 0; i < 8; i++)
		t[i] = D1 + 100;
	for (n = 0; n < AUDIT_TAIL_MAX + 8; n += 8)
		append(&st, t, 8);
	q = audit_tail_query(NULL, NULL, 0, AUDIT_TAIL_MAX);
	assert_true(json_object_object_get_ex(q, "records", &arr));
	assert_int_equal(json_object_array_length(arr), AUDIT_TAIL_MAX);
	assert_int_equal(json_object_get_int64(json_object_object_get(
			     json_object_array_get_idx(arr, 0), "seq")),
	    (int64_t)st.as_seq - AUDIT_TAIL_MAX + 1);
	json_object_put(q);
	q = audit_tail_query("system.restart", NULL, st.as_seq - 2, 10);
	assert_true(json_object_object_get_ex(q, "records", &arr));
	assert_int_equal(json_object_array_length(arr), 2);
	assert_int_equal(json_object_get_int64(json_object_object_get(
			     json_object_array_get_idx(arr, 1), "seq")),
	    (int64_t)st.as_seq);
	json_object_put(q);
	q = audit_tail_query(NULL, "nobody", 0, 10);
	assert_true(json_object_object_get_ex(q, "records", &arr));
	assert_int_equal(json_object_array_length(arr), 0);
	json_object_put(q);
	store_close(&st);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_au7_group_chain_and_reopen, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_au1_rollover_inside_one_group, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_au1_clock_stepping_back_stays_in_newer_file, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(
		test_au6_wholly_torn_newest_file_defers_to_older, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(
		test_au6_torn_tail_set_aside_once_after_a_failed_cut, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(
		test_au7_heads_file_keeps_the_newest_1000, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_au8_retention_records_deleted_dates, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_api8_tail_ring_bounds_and_order, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
