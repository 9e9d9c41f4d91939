/*
 * bench_audit: acknowledged durable audit records per second through a
 * real cordon-auditd (started here on a socketpair, as cordond does) with
 * 1, 8 and 64 requests in flight, against floors measured in the same
 * run on the same disk: write+fdatasync per ~200-byte record, and per
 * 64-record batch.  Usage: bench_audit [N] [DIR] [AUDITD].
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "ipc.h"
#include "msg.h"
#include "util.h"

static const char rec_json[] =
    "{\"kind\":\"system.boot\",\"version\":\"0.1.0\"}";

/* Records per second of write+fdatasync, `batch` records per sync. */
static double
floor_rate(const char *dir, long n, int batch)
{
	char path[PATH_MAX], line[201], *buf;
	long i;
	double t0;
	int fd, j;

	snprintf(path, sizeof(path), "%s/floor.jsonl", dir);
	fd = open(
	    path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (fd == -1 || (buf = malloc(sizeof(line) * (size_t)batch)) == NULL)
		return 0;
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	for (j = 0; j < batch; j++)
		memcpy(buf + j * (int)sizeof(line), line, sizeof(line));
	t0 = bench_now();
	for (i = 0; i < n; i += batch)
		if (write_full(fd, buf, sizeof(line) * (size_t)batch) == -1 ||
		    fdatasync(fd) == -1)
			return 0;
	t0 = bench_now() - t0;
	close(fd);
	unlink(path);
	free(buf);
	return (double)n / t0;
}

static int
send_rec(int s, uint32_t id)
{
	struct ipc_hdr h = {MSG_AUDIT_RECORD, id, sizeof(rec_json) - 1, 0, 0};
	uint8_t frame[IPC_HDR_LEN + sizeof(rec_json)];

	ipc_hdr_encode(&h, frame);
	memcpy(frame + IPC_HDR_LEN, rec_json, sizeof(rec_json) - 1);
	return write_full(s, frame, IPC_HDR_LEN + sizeof(rec_json) - 1);
}

/* n records with `inflight` outstanding at any time; acks per second. */
static double
auditd_rate(int s, long n, int inflight)
{
	static uint8_t buf[1 << 16];
	struct ipc_hdr h;
	size_t have = 0, off;
	long sent = 0, acked = 0;
	uint32_t id = 1;
	ssize_t r;
	double t0 = bench_now();

	while (sent < n && sent < inflight)
		if (send_rec(s, id++) == -1)
			return 0;
		else
			sent++;
	while (acked < n) {
		if ((r = read(s, buf + have, sizeof(buf) - have)) <= 0)
			return 0;
		have += (size_t)r;
		off = 0;
		while (ipc_hdr_decode(buf + off, have - off, &h) == IPC_FRAME &&
		       have - off >= IPC_HDR_LEN + h.len) {
			if (h.type != MSG_AUDIT_RECORD_OK)
				return 0;
			off += IPC_HDR_LEN + h.len;
			acked++;
			if (sent < n) {
				if (send_rec(s, id++) == -1)
					return 0;
				sent++;
			}
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	return (double)n / (bench_now() - t0);
}

/* Remove what this run wrote: the audit dir, and our temp dir. */
static void
cleanup(const char *adir, const char *dir, int ours)
{
	struct dirent *de;
	DIR *d;
	int fd;

	if ((d = opendir(adir)) != NULL) {
		fd = dirfd(d);
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") != 0 &&
			    strcmp(de->d_name, "..") != 0)
				unlinkat(fd, de->d_name, 0);
		closedir(d);
	}
	rmdir(adir);
	if (ours)
		rmdir(dir);
}

int
main(int argc, char **argv)
{
	static const int conc[] = {1, 8, 64};
	char tmpl[] = "/var/tmp/cordon-bench-XXXXXX", adir[PATH_MAX];
	char self[PATH_MAX], bin[PATH_MAX + 32], *slash;
	long n = argc > 1 ? atol(argv[1]) : 20000;
	const char *dir = argc > 2 ? argv[2] : NULL;
	double f1, f64, r;
	ssize_t len;
	pid_t pid;
	int sp[2], st;
	size_t i;

	if (n < 64)
		n = 20000;
	if (dir == NULL && (dir = mkdtemp(tmpl)) == NULL)
		return 1;
	if (argc > 3)
		snprintf(bin, sizeof(bin), "%s", argv[3]);
	else {
		/* build/bench/bench_audit -> build/cordon-auditd */
		if ((len = readlink("/proc/self/exe", self, sizeof(self) - 1)) <
		    0)
			return 1;
		self[len] = '\0';
		if ((slash = strrchr(self, '/')) != NULL)
			*slash = '\0';
		snprintf(bin, sizeof(bin), "%s/../cordon-auditd", self);
	}
	snprintf(adir, sizeof(adir), "%s/audit", dir);
	if (mkdir(adir, 0700) == -1)
		return 1;

	f1 = floor_rate(dir, n / 10, 1);
	f64 = floor_rate(dir, n, 64);
	printf("floor  write+fdatasync per record:          %9.0f rec/s\n", f1);
	printf(
	    "floor  write+fdatasync per 64-record batch: %9.0f rec/s\n", f64);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1)
		return 1;
	char *cargv[] = {
	    bin, "--audit-dir", adir, "--retention-days", "0", NULL};
	if ((pid = bench_child(bin, cargv, sp[1])) == -1)
		return 1;
	close(sp[1]);
	for (i = 0; i < nitems(conc); i++) {
		long m = conc[i] == 1 ? n / 10 : n;

		r = auditd_rate(sp[0], m, conc[i]);
		printf("auditd %2d sender(s), acked durable:      %9.0f rec/s "
		       "= %5.1fx the per-record floor, %4.2fx the batch "
		       "floor\n",
		    conc[i], r, r / f1, r / f64);
	}
	printf("(%ld records per run in %s, removed)\n", n, dir);
	fflush(stdout);
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	cleanup(adir, dir, argc <= 2);
	return 0;
}
