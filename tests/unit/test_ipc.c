/*
 * Unit tests for common/ipc.c: the frame-header codec, strict payload
 * parsing, the dispatch-table checks (SU-3), request/reply pairing with
 * timeouts, split and coalesced input, SCM_RIGHTS descriptor passing, and
 * freeing a channel from inside its own callbacks.  Channels run over real
 * AF_UNIX socketpairs driven by a libevent loop, or are fed directly with
 * ipc_conn_feed() on a conn created with fd -1.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "ipc.h"
#include "msg.h"
#include "proc.h"

#define MAXREC 16
#define BODYSZ 160

/* What one channel's owner saw: handler calls and close callbacks. */
struct rec {
	int n;
	uint32_t type[MAXREC];
	uint32_t id[MAXREC];
	int from[MAXREC];
	char body[MAXREC][BODYSZ];
	int fd[MAXREC];	     /* descriptor kept by the handler, or -1 */
	int cloexec[MAXREC]; /* FD_CLOEXEC was set on it */
	int keepfd;
	int nclose;
	int mode; /* how h_serve answers */
	uint32_t saved_id;
	struct ipc_conn *self;
	int free_in_handler;
	int free_in_close;
};

enum { SERVE_OK, SERVE_WRONG, SERVE_ERROR, SERVE_SILENT };

/* What one request's reply callback saw. */
struct rep {
	int n;
	int nnull;
	uint32_t type;
	uint32_t id;
	int from;
	char body[BODYSZ];
	struct ipc_conn *freeme; /* freed from inside the callback */
};

static void
h_record(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct rec *r = arg;
	int i = r->n;

	if (i < MAXREC) {
		r->type[i] = m->m_type;
		r->id[i] = m->m_id;
		r->from[i] = (int)m->m_from;
		snprintf(r->body[i], BODYSZ, "%s",
		    json_object_to_json_string_ext(
			m->m_obj, JSON_C_TO_STRING_PLAIN));
		r->fd[i] = -1;
		r->cloexec[i] = 0;
		if (r->keepfd && m->m_fd >= 0) {
			r->fd[i] = m->m_fd;
			r->cloexec[i] =
			    (fcntl(m->m_fd, F_GETFD) & FD_CLOEXEC) != 0;
			m->m_fd = -1;
		}
	}
	r->n++;
	if (r->free_in_handler) {
		r->self = NULL;
		ipc_conn_free(c);
	}
}

static void
h_serve(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct rec *r = arg;
	struct json_object *o;
	struct json_object *q;

	h_record(c, m, arg);
	switch (r->mode) {
	case SERVE_OK:
		o = json_object_new_object();
		json_object_object_add(o, "pid", json_object_new_int(42));
		if (json_object_object_get_ex(m->m_obj, "q", &q))
			json_object_object_add(o, "q", json_object_get(q));
		assert_int_equal(ipc_reply(c, m, MSG_STATUS_OK, o, -1), 0);
		json_object_put(o);
		break;
	case SERVE_WRONG:
		assert_int_equal(ipc_reply(c, m, MSG_HEALTH_OK, NULL, -1), 0);
		break;
	case SERVE_ERROR:
		assert_int_equal(ipc_reply_error(c, m, "denied"), 0);
		break;
	case SERVE_SILENT:
		r->saved_id = m->m_id;
		break;
	}
}

static void
on_close(struct ipc_conn *c, void *arg)
{
	struct rec *r = arg;

	r->nclose++;
	if (r->free_in_close) {
		r->self = NULL;
		ipc_conn_free(c);
	}
}

static void
on_reply(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct rep *p = arg;

	p->n++;
	if (m == NULL)
		p->nnull++;
	else {
		p->type = m->m_type;
		p->id = m->m_id;
		p->from = (int)m->m_from;
		snprintf(p->body, BODYSZ, "%s",
		    json_object_to_json_string_ext(
			m->m_obj, JSON_C_TO_STRING_PLAIN));
	}
	if (p->freeme != NULL) {
		assert_ptr_equal(p->freeme, c);
		p->freeme = NULL;
		ipc_conn_free(c);
	}
}

/* Any keys: the codec's own checks alone. */
static const struct json_shape any_shape[] = {JS_REST};
/* A declared shape (test_dispatch_shape_SU3). */
static const struct json_shape id_shape[] = {
    JS_STR("id", JS_REQ, 1, 8),
    JS_INT("n", JS_OPT, 0, 9),
};

/* A receiver's table: rows differ in sender, size bounds and fd rule. */
static const struct ipc_dispatch tbl_rec[] = {
    {MSG_STATUS, PROC_BIT(PROC_PARENT), 2, 64, IPC_FD_NONE, h_record,
	IPC_KEYS(any_shape)},
    {MSG_PEER_FD, PROC_BIT(PROC_PARENT), 2, 256, IPC_FD_REQUIRED, h_record,
	IPC_KEYS(any_shape)},
    {MSG_AUDIT_RECORD, PROC_BIT(PROC_PARENT) | PROC_BIT(PROC_BROKER), 8, 32,
	IPC_FD_NONE, h_record, IPC_KEYS(any_shape)},
    {MSG_SESSION_ADD, PROC_BIT(PROC_PARENT), 2, 128, IPC_FD_NONE, h_record,
	IPC_KEYS_OR(id_shape, "bad-request")},
    {MSG_SHUTDOWN, PROC_BIT(PROC_PARENT), 2, 64, IPC_FD_NONE, h_record,
	IPC_KEYS_ONCE(any_shape)},
    IPC_END,
};

/* A server's table: answers MSG_STATUS according to rec.mode. */
static const struct ipc_dispatch tbl_serve[] = {
    {MSG_STATUS, PROC_BIT(PROC_PARENT), 2, 1024, IPC_FD_NONE, h_serve,
	IPC_KEYS(any_shape)},
    IPC_END,
};

/* ---- helpers ---- */

static size_t
mkframe(uint8_t *out, uint32_t type, uint32_t id, uint16_t flags,
    const char *body, size_t blen)
{
	struct ipc_hdr h;

	memset(&h, 0, sizeof(h));
	h.type = type;
	h.id = id;
	h.len = (uint32_t)blen;
	h.flags = flags;
	ipc_hdr_encode(&h, out);
	memcpy(out + IPC_HDR_LEN, body, blen);
	return IPC_HDR_LEN + blen;
}

#define MKF(out, type, id, flags, s)                                           \
	mkframe((out), (type), (id), (flags), (s), strlen(s))

static void
rec_init(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < MAXREC; i++)
		r->fd[i] = -1;
}

static void
rec_done(struct rec *r)
{
	for (int i = 0; i < MAXREC && i < r->n; i++)
		if (r->fd[i] >= 0)
			close(r->fd[i]);
	ipc_conn_free(r->self);
	r->self = NULL;
}

/* Run the loop until *cond >= want or about two seconds pass. */
static void
pump(struct event_base *b, const int *cond, int want)
{
	for (int i = 0; i < 2000 && *cond < want; i++) {
		event_base_loop(b, EVLOOP_NONBLOCK);
		if (*cond < want)
			usleep(1000);
	}
}

/* Run the loop for about ms milliseconds. */
static void
spin(struct event_base *b, int ms)
{
	for (int i = 0; i < ms; i++) {
		event_base_loop(b, EVLOOP_NONBLOCK);
		usleep(1000);
	}
}

static int
fd_closed(int fd)
{
	errno = 0;
	return fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

static int
count_fds(void)
{
	DIR *d;
	struct dirent *de;
	int n = 0;

	assert_non_null(d = opendir("/proc/self/fd"));
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void
mkpair(int sv[2])
{
	assert_int_equal(
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

/* The pipe's read end has no holder left: a write gets EPIPE. */
static int
pipe_orphaned(int wfd)
{
	return write(wfd, "x", 1) == -1 && errno == EPIPE;
}

/*
 * Collect whole frames written by a conn to the raw end of a socketpair,
 * running the loop until want frames arrived (or about two seconds).
 */
struct rawbuf {
	uint8_t b[4096];
	size_t len;
	int nframes;
};

static int
raw_count(struct rawbuf *rb)
{
	struct ipc_hdr h;
	size_t off = 0;
	int n = 0;

	while (ipc_hdr_decode(rb->b + off, rb->len - off, &h) == IPC_FRAME &&
	       rb->len - off >= IPC_HDR_LEN + (size_t)h.len) {
		off += IPC_HDR_LEN + h.len;
		n++;
	}
	return n;
}

static void
raw_collect(struct event_base *base, int fd, struct rawbuf *rb, int want)
{
	ssize_t k;

	for (int i = 0; i < 2000; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		k = recv(
		    fd, rb->b + rb->len, sizeof(rb->b) - rb->len, MSG_DONTWAIT);
		if (k > 0)
			rb->len += (size_t)k;
		rb->nframes = raw_count(rb);
		if (rb->nframes >= want && want > 0)
			return;
		usleep(1000);
		if (want == 0 && i >= 50)
			return;
	}
}

/* The i-th collected frame's header and parsed body. */
static struct json_object *
raw_frame(struct rawbuf *rb, int idx, struct ipc_hdr *h)
{
	size_t off = 0;

	for (int n = 0;; n++) {
		assert_int_equal(
		    ipc_hdr_decode(rb->b + off, rb->len - off, h), IPC_FRAME);
		if (n == idx)
			return ipc_payload_parse(
			    (char *)rb->b + off + IPC_HDR_LEN, h->len);
		off += IPC_HDR_LEN + h->len;
	}
}

static void
assert_bad_message(struct rawbuf *rb, int idx, uint32_t id)
{
	struct ipc_hdr h;
	struct json_object *o, *e;

	assert_non_null(o = raw_frame(rb, idx, &h));
	assert_int_equal(h.type, MSG_ERROR);
	assert_int_equal(h.id, id);
	assert_int_equal(h.flags, IPC_FLAG_REPLY);
	assert_true(json_object_object_get_ex(o, "error", &e));
	assert_string_equal(json_object_get_string(e), "bad-message");
	json_object_put(o);
}

static int
setup(void **state)
{
	struct event_base *b;

	if ((b = event_base_new()) == NULL)
		return -1;
	*state = b;
	return 0;
}

static int
teardown(void **state)
{
	event_base_free(*state);
	return 0;
}

/* ---- frame header codec ---- */

static void
test_hdr_roundtrip(void **state)
{
	struct ipc_hdr in, out;
	uint8_t b[IPC_HDR_LEN + 4];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = MSG_AUDIT_RECORD;
	in.id = 0xdeadbeef;
	in.len = 1234;
	in.flags = IPC_FLAG_FD | IPC_FLAG_REPLY;
	in.zero = 0x7777; /* never encoded */
	memset(b, 0xaa, sizeof(b));
	ipc_hdr_encode(&in, b);
	assert_int_equal(b[14], 0);
	assert_int_equal(b[15], 0);
	assert_int_equal(b[IPC_HDR_LEN], 0xaa); /* wrote 16 bytes only */
	memset(&out, 0xff, sizeof(out));
	assert_int_equal(ipc_hdr_decode(b, IPC_HDR_LEN, &out), IPC_FRAME);
	assert_int_equal(out.type, MSG_AUDIT_RECORD);
	assert_int_equal(out.id, 0xdeadbeef);
	assert_int_equal(out.len, 1234);
	assert_int_equal(out.flags, IPC_FLAG_FD | IPC_FLAG_REPLY);
	assert_int_equal(out.zero, 0);
	/* Extra bytes after the header are not the header's business. */
	assert_int_equal(ipc_hdr_decode(b, sizeof(b), &out), IPC_FRAME);

	/* The largest legal payload and an empty one decode. */
	in.len = IPC_MAX_PAYLOAD;
	in.flags = 0;
	ipc_hdr_encode(&in, b);
	assert_int_equal(ipc_hdr_decode(b, IPC_HDR_LEN, &out), IPC_FRAME);
	assert_int_equal(out.len, IPC_MAX_PAYLOAD);
	in.len = 0;
	ipc_hdr_encode(&in, b);
	assert_int_equal(ipc_hdr_decode(b, IPC_HDR_LEN, &out), IPC_FRAME);
	/* Out-of-catalogue types are framing-clean; dispatch refuses them. */
	in.type = 0xffffffffu;
	ipc_hdr_encode(&in, b);
	assert_int_equal(ipc_hdr_decode(b, IPC_HDR_LEN, &out), IPC_FRAME);
}

static void
test_hdr_truncated_need_more(void **state)
{
	struct ipc_hdr in, out;
	uint8_t b[IPC_HDR_LEN];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = MSG_STATUS;
	in.len = 2;
	ipc_hdr_encode(&in, b);
	for (size_t l = 0; l < IPC_HDR_LEN; l++)
		assert_int_equal(ipc_hdr_decode(b, l, &out), IPC_NEED_MORE);
}

static void
test_hdr_len_bound_SU3(void **state)
{
	struct event_base *base = *state;
	struct ipc_hdr in, out;
	struct ipc_conn *c;
	struct rec r;
	uint8_t b[IPC_HDR_LEN];

	memset(&in, 0, sizeof(in));
	in.type = MSG_STATUS;
	in.len = IPC_MAX_PAYLOAD + 1;
	ipc_hdr_encode(&in, b);
	assert_int_equal(ipc_hdr_decode(b, IPC_HDR_LEN, &out), IPC_BAD);
	in.len = 0xffffffffu;
	ipc_hdr_encode(&in, b);
	assert_int_equal(ipc_hdr_decode(b, IPC_HDR_LEN, &out), IPC_BAD);

	/*
	 * Nothing is allocated or awaited for the body: the header alone
	 * kills the channel at once (under ASan a 4 GiB reservation would
	 * show up as an allocation failure).
	 */
	rec_init(&r);
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	assert_int_equal(ipc_conn_feed(c, b, sizeof(b), NULL, 0), -1);
	assert_int_equal(r.nclose, 1);
	assert_int_equal(r.n, 0);
	rec_done(&r);
}

static void
test_hdr_reserved_and_flags_SU3(void **state)
{
	struct ipc_hdr in, out;
	uint8_t b[IPC_HDR_LEN];

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = MSG_STATUS;
	in.len = 2;
	ipc_hdr_encode(&in, b);
	b[14] = 1;
	assert_int_equal(ipc_hdr_decode(b, IPC_HDR_LEN, &out), IPC_BAD);
	b[14] = 0;
	b[15] = 0x80;
	assert_int_equal(ipc_hdr_decode(b, IPC_HDR_LEN, &out), IPC_BAD);
	for (int bit = 2; bit < 16; bit++) {
		in.flags = (uint16_t)(1u << bit);
		ipc_hdr_encode(&in, b);
		assert_int_equal(ipc_hdr_decode(b, IPC_HDR_LEN, &out), IPC_BAD);
		in.flags |= IPC_FLAG_FD;
		ipc_hdr_encode(&in, b);
		assert_int_equal(ipc_hdr_decode(b, IPC_HDR_LEN, &out), IPC_BAD);
	}
}

/* ---- payload parsing ---- */

static int
parses(const char *s, size_t len)
{
	struct json_object *o;

	if ((o = ipc_payload_parse(s, len)) == NULL)
		return 0;
	assert_true(json_object_is_type(o, json_type_object));
	json_object_put(o);
	return 1;
}

/* An object nested d levels deep: {"a":{"a":...{}}}. */
static size_t
nest(char *buf, int d)
{
	size_t k = 0;

	buf[k++] = '{';
	for (int i = 1; i < d; i++) {
		memcpy(buf + k, "\"a\":{", 5);
		k += 5;
	}
	for (int i = 0; i < d; i++)
		buf[k++] = '}';
	return k;
}

/*
 * Payloads and whether ipc_payload_parse takes them: strict RFC 8259
 * (json-c's strict mode alone lets through single-quoted keys, NaN and
 * Infinity, raw control bytes, overlongs and surrogates), strict UTF-8,
 * exactly one object, no byte after it.
 */
#define PL(s, ok, why)                                                         \
	{                                                                      \
		(s), sizeof(s) - 1, (ok), (why)                                \
	}
static const struct {
	const char *p_s;
	size_t p_len;
	int p_ok;
	const char *p_why;
} payloads[] = {
    PL("{}", 1, "empty object"),
    PL(" \t\r\n{}\n", 1, "whitespace around"),
    PL("{\"a\":1,\"b\":[true,false,null,\"x\"],\"c\":{\"d\":-1.5e3},"
       "\"e\":\"\\u00e9\\n\"}",
	1, "every kind of value"),
    PL("{\"k\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}", 1,
	"UTF-8 of 2, 3 and 4 bytes"),
    {"{}garbage", 2, 1, "the length is authoritative"},
    /* not one object */
    PL("[]", 0, "array"),
    PL("[{}]", 0, "array"),
    PL("1", 0, "number"),
    PL("12", 0, "number"),
    PL("-1.5", 0, "number"),
    PL("\"str\"", 0, "string"),
    PL("null", 0, "null"),
    PL("true", 0, "true"),
    PL("", 0, "nothing"),
    PL("{", 0, "unclosed"),
    PL("  ", 0, "blank"),
    PL("{\"a\":1", 0, "unclosed"),
    PL("{\"a\":}", 0, "no value"),
    /* trailing bytes */
    PL("{}x", 0, "trailing"),
    PL("{}{}", 0, "two objects"),
    PL("{} 1", 0, "trailing"),
    PL("{}}", 0, "trailing"),
    PL("{\"a\":1}]", 0, "trailing"),
    PL("{},", 0, "trailing"),
    /* bad UTF-8 */
    PL("{\"a\":\"\xc3\x28\"}", 0, "bad continuation"),
    PL("{\"a\":\"\xff\"}", 0, "never valid"),
    PL("{\"a\":\"\x80\"}", 0, "lone continuation"),
    PL("{\"a\":\"\xe2\x82\"}", 0, "truncated"),
    PL("{\"\xfe\":1}", 0, "in a key"),
    PL("{\"a\":\"x\"}\xc3", 0, "after the end"),
    PL("{\"a\":\"\xf0\x9f\x98\"}", 0, "truncated 4-byte"),
    PL("{\"a\":\"\xc0\xaf\"}", 0, "overlong '/'"),
    PL("{\"a\":\"\xe0\x80\xaf\"}", 0, "overlong '/'"),
    PL("{\"a\":\"\xed\xa0\x80\"}", 0, "U+D800"),
    PL("{\"a\":\"\xf4\x90\x80\x80\"}", 0, "> U+10FFFF"),
    /* NUL anywhere */
    PL("{\"a\":\"x\0y\"}", 0, "NUL in a value"),
    PL("{\"a\0\":1}", 0, "NUL in a key"),
    PL("{\0}", 0, "NUL"),
    PL("{}\0", 0, "NUL after"),
    PL("\0{}", 0, "NUL before"),
    PL("{\"a\":1\0}", 0, "NUL"),
    /* not strict JSON */
    PL("{\"a\":'b'}", 0, "single quotes"),
    PL("{'a':'b'}", 0, "single quotes"),
    PL("{'a':1}", 0, "single-quoted key"),
    PL("{/*c*/}", 0, "comment"),
    PL("{\"a\":1}//c", 0, "comment"),
    PL("{\"a\":1}/*c*/", 0, "comment"),
    PL("{\"a\":1,}", 0, "trailing comma"),
    PL("{\"a\":[1,]}", 0, "trailing comma"),
    PL("{a:1}", 0, "bare key"),
    PL("{\"a\":0x10}", 0, "hex"),
    PL("{\"a\":01}", 0, "leading zero"),
    PL("{\"a\":+1}", 0, "plus sign"),
    PL("{\"a\":.5}", 0, "bare fraction"),
    PL("{\"a\":True}", 0, "True"),
    PL("{\"a\":nan}", 0, "nan"),
    PL("{\"a\":NaN}", 0, "NaN"),
    PL("{\"a\":Infinity}", 0, "Infinity"),
    PL("{\"a\":-Infinity}", 0, "-Infinity"),
    PL("{\"a\":\"\\x41\"}", 0, "\\x escape"),
    PL("{\"a\":\"\x01\"}", 0, "raw control byte"),
    PL("{\"a\":\"\t\"}", 0, "raw tab"),
    PL("{\"a\":\"\n\"}", 0, "raw newline"),
};

static void
test_payload_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++)
		if (parses(payloads[i].p_s, payloads[i].p_len) !=
		    payloads[i].p_ok)
			fail_msg("payload %zu (%s): %s", i, payloads[i].p_why,
			    payloads[i].p_ok ? "refused" : "accepted");
}

static void
test_payload_values(void **state)
{
	struct json_object *o, *v;
	char buf[512];

	(void)state;
	assert_true(parses(buf, nest(buf, IPC_JSON_DEPTH)));
	assert_non_null(o = ipc_payload_parse("{\"n\":7,\"s\":\"v\"}", 15));
	assert_true(json_object_object_get_ex(o, "n", &v));
	assert_int_equal(json_object_get_int(v), 7);
	assert_true(json_object_object_get_ex(o, "s", &v));
	assert_string_equal(json_object_get_string(v), "v");
	json_object_put(o);
}

static void
test_payload_depth_refused(void **state)
{
	char buf[1024];
	size_t k;

	(void)state;
	assert_true(parses(buf, nest(buf, IPC_JSON_DEPTH)));
	assert_false(parses(buf, nest(buf, IPC_JSON_DEPTH + 1)));
	assert_false(parses(buf, nest(buf, IPC_JSON_DEPTH + 2)));
	assert_false(parses(buf, nest(buf, 100)));
	/* Arrays count too. */
	k = 0;
	memcpy(buf, "{\"a\":", 5);
	k = 5;
	for (int i = 0; i < IPC_JSON_DEPTH; i++)
		buf[k++] = '[';
	for (int i = 0; i < IPC_JSON_DEPTH; i++)
		buf[k++] = ']';
	buf[k++] = '}';
	assert_false(parses(buf, k));
}

/* ---- request / reply over a socketpair ---- */

struct duo {
	int sv[2];
	struct rec a; /* requester: its peer is auditd */
	struct rec b; /* server: its peer is the parent */
	struct ipc_conn *ca, *cb;
};

static void
duo_open2(
    struct event_base *base, struct duo *d, const struct ipc_dispatch *btbl)
{
	mkpair(d->sv);
	rec_init(&d->a);
	rec_init(&d->b);
	assert_non_null(d->ca = ipc_conn_new(base, d->sv[0], PROC_AUDITD,
			    tbl_rec, on_close, &d->a));
	assert_non_null(d->cb = ipc_conn_new(base, d->sv[1], PROC_PARENT, btbl,
			    on_close, &d->b));
	d->a.self = d->ca;
	d->b.self = d->cb;
	assert_int_equal(ipc_conn_fd(d->ca), d->sv[0]);
	assert_int_equal(ipc_conn_peer(d->cb), PROC_PARENT);
}

static void
duo_open(struct event_base *base, struct duo *d)
{
	duo_open2(base, d, tbl_serve);
}

static void
duo_close(struct duo *d)
{
	rec_done(&d->a);
	rec_done(&d->b);
}

static struct json_object *
obj_q(int q)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "q", json_object_new_int(q));
	return o;
}

/*
 * Two requests in flight, answered by the server in each mode: the right
 * type, MSG_ERROR (a fixed code), or a type nobody asked for, which cuts
 * the channel and calls both callbacks with "no reply".  Each callback
 * runs once; replies never reach the dispatch table.
 */
static const struct {
	int mode;
	uint32_t type;	   /* what the callbacks see; 0: no reply */
	const char *body5; /* the answer to {"q":5} */
	const char *body6;
} reply_cases[] = {
    {SERVE_OK, MSG_STATUS_OK, "{\"pid\":42,\"q\":5}", "{\"pid\":42,\"q\":6}"},
    {SERVE_ERROR, MSG_ERROR, "{\"error\":\"denied\"}",
	"{\"error\":\"denied\"}"},
    {SERVE_WRONG, 0, NULL, NULL},
};

/* A request of {"q":q} (not consumed) with its callback into p. */
static int
ask_q(struct duo *d, int q, struct rep *p)
{
	struct json_object *o = obj_q(q);
	int r;

	memset(p, 0, sizeof(*p));
	r = ipc_request(
	    d->ca, MSG_STATUS, o, -1, MSG_STATUS_OK, NULL, on_reply, p);
	json_object_put(o);
	return r;
}

/* A dead channel refuses to send, and closes a passed fd. */
static void
assert_dead(struct duo *d)
{
	struct rep p;
	int pp[2];

	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	assert_int_equal(ipc_send(d->ca, MSG_STATUS, NULL, pp[0]), -1);
	assert_true(fd_closed(pp[0]));
	assert_true(pipe_orphaned(pp[1]));
	close(pp[1]);
	assert_int_equal(ask_q(d, 7, &p), -1);
}

static void
test_reply_modes_SU3(void **state)
{
	struct event_base *base = *state;
	struct rep p1, p2, p3;
	struct duo d;
	size_t i;
	int cut;

	for (i = 0; i < sizeof(reply_cases) / sizeof(reply_cases[0]); i++) {
		cut = reply_cases[i].type == 0;
		duo_open(base, &d);
		d.b.mode = reply_cases[i].mode;
		assert_int_equal(ask_q(&d, 5, &p1), 0);
		assert_int_equal(ask_q(&d, 6, &p2), 0);
		if (cut)
			pump(base, &d.b.nclose, 1);
		else
			pump(base, &p2.n, 1);
		/* The server saw the first (both, unless it cut). */
		assert_true(d.b.n >= 1);
		assert_int_equal(d.b.type[0], MSG_STATUS);
		assert_int_equal(d.b.from[0], PROC_PARENT);
		assert_string_equal(d.b.body[0], "{\"q\":5}");
		assert_int_not_equal(d.b.id[0], 0);
		assert_int_equal(p1.n, 1);
		assert_int_equal(p2.n, 1);
		assert_int_equal(p1.nnull, cut);
		assert_int_equal(p2.nnull, cut);
		assert_int_equal(d.a.nclose, cut);
		assert_int_equal(d.b.nclose, cut); /* the server saw the cut */
		if (cut)
			assert_dead(&d);
		else {
			assert_int_equal(d.b.n, 2);
			assert_int_not_equal(d.b.id[0], d.b.id[1]);
			assert_int_equal(p1.type, reply_cases[i].type);
			assert_int_equal(p1.id, d.b.id[0]);
			assert_int_equal(p1.from, PROC_AUDITD);
			assert_string_equal(p1.body, reply_cases[i].body5);
			assert_string_equal(p2.body, reply_cases[i].body6);
			/* The channel still serves. */
			d.b.mode = SERVE_OK;
			assert_int_equal(ask_q(&d, 8, &p3), 0);
			pump(base, &p3.n, 1);
			assert_int_equal(p3.type, MSG_STATUS_OK);
		}
		/* Nothing runs twice; replies never reach the table. */
		spin(base, 20);
		assert_int_equal(p1.n, 1);
		assert_int_equal(p2.n, 1);
		assert_int_equal(d.a.n, 0);
		duo_close(&d);
	}
}

/* A reply of the right type whose payload is not a JSON object. */
static void
test_reply_bad_payload_cuts_SU3(void **state)
{
	struct event_base *base = *state;
	struct rec a;
	struct rep p;
	struct rawbuf rb;
	struct ipc_hdr h;
	struct json_object *o;
	uint8_t f[64];
	size_t n;
	int sv[2];

	mkpair(sv);
	rec_init(&a);
	memset(&p, 0, sizeof(p));
	memset(&rb, 0, sizeof(rb));
	assert_non_null(a.self = ipc_conn_new(
			    base, sv[0], PROC_AUDITD, tbl_rec, on_close, &a));
	assert_int_equal(ipc_request(a.self, MSG_STATUS, NULL, -1,
			     MSG_STATUS_OK, NULL, on_reply, &p),
	    0);
	raw_collect(base, sv[1], &rb, 1);
	assert_int_equal(rb.nframes, 1);
	assert_non_null(o = raw_frame(&rb, 0, &h));
	json_object_put(o);
	assert_int_equal(h.type, MSG_STATUS);
	assert_int_equal(h.flags, 0);
	assert_string_equal((char *)rb.b + IPC_HDR_LEN, "{}");

	n = MKF(f, MSG_STATUS_OK, h.id, IPC_FLAG_REPLY, "[1]");
	assert_int_equal(write(sv[1], f, n), (ssize_t)n);
	pump(base, &a.nclose, 1);
	assert_int_equal(a.nclose, 1);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.nnull, 1);
	rec_done(&a);
	close(sv[1]);
}

/*
 * SU-3: a request its row refuses is refused from its header alone.  A
 * 12 MiB frame of empty objects (a JSON tree of gigabytes) sent on a row
 * that takes 1024 bytes is answered bad-message without being parsed:
 * this process grows by the frame's bytes, not by the tree.
 */
static void
test_refused_frame_not_parsed_SU3(void **state)
{
	struct event_base *base = *state;
	struct rusage ru0, ru1;
	struct rawbuf rb;
	struct rec r;
	struct ipc_conn *c;
	struct ipc_hdr h;
	size_t blen = IPC_MAX_PAYLOAD, off = 0, i;
	uint8_t *f;
	ssize_t k;
	int sv[2];

	assert_non_null(f = malloc(IPC_HDR_LEN + blen));
	memset(&h, 0, sizeof(h));
	h.type = MSG_STATUS;
	h.id = 9;
	h.len = (uint32_t)blen;
	ipc_hdr_encode(&h, f);
	f[IPC_HDR_LEN] = '[';
	for (i = 1; i + 3 < blen; i += 3)
		memcpy(f + IPC_HDR_LEN + i, "{},", 3);
	memcpy(f + IPC_HDR_LEN + i - 1, "{}", 2);
	memset(f + IPC_HDR_LEN + i + 1, ' ', blen - i - 2);
	f[IPC_HDR_LEN + blen - 1] = ']';

	mkpair(sv);
	rec_init(&r);
	assert_non_null(c = ipc_conn_new(
			    base, sv[1], PROC_PARENT, tbl_serve, on_close, &r));
	r.self = c;
	assert_int_equal(getrusage(RUSAGE_SELF, &ru0), 0);
	while (off < IPC_HDR_LEN + blen) {
		k = send(sv[0], f + off, IPC_HDR_LEN + blen - off,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k > 0)
			off += (size_t)k;
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	free(f);
	memset(&rb, 0, sizeof(rb));
	raw_collect(base, sv[0], &rb, 1);
	assert_int_equal(rb.nframes, 1);
	assert_bad_message(&rb, 0, 9);
	assert_int_equal(getrusage(RUSAGE_SELF, &ru1), 0);
	assert_true(ru1.ru_maxrss - ru0.ru_maxrss < 256 * 1024); /* KiB */
	assert_int_equal(r.n, 0);      /* the handler never ran */
	assert_int_equal(r.nclose, 0); /* and the channel stays */
	rec_done(&r);
	close(sv[0]);
}

/*
 * SU-3: an answer to a request id we never issued is a protocol break
 * (the peer is cut off); one to an id that timed out is only dropped.
 */
static void
test_reply_never_asked_cuts_SU3(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	uint8_t buf[64];
	size_t len;
	int sv[2];

	mkpair(sv);
	rec_init(&r);
	assert_non_null(
	    c = ipc_conn_new(base, sv[1], PROC_AUDITD, tbl_rec, on_close, &r));
	r.self = c;
	len = MKF(buf, MSG_STATUS_OK, 77, IPC_FLAG_REPLY, "{}");
	assert_int_equal(write(sv[0], buf, len), (ssize_t)len);
	pump(base, &r.nclose, 1);
	assert_int_equal(r.nclose, 1);
	assert_true(ipc_conn_broken(c));
	rec_done(&r);
	close(sv[0]);
}

/* SU-3: a framing report restarts the less trusted end, never more. */
static void
test_proc_blame_SU3(void **state)
{
	static const struct {
		enum proc_id reporter, peer;
		int victim;
	} cases[] = {
	    /* The broker reporting anyone: the broker goes. */
	    {PROC_BROKER, PROC_AUDITD, PROC_BROKER},
	    {PROC_BROKER, PROC_SPAWNER, PROC_BROKER},
	    /* A more trusted daemon reporting a less trusted one: that one. */
	    {PROC_AUDITD, PROC_BROKER, PROC_BROKER},
	    {PROC_VAULTD, PROC_SPAWNER, PROC_SPAWNER},
	    {PROC_SPAWNER, PROC_AUDITD, PROC_SPAWNER},
	    /* Never cordond, never oneself or an unknown id. */
	    {PROC_BROKER, PROC_PARENT, -1},
	    {PROC_PARENT, PROC_BROKER, -1},
	    {PROC_AUDITD, PROC_AUDITD, -1},
	    {PROC_AUDITD, PROC_MAX, -1},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (proc_blame(cases[i].reporter, cases[i].peer) !=
		    cases[i].victim)
			fail_msg("proc_blame case %zu", i);
}

/* Answers each MSG_STATUS with about 1 MiB, counting its answers. */
#define BIG (1024 * 1024)
static int big_served;

static void
h_big(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	static char *blob;
	struct json_object *o;

	if (blob == NULL) {
		assert_non_null(blob = malloc(BIG + 1));
		memset(blob, 'x', BIG);
		blob[BIG] = '\0';
	}
	o = json_object_new_object();
	json_object_object_add(o, "b", json_object_new_string(blob));
	assert_int_equal(ipc_reply(c, m, MSG_STATUS_OK, o, -1), 0);
	json_object_put(o);
	big_served++;
}

static const struct ipc_dispatch tbl_big[] = {
    {MSG_STATUS, PROC_BIT(PROC_PARENT), 2, 64, IPC_FD_NONE, h_big,
	IPC_KEYS(any_shape)},
    IPC_END,
};

/*
 * A peer that asks and never reads its answers: once IPC_MAX_UNSENT
 * waits unsent, its frames are left unread and unhandled, so it cannot
 * make us hold more than that plus one answer.  Once it reads, the rest
 * is answered, in order, on the same channel.
 */
static void
test_unread_answers_stop_reading(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct ipc_hdr h;
	uint8_t buf[64], *in;
	size_t len, got = 0, want, off, seen = 0;
	uint32_t next = 1;
	ssize_t k;
	int sv[2], i, cap = (int)(IPC_MAX_UNSENT / BIG);

	mkpair(sv);
	big_served = 0;
	assert_non_null(
	    c = ipc_conn_new(base, sv[1], PROC_PARENT, tbl_big, NULL, NULL));
	for (i = 0; i < 3 * cap; i++) {
		len = MKF(buf, MSG_STATUS, (uint32_t)i + 1, 0, "{}");
		assert_int_equal(write(sv[0], buf, len), (ssize_t)len);
	}
	spin(base, 100);
	assert_true(big_served >= cap && big_served <= cap + 1);

	/* Read every answer: the rest is served, each id once, in order. */
	want = (size_t)(3 * cap) * (IPC_HDR_LEN + BIG + 8); /* {"b":"…"} */
	assert_non_null(in = malloc(2 * BIG));
	for (i = 0; i < 20000 && seen < want; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		k = recv(sv[0], in + got, 2 * BIG - got, MSG_DONTWAIT);
		if (k <= 0) {
			usleep(200);
			continue;
		}
		got += (size_t)k;
		for (off = 0;
		     ipc_hdr_decode(in + off, got - off, &h) == IPC_FRAME &&
		     got - off >= IPC_HDR_LEN + (size_t)h.len;
		     off += IPC_HDR_LEN + h.len) {
			assert_int_equal(h.id, next++);
			assert_int_equal(h.len, BIG + 8);
			seen += IPC_HDR_LEN + h.len;
		}
		memmove(in, in + off, got - off);
		got -= off;
	}
	free(in);
	assert_int_equal(seen, want);
	assert_int_equal(big_served, 3 * cap);
	assert_false(ipc_conn_broken(c));
	ipc_conn_free(c);
	close(sv[0]);
}

static void
test_request_timeout_late_reply(void **state)
{
	struct event_base *base = *state;
	struct timeval tv = {0, 30 * 1000};
	struct duo d;
	struct rep p1, p2;
	struct ipc_msg late;

	duo_open(base, &d);
	d.b.mode = SERVE_SILENT;
	memset(&p1, 0, sizeof(p1));
	memset(&p2, 0, sizeof(p2));
	assert_int_equal(ipc_request(d.ca, MSG_STATUS, NULL, -1, MSG_STATUS_OK,
			     &tv, on_reply, &p1),
	    0);
	pump(base, &p1.n, 1);
	assert_int_equal(p1.n, 1);
	assert_int_equal(p1.nnull, 1);
	assert_int_equal(d.b.n, 1); /* it did arrive; nobody answered */
	spin(base, 80);
	assert_int_equal(p1.n, 1);

	/* The late answer is dropped; the channel lives on. */
	memset(&late, 0, sizeof(late));
	late.m_id = d.b.saved_id;
	late.m_fd = -1;
	assert_int_equal(ipc_reply(d.cb, &late, MSG_STATUS_OK, NULL, -1), 0);
	spin(base, 30);
	assert_int_equal(p1.n, 1);
	assert_int_equal(d.a.nclose, 0);
	assert_int_equal(d.b.nclose, 0);

	d.b.mode = SERVE_OK;
	assert_int_equal(ipc_request(d.ca, MSG_STATUS, NULL, -1, MSG_STATUS_OK,
			     &tv, on_reply, &p2),
	    0);
	pump(base, &p2.n, 1);
	assert_int_equal(p2.n, 1);
	assert_int_equal(p2.nnull, 0);
	assert_int_equal(p2.type, MSG_STATUS_OK);
	spin(base, 80); /* its timer was cancelled with the answer */
	assert_int_equal(p2.n, 1);
	assert_int_equal(d.a.nclose, 0);
	duo_close(&d);
}

/* The owner frees a conn with requests outstanding: each fails once. */
static void
test_free_with_pending(void **state)
{
	struct event_base *base = *state;
	struct timeval tv = {0, 20 * 1000};
	struct duo d;
	struct rep p1, p2;

	duo_open(base, &d);
	d.b.mode = SERVE_SILENT;
	memset(&p1, 0, sizeof(p1));
	memset(&p2, 0, sizeof(p2));
	assert_int_equal(ipc_request(d.ca, MSG_STATUS, NULL, -1, MSG_STATUS_OK,
			     &tv, on_reply, &p1),
	    0);
	assert_int_equal(ipc_request(d.ca, MSG_STATUS, NULL, -1, MSG_STATUS_OK,
			     NULL, on_reply, &p2),
	    0);
	ipc_conn_free(d.ca);
	d.a.self = NULL;
	assert_int_equal(p1.n, 1);
	assert_int_equal(p1.nnull, 1);
	assert_int_equal(p2.n, 1);
	assert_int_equal(p2.nnull, 1);
	assert_int_equal(d.a.nclose, 0); /* the owner knows */
	pump(base, &d.b.nclose, 1);
	spin(base, 40); /* the freed timer never fires */
	assert_int_equal(p1.n, 1);
	duo_close(&d);
}

/* ---- split and coalesced input ---- */

static void
test_split_reads(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	uint8_t f[64];
	size_t n;
	int pp[2];
	char got[8];

	rec_init(&r);
	r.keepfd = 1;
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	assert_int_equal(ipc_conn_fd(c), -1);
	n = MKF(f, MSG_STATUS, 9, 0, "{\"k\":\"v\"}");
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(ipc_conn_feed(c, f + i, 1, NULL, 0), 0);
		assert_int_equal(r.n, i + 1 == n ? 1 : 0);
	}
	assert_int_equal(r.type[0], MSG_STATUS);
	assert_int_equal(r.id[0], 9);
	assert_int_equal(r.from[0], PROC_PARENT);
	assert_string_equal(r.body[0], "{\"k\":\"v\"}");
	assert_int_equal(ipc_conn_feed(c, NULL, 0, NULL, 0), 0);

	/* An fd riding on the first byte waits for the rest of its frame. */
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	n = MKF(f, MSG_PEER_FD, 0, IPC_FLAG_FD, "{\"peer\":\"vaultd\"}");
	assert_int_equal(ipc_conn_feed(c, f, 1, &pp[0], 1), 0);
	for (size_t i = 1; i < n; i++) {
		assert_int_equal(r.n, 1);
		assert_int_equal(ipc_conn_feed(c, f + i, 1, NULL, 0), 0);
	}
	assert_int_equal(r.n, 2);
	assert_int_equal(r.type[1], MSG_PEER_FD);
	assert_int_equal(r.fd[1], pp[0]);
	assert_int_equal(write(pp[1], "ok", 2), 2);
	assert_int_equal(read(r.fd[1], got, sizeof(got)), 2);
	close(pp[1]);
	assert_int_equal(r.nclose, 0);
	rec_done(&r);
}

static void
test_coalesced_frames(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	uint8_t f[256];
	size_t n = 0, cut;

	rec_init(&r);
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	n += MKF(f + n, MSG_STATUS, 1, 0, "{\"n\":1}");
	n += MKF(f + n, MSG_AUDIT_RECORD, 2, 0, "{\"n\":2,\"k\":\"x\"}");
	n += MKF(f + n, MSG_STATUS, 3, 0, "{\"n\":3}");
	assert_int_equal(ipc_conn_feed(c, f, n, NULL, 0), 0);
	assert_int_equal(r.n, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(r.id[i], i + 1);
	assert_int_equal(r.type[1], MSG_AUDIT_RECORD);
	assert_string_equal(r.body[0], "{\"n\":1}");
	assert_string_equal(r.body[1], "{\"n\":2,\"k\":\"x\"}");
	assert_string_equal(r.body[2], "{\"n\":3}");

	/* Two and a half frames, then the rest. */
	cut = n - 4;
	assert_int_equal(ipc_conn_feed(c, f, cut, NULL, 0), 0);
	assert_int_equal(r.n, 5);
	assert_int_equal(ipc_conn_feed(c, f + cut, n - cut, NULL, 0), 0);
	assert_int_equal(r.n, 6);
	assert_int_equal(r.id[5], 3);
	assert_int_equal(r.nclose, 0);
	rec_done(&r);
}

/* ---- dispatch table (SU-3) ---- */

/* A table-checked conn on one end of a socketpair; the test is the peer. */
struct rig {
	int sv[2];
	struct rec r;
	struct rawbuf rb;
};

static void
rig_open(struct event_base *base, struct rig *g, enum proc_id peer)
{
	mkpair(g->sv);
	rec_init(&g->r);
	memset(&g->rb, 0, sizeof(g->rb));
	assert_non_null(g->r.self = ipc_conn_new(
			    base, g->sv[0], peer, tbl_rec, on_close, &g->r));
}

static void
rig_send(
    struct rig *g, uint32_t type, uint32_t id, uint16_t flags, const char *body)
{
	uint8_t f[256];
	size_t n;

	n = MKF(f, type, id, flags, body);
	assert_int_equal(write(g->sv[1], f, n), (ssize_t)n);
}

static void
rig_close(struct rig *g)
{
	rec_done(&g->r);
	close(g->sv[1]);
}

/*
 * One frame against tbl_rec from one sender: handled, or refused without
 * reaching a handler (a request answered "bad-message", a one-way frame
 * dropped); never cut.  Rows differ in sender, size bounds and type.
 */
static const struct {
	enum proc_id d_peer;
	uint32_t d_type;
	uint32_t d_id;
	const char *d_body;
	int d_handled;
} dispatch_cases[] = {
    {PROC_PARENT, MSG_STATUS, 0, "{\"sentinel\":1}", 1},
    {PROC_PARENT, MSG_HEALTH, 7, "{}", 0}, /* catalogued, not in table */
    {PROC_PARENT, 999, 8, "{}", 0},	   /* beyond the catalogue */
    {PROC_PARENT, MSG_NONE, 9, "{}", 0},   /* the terminator's type */
    {PROC_PARENT, MSG_HEALTH, 0, "{}", 0}, /* one-way: no answer */
    /* The broker may send MSG_AUDIT_RECORD but not MSG_STATUS. */
    {PROC_BROKER, MSG_STATUS, 4, "{}", 0},
    {PROC_BROKER, MSG_STATUS, 0, "{}", 0},
    {PROC_BROKER, MSG_PEER_FD, 5, "{}", 0},
    {PROC_BROKER, MSG_AUDIT_RECORD, 6, "{\"k\":\"ok\"}", 1},
    /* MSG_AUDIT_RECORD takes 8..32 bytes: the bound is on bytes. */
    {PROC_PARENT, MSG_AUDIT_RECORD, 10, "{}", 0},
    {PROC_PARENT, MSG_AUDIT_RECORD, 11, "{\"a\":1}", 0},  /* 7 */
    {PROC_PARENT, MSG_AUDIT_RECORD, 12, "{\"a\":12}", 1}, /* 8 */
    {PROC_PARENT, MSG_AUDIT_RECORD, 13, "{\"a\":\"000000000000000000000000\"}",
	1}, /* 32 */
    {PROC_PARENT, MSG_AUDIT_RECORD, 14, "{\"a\":\"0000000000000000000000000\"}",
	0}, /* 33 */
    {PROC_PARENT, MSG_AUDIT_RECORD, 15,
	"{\"a\":1}                                    ", 0},
    /* MSG_STATUS takes at most 64. */
    {PROC_PARENT, MSG_STATUS, 16,
	"{\"a\":\"000000000000000000000000000000000000000000000000000000000\"}",
	0},
    /* Inside the bounds but not a JSON object. */
    {PROC_PARENT, MSG_STATUS, 17, "[1,2]", 0},
    {PROC_PARENT, MSG_STATUS, 18, "", 0},
};

static void
test_dispatch_table_SU3(void **state)
{
	struct event_base *base = *state;
	struct rig g;
	size_t i;
	int answer;

	for (i = 0; i < sizeof(dispatch_cases) / sizeof(dispatch_cases[0]);
	     i++) {
		answer =
		    !dispatch_cases[i].d_handled && dispatch_cases[i].d_id != 0;
		rig_open(base, &g, dispatch_cases[i].d_peer);
		rig_send(&g, dispatch_cases[i].d_type, dispatch_cases[i].d_id,
		    0, dispatch_cases[i].d_body);
		raw_collect(base, g.sv[1], &g.rb, answer);
		if (dispatch_cases[i].d_handled)
			pump(base, &g.r.n, 1);
		if (g.r.n != dispatch_cases[i].d_handled ||
		    g.rb.nframes != answer)
			fail_msg("dispatch case %zu: handled %d, answers %d", i,
			    g.r.n, g.rb.nframes);
		if (answer)
			assert_bad_message(&g.rb, 0, dispatch_cases[i].d_id);
		if (g.r.n == 1) {
			assert_int_equal(g.r.type[0], dispatch_cases[i].d_type);
			assert_int_equal(g.r.from[0], dispatch_cases[i].d_peer);
			assert_string_equal(
			    g.r.body[0], dispatch_cases[i].d_body);
		}
		assert_int_equal(g.r.nclose, 0); /* refused, not cut */
		rig_close(&g);
	}
}

/*
 * A row's declared shape, checked before the handler: a payload that
 * does not fit never reaches it, and a request is answered with the
 * row's code; nothing is cut.
 */
static void
test_dispatch_shape_SU3(void **state)
{
	static const struct {
		const char *body;
		int ok;
	} cases[] = {
	    {"{\"id\":\"a\"}", 1}, {"{\"id\":\"abcdefgh\",\"n\":9}", 1},
	    {"{}", 0},			       /* required key missing */
	    {"{\"id\":\"a\",\"x\":1}", 0},     /* leftover */
	    {"{\"id\":1}", 0},		       /* type */
	    {"{\"id\":null}", 0},	       /* a hole */
	    {"{\"id\":\"\"}", 0},	       /* too short */
	    {"{\"id\":\"abcdefghi\"}", 0},     /* too long */
	    {"{\"id\":\"a\\u0000b\"}", 0},     /* NUL */
	    {"{\"id\":\"a\",\"n\":10}", 0},    /* out of range */
	    {"{\"id\":\"a\",\"n\":\"1\"}", 0}, /* type */
	};
	struct event_base *base = *state;
	struct json_object *o, *e;
	struct ipc_hdr h;
	struct rig g;
	size_t i;
	int want = 0, answers = 0;

	rig_open(base, &g, PROC_PARENT);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* id 0: one-way; a refusal of it is answered to nobody. */
		rig_send(&g, MSG_SESSION_ADD, 0, 0, cases[i].body);
		if (!cases[i].ok) {
			rig_send(&g, MSG_SESSION_ADD, 100 + (uint32_t)i, 0,
			    cases[i].body);
			answers++;
		} else
			want++;
	}
	raw_collect(base, g.sv[1], &g.rb, answers);
	assert_int_equal(g.r.n, want);
	assert_int_equal(g.rb.nframes, answers);
	for (i = 0; i < (size_t)answers; i++) {
		assert_non_null(o = raw_frame(&g.rb, (int)i, &h));
		assert_int_equal(h.type, MSG_ERROR);
		assert_true(json_object_object_get_ex(o, "error", &e));
		assert_string_equal(json_object_get_string(e), "bad-request");
		json_object_put(o);
	}
	assert_int_equal(g.r.nclose, 0);
	rig_close(&g);
}

/*
 * An IPC_ONCE row admits one frame per channel; a frame it refuses for
 * its size does not use that one up.
 */
static void
test_dispatch_once_SU3(void **state)
{
	struct event_base *base = *state;
	struct rig g;

	rig_open(base, &g, PROC_PARENT);
	rig_send(&g, MSG_SHUTDOWN, 20, 0,
	    "{\"a\":"
	    "\"000000000000000000000000000000000000000000000000000000000\"}");
	rig_send(&g, MSG_SHUTDOWN, 21, 0, "{\"n\":1}");
	rig_send(&g, MSG_SHUTDOWN, 22, 0, "{\"n\":2}");
	rig_send(&g, MSG_SHUTDOWN, 0, 0, "{\"n\":3}");
	raw_collect(base, g.sv[1], &g.rb, 2);
	raw_collect(base, g.sv[1], &g.rb, 0);
	assert_int_equal(g.r.n, 1);
	assert_string_equal(g.r.body[0], "{\"n\":1}");
	assert_int_equal(g.rb.nframes, 2);
	assert_bad_message(&g.rb, 0, 20);
	assert_bad_message(&g.rb, 1, 22);
	assert_int_equal(g.r.nclose, 0);
	rig_close(&g);
}

/* A configuration row: once, and a refused payload is fatal. */
static const struct ipc_dispatch tbl_config[] = {
    {MSG_BROKER_CONFIG, PROC_BIT(PROC_PARENT), 2, 64, IPC_FD_NONE, h_record,
	IPC_KEYS_CONFIG(id_shape)},
    IPC_END,
};

/*
 * Feed frames (NUL-separated bodies, in order) from peer to a
 * tbl_config channel in a child: its exit status, 0 if it lived
 * through them all.
 */
static int
config_child(enum proc_id peer, const char *const *bodies, size_t n)
{
	struct event_base *base;
	struct ipc_conn *c;
	struct rec r;
	uint8_t f[256];
	size_t i, len;
	pid_t pid;
	int st;

	assert_true((pid = fork()) >= 0);
	if (pid == 0) {
		rec_init(&r);
		if ((base = event_base_new()) == NULL ||
		    (c = ipc_conn_new(
			 base, -1, peer, tbl_config, on_close, &r)) == NULL)
			_exit(3);
		for (i = 0; i < n; i++) {
			len = MKF(f, MSG_BROKER_CONFIG, 0, 0, bodies[i]);
			if (ipc_conn_feed(c, f, len, NULL, 0) == -1)
				_exit(4);
		}
		_exit(r.nclose == 0 ? 0 : 5);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/*
 * SU-3: a configuration row's refused payload ends the daemon (it must
 * not sit up unconfigured); a wrong sender or a repeat changes nothing.
 */
static void
test_dispatch_config_fatal_SU3(void **state)
{
	static const struct {
		enum proc_id peer;
		const char *bodies[2];
		size_t n;
		int exit;
	} cases[] = {
	    {PROC_PARENT, {"{\"id\":\"a\"}"}, 1, 0},
	    {PROC_PARENT, {"{\"id\":\"a\",\"x\":1}"}, 1, 1},
	    {PROC_PARENT, {"{\"n\":1}"}, 1, 1},
	    {PROC_PARENT, {"[1]"}, 1, 1},
	    {PROC_PARENT,
		{"{\"id\":\"a\",\"n\":1,\"pad\":\"0123456789012345"
		 "6789012345678901234567890123\"}"},
		1, 1},
	    {PROC_BROKER, {"{\"n\":1}"}, 1, 0},
	    {PROC_PARENT, {"{\"id\":\"a\"}", "{\"n\":1}"}, 2, 0},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(
		    config_child(cases[i].peer, cases[i].bodies, cases[i].n),
		    cases[i].exit);
}

static void
test_dispatch_fd_required_absent_SU3(void **state)
{
	struct event_base *base = *state;
	struct rig g;
	int pp[2];

	rig_open(base, &g, PROC_PARENT);
	g.r.keepfd = 1;
	rig_send(&g, MSG_PEER_FD, 3, 0, "{\"peer\":\"vaultd\"}");
	rig_send(&g, MSG_STATUS, 0, 0, "{}");
	raw_collect(base, g.sv[1], &g.rb, 1);
	assert_int_equal(g.r.n, 1);
	assert_int_equal(g.r.type[0], MSG_STATUS);
	assert_bad_message(&g.rb, 0, 3);
	assert_int_equal(g.r.nclose, 0);
	/* The same frame with its fd is accepted. */
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	{
		uint8_t f[64];
		size_t n = MKF(f, MSG_PEER_FD, 0, IPC_FLAG_FD, "{}");

		/* The fd rides on the frame's first byte, as ipc_send does. */
		assert_int_equal(ipc_sendmsg_fd(g.sv[1], f, 1, pp[0]), 1);
		assert_int_equal(
		    write(g.sv[1], f + 1, n - 1), (ssize_t)(n - 1));
	}
	close(pp[0]);
	pump(base, &g.r.n, 2);
	assert_int_equal(g.r.n, 2);
	assert_int_equal(g.r.type[1], MSG_PEER_FD);
	assert_true(g.r.fd[1] >= 0);
	close(pp[1]);
	rig_close(&g);
}

static void
test_dispatch_fd_unwanted_closed_SU3(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	uint8_t f[64];
	size_t n;
	int pp[2];

	rec_init(&r);
	r.keepfd = 1;
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	n = MKF(f, MSG_STATUS, 0, IPC_FLAG_FD, "{}");
	assert_int_equal(ipc_conn_feed(c, f, 1, &pp[0], 1), 0);
	assert_int_equal(ipc_conn_feed(c, f + 1, n - 1, NULL, 0), 0);
	assert_int_equal(r.n, 0);
	assert_true(fd_closed(pp[0]));
	assert_true(pipe_orphaned(pp[1]));
	close(pp[1]);
	/* A refused fd-carrying frame from the wrong sender: same. */
	ipc_conn_free(c);
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_BROKER, tbl_rec, on_close, &r));
	r.self = c;
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	n = MKF(f, MSG_PEER_FD, 0, IPC_FLAG_FD, "{}");
	assert_int_equal(ipc_conn_feed(c, f, 1, &pp[0], 1), 0);
	assert_int_equal(ipc_conn_feed(c, f + 1, n - 1, NULL, 0), 0);
	assert_int_equal(r.n, 0);
	assert_true(fd_closed(pp[0]));
	close(pp[1]);
	assert_int_equal(r.nclose, 0);
	rec_done(&r);
}

/*
 * SU-3: an fd may only be claimed by the frame whose first byte it came
 * with.  Frame A (no fd) and frame B (announces one) sent in one
 * sendmsg with the fd: the fd arrives with B's last byte, not B's first,
 * so B cannot take it and the channel is cut.
 */
static void
test_fd_bound_to_first_byte_SU3(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	uint8_t f[128];
	size_t n;
	int pp[2];

	rec_init(&r);
	r.keepfd = 1;
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	n = MKF(f, MSG_STATUS, 0, 0, "{}");
	n += MKF(f + n, MSG_PEER_FD, 0, IPC_FLAG_FD, "{}");
	assert_int_equal(ipc_conn_feed(c, f, n, &pp[0], 1), -1);
	assert_int_equal(r.nclose, 1);
	assert_true(r.n <= 1); /* A may have run; B never did */
	assert_true(fd_closed(pp[0]));
	close(pp[1]);
	rec_done(&r);
}

/* ---- framing violations cut the peer off (SU-3) ---- */

static void
test_bad_framing_cuts_SU3(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	struct ipc_hdr h;
	uint8_t f[64];
	size_t n;
	int pp[2];
	const uint16_t badflags[] = {0x0004, 0x8000};

	rec_init(&r);
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	/* A good frame, then a header over the bound in the same feed. */
	n = MKF(f, MSG_STATUS, 0, 0, "{}");
	memset(&h, 0, sizeof(h));
	h.type = MSG_STATUS;
	h.len = IPC_MAX_PAYLOAD + 1;
	ipc_hdr_encode(&h, f + n);
	n += IPC_HDR_LEN;
	assert_int_equal(ipc_conn_feed(c, f, n, NULL, 0), -1);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.nclose, 1);
	/* Dead for good: more input is refused and its fds are closed. */
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	n = MKF(f, MSG_STATUS, 0, IPC_FLAG_FD, "{}");
	assert_int_equal(ipc_conn_feed(c, f, n, &pp[0], 1), -1);
	assert_true(fd_closed(pp[0]));
	close(pp[1]);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.nclose, 1);
	ipc_conn_free(c);

	/* Reserved bits set. */
	for (size_t i = 0; i < 3; i++) {
		rec_init(&r);
		assert_non_null(c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec,
				    on_close, &r));
		n = MKF(f, MSG_STATUS, 0, 0, "{}");
		if (i < 2) {
			memset(&h, 0, sizeof(h));
			h.type = MSG_STATUS;
			h.len = 2;
			h.flags = badflags[i];
			ipc_hdr_encode(&h, f);
		} else
			f[15] = 1;
		assert_int_equal(ipc_conn_feed(c, f, n, NULL, 0), -1);
		assert_int_equal(r.n, 0);
		assert_int_equal(r.nclose, 1);
		ipc_conn_free(c);
	}

	/* Over a socket: the conn hangs up on the peer. */
	{
		struct rig g;
		char x;

		rig_open(base, &g, PROC_PARENT);
		memset(&h, 0, sizeof(h));
		h.type = MSG_STATUS;
		h.len = 0xffffffffu;
		ipc_hdr_encode(&h, f);
		assert_int_equal(write(g.sv[1], f, IPC_HDR_LEN), IPC_HDR_LEN);
		pump(base, &g.r.nclose, 1);
		assert_int_equal(g.r.nclose, 1);
		assert_int_equal(recv(g.sv[1], &x, 1, MSG_DONTWAIT), 0);
		rig_close(&g);
	}
}

/* ---- descriptor passing ---- */

static void
test_fd_passing(void **state)
{
	struct event_base *base = *state;
	struct duo d;
	struct json_object *o;
	int pp[3][2];
	char got[16];

	duo_open2(base, &d, tbl_rec); /* the server end keeps what it gets */
	d.b.keepfd = 1;
	assert_int_equal(pipe2(pp[0], O_CLOEXEC), 0);
	o = json_object_new_object();
	json_object_object_add(o, "peer", json_object_new_string("vaultd"));
	assert_int_equal(ipc_send(d.ca, MSG_PEER_FD, o, pp[0][0]), 0);
	json_object_put(o);
	pump(base, &d.b.n, 1);
	assert_int_equal(d.b.n, 1);
	assert_int_equal(d.b.type[0], MSG_PEER_FD);
	assert_int_equal(d.b.id[0], 0);
	assert_string_equal(d.b.body[0], "{\"peer\":\"vaultd\"}");
	assert_true(d.b.fd[0] >= 0);
	assert_true(d.b.cloexec[0]);
	assert_int_equal(write(pp[0][1], "hello", 5), 5);
	assert_int_equal(read(d.b.fd[0], got, sizeof(got)), 5);
	assert_memory_equal(got, "hello", 5);
	/* The sender closed its copy: with ours gone, the pipe is orphaned. */
	close(d.b.fd[0]);
	d.b.fd[0] = -1;
	assert_true(pipe_orphaned(pp[0][1]));
	close(pp[0][1]);

	/* Several fd frames interleaved with plain ones keep their order. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(pipe2(pp[i], O_CLOEXEC), 0);
	assert_int_equal(ipc_send(d.ca, MSG_PEER_FD, NULL, pp[0][0]), 0);
	assert_int_equal(ipc_send(d.ca, MSG_STATUS, NULL, -1), 0);
	assert_int_equal(ipc_send(d.ca, MSG_PEER_FD, NULL, pp[1][0]), 0);
	assert_int_equal(ipc_send(d.ca, MSG_PEER_FD, NULL, pp[2][0]), 0);
	assert_int_equal(ipc_send(d.ca, MSG_STATUS, NULL, -1), 0);
	pump(base, &d.b.n, 6);
	assert_int_equal(d.b.n, 6);
	assert_int_equal(d.b.fd[2], -1);
	assert_int_equal(d.b.fd[5], -1);
	for (int i = 0; i < 3; i++) {
		int k = (int[]){1, 3, 4}[i];
		char tag = (char)('a' + i);

		assert_int_equal(d.b.type[k], MSG_PEER_FD);
		assert_true(d.b.fd[k] >= 0);
		assert_int_equal(write(pp[i][1], &tag, 1), 1);
		assert_int_equal(read(d.b.fd[k], got, 1), 1);
		assert_int_equal(got[0], tag);
		close(pp[i][1]);
	}
	assert_int_equal(d.a.nclose, 0);
	assert_int_equal(d.b.nclose, 0);
	duo_close(&d);
}

static void
test_fd_announced_missing_SU3(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	struct rig g;
	uint8_t f[64];
	size_t n;

	rec_init(&r);
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	n = MKF(f, MSG_PEER_FD, 0, IPC_FLAG_FD, "{}");
	assert_int_equal(ipc_conn_feed(c, f, n, NULL, 0), -1);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.nclose, 1);
	rec_done(&r);

	rig_open(base, &g, PROC_PARENT);
	rig_send(&g, MSG_PEER_FD, 0, IPC_FLAG_FD, "{}");
	pump(base, &g.r.nclose, 1);
	assert_int_equal(g.r.nclose, 1);
	assert_int_equal(g.r.n, 0);
	rig_close(&g);
}

static void
test_fd_unannounced_cuts_SU3(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	struct rig g;
	uint8_t f[64];
	size_t n;
	int pp[2];

	rec_init(&r);
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	n = MKF(f, MSG_STATUS, 0, 0, "{}");
	assert_int_equal(ipc_conn_feed(c, f, n, &pp[0], 1), -1);
	assert_int_equal(r.nclose, 1);
	assert_true(fd_closed(pp[0]));
	assert_true(pipe_orphaned(pp[1]));
	close(pp[1]);
	rec_done(&r);

	/* Over a socket, a descriptor smuggled on a plain frame. */
	rig_open(base, &g, PROC_PARENT);
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	n = MKF(f, MSG_STATUS, 0, 0, "{}");
	assert_int_equal(ipc_sendmsg_fd(g.sv[1], f, n, pp[0]), (ssize_t)n);
	close(pp[0]);
	pump(base, &g.r.nclose, 1);
	assert_int_equal(g.r.nclose, 1);
	assert_true(pipe_orphaned(pp[1])); /* the conn closed its copy */
	close(pp[1]);
	rig_close(&g);
}

/* More descriptors than may queue ahead of their frames. */
static void
test_fd_queue_bound(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	int pp[2], fds[IPC_MAX_FDQ + 1];
	uint8_t f[64];
	size_t n;

	rec_init(&r);
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	for (int i = 0; i <= IPC_MAX_FDQ; i++)
		assert_true((fds[i] = dup(pp[0])) >= 0);
	close(pp[0]);
	n = MKF(f, MSG_PEER_FD, 0, IPC_FLAG_FD, "{}");
	assert_int_equal(ipc_conn_feed(c, f, 1, fds, IPC_MAX_FDQ - 1), 0);
	assert_int_equal(
	    ipc_conn_feed(c, f + 1, 1, fds + IPC_MAX_FDQ - 1, 2), -1);
	assert_int_equal(r.nclose, 1);
	for (int i = 0; i <= IPC_MAX_FDQ; i++)
		assert_true(fd_closed(fds[i]));
	assert_true(pipe_orphaned(pp[1]));
	close(pp[1]);
	(void)n;
	rec_done(&r);
}

/* Descriptor ownership passes to the codec even when sending fails. */
static void
test_send_fd_ownership(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	int pp[2], i, fd;

	rec_init(&r);
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	/* A feed-only conn never writes: fds pile up, then the queue is full.
	 */
	for (i = 0; i < 64; i++) {
		assert_true((fd = dup(pp[0])) >= 0);
		if (ipc_send(c, MSG_PEER_FD, NULL, fd) == -1) {
			assert_true(fd_closed(fd));
			break;
		}
	}
	assert_true(i > 0 && i < 64);
	close(pp[0]);
	rec_done(&r); /* closes the queued ones */
	assert_true(pipe_orphaned(pp[1]));
	close(pp[1]);
}

/*
 * More frames with descriptors than the out queue holds, queued in one
 * loop pass on a live channel: each is sent, none refused, and the peer
 * receives every descriptor.
 */
static void
test_send_fd_burst(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	uint8_t buf[4096];
	int sv[2], pp[2], fds[IPC_MAX_FDQ], i, got = 0, fd;
	size_t nfds, k;
	ssize_t n;

	rec_init(&r);
	mkpair(sv);
	assert_non_null(
	    c = ipc_conn_new(base, sv[0], PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	for (i = 0; i < 64; i++) {
		assert_true((fd = dup(pp[0])) >= 0);
		assert_int_equal(ipc_send(c, MSG_PEER_FD, NULL, fd), 0);
	}
	ipc_flush(c);
	while (got < 64 && (n = ipc_recvmsg_fds(sv[1], buf, sizeof(buf), fds,
				&nfds, IPC_MAX_FDQ)) > 0) {
		for (k = 0; k < nfds; k++)
			close(fds[k]);
		got += (int)nfds;
	}
	assert_int_equal(got, 64);
	close(pp[0]);
	close(pp[1]);
	close(sv[1]);
	rec_done(&r);
}

static void
send_rights(int sock, const int *fds, size_t n)
{
	struct msghdr msg;
	struct iovec iov;
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * 8)];
	} cb;
	struct cmsghdr *cmsg;
	char byte = 'x';

	memset(&msg, 0, sizeof(msg));
	memset(&cb, 0, sizeof(cb));
	iov.iov_base = &byte;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cb.buf;
	msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_len = CMSG_LEN(sizeof(int) * n);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * n);
	assert_int_equal(sendmsg(sock, &msg, 0), 1);
}

static void
test_recvmsg_fds(void **state)
{
	int sv[2], pp[2], fds[8], got[8], before, one = 1;
	size_t nfds;
	char buf[16];

	(void)state;
	mkpair(sv);
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);

	/* Bytes and one fd; the fd arrives close-on-exec. */
	assert_int_equal(ipc_sendmsg_fd(sv[0], "abc", 3, pp[0]), 3);
	assert_false(fd_closed(pp[0])); /* the low-level call keeps it */
	nfds = 99;
	assert_int_equal(
	    ipc_recvmsg_fds(sv[1], buf, sizeof(buf), got, &nfds, IPC_MAX_FDQ),
	    3);
	assert_memory_equal(buf, "abc", 3);
	assert_int_equal(nfds, 1);
	assert_true(fcntl(got[0], F_GETFD) & FD_CLOEXEC);
	close(got[0]);
	/* No fd. */
	assert_int_equal(ipc_sendmsg_fd(sv[0], "de", 2, -1), 2);
	assert_int_equal(
	    ipc_recvmsg_fds(sv[1], buf, sizeof(buf), got, &nfds, IPC_MAX_FDQ),
	    2);
	assert_int_equal(nfds, 0);

	for (int i = 0; i < 8; i++)
		assert_true((fds[i] = dup(pp[0])) >= 0);
	before = count_fds();
	/* 5 fds in one SCM_RIGHTS: more than the control buffer holds. */
	send_rights(sv[0], fds, 5);
	errno = 0;
	assert_int_equal(
	    ipc_recvmsg_fds(sv[1], buf, sizeof(buf), got, &nfds, IPC_MAX_FDQ),
	    -1);
	assert_int_equal(errno, EPROTO);
	assert_int_equal(nfds, 0);
	assert_int_equal(count_fds(), before);
	/* 5 fds, maxfds 2: the same. */
	send_rights(sv[0], fds, 5);
	errno = 0;
	assert_int_equal(
	    ipc_recvmsg_fds(sv[1], buf, sizeof(buf), got, &nfds, 2), -1);
	assert_int_equal(errno, EPROTO);
	assert_int_equal(count_fds(), before);
	/* 3 fds fit the buffer, but maxfds is 2. */
	send_rights(sv[0], fds, 3);
	errno = 0;
	assert_int_equal(
	    ipc_recvmsg_fds(sv[1], buf, sizeof(buf), got, &nfds, 2), -1);
	assert_int_equal(errno, EPROTO);
	assert_int_equal(count_fds(), before);
	/* Exactly maxfds is fine. */
	send_rights(sv[0], fds, 2);
	assert_int_equal(
	    ipc_recvmsg_fds(sv[1], buf, sizeof(buf), got, &nfds, 2), 1);
	assert_int_equal(nfds, 2);
	close(got[0]);
	close(got[1]);
	assert_int_equal(count_fds(), before);
	/* Control data other than SCM_RIGHTS is refused. */
	assert_int_equal(
	    setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
	assert_int_equal(ipc_sendmsg_fd(sv[0], "z", 1, -1), 1);
	errno = 0;
	assert_int_equal(
	    ipc_recvmsg_fds(sv[1], buf, sizeof(buf), got, &nfds, IPC_MAX_FDQ),
	    -1);
	assert_int_equal(errno, EPROTO);
	/* Nothing to read. */
	errno = 0;
	assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(
	    ipc_recvmsg_fds(sv[1], buf, sizeof(buf), got, &nfds, IPC_MAX_FDQ),
	    -1);
	assert_int_equal(errno, EAGAIN);

	for (int i = 0; i < 8; i++)
		close(fds[i]);
	close(pp[0]);
	assert_true(pipe_orphaned(pp[1]));
	close(pp[1]);
	close(sv[0]);
	close(sv[1]);
}

/* ---- freeing a conn from inside its own callbacks (run under ASan) ---- */

static void
test_free_in_handler(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	struct duo d;
	uint8_t f[128];
	size_t n = 0;
	int pp[2];

	/* Fed: three frames, the first handler frees the conn. */
	rec_init(&r);
	r.free_in_handler = 1;
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	n += MKF(f + n, MSG_STATUS, 0, 0, "{}");
	n += MKF(f + n, MSG_PEER_FD, 0, IPC_FLAG_FD, "{}");
	n += MKF(f + n, MSG_STATUS, 0, 0, "{}");
	assert_int_equal(ipc_conn_feed(c, f, n, &pp[0], 1), -1);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.nclose, 0);
	assert_null(r.self);
	assert_true(fd_closed(pp[0])); /* the queued fd went with it */
	close(pp[1]);

	/* Over a socket; the other end sees the hang-up. */
	duo_open(base, &d);
	d.b.mode = SERVE_SILENT;
	d.b.free_in_handler = 1;
	assert_int_equal(ipc_send(d.ca, MSG_STATUS, NULL, -1), 0);
	assert_int_equal(ipc_send(d.ca, MSG_STATUS, NULL, -1), 0);
	pump(base, &d.a.nclose, 1);
	assert_int_equal(d.b.n, 1);
	assert_null(d.b.self);
	assert_int_equal(d.b.nclose, 0);
	assert_int_equal(d.a.nclose, 1);
	duo_close(&d);
}

static void
test_free_in_close_cb(void **state)
{
	struct event_base *base = *state;
	struct ipc_conn *c;
	struct rec r;
	struct duo d;
	struct rep p;
	uint8_t f[64];
	size_t n;

	/* A framing violation whose close callback frees the conn. */
	rec_init(&r);
	r.free_in_close = 1;
	assert_non_null(
	    c = ipc_conn_new(base, -1, PROC_PARENT, tbl_rec, on_close, &r));
	r.self = c;
	memset(&p, 0, sizeof(p));
	assert_int_equal(ipc_request(c, MSG_STATUS, NULL, -1, MSG_STATUS_OK,
			     NULL, on_reply, &p),
	    0);
	n = MKF(f, MSG_STATUS, 0, 0x40, "{}");
	assert_int_equal(ipc_conn_feed(c, f, n, NULL, 0), -1);
	assert_int_equal(r.nclose, 1);
	assert_null(r.self);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.nnull, 1);

	/* Peer hang-up whose close callback frees the conn. */
	duo_open(base, &d);
	d.a.free_in_close = 1;
	memset(&p, 0, sizeof(p));
	assert_int_equal(ipc_request(d.ca, MSG_STATUS, NULL, -1, MSG_STATUS_OK,
			     NULL, on_reply, &p),
	    0);
	ipc_conn_free(d.cb);
	d.b.self = NULL;
	pump(base, &d.a.nclose, 1);
	assert_int_equal(d.a.nclose, 1);
	assert_null(d.a.self);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.nnull, 1);
	duo_close(&d);
}

static void
test_free_in_reply_and_timeout_cb(void **state)
{
	struct event_base *base = *state;
	struct timeval tv = {0, 20 * 1000};
	struct duo d;
	struct rep p1, p2, p3;

	/* A reply callback frees the conn; the other request fails once. */
	duo_open(base, &d);
	memset(&p1, 0, sizeof(p1));
	memset(&p2, 0, sizeof(p2));
	p1.freeme = d.ca;
	assert_int_equal(ipc_request(d.ca, MSG_STATUS, NULL, -1, MSG_STATUS_OK,
			     NULL, on_reply, &p1),
	    0);
	assert_int_equal(ipc_request(d.ca, MSG_STATUS, NULL, -1, MSG_STATUS_OK,
			     &tv, on_reply, &p2),
	    0);
	pump(base, &p2.n, 1);
	d.a.self = NULL;
	assert_int_equal(p1.n, 1);
	assert_int_equal(p1.nnull, 0);
	assert_int_equal(p2.n, 1);
	assert_int_equal(p2.nnull, 1);
	assert_int_equal(d.a.nclose, 0);
	spin(base, 40);
	assert_int_equal(p2.n, 1);
	duo_close(&d);

	/* A timeout callback frees the conn. */
	duo_open(base, &d);
	d.b.mode = SERVE_SILENT;
	memset(&p1, 0, sizeof(p1));
	memset(&p3, 0, sizeof(p3));
	p1.freeme = d.ca;
	assert_int_equal(ipc_request(d.ca, MSG_STATUS, NULL, -1, MSG_STATUS_OK,
			     &tv, on_reply, &p1),
	    0);
	assert_int_equal(ipc_request(d.ca, MSG_STATUS, NULL, -1, MSG_STATUS_OK,
			     NULL, on_reply, &p3),
	    0);
	pump(base, &p1.n, 1);
	d.a.self = NULL;
	assert_int_equal(p1.nnull, 1);
	assert_int_equal(p3.n, 1);
	assert_int_equal(p3.nnull, 1);
	pump(base, &d.b.nclose, 1);
	assert_int_equal(d.b.nclose, 1);
	duo_close(&d);

	/* A pending callback failed by a cut frees the conn. */
	duo_open(base, &d);
	d.b.mode = SERVE_WRONG;
	memset(&p1, 0, sizeof(p1));
	p1.freeme = d.ca;
	assert_int_equal(ipc_request(d.ca, MSG_STATUS, NULL, -1, MSG_STATUS_OK,
			     NULL, on_reply, &p1),
	    0);
	pump(base, &p1.n, 1);
	d.a.self = NULL;
	assert_int_equal(p1.nnull, 1);
	assert_int_equal(d.a.nclose, 0); /* freed before the close cb */
	duo_close(&d);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_hdr_roundtrip),
	    T(test_hdr_truncated_need_more),
	    T(test_hdr_len_bound_SU3),
	    T(test_hdr_reserved_and_flags_SU3),
	    T(test_payload_table),
	    T(test_payload_values),
	    T(test_payload_depth_refused),
	    T(test_reply_modes_SU3),
	    T(test_reply_bad_payload_cuts_SU3),
	    T(test_request_timeout_late_reply),
	    T(test_unread_answers_stop_reading),
	    T(test_refused_frame_not_parsed_SU3),
	    T(test_proc_blame_SU3),
	    T(test_reply_never_asked_cuts_SU3),
	    T(test_free_with_pending),
	    T(test_split_reads),
	    T(test_coalesced_frames),
	    T(test_dispatch_table_SU3),
	    T(test_dispatch_shape_SU3),
	    T(test_dispatch_once_SU3),
	    T(test_dispatch_config_fatal_SU3),
	    T(test_dispatch_fd_required_absent_SU3),
	    T(test_dispatch_fd_unwanted_closed_SU3),
	    T(test_fd_bound_to_first_byte_SU3),
	    T(test_bad_framing_cuts_SU3),
	    T(test_fd_passing),
	    T(test_fd_announced_missing_SU3),
	    T(test_fd_unannounced_cuts_SU3),
	    T(test_fd_queue_bound),
	    T(test_send_fd_ownership),
	    T(test_send_fd_burst),
	    T(test_recvmsg_fds),
	    T(test_free_in_handler),
	    T(test_free_in_close_cb),
	    T(test_free_in_reply_and_timeout_cb),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
