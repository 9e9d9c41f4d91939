/*
 * The missions' wall clock (wallclock.h).  Test hook:
 * CORDON_TEST_CLOCK_FILE=/abs/path makes "now" the UTC epoch seconds
 * written in that file, read again at every call.  Reads only that file;
 * sets TZ for the length of one call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wallclock.h"

const char *
wallclock_test_file(void)
{
	const char *tc = getenv("CORDON_TEST_CLOCK_FILE");

	return tc != NULL && tc[0] == '/' ? tc : NULL;
}

/* The test clock's value: decimal seconds, optional trailing space. */
static int
test_clock_read(const char *path, time_t *out)
{
	char buf[32];
	long long v = 0;
	ssize_t n;
	int fd, i;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	for (i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) {
		v = v * 10 + (buf[i] - '0');
		if (v > WALLCLOCK_MAX)
			return -1;
	}
	if (i == 0)
		return -1;
	for (; i < n; i++)
		if (buf[i] != '\n' && buf[i] != ' ' && buf[i] != '\r')
			return -1;
	*out = (time_t)v;
	return 0;
}

int
wallclock_now(time_t *out)
{
	const char *tc = wallclock_test_file();

	if (tc == NULL) {
		*out = time(NULL);
		return 0;
	}
	return test_clock_read(tc, out);
}

int
wallclock_in_zone(const char *tz, void (*fn)(void *), void *arg)
{
	const char *old = getenv("TZ");
	char saved[128];
	int have;

	have = old != NULL && strlen(old) < sizeof(saved);
	if (have)
		snprintf(saved, sizeof(saved), "%s", old);
	if (setenv("TZ", tz != NULL ? tz : "UTC", 1) == -1)
		return -1;
	tzset();
	fn(arg);
	if (have)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	tzset();
	return 0;
}

struct lt_arg {
	time_t la_t;
	struct tm *la_out;
	int la_rc;
};

static void
lt_fn(void *arg)
{
	struct lt_arg *a = arg;

	a->la_rc = localtime_r(&a->la_t, a->la_out) == NULL ? -1 : 0;
}

int
wallclock_localtime(const char *tz, time_t t, struct tm *out)
{
	struct lt_arg a = {t, out, -1};

	if (wallclock_in_zone(tz, lt_fn, &a) == -1)
		return -1;
	return a.la_rc;
}
