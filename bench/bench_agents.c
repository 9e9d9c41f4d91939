/*
 * bench_agents: the spawner end to end.  Starts a real `cordon run` on a
 * temp home and, in one run, times (a) the floor, posix_spawn + waitpid
 * of /bin/true, against (b) POST /api/agents/x/actions/noop (/bin/true)
 * over one keep-alive HTTP connection, sequentially: medians, p99 and
 * b/a.  Then streams concurrent chat runs of 10 MB each (`yes`) and
 * reports the total time and the spawner's peak RSS.  Touches only its
 * temp home and the cordon it starts.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define STREAMS_PER_AGENT 16 /* spawner.maxRunsPerAgent below */
#define STREAM_AGENTS	  4  /* 64 concurrent runs: spawner.maxRuns */
#define STREAM_BYTES	  (10 * 1024 * 1024)

static char home[256], token[65];
static int port;
static pid_t cordon_pid;

static double
now(void)
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

static void
stats(const char *what, double *v, long n, double *median)
{
	qsort(v, (size_t)n, sizeof(double), dcmp);
	*median = v[n / 2];
	printf("%-44s median %8.1f us   p99 %8.1f us\n", what, v[n / 2] * 1e6,
	    v[(n * 99) / 100] * 1e6);
}

static int
write_file(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", home, rel);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int
make_home(void)
{
	char path[PATH_MAX], text[512];
	int i;

	snprintf(home, sizeof(home), "/tmp/cordon-bench-XXXXXX");
	if (mkdtemp(home) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/agents", home);
	if (mkdir(path, 0755) == -1)
		return -1;
	/* SP-14's default bound is 16 runs; the bench raises it to 64. */
	if (write_file("cordon.yaml", "spawner:\n  maxRuns: 64\n"
				      "  maxRunsPerAgent: 16\n") == -1)
		return -1;
	if (write_file("agents/x.yaml",
		"name: x\ntransport: subprocess\ntransportConfig:\n"
		"  bin: /bin/true\n  args: [\"{prompt}\"]\n"
		"actions:\n  - id: noop\n    label: Noop\n"
		"    command: [/bin/true]\n    hint: nothing\n") == -1)
		return -1;
	for (i = 0; i < STREAM_AGENTS; i++) {
		snprintf(path, sizeof(path), "agents/s%d.yaml", i);
		snprintf(text, sizeof(text),
		    "name: s%d\ntransport: subprocess\ntransportConfig:\n"
		    "  bin: /usr/bin/yes\n  args: [\"{prompt}\"]\n"
		    "limits:\n  runOutputBytes: %d\n",
		    i, STREAM_BYTES);
		if (write_file(path, text) == -1)
			return -1;
	}
	return 0;
}

static int
start_cordon(const char *self)
{
	char bin[PATH_MAX], line[512], path[PATH_MAX], *slash;
	char *argv[] = {bin, "run", "--home", home, "--port", "0", NULL, NULL};
	posix_spawn_file_actions_t fa;
	int p[2];
	ssize_t n;
	size_t got = 0;
	FILE *f;

	snprintf(bin, sizeof(bin), "%s", self);
	if ((slash = strrchr(bin, '/')) == NULL)
		return -1;
	snprintf(slash, sizeof(bin) - (size_t)(slash - bin), "/../cordon");
	if (getuid() == 0)
		argv[6] = "--allow-root";
	if (pipe(p) == -1)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	if (posix_spawn(&cordon_pid, bin, &fa, NULL, argv, environ) != 0)
		return -1;
	close(p[1]);
	while (got + 1 < sizeof(line) &&
	       (n = read(p[0], line + got, sizeof(line) - 1 - got)) > 0) {
		got += (size_t)n;
		line[got] = '\0';
		if (strchr(line, '\n') != NULL)
			break;
	}
	if ((slash = strstr(line, "127.0.0.1:")) == NULL)
		return -1;
	port = atoi(slash + 10);
	snprintf(path, sizeof(path), "%s/run/token", home);
	if ((f = fopen(path, "r")) == NULL || fgets(token, 65, f) == NULL)
		return -1;
	fclose(f);
	return 0;
}

static int
connect_local(void)
{
	struct sockaddr_in sin;
	int fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		return -1;
	return fd;
}

static int
post(int fd, const char *target, const char *body, int keepalive)
{
	char req[1024];
	int n;

	n = snprintf(req, sizeof(req),
	    "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
	    "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\nConnection: %s\r\n\r\n%s",
	    target, port, token, strlen(body),
	    keepalive ? "keep-alive" : "close", body);
	return write(fd, req, (size_t)n) == n ? 0 : -1;
}

/* One keep-alive answer with Content-Length; 0 if it was a 200. */
static int
read_answer(int fd)
{
	static char buf[65536];
	size_t got = 0, need;
	char *end, *cl;
	ssize_t n;

	for (;;) {
		if ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) <= 0)
			return -1;
		got += (size_t)n;
		buf[got] = '\0';
		if ((end = strstr(buf, "\r\n\r\n")) != NULL)
			break;
	}
	if ((cl = strcasestr(buf, "Content-Length:")) == NULL)
		return -1;
	need = (size_t)(end + 4 - buf) + (size_t)atol(cl + 15);
	while (got < need) {
		if ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) <= 0)
			return -1;
		got += (size_t)n;
	}
	buf[got] = '\0';
	return strncmp(buf, "HTTP/1.1 200", 12) == 0 &&
		       strstr(buf, "\"ok\":true") != NULL
		   ? 0
		   : -1;
}

/* The spawner's peak RSS (VmHWM, kB): our cordon's spawner child. */
static long
spawner_hwm(void)
{
	char path[64], line[256], comm[64];
	long hwm = -1;
	FILE *f;
	pid_t pid;

	for (pid = 2; pid < 4194304 && hwm == -1; pid++) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) == NULL ||
		    strncmp(comm, "cordon-spawner", 14) != 0) {
			fclose(f);
			continue;
		}
		fclose(f);
		/* ours: a child of the cordon we started */
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(line, sizeof(line), f) == NULL ||
		    strrchr(line, ')') == NULL ||
		    atol(strrchr(line, ')') + 4) != (long)cordon_pid) {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "VmHWM:", 6) == 0)
				hwm = atol(line + 6);
		fclose(f);
	}
	return hwm;
}

static void
streams(void)
{
	int n = STREAM_AGENTS * STREAMS_PER_AGENT, i, open_n;
	struct pollfd pfd[STREAM_AGENTS * STREAMS_PER_AGENT];
	static char buf[65536];
	double t0, total = 0;
	char target[64];
	ssize_t r;

	t0 = now();
	for (i = 0; i < n; i++) {
		snprintf(target, sizeof(target), "/api/agents/s%d/run",
		    i % STREAM_AGENTS);
		pfd[i].events = POLLIN;
		if ((pfd[i].fd = connect_local()) == -1 ||
		    post(pfd[i].fd, target, "{\"prompt\":\"y\"}", 0) == -1) {
			fprintf(stderr, "bench_agents: stream %d failed\n", i);
			exit(1);
		}
	}
	for (open_n = n; open_n > 0;) {
		if (poll(pfd, (nfds_t)n, 60000) <= 0)
			break;
		for (i = 0; i < n; i++) {
			if (pfd[i].fd < 0 ||
			    !(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			if ((r = read(pfd[i].fd, buf, sizeof(buf))) > 0) {
				total += (double)r;
				continue;
			}
			close(pfd[i].fd);
			pfd[i].fd = -1;
			open_n--;
		}
	}
	printf("%d concurrent runs x 10 MB (yes): %.2f s, %.1f MB relayed "
	       "(JSON-framed), spawner peak RSS %ld KiB\n",
	    n, now() - t0, total / 1e6, spawner_hwm());
}

static int
rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

int
main(int argc, char **argv)
{
	char *cargv[] = {"/bin/true", NULL};
	char *cenv[] = {"PATH=/usr/bin:/bin", NULL};
	long i, n = argc > 1 ? atol(argv[1]) : 300;
	double *a, *b, t, ma, mb;
	pid_t pid;
	int st, fd;

	if (n <= 0)
		n = 300;
	if ((a = calloc((size_t)n, sizeof(double))) == NULL ||
	    (b = calloc((size_t)n, sizeof(double))) == NULL ||
	    make_home() == -1 || start_cordon(argv[0]) == -1) {
		fprintf(stderr, "bench_agents: cannot start cordon\n");
		return 1;
	}
	usleep(300 * 1000); /* start-up probes */
	for (i = 0; i < n; i++) {
		t = now();
		if (posix_spawn(&pid, "/bin/true", NULL, NULL, cargv, cenv))
			return 1;
		waitpid(pid, &st, 0);
		a[i] = now() - t;
	}
	if ((fd = connect_local()) == -1)
		return 1;
	for (i = 0; i < n; i++) {
		t = now();
		if (post(fd, "/api/agents/x/actions/noop", "{}", 1) == -1 ||
		    read_answer(fd) == -1) {
			fprintf(stderr, "bench_agents: action failed\n");
			return 1;
		}
		b[i] = now() - t;
	}
	close(fd);
	printf("bench_agents: %ld iterations\n", n);
	stats("(a) posix_spawn+waitpid /bin/true", a, n, &ma);
	stats("(b) POST /api/agents/x/actions/noop", b, n, &mb);
	printf("ratio b/a (medians): %.2f\n", mb / ma);
	streams();
	kill(cordon_pid, SIGTERM);
	waitpid(cordon_pid, &st, 0);
	nftw(home, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
