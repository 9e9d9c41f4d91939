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

#include <event2/event.h>
#include <json-c/json.h>

#include "cordond.h"
#include "endpoint.h"
#include "json.h"
#include "util.h"

#define JOB_PAGE 200 /* events asked per call */

static const struct endpoint_coll job_coll = {
    "job", "jobs", "no such job", "the job is not running"};

/* One line of `cordon job list`; NULL: its header. */
static void
job_row(struct json_object *j)
{
	char a[32];

	if (j == NULL)
		printf("%-16s %-20s %-10s %-20s %s\n", "JOB", "AGENT", "STATE",
		    "STARTED", "EVENTS");
	else
		printf("%-16s %-20s %-10s %-20s %s\n",
		    endpoint_text(j, "jobId"), endpoint_text(j, "agent"),
		    endpoint_text(j, "state"),
		    endpoint_when(j, "createdMs", a, sizeof(a)),
		    endpoint_text(j, "events"));
}

static int
job_list(struct event_base *base, const struct endpoint *ep, const char *id,
    int json)
{
	return endpoint_list(base, ep, &job_coll, json, job_row);
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
			printf(
			    "%-13s %s\n", keys[i], endpoint_text(j, keys[i]));
	printf("%-13s %s\n", "started",
	    endpoint_when(j, "createdMs", a, sizeof(a)));
	if (json_object_object_get_ex(j, "endedMs", NULL))
		printf("%-13s %s\n", "ended",
		    endpoint_when(j, "endedMs", a, sizeof(a)));
}

/* One event as the run's text shows it: tokens as they are, the rest
 * on lines of their own. */
static void
print_event(struct json_object *e)
{
	const char *k = endpoint_text(e, "kind");

	if (strcmp(k, "token") == 0)
		fputs(endpoint_text(e, "text"), stdout);
	else if (strcmp(k, "tool") == 0)
		printf("\n[tool] %s: %s\n", endpoint_text(e, "tool"),
		    endpoint_text(e, "input"));
	else if (strcmp(k, "tool_result") == 0)
		printf("[result] %s\n", endpoint_text(e, "summary"));
	else if (strcmp(k, "notice") == 0)
		printf("\n[notice] %s\n", endpoint_text(e, "text"));
	else if (strcmp(k, "error") == 0)
		printf("\n[error] %s: %s\n", endpoint_text(e, "errorClass"),
		    endpoint_text(e, "errorMessage"));
	else if (strcmp(k, "saved") == 0)
		printf("[saved] %s\n", endpoint_text(e, "path"));
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
			rc = endpoint_refused(&job_coll, "show", st);
			break;
		}
		if (!json_object_object_get_ex(o, "events", &arr) ||
		    !json_object_is_type(arr, json_type_array) ||
		    json_get_int(o, "next", next, 1LL << 53, &next) == -1 ||
		    !json_object_object_get_ex(o, "job", &v)) {
			json_object_put(o);
			rc = endpoint_refused(&job_coll, "show", 0);
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
		endpoint_print_json(o);
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

int
cmd_job(int argc, char **argv)
{
	static const struct endpoint_verb verbs[] = {
	    {"list", 0, 1, job_list, NULL},
	    {"show", 1, 1, job_show, NULL},
	    {"cancel", 1, 0, NULL, "cancel asked"},
	};

	return endpoint_cmd(&job_coll, argc, argv, verbs, nitems(verbs),
	    "usage: cordon job list [--home DIR | --port N --token-file FILE] "
	    "[--json]\n"
	    "       cordon job show ID [--home DIR | ...] [--json]\n"
	    "       cordon job cancel ID [--home DIR | ...]\n"
	    "       (ID: ^[A-Za-z0-9_-]{1,80}$)\n");
}
