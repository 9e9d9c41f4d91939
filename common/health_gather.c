/*
 * Health gathered once (health_gather.h): MSG_STATUS to each daemon at
 * once, each with HEALTH_WAIT_S, and the one shape of the answer.
 * Touches nothing but the channels it is given.
 */
#include <stdlib.h>

#include <json-c/json.h>

#include "health_gather.h"
#include "ipc.h"
#include "msg.h"

struct health_gather {
	health_done_fn hg_done;
	void *hg_arg;
	int hg_waiting; /* answers due, + 1 until health_gather_go */
	struct json_object *hg_status[PROC_MAX];
};

struct health_ask {
	struct health_gather *ha_g;
	enum proc_id ha_proc;
};

struct health_gather *
health_gather_new(health_done_fn done, void *arg)
{
	struct health_gather *g;

	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	g->hg_done = done;
	g->hg_arg = arg;
	g->hg_waiting = 1;
	return g;
}

static void
health_gather_end(struct health_gather *g)
{
	size_t i;

	if (--g->hg_waiting > 0)
		return;
	g->hg_done(g->hg_status, g->hg_arg);
	for (i = 0; i < PROC_MAX; i++)
		json_object_put(g->hg_status[i]);
	free(g);
}

static void
health_gather_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct health_ask *ha = arg;
	struct health_gather *g = ha->ha_g;

	if (m != NULL && m->m_type == MSG_STATUS_OK)
		g->hg_status[ha->ha_proc] = json_object_get(m->m_obj);
	free(ha);
	health_gather_end(g);
}

void
health_gather_ask(struct health_gather *g, enum proc_id p, struct ipc_conn *c)
{
	struct timeval tv = {HEALTH_WAIT_S, 0};
	struct health_ask *ha;

	if (c == NULL || (unsigned)p >= PROC_MAX ||
	    (ha = calloc(1, sizeof(*ha))) == NULL)
		return;
	ha->ha_g = g;
	ha->ha_proc = p;
	g->hg_waiting++;
	if (ipc_request(c, MSG_STATUS, NULL, -1, MSG_STATUS_OK, &tv,
		health_gather_cb, ha) == -1) {
		free(ha);
		g->hg_waiting--;
	}
}

void
health_gather_own(
    struct health_gather *g, enum proc_id p, struct json_object *status)
{
	if ((unsigned)p >= PROC_MAX) {
		json_object_put(status);
		return;
	}
	json_object_put(g->hg_status[p]);
	g->hg_status[p] = status;
}

void
health_gather_go(struct health_gather *g)
{
	health_gather_end(g);
}

struct json_object *
health_entry(enum proc_id p, int up, struct json_object *status)
{
	struct json_object *d = json_object_new_object();

	json_object_object_add(d, "name", json_object_new_string(proc_name(p)));
	json_object_object_add(d, "up", json_object_new_boolean(up));
	if (status != NULL)
		json_object_object_add(d, "status", json_object_get(status));
	return d;
}

struct json_object *
health_answer(struct json_object *daemons, int allup)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(
	    o, "status", json_object_new_string(allup ? "ok" : "degraded"));
	json_object_object_add(o, "daemons", daemons);
	return o;
}
