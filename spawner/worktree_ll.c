/*
 * Worktree runs (MC-2): the Landlock ruleset of every git step the
 * spawner runs for a worktree (clone, checkout, the later steps, the
 * summary's diff), made from the run's plan: read and execute on the
 * system paths every agent gets (the sandbox's one table), read on the
 * agent's read roots and the write root that holds the repository, read
 * and write on the worktree's own dir beneath --state-dir/worktrees,
 * read and execute on the program run.  A .git that names objects or
 * refs elsewhere (alternates or a commondir added while its checks and
 * its checkout race) then cannot be read, whatever the timing.  The
 * rules are made in the spawner; the spawn helper's hook applies them
 * in the child before execve, and a ruleset that cannot be applied
 * fails the step (fail closed).  Touches nothing: the child opens each
 * path O_PATH only to name it to the kernel.
 */
#include <errno.h>
#include <string.h>

#include "confine.h"
#include "sandbox.h"
#include "util.h"
#include "worktree.h"
#include "worktree_int.h"

static int
wt_ll_add(struct wt_ll *ll, const char *path, unsigned int access)
{
	if (ll->ll_npaths == nitems(ll->ll_paths)) {
		errno = E2BIG;
		return -1;
	}
	ll->ll_paths[ll->ll_npaths].cp_path = path;
	ll->ll_paths[ll->ll_npaths++].cp_access = access;
	return 0;
}

int
wt_ll_rules(const struct wt *w, const char *bin, struct wt_ll *ll)
{
	const struct confine_path *sys;
	const struct roots *rt = &w->w_plan.pl_roots;
	size_t i, n;

	memset(ll, 0, sizeof(*ll));
	/* Fail closed: no Landlock, no git of ours on the agent's repo. */
	if (sbx_host.sh_landlock_abi < 1) {
		errno = EOPNOTSUPP;
		return -1;
	}
	ll->ll_flags = CONFINE_RS_QUIET | CONFINE_RS_LOG_EXEC;
	if (sbx_host.sh_landlock_abi >= 4) /* git here needs no network */
		ll->ll_flags |= CONFINE_RS_NO_NET;
	sys = sandbox_system_paths(&n);
	for (i = 0; i < n; i++)
		if (wt_ll_add(ll, sys[i].cp_path, sys[i].cp_access) == -1)
			return -1;
	/* The plan's read roots: the agent's, and the one holding repo. */
	for (i = 0; i < rt->r_nread; i++)
		if (wt_ll_add(ll, rt->r_read[i], CONFINE_LL_READ) == -1)
			return -1;
	if (wt_ll_add(ll, w->w_dir, CONFINE_LL_READ | CONFINE_LL_WRITE) == -1 ||
	    wt_ll_add(ll, bin, CONFINE_LL_READ | CONFINE_LL_EXEC) == -1)
		return -1;
	return 0;
}

int
wt_ll_child(void *arg)
{
	const struct wt_ll *ll = arg;
	int fd;

	/* Landlock without CAP_SYS_ADMIN needs it; git needs no setuid. */
	if (confine_no_new_privs() == -1)
		return SBX_STEP_NNP;
	if ((fd = confine_landlock_ruleset(
		 ll->ll_paths, ll->ll_npaths, ll->ll_flags)) == -1)
		return SBX_STEP_LL_RULESET;
	if (confine_landlock_restrict(fd, ll->ll_flags) == -1)
		return SBX_STEP_LL_RESTRICT;
	return 0;
}
