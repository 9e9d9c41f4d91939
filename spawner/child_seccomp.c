/*
 * A run's seccomp layer seen from the spawner: the calls its filter
 * hands us are refused, named and end the run; a child killed by SIGSYS
 * gets the call named as far as the kernel still tells.  Touches only
 * the run's listener and /proc/PID/syscall.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <seccomp.h>

#include "log.h"
#include "sandbox.h"
#include "spawner.h"

/* "seccomp: NAME" for a syscall number of this architecture. */
void
aproc_name_syscall(struct aproc *ap, uint32_t arch, long nr)
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
void
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
	aproc_name_syscall(ap, SCMP_ARCH_NATIVE, nr);
}

/*
 * A call the agent's seccomp layer hands us (ptrace, bpf, ...): refuse
 * it, name it, end the run.  Only the name leaves the spawner.
 */
void
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
