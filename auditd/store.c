/*
 * The audit store (AU-1, AU-6, AU-7): hash-chained JSONL lines appended
 * to YYYY-MM-DD.jsonl (UTC, 0600, O_APPEND) in groups, one fdatasync per
 * group; torn-tail recovery at start; day rollover; head anchors.
 * May touch: the audit dir (held as a directory fd), nothing else.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "audit_schema.h"
#include "auditd.h"
#include "json.h"
#include "log.h"
#include "util.h"

#define LINE_FLAGS  (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define CLOCK_BOUND (200LL * 366 * 86400)

/*
 * Test hook: a fixed offset added to the wall clock, so rollover and
 * retention can be tested.  cordond builds every daemon's environment
 * from scratch and never passes it; docs/audit.md says so.
 */
int
audit_clock_init(struct audit_store *st)
{
	const char *v = getenv(AUDIT_CLOCK_ENV);
	char *end;
	long long off;

	st->as_clock_off = 0;
	if (v == NULL)
		return 0;
	errno = 0;
	off = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || off < -CLOCK_BOUND ||
	    off > CLOCK_BOUND)
		return -1;
	st->as_clock_off = off;
	if (off != 0)
		log_warnx("test clock offset of %lld s in effect", off);
	return 0;
}

void
audit_now(const struct audit_store *st, struct timespec *ts)
{
	if (clock_gettime(CLOCK_REALTIME, ts) == -1)
		ts->tv_sec = 0, ts->tv_nsec = 0;
	ts->tv_sec += st->as_clock_off;
}

void
audit_day_of(const struct timespec *ts, char day[AUDIT_DAY_LEN + 1])
{
	struct tm tm;

	if (gmtime_r(&ts->tv_sec, &tm) == NULL ||
	    strftime(day, AUDIT_DAY_LEN + 1, "%Y-%m-%d", &tm) != AUDIT_DAY_LEN)
		snprintf(day, AUDIT_DAY_LEN + 1, "0000-00-00");
}

static int
sync_dir(struct audit_store *st)
{
	if (fsync(st->as_dirfd) == -1) {
		log_warn("fsync audit dir");
		return -1;
	}
	return 0;
}

static int
open_day(struct audit_store *st, const char *day)
{
	char name[32];
	int fd;

	snprintf(name, sizeof(name), "%s.jsonl", day);
	fd = openat(st->as_dirfd, name,
	    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd == -1) {
		log_warn("open audit file %s", name);
		return -1;
	}
	/* The file's directory entry must be as durable as its lines. */
	if (sync_dir(st) == -1) {
		close(fd);
		return -1;
	}
	if (st->as_fd != -1)
		close(st->as_fd);
	st->as_fd = fd;
	memcpy(st->as_day, day, sizeof(st->as_day));
	return 0;
}

/*
 * Move bytes [cut, size) of a day file aside into DAY.jsonl.torn, once:
 * the copy is made durable before the day file is cut, and undone if
 * the cut fails, so the retry at the next start copies it once again
 * and never twice.  A cut made but not synced stands: the tail is no
 * longer in the day file, so undoing the copy then would lose it.
 */
static int
set_aside(struct audit_store *st, int fd, const char *day, const char *torn,
    size_t tornlen, off_t cut)
{
	struct stat sb;
	char name[40];
	int tfd, rc = -1;

	snprintf(name, sizeof(name), "%s.jsonl.torn", day);
	tfd = openat(st->as_dirfd, name,
	    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (tfd == -1)
		return -1;
	if (fstat(tfd, &sb) == -1)
		goto out;
	if (write_full(tfd, torn, tornlen) == -1 || fdatasync(tfd) == -1 ||
	    ftruncate(fd, cut) == -1) {
		/* A full disk, or a cut refused: .torn as it was before. */
		if (ftruncate(tfd, sb.st_size) == -1 || fdatasync(tfd) == -1)
			log_warn("%s", name);
		goto out;
	}
	if (fdatasync(fd) == -1 || sync_dir(st) == -1)
		goto out;
	log_warnx("torn last line of %s.jsonl (%zu bytes) moved to %s", day,
	    tornlen, name);
	rc = 0;
out:
	close(tfd);
	return rc;
}

/*
 * Recover one day file: set a torn tail aside, then take the chain head
 * from its last whole line.  *found is 0 when no whole line is left.
 */
static int
recover_day(struct audit_store *st, const char *day, int *found)
{
	struct json_object *o;
	struct stat sb;
	char name[32], *buf = NULL, *nl, *start;
	size_t n;
	off_t off, cut;
	long long seq;
	int fd, rc = -1;

	*found = 0;
	snprintf(name, sizeof(name), "%s.jsonl", day);
	fd = openat(st->as_dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1 || fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		log_warn("recover %s", name);
		goto out;
	}
	if (sb.st_size == 0) {
		rc = 0;
		goto out;
	}
	n = sb.st_size > AUDIT_LINE_MAX + 1 ? AUDIT_LINE_MAX + 1
					    : (size_t)sb.st_size;
	off = sb.st_size - (off_t)n;
	if ((buf = malloc(n)) == NULL || pread(fd, buf, n, off) != (ssize_t)n)
		goto out;
	nl = memrchr(buf, '\n', n);
	if (nl == NULL && off > 0) {
		log_warnx(
		    "%s: last line longer than %d bytes", name, AUDIT_LINE_MAX);
		goto out;
	}
	cut = nl == NULL ? 0 : off + (nl - buf) + 1;
	if (cut < sb.st_size && set_aside(st, fd, day, buf + (cut - off),
				    (size_t)(sb.st_size - cut), cut) == -1) {
		log_warn("set aside the torn tail of %s", name);
		goto out;
	}
	if (nl == NULL) {
		rc = 0; /* nothing whole in this file */
		goto out;
	}
	start = nl > buf ? memrchr(buf, '\n', (size_t)(nl - buf)) : NULL;
	if (start == NULL && off > 0) {
		log_warnx(
		    "%s: last line longer than %d bytes", name, AUDIT_LINE_MAX);
		goto out;
	}
	start = start == NULL ? buf : start + 1;
	o = json_parse_object(start, (size_t)(nl - start), JSON_MAX_DEPTH);
	if (o == NULL || json_get_int(o, "seq", 1, AUDIT_COUNT_MAX, &seq)) {
		json_object_put(o);
		log_warnx("%s: last line is not an audit record; run "
			  "cordon audit verify",
		    name);
		goto out;
	}
	json_object_put(o);
	if (sha256_hex(start, (size_t)(nl - start), st->as_prev) == -1)
		goto out;
	st->as_seq = (uint64_t)seq;
	memcpy(st->as_last, day, sizeof(st->as_last));
	*found = 1;
	rc = 0;
out:
	free(buf);
	if (fd != -1)
		close(fd);
	return rc;
}

int
audit_store_open(struct audit_store *st)
{
	static char days[AUDIT_MAX_DAYS][AUDIT_DAY_LEN + 1];
	size_t n, i;
	int found = 0;

	st->as_fd = -1;
	st->as_seq = 0;
	st->as_last[0] = st->as_day[0] = '\0';
	memcpy(st->as_prev, AUDIT_GENESIS, sizeof(st->as_prev));
	if (audit_list_days(st->as_dirfd, days, AUDIT_MAX_DAYS, &n) == -1)
		return -1;
	/* Newest first: an empty or wholly torn file defers to the one
	 * before it, so the chain continues from the last whole line. */
	for (i = n; i > 0 && !found; i--)
		if (recover_day(st, days[i - 1], &found) == -1)
			return -1;
	st->as_anchored = 0; /* the first anchor records where we start */
	if (n > 0 && open_day(st, days[n - 1]) == -1)
		return -1;
	log_debug("chain head: seq %llu", (unsigned long long)st->as_seq);
	return 0;
}

/* One line: ts, id, seq, prev, kind, then the kind's fields. */
static char *
make_line(struct audit_store *st, struct audit_item *it, size_t *lenp,
    struct json_object **objp)
{
	struct json_object *line;
	struct tm tm;
	char stamp[80], id[48], rnd[9];
	const char *s;
	char *out = NULL;
	size_t len;

	if (gmtime_r(&it->ai_ts.tv_sec, &tm) == NULL ||
	    random_hex(rnd, sizeof(rnd), 4) == -1)
		return NULL;
	snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, it->ai_ts.tv_nsec / 1000000);
	/* Time-ordered: milliseconds since the epoch, then randomness. */
	snprintf(id, sizeof(id), "%013lld-%s",
	    (long long)it->ai_ts.tv_sec * 1000 + it->ai_ts.tv_nsec / 1000000,
	    rnd);
	if ((line = json_object_new_object()) == NULL)
		return NULL;
	json_object_object_add(line, "ts", json_object_new_string(stamp));
	json_object_object_add(line, "id", json_object_new_string(id));
	json_object_object_add(
	    line, "seq", json_object_new_int64((int64_t)st->as_seq + 1));
	json_object_object_add(
	    line, "prev", json_object_new_string(st->as_prev));
	json_object_object_foreach (it->ai_rec, key, val)
		json_object_object_add(line, key, json_object_get(val));
	/* A null is what a constructor that ran out of memory left. */
	json_object_object_foreach (line, k, v)
		if (v == NULL) {
			(void)k;
			json_object_put(line);
			return NULL;
		}
	s = json_object_to_json_string_length(line, LINE_FLAGS, &len);
	if (s == NULL || (out = malloc(len + 1)) == NULL ||
	    sha256_hex(s, len, st->as_prev) == -1) {
		free(out);
		json_object_put(line);
		return NULL;
	}
	memcpy(out, s, len);
	out[len] = '\n';
	st->as_seq++;
	it->ai_seq = st->as_seq;
	*lenp = len + 1;
	*objp = line;
	return out;
}

/* Write one group to the current file and make it durable. */
static int
flush_group(struct audit_store *st, char *buf, size_t len)
{
	if (len == 0)
		return 0;
	/* One write(2): O_APPEND keeps the group contiguous. */
	if (write_full(st->as_fd, buf, len) == -1 ||
	    fdatasync(st->as_fd) == -1) {
		log_warn("audit append");
		return -1;
	}
	memcpy(st->as_last, st->as_day, sizeof(st->as_last));
	return 0;
}

int
audit_store_append(struct audit_store *st, struct audit_item *items, size_t n)
{
	struct json_object **objs;
	char day[AUDIT_DAY_LEN + 1], *buf = NULL, *line, *nb;
	size_t i, len = 0, cap = 0, ll, first = 0;
	int rc = -1;

	if ((objs = calloc(n ? n : 1, sizeof(*objs))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		audit_day_of(&items[i].ai_ts, day);
		/* Never back to an older file if the clock steps back. */
		if (st->as_fd == -1 || strcmp(day, st->as_day) > 0) {
			if (st->as_fd != -1) {
				if (flush_group(st, buf, len) == -1)
					goto out;
				len = 0;
				audit_tail_commit(objs + first, i - first);
				first = i;
				audit_anchor(st, "rollover");
			}
			if (open_day(st, day) == -1)
				goto out;
		}
		if ((line = make_line(st, &items[i], &ll, &objs[i])) == NULL)
			goto out;
		if (len + ll > cap) {
			cap = (len + ll) * 2;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(line);
				goto out;
			}
			buf = nb;
		}
		memcpy(buf + len, line, ll);
		len += ll;
		free(line);
	}
	if (flush_group(st, buf, len) == -1)
		goto out;
	audit_tail_commit(objs + first, n - first);
	rc = 0;
out:
	for (i = 0; i < n; i++)
		json_object_put(objs[i]);
	free(objs);
	free(buf);
	return rc;
}

#define HEADS_READ  (256 * 1024) /* the newest part of the heads file */
#define HEADS_ENTRY 160		 /* one anchor line (audit_anchor) */

/* Rewrite the heads file atomically with one more anchor at the end. */
static int
heads_append(struct audit_store *st, const char *entry)
{
	static char old[HEADS_READ + HEADS_ENTRY];
	size_t elen = strlen(entry);
	const char *keep = old;
	struct stat sb;
	size_t n = 0, lines = 0, j;
	ssize_t r;
	char *p;
	int fd;

	if (elen > HEADS_ENTRY)
		return -1;
	fd = openat(
	    st->as_dirfd, AUDIT_HEADS_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd != -1) {
		/* The newest part only, should the file have grown. */
		if (fstat(fd, &sb) == 0 && sb.st_size > (off_t)HEADS_READ)
			lseek(fd, sb.st_size - (off_t)HEADS_READ, SEEK_SET);
		while (n < HEADS_READ &&
		       (r = read(fd, old + n, HEADS_READ - n)) > 0)
			n += (size_t)r;
		close(fd);
	}
	/* Drop a partial last line, then keep the newest KEEP - 1 lines. */
	if (n > 0) {
		p = memrchr(old, '\n', n);
		n = p == NULL ? 0 : (size_t)(p - old) + 1;
	}
	for (j = n; j > 1; j--)
		if (old[j - 2] == '\n' && ++lines == AUDIT_HEADS_KEEP - 1) {
			keep = old + j - 1;
			break;
		}
	/* The new anchor goes right after the kept lines (old has room). */
	n -= (size_t)(keep - old);
	memmove(old, keep, n);
	memcpy(old + n, entry, elen);
	return atomic_write_at(st->as_dirfd, AUDIT_HEADS_FILE, old, n + elen,
	    0600, (uid_t)-1, (gid_t)-1);
}

/*
 * Anchor the chain head outside the chain (AU-7): on stderr (journald
 * under systemd) and in the heads file.  `cordon audit verify --heads`
 * reads either.
 */
void
audit_anchor(struct audit_store *st, const char *why)
{
	char entry[160];

	if (st->as_seq == 0)
		return;
	snprintf(entry, sizeof(entry),
	    "cordon-audit-head day=%s seq=%llu sha256=%s\n", st->as_last,
	    (unsigned long long)st->as_seq, st->as_prev);
	log_info("%.*s (%s)", (int)strlen(entry) - 1, entry, why);
	if (st->as_seq == st->as_anchored)
		return; /* the heads file has this one already */
	if (heads_append(st, entry) == -1)
		log_warn("heads file");
	else
		st->as_anchored = st->as_seq;
}
