/*
 * The broker's HTTP front: the perimeter every request passes (PER-2 ...
 * PER-5, PER-7, PER-8), responses (PER-6 headers, PER-9 error bodies),
 * the compiled-in dashboard, and the route table that hands API requests
 * to the api_*.c handlers (the one-time login: login.c).  Touches no
 * file.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <json-c/json.h>

#include "broker.h"
#include "charset.h"
#include "http.h"
#include "json.h"
#include "log.h"
#include "msg.h"
#include "util.h"
#include "web_assets.h"

/* ---- responses ---- */

/* Headers on every response beside its Content-Security-Policy (PER-6). */
static const char *const common_headers[][2] = {
    {"Cache-Control", "no-store"},
    {"X-Content-Type-Options", "nosniff"},
    {"Referrer-Policy", "same-origin"},
    {"Cross-Origin-Opener-Policy", "same-origin"},
    {"Cross-Origin-Resource-Policy", "same-origin"},
    {"X-Frame-Options", "DENY"},
};

/* Headers on every response; csp is the page's policy (PER-6). */
void
set_common_headers(struct evhttp_request *req, const char *csp)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	size_t i;

	evhttp_add_header(h, "Content-Security-Policy", csp);
	for (i = 0; i < nitems(common_headers); i++)
		evhttp_add_header(
		    h, common_headers[i][0], common_headers[i][1]);
}

/*
 * The whole answer to a request libevent's own parser refused (conns.c):
 * the fixed JSON error (PER-9) and the headers every answer carries,
 * then the connection closes.  413 is "too-large", anything else
 * "bad-request".
 */
void
raw_error(struct evbuffer *out, int status)
{
	const char *code = status == 413 ? "too-large" : "bad-request";
	const char *reason = status == 413   ? "Payload Too Large"
			     : status == 400 ? "Bad Request"
					     : "Error";
	char body[64];
	size_t i;
	int n;

	n = snprintf(
	    body, sizeof(body), "{\"ok\":false,\"error\":\"%s\"}", code);
	evbuffer_add_printf(out,
	    "HTTP/1.1 %d %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: %d\r\n"
	    "Connection: close\r\n"
	    "Content-Security-Policy: %s\r\n",
	    status, reason, n, CSP_NONE);
	for (i = 0; i < nitems(common_headers); i++)
		evbuffer_add_printf(out, "%s: %s\r\n", common_headers[i][0],
		    common_headers[i][1]);
	evbuffer_add_printf(out, "\r\n%s", body);
}

enum auth_by { AUTH_NONE, AUTH_BEARER, AUTH_COOKIE };
static enum auth_by authenticate(struct evhttp_request *);

void
send_json(struct evhttp_request *req, int status, struct json_object *o)
{
	struct evbuffer *b = evbuffer_new();
	const char *s;
	size_t len;

	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	if (b != NULL && s != NULL)
		evbuffer_add(b, s, len);
	send_json_buf(req, status, b);
	if (b != NULL)
		evbuffer_free(b);
}

void
send_json_buf(struct evhttp_request *req, int status, struct evbuffer *b)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);

	set_common_headers(req, CSP_NONE);
	evhttp_add_header(h, "Content-Type", "application/json");
	/*
	 * evhttp frames no body on an answer to CONNECT (it expects a
	 * tunnel): state the length ourselves and close afterwards.
	 */
	if (evhttp_request_get_command(req) == EVHTTP_REQ_CONNECT) {
		char cl[32];

		snprintf(cl, sizeof(cl), "%zu", b ? evbuffer_get_length(b) : 0);
		evhttp_add_header(h, "Content-Length", cl);
		evhttp_add_header(h, "Connection", "close");
	}
	/*
	 * A refusal to a client that proved nothing ends its connection:
	 * without the token nobody keeps connections open with cheap 404s
	 * until the broker has no descriptor left for the operator.
	 */
	if (status >= 400 && authenticate(req) == AUTH_NONE &&
	    evhttp_find_header(h, "Connection") == NULL)
		evhttp_add_header(h, "Connection", "close");
	reqlog_end(req, status, b ? evbuffer_get_length(b) : 0);
	evhttp_send_reply(req, status, NULL, b);
}

/* PER-9: {"ok":false,"error":"<code>"} with a code from a fixed set. */
void
send_error(struct evhttp_request *req, int status, const char *code)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(code));
	send_json(req, status, o);
	json_object_put(o);
}

void
send_redirect(struct evhttp_request *req, const char *to)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);

	set_common_headers(req, CSP_NONE);
	evhttp_add_header(h, "Location", to);
	evhttp_add_header(h, "Content-Type", "text/plain; charset=utf-8");
	reqlog_end(req, 303, 0);
	evhttp_send_reply(req, 303, NULL, NULL);
}

/* ---- perimeter ---- */

/*
 * The single value of header name: NULL with *dup = 0 when absent,
 * NULL with *dup = 1 when it appears more than once (refused by callers).
 */
static const char *
header_one(struct evhttp_request *req, const char *name, int *dup)
{
	struct evkeyvalq *hs = evhttp_request_get_input_headers(req);
	struct evkeyval *kv;
	const char *v = NULL;
	int n = 0;

	TAILQ_FOREACH (kv, hs, next)
		if (strcasecmp(kv->key, name) == 0) {
			v = kv->value;
			n++;
		}
	*dup = n > 1;
	return n == 1 ? v : NULL;
}

/* http_headers_ok's walk over the parsed header lines, duplicates too. */
static int
header_next(void *arg, const char **name, const char **value)
{
	struct evkeyval **kv = arg;

	if (*kv == NULL)
		return 0;
	*name = (*kv)->key;
	*value = (*kv)->value;
	*kv = TAILQ_NEXT(*kv, next);
	return 1;
}

/* PER-2 ... PER-4, PER-8: returns 0, or -1 after answering. */
static int
perimeter(struct evhttp_request *req)
{
	const char *uri = evhttp_request_get_uri(req), *v;
	const char *const *extra = (const char *const *)broker.b_origins;
	struct evkeyval *kv;
	int dup;

	/*
	 * Header names and framing first: a request libevent read one way
	 * and another parser might read another is not looked at further,
	 * and its connection is not reused, so no smuggled tail is ever
	 * parsed as a request of its own.
	 */
	kv = TAILQ_FIRST(evhttp_request_get_input_headers(req));
	if (!http_headers_ok(header_next, &kv)) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Connection", "close");
		send_error(req, 400, "bad-request");
		return -1;
	}
	if (uri == NULL || !http_target_ok(uri, strlen(uri))) {
		send_error(req, 400, "bad-request");
		return -1;
	}
	v = header_one(req, "Host", &dup);
	if (v == NULL ||
	    !(http_host_ok(v, broker.b_port) ||
		(strcmp(broker.b_listen, "127.0.0.1") != 0 &&
		    http_host_ok_addr(v, broker.b_listen, broker.b_port)))) {
		send_error(req, 421, "misdirected-request");
		return -1;
	}
	v = header_one(req, "Origin", &dup);
	if (dup || (v != NULL && !http_origin_ok(v, broker.b_port, extra,
				     broker.b_norigins))) {
		send_error(req, 403, "forbidden-origin");
		return -1;
	}
	v = header_one(req, "Sec-Fetch-Site", &dup);
	if (dup || (v != NULL && !http_fetch_site_ok(v))) {
		send_error(req, 403, "forbidden-site");
		return -1;
	}
	return 0;
}

/* The live session whose id is val, or NULL. */
static const struct broker_session *
session_valid(const char *val, size_t len)
{
	size_t i;

	if (len != SESSION_HEX)
		return NULL;
	for (i = 0; i < BROKER_MAX_SESSIONS; i++) {
		struct broker_session *s = &broker.b_sessions[i];

		if (s->bs_id[0] == '\0' || !timingsafe_eq(s->bs_id, val, len))
			continue;
		if (now_ms_mono() - s->bs_created <=
		    (uint64_t)BROKER_SESSION_TTL_S * 1000)
			return s;
		explicit_bzero(s, sizeof(*s)); /* expired */
		return NULL;
	}
	return NULL;
}

/*
 * PER-5: session s's page key (login.c), in the one X-Cordon-Page
 * header, compared in constant time.
 */
static int
page_key_ok(struct evhttp_request *req, const struct broker_session *s)
{
	const char *v;
	int dup;

	v = header_one(req, "X-Cordon-Page", &dup);
	return v != NULL && !dup && strlen(v) == PAGE_KEY_HEX &&
	       timingsafe_eq(v, s->bs_page, PAGE_KEY_HEX);
}

/*
 * PER-5: bearer token, or session cookie with its page key; constant-time
 * compares.
 */
static enum auth_by
authenticate(struct evhttp_request *req)
{
	const struct broker_session *s;
	const char *v, *tok;
	size_t len;
	int dup;

	if (broker.b_token[0] == '\0')
		return AUTH_NONE;
	v = header_one(req, "Authorization", &dup);
	if (dup)
		return AUTH_NONE;
	if (v != NULL) {
		if (http_bearer_parse(v, &tok, &len) && len == TOKEN_HEX &&
		    timingsafe_eq(tok, broker.b_token, TOKEN_HEX))
			return AUTH_BEARER;
		return AUTH_NONE; /* a wrong token is not rescued by a cookie */
	}
	v = header_one(req, "Cookie", &dup);
	if (!dup && v != NULL &&
	    http_cookie_get(v, "cordon_session", &tok, &len) &&
	    (s = session_valid(tok, len)) != NULL && page_key_ok(req, s))
		return AUTH_COOKIE;
	return AUTH_NONE;
}

/* PER-7: a cookie-authenticated state change must come from our pages. */
static int
referer_ok(struct evhttp_request *req)
{
	const char *v, *path;
	char origin[256];
	size_t olen;
	int dup;

	v = header_one(req, "Referer", &dup);
	if (v == NULL || dup || (path = strstr(v, "://")) == NULL ||
	    (path = strchr(path + 3, '/')) == NULL)
		return 0;
	olen = (size_t)(path - v);
	if (olen >= sizeof(origin))
		return 0;
	memcpy(origin, v, olen);
	origin[olen] = '\0';
	return http_origin_ok(origin, broker.b_port,
		   (const char *const *)broker.b_origins, broker.b_norigins) &&
	       strncmp(path, "/ui/", 4) == 0;
}

/* ---- dashboard ---- */

/* The compiled-in file at path, answered with status. */
void
serve_asset_status(struct evhttp_request *req, const char *path, int status)
{
	const struct web_asset *a = NULL;
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *b;
	char nonce[NONCE_HEX + 1], csp[512];
	const unsigned char *p, *end, *mark;
	size_t i, mlen = strlen(WEB_NONCE_MARK);

	for (i = 0; i < web_nassets; i++)
		if (strcmp(web_assets[i].wa_path, path) == 0)
			a = &web_assets[i];
	if (a == NULL) {
		send_error(req, 404, "not-found");
		return;
	}
	if (random_hex(nonce, sizeof(nonce), NONCE_HEX / 2) == -1) {
		send_error(req, 500, "internal");
		return;
	}
	if ((b = evbuffer_new()) == NULL) {
		send_error(req, 500, "internal");
		return;
	}
	snprintf(csp, sizeof(csp),
	    "default-src 'none'; script-src 'self' 'nonce-%s'; "
	    "style-src 'self' 'nonce-%s'; img-src 'self'; "
	    "connect-src 'self'; form-action 'self'; "
	    "frame-ancestors 'none'; base-uri 'none'",
	    nonce, nonce);
	set_common_headers(req, csp);
	evhttp_add_header(h, "Content-Type", a->wa_type);
	if (!a->wa_templated)
		evbuffer_add_reference(b, a->wa_data, a->wa_len, NULL, NULL);
	else {
		p = a->wa_data;
		end = p + a->wa_len;
		while (p < end && (mark = memmem(p, (size_t)(end - p),
				       WEB_NONCE_MARK, mlen)) != NULL) {
			evbuffer_add(b, p, (size_t)(mark - p));
			evbuffer_add(b, nonce, NONCE_HEX);
			p = mark + mlen;
		}
		evbuffer_add(b, p, (size_t)(end - p));
	}
	reqlog_end(req, status, evbuffer_get_length(b));
	evhttp_send_reply(req, status, NULL, b);
	evbuffer_free(b);
}

static void
serve_asset(struct evhttp_request *req, const char *path)
{
	serve_asset_status(req, path, 200);
}

/*
 * /favicon.ico, which browsers ask for unless a page names its icon (ours
 * do, /ui/icon.svg): nothing to send, and a success, so not a refusal
 * to record on every page load (PER-10, reqlog.c).
 */
static void
serve_favicon(struct evhttp_request *req)
{
	set_common_headers(req, CSP_NONE);
	reqlog_end(req, 204, 0);
	evhttp_send_reply(req, 204, NULL, NULL);
}

/* ---- API ---- */

struct api_pending {
	struct evhttp_request *ap_req; /* NULL once the client went away */
	struct evhttp_connection *ap_evcon;
	int ap_long; /* counted in api_waits */
};

static size_t api_waits; /* long waits held (BROKER_WAITS_MAX) */

static void
api_conn_closed(struct evhttp_connection *evcon, void *arg)
{
	struct api_pending *ap = arg;

	if (ap->ap_req != NULL)
		reqlog_gone(ap->ap_req);
	ap->ap_req = NULL;
	ap->ap_evcon = NULL;
}

void *
api_hold(struct evhttp_request *req)
{
	struct api_pending *ap;

	if ((ap = calloc(1, sizeof(*ap))) == NULL)
		return NULL;
	ap->ap_req = req;
	ap->ap_evcon = evhttp_request_get_connection(req);
	if (ap->ap_evcon != NULL)
		evhttp_connection_set_closecb(
		    ap->ap_evcon, api_conn_closed, ap);
	return ap;
}

/* Detach from the connection; returns the request if it is still live. */
struct evhttp_request *
api_release(void *handle)
{
	struct api_pending *ap = handle;
	struct evhttp_request *req = ap->ap_req;

	if (ap->ap_evcon != NULL)
		evhttp_connection_set_closecb(ap->ap_evcon, NULL, NULL);
	if (ap->ap_long)
		api_waits--;
	free(ap);
	return req;
}

void
api_ask_wait(struct evhttp_request *req, struct ipc_conn *to, uint32_t type,
    struct json_object *payload, uint32_t reply_type, int seconds,
    ipc_reply_fn cb)
{
	struct timeval tv = {seconds, 0};
	struct api_pending *ap;
	int lng = seconds >= BROKER_TIMEOUT_S;

	/* PER-8: a long wait holds its connection; only so many at once. */
	if (lng && api_waits >= BROKER_WAITS_MAX) {
		send_error(req, 429, "busy");
		return;
	}
	if (to == NULL || (ap = api_hold(req)) == NULL) {
		send_error(req, 503, "unavailable");
		return;
	}
	if (lng) {
		ap->ap_long = 1;
		api_waits++;
	}
	/* A long wait must not be cut by the per-request I/O timeout. */
	if (ap->ap_evcon != NULL && lng)
		evhttp_connection_set_timeout(ap->ap_evcon, seconds + 5);
	if (ipc_request(to, type, payload, -1, reply_type, &tv, cb, ap) == -1) {
		api_release(ap);
		send_error(req, 503, "unavailable");
	}
}

void
api_ask(struct evhttp_request *req, struct ipc_conn *to, uint32_t type,
    struct json_object *payload, uint32_t reply_type, ipc_reply_fn cb)
{
	api_ask_wait(req, to, type, payload, reply_type, 3, cb);
}

const struct api_body api_body_none = {NULL, NULL, 0, "invalid-body", 1};

/*
 * PER-8: the request's body against its route's declaration (broker.h):
 * NULL with *out the checked object (NULL for an empty body that stands
 * for {}), or the declared code of the first misfit.
 */
static const char *
body_check(struct evhttp_request *req, const struct api_body *ab,
    struct json_object **out)
{
	struct evbuffer *b = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(b), i;
	struct json_object *o, *v;
	const char *bad = NULL;
	unsigned char *p;

	*out = NULL;
	if (len == 0 && ab->ab_empty_ok)
		return NULL;
	if (len > BROKER_MAX_BODY ||
	    (p = evbuffer_pullup(b, (ev_ssize_t)len)) == NULL ||
	    (o = json_parse_object((const char *)p, len, JSON_MAX_DEPTH)) ==
		NULL)
		return ab->ab_bad;
	if (!json_shape_keys_ok(o, ab->ab_shape, ab->ab_n))
		bad = ab->ab_bad;
	for (i = 0; bad == NULL && i < ab->ab_n; i++)
		if (!json_shape_row_ok(o, &ab->ab_shape[i]) ||
		    (ab->ab_keys[i].bk_ok != NULL &&
			json_object_object_get_ex(
			    o, ab->ab_shape[i].js_key, &v) &&
			!ab->ab_keys[i].bk_ok(json_object_get_string(v),
			    (size_t)json_object_get_string_len(v))))
			bad = ab->ab_keys[i].bk_bad;
	if (bad != NULL)
		json_object_put(o);
	else
		*out = o;
	return bad;
}

int
api_body_ok(struct evhttp_request *req, const struct api_params *p)
{
	if (p->ap_body_bad == NULL)
		return 0;
	send_error(req, 400, p->ap_body_bad);
	return -1;
}

/*
 * The route table: method, pattern, handler, body.  "{}" matches one path
 * segment of 1..128 bytes of [A-Za-z0-9._~%-], handed to the handler
 * undecoded; a handler that needs the decoded value decodes it once and
 * validates it itself.  A route with ar_badparam also claims a non-empty
 * segment outside that charset or length, and answers it 400 with that
 * code where its handler would have run, never calling the handler.  A
 * route that takes a body declares it (ar_body, PER-8): checked here
 * before the handler runs, its verdict answered by the handler's
 * api_body_ok; a route that declares none (every GET) never has its
 * body looked at.
 */
/* The error codes of a malformed "{}" (BAD_NONE: none claimed). */
#define BAD_NONE    NULL
#define BAD_JOB	    "invalid-job-id"
#define BAD_WT	    "invalid-worktree-id"
#define BAD_MISSION "mission-id-malformed"
/* The body of a route that takes no input. */
#define NOBODY (&api_body_none)
/* clang-format off */
static const struct api_route {
	enum evhttp_cmd_type ar_method;
	const char *ar_pattern;
	api_fn ar_fn;
	int ar_bearer;		 /* the bearer token only, never a cookie */
	const char *ar_badparam; /* error code of a malformed "{}" */
	const struct api_body *ar_body; /* NULL: none is looked at */
} api_routes[] = {
    {EVHTTP_REQ_GET, "/api/health", api_health, 0, BAD_NONE, NULL},
    {EVHTTP_REQ_POST, "/api/login-code", api_login_code, 1, BAD_NONE, NOBODY},
    {EVHTTP_REQ_GET, "/api/agents", api_agents_list, 0, BAD_NONE, NULL},
    {EVHTTP_REQ_GET, "/api/agents/{}", api_agent_get, 0, BAD_NONE, NULL},
    {EVHTTP_REQ_POST, "/api/agents/{}/run", api_agent_run, 0, BAD_NONE, &agents_run_body},
    {EVHTTP_REQ_POST, "/api/agents/{}/actions/{}", api_agent_action, 0, BAD_NONE, NOBODY},
    {EVHTTP_REQ_POST, "/api/runs/{}/cancel", api_run_cancel, 0, BAD_NONE, NOBODY},
    {EVHTTP_REQ_POST, "/api/agents/{}/jobs", api_agent_job, 0, BAD_NONE, &agents_run_body},
    {EVHTTP_REQ_GET, "/api/jobs", api_jobs_list, 0, BAD_NONE, NULL},
    {EVHTTP_REQ_GET, "/api/jobs/{}", api_job_get, 0, BAD_JOB, NULL},
    {EVHTTP_REQ_GET, "/api/jobs/{}/events", api_job_events, 0, BAD_JOB, NULL},
    {EVHTTP_REQ_GET, "/api/jobs/{}/wait", api_job_wait, 0, BAD_JOB, NULL},
    {EVHTTP_REQ_POST, "/api/jobs/{}/cancel", api_job_cancel, 0, BAD_JOB, NOBODY},
    {EVHTTP_REQ_GET, "/api/worktrees", api_worktrees_list, 0, BAD_NONE, NULL},
    {EVHTTP_REQ_POST, "/api/worktrees/{}/remove", api_worktree_remove, 0, BAD_WT, NOBODY},
    {EVHTTP_REQ_GET, "/api/vault/notes", api_vault_notes, 0, BAD_NONE, NULL},
    {EVHTTP_REQ_GET, "/api/vault/note", api_vault_note, 0, BAD_NONE, NULL},
    {EVHTTP_REQ_GET, "/api/audit", api_audit, 0, BAD_NONE, NULL},
    {EVHTTP_REQ_GET, "/api/approvals", api_approvals_list, 0, BAD_NONE, NULL},
    {EVHTTP_REQ_POST, "/api/approvals/{}", api_approval_decide, 0, BAD_NONE, &approvals_body},
    {EVHTTP_REQ_GET, "/api/missions", api_missions_list, 0, BAD_NONE, NULL},
    {EVHTTP_REQ_POST, "/api/missions/{}/run", api_mission_run, 0, BAD_MISSION, &missions_body},
};
/* clang-format on */

/*
 * 1 if path matches pattern, filling params; -1 if it has the pattern's
 * shape but a "{}" segment is outside the charset or too long (params
 * left empty); 0 otherwise.
 */
static int
route_match(const char *pattern, const char *path, struct api_params *ap)
{
	const char *p = pattern, *s = path, *start;
	int bad = 0;

	memset(ap, 0, sizeof(*ap));
	while (*p != '\0') {
		if (p[0] == '{' && p[1] == '}') {
			start = s;
			for (; *s != '\0' && *s != '/'; s++)
				if (!charset_has("a-zA-Z0-9._~%-", *s))
					bad = 1;
			if (s == start || ap->ap_n == API_MAX_PARAMS)
				return 0;
			if ((size_t)(s - start) > API_PARAM_MAX)
				bad = 1;
			ap->ap_val[ap->ap_n] = start;
			ap->ap_len[ap->ap_n] = (size_t)(s - start);
			ap->ap_n++;
			p += 2;
			continue;
		}
		if (*p++ != *s++)
			return 0;
	}
	if (*s != '\0')
		return 0;
	if (bad) {
		memset(ap, 0, sizeof(*ap));
		return -1;
	}
	return 1;
}

/* route_match, with a malformed segment claimed only by ar_badparam. */
static int
route_answers(
    const struct api_route *r, const char *path, struct api_params *ap)
{
	int m = route_match(r->ar_pattern, path, ap);

	return m == -1 && r->ar_badparam == NULL ? 0 : m;
}

static void
serve_api(struct evhttp_request *req, const char *path)
{
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	struct api_params params;
	enum auth_by by;
	const char *ct;
	size_t i;
	int dup, known = 0, m;

	if ((by = authenticate(req)) == AUTH_NONE) {
		send_error(req, 401, "unauthorized");
		return;
	}
	if (cmd == EVHTTP_REQ_POST && by == AUTH_COOKIE && !referer_ok(req)) {
		send_error(req, 403, "forbidden-referer");
		return;
	}
	for (i = 0; i < nitems(api_routes); i++) {
		if ((m = route_answers(&api_routes[i], path, &params)) == 0)
			continue;
		known = 1;
		/* HEAD is GET without the body (evhttp drops it). */
		if (api_routes[i].ar_method != cmd &&
		    !(api_routes[i].ar_method == EVHTTP_REQ_GET &&
			cmd == EVHTTP_REQ_HEAD))
			continue;
		if (api_routes[i].ar_bearer && by != AUTH_BEARER) {
			send_error(req, 403, "bearer-required");
			return;
		}
		if (cmd == EVHTTP_REQ_POST) {
			ct = header_one(req, "Content-Type", &dup);
			if (ct == NULL || dup ||
			    strncasecmp(ct, "application/json", 16) != 0 ||
			    (ct[16] != '\0' && ct[16] != ';')) {
				send_error(req, 415, "unsupported-media-type");
				return;
			}
		}
		if (m == -1) {
			send_error(req, 400, api_routes[i].ar_badparam);
			return;
		}
		if (api_routes[i].ar_body != NULL)
			params.ap_body_bad = body_check(
			    req, api_routes[i].ar_body, &params.ap_body);
		api_routes[i].ar_fn(req, &params);
		json_object_put(params.ap_body);
		return;
	}
	if (known)
		send_error(req, 405, "method-not-allowed");
	else
		send_error(req, 404, "not-found");
}

const char *
front_route_of(struct evhttp_request *req)
{
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *path = u ? evhttp_uri_get_path(u) : NULL;
	struct api_params params;
	size_t i;

	if (path == NULL)
		return "other";
	for (i = 0; i < nitems(api_routes); i++)
		if (route_answers(&api_routes[i], path, &params) != 0)
			return api_routes[i].ar_pattern;
	if (strcmp(path, "/") == 0)
		return "/";
	if (strcmp(path, "/ui/login") == 0)
		return "/ui/login";
	if (strcmp(path, "/favicon.ico") == 0)
		return "/favicon.ico";
	if (strcmp(path, "/ui") == 0 || strncmp(path, "/ui/", 4) == 0)
		return "/ui";
	return "other";
}

void
http_request_cb(struct evhttp_request *req, void *arg)
{
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	const struct evhttp_uri *u;
	const char *path;

	reqlog_start(req);
	if (conns_request(req) == -1) {
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Connection", "close");
		send_error(req, 400, "bad-request");
		return;
	}

	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD &&
	    cmd != EVHTTP_REQ_POST) {
		send_error(req, 405, "method-not-allowed");
		/*
		 * evhttp reads a CONNECT request's "body" until EOF, so the
		 * connection would idle until the timeout: end our reading
		 * side, which completes the request and closes it.
		 */
		if (cmd == EVHTTP_REQ_CONNECT)
			shutdown(
			    bufferevent_getfd(evhttp_connection_get_bufferevent(
				evhttp_request_get_connection(req))),
			    SHUT_RD);
		return;
	}
	if (perimeter(req) == -1)
		return;
	if (authenticate(req) != AUTH_NONE)
		conns_proven(req);
	if ((u = evhttp_request_get_evhttp_uri(req)) == NULL ||
	    (path = evhttp_uri_get_path(u)) == NULL) {
		send_error(req, 400, "bad-request");
		return;
	}
	if (strncmp(path, "/api/", 5) == 0) {
		serve_api(req, path);
		return;
	}
	if (cmd == EVHTTP_REQ_POST) {
		send_error(req, 405, "method-not-allowed");
		return;
	}
	if (strcmp(path, "/") == 0 || strcmp(path, "/ui") == 0)
		send_redirect(req, "/ui/");
	else if (strcmp(path, "/ui/login") == 0)
		serve_login(req, u);
	else if (strncmp(path, "/ui/", 4) == 0)
		serve_asset(req, path);
	else if (strcmp(path, "/favicon.ico") == 0)
		serve_favicon(req);
	else
		send_error(req, 404, "not-found");
}
