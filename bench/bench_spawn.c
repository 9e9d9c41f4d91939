/*
 * bench_spawn: cordon's one spawn helper (vfork-style clone, fd map,
 * close the rest, execve) against a floor measured in the same run: posix_spawn
 * of the same binary.  Then the per-run sandbox (SBX-1 ... SBX-5) on top of the
 * helper: the default agent sandbox (Landlock, network none: user + net
 * namespaces, seccomp) and namespace isolation (+ mount and pid
 * namespaces, read-only view, private /tmp, fresh /proc), each with its
 * per-run tmp made and removed, against the unsandboxed helper of the
 * same run.  All wait for the child.  Prints the ratios.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_sandbox.h"
#include "bench_util.h"
#include "log.h"
#include "spawn_helper.h"

extern char **environ;

/* Total seconds of n sandboxed spawns, or -1. */
static double
sandbox_total(enum mf_isolation iso, long n)
{
	double *secs, sum = 0;
	long i;

	if ((secs = calloc((size_t)n, sizeof(*secs))) == NULL ||
	    bench_sandbox_spawns(iso, n, secs) == -1) {
		free(secs);
		return -1;
	}
	for (i = 0; i < n; i++)
		sum += secs[i];
	free(secs);
	return sum;
}

int
main(int argc, char **argv)
{
	struct spawn_req req;
	long i, n = argc > 1 ? atol(argv[1]) : 300;
	double t0, floor_s, helper_s, ll_s, ns_s;
	pid_t pid;
	int st;

	if (n <= 0)
		n = 300;
	bench_true_req(&req);
	t0 = bench_now();
	for (i = 0; i < n; i++) {
		if (posix_spawn(&pid, req.sr_path, NULL, NULL, req.sr_argv,
			req.sr_envp))
			return 1;
		waitpid(pid, &st, 0);
	}
	floor_s = bench_now() - t0;
	t0 = bench_now();
	for (i = 0; i < n; i++) {
		if ((pid = spawn_exec(&req)) == -1)
			return 1;
		waitpid(pid, &st, 0);
	}
	helper_s = bench_now() - t0;
	printf("spawns               %ld\n", n);
	printf(
	    "floor posix_spawn    %.3f ms/spawn\n", floor_s / (double)n * 1e3);
	printf(
	    "spawn_exec helper    %.3f ms/spawn\n", helper_s / (double)n * 1e3);
	printf("ratio helper/floor   %.2f\n", helper_s / floor_s);

	log_init("bench_spawn", 0);
	ll_s = sandbox_total(MF_ISO_LANDLOCK, n);
	ns_s = sandbox_total(MF_ISO_NAMESPACE, n);
	if (ll_s < 0 || ns_s < 0)
		return 1;
	printf("sandbox landlock     %.3f ms/spawn (userns, netns, caps, "
	       "no_new_privs, landlock, seccomp, private tmp)\n",
	    ll_s / (double)n * 1e3);
	printf("sandbox namespace    %.3f ms/spawn (+ mountns, pidns, "
	       "read-only view, /tmp, /proc)\n",
	    ns_s / (double)n * 1e3);
	printf("ratio landlock/helper  %.2f\n", ll_s / helper_s);
	printf("ratio namespace/helper %.2f\n", ns_s / helper_s);
	(void)environ;
	return 0;
}
