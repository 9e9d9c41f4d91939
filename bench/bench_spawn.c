/*
 * bench_spawn: cordon's one spawn helper (fork, fd map, close the rest,
 * execve) against a floor measured in the same run: posix_spawn of the
 * same binary.  Then the per-run sandbox (SBX-1 ... SBX-5) on top of the
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
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "manifest.h"
#include "sandbox.h"
#include "spawn_helper.h"

extern char **environ;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One sandboxed spawn of /bin/true, as aproc_start does it. */
static int
sandboxed(const struct sandbox_plan *pl, struct spawn_req *base)
{
	struct sandbox_run sx;
	struct spawn_fd fds[2];
	struct spawn_req req = *base;
	int ns[2], st, rc = -1, nfd;
	pid_t pid;

	if (sandbox_run_prepare(&sx, pl, base->sr_path, "/", base->sr_envp) ==
	    -1)
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ns) == -1)
		goto out;
	fds[0] = base->sr_fds[0];
	fds[1].sf_src = ns[1];
	fds[1].sf_dst = SBX_NOTIFY_FD;
	nfd = 2;
	req.sr_fds = fds;
	req.sr_nfds = (size_t)nfd;
	req.sr_envp = sx.sx_envp;
	req.sr_clone_flags = sx.sx_clone;
	req.sr_hook = sandbox_child;
	req.sr_hook_arg = &sx;
	if ((pid = spawn_exec(&req)) != -1 && waitpid(pid, &st, 0) == pid &&
	    WIFEXITED(st) && WEXITSTATUS(st) == 0)
		rc = 0;
	close(ns[0]);
	close(ns[1]);
out:
	sandbox_run_end(&sx);
	return rc;
}

static double
bench_sandbox(enum mf_isolation iso, long n, struct spawn_req *req)
{
	struct protect_ctx pc;
	struct sandbox_plan pl;
	struct manifest mf;
	char home[4096], why[256];
	double t0;
	long i;

	memset(&mf, 0, sizeof(mf));
	mf.m_sandbox.sb_present = 1;
	mf.m_sandbox.sb_isolation = iso;
	mf.m_sandbox.sb_network = MF_NET_NONE;
	mf.m_sandbox.sb_required = 1;
	if (roots_protect_init(&pc, home, sizeof(home)) == -1 ||
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)) == -1) {
		fprintf(stderr, "bench_spawn: no sandbox plan: %s\n", why);
		return -1;
	}
	t0 = now();
	for (i = 0; i < n; i++)
		if (sandboxed(&pl, req) == -1) {
			fprintf(
			    stderr, "bench_spawn: sandboxed spawn failed\n");
			sandbox_plan_free(&pl);
			return -1;
		}
	sandbox_plan_free(&pl);
	return now() - t0;
}

int
main(int argc, char **argv)
{
	char *cargv[] = {"/bin/true", NULL};
	char *cenv[] = {"PATH=/usr/bin:/bin", NULL};
	struct spawn_fd fds[] = {{STDERR_FILENO, STDERR_FILENO}};
	struct spawn_req req = {
	    .sr_path = "/bin/true",
	    .sr_argv = cargv,
	    .sr_envp = cenv,
	    .sr_fds = fds,
	    .sr_nfds = 1,
	    .sr_setsid = 1,
	};
	long i, n = argc > 1 ? atol(argv[1]) : 300;
	double t0, floor_s, helper_s, ll_s, ns_s;
	pid_t pid;
	int st;

	if (n <= 0)
		n = 300;
	t0 = now();
	for (i = 0; i < n; i++) {
		if (posix_spawn(&pid, "/bin/true", NULL, NULL, cargv, cenv))
			return 1;
		waitpid(pid, &st, 0);
	}
	floor_s = now() - t0;
	t0 = now();
	for (i = 0; i < n; i++) {
		if ((pid = spawn_exec(&req)) == -1)
			return 1;
		waitpid(pid, &st, 0);
	}
	helper_s = now() - t0;
	printf("spawns               %ld\n", n);
	printf(
	    "floor posix_spawn    %.3f ms/spawn\n", floor_s / (double)n * 1e3);
	printf(
	    "spawn_exec helper    %.3f ms/spawn\n", helper_s / (double)n * 1e3);
	printf("ratio helper/floor   %.2f\n", helper_s / floor_s);

	/*
	 * The sandbox stacks its seccomp layer on the spawner's; here there is
	 * none below it, which the host probe would read as "no seccomp".
	 */
	log_init("bench_spawn", 0);
	sandbox_host_probe();
	sbx_host.sh_seccomp = 1;
	ll_s = bench_sandbox(MF_ISO_LANDLOCK, n, &req);
	ns_s = bench_sandbox(MF_ISO_NAMESPACE, n, &req);
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
