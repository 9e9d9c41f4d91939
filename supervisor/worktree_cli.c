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

static const struct endpoint_coll wt_coll = {
    "worktree", "worktrees", "no such worktree", "its run is still on"};

/* One line of `cordon worktree list`; NULL: its header. */
static void
wt_row(struct json_object *w)
{
	struct json_object *res;
	char a[32];

	if (w == NULL) {
		printf("%-16s %-20s %-20s %-5s %s\n", "WORKTREE", "AGENT",
		    "CREATED", "FILES", "REPO");
		return;
	}
	/* files changed: known once its run is over */
	if (!json_object_object_get_ex(w, "result", &res))
		res = NULL;
	printf("%-16s %-20s %-20s %-5s %s\n", endpoint_text(w, "id"),
	    endpoint_text(w, "agent"),
	    endpoint_when(w, "createdMs", a, sizeof(a)),
	    res != NULL ? endpoint_text(res, "filesChanged") : "-",
	    endpoint_text(w, "repo"));
}

static int
wt_list(struct event_base *base, const struct endpoint *ep, const char *id,
    int json)
{
	return endpoint_list(base, ep, &wt_coll, json, wt_row);
}

int
cmd_worktree(int argc, char **argv)
{
	static const struct endpoint_verb verbs[] = {
	    {"list", 0, 1, wt_list, NULL},
	    {"remove", 1, 0, NULL, "removed"},
	};

	return endpoint_cmd(&wt_coll, argc, argv, verbs, nitems(verbs),
	    "usage: cordon worktree list [--home DIR | --port N --token-file "
	    "FILE] [--json]\n"
	    "       cordon worktree remove ID [--home DIR | ...]\n"
	    "       (ID: ^[A-Za-z0-9_-]{1,80}$)\n");
}
