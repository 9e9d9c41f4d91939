/*
 * Confinement, the Landlock layer (SU-2, SBX-1): the ABI probe, the
 * ruleset built from path fds opened with the caller's ids, and
 * restrict_self.  Touches only this process and the paths it is given
 * (opened O_PATH).
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

/* Landlock state, recorded here so confine_status_json() needs no probe. */
int ll_abi = -2;  /* -2: not probed yet, -1: unavailable */
int ll_abi_errno; /* why the probe failed */
int ll_on;	  /* restrict_self succeeded */

/* Landlock */

int
confine_landlock_abi(void)
{
	int abi;

	if (ll_abi != -2)
		return ll_abi;
	abi = cordon_landlock_create_ruleset(
	    NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1) {
		ll_abi_errno = abi == -1 ? errno : EOPNOTSUPP;
		ll_abi = -1;
	} else
		ll_abi = abi;
	return ll_abi;
}

const char *
ll_unavailable_why(int err)
{
	switch (err) {
	case ENOSYS:
		return "kernel built without CONFIG_SECURITY_LANDLOCK";
	case EOPNOTSUPP:
		return "Landlock not enabled at boot (add it to lsm=)";
	default:
		return strerror(err);
	}
}

/* Every filesystem right this ABI can restrict. */
static __u64
ll_fs_handled(int abi)
{
	__u64 r = CORDON_LL_FS_ABI1;

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

/* No MAKE_SYM/CHAR/BLOCK/FIFO/SOCK: no daemon or agent needs them. */
static __u64
ll_fs_rights(unsigned int access)
{
	__u64 r = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;

	if (access & CONFINE_LL_WRITE)
		r |= LANDLOCK_ACCESS_FS_WRITE_FILE |
		     LANDLOCK_ACCESS_FS_REMOVE_DIR |
		     LANDLOCK_ACCESS_FS_REMOVE_FILE |
		     LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_DIR |
		     LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE;
	if (access & CONFINE_LL_EXEC)
		r |= LANDLOCK_ACCESS_FS_EXECUTE;
	return r;
}

/* The rule for one path, i-th of the caller's: 0 (a missing optional
 * path too), or -1 with errno set. */
static int
ll_add_path(int rsfd, const struct confine_path *p, size_t i, uint64_t handled,
    int quiet)
{
	struct cordon_landlock_path_beneath_attr pb;
	struct stat st;
	unsigned int known = CONFINE_LL_READ | CONFINE_LL_WRITE |
			     CONFINE_LL_EXEC | CONFINE_LL_OPTIONAL;
	int fd;

	if (p->cp_path == NULL || (p->cp_access & ~CONFINE_LL_OPTIONAL) == 0 ||
	    (p->cp_access & ~known) != 0) {
		if (!quiet)
			log_warnx("landlock: bad path rule %zu", i);
		errno = EINVAL;
		return -1;
	}
	if ((fd = open(p->cp_path, O_PATH | O_CLOEXEC)) == -1) {
		if (errno == ENOENT && (p->cp_access & CONFINE_LL_OPTIONAL))
			return 0;
		if (!quiet)
			log_warn("landlock: %s", p->cp_path);
		return -1;
	}
	memset(&pb, 0, sizeof(pb));
	pb.parent_fd = fd;
	pb.allowed_access = ll_fs_rights(p->cp_access) & handled;
	if (fstat(fd, &st) == -1) {
		if (!quiet)
			log_warn("landlock: fstat %s", p->cp_path);
		goto fail;
	}
	/* Directory-only rights on a file are EINVAL. */
	if (!S_ISDIR(st.st_mode))
		pb.allowed_access &= CORDON_LL_FS_FILE;
	if (cordon_landlock_add_rule(
		rsfd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) == -1) {
		if (!quiet)
			log_warn("landlock_add_rule %s", p->cp_path);
		goto fail;
	}
	close(fd);
	return 0;
fail:
	close_keep_errno(fd);
	return -1;
}

int
confine_landlock_ruleset(
    const struct confine_path *paths, size_t npaths, unsigned int flags)
{
	struct cordon_landlock_ruleset_attr ra;
	size_t i;
	int abi, rsfd, quiet = (flags & CONFINE_RS_QUIET) != 0;

	if ((abi = confine_landlock_abi()) < 1) {
		errno = ll_abi_errno;
		return -1;
	}
	if ((flags & CONFINE_RS_NO_NET) && abi < 4) {
		/* The caller requires this right: refuse, never weaken. */
		if (!quiet)
			log_warnx("landlock ABI %d cannot deny TCP (needs ABI "
				  "4)",
			    abi);
		errno = EOPNOTSUPP;
		return -1;
	}
	if (abi < 3 && !quiet)
		log_warnx("landlock ABI %d cannot restrict truncate()", abi);

	memset(&ra, 0, sizeof(ra));
	ra.handled_access_fs = ll_fs_handled(abi);
	if (flags & CONFINE_RS_NO_NET)
		ra.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP |
					LANDLOCK_ACCESS_NET_CONNECT_TCP;
	if (abi >= 6)
		ra.scoped =
		    LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	rsfd = cordon_landlock_create_ruleset(&ra, CORDON_LL_ATTR_SIZE(abi), 0);
	if (rsfd == -1) {
		if (!quiet)
			log_warn("landlock_create_ruleset");
		return -1;
	}

	for (i = 0; i < npaths; i++)
		if (ll_add_path(
			rsfd, &paths[i], i, ra.handled_access_fs, quiet) == -1)
			goto fail;
	return rsfd;

fail:
	close_keep_errno(rsfd);
	return -1;
}

int
confine_landlock_restrict(int rsfd, unsigned int flags)
{
	__u32 rf = 0;
	int r;

	/* ABI 7: log what the executed program is denied (SBX-1). */
	if ((flags & CONFINE_RS_LOG_EXEC) && confine_landlock_abi() >= 7)
		rf |= LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON;
	r = cordon_landlock_restrict_self(rsfd, rf);
	close_keep_errno(rsfd);
	return r == -1 ? -1 : 0;
}
