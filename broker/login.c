/*
 * The broker's one-time login (PER-5): spending a login code, minting a
 * fresh one for the bearer, and issuing the session cookie the code
 * buys, kept by cordond before it is handed out, with the session's page
 * key in the redirect's fragment.  Touches the broker's session table
 * and codes in memory, no file.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <string.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <json-c/json.h>

#include "broker.h"
#include "msg.h"
#include "util.h"

/*
 * PER-5: a session's page key, random like its id and kept beside it
 * (cordond's copy too).  The cookie goes to every port of 127.0.0.1
 * (threat-model.md); the key goes only to the dashboard's page, in the
 * fragment of the login redirect, which no browser sends to a server or
 * puts in a Referer, and the page keeps it in its origin's storage.  A
 * cookie-authenticated request carries it in X-Cordon-Page (front.c), so
 * a cookie alone is no session.
 */
/* 303 to the dashboard with session s's page key in the fragment. */
static void
session_redirect(struct evhttp_request *req, const struct broker_session *s)
{
	char to[sizeof("/ui/#page=") + PAGE_KEY_HEX];

	snprintf(to, sizeof(to), "/ui/#page=%s", s->bs_page);
	send_redirect(req, to);
	explicit_bzero(to, sizeof(to));
}

/* The session of a Set-Cookie this request carries, or NULL. */
static struct broker_session *
session_of_reply(struct evhttp_request *req)
{
	const char *v = evhttp_find_header(
	    evhttp_request_get_output_headers(req), "Set-Cookie");
	size_t i;

	if (v == NULL || strncmp(v, "cordon_session=", 15) != 0)
		return NULL;
	for (i = 0; i < BROKER_MAX_SESSIONS; i++)
		if (broker.b_sessions[i].bs_id[0] != '\0' &&
		    strncmp(v + 15, broker.b_sessions[i].bs_id, SESSION_HEX) ==
			0)
			return &broker.b_sessions[i];
	return NULL;
}

static void
session_kept_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct evhttp_request *req = api_release(arg);
	struct broker_session *s;

	if (req == NULL)
		return;
	if (m == NULL || m->m_type != MSG_SESSION_ADD_OK) {
		/* Not kept by cordond: not handed out either. */
		if ((s = session_of_reply(req)) != NULL)
			explicit_bzero(s, sizeof(*s));
		evhttp_remove_header(
		    evhttp_request_get_output_headers(req), "Set-Cookie");
		send_error(req, 503, "unavailable");
		return;
	}
	if ((s = session_of_reply(req)) == NULL) {
		evhttp_remove_header(
		    evhttp_request_get_output_headers(req), "Set-Cookie");
		send_error(req, 503, "unavailable");
		return;
	}
	session_redirect(req, s);
}

/*
 * A fresh session cookie, then to the dashboard.  Under cordond the
 * cookie is sent once cordond keeps a copy for the brokers it restarts;
 * a broker of its own (systemd) keeps its sessions to itself.
 */
static void
session_issue(struct evhttp_request *req)
{
	struct broker_session *s;
	struct json_object *o;
	char cookie[160];
	size_t i;

	/* A free slot, else the oldest session makes room. */
	s = &broker.b_sessions[0];
	for (i = 0; i < BROKER_MAX_SESSIONS; i++) {
		if (broker.b_sessions[i].bs_id[0] == '\0') {
			s = &broker.b_sessions[i];
			break;
		}
		if (broker.b_sessions[i].bs_created < s->bs_created)
			s = &broker.b_sessions[i];
	}
	if (random_hex(s->bs_id, sizeof(s->bs_id), SESSION_HEX / 2) == -1 ||
	    random_hex(s->bs_page, sizeof(s->bs_page), PAGE_KEY_HEX / 2) ==
		-1) {
		explicit_bzero(s, sizeof(*s));
		send_error(req, 500, "internal");
		return;
	}
	s->bs_created = now_ms_mono();
	snprintf(cookie, sizeof(cookie),
	    "cordon_session=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=%d",
	    s->bs_id, BROKER_SESSION_TTL_S);
	evhttp_add_header(
	    evhttp_request_get_output_headers(req), "Set-Cookie", cookie);
	if (broker.b_d.d_parent == NULL) {
		session_redirect(req, s);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_string(s->bs_id));
	json_object_object_add(o, "page", json_object_new_string(s->bs_page));
	api_ask(req, broker.b_d.d_parent, MSG_SESSION_ADD, o,
	    MSG_SESSION_ADD_OK, session_kept_cb);
	json_object_put(o);
}

static void
login_ack_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct evhttp_request *req = api_release(arg);

	if (req == NULL)
		return;
	if (m == NULL || m->m_type != MSG_LOGIN_USED_OK) {
		send_error(req, 503, "unavailable");
		return;
	}
	session_issue(req);
}

/*
 * POST /api/login-code (bearer only): a fresh one-time login code that
 * expires in LOGIN_CODE_S, replacing any earlier one.  `cordon login`
 * prints it as a URL; under systemd it is the only way in.  It lives in
 * this process alone, so a restarted broker has none to replay.
 */
#define LOGIN_CODE_S 120
void
api_login_code(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *o;

	if (api_body_ok(req, p) == -1)
		return;
	if (random_hex(broker.b_minted, sizeof(broker.b_minted), 16) == -1) {
		broker.b_minted[0] = '\0';
		send_error(req, 500, "internal");
		return;
	}
	broker.b_minted_until = now_ms_mono() + LOGIN_CODE_S * 1000;
	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(
	    o, "code", json_object_new_string(broker.b_minted));
	json_object_object_add(
	    o, "expiresInS", json_object_new_int(LOGIN_CODE_S));
	send_json(req, 200, o);
	json_object_put(o);
}

/*
 * GET /ui/login?code=…: spend the one-time code.  The cookie is issued
 * only once cordond has confirmed the code is spent, so a broker that
 * dies right after cannot be restarted with the code still valid.
 */
void
serve_login(struct evhttp_request *req, const struct evhttp_uri *u)
{
	struct evkeyvalq q;
	const char *code, *query = evhttp_uri_get_query(u);

	int ours = 0, minted = 0;

	TAILQ_INIT(&q);
	if (query != NULL && evhttp_parse_query_str(query, &q) == 0 &&
	    (code = evhttp_find_header(&q, "code")) != NULL &&
	    strlen(code) == 32) {
		ours = broker.b_login[0] != '\0' &&
		       timingsafe_eq(code, broker.b_login, 32);
		minted = broker.b_minted[0] != '\0' &&
			 now_ms_mono() < broker.b_minted_until &&
			 timingsafe_eq(code, broker.b_minted, 32);
	}
	evhttp_clear_headers(&q);
	if (minted) {
		explicit_bzero(broker.b_minted, sizeof(broker.b_minted));
		session_issue(req);
		return;
	}
	if (!ours) {
		/* A page for the person who followed the link, saying which
		 * command prints a fresh one; still 401, nothing echoed. */
		serve_asset_status(req, "/ui/relogin.html", 401);
		return;
	}
	explicit_bzero(broker.b_login, sizeof(broker.b_login));
	api_ask(req, broker.b_d.d_parent, MSG_LOGIN_USED, NULL,
	    MSG_LOGIN_USED_OK, login_ack_cb);
}
