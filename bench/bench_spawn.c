/*
 * bench_spawn: cordon's one spawn helper (fork, fd map, close the rest,
 * execve) against a floor measured in the same run: posix_spawn of the
 * same binary.  Both wait for the child.  Prints the ratio.
 */
#include <sys/wait.h>

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "spawn_helper.h"

extern char **environ;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
	double t0, floor_s, helper_s;
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
	(void)environ;
	return 0;
}
