/*
 * The wall clock of missions, shared by cordon-sched and the
 * spawner's note dates: "now" (the test clock of CORDON_TEST_CLOCK_FILE
 * when set) and a time broken down in a named zone.
 */
#ifndef CORDON_WALLCLOCK_H
#define CORDON_WALLCLOCK_H

#include <time.h>

#define WALLCLOCK_MAX 253402300740LL /* 9999-12-31T23:59 */

/* The test clock file (absolute) if CORDON_TEST_CLOCK_FILE names one. */
const char *wallclock_test_file(void);
/* Now: the test clock's value if one is set, else time(2).  0 or -1
 * (a test clock that cannot be read). */
int wallclock_now(time_t *out);
/* Run fn(arg) with local time in zone tz (TZ set, tzset, restored:
 * single-threaded callers only).  0, or -1 if TZ could not be set. */
int wallclock_in_zone(const char *tz, void (*fn)(void *), void *arg);
/* t broken down in zone tz.  0 or -1. */
int wallclock_localtime(const char *tz, time_t t, struct tm *out);

#endif
