/*
 * One logging API for every cordon process: tagged lines on stderr
 * (journald-friendly "<N>" priority prefix when under systemd).
 * Nothing else in cordon writes to stderr.
 */
#ifndef CORDON_LOG_H
#define CORDON_LOG_H

#include <stdarg.h>

void log_init(const char *procname, int debug);
void log_setproc(const char *procname);
const char *log_procname(void);

void log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
