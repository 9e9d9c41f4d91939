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
 * Build the MSG_AUDIT_TAIL payload from the raw query, or NULL if bad.
 * Split here rather than by evhttp_parse_query_str() so a decoded value
 * with an embedded NUL is seen and refused.
 */
static struct json_object *
audit_query(const char *query)
{
	static const char *const names[] = {"kind", "agent", "since", "limit"};
	struct json_object *o;
	long long v, limit = AUDIT_LIMIT_DEFAULT;
	char *copy = NULL, *part, *save, *eq, *s = NULL;
	size_t i, len;
	int seen = 0;

	o = json_object_new_object();
	if (query != NULL && query[0] != '\0' && (copy = strdup(query)) == NULL)
		goto bad;
	for (part = copy ? strtok_r(copy, "&", &save) : NULL; part != NULL;
	     part = strtok_r(NULL, "&", &save)) {
		if ((eq = strchr(part, '=')) == NULL)
			goto bad;
		*eq = '\0';
		for (i = 0; i < nitems(names); i++)
			if (strcmp(part, names[i]) == 0)
				break;
		if (i == nitems(names) || (seen & (1 << i)))
			goto bad;
		seen |= 1 << i;
		if ((s = evhttp_uridecode(eq + 1, 1, &len)) == NULL ||
		    strlen(s) != len)
			goto bad;
		if (i == 0 && audit_kind_lookup(s) != NULL)
			json_object_object_add(
			    o, "kind", json_object_new_string(s));
		else if (i == 1 && audit_pattern_ok(AP_NAME, s, len))
			json_object_object_add(
			    o, "agent", json_object_new_string(s));
		else if (i == 2 &&
			 api_query_int(s, 0, AUDIT_COUNT_MAX, &v) == 0)
			json_object_object_add(
			    o, "since", json_object_new_int64(v));
		else if (i != 3 || api_query_int(s, 1, AUDIT_LIMIT_MAX, &limit))
			goto bad;
		free(s);
		s = NULL;
	}
	free(copy);
	json_object_object_add(o, "limit", json_object_new_int64(limit));
	return o;
bad:
	free(s);
	free(copy);
	json_object_put(o);
	return NULL;
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
