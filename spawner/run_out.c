/*
 * A run's output (SP-9, SP-10, SP-11, SP-16): stdout, raw or a CLI's
 * JSON event stream (Claude Code, Codex, Gemini CLI), through the run's cleaner
 * and scrubber into token, tool, usage and notice events and the note's copy,
 * capped; stderr cleaned, counted and kept to be hashed and tailed (AU-4,
 * SP-12). Touches nothing: bytes in, events out.
 */
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "log.h"
#include "run.h"
#include "text.h"
#include "util.h"

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
	if (r->r_sink->rs_text != NULL)
		r->r_sink->rs_text(r, r->r_sink_arg, len);
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
	redact_clean_feed(
	    r->r_redact, &r->r_clean, s, len, r->r_tmp, r->r_text);
	/* A stream: the held line's settled head goes now (the same
	 * bytes as line by line, only sooner). */
	if (r->r_sink->rs_events)
		redact_flush_partial(r->r_redact, r->r_text);
	run_emit_text(r);
}

void
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

	if (!r->r_sink->rs_events) /* no stream: its note its answer */
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

/*
 * The agent reports an error or a warning (SP-12, SP-16): a notice in
 * cordon's words, then the agent's own through the run's cleaner and
 * scrubber, cut like a tool's input.
 */
static void
run_agent_error(struct run *r, const struct sj_event *e)
{
	char words[RUN_CUT_SIZE(SJ_INPUT_CHARS)], text[sizeof(words) + 64];
	struct json_object *o;
	ssize_t n;

	if (!r->r_sink->rs_events)
		return;
	if ((n = run_scrub(r, e->se_text ? e->se_text : "", e->se_len,
		 SJ_INPUT_CHARS, words)) == -1)
		return;
	snprintf(text, sizeof(text), "the agent reported %s%s%s",
	    e->se_ok ? "a warning" : "an error", n > 0 ? ": " : "", words);
	o = run_ev("notice");
	json_object_object_add(o, "text", json_object_new_string(text));
	run_event(r, o);
}

/* One NDJSON line of the agent's JSON stream (SP-16): its events. */
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
		else if (e->se_kind == SJ_ERROR)
			run_agent_error(r, e);
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

void
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
	if (r->r_agent->ag_mf.m_transport != MF_SUBPROCESS)
		run_json_feed(r, s, len);
	else
		run_text(r, s, len);
	/* Flow control: the child waits while its reader is behind. */
	if (r->r_sink->rs_behind != NULL &&
	    r->r_sink->rs_behind(r, r->r_sink_arg) && ap->ap_end == AP_END_NONE)
		aproc_pause(ap);
}

/* Cleaned stderr: all of it to be hashed, its last bytes for the tail. */
void
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
struct json_object *
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
void
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
