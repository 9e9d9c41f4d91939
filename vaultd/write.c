/*
 * vaultd's file layer (VA-1, VA-4): every open is one name relative to a
 * held directory fd, through openat2 RESOLVE_BENEATH|NO_SYMLINKS|
 * NO_MAGICLINKS (or O_NOFOLLOW where openat2 is missing); notes are
 * staged in an O_EXCL temp, fsynced, renamed into place, the dir fsynced.
 * The same durability as atomic_write_at (common/util.h), which notes
 * cannot use: the temp is opened through openat2 (VA-4), its name is
 * random, a new note must not replace one (RENAME_NOREPLACE), and the
 * stage and the rename are two steps with auditd's acknowledgement
 * between them (AU-6).
 * Touches only the vault through v_root.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "log.h"
#include "util.h"
#include "vaultd.h"
#include "vaultpath.h"

#define VAULT_RESOLVE                                                          \
	(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
#define VAULT_SWEEP_DEPTH (2 + VAULT_FOLDER_DEPTH + 1)

void
vault_probe_openat2(struct vault *v)
{
	struct open_how how;
	long fd;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	how.resolve = VAULT_RESOLVE;
	fd = syscall(SYS_openat2, v->v_root, ".", &how, sizeof(how));
	if (fd >= 0) {
		close((int)fd);
		v->v_openat2 = 1;
		return;
	}
	/* Only a kernel without openat2 falls back; anything else is odd. */
	if (errno != ENOSYS)
		fatal("openat2 probe");
	log_warnx("openat2 missing: using a component-wise O_NOFOLLOW walk");
	v->v_openat2 = 0;
}

int
vault_open_in(
    struct vault *v, int dirfd, const char *name, int flags, unsigned mode)
{
	struct open_how how;
	long fd;

	/* One component only: the walk is ours, never the kernel's. */
	if (name[0] == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, "..") == 0) {
		errno = EINVAL;
		return -1;
	}
	flags |= O_CLOEXEC | O_NOFOLLOW;
	if (!v->v_openat2)
		return openat(dirfd, name, flags, (mode_t)mode);
	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)flags;
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = VAULT_RESOLVE;
	fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
	return (int)fd;
}

int
vault_open_dir(struct vault *v, const char *rel, int create)
{
	char buf[VAULT_PATH_MAX + 1], *seg, *next;
	int fd, nfd;

	if (strlen(rel) > VAULT_PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, rel, strlen(rel) + 1);
	/*
	 * A fresh open of ".", not a dup: a dup shares the root's file
	 * offset, and one listing would leave the next at end-of-directory.
	 */
	if ((fd = openat(v->v_root, ".",
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	for (seg = buf; seg != NULL && *seg != '\0'; seg = next) {
		if ((next = strchr(seg, '/')) != NULL)
			*next++ = '\0';
		nfd = vault_open_in(v, fd, seg, O_RDONLY | O_DIRECTORY, 0);
		if (nfd == -1 && errno == ENOENT && create) {
			if (mkdirat(fd, seg, 0700) == -1 && errno != EEXIST)
				goto fail;
			/* The new entry must survive a crash too. */
			if (fsync(fd) == -1)
				goto fail;
			nfd = vault_open_in(
			    v, fd, seg, O_RDONLY | O_DIRECTORY, 0);
		}
		if (nfd == -1)
			goto fail;
		close(fd);
		fd = nfd;
	}
	return fd;
fail:
	nfd = errno;
	close(fd);
	errno = nfd;
	return -1;
}

int
vault_exists(int dirfd, const char *name)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return 1;
	return errno == ENOENT ? 0 : -1;
}

void
vault_discard(int dirfd, const char *tmp)
{
	if (unlinkat(dirfd, tmp, 0) == -1 && errno != ENOENT)
		log_warn("cannot remove a temp note");
}

int
vault_stage(struct vault *v, int dirfd, const void *buf, size_t len,
    char tmp[VAULT_TMP_NAME], int *fdp)
{
	char hex[17];
	int fd, saved;

	if (random_hex(hex, sizeof(hex), 8) == -1)
		return -1;
	snprintf(tmp, VAULT_TMP_NAME, "%s%s", VAULT_TMP_PREFIX, hex);
	fd = vault_open_in(v, dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd == -1)
		return -1;
	if (write_full(fd, buf, len) == -1) {
		saved = errno;
		close(fd);
		vault_discard(dirfd, tmp);
		errno = saved;
		return -1;
	}
	if (fdp != NULL) {
		*fdp = fd;
		return 0;
	}
	return vault_stage_sync(dirfd, tmp, fd);
}

int
vault_stage_sync(int dirfd, const char *tmp, int fd)
{
	int saved;

	if (fsync(fd) == -1) {
		saved = errno;
		close(fd);
		vault_discard(dirfd, tmp);
		errno = saved;
		return -1;
	}
	if (close(fd) == -1) {
		vault_discard(dirfd, tmp);
		return -1;
	}
	return 0;
}

int
vault_publish(int dirfd, const char *tmp, const char *name, int replace)
{
	if (renameat2(dirfd, tmp, dirfd, name,
		replace ? 0 : RENAME_NOREPLACE) == -1) {
		int saved = errno;
		vault_discard(dirfd, tmp);
		errno = saved;
		return -1;
	}
	if (fsync(dirfd) == -1) {
		log_warn("note published but the directory fsync failed");
		return -1;
	}
	return 0;
}

/* Remove VAULT_TMP_PREFIX files beneath dirfd; takes dirfd. */
static int
vault_sweep_dir(struct vault *v, int dirfd, int depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int n = 0, sub;

	if ((d = fdopendir(dirfd)) == NULL) {
		close(dirfd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (S_ISREG(st.st_mode) && strncmp(de->d_name, VAULT_TMP_PREFIX,
					       strlen(VAULT_TMP_PREFIX)) == 0) {
			if (unlinkat(dirfd, de->d_name, 0) == 0)
				n++;
			continue;
		}
		if (!S_ISDIR(st.st_mode) || de->d_name[0] == '.' || depth <= 0)
			continue;
		sub = vault_open_in(
		    v, dirfd, de->d_name, O_RDONLY | O_DIRECTORY, 0);
		if (sub != -1)
			n += vault_sweep_dir(v, sub, depth - 1);
	}
	closedir(d);
	return n;
}

int
vault_sweep(struct vault *v)
{
	int fd, n;

	if ((fd = vault_open_dir(v, VAULT_INBOX, 0)) == -1)
		return 0;
	n = vault_sweep_dir(v, fd, VAULT_SWEEP_DEPTH);
	if (n > 0)
		log_info("removed %d temp file(s) left by a crash", n);
	return n;
}
