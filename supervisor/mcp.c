/*
 * cordon-mcp (MC-1): `cordon mcp` as a program of its own.  Reads
 * JSON-RPC frames from stdin, one per line, answers on stdout, logs on
 * stderr; speaks to the running cordon only through its HTTP API with
 * the operator's token (endpoint.c), so it holds no power the API does
 * not give and links no daemon's code.  Reads the token and port files.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "config.h"
#include "log.h"
#include "mcp.h"

#define MCP_READ_CHUNK 65536

/* The revisions this server speaks, newest first. */
static const char *const mcp_versions[] = {
    "2025-06-18", "2025-03-26", "2024-11-05", NULL};

int
mcp_send(struct mcp *m, struct json_object *msg)
{
	struct pollfd pfd = {STDOUT_FILENO, POLLOUT, 0};
	const char *s;
	size_t len, off = 0;
	ssize_t n;

	if (m->m_done)
		return -1;
	s = json_object_to_json_string_ext(
	    msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	len = strlen(s);
	/* Blocking writes: a caller that stops reading holds back the
	 * runs it asked for, through the API's own flow control. */
	while (off <= len) {
		n = off < len ? write(STDOUT_FILENO, s + off, len - off)
			      : write(STDOUT_FILENO, "\n", 1);
		if (n == -1 && errno == EINTR)
			continue;
		/* stdout may share stdin's socket, made non-blocking. */
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		    poll(&pfd, 1, -1) >= 0)
			continue;
		if (n <= 0) {
			m->m_done = 1;
			event_base_loopexit(m->m_base, NULL);
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

static struct json_object *
msg_new(struct json_object *id)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(o, "id", json_object_get(id));
	return o;
}

void
mcp_result(struct mcp *m, struct json_object *id, struct json_object *res)
{
	struct json_object *o = msg_new(id);

	json_object_object_add(o, "result", res);
	mcp_send(m, o);
	json_object_put(o);
}

void
mcp_error(struct mcp *m, struct json_object *id, int err, const char *msg,
    const char *code)
{
	struct json_object *o = msg_new(id), *e, *d;

	e = json_object_new_object();
	json_object_object_add(e, "code", json_object_new_int(err));
	json_object_object_add(e, "message", json_object_new_string(msg));
	if (code != NULL) {
		d = json_object_new_object();
		json_object_object_add(
		    d, "error", json_object_new_string(code));
		json_object_object_add(e, "data", d);
	}
	json_object_object_add(o, "error", e);
	mcp_send(m, o);
	json_object_put(o);
}

/* initialize: the client's revision if this server speaks it, else its
 * newest (the client then decides).  Other members are the client's. */
static void
do_initialize(struct mcp *m, struct json_object *id, struct json_object *p)
{
	struct json_object *res, *caps, *v;
	const char *want = NULL, *ver = mcp_versions[0];
	size_t i;

	if (p == NULL || !json_object_object_get_ex(p, "protocolVersion", &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) > 32) {
		mcp_error(
		    m, id, MCP_EPARAMS, "Invalid params", "invalid-params");
		return;
	}
	want = json_object_get_string(v);
	for (i = 0; mcp_versions[i] != NULL; i++)
		if (strcmp(mcp_versions[i], want) == 0)
			ver = mcp_versions[i];
	res = json_object_new_object();
	json_object_object_add(
	    res, "protocolVersion", json_object_new_string(ver));
	caps = json_object_new_object();
	v = json_object_new_object();
	json_object_object_add(v, "listChanged", json_object_new_boolean(0));
	json_object_object_add(caps, "tools", v);
	json_object_object_add(res, "capabilities", caps);
	v = json_object_new_object();
	json_object_object_add(v, "name", json_object_new_string("cordon"));
	json_object_object_add(
	    v, "version", json_object_new_string(CORDON_VERSION));
	json_object_object_add(res, "serverInfo", v);
	json_object_object_add(res, "instructions",
	    json_object_new_string(
		"Runs the operator's agents under cordon's sandbox and audit: "
		"list_agents shows which are ready, run_agent runs one on a "
		"prompt and returns its answer and tool events."));
	mcp_result(m, id, res);
}

static void
do_ping(struct mcp *m, struct json_object *id, struct json_object *p)
{
	(void)p;
	mcp_result(m, id, json_object_new_object());
}

static void
do_tools_list(struct mcp *m, struct json_object *id, struct json_object *p)
{
	struct json_object *res;

	/* One page: a cursor, or anything else, is not expected. */
	if (p != NULL && json_object_object_length(p) != 0 &&
	    !(json_object_object_length(p) == 1 &&
		json_object_object_get_ex(p, "_meta", NULL))) {
		mcp_error(
		    m, id, MCP_EPARAMS, "Invalid params", "invalid-params");
		return;
	}
	res = json_object_new_object();
	json_object_object_add(res, "tools", mcp_tools_list());
	mcp_result(m, id, res);
}

static void
do_tools_call(struct mcp *m, struct json_object *id, struct json_object *p)
{
	mcp_tools_call(m, id, p);
}

static void
do_cancelled(struct mcp *m, struct json_object *id, struct json_object *p)
{
	struct json_object *rid;

	(void)id;
	if (p != NULL && json_object_object_get_ex(p, "requestId", &rid))
		mcp_tools_cancel(m, rid);
}

static void
do_nothing(struct mcp *m, struct json_object *id, struct json_object *p)
{
	(void)m;
	(void)id;
	(void)p;
}

/* The methods, as data: what is not here is -32601 (requests) or
 * ignored (notifications, as JSON-RPC requires). */
static const struct mcp_method {
	const char *mm_name;
	int mm_request; /* 1 request, 0 notification */
	void (*mm_fn)(struct mcp *, struct json_object *, struct json_object *);
} mcp_methods[] = {
    {"initialize", 1, do_initialize},
    {"ping", 1, do_ping},
    {"tools/list", 1, do_tools_list},
    {"tools/call", 1, do_tools_call},
    {"notifications/initialized", 0, do_nothing},
    {"notifications/cancelled", 0, do_cancelled},
};

static void
mcp_frame(struct mcp *m, const char *line, size_t len)
{
	struct mcp_frame f;
	size_t i;
	int rc;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len == 0)
		return;
	if ((rc = mcp_frame_parse(line, len, &f)) != 0) {
		mcp_error(m, NULL, rc,
		    rc == MCP_EPARSE ? "Parse error" : "Invalid Request",
		    rc == MCP_EPARSE ? "parse-error" : "invalid-request");
		return;
	}
	if (f.f_kind == MF_RESPONSE) { /* this server asks nothing */
		mcp_frame_free(&f);
		return;
	}
	for (i = 0; i < sizeof(mcp_methods) / sizeof(mcp_methods[0]); i++)
		if (strcmp(mcp_methods[i].mm_name, f.f_method) == 0 &&
		    mcp_methods[i].mm_request == (f.f_kind == MF_REQUEST))
			break;
	if (i < sizeof(mcp_methods) / sizeof(mcp_methods[0]))
		mcp_methods[i].mm_fn(m, f.f_id, f.f_params);
	else if (f.f_kind == MF_REQUEST)
		mcp_error(m, f.f_id, MCP_EMETHOD, "Method not found",
		    "unknown-method");
	mcp_frame_free(&f);
}

/* Whole lines out of the input; an oversized one is refused once and
 * the rest of it dropped up to its newline. */
static void
mcp_lines(struct mcp *m)
{
	struct evbuffer_ptr p;
	size_t len;
	char *line;

	while (!m->m_done) {
		p = evbuffer_search_eol(m->m_in, NULL, NULL, EVBUFFER_EOL_LF);
		if (p.pos == -1) {
			len = evbuffer_get_length(m->m_in);
			if (len > MCP_FRAME_MAX) {
				if (!m->m_skip)
					mcp_error(m, NULL, MCP_EREQUEST,
					    "Invalid Request",
					    "frame-too-large");
				m->m_skip = 1;
				evbuffer_drain(m->m_in, len);
			}
			return;
		}
		len = (size_t)p.pos;
		if (m->m_skip || len > MCP_FRAME_MAX) {
			if (!m->m_skip)
				mcp_error(m, NULL, MCP_EREQUEST,
				    "Invalid Request", "frame-too-large");
			m->m_skip = 0;
			evbuffer_drain(m->m_in, len + 1);
			continue;
		}
		line = (char *)evbuffer_pullup(m->m_in, (ssize_t)len + 1);
		mcp_frame(m, line, len);
		evbuffer_drain(m->m_in, len + 1);
	}
}

static void
mcp_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct mcp *m = arg;
	int n;

	(void)ev;
	n = evbuffer_read(m->m_in, fd, MCP_READ_CHUNK);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		mcp_lines(m);
		return;
	}
	/* The caller is gone: nothing it asked for outlives it. */
	m->m_done = 1;
	mcp_tools_cancel_all(m);
	event_base_loopexit(m->m_base, NULL);
}

int
main(int argc, char **argv)
{
	static struct mcp m;
	struct endpoint ep;
	int fl;

	log_init("cordon-mcp", 0);
	/* Bad options end it now; a cordon not running yet does not. */
	if (endpoint_args("mcp", argc, argv, NULL, &ep) == 2) {
		fprintf(stderr, "usage: cordon mcp [--home DIR | "
				"--port N --token-file FILE]\n");
		return 2;
	}
	explicit_bzero(&ep, sizeof(ep));
	m.m_argc = argc;
	m.m_argv = argv;
	signal(SIGPIPE, SIG_IGN);
	TAILQ_INIT(&m.m_calls);
	if ((fl = fcntl(STDIN_FILENO, F_GETFL)) == -1 ||
	    fcntl(STDIN_FILENO, F_SETFL, fl | O_NONBLOCK) == -1 ||
	    (m.m_base = event_base_new()) == NULL ||
	    (m.m_in = evbuffer_new()) == NULL ||
	    (m.m_ev_in = event_new(m.m_base, STDIN_FILENO, EV_READ | EV_PERSIST,
		 mcp_read_cb, &m)) == NULL ||
	    event_add(m.m_ev_in, NULL) == -1) {
		fprintf(stderr, "cordon: mcp: stdin must be a pipe or a "
				"socket\n");
		return 1;
	}
	event_base_dispatch(m.m_base);
	mcp_tools_cancel_all(&m);
	event_free(m.m_ev_in);
	/* Connections of calls that ended are freed by a pending event. */
	event_base_loop(m.m_base, EVLOOP_NONBLOCK);
	evbuffer_free(m.m_in);
	event_base_free(m.m_base);
	return 0;
}
