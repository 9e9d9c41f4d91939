/*
 * Chat runs (API-3, API-4): prompt and secrets checked before anything is
 * spawned (SP-2, SP-3, SP-13), bounded concurrency (SP-14), agent.invoke
 * acknowledged before the spawn (AU-6), both transports (SP-16), byte
 * caps (SP-9), cleaned and scrubbed token events (SP-10, SP-11), closing
 * audit record and the chat note to vaultd.  Missions run through the
 * same path without a stream (run_headless).  Writes no file.
 */
#include <sys/queue.h>
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "argv.h"
#include "text.h"
#include "env.h"
#include "gatechan.h"
#include "json.h"
#include "log.h"
#include "msg.h"
#include "redact.h"
#include "sanitize.h"
#include "schema.h"
#include "sha256.h"
#include "spawner.h"
#include "streamjson.h"
#include "util.h"

#define RUN_WINDOW     (128 * 1024) /* text relayed ahead of credits */
#define RUN_ETAIL_KEEP (4 * SPAWNER_TAIL_MAX) /* stderr window kept */

enum run_state { RS_AUDIT, RS_RUNNING, RS_NOTE };

struct run {
	char r_id[17];
	struct agent *r_agent;
	enum run_state r_state;
	struct ipc_conn *r_conn; /* the broker channel */
	unsigned int r_gen;
	struct ipc_msg r_req; /* the MSG_RUN_START, answered after the ack */
	struct aproc r_proc;
	struct secret_set r_ss;
	char **r_argv, **r_envp;
	const char *r_cwd;
	char r_path[PATH_MAX];
	int r_prompt_stdin;
	char *r_prompt;
	size_t r_prompt_len;
	struct clean r_clean, r_eclean;
	struct redact *r_redact;
	struct gate_chan *r_gate; /* SBX-6: the run's gate channel */
	struct evbuffer *r_tmp, *r_text, *r_note, *r_err, *r_line;
	/* SP-12: the last RUN_ETAIL_KEEP bytes of cleaned stderr */
	struct evbuffer *r_etail;
	int r_etail_cut; /* its head was drained: starts mid-line */
	char r_reason[SPAWNER_REASON_MAX]; /* why it failed, or "" */
	int r_line_skip;
	int r_json_seen;
	struct sj_state r_sj;	/* SP-16: what the stream said so far */
	uint64_t r_raw, r_eraw; /* bytes read from stdout, stderr */
	uint64_t r_unacked;	/* text sent, not yet credited by the broker */
	uint64_t r_bytes_out;
	int r_truncated, r_overflow;
	long r_timeout_ms;
	run_done_fn r_done; /* headless (missions): no broker, no stream */
	void *r_done_arg;
	LIST_ENTRY(run) r_entry;
};

static LIST_HEAD(, run) runs = LIST_HEAD_INITIALIZER(runs);

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

static void
run_free(struct run *r)
{
	gate_chan_close(r->r_gate);
	LIST_REMOVE(r, r_entry);
	r->r_agent->ag_running--;
	sp.sp_nruns--;
	if (r->r_redact != NULL)
		redact_free(r->r_redact);
	secrets_clear(&r->r_ss); /* and the keys r_redact used */
	argv_free(r->r_argv);
	env_free(r->r_envp);
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

/* One event to the broker; a lost broker means nobody listens: cancel. */
static void
run_event(struct run *r, struct json_object *o)
{
	if (r->r_done != NULL) {
		json_object_put(o); /* headless: the text is collected only */
		return;
	}
	json_object_object_add(o, "runId", json_object_new_string(r->r_id));
	if (!spawner_broker_ok(r->r_conn, r->r_gen) ||
	    ipc_send(r->r_conn, MSG_RUN_EVENT, o, -1) == -1) {
		if (r->r_state == RS_RUNNING)
			aproc_stop(
			    &r->r_proc, AP_END_CANCEL, LIM_CANCEL_GRACE_MS);
	}
	json_object_put(o);
}

static struct json_object *
run_ev(const char *kind)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "kind", json_object_new_string(kind));
	return o;
}

/* Scrubbed text into the note's copy, which ends on a whole code point. */
static void
run_note_add(struct run *r, const char *p, size_t len)
{
	size_t keep = evbuffer_get_length(r->r_note);

	keep = keep < SPAWNER_NOTE_MAX ? SPAWNER_NOTE_MAX - keep : 0;
	if (keep < len)
		while (keep > 0 && ((unsigned char)p[keep] & 0xc0) == 0x80)
			keep--;
	if (keep > 0)
		evbuffer_add(r->r_note, p, keep < len ? keep : len);
}

/* Scrubbed text in r_text -> one token event, and the note's copy. */
static void
run_emit_text(struct run *r)
{
	size_t len = evbuffer_get_length(r->r_text);
	struct json_object *o;
	const char *p;

	if (len == 0)
		return;
	p = (const char *)evbuffer_pullup(r->r_text, (ev_ssize_t)len);
	r->r_bytes_out += len;
	r->r_unacked += len;
	run_note_add(r, p, len);
	o = run_ev("token");
	json_object_object_add(
	    o, "text", json_object_new_string_len(p, (int)len));
	evbuffer_drain(r->r_text, len);
	run_event(r, o);
}

/* Agent text -> cleaned (SP-10) -> scrubbed (SP-11) -> token event. */
static void
run_text(struct run *r, const char *s, size_t len)
{
	size_t n;

	clean_feed(&r->r_clean, s, len, r->r_tmp);
	if ((n = evbuffer_get_length(r->r_tmp)) > 0) {
		redact_feed(r->r_redact,
		    (const char *)evbuffer_pullup(r->r_tmp, (ev_ssize_t)n), n,
		    r->r_text);
		evbuffer_drain(r->r_tmp, n);
		/* A chat streams: the held line's settled head goes now
		 * (the same bytes as line by line, only sooner). */
		if (r->r_done == NULL)
			redact_flush_partial(r->r_redact, r->r_text);
	}
	run_emit_text(r);
}

static void
run_text_finish(struct run *r)
{
	size_t n;

	clean_finish(&r->r_clean, r->r_tmp);
	if ((n = evbuffer_get_length(r->r_tmp)) > 0) {
		redact_feed(r->r_redact,
		    (const char *)evbuffer_pullup(r->r_tmp, (ev_ssize_t)n), n,
		    r->r_text);
		evbuffer_drain(r->r_tmp, n);
	}
	if (r->r_truncated) /* cut by the byte cap (SP-9) */
		redact_cut(r->r_redact);
	redact_finish(r->r_redact, r->r_text);
	run_emit_text(r);
}

/* SP-16: usage numbers from a result line; nothing else passes. */
static void
run_usage(struct run *r, const struct sj_out *so)
{
	struct json_object *o = run_ev("usage");
	const struct sj_num *n;
	size_t i;

	for (i = 0; i < so->so_nusage; i++) {
		n = &so->so_usage[i];
		json_object_object_add(o, n->sn_name,
		    n->sn_double ? json_object_new_double(n->sn_dbl)
				 : json_object_new_int64(n->sn_int));
	}
	run_event(r, o);
}

/* Bytes a scrubbed string cut to c code points takes, "…" and NUL. */
#define RUN_CUT_SIZE(c) (4 * (c) + 4)

/*
 * An agent's string through the run's own cleaner and scrubber (SP-10,
 * SP-11), whole, then cut to chars code points with "…" (after the
 * scrubber, so no cut leaves the head of a secret) into dst, of
 * RUN_CUT_SIZE(chars) bytes.  Token text held in the pipeline goes out
 * first.  The length, or -1.
 */
static ssize_t
run_scrub(struct run *r, const char *s, size_t len, size_t chars, char *dst)
{
	struct evbuffer *b;
	size_t n, cut;
	const char *p;

	if ((b = evbuffer_new()) == NULL)
		return -1;
	run_text_finish(r);
	clean_feed(&r->r_clean, s, len, r->r_tmp);
	clean_finish(&r->r_clean, r->r_tmp);
	if ((n = evbuffer_get_length(r->r_tmp)) > 0) {
		redact_feed(r->r_redact,
		    (const char *)evbuffer_pullup(r->r_tmp, (ev_ssize_t)n), n,
		    b);
		evbuffer_drain(r->r_tmp, n);
	}
	redact_finish(r->r_redact, b);
	n = evbuffer_get_length(b);
	p = n > 0 ? (const char *)evbuffer_pullup(b, (ev_ssize_t)n) : "";
	cut = text_utf8_prefix(p, n, chars);
	memcpy(dst, p, cut);
	if (cut < n) {
		memcpy(dst + cut, "\xe2\x80\xa6", 3);
		cut += 3;
	}
	dst[cut] = '\0';
	evbuffer_free(b);
	return (ssize_t)cut;
}

/*
 * A tool call or its result (SP-16): name, id and summary each through
 * the run's cleaner and scrubber, as an event and as a plain line of the
 * chat's note ("[tool] Bash: ls", "[result] ok: ...").
 */
static void
run_tool(struct run *r, const struct sj_event *e)
{
	int call = e->se_kind == SJ_TOOL;
	size_t bound = call ? SJ_INPUT_CHARS : SJ_RESULT_CHARS;
	char id[RUN_CUT_SIZE(SJ_ID_MAX)], name[RUN_CUT_SIZE(SJ_ID_MAX)];
	char text[RUN_CUT_SIZE(SJ_RESULT_CHARS)], line[sizeof(text) + 96];
	struct json_object *o;
	ssize_t n;
	int len;

	if (r->r_done != NULL) /* a mission: no stream, its note its answer */
		return;
	if (run_scrub(r, e->se_id ? e->se_id : "",
		e->se_id ? strlen(e->se_id) : 0, SJ_ID_MAX, id) == -1 ||
	    (call && run_scrub(r, e->se_tool, strlen(e->se_tool), SJ_ID_MAX,
			 name) == -1) ||
	    (n = run_scrub(r, e->se_text ? e->se_text : "", e->se_len, bound,
		 text)) == -1)
		return;
	o = run_ev(call ? "tool" : "tool_result");
	if (id[0] != '\0')
		json_object_object_add(o, "id", json_object_new_string(id));
	if (call)
		json_object_object_add(o, "tool", json_object_new_string(name));
	else
		json_object_object_add(
		    o, "ok", json_object_new_boolean(e->se_ok));
	json_object_object_add(o, call ? "input" : "summary",
	    json_object_new_string_len(text, (int)n));
	run_event(r, o);
	len = call ? snprintf(line, sizeof(line), "[tool] %s: %s", name, text)
		   : snprintf(line, sizeof(line), "[result] %s: %s",
			 e->se_ok ? "ok" : "error", text);
	if (evbuffer_get_length(r->r_note) > 0)
		run_note_add(r, "\n", 1); /* a line of its own */
	if (len > 0 && (size_t)len < sizeof(line))
		run_note_add(r, line, (size_t)len);
}

/*
 * The agent retries its model API (SP-12): a notice whose text cordon
 * builds from numbers only; the agent's own error text never passes.
 */
static void
run_retry(struct run *r, const struct sj_event *e)
{
	int st = e->se_status;
	const char *why = st == 0		   ? "no connection"
			  : st == 429		   ? "rate limited"
			  : st == 401 || st == 403 ? "credentials refused"
			  : st >= 500		   ? "server error"
						   : "";
	struct json_object *o;
	char num[48] = "", text[160];
	int paren;

	if (e->se_attempt > 0 && e->se_max > 0)
		snprintf(num, sizeof(num), "attempt %d of %d", e->se_attempt,
		    e->se_max);
	else if (e->se_attempt > 0)
		snprintf(num, sizeof(num), "attempt %d", e->se_attempt);
	paren = num[0] != '\0' || why[0] != '\0';
	snprintf(text, sizeof(text),
	    "the agent is retrying its model API%s%s%s%s%s", paren ? " (" : "",
	    num, num[0] != '\0' && why[0] != '\0' ? ": " : "", why,
	    paren ? ")" : "");
	o = run_ev("notice");
	json_object_object_add(o, "text", json_object_new_string(text));
	run_event(r, o);
}

/* One NDJSON line of Claude Code's stream-json (SP-16): its events. */
static void
run_json_line(struct run *r, const char *line, size_t len)
{
	const struct sj_event *e;
	struct sj_out so;
	size_t i;

	if (sj_decode(&r->r_sj, line, len, &so) == -1)
		return; /* non-JSON lines are ignored */
	r->r_json_seen = 1;
	for (i = 0; i < so.so_n; i++) {
		e = &so.so_ev[i];
		if (e->se_kind == SJ_TEXT)
			run_text(r, e->se_text, e->se_len);
		else if (e->se_kind == SJ_FLUSH)
			run_text_finish(r); /* the scrubber holds lines */
		else if (e->se_kind == SJ_USAGE)
			run_usage(r, &so);
		else if (e->se_kind == SJ_TOOL || e->se_kind == SJ_TOOL_RESULT)
			run_tool(r, e);
		else if (e->se_kind == SJ_RETRY)
			run_retry(r, e);
		/* SJ_MODEL: API-3 has no event for it */
	}
	sj_out_free(&so);
}

/* Bounded line buffer: an over-long line is skipped whole. */
static void
run_json_feed(struct run *r, const char *s, size_t len)
{
	const char *nl;
	size_t n;

	while (len > 0) {
		nl = memchr(s, '\n', len);
		n = nl ? (size_t)(nl - s) : len;
		if (!r->r_line_skip) {
			if (evbuffer_get_length(r->r_line) + n > SJ_LINE_MAX) {
				r->r_line_skip = 1;
				evbuffer_drain(
				    r->r_line, evbuffer_get_length(r->r_line));
			} else
				evbuffer_add(r->r_line, s, n);
		}
		if (nl == NULL)
			return;
		if (!r->r_line_skip) {
			size_t l = evbuffer_get_length(r->r_line);

			run_json_line(r,
			    (const char *)evbuffer_pullup(
				r->r_line, (ev_ssize_t)l),
			    l);
			evbuffer_drain(r->r_line, l);
		}
		r->r_line_skip = 0;
		s += n + 1;
		len -= n + 1;
	}
}

static void
run_out(struct aproc *ap, const char *s, size_t len)
{
	struct run *r = ap->ap_arg;
	uint64_t cap = r->r_agent->ag_mf.m_limits.l_run_output_bytes;

	if (r->r_overflow)
		return;
	/* SP-9: past the cap the run is killed and marked truncated. */
	if (r->r_raw + len > cap) {
		len = (size_t)(cap - r->r_raw);
		r->r_overflow = r->r_truncated = 1;
		aproc_kill(ap, AP_END_CAP);
	}
	r->r_raw += len;
	if (r->r_agent->ag_mf.m_transport == MF_STREAMJSON)
		run_json_feed(r, s, len);
	else
		run_text(r, s, len);
	/* Flow control: at most a window of text ahead of the broker. */
	if (r->r_done == NULL && r->r_unacked > RUN_WINDOW &&
	    ap->ap_end == AP_END_NONE)
		aproc_pause(ap);
}

/* Cleaned stderr: all of it to be hashed, its last bytes for the tail. */
static void
run_err_clean(struct run *r, const char *s, size_t len)
{
	size_t n;

	clean_feed(&r->r_eclean, s, len, r->r_tmp);
	n = evbuffer_get_length(r->r_tmp);
	evbuffer_add(r->r_err, evbuffer_pullup(r->r_tmp, (ev_ssize_t)n), n);
	evbuffer_remove_buffer(r->r_tmp, r->r_etail, n);
	if ((n = evbuffer_get_length(r->r_etail)) > RUN_ETAIL_KEEP) {
		evbuffer_drain(r->r_etail, n - RUN_ETAIL_KEEP);
		r->r_etail_cut = 1;
	}
}

/*
 * SP-12: the last lines of text (already cleaned and scrubbed): whole
 * lines, at most SPAWNER_TAIL_LINES of them and SPAWNER_TAIL_MAX bytes,
 * cut on a code point when one line alone is longer.
 */
struct json_object *
stderr_tail(const char *text, size_t len)
{
	size_t start, lines = 0;

	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	for (start = len; start > 0; start--)
		if (text[start - 1] == '\n' && ++lines == SPAWNER_TAIL_LINES)
			break;
	if (len - start > SPAWNER_TAIL_MAX) {
		start = len - SPAWNER_TAIL_MAX;
		/* Mid-line: from the next line, or a code point of this one. */
		if (text[start - 1] != '\n') {
			const char *nl =
			    memchr(text + start, '\n', len - start);

			if (nl != NULL)
				start = (size_t)(nl - text) + 1;
			else
				while (
				    start < len &&
				    ((unsigned char)text[start] & 0xc0) == 0x80)
					start++;
		}
	}
	if (start >= len)
		return NULL;
	return json_object_new_string_len(text + start, (int)(len - start));
}

/*
 * The run's stderr tail, scrubbed by the one redactor with the run's
 * secret values, as its stdout is: a window that begins mid-line is
 * taken from its next line, so no cut secret is half shown.
 */
static struct json_object *
run_err_tail(struct run *r)
{
	struct json_object *o = NULL;
	struct evbuffer *sb;
	const char *p, *nl;
	size_t n = evbuffer_get_length(r->r_etail);

	if (n == 0 || (sb = evbuffer_new()) == NULL)
		return NULL;
	p = (const char *)evbuffer_pullup(r->r_etail, (ev_ssize_t)n);
	if (r->r_etail_cut) {
		if ((nl = memchr(p, '\n', n)) == NULL) {
			evbuffer_free(sb);
			return NULL;
		}
		n -= (size_t)(nl + 1 - p);
		p = nl + 1;
	}
	if (redact_buf(r->r_ss.ss_keys, p, n, 0, sb) == 0 &&
	    (n = evbuffer_get_length(sb)) > 0)
		o = stderr_tail(
		    (const char *)evbuffer_pullup(sb, (ev_ssize_t)n), n);
	evbuffer_free(sb);
	return o;
}

/*
 * stderr is kept only to be hashed and counted (AU-4), and is capped like
 * stdout (SP-9): an agent that streams it for ever is killed, truncated.
 */
static void
run_err(struct aproc *ap, const char *s, size_t len)
{
	struct run *r = ap->ap_arg;
	uint64_t cap = r->r_agent->ag_mf.m_limits.l_run_output_bytes;

	if (!r->r_overflow && r->r_eraw + len > cap) {
		r->r_overflow = r->r_truncated = 1;
		aproc_kill(ap, AP_END_CAP);
	}
	r->r_eraw += len;
	if (evbuffer_get_length(r->r_err) < SPAWNER_STDERR_MAX)
		run_err_clean(r, s, len);
}

static void
audit_ignore_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	if (!spawner_audit_acked(m))
		log_warnx("audit record not acknowledged");
}

static void
add_common(struct json_object *o, const char *kind, const struct run *r)
{
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(
	    o, "agent", json_object_new_string(r->r_agent->ag_mf.m_name));
	json_object_object_add(o, "runId", json_object_new_string(r->r_id));
}

static void
run_audit_error(struct run *r, const char *ec, int exitcode)
{
	struct json_object *o = json_object_new_object();
	char hex[SHA256_HEX_LEN + 1];
	size_t n = r->r_err ? evbuffer_get_length(r->r_err) : 0;

	sha256_hex(
	    n ? evbuffer_pullup(r->r_err, (ev_ssize_t)n) : (void *)"", n, hex);
	hex[8] = '\0';
	add_common(o, "agent.invoke.error", r);
	json_object_object_add(o, "errorClass", json_object_new_string(ec));
	json_object_object_add(o, "exitCode", json_object_new_int(exitcode));
	json_object_object_add(o, "stderrSha8", json_object_new_string(hex));
	json_object_object_add(o, "stderrChars",
	    json_object_new_int64((int64_t)clean_chars(&r->r_eclean)));
	json_object_object_add(o, "transport",
	    json_object_new_string(
		manifest_transport_name(r->r_agent->ag_mf.m_transport)));
	if (spawner_audit(o, audit_ignore_cb, NULL) == -1)
		log_warnx("audit unavailable for a run error");
	json_object_put(o);
}

static void
run_note_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct run *r = arg;
	struct json_object *o;
	const char *path;
	long long bytes;

	if (m != NULL && m->m_type == MSG_VAULT_CHAT_NOTE_OK &&
	    (path = json_get_str(m->m_obj, "path", 1024)) != NULL &&
	    json_get_int(m->m_obj, "bytes", 0, 1LL << 53, &bytes) == 0) {
		o = run_ev("saved");
		json_object_object_add(o, "path", json_object_new_string(path));
		json_object_object_add(
		    o, "bytes", json_object_new_int64(bytes));
	} else
		o = run_ev("unsaved"); /* ends the stream; not forwarded */
	run_event(r, o);
	run_free(r);
}

/*
 * The transcript to vaultd; 0 if a reply will come.  The note's name
 * takes the first 8 hex of SHA-256 of the prompt as sent (VA-5), hashed
 * here so that vaultd needs no libcrypto.
 */
static int
run_note(struct run *r)
{
	struct timeval tv = {5, 0};
	struct ipc_conn *v = sp.sp_d.d_peers[PROC_VAULTD];
	struct json_object *o;
	struct evbuffer *pb;
	struct timespec ts;
	char hex[SHA256_HEX_LEN + 1];
	int rc;

	if (v == NULL || (pb = evbuffer_new()) == NULL)
		return -1;
	/* The note gets the prompt with secret values scrubbed too. */
	if (redact_buf(r->r_ss.ss_keys, r->r_prompt, r->r_prompt_len, 0, pb) ==
		-1 ||
	    sha256_hex(evbuffer_pullup(pb, -1), evbuffer_get_length(pb), hex) ==
		-1) {
		evbuffer_free(pb);
		return -1;
	}
	hex[8] = '\0';
	clock_gettime(CLOCK_REALTIME, &ts);
	o = json_object_new_object();
	json_object_object_add(
	    o, "agent", json_object_new_string(r->r_agent->ag_mf.m_name));
	json_object_object_add(o, "prompt",
	    json_object_new_string_len((const char *)evbuffer_pullup(pb, -1),
		(int)evbuffer_get_length(pb)));
	json_object_object_add(o, "promptSha8", json_object_new_string(hex));
	json_object_object_add(o, "response",
	    json_object_new_string_len(
		(const char *)evbuffer_pullup(r->r_note, -1),
		(int)evbuffer_get_length(r->r_note)));
	json_object_object_add(o, "time",
	    json_object_new_int64(
		(int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000));
	rc = ipc_request(v, MSG_VAULT_CHAT_NOTE, o, -1, MSG_VAULT_CHAT_NOTE_OK,
	    &tv, run_note_cb, r);
	json_object_put(o);
	evbuffer_free(pb);
	return rc;
}

/* A headless run is over: its collected text goes to its owner. */
static void
run_headless_end(struct run *r, const char *ec, int code, uint64_t ms)
{
	struct run_result rr;
	size_t n = r->r_note != NULL ? evbuffer_get_length(r->r_note) : 0;

	memset(&rr, 0, sizeof(rr));
	rr.rr_errclass = ec;
	rr.rr_exit = code;
	rr.rr_ms = ms;
	rr.rr_truncated = r->r_truncated;
	rr.rr_text = n > 0 ? (const char *)evbuffer_pullup(r->r_note, -1) : "";
	rr.rr_len = n;
	r->r_done(&rr, r->r_done_arg);
	run_free(r);
}

/*
 * SP-12, SBX-3: an agent that retried its model API and failed in a
 * sandbox without network was denied the network: its error says so.
 */
static int
run_nonet_reason(struct run *r)
{
	static const char why[] = "the agent could not reach its model API: "
				  "this agent's sandbox has network: none";

	if (r->r_sj.ss_retries == 0 ||
	    r->r_agent->ag_sb.pl_network != MF_NET_NONE)
		return 0;
	snprintf(r->r_reason, sizeof(r->r_reason), "%s", why);
	return 1;
}

/* SP-12: what ended a failed run, in fixed words. */
static void
run_end_reason(struct run *r, const char *ec, int code)
{
	const struct aproc *ap = &r->r_proc;
	const char *sig;

	if (strcmp(ec, "timeout") == 0)
		snprintf(r->r_reason, sizeof(r->r_reason),
		    "no end within the run's %ld ms", r->r_timeout_ms);
	else if (ap->ap_killed_by[0] != '\0')
		snprintf(r->r_reason, sizeof(r->r_reason),
		    "ended by the sandbox: %s", ap->ap_killed_by);
	else if (strcmp(ec, "killed") == 0)
		snprintf(r->r_reason, sizeof(r->r_reason), "ended by signal %s",
		    ap->ap_exited && WIFSIGNALED(ap->ap_status) &&
			    (sig = sigabbrev_np(WTERMSIG(ap->ap_status))) !=
				NULL
			? sig
			: "?");
	else if (strcmp(ec, "non-zero-exit") == 0)
		snprintf(r->r_reason, sizeof(r->r_reason),
		    "exited with status %d", code);
	else
		snprintf(r->r_reason, sizeof(r->r_reason),
		    "printed no %s output",
		    manifest_transport_name(r->r_agent->ag_mf.m_transport));
}

static void
run_done(struct aproc *ap)
{
	struct run *r = ap->ap_arg;
	struct json_object *o, *ev, *tail;
	const char *ec = NULL;
	int code = aproc_exit_code(ap), pending;
	uint64_t ms = ap->ap_end_ms - ap->ap_start_ms;

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
	else if (r->r_agent->ag_mf.m_transport == MF_STREAMJSON &&
		 !r->r_json_seen)
		ec = "transport-error";
	if (ec != NULL) {
		run_audit_error(r, ec, code);
		ev = run_ev("error");
		json_object_object_add(
		    ev, "errorClass", json_object_new_string(ec));
		json_object_object_add(ev, "errorMessage",
		    json_object_new_string(errclass_message(ec)));
		/* Fixed shape, for the operator: "seccomp: ptrace". */
		if (ap->ap_killed_by[0] != '\0')
			json_object_object_add(ev, "detail",
			    json_object_new_string(ap->ap_killed_by));
		/* SP-12: what ended it, and the last lines it wrote. */
		if (!run_nonet_reason(r))
			run_end_reason(r, ec, code);
		json_object_object_add(
		    ev, "reason", json_object_new_string(r->r_reason));
		if ((tail = run_err_tail(r)) != NULL)
			json_object_object_add(ev, "stderrTail", tail);
		log_warnx("agent %s: run %s: %s: %s", r->r_agent->ag_mf.m_name,
		    r->r_id, ec, r->r_reason);
		run_event(r, ev);
	} else {
		o = json_object_new_object();
		add_common(o, "agent.invoke.complete", r);
		json_object_object_add(
		    o, "durationMs", json_object_new_int64((int64_t)ms));
		json_object_object_add(
		    o, "exitCode", json_object_new_int(code));
		json_object_object_add(o, "bytesOut",
		    json_object_new_int64((int64_t)r->r_bytes_out));
		json_object_object_add(o, "status",
		    json_object_new_string(
			ap->ap_end == AP_END_CANCEL ? "cancelled" : "success"));
		json_object_object_add(
		    o, "truncated", json_object_new_boolean(r->r_truncated));
		if (spawner_audit(o, audit_ignore_cb, NULL) == -1)
			log_warnx("audit unavailable for a run's end");
		json_object_put(o);
	}
	if (r->r_done != NULL) {
		run_headless_end(r, ec, code, ms);
		return;
	}
	r->r_state = RS_NOTE;
	pending = ec == NULL && ap->ap_end != AP_END_CANCEL &&
		  spawner_broker_ok(r->r_conn, r->r_gen) && run_note(r) == 0;
	ev = run_ev("done");
	json_object_object_add(ev, "exitCode", json_object_new_int(code));
	json_object_object_add(
	    ev, "durationMs", json_object_new_int64((int64_t)ms));
	json_object_object_add(
	    ev, "truncated", json_object_new_boolean(r->r_truncated));
	json_object_object_add(ev, "pending", json_object_new_boolean(pending));
	/* API-4: a cancelled run says so, whatever its exit status. */
	if (ap->ap_end == AP_END_CANCEL)
		json_object_object_add(
		    ev, "cancelled", json_object_new_boolean(1));
	run_event(r, ev);
	if (!pending)
		run_free(r);
}

static const struct aproc_ops run_ops = {run_out, run_err, run_done};

/*
 * SP-12: a refusal before the stream, with the reason when there is
 * one: MSG_ERROR {error, reason?}, which the broker shows as it is.
 */
static void
run_reply_error(struct ipc_conn *c, const struct ipc_msg *m,
    const struct run *r, const char *code)
{
	struct json_object *o;

	if (r->r_reason[0] == '\0') {
		ipc_reply_error(c, m, code);
		return;
	}
	log_warnx(
	    "agent %s: %s: %s", r->r_agent->ag_mf.m_name, code, r->r_reason);
	o = json_object_new_object();
	json_object_object_add(o, "error", json_object_new_string(code));
	json_object_object_add(
	    o, "reason", json_object_new_string(r->r_reason));
	ipc_reply(c, m, MSG_ERROR, o, -1);
	json_object_put(o);
}

/* The run ends before its child started: answer (or call back), free. */
static void
run_fail(struct run *r, const char *code)
{
	if (r->r_done != NULL) {
		if (r->r_reason[0] != '\0')
			log_warnx("agent %s: %s: %s", r->r_agent->ag_mf.m_name,
			    code, r->r_reason);
		run_headless_end(r, code, -1, 0);
	} else {
		if (spawner_broker_ok(r->r_conn, r->r_gen))
			run_reply_error(r->r_conn, &r->r_req, r, code);
		run_free(r);
	}
}

/* AU-6: the spawn waits for auditd's acknowledgement of agent.invoke. */
static void
run_invoke_acked(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct run *r = arg;
	struct aproc_spec as;
	struct json_object *o;
	int gatefd, rc;

	if (!spawner_audit_acked(m)) {
		run_fail(r, "audit-unavailable");
		return;
	}
	if (r->r_done == NULL && !spawner_broker_ok(r->r_conn, r->r_gen)) {
		run_free(r); /* nobody to stream to: never started */
		return;
	}
	memset(&as, 0, sizeof(as));
	as.as_path = r->r_path;
	as.as_argv = r->r_argv;
	as.as_envp = r->r_envp;
	as.as_cwd = r->r_cwd;
	as.as_limits = &r->r_agent->ag_mf.m_limits;
	if (r->r_prompt_stdin) {
		as.as_stdin = r->r_prompt;
		as.as_stdin_len = r->r_prompt_len;
	}
	as.as_timeout_ms = r->r_timeout_ms;
	as.as_sandbox = &r->r_agent->ag_sb; /* SBX-1 */
	as.as_agent = r->r_agent->ag_mf.m_name;
	as.as_run_id = r->r_id; /* EG-1: its proxy, if it has one */
	/* SBX-6: the gate channel, the child's fd 3 (CORDON_GATE_FD). */
	if (gate_chan_open(&r->r_gate, r->r_agent, r->r_id, r->r_cwd,
		r->r_ss.ss_keys, &gatefd) == -1) {
		snprintf(r->r_reason, sizeof(r->r_reason),
		    "the run's gate channel could not be made");
		run_audit_error(r, "spawn-failed", -1);
		run_fail(r, "spawn-failed");
		return;
	}
	as.as_gate_fd = gatefd;
	as.as_gate_dir = 1; /* SBX-8: and by path, where the view allows */
	rc = aproc_start(&r->r_proc, &as, &run_ops, r);
	close(gatefd); /* the child has its copy */
	if (rc == 0 && r->r_proc.ap_gatedir != -1) {
		(void)gate_chan_fifo(r->r_gate, r->r_proc.ap_gatedir);
		r->r_proc.ap_gatedir = -1;
	}
	if (rc == -1) {
		snprintf(r->r_reason, sizeof(r->r_reason), "%s",
		    r->r_proc.ap_reason[0] != '\0'
			? r->r_proc.ap_reason
			: "the child could not be made");
		run_audit_error(r, "spawn-failed", -1);
		run_fail(r, "spawn-failed");
		return;
	}
	r->r_state = RS_RUNNING;
	if (r->r_done != NULL)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "runId", json_object_new_string(r->r_id));
	ipc_reply(r->r_conn, &r->r_req, MSG_RUN_START_OK, o, -1);
	json_object_put(o);
}

/* The opening record: prompt only as hash and length (AU-4). */
static struct json_object *
run_invoke_record(struct run *r)
{
	struct json_object *o = json_object_new_object(), *args;
	char hex[SHA256_HEX_LEN + 1], **red = NULL;
	const char *bin = r->r_agent->ag_mf.m_bin, *slash;
	size_t i;

	if (argv_redacted(&r->r_agent->ag_mf, &red) == -1) {
		json_object_put(o);
		return NULL;
	}
	sha256_hex(r->r_prompt, r->r_prompt_len, hex);
	hex[8] = '\0';
	if ((slash = strrchr(bin, '/')) != NULL)
		bin = slash + 1;
	add_common(o, "agent.invoke", r);
	json_object_object_add(o, "transport",
	    json_object_new_string(
		manifest_transport_name(r->r_agent->ag_mf.m_transport)));
	json_object_object_add(o, "bin", json_object_new_string(bin));
	args = json_object_new_array();
	for (i = 0; red[i] != NULL; i++)
		json_object_array_add(args, json_object_new_string(red[i]));
	argv_free(red);
	json_object_object_add(o, "argsRedacted", args);
	json_object_object_add(o, "promptSha256", json_object_new_string(hex));
	json_object_object_add(o, "promptChars",
	    json_object_new_int64(
		(int64_t)text_utf8_chars(r->r_prompt, r->r_prompt_len)));
	return o;
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
	sj_init(&r->r_sj);
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
	struct json_object *rec;
	const char *unused;

	*ec = NULL;
	*code = "invalid-argument";
	/* SP-2, SP-3: the prompt as one element, never a flag. */
	if (argv_build(&ag->ag_mf, r->r_prompt, &r->r_argv, &r->r_prompt_stdin,
		code) == -1)
		return -1;
	/* SP-13, SEC-2: every secret, or nothing is spawned. */
	if (secrets_resolve(sp.sp_secrets, &ag->ag_mf, &r->r_ss) == -1) {
		*code = *ec = "missing-secret";
		return -1;
	}
	if (agent_env(ag, &r->r_ss, &r->r_envp, &r->r_cwd, &unused) == -1) {
		*code = "invalid-argument";
		return -1;
	}
	/* SBX-6: the gate channel's fd, set by us only (never the manifest). */
	*code = "internal";
	if (gate_env(&r->r_envp,
		(r->r_agent->ag_sb.pl_layers & SBX_L_MOUNTNS) != 0) == -1)
		return -1;
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
	struct json_object *o = m->m_obj, *v;
	const char *name, *prompt, *sess = NULL, *err, *ec;
	struct agent *ag;
	struct run *r;
	size_t nkeys = 2;

	if ((name = json_get_str(o, "agent", LIM_NAME_MAX)) == NULL ||
	    !json_object_object_get_ex(o, "prompt", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		ipc_reply_error(c, m, "bad-message");
		return;
	}
	if (json_object_object_get_ex(o, "session", &v)) {
		nkeys++;
		if ((sess = json_get_str(o, "session", LIM_SESSION_MAX)) ==
			NULL ||
		    !schema_session_ok(sess)) {
			ipc_reply_error(c, m, "invalid-session");
			return;
		}
	}
	if ((size_t)json_object_object_length(o) != nkeys) {
		ipc_reply_error(c, m, "bad-message");
		return;
	}
	if ((ag = agent_find(name)) == NULL) {
		ipc_reply_error(c, m, "unknown-agent");
		return;
	}
	json_object_object_get_ex(o, "prompt", &v);
	prompt = json_object_get_string(v);
	if (argv_prompt_ok(prompt, (size_t)json_object_get_string_len(v))) {
		ipc_reply_error(c, m, "invalid-prompt");
		return;
	}
	/* SP-14 */
	if (sp.sp_nruns >= (size_t)sp.sp_max_runs ||
	    ag->ag_running >= sp.sp_max_runs_agent) {
		ipc_reply_error(c, m, "busy");
		return;
	}
	if ((r = run_new(ag, prompt, (size_t)json_object_get_string_len(v))) ==
	    NULL) {
		ipc_reply_error(c, m, "internal");
		return;
	}
	r->r_conn = c;
	r->r_gen = sp.sp_broker_gen;
	r->r_req = *m;
	r->r_req.m_obj = NULL;
	r->r_req.m_fd = -1;
	if (run_prepare(r, &err, &ec) == -1)
		run_refuse(c, m, r, err, ec);
}

/*
 * A mission's run (MI-*): the chat run's checks, audit records, sandbox
 * and child path, without a stream.  0: done is called exactly once,
 * later.  -1 with *code: nothing started, done is never called.
 */
int
run_headless(struct agent *ag, const char *run_id, const char *prompt,
    long timeout_ms, run_done_fn done, void *arg, const char **code)
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
	r->r_gen = sp.sp_broker_gen;
	r->r_done = done;
	r->r_done_arg = arg;
	if (run_prepare(r, code, &ec) == -1) {
		if (r->r_reason[0] != '\0')
			log_warnx("agent %s: %s: %s", ag->ag_mf.m_name, *code,
			    r->r_reason);
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

	if ((id = json_get_str(m->m_obj, "runId", 16)) == NULL ||
	    json_object_object_length(m->m_obj) != 1) {
		ipc_reply_error(c, m, "bad-message");
		return;
	}
	if ((r = run_find(id)) == NULL || r->r_state != RS_RUNNING ||
	    r->r_done != NULL) {
		ipc_reply_error(c, m, "unknown-run");
		return;
	}
	/* SBX-7: held gate calls are denied before the agent is stopped. */
	gate_chan_close(r->r_gate);
	r->r_gate = NULL;
	/* API-4: SIGTERM to the group, SIGKILL after 3 s. */
	aproc_stop(&r->r_proc, AP_END_CANCEL, LIM_CANCEL_GRACE_MS);
	ipc_reply(c, m, MSG_RUN_CANCEL_OK, NULL, -1);
}

/* The broker relayed bytes of a run's text: widen its window again. */
void
run_credit_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	long long bytes;
	const char *id;
	struct run *r;

	if ((id = json_get_str(m->m_obj, "runId", 16)) == NULL ||
	    json_get_int(m->m_obj, "bytes", 0, 1LL << 40, &bytes) == -1 ||
	    (r = run_find(id)) == NULL || r->r_conn != c || r->r_done != NULL)
		return; /* one-way: nothing to answer */
	r->r_unacked -=
	    (uint64_t)bytes < r->r_unacked ? (uint64_t)bytes : r->r_unacked;
	if (r->r_state == RS_RUNNING && r->r_unacked <= RUN_WINDOW / 2)
		aproc_resume(&r->r_proc);
}

/* A new broker channel: runs streaming to the old one have no reader. */
void
runs_broker_lost(void)
{
	struct run *r;

	LIST_FOREACH (r, &runs, r_entry)
		if (r->r_state == RS_RUNNING && r->r_done == NULL &&
		    r->r_gen != sp.sp_broker_gen)
			aproc_stop(
			    &r->r_proc, AP_END_CANCEL, LIM_CANCEL_GRACE_MS);
}
