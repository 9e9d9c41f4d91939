/*
 * cordon-auditd: the only writer of the audit directory.  Validates every
 * record against the schema (common/audit_schema.c), queues it, and
 * writes each event-loop pass's records as one group (store.c), then
 * acknowledges them.  May touch: the audit dir, nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "audit_schema.h"
#include "auditd.h"
#include "confine.h"
#include "daemon.h"
#include "json.h"
#include "lockfile.h"
#include "log.h"
#include "msg.h"
#include "util.h"
#include "auditd_shapes.h"

#define BATCH_MAX    4096 /* records per group before a forced write */
#define ANCHOR_EVERY 3600 /* seconds between hourly anchors */
#define LOCK_WAIT_MS 5000 /* for a predecessor still finishing its writes */
/* Stopping: how long peers' last records are waited for (the spawner's
 * own drain is 2 s), and how often their channels are looked at. */
#define DRAIN_MS      2500
#define DRAIN_POLL_MS 20

static struct audit_store store = {.as_dirfd = -1, .as_fd = -1};
static struct daemon auditd;
static unsigned int peer_gen[PROC_MAX]; /* bumped when a channel changes */
static struct audit_item *batch;
static size_t batch_n;
static struct event *flush_ev, *hourly_ev;
static int failed;
static int lock_fd = -1; /* the audit dir's lock, held until exit */
static struct event *drain_ev;
static uint64_t drain_until;

static void audit_record_h(struct ipc_conn *, struct ipc_msg *, void *);
static void audit_tail_h(struct ipc_conn *, struct ipc_msg *, void *);

static const struct ipc_dispatch parent_table[] = {
    DAEMON_PARENT_ROWS,
    {MSG_AUDIT_RECORD, PROC_BIT(PROC_PARENT), 2, AUDIT_RECORD_MAX, IPC_FD_NONE,
	audit_record_h, IPC_KEYS_OR(record_shape, "bad-record")},
    IPC_END,
};

static const struct ipc_dispatch peer_table[] = {
    {MSG_AUDIT_RECORD,
	PROC_BIT(PROC_BROKER) | PROC_BIT(PROC_SPAWNER) | PROC_BIT(PROC_VAULTD) |
	    PROC_BIT(PROC_EGRESSD) | PROC_BIT(PROC_GATED),
	2, AUDIT_RECORD_MAX, IPC_FD_NONE, audit_record_h,
	IPC_KEYS_OR(record_shape, "bad-record")},
    {MSG_AUDIT_TAIL, PROC_BIT(PROC_BROKER), 2, 512, IPC_FD_NONE, audit_tail_h,
	IPC_KEYS(tail_shape)},
    DAEMON_PEER_STATUS_ROW,
    IPC_END,
};

static void
audit_peer_up(struct daemon *d, enum proc_id p)
{
	peer_gen[p]++; /* acks owed to the old channel are dropped */
}

static struct ipc_conn *
ack_conn(const struct audit_item *it)
{
	if (it->ai_from == PROC_PARENT)
		return auditd.d_parent;
	if (it->ai_gen != peer_gen[it->ai_from])
		return NULL;
	return auditd.d_peers[it->ai_from];
}

/*
 * Fail closed: a store that failed once is never written again (its seq
 * and prev may already name a line that is not on disk).  Exit once the
 * store-failed answers are on their way; the restart recovers from what
 * is on disk, setting a torn tail aside.
 */
static void
store_failed(void)
{
	static const struct timeval linger = {0, 200 * 1000};

	if (failed)
		return;
	log_warnx("audit store failed; exiting for a clean restart");
	failed = 1;
	event_base_loopexit(auditd.d_base, &linger);
}

/*
 * AU-6: stopping (SIGTERM, or cordond gone: killed, it takes every
 * daemon down at once), auditd stays while a peer still has a channel
 * to it, boundedly, so that the end records of the runs a stopping
 * spawner kills, and egressd's of the tunnels it closes, are kept.  A
 * cordon stopped in order has stopped every peer before auditd.
 */
static void
drain_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct timeval tv = {0, DRAIN_POLL_MS * 1000};
	int p, busy = 0;

	for (p = 0; p < PROC_MAX; p++)
		busy |= auditd.d_peers[p] != NULL;
	if (!busy || now_ms_mono() >= drain_until) {
		event_base_loopexit(auditd.d_base, NULL);
		return;
	}
	evtimer_add(drain_ev, &tv);
}

static void
audit_stop(struct daemon *d)
{
	drain_until = now_ms_mono() + DRAIN_MS;
	if ((drain_ev = evtimer_new(d->d_base, drain_cb, NULL)) == NULL) {
		event_base_loopexit(d->d_base, NULL);
		return;
	}
	drain_cb(-1, 0, NULL);
}

/* Write the queued group, then answer each sender. */
static void
audit_flush(void)
{
	struct json_object *reply;
	struct ipc_conn *c;
	struct ipc_msg req;
	size_t i;
	int rc;

	if (batch_n == 0)
		return;
	rc = failed ? -1 : audit_store_append(&store, batch, batch_n);
	for (i = 0; i < batch_n; i++) {
		/* id 0: a one-way record, written but answered to nobody */
		if (batch[i].ai_id != 0 && (c = ack_conn(&batch[i])) != NULL) {
			memset(&req, 0, sizeof(req));
			req.m_id = batch[i].ai_id;
			if (rc == 0) {
				reply = json_object_new_object();
				json_object_object_add(reply, "seq",
				    json_object_new_int64(
					(int64_t)batch[i].ai_seq));
				ipc_reply(
				    c, &req, MSG_AUDIT_RECORD_OK, reply, -1);
				json_object_put(reply);
			} else
				ipc_reply_error(c, &req, "store-failed");
		}
		json_object_put(batch[i].ai_rec);
	}
	batch_n = 0;
	if (rc == -1)
		store_failed();
}

static void
audit_flush_cb(evutil_socket_t fd, short ev, void *arg)
{
	audit_flush();
}

static void
audit_record_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	static const struct timeval now = {0, 0};
	struct audit_item *it;

	if (batch_n == BATCH_MAX)
		audit_flush();
	it = &batch[batch_n];
	memset(it, 0, sizeof(*it));
	if (failed) {
		if (m->m_id != 0)
			ipc_reply_error(c, m, "store-failed");
		return;
	}
	if (audit_validate(m->m_obj, m->m_from, &it->ai_rec) == -1) {
		/* Never echo: the log names the sender only. */
		log_warnx("refused audit record from %s", proc_name(m->m_from));
		if (m->m_id != 0)
			ipc_reply_error(c, m, "bad-record");
		return;
	}
	audit_now(&store, &it->ai_ts);
	it->ai_from = m->m_from;
	it->ai_gen = peer_gen[m->m_from];
	it->ai_id = m->m_id;
	/* Everything read in this loop pass joins one group. */
	if (batch_n++ == 0)
		evtimer_add(flush_ev, &now);
}

static void
audit_tail_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o = m->m_obj, *out;
	const char *kind, *agent;

	if (m->m_id == 0)
		return; /* a query nobody waits for */
	/* Typed and bounded by tail_shape; the values are checked here. */
	kind = json_shape_str(o, "kind", NULL);
	agent = json_shape_str(o, "agent", NULL);
	if ((kind != NULL && audit_kind_lookup(kind) == NULL) ||
	    (agent != NULL &&
		!audit_pattern_ok(AP_NAME, agent, strlen(agent)))) {
		ipc_reply_error(c, m, "bad-message");
		return;
	}
	if ((out = audit_tail_query(kind, agent,
		 (uint64_t)json_shape_int(o, "since", 0),
		 (size_t)json_shape_int(o, "limit", 0))) == NULL) {
		ipc_reply_error(c, m, "internal");
		return;
	}
	ipc_reply(c, m, MSG_AUDIT_TAIL_OK, out, -1);
	json_object_put(out);
}

/* Hourly: anchor the head; on a new day, run retention. */
static void
audit_hourly_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct timeval tv = {ANCHOR_EVERY, 0};

	audit_flush();
	if (!failed && audit_retention_run(&store) == -1)
		store_failed();
	if (!failed) /* never a head that is not on disk */
		audit_anchor(&store, "hourly");
	evtimer_add(hourly_ev, &tv);
}

static void
parse_args(int argc, char **argv, struct daemon_args *a)
{
	static long days = 30;
	const struct daemon_numopt nums[] = {
	    {"retention-days", 0, 36500, &days},
	    {NULL, 0, 0, NULL},
	};

	daemon_parse_args(argc, argv, "audit-dir", nums, NULL, 0, a);
	store.as_retention = (unsigned int)days;
}

int
main(int argc, char **argv)
{
	struct daemon_args a;
	struct confine_path paths[1];
	struct confine_spec spec;
	struct timeval tv = {ANCHOR_EVERY, 0};
	pid_t holder;

	log_init("auditd", 0);
	parse_args(argc, argv, &a);
	log_init("auditd", a.da_debug);
	if (audit_clock_init(&store) == -1)
		fatalx("bad %s", AUDIT_CLOCK_ENV);
	daemon_prepare(&auditd, PROC_AUDITD, peer_table, &a);
	auditd.d_peer_up = audit_peer_up;
	auditd.d_stop = audit_stop;
	if ((batch = calloc(BATCH_MAX, sizeof(*batch))) == NULL ||
	    (flush_ev = evtimer_new(auditd.d_base, audit_flush_cb, NULL)) ==
		NULL ||
	    (hourly_ev = evtimer_new(auditd.d_base, audit_hourly_cb, NULL)) ==
		NULL)
		fatalx("auditd setup");

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
	spec.cs_syscalls =
	    SC_BASE | SC_FS_READ | SC_FS_WRITE | daemon_syscalls(&auditd);
	spec.cs_no_net = 1;
	spec.cs_nofile = 64;
	confine_self(&spec);

	/*
	 * Confined from here on.  AU-6, AU-7: one writer of this dir, or two
	 * chains interleave in one day file.  The lock (a file of the audit
	 * dir, which Landlock lets us write) is held until we exit, before
	 * anything is written.  A predecessor may still be finishing (cordond
	 * restarts us only once the old one is reaped, but a cordond killed
	 * with -9 leaves its auditd flushing): wait for it, boundedly.
	 */
	if ((lock_fd = lockfile_take(
		 store.as_dirfd, LOCKFILE_NAME, LOCK_WAIT_MS, &holder)) == -1) {
		if (errno == EWOULDBLOCK)
			fatalx("the audit dir is in use by another auditd "
			       "(pid %d); not starting",
			    (int)holder);
		fatal("audit dir lock");
	}
	/* Recover the tail, sweep, then serve. */
	if (audit_store_open(&store) == -1)
		fatalx("audit store recovery failed");
	audit_tail_load(&store); /* before any new line joins the ring */
	if (audit_retention_run(&store) == -1)
		fatalx("retention failed");
	audit_anchor(&store, "start");
	evtimer_add(hourly_ev, &tv);

	daemon_start(&auditd, parent_table);
	log_debug("ready");
	daemon_loop(&auditd);
	audit_flush();
	if (drain_ev != NULL)
		event_free(drain_ev);
	if (!failed)
		audit_anchor(&store, "shutdown");
	return failed ? 1 : 0;
}
