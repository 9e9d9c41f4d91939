/*
 * The spawn helper's hook (SBX-1 ... SBX-5), run in the child between
 * clone and execve, in this order: the run's pids cgroup, user
 * namespace ids, mounts (sandbox_mnt.c) or the secret-file scan alone
 * (sandbox_scan.c), a proxy run's listener, capabilities,
 * no_new_privs, Landlock, the agent's seccomp layer.  It logs nothing
 * and allocates nothing; a failed step returns its code with errno set
 * (fail closed), named for the spawner by sandbox_step_name.
 */
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/filter.h>

#include "confine.h"
#include "ipc.h"
#include "msg.h"
#include "sandbox.h"
#include "sandbox_int.h"
#include "util.h"

/* clang-format off */
static const char *const sbx_step_names[] = {
	[SBX_STEP_UIDMAP - SPAWN_STEP_HOOK_BASE] = "uid_map",
	[SBX_STEP_PRIVATE - SPAWN_STEP_HOOK_BASE] = "mount private",
	[SBX_STEP_ROOT - SPAWN_STEP_HOOK_BASE] = "root",
	[SBX_STEP_READONLY - SPAWN_STEP_HOOK_BASE] = "mount_setattr readonly",
	[SBX_STEP_WRITABLE - SPAWN_STEP_HOOK_BASE] = "mount_setattr writable",
	[SBX_STEP_TMP - SPAWN_STEP_HOOK_BASE] = "private tmp",
	[SBX_STEP_PROC - SPAWN_STEP_HOOK_BASE] = "mount proc",
	[SBX_STEP_SCAN_BOUND - SPAWN_STEP_HOOK_BASE] = "secret scan bound",
	[SBX_STEP_SECRET_FILE - SPAWN_STEP_HOOK_BASE] =
	    "secret-looking file under a write root",
	[SBX_STEP_SHADOW - SPAWN_STEP_HOOK_BASE] = "shadow secret file",
	[SBX_STEP_CHDIR - SPAWN_STEP_HOOK_BASE] = "chdir",
	[SBX_STEP_CAPS - SPAWN_STEP_HOOK_BASE] = "capabilities",
	[SBX_STEP_NNP - SPAWN_STEP_HOOK_BASE] = "no_new_privs",
	[SBX_STEP_LL_RULESET - SPAWN_STEP_HOOK_BASE] =
	    "landlock_create_ruleset",
	[SBX_STEP_LL_RESTRICT - SPAWN_STEP_HOOK_BASE] =
	    "landlock_restrict_self",
	[SBX_STEP_SECCOMP - SPAWN_STEP_HOOK_BASE] = "seccomp",
	[SBX_STEP_NOTIFY - SPAWN_STEP_HOOK_BASE] = "seccomp listener",
	[SBX_STEP_HIDE - SPAWN_STEP_HOOK_BASE] = "hide socket dir",
	[SBX_STEP_CGROUP - SPAWN_STEP_HOOK_BASE] = "pids cgroup",
	[SBX_STEP_GATE - SPAWN_STEP_HOOK_BASE] = "gate fifo dir",
	[SBX_STEP_PROXY - SPAWN_STEP_HOOK_BASE] = "proxy listener",
	[SBX_STEP_HOOKCFG - SPAWN_STEP_HOOK_BASE] =
	    "hook config read-only",
	[SBX_STEP_RUNDIR - SPAWN_STEP_HOOK_BASE] = "cover /run",
	[SBX_STEP_HOMEDIR - SPAWN_STEP_HOOK_BASE] = "cover protected dirs",
};
/* clang-format on */

const char *
sandbox_step_name(int step)
{
	int i = step - SPAWN_STEP_HOOK_BASE;

	if (step < SPAWN_STEP_HOOK_BASE)
		return spawn_step_name(step);
	if (i > 0 && i < (int)nitems(sbx_step_names))
		return sbx_step_names[i];
	return NULL;
}

/* ---- the child: no logging, no allocation ---- */

static int
write_file(const char *path, const char *s)
{
	size_t len = strlen(s);
	int fd, r;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	r = write(fd, s, len) == (ssize_t)len ? 0 : -1;
	if (r == -1 && errno == 0)
		errno = EIO;
	close(fd);
	return r;
}

/*
 * Map our own ids.  Root without capabilities may not map uid 0 (the
 * kernel asks for CAP_SETFCAP), so as root the ids stay unmapped: the
 * agent sees itself as the overflow uid and still owns its files as 0.
 */
static int
child_idmap(const struct sandbox_run *sx)
{
	char buf[64];
	int r, e;

	if (sx->sx_uid == 0)
		return 0;
	/*
	 * The spawner is not dumpable, so /proc/self of its child belongs to
	 * root: be dumpable while writing the maps.  The flag belongs to
	 * the memory, which this child shares with the spawner, so for
	 * these three writes the spawner is dumpable too (a process of the
	 * same uid could attach then: threat-model.md, same-uid attacks).
	 */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == -1)
		return -1;
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)sx->sx_uid,
	    (unsigned)sx->sx_uid);
	r = write_file("/proc/self/setgroups", "deny") == -1 ||
		    write_file("/proc/self/uid_map", buf) == -1
		? -1
		: 0;
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)sx->sx_gid,
	    (unsigned)sx->sx_gid);
	if (r == 0 && write_file("/proc/self/gid_map", buf) == -1)
		r = -1;
	/*
	 * Dumpable is the memory's, and the child shares the spawner's
	 * (CLONE_VM): never leave it set, whatever failed.
	 */
	e = errno;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		return -1;
	errno = e;
	return r;
}

/*
 * EG-1, in the child of a proxy run (its own empty netns, its caps in
 * its own user namespace): bring up lo, listen on 127.0.0.1:3128 and
 * hand the listener to the spawner, which gives it to egressd.  Stack
 * and syscalls only (the spawn helper is vfork-style).
 */
static int
child_proxy(void)
{
	struct sockaddr_in sin;
	struct ifreq ifr;
	int s, fd, r;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	r = ioctl(s, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (r == 0)
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	close(s);
	if (r == -1 ||
	    (fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(EGRESS_PROXY_PORT);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r = bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
		    listen(fd, 64) == 0 &&
		    ipc_sendmsg_fd(SBX_NOTIFY_FD, "p", 1, fd) == 1
		? 0
		: -1;
	close(fd);
	return r;
}

int
sandbox_child(void *arg)
{
	const struct sandbox_run *sx = arg;
	unsigned int l = sx->sx_plan->pl_layers, rs;
	int fd, r;

	/*
	 * SP-7 first: every process the agent (or this hook) makes is
	 * counted against the run's pids.max.  "0" is the writer itself.
	 */
	if (sx->sx_cgroup) {
		r = write(SBX_CGROUP_FD, "0", 1);
		if (r != 1) {
			if (r != -1)
				errno = EIO;
			return SBX_STEP_CGROUP;
		}
		close(SBX_CGROUP_FD);
	}
	if ((sx->sx_clone & CLONE_NEWUSER) && child_idmap(sx) == -1)
		return SBX_STEP_UIDMAP;
	if (sx->sx_clone & CLONE_NEWNS) {
		if ((r = sbx_child_mounts(sx)) != 0)
			return r;
	} else if (sx->sx_plan->pl_cfgcli != AGENT_CLI_NONE) {
		/* SBX-8: no view of its own, no read-only hook config. */
		errno = ENOTSUP;
		return SBX_STEP_HOOKCFG;
	} else if ((r = sbx_scan_roots(sx, 0, -1)) != 0)
		return r; /* Landlock cannot carve a hole: refuse (SBX-2) */
	/* EG-1: while the child still holds its namespace's caps. */
	if (sx->sx_plan->pl_network == MF_NET_PROXY && child_proxy() == -1)
		return SBX_STEP_PROXY;
	if ((l & SBX_L_CAPS) && confine_drop_caps_agent() == -1)
		return SBX_STEP_CAPS;
	if ((l & SBX_L_NNP) && confine_no_new_privs() == -1)
		return SBX_STEP_NNP;
	if (l & SBX_L_LANDLOCK) {
		rs = CONFINE_RS_QUIET | CONFINE_RS_LOG_EXEC;
		if (l & SBX_L_LL_NET)
			rs |= CONFINE_RS_NO_NET;
		if ((fd = confine_landlock_ruleset(
			 sx->sx_paths, sx->sx_npaths, rs)) == -1)
			return SBX_STEP_LL_RULESET;
		if (confine_landlock_restrict(fd, rs) == -1)
			return SBX_STEP_LL_RESTRICT;
	}
	if (l & SBX_L_SECCOMP) {
		/* Compiled at start; loading it is one syscall. */
		fd = confine_seccomp_agent_install(
		    &sbx_bpf[(l & SBX_L_SC_NET) ? sx->sx_plan->pl_network
						: MF_NET_ALLOW]);
		if (fd == -1)
			return SBX_STEP_SECCOMP;
		/* The listener goes to the spawner; the agent never has it. */
		r = ipc_sendmsg_fd(SBX_NOTIFY_FD, "n", 1, fd) == 1 ? 0 : -1;
		close(fd);
		if (r == -1)
			return SBX_STEP_NOTIFY;
	}
	/* The way back for the listener, the gate dir and the proxy: done. */
	close(SBX_NOTIFY_FD);
	return 0;
}
