/*
 * One writer per directory: an exclusive POSIX record lock on a lock
 * file in it, held for as long as the taking process lives.  cordond
 * locks its runtime dir, auditd its audit dir (AU-6, AU-7, SU-1).
 */
#ifndef CORDON_LOCKFILE_H
#define CORDON_LOCKFILE_H

#include <sys/types.h>

#define LOCKFILE_NAME "lock"

/*
 * Lock DIRFD/NAME (made 0600 if missing; never through a symlink or
 * onto a file with other links) and write our pid into it.  Retries
 * for up to wait_ms while another process holds it.  Returns the
 * close-on-exec fd to keep open for the life of the process, or -1 with
 * errno set: EWOULDBLOCK when another process keeps it (*holder: its
 * pid, 0 if it cannot be told).
 */
int lockfile_take(
    int dirfd, const char *name, unsigned int wait_ms, pid_t *holder);

/*
 * 1 if a process holds DIRFD/NAME (*pid as above), 0 if none does or
 * there is no such file, -1 with errno set.  Never from the holder: its
 * close() here would drop its own lock.
 */
int lockfile_held(int dirfd, const char *name, pid_t *pid);

#endif
