/*
 * Worktree runs (MC-2): the step machine.  The spawner, which already
 * spawns and owns the state dir, makes each checkout: a shared clone
 * beneath --state-dir/worktrees/ID/tree on the fresh branch cordon/ID,
 * git run argv-only through the one spawn helper with a built
 * environment, hooks and fsmonitor off, no system config.  git clones
 * the repository fd worktree_repo.c checked and holds (handed as
 * /proc/self/fd/3).  Each git is one step of a small machine run from
 * the event loop: its exit (aproc_reap hands it here) starts the next,
 * a deadline per step kills it and fails the worktree, so no git ever
 * blocks the spawner.  Every step runs under a Landlock ruleset made
 * from the run's plan (worktree_ll.c): it reads only what the agent
 * could, and writes only the worktree's own dir.  The agent gets tree/
 * as its only write root; the repository stays read-only (its objects
 * are read through the clone's alternates).  After the run the summary
 * is read through inspect.git, a bare repo of cordon's beside tree/, so
 * no config the agent could write is ever read by a git cordon runs.
 * Writes only beneath --state-dir/worktrees.
 *
 * Test hooks, honoured only when set in cordon's own environment:
 * CORDON_TEST_WORKTREE_DELAY_MS runs a sleep of that long as a step
 * before the clone, CORDON_TEST_WORKTREE_CHECKOUT_MS one between the
 * checks that follow the clone and the checkout (the window a writer of
 * the repository races), CORDON_TEST_WORKTREE_STEP_MS replaces each
 * step's deadline.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "cordon_limits.h"
#include "json.h"
#include "log.h"
#include "msg.h"
#include "schema.h"
#include "spawn_helper.h"
#include "spawner.h"
#include "util.h"
#include "worktree.h"
#include "worktree_int.h"

/* The steps, in order; WS_DIFF is the run's end. */
enum {
	WS_DELAY,
	WS_CLONE,
	WS_PAUSE,
	WS_CHECKOUT,
	WS_UNORIGIN,
	WS_HEAD,
	WS_INIT,
	WS_READY,
	WS_DIFF
};

/* Every git cordon runs gets this environment and nothing else. */
static const char *const wt_env_base[] = {
    WT_GIT_PATH,
    "HOME=/nonexistent",
    "LC_ALL=C",
    "GIT_CONFIG_NOSYSTEM=1",
    "GIT_TERMINAL_PROMPT=0",
    "GIT_OPTIONAL_LOCKS=0",
};

static LIST_HEAD(, wt) wt_live = LIST_HEAD_INITIALIZER(wt_live);

static void wt_advance(struct wt *, int ok);
static void wt_summary(struct wt *, int ok);

int
wt_join(char *out, size_t outsz, const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);

	out[0] = '\0';
	if (la + lb + lc >= outsz)
		return -1;
	memcpy(out, a, la);
	memcpy(out + la, b, lb);
	memcpy(out + la + lb, c, lc + 1);
	return 0;
}

/* A test hook's value: 1..600000 ms, or 0 when unset (or not a number). */
static long
wt_test_ms(const char *name)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (v == NULL || *v == '\0')
		return 0;
	n = strtol(v, &end, 10);
	if (*end != '\0' || n < 1 || n > 600000)
		return 0;
	log_warnx("worktree: test hook %s in use", name);
	return n;
}

/* The step is over (exited and its output read): go on from the loop. */
static void
wt_check(struct wt *w)
{
	const struct timeval now = {0, 0};

	if (w->w_exited && w->w_eof) {
		evtimer_del(w->w_ev_dl);
		evtimer_add(w->w_ev_next, &now);
	}
}

static void
wt_out_close(struct wt *w)
{
	aproc_close(&w->w_out, &w->w_ev_out);
	w->w_eof = 1;
}

static void
wt_out_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct wt *w = arg;
	char sink[512];
	ssize_t k;

	if (w->w_got + 1 < sizeof(w->w_buf))
		k = read(
		    fd, w->w_buf + w->w_got, sizeof(w->w_buf) - 1 - w->w_got);
	else
		k = read(fd, sink, sizeof(sink));
	if (k < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (k <= 0) {
		wt_out_close(w);
		wt_check(w);
		return;
	}
	if (w->w_got + 1 < sizeof(w->w_buf))
		w->w_got += (size_t)k;
}

/* The step's deadline: its group is killed, its reap ends the step. */
static void
wt_dl_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct wt *w = arg;

	if (w->w_pid > 0) {
		log_warnx("worktree %s: step %d: out of time; killed", w->w_id,
		    w->w_step);
		kill(-w->w_pid, SIGKILL);
	}
	w->w_timedout = 1;
	wt_out_close(w);
	wt_check(w);
}

static void
wt_next_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct wt *w = arg;

	w->w_buf[w->w_got] = '\0';
	wt_advance(w, !w->w_timedout && WIFEXITED(w->w_status) &&
			  WEXITSTATUS(w->w_status) == 0);
}

int
wt_reaped(pid_t pid, int status)
{
	struct wt *w;

	LIST_FOREACH (w, &wt_live, w_entry)
		if (w->w_pid == pid) {
			w->w_pid = -1;
			w->w_exited = 1;
			w->w_status = status;
			wt_check(w);
			return 1;
		}
	return 0;
}

int
wt_busy(const char *id)
{
	struct wt *w;

	LIST_FOREACH (w, &wt_live, w_entry)
		if (strcmp(w->w_id, id) == 0 && (w->w_running || w->w_pid > 0))
			return 1;
	return 0;
}

/* A step with no child: status at once, from the loop. */
static void
wt_skip(struct wt *w, int status)
{
	w->w_pid = -1;
	w->w_exited = w->w_eof = 1;
	w->w_status = status;
	w->w_timedout = 0;
	w->w_got = 0;
	wt_check(w);
}

/* envp: the fixed environment, the global config conf (NULL:
 * /dev/null) and the alternates alt (or none); bufs hold their text. */
static void
wt_env(const char **envp, char *confenv, size_t confsz, char *altenv,
    size_t altsz, const char *conf, const char *alt)
{
	size_t i;

	for (i = 0; i < nitems(wt_env_base); i++)
		envp[i] = wt_env_base[i];
	snprintf(confenv, confsz, "GIT_CONFIG_GLOBAL=%s",
	    conf != NULL ? conf : "/dev/null");
	envp[i++] = confenv;
	if (alt != NULL) {
		snprintf(
		    altenv, altsz, "GIT_ALTERNATE_OBJECT_DIRECTORIES=%s", alt);
		envp[i++] = altenv;
	}
	envp[i] = NULL;
}

/* The step's child started: its output read, its deadline set. */
static void
wt_watch(struct wt *w)
{
	long ms = wt_test_ms("CORDON_TEST_WORKTREE_STEP_MS");
	struct timeval tv;

	(void)set_nonblock(w->w_out, 1);
	if ((w->w_ev_out = event_new(sp.sp_d.d_base, w->w_out,
		 EV_READ | EV_PERSIST, wt_out_cb, w)) == NULL ||
	    event_add(w->w_ev_out, NULL) == -1) {
		kill(-w->w_pid, SIGKILL);
		wt_out_close(w);
		return; /* its reap fails the step */
	}
	ms = ms > 0 ? ms : LIM_WORKTREE_STEP_MS;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(w->w_ev_dl, &tv);
}

/*
 * A step's child could not have its Landlock rules: no-landlock when the
 * kernel lacks it; any other cause (a root gone since load) fails the
 * step as git's own failure would.  Never run unconfined either way.
 */
static void
wt_rules_failed(struct wt *w, const struct spawn_status *st)
{
	const char *step = sandbox_step_name(st->ss_step);

	log_warnx("worktree %s: %s: %s", w->w_id,
	    step != NULL ? step : "unknown step", errno_name(st->ss_errno));
	if (st->ss_errno == EOPNOTSUPP || st->ss_errno == ENOSYS) {
		w->w_code = "worktree-refused";
		w->w_fail = "no-landlock";
	}
}

/*
 * Start one step's child: prog (git, or the test hook's sleep) with the
 * fixed options for git, args, argv-only, stdin and stderr on
 * /dev/null, stdout kept (WT_OUT_MAX), the held repository as fd 3 when
 * asked, under the worktree's Landlock rules (MC-2: a child that cannot
 * have them never runs, and the worktree is refused, `no-landlock`).  alt: the
 * alternates of inspect.git, or NULL; conf: the global config file, or NULL
 * (/dev/null).  0, or -1 (the step then fails from the loop).
 */
static int
wt_spawn(struct wt *w, const char *prog, const char *conf, const char *alt,
    int repofd, const char *const *args)
{
	static const char *const fixed[] = {"-c", "core.hooksPath=/dev/null",
	    "-c", "core.fsmonitor=false", "-c", "protocol.allow=never", "-c",
	    "protocol.file.allow=always", "-c", "credential.helper=", "-c",
	    "core.sshCommand=false"};
	char bin[PATH_MAX], altenv[2 * PATH_MAX + 64], confenv[PATH_MAX + 32];
	const char *argv[48], *envp[nitems(wt_env_base) + 3];
	struct spawn_status st;
	struct spawn_fd fds[4];
	struct spawn_req sr;
	struct wt_ll ll;
	size_t n = 0, i;
	int p[2], nul, isgit = strcmp(prog, "git") == 0;

	w->w_pid = -1;
	w->w_exited = w->w_eof = w->w_timedout = 0;
	w->w_status = 0;
	w->w_got = 0;
	wt_env(
	    envp, confenv, sizeof(confenv), altenv, sizeof(altenv), conf, alt);
	if (agent_resolve_bin(prog, (char *const *)envp, bin, sizeof(bin)) ==
	    -1)
		return -1;
	argv[n++] = bin;
	for (i = 0; isgit && i < nitems(fixed); i++)
		argv[n++] = fixed[i];
	for (i = 0; args[i] != NULL && n < nitems(argv) - 1; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (wt_ll_rules(w, bin, &ll) == -1) {
		if (errno == EOPNOTSUPP) {
			w->w_code = "worktree-refused";
			w->w_fail = "no-landlock";
		}
		return -1;
	}
	if ((nul = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		return -1;
	if (pipe2(p, O_CLOEXEC) == -1) {
		close(nul);
		return -1;
	}
	fds[0] = (struct spawn_fd){nul, 0};
	fds[1] = (struct spawn_fd){p[1], 1};
	fds[2] = (struct spawn_fd){nul, 2};
	fds[3] = (struct spawn_fd){repofd, WT_REPO_FD};
	memset(&sr, 0, sizeof(sr));
	sr.sr_path = bin;
	sr.sr_argv = (char *const *)argv;
	sr.sr_envp = (char *const *)envp;
	sr.sr_fds = fds;
	sr.sr_nfds = repofd != -1 ? 4 : 3;
	sr.sr_setsid = 1;
	sr.sr_pdeathsig = SIGKILL;
	sr.sr_cwd = "/";
	sr.sr_set_umask = 1;
	sr.sr_umask = 077;
	sr.sr_hook = wt_ll_child;
	sr.sr_hook_arg = &ll;
	memset(&st, 0, sizeof(st));
	sr.sr_status = &st;
	w->w_pid = spawn_exec(&sr);
	close(nul);
	close(p[1]);
	if (w->w_pid == -1) {
		close(p[0]);
		if (st.ss_step >= SPAWN_STEP_HOOK_BASE)
			wt_rules_failed(w, &st);
		return -1;
	}
	w->w_out = p[0];
	wt_watch(w);
	return 0;
}

/* A git step; a child that could not start fails it from the loop. */
static void
wt_git(struct wt *w, const char *conf, const char *alt, int repofd,
    const char *const *args)
{
	if (wt_spawn(w, "git", conf, alt, repofd, args) == -1) {
		log_warn("worktree %s: git", w->w_id);
		wt_skip(w, 127 << 8);
	}
}

int
wt_oid(const char *s, char *out)
{
	size_t n = strspn(s, "0123456789abcdef");

	if ((n != 40 && n != 64) || (s[n] != '\0' && s[n] != '\n'))
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

/*
 * The branch's tip, read as a file beneath the worktree's dir (no link
 * followed: the agent owned tree/ until now); the base when it made no
 * commit on it.
 */
static void
wt_tip(const struct wt *w, char *tip)
{
	struct open_how how;
	char path[128], buf[WT_OID_MAX + 2];
	int dfd, fd;
	ssize_t n;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		      RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	snprintf(tip, WT_OID_MAX + 1, "%s", w->w_base);
	snprintf(path, sizeof(path), "tree/.git/refs/heads/%s", w->w_branch);
	if ((dfd = wt_dir_fd(w)) == -1)
		return;
	fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	close(dfd);
	if (fd == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	(void)wt_oid(buf, tip);
}

/* " 2 files changed, 3 insertions(+), 1 deletion(-)" */
static void
wt_shortstat(const char *s, long long v[3])
{
	static const char *const words[] = {"file", "insertion", "deletion"};
	const char *p = s;
	long long n;
	size_t i;
	char *end;

	v[0] = v[1] = v[2] = 0;
	while (*p != '\0') {
		while (*p == ' ' || *p == ',')
			p++;
		n = strtoll(p, &end, 10);
		if (end == p)
			break;
		p = end + (*end == ' ');
		for (i = 0; i < nitems(words); i++)
			if (strncmp(p, words[i], strlen(words[i])) == 0)
				v[i] = n;
		while (*p != '\0' && *p != ',')
			p++;
	}
}

void
wt_free(struct wt *w)
{
	if (w == NULL)
		return;
	if (w->w_pid > 0) /* a step still on: never left running */
		kill(-w->w_pid, SIGKILL);
	aproc_close(&w->w_out, &w->w_ev_out);
	if (w->w_ev_dl != NULL)
		event_free(w->w_ev_dl);
	if (w->w_ev_next != NULL)
		event_free(w->w_ev_next);
	if (w->w_repofd != -1)
		close(w->w_repofd);
	LIST_REMOVE(w, w_entry);
	roots_free(&w->w_plan.pl_roots);
	free(w);
}

void
wt_discard(struct wt *w)
{
	if (w == NULL)
		return;
	if (w->w_dir[0] != '\0' && sandbox_rmtree(w->w_dir) == -1 &&
	    errno != ENOENT)
		log_warn("worktree %s: removing", w->w_id);
	wt_free(w);
}

/* The worktree cannot be made: the run hears why (and frees w). */
static void
wt_fail(struct wt *w, const char *code, const char *reason)
{
	log_warnx("worktree %s: %s: %s", w->w_id, code, reason);
	w->w_ready(w->w_arg, code, reason);
}

/* After the test hook's pause: the clone of the held fd (only the fd
 * is read: see wt_repo_verify). */
static void
wt_clone(struct wt *w)
{
	char conf[PATH_MAX];
	const char *clone[] = {"clone", "--quiet", "--shared", "--no-checkout",
	    "--no-tags", "--template=", "--", WT_REPO_PROC, w->w_tree, NULL};

	if (wt_join(conf, sizeof(conf), w->w_dir, "/" WT_CLONE_CONF, "") == -1)
		conf[0] = '\0';
	wt_git(w, conf, NULL, w->w_repofd, clone);
}

/* A test hook's pause as a step (sleep), or none. */
static void
wt_pause(struct wt *w, long ms)
{
	char secs[32];
	const char *args[] = {secs, NULL};

	if (ms <= 0) {
		wt_skip(w, 0);
		return;
	}
	snprintf(secs, sizeof(secs), "%ld.%03ld", ms / 1000, ms % 1000);
	if (wt_spawn(w, "sleep", NULL, NULL, -1, args) == -1)
		wt_skip(w, 127 << 8);
}

/* After the clone: the repository checked again (then the test hook's
 * pause). */
static void
wt_verify(struct wt *w)
{
	const char *why;

	close(w->w_repofd);
	w->w_repofd = -1;
	if (wt_repo_verify(w, &why) == -1) {
		wt_fail(w,
		    strcmp(why, "repo-changed") == 0 ? "worktree-refused"
						     : "worktree-failed",
		    why);
		return;
	}
	wt_pause(w, wt_test_ms("CORDON_TEST_WORKTREE_CHECKOUT_MS"));
}

/* The fresh branch.  Its objects are read through the alternates, by
 * path: whatever they name by now, only within the plan's read roots. */
static void
wt_checkout(struct wt *w)
{
	const char *co[] = {
	    "-C", w->w_tree, "checkout", "--quiet", "-b", w->w_branch, NULL};

	wt_git(w, NULL, NULL, -1, co);
}

/* After the checkout: no origin (the fd's name means nothing to the
 * operator). */
static void
wt_unorigin(struct wt *w)
{
	const char *rm[] = {
	    "-C", w->w_tree, "remote", "remove", "origin", NULL};

	wt_git(w, NULL, NULL, -1, rm);
}

/* Then the base: the commit the branch starts from. */
static void
wt_head(struct wt *w)
{
	const char *head[] = {"-C", w->w_tree, "rev-parse", "--verify",
	    "--quiet", "HEAD^{commit}", NULL};

	wt_git(w, NULL, NULL, -1, head);
}

/* The base read: inspect.git, cordon's bare repo for the summary. */
static void
wt_inspect(struct wt *w)
{
	char inspect[PATH_MAX];
	const char *init[] = {
	    "init", "--quiet", "--bare", "--template=", inspect, NULL};

	if (wt_oid(w->w_buf, w->w_base) == -1) {
		wt_fail(w, "worktree-failed", "git-failed");
		return;
	}
	(void)wt_join(inspect, sizeof(inspect), w->w_dir, "/inspect.git", "");
	wt_git(w, NULL, NULL, -1, init);
}

/* Made: recorded, and the run goes on. */
static void
wt_made(struct wt *w)
{
	w->w_running = 1;
	wt_meta(w, NULL);
	wt_audit("worktree.create", w->w_id, w->w_agent);
	w->w_ready(w->w_arg, NULL, NULL);
}

/* The next step of making it, or of reading its result. */
static void
wt_advance(struct wt *w, int ok)
{
	/* What follows each step once it succeeded. */
	static void (*const next[])(struct wt *) = {
	    [WS_DELAY] = wt_clone,
	    [WS_CLONE] = wt_verify,
	    [WS_PAUSE] = wt_checkout,
	    [WS_CHECKOUT] = wt_unorigin,
	    [WS_UNORIGIN] = wt_head,
	    [WS_HEAD] = wt_inspect,
	    [WS_INIT] = wt_made,
	};
	int step = w->w_step++;

	if (!ok)
		log_warnx("worktree %s: step %d: %s %d", w->w_id, step,
		    WIFEXITED(w->w_status) ? "exit" : "signal",
		    WIFEXITED(w->w_status) ? WEXITSTATUS(w->w_status)
					   : WTERMSIG(w->w_status));
	if (step == WS_DIFF)
		wt_summary(w, ok);
	else if (!ok && w->w_fail != NULL)
		wt_fail(w, w->w_code, w->w_fail);
	else if (!ok)
		wt_fail(w, "worktree-failed",
		    w->w_timedout ? "git-timeout" : "git-failed");
	else if (step >= 0 && (size_t)step < nitems(next) && next[step] != NULL)
		next[step](w);
}

/* WT_DIR/run_id, fresh, and its paths: 0, or -1 (w_dir set once made). */
static int
wt_dirs(struct wt *w, const char *run_id)
{
	static const char conf[] = "[safe]\n\tdirectory = " WT_REPO_PROC
				   "/.git\n\tdirectory = " WT_REPO_PROC "\n";
	char dir[PATH_MAX];
	int sfd, wfd, dfd;

	if (wt_join(dir, sizeof(dir), sp.sp_state, "/" WT_DIR "/", run_id) ==
		-1 ||
	    wt_join(w->w_tree, sizeof(w->w_tree), dir, "/tree", "") == -1)
		return -1;
	/* Fixed-name components only, each made and held, never a link. */
	if ((sfd = open(sp.sp_state, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
		-1 ||
	    (wfd = roots_dir_make(sfd, WT_DIR)) == -1) {
		log_warn("worktree: %s/%s", sp.sp_state, WT_DIR);
		return -1;
	}
	if (mkdirat(wfd, run_id, 0700) == -1) { /* fresh, or refused */
		close(wfd);
		return -1;
	}
	memcpy(w->w_dir, dir, sizeof(dir));
	if ((dfd = roots_dir_make(wfd, run_id)) == -1)
		return -1;
	/* The clone's only config: git trusts the fd it is handed, which
	 * is the operator's, not the spawner user's. */
	if (atomic_write_at(dfd, WT_CLONE_CONF, conf, sizeof(conf) - 1, 0600,
		(uid_t)-1, (gid_t)-1) == -1) {
		close(dfd);
		return -1;
	}
	close(dfd);
	return 0;
}

struct wt *
wt_create(const struct agent *ag, const char *run_id, const char *repo,
    wt_ready_fn ready, void *arg, const char **code, const char **reason)
{
	struct event_base *base = sp.sp_d.d_base;
	struct wt *w;
	long delay = wt_test_ms("CORDON_TEST_WORKTREE_DELAY_MS");

	*code = "worktree-failed";
	*reason = "internal";
	if (sp.sp_state[0] == '\0' || (w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->w_repofd = w->w_out = -1;
	w->w_pid = -1;
	w->w_ready = ready;
	w->w_arg = arg;
	LIST_INSERT_HEAD(&wt_live, w, w_entry);
	if ((*reason = wt_repo_check(ag, w, repo)) != NULL) {
		*code = "worktree-refused";
		wt_free(w);
		return NULL;
	}
	*reason = "internal";
	snprintf(w->w_id, sizeof(w->w_id), "%s", run_id);
	snprintf(w->w_agent, sizeof(w->w_agent), "%s", ag->ag_mf.m_name);
	snprintf(w->w_repo, sizeof(w->w_repo), "%s", repo);
	snprintf(w->w_branch, sizeof(w->w_branch), WT_BRANCH_PFX "%s", run_id);
	if ((w->w_ev_dl = evtimer_new(base, wt_dl_cb, w)) == NULL ||
	    (w->w_ev_next = evtimer_new(base, wt_next_cb, w)) == NULL) {
		wt_free(w);
		return NULL;
	}
	if (wt_dirs(w, run_id) == -1 || wt_plan(ag, w) == -1) {
		wt_discard(w);
		return NULL;
	}
	/* The test hook's pause, a step like the others. */
	wt_pause(w, delay);
	return w;
}

/* The diff is read (or not): the summary, kept and handed on. */
static void
wt_summary(struct wt *w, int ok)
{
	struct json_object *o = json_object_new_object();
	long long v[3] = {0, 0, 0};

	if (ok)
		wt_shortstat(w->w_buf, v);
	json_object_object_add(o, "id", json_object_new_string(w->w_id));
	json_object_object_add(
	    o, "branch", json_object_new_string(w->w_branch));
	json_object_object_add(o, "path", json_object_new_string(w->w_tree));
	json_object_object_add(o, "base", json_object_new_string(w->w_base));
	json_object_object_add(o, "head", json_object_new_string(w->w_tip));
	json_object_object_add(o, "filesChanged", json_object_new_int64(v[0]));
	json_object_object_add(o, "insertions", json_object_new_int64(v[1]));
	json_object_object_add(o, "deletions", json_object_new_int64(v[2]));
	if (!ok)
		json_object_object_add(
		    o, "summaryError", json_object_new_boolean(1));
	wt_meta(w, o);
	w->w_done(w->w_arg, o);
}

void
wt_finish(struct wt *w, wt_done_fn done, void *arg)
{
	char inspect[PATH_MAX], alt[2 * PATH_MAX + 32];

	w->w_running = 0;
	w->w_done = done;
	w->w_arg = arg;
	w->w_step = WS_DIFF;
	wt_tip(w, w->w_tip);
	if (strcmp(w->w_tip, w->w_base) == 0) {
		wt_skip(w, 0); /* no commit: nothing changed */
		return;
	}
	/* Its alternates are the agent's: none but ours, or no summary. */
	if (wt_tree_contained(w) == -1) {
		log_warnx("worktree %s: its .git names another repository; "
			  "no summary",
		    w->w_id);
		wt_skip(w, 1 << 8);
		return;
	}
	(void)wt_join(
	    inspect, sizeof(inspect), "--git-dir=", w->w_dir, "/inspect.git");
	(void)wt_join(alt, sizeof(alt), w->w_tree, "/.git/objects:", w->w_repo);
	if (strlen(alt) + sizeof("/.git/objects") < sizeof(alt))
		strcat(alt, "/.git/objects");
	{
		const char *diff[] = {inspect, "diff", "--shortstat",
		    "--no-ext-diff", "--no-textconv", "--no-renames", w->w_base,
		    w->w_tip, NULL};

		wt_git(w, NULL, alt, -1, diff);
	}
}
