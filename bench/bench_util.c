/*
 * Shared by the benchmarks that drive a real `cordon run` (bench_util.h).
 * Touches only the temp home it makes and the cordon it starts.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

extern char **environ;

double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void
bench_sort(double *v, long n)
{
	qsort(v, (size_t)n, sizeof(double), dcmp);
}

double
bench_pct(const double *v, long n, int pct)
{
	return n > 0 ? v[(n * pct) / 100 < n ? (n * pct) / 100 : n - 1] : 0;
}

int
bench_home(struct bench_cordon *bc)
{
	char path[PATH_MAX];

	memset(bc, 0, sizeof(*bc));
	snprintf(bc->bc_home, sizeof(bc->bc_home), "/tmp/cordon-bench-XXXXXX");
	if (mkdtemp(bc->bc_home) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/agents", bc->bc_home);
	return mkdir(path, 0755);
}

int
bench_write(const struct bench_cordon *bc, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", bc->bc_home, rel);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fputs(text, f);
	return fclose(f);
}

int
bench_start(struct bench_cordon *bc, const char *argv0, const char *extra)
{
	char bin[PATH_MAX], line[512], path[PATH_MAX], *slash;
	char *argv[] = {
	    bin, "run", "--home", bc->bc_home, "--port", "0", NULL, NULL, NULL};
	posix_spawn_file_actions_t fa;
	int p[2], i = 6;
	ssize_t n;
	size_t got = 0;
	FILE *f;

	snprintf(bin, sizeof(bin), "%s", argv0);
	if ((slash = strrchr(bin, '/')) == NULL)
		return -1;
	snprintf(slash, sizeof(bin) - (size_t)(slash - bin), "/../cordon");
	if (getuid() == 0)
		argv[i++] = "--allow-root";
	if (extra != NULL)
		argv[i++] = (char *)extra;
	if (pipe(p) == -1)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	if (posix_spawn(&bc->bc_pid, bin, &fa, NULL, argv, environ) != 0)
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	line[0] = '\0';
	while (got + 1 < sizeof(line) &&
	       (n = read(p[0], line + got, sizeof(line) - 1 - got)) > 0) {
		got += (size_t)n;
		line[got] = '\0';
		if (strchr(line, '\n') != NULL)
			break;
	}
	close(p[0]);
	if ((slash = strstr(line, "127.0.0.1:")) == NULL)
		return -1;
	bc->bc_port = atoi(slash + 10);
	snprintf(path, sizeof(path), "%s/run/token", bc->bc_home);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(bc->bc_token, sizeof(bc->bc_token), f) == NULL) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

static int
rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

void
bench_stop(struct bench_cordon *bc)
{
	int st;

	if (bc->bc_pid > 0) {
		kill(bc->bc_pid, SIGTERM);
		waitpid(bc->bc_pid, &st, 0);
		bc->bc_pid = 0;
	}
	if (bc->bc_home[0] != '\0')
		nftw(bc->bc_home, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

int
bench_connect(int port)
{
	struct sockaddr_in sin;
	int fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

int
bench_request(int fd, const struct bench_cordon *bc, const char *method,
    const char *target, const char *body, int keepalive)
{
	char req[2048];
	int n;

	n = snprintf(req, sizeof(req),
	    "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
	    "Authorization: Bearer %s\r\n%s%zu\r\nConnection: %s\r\n\r\n%s",
	    method, target, bc->bc_port, bc->bc_token,
	    body != NULL ? "Content-Type: application/json\r\n"
			   "Content-Length: "
			 : "Content-Length: ",
	    body != NULL ? strlen(body) : 0, keepalive ? "keep-alive" : "close",
	    body != NULL ? body : "");
	if (n < 0 || (size_t)n >= sizeof(req))
		return -1;
	return write(fd, req, (size_t)n) == n ? 0 : -1;
}

int
bench_answer(int fd, char *buf, size_t bufsz)
{
	size_t got = 0, need;
	char *end, *cl;
	ssize_t n;

	for (;;) {
		if (got + 1 >= bufsz ||
		    (n = read(fd, buf + got, bufsz - 1 - got)) <= 0)
			return -1;
		got += (size_t)n;
		buf[got] = '\0';
		if ((end = strstr(buf, "\r\n\r\n")) != NULL)
			break;
	}
	if ((cl = strcasestr(buf, "Content-Length:")) == NULL || cl > end)
		return -1;
	need = (size_t)(end + 4 - buf) + (size_t)atol(cl + 15);
	if (need >= bufsz)
		return -1;
	while (got < need) {
		if ((n = read(fd, buf + got, bufsz - 1 - got)) <= 0)
			return -1;
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (strncmp(buf, "HTTP/1.1 ", 9) != 0)
		return -1;
	return atoi(buf + 9);
}

int
bench_chat_answer(int fd, char *buf, size_t bufsz)
{
	size_t got = 0;
	ssize_t n;

	while (
	    got + 1 < bufsz && (n = read(fd, buf + got, bufsz - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	return strncmp(buf, "HTTP/1.1 200", 12) == 0 &&
		       strstr(buf, "\"kind\":\"done\"") != NULL &&
		       strstr(buf, "\"kind\":\"error\"") == NULL
		   ? 0
		   : -1;
}

long
bench_proc_kb(pid_t pid, const char *file, const char *name)
{
	char path[64], line[256];
	size_t len = strlen(name);
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (kb == -1 && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, name, len) == 0 && line[len] == ':')
			kb = atol(line + len + 1);
	fclose(f);
	return kb;
}

int
bench_proc_mem(pid_t pid, long *rss_kb, long *hwm_kb)
{
	*rss_kb = bench_proc_kb(pid, "status", "VmRSS");
	*hwm_kb = bench_proc_kb(pid, "status", "VmHWM");
	return *rss_kb < 0 ? -1 : 0;
}

double
bench_proc_cpu(pid_t pid, int with_children)
{
	char path[64], line[1024], *p;
	unsigned long long v[4];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (p == NULL || (p = strrchr(line, ')')) == NULL)
		return -1;
	/* After ") ": state is field 3; utime..cstime are fields 14..17. */
	for (i = 3; i <= 14 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL ||
	    sscanf(p, " %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3]) != 4)
		return -1;
	return (double)(v[0] + v[1] + (with_children ? v[2] + v[3] : 0)) /
	       (double)sysconf(_SC_CLK_TCK);
}

pid_t
bench_daemon(const struct bench_cordon *bc, const char *comm)
{
	char path[300], line[512], *p;
	struct dirent *de;
	pid_t found = -1;
	size_t len = strlen(comm);
	DIR *d;
	FILE *f;

	if ((d = opendir("/proc")) == NULL)
		return -1;
	while (found == -1 && (de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		p = fgets(line, sizeof(line), f);
		fclose(f);
		/* "PID (comm) S PPID ...": ours is a child of our cordon. */
		if (p == NULL || (p = strchr(line, '(')) == NULL ||
		    strncmp(p + 1, comm, len) != 0 || p[1 + len] != ')' ||
		    atol(p + len + 5) != (long)bc->bc_pid)
			continue;
		found = (pid_t)atol(de->d_name);
	}
	closedir(d);
	return found;
}
