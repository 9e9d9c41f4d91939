/*
 * bench_ipc: request/reply round trips through cordon's IPC codec
 * (framing, JSON payload, dispatch table, reply pairing, libevent loop)
 * against a floor measured in the same run: a bare 16-byte write/read
 * ping-pong on the same kind of socketpair.  Prints the ratio.
 */
#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "bench_util.h"
#include "ipc.h"
#include "msg.h"

static struct event_base *base;
static long remaining;

static void
status_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "pid", json_object_new_int(1));
	ipc_reply(c, m, MSG_STATUS_OK, o, -1);
	json_object_put(o);
}

static const struct ipc_dispatch table[] = {
    {MSG_STATUS, PROC_BIT(PROC_PARENT), 2, 64, IPC_FD_NONE, status_h,
	IPC_EMPTY},
    IPC_END,
};

static void send_one(struct ipc_conn *);

static void
reply_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	if (m == NULL || m->m_type != MSG_STATUS_OK) {
		fprintf(stderr, "bench_ipc: bad reply\n");
		exit(1);
	}
	if (--remaining > 0)
		send_one(c);
	else
		event_base_loopbreak(base);
}

static void
send_one(struct ipc_conn *c)
{
	if (ipc_request(c, MSG_STATUS, NULL, -1, MSG_STATUS_OK, NULL, reply_cb,
		NULL) == -1) {
		fprintf(stderr, "bench_ipc: request failed\n");
		exit(1);
	}
}

static double
run_codec(long n)
{
	struct ipc_conn *client, *server;
	int sp[2];
	double t0;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == -1)
		exit(1);
	/* server side sees its peer as the parent, so MSG_STATUS is legal */
	server = ipc_conn_new(base, sp[0], PROC_PARENT, table, NULL, NULL);
	client = ipc_conn_new(base, sp[1], PROC_AUDITD, NULL, NULL, NULL);
	remaining = n;
	t0 = bench_now();
	send_one(client);
	event_base_dispatch(base);
	t0 = bench_now() - t0;
	ipc_conn_free(client);
	ipc_conn_free(server);
	return t0;
}

static double
run_floor(long n)
{
	char buf[16] = {0};
	int sp[2];
	double t0;
	long i;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == -1)
		exit(1);
	t0 = bench_now();
	for (i = 0; i < n; i++) {
		if (write(sp[1], buf, sizeof(buf)) != sizeof(buf) ||
		    read(sp[0], buf, sizeof(buf)) != sizeof(buf) ||
		    write(sp[0], buf, sizeof(buf)) != sizeof(buf) ||
		    read(sp[1], buf, sizeof(buf)) != sizeof(buf))
			exit(1);
	}
	t0 = bench_now() - t0;
	close(sp[0]);
	close(sp[1]);
	return t0;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	double floor_s, codec_s;

	if (n <= 0)
		n = 20000;
	if ((base = event_base_new()) == NULL)
		return 1;
	(void)run_floor(n / 10); /* warm up */
	floor_s = run_floor(n);
	codec_s = run_codec(n);
	printf("round trips          %ld\n", n);
	printf("floor (raw 16 B)     %.2f us/rt\n", floor_s / (double)n * 1e6);
	printf("ipc codec request    %.2f us/rt\n", codec_s / (double)n * 1e6);
	printf("ratio codec/floor    %.2f\n", codec_s / floor_s);
	event_base_free(base);
	return 0;
}
