/*
 * SBX-7: gate calls whose verdict is `ask`, held for the operator with
 * their command line cleaned here and scrubbed by the spawner (SP-11:
 * the run's secret values are the spawner's alone; MSG_GATE_SCRUB),
 * listed to the broker once scrubbed and decided by it (or by their
 * timeout), then audited and answered as any call.  Touches no file.
 */

#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "gated.h"
#include "json.h"
#include "log.h"
#include "sanitize.h"
#include "util.h"

#define GATE_SCRUB_WAIT_S 5 /* the spawner's scrubbed line, within */

/* An exec call's word as a shell would read it back: as it is when
 * every byte is one a shell takes literally, else in single quotes. */
static void
approval_word(struct evbuffer *in, const char *w)
{
	static const char lit[] = "abcdefghijklmnopqrstuvwxyz"
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "0123456789_@%+=:,./-";
	const char *p;

	for (p = w; *p != '\0'; p++)
		if ((unsigned char)*p < 0x80 && strchr(lit, *p) == NULL)
			break;
	if (*w != '\0' && *p == '\0') {
		evbuffer_add(in, w, strlen(w));
		return;
	}
	evbuffer_add(in, "'", 1);
	for (p = w; *p != '\0'; p++)
		if (*p == '\'')
			evbuffer_add(in, "'\\''", 4);
		else
			evbuffer_add(in, p, 1);
	evbuffer_add(in, "'", 1);
}

/*
 * What the operator sees of the command, before the scrub: exactly what
 * would run (SBX-7), cleaned (the one cleaner: no escapes, no C0 or C1
 * controls).  A shell line keeps its line breaks, which may end a
 * command as ';' does (the dashboard shows them); an exec call's words
 * are joined by blanks, in single quotes each that holds a blank or
 * another byte a shell would not take literally.  NULL on no memory.
 */
static char *
approval_args(const struct gate_call *k)
{
	struct evbuffer *in = evbuffer_new(), *cl = evbuffer_new();
	char *s = NULL, *p;
	size_t i, n;

	if (in == NULL || cl == NULL)
		goto done;
	if (k->gk_line != NULL)
		evbuffer_add(in, k->gk_line, strlen(k->gk_line));
	for (i = 0; i < k->gk_argc; i++) {
		if (i > 0)
			evbuffer_add(in, " ", 1);
		approval_word(in, k->gk_argv[i]);
	}
	if ((n = evbuffer_get_length(in)) > 0 &&
	    clean_buf((const char *)evbuffer_pullup(in, -1), n, n + 1, cl) ==
		-1)
		goto done;
	n = evbuffer_get_length(cl);
	p = (char *)evbuffer_pullup(cl, -1);
	if ((s = malloc(n + 1)) == NULL)
		goto done;
	if (n > 0)
		memcpy(s, p, n);
	s[n] = '\0';
done:
	if (in != NULL)
		evbuffer_free(in);
	if (cl != NULL)
		evbuffer_free(cl);
	return s;
}

static void
approval_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gate_item *gi = arg;

	log_info("gate: approval %s timed out", gi->gi_id);
	gate_audit(gi, "ask-timeout", 0);
}

static struct gate_item *
approval_find(const char *id, int scrubbed)
{
	struct gate_item *gi;

	TAILQ_FOREACH (gi, &gd.gd_items, gi_entry)
		if (gi->gi_state == GI_HELD && strcmp(gi->gi_id, id) == 0 &&
		    (gi->gi_args != NULL) == scrubbed)
			return gi;
	return NULL;
}

/* A held call that cannot be shown is denied with rule. */
static void
approval_refuse(struct gate_item *gi, const char *rule)
{
	gate_rule_set(gi->gi_rule, sizeof(gi->gi_rule), rule);
	gate_audit(gi, "deny", 0);
}

/*
 * SP-11: the spawner's scrubbed line.  All of it or nothing: the
 * operator approves the whole line, so a line longer than GATE_ARGS_MAX
 * once scrubbed is denied (ask-too-long), as is one the spawner did not
 * scrub (ask-unavailable).  Listed from now on.
 */
static void
approval_scrub_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	char *id = arg;
	struct gate_item *gi = approval_find(id, 0);
	const char *s;

	free(id);
	if (gi == NULL)
		return; /* decided meanwhile: timed out, or the run ended */
	s = m != NULL && m->m_type == MSG_GATE_SCRUB_OK
		? json_get_str(m->m_obj, "text", GATE_ARGS_MAX)
		: NULL;
	if (m != NULL && m->m_type == MSG_GATE_SCRUB_OK && s == NULL)
		approval_refuse(gi, "ask-too-long");
	else if (s == NULL || (gi->gi_args = strdup(s)) == NULL)
		approval_refuse(gi, "ask-unavailable");
	else
		log_info("gate: %s of run %s held as approval %s", gi->gi_verb,
		    gi->gi_run, gi->gi_id);
}

/* Ask the spawner to scrub line with the run's keys; -1 if it cannot. */
static int
approval_scrub(struct gate_item *gi, const char *line)
{
	struct timeval tv = {GATE_SCRUB_WAIT_S, 0};
	struct json_object *o = json_object_new_object();
	char *id = strdup(gi->gi_id);
	int r = -1;

	json_object_object_add(o, "runId", json_object_new_string(gi->gi_run));
	json_object_object_add(o, "text", json_object_new_string(line));
	if (id != NULL &&
	    (r = ipc_request(gd.gd_d.d_peers[PROC_SPAWNER], MSG_GATE_SCRUB, o,
		 -1, MSG_GATE_SCRUB_OK, &tv, approval_scrub_cb, id)) == -1)
		free(id);
	json_object_put(o);
	return r;
}

/* Approvals held for agent's runs, all of them. */
static size_t
held_of_agent(const char *agent)
{
	struct gate_item *gi;
	size_t n = 0;

	TAILQ_FOREACH (gi, &gd.gd_items, gi_entry)
		if (gi->gi_state == GI_HELD && strcmp(gi->gi_agent, agent) == 0)
			n++;
	return n;
}

/*
 * Hold the call for the operator (listed once the spawner scrubbed its
 * line); -1 if it cannot be held (denied), -2 if its line is too long to
 * show whole (denied, ask-too-long).
 */
int
approval_hold(struct gate_item *gi, struct gate_chan *ch,
    const struct gate_call *k, const char *cwd)
{
	struct timeval tv;
	int64_t ms = (int64_t)gate_ask_timeout(&ch->gc_policy) * 1000,
		late = k->gk_deadline - GATE_LATE_MS - (int64_t)now_ms_mono();
	size_t wl = strlen(ch->gc_ws);
	char *line;
	int r;

	/* One run, or one agent's runs, cannot take every slot from the
	 * others. */
	if (gd.gd_nheld >= GATE_HELD_MAX || ch->gc_held >= GATE_HELD_RUN_MAX ||
	    held_of_agent(ch->gc_agent) >= GATE_HELD_AGENT_MAX ||
	    gd.gd_d.d_peers[PROC_SPAWNER] == NULL)
		return -1;
	if (strcmp(cwd, ch->gc_ws) == 0)
		gate_scpy(gi->gi_cwd, sizeof(gi->gi_cwd), ".");
	else if (gate_path_inside(cwd, ch->gc_ws))
		gate_scpy(gi->gi_cwd, sizeof(gi->gi_cwd),
		    cwd + wl + (strcmp(ch->gc_ws, "/") != 0));
	else
		return -1;
	if ((line = approval_args(k)) == NULL)
		return -1;
	/* Bounded by the call's own bounds; the spawner's row by this. */
	if (strlen(line) > GATE_LINE_MAX) {
		free(line);
		return -2;
	}
	if (random_hex(gi->gi_id, sizeof(gi->gi_id), 8) == -1 ||
	    (gi->gi_timer = evtimer_new(
		 gd.gd_d.d_base, approval_timeout_cb, gi)) == NULL) {
		free(line);
		return -1;
	}
	/* Never held past its caller's bound (SBX-8; gate_handle checked
	 * that some of it is left). */
	if (late < ms)
		ms = late > 0 ? late : 0;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	r = evtimer_add(gi->gi_timer, &tv) == -1 ? -1
						 : approval_scrub(gi, line);
	explicit_bzero(line, strlen(line));
	free(line);
	if (r == -1)
		return -1;
	gi->gi_created = now_ms_real();
	gi->gi_expires = gi->gi_created + ms;
	gi->gi_until = (int64_t)now_ms_mono() + ms;
	gi->gi_state = GI_HELD;
	gd.gd_nheld++;
	ch->gc_held++;
	return 0;
}

/* One held call as the broker lists it: its strings, then its times. */
static struct json_object *
approval_json(const struct gate_item *gi)
{
	const struct {
		const char *k, *v;
	} str[] = {{"id", gi->gi_id}, {"agent", gi->gi_agent},
	    {"runId", gi->gi_run}, {"verb", gi->gi_verb}, {"rule", gi->gi_rule},
	    {"cwd", gi->gi_cwd}, {"args", gi->gi_args}};
	struct json_object *a = json_object_new_object();
	size_t i;

	for (i = 0; i < nitems(str); i++)
		json_object_object_add(
		    a, str[i].k, json_object_new_string(str[i].v));
	json_object_object_add(
	    a, "created", json_object_new_int64(gi->gi_created));
	json_object_object_add(
	    a, "expires", json_object_new_int64(gi->gi_expires));
	return a;
}

void
approval_list_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o, *arr;
	struct gate_item *gi;

	arr = json_object_new_array();
	TAILQ_FOREACH (gi, &gd.gd_items, gi_entry)
		if (gi->gi_state == GI_HELD && gi->gi_args != NULL)
			json_object_array_add(arr, approval_json(gi));
	o = json_object_new_object();
	json_object_object_add(o, "approvals", arr);
	json_object_object_add(o, "now", json_object_new_int64(now_ms_real()));
	ipc_reply(c, m, MSG_APPROVAL_LIST_OK, o, -1);
	json_object_put(o);
}

void
approval_decide_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	const char *id, *dec;
	struct gate_item *gi;
	int allow;

	id = json_shape_str(m->m_obj, "id", NULL);
	dec = json_shape_str(m->m_obj, "decision", NULL);
	if (strcmp(dec, "allow") != 0 && strcmp(dec, "deny") != 0) {
		ipc_reply_error(c, m, "bad-message");
		return;
	}
	if ((gi = approval_find(id, 1)) == NULL) {
		ipc_reply_error(c, m, "unknown-approval");
		return;
	}
	/* Its time is up and its timer not yet run (gated was busy: both
	 * came due in one pass, the decision read first): the timer's
	 * answer, as if it had run first. */
	if ((int64_t)now_ms_mono() >= gi->gi_until) {
		ipc_reply_error(c, m, "unknown-approval");
		approval_timeout_cb(-1, 0, gi);
		return;
	}
	allow = strcmp(dec, "allow") == 0;
	log_info("gate: approval %s: %s", gi->gi_id, allow ? "allow" : "deny");
	ipc_reply(c, m, MSG_APPROVAL_DECIDE_OK, NULL, -1);
	gate_audit(gi, allow ? "ask-allow" : "ask-deny", allow);
}
