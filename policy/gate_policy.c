/*
 * The manifest's `commands:` block for the command gate (SBX-6, SBX-7):
 * validated into a struct gate_policy, problems reported with line:col.
 * Pure: it allocates only what gate_policy_free hands back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gate_impl.h"
#include "yamljson.h"

struct gpp {
	struct policy_err *errs;
	size_t max, n;
	int oom;
};

static void
gpp_err(struct gpp *p, struct json_object *at, struct json_object *parent,
    const char *path, const char *msg)
{
	struct policy_err *e;
	unsigned long l = 0, c = 0;

	if (p->n < p->max) {
		e = &p->errs[p->n];
		if (yaml_mark(at, &l, &c) == -1 &&
		    yaml_mark(parent, &l, &c) == -1) {
			l = 0;
			c = 0;
		}
		e->pe_line = l;
		e->pe_col = c;
		snprintf(e->pe_msg, sizeof(e->pe_msg), "%s: %s", path, msg);
	}
	p->n++;
}

/* A name the gate would refuse whatever the allowlist says. */
static int
never_allowed(const char *s)
{
	return gate_in_list(g_refused, s) || gate_in_list(g_opaque, s) ||
	       gate_has_prefix(s, "mkfs");
}

static char **
gpp_list(struct gpp *p, struct json_object *parent, const char *key, size_t max,
    int hosts, size_t *np)
{
	struct json_object *v, *el;
	char path[64], **out;
	const char *s;
	size_t i, j, n;

	*np = 0;
	snprintf(path, sizeof(path), "commands.%s", key);
	if (!json_object_object_get_ex(parent, key, &v))
		return NULL;
	if (v == NULL || !json_object_is_type(v, json_type_array)) {
		gpp_err(p, v, parent, path, "must be a list of strings");
		return NULL;
	}
	n = json_object_array_length(v);
	if (n > max) {
		gpp_err(p, v, parent, path, "too many entries");
		return NULL;
	}
	if ((out = calloc(n + 1, sizeof(*out))) == NULL) {
		p->oom = 1;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(v, i);
		if (el == NULL || !json_object_is_type(el, json_type_string)) {
			gpp_err(p, el, v, path, "must be a string");
			continue;
		}
		s = json_object_get_string(el);
		if (strlen(s) != (size_t)json_object_get_string_len(el) ||
		    (hosts ? !gate_dns_ok(s) : !gate_name_ok(s))) {
			gpp_err(p, el, v, path,
			    hosts ? "invalid host name"
				  : "invalid command name");
			continue;
		}
		for (j = 0; j < *np && strcmp(out[j], s) != 0; j++)
			;
		if (j < *np) {
			gpp_err(p, el, v, path, "duplicate entry");
			continue;
		}
		if (!hosts && strcmp(key, "allow") == 0 && never_allowed(s)) {
			gpp_err(p, el, v, path,
			    "cannot allow an always-refused command");
			continue;
		}
		if ((out[*np] = strdup(s)) == NULL) {
			p->oom = 1;
			continue;
		}
		(*np)++;
	}
	return out;
}

/* The element of list key equal to s (for its mark). */
static struct json_object *
gpp_find(struct json_object *node, const char *key, const char *s)
{
	struct json_object *v, *el;
	size_t i, n;

	if (!json_object_object_get_ex(node, key, &v) || v == NULL)
		return NULL;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(v, i);
		if (el != NULL && json_object_is_type(el, json_type_string) &&
		    strcmp(json_object_get_string(el), s) == 0)
			return el;
	}
	return NULL;
}

static void
strv_free(char **v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
gate_policy_free(struct gate_policy *gp)
{
	if (gp == NULL)
		return;
	strv_free(gp->gp_allow, gp->gp_nallow);
	strv_free(gp->gp_deny, gp->gp_ndeny);
	strv_free(gp->gp_ask, gp->gp_nask);
	strv_free(gp->gp_hosts, gp->gp_nhosts);
	memset(gp, 0, sizeof(*gp));
}

int
gate_policy_parse(struct json_object *node, struct gate_policy *out,
    struct policy_err *errs, size_t maxerrs, size_t *nerrs)
{
	static const char *const keys[] = {
	    "allow", "deny", "ask", "hosts", "askTimeoutSec", NULL};
	struct json_object *v;
	struct gpp p = {errs, maxerrs, 0, 0};
	size_t i;
	long long t;

	if (nerrs != NULL)
		*nerrs = 0;
	if (out == NULL)
		return -1;
	memset(out, 0, sizeof(*out));
	out->gp_ask_timeout_sec = GATE_ASK_TIMEOUT;
	if (node == NULL)
		return 0;
	if (!json_object_is_type(node, json_type_object)) {
		gpp_err(&p, node, NULL, "commands", "must be a mapping");
		goto fail;
	}
	json_object_object_foreach (node, k, kv) {
		if (!gate_in_list(keys, k))
			gpp_err(&p, kv, node, "commands", "unknown key");
	}
	out->gp_allow =
	    gpp_list(&p, node, "allow", GATE_NAMES_MAX, 0, &out->gp_nallow);
	out->gp_deny =
	    gpp_list(&p, node, "deny", GATE_NAMES_MAX, 0, &out->gp_ndeny);
	out->gp_ask =
	    gpp_list(&p, node, "ask", GATE_NAMES_MAX, 0, &out->gp_nask);
	out->gp_hosts =
	    gpp_list(&p, node, "hosts", GATE_HOSTS_MAX, 1, &out->gp_nhosts);
	for (i = 0; i < out->gp_ndeny; i++) {
		if (gate_in_vec(out->gp_allow, out->gp_nallow, out->gp_deny[i]))
			gpp_err(&p, gpp_find(node, "deny", out->gp_deny[i]),
			    node, "commands.deny", "also listed in allow");
		if (gate_in_vec(out->gp_ask, out->gp_nask, out->gp_deny[i]))
			gpp_err(&p, gpp_find(node, "deny", out->gp_deny[i]),
			    node, "commands.deny", "also listed in ask");
	}
	if (json_object_object_get_ex(node, "askTimeoutSec", &v)) {
		if (v == NULL || !json_object_is_type(v, json_type_int))
			gpp_err(&p, v, node, "commands.askTimeoutSec",
			    "must be an integer");
		else if ((t = (long long)json_object_get_int64(v)) < 5 ||
			 t > 600)
			gpp_err(&p, v, node, "commands.askTimeoutSec",
			    "out of range");
		else
			out->gp_ask_timeout_sec = (long)t;
	}
	if (p.oom && p.n == 0)
		gpp_err(&p, NULL, node, "commands", "out of memory");
	if (p.n == 0)
		return 0;
fail:
	gate_policy_free(out);
	out->gp_ask_timeout_sec = GATE_ASK_TIMEOUT;
	if (nerrs != NULL)
		*nerrs = p.n;
	return -1;
}
