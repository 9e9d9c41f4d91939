/*
 * `cordon job list|show|cancel`: detached jobs (MC-3) of a running
 * cordon, through its API on loopback with the bearer token, as `cordon
 * status` asks it (endpoint.c):
 *
 *   list [--json]          GET /api/jobs, one line per job, newest first;
 *   show ID [--json]       GET /api/jobs/ID and every page of its events:
 *                          the meta, then the run's text as it streamed;
 *   cancel ID              POST /api/jobs/ID/cancel.
 *
 * An ID off ^[A-Za-z0-9_-]{1,80}$ is refused before any call.  Reads the
 * runtime or token files; writes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "cordond.h"
#include "endpoint.h"
#include "json.h"
#include "schema.h"

#define JOB_PAGE 200 /* events asked per call */

static void
print_json(struct json_object *o)
{
	printf("%s\n",
	    json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* A member as text: a string, a number or a boolean; else "-". */
static const char *
text_at(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v) ||
	    json_object_is_type(v, json_type_object) ||
	    json_object_is_type(v, json_type_array) ||
	    json_object_is_type(v, json_type_null))
		return "-";
	return json_object_get_string(v);
}

/* ms since the epoch as UTC "YYYY-MM-DDTHH:MM:SSZ", or "-". */
static const char *
when_at(struct json_object *o, const char *k, char *buf, size_t bufsz)
{
	struct json_object *v;
	struct tm tm;
	time_t t;

	if (!json_object_object_get_ex(o, k, &v) ||
	    !json_object_is_type(v, json_type_int))
		return "-";
	t = (time_t)(json_object_get_int64(v) / 1000);
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, bufsz, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return "-";
	return buf;
}

/* What the API refused, in words; its code is not echoed input. */
static int
job_refused(const char *verb, int status)
{
	fprintf(stderr, "cordon: job %s: %s\n", verb,
	    status == 404   ? "no such job"
	    : status == 409 ? "the job is not running"
	    : status == 0   ? "no answer"
			    : "refused");
	return 1;
}

static int
job_list(struct event_base *base, const struct endpoint *ep, int json)
{
	struct json_object *o, *arr, *j;
	char a[32];
	size_t i, n;
	int st = 0;

	if ((o = endpoint_fetch(base, ep, "/api/jobs", NULL, &st)) == NULL)
		return job_refused("list", st);
	if (!json_object_object_get_ex(o, "jobs", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		json_object_put(o);
		return job_refused("list", 0);
	}
	if (json)
		print_json(o);
	else {
		printf("%-16s %-20s %-10s %-20s %s\n", "JOB", "AGENT", "STATE",
		    "STARTED", "EVENTS");
		n = json_object_array_length(arr);
		for (i = 0; i < n; i++) {
			j = json_object_array_get_idx(arr, i);
			printf("%-16s %-20s %-10s %-20s %s\n",
			    text_at(j, "jobId"), text_at(j, "agent"),
			    text_at(j, "state"),
			    when_at(j, "createdMs", a, sizeof(a)),
			    text_at(j, "events"));
		}
	}
	json_object_put(o);
	return 0;
}

static void
print_meta(struct json_object *j)
{
	static const char *const keys[] = {"jobId", "agent", "state", "via",
	    "durationMs", "exitCode", "errorClass", "cancelReason", "events",
	    "bytes", "truncated", "eventsCut", NULL};
	char a[32];
	size_t i;

	for (i = 0; keys[i] != NULL; i++)
		if (json_object_object_get_ex(j, keys[i], NULL))
			printf("%-13s %s\n", keys[i], text_at(j, keys[i]));
	printf("%-13s %s\n", "started", when_at(j, "createdMs", a, sizeof(a)));
	if (json_object_object_get_ex(j, "endedMs", NULL))
		printf(
		    "%-13s %s\n", "ended", when_at(j, "endedMs", a, sizeof(a)));
}

/* One event as the run's text shows it: tokens as they are, the rest
 * on lines of their own. */
static void
print_event(struct json_object *e)
{
	const char *k = text_at(e, "kind");

	if (strcmp(k, "token") == 0)
		fputs(text_at(e, "text"), stdout);
	else if (strcmp(k, "tool") == 0)
		printf("\n[tool] %s: %s\n", text_at(e, "tool"),
		    text_at(e, "input"));
	else if (strcmp(k, "tool_result") == 0)
		printf("[result] %s\n", text_at(e, "summary"));
	else if (strcmp(k, "notice") == 0)
		printf("\n[notice] %s\n", text_at(e, "text"));
	else if (strcmp(k, "error") == 0)
		printf("\n[error] %s: %s\n", text_at(e, "errorClass"),
		    text_at(e, "errorMessage"));
	else if (strcmp(k, "saved") == 0)
		printf("[saved] %s\n", text_at(e, "path"));
}

static int
job_show(struct event_base *base, const struct endpoint *ep, const char *id,
    int json)
{
	struct json_object *o, *all, *arr, *job = NULL, *v;
	long long next = 0, prev;
	char uri[256];
	size_t i, n;
	int st = 0, rc = 0;

	all = json_object_new_array();
	/* Every page, from offset 0, until a page comes back empty. */
	for (;;) {
		prev = next;
		snprintf(uri, sizeof(uri),
		    "/api/jobs/%s/events?offset=%lld&limit=%d", id, next,
		    JOB_PAGE);
		if ((o = endpoint_fetch(base, ep, uri, NULL, &st)) == NULL) {
			rc = job_refused("show", st);
			break;
		}
		if (!json_object_object_get_ex(o, "events", &arr) ||
		    !json_object_is_type(arr, json_type_array) ||
		    json_get_int(o, "next", next, 1LL << 53, &next) == -1 ||
		    !json_object_object_get_ex(o, "job", &v)) {
			json_object_put(o);
			rc = job_refused("show", 0);
			break;
		}
		json_object_put(job);
		job = json_object_get(v);
		n = json_object_array_length(arr);
		for (i = 0; i < n; i++)
			json_object_array_add(all,
			    json_object_get(json_object_array_get_idx(arr, i)));
		json_object_put(o);
		if (n == 0 || next <= prev)
			break;
	}
	if (rc == 0 && json) {
		o = json_object_new_object();
		json_object_object_add(o, "job", json_object_get(job));
		json_object_object_add(o, "events", json_object_get(all));
		print_json(o);
		json_object_put(o);
	} else if (rc == 0) {
		print_meta(job);
		printf("\n");
		n = json_object_array_length(all);
		for (i = 0; i < n; i++)
			print_event(json_object_array_get_idx(all, i));
		printf("\n");
	}
	json_object_put(job);
	json_object_put(all);
	return rc;
}

static int
job_cancel(struct event_base *base, const struct endpoint *ep, const char *id)
{
	struct json_object *o;
	char uri[160];
	int st = 0;

	snprintf(uri, sizeof(uri), "/api/jobs/%s/cancel", id);
	if ((o = endpoint_fetch(base, ep, uri, "{}", &st)) == NULL)
		return job_refused("cancel", st);
	json_object_put(o);
	printf("cordon: job %s: cancel asked\n", id);
	return 0;
}

int
cmd_job(int argc, char **argv)
{
	struct event_base *base;
	struct endpoint ep;
	const char *verb, *id = NULL;
	int json = 0, rc, *jp;

	if (argc < 2)
		goto usage;
	verb = argv[1];
	if (strcmp(verb, "list") == 0) {
		argc -= 1; /* argv[0] for the options: the verb */
		argv += 1;
	} else if (strcmp(verb, "show") == 0 || strcmp(verb, "cancel") == 0) {
		if (argc < 3 || !schema_job_id_ok(argv[2]))
			goto usage;
		id = argv[2];
		argc -= 2; /* argv[0] for the options: the id */
		argv += 2;
	} else
		goto usage;
	jp = strcmp(verb, "cancel") == 0 ? NULL : &json;
	if ((rc = endpoint_args("job", argc, argv, jp, &ep)) == 2)
		goto usage;
	if (rc != 0)
		return rc;
	if ((base = event_base_new()) == NULL)
		return 1;
	if (id == NULL)
		rc = job_list(base, &ep, json);
	else if (strcmp(verb, "show") == 0)
		rc = job_show(base, &ep, id, json);
	else
		rc = job_cancel(base, &ep, id);
	event_base_free(base);
	explicit_bzero(&ep, sizeof(ep));
	return rc;
usage:
	fprintf(stderr,
	    "usage: cordon job list [--home DIR | --port N --token-file FILE] "
	    "[--json]\n"
	    "       cordon job show ID [--home DIR | ...] [--json]\n"
	    "       cordon job cancel ID [--home DIR | ...]\n"
	    "       (ID: ^[A-Za-z0-9_-]{1,80}$)\n");
	return 2;
}
