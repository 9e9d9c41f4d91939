/*
 * bench_load: a real `cordon run` under a mixed HTTP load, and the whole
 * system's memory.  In one run it measures, on the same machine:
 *
 *   floor: a bare libevent evhttp server (this binary re-executed with
 *   --floor-server: one process, one handler answering {"ok":true}); its
 *   idle RSS, and keep-alive GETs from CONNS connections against it;
 *   and posix_spawn + waitpid of /bin/true, the floor of a spawned run.
 *   For memory also bench_idle and bench_idle_libs (bench_idle.c): a
 *   process that does nothing, with libc alone and with every library a
 *   cordon daemon links mapped but unused.
 *
 *   cordon: the idle RSS of its eight processes (cordond, auditd, vaultd,
 *   spawner, broker, egressd, sched, gated; target < 16 MiB together); GET
 *   /api/health alone from CONNS connections; then SECONDS of a mixed
 *   workload (health, agent list, Control Room actions, short chat
 *   runs, vault reads, audit tails) with throughput, p50/p99 per
 *   request type, and each process's RSS and CPU time.  Every result
 *   is printed beside its floor as a ratio.  The idle RSS is also
 *   broken down by mapping (/proc/PID/smaps: each library, the binary,
 *   heap, stack, the rest).
 *
 * Usage: bench_load [SECONDS] [CONNS]     (default 10 s, 16 connections)
 * Touches only its temp home, the cordon it starts and the floor server.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "bench_util.h"

extern char **environ;

#define MAX_CONNS	 64
#define FLOOR_SECONDS	 3.0
#define HEALTH_SECONDS	 3.0
#define IDLE_TARGET_KB	 (16 * 1024)
#define SPAWN_FLOOR_RUNS 200
#define NOTES		 8
#define ANSWER_MAX	 (256 * 1024)
#define MAP_ROWS	 32
#define MAP_NAME	 32

enum { T_HEALTH, T_AGENTS, T_VAULT, T_AUDIT, T_ACTION, T_CHAT, T_FLOOR, NT };

static const char *tname[NT] = {"GET /api/health", "GET /api/agents",
    "GET /api/vault/note", "GET /api/audit", "POST .../actions/noop",
    "POST .../run (chat)", "GET / (floor evhttp)"};

/* One cycle of the mixed workload, per connection (offset by its id). */
static const int mix[] = {T_HEALTH, T_AGENTS, T_VAULT, T_AUDIT, T_ACTION,
    T_HEALTH, T_AGENTS, T_VAULT, T_AUDIT, T_CHAT};
#define NMIX (sizeof(mix) / sizeof(mix[0]))

static const char *procs[] = {NULL, "cordon-auditd", "cordon-vaultd",
    "cordon-spawner", "cordon-broker", "cordon-egressd", "cordon-sched",
    "cordon-gated"};
#define NPROCS 8

struct lat {
	double *v;
	long n, cap, err;
};

struct worker {
	pthread_t w_thread;
	int w_id;
	int w_only; /* a single type, or -1 for the mix */
	int w_port;
	double w_until;
	struct lat w_lat[NT];
	char *w_buf;
};

static struct bench_cordon bc;

/* ---- the floor: a bare evhttp server in its own process ---- */

static void
floor_cb(struct evhttp_request *req, void *arg)
{
	struct evbuffer *b = evbuffer_new();

	evbuffer_add(b, "{\"ok\":true}", 11);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/json");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

static int
floor_server(void)
{
	struct event_base *base = event_base_new();
	struct evhttp *http = base ? evhttp_new(base) : NULL;
	struct evhttp_bound_socket *bs;
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	if (http == NULL ||
	    (bs = evhttp_bind_socket_with_handle(http, "127.0.0.1", 0)) ==
		NULL ||
	    getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sin,
		&len) == -1)
		return 1;
	evhttp_set_gencb(http, floor_cb, NULL);
	printf("port %d\n", ntohs(sin.sin_port));
	fflush(stdout);
	event_base_dispatch(base);
	return 0;
}

static pid_t
floor_start(const char *self, int *port)
{
	char *argv[] = {(char *)self, "--floor-server", NULL}, line[64];
	posix_spawn_file_actions_t fa;
	pid_t pid;
	ssize_t n;
	int p[2];

	if (pipe(p) == -1)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	if (posix_spawn(&pid, self, &fa, NULL, argv, environ) != 0)
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	n = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	if (n <= 5 || strncmp(line, "port ", 5) != 0)
		return -1;
	line[n] = '\0';
	*port = atoi(line + 5);
	return pid;
}

/* ---- load ---- */

static void
lat_add(struct lat *l, double v)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4096;
		if ((l->v = realloc(l->v, (size_t)l->cap * sizeof(double))) ==
		    NULL) {
			perror("bench_load");
			exit(1);
		}
	}
	l->v[l->n++] = v;
}

/* A chat run on its own connection, read to the end of its stream. */
static int
chat(struct worker *w, long i)
{
	char body[128];
	int fd, rc;

	snprintf(
	    body, sizeof(body), "{\"prompt\":\"load %d %ld\"}", w->w_id, i);
	if ((fd = bench_connect(w->w_port)) == -1)
		return -1;
	if (bench_request(fd, &bc, "POST", "/api/agents/c/run", body, 0) ==
	    -1) {
		close(fd);
		return -1;
	}
	rc = bench_chat_answer(fd, w->w_buf, ANSWER_MAX);
	close(fd);
	return rc;
}

static int
one(struct worker *w, int *fd, int type, long i)
{
	char target[128];
	const char *method = "GET", *body = NULL;
	int st;

	switch (type) {
	case T_CHAT:
		return chat(w, i);
	case T_HEALTH:
		snprintf(target, sizeof(target), "/api/health");
		break;
	case T_AGENTS:
		snprintf(target, sizeof(target), "/api/agents");
		break;
	case T_VAULT:
		snprintf(target, sizeof(target),
		    "/api/vault/note?path=notes%%2Fn%ld.md", i % NOTES);
		break;
	case T_AUDIT:
		snprintf(target, sizeof(target), "/api/audit?limit=20");
		break;
	case T_ACTION:
		snprintf(target, sizeof(target), "/api/agents/x/actions/noop");
		method = "POST";
		body = "{}";
		break;
	default:
		snprintf(target, sizeof(target), "/");
	}
	if (*fd == -1 && (*fd = bench_connect(w->w_port)) == -1)
		return -1;
	if (bench_request(*fd, &bc, method, target, body, 1) == -1 ||
	    (st = bench_answer(*fd, w->w_buf, ANSWER_MAX)) == -1) {
		close(*fd); /* reconnect for the next one */
		*fd = -1;
		return -1;
	}
	if (st != 200 ||
	    (type != T_FLOOR && strstr(w->w_buf, "\"ok\":true") == NULL))
		return -1;
	return 0;
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	int fd = -1, type;
	double t;
	long i;

	for (i = 0; bench_now() < w->w_until; i++) {
		type = w->w_only >= 0 ? w->w_only
				      : mix[(size_t)(i + w->w_id) % NMIX];
		t = bench_now();
		if (one(w, &fd, type, i) == -1)
			w->w_lat[type].err++;
		else
			lat_add(&w->w_lat[type], bench_now() - t);
	}
	if (fd != -1)
		close(fd);
	return NULL;
}

/* Run conns workers for secs; merge their latencies into out[]. */
static void
run_load(int port, int conns, double secs, int only, struct lat *out)
{
	struct worker *w = calloc((size_t)conns, sizeof(*w));
	double until = bench_now() + secs;
	int i, t;
	long k;

	if (w == NULL)
		exit(1);
	memset(out, 0, NT * sizeof(*out));
	for (i = 0; i < conns; i++) {
		w[i].w_id = i;
		w[i].w_only = only;
		w[i].w_port = port;
		w[i].w_until = until;
		if ((w[i].w_buf = malloc(ANSWER_MAX)) == NULL ||
		    pthread_create(&w[i].w_thread, NULL, work, &w[i]) != 0)
			exit(1);
	}
	for (i = 0; i < conns; i++) {
		pthread_join(w[i].w_thread, NULL);
		for (t = 0; t < NT; t++) {
			for (k = 0; k < w[i].w_lat[t].n; k++)
				lat_add(&out[t], w[i].w_lat[t].v[k]);
			out[t].err += w[i].w_lat[t].err;
			free(w[i].w_lat[t].v);
		}
		free(w[i].w_buf);
	}
	free(w);
	for (t = 0; t < NT; t++)
		bench_sort(out[t].v, out[t].n);
}

static double
report(const char *head, struct lat *l, double secs)
{
	long total = 0, errs = 0;
	int t;

	printf("%s\n", head);
	for (t = 0; t < NT; t++) {
		if (l[t].n == 0 && l[t].err == 0)
			continue;
		total += l[t].n;
		errs += l[t].err;
		printf("  %-24s %7ld ok %4ld err %8.0f/s   p50 %8.3f ms   "
		       "p99 %8.3f ms\n",
		    tname[t], l[t].n, l[t].err, (double)l[t].n / secs,
		    bench_pct(l[t].v, l[t].n, 50) * 1e3,
		    bench_pct(l[t].v, l[t].n, 99) * 1e3);
	}
	printf("  %-24s %7ld ok %4ld err %8.0f/s\n", "all", total, errs,
	    (double)total / secs);
	return (double)total / secs;
}

/* ---- cordon's processes ---- */

static void
find_pids(pid_t *pids)
{
	int i;

	pids[0] = bc.bc_pid;
	for (i = 1; i < NPROCS; i++)
		pids[i] = bench_daemon(&bc, procs[i]);
}

/*
 * RSS of the six and its sum (the target's measure), with each one's
 * anonymous part; PSS shares the pages of common libraries out fairly.
 */
static long
memory(const char *what, const pid_t *pids)
{
	long rss, sum = 0, pss = 0, p;
	int i;

	printf("%s RSS KiB (anon):", what);
	for (i = 0; i < NPROCS; i++) {
		rss = bench_proc_kb(pids[i], "status", "VmRSS");
		printf(" %s %ld (%ld)%s", i ? procs[i] + 7 : "cordond", rss,
		    bench_proc_kb(pids[i], "status", "RssAnon"),
		    i == NPROCS - 1 ? "" : ",");
		sum += rss;
		/* A daemon that is not dumpable hides its smaps from a user. */
		p = bench_proc_kb(pids[i], "smaps_rollup", "Pss");
		pss = p < 0 || pss < 0 ? -1 : pss + p;
	}
	printf("\n%s: RSS sum %ld KiB (%.2f MiB), ", what, sum,
	    (double)sum / 1024);
	if (pss < 0)
		printf("PSS not readable (run as root)\n");
	else
		printf("PSS sum %ld KiB (%.2f MiB)\n", pss, (double)pss / 1024);
	return sum;
}

/* A bench_idle* program beside this one, idle for 200 ms: its RSS, PSS. */
static int
idle_floor(const char *self, const char *name, long *rss, long *pss)
{
	char path[PATH_MAX], *argv[] = {path, NULL}, *slash;
	pid_t pid;
	int st;

	snprintf(path, sizeof(path), "%s", self);
	if ((slash = strrchr(path, '/')) == NULL)
		return -1;
	snprintf(
	    slash + 1, sizeof(path) - (size_t)(slash + 1 - path), "%s", name);
	if (posix_spawn(&pid, path, NULL, NULL, argv, environ) != 0)
		return -1;
	usleep(200 * 1000);
	*rss = bench_proc_kb(pid, "status", "VmRSS");
	*pss = bench_proc_kb(pid, "smaps_rollup", "Pss");
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	return *rss > 0 ? 0 : -1;
}

struct map_row {
	char mr_name[MAP_NAME];
	long mr_kb[NPROCS];
	long mr_sum;
};

static int
map_cmp(const void *a, const void *b)
{
	const struct map_row *x = a, *y = b;

	return (y->mr_sum > x->mr_sum) - (y->mr_sum < x->mr_sum);
}

/*
 * Each process's resident KiB per mapping: a file by its base name
 * ("libc.so.6", the binary as "(binary)"), [heap], [stack], and every
 * other anonymous mapping as [anon]; rows of at least 16 KiB in all.
 */
static void
mappings(const pid_t *pids)
{
	struct map_row rows[MAP_ROWS];
	char path[64], line[512], name[MAP_NAME], perms[5], *p, *nl;
	unsigned long lo, hi, off, ino;
	unsigned maj, min;
	size_t nrows = 0, r;
	long kb;
	FILE *f;
	int i, n;

	memset(rows, 0, sizeof(rows));
	for (i = 0; i < NPROCS; i++) {
		snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pids[i]);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		snprintf(name, sizeof(name), "[anon]");
		while (fgets(line, sizeof(line), f) != NULL) {
			if (strncmp(line, "Rss:", 4) == 0) {
				kb = atol(line + 4);
				for (r = 0; r < nrows; r++)
					if (strcmp(rows[r].mr_name, name) == 0)
						break;
				if (r == nrows && nrows < MAP_ROWS)
					snprintf(rows[nrows++].mr_name,
					    MAP_NAME, "%s", name);
				if (r < nrows) {
					rows[r].mr_kb[i] += kb;
					rows[r].mr_sum += kb;
				}
				continue;
			}
			/* A header: start-end perms offset dev inode [path]. */
			if (sscanf(line, "%lx-%lx %4s %lx %x:%x %lu %n", &lo,
				&hi, perms, &off, &maj, &min, &ino, &n) != 7)
				continue;
			p = line + n;
			if ((nl = strchr(p, '\n')) != NULL)
				*nl = '\0';
			if (*p != '/')
				snprintf(name, sizeof(name), "%s",
				    strcmp(p, "[heap]") == 0 ||
					    strcmp(p, "[stack]") == 0
					? p
					: "[anon]");
			else {
				p = strrchr(p, '/') + 1;
				snprintf(name, sizeof(name), "%s",
				    strncmp(p, "cordon", 6) == 0 ? "(binary)"
								 : p);
			}
		}
		fclose(f);
	}
	qsort(rows, nrows, sizeof(rows[0]), map_cmp);
	printf("idle RSS KiB by mapping:\n  %-22s", "");
	for (i = 0; i < NPROCS; i++)
		printf(" %8s", i ? procs[i] + 7 : "cordond");
	printf(" %8s\n", "sum");
	for (r = 0; r < nrows; r++) {
		if (rows[r].mr_sum < 16)
			continue;
		printf("  %-22.22s", rows[r].mr_name);
		for (i = 0; i < NPROCS; i++)
			printf(" %8ld", rows[r].mr_kb[i]);
		printf(" %8ld\n", rows[r].mr_sum);
	}
}

static int
make_home(void)
{
	char path[PATH_MAX], text[4096];
	int i, n;

	if (bench_home(&bc) == -1)
		return -1;
	/* Every connection may hold a chat run: lift SP-14's bounds. */
	if (bench_write(&bc, "cordon.yaml",
		"spawner:\n  maxRuns: 64\n  maxRunsPerAgent: 64\n") == -1 ||
	    bench_write(&bc, "agents/x.yaml",
		"name: x\ntransport: subprocess\ntransportConfig:\n"
		"  bin: /bin/true\n  args: [\"{prompt}\"]\n"
		"actions:\n  - id: noop\n    label: Noop\n"
		"    command: [/bin/true]\n    hint: nothing\n") == -1 ||
	    bench_write(&bc, "agents/c.yaml",
		"name: c\ntransport: subprocess\ntransportConfig:\n"
		"  bin: /bin/echo\n  args: [\"{prompt}\"]\n") == -1)
		return -1;
	snprintf(path, sizeof(path), "%s/vault", bc.bc_home);
	if (mkdir(path, 0755) == -1)
		return -1;
	snprintf(path, sizeof(path), "%s/vault/notes", bc.bc_home);
	if (mkdir(path, 0755) == -1)
		return -1;
	for (i = 0; i < NOTES; i++) {
		n = snprintf(text, sizeof(text), "# note %d\n\n", i);
		while (n < 2000)
			n += snprintf(text + n, sizeof(text) - (size_t)n,
			    "A line of a note in the vault.\n");
		snprintf(path, sizeof(path), "vault/notes/n%d.md", i);
		if (bench_write(&bc, path, text) == -1)
			return -1;
	}
	return 0;
}

static double
spawn_floor(void)
{
	char *argv[] = {"/bin/true", NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	double v[SPAWN_FLOOR_RUNS], t;
	pid_t pid;
	int i, st;

	for (i = 0; i < SPAWN_FLOOR_RUNS; i++) {
		t = bench_now();
		if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, envp))
			exit(1);
		waitpid(pid, &st, 0);
		v[i] = bench_now() - t;
	}
	bench_sort(v, SPAWN_FLOOR_RUNS);
	return bench_pct(v, SPAWN_FLOOR_RUNS, 50);
}

int
main(int argc, char **argv)
{
	double secs = 10, cpu0[NPROCS], cpu1, cpu_sum = 0, floor_cpu;
	double floor_rps, health_rps, mixed_rps, spawn_p50, get_p50, p50;
	struct lat floor_l[NT], health_l[NT], mixed_l[NT];
	long floor_rss, floor_pss, idle_sum, mixed_n = 0;
	long bare_rss, bare_pss, libs_rss, libs_pss;
	pid_t floor_pid, pids[NPROCS];
	int conns = 16, floor_port, i, st;

	if (argc == 2 && strcmp(argv[1], "--floor-server") == 0)
		return floor_server();
	if (argc > 1 && (secs = atof(argv[1])) <= 0)
		secs = 10;
	if (argc > 2 && ((conns = atoi(argv[2])) <= 0 || conns > MAX_CONNS))
		conns = 16;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("bench_load: %.0f s mixed load, %d connections\n", secs, conns);

	/* Floors: a bare evhttp process, and posix_spawn. */
	if ((floor_pid = floor_start(argv[0], &floor_port)) == -1) {
		fprintf(stderr, "bench_load: cannot start the floor server\n");
		return 1;
	}
	usleep(200 * 1000);
	floor_rss = bench_proc_kb(floor_pid, "status", "VmRSS");
	floor_pss = bench_proc_kb(floor_pid, "smaps_rollup", "Pss");
	floor_cpu = bench_proc_cpu(floor_pid, 0);
	run_load(floor_port, conns, FLOOR_SECONDS, T_FLOOR, floor_l);
	floor_cpu = bench_proc_cpu(floor_pid, 0) - floor_cpu;
	kill(floor_pid, SIGTERM);
	waitpid(floor_pid, &st, 0);
	floor_rps = report("floor: bare evhttp server, keep-alive GETs",
	    floor_l, FLOOR_SECONDS);
	get_p50 = bench_pct(floor_l[T_FLOOR].v, floor_l[T_FLOOR].n, 50);
	printf("floor: evhttp server idle RSS %ld KiB (PSS %ld KiB); CPU %.1f "
	       "us per GET\n",
	    floor_rss, floor_pss, floor_cpu * 1e6 / (double)floor_l[T_FLOOR].n);
	if (idle_floor(argv[0], "bench_idle", &bare_rss, &bare_pss) == -1 ||
	    idle_floor(argv[0], "bench_idle_libs", &libs_rss, &libs_pss) ==
		-1) {
		fprintf(stderr, "bench_load: cannot start bench_idle\n");
		return 1;
	}
	printf("floor: idle process RSS %ld KiB (PSS %ld) with libc alone, "
	       "%ld KiB (PSS %ld) with all of cordon's libraries mapped\n",
	    bare_rss, bare_pss, libs_rss, libs_pss);
	spawn_p50 = spawn_floor();
	printf("floor: posix_spawn+waitpid /bin/true p50 %.3f ms\n",
	    spawn_p50 * 1e3);

	/* cordon: idle memory of the six processes. */
	if (make_home() == -1 || bench_start(&bc, argv[0], NULL) == -1) {
		fprintf(stderr, "bench_load: cannot start cordon\n");
		bench_stop(&bc);
		return 1;
	}
	sleep(2); /* start-up probes done: idle */
	find_pids(pids);
	for (i = 0; i < NPROCS; i++)
		if (pids[i] <= 0) {
			fprintf(stderr, "bench_load: %s not found\n",
			    procs[i] ? procs[i] : "cordond");
			bench_stop(&bc);
			return 1;
		}
	idle_sum = memory("idle", pids);
	if (idle_sum < IDLE_TARGET_KB)
		printf("idle: %.2f MiB, under the 16 MiB target\n",
		    (double)idle_sum / 1024);
	else
		printf("idle: %.2f MiB, OVER the 16 MiB target by %.2f MiB\n",
		    (double)idle_sum / 1024,
		    (double)(idle_sum - IDLE_TARGET_KB) / 1024);
	printf("ratio idle sum / (%d x bare evhttp process): %.2f\n", NPROCS,
	    (double)idle_sum / (NPROCS * (double)floor_rss));
	printf("ratio idle sum / (%d x idle libc-only process, %.2f MiB): "
	       "%.2f\n",
	    NPROCS, NPROCS * (double)bare_rss / 1024,
	    (double)idle_sum / (NPROCS * (double)bare_rss));
	mappings(pids);

	/* GET /api/health alone, the shape of the floor's load. */
	run_load(bc.bc_port, conns, HEALTH_SECONDS, T_HEALTH, health_l);
	health_rps =
	    report("cordon: GET /api/health only", health_l, HEALTH_SECONDS);
	p50 = bench_pct(health_l[T_HEALTH].v, health_l[T_HEALTH].n, 50);
	printf("ratio health/floor: throughput %.3f, p50 %.2f, p99 %.2f\n",
	    health_rps / floor_rps, p50 / get_p50,
	    bench_pct(health_l[T_HEALTH].v, health_l[T_HEALTH].n, 99) /
		bench_pct(floor_l[T_FLOOR].v, floor_l[T_FLOOR].n, 99));

	/* The mixed workload. */
	for (i = 0; i < NPROCS; i++)
		cpu0[i] = bench_proc_cpu(pids[i], i == 3);
	run_load(bc.bc_port, conns, secs, -1, mixed_l);
	mixed_rps = report("cordon: mixed workload", mixed_l, secs);
	printf("ratio p50 / floor p50 (GET types vs evhttp GET, run types vs "
	       "posix_spawn):\n");
	for (i = 0; i < T_FLOOR; i++) {
		mixed_n += mixed_l[i].n;
		p50 = bench_pct(mixed_l[i].v, mixed_l[i].n, 50);
		printf("  %-24s %8.1f\n", tname[i],
		    p50 / (i >= T_ACTION ? spawn_p50 : get_p50));
	}
	memory("after load", pids);
	printf("CPU during the mixed load (s):");
	for (i = 0; i < NPROCS; i++) {
		cpu1 = bench_proc_cpu(pids[i], i == 3) - cpu0[i];
		cpu_sum += cpu1;
		printf(" %s %.2f%s", i ? procs[i] + 7 : "cordond", cpu1,
		    i == 3 ? " (with its agents)" : "");
	}
	printf("; sum %.2f\n", cpu_sum);
	printf("CPU per request: cordon %.1f us (mixed, agents included), "
	       "floor %.1f us (GET); ratio %.1f\n",
	    cpu_sum * 1e6 / (double)mixed_n,
	    floor_cpu * 1e6 / (double)floor_l[T_FLOOR].n,
	    (cpu_sum / (double)mixed_n) /
		(floor_cpu / (double)floor_l[T_FLOOR].n));
	printf("throughput: mixed %.0f/s, health only %.0f/s, floor %.0f/s\n",
	    mixed_rps, health_rps, floor_rps);
	bench_stop(&bc);
	return 0;
}
