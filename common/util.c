/*
 * Safe-I/O and memory helpers shared by every process: full reads and
 * writes, the atomic file write, kernel randomness, constant-time
 * compare, fd flags, clocks.  Touches only the descriptors and buffers
 * it is handed (atomic_write_at: names inside the directory it is
 * handed).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "charset.h"
#include "util.h"

/*
 * All len bytes through one read or write per pass, EINTR retried.  A
 * pass that moves nothing is EIO: on a read, the peer promised more than
 * it sent; on a write, never loop forever on a writer without progress.
 */
static int
io_full(int fd, uint8_t *rd, const uint8_t *wr, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = rd != NULL ? read(fd, rd, len) : write(fd, wr, len);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		if (rd != NULL)
			rd += n;
		else
			wr += n;
		len -= (size_t)n;
	}
	return 0;
}

int
read_full(int fd, void *buf, size_t len)
{
	return io_full(fd, buf, NULL, len);
}

int
write_full(int fd, const void *buf, size_t len)
{
	return io_full(fd, NULL, buf, len);
}

int
random_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;
	ssize_t n;

	/* Blocking getrandom: better to wait for the pool than to guess. */
	while (len > 0) {
		n = getrandom(p, len, 0);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
random_hex(char *out, size_t outsz, size_t len)
{
	uint8_t chunk[64];
	size_t done, n;

	if (out == NULL || len > (SIZE_MAX - 1) / 2 || outsz < 2 * len + 1) {
		errno = EINVAL;
		return -1;
	}
	for (done = 0; done < len; done += n) {
		n = len - done;
		if (n > sizeof(chunk))
			n = sizeof(chunk);
		if (random_bytes(chunk, n) == -1) {
			explicit_bzero(chunk, sizeof(chunk));
			explicit_bzero(out, outsz);
			return -1;
		}
		hex_encode(chunk, n, out + 2 * done);
	}
	out[2 * len] = '\0';
	explicit_bzero(chunk, sizeof(chunk));
	return 0;
}

int
timingsafe_eq(const void *a, const void *b, size_t len)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char diff = 0;
	size_t i;

	/*
	 * Every byte, whatever the first difference: time depends on len
	 * alone.  Written here rather than taken from libcrypto so that the
	 * broker, which hashes nothing, does not map libcrypto at all and
	 * pays none of its resident relocations (docs/PERFORMANCE.md).
	 */
	for (i = 0; i < len; i++)
		diff |= x[i] ^ y[i];
	return diff == 0;
}

void
hex_encode(const uint8_t *in, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 0x0f];
	}
	out[2 * len] = '\0';
}

void
close_keep_errno(int fd)
{
	int saved = errno;

	close(fd);
	errno = saved;
}

int
set_cloexec(int fd, int on)
{
	int flags, nflags;

	if ((flags = fcntl(fd, F_GETFD)) == -1)
		return -1;
	nflags = on ? (flags | FD_CLOEXEC) : (flags & ~FD_CLOEXEC);
	if (nflags != flags && fcntl(fd, F_SETFD, nflags) == -1)
		return -1;
	return 0;
}

int
set_nonblock(int fd, int on)
{
	int flags, nflags;

	if ((flags = fcntl(fd, F_GETFL)) == -1)
		return -1;
	nflags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
	if (nflags != flags && fcntl(fd, F_SETFL, nflags) == -1)
		return -1;
	return 0;
}

void
explicit_bzero_str(char *s)
{
	if (s != NULL)
		explicit_bzero(s, strlen(s));
}

void
strv_wipe(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		explicit_bzero_str(v[i]);
		free(v[i]);
		v[i] = NULL;
	}
}

void
strv_free(char **v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++) {
		explicit_bzero_str(v[i]);
		free(v[i]);
	}
	free(v);
}

int64_t
now_ms_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
atomic_write_at(int dirfd, const char *name, const void *buf, size_t len,
    mode_t mode, uid_t uid, gid_t gid)
{
	char tmp[NAME_MAX + 1];
	int fd, e;

	if (strchr(name, '/') != NULL ||
	    snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= (int)sizeof(tmp)) {
		errno = EINVAL;
		return -1;
	}
	(void)unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp,
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd == -1)
		return -1;
	if (write_full(fd, buf, len) == -1 ||
	    (uid != (uid_t)-1 && fchown(fd, uid, gid) == -1) ||
	    fsync(fd) == -1) {
		e = errno;
		close(fd);
		goto fail;
	}
	if (close(fd) == -1 || renameat(dirfd, tmp, dirfd, name) == -1) {
		e = errno;
		goto fail;
	}
	return fsync(dirfd);
fail:
	(void)unlinkat(dirfd, tmp, 0);
	errno = e;
	return -1;
}

uint64_t
now_ms_mono(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		return 0;
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
rate_take(struct rate *rt, unsigned int per_sec, unsigned int burst)
{
	uint64_t now = now_ms_mono();

	if (rt->rt_at == 0)
		rt->rt_tokens = burst;
	else
		rt->rt_tokens += (double)(now - rt->rt_at) * per_sec / 1000.0;
	if (rt->rt_tokens > burst)
		rt->rt_tokens = burst;
	rt->rt_at = now != 0 ? now : 1;
	if (rt->rt_tokens < 1.0)
		return 0;
	rt->rt_tokens -= 1.0;
	return 1;
}

int
reap_within(pid_t pid, int *status, uint64_t ms)
{
	static const struct timespec one_ms = {0, 1000000};
	uint64_t end = now_ms_mono() + ms;
	pid_t r;

	for (;;) {
		if ((r = waitpid(pid, status, WNOHANG)) == pid)
			return 1;
		if (r == -1 && errno != EINTR)
			return -1;
		if (now_ms_mono() >= end)
			return 0;
		(void)nanosleep(&one_ms, NULL);
	}
}

int
utf8_valid(const void *buf, size_t len)
{
	const unsigned char *s = buf, *end = s + len;
	unsigned int c, min;
	int n;

	while (s < end) {
		c = *s++;
		if (c < 0x80)
			continue;
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			c &= 0x1f;
			min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			c &= 0x0f;
			min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			c &= 0x07;
			min = 0x10000;
		} else
			return 0;
		if (end - s < n)
			return 0;
		while (n-- > 0) {
			if ((*s & 0xc0) != 0x80)
				return 0;
			c = (c << 6) | (*s++ & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return 0;
	}
	return 1;
}

static int
dir_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
dir_names_free(char **names, size_t n)
{
	size_t i;

	for (i = 0; names != NULL && i < n; i++)
		free(names[i]);
	free(names);
}

char **
dir_names(const char *dir, int (*keep)(const char *), size_t *n)
{
	char **names = NULL, **grown;
	size_t cap = 0;
	struct dirent *de;
	DIR *d;
	int e;

	*n = 0;
	if ((d = opendir(dir)) == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (!keep(de->d_name))
			continue;
		if (*n == DIR_NAMES_MAX) {
			e = E2BIG;
			goto fail;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((grown = reallocarray(
				 names, cap, sizeof(*names))) == NULL) {
				e = errno;
				goto fail;
			}
			names = grown;
		}
		if ((names[*n] = strdup(de->d_name)) == NULL) {
			e = errno;
			goto fail;
		}
		(*n)++;
	}
	closedir(d);
	if (names == NULL) /* an empty directory: an empty list */
		names = calloc(1, sizeof(*names));
	else
		qsort(names, *n, sizeof(*names), dir_name_cmp);
	return names;
fail:
	closedir(d);
	dir_names_free(names, *n);
	*n = 0;
	errno = e;
	return NULL;
}

int
all_digits(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

int
hex_lower_n(const char *s, size_t len)
{
	return strlen(s) == len &&
	       charset_shape(s, len, "0-9a-f", "0-9a-f", len, len);
}
