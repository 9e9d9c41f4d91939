/*
 * `cordon gate` (SBX-6): the command gate's thin client, run by an agent
 * CLI as its pre-tool hook inside a cordon run.  It decides nothing: it
 * sends the call as one datagram on the run's gate channel
 * ($CORDON_GATE_FD) with a private reply socket and waits for
 * cordon-gated's verdict.  A hook process of a real CLI no longer has that
 * fd (each closes its fds before a hook): it reaches the same channel
 * through the named pipes of its run's $CORDON_GATE (SBX-8, msg.h),
 * which only that run's mount namespace shows.  No channel, or any
 * failure, is a deny.  Reads stdin; opens only those pipes.
 *
 *   hook form:  a pre-tool hook's JSON on stdin (Claude Code, Codex or
 *               Gemini CLI, SBX-8; policy/hook.c reads it); the answer
 *               is the one that CLI expects, deny always exit 2 with one
 *               line on stderr.  A call that needs several checks (a
 *               patch of several files) is allowed only if each is.
 *   plain form: cordon gate -- CMD ARGS...; allow exits 0, deny exits 1.
 */
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/statvfs.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "charset.h"
#include "cordon_limits.h"
#include "cordond.h"
#include "hook.h"
#include "ipc.h"
#include "json.h"
#include "msg.h"
#include "util.h"

#define GATE_STDIN_MAX (16 * 1024 * 1024) /* a Write carries its file */
#define GATE_SEND_MAX  (64 * 1024)	  /* the spawner's datagram bound */
#define GATE_REPLY_MAX 1024
#define GATE_FD_MAXNUM 1023
#define GATE_OPEN_MS   5000 /* the spawner reopens N.in between calls */

/* SBX-8: when this call refuses if no verdict came (gate_guard_set). */
static int64_t gate_end;

/* The plain form, or the hook protocol of one CLI. */
struct gate_form {
	int gf_plain;
	enum hook_cli gf_cli;
};

/*
 * The verdict as the caller's protocol wants it.  The reason is a fixed
 * phrase and a rule code: never the command or its arguments.
 */
static int
gate_out(
    const struct gate_form *form, int allow, const char *rule, const char *msg)
{
	char out[HOOK_ANSWER_MAX], err[HOOK_ANSWER_MAX];
	int status;

	if (form->gf_plain) {
		if (!allow)
			fprintf(stderr, "cordon gate: %s (%s)\n", msg, rule);
		return allow ? 0 : 1;
	}
	if (hook_answer(form->gf_cli, allow, rule, msg, out, sizeof(out), err,
		sizeof(err), &status) == -1) {
		fprintf(stderr, "cordon gate: no verdict (internal)\n");
		return 2;
	}
	if (out[0] != '\0' &&
	    (fputs(out, stdout) == EOF || fflush(stdout) == EOF))
		return 2; /* an unseen allow is no allow */
	if (err[0] != '\0')
		fputs(err, stderr);
	return status;
}

static int
gate_fail(const struct gate_form *form, const char *rule, const char *msg)
{
	return gate_out(form, 0, rule, msg);
}

static volatile sig_atomic_t gate_refuse_status = 2;

/*
 * The backstops: whatever this process waits on, it refuses in time
 * (SIGALRM), and whatever signal reaches it, it refuses rather than dies
 * of it or stops, which Codex and Gemini CLI read as no verdict and run
 * the call, and every CLI runs once the stopped hook times out (SBX-8).
 * Only async-signal-safe calls.
 */
static void
gate_refuse_now(int sig)
{
	static const char late[] =
	    "cordon gate: no verdict in time (no-verdict)\n";
	static const char failed[] = "cordon gate: failed (internal)\n";
	const char *m = sig == SIGALRM ? late : failed;
	size_t n = sig == SIGALRM ? sizeof(late) - 1 : sizeof(failed) - 1;

	if (write(STDERR_FILENO, m, n) == -1) {
		/* unsaid, and refused all the same */
	}
	_exit(gate_refuse_status);
}

/*
 * What a signal does here: a stop from a terminal is ignored, one that
 * changes nothing by default (SIGCHLD, SIGCONT, SIGURG, SIGWINCH) is
 * left so, and every other one (a fault, an abort, SIGTERM, SIGPIPE,
 * SIGXCPU, a real-time one...) refuses.  SIGKILL and SIGSTOP cannot be
 * caught: threat-model.md says what they leave.
 */
static void
gate_signal_set(int sig, const struct sigaction *refuse, sigset_t *set)
{
	struct sigaction ign;

	switch (sig) {
	case SIGKILL:
	case SIGSTOP:
	case SIGCHLD:
	case SIGCONT:
	case SIGURG:
	case SIGWINCH:
		return;
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		(void)sigaction(sig, &ign, NULL);
		return;
	default:
		if (sigaction(sig, refuse, NULL) == 0)
			sigaddset(set, sig);
	}
}

/*
 * SBX-8: the call's deadline, before anything can wait.  The agent CLI
 * lets the call through if its hook times out, so every wait ends by
 * $CORDON_GATE_WAIT seconds (the spawner sets it from the agent's ask
 * bound: gate_answer_sec; at most GATE_ANSWER_MAX), and an alarm a
 * second later refuses whatever still waits.  Without a usable one (a
 * CLI that drops it from the hook's environment) the bound is the
 * shortest any agent has, so that no hook timeout the load check lets
 * through can end first.  A fault (a stack overflow included: an
 * alternate stack), an abort or any other signal that can be caught
 * refuses too.
 */
static void
gate_guard_set(const struct gate_form *form)
{
	static char altstack[64 * 1024];
	const char *s = getenv("CORDON_GATE_WAIT");
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
	struct sigaction sa;
	sigset_t set;
	long secs = GATE_ASK_TIMEOUT_MIN + GATE_ANSWER_MARGIN, v;
	char *end;
	int sig;

	if (s != NULL && *s >= '1' && *s <= '9') {
		errno = 0;
		v = strtol(s, &end, 10);
		if (errno == 0 && *end == '\0' && v <= GATE_ANSWER_MAX)
			secs = v;
	}
	gate_end = (int64_t)now_ms_mono() + secs * 1000;
	gate_refuse_status = form->gf_plain ? 1 : 2;
	(void)sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = gate_refuse_now;
	sa.sa_flags = SA_ONSTACK;
	sigfillset(&sa.sa_mask);
	sigemptyset(&set);
	for (sig = 1; sig < NSIG; sig++)
		gate_signal_set(sig, &sa, &set);
	(void)sigprocmask(SIG_UNBLOCK, &set, NULL);
	alarm((unsigned)secs + 1);
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

/*
 * SBX-8: the run's dir of named pipes, opened; -1 if $CORDON_GATE is
 * unset (no mount namespace, so no such dir) or the dir is not there,
 * -2 if $CORDON_GATE names anything but GATE_FIFO_DIR.  Only that fixed
 * dir is ever opened, and only as the read-only copy the spawner mounts
 * in each run: a CLI feature that lets an agent-written file set a
 * hook's environment cannot point the gate at pipes the agent serves,
 * nor can a dir of that name some local user made in a shared /tmp.
 */
static int
gate_fifo_dir(void)
{
	const char *s = getenv("CORDON_GATE");
	struct statvfs sv;
	int fd;

	if (s == NULL)
		return -1;
	if (strcmp(s, GATE_FIFO_DIR) != 0)
		return -2;
	if ((fd = open(GATE_FIFO_DIR,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if (fstatvfs(fd, &sv) == -1 || !(sv.f_flag & ST_RDONLY)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void
nap_ms(int ms)
{
	struct timespec ts = {0, (long)ms * 1000000L};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
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
			/* Too large, and read to its end all the same. */
			while ((n = read(STDIN_FILENO, buf, cap)) > 0 ||
			       (n == -1 && errno == EINTR))
				;
			free(buf);
			return NULL;
		}
	}
	*lenp = len;
	return buf;
}

/* The request for one check of a decoded hook call. */
static struct json_object *
gate_request(const struct hook_call *hc, const struct hook_check *ck)
{
	struct json_object *req = json_object_new_object();

	json_object_object_add(
	    req, "tool", json_object_new_string(hc->hk_tool));
	json_object_object_add(
	    req, "kind", json_object_new_string(hook_kind_name(ck->hc_kind)));
	if (hc->hk_cwd != NULL)
		json_object_object_add(
		    req, "cwd", json_object_new_string(hc->hk_cwd));
	if (ck->hc_line != NULL)
		json_object_object_add(
		    req, "line", json_object_new_string(ck->hc_line));
	if (ck->hc_path != NULL)
		json_object_object_add(
		    req, "filePath", json_object_new_string(ck->hc_path));
	return req;
}

/* A verdict: allowed, and else the rule and phrase that refused. */
struct gate_verdict {
	int gv_allow;
	char gv_rule[GATE_REPLY_MAX];
	char gv_msg[GATE_REPLY_MAX];
};

static void
gate_refused(struct gate_verdict *gv, const char *rule, const char *msg)
{
	gv->gv_allow = 0;
	snprintf(gv->gv_rule, sizeof(gv->gv_rule), "%s", rule);
	snprintf(gv->gv_msg, sizeof(gv->gv_msg), "%s", msg);
}

/*
 * A MSG_GATE_VERDICT datagram into gv: 1, or 0 when it is not one (or,
 * with nonce, not the answer to our call).
 */
static int
gate_verdict_take(
    const uint8_t *buf, size_t n, const char *nonce, struct gate_verdict *gv)
{
	struct json_object *v;
	struct ipc_hdr h;
	const char *verdict, *rule, *msg, *non;

	if ((v = ipc_dgram_decode(buf, n, &h)) == NULL ||
	    h.type != MSG_GATE_VERDICT || h.flags != IPC_FLAG_REPLY ||
	    (verdict = json_get_str(v, "verdict", 8)) == NULL ||
	    (rule = json_get_str(v, "rule", 64)) == NULL ||
	    (msg = json_get_str(v, "message", 128)) == NULL ||
	    !charset_shape(rule, strlen(rule), "a-z0-9.-", "a-z0-9.-", 0, 64) ||
	    !charset_shape(
		msg, strlen(msg), "a-zA-Z0-9 .,'-", "a-zA-Z0-9 .,'-", 0, 128) ||
	    (nonce != NULL && ((non = json_get_str(v, "nonce", 16)) == NULL ||
				  strcmp(non, nonce) != 0))) {
		json_object_put(v);
		return 0;
	}
	gate_refused(gv, rule, msg);
	gv->gv_allow = strcmp(verdict, "allow") == 0;
	json_object_put(v);
	return 1;
}

/*
 * A free slot: its N.out opened for reading and locked, N from start on,
 * until end (monotonic ms).  The fd with *slot set, or -1.
 */
static int
fifo_claim(int dir, int start, int64_t end, int *slot)
{
	char name[16];
	int ofd = -1, k;

	while (ofd == -1 && (int64_t)now_ms_mono() < end) {
		for (k = 0; k < GATE_FIFO_SLOTS && ofd == -1; k++) {
			snprintf(name, sizeof(name), "%d.out",
			    (start + k) % GATE_FIFO_SLOTS);
			ofd = openat(dir, name,
			    O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
			if (ofd != -1 && flock(ofd, LOCK_EX | LOCK_NB) == -1) {
				close(ofd);
				ofd = -1;
			}
		}
		if (ofd == -1)
			nap_ms(50); /* every slot busy: wait for one */
		else
			*slot = (start + k - 1) % GATE_FIFO_SLOTS;
	}
	return ofd;
}

/*
 * Answers read off ofd until end (monotonic ms): 1 once the one for
 * nonce is taken into gv, 0 when none came (the run's gate gone, or the
 * time out).
 */
static int
fifo_wait(int ofd, const char *nonce, int64_t end, struct gate_verdict *gv)
{
	uint8_t rbuf[4 * GATE_REPLY_MAX];
	size_t have = 0, flen;
	struct pollfd pfd;
	struct ipc_hdr h;
	int64_t left;
	ssize_t n;

	pfd.fd = ofd;
	pfd.events = POLLIN;
	while ((left = end - (int64_t)now_ms_mono()) > 0) {
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = read(ofd, rbuf + have, sizeof(rbuf) - have);
		if (n == 0)
			break; /* nobody holds N.out: the run's gate is gone */
		if (n == -1)
			continue;
		have += (size_t)n;
		/* Whole datagrams off the front: ours ends the wait. */
		while (have >= IPC_HDR_LEN &&
		       ipc_hdr_decode(rbuf, have, &h) == IPC_FRAME &&
		       h.len <= GATE_REPLY_MAX &&
		       have >= (flen = IPC_HDR_LEN + h.len)) {
			if (gate_verdict_take(rbuf, flen, nonce, gv))
				return 1;
			memmove(rbuf, rbuf + flen, have - flen);
			have -= flen;
		}
		if (have == sizeof(rbuf) ||
		    (have >= IPC_HDR_LEN &&
			(ipc_hdr_decode(rbuf, have, &h) != IPC_FRAME ||
			    h.len > GATE_REPLY_MAX)))
			have = 0; /* not answers: drop them */
	}
	return 0;
}

/*
 * SBX-8: one call through the run's named pipes.  Take a free slot (an
 * exclusive flock on its N.out, held till the answer), drop whatever an
 * earlier caller left unread there, write the request into N.in and
 * close it (its EOF ends the request), then read answers until ours.
 */
static void
gate_ask_fifo(int dir, struct json_object *req, struct gate_verdict *gv)
{
	static uint8_t buf[GATE_SEND_MAX];
	uint8_t rbuf[4 * GATE_REPLY_MAX], rnd[8];
	char nonce[17], name[16];
	int64_t end = gate_end, left;
	size_t i;
	ssize_t n;
	int ofd, ifd = -1, slot;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		gate_refused(gv, "channel-failed", "the gate channel failed");
		return;
	}
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(nonce + 2 * i, 3, "%02x", rnd[i]);
	json_object_object_add(req, "nonce", json_object_new_string(nonce));
	if ((n = ipc_dgram_encode(MSG_GATE_CHECK, 0, req, buf, sizeof(buf))) ==
	    -1) {
		gate_refused(gv, "too-large", "the call is too large");
		return;
	}
	if ((ofd = fifo_claim(
		 dir, (int)(rnd[0] % GATE_FIFO_SLOTS), end, &slot)) == -1) {
		gate_refused(gv, "no-verdict", "no verdict from cordon");
		return;
	}
	while (read(ofd, rbuf, sizeof(rbuf)) > 0)
		; /* an answer nobody waited for */
	snprintf(name, sizeof(name), "%d.in", slot);
	for (left = GATE_OPEN_MS; left > 0; left -= 20) {
		ifd = openat(
		    dir, name, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
		if (ifd != -1 || errno != ENXIO)
			break;
		nap_ms(20); /* between two calls: no reader for a moment */
	}
	if (ifd == -1 || fcntl(ifd, F_SETFL, 0) == -1 ||
	    write_full(ifd, buf, (size_t)n) == -1) {
		if (ifd != -1)
			close(ifd);
		close(ofd);
		gate_refused(gv, "channel-failed", "the gate channel failed");
		return;
	}
	close(ifd);
	if (!fifo_wait(ofd, nonce, end, gv))
		gate_refused(gv, "no-verdict", "no verdict from cordon");
	close(ofd);
}

/* One datagram out with the reply socket, one verdict back. */
static void
gate_ask(int chan, struct json_object *req, struct gate_verdict *gv)
{
	static uint8_t buf[GATE_SEND_MAX];
	uint8_t rbuf[GATE_REPLY_MAX + 1];
	struct pollfd pfd;
	int64_t left;
	ssize_t n;
	int sv[2], rc;

	if ((n = ipc_dgram_encode(
		 MSG_GATE_CHECK, IPC_FLAG_FD, req, buf, sizeof(buf))) == -1) {
		gate_refused(gv, "too-large", "the call is too large");
		return;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		gate_refused(gv, "channel-failed", "the gate channel failed");
		return;
	}
	if (ipc_sendmsg_fd(chan, buf, (size_t)n, sv[1]) != n) {
		close(sv[0]);
		close(sv[1]);
		gate_refused(gv, "channel-failed", "the gate channel failed");
		return;
	}
	close(sv[1]);
	pfd.fd = sv[0];
	pfd.events = POLLIN;
	do {
		left = gate_end - (int64_t)now_ms_mono();
		rc = left > 0 ? poll(&pfd, 1, (int)left) : 0;
	} while (rc == -1 && errno == EINTR);
	n = rc == 1 ? recv(sv[0], rbuf, sizeof(rbuf), 0) : -1;
	close(sv[0]);
	if (n <= 0 || n > GATE_REPLY_MAX ||
	    !gate_verdict_take(rbuf, (size_t)n, NULL, gv))
		gate_refused(gv, "no-verdict", "no verdict from cordon");
}

/*
 * By fd 3 where this process still has it, else by the run's pipes.  The
 * call carries this process's bound (monotonic ms), so that gated never
 * records a verdict for a call its caller has already refused (SBX-8).
 */
static void
gate_call(int chan, int dir, struct json_object *req, struct gate_verdict *gv)
{
	json_object_object_add(
	    req, "deadline", json_object_new_int64(gate_end));
	if (chan != -1)
		gate_ask(chan, req, gv);
	else
		gate_ask_fifo(dir, req, gv);
}

/* The hook input on stdin, decoded; NULL (refused) if it is not usable. */
static struct json_object *
gate_read_hook(struct hook_call *hc)
{
	struct json_object *in;
	size_t len;
	char *buf;

	if ((buf = read_stdin(&len)) == NULL)
		return NULL;
	in = json_parse_object(buf, len, JSON_MAX_DEPTH);
	free(buf);
	if (in != NULL && hook_decode(in, hc) == -1) {
		json_object_put(in);
		in = NULL;
	}
	return in;
}

int
cmd_gate(int argc, char **argv)
{
	static struct hook_call hc;
	struct gate_form form = {0, HOOK_CLAUDE};
	struct gate_verdict gv;
	struct json_object *in = NULL, *req, *arr;
	char cwd[PATH_MAX];
	size_t k;
	int chan, dir = -1, i;

	if (argc >= 2 && strcmp(argv[1], "--") == 0) {
		form.gf_plain = 1;
		if (argc < 3) {
			fprintf(
			    stderr, "usage: cordon gate [-- CMD ARGS...]\n");
			return 2;
		}
	} else if (argc != 1) {
		fprintf(stderr, "usage: cordon gate [-- CMD ARGS...]\n");
		return 2;
	}
	gate_guard_set(&form);
	/*
	 * The whole input first, whatever the answer: the CLI never meets
	 * a closed pipe while it writes the call (SBX-8).
	 */
	if (!form.gf_plain) {
		if ((in = gate_read_hook(&hc)) == NULL)
			return gate_fail(
			    &form, "bad-input", "the hook input is not usable");
		form.gf_cli = hc.hk_cli;
	}
	/* Outside a cordon run there is nobody to ask: refuse. */
	if ((dir = gate_fifo_dir()) == -2)
		return gate_fail(&form, "bad-gate-dir",
		    "CORDON_GATE is not the run's gate dir " GATE_FIFO_DIR
		    ", the only one cordon gate uses");
	if ((chan = gate_channel()) == -1 && dir == -1)
		return gate_fail(&form, "no-gate-channel",
		    getenv("CORDON_GATE_FD") != NULL ||
			    getenv("CORDON_GATE") != NULL
			? "the run's gate channel is not reachable from "
			  "this process"
			: "not inside a cordon run (no CORDON_GATE)");
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		json_object_put(in);
		return gate_fail(&form, "no-cwd", "no working directory");
	}
	if (form.gf_plain) {
		req = json_object_new_object();
		json_object_object_add(
		    req, "tool", json_object_new_string("exec"));
		json_object_object_add(
		    req, "kind", json_object_new_string("exec"));
		json_object_object_add(req, "cwd", json_object_new_string(cwd));
		arr = json_object_new_array();
		for (i = 2; i < argc; i++)
			json_object_array_add(
			    arr, json_object_new_string(argv[i]));
		json_object_object_add(req, "argv", arr);
		gate_call(chan, dir, req, &gv);
		json_object_put(req);
		return gate_out(&form, gv.gv_allow, gv.gv_rule, gv.gv_msg);
	}
	if (hc.hk_cwd == NULL)
		hc.hk_cwd = cwd;
	/* Every check must allow; the first refusal is the answer, and a
	 * call with no check at all is refused. */
	gate_refused(&gv, "bad-input", "the hook input is not usable");
	for (k = 0; k < hc.hk_nchecks; k++) {
		req = gate_request(&hc, &hc.hk_checks[k]);
		gate_call(chan, dir, req, &gv);
		json_object_put(req);
		if (!gv.gv_allow)
			break;
	}
	json_object_put(in);
	return gate_out(&form, gv.gv_allow, gv.gv_rule, gv.gv_msg);
}
