/*
 * Logging: one line per event, "procname: message", to stderr.  Under
 * systemd (JOURNAL_STREAM set) lines carry a "<N>" syslog priority so
 * journald files them at the right level.  Touches only fd 2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static const char *log_proc = "cordon";
static int log_debug_on;
static int log_journal;

void
log_init(const char *procname, int debug)
{
	log_proc = procname;
	log_debug_on = debug || getenv("CORDON_DEBUG") != NULL;
	log_journal = getenv("JOURNAL_STREAM") != NULL;
}

void
log_setproc(const char *procname)
{
	log_proc = procname;
}

const char *
log_procname(void)
{
	return log_proc;
}

static const char *
log_prefix(int prio)
{
	static char buf[4];

	if (!log_journal)
		return "";
	buf[0] = '<';
	buf[1] = (char)('0' + prio);
	buf[2] = '>';
	buf[3] = '\0';
	return buf;
}

static void vlog(int, int, const char *, va_list)
    __attribute__((format(printf, 3, 0)));

static void
vlog(int prio, int with_errno, const char *fmt, va_list ap)
{
	char msg[1024];
	char line[1200];
	int saved = errno, n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = snprintf(line, sizeof(line), "%s%s: %s%s%s\n", log_prefix(prio),
	    log_proc, msg, with_errno ? ": " : "",
	    with_errno ? strerror(saved) : "");
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	/* One write(2) per line so lines from several processes never mix. */
	(void)!write(STDERR_FILENO, line, (size_t)n);
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(4, 1, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(4, 0, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(6, 0, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_debug_on)
		return;
	va_start(ap, fmt);
	vlog(7, 0, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(3, 1, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(3, 0, fmt, ap);
	va_end(ap);
	exit(1);
}

/* The lines left out for run, if any, said once. */
void
log_limit_end(struct log_limit *l, const char *run)
{
	if (l->ll_left > 0)
		log_warnx("run %s: %u more lines like these left out", run,
		    l->ll_left);
	l->ll_left = 0;
}

/* 1: log the line; 0: leave it out, counted. */
int
log_limit(struct log_limit *l, const char *run)
{
	if (!rate_take(&l->ll_rate, 1, LOG_LIMIT_N)) {
		l->ll_left++;
		return 0;
	}
	log_limit_end(l, run);
	return 1;
}
