/*
 * cordon's one IPC codec: length-prefixed frames on AF_UNIX stream
 * sockets, a JSON object as payload, at most one fd per frame by
 * SCM_RIGHTS, in the manner of OpenBSD's imsg.  Receivers check every
 * frame against a const dispatch table before any handler runs.
 *
 * Frame: 16-byte header in host order (both ends are on one machine)
 *   u32 type | u32 id | u32 len | u16 flags | u16 zero
 * then len bytes of JSON (one object).  IPC_FLAG_FD says the frame's first
 * byte carried one descriptor.
 */
#ifndef CORDON_IPC_H
#define CORDON_IPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>

#include "json.h"
#include "proc.h"

struct event_base;
struct json_object;

#define IPC_HDR_LEN	16
#define IPC_MAX_PAYLOAD (12u * 1024 * 1024) /* hard bound, checked first */
#define IPC_FLAG_FD	0x0001
#define IPC_FLAG_REPLY	0x0002 /* answers the peer's request of this id */
#define IPC_JSON_DEPTH	16
/*
 * How a payload is written (json-c's flags): plain, and '/' as is, since
 * "\/" made a vault path of many folders twice as long on the wire as
 * the broker had measured it.  A sender that bounds a payload measures
 * it with these.
 */
#define IPC_JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define IPC_MAX_FDQ    4 /* fds queued ahead of their frame */
/*
 * Backpressure: while more than this waits unsent to a peer, its frames
 * are not read or handled, so a peer that asks and never reads its answers
 * costs us at most this plus one answer.  Reading resumes once all is sent.
 */
#define IPC_MAX_UNSENT IPC_MAX_PAYLOAD

struct ipc_hdr {
	uint32_t type;
	uint32_t id;
	uint32_t len;
	uint16_t flags;
	uint16_t zero;
};

/* A received message.  A handler that keeps m_fd sets it to -1. */
struct ipc_msg {
	uint32_t m_type;
	uint32_t m_id;
	uint32_t m_len;
	int m_fd;
	enum proc_id m_from;
	struct json_object *m_obj; /* owned by the codec; get() to keep */
};
/* m zeroed but for these; no fd (m_fd -1), no payload yet. */
void ipc_msg_init(struct ipc_msg *m, uint32_t type, uint32_t id, uint32_t len,
    enum proc_id from);

struct ipc_conn;

typedef void (*ipc_handler_fn)(struct ipc_conn *, struct ipc_msg *, void *arg);
typedef void (*ipc_reply_fn)(struct ipc_conn *, struct ipc_msg *reply,
    void *arg); /* reply NULL: timed out or channel lost */
typedef void (*ipc_close_fn)(struct ipc_conn *, void *arg);

enum ipc_fd_rule { IPC_FD_NONE = 0, IPC_FD_REQUIRED };

/*
 * One row of a daemon's dispatch table (OpenSSH monitor style).  A frame
 * reaches d_fn only if its sender, size and fd fit the row, its payload
 * parses, and the payload fits the row's declared shape (SU-3, common/
 * json.h: keys, types, bounds, no leftovers); d_shape NULL admits {}
 * alone.  A request that does not fit is answered with d_refuse (NULL:
 * "bad-message"); a handler never sees it.  d_flags: IPC_ONCE,
 * IPC_FATAL.
 */
struct ipc_dispatch {
	uint32_t d_type;
	uint32_t d_senders; /* PROC_BIT() mask */
	uint32_t d_minlen;
	uint32_t d_maxlen;
	enum ipc_fd_rule d_fd;
	ipc_handler_fn d_fn;
	const struct json_shape *d_shape;
	size_t d_nshape;
	const char *d_refuse;
	unsigned int d_flags;
};
/*
 * IPC_ONCE: the row admits one frame per channel (OpenSSH's MON_ONCE);
 * a second is refused like a wrong sender, before the handler.
 */
#define IPC_ONCE 0x1u
/*
 * IPC_FATAL: the daemon cannot run without what this row brings (its
 * configuration), so a frame from an admitted sender that the row
 * refuses for its size, descriptor, parse or shape ends the process
 * (fatalx) instead of leaving it up unconfigured (SU-3, fail closed).
 * A wrong sender or a second frame on an IPC_ONCE row is refused as
 * usual: it changes nothing the daemon holds.
 */
#define IPC_FATAL 0x2u
/* A row's shape: its keys, answered with "bad-message" or code. */
#define IPC_KEYS(s)	     (s), (sizeof(s) / sizeof((s)[0])), NULL, 0
#define IPC_KEYS_OR(s, code) (s), (sizeof(s) / sizeof((s)[0])), (code), 0
#define IPC_KEYS_ONCE(s)     (s), (sizeof(s) / sizeof((s)[0])), NULL, IPC_ONCE
/* A daemon's configuration row: accepted once, and a refusal is fatal. */
#define IPC_KEYS_CONFIG(s)                                                     \
	(s), (sizeof(s) / sizeof((s)[0])), NULL, (IPC_ONCE | IPC_FATAL)
/* A row that takes {} alone. */
#define IPC_EMPTY NULL, 0, NULL, 0
/* Tables end with this row. */
/* clang-format off */
#define IPC_END {MSG_NONE, 0, 0, 0, 0, NULL, IPC_EMPTY}
/* clang-format on */

/* Pure frame-header codec (used by the stream layer and the fuzzer). */
enum ipc_parse { IPC_NEED_MORE = 0, IPC_FRAME = 1, IPC_BAD = -1 };
void ipc_hdr_encode(const struct ipc_hdr *, uint8_t out[IPC_HDR_LEN]);
enum ipc_parse ipc_hdr_decode(const uint8_t *buf, size_t len, struct ipc_hdr *);
struct json_object *ipc_payload_parse(const char *buf, size_t len);

/*
 * One frame as one datagram (the gate channel is SOCK_SEQPACKET): the
 * same header, then exactly len payload bytes, nothing after.  encode
 * returns the datagram's length, or -1 if it does not fit outsz; decode
 * returns the payload object (the caller's), or NULL unless the header
 * is valid, names a known type and its len matches the datagram.
 */
ssize_t ipc_dgram_encode(uint32_t type, uint16_t flags,
    struct json_object *payload, void *out, size_t outsz);
struct json_object *ipc_dgram_decode(
    const void *buf, size_t len, struct ipc_hdr *);

/* Channels. */
struct ipc_conn *ipc_conn_new(struct event_base *, int fd, enum proc_id peer,
    const struct ipc_dispatch *table, ipc_close_fn, void *arg);
void ipc_conn_free(struct ipc_conn *); /* safe inside its own callbacks */
enum proc_id ipc_conn_peer(const struct ipc_conn *);
/* 1 once the peer broke the protocol (as opposed to closing cleanly). */
int ipc_conn_broken(const struct ipc_conn *);
int ipc_conn_fd(const struct ipc_conn *);
/* 1 while a request of ours still waits for its reply (or its timeout). */
int ipc_conn_waiting(const struct ipc_conn *);

/*
 * Queue a one-way frame (id 0, no reply expected).  payload may be NULL
 * (sent as {}); it is not consumed.  fd, if >= 0, is sent with the frame
 * and then closed: ownership passes to the codec even on failure.
 * Returns 0 or -1.  The same rules hold for ipc_reply and ipc_request.
 */
int ipc_send(
    struct ipc_conn *, uint32_t type, struct json_object *payload, int fd);
/* Write the queued frames at once, as far as the socket takes them;
 * what is left (or an error) goes on the next loop pass.  No callback
 * runs. */
void ipc_flush(struct ipc_conn *);
/* Answer the peer's request req (a reply frame carrying req's id). */
int ipc_reply(struct ipc_conn *, const struct ipc_msg *req, uint32_t type,
    struct json_object *payload, int fd);
/* Answer a request with MSG_ERROR and a code from a fixed set. */
int ipc_reply_error(
    struct ipc_conn *, const struct ipc_msg *req, const char *code);

/*
 * Send a request and accept exactly one reply: reply_type or MSG_ERROR.
 * Any other frame carrying this id breaks the protocol and cuts the peer
 * off.  cb runs once: with the reply, or with NULL on timeout or loss.
 */
int ipc_request(struct ipc_conn *, uint32_t type, struct json_object *payload,
    int fd, uint32_t reply_type, const struct timeval *timeout, ipc_reply_fn cb,
    void *arg);

/*
 * Feed received bytes (and fds already taken off the socket) through the
 * frame parser and dispatch table.  The stream layer calls this; so do
 * tests and the fuzzer.  As with recvmsg(2), fds count as arriving with
 * the last byte of buf; a frame may claim only an fd that arrived with
 * its own first byte.  Returns 0, or -1 once the peer broke framing
 * (the conn is then dead: the close callback has run).
 */
int ipc_conn_feed(struct ipc_conn *, const void *buf, size_t len,
    const int *fds, size_t nfds);

/* Lower-level fd passing, one small separately-tested pair. */
ssize_t ipc_sendmsg_fd(int sock, const void *buf, size_t len, int fd);
ssize_t ipc_recvmsg_fds(
    int sock, void *buf, size_t len, int *fds, size_t *nfds, size_t maxfds);

#endif
