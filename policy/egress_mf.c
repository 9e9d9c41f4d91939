/*
 * The manifest's `egress:` block (EG-2, EG-4): the allowlist of a
 * `sandbox.network: proxy` agent and its per-run budget, checked
 * strictly; plus its credential routes (egress_route.c) and two
 * test-only keys.  Pure: allocates only into the
 * manifest.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "egress.h"
#include "manifest.h"
#include "schema.h"
#include "text.h"

static const char *const eg_keys[] = {"allow", "maxConnections", "maxBytes",
    "idleTimeoutSec", "testResolve", "testAllowAddress", "routes", NULL};

static void
eg_allow(struct schema *p, struct mf_egress *e, struct json_object *eg)
{
	struct json_object *v, *el;
	const char *s;
	size_t i, n, len;

	if (!schema_key(p, eg, "allow", "egress.allow", 1, &v))
		return;
	if (!schema_is(v, json_type_array) ||
	    (n = json_object_array_length(v)) == 0 || n > EGRESS_ALLOW_MAX) {
		schema_err(p, v, eg, "egress.allow",
		    "must be a list of 1 to 32 hosts");
		return;
	}
	if ((e->eg_allow = calloc(n, sizeof(*e->eg_allow))) == NULL) {
		p->oom = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(v, i);
		if ((s = schema_string(p, el, v, "egress.allow", &len)) == NULL)
			continue;
		if (egress_rule_parse(s, len, &e->eg_allow[e->eg_nallow]) ==
		    -1) {
			schema_err(p, el, v, "egress.allow",
			    "must be host, *.domain or an address, with an "
			    "optional :port (1-65535)");
			continue;
		}
		e->eg_nallow++;
	}
}

/* Test-only: names answered from this map instead of DNS. */
static void
eg_test(struct schema *p, struct mf_egress *e, struct json_object *eg)
{
	struct json_object *v;
	unsigned char a[16];
	const char *s;
	size_t n, len;

	if (schema_get(eg, "testAllowAddress", &v)) {
		if ((s = schema_string(
			 p, v, eg, "egress.testAllowAddress", &len)) != NULL &&
		    (egress_ip_parse(s, len, a) == 0 ||
			len >= sizeof(e->eg_test_allow)))
			schema_err(p, v, eg, "egress.testAllowAddress",
			    "must be an address");
		else if (s != NULL)
			memcpy(e->eg_test_allow, s, len + 1);
	}
	if (!schema_get(eg, "testResolve", &v))
		return;
	if (!schema_is(v, json_type_object) ||
	    (n = (size_t)json_object_object_length(v)) > EGRESS_TEST_MAX) {
		schema_err(p, v, eg, "egress.testResolve",
		    "must be a mapping of at most 8 names to addresses");
		return;
	}
	if ((e->eg_test = calloc(n + 1, sizeof(*e->eg_test))) == NULL) {
		p->oom = 1;
		return;
	}
	json_object_object_foreach (v, k, av) {
		struct mf_egress_test *t = &e->eg_test[e->eg_ntest];

		s = schema_string(p, av, v, "egress.testResolve", &len);
		if (s == NULL)
			continue;
		if (!egress_hostname_ok(k, strlen(k)) ||
		    egress_ip_parse(s, len, a) == 0 ||
		    len >= sizeof(t->et_addr)) {
			schema_err(p, av, v, "egress.testResolve",
			    "must map host names to addresses");
			continue;
		}
		text_lower_copy(t->et_host, k, strlen(k));
		memcpy(t->et_addr, s, len + 1);
		e->eg_ntest++;
	}
}

struct json_object *
mf_egress_json(const struct mf_egress *e)
{
	struct json_object *o = json_object_new_object(), *a;
	char rule[EGRESS_RULE_MAX + 1];
	size_t i;

	a = json_object_new_array();
	for (i = 0; i < e->eg_nallow; i++)
		if (egress_rule_format(&e->eg_allow[i], rule, sizeof(rule)) ==
		    0)
			json_object_array_add(a, json_object_new_string(rule));
	json_object_object_add(o, "allow", a);
	json_object_object_add(o, "maxConnections",
	    json_object_new_int64((int64_t)e->eg_max_conns));
	json_object_object_add(
	    o, "maxBytes", json_object_new_int64((int64_t)e->eg_max_bytes));
	json_object_object_add(o, "idleTimeoutSec",
	    json_object_new_int64((int64_t)e->eg_idle_sec));
	if (e->eg_nroutes > 0)
		json_object_object_add(o, "routes", mf_egress_routes_json(e));
	return o;
}

void
mf_egress_parse(struct schema *p, struct manifest *m, struct json_object *root)
{
	struct mf_egress *e = &m->m_egress;
	struct json_object *eg;
	long long x;

	e->eg_max_conns = EGRESS_CONNS_DEF;
	e->eg_max_bytes = EGRESS_BYTES_DEF;
	e->eg_idle_sec = EGRESS_IDLE_DEF;
	if (!schema_get(root, "egress", &eg)) {
		if (m->m_sandbox.sb_network == MF_NET_PROXY)
			schema_err(p, NULL, root, "egress",
			    "missing: sandbox.network proxy needs "
			    "egress.allow");
		return;
	}
	if (!schema_is(eg, json_type_object)) {
		schema_err(p, eg, root, "egress", "must be a mapping");
		return;
	}
	e->eg_present = 1;
	if (m->m_sandbox.sb_network != MF_NET_PROXY)
		schema_err(
		    p, eg, root, "egress", "needs sandbox.network: proxy");
	schema_keys(p, eg, "egress", eg_keys);
	eg_allow(p, e, eg);
	mf_egress_routes(p, m, eg); /* EG-3: checked against allow */
	if (schema_int(p, eg, "maxConnections", "egress.maxConnections", 1,
		EGRESS_CONNS_MAX, &x) == 1)
		e->eg_max_conns = (unsigned int)x;
	if (schema_int(p, eg, "maxBytes", "egress.maxBytes", 1,
		(long long)EGRESS_BYTES_MAX, &x) == 1)
		e->eg_max_bytes = (unsigned long long)x;
	if (schema_int(p, eg, "idleTimeoutSec", "egress.idleTimeoutSec", 1,
		EGRESS_IDLE_MAX, &x) == 1)
		e->eg_idle_sec = (unsigned int)x;
	eg_test(p, e, eg);
}
