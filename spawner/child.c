/*
 * Agent children for runs, actions and probes: the built env (SP-4), the
 * binary resolved on the built PATH (SP-1), the one spawn helper with a
 * new session, umask 077, rlimits and a parent-death signal (SP-6, SP-7),
 * the per-run sandbox (SBX-1 ... SBX-5, spawner/sandbox.c) with its
 * failures named, seccomp notifications answered and named, deadlines
 * and process-group kills with a bounded wait (SP-8, SP-17); each run in
 * its own pids cgroup when cordond delegated one (SP-7).
 * Touches only the pipes it makes, the binaries it resolves, (through
 * sandbox.c) each run's private tmp and its run.N group beneath the
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
#include "log.h"
#include "spawn_helper.h"
#include "spawner.h"
#include "util.h"

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
	return 0;
}

static void aproc_check(struct aproc *);
static void aproc_cgroup_end(struct aproc *);

static void
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

static void
aproc_finish(struct aproc *ap)
{
	if (ap->ap_done)
		return;
	ap->ap_done = 1;
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
	if (ap->ap_end_ms == 0)
		ap->ap_end_ms = now_ms_mono();
	/* The owner may free itself: run it from the loop, not from here. */
	event_active(ap->ap_finish, EV_TIMEOUT, 0);
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

/* "seccomp: NAME" for a syscall number of this architecture. */
static void
name_syscall(struct aproc *ap, uint32_t arch, long nr)
{
	sandbox_syscall_name(
	    arch, nr, ap->ap_killed_by, sizeof(ap->ap_killed_by));
}

/*
 * Killed by SIGSYS (a bad architecture, or a filter of its own): look at
 * /proc/PID/syscall while it is still a zombie.  Recent kernels free a
 * dead task's stack and answer -1, hence "seccomp: unknown" then; the
 * calls the sandbox ends runs for arrive as notifications instead.
 */
static void
aproc_sigsys(struct aproc *ap, pid_t pid)
{
	char path[64], buf[128];
	ssize_t n;
	long nr = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		if ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
			buf[n] = '\0';
			nr = strtol(buf, NULL, 10);
		}
		close(fd);
	}
	name_syscall(ap, SCMP_ARCH_NATIVE, nr);
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
			name_syscall(ap, SCMP_ARCH_NATIVE, -1);
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
		if (ap == NULL)
			continue;
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

/*
 * Run groups whose processes were sent SIGKILL but had not all gone yet:
 * tried again every CG_LATER_MS, without ever sleeping in the event loop,
 * for at most CG_LATER_LIMIT_MS.  pids.max keeps bounding each meanwhile.
 */
#define CG_LATER_MAX	  64
#define CG_LATER_MS	  5
#define CG_LATER_LIMIT_MS 10000

static struct cg_later {
	char cl_name[sizeof(((struct aproc *)0)->ap_cgroup)];
	uint64_t cl_since;
} cg_later[CG_LATER_MAX];
static size_t cg_nlater;
static struct event *cg_later_ev;

static void
cg_later_arm(void)
{
	struct timeval tv = {0, CG_LATER_MS * 1000};

	if (cg_nlater > 0)
		evtimer_add(cg_later_ev, &tv);
}

static void
cg_later_cb(evutil_socket_t fd, short ev, void *arg)
{
	uint64_t now = now_ms_mono();
	size_t i = 0;

	while (i < cg_nlater) {
		struct cg_later *cl = &cg_later[i];

		if (cgroup_remove(sp.sp_cgfd, cl->cl_name, CGROUP_RM_NOWAIT) ==
		    -1) {
			if (errno == EBUSY &&
			    now - cl->cl_since < CG_LATER_LIMIT_MS) {
				i++;
				continue;
			}
			if (errno == EBUSY)
				log_warnx("pids cgroup: a run's group still "
					  "holds a process after %d s; left",
				    CG_LATER_LIMIT_MS / 1000);
			else
				log_warn("pids cgroup: removing a run's group");
		}
		*cl = cg_later[--cg_nlater];
	}
	cg_later_arm();
}

/* Keep trying name from the loop; 0, or -1 when the list is full. */
static int
cg_later_add(const char *name)
{
	if (cg_nlater == CG_LATER_MAX ||
	    (cg_later_ev == NULL && (cg_later_ev = evtimer_new(sp.sp_d.d_base,
					 cg_later_cb, NULL)) == NULL))
		return -1;
	snprintf(cg_later[cg_nlater].cl_name,
	    sizeof(cg_later[cg_nlater].cl_name), "%s", name);
	cg_later[cg_nlater++].cl_since = now_ms_mono();
	if (!evtimer_pending(cg_later_ev, NULL))
		cg_later_arm();
	return 0;
}

/*
 * SP-7: after the group kill and the reap, whatever is still in the
 * run's cgroup (a descendant that left the process group) is killed,
 * then the group is removed.  At the end of the child (aproc_finish),
 * and for a start that failed (aproc_release).  A process that takes
 * its time to die does not stall the spawner: the group is tried again
 * from the loop (cg_later), and only when that list is full does this
 * wait, bounded, as cordond's own clean-up does.
 */
static void
aproc_cgroup_end(struct aproc *ap)
{
	if (ap->ap_cgroup[0] == '\0')
		return;
	if (cgroup_remove(sp.sp_cgfd, ap->ap_cgroup, CGROUP_RM_NOWAIT) == -1 &&
	    (errno != EBUSY || cg_later_add(ap->ap_cgroup) == -1) &&
	    cgroup_remove(sp.sp_cgfd, ap->ap_cgroup, 0) == -1)
		log_warn("agent %s: pids cgroup: removing the run's group",
		    ap->ap_agent != NULL ? ap->ap_agent : "?");
	ap->ap_cgroup[0] = '\0';
}

void
aproc_cgroup_sweep(void)
{
	if (sp.sp_cgfd != -1 && cgroup_sweep(sp.sp_cgfd, "run.", 0) > 0)
		log_warnx(
		    "pids cgroup: a stale run group could not be removed");
}

/* Free what aproc_start allocated; after ao_done, or after a failed start. */
void
aproc_release(struct aproc *ap)
{
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
		ap->ap_initst = ap->ap_gatedir = -1;
		egress_run_close(ap);
	}
	aproc_cgroup_end(ap);
	if (ap->ap_sbx != NULL) {
		sandbox_run_end(ap->ap_sbx); /* removes the private tmp */
		free(ap->ap_sbx);
		ap->ap_sbx = NULL;
	}
}

/*
 * A call the agent's seccomp layer hands us (ptrace, bpf, ...): refuse
 * it, name it, end the run.  Only the name leaves the spawner.
 */
static void
aproc_notify_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct aproc *ap = arg;
	char name[sizeof(ap->ap_killed_by)];

	switch (sandbox_notify_answer(ap->ap_notify, name, sizeof(name))) {
	case SBX_NOTIFY_GONE:
		aproc_close(&ap->ap_notify, &ap->ap_ev_notify);
		return;
	case SBX_NOTIFY_NONE:
		return;
	case SBX_NOTIFY_REFUSED:
		if (ap->ap_killed_by[0] == '\0') {
			memcpy(ap->ap_killed_by, name, sizeof(name));
			log_warnx("agent %s: %s; run ended",
			    ap->ap_agent != NULL ? ap->ap_agent : "?",
			    ap->ap_killed_by);
		}
		break;
	default:
		break;
	}
	aproc_kill(ap, AP_END_SECCOMP);
}

static const char *
errno_name(int e)
{
	const char *n = strerrorname_np(e);

	return n != NULL ? n : "EIO";
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

/*
 * SP-7: the run's own group, run.N with pids.max = limits.nproc, and an
 * fd of its cgroup.procs for the child to join through before execve.
 * Without a delegated cgroup a spawner running as root (outside
 * systemd) refuses the run: RLIMIT_NPROC does not bind uid 0.
 * 0 with *procs set (or -1 when no group is used), or -1: refused.
 */
static int
aproc_cgroup_make(struct aproc *ap, const struct mf_limits *lim, int *procs)
{
	static unsigned long seq;
	struct spawn_status st;
	int i, dfd = -1;

	*procs = -1;
	if (sp.sp_cgfd == -1) {
		if (!sbx_host.sh_pids_required)
			return 0;
		errno = ENODEV;
		goto fail;
	}
	for (i = 0; i < 16; i++) {
		snprintf(
		    ap->ap_cgroup, sizeof(ap->ap_cgroup), "run.%lu", ++seq);
		if (cgroup_make(sp.sp_cgfd, ap->ap_cgroup, (long)lim->l_nproc,
			&dfd) == 0 ||
		    errno != EEXIST)
			break;
	}
	if (dfd == -1) {
		ap->ap_cgroup[0] = '\0';
		goto fail;
	}
	/* Where the memory controller reaches the group, it bounds the run
	 * as a whole; RLIMIT_DATA bounds each process either way. */
	if (cgroup_set_memory(dfd, lim->l_mem_bytes) == -1) {
		i = errno;
		close(dfd);
		aproc_cgroup_end(ap);
		errno = i;
		goto fail;
	}
	*procs = openat(dfd, "cgroup.procs", O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	i = errno;
	close(dfd);
	if (*procs == -1) {
		aproc_cgroup_end(ap);
		errno = i;
		goto fail;
	}
	return 0;
fail:
	st.ss_step = SBX_STEP_CGROUP;
	st.ss_errno = errno;
	aproc_start_failed(ap, &st);
	return -1;
}

int
aproc_start(struct aproc *ap, const struct aproc_spec *as,
    const struct aproc_ops *ops, void *arg)
{
	struct event_base *base = sp.sp_d.d_base;
	struct spawn_rlimit rl[SBX_RLIMITS_MAX];
	struct spawn_fd fds[8];
	struct spawn_status sst;
	struct spawn_req req;
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, pi[2] = {-1, -1};
	int ns[2] = {-1, -1}, xs[2] = {-1, -1}, cgp = -1, pfd = -1;
	size_t nrl = 0, nfd = 0;

	memset(ap, 0, sizeof(*ap));
	ap->ap_out = ap->ap_err = ap->ap_in = ap->ap_notify = ap->ap_initst =
	    ap->ap_gatedir = ap->ap_egress_fd = -1;
	ap->ap_inited = 1;
	if (sp.sp_stopping) {
		log_warnx("agent %s: the spawner is stopping; not started",
		    as->as_agent != NULL ? as->as_agent : "?");
		goto fail;
	}
	ap->ap_ops = ops;
	ap->ap_arg = arg;
	ap->ap_agent = as->as_agent;
	ap->ap_deadline = evtimer_new(base, aproc_deadline_cb, ap);
	ap->ap_grace = evtimer_new(base, aproc_grace_cb, ap);
	ap->ap_finish = evtimer_new(base, aproc_finish_cb, ap);
	if (ap->ap_deadline == NULL || ap->ap_grace == NULL ||
	    ap->ap_finish == NULL)
		goto fail;
	if (pipe_pair(po) == -1 || pipe_pair(pe) == -1 ||
	    (as->as_stdin != NULL && pipe_pair(pi) == -1))
		goto fail;

	/* SP-7; the sandbox plan is checked just below. */
	if (as->as_sandbox != NULL)
		nrl = sandbox_rlimits(
		    as->as_limits, as->as_sandbox->pl_layers, rl);
	if (pi[0] != -1) {
		fds[nfd].sf_src = pi[0];
		fds[nfd++].sf_dst = 0;
	}
	fds[nfd].sf_src = po[1];
	fds[nfd++].sf_dst = 1;
	fds[nfd].sf_src = pe[1];
	fds[nfd++].sf_dst = 2;
	if (as->as_gate_fd > 2) {
		fds[nfd].sf_src = as->as_gate_fd;
		fds[nfd++].sf_dst = 3;
	}

	memset(&req, 0, sizeof(req));
	req.sr_path = as->as_path;
	req.sr_argv = as->as_argv;
	req.sr_envp = as->as_envp;
	/*
	 * SBX-1: every agent child is sandboxed; a failure refuses the run,
	 * and so does a caller that forgot to say which sandbox.
	 */
	if (as->as_sandbox == NULL) {
		log_warnx("agent %s: no sandbox plan; refusing to spawn",
		    as->as_agent != NULL ? as->as_agent : "?");
		goto fail;
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
		goto fail;
	}
	/* SP-7: the child joins the run's group first thing in the hook. */
	if (aproc_cgroup_make(ap, as->as_limits, &cgp) == -1)
		goto fail;
	if (cgp != -1) {
		fds[nfd].sf_src = cgp;
		fds[nfd++].sf_dst = SBX_CGROUP_FD;
		ap->ap_sbx->sx_cgroup = 1;
	}
	req.sr_envp = ap->ap_sbx->sx_envp;
	req.sr_clone_flags = ap->ap_sbx->sx_clone;
	req.sr_hook = sandbox_child;
	req.sr_hook_arg = ap->ap_sbx;
	/* SBX-8: the gate by path, where the run has a view of its own. */
	ap->ap_sbx->sx_gate =
	    as->as_gate_dir && (ap->ap_sbx->sx_clone & CLONE_NEWNS) != 0;
	/* The child hands its seccomp listener (and gate dir) back here. */
	if ((as->as_sandbox->pl_layers & SBX_L_SECCOMP) ||
	    ap->ap_sbx->sx_gate) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ns) ==
		    -1)
			goto fail;
		fds[nfd].sf_src = ns[1];
		fds[nfd++].sf_dst = SBX_NOTIFY_FD;
	}
	/* SP-17: a run in a pid namespace starts as cordon-init. */
	if (ap->ap_sbx->sx_init != NULL) {
		if (pipe2(xs, O_CLOEXEC) == -1 || set_nonblock(xs[0], 1) == -1)
			goto fail;
		fds[nfd].sf_src = xs[1];
		fds[nfd++].sf_dst = SBX_INIT_FD;
		req.sr_init = ap->ap_sbx->sx_init;
		req.sr_init_fd = SBX_INIT_FD;
	}
	req.sr_fds = fds;
	req.sr_nfds = nfd;
	req.sr_setsid = 1;
	req.sr_pdeathsig = SIGKILL;
	req.sr_cwd = as->as_cwd;
	req.sr_rlimits = rl;
	req.sr_nrlimits = nrl;
	req.sr_set_umask = 1;
	req.sr_umask = 077;
	req.sr_status = &sst;
	ap->ap_start_ms = now_ms_mono();
	ap->ap_pid = spawn_exec(&req);
	if (cgp != -1) {
		close(cgp);
		cgp = -1;
	}
	if (ap->ap_pid == -1) {
		aproc_start_failed(ap, &sst);
		goto fail;
	}
	if (xs[1] != -1) {
		close(xs[1]);
		ap->ap_initst = xs[0];
		xs[0] = xs[1] = -1;
	}
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	if (pi[0] != -1) {
		close(pi[0]);
		pi[0] = -1;
	}
	TAILQ_INSERT_TAIL(&sp.sp_procs, ap, ap_entry);

	ap->ap_out = po[0];
	ap->ap_err = pe[0];
	set_nonblock(ap->ap_out, 1);
	set_nonblock(ap->ap_err, 1);
	ap->ap_ev_out =
	    event_new(base, ap->ap_out, EV_READ | EV_PERSIST, aproc_out_cb, ap);
	ap->ap_ev_err =
	    event_new(base, ap->ap_err, EV_READ | EV_PERSIST, aproc_err_cb, ap);
	if (ap->ap_ev_out == NULL || ap->ap_ev_err == NULL ||
	    event_add(ap->ap_ev_out, NULL) == -1 ||
	    event_add(ap->ap_ev_err, NULL) == -1) {
		aproc_kill(ap, AP_END_CANCEL);
		goto started;
	}
	if (ns[0] != -1) {
		/* The child sent its fds before execve: they are here. */
		close(ns[1]);
		ns[1] = -1;
		if (sandbox_recv_fds(
			ns[0], &ap->ap_notify, &ap->ap_gatedir, &pfd) == -1 ||
		    (ap->ap_sbx->sx_gate && ap->ap_gatedir == -1) ||
		    (as->as_sandbox->pl_network == MF_NET_PROXY && pfd == -1) ||
		    ((as->as_sandbox->pl_layers & SBX_L_SECCOMP) &&
			(ap->ap_notify == -1 ||
			    (ap->ap_ev_notify = event_new(base, ap->ap_notify,
				 EV_READ | EV_PERSIST, aproc_notify_cb, ap)) ==
				NULL ||
			    event_add(ap->ap_ev_notify, NULL) == -1))) {
			log_warnx("agent %s: sandbox: seccomp listener, "
				  "gate dir or proxy listener lost",
			    as->as_agent != NULL ? as->as_agent : "?");
			if (pfd != -1)
				close(pfd);
			aproc_kill(ap, AP_END_CANCEL);
			goto started;
		}
		/* EG-1: egressd accepts on the run's own listener. */
		if (pfd != -1)
			egress_run_open(
			    ap, as->as_run_id, as->as_sandbox->pl_egress, pfd);
	}
	if (pi[1] != -1) {
		ap->ap_in = pi[1];
		pi[1] = -1;
		set_nonblock(ap->ap_in, 1);
		if ((ap->ap_stdin = malloc(as->as_stdin_len + 1)) == NULL ||
		    (ap->ap_ev_in = event_new(base, ap->ap_in,
			 EV_WRITE | EV_PERSIST, aproc_in_cb, ap)) == NULL ||
		    event_add(ap->ap_ev_in, NULL) == -1) {
			aproc_kill(ap, AP_END_CANCEL);
			goto started;
		}
		memcpy(ap->ap_stdin, as->as_stdin, as->as_stdin_len);
		ap->ap_stdin_len = as->as_stdin_len;
	}
	if (as->as_timeout_ms > 0) {
		struct timeval tv = {as->as_timeout_ms / 1000,
		    (as->as_timeout_ms % 1000) * 1000};
		evtimer_add(ap->ap_deadline, &tv);
	}
started:
	if (ns[0] != -1)
		close(ns[0]);
	if (ns[1] != -1)
		close(ns[1]);
	if (pi[1] != -1)
		close(pi[1]);
	return 0; /* started; a failure above ends it at once via ao_done */
fail:
	if (po[0] != -1)
		close(po[0]);
	if (po[1] != -1)
		close(po[1]);
	if (pe[0] != -1)
		close(pe[0]);
	if (pe[1] != -1)
		close(pe[1]);
	if (pi[0] != -1)
		close(pi[0]);
	if (pi[1] != -1)
		close(pi[1]);
	if (ns[0] != -1)
		close(ns[0]);
	if (ns[1] != -1)
		close(ns[1]);
	if (xs[0] != -1)
		close(xs[0]);
	if (xs[1] != -1)
		close(xs[1]);
	if (cgp != -1)
		close(cgp);
	aproc_release(ap);
	return -1;
}
