/*
 * A `network: proxy` run's side of egress (EG-1): the listener its child
 * made inside the run's own network namespace goes to egressd with the
 * run's id, agent and allowlist (MSG_EGRESS_OPEN), again to a restarted
 * egressd, and is closed there when the run ends (MSG_EGRESS_CLOSE).
 * The spawner keeps its own copy meanwhile, so connections wait in the
 * backlog while egressd restarts.  Actions and probes get no proxy:
 * their listener is closed, so a connection is refused at once.
 * egressd tells of each connection as it opens and ends
 * (MSG_EGRESS_CONN): checked here, it goes to the run's stream as an
 * "egress" event (the dashboard's run view).  EG-3: the keys of the
 * run's credential routes go with it, to egressd alone (the agent's env
 * holds a placeholder); the run's copy is wiped when it ends.  Touches
 * only the listener it is given.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "egress.h"
#include "json.h"
#include "log.h"
#include "msg.h"
#include "run.h"
#include "spawner.h"
#include "util.h"

static int
one_of(const char *s, const char *const *set, size_t n)
{
	size_t i;

	for (i = 0; s != NULL && i < n; i++)
		if (strcmp(s, set[i]) == 0)
			return 1;
	return 0;
}

/* "allow.N", N a rule index. */
static int
rule_ok(const char *s)
{
	size_t i;

	if (s == NULL || strncmp(s, "allow.", 6) != 0 || s[6] == '\0')
		return 0;
	for (i = 6; s[i] != '\0'; i++)
		if (s[i] < '0' || s[i] > '9' || i > 8)
			return 0;
	return 1;
}

static int
reason_ok(const char *s)
{
	int r;

	for (r = ER_NONE + 1; s != NULL && r < ER_MAX; r++)
		if (strcmp(s, egress_reason_name((enum egress_reason)r)) == 0)
			return 1;
	return 0;
}

/*
 * MSG_EGRESS_CONN: egressd trusts less than we do.  Its keys, types and
 * bounds are the row's shape (spawner_shapes.h); the values here.
 */
static int
conn_ok(struct json_object *o)
{
	static const char *const states[] = {"open", "end"};
	static const char *const decisions[] = {"allow", "deny"};
	static const char *const ends[] = {"closed", "upstream-error",
	    "idle-timeout", "budget-exceeded", "run-ended"};
	unsigned char a[16];
	const char *s;

	if (!one_of(json_shape_str(o, "state", NULL), states, nitems(states)) ||
	    !one_of(json_shape_str(o, "decision", NULL), decisions,
		nitems(decisions)))
		return 0;
	if ((s = json_shape_str(o, "host", NULL)) != NULL &&
	    !egress_hostname_ok(s, strlen(s)) &&
	    egress_ip_parse(s, strlen(s), a) == 0)
		return 0;
	if ((s = json_shape_str(o, "rule", NULL)) != NULL && !rule_ok(s))
		return 0;
	if ((s = json_shape_str(o, "reason", NULL)) != NULL && !reason_ok(s))
		return 0;
	if ((s = json_shape_str(o, "end", NULL)) != NULL &&
	    !one_of(s, ends, nitems(ends)))
		return 0;
	return 1;
}

void
egress_conn_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *ev;
	const char *id;

	if (!conn_ok(m->m_obj)) {
		log_warnx("refused a connection report from egressd");
		return;
	}
	id = json_shape_str(m->m_obj, "runId", NULL);
	ev = run_ev("egress");
	json_object_object_foreach (m->m_obj, k, v)
		if (strcmp(k, "runId") != 0)
			json_object_object_add(ev, k, json_object_get(v));
	run_event_id(id, ev);
}

/* EG-3: each route with a key gets it; a route without one is left out
 * (egressd answers route-not-found). */
static void
routes_keys(const struct aproc *ap, struct json_object *o)
{
	const struct mf_egress *e = ap->ap_egress;
	struct json_object *a, *el, *keep;
	size_t i;

	if (!json_object_object_get_ex(o, "routes", &a))
		return;
	keep = json_object_new_array();
	for (i = 0; i < e->eg_nroutes; i++) {
		if (ap->ap_egress_keys[i] == NULL)
			continue;
		el = json_object_get(json_object_array_get_idx(a, i));
		json_object_object_add(
		    el, "key", json_object_new_string(ap->ap_egress_keys[i]));
		json_object_array_add(keep, el);
	}
	json_object_object_add(o, "routes", keep);
}

static struct json_object *
open_payload(const struct aproc *ap, const struct mf_egress *e)
{
	struct json_object *o = mf_egress_json(e), *m;
	size_t i;

	json_object_object_add(
	    o, "runId", json_object_new_string(ap->ap_run_id));
	json_object_object_add(
	    o, "agent", json_object_new_string(ap->ap_agent));
	/* Test-only keys: manifests.c loads them only in test mode. */
	if (e->eg_ntest > 0) {
		m = json_object_new_object();
		for (i = 0; i < e->eg_ntest; i++)
			json_object_object_add(m, e->eg_test[i].et_host,
			    json_object_new_string(e->eg_test[i].et_addr));
		json_object_object_add(o, "testResolve", m);
	}
	if (e->eg_test_allow[0] != '\0')
		json_object_object_add(o, "testAllowAddress",
		    json_object_new_string(e->eg_test_allow));
	routes_keys(ap, o);
	return o;
}

static void
egress_send(struct aproc *ap)
{
	struct ipc_conn *c = sp.sp_d.d_peers[PROC_EGRESSD];
	struct json_object *o;
	int fd;

	if (c == NULL) {
		log_warnx("run %s: egressd is down; its proxy waits for it",
		    ap->ap_run_id);
		return;
	}
	if ((fd = fcntl(ap->ap_egress_fd, F_DUPFD_CLOEXEC, 3)) == -1) {
		log_warn("run %s: egress listener", ap->ap_run_id);
		return;
	}
	o = open_payload(ap, ap->ap_egress);
	if (ipc_send(c, MSG_EGRESS_OPEN, o, fd) == -1)
		log_warnx(
		    "run %s: cannot hand its proxy to egressd", ap->ap_run_id);
	json_wipe_put(o); /* the keys' copies in it */
}

/* EG-3: the value of the run's secret named name, or NULL. */
static const char *
key_of(const struct secret_set *ss, const char *name)
{
	size_t i;

	for (i = 0; ss != NULL && i < ss->ss_n; i++)
		if (strcmp(ss->ss_names[i], name) == 0)
			return ss->ss_values[i];
	return NULL;
}

static void
keys_wipe(struct aproc *ap)
{
	strv_wipe(ap->ap_egress_keys, EGRESS_ROUTES_MAX);
}

void
egress_run_open(struct aproc *ap, const char *run_id, const struct mf_egress *e,
    const struct secret_set *ss, int fd)
{
	const char *k;
	size_t i;

	if (run_id == NULL || strlen(run_id) != 16 || e == NULL) {
		close(fd); /* no proxy: connections are refused at once */
		return;
	}
	memcpy(ap->ap_run_id, run_id, 17);
	ap->ap_egress = e;
	ap->ap_egress_fd = fd;
	for (i = 0; i < e->eg_nroutes && i < EGRESS_ROUTES_MAX; i++)
		if ((k = key_of(ss, e->eg_routes[i].mr_secret)) != NULL &&
		    (ap->ap_egress_keys[i] = strdup(k)) == NULL)
			log_warnx("run %s: a route's key: out of memory",
			    ap->ap_run_id);
	egress_send(ap);
}

void
egress_run_close(struct aproc *ap)
{
	struct ipc_conn *c = sp.sp_d.d_peers[PROC_EGRESSD];
	struct json_object *o;

	if (ap->ap_egress_fd == -1)
		return;
	if (c != NULL) {
		o = json_object_new_object();
		json_object_object_add(
		    o, "runId", json_object_new_string(ap->ap_run_id));
		(void)ipc_send(c, MSG_EGRESS_CLOSE, o, -1);
		json_object_put(o);
	}
	close(ap->ap_egress_fd);
	ap->ap_egress_fd = -1;
	keys_wipe(ap);
}

void
egress_peer_up(void)
{
	struct aproc *ap;

	TAILQ_FOREACH (ap, &sp.sp_procs, ap_entry)
		if (ap->ap_egress_fd != -1)
			egress_send(ap);
}
