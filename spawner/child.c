/*
 * Agent children for runs, actions and probes: the built env (SP-4), the
 * binary resolved on the built PATH (SP-1), the one spawn helper with a
 * new session, umask 077, rlimits and a parent-death signal (SP-6, SP-7),
 * the per-run sandbox (SBX-1 ... SBX-5, sandbox/sandbox_*.c) with its
 * failures named, seccomp notifications answered and named, deadlines
 * and process-group kills with a bounded wait (SP-8, SP-17); each run in
 * its own pids cgroup when cordond delegated one (SP-7, child_cg.c).
 * The seccomp listener's side is child_seccomp.c's.  A start is a flat
 * list of steps (aproc_start) over one struct aproc_boot.
 * Touches only the pipes it makes, the binaries it resolves, (through
 * sandbox_plan.c) each run's private tmp and its run.N group beneath the
 * delegated cgroup.
 */
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <seccomp.h>

#include "cgroup.h"
#include "env.h"
#include "hookenv.h"
#include "hookproj.h"
#include "log.h"
#include "spawn_helper.h"
#include "spawner.h"
#include "util.h"
#include "worktree.h"

extern char **environ;

int
agent_env(const struct agent *ag, const struct secret_set *ss, char ***envp,
    const char **cwd, const char **errcode)
{
	const struct manifest *mf = &ag->ag_mf;
	const char *home = ag->ag_sb.pl_roots.r_home, *op = getenv("HOME");

	/* SP-6: the manifest's workdir, else the operator's home. */
	if (mf->m_cwd != NULL)
		*cwd = mf->m_cwd;
	else if (op != NULL && op[0] == '/')
		*cwd = op;
	else
		*cwd = "/";
	if (env_build((const char *const *)environ, mf, *cwd,
		(const char *const *)ss->ss_names,
		(const char *const *)ss->ss_values, ss->ss_n, envp,
		errcode) == -1)
		return -1;
	/* SBX-9: HOME and each CLI's own dir are the agent's home. */
	if (home != NULL && env_home(envp, mf, home) == -1) {
		*errcode = "out-of-memory";
		return -1;
	}
	/* SBX-8: a .env Gemini CLI loads cannot set what its hook runs. */
	if (agent_cli_mf(mf) == AGENT_CLI_GEMINI &&
	    env_pin(envp, hookenv_pinned) == -1) {
		*errcode = "out-of-memory";
		return -1;
	}
	return 0;
}

void
aproc_spec_agent(struct aproc_spec *as, const struct agent *ag,
    const char *path, char **argv, char **envp, const char *cwd)
{
	memset(as, 0, sizeof(*as));
	as->as_path = path;
	as->as_argv = argv;
	as->as_envp = envp;
	as->as_cwd = cwd;
	as->as_limits = &ag->ag_mf.m_limits;
	as->as_sandbox = &ag->ag_sb; /* SBX-1: every child of an agent */
	as->as_agent = ag->ag_mf.m_name;
}

static void aproc_check(struct aproc *);

void
aproc_close(int *fd, struct event **ev)
{
	if (*ev != NULL) {
		event_free(*ev);
		*ev = NULL;
	}
	if (*fd != -1) {
		close(*fd);
		*fd = -1;
	}
}

static void
aproc_read(struct aproc *ap, int which)
{
	static char buf[SPAWNER_READ_CHUNK];
	int *fd = which ? &ap->ap_err : &ap->ap_out;
	struct event **ev = which ? &ap->ap_ev_err : &ap->ap_ev_out;
	ssize_t n;

	n = read(*fd, buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		aproc_close(fd, ev);
		aproc_check(ap);
		return;
	}
	if (which)
		ap->ap_ops->ao_err(ap, buf, (size_t)n);
	else
		ap->ap_ops->ao_out(ap, buf, (size_t)n);
	explicit_bzero(buf, (size_t)n); /* raw output may echo a secret */
}

static void
aproc_out_cb(evutil_socket_t fd, short ev, void *arg)
{
	aproc_read(arg, 0);
}

static void
aproc_err_cb(evutil_socket_t fd, short ev, void *arg)
{
	aproc_read(arg, 1);
}

static void
aproc_in_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct aproc *ap = arg;
	ssize_t n;

	n = write(ap->ap_in, ap->ap_stdin + ap->ap_stdin_off,
	    ap->ap_stdin_len - ap->ap_stdin_off);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		ap->ap_stdin_off += (size_t)n;
	/* Done, or the child will not read (EPIPE): close stdin. */
	if (n <= 0 || ap->ap_stdin_off == ap->ap_stdin_len)
		aproc_close(&ap->ap_in, &ap->ap_ev_in);
}

/*
 * SIGKILL goes to the run's process group: with cordon-init as pid 1,
 * its death ends every process of the namespace.  Any other signal goes
 * to cordon-init alone when there is one, which passes it on to every
 * process of the namespace once (a group signal would reach the agent
 * twice: from us and from the init); without one, to the group.
 */
static void
aproc_signal(struct aproc *ap, int sig)
{
	pid_t to =
	    ap->ap_initst != -1 && sig != SIGKILL ? ap->ap_pid : -ap->ap_pid;

	if (ap->ap_pid > 0 && kill(to, sig) == -1 && errno != ESRCH)
		log_warn("kill group %d", (int)ap->ap_pid);
}

static void
aproc_finish_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct aproc *ap = arg;

	ap->ap_ops->ao_done(ap);
}

/* The child is over for us: its group killed, its fds and timers gone. */
static void
aproc_detach(struct aproc *ap)
{
	ap->ap_done = 1;
	ap->ap_held = 0;
	/* SP-17: nothing of the run's group outlives it. */
	aproc_signal(ap, SIGKILL);
	/* SP-7: nor what left the group (setsid) but not the cgroup. */
	aproc_cgroup_end(ap);
	aproc_close(&ap->ap_out, &ap->ap_ev_out);
	aproc_close(&ap->ap_err, &ap->ap_ev_err);
	aproc_close(&ap->ap_in, &ap->ap_ev_in);
	aproc_close(&ap->ap_notify, &ap->ap_ev_notify);
	if (ap->ap_deadline != NULL)
		event_del(ap->ap_deadline);
	if (ap->ap_grace != NULL)
		event_del(ap->ap_grace);
	TAILQ_REMOVE(&sp.sp_procs, ap, ap_entry);
}

static void
aproc_finish(struct aproc *ap)
{
	if (ap->ap_done)
		return;
	aproc_detach(ap);
	if (ap->ap_end_ms == 0)
		ap->ap_end_ms = now_ms_mono();
	/* The owner may free itself: run it from the loop, not from here. */
	event_active(ap->ap_finish, EV_TIMEOUT, 0);
}

/*
 * AU-6: a held child its owner gives up (or whose go failed): killed and
 * reaped here, before its agent was ever forked, and detached without
 * ao_done.  The owner then frees it (aproc_release: tmp, pids group).
 */
static void
aproc_drop(struct aproc *ap, int reaped)
{
	int st;

	if (ap->ap_done)
		return;
	/* SP-17's bound: a held init blocks in read and dies at once; one
	 * that does not is left to aproc_reap. */
	if (!reaped && !ap->ap_exited) {
		aproc_signal(ap, SIGKILL);
		if (reap_within(ap->ap_pid, &st, LIM_REAP_GRACE_MS) == 0)
			log_warnx("a dropped child has not exited; it is "
				  "reaped when it goes");
		ap->ap_exited = 1;
	}
	aproc_detach(ap);
}

static void
aproc_arm_grace(struct aproc *ap, long ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

	evtimer_add(ap->ap_grace, &tv);
}

/* SIGKILL to the group, and a bound on the child's reaping after it. */
static void
aproc_sigkill(struct aproc *ap)
{
	aproc_signal(ap, SIGKILL);
	ap->ap_killstage = 2;
	aproc_arm_grace(ap, LIM_REAP_GRACE_MS);
}

static void
aproc_grace_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct aproc *ap = arg;

	if (ap->ap_killstage < 2)
		aproc_sigkill(ap);
	else
		ap->ap_killstage = 3;
	aproc_check(ap);
}

static void
aproc_check(struct aproc *ap)
{
	if (ap->ap_done)
		return;
	if (!ap->ap_exited) {
		/*
		 * SP-17: killed, yet not reaped in time: the run ends without
		 * its child, which aproc_reap takes whenever it goes.
		 */
		if (ap->ap_killstage == 3) {
			log_warnx("agent %s: a killed run's process has not "
				  "exited; the run ends without it",
			    ap->ap_agent != NULL ? ap->ap_agent : "?");
			aproc_finish(ap);
		}
		return;
	}
	if (ap->ap_out == -1 && ap->ap_err == -1) {
		aproc_finish(ap);
		return;
	}
	/* Unread output of a paused run is not a descendant's doing. */
	if (ap->ap_paused && ap->ap_killstage < 2)
		return;
	/* Exited, but a descendant holds a pipe: end the group (SP-17). */
	if (ap->ap_killstage == 0) {
		aproc_signal(ap, SIGTERM);
		ap->ap_killstage = 1;
		aproc_arm_grace(ap, LIM_KILL_GRACE_MS);
	} else if (ap->ap_killstage >= 2)
		aproc_finish(ap); /* whatever still holds the pipe is lost */
}

static void
aproc_deadline_cb(evutil_socket_t fd, short ev, void *arg)
{
	aproc_stop(arg, AP_END_TIMEOUT, LIM_KILL_GRACE_MS);
}

static void
aproc_arm_deadline(struct aproc *ap)
{
	struct timeval tv = {
	    ap->ap_timeout_ms / 1000, (ap->ap_timeout_ms % 1000) * 1000};

	if (ap->ap_timeout_ms > 0)
		evtimer_add(ap->ap_deadline, &tv);
}

void
aproc_stop(struct aproc *ap, enum aproc_end why, long grace_ms)
{
	if (ap->ap_done)
		return;
	if (ap->ap_end == AP_END_NONE)
		ap->ap_end = why;
	if (ap->ap_killstage == 0) {
		aproc_signal(ap, SIGTERM);
		ap->ap_killstage = 1;
		aproc_arm_grace(ap, grace_ms);
	}
	aproc_resume(ap); /* drain what is left; nobody waits for it */
}

void
aproc_kill(struct aproc *ap, enum aproc_end why)
{
	if (ap->ap_done)
		return;
	if (ap->ap_end == AP_END_NONE)
		ap->ap_end = why;
	if (ap->ap_killstage < 2)
		aproc_sigkill(ap);
	aproc_check(ap);
}

void
aproc_kill_all(void)
{
	struct aproc *ap, *next;

	/* aproc_kill may finish (and unlink) the one in hand. */
	for (ap = TAILQ_FIRST(&sp.sp_procs); ap != NULL; ap = next) {
		next = TAILQ_NEXT(ap, ap_entry);
		aproc_kill(ap, AP_END_NONE);
	}
}

/*
 * Flow control: while paused the child blocks on its full pipe, so a
 * fast agent cannot grow our buffers faster than the broker relays.
 */
void
aproc_pause(struct aproc *ap)
{
	if (ap->ap_done || ap->ap_ev_out == NULL || ap->ap_paused)
		return;
	event_del(ap->ap_ev_out);
	ap->ap_paused = 1;
}

void
aproc_resume(struct aproc *ap)
{
	if (ap->ap_done || !ap->ap_paused)
		return;
	ap->ap_paused = 0;
	if (ap->ap_ev_out != NULL)
		event_add(ap->ap_ev_out, NULL);
	aproc_check(ap);
}

static struct aproc *
aproc_by_pid(pid_t pid)
{
	struct aproc *ap;

	TAILQ_FOREACH (ap, &sp.sp_procs, ap_entry)
		if (ap->ap_pid == pid)
			return ap;
	return NULL;
}

/*
 * cordon-init exited: the agent's own wait status is what it wrote
 * before (a kill by seccomp named as far as it can be: the agent is
 * reaped by then); none if the init itself was killed, whose own status
 * then stands (killed by SIGKILL).
 */
static void
aproc_init_status(struct aproc *ap, int *st)
{
	int v;

	if (ap->ap_initst == -1)
		return;
	if (read(ap->ap_initst, &v, sizeof(v)) == (ssize_t)sizeof(v)) {
		*st = v;
		if (WIFSIGNALED(v) && WTERMSIG(v) == SIGSYS &&
		    ap->ap_killed_by[0] == '\0') {
			aproc_name_syscall(ap, SCMP_ARCH_NATIVE, -1);
			log_warnx("agent %s: killed by %s",
			    ap->ap_agent != NULL ? ap->ap_agent : "?",
			    ap->ap_killed_by);
		}
	}
	close(ap->ap_initst);
	ap->ap_initst = -1;
}

void
aproc_reap(void)
{
	struct aproc *ap;
	siginfo_t si;
	pid_t pid;
	int st;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1 ||
		    si.si_pid == 0)
			break;
		pid = si.si_pid;
		ap = aproc_by_pid(pid);
		if (ap != NULL && si.si_code == CLD_KILLED &&
		    si.si_status == SIGSYS && ap->ap_killed_by[0] == '\0') {
			aproc_sigsys(ap, pid);
			log_warnx("agent %s: killed by %s",
			    ap->ap_agent != NULL ? ap->ap_agent : "?",
			    ap->ap_killed_by);
		}
		if (waitpid(pid, &st, WNOHANG) <= 0)
			break;
		if (ap == NULL) { /* MC-2: a worktree's git step, or none */
			(void)wt_reaped(pid, st);
			continue;
		}
		aproc_init_status(ap, &st);
		ap->ap_exited = 1;
		ap->ap_status = st;
		ap->ap_end_ms = now_ms_mono();
		aproc_check(ap);
	}
}

int
aproc_exit_code(const struct aproc *ap)
{
	if (ap->ap_exited && WIFEXITED(ap->ap_status))
		return WEXITSTATUS(ap->ap_status);
	return -1;
}

/* Free what aproc_start allocated; after ao_done, or after a failed start. */
void
aproc_release(struct aproc *ap)
{
	if (ap->ap_held)
		aproc_drop(ap, 0); /* AU-6: never released: never forked */
	if (ap->ap_deadline != NULL)
		event_free(ap->ap_deadline);
	if (ap->ap_grace != NULL)
		event_free(ap->ap_grace);
	if (ap->ap_finish != NULL)
		event_free(ap->ap_finish);
	ap->ap_deadline = ap->ap_grace = ap->ap_finish = NULL;
	free(ap->ap_stdin);
	ap->ap_stdin = NULL;
	/* An owner's zeroed aproc that never started holds no fd (not 0). */
	if (ap->ap_inited) {
		aproc_close(&ap->ap_notify, &ap->ap_ev_notify);
		if (ap->ap_initst != -1)
			close(ap->ap_initst);
		if (ap->ap_gatedir != -1)
			close(ap->ap_gatedir);
		if (ap->ap_spawnfd != -1)
			close(ap->ap_spawnfd);
		ap->ap_initst = ap->ap_gatedir = ap->ap_spawnfd = -1;
		egress_run_close(ap);
	}
	aproc_cgroup_end(ap);
	if (ap->ap_sbx != NULL) {
		sandbox_run_end(ap->ap_sbx); /* removes the private tmp */
		free(ap->ap_sbx);
		ap->ap_sbx = NULL;
	}
}

static int
pipe_pair(int p[2])
{
	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	return 0;
}

/* The sandbox failed before execve: say where on cordon's side (SBX-1). */
static void
aproc_start_failed(struct aproc *ap, const struct spawn_status *st)
{
	const char *step = sandbox_step_name(st->ss_step);

	ap->ap_fail_step = st->ss_step;
	ap->ap_fail_errno = st->ss_errno;
	/* SP-12: which layer refused, for the API and the log alike. */
	snprintf(ap->ap_reason, sizeof(ap->ap_reason), "%s%s: %s",
	    st->ss_step >= SPAWN_STEP_HOOK_BASE ? "sandbox: " : "spawn: ",
	    step != NULL ? step : "unknown step", errno_name(st->ss_errno));
	log_warnx("agent %s: %s", ap->ap_agent != NULL ? ap->ap_agent : "?",
	    ap->ap_reason);
}

/* What one start holds between its steps; an fd handed on is -1 here. */
struct aproc_boot {
	struct spawn_rlimit ab_rl[SBX_RLIMITS_MAX];
	struct spawn_fd ab_fds[8];
	struct spawn_status ab_sst;
	struct spawn_req ab_req;
	size_t ab_nrl, ab_nfd;
	int ab_po[2], ab_pe[2], ab_pi[2]; /* stdout, stderr, stdin */
	int ab_ns[2];			  /* the child's fds come back here */
	int ab_xs[2];			  /* cordon-init's status (SP-17) */
	int ab_cgp;			  /* the run group's cgroup.procs */
};

static void
aproc_boot_fd(struct aproc_boot *ab, int src, int dst)
{
	ab->ab_fds[ab->ab_nfd].sf_src = src;
	ab->ab_fds[ab->ab_nfd++].sf_dst = dst;
}

static void
aproc_boot_close(struct aproc_boot *ab)
{
	int *fd[] = {&ab->ab_po[0], &ab->ab_po[1], &ab->ab_pe[0], &ab->ab_pe[1],
	    &ab->ab_pi[0], &ab->ab_pi[1], &ab->ab_ns[0], &ab->ab_ns[1],
	    &ab->ab_xs[0], &ab->ab_xs[1], &ab->ab_cgp};
	size_t i;

	for (i = 0; i < nitems(fd); i++)
		if (*fd[i] != -1) {
			close(*fd[i]);
			*fd[i] = -1;
		}
}

/* The aproc itself: its callbacks and timers.  0, or -1. */
static int
aproc_init(struct aproc *ap, const struct aproc_spec *as,
    const struct aproc_ops *ops, void *arg)
{
	struct event_base *base = sp.sp_d.d_base;

	memset(ap, 0, sizeof(*ap));
	ap->ap_out = ap->ap_err = ap->ap_in = ap->ap_notify = ap->ap_initst =
	    ap->ap_gatedir = ap->ap_egress_fd = ap->ap_spawnfd = -1;
	ap->ap_inited = 1;
	if (sp.sp_stopping) {
		log_warnx("agent %s: the spawner is stopping; not started",
		    as->as_agent != NULL ? as->as_agent : "?");
		return -1;
	}
	ap->ap_ops = ops;
	ap->ap_arg = arg;
	ap->ap_agent = as->as_agent;
	ap->ap_deadline = evtimer_new(base, aproc_deadline_cb, ap);
	ap->ap_grace = evtimer_new(base, aproc_grace_cb, ap);
	ap->ap_finish = evtimer_new(base, aproc_finish_cb, ap);
	if (ap->ap_deadline == NULL || ap->ap_grace == NULL ||
	    ap->ap_finish == NULL)
		return -1;
	return 0;
}

/* The child's rlimits and its stdio (and the gate's fd 3).  0, or -1. */
static int
aproc_boot_stdio(struct aproc_boot *ab, const struct aproc_spec *as)
{
	if (pipe_pair(ab->ab_po) == -1 || pipe_pair(ab->ab_pe) == -1 ||
	    (as->as_stdin != NULL && pipe_pair(ab->ab_pi) == -1))
		return -1;
	/* SP-7; the sandbox plan is checked just below. */
	if (as->as_sandbox != NULL)
		ab->ab_nrl = sandbox_rlimits(
		    as->as_limits, as->as_sandbox->pl_layers, ab->ab_rl);
	if (ab->ab_pi[0] != -1)
		aproc_boot_fd(ab, ab->ab_pi[0], 0);
	aproc_boot_fd(ab, ab->ab_po[1], 1);
	aproc_boot_fd(ab, ab->ab_pe[1], 2);
	if (as->as_gate_fd > 2)
		aproc_boot_fd(ab, as->as_gate_fd, 3);
	return 0;
}

/*
 * SBX-1: every agent child is sandboxed; a failure refuses the run, and
 * so does a caller that forgot to say which sandbox.  The run's plan
 * prepared, and its pids group made (SP-7).  0, or -1.
 */
static int
aproc_boot_sandbox(
    struct aproc *ap, struct aproc_boot *ab, const struct aproc_spec *as)
{
	struct spawn_status st;

	if (as->as_sandbox == NULL) {
		log_warnx("agent %s: no sandbox plan; refusing to spawn",
		    as->as_agent != NULL ? as->as_agent : "?");
		return -1;
	}
	if ((ap->ap_sbx = calloc(1, sizeof(*ap->ap_sbx))) == NULL ||
	    sandbox_run_prepare(ap->ap_sbx, as->as_sandbox, as->as_path,
		as->as_cwd, as->as_envp, as->as_limits->l_tmp_bytes) == -1) {
		snprintf(ap->ap_reason, sizeof(ap->ap_reason),
		    "sandbox: preparing the run (private tmp, rules): %s",
		    errno_name(errno));
		log_warnx("agent %s: %s",
		    as->as_agent != NULL ? as->as_agent : "?", ap->ap_reason);
		free(ap->ap_sbx);
		ap->ap_sbx = NULL;
		return -1;
	}
	/* SP-7: the child joins the run's group first thing in the hook. */
	if (aproc_cgroup_make(ap, as->as_limits, &ab->ab_cgp) == -1) {
		st.ss_step = SBX_STEP_CGROUP;
		st.ss_errno = errno;
		aproc_start_failed(ap, &st);
		return -1;
	}
	if (ab->ab_cgp != -1) {
		aproc_boot_fd(ab, ab->ab_cgp, SBX_CGROUP_FD);
		ap->ap_sbx->sx_cgroup = 1;
	}
	return 0;
}

/*
 * SP-17, AU-6: cordon-init's socket.  Held, the spawn returns once the
 * init runs and the go is aproc_go's; else the go is in the socket
 * before the spawn, and the init forks the agent at once.  0, or -1.
 */
static int
aproc_boot_init(struct aproc *ap, struct aproc_boot *ab, int hold)
{
	if (spawn_init_channel(ab->ab_xs, !hold) == -1 ||
	    set_nonblock(ab->ab_xs[0], 1) == -1)
		return -1;
	aproc_boot_fd(ab, ab->ab_xs[1], SBX_INIT_FD);
	ab->ab_req.sr_init = ap->ap_sbx->sx_init;
	ab->ab_req.sr_init_fd = SBX_INIT_FD;
	if (hold)
		ab->ab_req.sr_held = &ap->ap_spawnfd;
	return 0;
}

/* The spawn request: the sandbox's hook, the channels the child hands
 * its fds back on (SBX-8, seccomp) and cordon-init's (SP-17).  0, or -1. */
static int
aproc_boot_req(
    struct aproc *ap, struct aproc_boot *ab, const struct aproc_spec *as)
{
	struct spawn_req *req = &ab->ab_req;

	memset(req, 0, sizeof(*req));
	req->sr_path = as->as_path;
	req->sr_argv = as->as_argv;
	req->sr_envp = ap->ap_sbx->sx_envp;
	req->sr_clone_flags = ap->ap_sbx->sx_clone;
	req->sr_hook = sandbox_child;
	req->sr_hook_arg = ap->ap_sbx;
	/* SBX-8: the gate by path, where the run has a view of its own. */
	ap->ap_sbx->sx_gate =
	    as->as_gate_dir && (ap->ap_sbx->sx_clone & CLONE_NEWNS) != 0;
	/* The child hands its seccomp listener (and gate dir) back here. */
	if ((as->as_sandbox->pl_layers & SBX_L_SECCOMP) ||
	    ap->ap_sbx->sx_gate) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
			ab->ab_ns) == -1)
			return -1;
		aproc_boot_fd(ab, ab->ab_ns[1], SBX_NOTIFY_FD);
	}
	/* SP-17: a run in a pid namespace starts as cordon-init. */
	if (ap->ap_sbx->sx_init != NULL &&
	    aproc_boot_init(ap, ab, as->as_hold) == -1)
		return -1;
	/* AU-6: a hold needs an init to hold the agent: else no spawn. */
	if (as->as_hold && ap->ap_sbx->sx_init == NULL) {
		snprintf(ap->ap_reason, sizeof(ap->ap_reason),
		    "spawn: no cordon-init to hold the agent");
		return -1;
	}
	req->sr_fds = ab->ab_fds;
	req->sr_nfds = ab->ab_nfd;
	req->sr_setsid = 1;
	req->sr_pdeathsig = SIGKILL;
	req->sr_cwd = as->as_cwd;
	req->sr_rlimits = ab->ab_rl;
	req->sr_nrlimits = ab->ab_nrl;
	req->sr_set_umask = 1;
	req->sr_umask = 077;
	req->sr_status = &ab->ab_sst;
	return 0;
}

/* Started: the child's ends closed, ours kept by ap.  0, or -1 (then
 * the child is cancelled). */
static int
aproc_boot_watch(struct aproc *ap, struct aproc_boot *ab)
{
	struct event_base *base = sp.sp_d.d_base;

	if (ab->ab_xs[1] != -1) {
		ap->ap_initst = ab->ab_xs[0];
		ab->ab_xs[0] = -1;
	}
	ap->ap_out = ab->ab_po[0];
	ap->ap_err = ab->ab_pe[0];
	ab->ab_po[0] = ab->ab_pe[0] = -1;
	/* What the child has now: ours no more. */
	close(ab->ab_po[1]);
	close(ab->ab_pe[1]);
	ab->ab_po[1] = ab->ab_pe[1] = -1;
	if (ab->ab_xs[1] != -1) {
		close(ab->ab_xs[1]);
		ab->ab_xs[1] = -1;
	}
	if (ab->ab_pi[0] != -1) {
		close(ab->ab_pi[0]);
		ab->ab_pi[0] = -1;
	}
	TAILQ_INSERT_TAIL(&sp.sp_procs, ap, ap_entry);
	set_nonblock(ap->ap_out, 1);
	set_nonblock(ap->ap_err, 1);
	ap->ap_ev_out =
	    event_new(base, ap->ap_out, EV_READ | EV_PERSIST, aproc_out_cb, ap);
	ap->ap_ev_err =
	    event_new(base, ap->ap_err, EV_READ | EV_PERSIST, aproc_err_cb, ap);
	if (ap->ap_ev_out == NULL || ap->ap_ev_err == NULL ||
	    event_add(ap->ap_ev_out, NULL) == -1 ||
	    event_add(ap->ap_ev_err, NULL) == -1)
		return -1;
	return 0;
}

/* The fds the child sent back before execve (they are here): its
 * seccomp listener, gate dir and proxy listener.  0, or -1. */
static int
aproc_boot_notify(
    struct aproc *ap, struct aproc_boot *ab, const struct aproc_spec *as)
{
	struct event_base *base = sp.sp_d.d_base;
	int pfd = -1;

	if (ab->ab_ns[0] == -1)
		return 0;
	close(ab->ab_ns[1]);
	ab->ab_ns[1] = -1;
	if (sandbox_recv_fds(
		ab->ab_ns[0], &ap->ap_notify, &ap->ap_gatedir, &pfd) == -1 ||
	    (ap->ap_sbx->sx_gate && ap->ap_gatedir == -1) ||
	    (as->as_sandbox->pl_network == MF_NET_PROXY && pfd == -1) ||
	    ((as->as_sandbox->pl_layers & SBX_L_SECCOMP) &&
		(ap->ap_notify == -1 ||
		    (ap->ap_ev_notify = event_new(base, ap->ap_notify,
			 EV_READ | EV_PERSIST, aproc_notify_cb, ap)) == NULL ||
		    event_add(ap->ap_ev_notify, NULL) == -1))) {
		log_warnx("agent %s: sandbox: seccomp listener, "
			  "gate dir or proxy listener lost",
		    as->as_agent != NULL ? as->as_agent : "?");
		if (pfd != -1)
			close(pfd);
		return -1;
	}
	/* EG-1: egressd accepts on the run's own listener. */
	if (pfd != -1)
		egress_run_open(ap, as->as_run_id, as->as_sandbox->pl_egress,
		    as->as_secrets, pfd);
	return 0;
}

/* The prompt on stdin, written from the loop, and the deadline.  0, or -1. */
static int
aproc_boot_input(
    struct aproc *ap, struct aproc_boot *ab, const struct aproc_spec *as)
{
	if (ab->ab_pi[1] != -1) {
		ap->ap_in = ab->ab_pi[1];
		ab->ab_pi[1] = -1;
		set_nonblock(ap->ap_in, 1);
		if ((ap->ap_stdin = malloc(as->as_stdin_len + 1)) == NULL ||
		    (ap->ap_ev_in = event_new(sp.sp_d.d_base, ap->ap_in,
			 EV_WRITE | EV_PERSIST, aproc_in_cb, ap)) == NULL ||
		    event_add(ap->ap_ev_in, NULL) == -1)
			return -1;
		memcpy(ap->ap_stdin, as->as_stdin, as->as_stdin_len);
		ap->ap_stdin_len = as->as_stdin_len;
	}
	ap->ap_timeout_ms = as->as_timeout_ms;
	if (!ap->ap_held)
		aproc_arm_deadline(ap);
	return 0;
}

/* Is a spawn of this plan held by cordon-init (its pid namespace)? */
int
aproc_can_hold(const struct sandbox_plan *pl)
{
	return (pl->pl_layers & (SBX_L_USERNS | SBX_L_PIDNS)) ==
	       (SBX_L_USERNS | SBX_L_PIDNS);
}

/*
 * AU-6: the held agent is forked now, its execve awaited as spawn_exec
 * would.  0: it runs, its deadline armed.  -1 with ap_reason: it never
 * ran, and ap is detached (no ao_done); the owner releases it.
 */
int
aproc_go(struct aproc *ap)
{
	struct spawn_status st;
	int fd = ap->ap_spawnfd;

	ap->ap_spawnfd = -1;
	if (!ap->ap_held || ap->ap_done || ap->ap_exited ||
	    spawn_init_go(ap->ap_initst) == -1) {
		if (fd != -1)
			close(fd);
		snprintf(ap->ap_reason, sizeof(ap->ap_reason),
		    "spawn: the held child ended before its go");
		aproc_drop(ap, 0);
		return -1;
	}
	ap->ap_held = 0;
	ap->ap_start_ms = now_ms_mono();
	if (spawn_held_exec(ap->ap_pid, fd, &st) == -1) {
		aproc_start_failed(ap, &st);
		aproc_drop(ap, 1);
		return -1;
	}
	aproc_arm_deadline(ap);
	return 0;
}

int
aproc_start(struct aproc *ap, const struct aproc_spec *as,
    const struct aproc_ops *ops, void *arg)
{
	struct aproc_boot ab;

	memset(&ab, 0, sizeof(ab));
	ab.ab_po[0] = ab.ab_po[1] = ab.ab_pe[0] = ab.ab_pe[1] = -1;
	ab.ab_pi[0] = ab.ab_pi[1] = ab.ab_ns[0] = ab.ab_ns[1] = -1;
	ab.ab_xs[0] = ab.ab_xs[1] = ab.ab_cgp = -1;
	if (aproc_init(ap, as, ops, arg) == -1 ||
	    aproc_boot_stdio(&ab, as) == -1 ||
	    aproc_boot_sandbox(ap, &ab, as) == -1 ||
	    aproc_boot_req(ap, &ab, as) == -1)
		goto fail;
	ap->ap_start_ms = as->as_hold ? 0 : now_ms_mono(); /* held: at go */
	ap->ap_pid = spawn_exec(&ab.ab_req);
	if (ab.ab_cgp != -1) {
		close(ab.ab_cgp);
		ab.ab_cgp = -1;
	}
	if (ap->ap_pid == -1) {
		aproc_start_failed(ap, &ab.ab_sst);
		goto fail;
	}
	ap->ap_held = as->as_hold;
	/* From here a failure ends the run at once via ao_done. */
	if (aproc_boot_watch(ap, &ab) == -1 ||
	    aproc_boot_notify(ap, &ab, as) == -1 ||
	    aproc_boot_input(ap, &ab, as) == -1)
		aproc_kill(ap, AP_END_CANCEL);
	aproc_boot_close(&ab);
	return 0;
fail:
	aproc_boot_close(&ab);
	aproc_release(ap);
	return -1;
}
