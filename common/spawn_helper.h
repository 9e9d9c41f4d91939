/*
 * The one spawn helper: fork, wire fds, optional pre-exec hook (the
 * spawner's per-run sandbox goes there), execve an absolute path with a
 * built argv and envp.  Never a shell.  Used by cordond for its daemons
 * and by the spawner for agents (which adds rlimits and a umask).
 */
#ifndef CORDON_SPAWN_HELPER_H
#define CORDON_SPAWN_HELPER_H

#include <sys/types.h>

struct spawn_fd {
	int sf_src; /* fd in the parent */
	int sf_dst; /* fd number in the child */
};

/* One resource limit set in the child before exec (SP-7). */
struct spawn_rlimit {
	int sl_resource;	     /* RLIMIT_* */
	unsigned long long sl_value; /* soft and hard */
};

struct spawn_req {
	const char *sr_path; /* absolute */
	char *const *sr_argv;
	char *const *sr_envp;
	const struct spawn_fd *sr_fds; /* every other fd is closed */
	size_t sr_nfds;
	int sr_setsid;
	int sr_pdeathsig;		       /* 0: none */
	const char *sr_cwd;		       /* NULL: inherit */
	const struct spawn_rlimit *sr_rlimits; /* set in the child */
	size_t sr_nrlimits;
	int sr_set_umask; /* 1: umask(sr_umask) in the child (SP-6) */
	unsigned int sr_umask;
	/* Runs in the child after fds are wired; non-zero aborts the exec. */
	int (*sr_hook)(void *arg);
	void *sr_hook_arg;
};

/* Returns the child's pid, or -1.  A failing child exits 127. */
pid_t spawn_exec(const struct spawn_req *);

#endif
