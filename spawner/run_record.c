/*
 * A run's records: agent.invoke (prompt only as hash and length),
 * agent.invoke.error and .complete to auditd (AU-4, AU-6), the error
 * event's fixed words (SP-12), and the chat note to vaultd (VA-5).
 * Touches nothing: it builds and sends.
 */
#include <sys/queue.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "argv.h"
#include "json.h"
#include "log.h"
#include "msg.h"
#include "redact.h"
#include "run.h"
#include "sha256.h"
#include "text.h"
#include "unicode.h"
#include "util.h"

static void
audit_ignore_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	if (!spawner_audit_acked(m))
		log_warnx("audit record not acknowledged");
}

void
run_add_common(struct json_object *o, const char *kind, const struct run *r)
{
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(
	    o, "agent", json_object_new_string(r->r_agent->ag_mf.m_name));
	json_object_object_add(o, "runId", json_object_new_string(r->r_id));
}

void
run_audit_error(struct run *r, const char *ec, int exitcode)
{
	struct json_object *o = json_object_new_object();
	char hex[SHA256_HEX_LEN + 1];
	size_t n = r->r_err ? evbuffer_get_length(r->r_err) : 0;

	sha256_hex(
	    n ? evbuffer_pullup(r->r_err, (ev_ssize_t)n) : (void *)"", n, hex);
	hex[8] = '\0';
	run_add_common(o, "agent.invoke.error", r);
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

/*
 * Notes go to vaultd RUN_NOTES_SENDING at a time; the others wait here,
 * in the order their runs ended, each holding only its own transcript.
 * vaultd writes one note at a time anyway, and a burst of runs ending
 * together would otherwise queue every transcript, serialized, on its
 * channel at once (docs/PERFORMANCE.md, the spawner's memory bound).
 */
static TAILQ_HEAD(, run) notes_waiting = TAILQ_HEAD_INITIALIZER(notes_waiting);
static unsigned int notes_sending;

static int run_note_send(struct run *);

/* vaultd's answer, or none (m NULL): saved or unsaved, and the run over. */
static void
run_note_end(struct run *r, struct ipc_msg *m)
{
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
	run_audit_end(r);
	run_event(r, o);
	run_over(r, NULL);
}

/* The waiting notes, while fewer than RUN_NOTES_SENDING are out. */
static void
run_notes_next(void)
{
	struct run *r;

	while (notes_sending < RUN_NOTES_SENDING &&
	       (r = TAILQ_FIRST(&notes_waiting)) != NULL) {
		TAILQ_REMOVE(&notes_waiting, r, r_note_entry);
		if (run_note_send(r) == -1)
			run_note_end(r, NULL);
	}
}

static void
run_note_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	notes_sending--;
	run_note_end(arg, m);
	run_notes_next();
}

/*
 * The transcript to vaultd; 0 if a reply will come, and then the run's
 * agent.invoke.complete is sent with the answer (run_note_cb), so that
 * auditd is not busy syncing it when vaultd's vault.write record, which
 * the note waits for, arrives (docs/audit.md, "Durability").  The note's name
 * takes the first 8 hex of SHA-256 of the prompt as sent (VA-5), hashed
 * here so that vaultd needs no libcrypto.
 */
static int
run_note_send(struct run *r)
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
	if (rc == 0)
		notes_sending++;
	return rc;
}

/* A run's note: sent now, or queued behind the ones being sent. */
int
run_note(struct run *r)
{
	if (sp.sp_d.d_peers[PROC_VAULTD] == NULL)
		return -1;
	if (notes_sending < RUN_NOTES_SENDING && TAILQ_EMPTY(&notes_waiting))
		return run_note_send(r);
	TAILQ_INSERT_TAIL(&notes_waiting, r, r_note_entry);
	return 0;
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

/* The opening record: prompt only as hash and length (AU-4). */
struct json_object *
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
	run_add_common(o, "agent.invoke", r);
	json_object_object_add(o, "transport",
	    json_object_new_string(
		manifest_transport_name(r->r_agent->ag_mf.m_transport)));
	json_object_object_add(o, "bin", json_object_new_string(bin));
	args = json_object_new_array();
	for (i = 0; red[i] != NULL; i++)
		json_object_array_add(args, json_object_new_string(red[i]));
	strv_free(red);
	json_object_object_add(o, "argsRedacted", args);
	json_object_object_add(o, "promptSha256", json_object_new_string(hex));
	json_object_object_add(o, "promptChars",
	    json_object_new_int64(
		(int64_t)uni_utf8_chars(r->r_prompt, r->r_prompt_len)));
	if (r->r_via_mcp)
		json_object_object_add(o, "via", json_object_new_string("mcp"));
	return o;
}

/* SP-12: the error event of a failed run: its class, fixed message,
 * what ended it and the last lines it wrote (scrubbed). */
struct json_object *
run_error_event(struct run *r, const char *ec, int code)
{
	const struct aproc *ap = &r->r_proc;
	struct json_object *ev, *tail;

	ev = run_ev("error");
	json_object_object_add(ev, "errorClass", json_object_new_string(ec));
	json_object_object_add(
	    ev, "errorMessage", json_object_new_string(errclass_message(ec)));
	/* Fixed shape, for the operator: "seccomp: ptrace". */
	if (ap->ap_killed_by[0] != '\0')
		json_object_object_add(
		    ev, "detail", json_object_new_string(ap->ap_killed_by));
	if (!run_nonet_reason(r))
		run_end_reason(r, ec, code);
	json_object_object_add(
	    ev, "reason", json_object_new_string(r->r_reason));
	if ((tail = run_err_tail(r)) != NULL)
		json_object_object_add(ev, "stderrTail", tail);
	return ev;
}

/* agent.invoke.complete: a run that was not a failure (AU-4). */
void
run_audit_end(struct run *r)
{
	struct json_object *o = json_object_new_object();
	int code = aproc_exit_code(&r->r_proc);
	uint64_t ms = r->r_proc.ap_end_ms - r->r_proc.ap_start_ms;

	run_add_common(o, "agent.invoke.complete", r);
	json_object_object_add(
	    o, "durationMs", json_object_new_int64((int64_t)ms));
	json_object_object_add(o, "exitCode", json_object_new_int(code));
	json_object_object_add(
	    o, "bytesOut", json_object_new_int64((int64_t)r->r_bytes_out));
	json_object_object_add(o, "status",
	    json_object_new_string(
		r->r_proc.ap_end == AP_END_CANCEL ? "cancelled" : "success"));
	json_object_object_add(
	    o, "truncated", json_object_new_boolean(r->r_truncated));
	if (spawner_audit(o, audit_ignore_cb, NULL) == -1)
		log_warnx("audit unavailable for a run's end");
	json_object_put(o);
}
