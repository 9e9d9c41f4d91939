/*
 * Worktree runs (MC-2).  The spawner, which already spawns and owns the
 * state dir, makes each checkout: a shared clone beneath
 * --state-dir/worktrees/ID/tree on the fresh branch cordon/ID, git run
 * argv-only through the one spawn helper with a built environment, hooks
 * and fsmonitor off, no system or global config.  The agent gets tree/
 * as its only write root; the repository stays read-only (its objects
 * are read through the clone's alternates).  After the run the summary
 * is read through inspect.git, a bare repo of cordon's beside tree/, so
 * no config the agent could write is ever read by a git cordon runs.
 * Writes only beneath --state-dir/worktrees.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cordon_limits.h"
#include "json.h"
#include "log.h"
#include "msg.h"
#include "schema.h"
#include "spawn_helper.h"
#include "spawner.h"
#include "util.h"
#include "worktree.h"

#define WT_GIT_MS  60000 /* one git call at most */
#define WT_OUT_MAX 4096	 /* what a git call may print that we keep */
#define WT_META	   "meta.json"

/* Every git cordon runs gets this environment and nothing else. */
#define WT_PATH "PATH=/usr/local/bin:/usr/bin:/bin"
static const char *const wt_env_base[] = {
    WT_PATH,
    "HOME=/nonexistent",
    "LC_ALL=C",
    "GIT_CONFIG_NOSYSTEM=1",
    "GIT_CONFIG_GLOBAL=/dev/null",
    "GIT_TERMINAL_PROMPT=0",
    "GIT_OPTIONAL_LOCKS=0",
};

static struct wt *wt_live[64]; /* worktrees whose run is on */

/* out = a b c: 0, or -1 when it does not fit (out is "" then). */
static int
wt_join(char *out, size_t outsz, const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);

	out[0] = '\0';
	if (la + lb + lc >= outsz)
		return -1;
	memcpy(out, a, la);
	memcpy(out + la, b, lb);
	memcpy(out + la + lb, c, lc + 1);
	return 0;
}

/*
 * One git call: argv-only, stdin and stderr on /dev/null, stdout kept
 * (at most outsz - 1 bytes), killed after WT_GIT_MS.  alt: the
 * alternates of inspect.git, or NULL.  0 when it exited 0.
 */
static int
wt_git(const char *safe, const char *alt, const char *const *args, char *out,
    size_t outsz)
{
	static const char *const fixed[] = {"-c", "core.hooksPath=/dev/null",
	    "-c", "core.fsmonitor=false", "-c", "protocol.allow=never", "-c",
	    "protocol.file.allow=always", "-c", "credential.helper=", "-c",
	    "core.sshCommand=false"};
	char git[PATH_MAX], safe1[PATH_MAX + 32], safe2[PATH_MAX + 40];
	char altenv[2 * PATH_MAX + 64];
	const char *argv[48], *envp[nitems(wt_env_base) + 2];
	struct spawn_fd fds[3];
	struct spawn_req sr;
	struct pollfd pfd;
	size_t n = 0, i, got = 0;
	uint64_t deadline;
	int p[2], nul, st, rc = -1;
	pid_t pid;
	ssize_t k;

	for (i = 0; i < nitems(wt_env_base); i++)
		envp[i] = wt_env_base[i];
	if (alt != NULL) {
		snprintf(altenv, sizeof(altenv),
		    "GIT_ALTERNATE_OBJECT_DIRECTORIES=%s", alt);
		envp[i++] = altenv;
	}
	envp[i] = NULL;
	if (agent_resolve_bin("git", (char *const *)envp, git, sizeof(git)) ==
	    -1)
		return -1;
	argv[n++] = git;
	for (i = 0; i < nitems(fixed); i++)
		argv[n++] = fixed[i];
	if (safe != NULL) { /* the repository named, not any directory */
		snprintf(safe1, sizeof(safe1), "safe.directory=%s", safe);
		snprintf(safe2, sizeof(safe2), "safe.directory=%s/.git", safe);
		argv[n++] = "-c";
		argv[n++] = safe1;
		argv[n++] = "-c";
		argv[n++] = safe2;
	}
	for (i = 0; args[i] != NULL && n < nitems(argv) - 1; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if ((nul = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		return -1;
	if (pipe2(p, O_CLOEXEC) == -1) {
		close(nul);
		return -1;
	}
	fds[0] = (struct spawn_fd){nul, 0};
	fds[1] = (struct spawn_fd){p[1], 1};
	fds[2] = (struct spawn_fd){nul, 2};
	memset(&sr, 0, sizeof(sr));
	sr.sr_path = git;
	sr.sr_argv = (char *const *)argv;
	sr.sr_envp = (char *const *)envp;
	sr.sr_fds = fds;
	sr.sr_nfds = nitems(fds);
	sr.sr_setsid = 1;
	sr.sr_pdeathsig = SIGKILL;
	sr.sr_cwd = "/";
	sr.sr_set_umask = 1;
	sr.sr_umask = 077;
	pid = spawn_exec(&sr);
	close(nul);
	close(p[1]);
	if (pid == -1) {
		close(p[0]);
		return -1;
	}
	deadline = now_ms_mono() + WT_GIT_MS;
	pfd.fd = p[0];
	pfd.events = POLLIN;
	for (;;) {
		uint64_t now = now_ms_mono();

		if (now >= deadline ||
		    (poll(&pfd, 1, (int)(deadline - now)) == -1 &&
			errno != EINTR)) {
			kill(-pid, SIGKILL);
			break;
		}
		if (pfd.revents == 0)
			continue;
		if (out != NULL && got + 1 < outsz)
			k = read(p[0], out + got, outsz - 1 - got);
		else {
			char sink[512];

			k = read(p[0], sink, sizeof(sink));
		}
		if (k == 0)
			break;
		if (k < 0 && errno != EINTR)
			break;
		if (k > 0 && out != NULL && got + 1 < outsz)
			got += (size_t)k;
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return -1;
	if (out != NULL)
		out[got] = '\0';
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		rc = 0;
	return rc;
}

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

/* A commit id as git prints it: hex, 40 (sha1) or 64 (sha256) digits. */
static int
wt_oid(const char *s, char *out)
{
	size_t n = strspn(s, "0123456789abcdef");

	if ((n != 40 && n != 64) || (s[n] != '\0' && s[n] != '\n'))
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

/*
 * MC-2: repo is absolute, resolved as written (no link anywhere in it),
 * a directory whose .git is a directory (not a link, not a gitfile that
 * points elsewhere), inside a declared root and not protected (SBX-2).
 */
static int
wt_repo_ok(const struct agent *ag, const char *repo)
{
	const struct roots *rt = &ag->ag_sb.pl_roots;
	char rp[PATH_MAX];
	struct stat st;
	size_t i;
	int in = 0, fd;

	if (repo[0] != '/' || realpath(repo, rp) == NULL ||
	    strcmp(rp, repo) != 0 || protect_path_hit(&sp.sp_protect, repo))
		return -1;
	for (i = 0; i < rt->r_nread; i++)
		in |= protect_is_under(repo, rt->r_read[i]);
	for (i = 0; i < rt->r_nscan; i++) /* the write roots but the home */
		in |= protect_is_under(repo, rt->r_write[i]);
	if (!in || (fd = open(repo,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	i = fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode);
	close(fd);
	return i ? 0 : -1;
}

/* The read root that holds repo (the agent's may be a write root). */
static const char *
wt_root_of(const struct roots *rt, const char *repo)
{
	size_t i;

	for (i = 0; i < rt->r_nread; i++)
		if (protect_is_under(repo, rt->r_read[i]))
			return NULL; /* already readable */
	for (i = 0; i < rt->r_nscan; i++)
		if (protect_is_under(repo, rt->r_write[i]))
			return rt->r_write[i];
	return NULL;
}

/* The run's plan: the agent's, with tree/ (and the home) writable only. */
static int
wt_plan(const struct agent *ag, struct wt *w)
{
	const struct roots *rt = &ag->ag_sb.pl_roots;
	struct roots *nr = &w->w_plan.pl_roots;
	const char *extra = wt_root_of(rt, w->w_repo);
	size_t i;

	w->w_plan = ag->ag_sb;
	memset(nr, 0, sizeof(*nr));
	if ((nr->r_read = calloc(rt->r_nread + 2, sizeof(char *))) == NULL ||
	    (nr->r_write = calloc(3, sizeof(char *))) == NULL)
		goto fail;
	for (i = 0; i < rt->r_nread; i++)
		if ((nr->r_read[nr->r_nread++] = strdup(rt->r_read[i])) == NULL)
			goto fail;
	if (extra != NULL &&
	    (nr->r_read[nr->r_nread++] = strdup(extra)) == NULL)
		goto fail;
	if ((nr->r_write[nr->r_nwrite++] = strdup(w->w_tree)) == NULL)
		goto fail;
	nr->r_nscan = 1;
	if (rt->r_home != NULL && roots_add_home(nr, rt->r_home) == -1)
		goto fail;
	nr->r_nscan = 1;
	return 0;
fail:
	roots_free(nr);
	return -1;
}

static int
wt_dir_fd(const struct wt *w)
{
	return open(w->w_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* meta.json of the worktree, cordon's own (the agent cannot write it). */
static void
wt_meta(const struct wt *w, const char *agent, struct json_object *sum)
{
	struct json_object *o = json_object_new_object();
	const char *s;
	int dfd;

	json_object_object_add(o, "id", json_object_new_string(w->w_id));
	json_object_object_add(o, "agent", json_object_new_string(agent));
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

static void
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

void
wt_free(struct wt *w)
{
	size_t i;

	if (w == NULL)
		return;
	for (i = 0; i < nitems(wt_live); i++)
		if (wt_live[i] == w)
			wt_live[i] = NULL;
	roots_free(&w->w_plan.pl_roots);
	free(w);
}

void
wt_discard(struct wt *w)
{
	if (w == NULL)
		return;
	if (w->w_dir[0] != '\0' && sandbox_rmtree(w->w_dir) == -1 &&
	    errno != ENOENT)
		log_warn("worktree %s: removing", w->w_id);
	wt_free(w);
}

struct wt *
wt_create(const struct agent *ag, const char *run_id, const char *repo,
    const char **code)
{
	char out[WT_OUT_MAX], inspect[PATH_MAX];
	struct wt *w;
	int sfd, wfd, dfd;
	size_t i;

	*code = "worktree-refused";
	if (!ag->ag_mf.m_sandbox.sb_worktrees || wt_repo_ok(ag, repo) == -1)
		return NULL;
	*code = "worktree-failed";
	if (sp.sp_state[0] == '\0' || (w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	snprintf(w->w_id, sizeof(w->w_id), "%s", run_id);
	snprintf(w->w_repo, sizeof(w->w_repo), "%s", repo);
	snprintf(w->w_branch, sizeof(w->w_branch), WT_BRANCH_PFX "%s", run_id);
	/* Fixed-name components only, each made and held, never a link. */
	if ((sfd = open(sp.sp_state, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
		-1 ||
	    (wfd = roots_dir_make(sfd, WT_DIR)) == -1) {
		log_warn("worktree: %s/%s", sp.sp_state, WT_DIR);
		free(w);
		return NULL;
	}
	if (mkdirat(wfd, run_id, 0700) == -1) { /* fresh, or refused */
		close(wfd);
		free(w);
		return NULL;
	}
	dfd = roots_dir_make(wfd, run_id);
	if (dfd == -1) {
		free(w);
		return NULL;
	}
	close(dfd);
	if (wt_join(w->w_dir, sizeof(w->w_dir), sp.sp_state, "/" WT_DIR "/",
		run_id) == -1 ||
	    wt_join(w->w_tree, sizeof(w->w_tree), w->w_dir, "/tree", "") ==
		-1 ||
	    wt_join(inspect, sizeof(inspect), w->w_dir, "/inspect.git", "") ==
		-1) {
		wt_discard(w);
		return NULL;
	}
	{
		const char *clone[] = {"clone", "--quiet", "--shared",
		    "--no-checkout", "--no-tags", "--template=", "--", repo,
		    w->w_tree, NULL};
		const char *co[] = {"-C", w->w_tree, "checkout", "--quiet",
		    "-b", w->w_branch, NULL};
		const char *head[] = {"-C", w->w_tree, "rev-parse", "--verify",
		    "--quiet", "HEAD^{commit}", NULL};
		const char *init[] = {
		    "init", "--quiet", "--bare", "--template=", inspect, NULL};

		if (wt_git(repo, NULL, clone, NULL, 0) == -1 ||
		    wt_git(NULL, NULL, co, NULL, 0) == -1 ||
		    wt_git(NULL, NULL, head, out, sizeof(out)) == -1 ||
		    wt_oid(out, w->w_base) == -1 ||
		    wt_git(NULL, NULL, init, NULL, 0) == -1) {
			log_warnx("worktree %s: git could not make it", run_id);
			wt_discard(w);
			return NULL;
		}
	}
	if (wt_plan(ag, w) == -1) {
		wt_discard(w);
		return NULL;
	}
	for (i = 0; i < nitems(wt_live) && wt_live[i] != NULL; i++)
		;
	if (i < nitems(wt_live))
		wt_live[i] = w;
	w->w_running = 1;
	wt_meta(w, ag->ag_mf.m_name, NULL);
	wt_audit("worktree.create", w->w_id, ag->ag_mf.m_name);
	return w;
}

/*
 * The branch's tip, read as a file beneath the worktree's dir (no link
 * followed: the agent owned tree/ until now); the base when it made no
 * commit on it.
 */
static void
wt_tip(const struct wt *w, char *tip)
{
	struct open_how how;
	char path[128], buf[WT_OID_MAX + 2];
	int dfd, fd;
	ssize_t n;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		      RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	snprintf(tip, WT_OID_MAX + 1, "%s", w->w_base);
	snprintf(path, sizeof(path), "tree/.git/refs/heads/%s", w->w_branch);
	if ((dfd = wt_dir_fd(w)) == -1)
		return;
	fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	close(dfd);
	if (fd == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	(void)wt_oid(buf, tip);
}

/* " 2 files changed, 3 insertions(+), 1 deletion(-)" */
static void
wt_shortstat(const char *s, long long v[3])
{
	static const char *const words[] = {"file", "insertion", "deletion"};
	const char *p = s;
	long long n;
	size_t i;
	char *end;

	v[0] = v[1] = v[2] = 0;
	while (*p != '\0') {
		while (*p == ' ' || *p == ',')
			p++;
		n = strtoll(p, &end, 10);
		if (end == p)
			break;
		p = end + (*end == ' ');
		for (i = 0; i < nitems(words); i++)
			if (strncmp(p, words[i], strlen(words[i])) == 0)
				v[i] = n;
		while (*p != '\0' && *p != ',')
			p++;
	}
}

struct json_object *
wt_finish(struct wt *w)
{
	char tip[WT_OID_MAX + 1], out[WT_OUT_MAX], inspect[PATH_MAX];
	char alt[2 * PATH_MAX + 32];
	struct json_object *o = json_object_new_object();
	long long v[3] = {0, 0, 0};
	int ok = 1;

	w->w_running = 0;
	wt_tip(w, tip);
	(void)wt_join(
	    inspect, sizeof(inspect), "--git-dir=", w->w_dir, "/inspect.git");
	(void)wt_join(alt, sizeof(alt), w->w_tree, "/.git/objects:", w->w_repo);
	if (strlen(alt) + sizeof("/.git/objects") < sizeof(alt))
		strcat(alt, "/.git/objects");
	if (strcmp(tip, w->w_base) != 0) {
		const char *diff[] = {inspect, "diff", "--shortstat",
		    "--no-ext-diff", "--no-textconv", "--no-renames", w->w_base,
		    tip, NULL};

		ok = wt_git(NULL, alt, diff, out, sizeof(out)) == 0;
		if (ok)
			wt_shortstat(out, v);
	}
	json_object_object_add(o, "id", json_object_new_string(w->w_id));
	json_object_object_add(
	    o, "branch", json_object_new_string(w->w_branch));
	json_object_object_add(o, "path", json_object_new_string(w->w_tree));
	json_object_object_add(o, "base", json_object_new_string(w->w_base));
	json_object_object_add(o, "head", json_object_new_string(tip));
	json_object_object_add(o, "filesChanged", json_object_new_int64(v[0]));
	json_object_object_add(o, "insertions", json_object_new_int64(v[1]));
	json_object_object_add(o, "deletions", json_object_new_int64(v[2]));
	if (!ok)
		json_object_object_add(
		    o, "summaryError", json_object_new_boolean(1));
	{
		int dfd = wt_dir_fd(w);
		struct json_object *m = NULL, *a;
		const char *agent = "";

		/* the agent's name as created: kept in meta.json */
		if (dfd != -1) {
			m = wt_meta_read(dfd);
			close(dfd);
		}
		if (m != NULL && json_object_object_get_ex(m, "agent", &a))
			agent = json_object_get_string(a);
		wt_meta(w, agent, o);
		json_object_put(m);
	}
	return o;
}

/* ---- cordon worktree list | remove (through the API) ---- */

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

void
worktree_list_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *o, *a, *e;
	char path[PATH_MAX];
	char **names;
	size_t n = 0, i;
	int bfd = -1, dfd;

	if (m->m_obj != NULL && json_object_object_length(m->m_obj) != 0) {
		ipc_reply_error(c, m, "bad-message");
		return;
	}
	a = json_object_new_array();
	if (wt_join(path, sizeof(path), sp.sp_state, "/" WT_DIR, "") == 0 &&
	    (bfd = wt_base_fd()) != -1 &&
	    (names = dir_names(path, wt_name_ok, &n)) != NULL) {
		for (i = 0; i < n; i++) {
			dfd = openat(bfd, names[i],
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (dfd == -1)
				continue;
			e = wt_meta_read(dfd);
			close(dfd);
			if (e != NULL)
				json_object_array_add(a, e);
		}
		dir_names_free(names, n);
	}
	if (bfd != -1)
		close(bfd);
	o = json_object_new_object();
	json_object_object_add(o, "worktrees", a);
	ipc_reply(c, m, MSG_WORKTREE_LIST_OK, o, -1);
	json_object_put(o);
}

void
worktree_remove_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	char path[PATH_MAX];
	const char *id;
	struct stat st;
	size_t i;
	int bfd;

	if ((id = json_get_str(m->m_obj, "id", 80)) == NULL ||
	    json_object_object_length(m->m_obj) != 1 || !wt_name_ok(id)) {
		ipc_reply_error(c, m, "bad-message");
		return;
	}
	for (i = 0; i < nitems(wt_live); i++)
		if (wt_live[i] != NULL && wt_live[i]->w_running &&
		    strcmp(wt_live[i]->w_id, id) == 0) {
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
