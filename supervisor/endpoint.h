/*
 * Where a running cordon's API answers and its bearer token, as the
 * commands that are clients of that API find them (endpoint.c): the
 * runtime dir of a home, or a port and token file under systemd; and
 * one request builder with the headers every such call carries.
 */
#ifndef CORDON_SUPERVISOR_ENDPOINT_H
#define CORDON_SUPERVISOR_ENDPOINT_H

#include <stddef.h>

struct evhttp_request;
struct event_base;
struct json_object;

#define ENDPOINT_TIMEOUT_S 5
#define ENDPOINT_BODY_MAX  (16 * 1024 * 1024)

struct endpoint {
	int ep_port;
	char ep_token[128];
};

/*
 * The options every API client shares: --home DIR | --port N
 * --token-file FILE, and --json where json is not NULL.  0 with *ep
 * filled, 2 on bad usage, 3 when no cordon runs in the home, 1 when
 * the endpoint cannot be resolved otherwise (said why on stderr).
 */
int endpoint_args(
    const char *cmd, int argc, char **argv, int *json, struct endpoint *ep);

/*
 * A request to ep with Host, Authorization and Accept set and, when
 * body is not NULL, a JSON body; NULL on allocation failure.  The
 * caller makes it with evhttp_make_request.
 */
struct evhttp_request *endpoint_request(const struct endpoint *ep,
    void (*cb)(struct evhttp_request *, void *), void *arg, const char *body);

/*
 * One call, waited for on base: a GET, or a POST of post_body.  The
 * answer's JSON object when the status is 200 (*status set either
 * way, 0 for no answer), else NULL.
 */
struct json_object *endpoint_fetch(struct event_base *base,
    const struct endpoint *ep, const char *uri, const char *post_body,
    int *status);

/*
 * The API clients' collections (cordon job, cordon worktree): the
 * command's name, the collection's (/api/COLL, the array member COLL
 * of its list) and what a 404 and a 409 mean, in words.
 */
struct endpoint_coll {
	const char *ec_cmd;
	const char *ec_coll;
	const char *ec_gone; /* 404 */
	const char *ec_busy; /* 409 */
};
/* What the API refused (status 0: no answer), in words on stderr; its
 * code is not echoed input.  The exit status, 1. */
int endpoint_refused(
    const struct endpoint_coll *, const char *verb, int status);
/* GET /api/COLL, its array COLL printed: the answer as one line of
 * JSON (json), else row(NULL) for the header and row(item) for each.
 * The exit status (refused: said on stderr). */
int endpoint_list(struct event_base *, const struct endpoint *,
    const struct endpoint_coll *, int json, void (*row)(struct json_object *));

/* The API clients' output (cordon job, cordon worktree): o as one line
 * of JSON; member k as text (a string, number or boolean, else "-");
 * member k, ms since the epoch, as UTC "YYYY-MM-DDTHH:MM:SSZ" (or "-"). */
void endpoint_print_json(struct json_object *o);
const char *endpoint_text(struct json_object *o, const char *k);
const char *endpoint_when(
    struct json_object *o, const char *k, char *buf, size_t bufsz);

/*
 * `cordon CMD VERB [ID] [options]` (cordon job, cordon worktree): the
 * verb found in verbs (n of them), its ID checked against the job id
 * pattern before any call, the endpoint options read, and the verb's
 * fn called on a fresh event base; a verb with no fn is an action on
 * the ID: POST {} to /api/COLL/ID/VERB, said as "cordon: CMD ID: DONE".
 * Its exit status; 2 after printing usage on bad usage.
 */
struct endpoint_verb {
	const char *ev_name;
	int ev_id;   /* takes an ID, ^[A-Za-z0-9_-]{1,80}$ */
	int ev_json; /* takes --json */
	int (*ev_fn)(struct event_base *, const struct endpoint *,
	    const char *id, int json);
	const char *ev_done; /* an action's (ev_fn NULL) word once done */
};
int endpoint_cmd(const struct endpoint_coll *, int argc, char **argv,
    const struct endpoint_verb *verbs, size_t n, const char *usage);
/* One verb v of ec's command with its ID: the endpoint options in argv
 * (argv[0] before them), then v on a fresh event base; as endpoint_cmd.
 * A command of one verb (cordon status) needs only ec_cmd. */
int endpoint_run(const struct endpoint_coll *ec, int argc, char **argv,
    const struct endpoint_verb *v, const char *id, const char *usage);

#endif
