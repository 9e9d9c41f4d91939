/*
 * escape-agent: a test agent for the per-run sandbox (SBX-1 ... SBX-5).
 * argv[1] is "MODE [ARG]" (the prompt); it makes one real attempt and
 * prints one line: "MODE BLOCKED ENAME", "MODE ESCAPED" or "MODE OK".
 * Driven by tests/integration/test_sandbox.py through the real API.
 * Touches only what its mode names.
 */
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *mode = "?";

static int
blocked(void)
{
	const char *n = strerrorname_np(errno);

	printf("%s BLOCKED %s\n", mode, n != NULL ? n : "E?");
	return 0;
}

static int
escaped(void)
{
	printf("%s ESCAPED\n", mode);
	return 0;
}

static int
ok(void)
{
	printf("%s OK\n", mode);
	return 0;
}

static int
try_read(const char *path)
{
	char buf[64];
	int fd;

	if ((fd = open(path, O_RDONLY)) == -1)
		return blocked();
	if (read(fd, buf, sizeof(buf)) == -1) {
		close(fd);
		return blocked();
	}
	close(fd);
	return escaped();
}

static int
try_write(const char *path)
{
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600)) == -1)
		return blocked();
	if (write(fd, "x\n", 2) != 2) {
		close(fd);
		return blocked();
	}
	close(fd);
	return escaped();
}

/* 0 if the file could be created and written. */
static int
try_write_ok(const char *path)
{
	int fd, r;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) == -1)
		return -1;
	r = write(fd, "ok\n", 3) == 3 ? 0 : -1;
	close(fd);
	return r;
}

/*
 * The operator's home: named by the test (ESCAPE_OP_HOME), since HOME
 * is the agent's own private home (SBX-9); a real agent would look in
 * /etc/passwd, where the test's fake operator is not.
 */
static const char *
home(void)
{
	const char *h = getenv("ESCAPE_OP_HOME");

	if (h == NULL)
		h = getenv("HOME");

	return h != NULL ? h : "/root";
}

static int
do_connect(const char *arg)
{
	struct sockaddr_in sin;
	int s;

	if ((s = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return blocked();
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)atoi(arg));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		return blocked();
	return escaped();
}

/* An abstract unix socket of the host's (the test listens on it). */
static int
do_abstract(const char *arg)
{
	struct sockaddr_un sun;
	socklen_t len;
	int s;

	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return blocked();
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1, "%s", arg);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			  strlen(arg));
	if (connect(s, (struct sockaddr *)&sun, len) == -1)
		return blocked();
	return escaped();
}

/* A host daemon's unix socket with a path (the test listens on it). */
static int
do_unixpath(const char *arg)
{
	struct sockaddr_un sun;
	int s;

	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return blocked();
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", arg);
	if (connect(s, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		return blocked();
	return escaped();
}

/*
 * The same socket reached without connect(2): a datagram from one end
 * of a socketpair, addressed to the path (the test's socket is a
 * datagram one for this).
 */
static int
do_dgram(const char *arg)
{
	struct sockaddr_un sun;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == -1)
		return blocked();
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", arg);
	if (sendto(sv[0], "x", 1, 0, (struct sockaddr *)&sun, sizeof(sun)) ==
	    -1)
		return blocked();
	return escaped();
}

static int
do_bpf(void)
{
	static const struct bpf_insn prog[] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (unsigned long)prog;
	a.insn_cnt = 2;
	a.license = (unsigned long)"GPL";
	if (syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a)) == -1)
		return blocked();
	return escaped();
}

/*
 * /proc/1 is our run's own cordon-init when /proc is our pid namespace's
 * (the host's init is out of sight; ourselves when there is no init).
 * With the host's /proc (no pid namespace) /proc/1 is the host's init.
 */
static int
do_proc1(void)
{
	char self[32], comm[32];
	ssize_t n = readlink("/proc/self", self, sizeof(self) - 1);
	FILE *f;

	if (n > 0) {
		self[n] = '\0';
		if (strcmp(self, "1") == 0) {
			printf("%s BLOCKED OWNPID\n", mode);
			return 0;
		}
	}
	if ((f = fopen("/proc/1/comm", "r")) != NULL) {
		if (fgets(comm, sizeof(comm), f) != NULL &&
		    strcmp(comm, "cordon-init\n") == 0) {
			fclose(f);
			printf("%s BLOCKED OWNPID\n", mode);
			return 0;
		}
		fclose(f);
	}
	return try_read("/proc/1/environ");
}

static int
do_caps(void)
{
	char line[256];
	int bad = 0, seen = 0;
	FILE *f;

	if ((f = fopen("/proc/self/status", "r")) == NULL)
		return blocked();
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "CapEff:", 7) == 0 ||
		    strncmp(line, "CapPrm:", 7) == 0) {
			seen++;
			if (strtoull(line + 7, NULL, 16) != 0)
				bad = 1;
		}
	fclose(f);
	if (seen != 2 || bad)
		return escaped();
	return ok();
}

static int
do_git(void)
{
	char *argv[] = {"git", "status", "--porcelain", NULL};
	pid_t pid;
	int st, nul;

	if (access("/usr/bin/git", X_OK) == -1) {
		printf("%s SKIP\n", mode);
		return 0;
	}
	fflush(stdout);
	if ((pid = fork()) == -1)
		return blocked();
	if (pid == 0) {
		if ((nul = open("/dev/null", O_WRONLY)) != -1)
			dup2(nul, 1);
		execv("/usr/bin/git", argv);
		_exit(126);
	}
	if (waitpid(pid, &st, 0) == -1)
		return blocked();
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return ok();
	printf("%s FAILED %d\n", mode, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

int
main(int argc, char **argv)
{
	char buf[4096], path[4096], *arg = "";

	if (argc < 2)
		return 2;
	snprintf(buf, sizeof(buf), "%s", argv[1]);
	mode = buf;
	if ((arg = strchr(buf, ' ')) != NULL)
		*arg++ = '\0';
	else
		arg = "";

	if (strcmp(mode, "read-ssh") == 0) {
		snprintf(path, sizeof(path), "%s/.ssh/id_rsa", home());
		return try_read(path);
	}
	if (strcmp(mode, "read") == 0) /* secrets.yaml, the vault, ... */
		return try_read(arg);
	if (strcmp(mode, "write-bashrc") == 0) {
		snprintf(path, sizeof(path), "%s/.bashrc", home());
		return try_write(path);
	}
	if (strcmp(mode, "write") == 0) /* the vault, the audit dir */
		return try_write(arg);
	if (strcmp(mode, "follow-link") == 0) {
		/* arg: a symlink the test planted in the workdir -> ~/.ssh */
		snprintf(path, sizeof(path), "%s/id_rsa", arg);
		return try_read(path);
	}
	if (strcmp(mode, "symlink") == 0) {
		snprintf(path, sizeof(path), "%s/.ssh", home());
		if (symlink(path, "own-link") == -1)
			return blocked();
		return try_read("own-link/id_rsa");
	}
	if (strcmp(mode, "connect") == 0)
		return do_connect(arg);
	if (strcmp(mode, "unixpath") == 0)
		return do_unixpath(arg);
	if (strcmp(mode, "dgram") == 0)
		return do_dgram(arg);
	if (strcmp(mode, "abstract") == 0)
		return do_abstract(arg);
	if (strcmp(mode, "ptrace") == 0) {
		if (ptrace(PTRACE_ATTACH, getppid(), NULL, NULL) == -1)
			return blocked();
		return escaped();
	}
	if (strcmp(mode, "unshare") == 0) {
		if (unshare(CLONE_NEWUSER) == -1)
			return blocked();
		return escaped();
	}
	if (strcmp(mode, "mount") == 0) {
		if (mount("none", ".", "tmpfs", 0, NULL) == -1)
			return blocked();
		return escaped();
	}
	if (strcmp(mode, "bpf") == 0)
		return do_bpf();
	if (strcmp(mode, "proc1") == 0)
		return do_proc1();
	if (strcmp(mode, "kill") == 0) {
		if (kill((pid_t)atoi(arg), SIGTERM) == -1)
			return blocked();
		return escaped();
	}
	if (strcmp(mode, "write-workdir") == 0) {
		if (try_write_ok("written-by-agent") == 0)
			return ok();
		return blocked();
	}
	if (strcmp(mode, "read-root") == 0) {
		int fd;

		if ((fd = open(arg, O_RDONLY)) == -1 ||
		    read(fd, path, sizeof(path)) < 0)
			return blocked();
		close(fd);
		return ok();
	}
	if (strcmp(mode, "size") == 0) { /* bytes readable at arg */
		ssize_t n, total = 0;
		int fd;

		if ((fd = open(arg, O_RDONLY)) == -1)
			return blocked();
		while ((n = read(fd, path, sizeof(path))) > 0)
			total += n;
		close(fd);
		printf("%s OK %zd\n", mode, total);
		return 0;
	}
	if (strcmp(mode, "write-tmp") == 0) {
		const char *t = getenv("TMPDIR");

		snprintf(path, sizeof(path), "%s/agent-tmp-file",
		    t != NULL ? t : "/tmp");
		if (try_write_ok(path) == 0)
			return ok();
		return blocked();
	}
	if (strcmp(mode, "caps") == 0)
		return do_caps();
	if (strcmp(mode, "git") == 0)
		return do_git();
	if (strcmp(mode, "whoami") == 0) {
		printf("%s OK pid=%d tmp=%s\n", mode, (int)getpid(),
		    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "");
		return 0;
	}
	if (strcmp(mode, "--version") == 0) {
		printf("escape-agent 1.0\n");
		return 0;
	}
	printf("%s UNKNOWN\n", mode);
	return 2;
}
