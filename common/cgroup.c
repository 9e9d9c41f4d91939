/*
 * The pids cgroup of agent runs (SP-7), see cgroup.h.  Parsers first
 * (pure: no I/O, no allocation), then the directory work, all relative
 * to held directory fds.  Touches /proc/self/{mountinfo,cgroup} and the
 * cgroup directories its callers hand it.
 */
#include <sys/stat.h>
#include <sys/vfs.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "util.h"

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define MI_LINE_MAX  4096 /* a longer mountinfo line is refused */
#define MI_FIELDS    32	  /* optional fields included */
#define PROCS_BUF    65536
#define RMDIR_ROUNDS 100

/* ---- parsers ---- */

static int
is_ctl(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* mountinfo's octal escapes (\040 and friends); absolute, no controls. */
static int
mi_unescape(const char *s, char *out, size_t sz)
{
	size_t o = 0;
	unsigned int v;

	if (s[0] != '/')
		return -1;
	while (*s != '\0') {
		if (*s == '\\') {
			if (s[1] < '0' || s[1] > '3' || s[2] < '0' ||
			    s[2] > '7' || s[3] < '0' || s[3] > '7')
				return -1;
			v = (unsigned int)(s[1] - '0') * 64 +
			    (unsigned int)(s[2] - '0') * 8 +
			    (unsigned int)(s[3] - '0');
			s += 4;
		} else
			v = (unsigned char)*s++;
		if (v == 0 || is_ctl((unsigned char)v) || o + 1 >= sz)
			return -1;
		out[o++] = (char)v;
	}
	out[o] = '\0';
	return 0;
}

int
cgroup_list_has(const char *list, const char *seps, const char *word)
{
	size_t wl = strlen(word), n;

	if (wl == 0)
		return 0;
	while (*list != '\0') {
		n = strcspn(list, seps);
		if (n == wl && strncmp(list, word, wl) == 0)
			return 1;
		list += n;
		if (*list != '\0')
			list++;
	}
	return 0;
}

int
cgroup_parse_mountinfo(
    const char *line, char *root, size_t rootsz, char *mnt, size_t mntsz)
{
	char buf[MI_LINE_MAX], *f[MI_FIELDS], *p;
	size_t len, nf = 0, dash;
	int kind;

	len = strcspn(line, "\n");
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	/* Single spaces between fields; the kernel escapes the rest. */
	for (p = buf;;) {
		if (nf == MI_FIELDS)
			return -1;
		f[nf++] = p;
		if ((p = strchr(p, ' ')) == NULL)
			break;
		*p++ = '\0';
	}
	for (dash = 0; dash < nf; dash++) {
		if (f[dash][0] == '\0')
			return -1;
		if (dash >= 6 && strcmp(f[dash], "-") == 0)
			break;
	}
	/* id parent major:minor root mountpoint opts [opt...] - type src so */
	if (dash == nf || nf - dash != 4 || !all_digits(f[0]) ||
	    !all_digits(f[1]) || strchr(f[2], ':') == NULL)
		return -1;
	for (p = f[2]; *p != '\0'; p++)
		if ((*p < '0' || *p > '9') && *p != ':')
			return -1;
	if (strcmp(f[dash + 1], "cgroup") == 0 &&
	    cgroup_list_has(f[dash + 3], ",", "pids"))
		kind = CGROUP_V1;
	else if (strcmp(f[dash + 1], "cgroup2") == 0)
		kind = CGROUP_V2;
	else
		return 0;
	if (mi_unescape(f[3], root, rootsz) == -1 ||
	    mi_unescape(f[4], mnt, mntsz) == -1)
		return -1;
	return kind;
}

/* Absolute, no "." / ".." / empty components, no controls. */
static int
path_ok(const char *p, size_t len)
{
	size_t i, start;

	if (len == 0 || p[0] != '/')
		return 0;
	if (len == 1)
		return 1;
	for (i = 0; i < len; i++)
		if (is_ctl((unsigned char)p[i]))
			return 0;
	for (start = 1; start <= len;) {
		for (i = start; i < len && p[i] != '/'; i++)
			;
		if (i == start || (i - start == 1 && p[start] == '.') ||
		    (i - start == 2 && p[start] == '.' && p[start + 1] == '.'))
			return 0;
		start = i + 1;
	}
	return 1;
}

int
cgroup_parse_proc(const char *line, int kind, char *path, size_t sz)
{
	const char *c1, *c2, *pp;
	char ctl[256];
	size_t len;

	if ((c1 = strchr(line, ':')) == NULL ||
	    (c2 = strchr(c1 + 1, ':')) == NULL || c1 == line ||
	    (size_t)(c2 - c1 - 1) >= sizeof(ctl))
		return -1;
	for (pp = line; pp < c1; pp++)
		if (*pp < '0' || *pp > '9')
			return -1;
	memcpy(ctl, c1 + 1, (size_t)(c2 - c1 - 1));
	ctl[c2 - c1 - 1] = '\0';
	pp = c2 + 1;
	len = strcspn(pp, "\n");
	if (pp[len] == '\n' && pp[len + 1] != '\0')
		return -1; /* one line only */
	if (!path_ok(pp, len))
		return -1;
	if (kind == CGROUP_V1) {
		if (c1 - line == 1 && line[0] == '0')
			return 0;
		if (!cgroup_list_has(ctl, ",", "pids"))
			return 0;
	} else if (kind == CGROUP_V2) {
		if (c1 - line != 1 || line[0] != '0' || ctl[0] != '\0')
			return 0;
	} else
		return -1;
	if (len >= sz)
		return -1;
	memcpy(path, pp, len);
	path[len] = '\0';
	return 1;
}

int
cgroup_dir(
    const char *mnt, const char *root, const char *path, char *out, size_t sz)
{
	const char *rel;
	size_t rl = strlen(root);

	if (mnt[0] != '/' || root[0] != '/' || path[0] != '/')
		return -1;
	if (strcmp(root, "/") == 0)
		rel = path;
	else if (strncmp(path, root, rl) == 0 &&
		 (path[rl] == '\0' || path[rl] == '/'))
		rel = path + rl;
	else
		return -1; /* outside what this mount shows */
	if (strcmp(rel, "/") == 0)
		rel = "";
	if (strcmp(mnt, "/") == 0 && rel[0] != '\0')
		mnt = "";
	if (snprintf(out, sz, "%s%s", mnt, rel) >= (int)sz)
		return -1;
	return 0;
}

pid_t
cgroup_name_pid(const char *name, const char *prefix)
{
	size_t pl = strlen(prefix);
	const char *d;
	long v = 0;

	if (strncmp(name, prefix, pl) != 0)
		return -1;
	d = name + pl;
	if (!all_digits(d) || d[0] == '0' || strlen(d) > 10)
		return -1;
	for (; *d != '\0'; d++) {
		v = v * 10 + (*d - '0');
		if (v > INT_MAX)
			return -1;
	}
	return (pid_t)v;
}

int
cgroup_parse_procs(const char *buf, size_t len, pid_t *pids, size_t max)
{
	size_t i = 0, n = 0;
	long v;

	while (i < len) {
		if (buf[i] < '1' || buf[i] > '9')
			return -1;
		for (v = 0; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
			v = v * 10 + (buf[i] - '0');
			if (v > INT_MAX)
				return -1;
		}
		if (i == len || buf[i] != '\n')
			return -1;
		i++;
		if (n < max)
			pids[n++] = (pid_t)v;
	}
	return (int)n;
}

/* ---- I/O ---- */

/* A small file beneath dfd, NUL-terminated; bytes read, or -1. */
static ssize_t
read_at(int dfd, const char *name, char *buf, size_t sz)
{
	size_t got = 0;
	ssize_t n;
	int fd;

	if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	while (got + 1 < sz) {
		n = read(fd, buf + got, sz - 1 - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

static int
write_at(int dfd, const char *name, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, saved;

	if ((fd = openat(dfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	n = write(fd, s, len);
	saved = errno;
	close(fd);
	if (n != (ssize_t)len) {
		errno = n == -1 ? saved : EIO;
		return -1;
	}
	return 0;
}

int
cgroup_find_pids(char *dir, size_t sz, int *kind)
{
	char root[PATH_MAX], mnt[PATH_MAX], r2[PATH_MAX], m2[PATH_MAX];
	char path[PATH_MAX], ctl[1024];
	char *line = NULL;
	size_t cap = 0;
	int k, found = 0, dfd;
	FILE *f;

	if ((f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (getline(&line, &cap, f) != -1) {
		/* v1 wins: pids bound there is not offered by cgroup2. */
		k = cgroup_parse_mountinfo(
		    line, r2, sizeof(r2), m2, sizeof(m2));
		if (k == CGROUP_V1 || (k == CGROUP_V2 && found == 0)) {
			memcpy(root, r2, sizeof(root));
			memcpy(mnt, m2, sizeof(mnt));
			found = k;
			if (k == CGROUP_V1)
				break;
		}
	}
	fclose(f);
	if (found == 0) {
		free(line);
		errno = ENOENT;
		return -1;
	}
	k = 0;
	if ((f = fopen("/proc/self/cgroup", "re")) == NULL) {
		free(line);
		return -1;
	}
	while (getline(&line, &cap, f) != -1)
		if ((k = cgroup_parse_proc(line, found, path, sizeof(path))) ==
		    1)
			break;
	fclose(f);
	free(line);
	if (k != 1 || cgroup_dir(mnt, root, path, dir, sz) == -1) {
		errno = ENOENT;
		return -1;
	}
	if (found == CGROUP_V2) {
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd == -1)
			return -1;
		k = read_at(dfd, "cgroup.controllers", ctl, sizeof(ctl)) >= 0 &&
		    cgroup_list_has(ctl, " \n", "pids");
		close(dfd);
		if (!k) {
			errno = ENOENT;
			return -1;
		}
	}
	*kind = found;
	return 0;
}

int
cgroup_kind_of(int dfd)
{
	struct statfs sf;

	if (fstatfs(dfd, &sf) == -1)
		return -1;
	if (sf.f_type == CGROUP2_SUPER_MAGIC)
		return CGROUP_V2;
	if (sf.f_type == CGROUP_SUPER_MAGIC)
		return CGROUP_V1;
	errno = ENOTDIR;
	return -1;
}

static int
name_ok(const char *name)
{
	return name[0] != '\0' && strchr(name, '/') == NULL &&
	       strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

int
cgroup_make(int pfd, const char *name, long max, int *dfd)
{
	char num[24];
	int fd, saved;

	if (!name_ok(name) || max < 0) {
		errno = EINVAL;
		return -1;
	}
	if (mkdirat(pfd, name, 0755) == -1)
		return -1;
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		goto fail;
	/* No pids.max: the controller is not attached here. */
	if (faccessat(fd, "pids.max", F_OK, AT_SYMLINK_NOFOLLOW) == -1)
		goto fail;
	if (max > 0) {
		snprintf(num, sizeof(num), "%ld", max);
		if (write_at(fd, "pids.max", num) == -1)
			goto fail;
	}
	*dfd = fd;
	return 0;
fail:
	saved = errno;
	if (fd != -1)
		close(fd);
	(void)unlinkat(pfd, name, AT_REMOVEDIR);
	errno = saved;
	return -1;
}

int
cgroup_set_memory(int dfd, unsigned long long max)
{
	char num[24];

	if (max == 0 ||
	    faccessat(dfd, "memory.max", F_OK, AT_SYMLINK_NOFOLLOW) == -1)
		return 1;
	snprintf(num, sizeof(num), "%llu", max);
	return write_at(dfd, "memory.max", num) == -1 ? -1 : 0;
}

/* The pids listed in dfd's cgroup.procs: count, or -1. */
static int
procs_read(int dfd, pid_t *pids, size_t max)
{
	char *buf, *nl;
	ssize_t n;
	int r;

	if ((buf = malloc(PROCS_BUF)) == NULL)
		return -1;
	if ((n = read_at(dfd, "cgroup.procs", buf, PROCS_BUF)) == -1) {
		free(buf);
		return -1;
	}
	/* A full buffer: parse whole lines, the next round gets the rest. */
	if ((size_t)n == PROCS_BUF - 1 && (nl = strrchr(buf, '\n')) != NULL)
		n = nl - buf + 1;
	r = cgroup_parse_procs(buf, (size_t)n, pids, max);
	free(buf);
	if (r == -1)
		errno = EIO;
	return r;
}

static void
pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Up to rounds passes of reading cgroup.procs and SIGKILL; 0 once empty. */
static int
kill_rounds(int dfd, int rounds)
{
	pid_t *pids, self = getpid();
	int i, n, round;

	if ((pids = calloc(CGROUP_PROCS_MAX, sizeof(*pids))) == NULL)
		return -1;
	/* cgroup v2 (5.14+) kills the whole group in one write. */
	if (cgroup_kind_of(dfd) == CGROUP_V2)
		(void)write_at(dfd, "cgroup.kill", "1");
	for (round = 0; round < rounds; round++) {
		if ((n = procs_read(dfd, pids, CGROUP_PROCS_MAX)) == -1)
			break;
		if (n == 0) {
			free(pids);
			return 0;
		}
		for (i = 0; i < n; i++)
			if (pids[i] != self)
				(void)kill(pids[i], SIGKILL);
		if (round + 1 < rounds)
			pause_ms(1);
	}
	free(pids);
	errno = EBUSY;
	return -1;
}

/* rmdir a group whose last task may still be on its way out. */
static int
rmdir_rounds(int pfd, const char *name, int rounds)
{
	int i;

	for (i = 0; i < rounds; i++) {
		if (unlinkat(pfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -1;
		if (i + 1 < rounds)
			pause_ms(2);
	}
	return -1;
}

static int
group_empty(int dfd)
{
	pid_t one;

	return procs_read(dfd, &one, 1) == 0;
}

/*
 * Each child group of dfd: check (pass 0) or empty and remove (pass 1,
 * with rounds of killing and of rmdir).
 */
static int
children_walk(int dfd, int pass, int kills, int rmdirs)
{
	struct dirent *de;
	DIR *d;
	int fd, cfd, rc = 0;

	if ((fd = dup(dfd)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	/* A dup shares the offset: start from the top every time. */
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || !name_ok(de->d_name))
			continue;
		cfd = openat(dfd, de->d_name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd == -1) {
			if (errno != ENOENT)
				rc = -1;
			continue;
		}
		if (pass == 0 ? !group_empty(cfd)
			      : kill_rounds(cfd, kills) == -1)
			rc = -1;
		close(cfd);
		if (pass == 1 && rmdir_rounds(dfd, de->d_name, rmdirs) == -1)
			rc = -1;
	}
	closedir(d);
	return rc;
}

int
cgroup_remove(int pfd, const char *name, int flags)
{
	int nowait = (flags & CGROUP_RM_NOWAIT) != 0;
	int kills = nowait ? 1 : CGROUP_KILL_ROUNDS;
	int rmdirs = nowait ? 1 : RMDIR_ROUNDS;
	int dfd, rc = 0, saved;

	if (!name_ok(name) ||
	    (flags & ~(CGROUP_RM_IF_EMPTY | CGROUP_RM_NOWAIT)) != 0) {
		errno = EINVAL;
		return -1;
	}
	dfd =
	    openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd == -1)
		return errno == ENOENT ? 0 : -1;
	if ((flags & CGROUP_RM_IF_EMPTY) &&
	    (!group_empty(dfd) || children_walk(dfd, 0, 0, 0) == -1)) {
		close(dfd);
		errno = EBUSY;
		return -1;
	}
	if (children_walk(dfd, 1, kills, rmdirs) == -1 ||
	    kill_rounds(dfd, kills) == -1)
		rc = -1;
	saved = errno;
	close(dfd);
	if (rc == -1) {
		errno = saved;
		return -1;
	}
	return rmdir_rounds(pfd, name, rmdirs);
}

int
cgroup_sweep(int pfd, const char *prefix, int dead_only)
{
	struct dirent *de;
	pid_t pid;
	DIR *d;
	int fd, left = 0;

	if ((fd = dup(pfd)) == -1)
		return 1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return 1;
	}
	/* A dup shares the offset: start from the top every time. */
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		if ((pid = cgroup_name_pid(de->d_name, prefix)) == -1)
			continue;
		if (dead_only && pid != getpid() &&
		    (kill(pid, 0) == 0 || errno != ESRCH))
			continue;
		if (cgroup_remove(pfd, de->d_name,
			dead_only ? CGROUP_RM_IF_EMPTY : 0) == -1)
			left++;
	}
	closedir(d);
	return left;
}

int
cgroup_enable_pids(int dfd)
{
	char ctl[1024];

	if (read_at(dfd, "cgroup.subtree_control", ctl, sizeof(ctl)) == -1)
		return -1;
	if (cgroup_list_has(ctl, " \n", "pids"))
		return 0;
	return write_at(dfd, "cgroup.subtree_control", "+pids");
}
