/*
 * cordon-init's runtime: the program's entry and the few C library calls
 * init.c and fdclose.c make, each one system call.  cordon-init starts
 * once per run, between the sandbox and the agent, so its start is on
 * every run's path; a static C library's start-up (its CPU feature and
 * cache probes, each a trap to the hypervisor on a virtual machine, and
 * the self-relocation of a static PIE) costs more than everything init
 * itself does.  Linked with -nostdlib on x86-64; elsewhere init is
 * linked with the C library (meson.build).
 *
 * Nothing here keeps state but errno and environ; no allocation, no
 * thread, no signal handler, no stack protector (there is no thread
 * pointer to hold its canary).
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "init_rt.c: x86-64 only"
#endif

int main(int, char **);
void init_rt_start(long *sp);

char **environ;
static int init_errno;

int *
__errno_location(void)
{
	return &init_errno;
}

static long
sc6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long r;

	__asm__ volatile(
	    "syscall"
	    : "=a"(r)
	    : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
	    : "rcx", "r11", "memory");
	return r;
}

/* The C library's convention: -1 with errno, or the result. */
static long
sc_ret(long r)
{
	if (r < 0 && r > -4096) {
		init_errno = (int)-r;
		return -1;
	}
	return r;
}

long
syscall(long n, ...)
{
	long a, b, c, d, e, f;
	va_list ap;

	va_start(ap, n);
	a = va_arg(ap, long);
	b = va_arg(ap, long);
	c = va_arg(ap, long);
	d = va_arg(ap, long);
	e = va_arg(ap, long);
	f = va_arg(ap, long);
	va_end(ap);
	return sc_ret(sc6(n, a, b, c, d, e, f));
}

ssize_t
read(int fd, void *buf, size_t n)
{
	return sc_ret(sc6(SYS_read, fd, (long)buf, (long)n, 0, 0, 0));
}

ssize_t
write(int fd, const void *buf, size_t n)
{
	return sc_ret(sc6(SYS_write, fd, (long)buf, (long)n, 0, 0, 0));
}

int
close(int fd)
{
	return (int)sc_ret(sc6(SYS_close, fd, 0, 0, 0, 0, 0));
}

int
fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	return (int)sc_ret(sc6(SYS_fcntl, fd, cmd, arg, 0, 0, 0));
}

/* Only PR_SET_DUMPABLE is used: one argument. */
int
prctl(int option, ...)
{
	va_list ap;
	long arg;

	va_start(ap, option);
	arg = va_arg(ap, long);
	va_end(ap);
	return (int)sc_ret(sc6(SYS_prctl, option, arg, 0, 0, 0, 0));
}

/* A plain fork: clone with only the exit signal (no thread, no pid cache
 * to fix up: this runtime keeps none). */
pid_t
fork(void)
{
	return (pid_t)sc_ret(sc6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0));
}

int
execve(const char *path, char *const argv[], char *const envp[])
{
	return (int)sc_ret(
	    sc6(SYS_execve, (long)path, (long)argv, (long)envp, 0, 0, 0));
}

pid_t
waitpid(pid_t pid, int *status, int options)
{
	return (pid_t)sc_ret(
	    sc6(SYS_wait4, pid, (long)status, options, 0, 0, 0));
}

int
kill(pid_t pid, int sig)
{
	return (int)sc_ret(sc6(SYS_kill, pid, sig, 0, 0, 0, 0));
}

/* The kernel's signal set is the first 64 bits of sigset_t. */
#define KSIGSET_BYTES 8

int
sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return (int)sc_ret(sc6(SYS_rt_sigprocmask, how, (long)set, (long)old,
	    KSIGSET_BYTES, 0, 0));
}

int
sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	return (int)sc_ret(sc6(SYS_rt_sigtimedwait, (long)set, (long)info, 0,
	    KSIGSET_BYTES, 0, 0));
}

static int
sigset_all(sigset_t *set, unsigned char v)
{
	volatile unsigned char *p = (volatile unsigned char *)set;
	size_t i;

	for (i = 0; i < sizeof(*set); i++)
		p[i] = v;
	return 0;
}

int
sigfillset(sigset_t *set)
{
	return sigset_all(set, 0xff);
}

int
sigemptyset(sigset_t *set)
{
	return sigset_all(set, 0);
}

void
_exit(int code)
{
	for (;;)
		(void)sc6(SYS_exit_group, code, 0, 0, 0, 0, 0);
}

/* From _start: argc, argv and the environment as the kernel laid them. */
void
init_rt_start(long *sp)
{
	int argc = (int)sp[0];
	char **argv = (char **)(sp + 1);

	environ = argv + argc + 1;
	_exit(main(argc, argv));
}

__asm__(".text\n"
	".global _start\n"
	".type _start, @function\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call init_rt_start\n"
	"	hlt\n");
