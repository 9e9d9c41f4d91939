/*
 * libFuzzer target for the pids cgroup parsers (common/cgroup.c, SP-7):
 * any bytes as a mountinfo line, a /proc/self/cgroup line and a
 * cgroup.procs body.  Whatever is accepted is absolute, NUL-free and
 * free of control characters; never a crash or an overread.
 */
#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_path(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	if (p[0] != '/')
		abort();
	for (; *u != '\0'; u++)
		if (*u < 0x20 || *u == 0x7f)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char root[PATH_MAX], mnt[PATH_MAX], path[PATH_MAX], dir[PATH_MAX];
	pid_t pids[16];
	char *s;
	int k, n, i;

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	k = cgroup_parse_mountinfo(s, root, sizeof(root), mnt, sizeof(mnt));
	if (k == CGROUP_V1 || k == CGROUP_V2) {
		check_path(root);
		check_path(mnt);
	}
	for (k = CGROUP_V1; k <= CGROUP_V2; k++)
		if (cgroup_parse_proc(s, k, path, sizeof(path)) == 1) {
			check_path(path);
			if (cgroup_dir("/sys/fs/cgroup/pids", "/", path, dir,
				sizeof(dir)) == 0)
				check_path(dir);
		}
	n = cgroup_parse_procs((const char *)data, size, pids, 16);
	for (i = 0; i < n; i++)
		if (pids[i] <= 0)
			abort();
	(void)cgroup_name_pid(s, "cordon.");
	(void)cgroup_list_has(s, ", \n", "pids");
	free(s);
	return 0;
}
