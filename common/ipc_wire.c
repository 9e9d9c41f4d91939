/*
 * The IPC wire format, without a connection: the frame header codec,
 * whole frames as datagrams, and the one pair of fd-passing calls
 * (sendmsg/recvmsg with SCM_RIGHTS) every channel uses.  Stateless:
 * touches only the buffers and sockets it is given (common/ipc.h).
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "ipc.h"
#include "json.h"
#include "msg.h"

void
ipc_msg_init(struct ipc_msg *m, uint32_t type, uint32_t id, uint32_t len,
    enum proc_id from)
{
	memset(m, 0, sizeof(*m));
	m->m_type = type;
	m->m_id = id;
	m->m_len = len;
	m->m_fd = -1;
	m->m_from = from;
}

void
ipc_hdr_encode(const struct ipc_hdr *h, uint8_t out[IPC_HDR_LEN])
{
	memcpy(out + 0, &h->type, 4);
	memcpy(out + 4, &h->id, 4);
	memcpy(out + 8, &h->len, 4);
	memcpy(out + 12, &h->flags, 2);
	memset(out + 14, 0, 2);
}

enum ipc_parse
ipc_hdr_decode(const uint8_t *buf, size_t len, struct ipc_hdr *h)
{
	if (len < IPC_HDR_LEN)
		return IPC_NEED_MORE;
	memcpy(&h->type, buf + 0, 4);
	memcpy(&h->id, buf + 4, 4);
	memcpy(&h->len, buf + 8, 4);
	memcpy(&h->flags, buf + 12, 2);
	memcpy(&h->zero, buf + 14, 2);
	/* The bound is checked before anything is allocated for the body. */
	if (h->len > IPC_MAX_PAYLOAD)
		return IPC_BAD;
	if (h->zero != 0 || (h->flags & ~(IPC_FLAG_FD | IPC_FLAG_REPLY)) != 0)
		return IPC_BAD;
	/* An unknown type is still a well-formed frame: dispatch refuses
	 * it (ipc_handle_request) and a reply of it cannot match a request. */
	return IPC_FRAME;
}

struct json_object *
ipc_payload_parse(const char *buf, size_t len)
{
	if (len > IPC_MAX_PAYLOAD)
		return NULL;
	return json_parse_object(buf, len, IPC_JSON_DEPTH);
}

ssize_t
ipc_dgram_encode(uint32_t type, uint16_t flags, struct json_object *payload,
    void *out, size_t outsz)
{
	struct ipc_hdr h;
	const char *body = "{}";
	size_t blen = 2;

	if (payload != NULL && (body = json_object_to_json_string_length(
				    payload, IPC_JSON_FLAGS, &blen)) == NULL)
		return -1;
	if (blen > IPC_MAX_PAYLOAD || outsz < IPC_HDR_LEN ||
	    blen > outsz - IPC_HDR_LEN ||
	    (flags & ~(IPC_FLAG_FD | IPC_FLAG_REPLY)) != 0)
		return -1;
	memset(&h, 0, sizeof(h));
	h.type = type;
	h.len = (uint32_t)blen;
	h.flags = flags;
	ipc_hdr_encode(&h, out);
	memcpy((uint8_t *)out + IPC_HDR_LEN, body, blen);
	return (ssize_t)(IPC_HDR_LEN + blen);
}

struct json_object *
ipc_dgram_decode(const void *buf, size_t len, struct ipc_hdr *h)
{
	if (len < IPC_HDR_LEN || ipc_hdr_decode(buf, len, h) != IPC_FRAME ||
	    h->type == MSG_NONE || h->type >= MSG_TYPE_MAX ||
	    (size_t)h->len != len - IPC_HDR_LEN)
		return NULL;
	return ipc_payload_parse((const char *)buf + IPC_HDR_LEN, h->len);
}

ssize_t
ipc_sendmsg_fd(int sock, const void *buf, size_t len, int fd)
{
	struct msghdr msg;
	struct iovec iov;
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} cmsgbuf;
	struct cmsghdr *cmsg;
	ssize_t n;

	memset(&msg, 0, sizeof(msg));
	iov.iov_base = (void *)(uintptr_t)buf;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (fd >= 0) {
		memset(&cmsgbuf, 0, sizeof(cmsgbuf));
		msg.msg_control = cmsgbuf.buf;
		msg.msg_controllen = sizeof(cmsgbuf.buf);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_len = CMSG_LEN(sizeof(int));
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	}
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	} while (n == -1 && errno == EINTR);
	return n;
}

/*
 * Receive bytes and any descriptors.  Descriptors arrive close-on-exec;
 * truncated control data (more fds than we accept) is refused and every
 * fd that did arrive is closed.
 */
ssize_t
ipc_recvmsg_fds(
    int sock, void *buf, size_t len, int *fds, size_t *nfds, size_t maxfds)
{
	struct msghdr msg;
	struct iovec iov;
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * IPC_MAX_FDQ)];
	} cmsgbuf;
	struct cmsghdr *cmsg;
	size_t i, n, got = 0;
	int bad = 0, fd;
	ssize_t r;

	*nfds = 0;
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = buf;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf.buf;
	msg.msg_controllen = sizeof(cmsgbuf.buf);
	do {
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	} while (r == -1 && errno == EINTR);
	if (r == -1)
		return -1;
	for (cmsg = CMSG_FIRSTHDR(&msg); cmsg != NULL;
	     cmsg = CMSG_NXTHDR(&msg, cmsg)) {
		if (cmsg->cmsg_level != SOL_SOCKET ||
		    cmsg->cmsg_type != SCM_RIGHTS) {
			bad = 1;
			continue;
		}
		n = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int),
			    sizeof(int));
			if (got < maxfds)
				fds[got++] = fd;
			else {
				close(fd);
				bad = 1;
			}
		}
	}
	if (bad || (msg.msg_flags & MSG_CTRUNC)) {
		for (i = 0; i < got; i++)
			close(fds[i]);
		errno = EPROTO;
		return -1;
	}
	*nfds = got;
	return r;
}
