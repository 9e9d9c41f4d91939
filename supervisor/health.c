/*
 * MSG_HEALTH for the broker: every live daemon's own MSG_STATUS, asked
 * at once with one bound, and what the kernel says of each from outside
 * (/proc/PID/status), gathered into one answer.  Reads the process table
 * through cordond_daemon(); touches only /proc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "cordond.h"
#include "ipc.h"
#include "msg.h"

#define HEALTH_WAIT_S 1 /* for each daemon's status */

struct health_req {
	unsigned int hr_gen; /* broker generation that asked */
	uint32_t hr_id;	     /* its request id */
	int hr_waiting;
	struct json_object *hr_status[PROC_MAX];
};

struct health_sub {
	struct health_req *hs_req;
	enum proc_id hs_proc;
};

/* What the kernel says about a daemon, read from outside. */
static struct json_object *
observed_status(pid_t pid)
{
	struct json_object *o;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return NULL;
	o = json_object_new_object();
	while (fgets(line, sizeof(line), f) != NULL) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(line, "NoNewPrivs:\t", 12) == 0)
			json_object_object_add(o, "noNewPrivs",
			    json_object_new_int(atoi(line + 12)));
		else if (strncmp(line, "Seccomp:\t", 9) == 0)
			json_object_object_add(
			    o, "seccomp", json_object_new_int(atoi(line + 9)));
		else if (strncmp(line, "CapEff:\t", 8) == 0)
			json_object_object_add(
			    o, "capEff", json_object_new_string(line + 8));
		else if (strncmp(line, "Uid:\t", 5) == 0)
			json_object_object_add(
			    o, "uid", json_object_new_int(atoi(line + 5)));
	}
	fclose(f);
	return o;
}

/* One daemon's entry of the answer; 0 if it is not up and answering. */
static int
health_daemon(
    struct health_req *hr, const struct daemon_view *v, struct json_object *arr)
{
	struct json_object *d, *obs;
	int up = hr->hr_status[v->dv_id] != NULL;

	d = json_object_new_object();
	json_object_object_add(
	    d, "name", json_object_new_string(proc_name(v->dv_id)));
	json_object_object_add(d, "up",
	    json_object_new_boolean(v->dv_pid > 0 && v->dv_conn != NULL && up));
	if (v->dv_pid > 0)
		json_object_object_add(
		    d, "pid", json_object_new_int(v->dv_pid));
	json_object_object_add(
	    d, "restarts", json_object_new_int((int)v->dv_restarts));
	if (up) {
		json_object_object_add(d, "status", hr->hr_status[v->dv_id]);
		hr->hr_status[v->dv_id] = NULL;
	}
	if (v->dv_pid > 0 && (obs = observed_status(v->dv_pid)) != NULL)
		json_object_object_add(d, "observed", obs);
	json_object_array_add(arr, d);
	return up;
}

static void
health_finish(struct health_req *hr)
{
	struct daemon_view v, broker;
	struct json_object *o, *arr;
	struct ipc_msg req;
	size_t i;
	int allup = 1;

	o = json_object_new_object();
	arr = json_object_new_array();
	for (i = 0; cordond_daemon(i, &v); i++)
		if (!health_daemon(hr, &v, arr))
			allup = 0;
	json_object_object_add(
	    o, "status", json_object_new_string(allup ? "ok" : "degraded"));
	json_object_object_add(o, "daemons", arr);
	cordond_daemon_of(PROC_BROKER, &broker);
	if (broker.dv_gen == hr->hr_gen && broker.dv_conn != NULL) {
		memset(&req, 0, sizeof(req));
		req.m_id = hr->hr_id;
		ipc_reply(broker.dv_conn, &req, MSG_HEALTH_OK, o, -1);
	}
	json_object_put(o);
	for (i = 0; i < PROC_MAX; i++)
		json_object_put(hr->hr_status[i]);
	free(hr);
}

static void
health_status_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct health_sub *hs = arg;
	struct health_req *hr = hs->hs_req;

	if (m != NULL && m->m_type == MSG_STATUS_OK)
		hr->hr_status[hs->hs_proc] = json_object_get(m->m_obj);
	free(hs);
	if (--hr->hr_waiting == 0)
		health_finish(hr);
}

void
health_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct timeval tv = {HEALTH_WAIT_S, 0};
	struct health_req *hr;
	struct health_sub *hs;
	struct daemon_view v, broker;
	size_t i;

	if ((hr = calloc(1, sizeof(*hr))) == NULL) {
		ipc_reply_error(c, m, "internal");
		return;
	}
	cordond_daemon_of(PROC_BROKER, &broker);
	hr->hr_gen = broker.dv_gen;
	hr->hr_id = m->m_id;
	hr->hr_waiting = 1; /* held until every request is out */
	for (i = 0; cordond_daemon(i, &v); i++) {
		if (v.dv_pid <= 0 || v.dv_conn == NULL ||
		    (hs = calloc(1, sizeof(*hs))) == NULL)
			continue;
		hs->hs_req = hr;
		hs->hs_proc = v.dv_id;
		hr->hr_waiting++;
		if (ipc_request(v.dv_conn, MSG_STATUS, NULL, -1, MSG_STATUS_OK,
			&tv, health_status_cb, hs) == -1) {
			free(hs);
			hr->hr_waiting--;
		}
	}
	if (--hr->hr_waiting == 0)
		health_finish(hr);
}
