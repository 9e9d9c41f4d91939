/*
 * The one spawn helper: a vfork-style clone(2) (into new namespaces if
 * asked), wire fds, optional pre-exec hook (the spawner's per-run sandbox
 * goes there),
 * execve an absolute path with a built argv and envp.  Never a shell.
 * Used by cordond for its daemons and by the spawner for agents (which
 * adds rlimits, a umask and the sandbox).  A child that cannot reach
 * execve reports which step failed, and why, over a close-on-exec pipe;
 * spawn_exec then returns -1 and never a pid.
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

/* Where a child failed before execve.  Hook steps start at HOOK_BASE. */
enum spawn_step {
	SPAWN_STEP_NONE = 0,
	SPAWN_STEP_FORK, /* fork/clone itself (in the parent) */
	SPAWN_STEP_SETSID,
	SPAWN_STEP_PDEATHSIG,
	SPAWN_STEP_FDS, /* the fd map, stdio on /dev/null */
	SPAWN_STEP_RLIMIT,
	SPAWN_STEP_CWD,
	SPAWN_STEP_EXEC,
	SPAWN_STEP_DIED, /* killed by a signal before execve (EINTR) */
	SPAWN_STEP_INIT, /* not a failure: sr_init runs, awaiting its go */
	SPAWN_STEP_HOOK_BASE = 100,
};

struct spawn_status {
	int ss_step;  /* enum spawn_step, or the hook's own code */
	int ss_errno; /* errno at that step */
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
	/*
	 * CLONE_NEW* flags only (else EINVAL): the child is made in these
	 * new namespaces, pid 1 of a new pid namespace yet still our direct
	 * child.  The parent-death check cannot see us then (getppid() is 0).
	 */
	unsigned long sr_clone_flags;
	/*
	 * Runs in the child after fds, rlimits, umask and cwd; returns 0, or
	 * a step code >= SPAWN_STEP_HOOK_BASE with errno set to abort.  It
	 * runs on the caller's memory while the caller sleeps: it may read
	 * anything, write only its own stack, and call only async-signal-
	 * safe functions (no malloc, no stdio, no logging: the child's
	 * stderr is the program's anyway).
	 */
	int (*sr_hook)(void *arg);
	void *sr_hook_arg;
	/*
	 * An init to exec as the child instead (only with CLONE_NEWPID):
	 * after the hook the child execs sr_init with argv {sr_init, the
	 * status pipe's fd, sr_init_fd, sr_path, sr_argv...}, and that
	 * program (spawner/init.c) forks and execs sr_path.  The status pipe
	 * stays open across the init's execve, so the agent's execve still
	 * decides what spawn_exec returns.  sr_init_fd: a destination of the
	 * map, a socket: the init reads its go there (SPAWN_INIT_GO) before
	 * it forks the agent, and writes its own report there.  Without
	 * sr_held the go must be in the socket before spawn_exec.
	 */
	const char *sr_init;
	int sr_init_fd;
	/*
	 * With sr_init: non-NULL to return as soon as the init runs (its
	 * SPAWN_STEP_INIT record), holding the agent until its go; the rest
	 * of the status pipe is put here, for spawn_held_exec once the go
	 * is sent.  The agent has not run when spawn_exec returns.
	 */
	int *sr_held;
	struct spawn_status *sr_status; /* NULL, or filled when -1 */
};

/*
 * Returns the child's pid once it has reached execve, or -1: errno and
 * *sr_status say where and why (the failed child is already reaped).
 * One child stack serves every call: for single-threaded callers only
 * (cordond, the spawner and the benches all are).
 */
pid_t spawn_exec(const struct spawn_req *);

/* The byte that releases a held cordon-init to fork the agent. */
#define SPAWN_INIT_GO 'g'

/*
 * cordon-init's socket pair, close-on-exec: xs[1] goes to the init as
 * sr_init_fd, xs[0] stays.  go: its go already in it (nothing to wait
 * for); else spawn_init_go sends it later.  0, or -1 with errno.
 */
int spawn_init_channel(int xs[2], int go);
/* The go on xs[0] of spawn_init_channel.  0, or -1 with errno. */
int spawn_init_go(int fd);

/*
 * A held init's agent, after its go: pid once the agent reached execve,
 * or -1 with *st and errno saying why (pid, the init, is then reaped).
 * Reads and closes fd, what spawn_exec left in *sr_held.
 */
pid_t spawn_held_exec(pid_t pid, int fd, struct spawn_status *st);

/* "setsid", "exec", ...; NULL for hook steps. */
const char *spawn_step_name(int step);

/* Close every descriptor from lo to hi (common/fdclose.c). */
void fd_close_range(int lo, int hi);

#endif
