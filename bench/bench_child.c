/*
 * A daemon of cordon's started alone for a benchmark (bench_util.h):
 * its channel on fd 3, stderr kept, a fixed environment, killed with
 * its parent.  Touches nothing but the process it starts.
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "spawn_helper.h"

pid_t
bench_child(const char *bin, char **argv, int chan)
{
	static char *envp[] = {"LANG=C", "TZ=UTC", NULL};
	struct spawn_fd fds[2];
	struct spawn_req req;

	fds[0].sf_src = chan;
	fds[0].sf_dst = 3;
	fds[1].sf_src = STDERR_FILENO;
	fds[1].sf_dst = STDERR_FILENO;
	memset(&req, 0, sizeof(req));
	req.sr_path = bin;
	req.sr_argv = argv;
	req.sr_envp = envp;
	req.sr_fds = fds;
	req.sr_nfds = 2;
	req.sr_pdeathsig = SIGTERM;
	return spawn_exec(&req);
}
