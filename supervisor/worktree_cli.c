/*
 * `cordon worktree list|remove`: worktree runs' checkouts (MC-2) of a
 * running cordon, through its API on loopback with the bearer token, as
 * `cordon job` asks it (endpoint.c):
 *
 *   list [--json]   GET /api/worktrees, one line per worktree;
 *   remove ID       POST /api/worktrees/ID/remove: its checkout and
 *                   branch are gone (fetch the branch first to keep it).
 *
 * An ID off ^[A-Za-z0-9_-]{1,80}$ is refused before any call.  Reads the
 * runtime or token files; writes nothing.
 */
#include <stdio.h>
#include <string.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "cordond.h"
#include "endpoint.h"
#include "util.h"

/* What the API refused, in words; its code is not echoed input. */
static int
wt_refused(const char *verb, int status)
{
	fprintf(stderr, "cordon: worktree %s: %s\n", verb,
	    status == 404   ? "no such worktree"
	    : status == 409 ? "its run is still on"
	    : status == 0   ? "no answer"
			    : "refused");
	return 1;
}

static int
wt_list(struct event_base *base, const struct endpoint *ep, const char *id,
    int json)
{
	struct json_object *o, *arr, *w, *res;
	char a[32];
	size_t i, n;
	int st = 0;

	if ((o = endpoint_fetch(base, ep, "/api/worktrees", NULL, &st)) == NULL)
		return wt_refused("list", st);
	if (!json_object_object_get_ex(o, "worktrees", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		json_object_put(o);
		return wt_refused("list", 0);
	}
	if (json)
		endpoint_print_json(o);
	else {
		printf("%-16s %-20s %-20s %-5s %s\n", "WORKTREE", "AGENT",
		    "CREATED", "FILES", "REPO");
		n = json_object_array_length(arr);
		for (i = 0; i < n; i++) {
			w = json_object_array_get_idx(arr, i);
			/* files changed: known once its run is over */
			if (!json_object_object_get_ex(w, "result", &res))
				res = NULL;
			printf("%-16s %-20s %-20s %-5s %s\n",
			    endpoint_text(w, "id"), endpoint_text(w, "agent"),
			    endpoint_when(w, "createdMs", a, sizeof(a)),
			    res != NULL ? endpoint_text(res, "filesChanged")
					: "-",
			    endpoint_text(w, "repo"));
		}
	}
	json_object_put(o);
	return 0;
}

static int
wt_remove(struct event_base *base, const struct endpoint *ep, const char *id,
    int json)
{
	struct json_object *o;
	char uri[160];
	int st = 0;

	snprintf(uri, sizeof(uri), "/api/worktrees/%s/remove", id);
	if ((o = endpoint_fetch(base, ep, uri, "{}", &st)) == NULL)
		return wt_refused("remove", st);
	json_object_put(o);
	printf("cordon: worktree %s: removed\n", id);
	return 0;
}

int
cmd_worktree(int argc, char **argv)
{
	static const struct endpoint_verb verbs[] = {
	    {"list", 0, 1, wt_list},
	    {"remove", 1, 0, wt_remove},
	};

	return endpoint_cmd("worktree", argc, argv, verbs, nitems(verbs),
	    "usage: cordon worktree list [--home DIR | --port N --token-file "
	    "FILE] [--json]\n"
	    "       cordon worktree remove ID [--home DIR | ...]\n"
	    "       (ID: ^[A-Za-z0-9_-]{1,80}$)\n");
}
