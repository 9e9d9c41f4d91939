/*
 * Control Room actions (API-5): a manifest-declared command under the
 * same spawn rules as runs, bounded in time (default 5 s, at most 60 s)
 * and bytes (256 KiB per stream), answered once, cleaned and scrubbed,
 * fail-soft, and audited as agent.action without any output.
 * Writes no file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "env.h"
#include "json.h"
#include "log.h"
#include "msg.h"
#include "redact.h"
#include "sanitize.h"
#include "spawner.h"
#include "util.h"

#define ACTIONS_MAX 16 /* in flight, all agents */

struct action {
	struct agent *x_agent;
	const struct mf_action *x_act;
	struct ipc_conn *x_conn;
	unsigned int x_gen;
	struct ipc_msg x_req;
	struct aproc x_proc;
	struct secret_set x_ss;
	char **x_envp;
	char **x_argv;
	struct evbuffer *x_out, *x_err; /* raw, capped */
	int x_truncated;
	struct json_object *x_answer; /* held until agent.action is acked */
};

static size_t nactions;

/*
 * What the ended child leaves behind: its secret values and env (wiped),
 * its private tmp and run group.  Once the record is sent; a second call
 * does nothing.
 */
static void
action_scrap(struct action *x)
{
	secrets_clear(&x->x_ss);
	strv_free(x->x_envp);
	x->x_envp = NULL;
	aproc_release(&x->x_proc);
}

static void
action_free(struct action *x)
{
	nactions--;
	action_scrap(x);
	free(x->x_argv);
	if (x->x_out)
		evbuffer_free(x->x_out);
	if (x->x_err)
		evbuffer_free(x->x_err);
	json_object_put(x->x_answer);
	free(x);
}

static void
action_chunk(struct action *x, struct evbuffer *b, const char *s, size_t len)
{
	size_t have = evbuffer_get_length(b);
	uint64_t cap = x->x_agent->ag_mf.m_limits.l_action_output_bytes;

	/* SP-9: over the cap the action is killed and marked truncated. */
	if (have + len > cap) {
		len = (size_t)(cap - have);
		x->x_truncated = 1;
		aproc_kill(&x->x_proc, AP_END_CAP);
	}
	evbuffer_add(b, s, len);
}

static void
action_out(struct aproc *ap, const char *s, size_t len)
{
	struct action *x = ap->ap_arg;

	action_chunk(x, x->x_out, s, len);
}

static void
action_err(struct aproc *ap, const char *s, size_t len)
{
	struct action *x = ap->ap_arg;

	action_chunk(x, x->x_err, s, len);
}

/* Raw bytes -> cleaned -> scrubbed string; *chars gets cleaned length. */
static struct json_object *
action_text(struct action *x, struct evbuffer *raw, uint64_t *chars)
{
	struct evbuffer *c = evbuffer_new(), *s = evbuffer_new();
	struct json_object *o = NULL;
	struct clean cl;
	size_t n = evbuffer_get_length(raw);

	*chars = 0;
	if (c == NULL || s == NULL)
		goto out;
	clean_init(&cl, LIM_LINE_MAX);
	clean_feed(&cl, (const char *)evbuffer_pullup(raw, -1), n, c);
	clean_finish(&cl, c);
	*chars = clean_chars(&cl);
	if (redact_buf(x->x_ss.ss_keys, (const char *)evbuffer_pullup(c, -1),
		evbuffer_get_length(c), x->x_truncated, s) == -1)
		goto out;
	o = json_object_new_string_len(
	    (const char *)evbuffer_pullup(s, -1), (int)evbuffer_get_length(s));
out:
	if (c)
		evbuffer_free(c);
	if (s)
		evbuffer_free(s);
	return o;
}

/*
 * AU-6: an action's answer never runs ahead of its agent.action record.
 * Acknowledged: the held answer goes out; not: 503 audit-unavailable.
 * Either way the action is freed here.
 */
static void
action_acked_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct action *x = arg;

	if (!spawner_audit_acked(m)) {
		log_warnx("agent.action not acknowledged");
		if (spawner_broker_ok(x->x_conn, x->x_gen))
			ipc_reply_error(
			    x->x_conn, &x->x_req, "audit-unavailable");
	} else if (spawner_broker_ok(x->x_conn, x->x_gen))
		ipc_reply(
		    x->x_conn, &x->x_req, MSG_ACTION_RUN_OK, x->x_answer, -1);
	action_free(x);
}

/* Record the action, then answer with x->x_answer (x is consumed). */
static void
action_audit(struct action *x, int code, uint64_t ms, uint64_t oc,
    uint64_t ec_chars, const char *ec)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(
	    o, "kind", json_object_new_string("agent.action"));
	json_object_object_add(
	    o, "agent", json_object_new_string(x->x_agent->ag_mf.m_name));
	json_object_object_add(
	    o, "actionId", json_object_new_string(x->x_act->a_id));
	json_object_object_add(o, "exitCode", json_object_new_int(code));
	json_object_object_add(
	    o, "durationMs", json_object_new_int64((int64_t)ms));
	json_object_object_add(
	    o, "stdoutChars", json_object_new_int64((int64_t)oc));
	json_object_object_add(
	    o, "stderrChars", json_object_new_int64((int64_t)ec_chars));
	json_object_object_add(
	    o, "status", json_object_new_string(ec ? "error" : "success"));
	if (ec != NULL)
		json_object_object_add(
		    o, "errorClass", json_object_new_string(ec));
	if (spawner_audit(o, action_acked_cb, x) == -1) {
		log_warnx("audit unavailable for an action");
		if (spawner_broker_ok(x->x_conn, x->x_gen))
			ipc_reply_error(
			    x->x_conn, &x->x_req, "audit-unavailable");
		action_free(x);
	} else
		action_scrap(x); /* while auditd syncs the record */
	json_object_put(o);
}

/*
 * The fail-soft answer, held in x; detail: NULL/"" or "seccomp: NAME";
 * reason (SP-12): NULL/"" or what failed, in fixed words.
 */
static void
action_answer_fail(
    struct action *x, const char *ec, const char *detail, const char *reason)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "errorClass", json_object_new_string(ec));
	json_object_object_add(
	    o, "errorMessage", json_object_new_string(errclass_message(ec)));
	if (detail != NULL && detail[0] != '\0')
		json_object_object_add(
		    o, "detail", json_object_new_string(detail));
	if (reason != NULL && reason[0] != '\0') {
		json_object_object_add(
		    o, "reason", json_object_new_string(reason));
		log_warnx("agent %s: action %s: %s: %s",
		    x->x_agent->ag_mf.m_name, x->x_act->a_id, ec, reason);
	}
	x->x_answer = o;
}

/* A failure before the action ran: audited, then answered. */
static void
action_fail_early(struct action *x, const char *ec, const char *reason)
{
	action_answer_fail(x, ec, NULL, reason);
	action_audit(x, -1, 0, 0, 0, ec);
}

static void
action_done(struct aproc *ap)
{
	struct action *x = ap->ap_arg;
	struct json_object *o, *so, *se, *tail;
	char why[96] = "";
	uint64_t oc, ecc, ms = ap->ap_end_ms - ap->ap_start_ms;
	int code = aproc_exit_code(ap);
	const char *ec = NULL;

	so = action_text(x, x->x_out, &oc);
	se = action_text(x, x->x_err, &ecc);
	/* An action that hits its deadline is a timeout, not "killed". */
	if (ap->ap_end == AP_END_TIMEOUT)
		ec = "timeout";
	else if (ap->ap_end == AP_END_CAP)
		ec = NULL;
	else if (ap->ap_end == AP_END_SECCOMP || code == -1)
		ec = "killed";
	else if (code != 0)
		ec = "non-zero-exit";
	if (so == NULL || se == NULL)
		ec = "unknown";
	if (ec != NULL) {
		if (strcmp(ec, "non-zero-exit") == 0)
			snprintf(
			    why, sizeof(why), "exited with status %d", code);
		else if (strcmp(ec, "timeout") == 0)
			snprintf(why, sizeof(why),
			    "no end within the action's %ld ms",
			    x->x_act->a_timeout_ms);
		action_answer_fail(x, ec, ap->ap_killed_by, why);
		/* SP-12: its last stderr lines, scrubbed as it was. */
		if (se != NULL &&
		    (tail = stderr_tail(json_object_get_string(se),
			 (size_t)json_object_get_string_len(se))) != NULL)
			json_object_object_add(x->x_answer, "stderrTail", tail);
		json_object_put(so);
		json_object_put(se);
	} else {
		o = json_object_new_object();
		json_object_object_add(o, "ok", json_object_new_boolean(1));
		json_object_object_add(o, "stdout", so);
		json_object_object_add(o, "stderr", se);
		json_object_object_add(
		    o, "exitCode", json_object_new_int(code));
		json_object_object_add(
		    o, "durationMs", json_object_new_int64((int64_t)ms));
		json_object_object_add(
		    o, "truncated", json_object_new_boolean(x->x_truncated));
		json_object_object_add(o, "output",
		    json_object_new_string(
			x->x_act->a_output == MF_OUT_JSON ? "json" : "text"));
		x->x_answer = o;
	}
	action_audit(x, code, ms, oc, ecc, ec);
}

static const struct aproc_ops action_ops = {
    action_out, action_err, action_done};

void
action_run_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	const char *name, *id, *cwd, *err;
	const struct mf_action *act;
	struct aproc_spec as;
	struct action *x;
	struct agent *ag;
	char path[PATH_MAX], why[SPAWNER_REASON_MAX];
	size_t i;

	name = json_shape_str(m->m_obj, "agent", NULL);
	id = json_shape_str(m->m_obj, "action", NULL);
	/* API-5: unknown names are 404s and are not audited. */
	if ((ag = agent_find(name)) == NULL) {
		ipc_reply_error(c, m, "unknown-agent");
		return;
	}
	if ((act = manifest_action(&ag->ag_mf, id)) == NULL) {
		ipc_reply_error(c, m, "unknown-action");
		return;
	}
	if (nactions >= ACTIONS_MAX) {
		ipc_reply_error(c, m, "busy");
		return;
	}
	/* AU-6: with auditd down the record could not be kept: no action. */
	if (sp.sp_d.d_peers[PROC_AUDITD] == NULL) {
		ipc_reply_error(c, m, "audit-unavailable");
		return;
	}
	if ((x = calloc(1, sizeof(*x))) == NULL) {
		ipc_reply_error(c, m, "internal");
		return;
	}
	nactions++;
	x->x_agent = ag;
	x->x_act = act;
	spawner_req_keep(c, m, &x->x_conn, &x->x_gen, &x->x_req);
	if ((x->x_out = evbuffer_new()) == NULL ||
	    (x->x_err = evbuffer_new()) == NULL ||
	    (x->x_argv = calloc(act->a_ncommand + 1, sizeof(char *))) == NULL) {
		action_fail_early(x, "unknown", NULL);
		return;
	}
	if (secrets_resolve(sp.sp_secrets, &ag->ag_mf, &x->x_ss) == -1) {
		action_fail_early(x, "missing-secret", NULL);
		return;
	}
	/* SP-11: the values' forms, once for its stdout and stderr. */
	if (secrets_keys(&x->x_ss) == -1) {
		action_fail_early(x, "unknown", NULL);
		return;
	}
	if (agent_env(ag, &x->x_ss, &x->x_envp, &cwd, &err) == -1) {
		action_fail_early(x, "spawn-failed", NULL);
		return;
	}
	/* SP-1, SP-12: found, and where the sandbox lets it run. */
	if (agent_bin_check(act->a_command[0], x->x_envp, &ag->ag_sb.pl_roots,
		&sp.sp_protect, path, sizeof(path), why, sizeof(why)) == -1) {
		action_fail_early(x, "spawn-failed", why);
		return;
	}
	for (i = 0; i < act->a_ncommand; i++)
		x->x_argv[i] = act->a_command[i];
	aproc_spec_agent(&as, ag, path, x->x_argv, x->x_envp, cwd);
	as.as_timeout_ms = act->a_timeout_ms;
	if (aproc_start(&x->x_proc, &as, &action_ops, x) == -1)
		action_fail_early(x, "spawn-failed", x->x_proc.ap_reason);
}
