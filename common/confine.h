/*
 * Confinement helpers: every cordon daemon calls confine_self() once,
 * right after start and before it reads any peer message.  Each step is
 * fail-closed: a layer that cannot be applied is fatal, never skipped.
 *
 * Order: resolve service user -> open Landlock path fds -> switch ids
 * (when root) -> drop every capability -> no_new_privs -> Landlock ->
 * seccomp.
 */
#ifndef CORDON_CONFINE_H
#define CORDON_CONFINE_H

#include <stdint.h>
#include <sys/types.h>

struct json_object;

/* Seccomp syscall groups a daemon may be granted (allowlist mode). */
#define SC_BASE                                                                \
	0x0001u /* event loop, memory (no PROT_EXEC), time,                    \
		 * ipc read/write/recvmsg/sendmsg, close, exit */
#define SC_ACCEPT                                                              \
	0x0002u /* accept4, getsockname, getpeername,                          \
		 * setsockopt, shutdown on inherited sockets */
#define SC_FS_READ                                                             \
	0x0004u /* openat/openat2 read-only, fstat, getdents64,                \
		 * lseek, readlinkat-free */
#define SC_FS_WRITE                                                            \
	0x0008u /* openat/openat2 create, mkdirat, renameat2,                  \
		 * unlinkat, fsync, fdatasync, ftruncate */

#define SC_CONNECT                                                             \
	0x0010u /* socket(AF_UNIX) and connect: a daemon under systemd         \
		 * dials its peers' sockets in /run/cordon */

#define SC_EGRESS                                                              \
	0x0020u /* egressd (EG-1): socket(AF_INET/AF_INET6) and connect,       \
		 * for tunnels and DNS; never another family */

#define SC_GATE                                                                \
	0x0040u /* gated (SBX-6): readlink(at) for realpath(3) (path walk      \
		 * and metadata, which Landlock leaves alone); getsockopt      \
		 * and poll on a caller's sockets */

/* Agent layer only (confine_seccomp_agent): socket() for AF_UNIX only. */
#define SC_AGENT_NO_NET 0x0100u
/*
 * Agent layer only, network: proxy (EG-1): socket() for AF_INET and
 * AF_INET6 only (the run's netns holds loopback and its proxy alone),
 * no AF_UNIX socket() that could connect(2) to a host socket; stream
 * socketpair(2) kept.
 */
#define SC_AGENT_PROXY 0x0200u

enum confine_seccomp {
	CONFINE_SECCOMP_ALLOW, /* allowlist, default action kills the process */
	CONFINE_SECCOMP_DENY,  /* spawner: denylist inherited by agents */
};

/* Landlock access masks (cordon's own names; see landlock_abi.h). */
#define CONFINE_LL_READ	 0x1u /* read files, read dirs */
#define CONFINE_LL_WRITE 0x2u /* + create/remove/rename/truncate beneath */
#define CONFINE_LL_EXEC	 0x4u /* + execute */
#define CONFINE_LL_OPTIONAL                                                    \
	0x8u /* a missing path is skipped, not an error                        \
	      * (system paths that vary by distribution) */

struct confine_path {
	const char *cp_path;
	unsigned int cp_access; /* CONFINE_LL_* */
};

struct confine_spec {
	const char *cs_name; /* daemon name, for logs */
	const char *cs_user; /* when root: switch to this user; NULL
			      * keeps uid 0 (caps still all dropped) */
	const struct confine_path *cs_paths; /* Landlock allowances */
	size_t cs_npaths;		     /* 0: no file access at all */
	enum confine_seccomp cs_seccomp;
	unsigned int cs_syscalls; /* SC_* groups, allowlist mode */
	int cs_no_net;		  /* Landlock ABI>=4: deny TCP bind/connect */
	unsigned long cs_nofile;  /* RLIMIT_NOFILE, 0 = leave */
	int cs_no_landlock;	  /* the spawner only: no ruleset of its own,
				   * since every agent would inherit it; each
				   * agent gets its own (SBX-1).  Health then
				   * says "landlock off" for it. */
};

/* The whole sequence; fatal() on any failure. */
void confine_self(const struct confine_spec *);

/* Steps, exposed for tests and for the spawner's per-run sandbox. */
int confine_no_new_privs(void);
int confine_switch_user(uid_t, gid_t); /* setgroups/setresgid/setresuid,
					* then proves the old ids are gone */
int confine_drop_caps(void);	       /* effective, permitted, inheritable,
					* bounding, ambient */
int confine_landlock_abi(void);	       /* -1 when Landlock is unavailable */

/*
 * Landlock in two halves.  The builder opens each path O_PATH with the
 * caller's current ids and returns a cloexec ruleset fd handling every
 * right the ABI knows (and, on ABI >= 6, scoping abstract unix sockets and
 * signals); with CONFINE_RS_NO_NET it also handles TCP bind/connect with no
 * rule (deny all) and fails (never weakens) below ABI 4.  restrict needs
 * no_new_privs first, and closes the fd; CONFINE_RS_LOG_EXEC asks ABI >= 7
 * to log the denials of the programs executed after it.  CONFINE_RS_QUIET
 * logs nothing: the spawner's agent children call these between fork and
 * execve, where a log line would land on the agent's stderr.
 */
#define CONFINE_RS_NO_NET   0x1u
#define CONFINE_RS_QUIET    0x2u
#define CONFINE_RS_LOG_EXEC 0x4u
int confine_landlock_ruleset(
    const struct confine_path *, size_t, unsigned int flags);
/*
 * landlock_restrict_self with the ruleset fd (closed either way).  Keeps
 * no state: an agent child calls it on the spawner's memory (the spawn
 * helper is vfork-style), so whatever it wrote would be the spawner's.
 */
int confine_landlock_restrict(int, unsigned int flags);

/*
 * Build and load a filter: ALLOW with SC_* groups (default kills; with
 * CORDON_SECCOMP_DEBUG set it traps and names the syscall, exit 31), or
 * DENY (groups ignored).  Needs no_new_privs first.
 */
int confine_seccomp(enum confine_seccomp, unsigned int);

/*
 * Each agent child's own layer (SBX-1), stacked on the spawner's DENY:
 * namespace, mount, chroot, keyctl, userfaultfd, perf refused (EPERM),
 * clone3 and io_uring ENOSYS, and with SC_AGENT_NO_NET socket() only for
 * AF_UNIX streams, no connect() and no AF_UNIX datagrams.  ptrace,
 * process_vm_*, bpf, module and kexec calls become user notifications: returns
 * the (cloexec) listener fd for the spawner, or -1. Logs nothing.  Needs
 * no_new_privs first.
 */
int confine_seccomp_agent(unsigned int groups);

/*
 * The same layer in two halves, so the spawner compiles it once (at
 * start) and each child only loads it: build fills *prog (free it with
 * confine_seccomp_agent_free); install, in the child, allocates and logs
 * nothing, sets no_new_privs if it is not set yet, and returns the
 * cloexec listener fd, or -1.
 */
struct sock_fprog;
int confine_seccomp_agent_build(unsigned int groups, struct sock_fprog *);
int confine_seccomp_agent_install(const struct sock_fprog *);
void confine_seccomp_agent_free(struct sock_fprog *);

/*
 * confine_drop_caps for an agent child between fork and execve: the same
 * sets cleared and proven, by raw syscalls (no libcap-ng, no /proc), no
 * log.  0, or -1 with errno.
 */
int confine_drop_caps_agent(void);

/*
 * What the process can see of itself, for MSG_STATUS_OK:
 * {pid, uid, gid, capEff (hex string), noNewPrivs, seccomp (mode 0/1/2),
 *  landlock ("on"/"off"), landlockAbi}.
 * Uses only syscalls every filter allows (getpid, getresuid, capget, prctl).
 */
struct json_object *confine_status_json(void);

#endif
