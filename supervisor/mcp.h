/*
 * cordon-mcp: `cordon mcp`, an MCP server on stdio (JSON-RPC 2.0, one
 * message per line) that is a client of a running cordon's HTTP API
 * with the operator's token (MC-1).  It links no daemon's code and has
 * no power the API does not give.  The map of mcp*.c.
 */
#ifndef CORDON_SUPERVISOR_MCP_H
#define CORDON_SUPERVISOR_MCP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "endpoint.h"

/* A frame: one line of at most this many bytes (a largest prompt,
 * escaped, fits). */
#define MCP_FRAME_MAX  (2 * 1024 * 1024)
#define MCP_ID_MAX     128 /* bytes of a string request id */
#define MCP_ID_INT_MAX ((INT64_C(1) << 53) - 1) /* of an integer one */
#define MCP_CALLS_MAX  8 /* tool calls in flight at once */

/* JSON-RPC 2.0 error codes */
#define MCP_EPARSE    (-32700)
#define MCP_EREQUEST  (-32600)
#define MCP_EMETHOD   (-32601)
#define MCP_EPARAMS   (-32602)
#define MCP_EINTERNAL (-32603)

struct json_object;
struct event_base;
struct evhttp_connection;
struct evhttp_request;
struct evbuffer;

/* ---- mcp_frame.c: one line of input, checked (pure but for json-c) */
enum mcp_kind { MF_REQUEST, MF_NOTIFY, MF_RESPONSE };

struct mcp_frame {
	enum mcp_kind f_kind;
	const char *f_method;	      /* requests and notifications */
	struct json_object *f_id;     /* requests and responses; borrowed */
	struct json_object *f_params; /* an object, or NULL; borrowed */
	struct json_object *f_obj;    /* the whole message; owned */
};

/*
 * Parse one frame (without its newline): a JSON-RPC 2.0 request,
 * notification or response, no other member, an id that is an integer
 * within +-MCP_ID_INT_MAX or a string of 1..MCP_ID_MAX bytes, params an
 * object.  0, or MCP_EPARSE / MCP_EREQUEST (f->f_obj NULL: the reply's
 * id is null).
 */
int mcp_frame_parse(const char *buf, size_t len, struct mcp_frame *f);
void mcp_frame_free(struct mcp_frame *f);

/* ---- mcp.c: the server */
struct mcp_call;

struct mcp {
	struct event_base *m_base;
	int m_argc;    /* the endpoint options, resolved again per call: */
	char **m_argv; /* a restarted cordon has a new token */
	struct evbuffer *m_in;
	struct event *m_ev_in;
	int m_skip; /* dropping the rest of an oversized frame */
	int m_done; /* stdin closed or stdout broken */
	TAILQ_HEAD(, mcp_call) m_calls;
	size_t m_ncalls;
};

/* Write one message as one line on stdout; -1 if stdout is gone. */
int mcp_send(struct mcp *, struct json_object *msg);
/* Answer request id with result (consumed). */
void mcp_result(struct mcp *, struct json_object *id, struct json_object *res);
/* Answer request id with an error: a fixed message and, when code is
 * not NULL, data {"error": code} from a fixed set. */
void mcp_error(struct mcp *, struct json_object *id, int err, const char *msg,
    const char *code);

/* ---- mcp_tools.c: the tools and their schemas */
enum mcp_tool_id {
	TOOL_LIST_AGENTS,
	TOOL_RUN_AGENT,
	TOOL_START_JOB,
	TOOL_JOB_STATUS,
	TOOL_JOB_EVENTS,
	TOOL_WAIT_JOB,
	TOOL_CANCEL_JOB,
	TOOL_LIST_JOBS,
};

struct json_object *mcp_tools_list(void);
/* tools/call: answered now (bad params) or when the API call ends. */
void mcp_tools_call(
    struct mcp *, struct json_object *id, struct json_object *params);

/* ---- mcp_call.c: the calls in flight, on the HTTP API */
#define MCP_ERRBODY_MAX (64 * 1024) /* bytes of a refusal's body kept */

struct mcp_call {
	TAILQ_ENTRY(mcp_call) c_entry;
	struct mcp *c_mcp;
	enum mcp_tool_id c_tool;
	struct json_object *c_id;	/* the request's id */
	struct json_object *c_progress; /* its progressToken, or NULL */
	struct evhttp_connection *c_conn;
	struct evbuffer *c_in; /* body bytes not yet a whole line */
	int64_t c_nprogress;
	/* run_agent: what the stream said */
	struct evbuffer *c_text;
	struct json_object *c_tools, *c_end, *c_err, *c_saved, *c_usage;
	char c_run_id[40];
	int c_text_cut, c_tools_cut;
};

/*
 * A checked call of tool with args (NULL: none) and the caller's
 * progressToken tok (NULL: none) started on the API; answered now
 * when it cannot start.
 */
void mcp_call_begin(struct mcp *, struct json_object *id, enum mcp_tool_id,
    struct json_object *args, struct json_object *tok);
/* notifications/cancelled: that call ends unanswered; its HTTP
 * request is dropped, which cancels its run (API-3). */
void mcp_tools_cancel(struct mcp *, struct json_object *id);
/* Every call in flight, as above (stdin closed). */
void mcp_tools_cancel_all(struct mcp *);

/* ---- mcp_result.c: what the API's answers become */
/* A tool's own failure: a result with isError and {error: code}. */
struct json_object *mcp_tool_error(const char *code, const char *text);
/* run_agent: the whole NDJSON lines of c_in so far, each an event. */
void mcp_run_lines(struct mcp_call *);
/* The call's API answer, status 0 for none: its result sent. */
void mcp_call_answer(struct mcp_call *, int status);

#endif
