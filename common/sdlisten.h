/*
 * systemd socket activation (sd_listen_fds(3)'s documented protocol,
 * without libsystemd): LISTEN_PID names the process the fds are for,
 * LISTEN_FDS counts them from fd 3, LISTEN_FDNAMES (optional) names them.
 * A cordon daemon takes exactly one: its IPC socket or, for the broker,
 * the HTTP listener.
 */
#ifndef CORDON_SDLISTEN_H
#define CORDON_SDLISTEN_H

#include <sys/types.h>

#define SDL_FD_START 3

/*
 * Pure: 0 when the three variables (NULL = unset) hand process `self`
 * exactly one fd, unnamed or named `want`; -1 with *why set to a fixed
 * reason otherwise.
 */
int sdl_check(const char *pid, const char *fds, const char *names, pid_t self,
    const char *want, const char **why);

/*
 * Take the fd from the environment: checks the variables, unsets them
 * (nothing we exec inherits them), and checks that fd 3 is a listening
 * stream socket of `family` (AF_UNIX or AF_INET).  Returns the fd,
 * close-on-exec and non-blocking, or -1 with *why set.
 */
int sdl_take(const char *want, int family, const char **why);

#endif
