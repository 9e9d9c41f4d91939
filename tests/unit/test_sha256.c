/*
 * Unit tests for common/sha256.c (FIPS 180-2 vectors) and the helpers in
 * common/util.c: hex, constant-time compare, randomness, full I/O on pipes,
 * sorted directory listings, the atomic file write.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sha256.h"
#include "util.h"

static void
test_sha256_vectors(void **state)
{
	char hex[SHA256_HEX_LEN + 1];
	uint8_t md[SHA256_LEN];
	char *million;

	(void)state;
	assert_int_equal(sha256_hex("", 0, hex), 0);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb924"
				 "27ae41e4649b934ca495991b7852b855");
	assert_int_equal(sha256_hex(NULL, 0, hex), 0);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb924"
				 "27ae41e4649b934ca495991b7852b855");

	assert_int_equal(sha256_hex("abc", 3, hex), 0);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223"
				 "b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(strlen(hex), SHA256_HEX_LEN);

	assert_int_equal(sha256("abc", 3, md), 0);
	assert_int_equal(md[0], 0xba);
	assert_int_equal(md[31], 0xad);

	assert_non_null(million = malloc(1000000));
	memset(million, 'a', 1000000);
	assert_int_equal(sha256_hex(million, 1000000, hex), 0);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67"
				 "f1809a48a497200e046d39ccc7112cd0");
	free(million);

	assert_int_equal(sha256(NULL, 1, md), -1);
}

static void
test_hex_encode(void **state)
{
	static const uint8_t in[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
	char out[2 * sizeof(in) + 1];

	(void)state;
	memset(out, 'X', sizeof(out));
	hex_encode(in, sizeof(in), out);
	assert_string_equal(out, "00017f80abff");
	hex_encode(in, 0, out);
	assert_string_equal(out, "");
}

static void
test_timingsafe_eq(void **state)
{
	(void)state;
	assert_int_equal(timingsafe_eq("abcd", "abcd", 4), 1);
	assert_int_equal(timingsafe_eq("abcd", "abce", 4), 0);
	assert_int_equal(timingsafe_eq("xbcd", "abcd", 4), 0);
	assert_int_equal(timingsafe_eq("abcd", "abce", 3), 1);
	assert_int_equal(timingsafe_eq("a", "b", 0), 1);
}

static void
test_random_hex(void **state)
{
	char a[65], b[65], small[8];
	size_t i;

	(void)state;
	assert_int_equal(random_hex(a, sizeof(a), 32), 0);
	assert_int_equal(strlen(a), 64);
	for (i = 0; i < 64; i++)
		assert_non_null(strchr("0123456789abcdef", a[i]));
	assert_int_equal(random_hex(b, sizeof(b), 32), 0);
	assert_string_not_equal(a, b);

	assert_int_equal(random_hex(a, sizeof(a), 0), 0);
	assert_string_equal(a, "");

	/* Output too small for 2*len+1: refused. */
	errno = 0;
	assert_int_equal(random_hex(small, sizeof(small), 4), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(random_hex(small, sizeof(small), 3), 0);
	assert_int_equal(strlen(small), 6);
}

static void
test_random_bytes(void **state)
{
	uint8_t buf[4096], zero[sizeof(buf)];

	(void)state;
	memset(buf, 0, sizeof(buf));
	memset(zero, 0, sizeof(zero));
	assert_int_equal(random_bytes(buf, sizeof(buf)), 0);
	assert_memory_not_equal(buf, zero, sizeof(buf));
	assert_int_equal(random_bytes(buf, 0), 0);
}

static void
test_read_write_full(void **state)
{
	char big[200000], back[sizeof(big)], tail[8];
	int p[2];
	pid_t pid;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7);

	/* Larger than a pipe buffer: forces short reads and writes. */
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		close(p[0]);
		_exit(write_full(p[1], big, sizeof(big)) == 0 ? 0 : 1);
	}
	close(p[1]);
	assert_int_equal(read_full(p[0], back, sizeof(back)), 0);
	assert_memory_equal(big, back, sizeof(big));

	/* Writer gone: premature EOF is an error with EIO. */
	errno = 0;
	assert_int_equal(read_full(p[0], tail, 1), -1);
	assert_int_equal(errno, EIO);
	close(p[0]);

	/* EOF after a partial read is still EIO. */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write_full(p[1], "abc", 3), 0);
	close(p[1]);
	errno = 0;
	assert_int_equal(read_full(p[0], tail, sizeof(tail)), -1);
	assert_int_equal(errno, EIO);
	close(p[0]);

	assert_int_equal(read_full(-1, tail, 1), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(write_full(-1, "x", 1), -1);
	assert_int_equal(errno, EBADF);
}

static void
test_fd_flags(void **state)
{
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(set_cloexec(p[0], 1), 0);
	assert_true(fcntl(p[0], F_GETFD) & FD_CLOEXEC);
	assert_int_equal(set_cloexec(p[0], 0), 0);
	assert_false(fcntl(p[0], F_GETFD) & FD_CLOEXEC);
	assert_int_equal(set_nonblock(p[0], 1), 0);
	assert_true(fcntl(p[0], F_GETFL) & O_NONBLOCK);
	assert_int_equal(set_nonblock(p[0], 0), 0);
	assert_false(fcntl(p[0], F_GETFL) & O_NONBLOCK);
	close(p[0]);
	close(p[1]);
	assert_int_equal(set_cloexec(-1, 1), -1);
	assert_int_equal(set_nonblock(-1, 1), -1);
}

static void
test_misc(void **state)
{
	char secret[] = "hunter2";
	uint64_t a, b;

	(void)state;
	explicit_bzero_str(secret);
	assert_memory_equal(secret, "\0\0\0\0\0\0\0", sizeof(secret));
	explicit_bzero_str(NULL);

	a = now_ms_mono();
	usleep(20000);
	b = now_ms_mono();
	assert_true(a > 0);
	assert_true(b >= a + 15);
}

static int
ends_yaml(const char *n)
{
	size_t l = strlen(n);

	return n[0] != '.' && l > 5 && strcmp(n + l - 5, ".yaml") == 0;
}

/* dir_names: a filtered, strcmp-ordered list whatever the fs order. */
static void
test_dir_names(void **state)
{
	static const char *const make[] = {"b.yaml", "a.yaml", "c.txt",
	    ".h.yaml", "Z.yaml", "aa.yaml", "a.yaml~"};
	char tmpl[] = "/tmp/cordon-dirnames-XXXXXX", path[256];
	char **names;
	size_t i, n;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	names = dir_names(tmpl, ends_yaml, &n); /* empty: empty list */
	assert_non_null(names);
	assert_int_equal(n, 0);
	dir_names_free(names, n);
	for (i = 0; i < sizeof(make) / sizeof(make[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpl, make[i]);
		assert_true((fd = open(path, O_CREAT | O_WRONLY, 0600)) >= 0);
		close(fd);
	}
	names = dir_names(tmpl, ends_yaml, &n);
	assert_non_null(names);
	assert_int_equal(n, 4);
	assert_string_equal(names[0], "Z.yaml");
	assert_string_equal(names[1], "a.yaml");
	assert_string_equal(names[2], "aa.yaml");
	assert_string_equal(names[3], "b.yaml");
	dir_names_free(names, n);
	for (i = 0; i < sizeof(make) / sizeof(make[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpl, make[i]);
		unlink(path);
	}
	rmdir(tmpl);
	errno = 0;
	assert_null(dir_names(tmpl, ends_yaml, &n));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(n, 0);
}

/* atomic_write_at: replaces whole, with its mode, leaves no temp, and
 * takes one name only. */
static void
test_atomic_write(void **state)
{
	char tmpl[] = "/tmp/cordon-atomic-XXXXXX", buf[16];
	struct stat sb;
	int dfd, fd;
	ssize_t n;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	assert_true((dfd = open(tmpl, O_RDONLY | O_DIRECTORY)) >= 0);
	assert_int_equal(
	    atomic_write_at(dfd, "f", "old text", 8, 0600, -1, -1), 0);
	/* a stale temp from a crash is replaced, not followed */
	assert_int_equal(symlinkat("/etc/passwd", dfd, ".f.tmp"), 0);
	assert_int_equal(atomic_write_at(dfd, "f", "new", 3, 0640, -1, -1), 0);
	assert_true((fd = openat(dfd, "f", O_RDONLY)) >= 0);
	n = read(fd, buf, sizeof(buf));
	assert_int_equal(n, 3);
	assert_memory_equal(buf, "new", 3);
	assert_int_equal(fstat(fd, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0640);
	close(fd);
	assert_int_equal(
	    faccessat(dfd, ".f.tmp", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	errno = 0;
	assert_int_equal(atomic_write_at(dfd, "a/f", "x", 1, 0600, -1, -1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(unlinkat(dfd, "f", 0), 0);
	close(dfd);
	assert_int_equal(rmdir(tmpl), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sha256_vectors),
	    cmocka_unit_test(test_hex_encode),
	    cmocka_unit_test(test_timingsafe_eq),
	    cmocka_unit_test(test_random_hex),
	    cmocka_unit_test(test_random_bytes),
	    cmocka_unit_test(test_read_write_full),
	    cmocka_unit_test(test_fd_flags),
	    cmocka_unit_test(test_misc),
	    cmocka_unit_test(test_dir_names),
	    cmocka_unit_test(test_atomic_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
