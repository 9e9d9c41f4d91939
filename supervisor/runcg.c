/*
 * The pids cgroup of agent runs (SP-7), made by cordond as root and
 * delegated to the spawner.  Touches only the pids hierarchy: cordond's
 * own group there and cordon.<pidns>.<pid> beneath it.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <unistd.h>

#include "cgroup.h"
#include "cordond.h"
#include "log.h"

/* cordond's own pids cgroup dir, and cordon.<pidns>.<pid> in it. */
static int cg_parent = -1;
static int cg_fd = -1;
static char cg_name[64];

/*
 * As root: make cordon.<pidns>.<pid> beneath cordond's own cgroup in the pids
 * hierarchy and delegate it to the spawner (its uid owns it), which
 * makes one child group per run with pids.max = limits.nproc.  Without
 * one, a spawner running as root refuses every run (it says so in
 * health); a spawner with its own uid keeps RLIMIT_NPROC in each run's
 * user namespace.
 */
/* Who gets the group: user's uid, else root.  0, or -1 when there is
 * no group to make for it (said). */
static int
runcg_owner(const char *user, int kind, uid_t *uid, gid_t *gid)
{
	struct passwd *pw;

	*uid = 0;
	*gid = 0;
	if (user == NULL)
		return 0;
	if ((pw = getpwnam(user)) == NULL) {
		log_warnx("pids cgroup: unknown user; not delegated");
		return -1;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	/*
	 * cgroup2 lets a process move another only with write access to
	 * the common ancestor's cgroup.procs: ours, root's.  The spawner
	 * keeps RLIMIT_NPROC in each run's user namespace.
	 */
	if (kind == CGROUP_V2 && *uid != 0) {
		log_info("pids cgroup: cgroup2 is not delegated to "
			 "an unprivileged spawner");
		return -1;
	}
	return 0;
}

int
runcg_setup(const char *user)
{
	char dir[PATH_MAX], prefix[40];
	struct stat nst;
	uid_t uid;
	gid_t gid;
	/* What a spawner without the group does instead. */
	const char *then =
	    user == NULL ? "agent runs are refused"
			 : "runs keep RLIMIT_NPROC in their user namespace";
	int kind;

	if (getuid() != 0)
		return -1;
	if (cgroup_find_pids(dir, sizeof(dir), &kind) == -1) {
		log_warnx("no pids cgroup hierarchy: %s (SP-7)", then);
		return -1;
	}
	if (runcg_owner(user, kind, &uid, &gid) == -1)
		return -1;
	if ((cg_parent = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		log_warn("pids cgroup: open");
		return -1;
	}
	/*
	 * cordon.<pidns>.<pid>: a pid means something only in its own pid
	 * namespace, and cordons in other namespaces (containers, chroots
	 * with their own /proc) share this hierarchy.  Only the groups of
	 * our namespace whose cordond was killed with -9 are swept, once
	 * empty; another namespace's groups are never touched.
	 */
	if (stat("/proc/self/ns/pid", &nst) == -1)
		nst.st_ino = 0;
	snprintf(
	    prefix, sizeof(prefix), "cordon.%lu.", (unsigned long)nst.st_ino);
	if (cgroup_sweep(cg_parent, prefix, 1) > 0)
		log_warnx("pids cgroups of dead cordons still hold processes; "
			  "left in place");
	snprintf(cg_name, sizeof(cg_name), "%s%d", prefix, (int)getpid());
	if ((kind == CGROUP_V2 && cgroup_enable_pids(cg_parent) == -1) ||
	    cgroup_make(cg_parent, cg_name, 0, &cg_fd) == -1) {
		log_warn("pids cgroup: cannot make cordon's group (%s)", then);
		cg_fd = -1;
		goto fail;
	}
	if (kind == CGROUP_V2 && cgroup_enable_pids(cg_fd) == -1) {
		log_warn("pids cgroup: cannot enable pids for runs (%s)", then);
		goto fail_rm;
	}
	/*
	 * The directory only: the spawner makes and removes run groups in
	 * it.  cordon.<pidns>.<pid>'s own cgroup.procs stays root's, so nothing
	 * of that uid can move a process into it, out of its run's bound.
	 */
	if (uid != 0 && fchown(cg_fd, uid, gid) == -1) {
		log_warn("pids cgroup: chown (%s)", then);
		goto fail_rm;
	}
	log_debug("pids cgroup delegated to the spawner");
	return cg_fd;
fail_rm:
	close(cg_fd);
	cg_fd = -1;
	(void)cgroup_remove(cg_parent, cg_name, 0);
fail:
	close(cg_parent);
	cg_parent = -1;
	return -1;
}

/* After the spawner stopped: end whatever is left, remove the group. */
void
runcg_teardown(void)
{
	if (cg_fd == -1)
		return;
	close(cg_fd);
	cg_fd = -1;
	if (cgroup_remove(cg_parent, cg_name, 0) == -1)
		log_warn("pids cgroup: removing cordon's group");
	close(cg_parent);
	cg_parent = -1;
}
