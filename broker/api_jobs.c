/*
 * Detached jobs (MC-3), asked of the spawner, which keeps them: start
 * one (POST /api/agents/{name}/jobs, API-3's body), list them, read one
 * (status, events from an offset, a bounded wait) and cancel one.  A
 * job id is decoded once and must match ^[A-Za-z0-9_-]{1,80}$ (else 400
 * invalid-job-id, nothing asked); an id of that shape that names no job
 * is the spawner's 404 unknown-job.  Answers carry what the spawner
 * keeps (meta, and events that its run pipeline cleaned and scrubbed),
 * never an echo of the request.  The perimeter (PER-*) ran in front.c.
 * Touches no files.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <json-c/json.h>

#include "broker.h"
#include "cordon_limits.h"
#include "json.h"
#include "msg.h"
#include "schema.h"
#include "util.h"

#define JOBS_WAIT_DEFAULT_MS 30000
#define JOBS_WAIT_MARGIN_S   5 /* past the spawner's own bound */

/* The spawner's refusal (or none) as a fixed HTTP answer. */
static void
jobs_fail(struct evhttp_request *req, const struct ipc_msg *m)
{
	static const struct {
		const char *c;
		int s;
	} map[] = {
	    {"unknown-job", 404},
	    {"invalid-offset", 400},
	    {"job-not-running", 409},
	    {"jobs-unavailable", 503},
	};
	const char *code = NULL;
	size_t i;

	if (m != NULL && m->m_type == MSG_ERROR &&
	    (code = json_get_str(m->m_obj, "error", 32)) != NULL)
		for (i = 0; i < nitems(map); i++)
			if (strcmp(map[i].c, code) == 0) {
				send_error(req, map[i].s, map[i].c);
				return;
			}
	if (m == NULL)
		send_error(req, 503, "unavailable");
	else
		send_error(req, 500, "internal");
}

/*
 * The path's job id, URL-decoded once, into a {"jobId": id} payload; NULL
 * (after answering 400) unless it matches ^[A-Za-z0-9_-]{1,80}$.
 */
static struct json_object *
jobs_id(struct evhttp_request *req, const struct api_params *p)
{
	char raw[API_PARAM_MAX + 1], *dec = NULL;
	struct json_object *o = NULL;
	size_t len = 0;

	if (p->ap_n == 1 && p->ap_len[0] <= API_PARAM_MAX) {
		memcpy(raw, p->ap_val[0], p->ap_len[0]);
		raw[p->ap_len[0]] = '\0';
		dec = evhttp_uridecode(raw, 0, &len);
	}
	if (dec != NULL && strlen(dec) == len && schema_job_id_ok(dec)) {
		o = json_object_new_object();
		json_object_object_add(o, "jobId", json_object_new_string(dec));
	} else
		send_error(req, 400, "invalid-job-id");
	free(dec);
	return o;
}

/*
 * The query's integers: each name at most once, a decimal within its
 * bounds, into payload o; no other name.  0, or -1 after answering 400
 * invalid-query.
 */
struct jobs_qint {
	const char *q_name;
	long long q_min, q_max, q_def;
};

static int
jobs_query(struct evhttp_request *req, const struct jobs_qint *q, size_t nq,
    struct json_object *o)
{
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *query = u != NULL ? evhttp_uri_get_query(u) : NULL;
	char *copy = NULL, *part, *save, *eq, *s = NULL;
	long long v[4];
	unsigned seen = 0;
	size_t i, len;

	for (i = 0; i < nq; i++)
		v[i] = q[i].q_def;
	if (query != NULL && query[0] != '\0' && (copy = strdup(query)) == NULL)
		goto bad;
	for (part = copy ? strtok_r(copy, "&", &save) : NULL; part != NULL;
	     part = strtok_r(NULL, "&", &save)) {
		if ((eq = strchr(part, '=')) == NULL)
			goto bad;
		*eq = '\0';
		for (i = 0; i < nq; i++)
			if (strcmp(part, q[i].q_name) == 0)
				break;
		if (i == nq || (seen & (1u << i)) ||
		    (s = evhttp_uridecode(eq + 1, 1, &len)) == NULL ||
		    strlen(s) != len ||
		    api_query_int(s, q[i].q_min, q[i].q_max, &v[i]) == -1)
			goto bad;
		seen |= 1u << i;
		free(s);
		s = NULL;
	}
	free(copy);
	for (i = 0; i < nq; i++)
		json_object_object_add(
		    o, q[i].q_name, json_object_new_int64(v[i]));
	return 0;
bad:
	free(s);
	free(copy);
	send_error(req, 400, "invalid-query");
	return -1;
}

/* {ok: true} plus the answer's keys that are there, of their type. */
static void
jobs_answer(struct evhttp_request *req, const struct ipc_msg *m, uint32_t type,
    const struct json_shape *keys, size_t n)
{
	struct json_object *o, *v;
	size_t i;

	if (m == NULL || m->m_type != type ||
	    !json_shape_ok(m->m_obj, keys, n)) {
		jobs_fail(req, m);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	for (i = 0; i < n; i++)
		if (json_object_object_get_ex(m->m_obj, keys[i].js_key, &v))
			json_object_object_add(
			    o, keys[i].js_key, json_object_get(v));
	send_json(req, 200, o);
	json_object_put(o);
}

/* ---- POST /api/agents/{name}/jobs ---- */

static void
job_started_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	static const struct json_shape keys[] = {
	    JS_STR("jobId", JS_REQ, 0, LIM_JOB_ID_MAX),
	};
	struct evhttp_request *req = api_release(arg);

	/* A client gone before the answer leaves the job running: it is
	 * detached, and listed. */
	if (req == NULL)
		return;
	if (m != NULL && m->m_type == MSG_ERROR) {
		agents_fail(req, m);
		return;
	}
	jobs_answer(req, m, MSG_JOB_START_OK, keys, nitems(keys));
}

void
api_agent_job(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *o;

	if (agents_run_payload(req, p, &o) == -1)
		return;
	agents_ask_start(
	    req, o, MSG_JOB_START, MSG_JOB_START_OK, job_started_cb);
}

/* ---- GET /api/jobs ---- */

static void
jobs_list_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	static const struct json_shape keys[] = {
	    JS_ARR("jobs", JS_REQ, LLONG_MAX), /* the frame bounds it */
	};
	struct evhttp_request *req = api_release(arg);

	if (req != NULL)
		jobs_answer(req, m, MSG_JOB_LIST_OK, keys, nitems(keys));
}

void
api_jobs_list(struct evhttp_request *req, const struct api_params *p)
{
	if (jobs_query(req, NULL, 0, NULL) == -1)
		return;
	api_ask(req, broker_peer(PROC_SPAWNER), MSG_JOB_LIST, NULL,
	    MSG_JOB_LIST_OK, jobs_list_cb);
}

/* ---- GET /api/jobs/{id} ---- */

static void
job_get_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	static const struct json_shape keys[] = {
	    JS_OBJ("job", JS_REQ),
	};
	struct evhttp_request *req = api_release(arg);

	if (req != NULL)
		jobs_answer(req, m, MSG_JOB_GET_OK, keys, nitems(keys));
}

void
api_job_get(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *o;

	if ((o = jobs_id(req, p)) == NULL)
		return;
	if (jobs_query(req, NULL, 0, o) == 0)
		api_ask(req, broker_peer(PROC_SPAWNER), MSG_JOB_GET, o,
		    MSG_JOB_GET_OK, job_get_cb);
	json_object_put(o);
}

/* ---- GET /api/jobs/{id}/events?offset=&limit= ---- */

static void
job_events_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	static const struct json_shape keys[] = {
	    JS_ARR("events", JS_REQ, LIM_JOB_PAGE_MAX),
	    JS_INT("next", JS_REQ, 0, INT64_MAX),
	    JS_OBJ("job", JS_REQ),
	};
	struct evhttp_request *req = api_release(arg);

	if (req != NULL)
		jobs_answer(req, m, MSG_JOB_EVENTS_OK, keys, nitems(keys));
}

void
api_job_events(struct evhttp_request *req, const struct api_params *p)
{
	static const struct jobs_qint q[] = {
	    {"offset", 0, 1LL << 53, 0},
	    {"limit", 1, LIM_JOB_PAGE_MAX, LIM_JOB_PAGE_MAX},
	};
	struct json_object *o;

	if ((o = jobs_id(req, p)) == NULL)
		return;
	if (jobs_query(req, q, nitems(q), o) == 0)
		api_ask(req, broker_peer(PROC_SPAWNER), MSG_JOB_EVENTS, o,
		    MSG_JOB_EVENTS_OK, job_events_cb);
	json_object_put(o);
}

/* ---- GET /api/jobs/{id}/wait?timeoutMs= ---- */

static void
job_wait_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	static const struct json_shape keys[] = {
	    JS_OBJ("job", JS_REQ),
	    JS_BOOL("timedOut", JS_REQ),
	};
	struct evhttp_request *req = api_release(arg);

	if (req != NULL)
		jobs_answer(req, m, MSG_JOB_WAIT_OK, keys, nitems(keys));
}

void
api_job_wait(struct evhttp_request *req, const struct api_params *p)
{
	static const struct jobs_qint q[] = {
	    {"timeoutMs", 0, LIM_JOB_WAIT_MS_MAX, JOBS_WAIT_DEFAULT_MS},
	};
	struct json_object *o, *v;

	if ((o = jobs_id(req, p)) == NULL)
		return;
	if (jobs_query(req, q, nitems(q), o) == 0) {
		json_object_object_get_ex(o, "timeoutMs", &v);
		api_ask_wait(req, broker_peer(PROC_SPAWNER), MSG_JOB_WAIT, o,
		    MSG_JOB_WAIT_OK,
		    (int)(json_object_get_int64(v) / 1000) + JOBS_WAIT_MARGIN_S,
		    job_wait_cb);
	}
	json_object_put(o);
}

/* ---- POST /api/jobs/{id}/cancel ---- */

static void
job_cancel_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct evhttp_request *req = api_release(arg);

	if (req != NULL)
		jobs_answer(req, m, MSG_JOB_CANCEL_OK, NULL, 0);
}

void
api_job_cancel(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *o;

	if ((o = jobs_id(req, p)) == NULL)
		return;
	if (api_body_none(req) == 0)
		api_ask(req, broker_peer(PROC_SPAWNER), MSG_JOB_CANCEL, o,
		    MSG_JOB_CANCEL_OK, job_cancel_cb);
	json_object_put(o);
}
