/*
 * Lock files (lockfile.h).  A POSIX record lock, not flock(): the kernel
 * names its holder (F_GETLK), it is never inherited by fork, and the fd
 * is close-on-exec, so no daemon or agent started by the holder keeps
 * it; the kernel drops it when the holder exits, SIGKILL included.  The
 * file stays in place (unlinking it would let two processes lock two
 * different inodes).  Touches only the named file.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lockfile.h"
#include "util.h"

#define LOCKFILE_RETRY_MS 20

/*
 * 1 if another process holds fd's lock (*pid: its pid from the kernel, or
 * from the file when the kernel cannot show it, as for a holder in
 * another pid namespace; 0 if neither can tell), 0 if nobody does, -1 on
 * error.
 */
static int
held_by(int fd, pid_t *pid)
{
	struct flock fl;
	char buf[16], *end;
	ssize_t n;
	long v;

	*pid = 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_GETLK, &fl) == -1)
		return -1;
	if (fl.l_type == F_UNLCK)
		return 0;
	if (fl.l_pid > 0) {
		*pid = fl.l_pid;
		return 1;
	}
	if ((n = pread(fd, buf, sizeof(buf) - 1, 0)) > 0) {
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		errno = 0;
		v = strtol(buf, &end, 10);
		if (errno == 0 && *end == '\0' && v > 0 && v <= 0x7fffffff)
			*pid = (pid_t)v;
	}
	return 1;
}

int
lockfile_take(int dirfd, const char *name, unsigned int wait_ms, pid_t *holder)
{
	struct timespec ts = {0, LOCKFILE_RETRY_MS * 1000 * 1000};
	unsigned int tries = wait_ms / LOCKFILE_RETRY_MS + 1;
	struct stat st;
	struct flock fl;
	char pid[16];
	int fd, len;

	*holder = 0;
	fd = openat(dirfd, name,
	    O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd == -1)
		return -1;
	if (fstat(fd, &st) == -1)
		goto fail;
	/* Only a plain file of its own: never truncate a hard link's target. */
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		errno = EINVAL;
		goto fail;
	}
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	while (fcntl(fd, F_SETLK, &fl) == -1) {
		if (errno != EAGAIN && errno != EACCES && errno != EINTR)
			goto fail;
		if (--tries == 0) {
			(void)held_by(fd, holder);
			close(fd);
			errno = EWOULDBLOCK;
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	/* For people, and for lockfile_held() across pid namespaces. */
	len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == -1 || pwrite(fd, pid, (size_t)len, 0) != len)
		goto fail;
	return fd;
fail:
	close_keep_errno(fd);
	return -1;
}

int
lockfile_held(int dirfd, const char *name, pid_t *pid)
{
	int fd, r;

	*pid = 0;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd == -1)
		return errno == ENOENT ? 0 : -1;
	r = held_by(fd, pid);
	close(fd);
	return r;
}
