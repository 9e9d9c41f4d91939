/*
 * Missions (MI-1 ... MI-4, API-7): the table loaded from missions/NAME.yaml
 * (mission_load.c), manual runs from the broker and cron runs when
 * cordon-sched fires (MSG_MISSION_FIRE: sched keeps the slots and their
 * state file; this side declares the cron missions to it and decides
 * what a fire does).  Before anything runs: permissions
 * (MI-2), options (MI-3), the prompt rendered into one string; the agent
 * then runs through the chat run's path (run_headless: same argv, env,
 * secrets, sandbox, audit records, cleaning and scrubbing) told to the
 * mission's sink: no stream, its text told with its end.  Outputs in
 * order: vault-note to vaultd, event counted; the first failing output
 * stops the rest.  mission.run is neutral (MI-4): ids, trigger, status,
 * counts, error class; never options, paths or content.  Writes no file
 * itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "json.h"
#include "log.h"
#include "mission_int.h"
#include "msg.h"
#include "spawner.h"
#include "util.h"
#include "vaultpath.h"
#include "wallclock.h"

_Static_assert(MISSIONS_MAX <= MSG_MISSION_CRON_N, "sched's mission bound");
_Static_assert(VAULT_NAME_MAX <= MSG_MISSION_ID_MAX, "sched's id bound");

#define MISSION_NOTE_WAIT_S 10 /* vaultd's answer to one note */
#define MISSION_HINT_BASE   84 /* hint chars kept before "-YYYY-MM-DD" */

struct mission_ent *mission_tab[MISSIONS_MAX];
size_t mission_n;

struct mrun {
	struct mission_ent *mr_ent;
	char mr_id[17];
	const char *mr_trigger;
	struct ipc_conn *mr_conn; /* manual: the broker channel, else NULL */
	unsigned int mr_gen;
	struct ipc_msg mr_req;
	uint64_t mr_start;
	char mr_date[16]; /* YYYY-MM-DD in the mission's zone */
	char *mr_text;
	size_t mr_len;
	size_t mr_next; /* the next output */
	unsigned int mr_persisted, mr_emitted;
};

static const char *const perm_names[] = {
    "vault-write", "event-emit", "external-api"};
static const unsigned int perm_bits[] = {
    MI_PERM_VAULT_WRITE, MI_PERM_EVENT_EMIT, MI_PERM_EXTERNAL_API};

static struct mission_ent *
mission_find(const char *id)
{
	size_t i;

	for (i = 0; i < mission_n; i++)
		if (strcmp(mission_tab[i]->me_m.mi_id, id) == 0)
			return mission_tab[i];
	return NULL;
}

static int
agent_exists(const char *name, void *arg)
{
	return agent_find(name) != NULL;
}

static void
report_log(const char *file, unsigned long line, unsigned long col,
    const char *code, const char *msg, void *arg)
{
	log_warnx(
	    "missions/%s:%lu:%lu: %s; mission disabled", file, line, col, msg);
}

void
missions_start(void)
{
	struct mission_loaded *ml;
	struct mission_ent *e;
	size_t i, n = 0;

	if ((ml = calloc(MISSIONS_MAX, sizeof(*ml))) == NULL)
		fatalx("missions: out of memory");
	(void)missions_load_dir(sp.sp_missions_dir, agent_exists, report_log,
	    NULL, ml, MISSIONS_MAX, &n);
	for (i = 0; i < n; i++) {
		if ((e = calloc(1, sizeof(*e))) == NULL)
			fatalx("missions: out of memory");
		e->me_m = ml[i].ml_m;
		mission_tab[mission_n++] = e;
	}
	free(ml);
	log_info("%zu mission(s) loaded", mission_n);
}

static void
audit_ignore_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	if (!spawner_audit_acked(m))
		log_warnx("audit record not acknowledged");
}

/* The neutral result fields (MI-4), shared by mission.run and replies. */
static void
result_fields(struct json_object *o, const struct mission_last *l)
{
	json_object_object_add(
	    o, "runId", json_object_new_string(l->ml_run_id));
	json_object_object_add(
	    o, "status", json_object_new_string(l->ml_status));
	json_object_object_add(
	    o, "durationMs", json_object_new_int64((int64_t)l->ml_ms));
	json_object_object_add(
	    o, "outputsPersisted", json_object_new_int((int)l->ml_persisted));
	json_object_object_add(
	    o, "outputsEmitted", json_object_new_int((int)l->ml_emitted));
	if (l->ml_errclass != NULL)
		json_object_object_add(
		    o, "errorClass", json_object_new_string(l->ml_errclass));
}

/* Record an outcome: lastRun, and mission.run to auditd (MI-4). */
static void
mission_record(struct mission_ent *e, const struct mission_last *l)
{
	struct json_object *o = json_object_new_object();

	e->me_last = *l;
	e->me_has_last = 1;
	json_object_object_add(
	    o, "kind", json_object_new_string("mission.run"));
	json_object_object_add(
	    o, "missionId", json_object_new_string(e->me_m.mi_id));
	json_object_object_add(
	    o, "trigger", json_object_new_string(l->ml_trigger));
	result_fields(o, l);
	if (spawner_audit(o, audit_ignore_cb, NULL) == -1)
		log_warnx("audit unavailable for a mission");
	json_object_put(o);
}

static void
mrun_free(struct mrun *mr)
{
	if (mr->mr_text != NULL) {
		explicit_bzero(mr->mr_text, mr->mr_len);
		free(mr->mr_text);
	}
	free(mr);
}

static void
mrun_last(const struct mrun *mr, const char *status, const char *ec,
    struct mission_last *l)
{
	memset(l, 0, sizeof(*l));
	memcpy(l->ml_run_id, mr->mr_id, sizeof(l->ml_run_id));
	l->ml_trigger = mr->mr_trigger;
	l->ml_status = status;
	l->ml_errclass = ec;
	l->ml_ms = now_ms_mono() - mr->mr_start;
	l->ml_persisted = mr->mr_persisted;
	l->ml_emitted = mr->mr_emitted;
	l->ml_finished = now_ms_real();
}

/* The run is over: audit, lastRun, the broker's answer (manual), free. */
static void
mrun_finish(struct mrun *mr, const char *status, const char *ec)
{
	struct mission_last l;
	struct json_object *o;

	mrun_last(mr, status, ec, &l);
	mission_record(mr->mr_ent, &l);
	mr->mr_ent->me_running = 0;
	if (mr->mr_conn != NULL && spawner_broker_ok(mr->mr_conn, mr->mr_gen)) {
		o = json_object_new_object();
		result_fields(o, &l);
		ipc_reply(mr->mr_conn, &mr->mr_req, MSG_MISSION_RUN_OK, o, -1);
		json_object_put(o);
	}
	mrun_free(mr);
}

/* Refused before the agent started, answered with a fixed code (manual);
 * a cron run records the class as an error. */
static void
mrun_refuse(struct mrun *mr, const char *code, const char *ec)
{
	struct mission_last l;

	if (mr->mr_conn == NULL) {
		mrun_finish(mr, "error", ec);
		return;
	}
	mrun_last(mr, "error", ec, &l);
	mission_record(mr->mr_ent, &l);
	mr->mr_ent->me_running = 0;
	if (spawner_broker_ok(mr->mr_conn, mr->mr_gen))
		ipc_reply_error(mr->mr_conn, &mr->mr_req, code);
	mrun_free(mr);
}

static void mrun_outputs(struct mrun *);

static void
mission_note_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct mrun *mr = arg;

	if (m == NULL || m->m_type != MSG_VAULT_MISSION_NOTE_OK) {
		mrun_finish(mr, "error", "output-failed");
		return;
	}
	mr->mr_persisted++;
	mr->mr_next++;
	mrun_outputs(mr);
}

/* The note's file name: the declared hint and the run's local date. */
static int
note_hint(
    const struct mrun *mr, const struct mi_output *u, char *out, size_t outsz)
{
	const char *h = u->u_hint != NULL ? u->u_hint : mr->mr_ent->me_m.mi_id;
	size_t n = strlen(h);

	if (n > 3 && strcmp(h + n - 3, ".md") == 0)
		n -= 3;
	if (n > MISSION_HINT_BASE)
		n = MISSION_HINT_BASE;
	if (snprintf(out, outsz, "%.*s-%s", (int)n, h, mr->mr_date) >=
	    (int)outsz)
		return -1;
	return 0;
}

/* MI-2 was checked before the run; outputs in order, one at a time. */
static void
mrun_outputs(struct mrun *mr)
{
	struct timeval tv = {MISSION_NOTE_WAIT_S, 0};
	const struct mission *m = &mr->mr_ent->me_m;
	const struct mi_output *u;
	struct ipc_conn *v = sp.sp_d.d_peers[PROC_VAULTD];
	struct json_object *o;
	char hint[VAULT_HINT_MAX + 1];
	int rc;

	for (; mr->mr_next < m->mi_nouts; mr->mr_next++) {
		u = &m->mi_outs[mr->mr_next];
		if (u->u_type == MI_OUT_EVENT) {
			mr->mr_emitted++; /* counted; no event bus yet */
			continue;
		}
		if (v == NULL || note_hint(mr, u, hint, sizeof(hint)) == -1) {
			mrun_finish(mr, "error", "output-failed");
			return;
		}
		o = json_object_new_object();
		json_object_object_add(
		    o, "missionId", json_object_new_string(m->mi_id));
		json_object_object_add(
		    o, "folder", json_object_new_string(u->u_folder));
		json_object_object_add(o, "hint", json_object_new_string(hint));
		json_object_object_add(o, "content",
		    json_object_new_string_len(mr->mr_text, (int)mr->mr_len));
		rc = ipc_request(v, MSG_VAULT_MISSION_NOTE, o, -1,
		    MSG_VAULT_MISSION_NOTE_OK, &tv, mission_note_cb, mr);
		json_object_put(o);
		if (rc == -1)
			mrun_finish(mr, "error", "output-failed");
		return; /* mission_note_cb goes on */
	}
	mrun_finish(mr, "success", NULL);
}

/* A chat run's error class in the mission's closed set. */
static const char *
mission_errclass(const char *ec)
{
	static const struct {
		const char *from, *to;
	} map[] = {
	    {"timeout", "timeout"},
	    {"killed", "killed"},
	    {"non-zero-exit", "non-zero-exit"},
	    {"missing-secret", "agent-unavailable"},
	    {"transport-error", "output-failed"},
	    {"audit-unavailable", "audit-unavailable"},
	};
	size_t i;

	for (i = 0; i < nitems(map); i++)
		if (strcmp(map[i].from, ec) == 0)
			return map[i].to;
	return "spawn-failed";
}

/* The mission's run is over: its text is the outputs' content. */
static void
mission_agent_done(struct run *r, void *arg, const struct run_result *rr)
{
	struct mrun *mr = arg;

	if (rr->rr_errclass != NULL) {
		mrun_finish(mr, "error", mission_errclass(rr->rr_errclass));
		return;
	}
	if ((mr->mr_text = malloc(rr->rr_len + 1)) == NULL) {
		mrun_finish(mr, "error", "output-failed");
		return;
	}
	memcpy(mr->mr_text, rr->rr_text, rr->rr_len);
	mr->mr_text[rr->rr_len] = '\0';
	mr->mr_len = rr->rr_len;
	mrun_outputs(mr);
}

/* Its text is collected only: there is no stream to tell. */
static void
mission_agent_event(struct run *r, void *arg, struct json_object *o)
{
	json_object_put(o);
}

/* The mission's run is never left without its reader. */
static int
mission_agent_listening(const struct run *r, void *arg)
{
	return 1;
}

/* Its start failed: logged here, told as its end (rs_ended). */
static void
mission_agent_refused(struct run *r, void *arg, const char *code)
{
	run_warn(r, code);
}

/* A mission's run has no stream, no chat note, no cancel by run id. */
static const struct run_sink_ops mission_sink = {
    .rs_event = mission_agent_event,
    .rs_listening = mission_agent_listening,
    .rs_refused = mission_agent_refused,
    .rs_ended = mission_agent_done,
};

/*
 * Start a run of e: opts is a manual run's options (NULL: none given);
 * conn/req the broker's request, or NULL for cron.  Always ends in
 * exactly one mission.run record and, for manual runs, one answer.
 */
static void
mission_begin(struct mission_ent *e, const char *trigger,
    struct json_object *opts, struct ipc_conn *c, struct ipc_msg *m)
{
	struct json_object *resolved = NULL;
	const struct mission *mi = &e->me_m;
	const char *code;
	struct agent *ag;
	struct mrun *mr;
	struct tm tm;
	char *prompt = NULL;
	time_t now;
	int rc;

	if ((mr = calloc(1, sizeof(*mr))) == NULL ||
	    random_hex(mr->mr_id, sizeof(mr->mr_id), 8) == -1) {
		free(mr);
		if (c != NULL)
			ipc_reply_error(c, m, "internal");
		return;
	}
	mr->mr_ent = e;
	mr->mr_trigger = trigger;
	mr->mr_start = now_ms_mono();
	e->me_started = mr->mr_start;
	if (c != NULL)
		spawner_req_keep(c, m, &mr->mr_conn, &mr->mr_gen, &mr->mr_req);
	e->me_running = 1;
	e->me_skipped = 0;
	if (wallclock_now(&now) == -1)
		now = time(NULL);
	if (wallclock_localtime(mi->mi_tz, now, &tm) == -1 ||
	    strftime(mr->mr_date, sizeof(mr->mr_date), "%Y-%m-%d", &tm) == 0)
		snprintf(mr->mr_date, sizeof(mr->mr_date), "undated");
	/* MI-2: every output has its permission, or nothing runs. */
	if (mission_permitted(mi) == -1) {
		mrun_finish(mr, "denied", "permission-denied");
		return;
	}
	/* MI-3: the schema decides; nothing of the options is echoed. */
	if (mission_options(mi, opts, &resolved) == -1 ||
	    mission_render(mi, resolved, &prompt) == -1) {
		json_object_put(resolved);
		mrun_refuse(mr, "mission-options-invalid", "options-invalid");
		return;
	}
	json_object_put(resolved);
	if ((ag = agent_find(mi->mi_agent)) == NULL) {
		explicit_bzero_str(prompt);
		free(prompt);
		mrun_refuse(mr, "agent-unavailable", "agent-unavailable");
		return;
	}
	rc = run_headless(
	    ag, mr->mr_id, prompt, mi->mi_timeout_ms, &mission_sink, mr, &code);
	explicit_bzero_str(prompt);
	free(prompt);
	if (rc == 0)
		return; /* mission_agent_done goes on */
	if (strcmp(code, "invalid-prompt") == 0 ||
	    strcmp(code, "prompt-flag-like") == 0)
		mrun_refuse(mr, "mission-options-invalid", "options-invalid");
	else if (strcmp(code, "missing-secret") == 0)
		mrun_refuse(mr, "agent-unavailable", "agent-unavailable");
	else if (strcmp(code, "busy") == 0 ||
		 strcmp(code, "audit-unavailable") == 0)
		mrun_finish(mr, "error", code);
	else
		mrun_finish(mr, "error", "spawn-failed");
}

/* At most one skip record between two runs of a mission: fires bound
 * the records they cause, not only the runs. */
static void
mission_skip(struct mission_ent *e, const char *ec)
{
	struct mission_last l;

	if (e->me_skipped)
		return;
	e->me_skipped = 1;
	memset(&l, 0, sizeof(l));
	if (random_hex(l.ml_run_id, sizeof(l.ml_run_id), 8) == -1)
		return;
	l.ml_trigger = "cron";
	l.ml_status = "skipped";
	l.ml_errclass = ec;
	l.ml_finished = now_ms_real();
	mission_record(e, &l);
}

/*
 * MI-1: MSG_MISSION_FIRE {id, now, missed} from sched: a slot of a cron
 * mission came (now) and an earlier one passed unseen (missed).  Only a
 * declared cron mission is fired, and only as its own declaration says:
 * a missed slot runs late with catchUp, else is recorded skipped-missed;
 * a mission still running is skipped busy.  Anything else is refused
 * and changes nothing.
 */
void
mission_fire_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *v;
	struct mission_ent *e;
	struct mission_fire f;
	const char *id;
	size_t len;
	int cur, missed;

	id = json_shape_str(m->m_obj, "id", &len);
	if (!vaultpath_name_ok(id, len) || (e = mission_find(id)) == NULL ||
	    !e->me_m.mi_has_cron) {
		log_warnx("a fire for an undeclared mission refused");
		return;
	}
	if (sp.sp_stopping)
		return;
	cur = json_object_object_get_ex(m->m_obj, "now", &v) &&
	      json_object_get_boolean(v);
	missed = json_object_object_get_ex(m->m_obj, "missed", &v) &&
		 json_object_get_boolean(v);
	mission_fire_decide(
	    cur, missed, e->me_m.mi_catch_up, e->me_running, &f);
	if (f.mf_skip_missed)
		mission_skip(e, "skipped-missed");
	if (f.mf_busy)
		mission_skip(e, "busy");
	if (f.mf_run)
		mission_begin(e, "cron", NULL, NULL, NULL);
}

/*
 * MSG_MISSION_CRON: the cron missions, once per sched channel, and only
 * once auditd and vaultd are there too, so that no fire comes before
 * its records and notes can be kept.
 */
void
missions_declare(void)
{
	struct json_object *o, *arr, *it;
	struct ipc_conn *s = sp.sp_d.d_peers[PROC_SCHED];
	const struct mission *mi;
	size_t i;

	if (s == NULL || sp.sp_declared ||
	    sp.sp_d.d_peers[PROC_AUDITD] == NULL ||
	    sp.sp_d.d_peers[PROC_VAULTD] == NULL)
		return;
	o = json_object_new_object();
	arr = json_object_new_array();
	for (i = 0; i < mission_n; i++) {
		mi = &mission_tab[i]->me_m;
		if (!mi->mi_has_cron)
			continue;
		it = json_object_new_object();
		json_object_object_add(
		    it, "id", json_object_new_string(mi->mi_id));
		json_object_object_add(
		    it, "cron", json_object_new_string(mi->mi_cron_text));
		json_object_object_add(it, "timezone",
		    json_object_new_string(
			mi->mi_tz != NULL ? mi->mi_tz : "UTC"));
		json_object_array_add(arr, it);
	}
	json_object_object_add(o, "missions", arr);
	if (ipc_send(s, MSG_MISSION_CRON, o, -1) == -1)
		log_warnx("cron missions not declared; cron triggers are off");
	else
		sp.sp_declared = 1;
	json_object_put(o);
}

/* MSG_MISSION_RUN {id, options?} from the broker. */
void
mission_run_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *opts = NULL;
	struct mission_ent *e;
	const char *id;

	/* Typed and bounded by the row's shape; the values are checked here. */
	id = json_shape_str(m->m_obj, "id", NULL);
	json_object_object_get_ex(m->m_obj, "options", &opts);
	/* Unknown ids (and missions without a manual trigger) are not
	 * audited, like unknown agents (API-5). */
	if (!vaultpath_name_ok(id, strlen(id)) ||
	    (e = mission_find(id)) == NULL || !e->me_m.mi_manual) {
		ipc_reply_error(c, m, "mission-not-found");
		return;
	}
	if (e->me_running) {
		ipc_reply_error(c, m, "mission-busy");
		return;
	}
	mission_begin(e, "manual", opts, c, m);
}

static const char *
opt_type_name(enum mi_opt_type t)
{
	switch (t) {
	case MI_OPT_STRING:
		return "string";
	case MI_OPT_INTEGER:
		return "integer";
	case MI_OPT_BOOLEAN:
		return "boolean";
	default:
		return "enum";
	}
}

static struct json_object *
option_json(const struct mi_option *op)
{
	struct json_object *o = json_object_new_object(), *vals;
	size_t i;

	json_object_object_add(o, "name", json_object_new_string(op->o_name));
	json_object_object_add(
	    o, "type", json_object_new_string(opt_type_name(op->o_type)));
	json_object_object_add(
	    o, "required", json_object_new_boolean(!op->o_has_default));
	switch (op->o_type) {
	case MI_OPT_STRING:
		json_object_object_add(o, "maxLength",
		    json_object_new_int64((int64_t)op->o_max_length));
		if (op->o_pattern != NULL)
			json_object_object_add(o, "pattern",
			    json_object_new_string(op->o_pattern));
		break;
	case MI_OPT_INTEGER:
		json_object_object_add(
		    o, "min", json_object_new_int64((int64_t)op->o_min));
		json_object_object_add(
		    o, "max", json_object_new_int64((int64_t)op->o_max));
		break;
	case MI_OPT_ENUM:
		vals = json_object_new_array();
		for (i = 0; i < op->o_nvalues; i++)
			json_object_array_add(
			    vals, json_object_new_string(op->o_values[i]));
		json_object_object_add(o, "values", vals);
		break;
	default:
		break;
	}
	if (op->o_has_default && op->o_default != NULL)
		json_object_object_add(
		    o, "default", json_object_get(op->o_default));
	return o;
}

/* API-7: what the dashboard may show; never a folder, hint or content. */
static struct json_object *
mission_json(const struct mission_ent *e)
{
	const struct mission *m = &e->me_m;
	struct json_object *o = json_object_new_object(), *a, *u, *l;
	size_t i;

	json_object_object_add(o, "id", json_object_new_string(m->mi_id));
	json_object_object_add(o, "label", json_object_new_string(m->mi_label));
	json_object_object_add(o, "agent", json_object_new_string(m->mi_agent));
	json_object_object_add(
	    o, "manual", json_object_new_boolean(m->mi_manual));
	if (m->mi_has_cron && m->mi_cron_text != NULL)
		json_object_object_add(
		    o, "cron", json_object_new_string(m->mi_cron_text));
	json_object_object_add(o, "timezone",
	    json_object_new_string(m->mi_tz != NULL ? m->mi_tz : "UTC"));
	a = json_object_new_array();
	for (i = 0; i < m->mi_nopts; i++)
		json_object_array_add(a, option_json(&m->mi_opts[i]));
	json_object_object_add(o, "options", a);
	a = json_object_new_array();
	for (i = 0; i < m->mi_nouts; i++) {
		u = json_object_new_object();
		json_object_object_add(u, "type",
		    json_object_new_string(m->mi_outs[i].u_type == MI_OUT_EVENT
					       ? "event"
					       : "vault-note"));
		json_object_array_add(a, u);
	}
	json_object_object_add(o, "outputs", a);
	a = json_object_new_array();
	for (i = 0; i < nitems(perm_bits); i++)
		if (m->mi_perms & perm_bits[i])
			json_object_array_add(
			    a, json_object_new_string(perm_names[i]));
	json_object_object_add(o, "permissions", a);
	json_object_object_add(
	    o, "running", json_object_new_boolean(e->me_running));
	/* How long the run has gone on, on the spawner's clock: a manual
	 * run's request stays open until it ends. */
	if (e->me_running)
		json_object_object_add(o, "elapsedMs",
		    json_object_new_int64(
			(int64_t)(now_ms_mono() - e->me_started)));
	if (e->me_has_last) {
		l = json_object_new_object();
		result_fields(l, &e->me_last);
		json_object_object_add(l, "trigger",
		    json_object_new_string(e->me_last.ml_trigger));
		json_object_object_add(l, "finishedAt",
		    json_object_new_int64(e->me_last.ml_finished));
		json_object_object_add(o, "lastRun", l);
	}
	return o;
}

/* MSG_MISSION_LIST {} from the broker. */
void
mission_list_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o, *arr;
	size_t i;

	o = json_object_new_object();
	arr = json_object_new_array();
	for (i = 0; i < mission_n; i++)
		json_object_array_add(arr, mission_json(mission_tab[i]));
	json_object_object_add(o, "missions", arr);
	ipc_reply(c, m, MSG_MISSION_LIST_OK, o, -1);
	json_object_put(o);
}
