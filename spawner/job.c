/*
 * Detached jobs (MC-3): a chat run whose stream goes to the state dir
 * instead of a client, so that it outlives the request that started it
 * (and the broker).  Its events are exactly the lines API-3 streams
 * (cleaned and scrubbed by the run's pipeline before they reach us);
 * its meta says when, how it ended and why it was cancelled.  A job the
 * spawner finds still "running" at start was lost with the previous
 * spawner, and is marked so.  Writes only beneath --state-dir/jobs/
 * (0700, ours, never through a link): ID.json, the meta (atomic_write_at),
 * and ID.jsonl, the events (O_APPEND, fdatasync'd at the end).
 */
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "cordon_limits.h"
#include "json.h"
#include "log.h"
#include "msg.h"
#include "roots.h"
#include "run.h"
#include "spawner.h"
#include "util.h"

#define JOBS_DIR       "jobs"
#define JOB_META_MAX   4096	     /* bytes of one meta file */
#define JOB_PAGE_BYTES (1024 * 1024) /* events in one answer */
#define JOB_JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

enum job_state { JS_RUNNING, JS_SUCCEEDED, JS_FAILED, JS_CANCELLED, JS_LOST };
static const char *const job_states[] = {
    "running", "succeeded", "failed", "cancelled", "lost"};

struct job;

/* A MSG_JOB_WAIT held until its job ends or its time is up. */
struct job_waiter {
	struct job *w_job;
	struct ipc_conn *w_conn;
	unsigned int w_gen;
	struct ipc_msg w_req;
	struct event *w_timer;
	LIST_ENTRY(job_waiter) w_entry;
};

struct job {
	char j_id[17];
	char j_agent[LIM_NAME_MAX + 1];
	int j_via_mcp;
	int j_started; /* answered: listed, findable, cancellable */
	enum job_state j_state;
	int64_t j_created, j_ended; /* ms since the epoch; 0: none */
	int j_exit, j_has_exit;
	char j_errclass[32];
	const char *j_cancel; /* NULL, "requested", "shutdown" */
	int j_truncated;      /* the run's output was cut (SP-9) */
	int j_cut;	      /* events dropped past LIM_JOB_EVENTS_BYTES */
	int j_lost_unaudited; /* found lost; its job.end not yet sent */
	int j_unsaved;	      /* its last meta could not be written */
	uint64_t j_events, j_bytes;
	struct job_cursor j_cur; /* where the last page of events ended */
	int j_fd;		 /* the events file while it runs, else -1 */
	struct run *j_run;
	struct ipc_conn *j_conn; /* the MSG_JOB_START's channel, answered */
	unsigned int j_gen;	 /* once the job is listed */
	struct ipc_msg j_req;
	LIST_HEAD(, job_waiter) j_waiters;
	TAILQ_ENTRY(job) j_entry; /* newest first */
};

static TAILQ_HEAD(job_list_head, job) jobs = TAILQ_HEAD_INITIALIZER(jobs);
static int jobs_dfd = -1;
static long jobs_keep = LIM_JOBS_KEEP;
static uint64_t jobs_keep_bytes = (uint64_t)LIM_JOBS_KEEP_MIB << 20;

static int
job_id_ok(const char *s)
{
	return hex_lower_n(s, 16);
}

static struct job *
job_find(const char *id)
{
	struct job *j;

	TAILQ_FOREACH (j, &jobs, j_entry)
		if (j->j_started && strcmp(j->j_id, id) == 0)
			return j;
	return NULL;
}

static void
job_name(char *out, size_t outsz, const struct job *j, const char *ext)
{
	snprintf(out, outsz, "%s.%s", j->j_id, ext);
}

/* The meta: what list, status and wait answer, and ID.json holds. */
static struct json_object *
job_json(const struct job *j)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "jobId", json_object_new_string(j->j_id));
	json_object_object_add(o, "agent", json_object_new_string(j->j_agent));
	json_object_object_add(
	    o, "state", json_object_new_string(job_states[j->j_state]));
	if (j->j_via_mcp)
		json_object_object_add(o, "via", json_object_new_string("mcp"));
	json_object_object_add(
	    o, "createdMs", json_object_new_int64(j->j_created));
	if (j->j_ended != 0) {
		json_object_object_add(
		    o, "endedMs", json_object_new_int64(j->j_ended));
		json_object_object_add(o, "durationMs",
		    json_object_new_int64(j->j_ended - j->j_created));
	}
	if (j->j_has_exit)
		json_object_object_add(
		    o, "exitCode", json_object_new_int(j->j_exit));
	if (j->j_errclass[0] != '\0')
		json_object_object_add(
		    o, "errorClass", json_object_new_string(j->j_errclass));
	if (j->j_cancel != NULL)
		json_object_object_add(
		    o, "cancelReason", json_object_new_string(j->j_cancel));
	json_object_object_add(
	    o, "events", json_object_new_int64((int64_t)j->j_events));
	json_object_object_add(
	    o, "bytes", json_object_new_int64((int64_t)j->j_bytes));
	json_object_object_add(
	    o, "truncated", json_object_new_boolean(j->j_truncated));
	json_object_object_add(
	    o, "eventsCut", json_object_new_boolean(j->j_cut));
	return o;
}

/* ID.json, atomically.  0 or -1 (and the job marked unsaved). */
static int
job_save(struct job *j)
{
	struct json_object *o = job_json(j);
	char name[32];
	const char *s;
	size_t len;
	int rc;

	job_name(name, sizeof(name), j, "json");
	s = json_object_to_json_string_length(o, JOB_JSON_FLAGS, &len);
	rc =
	    atomic_write_at(jobs_dfd, name, s, len, 0600, (uid_t)-1, (gid_t)-1);
	if (rc == -1)
		log_warn("job %s: meta", j->j_id);
	j->j_unsaved = rc == -1;
	json_object_put(o);
	return rc;
}

/* A meta written proves room again: the ones that failed are redone,
 * so a job that ended on a full disk is not `running` there for long. */
static void
jobs_resave(void)
{
	struct job *j;

	TAILQ_FOREACH (j, &jobs, j_entry)
		if (j->j_unsaved && job_save(j) == -1)
			return;
}

static void
job_remove_files(const struct job *j)
{
	char name[32];

	job_name(name, sizeof(name), j, "json");
	(void)unlinkat(jobs_dfd, name, 0);
	job_name(name, sizeof(name), j, "jsonl");
	(void)unlinkat(jobs_dfd, name, 0);
}

static void
job_free(struct job *j)
{
	if (j->j_fd != -1)
		close(j->j_fd);
	TAILQ_REMOVE(&jobs, j, j_entry);
	free(j);
}

/* Newest first: by creation, then id, so every listing agrees. */
static void
job_insert(struct job *j)
{
	struct job *k;

	TAILQ_FOREACH (k, &jobs, j_entry)
		if (k->j_created < j->j_created ||
		    (k->j_created == j->j_created &&
			strcmp(k->j_id, j->j_id) < 0)) {
			TAILQ_INSERT_BEFORE(k, j, j_entry);
			return;
		}
	TAILQ_INSERT_TAIL(&jobs, j, j_entry);
}

/*
 * Retention: the oldest ended jobs go, files and all, until at most
 * jobs_keep jobs and jobs_keep_bytes of events are left.  A running job,
 * and the newest job, are never removed.
 */
static void
jobs_trim(void)
{
	struct job *j, *prev;
	uint64_t bytes = 0;
	long n = 0;

	TAILQ_FOREACH (j, &jobs, j_entry) {
		n++;
		bytes += j->j_bytes;
	}
	for (j = TAILQ_LAST(&jobs, job_list_head);
	     j != NULL && (n > jobs_keep || bytes > jobs_keep_bytes);
	     j = prev) {
		prev = TAILQ_PREV(j, job_list_head, j_entry);
		/* The newest is kept whatever its size: a job that ended
		 * is never gone before its caller could read it. */
		if (j->j_state == JS_RUNNING || !LIST_EMPTY(&j->j_waiters) ||
		    j == TAILQ_FIRST(&jobs))
			continue;
		n--;
		bytes -= j->j_bytes;
		job_remove_files(j);
		job_free(j);
	}
}

/* ---- audit (job.start, job.end) ---- */

static void
job_audit(const struct job *j, int end)
{
	struct json_object *rec = json_object_new_object();

	json_object_object_add(
	    rec, "kind", json_object_new_string(end ? "job.end" : "job.start"));
	json_object_object_add(rec, "jobId", json_object_new_string(j->j_id));
	json_object_object_add(
	    rec, "agent", json_object_new_string(j->j_agent));
	if (!end) {
		if (j->j_via_mcp)
			json_object_object_add(
			    rec, "via", json_object_new_string("mcp"));
	} else {
		json_object_object_add(rec, "state",
		    json_object_new_string(job_states[j->j_state]));
		if (j->j_cancel != NULL)
			json_object_object_add(rec, "cancelReason",
			    json_object_new_string(j->j_cancel));
		json_object_object_add(rec, "durationMs",
		    json_object_new_int64(j->j_ended > j->j_created
					      ? j->j_ended - j->j_created
					      : 0));
		json_object_object_add(
		    rec, "events", json_object_new_int64((int64_t)j->j_events));
		json_object_object_add(
		    rec, "bytes", json_object_new_int64((int64_t)j->j_bytes));
	}
	/* Not waited on: the run's own agent.invoke opened it (AU-6). */
	if (spawner_audit(rec, NULL, NULL) == -1)
		log_warnx("job %s: %s not recorded: auditd is down", j->j_id,
		    end ? "job.end" : "job.start");
	json_object_put(rec);
}

/* auditd is (again) up: the job.end of jobs found lost at start. */
void
jobs_audit_lost(void)
{
	struct job *j;

	if (sp.sp_d.d_peers[PROC_AUDITD] == NULL)
		return;
	TAILQ_FOREACH (j, &jobs, j_entry)
		if (j->j_lost_unaudited) {
			j->j_lost_unaudited = 0;
			job_audit(j, 1);
		}
}

/* ---- the run's sink (struct run_sink_ops) ---- */

static const struct run_sink_ops job_ops;
static void job_append(struct job *, struct json_object *, int);

/* Run r's sink, a job: its events file made, nothing listed yet. */
int
job_open(struct run *r, struct ipc_conn *c, const struct ipc_msg *m,
    const char **code)
{
	struct json_object *o;
	struct job *j;
	char name[32];

	*code = "jobs-unavailable";
	if (jobs_dfd == -1 || (j = calloc(1, sizeof(*j))) == NULL)
		return -1;
	memcpy(j->j_id, r->r_id, sizeof(j->j_id));
	snprintf(
	    j->j_agent, sizeof(j->j_agent), "%s", r->r_agent->ag_mf.m_name);
	j->j_via_mcp = r->r_via_mcp;
	j->j_state = JS_RUNNING;
	j->j_created = now_ms_real();
	j->j_run = r;
	LIST_INIT(&j->j_waiters);
	job_name(name, sizeof(name), j, "jsonl");
	j->j_fd = openat(jobs_dfd, name,
	    O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (j->j_fd == -1) {
		log_warn("job %s: events file", j->j_id);
		free(j);
		return -1;
	}
	/*
	 * A job that cannot be kept never starts: its start line and its
	 * meta are written before anything runs, so a full disk refuses it
	 * here.  Should the spawner die before the run starts, the next one
	 * finds the job lost.
	 */
	o = run_ev("start");
	json_object_object_add(o, "runId", json_object_new_string(r->r_id));
	job_append(j, o, 1);
	json_object_put(o);
	if (j->j_fd == -1 || job_save(j) == -1) {
		job_remove_files(j);
		if (j->j_fd != -1)
			close(j->j_fd);
		free(j);
		return -1;
	}
	jobs_resave();
	spawner_req_keep(c, m, &j->j_conn, &j->j_gen, &j->j_req);
	job_insert(j);
	r->r_sink = &job_ops;
	r->r_sink_arg = j;
	return 0;
}

/* One line of the stream, as API-3 carries it, appended. */
static void
job_append(struct job *j, struct json_object *o, int last)
{
	struct iovec iov[2];
	const char *s;
	size_t len;
	ssize_t n;

	if (j->j_fd == -1)
		return;
	s = json_object_to_json_string_length(o, JOB_JSON_FLAGS, &len);
	/* The last events (error, done, saved) always fit: they are small. */
	if (!last && j->j_bytes + len + 1 > LIM_JOB_EVENTS_BYTES - 4096) {
		j->j_cut = 1;
		return;
	}
	iov[0].iov_base = (void *)(uintptr_t)s;
	iov[0].iov_len = len;
	iov[1].iov_base = "\n";
	iov[1].iov_len = 1;
	/* One append: a reader sees whole lines only, or none. */
	if ((n = writev(j->j_fd, iov, 2)) != (ssize_t)len + 1) {
		log_warn("job %s: events", j->j_id);
		/* A torn line is cut off; no line comes after it. */
		if (n > 0 && ftruncate(j->j_fd, (off_t)j->j_bytes) == -1)
			log_warn("job %s: events", j->j_id);
		close(j->j_fd);
		j->j_fd = -1;
		j->j_cut = 1;
		return;
	}
	j->j_events++;
	j->j_bytes += len + 1;
}

/* One run event, to the job's file; its outcome noted. */
static void
job_event(struct run *r, void *arg, struct json_object *o)
{
	struct job *j = arg;
	const char *kind = json_get_str(o, "kind", 16), *ec;
	struct json_object *v;
	long long code;

	if (kind == NULL || strcmp(kind, "unsaved") == 0) {
		json_object_put(o); /* the stream's internal end, never sent */
		return;
	}
	if (strcmp(kind, "done") == 0) {
		json_object_object_del(o, "pending");
		if (json_get_int(o, "exitCode", -1, 255, &code) == 0) {
			j->j_exit = (int)code;
			j->j_has_exit = 1;
		}
		if (json_object_object_get_ex(o, "truncated", &v))
			j->j_truncated = json_object_get_boolean(v);
		if (json_object_object_get_ex(o, "cancelled", &v) &&
		    json_object_get_boolean(v))
			j->j_state = JS_CANCELLED;
	} else if (strcmp(kind, "error") == 0 &&
		   (ec = json_get_str(o, "errorClass", 31)) != NULL)
		snprintf(j->j_errclass, sizeof(j->j_errclass), "%s", ec);
	job_append(j, o,
	    strcmp(kind, "error") == 0 || strcmp(kind, "done") == 0 ||
		strcmp(kind, "saved") == 0);
	json_object_put(o);
}

/* Admitted (MC-2: before its checkout) or its child runs: job.start,
 * the answer with the job's id. */
static void
job_started(struct run *r, void *arg)
{
	struct job *j = arg;
	struct json_object *o;

	j->j_started = 1; /* its start line and meta: job_open */
	job_audit(j, 0);
	if (spawner_broker_ok(j->j_conn, j->j_gen)) {
		o = json_object_new_object();
		json_object_object_add(
		    o, "jobId", json_object_new_string(j->j_id));
		ipc_reply(j->j_conn, &j->j_req, MSG_JOB_START_OK, o, -1);
		json_object_put(o);
	}
}

/* Its reader is its file once it is answered, the broker until then. */
static int
job_listening(const struct run *r, void *arg)
{
	const struct job *j = arg;

	return j->j_started || spawner_broker_ok(j->j_conn, j->j_gen);
}

static void
job_refused(struct run *r, void *arg, const char *code)
{
	struct job *j = arg;

	if (spawner_broker_ok(j->j_conn, j->j_gen))
		run_reply_error(j->j_conn, &j->j_req, r, code);
}

static void job_wake(struct job *);

/* The run is freed: the job ends (or never was). */
static void
job_run_end(struct run *r, void *arg)
{
	struct job *j = arg;

	j->j_run = NULL;
	if (!j->j_started) { /* refused before it was answered */
		job_remove_files(j);
		job_free(j);
		return;
	}
	if (j->j_state == JS_RUNNING)
		j->j_state =
		    j->j_errclass[0] != '\0' ? JS_FAILED : JS_SUCCEEDED;
	if (j->j_state == JS_CANCELLED && j->j_cancel == NULL)
		j->j_cancel = "requested";
	/* Stopping cordon ends its jobs: cancelled, and it says why. */
	if (sp.sp_stopping && j->j_state != JS_SUCCEEDED) {
		j->j_state = JS_CANCELLED;
		j->j_cancel = "shutdown";
	}
	j->j_ended = now_ms_real();
	if (j->j_fd != -1) {
		if (fdatasync(j->j_fd) == -1)
			log_warn("job %s: events", j->j_id);
		close(j->j_fd);
		j->j_fd = -1;
	}
	(void)job_save(j);
	job_audit(j, 1);
	job_wake(j);
	jobs_trim();
}

/* The job's file is its reader (MC-3): no flow control, no credits;
 * cancelled as a job, never by its run's id. */
static const struct run_sink_ops job_ops = {
    .rs_started = job_started,
    .rs_event = job_event,
    .rs_listening = job_listening,
    .rs_refused = job_refused,
    .rs_free = job_run_end,
    .rs_events = 1,
    .rs_note = 1,
};

/* ---- loading: what the previous spawner left ---- */

static int
job_file(const char *name)
{
	size_t len = strlen(name);

	return (len == 21 && strcmp(name + 16, ".json") == 0) ||
	       (len == 22 && strcmp(name + 16, ".jsonl") == 0);
}

/* ID.json, a regular file of our shape whose jobId is id: its object,
 * or NULL. */
static struct json_object *
job_meta_read(const char *id)
{
	/* Bounds where a value out of them is refused by job_load; the
	 * others are read only when in range. */
	static const struct json_shape shape[] = {
	    JS_STR("jobId", JS_REQ, 0, 16),
	    JS_STR("agent", JS_REQ, 0, LIM_NAME_MAX),
	    JS_STR("state", JS_REQ, 0, 16),
	    JS_STR("via", JS_OPT, 0, LLONG_MAX),
	    JS_INT("createdMs", JS_REQ, 0, INT64_MAX / 2),
	    JS_INT("endedMs", JS_OPT, LLONG_MIN, LLONG_MAX),
	    JS_INT("durationMs", JS_OPT, LLONG_MIN, LLONG_MAX),
	    JS_INT("exitCode", JS_OPT, LLONG_MIN, LLONG_MAX),
	    JS_STR("errorClass", JS_OPT, 0, LLONG_MAX),
	    JS_STR("cancelReason", JS_OPT, 0, LLONG_MAX),
	    JS_INT("events", JS_REQ, LLONG_MIN, LLONG_MAX),
	    JS_INT("bytes", JS_REQ, LLONG_MIN, LLONG_MAX),
	    JS_BOOL("truncated", JS_REQ),
	    JS_BOOL("eventsCut", JS_REQ),
	};
	struct json_object *o = NULL;
	char name[32], buf[JOB_META_MAX];
	const char *s;
	struct stat st;
	ssize_t len;
	int fd;

	snprintf(name, sizeof(name), "%s.json", id);
	if ((fd = openat(jobs_dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (len = read(fd, buf, sizeof(buf))) > 0 && (size_t)len < sizeof(buf))
		o = json_parse_object(buf, (size_t)len, 2);
	close(fd);
	if (o != NULL && (!json_shape_ok(o, shape, nitems(shape)) ||
			     (s = json_get_str(o, "jobId", 16)) == NULL ||
			     strcmp(s, id) != 0)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

/* ID.json into a job, or NULL (unreadable, or not ours: left alone). */
static struct job *
job_load(const char *id)
{
	struct json_object *o, *v;
	const char *s;
	struct job *j = NULL;
	long long n;
	size_t i;

	if ((o = job_meta_read(id)) == NULL ||
	    (j = calloc(1, sizeof(*j))) == NULL)
		goto bad;
	memcpy(j->j_id, id, sizeof(j->j_id));
	j->j_fd = -1;
	j->j_started = 1;
	LIST_INIT(&j->j_waiters);
	if ((s = json_get_str(o, "agent", LIM_NAME_MAX)) == NULL)
		goto bad;
	snprintf(j->j_agent, sizeof(j->j_agent), "%s", s);
	s = json_get_str(o, "state", 16);
	for (i = 0; i < nitems(job_states); i++)
		if (s != NULL && strcmp(s, job_states[i]) == 0)
			break;
	if (i == nitems(job_states))
		goto bad;
	j->j_state = (enum job_state)i;
	j->j_via_mcp = json_object_object_get_ex(o, "via", NULL);
	if (json_get_int(o, "createdMs", 0, INT64_MAX / 2, &n) == -1)
		goto bad;
	j->j_created = n;
	if (json_get_int(o, "endedMs", 0, INT64_MAX / 2, &n) == 0)
		j->j_ended = n;
	if (json_get_int(o, "exitCode", -1, 255, &n) == 0) {
		j->j_exit = (int)n;
		j->j_has_exit = 1;
	}
	if ((s = json_get_str(o, "errorClass", 31)) != NULL)
		snprintf(j->j_errclass, sizeof(j->j_errclass), "%s", s);
	if ((s = json_get_str(o, "cancelReason", 16)) != NULL)
		j->j_cancel =
		    strcmp(s, "shutdown") == 0 ? "shutdown" : "requested";
	if (json_get_int(o, "events", 0, INT64_MAX / 2, &n) == 0)
		j->j_events = (uint64_t)n;
	json_object_object_get_ex(o, "truncated", &v);
	j->j_truncated = json_object_get_boolean(v);
	json_object_object_get_ex(o, "eventsCut", &v);
	j->j_cut = json_object_get_boolean(v);
	json_object_put(o);
	return j;
bad:
	json_object_put(o);
	free(j);
	log_warnx("jobs: %s: unusable meta, left alone", id);
	return NULL;
}

/*
 * The events file as it is on disk: its size, and its number of whole
 * lines (a job the previous spawner lost may not have said).
 */
static void
job_measure(struct job *j)
{
	char name[32], buf[65536];
	struct stat st;
	uint64_t lines = 0;
	ssize_t n, i;
	int fd;

	job_name(name, sizeof(name), j, "jsonl");
	j->j_bytes = 0;
	if ((fd = openat(jobs_dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		j->j_bytes = (uint64_t)st.st_size;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			for (i = 0; i < n; i++)
				lines += buf[i] == '\n';
		j->j_events = lines;
	}
	close(fd);
}

/*
 * At start: state_dir/jobs made (0700, ours, never a link) and held;
 * every job's meta loaded; a job still "running" was lost with the
 * previous spawner (SIGKILL, crash): it is marked lost, never shown
 * running.  Then retention.  Without a state dir, jobs are refused.
 */
void
jobs_open(const char *state_dir, long keep, long keep_mib)
{
	char **names, id[17], path[PATH_MAX];
	struct job *j;
	size_t i, n;
	int sfd;

	jobs_keep = keep;
	jobs_keep_bytes = (uint64_t)keep_mib << 20;
	if (state_dir == NULL) {
		log_warnx("no --state-dir: detached jobs are off");
		return;
	}
	if ((sfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (jobs_dfd = roots_dir_make(sfd, JOBS_DIR)) == -1) {
		log_warn("jobs dir: detached jobs are off");
		return;
	}
	/* The names only: every open goes through the held fd. */
	if (snprintf(path, sizeof(path), "%s/%s", state_dir, JOBS_DIR) >=
		(int)sizeof(path) ||
	    (names = dir_names(path, job_file, &n)) == NULL) {
		log_warn("jobs dir: detached jobs are off");
		close(jobs_dfd);
		jobs_dfd = -1;
		return;
	}
	for (i = 0; i < n; i++) {
		memcpy(id, names[i], 16);
		id[16] = '\0';
		if (!job_id_ok(id))
			continue;
		if (strcmp(names[i] + 16, ".jsonl") == 0) {
			/* Events without a meta: a removal cut short. */
			if (i + 1 < n && strncmp(names[i + 1], id, 16) == 0)
				continue;
			if (i > 0 && strncmp(names[i - 1], id, 16) == 0)
				continue;
			(void)unlinkat(jobs_dfd, names[i], 0);
			continue;
		}
		if ((j = job_load(id)) == NULL)
			continue;
		job_measure(j);
		if (j->j_state == JS_RUNNING) {
			j->j_state = JS_LOST;
			j->j_ended = now_ms_real();
			j->j_lost_unaudited = 1;
			log_warnx(
			    "job %s: lost with the previous spawner", j->j_id);
			(void)job_save(j);
		}
		job_insert(j);
	}
	dir_names_free(names, n);
	jobs_trim();
}

/* ---- requests from the broker ---- */

static struct job *
job_arg(struct ipc_conn *c, struct ipc_msg *m)
{
	/* Typed and bounded by the row's shape (spawner_shapes.h). */
	const char *id = json_shape_str(m->m_obj, "jobId", NULL);
	struct job *j;

	if (id == NULL || (j = job_find(id)) == NULL) {
		ipc_reply_error(c, m, "unknown-job");
		return NULL;
	}
	return j;
}

void
job_start_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	run_start_msg(c, m, 1);
}

void
job_list_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o, *arr;
	struct job *j;

	arr = json_object_new_array();
	TAILQ_FOREACH (j, &jobs, j_entry)
		if (j->j_started)
			json_object_array_add(arr, job_json(j));
	o = json_object_new_object();
	json_object_object_add(o, "jobs", arr);
	ipc_reply(c, m, MSG_JOB_LIST_OK, o, -1);
	json_object_put(o);
}

void
job_get_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o;
	struct job *j;

	if ((j = job_arg(c, m)) == NULL)
		return;
	o = json_object_new_object();
	json_object_object_add(o, "job", job_json(j));
	ipc_reply(c, m, MSG_JOB_GET_OK, o, -1);
	json_object_put(o);
}

/*
 * Events from line offset on, at most limit of them and at most
 * JOB_PAGE_BYTES of lines (one at least, however long; job_page.c);
 * next is where the following page starts.  An offset past the end is
 * refused; at the end, none.
 */
void
job_events_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o, *arr;
	long long off = json_shape_int(m->m_obj, "offset", 0);
	long long lim = json_shape_int(m->m_obj, "limit", 1);
	uint64_t taken = 0;
	struct stat st;
	struct job *j;
	char name[32];
	int fd;

	if ((j = job_arg(c, m)) == NULL)
		return;
	if ((uint64_t)off > j->j_events) {
		ipc_reply_error(c, m, "invalid-offset");
		return;
	}
	job_name(name, sizeof(name), j, "jsonl");
	arr = json_object_new_array();
	if ((fd = openat(jobs_dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) !=
	    -1) {
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size <= LIM_JOB_EVENTS_BYTES)
			taken = job_page(fd, (uint64_t)st.st_size, &j->j_cur,
			    (uint64_t)off, (uint64_t)lim, JOB_PAGE_BYTES, arr);
		close(fd);
	}
	o = json_object_new_object();
	json_object_object_add(o, "events", arr);
	json_object_object_add(
	    o, "next", json_object_new_int64((int64_t)((uint64_t)off + taken)));
	json_object_object_add(o, "job", job_json(j));
	ipc_reply(c, m, MSG_JOB_EVENTS_OK, o, -1);
	json_object_put(o);
}

static void
job_wait_answer(struct job_waiter *w, int timed_out)
{
	struct json_object *o;

	if (spawner_broker_ok(w->w_conn, w->w_gen)) {
		o = json_object_new_object();
		json_object_object_add(o, "job", job_json(w->w_job));
		json_object_object_add(
		    o, "timedOut", json_object_new_boolean(timed_out));
		ipc_reply(w->w_conn, &w->w_req, MSG_JOB_WAIT_OK, o, -1);
		json_object_put(o);
	}
	LIST_REMOVE(w, w_entry);
	event_free(w->w_timer);
	free(w);
}

static void
job_wait_timer(evutil_socket_t fd, short ev, void *arg)
{
	job_wait_answer(arg, 1);
}

static void
job_wake(struct job *j)
{
	while (!LIST_EMPTY(&j->j_waiters))
		job_wait_answer(LIST_FIRST(&j->j_waiters), 0);
}

void
job_wait_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	long long ms = json_shape_int(m->m_obj, "timeoutMs", 0);
	struct job_waiter *w;
	struct timeval tv;
	struct job *j;

	if ((j = job_arg(c, m)) == NULL)
		return;
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->w_timer = evtimer_new(sp.sp_d.d_base, job_wait_timer, w)) ==
		NULL) {
		free(w);
		ipc_reply_error(c, m, "internal");
		return;
	}
	w->w_job = j;
	spawner_req_keep(c, m, &w->w_conn, &w->w_gen, &w->w_req);
	LIST_INSERT_HEAD(&j->j_waiters, w, w_entry);
	if (j->j_state != JS_RUNNING || ms == 0) {
		job_wait_answer(w, j->j_state == JS_RUNNING);
		return;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(w->w_timer, &tv);
}

void
job_cancel_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct job *j;

	if ((j = job_arg(c, m)) == NULL)
		return;
	if (j->j_state != JS_RUNNING || j->j_run == NULL) {
		ipc_reply_error(c, m, "job-not-running");
		return;
	}
	/* Set first: a job in its checkout (MC-2) ends within run_stop. */
	j->j_cancel = "requested";
	if (run_stop(j->j_run) == -1) {
		j->j_cancel = NULL;
		ipc_reply_error(c, m, "job-not-running");
		return;
	}
	ipc_reply(c, m, MSG_JOB_CANCEL_OK, NULL, -1);
}
