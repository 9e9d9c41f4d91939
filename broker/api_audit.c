/*
 * API-8: GET /api/audit?kind=&agent=&since=&limit= — recent records from
 * auditd's ring (MSG_AUDIT_TAIL).  Every parameter is checked here against
 * the audit schema's shapes; anything else is 400 "invalid-query".
 */
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <json-c/json.h>

#include "audit_schema.h"
#include "broker.h"
#include "msg.h"
#include "util.h"

#define AUDIT_LIMIT_DEFAULT 100
#define AUDIT_LIMIT_MAX	    1000

int
api_query_int(const char *s, long long min, long long max, long long *out)
{
	long long v = 0;
	size_t i, n = strlen(s);

	if (n == 0 || n > 16)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/*
 * Split here rather than by evhttp_parse_query_str() so that a decoded
 * value with an embedded NUL is seen and refused.
 */
int
api_query_each(const char *query, const char *const *names, size_t n,
    int (*fn)(size_t, const char *, size_t, void *), void *arg)
{
	char *copy, *part, *save, *eq, *s;
	unsigned seen = 0;
	size_t i, len;
	int rc = 0;

	if (query == NULL || query[0] == '\0')
		return 0;
	if ((copy = strdup(query)) == NULL)
		return -1;
	for (part = strtok_r(copy, "&", &save); rc == 0 && part != NULL;
	     part = strtok_r(NULL, "&", &save)) {
		if ((eq = strchr(part, '=')) != NULL)
			*eq = '\0';
		for (i = 0; eq != NULL && i < n; i++)
			if (strcmp(part, names[i]) == 0)
				break;
		if (eq == NULL || i == n || (seen & (1u << i)) ||
		    (s = evhttp_uridecode(eq + 1, 1, &len)) == NULL) {
			rc = -1;
			break;
		}
		seen |= 1u << i;
		rc = strlen(s) == len ? fn(i, s, len, arg) : -1;
		free(s);
	}
	free(copy);
	return rc;
}

struct audit_q {
	struct json_object *aq_o; /* the payload, but for its limit */
	long long aq_limit;
};

/* One parameter of GET /api/audit into the MSG_AUDIT_TAIL payload. */
static int
audit_param(size_t i, const char *s, size_t len, void *arg)
{
	struct audit_q *q = arg;
	long long v;

	if (i == 0 && audit_kind_lookup(s) != NULL)
		json_object_object_add(
		    q->aq_o, "kind", json_object_new_string(s));
	else if (i == 1 && audit_pattern_ok(AP_NAME, s, len))
		json_object_object_add(
		    q->aq_o, "agent", json_object_new_string(s));
	else if (i == 2 && api_query_int(s, 0, AUDIT_COUNT_MAX, &v) == 0)
		json_object_object_add(
		    q->aq_o, "since", json_object_new_int64(v));
	else if (i != 3 || api_query_int(s, 1, AUDIT_LIMIT_MAX, &q->aq_limit))
		return -1;
	return 0;
}

/* The MSG_AUDIT_TAIL payload from the raw query, or NULL if bad. */
static struct json_object *
audit_query(const char *query)
{
	static const char *const names[] = {"kind", "agent", "since", "limit"};
	struct audit_q q = {json_object_new_object(), AUDIT_LIMIT_DEFAULT};

	if (api_query_each(query, names, nitems(names), audit_param, &q) ==
	    -1) {
		json_object_put(q.aq_o);
		return NULL;
	}
	json_object_object_add(
	    q.aq_o, "limit", json_object_new_int64(q.aq_limit));
	return q.aq_o;
}

static void
audit_reply_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct evhttp_request *req = api_release(arg);
	struct json_object *o, *recs;

	if (req == NULL)
		return;
	if (m == NULL || m->m_type != MSG_AUDIT_TAIL_OK ||
	    !json_object_object_get_ex(m->m_obj, "records", &recs) ||
	    !json_object_is_type(recs, json_type_array)) {
		send_error(req, 503, "unavailable");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	json_object_object_add(o, "records", json_object_get(recs));
	send_json(req, 200, o);
	json_object_put(o);
}

void
api_audit(struct evhttp_request *req, const struct api_params *p)
{
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	struct json_object *o;

	if ((o = audit_query(u ? evhttp_uri_get_query(u) : NULL)) == NULL) {
		send_error(req, 400, "invalid-query");
		return;
	}
	api_ask(req, broker_peer(PROC_AUDITD), MSG_AUDIT_TAIL, o,
	    MSG_AUDIT_TAIL_OK, audit_reply_cb);
	json_object_put(o);
}
