/*
 * cordon-egressd (EG-1): takes each `network: proxy` run's listener from
 * the spawner and serves CONNECT tunnels to its allowlist (tunnel.c).
 * Reads /etc/resolv.conf (and /etc/hosts) once, before it confines
 * itself, and opens the CA store for credential routes (tls.c); after
 * that, no file at all.  Its channels: cordond, the spawner (runs opened and
 * closed, with their routes' keys: EG-3), auditd (one record per
 * connection or routed request).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "confine.h"
#include "egressd.h"
#include "json.h"
#include "log.h"
#include "manifest_parse.h"
#include "msg.h"
#include "util.h"
#include "egressd_shapes.h"

#define EG_OPEN_MAX (32 * 1024) /* an OPEN payload: 32 rules and a map */

struct egressd eg;

static void egress_open_h(struct ipc_conn *, struct ipc_msg *, void *);
static void egress_close_h(struct ipc_conn *, struct ipc_msg *, void *);

static const struct ipc_dispatch parent_table[] = {
    DAEMON_PARENT_ROWS,
    IPC_END,
};

/* The spawner alone opens and closes runs; the broker asks for health. */
static const struct ipc_dispatch peer_table[] = {
    DAEMON_PEER_STATUS_ROW,
    {MSG_EGRESS_OPEN, PROC_BIT(PROC_SPAWNER), 2, EG_OPEN_MAX, IPC_FD_REQUIRED,
	egress_open_h, IPC_KEYS(open_shape)},
    {MSG_EGRESS_CLOSE, PROC_BIT(PROC_SPAWNER), 2, 128, IPC_FD_NONE,
	egress_close_h, IPC_KEYS(close_shape)},
    IPC_END,
};

static struct erun *
run_find(const char *id)
{
	struct erun *r;

	TAILQ_FOREACH (r, &eg.eg_runs, er_entry)
		if (strcmp(r->er_id, id) == 0)
			return r;
	return NULL;
}

/* EG-3: a run's keys live as long as the run, and no copy after it. */
static void
keys_wipe(struct erun *r)
{
	strv_wipe(r->er_keys, EGRESS_ROUTES_MAX);
}

static void
run_free(struct erun *r, const char *end)
{
	struct tunnel *t;

	while ((t = TAILQ_FIRST(&r->er_tunnels)) != NULL)
		tunnel_close(t, end);
	tunnel_limited_flush(r);
	if (r->er_accept_ev != NULL)
		event_free(r->er_accept_ev);
	if (r->er_accept_pause != NULL)
		event_free(r->er_accept_pause);
	log_limit_end(&r->er_loglim, r->er_id);
	if (r->er_fd != -1)
		close(r->er_fd);
	TAILQ_REMOVE(&eg.eg_runs, r, er_entry);
	eg.eg_nruns--;
	keys_wipe(r);
	free(r);
}

static int
id_ok(const char *s)
{
	return hex_lower_n(s, 16);
}

static int
agent_ok(const char *s)
{
	return mp_name_ok(s, 64);
}

/* The test-only keys: refused unless we run with --test-egress. */
static int
open_test(struct erun *r, struct json_object *o)
{
	struct json_object *map;
	const char *a;
	size_t n = 0;

	if ((a = json_shape_str(o, "testAllowAddress", NULL)) != NULL) {
		if (!eg.eg_test || (r->er_test_allow_fam = egress_ip_parse(
					a, strlen(a), r->er_test_allow)) == 0)
			return -1;
	}
	if (!json_object_object_get_ex(o, "testResolve", &map))
		return 0;
	if (!eg.eg_test ||
	    (size_t)json_object_object_length(map) > EGRESS_TEST_MAX)
		return -1;
	json_object_object_foreach (map, k, v) {
		struct eg_test *t = &r->er_test[n];

		if (!json_object_is_type(v, json_type_string) ||
		    !egress_hostname_ok(k, strlen(k)) ||
		    strlen(k) > EGRESS_HOST_MAX)
			return -1;
		a = json_object_get_string(v);
		if ((t->et_fam = egress_ip_parse(a, strlen(a), t->et_addr)) ==
		    0)
			return -1;
		memcpy(t->et_host, k, strlen(k) + 1);
		n++;
	}
	r->er_ntest = n;
	return 0;
}

/*
 * EG-3: the run's routes, [{name, upstream, auth, baseUrlEnv?, key}]:
 * each upstream on the run's allowlist, each key a header value.
 */
static int
open_routes(struct erun *r, struct json_object *o)
{
	struct json_object *a, *el;
	struct egress_route *ro;
	enum egress_reason why;
	const char *s;
	size_t i, n;

	if (!json_object_object_get_ex(o, "routes", &a))
		return 0;
	n = json_object_array_length(a); /* <= EGRESS_ROUTES_MAX: open_shape */
	for (i = 0; i < n; i++) {
		ro = &r->er_routes[i];
		el = json_object_array_get_idx(a, i);
		if (!json_object_is_type(el, json_type_object) ||
		    (s = json_get_str(el, "name", EGRESS_ROUTE_NAME_MAX)) ==
			NULL ||
		    !mp_name_ok(s, EGRESS_ROUTE_NAME_MAX))
			return -1;
		memcpy(ro->ro_name, s, strlen(s) + 1);
		if ((s = json_get_str(el, "upstream", 512)) == NULL ||
		    egress_upstream_parse(s, strlen(s), ro) == -1 ||
		    egress_match(r->er_allow, r->er_nallow, ro->ro_host,
			ro->ro_ip, ro->ro_addr, ro->ro_port, &why) < 0 ||
		    (s = json_get_str(el, "auth", 32)) == NULL ||
		    egress_auth_parse(s, strlen(s), &ro->ro_auth) == -1 ||
		    (s = json_get_str(el, "key", EGRESS_KEY_MAX)) == NULL ||
		    s[0] == '\0' || strpbrk(s, "\r\n") != NULL)
			return -1;
		/* Known keys only (baseUrlEnv is the spawner's business). */
		json_object_object_foreach (el, k, kv) {
			(void)kv;
			if (strcmp(k, "name") != 0 &&
			    strcmp(k, "upstream") != 0 &&
			    strcmp(k, "auth") != 0 && strcmp(k, "key") != 0 &&
			    strcmp(k, "baseUrlEnv") != 0)
				return -1;
		}
		if ((r->er_keys[i] = strdup(s)) == NULL)
			return -1;
		r->er_nroutes++;
	}
	return 0;
}

/* The OPEN payload into r: its fields' values (the shape is checked). */
static int
open_parse(struct erun *r, struct json_object *o)
{
	struct json_object *allow, *el;
	const char *id, *agent, *s;
	size_t i, n;

	/* Typed and bounded by open_shape; the values are checked here. */
	id = json_shape_str(o, "runId", NULL);
	agent = json_shape_str(o, "agent", NULL);
	if (!id_ok(id) || !agent_ok(agent))
		return -1;
	memcpy(r->er_id, id, strlen(id) + 1);
	memcpy(r->er_agent, agent, strlen(agent) + 1);
	json_object_object_get_ex(o, "allow", &allow);
	if ((n = json_object_array_length(allow)) == 0)
		return -1;
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(allow, i);
		if (!json_object_is_type(el, json_type_string))
			return -1;
		s = json_object_get_string(el);
		if (egress_rule_parse(s, (size_t)json_object_get_string_len(el),
			&r->er_allow[i]) == -1)
			return -1;
	}
	r->er_nallow = n;
	r->er_max_conns = (unsigned int)json_shape_int(o, "maxConnections", 0);
	r->er_max_bytes = (unsigned long long)json_shape_int(o, "maxBytes", 0);
	r->er_idle_sec = (unsigned int)json_shape_int(o, "idleTimeoutSec", 0);
	if (open_routes(r, o) == -1)
		return -1;
	return open_test(r, o);
}

/* A refusal: answered only to a request (a one-way frame has no id). */
static void
open_refused(struct ipc_conn *c, struct ipc_msg *m, const char *code)
{
	if (m->m_id != 0)
		ipc_reply_error(c, m, code);
}

static void
egress_open_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct erun *r;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		open_refused(c, m, "bad-message");
		return;
	}
	r->er_fd = -1;
	TAILQ_INIT(&r->er_tunnels);
	if (open_parse(r, m->m_obj) == -1 || run_find(r->er_id) != NULL ||
	    eg.eg_nruns >= EG_RUNS_MAX) {
		log_warnx("refused a run's egress from the spawner");
		keys_wipe(r);
		free(r);
		open_refused(c, m, "bad-message");
		return;
	}
	set_nonblock(m->m_fd, 1);
	r->er_accept_ev = event_new(
	    eg.eg_d.d_base, m->m_fd, EV_READ | EV_PERSIST, tunnel_accept_cb, r);
	if (r->er_accept_ev == NULL || event_add(r->er_accept_ev, NULL) == -1) {
		if (r->er_accept_ev != NULL)
			event_free(r->er_accept_ev);
		keys_wipe(r);
		free(r);
		open_refused(c, m, "internal");
		return;
	}
	r->er_fd = m->m_fd;
	m->m_fd = -1; /* ours now */
	TAILQ_INSERT_TAIL(&eg.eg_runs, r, er_entry);
	eg.eg_nruns++;
	log_debug("run %s (%s): proxy open", r->er_id, r->er_agent);
	if (m->m_id != 0)
		ipc_reply(c, m, MSG_EGRESS_OPEN_OK, NULL, -1);
}

static void
egress_close_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	const char *id;
	struct erun *r;

	id = json_shape_str(m->m_obj, "runId", NULL);
	if ((r = run_find(id)) != NULL)
		run_free(r, "run-ended");
}

/*
 * A new spawner channel: the runs of the one before are over (a restarted
 * spawner hands over its live runs again).
 */
static void
egress_peer_up(struct daemon *d, enum proc_id p)
{
	struct erun *r;

	if (p != PROC_SPAWNER)
		return;
	while ((r = TAILQ_FIRST(&eg.eg_runs)) != NULL)
		run_free(r, "run-ended");
}

static void
egress_status(struct daemon *d, struct json_object *st)
{
	struct json_object *o = json_object_new_object();
	struct erun *r;
	size_t conns = 0;

	TAILQ_FOREACH (r, &eg.eg_runs, er_entry)
		conns += r->er_nconns;
	json_object_object_add(
	    o, "runs", json_object_new_int64((int64_t)eg.eg_nruns));
	json_object_object_add(
	    o, "connections", json_object_new_int64((int64_t)conns));
	/* Loud: a test-only resolve map is honoured (never in production). */
	json_object_object_add(
	    o, "testEgress", json_object_new_boolean(eg.eg_test));
	json_object_object_add(st, "egress", o);
}

static void
egress_stop(struct daemon *d)
{
	struct erun *r;

	while ((r = TAILQ_FIRST(&eg.eg_runs)) != NULL)
		run_free(r, "run-ended");
	event_base_loopexit(d->d_base, NULL);
}

/* DNS by libevent's evdns: resolv.conf read now, before confinement. */
static void
dns_setup(void)
{
	if ((eg.eg_dns = evdns_base_new(eg.eg_d.d_base,
		 EVDNS_BASE_INITIALIZE_NAMESERVERS |
		     EVDNS_BASE_NAMESERVERS_NO_DEFAULT)) == NULL) {
		/* No resolver configured: every name fails to resolve. */
		log_warnx("no DNS resolver configured; names will not resolve");
		if ((eg.eg_dns = evdns_base_new(eg.eg_d.d_base, 0)) == NULL)
			fatalx("evdns");
	}
	/* EG-2: the name resolved is the name the allowlist matched, never
	 * that name with a search domain of resolv.conf (or of the host's
	 * own name) appended when it does not resolve. */
	evdns_base_search_clear(eg.eg_dns);
	(void)evdns_base_set_option(eg.eg_dns, "timeout:", "3");
	(void)evdns_base_set_option(eg.eg_dns, "attempts:", "2");
	(void)evdns_base_set_option(eg.eg_dns, "randomize-case:", "1");
}

int
main(int argc, char **argv)
{
	static long test = 0;
	const struct daemon_numopt nums[] = {
	    {"test-egress", 0, 1, &test},
	    {NULL, 0, 0, NULL},
	};
	struct daemon_args a;
	struct confine_spec spec;

	log_init("egressd", 0);
	/* --test-ca FILE: honoured only with --test-egress (EG-3 tests). */
	daemon_parse_args(
	    argc, argv, "test-ca", nums, NULL, DAEMON_ARG_PATH_OPT, &a);
	log_init("egressd", a.da_debug);
	eg.eg_test = test == 1;
	if (eg.eg_test)
		log_warnx("TEST MODE: egress.testResolve and testAllowAddress "
			  "are honoured (CORDON_TEST_EGRESS=1); never in "
			  "production");
	TAILQ_INIT(&eg.eg_runs);
	daemon_prepare(&eg.eg_d, PROC_EGRESSD, peer_table, &a);
	eg.eg_d.d_peer_up = egress_peer_up;
	eg.eg_d.d_status_extra = egress_status;
	eg.eg_d.d_stop = egress_stop;
	dns_setup();
	if (a.da_path != NULL && !eg.eg_test)
		fatalx("--test-ca needs --test-egress");
	tls_init(eg.eg_test ? a.da_path : NULL);

	memset(&spec, 0, sizeof(spec));
	spec.cs_name = "egressd";
	spec.cs_user = a.da_user;
	spec.cs_paths = NULL; /* no file access at all */
	spec.cs_npaths = 0;
	spec.cs_seccomp = CONFINE_SECCOMP_ALLOW;
	spec.cs_syscalls =
	    SC_BASE | SC_ACCEPT | SC_EGRESS | daemon_syscalls(&eg.eg_d);
	spec.cs_no_net = 0; /* it is the one daemon that connects out */
	spec.cs_nofile = 4096;
	confine_self(&spec);

	daemon_start(&eg.eg_d, parent_table);
	log_debug("ready");
	daemon_loop(&eg.eg_d);
	return 0;
}
