/*
 * Shared by the benchmarks that drive a real `cordon run`: a temp home,
 * starting cordon beside the bench binary, HTTP/1.1 requests over
 * loopback and timing helpers.  Touches only the temp home it makes and
 * the cordon it starts.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <sys/types.h>

#include <stddef.h>

struct bench_cordon {
	char bc_home[256];
	char bc_token[65];
	int bc_port;
	pid_t bc_pid;
};

/* CLOCK_MONOTONIC in seconds. */
double bench_now(void);
/* Sort n doubles ascending; the value at percentile pct (0..100). */
void bench_sort(double *, long n);
double bench_pct(const double *sorted, long n, int pct);

/* A fresh temp home /tmp/cordon-bench-XXXXXX with an agents/ folder. */
int bench_home(struct bench_cordon *);
/* Write text to home/rel (its folder must exist). */
int bench_write(const struct bench_cordon *, const char *rel, const char *text);
/*
 * Start `cordon run --home HOME --port 0 [--allow-root] [extra]`, the
 * cordon found beside argv0; fills port, token and pid.
 */
int bench_start(struct bench_cordon *, const char *argv0, const char *extra);
/* SIGTERM, wait, remove the temp home. */
void bench_stop(struct bench_cordon *);

/* A TCP connection to 127.0.0.1:port, or -1. */
int bench_connect(int port);
/* One request with the bearer token; body NULL for none. */
int bench_request(int fd, const struct bench_cordon *, const char *method,
    const char *target, const char *body, int keepalive);
/*
 * Read one answer that has a Content-Length into buf (NUL-terminated);
 * returns its HTTP status, or -1 if the connection ended first.
 */
int bench_answer(int fd, char *buf, size_t bufsz);

/*
 * A chat run's answer (Connection: close): read to the end into buf
 * (NUL-terminated); 0 if it is a 200 with a done event and no error
 * event, else -1.
 */
int bench_chat_answer(int fd, char *buf, size_t bufsz);

/* The pid of cordon's child with this comm ("cordon-spawner"), or -1. */
pid_t bench_daemon(const struct bench_cordon *, const char *comm);
/* A process's VmRSS and VmHWM (KiB) and utime+stime (s); -1 if gone. */
int bench_proc_mem(pid_t, long *rss_kb, long *hwm_kb);
/* One "Name:  N kB" field of /proc/PID/FILE ("status", "smaps_rollup"). */
long bench_proc_kb(pid_t, const char *file, const char *name);
double bench_proc_cpu(pid_t, int with_children);

/* bench_child.c: start one daemon binary bin with argv, its channel chan
 * as fd 3, LANG=C TZ=UTC, SIGTERM when we die; its pid, or -1. */
pid_t bench_child(const char *bin, char **argv, int chan);

#endif
