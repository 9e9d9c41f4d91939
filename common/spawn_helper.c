/*
 * The one spawn helper (see spawn_helper.h).  A vfork-style clone(2) +
 * execve with an explicit fd map: the child closes every descriptor it
 * was not given, so a daemon or an agent starts with exactly the fds its
 * table names.  A close-on-exec status pipe tells the parent how far the
 * child got: a {step, errno} record for the first step that failed, or a
 * zero record just before execve and then EOF once execve succeeded (an
 * init, spawner/init.c, adds its own record between: it runs).  A
 * child killed by a signal before execve (a seccomp kill in the hook, a
 * stray SIGKILL) leaves EOF without the zero record, and is a failure.
 *
 * vfork-style: the child shares the parent's memory (CLONE_VM) on a stack
 * of its own, and the parent sleeps until the child's execve or exit
 * (CLONE_VFORK).  A fork would copy the page tables and write-protect
 * every page, so both sides then pay a copy-on-write fault per page they
 * write, a cost that grows with the spawner's memory (PERFORMANCE.md).
 * The price is discipline in the child, hook included: it reads the
 * request and writes only its own stack and descriptors (async-signal-
 * safe calls, no malloc, no stdio); its errno is the parent's errno.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawn_helper.h"

#define SPAWN_MAX_FDS 16

/* ASan: gcc says __SANITIZE_ADDRESS__, clang __has_feature. */
#if defined(__SANITIZE_ADDRESS__)
#define SPAWN_FORKS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPAWN_FORKS 1
#endif
#endif
#define SPAWN_CLONE_NEW                                                        \
	(CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |           \
	    CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)
/*
 * The child's stack.  The deepest user is the sandbox hook's bounded
 * walk of the write roots (32 levels of a 4 KiB getdents buffer); pages
 * become resident only where a child has used them.  One stack is
 * enough: the parent sleeps while its child runs on it.
 */
#define SPAWN_STACK (512 * 1024)

struct spawn_arg {
	const struct spawn_req *sa_req;
	char **sa_init_argv; /* sr_init's argv, or NULL */
	int sa_init_sfd;     /* where the status pipe goes for sr_init */
	pid_t sa_parent;
	int sa_status; /* write end of the status pipe */
	int sa_reader; /* read end: the parent's, closed in the child */
};

/* Child side: report the step and errno, then die.  Async-signal-safe. */
static void __attribute__((noreturn)) spawn_fail(int sfd, int step)
{
	struct spawn_status st;

	st.ss_step = step;
	st.ss_errno = errno != 0 ? errno : EIO;
	(void)!write(sfd, &st, sizeof(st));
	_exit(127);
}

/* Is fd a destination in the request's map? */
static int
fd_named(const struct spawn_req *r, int fd)
{
	size_t i;

	for (i = 0; i < r->sr_nfds; i++)
		if (r->sr_fds[i].sf_dst == fd)
			return 1;
	return 0;
}

/* Child step: drop the signal state the parent may have changed. */
static void
spawn_reset_signals(void)
{
	sigset_t all;
	size_t i;

	for (i = 1; i < NSIG; i++)
		if (i != SIGKILL && i != SIGSTOP)
			signal((int)i, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
}

/* Child step: a session of its own, and death with the parent. */
static void
spawn_session(const struct spawn_arg *sa, int sfd)
{
	const struct spawn_req *r = sa->sa_req;

	if (r->sr_setsid && setsid() == -1)
		spawn_fail(sfd, SPAWN_STEP_SETSID);
	if (r->sr_pdeathsig) {
		if (prctl(PR_SET_PDEATHSIG, r->sr_pdeathsig) == -1)
			spawn_fail(sfd, SPAWN_STEP_PDEATHSIG);
		/* In a new pid namespace the parent is invisible (ppid 0). */
		if (!(r->sr_clone_flags & CLONE_NEWPID) &&
		    getppid() != sa->sa_parent) {
			errno = ESRCH;
			spawn_fail(sfd, SPAWN_STEP_PDEATHSIG);
		}
	}
}

/*
 * Child step: the fd map applied, stdio completed with /dev/null, every
 * other descriptor closed.  Returns the status pipe's new number.
 */
static int
spawn_map_fds(const struct spawn_req *r, int sfd)
{
	size_t i;
	int maxdst = 2, fd;
	int tmp[SPAWN_MAX_FDS];

	/*
	 * Move every source fd, and the status pipe, above all destinations
	 * first, so that a mapping like {4->3, 3->4} cannot clobber a source.
	 */
	for (i = 0; i < r->sr_nfds; i++)
		if (r->sr_fds[i].sf_dst > maxdst)
			maxdst = r->sr_fds[i].sf_dst;
	if ((fd = fcntl(sfd, F_DUPFD_CLOEXEC, maxdst + 1)) == -1)
		spawn_fail(sfd, SPAWN_STEP_FDS);
	sfd = fd;
	for (i = 0; i < r->sr_nfds; i++) {
		tmp[i] =
		    fcntl(r->sr_fds[i].sf_src, F_DUPFD_CLOEXEC, maxdst + 1);
		if (tmp[i] == -1)
			spawn_fail(sfd, SPAWN_STEP_FDS);
	}
	for (i = 0; i < r->sr_nfds; i++)
		if (dup2(tmp[i], r->sr_fds[i].sf_dst) == -1)
			spawn_fail(sfd, SPAWN_STEP_FDS);
	/* stdio not named in the map becomes /dev/null. */
	for (fd = 0; fd <= 2; fd++) {
		if (!fd_named(r, fd)) {
			int nul = open("/dev/null", O_RDWR);
			if (nul == -1 || (nul != fd && dup2(nul, fd) == -1))
				spawn_fail(sfd, SPAWN_STEP_FDS);
			if (nul != fd)
				close(nul);
		}
	}
	/*
	 * Everything else goes, except the status pipe: fds between 3 and
	 * the highest destination that the map does not name too, whether
	 * or not the caller marked them close-on-exec.
	 */
	for (fd = 3; fd <= maxdst; fd++)
		if (!fd_named(r, fd))
			close(fd);
	fd_close_range(maxdst + 1, sfd - 1);
	fd_close_range(sfd + 1, (int)(~0U >> 1));
	return sfd;
}

/* Child step: resource limits, umask and working directory. */
static void
spawn_limits(const struct spawn_req *r, int sfd)
{
	size_t i;

	for (i = 0; i < r->sr_nrlimits; i++) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = (rlim_t)r->sr_rlimits[i].sl_value;
		if (setrlimit(r->sr_rlimits[i].sl_resource, &rl) == -1)
			spawn_fail(sfd, SPAWN_STEP_RLIMIT);
	}
	if (r->sr_set_umask)
		umask((mode_t)r->sr_umask);
	if (r->sr_cwd != NULL && chdir(r->sr_cwd) == -1)
		spawn_fail(sfd, SPAWN_STEP_CWD);
}

/* Child step: the caller's hook, its failure reported as a hook step. */
static void
spawn_run_hook(const struct spawn_req *r, int sfd)
{
	int step;

	if (r->sr_hook == NULL)
		return;
	errno = 0;
	if ((step = r->sr_hook(r->sr_hook_arg)) != 0)
		spawn_fail(sfd,
		    step < SPAWN_STEP_HOOK_BASE ? SPAWN_STEP_HOOK_BASE : step);
}

/*
 * Child step: the init keeps the status pipe, at the number its argv
 * names: the lowest above the map, free since everything there was
 * closed.  Returns the status pipe's number.
 */
static int
spawn_keep_status(const struct spawn_arg *sa, int sfd)
{
	if (sa->sa_init_argv != NULL && sfd != sa->sa_init_sfd) {
		if (dup2(sfd, sa->sa_init_sfd) == -1)
			spawn_fail(sfd, SPAWN_STEP_FDS);
		close(sfd);
		sfd = sa->sa_init_sfd;
	} else if (sa->sa_init_argv != NULL && fcntl(sfd, F_SETFD, 0) == -1)
		spawn_fail(sfd, SPAWN_STEP_FDS);
	return sfd;
}

/*
 * Child side, on the parent's memory: async-signal-safe calls only.  The
 * steps in order; each reports its own failure and dies.
 */
static void __attribute__((noreturn))
spawn_child(const struct spawn_arg *sa, int sfd)
{
	const struct spawn_req *r = sa->sa_req;
	struct spawn_status st = {SPAWN_STEP_NONE, 0};

	spawn_reset_signals();
	spawn_session(sa, sfd);
	sfd = spawn_map_fds(r, sfd);
	spawn_limits(r, sfd);
	spawn_run_hook(r, sfd);
	sfd = spawn_keep_status(sa, sfd);
	/* Every step before execve is done: say so, or say nothing at all. */
	if (write(sfd, &st, sizeof(st)) != (ssize_t)sizeof(st))
		_exit(127);
	if (sa->sa_init_argv != NULL)
		execve(r->sr_init, sa->sa_init_argv, r->sr_envp);
	else
		execve(r->sr_path, r->sr_argv, r->sr_envp);
	spawn_fail(sfd, SPAWN_STEP_EXEC);
}

static int
spawn_child_main(void *arg)
{
	const struct spawn_arg *sa = arg;

	close(sa->sa_reader);
	spawn_child(sa, sa->sa_status);
}

/*
 * sr_init's argv, in one allocation (the child may not allocate): {init,
 * status fd, report fd, path, argv...}.  *sfdp: the status pipe's number
 * in the child, the lowest above the fd map.
 */
static char **
init_argv(const struct spawn_req *r, int *sfdp)
{
	size_t i, n, sz;
	char **v, *s;
	int maxdst = 2;

	for (i = 0; i < r->sr_nfds; i++)
		if (r->sr_fds[i].sf_dst > maxdst)
			maxdst = r->sr_fds[i].sf_dst;
	for (n = 0; r->sr_argv[n] != NULL; n++)
		;
	sz = (n + 5) * sizeof(char *);
	if ((v = malloc(sz + 2 * 16)) == NULL)
		return NULL;
	s = (char *)v + sz;
	*sfdp = maxdst + 1;
	snprintf(s, 16, "%d", maxdst + 1);
	snprintf(s + 16, 16, "%d", r->sr_init_fd >= 0 ? r->sr_init_fd : -1);
	v[0] = (char *)r->sr_init;
	v[1] = s;
	v[2] = s + 16;
	v[3] = (char *)r->sr_path;
	for (i = 0; i <= n; i++)
		v[4 + i] = r->sr_argv[i];
	return v;
}

/* Made once, kept: a guard page below, never executable. */
static char *
spawn_stack_top(void)
{
	static char *top;
	long pg = sysconf(_SC_PAGESIZE);
	char *p;

	if (top != NULL)
		return top;
	if (pg <= 0)
		pg = 4096;
	p = mmap(NULL, SPAWN_STACK + (size_t)pg, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p, (size_t)pg, PROT_NONE) == -1) {
		munmap(p, SPAWN_STACK + (size_t)pg);
		return NULL;
	}
	top = p + (size_t)pg + SPAWN_STACK;
	return top;
}

/* One record off the status pipe: 1, 0 at EOF, -1 for a torn one. */
static int
spawn_rec(int fd, struct spawn_status *st)
{
	size_t got = 0;
	ssize_t n;

	memset(st, 0, sizeof(*st));
	while (got < sizeof(*st)) {
		n = read(fd, (char *)st + got, sizeof(*st) - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got == sizeof(*st) ? 1 : got == 0 ? 0 : -1;
}

/* The child did not reach execve: reaped, *out and errno say why. */
static pid_t
spawn_failed(pid_t pid, int fd, int n, const struct spawn_status *st,
    struct spawn_status *out)
{
	struct spawn_status why = {SPAWN_STEP_EXEC, EIO};
	int wst;

	close(fd);
	while (waitpid(pid, &wst, 0) == -1 && errno == EINTR)
		;
	if (n == 1 && st->ss_errno > 0)
		why = *st; /* a step said where and why */
	if (out != NULL)
		*out = why;
	errno = why.ss_errno;
	return -1;
}

/* The last of the status pipe (closed here): EOF once execve succeeded. */
static pid_t
spawn_last(pid_t pid, int fd, struct spawn_status *out)
{
	struct spawn_status st;
	int n = spawn_rec(fd, &st);

	if (n == 0) {
		close(fd);
		return pid;
	}
	if (n == 1 && st.ss_errno <= 0)
		n = -1; /* only a failure may come here */
	return spawn_failed(pid, fd, n, &st, out);
}

int
spawn_init_go(int fd)
{
	static const char go = SPAWN_INIT_GO;

	return send(fd, &go, 1, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

int
spawn_init_channel(int xs[2], int go)
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, xs) == -1)
		return -1;
	if (go && spawn_init_go(xs[0]) == -1) {
		close(xs[0]);
		close(xs[1]);
		xs[0] = xs[1] = -1;
		return -1;
	}
	return 0;
}

pid_t
spawn_held_exec(pid_t pid, int fd, struct spawn_status *st)
{
	if (st != NULL)
		memset(st, 0, sizeof(*st));
	return spawn_last(pid, fd, st);
}

/*
 * The child's records off the status pipe fd, once it has reached execve
 * or died (CLONE_VFORK: or is dying, in a sanitized build).  A zero
 * record, with an init its SPAWN_STEP_INIT record, then EOF: execve
 * succeeded, pid is returned (held: at the init's record, the pipe kept
 * in *sr_held).  Else the child is reaped and -1 returned, errno and r's
 * status set.
 */
static pid_t
spawn_outcome(const struct spawn_req *r, pid_t pid, int fd)
{
	struct spawn_status st;
	int n = spawn_rec(fd, &st);

	if (n == 0) {
		/* No record at all: a signal ended it before execve. */
		st.ss_step = SPAWN_STEP_DIED;
		st.ss_errno = EINTR;
		return spawn_failed(pid, fd, 1, &st, r->sr_status);
	}
	if (n != 1 || st.ss_step != SPAWN_STEP_NONE || st.ss_errno != 0)
		return spawn_failed(pid, fd, n, &st, r->sr_status);
	if (r->sr_init != NULL) {
		n = spawn_rec(fd, &st);
		if (n != 1 || st.ss_step != SPAWN_STEP_INIT || st.ss_errno != 0)
			return spawn_failed(pid, fd, n, &st, r->sr_status);
		if (r->sr_held != NULL) {
			*r->sr_held = fd;
			return pid;
		}
	}
	return spawn_last(pid, fd, r->sr_status);
}

pid_t
spawn_exec(const struct spawn_req *r)
{
	struct spawn_arg sa;
	sigset_t all, old;
	pid_t pid, parent = getpid();
	char *stack;
	int p[2], saved;

	if (r->sr_status != NULL)
		memset(r->sr_status, 0, sizeof(*r->sr_status));
	if (r->sr_path == NULL || r->sr_path[0] != '/' || r->sr_argv == NULL ||
	    r->sr_envp == NULL || r->sr_nfds > SPAWN_MAX_FDS ||
	    (r->sr_clone_flags & ~SPAWN_CLONE_NEW) != 0 ||
	    (r->sr_init != NULL && (r->sr_init[0] != '/' ||
				       !(r->sr_clone_flags & CLONE_NEWPID))) ||
	    (r->sr_held != NULL && r->sr_init == NULL)) {
		errno = EINVAL;
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	if (r->sr_init != NULL &&
	    (sa.sa_init_argv = init_argv(r, &sa.sa_init_sfd)) == NULL)
		return -1;
	if ((stack = spawn_stack_top()) == NULL || pipe2(p, O_CLOEXEC) == -1) {
		free(sa.sa_init_argv);
		return -1;
	}
	sa.sa_req = r;
	sa.sa_parent = parent;
	sa.sa_status = p[1];
	sa.sa_reader = p[0];
	/*
	 * Every signal stays blocked until the child has reset the
	 * dispositions: a handler of ours must never run in the child, on
	 * our memory.  The child unblocks them itself before execve.
	 */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
#ifdef SPAWN_FORKS
	/*
	 * AddressSanitizer cannot follow a child that runs on our memory on
	 * a stack it did not make (its shadow of that stack is ours, and
	 * stale): a sanitized build forks, and so proves the child's code
	 * but not the sharing.  The unsanitized tests run the shared child.
	 */
	(void)stack;
	pid =
	    (pid_t)syscall(SYS_clone, r->sr_clone_flags | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		spawn_child_main(&sa);
#else
	pid = clone(spawn_child_main, stack,
	    CLONE_VM | CLONE_VFORK | SIGCHLD | (int)r->sr_clone_flags, &sa);
#endif
	saved = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(sa.sa_init_argv); /* the child has exec'd or is gone */
	close(p[1]);
	if (pid == -1) {
		close(p[0]);
		if (r->sr_status != NULL) {
			r->sr_status->ss_step = SPAWN_STEP_FORK;
			r->sr_status->ss_errno = saved;
		}
		errno = saved;
		return -1;
	}
	return spawn_outcome(r, pid, p[0]);
}

const char *
spawn_step_name(int step)
{
	static const char *const names[] = {"none", "fork", "setsid",
	    "pdeathsig", "fds", "rlimit", "chdir", "execve", "died", "init"};

	if (step >= 0 && step < (int)(sizeof(names) / sizeof(names[0])))
		return names[step];
	return NULL;
}
