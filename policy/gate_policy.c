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
#include "schema.h"
#include "text.h"

/* A name the gate would refuse whatever the allowlist says. */
static int
never_allowed(const char *s)
{
	return schema_in_list(g_refused, s) || schema_in_list(g_opaque, s) ||
	       gate_has_prefix(s, "mkfs");
}

static char **
gpp_list(struct schema *p, struct json_object *parent, const char *key,
    size_t max, int hosts, size_t *np)
{
	struct json_object *v, *el;
	char path[64], **out;
	const char *s;
	size_t i, j, n;

	*np = 0;
	snprintf(path, sizeof(path), "commands.%s", key);
	if (!schema_get(parent, key, &v))
		return NULL;
	if (!schema_is(v, json_type_array)) {
		schema_err(p, v, parent, path, "must be a list of strings");
		return NULL;
	}
	n = json_object_array_length(v);
	if (n > max) {
		schema_err(p, v, parent, path, "too many entries");
		return NULL;
	}
	if ((out = calloc(n + 1, sizeof(*out))) == NULL) {
		p->oom = 1;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(v, i);
		if (!schema_is(el, json_type_string)) {
			schema_err(p, el, v, path, "must be a string");
			continue;
		}
		s = json_object_get_string(el);
		if (strlen(s) != (size_t)json_object_get_string_len(el) ||
		    (hosts ? !text_dns_name(s, strlen(s), TEXT_DNS_LOWER)
			   : !gate_name_ok(s))) {
			schema_err(p, el, v, path,
			    hosts ? "invalid host name"
				  : "invalid command name");
			continue;
		}
		for (j = 0; j < *np && strcmp(out[j], s) != 0; j++)
			;
		if (j < *np) {
			schema_err(p, el, v, path, "duplicate entry");
			continue;
		}
		if (!hosts && strcmp(key, "allow") == 0 && never_allowed(s)) {
			schema_err(p, el, v, path,
			    "cannot allow an always-refused command");
			continue;
		}
		/*
		 * One that runs the rest of its words (timeout, env, xargs,
		 * find -exec): the gate judges a command by its first word,
		 * so allowing it would allow everything behind it.
		 */
		if (!hosts && strcmp(key, "allow") == 0 &&
		    (schema_in_list(g_wrappers, s) || strcmp(s, "find") == 0)) {
			schema_err(p, el, v, path,
			    "cannot allow a command that runs others");
			continue;
		}
		if ((out[*np] = schema_dup(p, s)) != NULL)
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

	if (!schema_get(node, key, &v) || v == NULL)
		return NULL;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(v, i);
		if (schema_is(el, json_type_string) &&
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
	struct schema p = SCHEMA_INIT(errs, maxerrs);
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
	if (!schema_is(node, json_type_object)) {
		schema_err(&p, node, NULL, "commands", "must be a mapping");
		goto fail;
	}
	schema_keys(&p, node, "commands", keys);
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
			schema_err(&p, gpp_find(node, "deny", out->gp_deny[i]),
			    node, "commands.deny", "also listed in allow");
		if (gate_in_vec(out->gp_ask, out->gp_nask, out->gp_deny[i]))
			schema_err(&p, gpp_find(node, "deny", out->gp_deny[i]),
			    node, "commands.deny", "also listed in ask");
	}
	if (schema_int(&p, node, "askTimeoutSec", "commands.askTimeoutSec",
		GATE_ASK_TIMEOUT_MIN, GATE_ASK_TIMEOUT_MAX, &t) == 1)
		out->gp_ask_timeout_sec = (long)t;
	if (p.oom && p.n == 0)
		schema_err(&p, NULL, node, "commands", "out of memory");
	if (p.n == 0)
		return 0;
fail:
	gate_policy_free(out);
	out->gp_ask_timeout_sec = GATE_ASK_TIMEOUT;
	if (nerrs != NULL)
		*nerrs = p.n;
	return -1;
}

long
gate_ask_timeout(const struct gate_policy *gp)
{
	if (gp->gp_ask_timeout_sec >= GATE_ASK_TIMEOUT_MIN &&
	    gp->gp_ask_timeout_sec <= GATE_ASK_TIMEOUT_MAX)
		return gp->gp_ask_timeout_sec;
	return GATE_ASK_TIMEOUT;
}

long
gate_answer_sec(const struct gate_policy *gp)
{
	return gate_ask_timeout(gp) + GATE_ANSWER_MARGIN;
}

static struct json_object *
strv_json(char *const *v, size_t n)
{
	struct json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

struct json_object *
gate_policy_json(const struct gate_policy *gp)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(
	    o, "allow", strv_json(gp->gp_allow, gp->gp_nallow));
	json_object_object_add(o, "deny", strv_json(gp->gp_deny, gp->gp_ndeny));
	json_object_object_add(o, "ask", strv_json(gp->gp_ask, gp->gp_nask));
	json_object_object_add(
	    o, "hosts", strv_json(gp->gp_hosts, gp->gp_nhosts));
	json_object_object_add(
	    o, "askTimeoutSec", json_object_new_int64(gp->gp_ask_timeout_sec));
	return o;
}
