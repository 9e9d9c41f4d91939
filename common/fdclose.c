/*
 * Close a range of descriptors in one call where the kernel has
 * close_range(2), one by one where it does not.  Shared by the spawn
 * helper's child and cordon-init, which is linked statically from a few
 * files: it uses nothing but the two system calls.
 */
#include <sys/syscall.h>

#include <unistd.h>

#include "spawn_helper.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

void
fd_close_range(int lo, int hi)
{
	int fd;

	if (lo < 0)
		lo = 0;
	if (lo > hi)
		return;
	if (syscall(SYS_close_range, (unsigned)lo, (unsigned)hi, 0) == -1)
		for (fd = lo; fd <= hi && fd < 65536; fd++)
			close(fd);
}
