/*
 * Unit tests for the one spawn helper (common/spawn_helper.c): the child
 * gets exactly the fds it is given, a built environment, no shell.
 * SP-1 (absolute path, argv only), SP-6 (new session, other fds closed).
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spawn_helper.h"

/* Run argv with fds mapped; return what the child wrote to its fd 1. */
static int
run(char *const argv[], char *const envp[], int setsid_on, char *out,
    size_t outsz, int *status)
{
	struct spawn_fd fds[1];
	struct spawn_req req;
	int p[2];
	ssize_t n;
	size_t got = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	fds[0].sf_src = p[1];
	fds[0].sf_dst = 1;
	memset(&req, 0, sizeof(req));
	req.sr_path = argv[0];
	req.sr_argv = argv;
	req.sr_envp = envp;
	req.sr_fds = fds;
	req.sr_nfds = 1;
	req.sr_setsid = setsid_on;
	pid = spawn_exec(&req);
	close(p[1]);
	if (pid == -1) {
		close(p[0]);
		return -1;
	}
	while (
	    got + 1 < outsz && (n = read(p[0], out + got, outsz - got - 1)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(p[0]);
	waitpid(pid, status, 0);
	return 0;
}

static void
test_sp1_relative_path_refused(void **state)
{
	char *argv[] = {"true", NULL};
	char *envp[] = {NULL};
	struct spawn_req req = {
	    .sr_path = "true", .sr_argv = argv, .sr_envp = envp};

	assert_int_equal(spawn_exec(&req), -1);
	assert_int_equal(errno, EINVAL);
}

static void
test_sp1_argv_is_not_a_shell(void **state)
{
	/* A shell metacharacter stays one literal argument. */
	char *argv[] = {"/bin/echo", "a; echo injected", NULL};
	char *envp[] = {NULL};
	char out[256];
	int st;

	assert_int_equal(run(argv, envp, 0, out, sizeof(out), &st), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(out, "a; echo injected\n");
}

static void
test_sp4_env_is_built(void **state)
{
	char *argv[] = {"/usr/bin/env", NULL};
	char *envp[] = {"ONLY=this", NULL};
	char out[256];
	int st;

	setenv("CORDON_TEST_LEAK", "secret", 1);
	assert_int_equal(run(argv, envp, 0, out, sizeof(out), &st), 0);
	assert_string_equal(out, "ONLY=this\n");
	unsetenv("CORDON_TEST_LEAK");
}

static void
test_sp6_other_fds_closed(void **state)
{
	char *argv[] = {"/bin/ls", "/proc/self/fd", NULL};
	char *envp[] = {NULL};
	char out[256];
	int st, extra;

	/* An fd open in the parent without CLOEXEC must not reach the child. */
	extra = open("/dev/null", O_RDONLY);
	assert_true(extra > 2);
	assert_int_equal(run(argv, envp, 0, out, sizeof(out), &st), 0);
	close(extra);
	/* 0, 1, 2 and the fd ls itself opened on /proc/self/fd. */
	assert_string_equal(out, "0\n1\n2\n3\n");
}

/*
 * The same below the highest destination: an fd the map does not name
 * is closed even when it lies between 3 and the map's top, close-on-exec
 * or not (the spawner's own fd 3 once reached actions that way).
 */
static void
test_sp6_unnamed_fds_under_the_map_closed(void **state)
{
	char *argv[] = {"/bin/sh", "-c",
	    "for f in 3 4 5 6 7 8 9; do [ -e /proc/self/fd/$f ] && echo $f; "
	    "done; exit 0",
	    NULL};
	char *envp[] = {NULL};
	struct spawn_fd fds[2];
	struct spawn_req req = {
	    .sr_path = argv[0], .sr_argv = argv, .sr_envp = envp};
	char out[64];
	ssize_t n;
	size_t got = 0;
	pid_t pid;
	int p[2], low, mid, st;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	/* Not close-on-exec, and both under the destination 9. */
	assert_int_equal(low = dup2(p[1], 4), 4);
	assert_int_equal(mid = dup2(p[1], 7), 7);
	fds[0].sf_src = p[1];
	fds[0].sf_dst = 1;
	fds[1].sf_src = p[1];
	fds[1].sf_dst = 9;
	req.sr_fds = fds;
	req.sr_nfds = 2;
	assert_true((pid = spawn_exec(&req)) > 0);
	close(low);
	close(mid);
	close(p[1]);
	while (got + 1 < sizeof(out) &&
	       (n = read(p[0], out + got, sizeof(out) - got - 1)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_string_equal(out, "9\n");
}

/*
 * fd_close_range, shared by the helper's child and cordon-init: the
 * range goes, open or not, and the descriptors on either side stay.
 */
static void
test_sp6_close_range_closes_exactly_the_range(void **state)
{
	int fd, nul;

	assert_true((nul = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0);
	for (fd = 200; fd <= 204; fd++)
		assert_int_equal(dup2(nul, fd), fd);
	assert_int_equal(dup2(nul, 230), 230);
	fd_close_range(201, 229);
	assert_true(fcntl(200, F_GETFD) != -1);
	for (fd = 201; fd <= 204; fd++)
		assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_true(fcntl(230, F_GETFD) != -1);
	/* An empty range closes nothing. */
	fd_close_range(230, 229);
	assert_true(fcntl(230, F_GETFD) != -1);
	fd_close_range(230, (int)(~0U >> 1));
	assert_int_equal(fcntl(230, F_GETFD), -1);
	close(200);
	close(nul);
}

static void
test_sp6_new_session(void **state)
{
	char *argv2[] = {"/bin/sh", "-c",
	    "echo $$ $(cut -d' ' -f6 "
	    "/proc/$$/stat)",
	    NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	char out[256];
	long pid, sid;
	int st;

	/* (sh is used here only as the test's probe, not by cordon.) */
	assert_int_equal(run(argv2, envp, 1, out, sizeof(out), &st), 0);
	assert_int_equal(sscanf(out, "%ld %ld", &pid, &sid), 2);
	assert_int_equal(pid, sid);
}

/* A child that cannot reach execve is reported, not returned (SBX-1). */
static void
test_sp1_exec_failure_reported(void **state)
{
	char *argv[] = {"/nonexistent/cordon-test", NULL};
	char *envp[] = {NULL};
	struct spawn_status ss;
	struct spawn_req req = {.sr_path = argv[0],
	    .sr_argv = argv,
	    .sr_envp = envp,
	    .sr_status = &ss};

	assert_int_equal(spawn_exec(&req), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(ss.ss_step, SPAWN_STEP_EXEC);
	assert_int_equal(ss.ss_errno, ENOENT);
	assert_string_equal(spawn_step_name(ss.ss_step), "execve");
	/* The failed child was reaped already. */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static int
hook_fails(void *arg)
{
	errno = EXDEV;
	return SPAWN_STEP_HOOK_BASE + 7;
}

static void
test_sbx1_hook_step_reported(void **state)
{
	char *argv[] = {"/bin/true", NULL};
	char *envp[] = {NULL};
	struct spawn_status ss;
	struct spawn_req req = {.sr_path = argv[0],
	    .sr_argv = argv,
	    .sr_envp = envp,
	    .sr_hook = hook_fails,
	    .sr_status = &ss};

	assert_int_equal(spawn_exec(&req), -1);
	assert_int_equal(ss.ss_step, SPAWN_STEP_HOOK_BASE + 7);
	assert_int_equal(ss.ss_errno, EXDEV);
}

static int run_req(struct spawn_req *, char *, size_t, int *);

/* clone(2) flags: pid 1 of a new pid namespace, still our child. */
static void
test_sbx4_clone_new_pid_namespace(void **state)
{
	char *argv[] = {"/bin/sh", "-c", "echo $$", NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	struct spawn_req req = {.sr_path = argv[0],
	    .sr_argv = argv,
	    .sr_envp = envp,
	    .sr_clone_flags = CLONE_NEWUSER | CLONE_NEWPID,
	    .sr_pdeathsig = SIGKILL};
	char out[64];
	int st;

	assert_int_equal(run_req(&req, out, sizeof(out), &st), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(out, "1\n");
}

/* Run /bin/sh -c script with rlimits/umask set; stdout into out. */
static int
run_req(struct spawn_req *req, char *out, size_t outsz, int *status)
{
	struct spawn_fd fds[1];
	ssize_t n;
	size_t got = 0;
	pid_t pid;
	int p[2];

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	fds[0].sf_src = p[1];
	fds[0].sf_dst = 1;
	req->sr_fds = fds;
	req->sr_nfds = 1;
	pid = spawn_exec(req);
	close(p[1]);
	if (pid == -1) {
		close(p[0]);
		return -1;
	}
	while (
	    got + 1 < outsz && (n = read(p[0], out + got, outsz - got - 1)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(p[0]);
	waitpid(pid, status, 0);
	return 0;
}

static void
test_sp7_rlimits_set_in_child(void **state)
{
	char *argv[] = {
	    "/bin/sh", "-c", "ulimit -t; ulimit -n; ulimit -f", NULL};
	char *envp[] = {NULL};
	struct spawn_rlimit rl[] = {
	    {RLIMIT_CPU, 7},
	    {RLIMIT_NOFILE, 64},
	    {RLIMIT_FSIZE, 1024 * 512},
	};
	struct spawn_req req = {.sr_path = argv[0],
	    .sr_argv = argv,
	    .sr_envp = envp,
	    .sr_rlimits = rl,
	    .sr_nrlimits = 3};
	char out[256];
	int st;

	assert_int_equal(run_req(&req, out, sizeof(out), &st), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* sh reports the file size limit in 512-byte blocks */
	assert_string_equal(out, "7\n64\n1024\n");
}

static void
test_sp7_bad_rlimit_aborts_exec(void **state)
{
	char *argv[] = {"/bin/true", NULL};
	char *envp[] = {NULL};
	struct spawn_rlimit rl[] = {{-1, 1}};
	struct spawn_req req = {.sr_path = argv[0],
	    .sr_argv = argv,
	    .sr_envp = envp,
	    .sr_rlimits = rl,
	    .sr_nrlimits = 1};
	char out[16];
	int st;

	assert_int_equal(run_req(&req, out, sizeof(out), &st), -1);
	assert_int_equal(errno, EINVAL);
}

static void
test_sp6_umask_077(void **state)
{
	char *argv[] = {"/bin/sh", "-c", "umask", NULL};
	char *envp[] = {NULL};
	struct spawn_req req = {.sr_path = argv[0],
	    .sr_argv = argv,
	    .sr_envp = envp,
	    .sr_set_umask = 1,
	    .sr_umask = 077};
	char out[64];
	int st;

	umask(022);
	assert_int_equal(run_req(&req, out, sizeof(out), &st), 0);
	assert_string_equal(out, "0077\n");
}

static void
test_sp1_too_many_fds_refused(void **state)
{
	char *argv[] = {"/bin/true", NULL};
	char *envp[] = {NULL};
	struct spawn_fd fds[17];
	struct spawn_req req = {.sr_path = argv[0],
	    .sr_argv = argv,
	    .sr_envp = envp,
	    .sr_fds = fds,
	    .sr_nfds = 17};

	memset(fds, 0, sizeof(fds));
	assert_int_equal(spawn_exec(&req), -1);
	assert_int_equal(errno, EINVAL);
}

/* Only CLONE_NEW* flags: nothing else may be shared with a child. */
static void
test_sp1_clone_flags_only_namespaces(void **state)
{
	static const unsigned long bad[] = {
	    CLONE_FILES, CLONE_FS, CLONE_VM, CLONE_SIGHAND, CLONE_PTRACE};
	char *argv[] = {"/bin/true", NULL};
	char *envp[] = {NULL};
	struct spawn_req req = {
	    .sr_path = argv[0], .sr_argv = argv, .sr_envp = envp};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		req.sr_clone_flags = bad[i] | CLONE_NEWPID;
		assert_int_equal(spawn_exec(&req), -1);
		assert_int_equal(errno, EINVAL);
	}
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/*
 * AU-6: a held init.  A stand-in for cordon-init (a script, so that the
 * helper's side is what is proven): it says it runs, reads the go on
 * its socket and execs the agent; anything but the go and it exits.
 */
static const char held_init[] =
    "#!/bin/sh\n"
    "printf '\\011\\000\\000\\000\\000\\000\\000\\000' >&$1\n"
    "[ \"$(head -c1 <&$2)\" = g ] || exit 127\n"
    "p=$3; shift 4; exec \"$p\" \"$@\"\n";

/* A held spawn of sh -c script; its stdout in *out, the go in *go. */
static pid_t
held_spawn(const char *init, const char *script, int *out, int *go, int *sfd)
{
	char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	struct spawn_fd fds[2];
	struct spawn_req req = {.sr_path = argv[0],
	    .sr_argv = argv,
	    .sr_envp = envp,
	    .sr_fds = fds,
	    .sr_nfds = 2,
	    .sr_clone_flags = CLONE_NEWUSER | CLONE_NEWPID,
	    .sr_pdeathsig = SIGKILL,
	    .sr_init = init,
	    .sr_init_fd = 6,
	    .sr_held = sfd};
	int p[2], xs[2];
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(spawn_init_channel(xs, 0), 0);
	fds[0] = (struct spawn_fd){p[1], 1};
	fds[1] = (struct spawn_fd){xs[1], 6};
	pid = spawn_exec(&req);
	close(p[1]);
	close(xs[1]);
	*out = p[0];
	*go = xs[0];
	return pid;
}

static void
test_au6_held_init_waits_for_its_go(void **state)
{
	char dir[] = "/tmp/cordon-test-held.XXXXXX", init[64], buf[64];
	struct pollfd pf;
	int fd, out, go, sfd = -1, st;
	ssize_t n;
	pid_t pid;

	assert_non_null(mkdtemp(dir));
	snprintf(init, sizeof(init), "%s/init", dir);
	fd = open(init, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	assert_true(fd != -1);
	assert_int_equal(write(fd, held_init, sizeof(held_init) - 1),
	    (ssize_t)sizeof(held_init) - 1);
	close(fd);
	/* Held: spawn_exec returns with the init running, no agent yet. */
	pid = held_spawn(init, "echo ran", &out, &go, &sfd);
	assert_true(pid > 0 && sfd != -1);
	pf.fd = out;
	pf.events = POLLIN;
	assert_int_equal(poll(&pf, 1, 200), 0);
	assert_int_equal(spawn_init_go(go), 0);
	assert_int_equal(spawn_held_exec(pid, sfd, NULL), pid);
	n = read(out, buf, sizeof(buf) - 1);
	assert_int_equal(n, 4);
	assert_memory_equal(buf, "ran\n", 4);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(out);
	close(go);
	/* EOF instead of the go: the agent never runs. */
	pid = held_spawn(init, "echo ran", &out, &go, &sfd);
	assert_true(pid > 0);
	close(go);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 127);
	assert_int_equal(read(out, buf, sizeof(buf)), 0);
	close(out);
	close(sfd);
	/* Held without an init is refused. */
	assert_int_equal(held_spawn(NULL, "true", &out, &go, &sfd), -1);
	assert_int_equal(errno, EINVAL);
	close(out);
	close(go);
	unlink(init);
	rmdir(dir);
}

static volatile sig_atomic_t usr1_seen;

static void
on_usr1(int sig)
{
	usr1_seen = 1;
}

static int
hook_raises_usr1(void *arg)
{
	kill(getpid(), SIGUSR1);
	return 0;
}

/*
 * The child runs on our memory: a handler of ours must never run in it.
 * It has SIG_DFL by the time its hook runs, so SIGUSR1 ends it, and our
 * flag and signal mask are as they were.  A child that a signal ends
 * before execve did not start: -1, step "died", already reaped.
 */
static void
test_sp6_parent_handlers_not_in_child(void **state)
{
	char *argv[] = {"/bin/true", NULL};
	char *envp[] = {NULL};
	struct spawn_status ss;
	struct spawn_req req = {.sr_path = argv[0],
	    .sr_argv = argv,
	    .sr_envp = envp,
	    .sr_hook = hook_raises_usr1,
	    .sr_status = &ss};
	struct sigaction sa, old;
	sigset_t before, after;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	sigemptyset(&before);
	sigaddset(&before, SIGUSR2);
	assert_int_equal(sigprocmask(SIG_SETMASK, &before, NULL), 0);
	usr1_seen = 0;

	assert_int_equal(spawn_exec(&req), -1);
	assert_int_equal(errno, EINTR);
	assert_int_equal(ss.ss_step, SPAWN_STEP_DIED);
	assert_string_equal(spawn_step_name(ss.ss_step), "died");
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	assert_int_equal(usr1_seen, 0);
	assert_int_equal(sigprocmask(SIG_SETMASK, NULL, &after), 0);
	assert_true(sigismember(&after, SIGUSR2));
	assert_false(sigismember(&after, SIGUSR1));

	sigemptyset(&before);
	sigprocmask(SIG_SETMASK, &before, NULL);
	sigaction(SIGUSR1, &old, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sp1_relative_path_refused),
	    cmocka_unit_test(test_sp1_argv_is_not_a_shell),
	    cmocka_unit_test(test_sp4_env_is_built),
	    cmocka_unit_test(test_sp6_other_fds_closed),
	    cmocka_unit_test(test_sp6_unnamed_fds_under_the_map_closed),
	    cmocka_unit_test(test_sp6_close_range_closes_exactly_the_range),
	    cmocka_unit_test(test_sp6_new_session),
	    cmocka_unit_test(test_sp1_exec_failure_reported),
	    cmocka_unit_test(test_sbx1_hook_step_reported),
	    cmocka_unit_test(test_sbx4_clone_new_pid_namespace),
	    cmocka_unit_test(test_sp7_rlimits_set_in_child),
	    cmocka_unit_test(test_sp7_bad_rlimit_aborts_exec),
	    cmocka_unit_test(test_sp6_umask_077),
	    cmocka_unit_test(test_sp1_too_many_fds_refused),
	    cmocka_unit_test(test_sp1_clone_flags_only_namespaces),
	    cmocka_unit_test(test_sp6_parent_handlers_not_in_child),
	    cmocka_unit_test(test_au6_held_init_waits_for_its_go),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
