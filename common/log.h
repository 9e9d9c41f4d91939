/*
 * One logging API for every cordon process: tagged lines on stderr
 * (journald-friendly "<N>" priority prefix when under systemd).
 * Nothing else in cordon writes to stderr.
 */
#ifndef CORDON_LOG_H
#define CORDON_LOG_H

#include <stdarg.h>

#include "util.h"

void log_init(const char *procname, int debug);
void log_setproc(const char *procname);
const char *log_procname(void);

void log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));

/*
 * Lines that an agent causes, one per thing it does (a malformed gate
 * call, a datagram without its reply socket): a token bucket per limiter
 * (one per run's channel), LOG_LIMIT_N at once and one a second after,
 * so an agent in a loop cannot fill the log.  Those left out are counted
 * and said in one line (naming the run) before the next that is let
 * through, or by log_limit_end when the run's channel closes.
 */
#define LOG_LIMIT_N 10

struct log_limit {
	struct rate ll_rate;
	unsigned ll_left; /* lines left out since the last said */
};

int log_limit(struct log_limit *, const char *run);
void log_limit_end(struct log_limit *, const char *run);

#endif
