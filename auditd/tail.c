/*
 * The ring of recent durable records that answers MSG_AUDIT_TAIL (API-8):
 * at most AUDIT_TAIL_MAX records and TAIL_BYTES bytes, refilled at start
 * from the end of the newest day file.  May touch: reads the audit dir.
 */
#include <sys/stat.h>

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

#define TAIL_BYTES (4 * 1024 * 1024) /* well under IPC_MAX_PAYLOAD */

struct tail_ent {
	struct json_object *te_obj;
	size_t te_len;
};

static struct tail_ent ring[AUDIT_TAIL_MAX];
static size_t ring_head; /* index of the oldest */
static size_t ring_n;
static size_t ring_bytes;

static void
tail_drop_oldest(void)
{
	struct tail_ent *e = &ring[ring_head];

	ring_bytes -= e->te_len;
	json_object_put(e->te_obj);
	e->te_obj = NULL;
	ring_head = (ring_head + 1) % AUDIT_TAIL_MAX;
	ring_n--;
}

static void
tail_push(struct json_object *o, size_t len)
{
	struct tail_ent *e;

	if (len > TAIL_BYTES)
		return;
	while (ring_n > 0 &&
	       (ring_n == AUDIT_TAIL_MAX || ring_bytes + len > TAIL_BYTES))
		tail_drop_oldest();
	e = &ring[(ring_head + ring_n) % AUDIT_TAIL_MAX];
	e->te_obj = json_object_get(o);
	e->te_len = len;
	ring_bytes += len;
	ring_n++;
}

void
audit_tail_commit(struct json_object **lines, size_t n)
{
	size_t i, len;

	for (i = 0; i < n; i++) {
		if (lines[i] == NULL ||
		    json_object_to_json_string_length(
			lines[i], JSON_C_TO_STRING_PLAIN, &len) == NULL)
			continue;
		tail_push(lines[i], len);
	}
}

/* Whole lines from the last TAIL_BYTES of the newest day file. */
void
audit_tail_load(struct audit_store *st)
{
	struct json_object *o;
	struct stat sb;
	char name[32], *buf, *p, *end, *nl;
	size_t n;
	int fd;

	if (st->as_last[0] == '\0')
		return;
	snprintf(name, sizeof(name), "%s.jsonl", st->as_last);
	fd = openat(st->as_dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1 || fstat(fd, &sb) == -1) {
		if (fd != -1)
			close(fd);
		return;
	}
	n = sb.st_size > TAIL_BYTES ? TAIL_BYTES : (size_t)sb.st_size;
	if ((buf = malloc(n ? n : 1)) == NULL ||
	    pread(fd, buf, n, sb.st_size - (off_t)n) != (ssize_t)n) {
		free(buf);
		close(fd);
		return;
	}
	close(fd);
	p = buf;
	end = buf + n;
	/* Starting mid-file, the first piece is a partial line. */
	if (n < (size_t)sb.st_size && (nl = memchr(p, '\n', n)) != NULL)
		p = nl + 1;
	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		o = json_parse_object(p, (size_t)(nl - p), JSON_MAX_DEPTH);
		if (o != NULL) {
			tail_push(o, (size_t)(nl - p));
			json_object_put(o);
		}
		p = nl + 1;
	}
	free(buf);
}

static int
tail_match(
    struct json_object *o, const char *kind, const char *agent, uint64_t since)
{
	const char *v;
	long long seq;

	if (json_get_int(o, "seq", 0, AUDIT_COUNT_MAX, &seq) == -1 ||
	    (uint64_t)seq <= since)
		return 0;
	if (kind != NULL &&
	    ((v = json_get_str(o, "kind", AUDIT_KIND_MAX)) == NULL ||
		strcmp(v, kind) != 0))
		return 0;
	if (agent != NULL && ((v = json_get_str(o, "agent", 64)) == NULL ||
				 strcmp(v, agent) != 0))
		return 0;
	return 1;
}

struct json_object *
audit_tail_query(
    const char *kind, const char *agent, uint64_t since, size_t limit)
{
	struct json_object *out, *arr, *o;
	size_t i, first, got = 0;

	if ((out = json_object_new_object()) == NULL)
		return NULL;
	arr = json_object_new_array();
	/* Newest first to find the last `limit` matches... */
	for (i = ring_n, first = ring_n; i > 0 && got < limit; i--) {
		o = ring[(ring_head + i - 1) % AUDIT_TAIL_MAX].te_obj;
		if (tail_match(o, kind, agent, since)) {
			got++;
			first = i - 1;
		}
	}
	/* ...then hand them out oldest first. */
	for (i = first; i < ring_n && got > 0; i++) {
		o = ring[(ring_head + i) % AUDIT_TAIL_MAX].te_obj;
		if (tail_match(o, kind, agent, since)) {
			json_object_array_add(arr, json_object_get(o));
			got--;
		}
	}
	json_object_object_add(out, "records", arr);
	return out;
}
