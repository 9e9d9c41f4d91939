/*
 * Small safe-I/O and memory helpers shared by every process.
 */
#ifndef CORDON_UTIL_H
#define CORDON_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define nitems(a) (sizeof(a) / sizeof((a)[0]))

int read_full(int fd, void *buf, size_t len);	     /* 0, or -1 (EIO on EOF) */
int write_full(int fd, const void *buf, size_t len); /* 0 or -1 */
int random_bytes(void *buf, size_t len);	     /* getrandom, 0 or -1 */
/* len random bytes as 2*len lowercase hex chars + NUL into out. */
int random_hex(char *out, size_t outsz, size_t len);
int timingsafe_eq(const void *a, const void *b, size_t len); /* 1 if equal */
void hex_encode(const uint8_t *in, size_t len, char *out);   /* out: 2len+1 */
int set_cloexec(int fd, int on);
void close_keep_errno(int fd); /* close(fd), errno as it was */
int set_nonblock(int fd, int on);
void explicit_bzero_str(char *s);
/* Each of v[0..n) (NULL is fine) wiped, freed and set to NULL. */
void strv_wipe(char **v, size_t n);
/* A NULL-terminated vector (NULL is fine): each string wiped and freed,
 * then the vector. */
void strv_free(char **v);
uint64_t now_ms_mono(void);
/*
 * A token bucket for records a peer can cause (http.request, egress):
 * up to burst at once, then per_sec a second.  Zeroed: full.
 */
struct rate {
	double rt_tokens;
	uint64_t rt_at; /* now_ms_mono of the last take; 0: never */
};
/* 1: one token taken; 0: none left (the caller counts what it drops). */
int rate_take(struct rate *, unsigned int per_sec, unsigned int burst);
/*
 * Wait up to ms for the child pid to exit, and reap it: 1 reaped (its
 * wait status in *status), 0 still there at the bound, -1 no such child.
 */
int reap_within(pid_t pid, int *status, uint64_t ms);
int64_t now_ms_real(void); /* wall clock, ms since the epoch */
/* Strict UTF-8 (RFC 3629): no overlongs, surrogates or > U+10FFFF. */
int utf8_valid(const void *buf, size_t len);
/* 1 if s is one or more ASCII digits and nothing else, else 0. */
int all_digits(const char *s);
/* 1 if s is exactly len lowercase hex digits and nothing else, else 0. */
int hex_lower_n(const char *s, size_t len);
/* The value of one hex digit of either case, or -1: inline, since the
 * scrubber asks it of every '%' it reads. */
static inline int
hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * The one atomic file write: replace dirfd/name (one path component)
 * with len bytes of buf, so that a crash leaves the old file or the new
 * one whole.  Steps: an O_EXCL, O_NOFOLLOW temp ".NAME.tmp" beside it
 * (a stale one removed first), written, chowned to uid:gid unless uid
 * is -1, fsynced; renamed over name; the directory fsynced.  0, or -1
 * with errno set and the temp removed.
 */
int atomic_write_at(int dirfd, const char *name, const void *buf, size_t len,
    mode_t mode, uid_t uid, gid_t gid);

/*
 * The entries of dir whose names keep() accepts, sorted by strcmp, so
 * that a caller taking the first N makes the same choice however the
 * filesystem orders the directory.  NULL with errno set on failure (E2BIG:
 * more than DIR_NAMES_MAX matches; none are returned).  Free with
 * dir_names_free().
 */
#define DIR_NAMES_MAX 4096
char **dir_names(const char *dir, int (*keep)(const char *), size_t *n);
void dir_names_free(char **names, size_t n);

#endif
