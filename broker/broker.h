/*
 * The map of cordon-broker: the daemon state, the HTTP front's helpers
 * (responses, bodies, asking a daemon on a request's behalf) and every
 * API handler.  front.c holds the perimeter and the route table; each
 * api_*.c file holds one area's handlers.
 */
#ifndef CORDON_BROKER_H
#define CORDON_BROKER_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "ipc.h"
#include "msg.h"

struct evhttp;
struct evbuffer;
struct evhttp_request;
struct evconnlistener;
struct event;
struct event_base;
struct json_object;
struct json_shape;

#define BROKER_MAX_BODY	   (1024 * 1024) /* PER-8 */
#define BROKER_MAX_HEADERS (16 * 1024)	 /* PER-8 */
#define BROKER_TIMEOUT_S   10		 /* per-request I/O */
#define BROKER_REQUEST_S   10		 /* PER-8: a whole request */
#define BROKER_NOFILE	   256		 /* bounds connections */
/*
 * PER-8: connections that have not yet carried the token or a session
 * (every connection, until its first request) share a small budget of
 * their own, in count and in time, so the operator always finds room.
 */
#define BROKER_ANON_MAX 32
#define BROKER_ANON_S	3
/*
 * PER-8: connections held at once, whoever proved what, below
 * BROKER_NOFILE by what the broker's own descriptors take (its channels,
 * the listener, stdio), so accept(2) never meets RLIMIT_NOFILE: at the
 * bound a new connection sheds the oldest idle one.
 */
#define BROKER_CONNS_MAX (BROKER_NOFILE - 32)
/*
 * PER-8: requests that wait long for their answer (a job's wait, an
 * action, a mission run) at once, a fraction of BROKER_CONNS_MAX: they
 * cannot be shed, so past it the answer is 429 busy and the rest of the
 * connections stay for everyone else.
 */
#define BROKER_WAITS_MAX    64
#define BROKER_MAX_SESSIONS MSG_SESSIONS_MAX
/*
 * A dashboard session lasts 12 h at most: the cookie goes to every port
 * of 127.0.0.1 (threat-model.md), so a copy must not last for ever.
 */
#define BROKER_SESSION_TTL_S (12 * 3600)
#define TOKEN_HEX	     64
#define SESSION_HEX	     SESSION_ID_HEX
#define NONCE_HEX	     32
#define PAGE_KEY_HEX	     SESSION_PAGE_HEX

/*
 * PER-5: a dashboard session.  cordond keeps a copy of each (it hands
 * them to the broker it restarts), so a broker restart signs nobody out.
 */
struct broker_session {
	char bs_id[SESSION_HEX + 1];
	char bs_page[PAGE_KEY_HEX + 1]; /* its page key: login.c */
	uint64_t bs_created; /* CLOCK_MONOTONIC ms, the same in cordond */
};

struct broker {
	struct daemon b_d;
	struct evhttp *b_http;
	struct evconnlistener *b_listener;
	struct event *b_relisten;
	char b_token[TOKEN_HEX + 1];
	char b_login[33];  /* one-time login code, "" once spent */
	char b_minted[33]; /* one from POST /api/login-code, "" once spent */
	uint64_t b_minted_until; /* monotonic ms it expires */
	unsigned int b_port;
	char b_listen[64];
	char *b_origins[8];
	size_t b_norigins;
	struct broker_session b_sessions[BROKER_MAX_SESSIONS];
};

extern struct broker broker;

/* The data channel to a daemon, or NULL while it is down. */
struct ipc_conn *broker_peer(enum proc_id);

/* ---- conns.c: PER-8, a whole request within BROKER_REQUEST_S ---- */

void conns_init(struct evhttp *, struct event_base *);
/* The request carried the token or a valid session: its connection
 * leaves the budget of those that proved nothing (BROKER_ANON_*). */
void conns_proven(struct evhttp_request *);
/* A request reached the router: no deadline until it is answered.
 * -1 if its head held a NUL that evhttp cut a value at: refuse it. */
int conns_request(struct evhttp_request *);

/* ---- front.c: responses and request plumbing ---- */

void http_request_cb(struct evhttp_request *, void *);
void send_json(struct evhttp_request *, int status, struct json_object *);
/* The same with a body already serialised into b (NULL: empty), which
 * the caller still owns. */
void send_json_buf(struct evhttp_request *, int status, struct evbuffer *);
/* PER-6 headers every answer carries; csp is the page's policy.
 * send_json and send_error set them; a streamed answer calls this. */
#define CSP_NONE "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"
void set_common_headers(struct evhttp_request *, const char *csp);
/* PER-9: {"ok":false,"error":"<code>"}, code from a fixed set. */
void send_error(struct evhttp_request *, int status, const char *code);
/* The same as a whole HTTP/1.1 answer, for a request evhttp refused
 * itself (conns.c): 413 too-large, else bad-request; then close. */
void raw_error(struct evbuffer *, int status);
/* 303 to a path of ours. */
void send_redirect(struct evhttp_request *, const char *to);
/* The compiled-in dashboard file at path, answered with status. */
void serve_asset_status(struct evhttp_request *, const char *path, int status);

/*
 * PER-8: a route's body, declared in its row of front.c's route table
 * and checked there, once, before the handler runs: a strict JSON
 * object (json_parse_object) whose keys fit ab_shape (every required
 * key there, no leftover; else ab_bad), then each key present, in the
 * shape's order, of its type and within its bounds and, for a string
 * with a pattern no shape expresses, accepted by bk_ok (else that key's
 * bk_bad).  An empty body stands for {} when ab_empty_ok.  A route
 * without a declared body never has its body looked at.
 */
struct api_body_key {
	const char *bk_bad; /* the code of a value that misfits */
	int (*bk_ok)(const char *, size_t); /* a string's pattern, or NULL */
};
struct api_body {
	const struct json_shape *ab_shape;
	const struct api_body_key *ab_keys; /* one per row of ab_shape */
	size_t ab_n;
	const char *ab_bad; /* the code of a body that is not such an object */
	int ab_empty_ok;
};
/* A body that takes no input: empty, or {}. */
extern const struct api_body api_body_none;

/*
 * Path parameters of a route pattern ("/api/agents/{}/run"): raw,
 * undecoded segments, each 1..128 bytes of [A-Za-z0-9._~%-].
 */
#define API_MAX_PARAMS 4
#define API_PARAM_MAX  128
struct api_params {
	const char *ap_val[API_MAX_PARAMS];
	size_t ap_len[API_MAX_PARAMS];
	size_t ap_n;
	/* The route's declared body: checked (NULL when absent or empty),
	 * or the code it was refused with; see api_body_ok. */
	struct json_object *ap_body;
	const char *ap_body_bad;
};
/*
 * The verdict on the request's body, answered where the handler's own
 * checks put it (a path parameter may be refused before the body, or
 * after: which is the route's, and observable): 0 with p->ap_body the
 * checked object, which front.c puts once the handler returns, or -1
 * after answering 400 with the declared code.
 */
int api_body_ok(struct evhttp_request *, const struct api_params *);

/*
 * Ask a daemon on behalf of an HTTP request, with an optional payload.
 * cb gets an opaque handle as its argument and calls api_release() on it
 * first: that returns the request, or NULL if the client went away.  No
 * answer within 3 s gives cb a NULL reply; no channel answers 503 here.
 */
void api_ask(struct evhttp_request *, struct ipc_conn *to, uint32_t type,
    struct json_object *payload, uint32_t reply_type, ipc_reply_fn cb);
/* The same with a longer wait (actions run up to 60 s). */
void api_ask_wait(struct evhttp_request *, struct ipc_conn *to, uint32_t type,
    struct json_object *payload, uint32_t reply_type, int seconds,
    ipc_reply_fn cb);
struct evhttp_request *api_release(void *handle);

/*
 * api_answer.c: the routes that relay a daemon's answer (jobs,
 * worktrees, missions, approvals).  api_path_id:
 * the path's one id, URL-decoded once, into {key: id}; NULL (after 400
 * bad) unless it matches ^[A-Za-z0-9_-]{1,80}$.  api_answer: the
 * daemon's answer of type as {ok: true} plus those of keys it has, of
 * their type; else api_fail: its refusal as map says (am_as, or the code
 * itself), any other 500 internal, no answer 503 unavailable.
 */
struct api_code_map {
	const char *am_code;
	int am_status;
	const char *am_as; /* NULL: the code as it is */
};
struct json_object *api_path_id(struct evhttp_request *,
    const struct api_params *, const char *key, const char *bad);
void api_answer(struct evhttp_request *, const struct ipc_msg *, uint32_t type,
    const struct json_shape *keys, size_t n, const struct api_code_map *map,
    size_t nmap);
void api_fail(struct evhttp_request *, const struct ipc_msg *,
    const struct api_code_map *map, size_t nmap);
/* api_answer to the request behind an api_ask handle, if still there:
 * the whole of a reply callback that has nothing of its own to do. */
void api_relay(void *handle, const struct ipc_msg *m, uint32_t type,
    const struct json_shape *keys, size_t n, const struct api_code_map *map,
    size_t nmap);
/* The handle alone, for a handler that gathers several answers itself:
 * NULL when out of memory.  Released with api_release(). */
void *api_hold(struct evhttp_request *);

/* The route pattern a request matched ("/api/agents/{}/run"), "/ui",
 * "/ui/login", "/", or "other": what http.request records name. */
const char *front_route_of(struct evhttp_request *);

/* reqlog.c: http.request audit records (PER-10).  Every answer goes
 * through send_json/send_error/redirects/assets, which call reqlog_end;
 * a streamed answer calls reqlog_end itself once it has ended. */
void reqlog_start(const struct evhttp_request *);
void reqlog_end(struct evhttp_request *, int status, size_t bytes_out);
void reqlog_gone(struct evhttp_request *); /* frees a detached req */
/* A request evhttp's parser refused itself (conns.c): OTHER, "other". */
void reqlog_refused(int status, size_t bytes_out);

/* ---- handlers (method and pattern in front.c's route table) ---- */

typedef void (*api_fn)(struct evhttp_request *, const struct api_params *);

void api_health(struct evhttp_request *, const struct api_params *);

/* login.c: the one-time login code (PER-5), minted and spent. */
void api_login_code(struct evhttp_request *, const struct api_params *);
struct evhttp_uri;
void serve_login(struct evhttp_request *, const struct evhttp_uri *);

/* api_agents.c: API-2 ... API-5 */
void api_agents_list(struct evhttp_request *, const struct api_params *);
void api_agent_get(struct evhttp_request *, const struct api_params *);
void api_agent_run(struct evhttp_request *, const struct api_params *);
void api_run_cancel(struct evhttp_request *, const struct api_params *);
void api_agent_action(struct evhttp_request *, const struct api_params *);
/* API-3's body: {prompt, session?, via?, worktree?}. */
extern const struct api_body agents_run_body;
/*
 * That body, for agent p[0], as the spawner's MSG_RUN_START /
 * MSG_JOB_START payload: 0, or -1 after answering.  agents_fail answers
 * a spawner's refusal (or none).
 */
int agents_run_payload(struct evhttp_request *, const struct api_params *,
    struct json_object **out);
void agents_fail(struct evhttp_request *, const struct ipc_msg *);
/* Sends (and puts) that payload; answered once the run is admitted. */
void agents_ask_start(struct evhttp_request *, struct json_object *,
    uint32_t type, uint32_t reply_type, ipc_reply_fn cb);
/* MSG_RUN_EVENT frames from the spawner (peer dispatch table). */
void agents_run_event_h(struct ipc_conn *, struct ipc_msg *, void *);

/* api_vault.c: API-6 */
void api_vault_notes(struct evhttp_request *, const struct api_params *);
void api_vault_note(struct evhttp_request *, const struct api_params *);

/* api_audit.c: API-8 */
void api_audit(struct evhttp_request *, const struct api_params *);
/* A query value: a decimal integer of 1..16 digits within [min, max],
 * else -1. */
int api_query_int(const char *s, long long min, long long max, long long *out);
/*
 * Walk a raw query: every part NAME=VALUE, NAME one of names[0..n) (n at
 * most 32) and at most once, VALUE %-decoded with no embedded NUL; fn
 * gets NAME's index and VALUE.  0, or -1 when a part is not so or fn
 * refuses it (-1).
 */
int api_query_each(const char *query, const char *const *names, size_t n,
    int (*fn)(size_t i, const char *val, size_t len, void *arg), void *arg);

/* api_approvals.c: SBX-7; a decision's body is {decision}. */
extern const struct api_body approvals_body;
void api_approvals_list(struct evhttp_request *, const struct api_params *);
void api_approval_decide(struct evhttp_request *, const struct api_params *);

/* api_missions.c: API-7; a run's body is {} or {options}. */
extern const struct api_body missions_body;
void api_missions_list(struct evhttp_request *, const struct api_params *);
void api_mission_run(struct evhttp_request *, const struct api_params *);

/* api_jobs.c: detached jobs (MC-3) */
void api_agent_job(struct evhttp_request *, const struct api_params *);
void api_jobs_list(struct evhttp_request *, const struct api_params *);
void api_job_get(struct evhttp_request *, const struct api_params *);
void api_job_events(struct evhttp_request *, const struct api_params *);
void api_job_wait(struct evhttp_request *, const struct api_params *);
void api_job_cancel(struct evhttp_request *, const struct api_params *);

/* api_worktrees.c: worktree runs (MC-2) */
void api_worktrees_list(struct evhttp_request *, const struct api_params *);
void api_worktree_remove(struct evhttp_request *, const struct api_params *);

#endif
