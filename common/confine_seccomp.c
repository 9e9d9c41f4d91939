/*
 * Confinement, the seccomp layer: the daemons' allowlist groups and the
 * spawner's denylist (SU-2), and the agents' filter built in the spawner
 * and installed in each run (SBX-1).  Touches only this process.
 */
#include "config.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cap-ng.h>
#include <json-c/json.h>
#include <seccomp.h>

#include "confine.h"
#include "landlock_abi.h"
#include "log.h"
#include "confine_impl.h"
#include "util.h"

/* Debian 12's headers predate fchmodat2 (Linux 6.6). */
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

/*
 * Seccomp allowlist groups.  Plain names are allowed outright; argument
 * rules allow a syscall only when one argument matches.  Names libseccomp
 * does not know are skipped in allowlists (that only denies more).
 */
struct sc_argrule {
	const char *sa_name;
	struct scmp_arg_cmp sa_cmp;
};

struct sc_group {
	unsigned int sg_mask;
	const char *const *sg_names;
	size_t sg_nnames;
	const struct sc_argrule *sg_args;
	size_t sg_nargs;
};

/* The tables below are data, laid out to be read, not reflowed. */
/* clang-format off */

/* libevent epoll loop, glibc malloc, json-c, framed IPC, time, exit. */
static const char *const sc_base_names[] = {
	"read", "write", "readv", "writev",
	"recvmsg", "sendmsg", "recvfrom", "sendto",
	"close", "shutdown", "fcntl",
	"epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
	"epoll_pwait2",
	"brk", "munmap", "mremap", "madvise",
	"clock_gettime", "clock_nanosleep", "gettimeofday", "nanosleep",
	"getpid", "gettid", "getppid", "getuid", "geteuid", "getgid",
	"getegid", "getresuid", "getresgid", "capget",
	"exit", "exit_group", "restart_syscall",
	"rt_sigreturn", "rt_sigprocmask",
	"futex", "getrandom",
	/* glibc's fstat() is newfstatat(fd, "", AT_EMPTY_PATH); a path
	 * given to it leaks metadata only, which Landlock does not cover. */
	"fstat", "newfstatat",
	/* glibc qsort() sizes its buffer with sysconf(_SC_PHYS_PAGES). */
	"sysinfo",
};

static const struct sc_argrule sc_base_args[] = {
	/* No new executable memory: code injection needs PROT_EXEC. */
	{ "mmap",	{ 2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0 } },
	{ "mprotect",	{ 2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0 } },
	/* prctl only to read our own state, for the status report. */
	{ "prctl",	{ 0, SCMP_CMP_EQ, PR_GET_NO_NEW_PRIVS, 0 } },
	{ "prctl",	{ 0, SCMP_CMP_EQ, PR_GET_SECCOMP, 0 } },
	{ "prctl",	{ 0, SCMP_CMP_EQ, PR_GET_DUMPABLE, 0 } },
	/* libevent's evbuffer_read() sizes reads with FIONREAD. */
	{ "ioctl",	{ 1, SCMP_CMP_EQ, FIONREAD, 0 } },
};

/* Listening sockets inherited from cordond or systemd. */
static const char *const sc_accept_names[] = {
	"accept4", "accept", "getsockname", "getpeername",
	"setsockopt", "getsockopt", "shutdown",
};

/* Dialling peers' unix sockets (systemd mode); never another family.
 * SO_PEERCRED is read with SC_ACCEPT's getsockopt, granted with it. */
static const char *const sc_connect_names[] = {
	"connect",
};

static const struct sc_argrule sc_connect_args[] = {
	{ "socket",	{ 0, SCMP_CMP_EQ, AF_UNIX, 0 } },
};

/* egressd: outbound TCP and DNS over UDP, inet families only. */
static const char *const sc_egress_names[] = {
	"connect",
	/* A tunnel's bytes moved in the kernel (egressd/pump.c). */
	"pipe2", "splice",
};

static const struct sc_argrule sc_egress_args[] = {
	{ "socket",	{ 0, SCMP_CMP_EQ, AF_INET, 0 } },
	{ "socket",	{ 0, SCMP_CMP_EQ, AF_INET6, 0 } },
};

/*
 * openat2's flags live in a struct seccomp cannot read, so openat2 is
 * allowed whole; Landlock is what bounds where it may write.
 */
static const char *const sc_fs_read_names[] = {
	"openat2", "getdents64", "lseek", "pread64", "fstatfs", "statx",
};

#define SC_O_WRITING (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)

static const struct sc_argrule sc_fs_read_args[] = {
	{ "openat",	{ 2, SCMP_CMP_MASKED_EQ, SC_O_WRITING, 0 } },
};

/* gated: realpath(3) reads links (stat is SC_BASE's newfstatat); a
 * reply socket's type is checked, a channel's hang-up polled. */
static const char *const sc_gate_names[] = {
	"readlink", "readlinkat", "getsockopt", "poll", "ppoll",
};

static const char *const sc_fs_write_names[] = {
	"openat", "openat2", "mkdirat", "renameat", "renameat2", "unlinkat",
	"fsync", "fdatasync", "ftruncate", "fchmod", "pwrite64",
};

#if CORDON_SANITIZE
/*
 * ASan/UBSan runtimes, sanitizer builds only, so that a report is printed
 * instead of the reporter being killed: alternate signal stacks, rlimit
 * queries, spin-lock yields, isatty(2), a pipe to probe memory, and
 * read-only opens of /proc/self/maps.  LeakSanitizer needs ptrace and
 * cannot run under seccomp (tests set ASAN_OPTIONS=detect_leaks=0); an
 * external symbolizer would need fork+exec (symbolize=0 avoids it).
 */
static const char *const sc_sanitize_names[] = {
	"sigaltstack", "rt_sigaction", "getrlimit", "sched_yield",
	"readlink", "readlinkat", "lseek", "sched_getaffinity",
	"pipe", "pipe2",
};

static const struct sc_argrule sc_sanitize_args[] = {
	{ "prlimit64",	{ 2, SCMP_CMP_EQ, 0, 0 } },	/* query only */
	{ "open",	{ 1, SCMP_CMP_MASKED_EQ, SC_O_WRITING, 0 } },
	{ "openat",	{ 2, SCMP_CMP_MASKED_EQ, SC_O_WRITING, 0 } },
	{ "prctl",	{ 0, SCMP_CMP_EQ, PR_SET_VMA, 0 } },	/* map names */
	{ "ioctl",	{ 1, SCMP_CMP_EQ, TCGETS, 0 } },	/* isatty() */
};
#endif

#define SC_GROUP(m, n, a)	{ (m), (n), nitems(n), (a), nitems(a) }
#define SC_GROUP_N(m, n)	{ (m), (n), nitems(n), NULL, 0 }

static const struct sc_group sc_groups[] = {
	SC_GROUP(SC_BASE, sc_base_names, sc_base_args),
	SC_GROUP_N(SC_ACCEPT, sc_accept_names),
	SC_GROUP(SC_CONNECT, sc_connect_names, sc_connect_args),
	SC_GROUP(SC_EGRESS, sc_egress_names, sc_egress_args),
	SC_GROUP(SC_FS_READ, sc_fs_read_names, sc_fs_read_args),
	SC_GROUP_N(SC_FS_WRITE, sc_fs_write_names),
	SC_GROUP_N(SC_GATE, sc_gate_names),
};

#define SC_ALL                                                                 \
	(SC_BASE | SC_ACCEPT | SC_CONNECT | SC_EGRESS | SC_FS_READ |           \
	    SC_FS_WRITE | SC_GATE)

/*
 * Spawner denylist, inherited by every agent.  Must leave seccomp, prctl,
 * landlock_*, unshare, clone and mount alone: agent children build their
 * own sandbox (namespaces, mounts, a stricter filter) underneath it.
 */
static const char *const sc_deny_names[] = {
	"create_module", "query_module", "get_kernel_syms", "reboot",
	"perf_event_open", "userfaultfd",
	"keyctl", "add_key", "request_key",
	"iopl", "ioperm", "swapon", "swapoff", "acct", "uselib", "vhangup",
	"syslog", "quotactl", "quotactl_fd", "nfsservctl", "lookup_dcookie",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"open_by_handle_at", "name_to_handle_at",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
};

/*
 * Each agent child's own layer (SBX-1), stacked on the denylist above.
 * Calls that only an attack or a debugger makes end the agent: they go
 * to the spawner as user notifications, which it refuses, names in its
 * log and the run's error (seccomp: ptrace), and answers by killing the
 * run (a seccomp kill could not be named: a dead task's /proc/PID/syscall
 * reads -1).  Calls that runtimes probe (node/libuv try io_uring, glibc
 * tries clone3, tools try unshare or mount to build their own sandbox)
 * get an error and carry on.
 */
static const char *const sc_agent_kill[] = {
	"ptrace", "process_vm_readv", "process_vm_writev", "bpf",
	"init_module", "finit_module", "delete_module",
	"kexec_load", "kexec_file_load",
};

static const char *const sc_agent_eperm[] = {
	"unshare", "setns",
	"mount", "umount2", "pivot_root", "move_mount", "open_tree",
	"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"chroot", "keyctl", "add_key", "request_key",
	"userfaultfd", "perf_event_open",
};

/* ENOSYS: libc and libuv then fall back (clone3 -> clone, no io_uring). */
static const char *const sc_agent_enosys[] = {
	"clone3", "io_uring_setup", "io_uring_enter", "io_uring_register",
};

/* ioctl(2) requests that type into a terminal (SBX-9's login). */
static const unsigned long sc_agent_tty[] = {TIOCSTI, TIOCLINUX};

/* clone(2) flags that create a namespace (CLONE_NEWTIME is clone3-only). */
static const unsigned long sc_agent_clone_new[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

/*
 * Also denied to the spawner, but with SECCOMP_RET_TRACE: with no tracer
 * (the spawner is not dumpable, so none can attach) the call fails with
 * ENOSYS.  TRACE ranks below USER_NOTIF, so an agent's own layer can turn
 * these into notifications the spawner answers and names (seccomp:
 * ptrace); ERRNO would rank above and hide them.
 */
static const char *const sc_deny_trace[] = {
	"init_module", "finit_module", "delete_module",
	"kexec_load", "kexec_file_load",
	"bpf", "ptrace", "process_vm_readv", "process_vm_writev",
};

/* personality() flags that weaken exec'd programs' memory protections. */
static const unsigned long sc_deny_persona[] = {
	ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO,
};

/* clang-format on */

/* Seccomp */

/* CORDON_SECCOMP_DEBUG: name the blocked syscall, then die.  Signal-safe. */
static void
sc_sigsys(int sig, siginfo_t *si, void *ctx)
{
	static const char pre[] = "seccomp: blocked syscall ";
	char buf[sizeof(pre) + 16], num[12];
	size_t len = sizeof(pre) - 1, n = 0;
	unsigned int nr = (unsigned int)si->si_syscall;

	memcpy(buf, pre, len);
	do {
		num[n++] = (char)('0' + nr % 10);
		nr /= 10;
	} while (nr != 0 && n < sizeof(num));
	while (n > 0)
		buf[len++] = num[--n];
	buf[len++] = '\n';
	(void)!write(STDERR_FILENO, buf, len);
	_exit(31);
}

static int
sc_add_names(scmp_filter_ctx ctx, uint32_t action, const char *const *names,
    size_t n, int strict)
{
	size_t i;
	int nr, r;

	for (i = 0; i < n; i++) {
		if ((nr = seccomp_syscall_resolve_name(names[i])) ==
		    __NR_SCMP_ERROR) {
			/* Not denying a known-dangerous call is not an option.
			 */
			if (strict) {
				log_warnx(
				    "seccomp: unknown syscall %s", names[i]);
				errno = ENOSYS;
				return -1;
			}
			log_debug("seccomp: skipping unknown %s", names[i]);
			continue;
		}
		if ((r = seccomp_rule_add(ctx, action, nr, 0)) < 0) {
			log_warnx(
			    "seccomp: rule %s: %s", names[i], strerror(-r));
			errno = -r;
			return -1;
		}
	}
	return 0;
}

static int
sc_add_args(scmp_filter_ctx ctx, const struct sc_argrule *rules, size_t n)
{
	size_t i;
	int nr, r;

	for (i = 0; i < n; i++) {
		nr = seccomp_syscall_resolve_name(rules[i].sa_name);
		if (nr == __NR_SCMP_ERROR)
			continue;
		r = seccomp_rule_add_array(
		    ctx, SCMP_ACT_ALLOW, nr, 1, &rules[i].sa_cmp);
		if (r < 0) {
			log_warnx("seccomp: rule %s: %s", rules[i].sa_name,
			    strerror(-r));
			errno = -r;
			return -1;
		}
	}
	return 0;
}

static int
sc_build_allow(scmp_filter_ctx ctx, unsigned int groups)
{
	const struct sc_group *g;
	struct scmp_arg_cmp self;
	size_t i;
	int r;

	for (i = 0; i < nitems(sc_groups); i++) {
		g = &sc_groups[i];
		if ((groups & g->sg_mask) == 0)
			continue;
		if (sc_add_names(ctx, SCMP_ACT_ALLOW, g->sg_names, g->sg_nnames,
			0) == -1 ||
		    sc_add_args(ctx, g->sg_args, g->sg_nargs) == -1)
			return -1;
	}
	if (groups & SC_BASE) {
		/*
		 * abort() and raise() signal this process via tgkill; the
		 * filter is built in the process it confines, so its pid is
		 * known now.  Signalling anyone else stays forbidden.
		 */
		memset(&self, 0, sizeof(self));
		self.arg = 0;
		self.op = SCMP_CMP_EQ;
		self.datum_a = (scmp_datum_t)getpid();
		r = seccomp_rule_add_array(
		    ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, &self);
		if (r < 0) {
			errno = -r;
			return -1;
		}
	}
#if CORDON_SANITIZE
	if (sc_add_names(ctx, SCMP_ACT_ALLOW, sc_sanitize_names,
		nitems(sc_sanitize_names), 0) == -1 ||
	    sc_add_args(ctx, sc_sanitize_args, nitems(sc_sanitize_args)) == -1)
		return -1;
#endif
	return 0;
}

static int
sc_build_deny(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp cmp;
	size_t i;
	unsigned int bit;
	int r;

	if (sc_add_names(ctx, SCMP_ACT_ERRNO(EPERM), sc_deny_names,
		nitems(sc_deny_names), 1) == -1 ||
	    sc_add_names(ctx, SCMP_ACT_TRACE(ENOSYS), sc_deny_trace,
		nitems(sc_deny_trace), 1) == -1)
		return -1;

	/*
	 * personality(flag) is refused, but the query 0xffffffff is not.
	 * A rule holds one test per argument, so "flag set and value not
	 * 0xffffffff" becomes "flag set and bit b clear" for each other bit.
	 */
	for (i = 0; i < nitems(sc_deny_persona); i++) {
		for (bit = 0; bit < 32; bit++) {
			if (sc_deny_persona[i] & (1UL << bit))
				continue;
			memset(&cmp, 0, sizeof(cmp));
			cmp.arg = 0;
			cmp.op = SCMP_CMP_MASKED_EQ;
			cmp.datum_a = sc_deny_persona[i] | (1UL << bit);
			cmp.datum_b = sc_deny_persona[i];
			r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM),
			    SCMP_SYS(personality), 1, &cmp);
			if (r < 0) {
				errno = -r;
				return -1;
			}
		}
	}
	return 0;
}

/* Quiet and strict: an unknown name is an error, nothing is logged. */
static int
sc_add_quiet(
    scmp_filter_ctx ctx, uint32_t action, const char *const *names, size_t n)
{
	size_t i;
	int nr, r;

	for (i = 0; i < n; i++) {
		if ((nr = seccomp_syscall_resolve_name(names[i])) ==
		    __NR_SCMP_ERROR) {
			errno = ENOSYS;
			return -1;
		}
		if ((r = seccomp_rule_add(ctx, action, nr, 0)) < 0) {
			errno = -r;
			return -1;
		}
	}
	return 0;
}

/* One rule: EPERM when (arg & mask) == val, with up to one more test. */
static int
sc_add_masked(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned int arg,
    scmp_datum_t mask, scmp_datum_t val, const struct scmp_arg_cmp *also)
{
	struct scmp_arg_cmp cmp[2];
	unsigned int n = 1;
	int r;

	memset(cmp, 0, sizeof(cmp));
	cmp[0].arg = arg;
	cmp[0].op = SCMP_CMP_MASKED_EQ;
	cmp[0].datum_a = mask;
	cmp[0].datum_b = val;
	if (also != NULL)
		cmp[n++] = *also;
	if ((r = seccomp_rule_add_array(ctx, action, nr, n, cmp)) < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

/*
 * SBX-4: no S_ISUID or S_ISGID from any call that sets a mode, so nothing
 * an agent leaves runs with its ids for another user (the bits are the
 * host file system's, whatever the agent's mounts say).  {nr, mode arg,
 * flags arg or -1}: open modes count only when the call creates a file
 * (O_CREAT, O_TMPFILE), since glibc passes 0 otherwise but a raw caller
 * may pass anything.  openat2's mode lives in a struct seccomp cannot
 * read: ENOSYS, and libc falls back to openat.
 */
static const struct {
	int sm_nr;
	int sm_mode;
	int sm_flags;
} sc_setmode[] = {
    {SCMP_SYS(chmod), 1, -1},
    {SCMP_SYS(fchmod), 1, -1},
    {SCMP_SYS(fchmodat), 2, -1},
    {SYS_fchmodat2, 2, -1},
    {SCMP_SYS(creat), 1, -1},
    {SCMP_SYS(mkdir), 1, -1},
    {SCMP_SYS(mkdirat), 2, -1},
    {SCMP_SYS(mknod), 1, -1},
    {SCMP_SYS(mknodat), 2, -1},
    {SCMP_SYS(open), 2, 1},
    {SCMP_SYS(openat), 3, 2},
};

static int
sc_add_no_setid(scmp_filter_ctx ctx)
{
	static const scmp_datum_t bits[] = {S_ISUID, S_ISGID};
	static const scmp_datum_t creating[] = {
	    O_CREAT, O_TMPFILE & ~O_DIRECTORY};
	struct scmp_arg_cmp fl;
	size_t i, b, c;
	int r;

	for (i = 0; i < nitems(sc_setmode); i++)
		for (b = 0; b < nitems(bits); b++) {
			if (sc_setmode[i].sm_flags == -1) {
				if (sc_add_masked(ctx, SCMP_ACT_ERRNO(EPERM),
					sc_setmode[i].sm_nr,
					(unsigned int)sc_setmode[i].sm_mode,
					bits[b], bits[b], NULL) == -1)
					return -1;
				continue;
			}
			for (c = 0; c < nitems(creating); c++) {
				memset(&fl, 0, sizeof(fl));
				fl.arg = (unsigned int)sc_setmode[i].sm_flags;
				fl.op = SCMP_CMP_MASKED_EQ;
				fl.datum_a = creating[c];
				fl.datum_b = creating[c];
				if (sc_add_masked(ctx, SCMP_ACT_ERRNO(EPERM),
					sc_setmode[i].sm_nr,
					(unsigned int)sc_setmode[i].sm_mode,
					bits[b], bits[b], &fl) == -1)
					return -1;
			}
		}
	if ((r = seccomp_rule_add(
		 ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0)) < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

/*
 * SBX-3: AF_UNIX sockets that could name a peer outside the run.  A path
 * socket names a host inode whatever the mount namespace shows, so the
 * syscall layer holds the line: socket(2) gives AF_UNIX streams only
 * (SOCK_RAW is a datagram socket to the kernel; a seqpacket socket is
 * useless without connect), and socketpair(2) no datagram pair, whose
 * sendto(2) may still name any path.  A stream or seqpacket socket
 * refuses an address in sendto/sendmsg (EISCONN, EOPNOTSUPP), and
 * connect(2) is refused outright, so msg_name, which seccomp cannot
 * read, never reaches a peer.  The type is masked to its low four bits
 * (SOCK_NONBLOCK and SOCK_CLOEXEC lie above; other bits are EINVAL).
 */
static int
sc_add_unix_types(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp fam;
	scmp_datum_t t;

	memset(&fam, 0, sizeof(fam));
	fam.arg = 0;
	fam.op = SCMP_CMP_EQ;
	fam.datum_a = AF_UNIX;
	for (t = 0; t <= 0xf; t++) {
		if (t != SOCK_STREAM &&
		    sc_add_masked(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket),
			1, 0xf, t, &fam) == -1)
			return -1;
		if ((t == SOCK_DGRAM || t == SOCK_RAW) &&
		    sc_add_masked(ctx, SCMP_ACT_ERRNO(EACCES),
			SCMP_SYS(socketpair), 1, 0xf, t, &fam) == -1)
			return -1;
	}
	return 0;
}

/*
 * network: proxy (EG-1): socket() for AF_INET and AF_INET6 only, where
 * the run's netns has loopback and its proxy alone.  No AF_UNIX socket
 * of its own: connect(2) stays allowed for the proxy, and a unix socket
 * could dial a host daemon's path, which the netns does not cover.
 * Stream socketpair(2) is kept (sc_add_unix_types' rule for it).
 */
static int
sc_add_proxy_net(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp cmp;
	scmp_datum_t f;
	int r;

	memset(&cmp, 0, sizeof(cmp));
	cmp.arg = 0;
	cmp.op = SCMP_CMP_LT;
	cmp.datum_a = AF_INET;
	r = seccomp_rule_add_array(
	    ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1, &cmp);
	cmp.op = SCMP_CMP_GT;
	cmp.datum_a = AF_INET6;
	if (r == 0)
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT),
		    SCMP_SYS(socket), 1, &cmp);
	cmp.op = SCMP_CMP_EQ;
	for (f = AF_INET + 1; r == 0 && f < AF_INET6; f++) {
		cmp.datum_a = f;
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT),
		    SCMP_SYS(socket), 1, &cmp);
	}
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return sc_add_unix_types(ctx);
}

static int
sc_build_agent(scmp_filter_ctx ctx, unsigned int groups)
{
	struct scmp_arg_cmp cmp;
	size_t i;
	int r;

	if (sc_add_quiet(ctx, SCMP_ACT_NOTIFY, sc_agent_kill,
		nitems(sc_agent_kill)) == -1 ||
	    sc_add_quiet(ctx, SCMP_ACT_ERRNO(EPERM), sc_agent_eperm,
		nitems(sc_agent_eperm)) == -1 ||
	    sc_add_quiet(ctx, SCMP_ACT_ERRNO(ENOSYS), sc_agent_enosys,
		nitems(sc_agent_enosys)) == -1)
		return -1;
	/* A rule tests equality, so "any CLONE_NEW* bit" is one rule a bit. */
	for (i = 0; i < nitems(sc_agent_clone_new); i++) {
		memset(&cmp, 0, sizeof(cmp));
		cmp.arg = 0;
		cmp.op = SCMP_CMP_MASKED_EQ;
		cmp.datum_a = sc_agent_clone_new[i];
		cmp.datum_b = sc_agent_clone_new[i];
		r = seccomp_rule_add_array(
		    ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, &cmp);
		if (r < 0) {
			errno = -r;
			return -1;
		}
	}
	/*
	 * No keystrokes pushed into a terminal (an `agent login` has the
	 * operator's as fds 0-2): TIOCSTI, and TIOCLINUX's console paste.
	 * The kernel reads cmd as 32 bits: compare only those.
	 */
	for (i = 0; i < nitems(sc_agent_tty); i++) {
		memset(&cmp, 0, sizeof(cmp));
		cmp.arg = 1;
		cmp.op = SCMP_CMP_MASKED_EQ;
		cmp.datum_a = 0xffffffffUL;
		cmp.datum_b = sc_agent_tty[i];
		r = seccomp_rule_add_array(
		    ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1, &cmp);
		if (r < 0) {
			errno = -r;
			return -1;
		}
	}
	if (groups & SC_AGENT_NO_NET) {
		/* Paired with the empty network namespace (SBX-3). */
		memset(&cmp, 0, sizeof(cmp));
		cmp.arg = 0;
		cmp.op = SCMP_CMP_NE;
		cmp.datum_a = AF_UNIX;
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT),
		    SCMP_SYS(socket), 1, &cmp);
		/*
		 * The namespace does not cover unix sockets with a path, nor
		 * does Landlock: a host daemon's socket (the user's bus,
		 * systemd, gpg-agent, docker) answers anyone who reaches it.
		 * So no connect(2) at all, and no socket that names its own
		 * destination (sc_add_unix_types): an agent keeps
		 * socketpair(2) streams and the descriptors it was given.
		 */
		if (r == 0)
			r = seccomp_rule_add(
			    ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(connect), 0);
		if (r < 0) {
			errno = -r;
			return -1;
		}
		if (sc_add_unix_types(ctx) == -1)
			return -1;
	}
	if ((groups & SC_AGENT_PROXY) && sc_add_proxy_net(ctx) == -1)
		return -1;
	return sc_add_no_setid(ctx);
}

/*
 * The agent layer, built once in the spawner (SBX-1): libseccomp compiles
 * it, and the BPF program is kept in memory so that each child only
 * loads it (seccomp_export_bpf writes to an fd: a memfd here).
 */
int
confine_seccomp_agent_build(unsigned int groups, struct sock_fprog *prog)
{
	scmp_filter_ctx ctx;
	struct stat st;
	void *buf = NULL;
	size_t len;
	int r, fd = -1;

	memset(prog, 0, sizeof(*prog));
	if ((groups & ~(SC_AGENT_NO_NET | SC_AGENT_PROXY)) != 0 ||
	    (groups & (SC_AGENT_NO_NET | SC_AGENT_PROXY)) ==
		(SC_AGENT_NO_NET | SC_AGENT_PROXY)) {
		errno = EINVAL;
		return -1;
	}
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	/*
	 * No TSYNC: the child is single-threaded, and TSYNC excludes a
	 * listener.  A binary tree of syscall numbers, not a linear chain:
	 * the same decisions, and the kernel's per-load work (JIT, the
	 * allowed-syscall cache) and each agent syscall walk fewer
	 * instructions.
	 */
	if ((r = seccomp_attr_set(
		 ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0) {
		errno = -r;
		goto fail;
	}
	if (sc_build_agent(ctx, groups) == -1)
		goto fail;
	if ((fd = memfd_create("cordon-agent-bpf", MFD_CLOEXEC)) == -1)
		goto fail;
	if ((r = seccomp_export_bpf(ctx, fd)) < 0) {
		errno = -r;
		goto fail;
	}
	if (fstat(fd, &st) == -1)
		goto fail;
	len = (size_t)st.st_size;
	if (st.st_size <= 0 || len % sizeof(struct sock_filter) != 0 ||
	    len / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		errno = EINVAL;
		goto fail;
	}
	if ((buf = malloc(len)) == NULL)
		goto fail;
	if (pread(fd, buf, len, 0) != (ssize_t)len) {
		if (errno == 0)
			errno = EIO;
		goto fail;
	}
	close(fd);
	seccomp_release(ctx);
	prog->filter = buf;
	prog->len = (unsigned short)(len / sizeof(struct sock_filter));
	return 0;

fail:
	r = errno;
	free(buf);
	if (fd != -1)
		close(fd);
	seccomp_release(ctx);
	errno = r;
	return -1;
}

void
confine_seccomp_agent_free(struct sock_fprog *prog)
{
	free(prog->filter);
	memset(prog, 0, sizeof(*prog));
}

/*
 * In the child: load the built program with a listener.  No allocation,
 * no log, a handful of syscalls.  no_new_privs is set if it is not yet,
 * as libseccomp's own load would.
 */
int
confine_seccomp_agent_install(const struct sock_fprog *prog)
{
	int fd;

	if (prog == NULL || prog->filter == NULL || prog->len == 0) {
		errno = EINVAL;
		return -1;
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 &&
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return -1;
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);
	if (fd < 0)
		return -1;
	/* The listener is the caller's now; never the agent's. */
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

int
confine_seccomp_agent(unsigned int groups)
{
	struct sock_fprog prog;
	int fd, saved;

	if (confine_seccomp_agent_build(groups, &prog) == -1)
		return -1;
	fd = confine_seccomp_agent_install(&prog);
	saved = errno;
	confine_seccomp_agent_free(&prog);
	errno = saved;
	return fd;
}

int
confine_seccomp(enum confine_seccomp mode, unsigned int groups)
{
	scmp_filter_ctx ctx;
	struct sigaction sa;
	uint32_t defact;
	int debug = 0, r;

	if (mode == CONFINE_SECCOMP_ALLOW) {
		if (groups == 0 || (groups & ~SC_ALL) != 0) {
			errno = EINVAL;
			return -1;
		}
		debug = getenv("CORDON_SECCOMP_DEBUG") != NULL;
		defact = debug ? SCMP_ACT_TRAP : SCMP_ACT_KILL_PROCESS;
	} else if (mode == CONFINE_SECCOMP_DENY)
		defact = SCMP_ACT_ALLOW;
	else {
		errno = EINVAL;
		return -1;
	}

	if ((ctx = seccomp_init(defact)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	/* Other ABIs (i386 int 0x80, x32) would walk around any list. */
	if ((r = seccomp_attr_set(
		 ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) < 0 ||
	    (r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)) < 0) {
		errno = -r;
		goto fail;
	}
	if (mode == CONFINE_SECCOMP_ALLOW)
		r = sc_build_allow(ctx, groups);
	else
		r = sc_build_deny(ctx);
	if (r == -1)
		goto fail;

	if (debug) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = sc_sigsys;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSYS, &sa, NULL) == -1)
			goto fail;
		log_warnx("seccomp debug: blocked syscalls trap, not kill");
	}
	if ((r = seccomp_load(ctx)) < 0) {
		errno = -r;
		goto fail;
	}
	seccomp_release(ctx);
	return 0;

fail:
	r = errno;
	seccomp_release(ctx);
	errno = r;
	return -1;
}
