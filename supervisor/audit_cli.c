/*
 * cordon audit verify|tail: read the audit dir directly (as `cordon run`
 * resolves it) — verify walks every day file, the hash chain, the schema
 * and the anchored heads (AU-7); tail prints lines for jq.  Read-only.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "audit_schema.h"
#include "cli.h"
#include "cordond.h"
#include "json.h"
#include "sha256.h"
#include "text.h"
#include "util.h"

#define DAY_LEN	  10
#define MAX_DAYS  4096
#define MAX_HEADS 4096
#define HEAD_TAG  "cordon-audit-head "

struct head {
	char h_day[DAY_LEN + 1];
	uint64_t h_seq;
	char h_hash[SHA256_HEX_LEN + 1];
	int h_seen;
};

struct verify {
	const char *v_dir;
	char v_days[MAX_DAYS][DAY_LEN + 1];
	size_t v_ndays;
	struct head *v_heads;
	size_t v_nheads;
	uint64_t v_seq; /* last seq seen */
	uint64_t v_first;
	uint64_t v_count;
	char v_prev[SHA256_HEX_LEN + 1];
	int v_midchain;	 /* the oldest file does not start at genesis */
	int v_explained; /* a retention record deleted an older day */
	char (*v_deleted)[DAY_LEN + 1]; /* every day retention deleted */
	size_t v_ndeleted, v_capdeleted;
	/* Progress on a terminal (stderr), never when piped. */
	int v_tty;
	unsigned long long v_bytes, v_bytes_done;
	size_t v_day; /* the day file being read, 0-based */
	struct timespec v_start, v_shown;
};

static int
day_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Sorted YYYY-MM-DD of DIR/YYYY-MM-DD<suffix>; -1 if unreadable. */
static int
list_days(
    const char *dir, const char *suffix, char (*days)[DAY_LEN + 1], size_t *n)
{
	struct dirent *de;
	DIR *d;

	*n = 0;
	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL && *n < MAX_DAYS) {
		if (strlen(de->d_name) != DAY_LEN + strlen(suffix) ||
		    !audit_pattern_ok(AP_DATE, de->d_name, DAY_LEN) ||
		    strcmp(de->d_name + DAY_LEN, suffix) != 0)
			continue;
		memcpy(days[*n], de->d_name, DAY_LEN);
		days[(*n)++][DAY_LEN] = '\0';
	}
	closedir(d);
	qsort(days, *n, sizeof(days[0]), day_cmp);
	return 0;
}

/*
 * Where a head read from a file goes: nowhere if the same anchor is
 * there already (a journal repeats them); when MAX_HEADS are held, in
 * place of the oldest, since the newest are the ones that show records
 * cut off the end.
 */
static struct head *
head_slot(struct verify *v, unsigned long long seq, const char *hash)
{
	size_t i, old = 0;

	for (i = 0; i < v->v_nheads; i++) {
		if (v->v_heads[i].h_seq == seq &&
		    strcmp(v->v_heads[i].h_hash, hash) == 0)
			return NULL;
		if (v->v_heads[i].h_seq < v->v_heads[old].h_seq)
			old = i;
	}
	if (v->v_nheads < MAX_HEADS)
		return &v->v_heads[v->v_nheads++];
	return seq > v->v_heads[old].h_seq ? &v->v_heads[old] : NULL;
}

/* Anchors: every line holding "cordon-audit-head day=D seq=N sha256=H"
 * (the heads file, or lines pasted from the journal). */
static int
load_heads(struct verify *v, const char *path, int required)
{
	char *line = NULL, day[DAY_LEN + 1], hash[SHA256_HEX_LEN + 1], *p;
	unsigned long long seq;
	size_t cap = 0;
	struct head *h;
	FILE *f;
	int n;

	if ((f = fopen(path, "re")) == NULL) {
		if (!required && errno == ENOENT)
			return 0;
		fprintf(stderr, "cordon: cannot read the heads file\n");
		return -1;
	}
	while (getline(&line, &cap, f) != -1) {
		if ((p = strstr(line, HEAD_TAG)) == NULL)
			continue;
		n = 0;
		if (sscanf(p, HEAD_TAG "day=%10s seq=%llu sha256=%64s%n", day,
			&seq, hash, &n) != 3 ||
		    n == 0 || !audit_pattern_ok(AP_DATE, day, strlen(day)) ||
		    strlen(hash) != SHA256_HEX_LEN)
			continue;
		if ((h = head_slot(v, seq, hash)) == NULL)
			continue;
		memcpy(h->h_day, day, sizeof(h->h_day));
		memcpy(h->h_hash, hash, sizeof(h->h_hash));
		h->h_seq = seq;
		h->h_seen = 0;
	}
	free(line);
	fclose(f);
	return 0;
}

/*
 * A day file, read as root by an admin from a dir another user owns:
 * never through a symlink, never a FIFO or device.
 */
static FILE *
day_open(const char *path)
{
	struct stat sb;
	FILE *f;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) ==
	    -1)
		return NULL;
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    (f = fdopen(fd, "r")) == NULL) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	return f;
}

/* A progress line is on the terminal: cleared before any verdict. */
static int progress_drawn;

static void
progress_end(void)
{
	if (progress_drawn)
		fprintf(stderr, "\r\033[K");
	progress_drawn = 0;
}

static int
fail(const char *file, unsigned long lineno, const char *msg)
{
	progress_end();
	printf("%s:%lu: %s\n", file, lineno, msg);
	return -1;
}

/* Is seq `want` anywhere after the current position of f? */
static int
seq_later(FILE *f, uint64_t want)
{
	struct json_object *o;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long pos = ftell(f);
	long long seq;
	int found = 0;

	while (!found && (n = getline(&line, &cap, f)) > 0) {
		o = json_parse_object(
		    line, (size_t)n - (line[n - 1] == '\n'), JSON_MAX_DEPTH);
		if (o != NULL &&
		    json_get_int(o, "seq", 0, AUDIT_COUNT_MAX, &seq) == 0 &&
		    (uint64_t)seq == want)
			found = 1;
		json_object_put(o);
	}
	free(line);
	fseek(f, pos, SEEK_SET);
	return found;
}

/* The record without ts/id/seq/prev must pass the schema as sent. */
static int
schema_ok(struct json_object *o)
{
	static const char *const meta[] = {"ts", "id", "seq", "prev", "kind"};
	const struct audit_kind *k;
	struct json_object *rec, *out;
	const char *kind;
	size_t i = 0;
	int from, rc;

	/* Meta fields first, in this order. */
	json_object_object_foreach (o, key, val) {
		(void)val;
		if (i < nitems(meta) && strcmp(key, meta[i]) != 0)
			return 0;
		i++;
	}
	if ((kind = json_get_str(o, "kind", AUDIT_KIND_MAX)) == NULL ||
	    (k = audit_kind_lookup(kind)) == NULL ||
	    json_get_str(o, "ts", 32) == NULL ||
	    json_get_str(o, "id", 40) == NULL)
		return 0;
	for (from = 0; from < PROC_MAX; from++)
		if (k->ak_senders & PROC_BIT(from))
			break;
	rec = json_object_new_object();
	json_object_object_foreach (o, key2, val2)
		if (strcmp(key2, "ts") && strcmp(key2, "id") &&
		    strcmp(key2, "seq") && strcmp(key2, "prev"))
			json_object_object_add(
			    rec, key2, json_object_get(val2));
	rc = audit_validate(rec, (enum proc_id)from, &out);
	json_object_put(rec);
	json_object_put(out);
	return rc == 0;
}

static void
note_retention(struct verify *v, struct json_object *o)
{
	struct json_object *arr;
	size_t i;

	if (strcmp(
		json_get_str(o, "kind", AUDIT_KIND_MAX), "audit.retention") ||
	    !json_object_object_get_ex(o, "deleted", &arr))
		return;
	for (i = 0; i < json_object_array_length(arr); i++) {
		const char *d =
		    json_object_get_string(json_object_array_get_idx(arr, i));
		void *nv;

		if (strcmp(d, v->v_days[0]) < 0)
			v->v_explained = 1;
		if (v->v_ndeleted == v->v_capdeleted) {
			size_t nc = v->v_capdeleted ? 2 * v->v_capdeleted : 64;

			if ((nv = reallocarray(v->v_deleted, nc,
				 sizeof(*v->v_deleted))) == NULL)
				continue; /* unnamed: its heads fail, closed */
			v->v_deleted = nv;
			v->v_capdeleted = nc;
		}
		snprintf(v->v_deleted[v->v_ndeleted++], DAY_LEN + 1, "%s", d);
	}
}

static int
verify_line(struct verify *v, const char *file, unsigned long ln,
    const char *line, size_t len, FILE *f)
{
	struct json_object *o;
	char hash[SHA256_HEX_LEN + 1], msg[160];
	const char *prev;
	long long seq;
	size_t i;
	int rc = -1;

	if (sha256_hex(line, len, hash) == -1)
		return fail(file, ln, "cannot hash");
	o = json_parse_object(line, len, JSON_MAX_DEPTH);
	if (o == NULL || json_get_int(o, "seq", 1, AUDIT_COUNT_MAX, &seq) ||
	    (prev = json_get_str(o, "prev", SHA256_HEX_LEN)) == NULL ||
	    strlen(prev) != SHA256_HEX_LEN) {
		fail(file, ln, "not an audit record (line edited?)");
		goto out;
	}
	if (v->v_count == 0) {
		v->v_first = (uint64_t)seq;
		if (strcmp(prev, AUDIT_GENESIS) != 0)
			v->v_midchain = 1;
		else if (seq != 1) {
			fail(file, ln, "the chain's first record is not seq 1");
			goto out;
		}
	} else if ((uint64_t)seq != v->v_seq + 1) {
		if ((uint64_t)seq <= v->v_seq)
			snprintf(msg, sizeof(msg),
			    "seq %lld after seq %llu: records out of order "
			    "or repeated",
			    seq, (unsigned long long)v->v_seq);
		else if (seq_later(f, v->v_seq + 1))
			snprintf(msg, sizeof(msg),
			    "seq %lld where seq %llu belongs: records out of "
			    "order (swapped)",
			    seq, (unsigned long long)v->v_seq + 1);
		else
			snprintf(msg, sizeof(msg),
			    "records missing: seq %llu to %lld (deleted "
			    "lines or a cut-off file)",
			    (unsigned long long)v->v_seq + 1, seq - 1);
		fail(file, ln, msg);
		goto out;
	} else if (strcmp(prev, v->v_prev) != 0) {
		snprintf(msg, sizeof(msg),
		    "broken link: prev is not the SHA-256 of seq %llu "
		    "(that record was edited)",
		    (unsigned long long)v->v_seq);
		fail(file, ln, msg);
		goto out;
	}
	if (!schema_ok(o)) {
		fail(file, ln, "record does not match the audit schema");
		goto out;
	}
	for (i = 0; i < v->v_nheads; i++)
		if (v->v_heads[i].h_seq == (uint64_t)seq) {
			if (strcmp(v->v_heads[i].h_hash, hash) != 0) {
				snprintf(msg, sizeof(msg),
				    "differs from the head anchored for seq "
				    "%lld (rewritten)",
				    seq);
				fail(file, ln, msg);
				goto out;
			}
			v->v_heads[i].h_seen = 1;
		}
	note_retention(v, o);
	v->v_seq = (uint64_t)seq;
	memcpy(v->v_prev, hash, sizeof(v->v_prev));
	v->v_count++;
	rc = 0;
out:
	json_object_put(o);
	return rc;
}

#define PROGRESS_EVERY_NS (250 * 1000 * 1000)

static long long
elapsed_ns(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000LL +
	       (b->tv_nsec - a->tv_nsec);
}

/* The size of every day file, for the percentage. */
static void
progress_start(struct verify *v)
{
	char path[PATH_MAX + 32];
	struct stat sb;
	size_t i;

	if (!(v->v_tty = isatty(STDERR_FILENO)))
		return;
	for (i = 0; i < v->v_ndays; i++) {
		snprintf(
		    path, sizeof(path), "%s/%s.jsonl", v->v_dir, v->v_days[i]);
		if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
			v->v_bytes += (unsigned long long)sb.st_size;
	}
	clock_gettime(CLOCK_MONOTONIC, &v->v_start);
	v->v_shown.tv_sec = 0;
}

/* One status line, redrawn in place at most every 250 ms (and at 0). */
static void
progress_show(struct verify *v, int force)
{
	struct timespec now;
	unsigned long long pct;

	if (!v->v_tty)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!force && v->v_shown.tv_sec != 0 &&
	    elapsed_ns(&v->v_shown, &now) < PROGRESS_EVERY_NS)
		return;
	v->v_shown = now;
	progress_drawn = 1;
	pct = v->v_bytes ? v->v_bytes_done * 100 / v->v_bytes : 100;
	fprintf(stderr,
	    "\rcordon audit verify: %3llu%%, %llu records, day %zu of %zu, "
	    "%llds elapsed\033[K",
	    pct > 100 ? 100 : pct, (unsigned long long)v->v_count,
	    v->v_day + (v->v_ndays > 0), v->v_ndays,
	    elapsed_ns(&v->v_start, &now) / 1000000000LL);
}

static int
verify_file(struct verify *v, const char *day)
{
	char path[PATH_MAX + 32], name[32], *line = NULL;
	unsigned long ln = 0;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int rc = 0;

	snprintf(name, sizeof(name), "%s.jsonl", day);
	snprintf(path, sizeof(path), "%s/%s", v->v_dir, name);
	if ((f = day_open(path)) == NULL)
		return fail(name, 0, "cannot read");
	while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
		ln++;
		if (line[n - 1] != '\n') {
			rc =
			    fail(name, ln, "torn line (no newline at the end)");
			break;
		}
		rc = verify_line(v, name, ln, line, (size_t)n - 1, f);
		v->v_bytes_done += (unsigned long long)n;
		if ((ln & 255) == 0)
			progress_show(v, 0);
	}
	free(line);
	fclose(f);
	return rc;
}

static int
verify_heads(struct verify *v)
{
	struct head *h;
	size_t i, expired = 0;
	char msg[200];

	for (i = 0; i < v->v_nheads; i++) {
		h = &v->v_heads[i];
		if (h->h_seen)
			continue;
		if (h->h_seq > v->v_seq) {
			snprintf(msg, sizeof(msg),
			    "the trail ends at seq %llu but seq %llu was "
			    "anchored: records were cut off",
			    (unsigned long long)v->v_seq,
			    (unsigned long long)h->h_seq);
			return fail("heads", i + 1, msg);
		}
		/*
		 * Before the trail's start: expired only if a retention
		 * record names its day.  Any other missing day was deleted
		 * by someone else (an older day file removed by hand).
		 */
		if (v->v_midchain && v->v_explained && h->h_seq < v->v_first &&
		    strcmp(h->h_day, v->v_days[0]) < 0 &&
		    bsearch(h->h_day, v->v_deleted, v->v_ndeleted,
			sizeof(*v->v_deleted), day_cmp) != NULL) {
			expired++;
			continue;
		}
		snprintf(msg, sizeof(msg),
		    "anchored seq %llu (day %s) is not in the trail",
		    (unsigned long long)h->h_seq, h->h_day);
		return fail("heads", i + 1, msg);
	}
	return (int)expired;
}

static int
audit_verify(const char *dir, const char *heads)
{
	static struct verify v;
	static char torn[MAX_DAYS][DAY_LEN + 1];
	char path[PATH_MAX + 32];
	size_t i, ntorn;
	int expired;

	memset(&v, 0, sizeof(v));
	v.v_dir = dir;
	memcpy(v.v_prev, AUDIT_GENESIS, sizeof(v.v_prev));
	if ((v.v_heads = calloc(MAX_HEADS, sizeof(*v.v_heads))) == NULL)
		return 2;
	snprintf(path, sizeof(path), "%s/heads", dir);
	if (list_days(dir, ".jsonl", v.v_days, &v.v_ndays) == -1) {
		fprintf(stderr, "cordon: cannot read the audit dir\n");
		free(v.v_heads);
		return 2;
	}
	if (load_heads(&v, heads ? heads : path, heads != NULL) == -1) {
		free(v.v_heads);
		return 2;
	}
	progress_start(&v);
	for (i = 0; i < v.v_ndays; i++) {
		v.v_day = i;
		progress_show(&v, i == 0);
		if (verify_file(&v, v.v_days[i]) == -1)
			goto broken;
	}
	progress_show(&v, 1);
	progress_end();
	if (v.v_midchain && !v.v_explained) {
		fail(v.v_ndays ? v.v_days[0] : "audit", 1,
		    "the chain does not start at genesis and no "
		    "audit.retention "
		    "record explains the missing days");
		goto broken;
	}
	if (v.v_ndeleted > 1)
		qsort(v.v_deleted, v.v_ndeleted, sizeof(*v.v_deleted), day_cmp);
	if ((expired = verify_heads(&v)) == -1)
		goto broken;
	printf("ok %llu records\n", (unsigned long long)v.v_count);
	printf("heads: %zu checked, %d expired by retention\n",
	    v.v_nheads - (size_t)expired, expired);
	if (list_days(dir, ".jsonl.torn", torn, &ntorn) == 0)
		for (i = 0; i < ntorn; i++)
			printf("set aside: %s.jsonl.torn (a torn last line "
			       "found at restart; never acknowledged)\n",
			    torn[i]);
	free(v.v_heads);
	free(v.v_deleted);
	return 0;
broken:
	progress_end();
	free(v.v_heads);
	free(v.v_deleted);
	return 1;
}

/* ---- tail ---- */

struct tail_filter {
	const char *tf_kind;
	const char *tf_agent;
};

static int
tail_match(const struct tail_filter *tf, const char *line, size_t len)
{
	struct json_object *o;
	const char *v;
	int ok;

	if (tf->tf_kind == NULL && tf->tf_agent == NULL)
		return 1;
	if ((o = json_parse_object(line, len, JSON_MAX_DEPTH)) == NULL)
		return 0;
	ok = (tf->tf_kind == NULL ||
		 ((v = json_get_str(o, "kind", AUDIT_KIND_MAX)) != NULL &&
		     strcmp(v, tf->tf_kind) == 0)) &&
	     (tf->tf_agent == NULL ||
		 ((v = json_get_str(o, "agent", 64)) != NULL &&
		     strcmp(v, tf->tf_agent) == 0));
	json_object_put(o);
	return ok;
}

/* The whole of DIR/DAY.jsonl, or NULL. */
static char *
slurp(const char *dir, const char *day, size_t *len)
{
	char path[PATH_MAX + 32], *buf;
	struct stat sb;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.jsonl", dir, day);
	if ((f = day_open(path)) == NULL || fstat(fileno(f), &sb) == -1) {
		if (f)
			fclose(f);
		return NULL;
	}
	if ((buf = malloc((size_t)sb.st_size + 1)) == NULL) {
		fclose(f);
		return NULL;
	}
	*len = fread(buf, 1, (size_t)sb.st_size, f);
	fclose(f);
	return buf;
}

/* Print whole matching lines of buf[0..len); returns bytes consumed. */
static size_t
print_lines(const struct tail_filter *tf, const char *buf, size_t len)
{
	const char *p = buf, *nl;

	while ((nl = memchr(p, '\n', (size_t)(buf + len - p))) != NULL) {
		if (tail_match(tf, p, (size_t)(nl - p)))
			fwrite(p, 1, (size_t)(nl - p) + 1, stdout);
		p = nl + 1;
	}
	fflush(stdout);
	return (size_t)(p - buf);
}

/* The last `want` matching lines (0: all), oldest first. */
static int
tail_last(const char *dir, const struct tail_filter *tf, size_t want,
    char (*days)[DAY_LEN + 1], size_t ndays)
{
	char **bufs;
	size_t *starts, *lens, i, got = 0, d;
	const char *p;

	bufs = calloc(ndays + 1, sizeof(*bufs));
	starts = calloc(ndays + 1, sizeof(*starts));
	lens = calloc(ndays + 1, sizeof(*lens));
	if (bufs == NULL || starts == NULL || lens == NULL) {
		free(bufs);
		free(starts);
		free(lens);
		return -1;
	}
	/* Newest file first, back to the oldest needed. */
	for (d = ndays; d > 0 && (want == 0 || got < want); d--) {
		if ((bufs[d - 1] = slurp(dir, days[d - 1], &lens[d - 1])) ==
		    NULL)
			continue;
		i = lens[d - 1];
		while (i > 0 && bufs[d - 1][i - 1] != '\n')
			i--; /* a torn tail is not printed */
		lens[d - 1] = i;
		starts[d - 1] = i;
		while (starts[d - 1] > 0 && (want == 0 || got < want)) {
			i = starts[d - 1] - 1; /* the '\n' ending a line */
			p = memrchr(bufs[d - 1], '\n', i);
			starts[d - 1] = p ? (size_t)(p - bufs[d - 1]) + 1 : 0;
			if (tail_match(tf, bufs[d - 1] + starts[d - 1],
				i - starts[d - 1]))
				got++;
		}
	}
	for (d = 0; d < ndays; d++) {
		if (bufs[d] != NULL)
			print_lines(
			    tf, bufs[d] + starts[d], lens[d] - starts[d]);
		free(bufs[d]);
	}
	free(bufs);
	free(starts);
	free(lens);
	return 0;
}

/* -f: print what is appended to the newest file, and to newer ones. */
static int
tail_follow(const char *dir, const struct tail_filter *tf)
{
	static char days[MAX_DAYS][DAY_LEN + 1];
	struct timespec ts = {0, 250 * 1000 * 1000};
	char cur[DAY_LEN + 1] = "", path[PATH_MAX + 32], buf[65536];
	size_t n, have = 0, used, got;
	off_t off = 0;
	struct stat sb;
	FILE *f;

	for (;;) {
		/* The current day to its end, first: once a newer day file
		 * exists, auditd writes the older one no more. */
		snprintf(path, sizeof(path), "%s/%s.jsonl", dir, cur);
		if (cur[0] != '\0' && (f = day_open(path)) != NULL) {
			if (fseeko(f, off, SEEK_SET) == 0)
				do {
					got = fread(buf + have, 1,
					    sizeof(buf) - have, f);
					off += (off_t)got;
					have += got;
					used = print_lines(tf, buf, have);
					memmove(buf, buf + used, have - used);
					have -= used;
					/* an over-long line is skipped */
					if (have == sizeof(buf))
						have = 0;
				} while (got > 0);
			fclose(f);
		}
		if (list_days(dir, ".jsonl", days, &n) == -1)
			return -1;
		if (n > 0 && strcmp(days[n - 1], cur) > 0) {
			if (cur[0] == '\0') {
				snprintf(path, sizeof(path), "%s/%s.jsonl", dir,
				    days[n - 1]);
				off = stat(path, &sb) == 0 ? sb.st_size : 0;
			} else
				off = 0;
			memcpy(cur, days[n - 1], sizeof(cur));
			have = 0;
			continue; /* the new day at once */
		}
		nanosleep(&ts, NULL);
	}
}

static int
usage(void)
{
	fprintf(stderr,
	    "usage: cordon audit verify [--home DIR] [--heads FILE]\n"
	    "       cordon audit tail [-f] [-n N] [--kind K] [--agent A] "
	    "[--home DIR]\n");
	return 2;
}

/* An unknown subcommand: named cleaned, with the nearest one. */
static int
unknown_sub(const char *sub)
{
	static const char *const subs[] = {"verify", "tail", NULL};
	char word[CLI_WORD_MAX + 8];
	const char *near;

	cli_clean(sub, strlen(sub), word, sizeof(word));
	near = text_nearest(sub, subs);
	fprintf(stderr, "cordon audit: unknown command %s%s%s%s\n", word,
	    near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
	return usage();
}

int
cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"home", required_argument, NULL, 'h'},
	    {"heads", required_argument, NULL, 'H'},
	    {"kind", required_argument, NULL, 'k'},
	    {"agent", required_argument, NULL, 'a'},
	    {NULL, 0, NULL, 0},
	};
	static char days[MAX_DAYS][DAY_LEN + 1];
	struct cordon_config cf;
	struct tail_filter tf = {NULL, NULL};
	const char *home = NULL, *heads = NULL, *sub;
	long long want = 20;
	char *end;
	size_t ndays;
	int ch, follow = 0, verify;

	if (argc < 2)
		return usage();
	sub = argv[1];
	if (strcmp(sub, "verify") != 0 && strcmp(sub, "tail") != 0)
		return unknown_sub(sub);
	verify = strcmp(sub, "verify") == 0;
	argc--;
	argv++;
	optind = 1;
	while ((ch = cli_getopt(verify ? "audit verify" : "audit tail", argc,
		    argv, verify ? "" : "fn:", opts)) != -1) {
		switch (ch) {
		case 'h':
			home = optarg;
			break;
		case 'H':
			if (!verify)
				return usage();
			heads = optarg;
			break;
		case 'k':
			if (verify || audit_kind_lookup(optarg) == NULL)
				return usage();
			tf.tf_kind = optarg;
			break;
		case 'a':
			if (verify ||
			    !audit_pattern_ok(AP_NAME, optarg, strlen(optarg)))
				return usage();
			tf.tf_agent = optarg;
			break;
		case 'f':
			follow = 1;
			break;
		case 'n':
			errno = 0;
			want = strtoll(optarg, &end, 10);
			if (errno || *end != '\0' || want < 0 || want > 1000000)
				return usage();
			break;
		default:
			return usage();
		}
	}
	if (optind != argc)
		return usage();
	memset(&cf, 0, sizeof(cf));
	if (home_resolve(&cf, home) == -1)
		return 2;
	if (verify)
		return audit_verify(cf.cf_audit, heads);
	if (list_days(cf.cf_audit, ".jsonl", days, &ndays) == -1) {
		fprintf(stderr, "cordon: cannot read the audit dir\n");
		return 2;
	}
	if (tail_last(cf.cf_audit, &tf, (size_t)want, days, ndays) == -1)
		return 2;
	if (follow)
		return tail_follow(cf.cf_audit, &tf) == -1 ? 2 : 0;
	return 0;
}
