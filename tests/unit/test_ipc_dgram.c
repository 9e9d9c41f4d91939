/*
 * Unit tests for common/ipc.c's one-datagram codec (the command gate's
 * SOCK_SEQPACKET channel, SBX-6): a round trip over a real socketpair
 * with a descriptor, and every way a datagram is refused.
 */
#include <sys/socket.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "ipc.h"
#include "msg.h"

static struct json_object *
obj(void)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "tool", json_object_new_string("Bash"));
	json_object_object_add(o, "line", json_object_new_string("ls -la"));
	return o;
}

static void
t_roundtrip_with_fd(void **state)
{
	struct json_object *o = obj(), *back, *v;
	uint8_t buf[512], in[513];
	struct ipc_hdr h;
	int sv[2], priv[2], fds[IPC_MAX_FDQ];
	size_t nfds;
	ssize_t n, r;

	(void)state;
	assert_int_equal(
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, priv), 0);
	n = ipc_dgram_encode(MSG_GATE_CHECK, IPC_FLAG_FD, o, buf, sizeof(buf));
	assert_true(n > IPC_HDR_LEN);
	assert_int_equal(ipc_sendmsg_fd(sv[0], buf, (size_t)n, priv[1]), n);
	r = ipc_recvmsg_fds(sv[1], in, sizeof(in), fds, &nfds, IPC_MAX_FDQ);
	assert_int_equal(r, n);
	assert_int_equal(nfds, 1);
	back = ipc_dgram_decode(in, (size_t)r, &h);
	assert_non_null(back);
	assert_int_equal(h.type, MSG_GATE_CHECK);
	assert_int_equal(h.flags, IPC_FLAG_FD);
	assert_int_equal(h.id, 0);
	assert_true(json_object_object_get_ex(back, "line", &v));
	assert_string_equal(json_object_get_string(v), "ls -la");
	/* The descriptor is a working end of the private pair. */
	assert_int_equal(send(fds[0], "x", 1, 0), 1);
	assert_int_equal(recv(priv[0], in, sizeof(in), 0), 1);
	json_object_put(back);
	json_object_put(o);
	close(fds[0]);
	close(priv[0]);
	close(priv[1]);
	close(sv[0]);
	close(sv[1]);
}

static void
t_refused(void **state)
{
	struct json_object *o = obj();
	uint8_t buf[512], bad[512];
	struct ipc_hdr h;
	ssize_t n;

	(void)state;
	n = ipc_dgram_encode(
	    MSG_GATE_VERDICT, IPC_FLAG_REPLY, o, buf, sizeof(buf));
	assert_true(n > IPC_HDR_LEN);
	/* Too small an output buffer, unknown flags. */
	assert_int_equal(ipc_dgram_encode(MSG_GATE_CHECK, 0, o, buf, 20), -1);
	assert_int_equal(
	    ipc_dgram_encode(MSG_GATE_CHECK, 0x8, o, bad, sizeof(bad)), -1);
	/* Short, truncated and trailing bytes. */
	assert_null(ipc_dgram_decode(buf, IPC_HDR_LEN - 1, &h));
	assert_null(ipc_dgram_decode(buf, (size_t)n - 1, &h));
	memcpy(bad, buf, (size_t)n);
	bad[n] = ' ';
	assert_null(ipc_dgram_decode(bad, (size_t)n + 1, &h));
	/* Unknown type, MSG_NONE, nonzero pad, bad flags. */
	memcpy(bad, buf, (size_t)n);
	bad[0] = 0xff;
	bad[1] = 0xff;
	assert_null(ipc_dgram_decode(bad, (size_t)n, &h));
	memcpy(bad, buf, (size_t)n);
	memset(bad, 0, 4);
	assert_null(ipc_dgram_decode(bad, (size_t)n, &h));
	memcpy(bad, buf, (size_t)n);
	bad[14] = 1;
	assert_null(ipc_dgram_decode(bad, (size_t)n, &h));
	memcpy(bad, buf, (size_t)n);
	bad[12] = 0x10;
	assert_null(ipc_dgram_decode(bad, (size_t)n, &h));
	/* A payload that is not one strict JSON object. */
	memcpy(bad, buf, IPC_HDR_LEN);
	memcpy(bad + IPC_HDR_LEN, "[1]", 3);
	bad[8] = 3;
	bad[9] = bad[10] = bad[11] = 0;
	assert_null(ipc_dgram_decode(bad, IPC_HDR_LEN + 3, &h));
	/* And the untouched datagram still decodes. */
	json_object_put(o);
	assert_non_null(o = ipc_dgram_decode(buf, (size_t)n, &h));
	assert_int_equal(h.type, MSG_GATE_VERDICT);
	json_object_put(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(t_roundtrip_with_fd),
	    cmocka_unit_test(t_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
