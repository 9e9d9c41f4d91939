/*
 * Confinement, the ids and capabilities layer (SU-2): the service user,
 * every capability set dropped and proved gone, no_new_privs.  Touches
 * only this process.
 */
#include "config.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cap-ng.h>
#include <json-c/json.h>
#include <seccomp.h>

#include "confine.h"
#include "landlock_abi.h"
#include "log.h"
#include "confine_impl.h"
#include "util.h"

/* Capabilities */

int
cap_read(uint64_t *eff, uint64_t *prm, uint64_t *inh)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];

	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, data) == -1)
		return -1;
	if (eff != NULL)
		*eff = (uint64_t)data[1].effective << 32 | data[0].effective;
	if (prm != NULL)
		*prm = (uint64_t)data[1].permitted << 32 | data[0].permitted;
	if (inh != NULL)
		*inh =
		    (uint64_t)data[1].inheritable << 32 | data[0].inheritable;
	return 0;
}

/* Returns the number of caps still set by prctl(op, cap), or -1. */
static int
cap_count_prctl(int op, int arg2)
{
	int cap, n = 0, r;

	for (cap = 0; cap < 64; cap++) {
		if (arg2)
			r = prctl(op, arg2, cap, 0, 0);
		else
			r = prctl(op, cap, 0, 0, 0);
		if (r == -1 && errno == EINVAL)
			break; /* past the kernel's last capability */
		if (r == -1)
			return -1;
		n += r;
	}
	return n;
}

/*
 * Clearing the bounding set needs CAP_SETPCAP, which setresuid() away from
 * root takes away, so a daemon switching user does this first.
 */
int
cap_drop_bounding(void)
{
	if (capng_get_caps_process() != 0)
		return -1;
	capng_clear(CAPNG_SELECT_BOUNDS);
	if (capng_apply(CAPNG_SELECT_BOUNDS) != 0) {
		errno = EPERM;
		return -1;
	}
	if (cap_count_prctl(PR_CAPBSET_READ, 0) != 0) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

int
confine_drop_caps(void)
{
	uint64_t eff, prm, inh;
	int setpcap, sel;

	if (cap_read(&eff, NULL, NULL) == -1)
		return -1;
	/*
	 * libcap-ng keeps the pid it first saw and resets it only through
	 * pthread_atfork; a child made by a raw clone(2) must say who it is.
	 */
	capng_setpid((int)getpid());
	/*
	 * Without CAP_SETPCAP the bounding set cannot shrink; no_new_privs
	 * makes it irrelevant, since nothing can be gained through exec.
	 */
	setpcap = (eff >> CAP_SETPCAP) & 1;
	sel = CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT;
	if (setpcap)
		sel |= CAPNG_SELECT_BOUNDS;
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_apply(sel) != 0) {
		errno = EPERM;
		return -1;
	}

	if (cap_read(&eff, &prm, &inh) == -1)
		return -1;
	if (eff != 0 || prm != 0 || inh != 0 ||
	    cap_count_prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET) != 0 ||
	    (setpcap && cap_count_prctl(PR_CAPBSET_READ, 0) != 0)) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/*
 * The agent child's drop (SBX-1): the same sets as confine_drop_caps, by
 * raw syscalls.  A child of a raw clone(2) in a new pid namespace is pid
 * 1, which libcap-ng would look up in a /proc that may be the host's; and
 * this runs once per spawn.  Bounding set first (needs CAP_SETPCAP),
 * then ambient, then capset to nothing; proven after.  Logs nothing.
 */
int
confine_drop_caps_agent(void)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct d[2];
	int cap, setpcap, r;

	memset(&hdr, 0, sizeof(hdr));
	memset(d, 0, sizeof(d));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, d) == -1)
		return -1;
	/* Without CAP_SETPCAP the bounding set cannot shrink (see above). */
	setpcap = (d[0].effective >> CAP_SETPCAP) & 1;
	for (cap = 0; setpcap && cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1) {
			if (errno == EINVAL)
				break; /* past the kernel's last capability */
			return -1;
		}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == -1)
		return -1;
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &hdr, d) == -1)
		return -1;

	/*
	 * Proof.  Ambient needs no loop: the kernel keeps it a subset of
	 * permitted and inheritable (capabilities(7)), both read as 0 here.
	 */
	memset(d, 0xff, sizeof(d));
	if (syscall(SYS_capget, &hdr, d) == -1)
		return -1;
	if ((d[0].effective | d[1].effective | d[0].permitted | d[1].permitted |
		d[0].inheritable | d[1].inheritable) != 0) {
		errno = EPERM;
		return -1;
	}
	if (setpcap && (r = cap_count_prctl(PR_CAPBSET_READ, 0)) != 0) {
		if (r > 0)
			errno = EPERM;
		return -1;
	}
	return 0;
}

/* Identity */

int
confine_switch_user(uid_t uid, gid_t gid)
{
	uid_t ru, eu, su, old_uid;
	gid_t rg, eg, sg, old_gid, groups[2];

	if (uid == 0) {
		/* "Switching" to root would prove nothing below. */
		errno = EINVAL;
		return -1;
	}
	if (getresuid(&ru, &eu, &su) == -1 || getresgid(&rg, &eg, &sg) == -1)
		return -1;
	old_uid = eu;
	old_gid = eg;

	if (setgroups(1, &gid) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1)
		return -1;

	/* Prove the old identity cannot be regained (uidswap.c habit). */
	if (setresuid(0, 0, 0) != -1 ||
	    (old_uid != uid && setresuid(old_uid, old_uid, old_uid) != -1) ||
	    (old_gid != gid && setresgid(old_gid, old_gid, old_gid) != -1))
		goto regained;
	if (getresuid(&ru, &eu, &su) == -1 || getresgid(&rg, &eg, &sg) == -1)
		return -1;
	if (ru != uid || eu != uid || su != uid || rg != gid || eg != gid ||
	    sg != gid)
		goto regained;
	if (getgroups((int)nitems(groups), groups) != 1 || groups[0] != gid)
		goto regained;
	return 0;

regained:
	errno = EPERM;
	return -1;
}

int
confine_no_new_privs(void)
{
	/*
	 * Not dumpable either: no core file with secrets in it, and a
	 * process of the same uid cannot ptrace us or read /proc/PID/environ
	 * or mem.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return -1;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		errno = EPERM;
		return -1;
	}
	return 0;
}
