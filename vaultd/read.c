/*
 * Note reads and folder listings for API-6 (VA-2): paths arrive decoded
 * and lexically checked; every component is opened beneath v_root without
 * following a symlink, only regular .md files are read, under a size cap.
 * Reads only; answers carry vault-relative names, never an absolute path.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "log.h"
#include "util.h"
#include "vaultd.h"
#include "vaultpath.h"

/* Why a lookup failed, neutrally: resources are ours, the rest theirs. */
static enum vault_err
vault_lookup_err(int err)
{
	if (err == ENOMEM || err == EMFILE || err == ENFILE)
		return VE_INTERNAL;
	return VE_NOT_FOUND;
}

enum vault_err
vault_read(struct vault *v, const char *rel, char **bufp, size_t *lenp)
{
	char dir[VAULT_PATH_MAX + 1];
	const char *name, *slash;
	struct stat st, st2;
	enum vault_err e = VE_NOT_FOUND;
	size_t len = 0;
	ssize_t n;
	char *buf = NULL;
	int dfd, pfd = -1, fd = -1;

	*bufp = NULL;
	*lenp = 0;
	if ((slash = strrchr(rel, '/')) != NULL) {
		memcpy(dir, rel, (size_t)(slash - rel));
		dir[slash - rel] = '\0';
		name = slash + 1;
	} else {
		dir[0] = '\0';
		name = rel;
	}
	if ((dfd = vault_open_dir(v, dir, 0)) == -1)
		return vault_lookup_err(errno);
	/* O_PATH first: never open() a device or FIFO, even to look. */
	if ((pfd = vault_open_in(v, dfd, name, O_PATH, 0)) == -1) {
		e = vault_lookup_err(errno);
		goto out;
	}
	/*
	 * A regular file with one name: a hard link is a second name of a
	 * file that may live outside the vault (a planted link to a key),
	 * and is no more a note than a symlink is.
	 */
	if (fstat(pfd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_nlink != 1)
		goto out;
	if (st.st_size > (off_t)VAULT_READ_MAX) {
		e = VE_TOO_LARGE;
		goto out;
	}
	fd = vault_open_in(v, dfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	if (fd == -1 || fstat(fd, &st2) == -1 || st2.st_dev != st.st_dev ||
	    st2.st_ino != st.st_ino || !S_ISREG(st2.st_mode))
		goto out;
	if ((buf = malloc(VAULT_READ_MAX + 1)) == NULL) {
		e = VE_INTERNAL;
		goto out;
	}
	/* The file may grow while read: the cap holds for what we read. */
	while (len <= VAULT_READ_MAX) {
		n = read(fd, buf + len, VAULT_READ_MAX + 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			e = VE_INTERNAL;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > VAULT_READ_MAX) {
		e = VE_TOO_LARGE;
		goto out;
	}
	*bufp = buf;
	*lenp = len;
	buf = NULL;
	e = VE_OK;
out:
	free(buf);
	if (fd != -1)
		close(fd);
	if (pfd != -1)
		close(pfd);
	close(dfd);
	return e;
}

/* Milliseconds since the epoch, clamped: tmpfs stores any 64-bit time. */
static int64_t
ms_of(const struct timespec *ts)
{
	if (ts->tv_sec < 0)
		return 0;
	if (ts->tv_sec >= INT64_MAX / 1000)
		return INT64_MAX / 1000 * 1000;
	return (int64_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000;
}

static int
vault_cmp_name(const void *a, const void *b)
{
	struct json_object *const *x = a, *const *y = b;
	struct json_object *nx = *x, *ny = *y;

	if (json_object_is_type(nx, json_type_object)) {
		json_object_object_get_ex(*x, "name", &nx);
		json_object_object_get_ex(*y, "name", &ny);
	}
	return strcmp(json_object_get_string(nx), json_object_get_string(ny));
}

enum vault_err
vault_list(struct vault *v, const char *rel, struct json_object **out)
{
	struct json_object *o, *notes, *folders, *n;
	struct dirent *de;
	struct stat st;
	size_t count = 0, len;
	DIR *d;
	int dfd;

	*out = NULL;
	if ((dfd = vault_open_dir(v, rel, 0)) == -1)
		return vault_lookup_err(errno);
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return VE_INTERNAL;
	}
	o = json_object_new_object();
	notes = json_object_new_array();
	folders = json_object_new_array();
	json_object_object_add(o, "notes", notes);
	json_object_object_add(o, "folders", folders);
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		/* Hidden, skipped, odd or non-UTF-8 names are not shown. */
		if (!vaultpath_dir_ok(de->d_name, len) ||
		    !utf8_valid(de->d_name, len) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (S_ISDIR(st.st_mode)) {
			json_object_array_add(
			    folders, json_object_new_string(de->d_name));
		} else if (S_ISREG(st.st_mode) && st.st_nlink == 1 &&
			   vaultpath_read_ok(de->d_name, len)) {
			n = json_object_new_object();
			json_object_object_add(
			    n, "name", json_object_new_string(de->d_name));
			json_object_object_add(
			    n, "bytes", json_object_new_int64(st.st_size));
			json_object_object_add(n, "mtime",
			    json_object_new_int64(ms_of(&st.st_mtim)));
			json_object_array_add(notes, n);
		} else
			continue;
		if (++count > VAULT_LIST_MAX) {
			closedir(d);
			json_object_put(o);
			return VE_TOO_LARGE;
		}
	}
	closedir(d);
	json_object_array_sort(notes, vault_cmp_name);
	json_object_array_sort(folders, vault_cmp_name);
	*out = o;
	return VE_OK;
}
