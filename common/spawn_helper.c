/*
 * The one spawn helper (see spawn.h).  fork+execve with an explicit fd map:
 * the child closes every descriptor it was not given, so a daemon or an
 * agent starts with exactly the fds its table names.
 */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawn_helper.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* Child side: async-signal-safe calls only. */
static void
spawn_child(const struct spawn_req *r, pid_t parent)
{
	sigset_t all;
	size_t i;
	int maxdst = 2, fd;

	/* Reset signal state the parent may have changed. */
	for (i = 1; i < NSIG; i++)
		if (i != SIGKILL && i != SIGSTOP)
			signal((int)i, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);

	if (r->sr_setsid && setsid() == -1)
		_exit(127);
	if (r->sr_pdeathsig) {
		if (prctl(PR_SET_PDEATHSIG, r->sr_pdeathsig) == -1)
			_exit(127);
		if (getppid() != parent)
			_exit(127);
	}
	/*
	 * Move every source fd above all destinations first, so that a
	 * mapping like {4->3, 3->4} cannot clobber a source.
	 */
	for (i = 0; i < r->sr_nfds; i++)
		if (r->sr_fds[i].sf_dst > maxdst)
			maxdst = r->sr_fds[i].sf_dst;
	int tmp[16];
	if (r->sr_nfds > 16)
		_exit(127);
	for (i = 0; i < r->sr_nfds; i++) {
		tmp[i] =
		    fcntl(r->sr_fds[i].sf_src, F_DUPFD_CLOEXEC, maxdst + 1);
		if (tmp[i] == -1)
			_exit(127);
	}
	for (i = 0; i < r->sr_nfds; i++)
		if (dup2(tmp[i], r->sr_fds[i].sf_dst) == -1)
			_exit(127);
	/* stdio not named in the map becomes /dev/null. */
	for (fd = 0; fd <= 2; fd++) {
		int named = 0;
		for (i = 0; i < r->sr_nfds; i++)
			if (r->sr_fds[i].sf_dst == fd)
				named = 1;
		if (!named) {
			int nul = open("/dev/null", O_RDWR);
			if (nul == -1 || (nul != fd && dup2(nul, fd) == -1))
				_exit(127);
			if (nul != fd)
				close(nul);
		}
	}
	if (syscall(SYS_close_range, (unsigned)maxdst + 1, ~0U, 0) == -1) {
		for (fd = maxdst + 1; fd < 65536; fd++)
			close(fd);
	}
	for (i = 0; i < r->sr_nrlimits; i++) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = (rlim_t)r->sr_rlimits[i].sl_value;
		if (setrlimit(r->sr_rlimits[i].sl_resource, &rl) == -1)
			_exit(127);
	}
	if (r->sr_set_umask)
		umask((mode_t)r->sr_umask);
	if (r->sr_cwd != NULL && chdir(r->sr_cwd) == -1)
		_exit(127);
	if (r->sr_hook != NULL && r->sr_hook(r->sr_hook_arg) != 0)
		_exit(127);
	execve(r->sr_path, r->sr_argv, r->sr_envp);
	_exit(127);
}

pid_t
spawn_exec(const struct spawn_req *r)
{
	pid_t pid, parent = getpid();

	if (r->sr_path == NULL || r->sr_path[0] != '/' || r->sr_argv == NULL ||
	    r->sr_envp == NULL || r->sr_nfds > 16) {
		errno = EINVAL;
		return -1;
	}
	switch ((pid = fork())) {
	case -1:
		return -1;
	case 0:
		spawn_child(r, parent);
		_exit(127);
	default:
		return pid;
	}
}
