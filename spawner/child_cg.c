/*
 * Each run's own pids cgroup (SP-7): run.N beneath the group cordond
 * delegated, made before the child starts and removed after it ends,
 * without ever waiting in the event loop for a slow process to go.
 * Touches only the run.N groups beneath the delegated cgroup.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <event2/event.h>

#include "cgroup.h"
#include "log.h"
#include "spawner.h"
#include "util.h"

/*
 * SP-7: the run's own group, run.N with pids.max = limits.nproc, and an
 * fd of its cgroup.procs for the child to join through before execve.
 * Without a delegated cgroup a spawner running as root (outside
 * systemd) refuses the run: RLIMIT_NPROC does not bind uid 0.
 * 0 with *procs set (or -1 when no group is used), or -1 with errno
 * set: refused.
 */
int
aproc_cgroup_make(struct aproc *ap, const struct mf_limits *lim, int *procs)
{
	static unsigned long seq;
	int i, dfd = -1;

	*procs = -1;
	if (sp.sp_cgfd == -1) {
		if (!sbx_host.sh_pids_required)
			return 0;
		errno = ENODEV;
		return -1;
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
		return -1;
	}
	/* Where the memory controller reaches the group, it bounds the run
	 * as a whole; RLIMIT_DATA bounds each process either way. */
	if (cgroup_set_memory(dfd, lim->l_mem_bytes) == -1) {
		i = errno;
		close(dfd);
		aproc_cgroup_end(ap);
		errno = i;
		return -1;
	}
	*procs = openat(dfd, "cgroup.procs", O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	i = errno;
	close(dfd);
	if (*procs == -1) {
		aproc_cgroup_end(ap);
		errno = i;
		return -1;
	}
	return 0;
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
void
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
