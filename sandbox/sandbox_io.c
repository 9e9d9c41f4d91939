/*
 * The parent's side of a sandboxed child (sandbox/sandbox_*.c), shared by
 * the spawner's runs, actions and probes and by `cordon agent login`
 * (supervisor/login_cli.c): the rlimits a child gets (SP-7), the
 * descriptors it hands back before execve, and the answer to a call its
 * seccomp layer hands over.  Touches only the descriptors it is given.
 */
#include <sys/resource.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

#include "ipc.h"
#include "sandbox.h"
#include "util.h"

size_t
sandbox_rlimits(const struct mf_limits *lim, unsigned int layers,
    struct spawn_rlimit rl[SBX_RLIMITS_MAX])
{
	size_t n = 0;

	/*
	 * RLIMIT_NPROC counts the processes of a uid in a user namespace
	 * (and is checked level by level up the namespaces), so in a run's
	 * own user namespace it bounds that run alone.  Outside one it would
	 * count every process of the operator: not set then.  The kernel
	 * never applies it to uid 0: there the run's own pids cgroup bounds
	 * it, and a root parent without one refuses.
	 */
	if (layers & SBX_L_USERNS) {
		rl[n].sl_resource = RLIMIT_NPROC;
		rl[n++].sl_value = lim->l_nproc;
	}
	rl[n].sl_resource = RLIMIT_CPU;
	rl[n++].sl_value = lim->l_cpu_sec;
	rl[n].sl_resource = RLIMIT_FSIZE;
	rl[n++].sl_value = lim->l_file_bytes;
	rl[n].sl_resource = RLIMIT_NOFILE;
	rl[n++].sl_value = lim->l_nofile;
	rl[n].sl_resource = RLIMIT_CORE;
	rl[n++].sl_value = 0;
	if (lim->l_mem_bytes != 0) {
		rl[n].sl_resource = RLIMIT_DATA; /* not AS: V8 (SP-7) */
		rl[n++].sl_value = lim->l_mem_bytes;
	}
	return n;
}

int
sandbox_recv_fds(int sock, int *notify, int *gatedir, int *proxy)
{
	size_t nfds;
	ssize_t n;
	char c;
	int fd, *to;

	set_nonblock(sock, 1);
	for (;;) {
		nfds = 0;
		fd = -1;
		n = ipc_recvmsg_fds(sock, &c, 1, &fd, &nfds, 1);
		if (n == 0 || (n == -1 && errno == EAGAIN))
			return 0;
		to = c == 'n'	? notify
		     : c == 'g' ? gatedir
		     : c == 'p' ? proxy
				: NULL;
		if (n != 1 || nfds != 1 || to == NULL || *to != -1) {
			if (nfds == 1)
				close(fd);
			return -1;
		}
		*to = fd;
	}
}

void
sandbox_syscall_name(uint32_t arch, long nr, char *out, size_t outsz)
{
	char *name = NULL;

	if (nr >= 0 && nr < 4096)
		name = seccomp_syscall_resolve_num_arch(arch, (int)nr);
	snprintf(out, outsz, "seccomp: %s", name != NULL ? name : "unknown");
	free(name);
}

int
sandbox_notify_answer(int listener, char *name, size_t namesz)
{
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	struct pollfd pfd;

	if (seccomp_notify_alloc(&req, &resp) != 0)
		return SBX_NOTIFY_FAILED;
	if (seccomp_notify_receive(listener, req) != 0) {
		/* Every filter user is gone (POLLHUP): stop listening.  A
		 * caller that died before we read is no reason to. */
		pfd.fd = listener;
		pfd.events = POLLIN;
		pfd.revents = 0;
		seccomp_notify_free(req, resp);
		if (poll(&pfd, 1, 0) == 1 &&
		    (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)))
			return SBX_NOTIFY_GONE;
		return SBX_NOTIFY_NONE;
	}
	/*
	 * The caller dies before its call returns: killed while it waits
	 * here (it cannot exit meanwhile, so its pid is still its own), it
	 * never runs another instruction once the answer wakes it.
	 */
	(void)kill((pid_t)req->pid, SIGKILL);
	resp->id = req->id;
	resp->val = 0;
	resp->error = -EPERM;
	resp->flags = 0;
	(void)seccomp_notify_respond(listener, resp);
	sandbox_syscall_name(req->data.arch, req->data.nr, name, namesz);
	seccomp_notify_free(req, resp);
	return SBX_NOTIFY_REFUSED;
}
