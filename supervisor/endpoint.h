/*
 * Where a running cordon's API answers and its bearer token, as the
 * commands that are clients of that API find them (endpoint.c): the
 * runtime dir of a home, or a port and token file under systemd; and
 * one request builder with the headers every such call carries.
 */
#ifndef CORDON_SUPERVISOR_ENDPOINT_H
#define CORDON_SUPERVISOR_ENDPOINT_H

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

#endif
