/*
 * systemd socket activation, read by hand: three environment variables
 * and one inherited fd.  sdl_check() is pure so the hostile values can be
 * unit-tested; sdl_take() adds what only the kernel can say.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdlisten.h"

/* A positive decimal without sign, space or leading zero, <= INT_MAX. */
static int
sdl_decimal(const char *s, long *out)
{
	long v = 0;
	size_t i;

	if (s == NULL || s[0] < '1' || s[0] > '9')
		return -1;
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 10)
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v > 0x7fffffffL)
		return -1;
	*out = v;
	return 0;
}

int
sdl_check(const char *pid, const char *fds, const char *names, pid_t self,
    const char *want, const char **why)
{
	long v;

	if (pid == NULL || fds == NULL) {
		*why = "not socket-activated (LISTEN_PID/LISTEN_FDS unset)";
		return -1;
	}
	if (sdl_decimal(pid, &v) == -1 || v != (long)self) {
		*why = "LISTEN_PID does not name this process";
		return -1;
	}
	if (sdl_decimal(fds, &v) == -1 || v != 1) {
		*why = "LISTEN_FDS must be exactly 1";
		return -1;
	}
	if (names != NULL && strcmp(names, want) != 0) {
		*why = "LISTEN_FDNAMES does not name the expected socket";
		return -1;
	}
	return 0;
}

int
sdl_take(const char *want, int family, const char **why)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd = SDL_FD_START, v, fl;

	if (sdl_check(getenv("LISTEN_PID"), getenv("LISTEN_FDS"),
		getenv("LISTEN_FDNAMES"), getpid(), want, why) == -1)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == -1 ||
	    v != 1) {
		*why = "fd 3 is not a listening socket";
		return -1;
	}
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == -1 ||
	    v != SOCK_STREAM) {
		*why = "fd 3 is not a stream socket";
		return -1;
	}
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1 ||
	    ss.ss_family != family) {
		*why = "fd 3 is of the wrong address family";
		return -1;
	}
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) == -1 ||
	    (fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1) {
		*why = "fd 3: fcntl failed";
		return -1;
	}
	return fd;
}
