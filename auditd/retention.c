/*
 * Day files of the audit dir and their retention (AU-8): files older than
 * audit.retentionDays are deleted at start and once a day, recorded as
 * audit.retention with the dates only.  May touch: the audit dir.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "audit_schema.h"
#include "auditd.h"
#include "log.h"
#include "util.h"

/* 1 if name starts with a YYYY-MM-DD day (digits and dashes only). */
int
audit_day_valid(const char *name, size_t len)
{
	return len >= AUDIT_DAY_LEN &&
	       audit_pattern_ok(AP_DATE, name, AUDIT_DAY_LEN);
}

static int
day_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static DIR *
open_dir(int dirfd)
{
	DIR *d;
	int fd;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return NULL;
	if ((d = fdopendir(fd)) == NULL)
		close(fd);
	return d;
}

int
audit_list_days(
    int dirfd, char (*days)[AUDIT_DAY_LEN + 1], size_t max, size_t *n)
{
	struct dirent *de;
	size_t len;
	DIR *d;

	*n = 0;
	if ((d = open_dir(dirfd)) == NULL) {
		log_warn("list audit dir");
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len != AUDIT_DAY_LEN + 6 ||
		    !audit_day_valid(de->d_name, len) ||
		    strcmp(de->d_name + AUDIT_DAY_LEN, ".jsonl") != 0)
			continue;
		if (*n == max) {
			log_warnx("more than %zu audit day files", max);
			closedir(d);
			return -1;
		}
		memcpy(days[*n], de->d_name, AUDIT_DAY_LEN);
		days[*n][AUDIT_DAY_LEN] = '\0';
		(*n)++;
	}
	closedir(d);
	qsort(days, *n, sizeof(days[0]), day_cmp);
	return 0;
}

/* Record the deleted dates, at most AUDIT_DATES_MAX per record. */
static int
record_deleted(
    struct audit_store *st, char (*days)[AUDIT_DAY_LEN + 1], size_t n)
{
	struct json_object *rec, *arr;
	struct audit_item it;
	size_t i, j;
	int rc;

	for (i = 0; i < n; i += AUDIT_DATES_MAX) {
		rec = json_object_new_object();
		arr = json_object_new_array();
		json_object_object_add(
		    rec, "kind", json_object_new_string("audit.retention"));
		for (j = i; j < n && j < i + AUDIT_DATES_MAX; j++)
			json_object_array_add(
			    arr, json_object_new_string(days[j]));
		json_object_object_add(rec, "deleted", arr);
		memset(&it, 0, sizeof(it));
		it.ai_from = PROC_AUDITD;
		audit_now(st, &it.ai_ts);
		rc = audit_validate(rec, PROC_AUDITD, &it.ai_rec);
		json_object_put(rec);
		if (rc == -1)
			return -1;
		rc = audit_store_append(st, &it, 1);
		json_object_put(it.ai_rec);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/*
 * Write-ahead: the days to delete are recorded first, then deleted, so a
 * crash or a failed unlink between the two never deletes a day that no
 * record names (the next sweep deletes what is left, and says so again).
 * Only regular files are candidates; a day whose file cannot be deleted
 * is logged and left.  -1 only when the record could not be stored: the
 * store has failed (the caller exits).
 */
int
audit_retention_run(struct audit_store *st)
{
	static char gone[AUDIT_MAX_DAYS][AUDIT_DAY_LEN + 1];
	static const char *const sfx[] = {".jsonl", ".jsonl.torn"};
	char today[AUDIT_DAY_LEN + 1], cutoff[AUDIT_DAY_LEN + 1];
	char name[AUDIT_DAY_LEN + 16];
	struct timespec now, cut;
	struct dirent *de;
	struct stat sb;
	size_t len, n = 0, i, k;
	int del = 0;
	DIR *d;

	audit_now(st, &now);
	audit_day_of(&now, today);
	if (st->as_retention == 0 || strcmp(today, st->as_swept) == 0)
		return 0;
	cut = now;
	cut.tv_sec -= (time_t)st->as_retention * 86400;
	audit_day_of(&cut, cutoff);
	if ((d = open_dir(st->as_dirfd)) == NULL) {
		log_warn("retention: list audit dir");
		return 0; /* nothing deleted; the next sweep tries again */
	}
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (!audit_day_valid(de->d_name, len) ||
		    (strcmp(de->d_name + AUDIT_DAY_LEN, sfx[0]) != 0 &&
			strcmp(de->d_name + AUDIT_DAY_LEN, sfx[1]) != 0) ||
		    strncmp(de->d_name, cutoff, AUDIT_DAY_LEN) >= 0 ||
		    fstatat(st->as_dirfd, de->d_name, &sb,
			AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISREG(sb.st_mode))
			continue;
		for (i = 0; i < n; i++)
			if (strncmp(gone[i], de->d_name, AUDIT_DAY_LEN) == 0)
				break;
		if (i == n && n < AUDIT_MAX_DAYS) {
			memcpy(gone[n], de->d_name, AUDIT_DAY_LEN);
			gone[n++][AUDIT_DAY_LEN] = '\0';
		}
	}
	closedir(d);
	memcpy(st->as_swept, today, sizeof(st->as_swept));
	if (n == 0)
		return 0;
	qsort(gone, n, sizeof(gone[0]), day_cmp);
	if (record_deleted(st, gone, n) == -1)
		return -1;
	for (i = 0; i < n; i++)
		for (k = 0; k < 2; k++) {
			snprintf(name, sizeof(name), "%.*s%s", AUDIT_DAY_LEN,
			    gone[i], sfx[k]);
			if (unlinkat(st->as_dirfd, name, 0) == 0)
				del++;
			else if (errno != ENOENT)
				log_warn("retention: delete %s", name);
		}
	if (del > 0 && fsync(st->as_dirfd) == -1)
		log_warn("retention: sync audit dir");
	/* An idle trail's open day may be one of them: the next opens anew. */
	if (st->as_fd != -1 &&
	    bsearch(st->as_day, gone, n, sizeof(gone[0]), day_cmp) != NULL) {
		close(st->as_fd);
		st->as_fd = -1;
		st->as_day[0] = '\0';
	}
	log_info("retention: %zu day(s) older than %s deleted", n, cutoff);
	return 0;
}
