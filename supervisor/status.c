/*
 * The commands that talk to a running cordon over its own API on
 * loopback, with the bearer token of its runtime dir (--home) or, for
 * cordon under systemd, of a token file and port (--token-file, --port):
 *
 *   cordon status [--json]: /api/health and /api/agents, printed as each
 *     daemon's confinement (SU-2), the sandbox layers this host offers
 *     and those each agent gets (SBX-5), the egress layer and each proxy
 *     agent's allowlist (EG-1, EG-2), or as one JSON document;
 *   cordon login: a fresh one-time dashboard login URL
 *     (POST /api/login-code);
 *
 * and `cordon token FILE`, which makes the token file systemd hands the
 * broker.  Reads the runtime or token files; writes only `token`'s FILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <json-c/json.h>

#include "cli.h"
#include "cordond.h"
#include "endpoint.h"
#include "json.h"
#include "util.h"

static const char *
str_at(struct json_object *o, const char *k)
{
	struct json_object *v;

	if (o != NULL && json_object_object_get_ex(o, k, &v) &&
	    json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return "-";
}

static struct json_object *
obj_at(struct json_object *o, const char *k)
{
	struct json_object *v;

	return o != NULL && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

/* A number, boolean or string member as short text. */
static const char *
any_at(struct json_object *o, const char *k, char *buf, size_t bufsz)
{
	struct json_object *v = obj_at(o, k);

	if (v == NULL)
		return "-";
	switch (json_object_get_type(v)) {
	case json_type_boolean:
		return json_object_get_boolean(v) ? "yes" : "no";
	case json_type_int:
		snprintf(
		    buf, bufsz, "%lld", (long long)json_object_get_int64(v));
		return buf;
	case json_type_string:
		return json_object_get_string(v);
	default:
		return "-";
	}
}

static void
print_daemons(struct json_object *health)
{
	struct json_object *arr = obj_at(health, "daemons"), *d, *st, *host;
	char b[6][32];
	size_t i, n;

	printf("cordon %s: %s\n", str_at(health, "version"),
	    str_at(health, "status"));
	printf("%-8s %-3s %-8s %-8s %-6s %-16s %-3s %-7s %s\n", "daemon", "up",
	    "pid", "restarts", "uid", "capEff", "nnp", "seccomp", "landlock");
	n = arr != NULL && json_object_is_type(arr, json_type_array)
		? json_object_array_length(arr)
		: 0;
	for (i = 0; i < n; i++) {
		d = json_object_array_get_idx(arr, i);
		st = obj_at(d, "status");
		printf("%-8s %-3s %-8s %-8s %-6s %-16s %-3s %-7s %s\n",
		    str_at(d, "name"), any_at(d, "up", b[0], sizeof(b[0])),
		    any_at(d, "pid", b[1], sizeof(b[1])),
		    any_at(d, "restarts", b[2], sizeof(b[2])),
		    any_at(st, "uid", b[3], sizeof(b[3])), str_at(st, "capEff"),
		    any_at(st, "noNewPrivs", b[4], sizeof(b[4])),
		    any_at(st, "seccomp", b[5], sizeof(b[5])),
		    str_at(st, "landlock"));
		if ((host = obj_at(st, "sandboxHost")) != NULL)
			printf("host sandbox layers: landlock ABI %s, user "
			       "namespaces %s, seccomp %s, private tmp %s\n",
			    any_at(host, "landlockAbi", b[0], sizeof(b[0])),
			    any_at(host, "userns", b[1], sizeof(b[1])),
			    any_at(host, "seccomp", b[2], sizeof(b[2])),
			    any_at(host, "privateTmp", b[3], sizeof(b[3])));
		if ((host = obj_at(st, "pidsCgroup")) != NULL)
			printf("process bound (SP-7): %s\n",
			    str_at(host, "state"));
		if ((host = obj_at(st, "egress")) != NULL)
			printf("egress (EG-1): %s proxy runs, %s open "
			       "connections%s\n",
			    any_at(host, "runs", b[0], sizeof(b[0])),
			    any_at(host, "connections", b[1], sizeof(b[1])),
			    json_object_get_boolean(obj_at(host, "testEgress"))
				? ", TEST MODE (CORDON_TEST_EGRESS=1)"
				: "");
		if ((host = obj_at(st, "gate")) != NULL)
			printf("command gate (SBX-6): %s runs, %s approvals "
			       "held\n",
			    any_at(host, "runs", b[0], sizeof(b[0])),
			    any_at(host, "held", b[1], sizeof(b[1])));
	}
}

/* EG-2: a proxy agent's allowlist, comma-separated, or NULL. */
static const char *
allow_list(struct json_object *sb, char *buf, size_t bufsz)
{
	struct json_object *arr = obj_at(obj_at(sb, "egress"), "allow");
	size_t i, n, off = 0;
	int w;

	if (arr == NULL || !json_object_is_type(arr, json_type_array) ||
	    (n = json_object_array_length(arr)) == 0)
		return NULL;
	buf[0] = '\0';
	for (i = 0; i < n && off < bufsz; i++) {
		w = snprintf(buf + off, bufsz - off, "%s%s", i ? "," : "",
		    json_object_get_string(json_object_array_get_idx(arr, i)));
		if (w < 0)
			return NULL;
		off += (size_t)w;
	}
	return buf;
}

static void
print_agents(struct json_object *agents)
{
	struct json_object *arr = obj_at(agents, "agents"), *a, *sb, *layers;
	char b[32], lbuf[256], abuf[2048];
	const char *allow;
	size_t i, j, n, nl, off;

	n = arr != NULL && json_object_is_type(arr, json_type_array)
		? json_object_array_length(arr)
		: 0;
	printf("%-24s %-8s %-9s %-7s %s\n", "agent", "enforced", "isolation",
	    "network", "layers");
	for (i = 0; i < n; i++) {
		a = json_object_array_get_idx(arr, i);
		sb = obj_at(a, "sandbox");
		layers = obj_at(sb, "layers");
		lbuf[0] = '\0';
		nl = layers != NULL &&
			     json_object_is_type(layers, json_type_array)
			 ? json_object_array_length(layers)
			 : 0;
		for (j = 0, off = 0; j < nl && off < sizeof(lbuf); j++)
			off += (size_t)snprintf(lbuf + off, sizeof(lbuf) - off,
			    "%s%s", j ? "," : "",
			    json_object_get_string(
				json_object_array_get_idx(layers, j)));
		printf("%-24s %-8s %-9s %-7s %s%s%s\n", str_at(a, "name"),
		    any_at(sb, "enforced", b, sizeof(b)),
		    str_at(sb, "isolation"), str_at(sb, "network"),
		    nl ? lbuf : "-", obj_at(sb, "reason") ? "  # " : "",
		    obj_at(sb, "reason") ? str_at(sb, "reason") : "");
		if ((allow = allow_list(sb, abuf, sizeof(abuf))) != NULL)
			printf("%-24s allow %s\n", "", allow);
	}
}

static int
status_fn(struct event_base *base, const struct endpoint *ep, const char *id,
    int json)
{
	struct json_object *health, *agents, *doc;
	int st_h = 0, st_a = 0, rc = 0;

	health = endpoint_fetch(base, ep, "/api/health", NULL, &st_h);
	agents = endpoint_fetch(base, ep, "/api/agents", NULL, &st_a);
	if (health == NULL) {
		fprintf(stderr, "cordon: status: no answer (%d)\n", st_h);
		rc = 1;
	} else if (json) {
		/* One document: {ok, health, agents} (agents null if none). */
		doc = json_object_new_object();
		json_object_object_add(doc, "ok",
		    json_object_new_boolean(
			strcmp(str_at(health, "status"), "ok") == 0));
		json_object_object_add(doc, "health", json_object_get(health));
		json_object_object_add(doc, "agents", json_object_get(agents));
		printf("%s\n", json_object_to_json_string_ext(
				   doc, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(doc);
	} else {
		print_daemons(health);
		if (agents != NULL)
			print_agents(agents);
	}
	if (health != NULL && strcmp(str_at(health, "status"), "ok") != 0)
		rc = 1;
	json_object_put(health);
	json_object_put(agents);
	return rc;
}

int
cmd_status(int argc, char **argv)
{
	static const struct endpoint_coll ec = {.ec_cmd = "status"};
	static const struct endpoint_verb v = {
	    .ev_name = "status", .ev_json = 1, .ev_fn = status_fn};

	return endpoint_run(&ec, argc, argv, &v, NULL,
	    "usage: cordon status [--home DIR | --port N --token-file FILE] "
	    "[--json]\n");
}

static int
login_fn(struct event_base *base, const struct endpoint *ep, const char *id,
    int json)
{
	struct json_object *o;
	const char *code;
	int st = 0, rc = 1;

	o = endpoint_fetch(base, ep, "/api/login-code", "{}", &st);
	code = str_at(o, "code");
	if (hex_lower_n(code, 32)) {
		printf(
		    "cordon: dashboard http://127.0.0.1:%d/ui/login?code=%s\n",
		    ep->ep_port, code);
		printf("(one-time, valid for %s s)\n",
		    json_object_to_json_string(obj_at(o, "expiresInS")));
		rc = 0;
	} else
		fprintf(stderr, "cordon: login: no code (%d)\n", st);
	json_object_put(o);
	return rc;
}

int
cmd_login(int argc, char **argv)
{
	static const struct endpoint_coll ec = {.ec_cmd = "login"};
	static const struct endpoint_verb v = {
	    .ev_name = "login", .ev_fn = login_fn};

	return endpoint_run(&ec, argc, argv, &v, NULL,
	    "usage: cordon login [--home DIR | --port N --token-file FILE]\n");
}

/* cordon token FILE: a new bearer token, 0600, never over a file. */
int
cmd_token(int argc, char **argv)
{
	char tok[65], line[66];
	int fd, rc = 0;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: cordon token FILE\n");
		return 2;
	}
	if (random_hex(tok, sizeof(tok), 32) == -1) {
		fprintf(stderr, "cordon: token: no randomness\n");
		return 1;
	}
	snprintf(line, sizeof(line), "%s\n", tok);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1) {
		fprintf(stderr, "cordon: token: cannot create the file (%s)\n",
		    errno == EEXIST ? "it exists" : strerror(errno));
		rc = 1;
	} else if (write(fd, line, 65) != 65 || fsync(fd) == -1) {
		fprintf(stderr, "cordon: token: write failed\n");
		unlink(argv[1]);
		rc = 1;
	}
	if (fd != -1)
		close(fd);
	explicit_bzero(tok, sizeof(tok));
	explicit_bzero(line, sizeof(line));
	return rc;
}
