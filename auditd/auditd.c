/*
 * cordon-auditd: the only writer of the audit directory.  Accepts typed
 * records from cordond and the daemons, validates them, appends one JSON
 * line each to YYYY-MM-DD.jsonl (UTC) and acknowledges only after
 * fdatasync.  May touch: the audit dir, nothing else.
 *
 * This milestone knows the system.* kinds only and writes lines without
 * seq/prev: the full schema, the hash chain (AU-7), group commit and
 * retention belong to the audit store work (issue 6).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "config.h"
#include "confine.h"
#include "daemon.h"
#include "log.h"
#include "msg.h"
#include "util.h"

struct audit_store {
	int as_dirfd;
	int as_fd;	 /* today's file, O_APPEND */
	char as_day[16]; /* YYYY-MM-DD of as_fd */
	uint64_t as_seq;
};

static struct audit_store store = {.as_dirfd = -1, .as_fd = -1};
static struct daemon auditd;

static void audit_record_h(struct ipc_conn *, struct ipc_msg *, void *);

static const struct ipc_dispatch parent_table[] = {
    DAEMON_PARENT_ROWS,
    {MSG_AUDIT_RECORD, PROC_BIT(PROC_PARENT), 2, 4096, IPC_FD_NONE,
	audit_record_h},
    {MSG_NONE, 0, 0, 0, 0, NULL},
};

static const struct ipc_dispatch peer_table[] = {
    {MSG_AUDIT_RECORD,
	PROC_BIT(PROC_BROKER) | PROC_BIT(PROC_SPAWNER) | PROC_BIT(PROC_VAULTD),
	2, 4096, IPC_FD_NONE, audit_record_h},
    {MSG_NONE, 0, 0, 0, 0, NULL},
};

/* Kinds this build accepts, with who may send them. */
static const struct {
	const char *k_kind;
	uint32_t k_senders;
} audit_kinds[] = {
    {"system.boot", PROC_BIT(PROC_PARENT)},
    {"system.shutdown", PROC_BIT(PROC_PARENT)},
};

static int
audit_open_day(const char *day)
{
	char name[32];
	int fd;

	if (store.as_fd != -1 && strcmp(store.as_day, day) == 0)
		return 0;
	snprintf(name, sizeof(name), "%s.jsonl", day);
	fd = openat(store.as_dirfd, name,
	    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd == -1) {
		log_warn("open audit file");
		return -1;
	}
	if (store.as_fd != -1)
		close(store.as_fd);
	store.as_fd = fd;
	snprintf(store.as_day, sizeof(store.as_day), "%s", day);
	return 0;
}

static int
audit_append(const char *kind, struct json_object *fields, uint64_t *seqp)
{
	struct json_object *line;
	struct timespec ts;
	struct tm tm;
	char stamp[64], day[16], id[48], rnd[9];
	const char *s;
	size_t len;
	char *buf;
	int rc = -1;

	if (clock_gettime(CLOCK_REALTIME, &ts) == -1 ||
	    gmtime_r(&ts.tv_sec, &tm) == NULL)
		return -1;
	strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, ts.tv_nsec / 1000000);
	if (random_hex(rnd, sizeof(rnd), 4) == -1)
		return -1;
	/* Time-ordered id: milliseconds since the epoch, then randomness. */
	snprintf(id, sizeof(id), "%013lld-%s",
	    (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, rnd);
	if (audit_open_day(day) == -1)
		return -1;

	line = json_object_new_object();
	json_object_object_add(line, "ts", json_object_new_string(stamp));
	json_object_object_add(line, "id", json_object_new_string(id));
	json_object_object_add(line, "kind", json_object_new_string(kind));
	json_object_object_foreach (fields, key, val)
		json_object_object_add(line, key, json_object_get(val));
	s = json_object_to_json_string_length(
	    line, JSON_C_TO_STRING_PLAIN, &len);
	if (s != NULL && (buf = malloc(len + 1)) != NULL) {
		memcpy(buf, s, len);
		buf[len] = '\n';
		/* One write(2) per line: O_APPEND keeps lines whole. */
		if (write_full(store.as_fd, buf, len + 1) == 0 &&
		    fdatasync(store.as_fd) == 0) {
			store.as_seq++;
			*seqp = store.as_seq;
			rc = 0;
		} else
			log_warn("audit append");
		free(buf);
	}
	json_object_put(line);
	return rc;
}

/* system.boot {version}, system.shutdown {reason}: nothing free-form. */
static struct json_object *
audit_fields(const char *kind, struct json_object *rec)
{
	struct json_object *f = json_object_new_object();
	const char *v;
	int nkeys = json_object_object_length(rec);

	if (strcmp(kind, "system.boot") == 0) {
		if (nkeys != 2 ||
		    (v = json_get_str(rec, "version", 32)) == NULL ||
		    strcmp(v, CORDON_VERSION) != 0)
			goto bad;
		json_object_object_add(
		    f, "version", json_object_new_string(CORDON_VERSION));
	} else if (strcmp(kind, "system.shutdown") == 0) {
		if (nkeys != 2 ||
		    (v = json_get_str(rec, "reason", 16)) == NULL ||
		    (strcmp(v, "signal") != 0 && strcmp(v, "fatal") != 0))
			goto bad;
		json_object_object_add(f, "reason", json_object_new_string(v));
	} else
		goto bad;
	return f;
bad:
	json_object_put(f);
	return NULL;
}

static void
audit_record_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *fields, *reply;
	const char *kind;
	uint64_t seq;
	size_t i;

	if ((kind = json_get_str(m->m_obj, "kind", 64)) == NULL) {
		ipc_reply_error(c, m, "bad-record");
		return;
	}
	for (i = 0; i < nitems(audit_kinds); i++)
		if (strcmp(audit_kinds[i].k_kind, kind) == 0)
			break;
	if (i == nitems(audit_kinds) ||
	    (audit_kinds[i].k_senders & PROC_BIT(m->m_from)) == 0 ||
	    (fields = audit_fields(kind, m->m_obj)) == NULL) {
		log_warnx("refused audit record from %s", proc_name(m->m_from));
		ipc_reply_error(c, m, "bad-record");
		return;
	}
	if (audit_append(audit_kinds[i].k_kind, fields, &seq) == -1) {
		ipc_reply_error(c, m, "store-failed");
		json_object_put(fields);
		return;
	}
	json_object_put(fields);
	reply = json_object_new_object();
	json_object_object_add(
	    reply, "seq", json_object_new_int64((int64_t)seq));
	ipc_reply(c, m, MSG_AUDIT_RECORD_OK, reply, -1);
	json_object_put(reply);
}

int
main(int argc, char **argv)
{
	struct daemon_args a;
	struct confine_path paths[1];
	struct confine_spec spec;

	log_init("auditd", 0);
	daemon_parse_args(argc, argv, "audit-dir", &a);
	log_init("auditd", a.da_debug);
	daemon_prepare(&auditd, PROC_AUDITD, peer_table);

	store.as_dirfd =
	    open(a.da_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (store.as_dirfd == -1)
		fatal("audit dir");

	memset(&spec, 0, sizeof(spec));
	paths[0].cp_path = a.da_path;
	paths[0].cp_access = CONFINE_LL_WRITE;
	spec.cs_name = "auditd";
	spec.cs_user = a.da_user;
	spec.cs_paths = paths;
	spec.cs_npaths = 1;
	spec.cs_seccomp = CONFINE_SECCOMP_ALLOW;
	spec.cs_syscalls = SC_BASE | SC_FS_READ | SC_FS_WRITE;
	spec.cs_no_net = 1;
	spec.cs_nofile = 64;
	confine_self(&spec);

	daemon_start(&auditd, parent_table);
	log_debug("ready");
	return daemon_loop(&auditd);
}
