/*
 * The per-run sandbox timed outside the spawner (see bench_sandbox.h).
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_sandbox.h"
#include "bench_util.h"
#include "log.h"
#include "sandbox.h"
#include "spawn_helper.h"

/* One sandboxed spawn of /bin/true, as aproc_start does it. */
static int
sandboxed(const struct sandbox_plan *pl, struct spawn_req *base)
{
	struct sandbox_run sx;
	struct spawn_fd fds[2];
	struct spawn_req req = *base;
	int ns[2], st, rc = -1, nfd;
	pid_t pid;

	if (sandbox_run_prepare(&sx, pl, base->sr_path, "/", base->sr_envp,
		LIM_TMP_BYTES_DEF) == -1)
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

void
bench_true_req(struct spawn_req *req)
{
	static char *argv[] = {"/bin/true", NULL};
	static char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	static const struct spawn_fd fds[] = {{STDERR_FILENO, STDERR_FILENO}};

	memset(req, 0, sizeof(*req));
	req->sr_path = "/bin/true";
	req->sr_argv = argv;
	req->sr_envp = envp;
	req->sr_fds = fds;
	req->sr_nfds = 1;
	req->sr_setsid = 1;
}

int
bench_sandbox_spawns(enum mf_isolation iso, long n, double *secs)
{
	static int probed;
	struct spawn_req req;
	struct protect_ctx pc;
	struct sandbox_plan pl;
	struct manifest mf;
	char home[4096], why[256];
	static char self[4096];
	char *slash;
	ssize_t len;
	double t0;
	long i;

	/*
	 * The sandbox stacks its seccomp layer on the spawner's; here there
	 * is none below it, which the host probe would read as "no seccomp".
	 */
	bench_true_req(&req);
	if (!probed) {
		/* cordon-init lives in the build dir, one above the benches. */
		len = readlink("/proc/self/exe", self, sizeof(self) - 4);
		if (len > 0) {
			self[len] = '\0';
			if ((slash = strrchr(self, '/')) != NULL) {
				strcpy(slash, "/..");
				sandbox_helpers_dir(self);
			}
		}
		sandbox_host_probe();
		sbx_host.sh_seccomp = 1;
		if (sandbox_tmp_open() == -1) {
			perror("bench: a dir for the runs' tmps");
			return -1;
		}
		atexit(sandbox_tmp_close);
		probed = 1;
	}
	memset(&mf, 0, sizeof(mf));
	mf.m_sandbox.sb_present = 1;
	mf.m_sandbox.sb_isolation = iso;
	mf.m_sandbox.sb_network = MF_NET_NONE;
	mf.m_sandbox.sb_required = 1;
	why[0] = '\0';
	if (roots_protect_init(&pc, home, sizeof(home)) == -1 ||
	    sandbox_plan_build(&mf, &pc, &pl, why, sizeof(why)) == -1) {
		fprintf(stderr, "bench: no sandbox plan: %s\n", why);
		return -1;
	}
	for (i = 0; i < n; i++) {
		t0 = bench_now();
		if (sandboxed(&pl, &req) == -1) {
			fprintf(stderr, "bench: sandboxed spawn failed\n");
			sandbox_plan_free(&pl);
			return -1;
		}
		secs[i] = bench_now() - t0;
	}
	sandbox_plan_free(&pl);
	return 0;
}
