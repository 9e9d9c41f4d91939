/*
 * MSG_HEALTH for the broker: every live daemon's own MSG_STATUS, asked
 * at once with one bound (common/health_gather.c, which the broker uses
 * too under systemd), with cordond's view of each (pid, restarts) and
 * what the kernel says of it from outside (/proc/PID/status).  Reads the
 * process table through cordond_daemon(); touches only /proc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "cordond.h"
#include "health_gather.h"
#include "ipc.h"
#include "msg.h"

/* Who asked: the answer goes back only to that broker. */
struct health_req {
	unsigned int hr_gen; /* broker generation that asked */
	uint32_t hr_id;	     /* its request id */
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
health_daemon(struct json_object *status, const struct daemon_view *v,
    struct json_object *arr)
{
	struct json_object *d, *obs;
	int up = v->dv_pid > 0 && v->dv_conn != NULL && status != NULL;

	d = health_entry(v->dv_id, up, status);
	if (v->dv_pid > 0)
		json_object_object_add(
		    d, "pid", json_object_new_int(v->dv_pid));
	json_object_object_add(
	    d, "restarts", json_object_new_int((int)v->dv_restarts));
	if (v->dv_pid > 0 && (obs = observed_status(v->dv_pid)) != NULL)
		json_object_object_add(d, "observed", obs);
	json_object_array_add(arr, d);
	return status != NULL;
}

static void
health_finish(struct json_object *const *status, void *arg)
{
	struct health_req *hr = arg;
	struct daemon_view v, broker;
	struct json_object *o, *arr;
	struct ipc_msg req;
	size_t i;
	int allup = 1;

	arr = json_object_new_array();
	for (i = 0; cordond_daemon(i, &v); i++)
		if (!health_daemon(status[v.dv_id], &v, arr))
			allup = 0;
	o = health_answer(arr, allup);
	cordond_daemon_of(PROC_BROKER, &broker);
	if (broker.dv_gen == hr->hr_gen && broker.dv_conn != NULL) {
		memset(&req, 0, sizeof(req));
		req.m_id = hr->hr_id;
		ipc_reply(broker.dv_conn, &req, MSG_HEALTH_OK, o, -1);
	}
	json_object_put(o);
	free(hr);
}

void
health_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct health_gather *g;
	struct health_req *hr;
	struct daemon_view v, broker;
	size_t i;

	if ((hr = calloc(1, sizeof(*hr))) == NULL ||
	    (g = health_gather_new(health_finish, hr)) == NULL) {
		free(hr);
		ipc_reply_error(c, m, "internal");
		return;
	}
	cordond_daemon_of(PROC_BROKER, &broker);
	hr->hr_gen = broker.dv_gen;
	hr->hr_id = m->m_id;
	for (i = 0; cordond_daemon(i, &v); i++)
		if (v.dv_pid > 0)
			health_gather_ask(g, v.dv_id, v.dv_conn);
	health_gather_go(g);
}
