/*
 * SBX-6, SBX-7: the spawner's end of the command gate (see gate.h).  One
 * datagram per call, checked strictly, decided by policy/gate.c with the
 * agent's `commands:` policy, audited as verb.run (command name, verdict
 * and rule; never arguments) and answered only after the audit ack.
 * `ask` holds the call as an approval for the operator.  Touches no file:
 * it only resolves paths (realpath) to decide.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "gate.h"
#include "gatechan.h"
#include "hook.h"
#include "json.h"
#include "log.h"
#include "msg.h"
#include "redact.h"
#include "sanitize.h"
#include "spawner.h"
#include "util.h"

/* SBX-8: one pair of named pipes of the run's GATE_FIFO_DIR. */
struct gate_slot {
	struct gate_chan *gs_chan;
	int gs_n;
	int gs_in;  /* N.in, read: reopened after each request's EOF */
	int gs_out; /* N.out, held O_RDWR: a write never meets EPIPE */
	struct event *gs_ev;
	struct evbuffer *gs_buf; /* the request so far */
	int gs_over;		 /* it passed GATE_DGRAM_MAX */
};

struct gate_chan {
	int gc_fd;
	struct event *gc_ev;
	int gc_dir; /* GATE_FIFO_DIR, or -1 */
	struct gate_slot gc_slots[GATE_FIFO_SLOTS];
	char gc_agent[LIM_NAME_MAX + 1];
	char gc_run[17];
	char gc_ws[PATH_MAX]; /* the workspace, resolved */
	const struct gate_policy *gc_policy;
	const struct redact_keys *gc_keys; /* the run's, for its lifetime */
	size_t gc_inflight;		   /* calls awaiting their audit ack */
	size_t gc_held;			   /* its calls held for the operator */
};

enum gi_state { GI_AUDIT, GI_HELD };

/* One call, from its datagram to its answer. */
struct gate_item {
	TAILQ_ENTRY(gate_item) gi_entry;
	struct gate_chan *gi_chan; /* NULL once the run ended */
	int gi_fd;		   /* the caller's reply socket; -1 answered */
	int gi_slot;		   /* or its FIFO slot (SBX-8), -1 */
	char gi_nonce[17];	   /* which the FIFO answer carries */
	enum gi_state gi_state;
	int gi_allow; /* the answer once the audit is acknowledged */
	char gi_verb[65];
	char gi_rule[65];
	char gi_agent[LIM_NAME_MAX + 1];
	/* approvals (SBX-7) */
	char gi_id[17];
	char gi_run[17];
	char gi_cwd[PATH_MAX];		/* relative to the workspace */
	char *gi_args;			/* scrubbed, clamped */
	int64_t gi_created, gi_expires; /* ms since the epoch */
	struct event *gi_timer;
};

static TAILQ_HEAD(, gate_item) items = TAILQ_HEAD_INITIALIZER(items);
static size_t nheld;

/* Copy with truncation reported (-1); dst is always terminated. */
static int
scpy(char *dst, size_t dstsz, const char *src)
{
	return snprintf(dst, dstsz, "%s", src) >= (int)dstsz ? -1 : 0;
}

/* ---- the policy ---- */

/* The agent's `commands:` policy (manifest.c fills the defaults). */
static const struct gate_policy *
gate_policy_of(const struct agent *ag)
{
	return &ag->ag_mf.m_commands;
}

static long
gate_ask_timeout(const struct gate_policy *gp)
{
	if (gp->gp_ask_timeout_sec >= 5 && gp->gp_ask_timeout_sec <= 600)
		return gp->gp_ask_timeout_sec;
	return GATE_ASK_TIMEOUT;
}

/*
 * path (relative to cwd unless absolute; "~" and "~/" against the
 * operator's home) resolved component by component: every prefix that
 * exists is realpath()ed (symlinks followed), the rest is kept as
 * written, and ".." climbs from what was resolved so far.  -1 for an
 * error other than a missing component (then the call is refused).
 */
static int
gate_resolve(
    const char *path, const char *cwd, char *out, size_t outsz, void *arg)
{
	char full[2 * PATH_MAX], cur[PATH_MAX], tmp[PATH_MAX];
	const char *home = sp.sp_protect.pc_home, *p, *e;
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
	scpy(cur, sizeof(cur), "/");
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
			scpy(cur, sizeof(cur), tmp);
		else if (errno != ENOENT && errno != ENOTDIR)
			return -1;
		else if (lstat(cur, &st) == 0 && S_ISLNK(st.st_mode))
			return -1; /* a dangling link: its target is unknown */
	}
	if (scpy(out, outsz, cur) == -1)
		return -1;
	return 0;
}

/* path equals dir or lies beneath it (both resolved). */
static int
path_inside(const char *path, const char *dir)
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

	if (n == 0 || n > 64 || n >= dstsz ||
	    strspn(src, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"0123456789._+-") != n)
		src = "-";
	memmove(dst, src, strlen(src) + 1); /* src may be dst */
}

/* ^[a-z0-9][a-z0-9.-]{0,63}$, the audit schema's rule; else "internal". */
static void
rule_set(char *dst, size_t dstsz, const char *src)
{
	size_t n = strlen(src);

	if (n == 0 || n > 64 ||
	    !((src[0] >= 'a' && src[0] <= 'z') ||
		(src[0] >= '0' && src[0] <= '9')) ||
	    n >= dstsz ||
	    strspn(src, "abcdefghijklmnopqrstuvwxyz0123456789.-") != n)
		src = "internal";
	memmove(dst, src, strlen(src) + 1); /* src may be dst */
}

/* ---- one call ---- */

struct gate_call {
	const char *gk_tool;
	int gk_kind; /* enum hook_kind, or GK_EXEC */
	const char *gk_line;
	char *gk_argv[GATE_WORDS_MAX + 1];
	size_t gk_argc;
	const char *gk_cwd;
	const char *gk_path;
};

static int
tool_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_.-") == n;
}

#define GK_EXEC (-2) /* the plain form's argv */

/*
 * {tool, kind, cwd, line | argv | filePath?} and nothing else: a shell
 * line for kind "shell", an argv for the plain form (kind "exec"), a path
 * (optional for "search") for "read", "write" and "search"; the tool is
 * the CLI's own name, for the audit (SBX-8, policy/hook.h).
 */
static int
gate_call_parse(struct json_object *o, struct gate_call *k)
{
	struct json_object *v, *w;
	const char *kind;
	size_t nkeys = 3, i, total = 0;

	memset(k, 0, sizeof(*k));
	if ((kind = json_get_str(o, "kind", 16)) == NULL)
		return -1;
	k->gk_kind =
	    strcmp(kind, "exec") == 0 ? GK_EXEC : hook_kind_parse(kind);
	if (k->gk_kind == -1 ||
	    (k->gk_tool = json_get_str(o, "tool", 64)) == NULL ||
	    !tool_name_ok(k->gk_tool) ||
	    (k->gk_cwd = json_get_str(o, "cwd", PATH_MAX - 1)) == NULL ||
	    k->gk_cwd[0] != '/')
		return -1;
	if (json_object_object_get_ex(o, "filePath", &v)) {
		nkeys++;
		if ((k->gk_path = json_get_str(o, "filePath", PATH_MAX - 1)) ==
			NULL ||
		    k->gk_path[0] == '\0' ||
		    (k->gk_kind != HK_READ && k->gk_kind != HK_WRITE &&
			k->gk_kind != HK_SEARCH))
			return -1;
	}
	if (json_object_object_get_ex(o, "line", &v)) {
		nkeys++;
		if ((k->gk_line = json_get_str(o, "line", GATE_LINE_MAX)) ==
			NULL ||
		    k->gk_kind != HK_SHELL)
			return -1;
	}
	if (json_object_object_get_ex(o, "argv", &v)) {
		nkeys++;
		if (!json_object_is_type(v, json_type_array) ||
		    k->gk_kind != GK_EXEC ||
		    (k->gk_argc = json_object_array_length(v)) == 0 ||
		    k->gk_argc > GATE_WORDS_MAX)
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
	if ((size_t)json_object_object_length(o) != nkeys)
		return -1;
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
	rule_set(res->g_rule, sizeof(res->g_rule), rule);
}

/* A file tool: its path must not be protected; writers stay inside. */
static void
gate_file(const struct gate_chan *ch, const struct gate_call *k, int writes,
    struct gate_result *res)
{
	char cwd[PATH_MAX], path[PATH_MAX];

	if (gate_resolve(k->gk_cwd, "/", cwd, sizeof(cwd), NULL) == -1 ||
	    gate_resolve(k->gk_path ? k->gk_path : cwd, cwd, path, sizeof(path),
		NULL) == -1)
		result_set(res, GATE_DENY, k->gk_tool, "unresolvable-path");
	else if (protect_path_hit(&sp.sp_protect, path) ||
		 (writes && gate_git_internal(path)))
		result_set(res, GATE_DENY, k->gk_tool, "protected-path");
	else if (writes && !path_inside(path, ch->gc_ws))
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
	case HK_UNKNOWN: /* SBX-6 fails closed */
		result_set(res, GATE_DENY, k->gk_tool, "unknown-tool");
		return;
	default: /* HK_SHELL, GK_EXEC */
		break;
	}
	if (gate_resolve(k->gk_cwd, "/", cwd, cwdsz, NULL) == -1) {
		result_set(res, GATE_DENY, "-", "unresolvable-path");
		return;
	}
	memset(&req, 0, sizeof(req));
	req.gr_line = k->gk_line;
	req.gr_argv = k->gk_argc > 0 ? k->gk_argv : NULL;
	req.gr_argc = k->gk_argc;
	req.gr_cwd = cwd;
	req.gr_workspace = ch->gc_ws;
	if (gate_check(ch->gc_policy, &req, &sp.sp_protect, gate_resolve, NULL,
		res) != 0) {
		res->g_verdict = GATE_DENY;
		if (res->g_rule[0] == '\0')
			scpy(res->g_rule, sizeof(res->g_rule), "unparseable");
	}
	/* Never trust a field to fit the audit schema: clamp to it. */
	verb_set(res->g_verb, sizeof(res->g_verb), res->g_verb);
	rule_set(res->g_rule, sizeof(res->g_rule), res->g_rule);
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
 * One MSG_GATE_VERDICT datagram on the caller's socket, then close it;
 * or, for a call by path (SBX-8), into its slot's N.out with its nonce
 * (at most PIPE_BUF bytes: one atomic write among the slot's answers).
 */
static void
gate_answer(struct gate_item *gi, int allow, const char *rule)
{
	struct json_object *o;
	uint8_t buf[1024];
	ssize_t n;
	int fifo = gi->gi_fd == -1 && gi->gi_slot >= 0 && gi->gi_chan != NULL;

	if (gi->gi_fd == -1 && !fifo)
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
	if (fifo) {
		/* Nobody reading and the pipe full: the caller timed out. */
		if (n > 0 && write(gi->gi_chan->gc_slots[gi->gi_slot].gs_out,
				 buf, (size_t)n) != n)
			log_debug("gate: a verdict could not be delivered");
		gi->gi_slot = -1;
		return;
	}
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
	TAILQ_REMOVE(&items, gi, gi_entry);
	if (gi->gi_state == GI_HELD) {
		nheld--;
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
	int acked = spawner_audit_acked(m);

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
static void
gate_audit(struct gate_item *gi, const char *verdict, int allow)
{
	struct json_object *o = json_object_new_object();

	if (gi->gi_state == GI_HELD) {
		nheld--;
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
	if (spawner_audit(o, gate_audit_cb, gi) == -1) {
		log_warnx("gate: audit unavailable, %s refused", gi->gi_verb);
		if (gi->gi_chan != NULL)
			gi->gi_chan->gc_inflight--;
		gate_answer(gi, 0, "audit-unavailable");
		gate_item_free(gi);
	}
	json_object_put(o);
}

/* ---- approvals (SBX-7) ---- */

/*
 * What the operator sees of the command: cleaned (the one cleaner: no
 * escapes, no C0 or C1 controls), one line, scrubbed.  All of it or
 * nothing: the operator approves the whole line, so a line longer than
 * GATE_ARGS_MAX once scrubbed is not held (NULL, errno E2BIG).
 */
static char *
approval_args(const struct gate_chan *ch, const struct gate_call *k)
{
	struct evbuffer *in = evbuffer_new(), *cl = evbuffer_new(),
			*out = evbuffer_new();
	char *s = NULL, *p;
	size_t i, n;

	errno = ENOMEM;
	if (in == NULL || cl == NULL || out == NULL)
		goto done;
	if (k->gk_line != NULL)
		evbuffer_add(in, k->gk_line, strlen(k->gk_line));
	for (i = 0; i < k->gk_argc; i++) {
		if (i > 0)
			evbuffer_add(in, " ", 1);
		evbuffer_add(in, k->gk_argv[i], strlen(k->gk_argv[i]));
	}
	if ((n = evbuffer_get_length(in)) > 0 &&
	    clean_buf((const char *)evbuffer_pullup(in, -1), n, n + 1, cl) ==
		-1)
		goto done;
	n = evbuffer_get_length(cl);
	p = (char *)evbuffer_pullup(cl, -1);
	for (i = 0; i < n; i++)
		if (p[i] == '\n' || p[i] == '\t')
			p[i] = ' ';
	if (redact_buf(ch->gc_keys, p, n, 0, out) == -1)
		goto done;
	if ((n = evbuffer_get_length(out)) > GATE_ARGS_MAX) {
		errno = E2BIG;
		goto done;
	}
	if ((s = malloc(n + 1)) == NULL)
		goto done;
	if (n > 0)
		memcpy(s, evbuffer_pullup(out, -1), n);
	s[n] = '\0';
done:
	if (in != NULL)
		evbuffer_free(in);
	if (cl != NULL)
		evbuffer_free(cl);
	if (out != NULL)
		evbuffer_free(out);
	return s;
}

static void
approval_timeout_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gate_item *gi = arg;

	log_info("gate: approval %s timed out", gi->gi_id);
	gate_audit(gi, "ask-timeout", 0);
}

/*
 * Hold the call for the operator; -1 if it cannot be held (denied), -2
 * if its line is too long to show whole (denied, ask-too-long).
 */
static int
approval_hold(struct gate_item *gi, struct gate_chan *ch,
    const struct gate_call *k, const char *cwd)
{
	struct timeval tv;
	long secs = gate_ask_timeout(ch->gc_policy);
	size_t wl = strlen(ch->gc_ws);

	/* One run cannot take every slot from the others. */
	if (nheld >= GATE_HELD_MAX || ch->gc_held >= GATE_HELD_RUN_MAX)
		return -1;
	if (strcmp(cwd, ch->gc_ws) == 0)
		scpy(gi->gi_cwd, sizeof(gi->gi_cwd), ".");
	else if (path_inside(cwd, ch->gc_ws))
		scpy(gi->gi_cwd, sizeof(gi->gi_cwd),
		    cwd + wl + (strcmp(ch->gc_ws, "/") != 0));
	else
		return -1;
	if ((gi->gi_args = approval_args(ch, k)) == NULL)
		return errno == E2BIG ? -2 : -1;
	if (random_hex(gi->gi_id, sizeof(gi->gi_id), 8) == -1 ||
	    (gi->gi_timer = evtimer_new(
		 sp.sp_d.d_base, approval_timeout_cb, gi)) == NULL)
		return -1;
	tv.tv_sec = secs;
	tv.tv_usec = 0;
	if (evtimer_add(gi->gi_timer, &tv) == -1)
		return -1;
	gi->gi_created = now_ms_real();
	gi->gi_expires = gi->gi_created + (int64_t)secs * 1000;
	gi->gi_state = GI_HELD;
	nheld++;
	ch->gc_held++;
	log_info("gate: %s of run %s held as approval %s", gi->gi_verb,
	    ch->gc_run, gi->gi_id);
	return 0;
}

static struct gate_item *
approval_find(const char *id)
{
	struct gate_item *gi;

	TAILQ_FOREACH (gi, &items, gi_entry)
		if (gi->gi_state == GI_HELD && strcmp(gi->gi_id, id) == 0)
			return gi;
	return NULL;
}

void
approval_list_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o, *arr, *a;
	struct gate_item *gi;

	if (json_object_object_length(m->m_obj) != 0) {
		ipc_reply_error(c, m, "bad-message");
		return;
	}
	arr = json_object_new_array();
	TAILQ_FOREACH (gi, &items, gi_entry) {
		if (gi->gi_state != GI_HELD)
			continue;
		a = json_object_new_object();
		json_object_object_add(
		    a, "id", json_object_new_string(gi->gi_id));
		json_object_object_add(
		    a, "agent", json_object_new_string(gi->gi_agent));
		json_object_object_add(
		    a, "runId", json_object_new_string(gi->gi_run));
		json_object_object_add(
		    a, "verb", json_object_new_string(gi->gi_verb));
		json_object_object_add(
		    a, "rule", json_object_new_string(gi->gi_rule));
		json_object_object_add(
		    a, "cwd", json_object_new_string(gi->gi_cwd));
		json_object_object_add(
		    a, "args", json_object_new_string(gi->gi_args));
		json_object_object_add(
		    a, "created", json_object_new_int64(gi->gi_created));
		json_object_object_add(
		    a, "expires", json_object_new_int64(gi->gi_expires));
		json_object_array_add(arr, a);
	}
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

	if ((id = json_get_str(m->m_obj, "id", 16)) == NULL ||
	    strlen(id) != 16 ||
	    (dec = json_get_str(m->m_obj, "decision", 8)) == NULL ||
	    (strcmp(dec, "allow") != 0 && strcmp(dec, "deny") != 0) ||
	    json_object_object_length(m->m_obj) != 2) {
		ipc_reply_error(c, m, "bad-message");
		return;
	}
	if ((gi = approval_find(id)) == NULL) {
		ipc_reply_error(c, m, "unknown-approval");
		return;
	}
	allow = strcmp(dec, "allow") == 0;
	log_info("gate: approval %s: %s", gi->gi_id, allow ? "allow" : "deny");
	ipc_reply(c, m, MSG_APPROVAL_DECIDE_OK, NULL, -1);
	gate_audit(gi, allow ? "ask-allow" : "ask-deny", allow);
}

/* ---- the channel ---- */

/* A zero-length read: the last agent process closed its end, or an
 * empty datagram (then keep listening). */
static int
gate_hup(int fd)
{
	struct pollfd pfd = {fd, POLLIN, 0};

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR));
}

/* The caller's reply socket must be what `cordon gate` makes. */
static int
reply_sock_ok(int fd)
{
	int v;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == -1 ||
	    v != SOCK_SEQPACKET)
		return 0;
	len = sizeof(v);
	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) == 0 &&
	       v == AF_UNIX;
}

/* The FIFO call's nonce: 16 hex digits, taken out of the request. */
static int
gate_nonce_take(struct json_object *o, char *nonce)
{
	const char *s = json_get_str(o, "nonce", 16);

	if (s == NULL || strlen(s) != 16 || strspn(s, "0123456789abcdef") != 16)
		return -1;
	memcpy(nonce, s, 17);
	json_object_object_del(o, "nonce");
	return 0;
}

/* One call: on its reply socket rfd, or (rfd -1) by FIFO slot. */
static void
gate_handle(
    struct gate_chan *ch, const uint8_t *buf, size_t n, int rfd, int slot)
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
	gi->gi_slot = rfd == -1 ? slot : -1;
	gi->gi_chan = ch;
	gi->gi_state = GI_AUDIT;
	scpy(gi->gi_agent, sizeof(gi->gi_agent), ch->gc_agent);
	scpy(gi->gi_run, sizeof(gi->gi_run), ch->gc_run);
	TAILQ_INSERT_TAIL(&items, gi, gi_entry);
	if (ch->gc_inflight >= GATE_INFLIGHT_MAX) {
		log_warnx("gate: run %s: too many calls in flight", ch->gc_run);
		/* A call by path is answered only with its nonce. */
		if (rfd == -1 && n <= GATE_DGRAM_MAX &&
		    (o = ipc_dgram_decode(buf, n, &h)) != NULL) {
			(void)gate_nonce_take(o, gi->gi_nonce);
			json_object_put(o);
		}
		gate_answer(gi, 0, "busy");
		gate_item_free(gi);
		return;
	}
	if (n > GATE_DGRAM_MAX || (o = ipc_dgram_decode(buf, n, &h)) == NULL ||
	    h.type != MSG_GATE_CHECK || h.id != 0 ||
	    h.flags != (rfd != -1 ? IPC_FLAG_FD : 0) ||
	    (rfd == -1 && gate_nonce_take(o, gi->gi_nonce) == -1) ||
	    gate_call_parse(o, &k) == -1) {
		log_warnx("gate: run %s: malformed call refused", ch->gc_run);
		result_set(&res, GATE_DENY, "-", "bad-request");
	} else
		gate_decide(ch, &k, cwd, sizeof(cwd), &res);
	scpy(gi->gi_verb, sizeof(gi->gi_verb), res.g_verb);
	scpy(gi->gi_rule, sizeof(gi->gi_rule), res.g_rule);
	if (res.g_verdict == GATE_ASK) {
		if ((r = approval_hold(gi, ch, &k, cwd)) == 0) {
			json_object_put(o);
			return;
		}
		log_warnx(
		    "gate: run %s: approval could not be held", ch->gc_run);
		rule_set(gi->gi_rule, sizeof(gi->gi_rule),
		    r == -2 ? "ask-too-long" : "ask-unavailable");
		res.g_verdict = GATE_DENY;
	}
	json_object_put(o);
	gate_audit(gi, res.g_verdict == GATE_ALLOW ? "allow" : "deny",
	    res.g_verdict == GATE_ALLOW);
}

static void
gate_read_cb(evutil_socket_t fd, short ev, void *arg)
{
	static uint8_t buf[GATE_DGRAM_MAX + 1];
	struct gate_chan *ch = arg;
	int fds[IPC_MAX_FDQ];
	size_t nfds = 0, i;
	ssize_t n;

	n = ipc_recvmsg_fds(fd, buf, sizeof(buf), fds, &nfds, IPC_MAX_FDQ);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		if (errno == EPROTO) {
			log_warnx("gate: run %s: bad descriptors, call dropped",
			    ch->gc_run);
			return;
		}
		log_warn("gate: run %s: read", ch->gc_run);
		event_del(ch->gc_ev);
		return;
	}
	if (n == 0 && nfds == 0 && gate_hup(fd)) {
		event_del(ch->gc_ev); /* every agent process closed it */
		return;
	}
	/* Exactly one descriptor, the reply socket; else nobody to answer. */
	if (nfds != 1 || !reply_sock_ok(fds[0])) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		log_warnx("gate: run %s: call without a reply socket dropped",
		    ch->gc_run);
		return;
	}
	gate_handle(ch, buf, (size_t)n, fds[0], -1);
}

/* ---- the channel by path (SBX-8) ---- */

static void gate_slot_cb(evutil_socket_t, short, void *);

/*
 * (Re)open slot N's N.in for the next request: a reader opened while no
 * writer is there sees no hang-up until one has come and gone, so the
 * EOF that ends each request is seen once.
 */
static int
gate_slot_listen(struct gate_slot *gs)
{
	char name[16];

	if (gs->gs_ev != NULL)
		event_free(gs->gs_ev);
	gs->gs_ev = NULL;
	if (gs->gs_in != -1)
		close(gs->gs_in);
	snprintf(name, sizeof(name), "%d.in", gs->gs_n);
	if ((gs->gs_in = openat(gs->gs_chan->gc_dir, name,
		 O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if ((gs->gs_ev = event_new(sp.sp_d.d_base, gs->gs_in,
		 EV_READ | EV_PERSIST, gate_slot_cb, gs)) == NULL ||
	    event_add(gs->gs_ev, NULL) == -1)
		return -1;
	return 0;
}

static void
gate_slot_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct gate_slot *gs = arg;
	struct gate_chan *ch = gs->gs_chan;
	uint8_t buf[16384];
	size_t len;
	ssize_t n;

	for (;;) {
		n = read(gs->gs_in, buf, sizeof(buf));
		if (n > 0) {
			if (gs->gs_over ||
			    evbuffer_get_length(gs->gs_buf) + (size_t)n >
				GATE_DGRAM_MAX)
				gs->gs_over = 1;
			else
				evbuffer_add(gs->gs_buf, buf, (size_t)n);
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return; /* more to come: the writer has not closed */
		break;
	}
	/* EOF: the caller closed N.in, its request is whole. */
	len = evbuffer_get_length(gs->gs_buf);
	if (gs->gs_over)
		log_warnx("gate: run %s: a call too large dropped", ch->gc_run);
	else if (len > 0)
		gate_handle(
		    ch, evbuffer_pullup(gs->gs_buf, -1), len, -1, gs->gs_n);
	evbuffer_drain(gs->gs_buf, len);
	gs->gs_over = 0;
	if (gate_slot_listen(gs) == -1)
		log_warn("gate: run %s: slot %d", ch->gc_run, gs->gs_n);
}

static void
gate_fifo_close(struct gate_chan *ch)
{
	struct gate_slot *gs;
	size_t i;

	for (i = 0; i < GATE_FIFO_SLOTS; i++) {
		gs = &ch->gc_slots[i];
		if (gs->gs_ev != NULL)
			event_free(gs->gs_ev);
		if (gs->gs_in != -1)
			close(gs->gs_in);
		if (gs->gs_out != -1)
			close(gs->gs_out);
		if (gs->gs_buf != NULL)
			evbuffer_free(gs->gs_buf);
		gs->gs_ev = NULL;
		gs->gs_buf = NULL;
		gs->gs_in = gs->gs_out = -1;
	}
	if (ch->gc_dir != -1)
		close(ch->gc_dir);
	ch->gc_dir = -1;
}

int
gate_chan_fifo(struct gate_chan *ch, int dirfd)
{
	struct gate_slot *gs;
	char name[16];
	size_t i;

	if (ch == NULL || ch->gc_dir != -1) {
		close(dirfd);
		return -1;
	}
	ch->gc_dir = dirfd;
	for (i = 0; i < GATE_FIFO_SLOTS; i++) {
		gs = &ch->gc_slots[i];
		gs->gs_chan = ch;
		gs->gs_n = (int)i;
		snprintf(name, sizeof(name), "%zu.out", i);
		if ((gs->gs_buf = evbuffer_new()) == NULL ||
		    (gs->gs_out = openat(dirfd, name,
			 O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
		    gate_slot_listen(gs) == -1) {
			log_warn("gate: run %s: the gate by path", ch->gc_run);
			gate_fifo_close(ch);
			return -1;
		}
	}
	return 0;
}

int
gate_chan_open(struct gate_chan **out, const struct agent *ag,
    const char *run_id, const char *cwd, const struct redact_keys *keys,
    int *childfd)
{
	struct gate_chan *ch;
	int sv[2];

	*out = NULL;
	*childfd = -1;
	if ((ch = calloc(1, sizeof(*ch))) == NULL)
		return -1;
	ch->gc_fd = ch->gc_dir = -1;
	for (size_t i = 0; i < GATE_FIFO_SLOTS; i++)
		ch->gc_slots[i].gs_in = ch->gc_slots[i].gs_out = -1;
	if (realpath(cwd, ch->gc_ws) == NULL) {
		log_warn("gate: run %s: workspace", run_id);
		free(ch);
		return -1;
	}
	scpy(ch->gc_agent, sizeof(ch->gc_agent), ag->ag_mf.m_name);
	scpy(ch->gc_run, sizeof(ch->gc_run), run_id);
	ch->gc_policy = gate_policy_of(ag);
	ch->gc_keys = keys;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		log_warn("gate: run %s: socketpair", run_id);
		free(ch);
		return -1;
	}
	ch->gc_fd = sv[0];
	if (set_nonblock(ch->gc_fd, 1) == -1 ||
	    (ch->gc_ev = event_new(sp.sp_d.d_base, ch->gc_fd,
		 EV_READ | EV_PERSIST, gate_read_cb, ch)) == NULL ||
	    event_add(ch->gc_ev, NULL) == -1) {
		if (ch->gc_ev != NULL)
			event_free(ch->gc_ev);
		close(sv[0]);
		close(sv[1]);
		free(ch);
		return -1;
	}
	*childfd = sv[1];
	*out = ch;
	return 0;
}

void
gate_chan_close(struct gate_chan *ch)
{
	struct gate_item *gi, *next;

	if (ch == NULL)
		return;
	event_free(ch->gc_ev);
	close(ch->gc_fd);
	gate_fifo_close(ch);
	for (gi = TAILQ_FIRST(&items); gi != NULL; gi = next) {
		next = TAILQ_NEXT(gi, gi_entry);
		if (gi->gi_chan != ch)
			continue;
		gi->gi_chan = NULL;
		if (gi->gi_state != GI_HELD)
			continue; /* answered deny from gate_audit_cb */
		gate_answer(gi, 0, "run-ended");
		rule_set(gi->gi_rule, sizeof(gi->gi_rule), "run-ended");
		gate_audit(gi, "ask-deny", 0);
	}
	free(ch);
}

int
gate_env(char ***envp, int fifo)
{
	static const char var[] = "CORDON_GATE_FD=", pvar[] = "CORDON_GATE=";
	char **e = *envp, **ne, *s, *p = NULL;
	size_t i, j, n;

	if ((s = strdup("CORDON_GATE_FD=3")) == NULL ||
	    (fifo && (p = strdup("CORDON_GATE=" GATE_FIFO_DIR)) == NULL)) {
		free(s);
		return -1;
	}
	for (n = 0; e != NULL && e[n] != NULL; n++)
		;
	for (i = j = 0; i < n; i++) {
		if (strncmp(e[i], var, sizeof(var) - 1) == 0 ||
		    strncmp(e[i], pvar, sizeof(pvar) - 1) == 0) {
			free(e[i]);
			continue;
		}
		e[j++] = e[i];
	}
	if ((ne = reallocarray(e, j + 3, sizeof(char *))) == NULL) {
		if (e != NULL)
			e[j] = NULL;
		free(s);
		free(p);
		return -1;
	}
	ne[j++] = s;
	if (p != NULL)
		ne[j++] = p;
	ne[j] = NULL;
	*envp = ne;
	return 0;
}
