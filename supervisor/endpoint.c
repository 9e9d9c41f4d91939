/*
 * The API clients' endpoint (endpoint.h): the runtime dir's token and
 * port of a home, or a port and token file (cordon under systemd), and
 * the request every call to the API starts from.  Reads those files.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <json-c/json.h>

#include "cli.h"
#include "cordond.h"
#include "endpoint.h"
#include "json.h"
#include "sanitize.h"
#include "schema.h"
#include "util.h"

/*
 * --home DIR (or the default home): its runtime dir's token and port;
 * --port N --token-file FILE: cordon under systemd.  0, or -1 after
 * saying why (-2: nothing runs there).
 */
static int
endpoint_resolve(const char *cmd, const char *home, const char *port_s,
    const char *tokfile, struct endpoint *ep)
{
	struct cordon_config cf;
	char portbuf[16], *end, *slash, dir[PATH_MAX];
	long port;

	if ((port_s == NULL) != (tokfile == NULL) ||
	    (home != NULL && port_s != NULL)) {
		fprintf(stderr,
		    "cordon: %s: --port and --token-file go together, "
		    "instead of --home\n",
		    cmd);
		return -1;
	}
	if (tokfile != NULL) {
		if (snprintf(dir, sizeof(dir), "%s", tokfile) >=
			(int)sizeof(dir) ||
		    (slash = strrchr(dir, '/')) == NULL) {
			fprintf(
			    stderr, "cordon: %s: --token-file: a path\n", cmd);
			return -1;
		}
		*slash = '\0';
		if (home_read_private(dir[0] ? dir : "/", slash + 1,
			ep->ep_token, sizeof(ep->ep_token)) == -1) {
			fprintf(stderr,
			    "cordon: %s: cannot read the token file (a "
			    "regular file, mode 0600, in a directory only you "
			    "or root can write)\n",
			    cmd);
			return -1;
		}
		snprintf(portbuf, sizeof(portbuf), "%s", port_s);
	} else {
		memset(&cf, 0, sizeof(cf));
		if (home_resolve(&cf, home) == -1 || cf.cf_rundir[0] == '\0') {
			fprintf(stderr, "cordon: %s: cannot resolve the home\n",
			    cmd);
			return -1;
		}
		/* Run files without the home's lock held are stale. */
		switch (home_read_run(cf.cf_rundir, ep->ep_token,
		    sizeof(ep->ep_token), portbuf, sizeof(portbuf))) {
		case 0:
			break;
		case -2: /* PER-5 */
			fprintf(stderr,
			    "cordon: %s: %s is not private to you (it and "
			    "its files must be yours, mode 0700 and 0600); "
			    "its token stays unread\n",
			    cmd, cf.cf_rundir);
			return -1;
		default:
			fprintf(stderr, "cordon: %s: not running\n", cmd);
			return -2;
		}
	}
	errno = 0;
	port = strtol(portbuf, &end, 10);
	if (errno != 0 || *end != '\0' || port < 1 || port > 65535 ||
	    !hex_lower_n(ep->ep_token, 64)) {
		fprintf(stderr, "cordon: %s: bad port or token\n", cmd);
		return -1;
	}
	ep->ep_port = (int)port;
	return 0;
}

int
endpoint_args(
    const char *cmd, int argc, char **argv, int *json, struct endpoint *ep)
{
	static const struct option opts[] = {
	    {"home", required_argument, NULL, 'H'},
	    {"port", required_argument, NULL, 'p'},
	    {"token-file", required_argument, NULL, 't'},
	    {"json", no_argument, NULL, 'j'}, {NULL, 0, NULL, 0}};
	const char *home = NULL, *port_s = NULL, *tokfile = NULL;
	int ch;

	optind = 1;
	while ((ch = cli_getopt(cmd, argc, argv, "", opts)) != -1) {
		if (ch == 'H')
			home = optarg;
		else if (ch == 'p')
			port_s = optarg;
		else if (ch == 't')
			tokfile = optarg;
		else if (ch == 'j' && json != NULL)
			*json = 1;
		else
			return ch == 'j' ? cli_extra_arg(cmd, "--json") : 2;
	}
	if (optind != argc)
		return cli_extra_arg(cmd, argv[optind]);
	switch (endpoint_resolve(cmd, home, port_s, tokfile, ep)) {
	case 0:
		return 0;
	case -2:
		return 3;
	default:
		return 1;
	}
}

struct evhttp_request *
endpoint_request(const struct endpoint *ep,
    void (*cb)(struct evhttp_request *, void *), void *arg, const char *body)
{
	struct evhttp_request *req;
	struct evkeyvalq *h;
	char host[32], auth[160];

	if ((req = evhttp_request_new(cb, arg)) == NULL)
		return NULL;
	snprintf(host, sizeof(host), "127.0.0.1:%d", ep->ep_port);
	snprintf(auth, sizeof(auth), "Bearer %s", ep->ep_token);
	h = evhttp_request_get_output_headers(req);
	evhttp_add_header(h, "Host", host);
	evhttp_add_header(h, "Authorization", auth);
	explicit_bzero(auth, sizeof(auth));
	if (body != NULL) {
		evhttp_add_header(h, "Content-Type", "application/json");
		evbuffer_add(
		    evhttp_request_get_output_buffer(req), body, strlen(body));
	}
	return req;
}

struct ep_fetch {
	struct event_base *f_base;
	int f_status;
	struct json_object *f_obj;
};

/*
 * Every string of an answer through the one cleaner (SP-10), whole lines
 * kept: what a command prints (or hands on as JSON, whose encoder leaves
 * a C1 control as it is) holds no escape, control or invisible code
 * point the operator's terminal would act on or hide, whichever field
 * it came in.  Text the spawner cleaned comes out as it went in.
 */
static void
endpoint_clean(struct json_object *o, struct evbuffer *b)
{
	const char *s;
	size_t i, n;

	switch (json_object_get_type(o)) {
	case json_type_object: {
		json_object_object_foreach (o, k, v) {
			(void)k;
			endpoint_clean(v, b);
		}
		break;
	}
	case json_type_array:
		for (i = 0; i < json_object_array_length(o); i++)
			endpoint_clean(json_object_array_get_idx(o, i), b);
		break;
	case json_type_string:
		s = json_object_get_string(o);
		n = (size_t)json_object_get_string_len(o);
		evbuffer_drain(b, evbuffer_get_length(b));
		if (clean_buf(s, n, n + 1, b) == -1)
			json_object_set_string(o, "");
		else if (evbuffer_get_length(b) != n ||
			 memcmp(evbuffer_pullup(b, -1), s, n) != 0)
			json_object_set_string_len(o,
			    (const char *)evbuffer_pullup(b, -1),
			    (int)evbuffer_get_length(b));
		break;
	default:
		break;
	}
}

static void
endpoint_fetch_done(struct evhttp_request *req, void *arg)
{
	struct ep_fetch *f = arg;
	struct evbuffer *b;
	size_t len;

	event_base_loopexit(f->f_base, NULL);
	if (req == NULL ||
	    (f->f_status = evhttp_request_get_response_code(req)) != 200)
		return;
	b = evhttp_request_get_input_buffer(req);
	if ((len = evbuffer_get_length(b)) > ENDPOINT_BODY_MAX)
		return;
	f->f_obj =
	    json_parse_object((const char *)evbuffer_pullup(b, -1), len, 32);
	if (f->f_obj != NULL) {
		if ((b = evbuffer_new()) == NULL) {
			json_object_put(f->f_obj); /* never shown uncleaned */
			f->f_obj = NULL;
			return;
		}
		endpoint_clean(f->f_obj, b);
		evbuffer_free(b);
	}
}

struct json_object *
endpoint_fetch(struct event_base *base, const struct endpoint *ep,
    const char *uri, const char *post_body, int *status)
{
	struct evhttp_connection *conn;
	struct evhttp_request *req;
	struct ep_fetch f = {base, 0, NULL};

	if ((conn = evhttp_connection_base_new(
		 base, NULL, "127.0.0.1", (unsigned short)ep->ep_port)) == NULL)
		return NULL;
	evhttp_connection_set_timeout(conn, ENDPOINT_TIMEOUT_S);
	if ((req = endpoint_request(ep, endpoint_fetch_done, &f, post_body)) ==
	    NULL) {
		evhttp_connection_free(conn);
		return NULL;
	}
	if (evhttp_make_request(conn, req,
		post_body != NULL ? EVHTTP_REQ_POST : EVHTTP_REQ_GET, uri) == 0)
		event_base_dispatch(base);
	evhttp_connection_free(conn);
	*status = f.f_status;
	return f.f_obj;
}

/* ---- the API clients' collections */

int
endpoint_refused(const struct endpoint_coll *ec, const char *verb, int status)
{
	fprintf(stderr, "cordon: %s %s: %s\n", ec->ec_cmd, verb,
	    status == 404   ? ec->ec_gone
	    : status == 409 ? ec->ec_busy
	    : status == 0   ? "no answer"
			    : "refused");
	return 1;
}

int
endpoint_list(struct event_base *base, const struct endpoint *ep,
    const struct endpoint_coll *ec, int json, void (*row)(struct json_object *))
{
	struct json_object *o, *arr;
	char uri[64];
	size_t i, n;
	int st = 0;

	snprintf(uri, sizeof(uri), "/api/%s", ec->ec_coll);
	if ((o = endpoint_fetch(base, ep, uri, NULL, &st)) == NULL)
		return endpoint_refused(ec, "list", st);
	if (!json_object_object_get_ex(o, ec->ec_coll, &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		json_object_put(o);
		return endpoint_refused(ec, "list", 0);
	}
	if (json)
		endpoint_print_json(o);
	else {
		row(NULL);
		n = json_object_array_length(arr);
		for (i = 0; i < n; i++)
			row(json_object_array_get_idx(arr, i));
	}
	json_object_put(o);
	return 0;
}

/* An action on one item: POST {} to /api/COLL/ID/ACTION, said as
 * "cordon: CMD ID: done" (or refused, on stderr).  The exit status. */
static int
endpoint_act(struct event_base *base, const struct endpoint *ep,
    const struct endpoint_coll *ec, const char *id, const char *action,
    const char *done)
{
	struct json_object *o;
	char uri[160];
	int st = 0;

	snprintf(uri, sizeof(uri), "/api/%s/%s/%s", ec->ec_coll, id, action);
	if ((o = endpoint_fetch(base, ep, uri, "{}", &st)) == NULL)
		return endpoint_refused(ec, action, st);
	json_object_put(o);
	printf("cordon: %s %s: %s\n", ec->ec_cmd, id, done);
	return 0;
}

/* ---- what the API clients print */

void
endpoint_print_json(struct json_object *o)
{
	printf("%s\n",
	    json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* A member as text: a string, a number or a boolean; else "-". */
const char *
endpoint_text(struct json_object *o, const char *k)
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
const char *
endpoint_when(struct json_object *o, const char *k, char *buf, size_t bufsz)
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

int
endpoint_cmd(const struct endpoint_coll *ec, int argc, char **argv,
    const struct endpoint_verb *verbs, size_t n, const char *usage)
{
	const struct endpoint_verb *v = NULL;
	const char *id = NULL;
	size_t i;

	for (i = 0; argc >= 2 && i < n; i++)
		if (strcmp(argv[1], verbs[i].ev_name) == 0)
			v = &verbs[i];
	if (v == NULL)
		goto usage;
	if (v->ev_id) {
		if (argc < 3 || !schema_job_id_ok(argv[2]))
			goto usage;
		id = argv[2];
	}
	/* argv[0] for the options: the verb, or the id */
	argc -= v->ev_id ? 2 : 1;
	argv += v->ev_id ? 2 : 1;
	return endpoint_run(ec, argc, argv, v, id, usage);
usage:
	fputs(usage, stderr);
	return 2;
}

int
endpoint_run(const struct endpoint_coll *ec, int argc, char **argv,
    const struct endpoint_verb *v, const char *id, const char *usage)
{
	struct event_base *base;
	struct endpoint ep;
	int json = 0, rc;

	if ((rc = endpoint_args(ec->ec_cmd, argc, argv,
		 v->ev_json ? &json : NULL, &ep)) == 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (rc != 0)
		return rc;
	if ((base = event_base_new()) == NULL)
		return 1;
	rc = v->ev_fn != NULL
		 ? v->ev_fn(base, &ep, id, json)
		 : endpoint_act(base, &ep, ec, id, v->ev_name, v->ev_done);
	event_base_free(base);
	explicit_bzero(&ep, sizeof(ep));
	return rc;
}
