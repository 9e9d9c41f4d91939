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
#include "util.h"

#define JOBS_WAIT_DEFAULT_MS 30000
#define JOBS_WAIT_MARGIN_S   5 /* past the spawner's own bound */

/* The spawner's refusals, as HTTP answers (MC-3). */
static const struct api_code_map jobs_codes[] = {
    {"unknown-job", 404, NULL},
    {"invalid-offset", 400, NULL},
    {"job-not-running", 409, NULL},
    {"jobs-unavailable", 503, NULL},
};

/*
 * The query's integers: each name at most once, a decimal within its
 * bounds, into payload o; no other name.  0, or -1 after answering 400
 * invalid-query.
 */
struct jobs_qint {
	const char *q_name;
	long long q_min, q_max, q_def;
};

#define JOBS_QINT_MAX 4

struct jobs_qvals {
	const struct jobs_qint *qv_q;
	long long qv_v[JOBS_QINT_MAX];
};

static int
jobs_qparam(size_t i, const char *s, size_t len, void *arg)
{
	struct jobs_qvals *qv = arg;

	return api_query_int(
	    s, qv->qv_q[i].q_min, qv->qv_q[i].q_max, &qv->qv_v[i]);
}

static int
jobs_query(struct evhttp_request *req, const struct jobs_qint *q, size_t nq,
    struct json_object *o)
{
	const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
	const char *query = u != NULL ? evhttp_uri_get_query(u) : NULL;
	const char *names[JOBS_QINT_MAX];
	struct jobs_qvals qv = {.qv_q = q};
	size_t i;

	for (i = 0; i < nq; i++) {
		names[i] = q[i].q_name;
		qv.qv_v[i] = q[i].q_def;
	}
	if (api_query_each(query, names, nq, jobs_qparam, &qv) == -1) {
		send_error(req, 400, "invalid-query");
		return -1;
	}
	for (i = 0; i < nq; i++)
		json_object_object_add(
		    o, q[i].q_name, json_object_new_int64(qv.qv_v[i]));
	return 0;
}

/* {ok: true} plus the answer's keys that are there, of their type. */
static void
jobs_relay(void *arg, const struct ipc_msg *m, uint32_t type,
    const struct json_shape *keys, size_t n)
{
	api_relay(arg, m, type, keys, n, jobs_codes, nitems(jobs_codes));
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
	api_answer(req, m, MSG_JOB_START_OK, keys, nitems(keys), jobs_codes,
	    nitems(jobs_codes));
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
	jobs_relay(arg, m, MSG_JOB_LIST_OK, keys, nitems(keys));
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
	jobs_relay(arg, m, MSG_JOB_GET_OK, keys, nitems(keys));
}

void
api_job_get(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *o;

	if ((o = api_path_id(req, p, "jobId", "invalid-job-id")) == NULL)
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
	jobs_relay(arg, m, MSG_JOB_EVENTS_OK, keys, nitems(keys));
}

void
api_job_events(struct evhttp_request *req, const struct api_params *p)
{
	static const struct jobs_qint q[] = {
	    {"offset", 0, 1LL << 53, 0},
	    {"limit", 1, LIM_JOB_PAGE_MAX, LIM_JOB_PAGE_MAX},
	};
	struct json_object *o;

	if ((o = api_path_id(req, p, "jobId", "invalid-job-id")) == NULL)
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
	jobs_relay(arg, m, MSG_JOB_WAIT_OK, keys, nitems(keys));
}

void
api_job_wait(struct evhttp_request *req, const struct api_params *p)
{
	static const struct jobs_qint q[] = {
	    {"timeoutMs", 0, LIM_JOB_WAIT_MS_MAX, JOBS_WAIT_DEFAULT_MS},
	};
	struct json_object *o, *v;

	if ((o = api_path_id(req, p, "jobId", "invalid-job-id")) == NULL)
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
	jobs_relay(arg, m, MSG_JOB_CANCEL_OK, NULL, 0);
}

void
api_job_cancel(struct evhttp_request *req, const struct api_params *p)
{
	struct json_object *o;

	if ((o = api_path_id(req, p, "jobId", "invalid-job-id")) == NULL)
		return;
	if (api_body_ok(req, p) == 0)
		api_ask(req, broker_peer(PROC_SPAWNER), MSG_JOB_CANCEL, o,
		    MSG_JOB_CANCEL_OK, job_cancel_cb);
	json_object_put(o);
}
