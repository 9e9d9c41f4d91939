/*
 * Chat runs (API-3, API-4): prompt and secrets checked before anything is
 * spawned (SP-2, SP-3, SP-13), bounded concurrency (SP-14), agent.invoke
 * acknowledged before the spawn (AU-6), both transports (SP-16), byte
 * caps (SP-9), cleaned and scrubbed token events (SP-10, SP-11), closing
 * audit record and the chat note to vaultd.  Where its events and end
 * go is its sink's (struct run_sink_ops, chosen when the run is made:
 * the broker's stream, a detached job, a mission through run_headless);
 * the run never asks which.  This file is the run's life (checks,
 * start, end, cancel); its output is run_out.c's, its records and note
 * run_record.c's.  Writes no file.
 */
#include <sys/queue.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "argv.h"
#include "config.h"
#include "env.h"
#include "hookproj.h"
#include "json.h"
#include "log.h"
#include "msg.h"
#include "schema.h"
#include "run.h"
#include "spawner.h"
#include "util.h"

static LIST_HEAD(, run) runs = LIST_HEAD_INITIALIZER(runs);

static void run_end(struct run *, struct json_object *);
static void run_wt_done(void *, struct json_object *);
static int run_prepare_rest(struct run *, const char **, const char **);
static void run_wt_ready(void *, const char *, const char *);
static void run_answer(struct run *);

/* SP-12: one stock message per class; never derived from stderr. */
const char *
errclass_message(const char *ec)
{
	static const struct {
		const char *c, *m;
	} msgs[] = {
	    {"spawn-failed", "The agent could not be started."},
	    {"timeout", "The agent did not finish in time."},
	    {"killed", "The agent was stopped by a signal."},
	    {"non-zero-exit", "The agent exited with an error."},
	    {"transport-error", "The agent's output could not be read."},
	    {"missing-secret", "A secret this agent needs is not set."},
	};
	size_t i;

	for (i = 0; i < nitems(msgs); i++)
		if (strcmp(msgs[i].c, ec) == 0)
			return msgs[i].m;
	return "The agent failed.";
}

static struct run *
run_find(const char *id)
{
	struct run *r;

	LIST_FOREACH (r, &runs, r_entry)
		if (strcmp(r->r_id, id) == 0)
			return r;
	return NULL;
}

void
run_free(struct run *r)
{
	if (r->r_sink != NULL && r->r_sink->rs_free != NULL)
		r->r_sink->rs_free(r, r->r_sink_arg);
	/* MC-2: kept once its child ran; else nothing is left of it. */
	if (r->r_ran)
		wt_free(r->r_wt);
	else
		wt_discard(r->r_wt);
	free(r->r_wt_repo);
	gate_chan_close(r->r_gate);
	LIST_REMOVE(r, r_entry);
	r->r_agent->ag_running--;
	sp.sp_nruns--;
	secrets_clear(&r->r_ss); /* and the keys r_redact used */
	strv_free(r->r_argv);
	strv_free(r->r_envp);
	if (r->r_redact != NULL)
		redact_free(r->r_redact);
	if (r->r_prompt != NULL) {
		explicit_bzero(r->r_prompt, r->r_prompt_len);
		free(r->r_prompt);
	}
	if (r->r_tmp)
		evbuffer_free(r->r_tmp);
	if (r->r_text)
		evbuffer_free(r->r_text);
	if (r->r_note)
		evbuffer_free(r->r_note);
	if (r->r_err)
		evbuffer_free(r->r_err);
	if (r->r_etail)
		evbuffer_free(r->r_etail);
	if (r->r_line)
		evbuffer_free(r->r_line);
	aproc_release(&r->r_proc);
	free(r);
}

void
run_event(struct run *r, struct json_object *o)
{
	r->r_sink->rs_event(r, r->r_sink_arg, o);
}

void
run_event_id(const char *id, struct json_object *o)
{
	struct run *r = run_find(id);

	if (r == NULL || r->r_state != RS_RUNNING) {
		json_object_put(o);
		return;
	}
	run_event(r, o);
}

struct json_object *
run_ev(const char *kind)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "kind", json_object_new_string(kind));
	return o;
}

/* The run is over: its sink is told how, with its collected text. */
void
run_over(struct run *r, const char *ec)
{
	struct run_result rr;
	size_t n = r->r_note != NULL ? evbuffer_get_length(r->r_note) : 0;

	if (r->r_sink->rs_ended != NULL) {
		memset(&rr, 0, sizeof(rr));
		rr.rr_errclass = ec;
		rr.rr_exit = r->r_ran ? aproc_exit_code(&r->r_proc) : -1;
		rr.rr_ms =
		    r->r_ran ? r->r_proc.ap_end_ms - r->r_proc.ap_start_ms : 0;
		rr.rr_truncated = r->r_truncated;
		rr.rr_text =
		    n > 0 ? (const char *)evbuffer_pullup(r->r_note, -1) : "";
		rr.rr_len = n;
		r->r_sink->rs_ended(r, r->r_sink_arg, &rr);
	}
	run_free(r);
}

static void
run_done(struct aproc *ap)
{
	struct run *r = ap->ap_arg;
	struct json_object *ev;
	const char *ec = NULL;
	int code = aproc_exit_code(ap);

	/* AU-6: a held child gone before its go: the acknowledgement ends
	 * the run (aproc_go fails). */
	if (r->r_state == RS_AUDIT)
		return;
	/* SBX-7: the run is over; whatever it still had held is denied. */
	gate_chan_close(r->r_gate);
	r->r_gate = NULL;
	run_text_finish(r);
	if (evbuffer_get_length(r->r_err) < SPAWNER_STDERR_MAX) {
		clean_finish(&r->r_eclean, r->r_tmp);
		run_err_clean(r, "", 0);
	}
	if (ap->ap_end == AP_END_TIMEOUT)
		ec = "timeout";
	else if (ap->ap_end == AP_END_CANCEL || ap->ap_end == AP_END_CAP)
		ec = NULL;
	else if (ap->ap_end == AP_END_SECCOMP || code == -1)
		ec = "killed";
	else if (code != 0)
		ec = "non-zero-exit";
	else if (r->r_agent->ag_mf.m_transport != MF_SUBPROCESS &&
		 !r->r_json_seen)
		ec = "transport-error";
	if (ec != NULL) {
		run_audit_error(r, ec, code);
		ev = run_error_event(r, ec, code);
		log_warnx("agent %s: run %s: %s: %s", r->r_agent->ag_mf.m_name,
		    r->r_id, ec, r->r_reason);
		run_event(r, ev);
	}
	/* MC-2: the done event waits for the diff, read from the loop. */
	r->r_endec = ec;
	if (r->r_wt != NULL) {
		r->r_state = RS_WT;
		wt_finish(r->r_wt, run_wt_done, r);
		return;
	}
	run_end(r, NULL);
}

/* The run's last event: done, with its worktree's summary if any. */
static void
run_end(struct run *r, struct json_object *wtsum)
{
	struct aproc *ap = &r->r_proc;
	struct json_object *ev;
	int code = aproc_exit_code(ap), pending;
	uint64_t ms = ap->ap_end_ms - ap->ap_start_ms;

	r->r_state = RS_NOTE;
	pending = r->r_endec == NULL && ap->ap_end != AP_END_CANCEL &&
		  r->r_sink->rs_note &&
		  r->r_sink->rs_listening(r, r->r_sink_arg) && run_note(r) == 0;
	/* With a note, agent.invoke.complete follows its answer (AU-6). */
	if (r->r_endec == NULL && !pending)
		run_audit_end(r);
	ev = run_ev("done");
	json_object_object_add(ev, "exitCode", json_object_new_int(code));
	json_object_object_add(
	    ev, "durationMs", json_object_new_int64((int64_t)ms));
	json_object_object_add(
	    ev, "truncated", json_object_new_boolean(r->r_truncated));
	json_object_object_add(ev, "pending", json_object_new_boolean(pending));
	/* MC-2: the branch and what changed on it. */
	if (wtsum != NULL)
		json_object_object_add(ev, "worktree", wtsum);
	/* API-4: a cancelled run says so, whatever its exit status. */
	if (ap->ap_end == AP_END_CANCEL)
		json_object_object_add(
		    ev, "cancelled", json_object_new_boolean(1));
	run_event(r, ev);
	if (!pending)
		run_over(r, r->r_endec);
}

static void
run_wt_done(void *arg, struct json_object *summary)
{
	run_end(arg, summary);
}

static const struct aproc_ops run_ops = {run_out, run_err, run_done};

/*
 * SP-12: a refusal before the stream, with the reason when there is
 * one: MSG_ERROR {error, reason?}, which the broker shows as it is.
 */
void
run_reply_error(struct ipc_conn *c, const struct ipc_msg *m,
    const struct run *r, const char *code)
{
	struct json_object *o;

	if (r->r_reason[0] == '\0') {
		ipc_reply_error(c, m, code);
		return;
	}
	run_warn(r, code);
	o = json_object_new_object();
	json_object_object_add(o, "error", json_object_new_string(code));
	json_object_object_add(
	    o, "reason", json_object_new_string(r->r_reason));
	ipc_reply(c, m, MSG_ERROR, o, -1);
	json_object_put(o);
}

/*
 * MC-2: a run answered before its child started ends in its stream: an
 * error event with the fixed code and reason class, and done.
 */
static void
run_end_unstarted(struct run *r, const char *code)
{
	struct json_object *ev;

	if (code != NULL) {
		ev = run_ev("error");
		code =
		    strcmp(code, "missing-secret") == 0 ? code : "spawn-failed";
		json_object_object_add(
		    ev, "errorClass", json_object_new_string(code));
		json_object_object_add(ev, "errorMessage",
		    json_object_new_string(errclass_message(code)));
		json_object_object_add(
		    ev, "error", json_object_new_string(r->r_fail_code));
		json_object_object_add(
		    ev, "reason", json_object_new_string(r->r_reason));
		run_event(r, ev);
	} else if (r->r_state == RS_AUDIT) {
		/* API-4: agent.invoke was recorded; its end says cancelled */
		r->r_proc.ap_end = AP_END_CANCEL;
		r->r_proc.ap_start_ms = r->r_proc.ap_end_ms = 0; /* never ran */
		run_audit_end(r);
	}
	r->r_state = RS_NOTE;
	ev = run_ev("done");
	json_object_object_add(ev, "exitCode", json_object_new_int(-1));
	json_object_object_add(ev, "durationMs", json_object_new_int64(0));
	json_object_object_add(ev, "truncated", json_object_new_boolean(0));
	json_object_object_add(ev, "pending", json_object_new_boolean(0));
	if (code == NULL)
		json_object_object_add(
		    ev, "cancelled", json_object_new_boolean(1));
	run_event(r, ev);
	run_over(r, code);
}

void
run_warn(const struct run *r, const char *code)
{
	if (r->r_reason[0] != '\0')
		log_warnx("agent %s: %s: %s", r->r_agent->ag_mf.m_name, code,
		    r->r_reason);
}

/* The run ends before its child started: its sink told why, freed. */
static void
run_fail(struct run *r, const char *code)
{
	if (r->r_answered) {
		log_warnx("agent %s: run %s: %s: %s", r->r_agent->ag_mf.m_name,
		    r->r_id, code, r->r_reason);
		snprintf(r->r_fail_code, sizeof(r->r_fail_code), "%s", code);
		run_end_unstarted(r, code);
		return;
	}
	r->r_sink->rs_refused(r, r->r_sink_arg, code);
	run_over(r, code);
}

/*
 * The run's child, with its gate channel (SBX-6, SBX-8), proxy (EG-1)
 * and deadline.  hold (AU-6): made while auditd syncs agent.invoke, its
 * agent forked only at aproc_go.  0, or -1 with r_reason set.
 */
static int
run_spawn(struct run *r, int hold)
{
	struct aproc_spec as;
	int gatefd, rc;

	aproc_spec_agent(
	    &as, r->r_agent, r->r_path, r->r_argv, r->r_envp, r->r_cwd);
	if (r->r_prompt_stdin) {
		as.as_stdin = r->r_prompt;
		as.as_stdin_len = r->r_prompt_len;
	}
	as.as_timeout_ms = r->r_timeout_ms;
	as.as_hold = hold;
	/* MC-2: a worktree run's plan writes its worktree only */
	if (r->r_wt != NULL)
		as.as_sandbox = &r->r_wt->w_plan;
	as.as_run_id = r->r_id;	  /* EG-1: its proxy, if it has one */
	as.as_secrets = &r->r_ss; /* EG-3: its routes' keys */
	/* SBX-6: the gate channel, the child's fd 3 (CORDON_GATE_FD). */
	if (gate_chan_open(&r->r_gate, r->r_agent, r->r_id, r->r_cwd,
		r->r_ss.ss_keys, &gatefd) == -1) {
		snprintf(r->r_reason, sizeof(r->r_reason),
		    "the run's gate channel could not be made");
		return -1;
	}
	as.as_gate_fd = gatefd;
	as.as_gate_dir = 1; /* SBX-8: and by path, where the view allows */
	rc = aproc_start(&r->r_proc, &as, &run_ops, r);
	close(gatefd); /* the child has its copy */
	if (rc == 0 && r->r_proc.ap_gatedir != -1) {
		(void)gate_chan_fifo(r->r_gate, r->r_proc.ap_gatedir);
		r->r_proc.ap_gatedir = -1;
	}
	if (rc == -1)
		snprintf(r->r_reason, sizeof(r->r_reason), "%s",
		    r->r_proc.ap_reason[0] != '\0'
			? r->r_proc.ap_reason
			: "the child could not be made");
	return rc;
}

/* AU-6: a plan with cordon-init is spawned while agent.invoke syncs. */
static void
run_spawn_ahead(struct run *r)
{
	const struct sandbox_plan *pl =
	    r->r_wt != NULL ? &r->r_wt->w_plan : &r->r_agent->ag_sb;

	if (!aproc_can_hold(pl))
		return;
	/* The record leaves now, not on the next loop pass. */
	ipc_flush(sp.sp_d.d_peers[PROC_AUDITD]);
	r->r_held = run_spawn(r, 1) == 0 ? 1 : -1;
}

/*
 * AU-6: the agent's execve waits for auditd's acknowledgement of
 * agent.invoke: a held child gets its go now (else the spawn is made
 * now); refused, cancelled or unheard, the held child is killed and
 * reaped unforked (run_free).
 */
static void
run_invoke_acked(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct run *r = arg;
	int listening;

	if (!spawner_audit_acked(m)) {
		/*
		 * Unheard in time on a channel that lives (auditd stopped or
		 * slow): agent.invoke may still be written, so its end
		 * follows it there, saying the agent never ran.
		 */
		if (m == NULL && c == sp.sp_d.d_peers[PROC_AUDITD])
			run_audit_error(r, "spawn-failed", -1);
		run_fail(r, "audit-unavailable");
		return;
	}
	/* API-4: cancelled (or its reader gone) while agent.invoke was
	 * being recorded: never started. */
	listening = r->r_sink->rs_listening(r, r->r_sink_arg);
	if (r->r_cancel || (r->r_answered && !listening)) {
		run_end_unstarted(r, NULL);
		return;
	}
	if (!r->r_answered && !listening) {
		run_over(r, NULL); /* nobody to answer: never started */
		return;
	}
	if (r->r_held == -1 ||
	    (r->r_held == 0 ? run_spawn(r, 0) : aproc_go(&r->r_proc)) == -1) {
		if (r->r_held == 1)
			snprintf(r->r_reason, sizeof(r->r_reason), "%s",
			    r->r_proc.ap_reason);
		run_audit_error(r, "spawn-failed", -1);
		run_fail(r, "spawn-failed");
		return;
	}
	r->r_state = RS_RUNNING;
	r->r_ran = 1;
	if (!r->r_answered)
		run_answer(r);
}

/*
 * The start answered with the run's (or job's) id: once its child runs,
 * or, for a worktree run (MC-2), as soon as it is admitted, so that it
 * can be cancelled during its checkout.
 */
static void
run_answer(struct run *r)
{
	r->r_answered = 1;
	if (r->r_sink->rs_started != NULL)
		r->r_sink->rs_started(r, r->r_sink_arg);
}

/*
 * A run of agent ag with its prompt: id, buffers, SP-14 counts.  NULL
 * when out of memory (nothing counted).
 */
static struct run *
run_new(struct agent *ag, const char *prompt, size_t len)
{
	struct run *r;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->r_agent = ag;
	ag->ag_running++;
	sp.sp_nruns++;
	LIST_INSERT_HEAD(&runs, r, r_entry);
	r->r_timeout_ms = ag->ag_mf.m_timeout_ms;
	r->r_prompt_len = len;
	if (random_hex(r->r_id, sizeof(r->r_id), 8) == -1 ||
	    (r->r_prompt = malloc(len + 1)) == NULL ||
	    (r->r_tmp = evbuffer_new()) == NULL ||
	    (r->r_text = evbuffer_new()) == NULL ||
	    (r->r_note = evbuffer_new()) == NULL ||
	    (r->r_err = evbuffer_new()) == NULL ||
	    (r->r_etail = evbuffer_new()) == NULL ||
	    (r->r_line = evbuffer_new()) == NULL) {
		run_free(r);
		return NULL;
	}
	memcpy(r->r_prompt, prompt, len);
	r->r_prompt[len] = '\0';
	clean_init(&r->r_clean, LIM_LINE_MAX);
	clean_init(&r->r_eclean, LIM_LINE_MAX);
	/* SP-16: the manifest's transport picks the decoder */
	sj_init(&r->r_sj, ag->ag_mf.m_transport == MF_CODEXJSON	   ? SJ_CODEX
			  : ag->ag_mf.m_transport == MF_GEMINIJSON ? SJ_GEMINI
								   : SJ_CLAUDE);
	return r;
}

/*
 * SP-2, SP-3, SP-13, SEC-2, AU-6: argv, secrets, env, binary, scrubber,
 * then agent.invoke to auditd; the child starts once it is acknowledged
 * (run_invoke_acked).  -1 with *code (and *ec, the class to audit, or
 * NULL): nothing was started and the caller frees r.
 */
static int
run_prepare(struct run *r, const char **code, const char **ec)
{
	struct agent *ag = r->r_agent;
	const char *unused, *why;

	*ec = NULL;
	*code = "invalid-argument";
	/* SP-2, SP-3: the prompt as one element, never a flag. */
	if (argv_build(&ag->ag_mf, r->r_prompt, sandbox_cordon(), &r->r_argv,
		&r->r_prompt_stdin, code) == -1) {
		/* SBX-8: hooks that name cordon, and no cordon to name. */
		if (strcmp(*code, "no-cordon") == 0) {
			snprintf(r->r_reason, sizeof(r->r_reason),
			    "hooks: args name {cordon}, and there is no "
			    "cordon beside the spawner nor in " CORDON_BINDIR);
			*code = *ec = "spawn-failed";
		}
		return -1;
	}
	/* SP-13, SEC-2: every secret, or nothing is spawned. */
	if (secrets_resolve(sp.sp_secrets, &ag->ag_mf, &r->r_ss) == -1) {
		*code = *ec = "missing-secret";
		return -1;
	}
	if (agent_env(ag, &r->r_ss, &r->r_envp, &r->r_cwd, &unused) == -1) {
		*code = "invalid-argument";
		return -1;
	}
	/* MC-2: the worktree is made by us, from the loop; the rest once
	 * it is ready (run_wt_ready). */
	if (r->r_wt_repo != NULL) {
		if ((r->r_wt = wt_create(ag, r->r_id, r->r_wt_repo,
			 run_wt_ready, r, code, &why)) == NULL) {
			snprintf(r->r_reason, sizeof(r->r_reason), "%s", why);
			return -1;
		}
		r->r_state = RS_WT;
		return 0;
	}
	return run_prepare_rest(r, code, ec);
}

/*
 * MC-2: the worktree is made (the agent's cwd now), or refused with a
 * fixed reason class: the run goes on, or ends unstarted.
 */
static void
run_wt_ready(void *arg, const char *code, const char *reason)
{
	struct run *r = arg;
	const char *ec = NULL;

	if (code == NULL) {
		r->r_cwd = r->r_wt->w_tree;
		if (run_prepare_rest(r, &code, &ec) == 0)
			return;
	} else {
		snprintf(r->r_reason, sizeof(r->r_reason), "%s", reason);
		ec = "spawn-failed"; /* the agent never started (AU-4) */
	}
	if (ec != NULL)
		run_audit_error(r, ec, -1);
	run_fail(r, code);
}

/* run_prepare's second half: gate, hooks, bin, scrubber, agent.invoke. */
static int
run_prepare_rest(struct run *r, const char **code, const char **ec)
{
	struct agent *ag = r->r_agent;
	struct json_object *rec;
	const char *cfg;

	*ec = NULL;
	/* SBX-6: the gate channel's fd, set by us only (never the manifest). */
	*code = "internal";
	if (gate_env(&r->r_envp,
		(r->r_agent->ag_sb.pl_layers & SBX_L_MOUNTNS) != 0,
		gate_answer_sec(&ag->ag_mf.m_commands)) == -1)
		return -1;
	/* SBX-8: a fresh name for the gate hook the CLI reads from a file. */
	if (hookcfg_run(ag, &cfg) == -1) {
		if (sandbox_cordon() == NULL)
			snprintf(r->r_reason, sizeof(r->r_reason),
			    "hooks: no cordon beside the spawner nor "
			    "in " CORDON_BINDIR " to run as the gate hook");
		else
			snprintf(r->r_reason, sizeof(r->r_reason),
			    "hooks: settings %s/%s: %s",
			    ag->ag_sb.pl_roots.r_home, cfg, errno_name(errno));
		*code = *ec = "spawn-failed";
		return -1;
	}
	if (hookproj_check(agent_cli_mf(&ag->ag_mf), r->r_cwd,
		ag->ag_sb.pl_roots.r_home, r->r_reason,
		sizeof(r->r_reason)) == -1) {
		*code = *ec = "spawn-failed";
		return -1;
	}
	/* SP-1, SP-12: found on PATH, and where the sandbox lets it run. */
	if (agent_bin_check(ag->ag_mf.m_bin, r->r_envp, &ag->ag_sb.pl_roots,
		&sp.sp_protect, r->r_path, sizeof(r->r_path), r->r_reason,
		sizeof(r->r_reason)) == -1) {
		*code = *ec = "spawn-failed";
		return -1;
	}
	/* SP-11: the values' forms, derived once for all of this run. */
	if (secrets_keys(&r->r_ss) == -1 ||
	    (r->r_redact = redact_new(r->r_ss.ss_keys)) == NULL)
		return -1;
	r->r_state = RS_AUDIT;
	if ((rec = run_invoke_record(r)) == NULL)
		return -1;
	if (spawner_audit(rec, run_invoke_acked, r) == -1) {
		json_object_put(rec);
		*code = "audit-unavailable";
		return -1;
	}
	json_object_put(rec);
	run_spawn_ahead(r);
	return 0;
}

/* Refused before spawning: audited as an error, nothing started. */
static void
run_refuse(struct ipc_conn *c, struct ipc_msg *m, struct run *r,
    const char *code, const char *ec)
{
	run_reply_error(c, m, r, code);
	if (ec != NULL)
		run_audit_error(r, ec, -1);
	run_free(r);
}

void
run_start_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	run_start_msg(c, m, 0);
}

void
run_start_msg(struct ipc_conn *c, struct ipc_msg *m, int detached)
{
	struct json_object *o = m->m_obj;
	const char *name, *prompt, *sess, *via, *err, *ec, *repo;
	struct agent *ag;
	struct run *r;
	size_t plen;

	/* Typed and bounded by the row's shape; the values are checked here. */
	name = json_shape_str(o, "agent", NULL);
	prompt = json_shape_str(o, "prompt", &plen);
	repo = json_shape_str(o, "worktree", NULL); /* MC-2: worktree.c's */
	if ((via = json_shape_str(o, "via", NULL)) != NULL &&
	    strcmp(via, "mcp") != 0) {
		ipc_reply_error(c, m, "bad-message");
		return;
	}
	if ((sess = json_shape_str(o, "session", NULL)) != NULL &&
	    !schema_session_ok(sess)) {
		ipc_reply_error(c, m, "invalid-session");
		return;
	}
	if ((ag = agent_find(name)) == NULL) {
		ipc_reply_error(c, m, "unknown-agent");
		return;
	}
	if (argv_prompt_ok(prompt, plen)) {
		ipc_reply_error(c, m, "invalid-prompt");
		return;
	}
	/* SP-14 */
	if (sp.sp_nruns >= (size_t)sp.sp_max_runs ||
	    ag->ag_running >= sp.sp_max_runs_agent) {
		ipc_reply_error(c, m, "busy");
		return;
	}
	if ((r = run_new(ag, prompt, plen)) == NULL) {
		ipc_reply_error(c, m, "internal");
		return;
	}
	r->r_via_mcp = via != NULL;
	err = "internal";
	if (repo != NULL && (r->r_wt_repo = strdup(repo)) == NULL) {
		run_refuse(c, m, r, err, NULL);
		return;
	}
	/* Its sink: the broker's stream, or a job's store (MC-3), made
	 * first: a job that cannot be kept never starts. */
	if ((detached ? job_open(r, c, m, &err) : run_stream_open(r, c, m)) ==
	    -1) {
		run_refuse(c, m, r, err, NULL);
		return;
	}
	if (run_prepare(r, &err, &ec) == -1)
		run_refuse(c, m, r, err, ec);
	else if (r->r_state == RS_WT)
		run_answer(r); /* MC-2: cancellable during its checkout */
}

/*
 * A mission's run (MI-*): the chat run's checks, audit records, sandbox
 * and child path, without a stream.  0: done is called exactly once,
 * later.  -1 with *code: nothing started, done is never called.
 */
int
run_headless(struct agent *ag, const char *run_id, const char *prompt,
    long timeout_ms, const struct run_sink_ops *ops, void *sink,
    const char **code)
{
	size_t len = strlen(prompt);
	const char *ec;
	struct run *r;

	if (argv_prompt_ok(prompt, len)) {
		*code = "invalid-prompt";
		return -1;
	}
	if (sp.sp_nruns >= (size_t)sp.sp_max_runs ||
	    ag->ag_running >= sp.sp_max_runs_agent) {
		*code = "busy"; /* SP-14 */
		return -1;
	}
	if ((r = run_new(ag, prompt, len)) == NULL) {
		*code = "internal";
		return -1;
	}
	if (run_id != NULL && strlen(run_id) == sizeof(r->r_id) - 1)
		memcpy(r->r_id, run_id, sizeof(r->r_id));
	if (timeout_ms > 0)
		r->r_timeout_ms = timeout_ms;
	r->r_sink = ops;
	r->r_sink_arg = sink;
	if (run_prepare(r, code, &ec) == -1) {
		run_warn(r, *code);
		if (ec != NULL)
			run_audit_error(r, ec, -1);
		run_free(r);
		return -1;
	}
	return 0;
}

void
run_cancel_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	const char *id;
	struct run *r;

	id = json_shape_str(m->m_obj, "runId", NULL);
	/* A job's run is cancelled as a job (MC-3), a mission's not at all. */
	if ((r = run_find(id)) == NULL || !r->r_sink->rs_by_id ||
	    run_stop(r) == -1) {
		ipc_reply_error(c, m, "unknown-run");
		return;
	}
	ipc_reply(c, m, MSG_RUN_CANCEL_OK, NULL, -1);
}

int
run_stop(struct run *r)
{
	/* MC-2: in its checkout: the git step killed, the checkout removed
	 * (run_free), the run ended cancelled. */
	if (r->r_answered && r->r_state == RS_WT && !r->r_ran) {
		run_end_unstarted(r, NULL);
		return 0;
	}
	if (r->r_answered && r->r_state == RS_AUDIT) {
		r->r_cancel = 1; /* ended once agent.invoke is acknowledged */
		return 0;
	}
	if (r->r_state != RS_RUNNING)
		return -1;
	/* SBX-7: held gate calls are denied before the agent is stopped. */
	gate_chan_close(r->r_gate);
	r->r_gate = NULL;
	/* API-4: SIGTERM to the group, SIGKILL after 3 s. */
	aproc_stop(&r->r_proc, AP_END_CANCEL, LIM_CANCEL_GRACE_MS);
	return 0;
}

/* The broker relayed bytes of a run's text: widen its window again. */
void
run_credit_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	long long bytes = json_shape_int(m->m_obj, "bytes", 0);
	struct run *r;

	/* one-way: nothing to answer */
	if ((r = run_find(json_shape_str(m->m_obj, "runId", NULL))) != NULL &&
	    r->r_sink->rs_credit != NULL)
		r->r_sink->rs_credit(r, r->r_sink_arg, c, bytes);
}

/* A new broker channel: runs streaming to the old one have no reader. */
void
runs_broker_lost(void)
{
	struct run *r, *next;

	for (r = LIST_FIRST(&runs); r != NULL; r = next) {
		next = LIST_NEXT(r, r_entry);
		if (r->r_sink->rs_listening(r, r->r_sink_arg))
			continue;
		if (r->r_state == RS_RUNNING)
			aproc_stop(
			    &r->r_proc, AP_END_CANCEL, LIM_CANCEL_GRACE_MS);
		else if (r->r_answered && r->r_state == RS_WT && !r->r_ran)
			run_end_unstarted(r, NULL); /* MC-2: in its checkout */
	}
}
