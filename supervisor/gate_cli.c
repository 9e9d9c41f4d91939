/*
 * `cordon gate` (SBX-6): the command gate's thin client, run by an agent
 * CLI as its pre-tool hook inside a cordon run.  It decides nothing: it
 * sends the call as one datagram on the run's gate channel
 * ($CORDON_GATE_FD) with a private reply socket and waits for the
 * spawner's verdict.  No channel, or any failure, is a deny.  Reads
 * stdin; touches no file.
 *
 *   hook form:  Claude Code PreToolUse JSON on stdin; allow exits 0 with
 *               hookSpecificOutput.permissionDecision "allow" on stdout,
 *               deny exits 2 with one line on stderr.
 *   plain form: cordon gate -- CMD ARGS...; allow exits 0, deny exits 1.
 */
#include <sys/socket.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cordond.h"
#include "ipc.h"
#include "json.h"
#include "msg.h"

#define GATE_STDIN_MAX (16 * 1024 * 1024) /* a Write carries its file */
#define GATE_SEND_MAX  (64 * 1024)	  /* the spawner's datagram bound */
#define GATE_REPLY_MAX 1024
#define GATE_WAIT_MS   (660 * 1000) /* the longest ask (600 s) + margin */
#define GATE_FD_MAXNUM 1023

enum gate_form { GF_HOOK, GF_PLAIN };

/* The file tools and the tool_input key naming their path. */
static const struct {
	const char *t_name;
	const char *t_key;
} gate_file_keys[] = {
    {"Read", "file_path"},
    {"Write", "file_path"},
    {"Edit", "file_path"},
    {"MultiEdit", "file_path"},
    {"NotebookEdit", "notebook_path"},
    {"Glob", "path"},
    {"Grep", "path"},
};

/*
 * The verdict as the caller's protocol wants it.  The reason is a fixed
 * phrase and a rule code: never the command or its arguments.
 */
static int
gate_out(enum gate_form form, int allow, const char *rule, const char *msg)
{
	struct json_object *o, *h;

	if (allow) {
		if (form == GF_HOOK) {
			o = json_object_new_object();
			h = json_object_new_object();
			json_object_object_add(h, "hookEventName",
			    json_object_new_string("PreToolUse"));
			json_object_object_add(h, "permissionDecision",
			    json_object_new_string("allow"));
			json_object_object_add(h, "permissionDecisionReason",
			    json_object_new_string("cordon gate: allowed"));
			json_object_object_add(o, "hookSpecificOutput", h);
			printf("%s\n", json_object_to_json_string_ext(
					   o, JSON_C_TO_STRING_PLAIN));
			json_object_put(o);
			if (fflush(stdout) == EOF)
				return 2; /* an unseen allow is no allow */
		}
		return 0;
	}
	fprintf(stderr, "cordon gate: %s (%s)\n", msg, rule);
	return form == GF_HOOK ? 2 : 1;
}

static int
gate_fail(enum gate_form form, const char *rule, const char *msg)
{
	return gate_out(form, 0, rule, msg);
}

/* $CORDON_GATE_FD: a decimal fd that is a SOCK_SEQPACKET socket. */
static int
gate_channel(void)
{
	const char *s = getenv("CORDON_GATE_FD");
	char *end;
	long v;
	int type;
	socklen_t len = sizeof(type);

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > GATE_FD_MAXNUM)
		return -1;
	if (getsockopt((int)v, SOL_SOCKET, SO_TYPE, &type, &len) == -1 ||
	    type != SOCK_SEQPACKET)
		return -1;
	return (int)v;
}

static char *
read_stdin(size_t *lenp)
{
	size_t len = 0, cap = 64 * 1024;
	char *buf, *nb;
	ssize_t n;

	if ((buf = malloc(cap)) == NULL)
		return NULL;
	for (;;) {
		if (len == cap) {
			if (cap > GATE_STDIN_MAX ||
			    (nb = realloc(buf, cap * 2)) == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(STDIN_FILENO, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			free(buf);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > GATE_STDIN_MAX) {
			free(buf);
			return NULL;
		}
	}
	*lenp = len;
	return buf;
}

static const char *
jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (o == NULL || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The PreToolUse call as the spawner's request, or a rule on failure. */
static const char *
gate_from_hook(struct json_object *req)
{
	struct json_object *in, *input;
	const char *ev, *tool, *cwd, *s;
	size_t len, i;
	char *buf;

	if ((buf = read_stdin(&len)) == NULL)
		return "bad-input";
	in = json_parse_object(buf, len, JSON_MAX_DEPTH);
	free(buf);
	if (in == NULL)
		return "bad-input";
	/* Only what we need is read: newer fields are not our concern. */
	ev = jstr(in, "hook_event_name");
	tool = jstr(in, "tool_name");
	if ((ev != NULL && strcmp(ev, "PreToolUse") != 0) || tool == NULL ||
	    !json_object_object_get_ex(in, "tool_input", &input) ||
	    !json_object_is_type(input, json_type_object)) {
		json_object_put(in);
		return "bad-input";
	}
	json_object_object_add(req, "tool", json_object_new_string(tool));
	if ((cwd = jstr(in, "cwd")) != NULL)
		json_object_object_add(req, "cwd", json_object_new_string(cwd));
	if (strcmp(tool, "Bash") == 0) {
		if ((s = jstr(input, "command")) == NULL) {
			json_object_put(in);
			return "bad-input";
		}
		json_object_object_add(req, "line", json_object_new_string(s));
	}
	for (i = 0; i < sizeof(gate_file_keys) / sizeof(gate_file_keys[0]); i++)
		if (strcmp(tool, gate_file_keys[i].t_name) == 0 &&
		    (s = jstr(input, gate_file_keys[i].t_key)) != NULL &&
		    s[0] != '\0')
			json_object_object_add(
			    req, "filePath", json_object_new_string(s));
	json_object_put(in);
	return NULL;
}

/* One datagram out with the reply socket, one verdict back. */
static int
gate_ask(enum gate_form form, int chan, struct json_object *req)
{
	static uint8_t buf[GATE_SEND_MAX];
	uint8_t rbuf[GATE_REPLY_MAX + 1];
	struct json_object *v;
	struct pollfd pfd;
	struct ipc_hdr h;
	const char *verdict, *rule, *msg;
	ssize_t n;
	int sv[2], rc;

	if ((n = ipc_dgram_encode(
		 MSG_GATE_CHECK, IPC_FLAG_FD, req, buf, sizeof(buf))) == -1)
		return gate_fail(form, "too-large", "the call is too large");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		return gate_fail(
		    form, "channel-failed", "the gate channel failed");
	if (ipc_sendmsg_fd(chan, buf, (size_t)n, sv[1]) != n) {
		close(sv[0]);
		close(sv[1]);
		return gate_fail(
		    form, "channel-failed", "the gate channel failed");
	}
	close(sv[1]);
	pfd.fd = sv[0];
	pfd.events = POLLIN;
	do {
		rc = poll(&pfd, 1, GATE_WAIT_MS);
	} while (rc == -1 && errno == EINTR);
	n = rc == 1 ? recv(sv[0], rbuf, sizeof(rbuf), 0) : -1;
	close(sv[0]);
	if (n <= 0 || n > GATE_REPLY_MAX)
		return gate_fail(form, "no-verdict", "no verdict from cordon");
	if ((v = ipc_dgram_decode(rbuf, (size_t)n, &h)) == NULL ||
	    h.type != MSG_GATE_VERDICT || h.flags != IPC_FLAG_REPLY ||
	    (verdict = json_get_str(v, "verdict", 8)) == NULL ||
	    (rule = json_get_str(v, "rule", 64)) == NULL ||
	    (msg = json_get_str(v, "message", 128)) == NULL ||
	    strspn(rule, "abcdefghijklmnopqrstuvwxyz0123456789.-") !=
		strlen(rule) ||
	    strspn(msg,
		"abcdefghijklmnopqrstuvwxyz"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,'-") != strlen(msg)) {
		json_object_put(v);
		return gate_fail(form, "no-verdict", "no verdict from cordon");
	}
	rc = gate_out(form, strcmp(verdict, "allow") == 0, rule, msg);
	json_object_put(v);
	return rc;
}

int
cmd_gate(int argc, char **argv)
{
	struct json_object *req, *arr;
	enum gate_form form = GF_HOOK;
	const char *why = NULL;
	char cwd[PATH_MAX];
	int chan, i, rc;

	if (argc >= 2 && strcmp(argv[1], "--") == 0) {
		form = GF_PLAIN;
		if (argc < 3) {
			fprintf(
			    stderr, "usage: cordon gate [-- CMD ARGS...]\n");
			return 2;
		}
	} else if (argc != 1) {
		fprintf(stderr, "usage: cordon gate [-- CMD ARGS...]\n");
		return 2;
	}
	/* Outside a cordon run there is nobody to ask: refuse. */
	if ((chan = gate_channel()) == -1)
		return gate_fail(form, "no-gate-channel",
		    "not inside a cordon run (no CORDON_GATE_FD)");
	req = json_object_new_object();
	if (form == GF_PLAIN) {
		json_object_object_add(
		    req, "tool", json_object_new_string("exec"));
		arr = json_object_new_array();
		for (i = 2; i < argc; i++)
			json_object_array_add(
			    arr, json_object_new_string(argv[i]));
		json_object_object_add(req, "argv", arr);
	} else
		why = gate_from_hook(req);
	if (why != NULL) {
		json_object_put(req);
		return gate_fail(form, why, "the hook input is not usable");
	}
	if (!json_object_object_get_ex(req, "cwd", NULL)) {
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			json_object_put(req);
			return gate_fail(
			    form, "no-cwd", "no working directory");
		}
		json_object_object_add(req, "cwd", json_object_new_string(cwd));
	}
	rc = gate_ask(form, chan, req);
	json_object_put(req);
	return rc;
}
