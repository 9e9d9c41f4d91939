/*
 * Unit tests for common/confine.c (SU-2, SBX-1).  Each case forks a child
 * that confines itself and probes; the parent checks its exit status.
 * Root-only cases (user switch, bounding set) are skipped otherwise.
 */
#include "config.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <seccomp.h>

#include "confine.h"
#include "landlock_abi.h"

static char tmpdir[64];
static char tmpfile_f[128];
static char tmpdir_w[128];

typedef int (*probe_fn)(void *);

/* Fork; the child confines itself with cs, runs fn, exits with its code. */
static int
run_confined(const struct confine_spec *cs, probe_fn fn, void *arg)
{
	pid_t pid;
	int st;

	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		confine_self(cs);
		_exit(fn(arg));
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

/* Macros take the status once: the argument is often run_confined(). */
#define assert_exit(status, code)                                              \
	do {                                                                   \
		int st_ = (status);                                            \
		assert_true(WIFEXITED(st_));                                   \
		assert_int_equal(WEXITSTATUS(st_), (code));                    \
	} while (0)

#define assert_killed(status, sig)                                             \
	do {                                                                   \
		int st_ = (status);                                            \
		assert_true(WIFSIGNALED(st_));                                 \
		assert_int_equal(WTERMSIG(st_), (sig));                        \
	} while (0)

/* Fails with EACCES: what Landlock answers. */
static int
open_denied(const char *path, int flags)
{
	int fd;

	if ((fd = open(path, flags, 0600)) != -1) {
		close(fd);
		return 0;
	}
	return errno == EACCES;
}

static void
spec_init(
    struct confine_spec *cs, enum confine_seccomp mode, unsigned int groups)
{
	memset(cs, 0, sizeof(*cs));
	cs->cs_name = "test";
	cs->cs_seccomp = mode;
	cs->cs_syscalls = groups;
}

static int
group_setup(void **state)
{
	int fd;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cordon-confine-XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	snprintf(tmpfile_f, sizeof(tmpfile_f), "%s/f", tmpdir);
	snprintf(tmpdir_w, sizeof(tmpdir_w), "%s/w", tmpdir);
	if ((fd = open(tmpfile_f, O_WRONLY | O_CREAT | O_EXCL, 0644)) == -1)
		return -1;
	if (write(fd, "hello", 5) != 5)
		return -1;
	close(fd);
	if (mkdir(tmpdir_w, 0755) == -1)
		return -1;
	return 0;
}

static int
group_teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Probes (run in the confined child) */

static int
probe_socket(void *arg)
{
	return socket(AF_INET, SOCK_STREAM, 0) == -1 ? 2 : 3;
}

/* Writing: sanitizer builds allow read-only openat, never this. */
static int
probe_openat(void *arg)
{
	return open(tmpfile_f, O_WRONLY) == -1 ? 2 : 3;
}

static int
probe_mmap_exec(void *arg)
{
	void *p;

	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	return p == MAP_FAILED ? 2 : 3;
}

static int
probe_mprotect_exec(void *arg)
{
	void *p;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 2;
	return mprotect(p, 4096, PROT_READ | PROT_EXEC) == -1 ? 3 : 4;
}

/* What SC_BASE must carry: malloc large and small, json-c, time, exit. */
static int
probe_base_works(void *arg)
{
	struct json_object *o;
	struct timespec ts;
	char *big, *small;
	const char *s;

	if ((big = malloc(8 << 20)) == NULL)
		return 2;
	memset(big, 'x', 8 << 20);
	if ((big = realloc(big, 16 << 20)) == NULL)
		return 3;
	free(big);
	if ((small = strdup("cordon")) == NULL)
		return 4;
	free(small);
	if ((o = json_tokener_parse("{\"a\":[1,2,{\"b\":\"c\"}]}")) == NULL)
		return 5;
	s = json_object_to_json_string(o);
	if (s == NULL || strstr(s, "\"b\"") == NULL)
		return 6;
	json_object_put(o);
	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		return 7;
	return 0;
}

static int
probe_abort(void *arg)
{
	abort();
}

static int
probe_kill_parent(void *arg)
{
	return syscall(SYS_tgkill, getppid(), getppid(), 0) == -1 ? 2 : 3;
}

static int
probe_ll_readonly(void *arg)
{
	char buf[8], path[160];
	ssize_t n;
	int fd;

	if ((fd = open(tmpfile_f, O_RDONLY)) == -1)
		return 2;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n != 5 || memcmp(buf, "hello", 5) != 0)
		return 3;
	if (!open_denied(tmpfile_f, O_WRONLY))
		return 4;
	snprintf(path, sizeof(path), "%s/new", tmpdir);
	if (!open_denied(path, O_WRONLY | O_CREAT))
		return 5;
	if (!open_denied("/etc/passwd", O_RDONLY))
		return 6;
	return 0;
}

static int
probe_ll_write(void *arg)
{
	char a[160], b[160], c[160];
	int fd;

	snprintf(a, sizeof(a), "%s/a", tmpdir_w);
	snprintf(b, sizeof(b), "%s/sub", tmpdir_w);
	snprintf(c, sizeof(c), "%s/sub/b", tmpdir_w);
	if ((fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1)
		return 2;
	if (write(fd, "x", 1) != 1 || ftruncate(fd, 0) == -1)
		return 3;
	close(fd);
	if (mkdir(b, 0700) == -1 || rename(a, c) == -1)
		return 4;
	if (unlink(c) == -1 || rmdir(b) == -1)
		return 5;
	/* Not granted by CONFINE_LL_WRITE. */
	if (symlink("/etc/passwd", a) != -1 || errno != EACCES)
		return 6;
	if (mkfifo(a, 0600) != -1 || errno != EACCES)
		return 7;
	/* The parent directory is outside the rule. */
	if (!open_denied(tmpfile_f, O_RDONLY))
		return 8;
	return 0;
}

static int
probe_ll_file_rule(void *arg)
{
	int fd;

	if ((fd = open(tmpfile_f, O_RDONLY)) == -1)
		return 2;
	close(fd);
	if (!open_denied(tmpfile_f, O_WRONLY))
		return 3;
	if (!open_denied(tmpdir, O_RDONLY | O_DIRECTORY))
		return 4;
	return 0;
}

static int
probe_ll_nothing(void *arg)
{
	if (!open_denied("/etc/passwd", O_RDONLY) ||
	    !open_denied("/", O_RDONLY | O_DIRECTORY) ||
	    !open_denied(tmpfile_f, O_RDONLY))
		return 2;
	return 0;
}

static int
probe_exec_true(void *arg)
{
	char *argv[] = {"true", NULL};
	char *envp[] = {NULL};

	execve("/bin/true", argv, envp);
	return errno == EACCES ? 2 : 3;
}

static int
probe_no_net(void *arg)
{
	struct sockaddr_in sin;
	int s;

	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return 2;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) != -1 ||
	    errno != EACCES)
		return 3;
	sin.sin_port = htons(9);
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) != -1 ||
	    errno != EACCES)
		return 4;
	return 0;
}

static int
probe_status(void *arg)
{
	struct json_object *o;
	const char *s;
	int fd = *(int *)arg;

	if ((o = confine_status_json()) == NULL)
		return 2;
	s = json_object_to_json_string(o);
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		return 3;
	json_object_put(o);
	return 0;
}

static int
probe_nobody(void *arg)
{
	const struct passwd *pw = arg;
	uid_t r, e, s;

	if (getresuid(&r, &e, &s) == -1 || r != pw->pw_uid || e != pw->pw_uid ||
	    s != pw->pw_uid)
		return 2;
	if (getgid() != pw->pw_gid)
		return 3;
	if (setuid(0) != -1 || errno != EPERM)
		return 4;
	if (setresgid(0, 0, 0) != -1 || errno != EPERM)
		return 5;
	if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0)
		return 6; /* dropped before the switch, while still root */
	return 0;
}

static int
probe_deny(void *arg)
{
	scmp_filter_ctx ctx;
	struct cordon_landlock_ruleset_attr ra;
	int fd;

	/* SECCOMP_RET_TRACE with no tracer: ENOSYS (so agents' own layer
	 * can turn these into notifications). */
	if (syscall(SYS_ptrace, 0 /* TRACEME */, 0, 0, 0) != -1 ||
	    errno != ENOSYS)
		return 2;
	if (syscall(SYS_bpf, 0, NULL, 0) != -1 || errno != ENOSYS)
		return 3;
	if (syscall(SYS_keyctl, 0, 0, 0, 0, 0) != -1 || errno != EPERM)
		return 4;
	if (syscall(SYS_io_uring_setup, 1, NULL) != -1 || errno != EPERM)
		return 5;
	if (syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0) != -1 ||
	    errno != EPERM)
		return 6;
	if (personality(ADDR_NO_RANDOMIZE) != -1 || errno != EPERM)
		return 7;
	if (personality(0x80000000 | READ_IMPLIES_EXEC) != -1 || errno != EPERM)
		return 8;
	if (personality(0xffffffff) == -1 || personality(PER_LINUX) == -1)
		return 9;
	/* Stacking: a child's own Landlock and seccomp layers still load. */
	if (cordon_landlock_create_ruleset(
		NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) < 1)
		return 10;
	memset(&ra, 0, sizeof(ra));
	ra.handled_access_fs = LANDLOCK_ACCESS_FS_WRITE_FILE;
	if ((fd = cordon_landlock_create_ruleset(
		 &ra, CORDON_LL_ATTR_SIZE(1), 0)) == -1)
		return 11;
	if (cordon_landlock_restrict_self(fd, 0) == -1)
		return 12;
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL ||
	    seccomp_rule_add(
		ctx, SCMP_ACT_ERRNO(EXDEV), SCMP_SYS(getppid), 0) != 0 ||
	    seccomp_load(ctx) != 0)
		return 13;
	seccomp_release(ctx);
	if (syscall(SYS_getppid) != -1 || errno != EXDEV)
		return 14;
	/* The per-run sandbox needs namespaces: not denied here. */
	if (unshare(CLONE_NEWUSER) == -1)
		return 15;
	return 0;
}

/* Tests */

/* SBX-1: allowlist kills what it does not name. */
static void
test_sbx1_allow_kills_unlisted(void **state)
{
	struct confine_spec cs;

	spec_init(&cs, CONFINE_SECCOMP_ALLOW, SC_BASE);
	assert_killed(run_confined(&cs, probe_socket, NULL), SIGSYS);
	assert_killed(run_confined(&cs, probe_openat, NULL), SIGSYS);
	/* tgkill is allowed towards this process only. */
	assert_killed(run_confined(&cs, probe_kill_parent, NULL), SIGSYS);
	assert_killed(run_confined(&cs, probe_abort, NULL), SIGABRT);
}

/* SU-2: SC_BASE is enough for malloc, json-c and time. */
static void
test_su2_allow_base_works(void **state)
{
	struct confine_spec cs;

	spec_init(&cs, CONFINE_SECCOMP_ALLOW, SC_BASE);
	cs.cs_nofile = 64;
	assert_exit(run_confined(&cs, probe_base_works, NULL), 0);
}

/* SBX-1: no new executable memory. */
static void
test_sbx1_no_prot_exec(void **state)
{
	struct confine_spec cs;

	spec_init(&cs, CONFINE_SECCOMP_ALLOW, SC_BASE);
	assert_killed(run_confined(&cs, probe_mmap_exec, NULL), SIGSYS);
	assert_killed(run_confined(&cs, probe_mprotect_exec, NULL), SIGSYS);
}

/* SBX-1: read-only root: read inside, no write, nothing outside. */
static void
test_sbx1_landlock_readonly(void **state)
{
	struct confine_path p = {tmpdir, CONFINE_LL_READ};
	struct confine_spec cs;

	spec_init(
	    &cs, CONFINE_SECCOMP_ALLOW, SC_BASE | SC_FS_READ | SC_FS_WRITE);
	cs.cs_paths = &p;
	cs.cs_npaths = 1;
	assert_exit(run_confined(&cs, probe_ll_readonly, NULL), 0);
}

/* SBX-1: write root: create/rename/remove/truncate, but no symlink/fifo. */
static void
test_sbx1_landlock_write(void **state)
{
	struct confine_path p = {tmpdir_w, CONFINE_LL_WRITE};
	struct confine_spec cs;

	spec_init(&cs, CONFINE_SECCOMP_DENY, 0);
	cs.cs_paths = &p;
	cs.cs_npaths = 1;
	assert_exit(run_confined(&cs, probe_ll_write, NULL), 0);
}

/* A rule on a file only gets file rights (else EINVAL, fatal). */
static void
test_sbx1_landlock_file_rule(void **state)
{
	struct confine_path p = {tmpfile_f, CONFINE_LL_READ};
	struct confine_spec cs;

	spec_init(&cs, CONFINE_SECCOMP_DENY, 0);
	cs.cs_paths = &p;
	cs.cs_npaths = 1;
	assert_exit(run_confined(&cs, probe_ll_file_rule, NULL), 0);
}

/* SU-2: no paths means no file access at all (broker). */
static void
test_su2_landlock_no_paths(void **state)
{
	struct confine_spec cs;

	spec_init(
	    &cs, CONFINE_SECCOMP_ALLOW, SC_BASE | SC_FS_READ | SC_FS_WRITE);
	assert_exit(run_confined(&cs, probe_ll_nothing, NULL), 0);
}

/* SBX-1: execute needs CONFINE_LL_EXEC. */
static void
test_sbx1_landlock_exec(void **state)
{
	struct confine_path p = {"/", CONFINE_LL_READ};
	struct confine_spec cs;

	spec_init(&cs, CONFINE_SECCOMP_DENY, 0);
	cs.cs_paths = &p;
	cs.cs_npaths = 1;
	assert_exit(run_confined(&cs, probe_exec_true, NULL), 2);
	p.cp_access = CONFINE_LL_EXEC;
	assert_exit(run_confined(&cs, probe_exec_true, NULL), 0);
}

/* SBX-3 groundwork: cs_no_net denies TCP bind and connect. */
static void
test_sbx1_landlock_no_net(void **state)
{
	struct confine_spec cs;

	if (confine_landlock_abi() < 4)
		skip();
	spec_init(&cs, CONFINE_SECCOMP_DENY, 0);
	cs.cs_no_net = 1;
	assert_exit(run_confined(&cs, probe_no_net, NULL), 0);
}

/* Fail closed: a path that cannot be opened is fatal. */
static void
test_su2_missing_path_fatal(void **state)
{
	struct confine_path p = {"/nonexistent/cordon", CONFINE_LL_READ};
	struct confine_spec cs;

	spec_init(&cs, CONFINE_SECCOMP_ALLOW, SC_BASE);
	cs.cs_paths = &p;
	cs.cs_npaths = 1;
	assert_exit(run_confined(&cs, probe_base_works, NULL), 1);
}

/* SU-2: health report of a confined daemon. */
static void
test_su2_status_json(void **state)
{
	struct json_object *o, *v;
	struct confine_spec cs;
	char buf[512];
	ssize_t n;
	int fds[2], st;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	spec_init(&cs, CONFINE_SECCOMP_ALLOW, SC_BASE);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		close(fds[0]);
		confine_self(&cs);
		_exit(probe_status(&fds[1]));
	}
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_exit(st, 0);
	assert_true(n > 0);
	buf[n] = '\0';

	assert_non_null(o = json_tokener_parse(buf));
	assert_true(json_object_object_get_ex(o, "pid", &v));
	assert_int_equal(json_object_get_int(v), pid);
	assert_true(json_object_object_get_ex(o, "uid", &v));
	assert_int_equal(json_object_get_int(v), (int)geteuid());
	assert_true(json_object_object_get_ex(o, "capEff", &v));
	assert_string_equal(json_object_get_string(v), "0000000000000000");
	assert_true(json_object_object_get_ex(o, "noNewPrivs", &v));
	assert_int_equal(json_object_get_int(v), 1);
	assert_true(json_object_object_get_ex(o, "seccomp", &v));
	assert_int_equal(json_object_get_int(v), 2);
	assert_true(json_object_object_get_ex(o, "landlock", &v));
	assert_string_equal(json_object_get_string(v), "on");
	assert_true(json_object_object_get_ex(o, "landlockAbi", &v));
	assert_true(json_object_get_int(v) >= 1);
	json_object_put(o);

	/* Unconfined (this process): landlock off. */
	assert_non_null(o = confine_status_json());
	assert_true(json_object_object_get_ex(o, "landlock", &v));
	assert_string_equal(json_object_get_string(v), "off");
	json_object_put(o);
}

/* SU-2: started as root, a daemon becomes its user and cannot go back. */
static void
test_su2_switch_to_nobody(void **state)
{
	struct confine_spec cs;
	struct passwd *pw;

	if (getuid() != 0)
		skip();
	assert_non_null(pw = getpwnam("nobody"));
	spec_init(&cs, CONFINE_SECCOMP_DENY, 0);
	cs.cs_user = "nobody";
	assert_exit(run_confined(&cs, probe_nobody, pw), 0);
}

/* SU-2: the switch helper refuses uid 0 and proves the drop. */
static void
test_su2_switch_user_direct(void **state)
{
	pid_t pid;
	int st;

	if (getuid() != 0)
		skip();
	assert_int_equal(confine_switch_user(0, 0), -1);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		if (confine_switch_user(65534, 65534) != 0)
			_exit(2);
		if (getuid() != 65534 || getegid() != 65534)
			_exit(3);
		_exit(confine_switch_user(65534, 65534) == -1 ? 0 : 4);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_exit(st, 0);
}

/* SU-2: dropping caps works as root (all sets) and unprivileged. */
static void
test_su2_drop_caps(void **state)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct d[2];
	pid_t pid;
	int st;

	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		if (confine_drop_caps() != 0)
			_exit(2);
		memset(&hdr, 0, sizeof(hdr));
		hdr.version = _LINUX_CAPABILITY_VERSION_3;
		if (syscall(SYS_capget, &hdr, d) != 0)
			_exit(3);
		if (d[0].effective | d[1].effective | d[0].permitted |
		    d[1].permitted | d[0].inheritable | d[1].inheritable)
			_exit(4);
		if (getuid() == 0 &&
		    prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0)
			_exit(5);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_exit(st, 0);
}

/* SBX-1: the spawner's denylist refuses, yet lets agents stack layers. */
static void
test_sbx1_deny_mode(void **state)
{
	struct confine_spec cs;

	spec_init(&cs, CONFINE_SECCOMP_DENY, 0);
	assert_exit(run_confined(&cs, probe_deny, NULL), 0);
}

/*
 * SBX-1: an agent's own layer, stacked on the spawner's: namespaces and
 * mounts refused, clone3/io_uring ENOSYS, only AF_UNIX sockets with
 * SC_AGENT_NO_NET, and ptrace handed to the listener (answered here).
 */
/* Set: probe_agent installs this program, built once in the parent. */
static struct sock_fprog agent_prog;

/*
 * SBX-3: AF_UNIX sockets that could name a peer (any type but a stream;
 * no datagram pair) refused whatever the flags; streams and stream or
 * seqpacket pairs kept.
 */
static int
probe_agent_unix(void)
{
	static const int bad[] = {SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET,
	    SOCK_RDM, SOCK_DGRAM | SOCK_CLOEXEC, SOCK_RAW | SOCK_NONBLOCK};
	size_t i;
	int s, sv[2];

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (socket(AF_UNIX, bad[i], 0) != -1 || errno != EACCES)
			return 40;
		if (bad[i] != SOCK_SEQPACKET && bad[i] != SOCK_RDM &&
		    (socketpair(AF_UNIX, bad[i], 0, sv) != -1 ||
			errno != EACCES))
			return 41;
	}
	if ((s = socket(
		 AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1)
		return 42;
	close(s);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == -1)
		return 43;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/*
 * SBX-4: every call that sets a mode refuses S_ISUID and S_ISGID (EPERM
 * before the kernel looks at the path, which does not exist), and only
 * those bits; open counts only when it creates.  openat2 is ENOSYS.
 */
/* -1 with errno want, else the case number. */
#define SETID_CASE(n, call, want)                                              \
	do {                                                                   \
		errno = 0;                                                     \
		if ((call) != -1 || errno != (want))                           \
			return 50 + (n);                                       \
	} while (0)

static int
probe_agent_setid(void)
{
	const char *p = "/nonexistent-cordon/x";

	SETID_CASE(0, chmod(p, 04755), EPERM);
	SETID_CASE(1, chmod(p, 02755), EPERM);
	SETID_CASE(2, chmod(p, 0755), ENOENT);
	SETID_CASE(3, fchmod(-1, 04755), EPERM);
	SETID_CASE(4, fchmod(-1, 0755), EBADF);
	SETID_CASE(5, fchmodat(AT_FDCWD, p, 06755, 0), EPERM);
	SETID_CASE(6, syscall(452, AT_FDCWD, p, 04755, 0), EPERM);
	SETID_CASE(7, open(p, O_WRONLY | O_CREAT, 04755), EPERM);
	SETID_CASE(8, open(p, O_WRONLY | O_CREAT, 0755), ENOENT);
	SETID_CASE(9, open(p, O_RDONLY, 04755), ENOENT);
	SETID_CASE(10, open(p, O_WRONLY | O_TMPFILE, 02755), EPERM);
	SETID_CASE(11, openat(AT_FDCWD, p, O_WRONLY | O_CREAT, 02755), EPERM);
	SETID_CASE(12, syscall(SYS_creat, p, 04755), EPERM);
	SETID_CASE(13, mkdir(p, 02755), EPERM);
	SETID_CASE(14, mkdir(p, 0755), ENOENT);
	SETID_CASE(15, mkdirat(AT_FDCWD, p, 04755), EPERM);
	SETID_CASE(16, mknod(p, S_IFREG | 04755, 0), EPERM);
	SETID_CASE(17, mknodat(AT_FDCWD, p, S_IFREG | 02755, 0), EPERM);
	SETID_CASE(18, syscall(SYS_openat2, AT_FDCWD, p, NULL, 0), ENOSYS);
	return 0;
}

/*
 * SBX-9: no keystrokes pushed into a terminal, even the caller's own
 * controlling one (where the kernel alone would allow TIOCSTI), nor with
 * bits above the 32 the kernel reads of the request.
 */
static int
probe_agent_tty(void)
{
	char c = 'x', *name;
	int m, t;

	if (setsid() == -1 || (m = posix_openpt(O_RDWR | O_NOCTTY)) == -1 ||
	    grantpt(m) == -1 || unlockpt(m) == -1 ||
	    (name = ptsname(m)) == NULL || (t = open(name, O_RDWR)) == -1)
		return 60;
	if (ioctl(t, TIOCSTI, &c) != -1 || errno != EPERM)
		return 61;
	if (syscall(SYS_ioctl, t, (unsigned long)TIOCSTI | (1UL << 32), &c) !=
		-1 ||
	    errno != EPERM)
		return 62;
	if (ioctl(t, TIOCLINUX, &c) != -1 || errno != EPERM)
		return 63;
	/* Closing the controlling terminal hangs up its session: us. */
	signal(SIGHUP, SIG_IGN);
	close(t);
	close(m);
	return 0;
}

static int
probe_agent(void *arg)
{
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	pid_t pid;
	int fd, r, s, st;

	fd = agent_prog.filter != NULL
		 ? confine_seccomp_agent_install(&agent_prog)
		 : confine_seccomp_agent(SC_AGENT_NO_NET);
	if (fd < 0)
		return 20;
	if (unshare(CLONE_NEWUSER) != -1 || errno != EPERM)
		return 21;
	if (mount("none", "/", "tmpfs", 0, NULL) != -1 || errno != EPERM)
		return 22;
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return 23;
	if (syscall(SYS_io_uring_setup, 1, NULL) != -1 || errno != ENOSYS)
		return 24;
	if (socket(AF_INET, SOCK_STREAM, 0) != -1 || errno != EAFNOSUPPORT)
		return 25;
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return 26;
	close(s);
	if ((r = probe_agent_unix()) != 0)
		return r;
	if ((r = probe_agent_setid()) != 0)
		return r;
	if ((r = probe_agent_tty()) != 0)
		return r;
	if (syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0) != -1 ||
	    errno != EPERM)
		return 27;
	/* ptrace waits for the listener's answer: give it from a child. */
	if ((pid = fork()) == 0) {
		if (seccomp_notify_alloc(&req, &resp) != 0 ||
		    seccomp_notify_receive(fd, req) != 0 ||
		    req->data.nr != SCMP_SYS(ptrace))
			_exit(1);
		resp->id = req->id;
		resp->error = -EXDEV;
		resp->val = 0;
		resp->flags = 0;
		_exit(seccomp_notify_respond(fd, resp) == 0 ? 0 : 2);
	}
	if (syscall(SYS_ptrace, 0, 0, 0, 0) != -1 || errno != EXDEV)
		return 28;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return 29;
	return 0;
}

static void
test_sbx1_agent_layer(void **state)
{
	struct confine_spec cs;

	spec_init(&cs, CONFINE_SECCOMP_DENY, 0);
	cs.cs_no_landlock = 1;
	assert_exit(run_confined(&cs, probe_agent, NULL), 0);
}

/*
 * SBX-1: the same layer built once (as the spawner does at start) and
 * only installed in the child behaves exactly like the one-call form.
 */
static void
test_sbx1_agent_layer_prebuilt(void **state)
{
	struct confine_spec cs;
	struct sock_fprog empty;

	memset(&empty, 0, sizeof(empty));
	assert_int_equal(confine_seccomp_agent_install(&empty), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(confine_seccomp_agent_build(0x1, &empty), -1);
	assert_int_equal(errno, EINVAL);
	assert_null(empty.filter);
	assert_int_equal(
	    confine_seccomp_agent_build(SC_AGENT_NO_NET, &agent_prog), 0);
	assert_non_null(agent_prog.filter);
	assert_true(agent_prog.len > 0);
	spec_init(&cs, CONFINE_SECCOMP_DENY, 0);
	cs.cs_no_landlock = 1;
	assert_exit(run_confined(&cs, probe_agent, NULL), 0);
	confine_seccomp_agent_free(&agent_prog);
	assert_null(agent_prog.filter);
}

/* The agent child's raw drop, in a fresh user namespace (full caps there,
 * as in a sandboxed run) and, as root, in the initial one. */
static int
drop_caps_agent_child(void)
{
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct d[2];
	int cap;

	if (confine_drop_caps_agent() != 0)
		return 2;
	memset(&hdr, 0, sizeof(hdr));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, d) != 0)
		return 3;
	if (d[0].effective | d[1].effective | d[0].permitted | d[1].permitted |
	    d[0].inheritable | d[1].inheritable)
		return 4;
	for (cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) > 0 ||
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) > 0)
			return 5;
	return 0;
}

static void
test_sbx1_drop_caps_agent(void **state)
{
	pid_t pid;
	int st;

	pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (pid == -1)
		skip();
	if (pid == 0)
		_exit(drop_caps_agent_child());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_exit(st, 0);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0)
		_exit(drop_caps_agent_child());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_exit(st, 0);
}

/* CORDON_SECCOMP_DEBUG names the syscall instead of a silent kill. */
static void
test_sbx1_seccomp_debug(void **state)
{
	struct confine_spec cs;
	char buf[128], want[64];
	ssize_t n;
	int fds[2], st;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	spec_init(&cs, CONFINE_SECCOMP_ALLOW, SC_BASE);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], STDERR_FILENO);
		setenv("CORDON_SECCOMP_DEBUG", "1", 1);
		confine_self(&cs);
		_exit(probe_socket(NULL));
	}
	close(fds[1]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	assert_exit(st, 31);
	assert_true(n > 0);
	buf[n] = '\0';
	snprintf(want, sizeof(want), "seccomp: blocked syscall %d\n",
	    (int)SYS_socket);
	assert_non_null(strstr(buf, want));
}

/* Argument checks that need no child. */
static void
test_confine_args(void **state)
{
	struct confine_path bad = {"/", 0x80};

	assert_true(confine_landlock_abi() >= 1);
	assert_int_equal(CORDON_LL_ATTR_SIZE(1), 8);
	assert_int_equal(CORDON_LL_ATTR_SIZE(4), 16);
	assert_int_equal(CORDON_LL_ATTR_SIZE(6), 24);
	assert_int_equal(confine_landlock_ruleset(&bad, 1, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(confine_seccomp(CONFINE_SECCOMP_ALLOW, 0x100), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(confine_seccomp(CONFINE_SECCOMP_ALLOW, 0), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_confine_args),
	    cmocka_unit_test(test_sbx1_allow_kills_unlisted),
	    cmocka_unit_test(test_su2_allow_base_works),
	    cmocka_unit_test(test_sbx1_no_prot_exec),
	    cmocka_unit_test(test_sbx1_landlock_readonly),
	    cmocka_unit_test(test_sbx1_landlock_write),
	    cmocka_unit_test(test_sbx1_landlock_file_rule),
	    cmocka_unit_test(test_su2_landlock_no_paths),
	    cmocka_unit_test(test_sbx1_landlock_exec),
	    cmocka_unit_test(test_sbx1_landlock_no_net),
	    cmocka_unit_test(test_su2_missing_path_fatal),
	    cmocka_unit_test(test_su2_status_json),
	    cmocka_unit_test(test_su2_switch_to_nobody),
	    cmocka_unit_test(test_su2_switch_user_direct),
	    cmocka_unit_test(test_su2_drop_caps),
	    cmocka_unit_test(test_sbx1_deny_mode),
	    cmocka_unit_test(test_sbx1_agent_layer),
	    cmocka_unit_test(test_sbx1_agent_layer_prebuilt),
	    cmocka_unit_test(test_sbx1_drop_caps_agent),
	    cmocka_unit_test(test_sbx1_seccomp_debug),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
