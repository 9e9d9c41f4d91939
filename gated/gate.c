/*
 * SBX-6, SBX-7: one gate call in gated (see gated.h).  One datagram per
 * call, checked strictly, decided by policy/gate.c with the agent's
 * `commands:` policy, audited as verb.run (command name, verdict and
 * rule; never arguments) and answered only after the audit ack.  `ask`
 * holds the call as an approval for the operator (gate_approve.c).  The
 * channels the calls come on are gate_chan.c's.  Touches no file: it
 * only resolves paths (realpath, readlink, stat) to decide.
 */
#include <sys/stat.h>

#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "audit_emit.h"
#include "audit_schema.h"
#include "gated.h"
#include "gated_shapes.h"
#include "hook.h"
#include "log.h"
#include "util.h"

/* Copy with truncation reported (-1); dst is always terminated. */
int
gate_scpy(char *dst, size_t dstsz, const char *src)
{
	return snprintf(dst, dstsz, "%s", src) >= (int)dstsz ? -1 : 0;
}

/* ---- the policy ---- */

/*
 * path (relative to cwd unless absolute; "~" and "~/" against the
 * operator's home) resolved component by component: every prefix that
 * exists is realpath()ed (symlinks followed), the rest is kept as
 * written, and ".." climbs from what was resolved so far.  -1 for an
 * error other than a missing component (then the call is refused).
 * arg: the run's protect_ctx (its home).
 */
static int
gate_resolve(
    const char *path, const char *cwd, char *out, size_t outsz, void *arg)
{
	char full[2 * PATH_MAX], cur[PATH_MAX], tmp[PATH_MAX];
	const struct protect_ctx *pc = arg;
	const char *home = pc->pc_home, *p, *e;
	struct stat st;
	size_t len, clen;
	int n;

	if (path == NULL || path[0] == '\0')
		return -1;
	if (path[0] == '/')
		n = snprintf(full, sizeof(full), "%s", path);
	else if (path[0] == '~' && (path[1] == '\0' || path[1] == '/')) {
		if (home == NULL)
			return -1;
		n = snprintf(full, sizeof(full), "%s%s", home, path + 1);
	} else {
		if (cwd == NULL || cwd[0] != '/')
			return -1;
		n = snprintf(full, sizeof(full), "%s/%s", cwd, path);
	}
	if (n < 0 || (size_t)n >= sizeof(full))
		return -1;
	gate_scpy(cur, sizeof(cur), "/");
	for (p = full; *p != '\0'; p = *e ? e + 1 : e) {
		e = strchr(p, '/');
		if (e == NULL)
			e = p + strlen(p);
		len = (size_t)(e - p);
		if (len == 0 || (len == 1 && p[0] == '.'))
			continue;
		clen = strlen(cur);
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (clen > 1 && cur[clen - 1] != '/')
				clen--;
			if (clen > 1)
				clen--; /* the slash before the last part */
			cur[clen] = '\0';
			continue;
		}
		if (clen + (clen > 1) + len >= sizeof(cur))
			return -1;
		if (clen > 1)
			cur[clen++] = '/';
		memcpy(cur + clen, p, len);
		cur[clen + len] = '\0';
		if (realpath(cur, tmp) != NULL)
			gate_scpy(cur, sizeof(cur), tmp);
		else if (errno != ENOENT && errno != ENOTDIR)
			return -1;
		else if (lstat(cur, &st) == 0 && S_ISLNK(st.st_mode))
			return -1; /* a dangling link: its target is unknown */
	}
	if (gate_scpy(out, outsz, cur) == -1)
		return -1;
	return 0;
}

/* path equals dir or lies beneath it (both resolved). */
int
gate_path_inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

/* ^[A-Za-z0-9._+-]{1,64}$, the audit schema's verb; else "-". */
static void
verb_set(char *dst, size_t dstsz, const char *src)
{
	size_t n = strlen(src);

	if (n >= dstsz || !audit_pattern_ok(AP_BIN, src, n))
		src = "-";
	memmove(dst, src, strlen(src) + 1); /* src may be dst */
}

/* ^[a-z0-9][a-z0-9.-]{0,63}$, the audit schema's rule; else "internal". */
void
gate_rule_set(char *dst, size_t dstsz, const char *src)
{
	size_t n = strlen(src);

	if (n >= dstsz || !audit_pattern_ok(AP_RULE, src, n))
		src = "internal";
	memmove(dst, src, strlen(src) + 1); /* src may be dst */
}

/* ---- one call ---- */

#define GK_EXEC (-2) /* the plain form's argv */

/*
 * {tool, kind, cwd, line | argv | filePath?} and nothing else: a shell
 * line for kind "shell", an argv for the plain form (kind "exec"), a path
 * (optional for "search") for "read", "write" and "search"; the tool is
 * the CLI's own name, for the audit (SBX-8, policy/hook.h).  Keys, types
 * and bounds are gate_call_shape's (spawner_shapes.h, SU-3); the values
 * are checked here.
 */
static int
gate_call_parse(struct json_object *o, struct gate_call *k)
{
	struct json_object *v, *w;
	const char *kind;
	size_t i, total = 0;

	memset(k, 0, sizeof(*k));
	if (!json_shape_ok(o, gate_call_shape, nitems(gate_call_shape)))
		return -1;
	kind = json_shape_str(o, "kind", NULL);
	k->gk_kind =
	    strcmp(kind, "exec") == 0 ? GK_EXEC : hook_kind_parse(kind);
	k->gk_tool = json_shape_str(o, "tool", NULL);
	k->gk_cwd = json_shape_str(o, "cwd", NULL);
	k->gk_path = json_shape_str(o, "filePath", NULL);
	k->gk_line = json_shape_str(o, "line", NULL);
	k->gk_deadline = json_shape_int(o, "deadline", 0);
	if (k->gk_kind == -1 || !hook_tool_name_ok(k->gk_tool) ||
	    k->gk_cwd[0] != '/')
		return -1;
	if (k->gk_path != NULL && k->gk_kind != HK_READ &&
	    k->gk_kind != HK_WRITE && k->gk_kind != HK_SEARCH)
		return -1;
	if (k->gk_line != NULL && k->gk_kind != HK_SHELL)
		return -1;
	if (json_object_object_get_ex(o, "argv", &v)) {
		if (k->gk_kind != GK_EXEC ||
		    (k->gk_argc = json_object_array_length(v)) == 0)
			return -1;
		for (i = 0; i < k->gk_argc; i++) {
			w = json_object_array_get_idx(v, i);
			if (!json_object_is_type(w, json_type_string) ||
			    strlen(json_object_get_string(w)) !=
				(size_t)json_object_get_string_len(w))
				return -1;
			total += (size_t)json_object_get_string_len(w) + 1;
			k->gk_argv[i] = (char *)json_object_get_string(w);
		}
		if (total > GATE_LINE_MAX)
			return -1;
	}
	/* Each kind carries exactly what its check needs. */
	if ((k->gk_kind == HK_SHELL && k->gk_line == NULL) ||
	    (k->gk_kind == GK_EXEC && k->gk_argc == 0) ||
	    ((k->gk_kind == HK_READ || k->gk_kind == HK_WRITE) &&
		k->gk_path == NULL))
		return -1;
	return 0;
}

static void
result_set(struct gate_result *res, enum gate_verdict v, const char *verb,
    const char *rule)
{
	res->g_verdict = v;
	verb_set(res->g_verb, sizeof(res->g_verb), verb);
	gate_rule_set(res->g_rule, sizeof(res->g_rule), rule);
}

/* A file tool: its path must not be protected; writers stay inside. */
static void
gate_file(const struct gate_chan *ch, const struct gate_call *k, int writes,
    struct gate_result *res)
{
	char cwd[PATH_MAX], path[PATH_MAX];

	const struct protect_ctx *pc = &ch->gc_protect;

	if (gate_resolve(k->gk_cwd, "/", cwd, sizeof(cwd), (void *)pc) == -1 ||
	    gate_resolve(k->gk_path ? k->gk_path : cwd, cwd, path, sizeof(path),
		(void *)pc) == -1)
		result_set(res, GATE_DENY, k->gk_tool, "unresolvable-path");
	else if (protect_path_hit(pc, path) ||
		 (writes && gate_git_internal(path)))
		result_set(res, GATE_DENY, k->gk_tool, "protected-path");
	else if (writes && !gate_path_inside(path, ch->gc_ws))
		result_set(res, GATE_DENY, k->gk_tool, "outside-workspace");
	else
		result_set(res, GATE_ALLOW, k->gk_tool, "file-allowed");
}

static void
gate_decide(const struct gate_chan *ch, const struct gate_call *k, char *cwd,
    size_t cwdsz, struct gate_result *res)
{
	struct gate_req req;

	memset(res, 0, sizeof(*res));
	switch (k->gk_kind) {
	case HK_READ:
	case HK_SEARCH:
	case HK_WRITE:
		gate_file(ch, k, k->gk_kind == HK_WRITE, res);
		return;
	case HK_WEB: /* the sandbox's network policy decides (SBX-3) */
		result_set(res, GATE_ALLOW, k->gk_tool, "web-tool");
		return;
	case HK_INERT:
		result_set(res, GATE_ALLOW, k->gk_tool, "other-tool");
		return;
	case HK_UNKNOWN: /* SBX-6 fails closed; its name is the agent's
			  * text, never recorded (AU-4) */
		result_set(res, GATE_DENY, "-", "unknown-tool");
		return;
	default: /* HK_SHELL, GK_EXEC */
		break;
	}
	if (gate_resolve(k->gk_cwd, "/", cwd, cwdsz, (void *)&ch->gc_protect) ==
	    -1) {
		result_set(res, GATE_DENY, "-", "unresolvable-path");
		return;
	}
	memset(&req, 0, sizeof(req));
	req.gr_line = k->gk_line;
	req.gr_argv = k->gk_argc > 0 ? k->gk_argv : NULL;
	req.gr_argc = k->gk_argc;
	req.gr_cwd = cwd;
	req.gr_workspace = ch->gc_ws;
	if (gate_check(&ch->gc_policy, &req, &ch->gc_protect, gate_resolve,
		(void *)&ch->gc_protect, res) != 0) {
		res->g_verdict = GATE_DENY;
		if (res->g_rule[0] == '\0')
			gate_scpy(
			    res->g_rule, sizeof(res->g_rule), "unparseable");
	}
	/* Never trust a field to fit the audit schema: clamp to it. */
	verb_set(res->g_verb, sizeof(res->g_verb), res->g_verb);
	gate_rule_set(res->g_rule, sizeof(res->g_rule), res->g_rule);
}

/* ---- answers and audit ---- */

static const char *
verdict_message(int allow, const char *rule)
{
	if (allow)
		return "allowed by cordon's command gate";
	if (strcmp(rule, "run-ended") == 0)
		return "the run ended";
	if (strcmp(rule, "audit-unavailable") == 0)
		return "the audit log is unavailable";
	return "refused by cordon's command gate";
}

/*
 * One MSG_GATE_VERDICT datagram on the reply socket, then close it; a
 * call by path (SBX-8) gets its nonce in it, and the spawner copies it
 * unread into the slot's N.out (at most PIPE_BUF bytes: one atomic
 * write among the slot's answers).
 */
void
gate_answer(struct gate_item *gi, int allow, const char *rule)
{
	struct json_object *o;
	uint8_t buf[1024];
	ssize_t n;
	int fifo = gi->gi_fifo;

	if (gi->gi_fd == -1)
		return;
	o = json_object_new_object();
	json_object_object_add(
	    o, "verdict", json_object_new_string(allow ? "allow" : "deny"));
	json_object_object_add(o, "rule", json_object_new_string(rule));
	json_object_object_add(
	    o, "message", json_object_new_string(verdict_message(allow, rule)));
	if (fifo)
		json_object_object_add(
		    o, "nonce", json_object_new_string(gi->gi_nonce));
	n = ipc_dgram_encode(
	    MSG_GATE_VERDICT, IPC_FLAG_REPLY, o, buf, sizeof(buf));
	json_object_put(o);
	/* A caller that left (or never reads) is its own loss. */
	if (n > 0 &&
	    send(gi->gi_fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) != n)
		log_debug("gate: a verdict could not be delivered");
	close(gi->gi_fd);
	gi->gi_fd = -1;
}

static void
gate_item_free(struct gate_item *gi)
{
	TAILQ_REMOVE(&gd.gd_items, gi, gi_entry);
	if (gi->gi_state == GI_HELD) {
		gd.gd_nheld--;
		if (gi->gi_chan != NULL)
			gi->gi_chan->gc_held--;
	}
	if (gi->gi_timer != NULL)
		event_free(gi->gi_timer);
	if (gi->gi_fd != -1)
		close(gi->gi_fd);
	if (gi->gi_args != NULL) {
		explicit_bzero(gi->gi_args, strlen(gi->gi_args));
		free(gi->gi_args);
	}
	free(gi);
}

static void
gate_audit_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct gate_item *gi = arg;
	int acked = audit_emit_acked(m);

	if (gi->gi_chan != NULL)
		gi->gi_chan->gc_inflight--;
	/* Fail closed: no ack, or a run that ended meanwhile, is a deny. */
	if (!acked)
		gate_answer(gi, 0, "audit-unavailable");
	else if (gi->gi_chan == NULL)
		gate_answer(gi, 0, "run-ended");
	else
		gate_answer(gi, gi->gi_allow, gi->gi_rule);
	gate_item_free(gi);
}

/*
 * Audit verb.run (agent, runId, verb, verdict, rule; never arguments), then
 * answer from gate_audit_cb.  The item leaves the held set first.
 */
void
gate_audit(struct gate_item *gi, const char *verdict, int allow)
{
	struct json_object *o = json_object_new_object();

	if (gi->gi_state == GI_HELD) {
		gd.gd_nheld--;
		if (gi->gi_chan != NULL)
			gi->gi_chan->gc_held--;
		gi->gi_state = GI_AUDIT;
		if (gi->gi_timer != NULL)
			event_del(gi->gi_timer);
	}
	gi->gi_allow = allow;
	json_object_object_add(o, "kind", json_object_new_string("verb.run"));
	json_object_object_add(
	    o, "agent", json_object_new_string(gi->gi_agent));
	if (gi->gi_run[0] != '\0')
		json_object_object_add(
		    o, "runId", json_object_new_string(gi->gi_run));
	json_object_object_add(o, "verb", json_object_new_string(gi->gi_verb));
	json_object_object_add(o, "verdict", json_object_new_string(verdict));
	json_object_object_add(o, "rule", json_object_new_string(gi->gi_rule));
	if (gi->gi_chan != NULL)
		gi->gi_chan->gc_inflight++;
	if (audit_emit(gd.gd_d.d_peers[PROC_AUDITD], o, gate_audit_cb, gi) ==
	    -1) {
		log_warnx("gate: audit unavailable, %s refused", gi->gi_verb);
		if (gi->gi_chan != NULL)
			gi->gi_chan->gc_inflight--;
		gate_answer(gi, 0, "audit-unavailable");
		gate_item_free(gi);
	}
	json_object_put(o);
}

/* The FIFO call's nonce: 16 hex digits, taken out of the request. */
static int
gate_nonce_take(struct json_object *o, char *nonce)
{
	const char *s = json_get_str(o, "nonce", 16);

	if (s == NULL || !hex_lower_n(s, 16))
		return -1;
	memcpy(nonce, s, 17);
	json_object_object_del(o, "nonce");
	return 0;
}

/*
 * A call refused before it is read, with no record of its own (too many
 * in flight; past the record rate).  A call by path is answered only
 * with its nonce.
 */
static void
gate_refuse_early(struct gate_item *gi, const uint8_t *buf, size_t n, int fifo,
    const char *why)
{
	struct json_object *o;
	struct ipc_hdr h;

	if (fifo && n <= GATE_DGRAM_MAX &&
	    (o = ipc_dgram_decode(buf, n, &h)) != NULL) {
		(void)gate_nonce_take(o, gi->gi_nonce);
		json_object_put(o);
	}
	gate_answer(gi, 0, why);
	gate_item_free(gi);
}

/*
 * SBX-6, AU-6: a run's calls past its record rate are refused
 * (rate-limited) and counted; this one verb.run record counts them,
 * once a token is back or the run's channel closes, so an agent calling
 * its gate in a loop cannot fill the trail, and every call is in it.
 */
void
gate_limited_flush(struct gate_chan *ch)
{
	struct json_object *o;

	if (ch->gc_limited == 0)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "kind", json_object_new_string("verb.run"));
	json_object_object_add(
	    o, "agent", json_object_new_string(ch->gc_agent));
	json_object_object_add(o, "runId", json_object_new_string(ch->gc_run));
	json_object_object_add(o, "verb", json_object_new_string("-"));
	json_object_object_add(o, "verdict", json_object_new_string("deny"));
	json_object_object_add(
	    o, "rule", json_object_new_string("rate-limited"));
	json_object_object_add(
	    o, "refused", json_object_new_int64((int64_t)ch->gc_limited));
	if (audit_emit(gd.gd_d.d_peers[PROC_AUDITD], o, NULL, NULL) == -1)
		log_warnx("gate: run %s: its rate-limited record not sent",
		    ch->gc_run);
	json_object_put(o);
	ch->gc_limited = 0;
}

/* One call with its reply socket rfd; fifo: a call by path (SBX-8). */
void
gate_handle(
    struct gate_chan *ch, const uint8_t *buf, size_t n, int rfd, int fifo)
{
	struct json_object *o = NULL;
	struct gate_item *gi;
	struct gate_result res;
	struct gate_call k;
	struct ipc_hdr h;
	char cwd[PATH_MAX] = "";
	int r;

	if ((gi = calloc(1, sizeof(*gi))) == NULL) {
		close(rfd);
		return;
	}
	gi->gi_fd = rfd;
	gi->gi_fifo = fifo;
	gi->gi_chan = ch;
	gi->gi_state = GI_AUDIT;
	gate_scpy(gi->gi_agent, sizeof(gi->gi_agent), ch->gc_agent);
	gate_scpy(gi->gi_run, sizeof(gi->gi_run), ch->gc_run);
	TAILQ_INSERT_TAIL(&gd.gd_items, gi, gi_entry);
	if (ch->gc_inflight >= GATE_INFLIGHT_MAX) {
		if (log_limit(&ch->gc_loglim, ch->gc_run))
			log_warnx("gate: run %s: too many calls in flight",
			    ch->gc_run);
		gate_refuse_early(gi, buf, n, fifo, "busy");
		return;
	}
	if (!rate_take(&ch->gc_rate, GATE_REC_RATE, GATE_REC_BURST)) {
		gate_refuse_early(gi, buf, n, fifo, "rate-limited");
		ch->gc_limited++;
		return;
	}
	gate_limited_flush(ch);
	if (n > GATE_DGRAM_MAX || (o = ipc_dgram_decode(buf, n, &h)) == NULL ||
	    h.type != MSG_GATE_CHECK || h.id != 0 ||
	    h.flags != (fifo ? 0 : IPC_FLAG_FD) ||
	    (fifo && gate_nonce_take(o, gi->gi_nonce) == -1) ||
	    gate_call_parse(o, &k) == -1) {
		if (log_limit(&ch->gc_loglim, ch->gc_run))
			log_warnx(
			    "gate: run %s: malformed call refused", ch->gc_run);
		result_set(&res, GATE_DENY, "-", "bad-request");
	} else {
		gate_decide(ch, &k, cwd, sizeof(cwd), &res);
		/* SBX-8: an answer its caller would not wait for is none. */
		if (res.g_verdict != GATE_DENY &&
		    k.gk_deadline - (int64_t)now_ms_mono() < GATE_LATE_MS) {
			if (log_limit(&ch->gc_loglim, ch->gc_run))
				log_warnx("gate: run %s: a call came too late "
					  "to answer",
				    ch->gc_run);
			result_set(
			    &res, GATE_DENY, res.g_verb, "past-deadline");
		}
	}
	gate_scpy(gi->gi_verb, sizeof(gi->gi_verb), res.g_verb);
	gate_scpy(gi->gi_rule, sizeof(gi->gi_rule), res.g_rule);
	if (res.g_verdict == GATE_ASK) {
		if ((r = approval_hold(gi, ch, &k, cwd)) == 0) {
			json_object_put(o);
			return;
		}
		if (log_limit(&ch->gc_loglim, ch->gc_run))
			log_warnx("gate: run %s: approval could not be held",
			    ch->gc_run);
		gate_rule_set(gi->gi_rule, sizeof(gi->gi_rule),
		    r == -2 ? "ask-too-long" : "ask-unavailable");
		res.g_verdict = GATE_DENY;
	}
	json_object_put(o);
	gate_audit(gi, res.g_verdict == GATE_ALLOW ? "allow" : "deny",
	    res.g_verdict == GATE_ALLOW);
}
