/*
 * The audit schema table and the record validator (AU-2 ... AU-4).
 * Pure: no I/O, no globals but const tables; allocates only the object it
 * hands back.  docs/audit.md mirrors this table.
 */
#include <string.h>

#include <json-c/json.h>

#include "audit_schema.h"
#include "charset.h"
#include "util.h"

/* clang-format off */
static const char *const e_transport[] = {
    "subprocess", "streamJson", "codexJson", "geminiJson", NULL};
static const char *const e_errclass[] = {"spawn-failed", "timeout", "killed",
	"non-zero-exit", "transport-error", "missing-secret", "unknown", NULL};
static const char *const e_run_status[] = {"success", "cancelled", NULL};
static const char *const e_via[] = {"mcp", NULL};
static const char *const e_act_status[] = {"success", "error", NULL};
static const char *const e_vault_action[] = {"create", "update", NULL};
static const char *const e_trigger[] = {"manual", "cron", NULL};
static const char *const e_mission_status[] = {"success", "error", "skipped",
	"denied", NULL};
static const char *const e_verdict[] = {"allow", "deny", "ask-allow",
	"ask-deny", "ask-timeout", NULL};
static const char *const e_method[] = {"GET", "HEAD", "POST", "PUT",
	"DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT", "OTHER", NULL};
static const char *const e_reason[] = {"signal", "fatal", NULL};
static const char *const e_daemon[] = {"auditd", "vaultd", "spawner",
	"broker", "egressd", "sched", "gated", NULL};
static const char *const e_decision[] = {"allow", "deny", NULL};
static const char *const e_eg_reason[] = {"host-not-allowed",
	"port-not-allowed", "address-refused", "resolve-failed",
	"budget-exceeded", "bad-request", "connect-failed", "route-not-found",
	"upstream-tls-failed", "rate-limited", NULL};
static const char *const e_job_state[] = {"succeeded", "failed",
	"cancelled", "lost", NULL};
static const char *const e_cancel[] = {"requested", "shutdown", NULL};
static const char *const e_eg_end[] = {"closed", "idle-timeout",
	"budget-exceeded", "upstream-error", "run-ended", NULL};

#define REQ 1
#define OPT 0
#define S(n, r, p)	{ n, AF_STR, r, p, NULL, 0, 0 }
#define E(n, r, e)	{ n, AF_ENUM, r, 0, e, 0, 0 }
#define I(n, r, lo, hi)	{ n, AF_INT, r, 0, NULL, lo, hi }
#define COUNT(n)	I(n, REQ, 0, AUDIT_COUNT_MAX)
#define EXIT(n)		I(n, REQ, -1, 255)

static const struct audit_field f_invoke[] = {
	S("agent", REQ, AP_NAME), S("runId", REQ, AP_RUNID),
	E("transport", REQ, e_transport), S("bin", REQ, AP_BIN),
	{ "argsRedacted", AF_ARGS, REQ, 0, NULL, 0, AUDIT_ARGS_MAX },
	S("promptSha256", REQ, AP_HEX8), COUNT("promptChars"),
	E("via", OPT, e_via),
};
static const struct audit_field f_complete[] = {
	S("agent", REQ, AP_NAME), S("runId", REQ, AP_RUNID),
	COUNT("durationMs"), EXIT("exitCode"), COUNT("bytesOut"),
	E("status", REQ, e_run_status),
	{ "truncated", AF_BOOL, REQ, 0, NULL, 0, 0 },
};
static const struct audit_field f_error[] = {
	S("agent", REQ, AP_NAME), S("runId", REQ, AP_RUNID),
	E("errorClass", REQ, e_errclass), EXIT("exitCode"),
	S("stderrSha8", REQ, AP_HEX8), COUNT("stderrChars"),
	E("transport", REQ, e_transport),
};
static const struct audit_field f_action[] = {
	S("agent", REQ, AP_NAME), S("actionId", REQ, AP_ACTIONID),
	EXIT("exitCode"), COUNT("durationMs"), COUNT("stdoutChars"),
	COUNT("stderrChars"), E("status", REQ, e_act_status),
	E("errorClass", OPT, e_errclass),
};
static const struct audit_field f_vault[] = {
	S("agent", OPT, AP_NAME), S("missionId", OPT, AP_NAME),
	S("path", OPT, AP_VPATH), E("action", REQ, e_vault_action),
	COUNT("bytes"),
};
static const struct audit_field f_mission[] = {
	S("missionId", REQ, AP_NAME), S("runId", REQ, AP_RUNID),
	E("trigger", REQ, e_trigger), E("status", REQ, e_mission_status),
	COUNT("durationMs"), COUNT("outputsPersisted"),
	COUNT("outputsEmitted"), S("errorClass", OPT, AP_ERRWORD),
};
static const struct audit_field f_verb[] = {
	S("agent", OPT, AP_NAME), S("runId", OPT, AP_RUNID),
	S("verb", REQ, AP_BIN), E("verdict", REQ, e_verdict),
	S("rule", REQ, AP_RULE),
	I("refused", OPT, 1, AUDIT_COUNT_MAX), /* rule rate-limited */
};
static const struct audit_field f_http[] = {
	E("method", REQ, e_method), S("route", REQ, AP_ROUTE),
	I("status", REQ, 100, 599), COUNT("durationMs"), COUNT("bytesIn"),
	COUNT("bytesOut"),
};
/* EG-4: never a header, a body or a key; host only once it matched. */
static const struct audit_field f_egress[] = {
	S("runId", REQ, AP_RUNID), S("agent", REQ, AP_NAME),
	S("host", OPT, AP_HOST), I("port", OPT, 1, 65535),
	E("decision", REQ, e_decision), S("rule", OPT, AP_RULE),
	E("reason", OPT, e_eg_reason), E("end", OPT, e_eg_end),
	COUNT("bytesUp"), COUNT("bytesDown"), COUNT("durationMs"),
	I("refused", OPT, 1, AUDIT_COUNT_MAX), /* reason rate-limited */
};
/* EG-3, EG-4: a routed request; the route's name, never its path. */
static const struct audit_field f_egress_req[] = {
	S("runId", REQ, AP_RUNID), S("agent", REQ, AP_NAME),
	S("route", OPT, AP_NAME), S("host", OPT, AP_HOST),
	I("port", OPT, 1, 65535), E("decision", REQ, e_decision),
	S("rule", OPT, AP_RULE), E("reason", OPT, e_eg_reason),
	E("end", OPT, e_eg_end), I("status", OPT, 100, 599),
	COUNT("bytesUp"), COUNT("bytesDown"), COUNT("durationMs"),
};
/* MC-3: a detached job's life; its run has its own agent.* records. */
static const struct audit_field f_job_start[] = {
	S("jobId", REQ, AP_RUNID), S("agent", REQ, AP_NAME),
	E("via", OPT, e_via),
};
static const struct audit_field f_job_end[] = {
	S("jobId", REQ, AP_RUNID), S("agent", REQ, AP_NAME),
	E("state", REQ, e_job_state), E("cancelReason", OPT, e_cancel),
	COUNT("durationMs"), COUNT("events"), COUNT("bytes"),
};
static const struct audit_field f_wt_create[] = {
	S("worktreeId", REQ, AP_RUNID), S("agent", REQ, AP_NAME),
};
static const struct audit_field f_wt_remove[] = {
	S("worktreeId", REQ, AP_RUNID),
};
static const struct audit_field f_boot[] = { S("version", REQ, AP_VERSION) };
static const struct audit_field f_shutdown[] = { E("reason", REQ, e_reason) };
static const struct audit_field f_restart[] = {
	E("daemon", REQ, e_daemon), COUNT("restarts"),
};
static const struct audit_field f_retention[] = {
	{ "deleted", AF_DATES, REQ, 0, NULL, 0, AUDIT_DATES_MAX },
};

#define K(name, senders, f)	{ name, senders, f, nitems(f) }
#define SPAWNER	PROC_BIT(PROC_SPAWNER)

static const struct audit_kind kinds[] = {
	K("agent.invoke", SPAWNER, f_invoke),
	K("agent.invoke.complete", SPAWNER, f_complete),
	K("agent.invoke.error", SPAWNER, f_error),
	K("agent.action", SPAWNER, f_action),
	K("vault.write", PROC_BIT(PROC_VAULTD), f_vault),
	K("vault.update", PROC_BIT(PROC_VAULTD), f_vault),
	K("mission.run", SPAWNER, f_mission),
	K("verb.run", PROC_BIT(PROC_GATED), f_verb),
	K("job.start", SPAWNER, f_job_start),
	K("job.end", SPAWNER, f_job_end),
	K("worktree.create", SPAWNER, f_wt_create),
	K("worktree.remove", SPAWNER, f_wt_remove),
	K("http.request", PROC_BIT(PROC_BROKER), f_http),
	K("egress.connect", PROC_BIT(PROC_EGRESSD), f_egress),
	K("egress.request", PROC_BIT(PROC_EGRESSD), f_egress_req),
	K("system.boot", PROC_BIT(PROC_PARENT), f_boot),
	K("system.shutdown", PROC_BIT(PROC_PARENT), f_shutdown),
	K("system.restart", PROC_BIT(PROC_PARENT), f_restart),
	/* Written by auditd itself, never accepted over a channel. */
	K("audit.retention", PROC_BIT(PROC_AUDITD), f_retention),
};
/* clang-format on */

const struct audit_kind *
audit_kinds(size_t *n)
{
	*n = nitems(kinds);
	return kinds;
}

const struct audit_kind *
audit_kind_lookup(const char *kind)
{
	size_t i;

	for (i = 0; i < nitems(kinds); i++)
		if (strcmp(kinds[i].ak_kind, kind) == 0)
			return &kinds[i];
	return NULL;
}

/* Vault-relative path: no empty, "." or ".." component. */
static int
vpath_ok(const char *s, size_t len)
{
	size_t i, start = 0;

	if (!charset_shape(s, len, "a-zA-Z0-9._/-", "a-zA-Z0-9._/-", 1, 512))
		return 0;
	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '/')
			continue;
		if (i == start || (i - start == 1 && s[start] == '.') ||
		    (i - start == 2 && s[start] == '.' && s[start + 1] == '.'))
			return 0;
		start = i + 1;
	}
	return 1;
}

static int
date_ok(const char *s, size_t len)
{
	size_t i;

	if (len != 10)
		return 0;
	for (i = 0; i < len; i++)
		if ((i == 4 || i == 7) ? s[i] != '-'
				       : !charset_has("0-9", s[i]))
			return 0;
	return 1;
}

int
audit_pattern_ok(enum audit_pat p, const char *s, size_t len)
{
	switch (p) {
	case AP_NAME:
		return charset_shape(s, len, "a-z0-9", "a-z0-9-", 1, 64);
	case AP_ACTIONID:
		return charset_shape(s, len, "a-z0-9", "a-z0-9-", 1, 32);
	case AP_RUNID:
		return charset_shape(s, len, "0-9a-f", "0-9a-f", 16, 16);
	case AP_HEX8:
		return charset_shape(s, len, "0-9a-f", "0-9a-f", 8, 8);
	case AP_BIN:
		return charset_shape(
		    s, len, "a-zA-Z0-9._+-", "a-zA-Z0-9._+-", 1, 64);
	case AP_VPATH:
		return vpath_ok(s, len);
	case AP_VERSION:
		return charset_shape(
		    s, len, "a-zA-Z0-9.+-", "a-zA-Z0-9.+-", 1, 32);
	case AP_ROUTE:
		return charset_shape(
		    s, len, "a-z0-9/{}._-", "a-z0-9/{}._-", 1, 64);
	case AP_RULE:
		return charset_shape(s, len, "a-z0-9", "a-z0-9.-", 1, 64);
	case AP_ERRWORD:
		return charset_shape(s, len, "a-z", "a-z-", 1, 32);
	case AP_DATE:
		return date_ok(s, len);
	case AP_HOST:
		return charset_shape(s, len, "a-z0-9:", "a-z0-9.:-", 1, 253);
	}
	return 0;
}

/* A string value: its bytes and length, or NULL. */
static const char *
str_of(struct json_object *v, size_t *len)
{
	int n;

	if (!json_object_is_type(v, json_type_string))
		return NULL;
	n = json_object_get_string_len(v);
	if (n < 0)
		return NULL;
	*len = (size_t)n;
	return json_object_get_string(v);
}

static int
printable(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return 0;
	return 1;
}

/* A checked copy of one field's value, or NULL. */
static struct json_object *
field_value(const struct audit_field *f, struct json_object *v)
{
	struct json_object *arr, *e;
	const char *s;
	size_t len, i, n;
	int64_t x;

	switch (f->af_type) {
	case AF_STR:
		if ((s = str_of(v, &len)) == NULL ||
		    !audit_pattern_ok(f->af_pat, s, len))
			return NULL;
		return json_object_new_string_len(s, (int)len);
	case AF_ENUM:
		if ((s = str_of(v, &len)) == NULL)
			return NULL;
		for (i = 0; f->af_enum[i] != NULL; i++)
			if (strlen(f->af_enum[i]) == len &&
			    memcmp(f->af_enum[i], s, len) == 0)
				return json_object_new_string(f->af_enum[i]);
		return NULL;
	case AF_INT:
		if (!json_object_is_type(v, json_type_int))
			return NULL;
		/* json-c keeps values above INT64_MAX as uint64. */
		if (json_object_get_int64(v) == INT64_MAX)
			return NULL;
		x = json_object_get_int64(v);
		if (x < f->af_min || x > f->af_max)
			return NULL;
		return json_object_new_int64(x);
	case AF_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return NULL;
		return json_object_new_boolean(json_object_get_boolean(v));
	case AF_ARGS:
	case AF_DATES:
		if (!json_object_is_type(v, json_type_array) ||
		    (n = json_object_array_length(v)) > (size_t)f->af_max)
			return NULL;
		if ((arr = json_object_new_array_ext((int)n)) == NULL)
			return NULL;
		for (i = 0; i < n; i++) {
			e = json_object_array_get_idx(v, i);
			if ((s = str_of(e, &len)) == NULL ||
			    (f->af_type == AF_ARGS ? (len > AUDIT_ARG_MAX ||
							 !printable(s, len))
						   : !date_ok(s, len)) ||
			    json_object_array_add(
				arr, json_object_new_string_len(s, (int)len))) {
				json_object_put(arr);
				return NULL;
			}
		}
		return arr;
	}
	return NULL;
}

/* Rules across fields (MI-4: a mission note's path is never recorded). */
static int
cross_ok(const struct audit_kind *k, struct json_object *out)
{
	int agent, mission, path;

	if (k->ak_fields != f_vault)
		return 1;
	agent = json_object_object_get_ex(out, "agent", NULL);
	mission = json_object_object_get_ex(out, "missionId", NULL);
	path = json_object_object_get_ex(out, "path", NULL);
	if (agent == mission)
		return 0;
	return agent ? path : !path;
}

int
audit_validate(
    struct json_object *rec, enum proc_id from, struct json_object **out)
{
	const struct audit_kind *k;
	struct json_object *o, *v, *copy;
	const char *kind;
	size_t i, len, seen = 1; /* "kind" */

	*out = NULL;
	if (rec == NULL || !json_object_is_type(rec, json_type_object) ||
	    !json_object_object_get_ex(rec, "kind", &v) ||
	    (kind = str_of(v, &len)) == NULL || len > AUDIT_KIND_MAX ||
	    strlen(kind) != len || (k = audit_kind_lookup(kind)) == NULL ||
	    (unsigned)from >= PROC_MAX || (k->ak_senders & PROC_BIT(from)) == 0)
		return -1;
	if ((o = json_object_new_object()) == NULL)
		return -1;
	json_object_object_add(o, "kind", json_object_new_string(k->ak_kind));
	for (i = 0; i < k->ak_nfields; i++) {
		const struct audit_field *f = &k->ak_fields[i];

		if (!json_object_object_get_ex(rec, f->af_name, &v)) {
			if (f->af_required)
				goto bad;
			continue;
		}
		if ((copy = field_value(f, v)) == NULL)
			goto bad;
		json_object_object_add(o, f->af_name, copy);
		seen++;
	}
	/* Every key was one of the kind's fields: nothing else passes. */
	if ((size_t)json_object_object_length(rec) != seen || !cross_ok(k, o))
		goto bad;
	*out = o;
	return 0;
bad:
	json_object_put(o);
	return -1;
}
