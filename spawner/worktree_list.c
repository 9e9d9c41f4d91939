/*
 * Worktree runs (MC-2): their records.  meta.json beside each checkout
 * (cordon's own: the agent cannot write it), the audit records of a
 * checkout made or removed, and `cordon worktree list | remove` through
 * the API: the checkouts kept beneath --state-dir/worktrees, and one
 * removed once its run is over.  Writes and removes only beneath
 * --state-dir/worktrees.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "json.h"
#include "log.h"
#include "msg.h"
#include "schema.h"
#include "spawner.h"
#include "util.h"
#include "worktree.h"
#include "worktree_int.h"

/* A meta.json of ours, at most WT_META_MAX bytes; NULL if not one. */
#define WT_META_MAX (64 * 1024)
static struct json_object *
wt_meta_read(int dfd)
{
	struct json_object *o = NULL;
	char *buf;
	ssize_t n;
	int fd;

	if ((fd = openat(dfd, WT_META, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1)
		return NULL;
	if ((buf = malloc(WT_META_MAX)) != NULL &&
	    (n = read(fd, buf, WT_META_MAX)) > 0 && n < WT_META_MAX)
		o = json_parse_object(buf, (size_t)n, 8);
	free(buf);
	close(fd);
	return o;
}

int
wt_dir_fd(const struct wt *w)
{
	return open(w->w_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* meta.json of the worktree, cordon's own (the agent cannot write it). */
void
wt_meta(const struct wt *w, struct json_object *sum)
{
	struct json_object *o = json_object_new_object();
	const char *s;
	int dfd;

	json_object_object_add(o, "id", json_object_new_string(w->w_id));
	json_object_object_add(o, "agent", json_object_new_string(w->w_agent));
	json_object_object_add(o, "repo", json_object_new_string(w->w_repo));
	json_object_object_add(o, "path", json_object_new_string(w->w_tree));
	json_object_object_add(
	    o, "branch", json_object_new_string(w->w_branch));
	json_object_object_add(o, "base", json_object_new_string(w->w_base));
	json_object_object_add(
	    o, "createdMs", json_object_new_int64(now_ms_real()));
	if (sum != NULL)
		json_object_object_add(o, "result", json_object_get(sum));
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if ((dfd = wt_dir_fd(w)) == -1 ||
	    atomic_write_at(
		dfd, WT_META, s, strlen(s), 0600, (uid_t)-1, (gid_t)-1) == -1)
		log_warn("worktree %s: meta", w->w_id);
	if (dfd != -1)
		close(dfd);
	json_object_put(o);
}

void
wt_audit(const char *kind, const char *id, const char *agent)
{
	struct json_object *rec = json_object_new_object();

	json_object_object_add(rec, "kind", json_object_new_string(kind));
	json_object_object_add(rec, "worktreeId", json_object_new_string(id));
	if (agent != NULL)
		json_object_object_add(
		    rec, "agent", json_object_new_string(agent));
	if (spawner_audit(rec, NULL, NULL) == -1)
		log_warnx("worktree %s: %s not recorded", id, kind);
	json_object_put(rec);
}

static int
wt_name_ok(const char *s)
{
	return schema_job_id_ok(s) && s[0] != '.';
}

static int
wt_base_fd(void)
{
	int sfd;

	if (sp.sp_state[0] == '\0' ||
	    (sfd = open(sp.sp_state, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	return roots_dir_make(sfd, WT_DIR);
}

/* fn on each checkout's dir beneath --state-dir/worktrees (its fd,
 * closed after), by name. */
static void
wt_each(void (*fn)(int, const char *, void *), void *arg)
{
	char path[PATH_MAX];
	char **names;
	size_t n = 0, i;
	int bfd = -1, dfd;

	if (wt_join(path, sizeof(path), sp.sp_state, "/" WT_DIR, "") == 0 &&
	    (bfd = wt_base_fd()) != -1 &&
	    (names = dir_names(path, wt_name_ok, &n)) != NULL) {
		for (i = 0; i < n; i++) {
			dfd = openat(bfd, names[i],
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (dfd == -1)
				continue;
			fn(dfd, names[i], arg);
			close(dfd);
		}
		dir_names_free(names, n);
	}
	if (bfd != -1)
		close(bfd);
}

static void
wt_list_one(int dfd, const char *name, void *arg)
{
	struct json_object *e;

	if ((e = wt_meta_read(dfd)) != NULL)
		json_object_array_add(arg, e);
}

void
worktree_list_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o, *a;

	a = json_object_new_array(); /* its payload: {} (IPC_EMPTY) */
	wt_each(wt_list_one, a);
	o = json_object_new_object();
	json_object_object_add(o, "worktrees", a);
	ipc_reply(c, m, MSG_WORKTREE_LIST_OK, o, -1);
	json_object_put(o);
}

/*
 * A checkout with no meta.json was cut short (a spawner killed while
 * making it, or while removing one): never listed, so never removable
 * through the API.  Nothing of it was recorded (worktree.create follows
 * the meta); the next spawner removes it at start.
 */
static void
wt_sweep_one(int dfd, const char *name, void *arg)
{
	char path[PATH_MAX];
	struct stat st;

	if (fstatat(dfd, WT_META, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	    errno != ENOENT)
		return;
	if (wt_join(path, sizeof(path), sp.sp_state, "/" WT_DIR "/", name) ==
		-1 ||
	    sandbox_rmtree(path) == -1)
		log_warn("worktree %s: removing a checkout cut short", name);
	else
		log_info("worktree %s: a checkout cut short removed", name);
}

void
worktrees_sweep(void)
{
	wt_each(wt_sweep_one, NULL);
}

void
worktree_remove_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	char path[PATH_MAX];
	const char *id;
	struct stat st;
	int bfd;

	/* Typed and bounded by the row's shape; its pattern checked here. */
	if (!wt_name_ok((id = json_shape_str(m->m_obj, "id", NULL)))) {
		ipc_reply_error(c, m, "bad-message");
		return;
	}
	if (wt_busy(id)) {
		ipc_reply_error(c, m, "busy");
		return;
	}
	if ((bfd = wt_base_fd()) == -1 ||
	    fstatat(bfd, id, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !S_ISDIR(st.st_mode)) {
		if (bfd != -1)
			close(bfd);
		ipc_reply_error(c, m, "unknown-worktree");
		return;
	}
	close(bfd);
	if (wt_join(path, sizeof(path), sp.sp_state, "/" WT_DIR "/", id) ==
		-1 ||
	    sandbox_rmtree(path) == -1) {
		log_warn("worktree %s: removing", id);
		ipc_reply_error(c, m, "internal");
		return;
	}
	wt_audit("worktree.remove", id, NULL);
	ipc_reply(c, m, MSG_WORKTREE_REMOVE_OK, NULL, -1);
}
