/*
 * cordon-vaultd: the only process that may write the operator's vault,
 * and only beneath 00_Inbox/cordon/; main, the dispatch tables and the
 * request handlers.  Holds one directory fd on the vault root; its
 * Landlock ruleset reads the vault and writes the inbox only.
 */
#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "audit_emit.h"
#include "confine.h"
#include "log.h"
#include "msg.h"
#include "util.h"
#include "text.h"
#include "unicode.h"
#include "vaultd.h"
#include "vaultpath.h"
#include "vaultd_shapes.h"

/*
 * A write's time here stays under the spawner's wait for its answer (5 s
 * for a chat note): at most VAULT_QUEUE_WAIT_MS waiting for a slot, then
 * VAULT_AUDIT_WAIT for auditd.  A note the spawner has given up on (and
 * reported unsaved) must not appear later.
 */
#define VAULT_AUDIT_WAIT    3 /* seconds */
#define VAULT_QUEUE_WAIT_MS 1500
#define VAULT_ROOT_PATH	    4096
#define VAULT_MAX_PENDING   32	 /* writes waiting for auditd (2 fds each) */
#define VAULT_MAX_QUEUED    4096 /* writes waiting for a pending slot */
/* ... and their bytes: held whole, before they are checked. */
#define VAULT_QUEUED_BYTES (32u * 1024 * 1024)

/*
 * A note waiting for auditd.  Ordering (AU-6, docs/audit.md): the
 * vault.write record with the final path and byte count goes to auditd
 * once the note's bytes are written to a hidden temp (a full disk
 * refuses the note there, "write-failed", and no record is made), and
 * while auditd makes it durable the temp is fsynced; only once the record
 * is acknowledged and the temp is complete is it renamed into place.  So
 * a note never becomes visible without its record, and the record is a
 * durable intent: if auditd is down or refuses, the temp is removed and
 * the sender gets "audit-unavailable"; if the temp's fsync fails, the
 * record stands for a note that never appeared and the sender gets
 * "write-failed"; a crash before the rename leaves a record for a note
 * that never appeared (and a temp that the next start sweeps away).  An
 * audit trail may over-report an attempt, never miss a write.
 */
struct vault_pending {
	LIST_ENTRY(vault_pending) vp_entry;
	enum proc_id vp_peer; /* who asked, and on which channel generation */
	unsigned vp_gen;
	uint32_t vp_id;
	uint32_t vp_reply; /* MSG_VAULT_*_OK */
	int vp_dirfd;
	int vp_replace; /* update of an existing mission note */
	int vp_staged;	/* the temp is written and fsynced */
	size_t vp_bytes;
	char vp_tmp[VAULT_TMP_NAME];
	char vp_name[VAULT_HINT_MAX + VAULT_CHAT_NAME_MAX];
	char vp_path[VAULT_PATH_MAX + 1]; /* vault-relative final path */
};

static LIST_HEAD(, vault_pending) vault_pendings = LIST_HEAD_INITIALIZER(
    vault_pendings);
/* A write request held back while VAULT_MAX_PENDING are in flight. */
struct vault_deferred {
	TAILQ_ENTRY(vault_deferred) vq_entry;
	enum proc_id vq_peer;
	unsigned vq_gen;
	uint32_t vq_type, vq_id, vq_len;
	uint64_t vq_since; /* now_ms_mono() when it was held back */
	struct json_object *vq_obj;
};

static TAILQ_HEAD(, vault_deferred) vault_queue = TAILQ_HEAD_INITIALIZER(
    vault_queue);
static size_t vault_npending, vault_nqueued, vault_qbytes;
static int vault_draining;
static struct vault vault;

static void vault_chat_h(struct ipc_conn *, struct ipc_msg *, void *);
static void vault_mission_h(struct ipc_conn *, struct ipc_msg *, void *);
static void vault_read_h(struct ipc_conn *, struct ipc_msg *, void *);
static void vault_list_h(struct ipc_conn *, struct ipc_msg *, void *);

static const struct ipc_dispatch parent_table[] = {
    DAEMON_PARENT_ROWS,
    IPC_END,
};

/* Chat notes carry prompt + response: up to the codec's own bound. */
static const struct ipc_dispatch peer_table[] = {
    {MSG_VAULT_CHAT_NOTE, PROC_BIT(PROC_SPAWNER), 2, IPC_MAX_PAYLOAD,
	IPC_FD_NONE, vault_chat_h, IPC_KEYS_OR(chat_shape, "invalid-request")},
    {MSG_VAULT_MISSION_NOTE, PROC_BIT(PROC_SPAWNER), 2, IPC_MAX_PAYLOAD,
	IPC_FD_NONE, vault_mission_h,
	IPC_KEYS_OR(mission_shape, "invalid-request")},
    {MSG_VAULT_READ, PROC_BIT(PROC_BROKER), 2, VAULT_RAW_MAX + 64, IPC_FD_NONE,
	vault_read_h, IPC_KEYS_OR(read_shape, "invalid-request")},
    {MSG_VAULT_LIST, PROC_BIT(PROC_BROKER), 2, VAULT_RAW_MAX + 64, IPC_FD_NONE,
	vault_list_h, IPC_KEYS_OR(list_shape, "invalid-request")},
    DAEMON_PEER_STATUS_ROW,
    IPC_END,
};

const char *
vault_err_code(enum vault_err e)
{
	switch (e) {
	case VE_INVALID_REQUEST:
		return "invalid-request";
	case VE_INVALID_PATH:
		return "invalid-path";
	case VE_NOT_FOUND:
		return "not-found";
	case VE_TOO_LARGE:
		return "too-large";
	case VE_EXISTS:
		return "exists";
	case VE_BUSY:
		return "busy";
	case VE_WRITE_FAILED:
		return "write-failed";
	case VE_AUDIT:
		return "audit-unavailable";
	default:
		return "internal";
	}
}

static void
vault_peer_up(struct daemon *d, enum proc_id p)
{
	vault.v_gen[p]++;
}

static int
vault_reserved(const char *path)
{
	struct vault_pending *p;

	LIST_FOREACH (p, &vault_pendings, vp_entry)
		if (strcmp(p->vp_path, path) == 0)
			return 1;
	return 0;
}

/* Answer the original sender, if its channel is still the same one. */
static void
vault_answer(struct vault_pending *p, enum vault_err e)
{
	struct ipc_conn *c = vault.v_d.d_peers[p->vp_peer];
	struct json_object *o;
	struct ipc_msg req;

	if (c == NULL || vault.v_gen[p->vp_peer] != p->vp_gen) {
		log_warnx("%s went away before its note was answered",
		    proc_name(p->vp_peer));
		return;
	}
	memset(&req, 0, sizeof(req));
	req.m_id = p->vp_id;
	if (e != VE_OK) {
		ipc_reply_error(c, &req, vault_err_code(e));
		return;
	}
	o = json_object_new_object();
	/* MI-4: a mission note's answer carries no path. */
	if (p->vp_reply == MSG_VAULT_CHAT_NOTE_OK)
		json_object_object_add(
		    o, "path", json_object_new_string(p->vp_path));
	json_object_object_add(
	    o, "bytes", json_object_new_int64((int64_t)p->vp_bytes));
	ipc_reply(c, &req, p->vp_reply, o, -1);
	json_object_put(o);
}

/* Run held-back writes while slots are free; never recursively. */
static void
vault_drain(void)
{
	struct vault_deferred *q;
	struct ipc_conn *c;
	struct ipc_msg m;

	if (vault_draining)
		return;
	vault_draining = 1;
	while (vault_npending < VAULT_MAX_PENDING &&
	       (q = TAILQ_FIRST(&vault_queue)) != NULL) {
		TAILQ_REMOVE(&vault_queue, q, vq_entry);
		vault_nqueued--;
		vault_qbytes -= q->vq_len;
		c = vault.v_d.d_peers[q->vq_peer];
		if (c != NULL && vault.v_gen[q->vq_peer] == q->vq_gen) {
			ipc_msg_init(
			    &m, q->vq_type, q->vq_id, q->vq_len, q->vq_peer);
			m.m_obj = q->vq_obj;
			if (now_ms_mono() - q->vq_since > VAULT_QUEUE_WAIT_MS)
				ipc_reply_error(c, &m, vault_err_code(VE_BUSY));
			else if (q->vq_type == MSG_VAULT_CHAT_NOTE)
				vault_chat_h(c, &m, NULL);
			else
				vault_mission_h(c, &m, NULL);
		}
		json_object_put(q->vq_obj);
		free(q);
	}
	vault_draining = 0;
}

/*
 * Hold a write back if the pending slots are full (or others already
 * wait, to keep the order): 1 if held or refused, 0 to go ahead.
 */
static int
vault_defer(struct ipc_conn *c, struct ipc_msg *m)
{
	struct vault_deferred *q;

	if (vault_npending < VAULT_MAX_PENDING &&
	    (vault_draining || TAILQ_EMPTY(&vault_queue)))
		return 0;
	if (vault_nqueued >= VAULT_MAX_QUEUED ||
	    m->m_len > VAULT_QUEUED_BYTES - vault_qbytes ||
	    (q = calloc(1, sizeof(*q))) == NULL) {
		ipc_reply_error(c, m, vault_err_code(VE_BUSY));
		return 1;
	}
	q->vq_peer = ipc_conn_peer(c);
	q->vq_gen = vault.v_gen[q->vq_peer];
	q->vq_since = now_ms_mono();
	q->vq_type = m->m_type;
	q->vq_id = m->m_id;
	q->vq_len = m->m_len;
	q->vq_obj = json_object_get(m->m_obj);
	TAILQ_INSERT_TAIL(&vault_queue, q, vq_entry);
	vault_nqueued++;
	vault_qbytes += m->m_len;
	return 1;
}

static void
vault_pending_free(struct vault_pending *p)
{
	LIST_REMOVE(p, vp_entry);
	close(p->vp_dirfd);
	free(p);
	vault_npending--;
	vault_drain();
}

/*
 * A write failed: if the inbox is gone, or is another directory than the
 * one made at start (the operator deleted or moved it, and maybe made a
 * new one), Landlock's write rule, tied to the old inode, refuses every
 * write from now on.  Exit once this answer is on its way, so that
 * cordond restarts vaultd, which makes the inbox again.  A symlink in its
 * place is refused as ever and changes nothing: a restart would refuse
 * to start on it.
 */
static int vault_restart;

static void
vault_check_inbox(void)
{
	static const struct timeval linger = {0, 200 * 1000};
	struct stat st;
	int fd, gone;

	if ((fd = vault_open_dir(&vault, VAULT_INBOX, 0)) == -1)
		gone = errno == ENOENT;
	else {
		gone = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) &&
		       (st.st_dev != vault.v_inbox_dev ||
			   st.st_ino != vault.v_inbox_ino);
		close(fd);
	}
	if (!gone || vault_restart)
		return;
	log_warnx("the vault inbox was moved or replaced; exiting so that a "
		  "restart makes it again");
	vault_restart = 1;
	event_base_loopexit(vault.v_d.d_base, &linger);
}

static void
vault_audit_cb(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct vault_pending *p = arg;

	if (!p->vp_staged)
		vault_answer(p, VE_WRITE_FAILED); /* logged when staged */
	else if (!audit_emit_acked(m)) {
		log_warnx("audit record not acknowledged: note withdrawn");
		vault_discard(p->vp_dirfd, p->vp_tmp);
		vault_answer(p, VE_AUDIT);
	} else if (vault_publish(p->vp_dirfd, p->vp_tmp, p->vp_name,
		       p->vp_replace) == -1) {
		log_warn("cannot publish a note");
		vault_answer(p, VE_WRITE_FAILED);
		vault_check_inbox();
	} else
		vault_answer(p, VE_OK);
	vault_pending_free(p);
}

/*
 * Write body to a temp in p's directory, ask auditd for the record, and
 * fsync the temp while auditd syncs the record: the two syncs overlap.
 * The rest happens in vault_audit_cb, which also answers a failed
 * fsync.  Takes p (answered and freed on failure), body and rec.
 */
static void
vault_commit(
    struct vault_pending *p, char *body, size_t len, struct json_object *rec)
{
	struct ipc_conn *audit = vault.v_d.d_peers[PROC_AUDITD];
	int sent, fd;

	p->vp_bytes = len;
	LIST_INSERT_HEAD(&vault_pendings, p, vp_entry);
	vault_npending++;
	json_object_object_add(
	    rec, "bytes", json_object_new_int64((int64_t)len));
	/* VA-4: the bytes are written before the record is asked for, so a
	 * full disk refuses the note without a record claiming it. */
	if (vault_stage(&vault, p->vp_dirfd, body, len, p->vp_tmp, &fd) == -1) {
		log_warn("cannot stage a note");
		json_object_put(rec);
		free(body);
		vault_answer(p, VE_WRITE_FAILED);
		vault_pending_free(p);
		return;
	}
	free(body);
	/* Its own bound: the whole write stays under the spawner's wait
	 * for the answer (above). */
	sent = audit != NULL && audit_emit_within(audit, rec, VAULT_AUDIT_WAIT,
				    vault_audit_cb, p) == 0;
	json_object_put(rec);
	if (!sent) {
		close(fd);
		vault_discard(p->vp_dirfd, p->vp_tmp);
		vault_answer(p, VE_AUDIT);
		vault_pending_free(p);
	} else {
		ipc_flush(audit);
		if (vault_stage_sync(p->vp_dirfd, p->vp_tmp, fd) == -1)
			log_warn("cannot stage a note");
		else
			p->vp_staged = 1;
	}
}

/* A write refused before vault_commit: answer e, free p and body. */
static void
vault_refuse(struct ipc_conn *c, struct ipc_msg *m, struct vault_pending *p,
    char *body, enum vault_err e)
{
	ipc_reply_error(c, m, vault_err_code(e));
	if (p->vp_dirfd != -1)
		close(p->vp_dirfd);
	free(p);
	free(body);
}

static struct vault_pending *
vault_pending_new(struct ipc_conn *c, struct ipc_msg *m, uint32_t reply)
{
	struct vault_pending *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->vp_peer = ipc_conn_peer(c);
	p->vp_gen = vault.v_gen[p->vp_peer];
	p->vp_id = m->m_id;
	p->vp_reply = reply;
	p->vp_dirfd = -1;
	return p;
}

/* Eight lowercase hex digits, as the spawner sends them: 1, else 0. */
static int
vault_sha8_ok(const char *s, size_t len)
{
	return len == 8 && hex_lower_n(s, 8);
}

/*
 * The first free chat note name in p's directory (the chats folder) for
 * time t, agent and the prompt's sha8, into p's name and path: 0; 1 when
 * VAULT_COLLISIONS are all taken; -1 on error.
 */
static int
vault_chat_free(
    struct vault_pending *p, long long t, const char *agent, const char *sha8)
{
	char name[VAULT_CHAT_NAME_MAX];
	char path[VAULT_PATH_MAX + 1];
	unsigned n;
	int ex;

	for (n = 1; n <= VAULT_COLLISIONS; n++) {
		if (vaultpath_chat_name(
			name, sizeof(name), t, agent, sha8, n) == -1)
			return -1;
		snprintf(path, sizeof(path), "%s/%s", VAULT_CHATS, name);
		if (vault_reserved(path))
			continue;
		if ((ex = vault_exists(p->vp_dirfd, name)) == -1)
			return -1;
		if (ex == 0) {
			memcpy(p->vp_name, name, strlen(name) + 1);
			memcpy(p->vp_path, path, strlen(path) + 1);
			return 0;
		}
	}
	return 1;
}

/*
 * MSG_VAULT_CHAT_NOTE {agent, prompt, promptSha8, response, time} (VA-5).
 * promptSha8 is the first 8 hex of SHA-256 of the (scrubbed) prompt as
 * sent: the spawner hashes it, so vaultd maps no libcrypto and keeps
 * none of it resident (docs/PERFORMANCE.md).  Taking the spawner's word for it
 * widens nothing: whoever sends the prompt can choose its 32-bit hash
 * prefix anyway, and a name that is taken is never overwritten.
 */
static void
vault_chat_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	const char *agent, *prompt, *resp, *sha8, *path;
	struct vault_pending *p;
	struct json_object *rec;
	size_t alen, plen, slen, rlen, chars, blen;
	char *body = NULL;
	enum vault_err e;
	long long t;
	int dfd, ex;

	if (vault_defer(c, m))
		return;
	/* Typed and bounded by chat_shape; the values are checked here. */
	agent = json_shape_str(m->m_obj, "agent", &alen);
	prompt = json_shape_str(m->m_obj, "prompt", &plen);
	sha8 = json_shape_str(m->m_obj, "promptSha8", &slen);
	resp = json_shape_str(m->m_obj, "response", &rlen);
	t = json_shape_int(m->m_obj, "time", 0);
	if (!vaultpath_name_ok(agent, alen) ||
	    (chars = uni_utf8_chars(prompt, plen)) < 1 ||
	    chars > VAULT_PROMPT_CHARS || !vault_sha8_ok(sha8, slen)) {
		ipc_reply_error(c, m, vault_err_code(VE_INVALID_REQUEST));
		return;
	}
	/* The name comes from the prompt's hash, never its text. */
	if (vault_note_chat(agent, prompt, plen, resp, rlen, t, &body, &blen) ==
		-1 ||
	    (p = vault_pending_new(c, m, MSG_VAULT_CHAT_NOTE_OK)) == NULL) {
		free(body);
		ipc_reply_error(c, m, vault_err_code(VE_INTERNAL));
		return;
	}
	/* AU-6: no folder is made for a note that cannot be recorded. */
	if (vault.v_d.d_peers[PROC_AUDITD] == NULL) {
		e = VE_AUDIT;
		goto out;
	}
	if ((dfd = vault_open_dir(&vault, VAULT_CHATS, 1)) == -1) {
		log_warn("chats folder");
		vault_check_inbox();
		goto fail;
	}
	p->vp_dirfd = dfd;
	if ((ex = vault_chat_free(p, t, agent, sha8)) == -1)
		goto fail;
	if (ex == 1) {
		e = VE_EXISTS;
		goto out;
	}
	path = p->vp_path;
	rec = json_object_new_object();
	json_object_object_add(
	    rec, "kind", json_object_new_string("vault.write"));
	json_object_object_add(rec, "agent", json_object_new_string(agent));
	json_object_object_add(rec, "path", json_object_new_string(path));
	json_object_object_add(rec, "action", json_object_new_string("create"));
	vault_commit(p, body, blen, rec);
	return;
fail:
	e = VE_WRITE_FAILED;
out:
	vault_refuse(c, m, p, body, e);
}

/* A mission note's folder, opened (made) into p, and whether name
 * there is a note to replace: 1, 0 (new), or -1 (a write failure). */
static int
vault_mission_target(
    struct vault_pending *p, const char *folder, const char *name)
{
	struct stat st;
	int dfd, ex;

	if ((dfd = vault_open_dir(&vault, folder, 1)) == -1) {
		log_warn("mission folder");
		vault_check_inbox();
		return -1;
	}
	p->vp_dirfd = dfd;
	if ((ex = vault_exists(dfd, name)) == -1)
		return -1;
	/* Only a regular note is ever replaced (vault.update). */
	if (ex == 1 && (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
			   !S_ISREG(st.st_mode)))
		return -1;
	p->vp_replace = ex;
	return ex;
}

/* MSG_VAULT_MISSION_NOTE {missionId, folder, hint, content} (VA-3). */
static void
vault_mission_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	const char *id, *rawf, *rawh, *content;
	char folder[VAULT_PATH_MAX + 1], hint[VAULT_HINT_MAX + 1];
	char name[VAULT_HINT_MAX + 4];
	struct vault_pending *p;
	struct json_object *rec;
	size_t idlen, flen, hlen, clen, blen;
	char *body = NULL;
	enum vault_err e;
	long fn, hn;
	int ex, r;

	if (vault_defer(c, m))
		return;
	/* Typed and bounded by mission_shape; the values are checked here. */
	id = json_shape_str(m->m_obj, "missionId", &idlen);
	rawf = json_shape_str(m->m_obj, "folder", &flen);
	rawh = json_shape_str(m->m_obj, "hint", &hlen);
	content = json_shape_str(m->m_obj, "content", &clen);
	if (!vaultpath_name_ok(id, idlen)) {
		ipc_reply_error(c, m, vault_err_code(VE_INVALID_REQUEST));
		return;
	}
	/* Path-like inputs are URL-decoded once, then checked (VA-3). */
	if ((fn = vaultpath_decode(rawf, flen, folder, sizeof(folder))) == -1 ||
	    !vaultpath_mission_folder_ok(id, folder, (size_t)fn) ||
	    (hn = vaultpath_decode(rawh, hlen, hint, sizeof(hint))) == -1 ||
	    vaultpath_hint_name(hint, (size_t)hn, name, sizeof(name)) == -1) {
		ipc_reply_error(c, m, vault_err_code(VE_INVALID_PATH));
		return;
	}
	if (fn > 0 && folder[fn - 1] == '/')
		folder[--fn] = '\0';
	if (vault_note_mission(content, clen, &body, &blen) == -1 ||
	    (p = vault_pending_new(c, m, MSG_VAULT_MISSION_NOTE_OK)) == NULL) {
		free(body);
		ipc_reply_error(c, m, vault_err_code(VE_INTERNAL));
		return;
	}
	r = snprintf(p->vp_path, sizeof(p->vp_path), "%s/%s", folder, name);
	memcpy(p->vp_name, name, strlen(name) + 1);
	if (r < 0 || (size_t)r >= sizeof(p->vp_path)) {
		e = VE_INVALID_PATH;
		goto out;
	}
	if (vault_reserved(p->vp_path)) {
		e = VE_BUSY;
		goto out;
	}
	if (vault.v_d.d_peers[PROC_AUDITD] == NULL) { /* AU-6, as above */
		e = VE_AUDIT;
		goto out;
	}
	if ((ex = vault_mission_target(p, folder, name)) == -1)
		goto fail;
	rec = json_object_new_object();
	json_object_object_add(rec, "kind",
	    json_object_new_string(ex ? "vault.update" : "vault.write"));
	json_object_object_add(rec, "missionId", json_object_new_string(id));
	json_object_object_add(
	    rec, "action", json_object_new_string(ex ? "update" : "create"));
	vault_commit(p, body, blen, rec);
	return;
fail:
	e = VE_WRITE_FAILED;
out:
	vault_refuse(c, m, p, body, e);
}

/*
 * The one decoding pass and the lexical rules for a broker path: the
 * decoded path in out, or an error.  dir selects the listing rules.
 */
static enum vault_err
vault_path_arg(
    struct ipc_msg *m, const char *key, int dir, char *out, size_t outsz)
{
	const char *raw;
	size_t len;
	long n;

	/* Typed and bounded by the row's shape (read_shape, list_shape). */
	raw = json_shape_str(m->m_obj, key, &len);
	if ((n = vaultpath_decode(raw, len, out, outsz)) == -1 ||
	    !utf8_valid(out, (size_t)n) ||
	    !(dir ? vaultpath_dir_ok(out, (size_t)n)
		  : vaultpath_read_ok(out, (size_t)n)))
		return VE_INVALID_PATH;
	return VE_OK;
}

/* MSG_VAULT_READ {path} (API-6). */
static void
vault_read_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	char path[VAULT_PATH_MAX + 1];
	struct json_object *o;
	enum vault_err e;
	char *buf;
	size_t len;

	if ((e = vault_path_arg(m, "path", 0, path, sizeof(path))) != VE_OK ||
	    (e = vault_read(&vault, path, &buf, &len)) != VE_OK) {
		ipc_reply_error(c, m, vault_err_code(e));
		return;
	}
	/* JSON carries text: a note that is not UTF-8 is not served. */
	if (!utf8_valid(buf, len)) {
		free(buf);
		ipc_reply_error(c, m, "invalid-note");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(
	    o, "content", json_object_new_string_len(buf, (int)len));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)len));
	free(buf);
	if (ipc_reply(c, m, MSG_VAULT_READ_OK, o, -1) == -1)
		ipc_reply_error(c, m, vault_err_code(VE_TOO_LARGE));
	json_object_put(o);
}

/* MSG_VAULT_LIST {dir} (API-6). */
static void
vault_list_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	char dir[VAULT_PATH_MAX + 1];
	struct json_object *o;
	enum vault_err e;

	if ((e = vault_path_arg(m, "dir", 1, dir, sizeof(dir))) != VE_OK ||
	    (e = vault_list(&vault, dir, &o)) != VE_OK) {
		ipc_reply_error(c, m, vault_err_code(e));
		return;
	}
	json_object_object_add(o, "dir", json_object_new_string(dir));
	if (ipc_reply(c, m, MSG_VAULT_LIST_OK, o, -1) == -1)
		ipc_reply_error(c, m, vault_err_code(VE_TOO_LARGE));
	json_object_put(o);
}

/* Status: how paths are resolved (VA-1). */
static void
vault_status_extra(struct daemon *d, struct json_object *st)
{
	json_object_object_add(st, "vaultResolve",
	    json_object_new_string(
		vault.v_openat2 ? "openat2" : "nofollow-walk"));
}

/*
 * Create 00_Inbox/cordon through held fds, never following a symlink.
 * Started as root for an operator, the directories are the operator's.
 */
static int
vault_make_inbox(int rootfd, uid_t uid, gid_t gid)
{
	int fd, next;
	const char *parts[] = {"00_Inbox", "cordon"};
	size_t i;

	if ((fd = dup(rootfd)) == -1)
		return -1;
	for (i = 0; i < 2; i++) {
		if (mkdirat(fd, parts[i], 0700) == -1 && errno != EEXIST) {
			close(fd);
			return -1;
		}
		next = openat(fd, parts[i],
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next == -1)
			return -1;
		fd = next;
		if (uid != (uid_t)-1 && fchown(fd, uid, gid) == -1) {
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}

int
main(int argc, char **argv)
{
	struct daemon_args a;
	struct confine_path paths[2];
	struct confine_spec spec;
	char inbox[VAULT_ROOT_PATH];
	struct passwd *pw;
	struct stat st;
	int fd;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;

	log_init("vaultd", 0);
	daemon_parse_args(argc, argv, "vault", NULL, NULL, 0, &a);
	log_init("vaultd", a.da_debug);
	daemon_prepare(&vault.v_d, PROC_VAULTD, peer_table, &a);
	vault.v_d.d_status_extra = vault_status_extra;
	vault.v_d.d_peer_up = vault_peer_up;

	/* VA-1: the root is resolved once; cordond passed a realpath. */
	vault.v_root = open(a.da_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (vault.v_root == -1)
		fatal("vault root");
	if (getuid() == 0 && a.da_user != NULL) {
		if ((pw = getpwnam(a.da_user)) == NULL)
			fatalx("no such user");
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}
	if (vault_make_inbox(vault.v_root, uid, gid) == -1)
		fatal("vault inbox");
	vault_probe_openat2(&vault);
	if ((fd = vault_open_dir(&vault, VAULT_INBOX, 0)) == -1 ||
	    fstat(fd, &st) == -1)
		fatal("vault inbox");
	vault.v_inbox_dev = st.st_dev;
	vault.v_inbox_ino = st.st_ino;
	close(fd);
	if (snprintf(inbox, sizeof(inbox), "%s/%s", a.da_path, VAULT_INBOX) >=
	    (int)sizeof(inbox))
		fatalx("vault path too long");

	memset(&spec, 0, sizeof(spec));
	paths[0].cp_path = a.da_path;
	paths[0].cp_access = CONFINE_LL_READ;
	paths[1].cp_path = inbox;
	paths[1].cp_access = CONFINE_LL_WRITE;
	spec.cs_name = "vaultd";
	spec.cs_user = a.da_user;
	spec.cs_paths = paths;
	spec.cs_npaths = 2;
	spec.cs_seccomp = CONFINE_SECCOMP_ALLOW;
	spec.cs_syscalls =
	    SC_BASE | SC_FS_READ | SC_FS_WRITE | daemon_syscalls(&vault.v_d);
	spec.cs_no_net = 1;
	spec.cs_nofile = 128;
	confine_self(&spec);

	/* VA-4: temps a crash left behind never become notes. */
	vault_sweep(&vault);
	daemon_start(&vault.v_d, parent_table);
	log_debug("ready");
	daemon_loop(&vault.v_d);
	return vault_restart ? 1 : 0;
}
