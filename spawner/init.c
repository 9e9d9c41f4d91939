/*
 * cordon-init (SP-8, SP-17, API-4): pid 1 of each run's pid namespace.
 * A pid namespace's init gets no signal it has no handler for, so an
 * agent run as pid 1 ignored the spawner's SIGTERM.  This program, exec'd
 * by the spawn helper after the sandbox is in place (it holds exactly the
 * agent's layers), forks the agent and then only waits: it reaps every
 * process re-parented to it, passes SIGTERM, SIGINT and SIGHUP on to every
 * other process of the namespace (kill(-1)), and once the agent is gone
 * kills what is left, reports the agent's wait status and exits.
 *
 *   cordon-init SPAWNFD STATUSFD PATH ARGV0 [ARGS...]
 *
 * SPAWNFD is the spawn helper's status pipe: the init says there that it
 * runs (SPAWN_STEP_INIT), then the agent's execve closes it (or its
 * failure is written there, as the helper itself would), so the spawner
 * learns that the agent started exactly as without an init.
 *
 * STATUSFD is a socket.  AU-6: the agent is forked only once one go byte
 * (SPAWN_INIT_GO) was read there, which the spawner sends once the run's
 * agent.invoke is acknowledged (at once for children with no record to
 * wait for); EOF or anything else, and the init exits without ever
 * forking.  It then receives the agent's raw wait status, one int, just
 * before exit: pid 1 cannot die of the agent's signal (a namespace init
 * ignores even its own default-action signals), so the spawner reads the
 * agent's status there and the init's own exit code is only a fallback
 * (the agent's, or 128 + its signal).  Environment: passed to the agent
 * unchanged.  No libc state beyond the calls below, no allocation, no
 * file opened: only the descriptors it was given.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "spawn_helper.h"

extern char **environ;

static int
fd_arg(const char *s)
{
	long v = 0;

	if (s[0] == '-' && s[1] == '1' && s[2] == '\0')
		return -1;
	if (*s == '\0')
		return -2;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > 65535)
			return -2;
		v = v * 10 + (*s - '0');
	}
	return v > 65535 ? -2 : (int)v;
}

/* Reap whatever is a zombie now; the agent's status into *st. */
static int
reap(pid_t agent, int *st)
{
	pid_t pid;
	int s, gone = 0;

	while ((pid = waitpid(-1, &s, WNOHANG)) > 0)
		if (pid == agent) {
			*st = s;
			gone = 1;
		}
	return gone;
}

int
main(int argc, char **argv)
{
	struct spawn_status ss = {SPAWN_STEP_INIT, 0};
	sigset_t set, none;
	siginfo_t si;
	pid_t agent;
	int sfd, xfd, st = 0;
	char go = 0;

	if (argc < 5 || (sfd = fd_arg(argv[1])) < 0 ||
	    (xfd = fd_arg(argv[2])) < 0 || argv[3][0] != '/')
		return 127;
	/*
	 * SBX-4: out of the agent's reach.  The agent runs with our uid, so
	 * while we were dumpable it could take STATUSFD (pidfd_getfd) and
	 * write any wait status there first, or read our memory and fds.
	 * Not dumpable, only a holder of CAP_SYS_PTRACE in the run's user
	 * namespace may; the agent has none.  Its exec makes it dumpable.
	 */
	if (prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L) == -1)
		return 127;
	/* Every signal waits for sigwaitinfo: no handler ever runs here. */
	sigfillset(&set);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &set, NULL) == -1 ||
	    fcntl(sfd, F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(xfd, F_SETFD, FD_CLOEXEC) == -1)
		return 127;
	/* AU-6: running, and nothing forked until the go (fail closed). */
	if (write(sfd, &ss, sizeof(ss)) != (ssize_t)sizeof(ss) ||
	    read(xfd, &go, 1) != 1 || go != SPAWN_INIT_GO)
		return 127;
	if ((agent = fork()) == -1) {
		ss.ss_step = SPAWN_STEP_FORK;
		ss.ss_errno = errno;
		(void)!write(sfd, &ss, sizeof(ss));
		return 127;
	}
	if (agent == 0) {
		sigprocmask(SIG_SETMASK, &none, NULL);
		execve(argv[3], argv + 4, environ);
		ss.ss_step = SPAWN_STEP_EXEC;
		ss.ss_errno = errno != 0 ? errno : EIO;
		(void)!write(sfd, &ss, sizeof(ss));
		_exit(127);
	}
	/* Hold nothing of the run's: its pipes close when the agent's do. */
	fd_close_range(0, xfd - 1);
	fd_close_range(xfd + 1, (int)(~0U >> 1));
	for (;;) {
		if (sigwaitinfo(&set, &si) == -1)
			continue;
		if (si.si_signo == SIGCHLD) {
			if (reap(agent, &st))
				break;
		} else if (si.si_signo == SIGTERM || si.si_signo == SIGINT ||
			   si.si_signo == SIGHUP)
			(void)kill(-1, si.si_signo); /* all but ourselves */
	}
	/* SP-17: nothing of the run outlives its agent. */
	(void)kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	(void)!write(xfd, &st, sizeof(st));
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}
