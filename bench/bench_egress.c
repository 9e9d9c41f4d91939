/*
 * Tunnel throughput through a real cordon-egressd (EG-1), started here
 * on a socketpair as cordond does, with this program as its spawner and
 * its auditd: a CONNECT tunnel from a client to a sink on 127.0.0.2
 * (allowed by the test-only testAllowAddress, so egressd runs with
 * --test-egress 1), N MiB pushed through it.  Floor, in the same run: the
 * same N MiB written straight to the same sink over loopback.  Prints
 * both rates and the ratio (target >= 0.5).
 *
 * usage: bench_egress [MIB]   (default 256)
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "ipc.h"
#include "msg.h"
#include "spawn_helper.h"
#include "util.h"

#define CHUNK (256 * 1024)

static int
listen_on(const char *addr, int *port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	inet_pton(AF_INET, addr, &sin.sin_addr);
	if (fd == -1 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 16) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1)
		return -1;
	*port = ntohs(sin.sin_port);
	return fd;
}

static int
dial(int port)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd == -1 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		return -1;
	return fd;
}

/* The sink: accepts one connection at a time and reads it to EOF. */
static void *
sink(void *arg)
{
	int lfd = *(int *)arg, fd;
	char *buf = malloc(CHUNK);

	while (buf != NULL && (fd = accept(lfd, NULL, NULL)) != -1) {
		while (read(fd, buf, CHUNK) > 0)
			;
		/* Tell the writer it is all in: close. */
		close(fd);
	}
	free(buf);
	return NULL;
}

/* Write mib MiB on fd, half-close, wait for the sink's close: seconds. */
static double
push(int fd, long mib)
{
	static char buf[CHUNK];
	double t0 = bench_now();
	long i;
	char c;

	for (i = 0; i < mib * (1024 * 1024 / CHUNK); i++)
		if (write_full(fd, buf, sizeof(buf)) == -1)
			return -1;
	shutdown(fd, SHUT_WR);
	while (read(fd, &c, 1) > 0)
		;
	close(fd);
	return bench_now() - t0;
}

/* One frame, its fd with its first byte alone (as the codec sends). */
static int
send_frame(int fd, uint32_t type, const char *json, int passfd)
{
	struct ipc_hdr h = {
	    type, 0, (uint32_t)strlen(json), passfd >= 0 ? IPC_FLAG_FD : 0, 0};
	uint8_t out[IPC_HDR_LEN + 1024];
	size_t len = IPC_HDR_LEN + strlen(json);

	if (len > sizeof(out))
		return -1;
	ipc_hdr_encode(&h, out);
	memcpy(out + IPC_HDR_LEN, json, strlen(json));
	if (ipc_sendmsg_fd(fd, out, 1, passfd) != 1)
		return -1;
	return write_full(fd, out + 1, len - 1);
}

/* egressd on a socketpair, with us as its spawner and auditd. */
static pid_t
start_egressd(const char *bin, int *spawner, int *auditd)
{
	struct spawn_fd fds[2];
	struct spawn_req req;
	char *argv[] = {(char *)bin, "--test-egress", "1", NULL};
	char *envp[] = {"LANG=C", "TZ=UTC", NULL};
	int ctl[2], s[2], a[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a) == -1)
		return -1;
	fds[0].sf_src = ctl[1];
	fds[0].sf_dst = 3;
	fds[1].sf_src = STDERR_FILENO;
	fds[1].sf_dst = STDERR_FILENO;
	memset(&req, 0, sizeof(req));
	req.sr_path = bin;
	req.sr_argv = argv;
	req.sr_envp = envp;
	req.sr_fds = fds;
	req.sr_nfds = 2;
	req.sr_pdeathsig = SIGTERM;
	if ((pid = spawn_exec(&req)) == -1)
		return -1;
	close(ctl[1]);
	if (send_frame(ctl[0], MSG_PEER_FD, "{\"peer\":\"spawner\"}", s[1]) ==
		-1 ||
	    send_frame(ctl[0], MSG_PEER_FD, "{\"peer\":\"auditd\"}", a[1]) ==
		-1)
		return -1;
	close(s[1]);
	close(a[1]);
	*spawner = s[0];
	*auditd = a[0];
	return pid;
}

int
main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 256;
	char bin[4200], self[4096], json[512], head[256], *slash;
	int sink_fd, sink_port, lfd, lport, sp, ad, fd, st;
	double floor_s, tun_s;
	pthread_t th;
	ssize_t n;
	pid_t pid;

	if (mib < 1)
		mib = 1;
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return 1;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	if (snprintf(bin, sizeof(bin), "%s/../cordon-egressd", self) >=
	    (int)sizeof(bin))
		return 1;
	signal(SIGPIPE, SIG_IGN);
	if ((sink_fd = listen_on("127.0.0.2", &sink_port)) == -1 ||
	    pthread_create(&th, NULL, sink, &sink_fd) != 0)
		return 1;

	/* Floor: straight to the sink. */
	{
		struct sockaddr_in sin;

		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)sink_port);
		inet_pton(AF_INET, "127.0.0.2", &sin.sin_addr);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd == -1 ||
		    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
			return 1;
		floor_s = push(fd, mib);
	}

	if ((pid = start_egressd(bin, &sp, &ad)) == -1 ||
	    (lfd = listen_on("127.0.0.1", &lport)) == -1)
		return 1;
	snprintf(json, sizeof(json),
	    "{\"runId\":\"0123456789abcdef\",\"agent\":\"bench\",\"allow\":"
	    "[\"127.0.0.2:%d\"],\"maxConnections\":4,\"maxBytes\":%lld,"
	    "\"idleTimeoutSec\":60,\"testAllowAddress\":\"127.0.0.2\"}",
	    sink_port, (long long)(mib + 16) * 1024 * 1024);
	if (send_frame(sp, MSG_EGRESS_OPEN, json, lfd) == -1)
		return 1;
	close(lfd);
	usleep(200 * 1000); /* egressd takes the listener */
	if ((fd = dial(lport)) == -1)
		return 1;
	n = snprintf(head, sizeof(head),
	    "CONNECT 127.0.0.2:%d HTTP/1.1\r\n\r\n", sink_port);
	if (write_full(fd, head, (size_t)n) == -1 ||
	    (n = read(fd, head, sizeof(head) - 1)) <= 0 ||
	    strncmp(head, "HTTP/1.1 200", 12) != 0) {
		fprintf(stderr, "bench_egress: the tunnel was refused\n");
		return 1;
	}
	tun_s = push(fd, mib);

	printf("floor  loopback copy to the sink:   %8.1f MiB/s\n",
	    (double)mib / floor_s);
	printf("egress CONNECT tunnel (egressd):    %8.1f MiB/s = %4.2fx the "
	       "floor\n",
	    (double)mib / tun_s, floor_s / tun_s);
	printf("(%ld MiB each way, one connection)\n", mib);
	fflush(stdout);
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	close(ad);
	close(sp);
	return 0;
}
