/*
 * API-6: GET /api/vault/notes?dir= and GET /api/vault/note?path=, asked
 * of vaultd (MSG_VAULT_LIST / MSG_VAULT_READ).  The raw, still encoded
 * value goes to vaultd, which decodes it once and checks it (VA-2); the
 * broker only splits the query.  Touches no files.
 */
#include <string.h>

#include <event2/http.h>
#include <json-c/json.h>

#include "broker.h"
#include "msg.h"
#include "vaultpath.h"

#define API_VAULT_RAW_MAX (3 * VAULT_PATH_MAX)

/*
 * The raw value of the query's only parameter, key, into out.  An absent
 * query or an absent key leaves out empty and answers 0 only if
 * optional.  Any other parameter, a repeat or an oversized value: -1.
 */
static int
api_vault_param(struct evhttp_request *req, const char *key, int optional,
    char *out, size_t outsz)
{
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *q = u ? evhttp_uri_get_query(u) : NULL;
	size_t klen = strlen(key), len;
	const char *amp;
	int seen = 0;

	out[0] = '\0';
	if (q == NULL || *q == '\0')
		return optional ? 0 : -1;
	for (;;) {
		amp = strchr(q, '&');
		len = amp ? (size_t)(amp - q) : strlen(q);
		if (len <= klen || strncmp(q, key, klen) != 0 ||
		    q[klen] != '=' || seen)
			return -1;
		if (len - klen - 1 >= outsz)
			return -1;
		memcpy(out, q + klen + 1, len - klen - 1);
		out[len - klen - 1] = '\0';
		seen = 1;
		if (amp == NULL)
			break;
		q = amp + 1;
	}
	return 0;
}

/* vaultd's neutral codes, mapped to HTTP; anything else is ours. */
static void
api_vault_error(struct evhttp_request *req, struct ipc_msg *m)
{
	const char *code = NULL;

	if (m != NULL && m->m_type == MSG_ERROR)
		code = json_get_str(m->m_obj, "error", 32);
	if (code == NULL)
		send_error(req, 503, "unavailable");
	else if (strcmp(code, "invalid-path") == 0)
		send_error(req, 400, "invalid-path");
	else if (strcmp(code, "not-found") == 0)
		send_error(req, 404, "not-found");
	else if (strcmp(code, "too-large") == 0)
		send_error(req, 413, "too-large");
	else if (strcmp(code, "invalid-note") == 0)
		send_error(req, 422, "invalid-note");
	else
		send_error(req, 500, "internal");
}

/* Copy key from vaultd's answer into o, if present. */
static void
api_vault_copy(struct json_object *o, struct json_object *from, const char *key)
{
	struct json_object *v;

	if (json_object_object_get_ex(from, key, &v))
		json_object_object_add(o, key, json_object_get(v));
}

static void
api_vault_reply_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	static const char *const read_keys[] = {"path", "content", "bytes"};
	static const char *const list_keys[] = {"dir", "notes", "folders"};
	struct evhttp_request *req = api_release(arg);
	const char *const *keys;
	struct json_object *o;
	size_t i;

	if (req == NULL)
		return;
	if (m == NULL || (m->m_type != MSG_VAULT_READ_OK &&
			     m->m_type != MSG_VAULT_LIST_OK)) {
		api_vault_error(req, m);
		return;
	}
	keys = m->m_type == MSG_VAULT_READ_OK ? read_keys : list_keys;
	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	for (i = 0; i < 3; i++)
		api_vault_copy(o, m->m_obj, keys[i]);
	send_json(req, 200, o);
	json_object_put(o);
}

static void
api_vault_ask(struct evhttp_request *req, const char *key, int optional,
    uint32_t type, uint32_t reply)
{
	char raw[API_VAULT_RAW_MAX + 1];
	struct json_object *o;

	if (api_vault_param(req, key, optional, raw, sizeof(raw)) == -1) {
		send_error(req, 400, "invalid-path");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, key, json_object_new_string(raw));
	api_ask(
	    req, broker_peer(PROC_VAULTD), type, o, reply, api_vault_reply_cb);
	json_object_put(o);
}

void
api_vault_notes(struct evhttp_request *req, const struct api_params *p)
{
	api_vault_ask(req, "dir", 1, MSG_VAULT_LIST, MSG_VAULT_LIST_OK);
}

void
api_vault_note(struct evhttp_request *req, const struct api_params *p)
{
	api_vault_ask(req, "path", 0, MSG_VAULT_READ, MSG_VAULT_READ_OK);
}
