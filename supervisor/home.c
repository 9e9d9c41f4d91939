/*
 * cordon's home: where config, manifests, audit, runtime files and the
 * vault live (--home DIR, or the XDG paths), and the embedded demo home
 * (the cordon.yaml loader is config_yaml.c).  Runs in cordond before any
 * daemon.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "cordon_limits.h"
#include "cordond.h"
#include "lockfile.h"
#include "log.h"
#include "util.h"

static int
join(char *out, size_t sz, const char *a, const char *b)
{
	if (snprintf(out, sz, "%s/%s", a, b) >= (int)sz) {
		log_warnx("path too long");
		return -1;
	}
	return 0;
}

static const char *
xdg_dir(const char *var, const char *fallback, char *buf, size_t sz)
{
	const char *v = getenv(var), *home;

	if (v != NULL && v[0] == '/')
		return v;
	if ((home = getenv("HOME")) == NULL || home[0] != '/')
		return NULL;
	if (snprintf(buf, sz, "%s/%s", home, fallback) >= (int)sz)
		return NULL;
	return buf;
}

/* Paths for --home DIR, or the XDG layout of DESIGN.md when home is NULL. */
int
home_resolve(struct cordon_config *cf, const char *home)
{
	char buf[PATH_MAX];
	const char *cfg, *state, *run;

	snprintf(cf->cf_listen, sizeof(cf->cf_listen), "127.0.0.1");
	snprintf(cf->cf_broker_user, sizeof(cf->cf_broker_user), "nobody");
	cf->cf_retention_days = 30;	  /* AU-8 default */
	cf->cf_max_runs = LIM_RUNS_TOTAL; /* SP-14 defaults */
	cf->cf_max_runs_agent = LIM_RUNS_PER_AGENT;
	cf->cf_jobs_keep = LIM_JOBS_KEEP; /* MC-3 retention */
	cf->cf_jobs_keep_mib = LIM_JOBS_KEEP_MIB;
	if (home != NULL) {
		if (realpath(home, cf->cf_home) == NULL) {
			log_warn("home directory");
			return -1;
		}
		if (join(cf->cf_config, sizeof(cf->cf_config), cf->cf_home,
			"cordon.yaml") ||
		    join(cf->cf_agents, sizeof(cf->cf_agents), cf->cf_home,
			"agents") ||
		    join(cf->cf_audit, sizeof(cf->cf_audit), cf->cf_home,
			"audit") ||
		    join(cf->cf_rundir, sizeof(cf->cf_rundir), cf->cf_home,
			"run") ||
		    join(cf->cf_state, sizeof(cf->cf_state), cf->cf_home,
			"state") ||
		    join(cf->cf_vault, sizeof(cf->cf_vault), cf->cf_home,
			"vault"))
			return -1;
		return 0;
	}
	cf->cf_home[0] = '\0';
	if ((cfg = xdg_dir("XDG_CONFIG_HOME", ".config", buf, sizeof(buf))) ==
		NULL ||
	    join(cf->cf_config, sizeof(cf->cf_config), cfg,
		"cordon/cordon.yaml") ||
	    join(cf->cf_agents, sizeof(cf->cf_agents), cfg, "cordon/agents"))
		return -1;
	if ((state = xdg_dir(
		 "XDG_STATE_HOME", ".local/state", buf, sizeof(buf))) == NULL ||
	    join(cf->cf_audit, sizeof(cf->cf_audit), state, "cordon/audit") ||
	    join(cf->cf_state, sizeof(cf->cf_state), state, "cordon/state"))
		return -1;
	/* Only `cordon run` needs the runtime dir; it checks cf_rundir. */
	cf->cf_rundir[0] = '\0';
	if ((run = getenv("XDG_RUNTIME_DIR")) != NULL && run[0] == '/' &&
	    join(cf->cf_rundir, sizeof(cf->cf_rundir), run, "cordon"))
		return -1;
	cf->cf_vault[0] = '\0'; /* must come from cordon.yaml */
	return 0;
}

/*
 * mkdir, then own and chmod what was opened, never a path again: run as
 * root for `--user NAME`, a chown by path would follow a symlink that a
 * process of NAME's swapped in after the check.
 */
static int
make_dir(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	struct stat st;
	int fd, r = -1;

	if (mkdir(path, mode) == -1 && errno != EEXIST) {
		log_warn("mkdir %s", path);
		return -1;
	}
	if ((fd = open(path,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1 || !S_ISDIR(st.st_mode))
		log_warnx("%s is not a directory", path);
	else if (st.st_uid != geteuid() && st.st_uid != uid) /* SU-5 */
		log_warnx("%s belongs to another user", path);
	else if (uid != (uid_t)-1 && fchown(fd, uid, gid) == -1)
		log_warn("chown %s", path);
	else if (fchmod(fd, mode) == -1)
		log_warn("chmod %s", path);
	else
		r = 0;
	if (fd != -1)
		close(fd);
	return r;
}

/* sched's state dir (MI-1): STATE/sched.  0, or -1 if too long. */
int
home_sched_dir(const struct cordon_config *cf, char *out, size_t outsz)
{
	return join(out, outsz, cf->cf_state, "sched");
}

/* The spawner's state dir (0700), and its parent in XDG mode. */
int
home_prepare_state(const struct cordon_config *cf, uid_t uid, gid_t gid)
{
	char parent[PATH_MAX], *slash;

	if (cf->cf_home[0] == '\0') {
		/* XDG: the parent of the audit and state dirs may be missing */
		snprintf(parent, sizeof(parent), "%s", cf->cf_state);
		if ((slash = strrchr(parent, '/')) != NULL) {
			*slash = '\0';
			if (make_dir(parent, 0700, uid, gid) == -1)
				return -1;
		}
	}
	return make_dir(cf->cf_state, 0700, uid, gid);
}

/* Create the directories cordon owns (audit, scheduler state and
 * runtime, all 0700). */
int
home_prepare(const struct cordon_config *cf, uid_t uid, gid_t gid)
{
	char sched[PATH_MAX];

	if (home_prepare_state(cf, uid, gid) == -1 ||
	    home_sched_dir(cf, sched, sizeof(sched)) == -1 ||
	    make_dir(sched, 0700, uid, gid) == -1 ||
	    make_dir(cf->cf_audit, 0700, uid, gid) == -1 ||
	    make_dir(cf->cf_rundir, 0700, (uid_t)-1, (gid_t)-1) == -1)
		return -1;
	if (cf->cf_home[0] != '\0') {
		struct stat st;
		if (stat(cf->cf_vault, &st) == -1 && errno == ENOENT &&
		    make_dir(cf->cf_vault, 0700, uid, gid) == -1)
			return -1;
	}
	return 0;
}

/* Write DIR/NAME with mode 0600, atomically (atomic_write_at). */
int
home_write_private(
    const char *dir, const char *name, const char *data, uid_t uid, gid_t gid)
{
	int dfd, rc;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		log_warn("open %s", dir);
		return -1;
	}
	if ((rc = atomic_write_at(
		 dfd, name, data, strlen(data), 0600, uid, gid)) == -1)
		log_warn("write %s/%s", dir, name);
	close(dfd);
	return rc;
}

/*
 * SU-1, AU-6: one cordon per home, or two write its run files and audit
 * trail at once.  Lock the runtime dir (made if missing) before anything
 * of the home is written; the lock fd, close-on-exec, lives as long as
 * cordond.  Run files left by a cordon that died are then stale: removed.
 * 0; 1 when another cordon holds it, -1 on other errors (both said).
 */
int
home_lock(const struct cordon_config *cf)
{
	static int lock_fd = -1;
	pid_t pid;
	int dfd;

	if (mkdir(cf->cf_rundir, 0700) == -1 && errno != EEXIST) {
		log_warn("mkdir %s", cf->cf_rundir);
		return -1;
	}
	dfd = open(
	    cf->cf_rundir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd == -1) {
		log_warn("%s", cf->cf_rundir);
		return -1;
	}
	if (home_rundir_ours(dfd, cf->cf_rundir) == -1) {
		close(dfd);
		return -1;
	}
	lock_fd = lockfile_take(dfd, LOCKFILE_NAME, 0, &pid);
	if (lock_fd == -1 && errno == EWOULDBLOCK) {
		if (pid > 0)
			fprintf(stderr,
			    "cordon: %s is in use by another cordon (pid %d); "
			    "not starting\n",
			    cf->cf_home[0] ? cf->cf_home : cf->cf_rundir,
			    (int)pid);
		else
			fprintf(stderr,
			    "cordon: %s is in use by another cordon; not "
			    "starting\n",
			    cf->cf_home[0] ? cf->cf_home : cf->cf_rundir);
		close(dfd);
		return 1;
	}
	if (lock_fd == -1) {
		log_warn("lock %s/%s", cf->cf_rundir, LOCKFILE_NAME);
		close(dfd);
		return -1;
	}
	(void)unlinkat(dfd, "token", 0);
	(void)unlinkat(dfd, "port", 0);
	close(dfd);
	return 0;
}

/* 0 when no cordon holds RUNDIR's lock (none runs there), else 1. */
int
home_running(const char *rundir)
{
	pid_t pid;
	int dfd, r;

	dfd = open(rundir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd == -1)
		return errno == ENOENT ? 0 : 1;
	r = lockfile_held(dfd, LOCKFILE_NAME, &pid);
	close(dfd);
	return r != 0; /* -1: cannot tell; the run files decide */
}

/*
 * PER-5: the directory of private files, opened: the caller's or root's
 * and writable by no one else unless sticky.  The fd, or -1.
 */
static int
private_dir(const char *dir)
{
	struct stat st;
	int dfd;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(dfd, &st) == -1 ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    ((st.st_mode & 022) != 0 && !(st.st_mode & S_ISVTX))) {
		close(dfd);
		return -1;
	}
	return dfd;
}

/*
 * A small private file NAME in dfd, without its newline: 0, -1, or -2
 * if it is there but not private.  PER-5: a regular file without group
 * or other bits (no one else reads the token), of the caller's if ours
 * (so no other user chose what is read: a port file another user wrote
 * beside the token would get every CLI to send the token to that user's
 * listener), and never a FIFO that would block.
 */
static int
read_private_at(int dfd, const char *name, int ours, char *buf, size_t bufsz)
{
	struct stat st;
	ssize_t n;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (ours && st.st_uid != geteuid()) || (st.st_mode & 077) != 0) {
		close(fd);
		return -2;
	}
	n = read(fd, buf, bufsz - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return 0;
}

/* A small private file DIR/NAME (read_private_at): 0, or -1. */
int
home_read_private(const char *dir, const char *name, char *buf, size_t bufsz)
{
	int dfd, rc;

	if ((dfd = private_dir(dir)) == -1)
		return -1;
	rc = read_private_at(dfd, name, 0, buf, bufsz);
	close(dfd);
	return rc == 0 ? 0 : -1;
}

/*
 * The token and port of the cordon running with RUNDIR, read through one
 * opened directory (PER-5): cordon's own, 0700, and locked by a running
 * cordon (run files without the lock held are stale).  0; -1 when none
 * runs there; -2 when the dir or a file is not private to the caller.
 */
int
home_read_run(
    const char *rundir, char *tok, size_t toksz, char *port, size_t portsz)
{
	struct stat st;
	pid_t pid;
	int dfd, rc;

	if ((dfd = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? -1 : -2;
	if (fstat(dfd, &st) == -1 || st.st_uid != geteuid() ||
	    (st.st_mode & 077) != 0)
		rc = -2;
	else if (lockfile_held(dfd, LOCKFILE_NAME, &pid) == 0)
		rc = -1;
	else if ((rc = read_private_at(dfd, "token", 1, tok, toksz)) == 0)
		rc = read_private_at(dfd, "port", 1, port, portsz);
	close(dfd);
	return rc;
}

/* Remove DIR/NAME if it still holds what we wrote (data, first line). */
void
home_remove_private(const char *dir, const char *name, const char *data)
{
	char path[PATH_MAX], buf[128];
	size_t len = strcspn(data, "\r\n");

	if (home_read_private(dir, name, buf, sizeof(buf)) == 0 &&
	    strlen(buf) == len && timingsafe_eq(buf, data, len) &&
	    join(path, sizeof(path), dir, name) == 0 && unlink(path) == -1)
		log_warn("remove %s", path);
	explicit_bzero(buf, sizeof(buf));
}

/* ---- the embedded demo ---- */

/*
 * The path of a program installed with cordon (the daemons, the demo
 * agent, cordon-audit): beside this executable when it is there (a build
 * tree), else in libexecdir.  0, or -1 if the path does not fit.
 */
int
cordon_program(const char *name, char *out, size_t outsz)
{
	char self[PATH_MAX], *slash;
	ssize_t n;
	int len;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			len = snprintf(out, outsz, "%s/%s", self, name);
			if (len >= 0 && (size_t)len < outsz &&
			    access(out, X_OK) == 0)
				return 0;
		}
	}
	len = snprintf(out, outsz, "%s/%s", CORDON_LIBEXECDIR, name);
	return len >= 0 && (size_t)len < outsz ? 0 : -1;
}

static int
demo_file(const char *home, const char *rel, const char *text)
{
	char path[PATH_MAX];
	int fd;

	if (join(path, sizeof(path), home, rel))
		return -1;
	fd = open(
	    path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd == -1)
		return errno == EEXIST ? 0 : -1; /* keep the operator's edits */
	if (write_full(fd, text, strlen(text)) == -1) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/*
 * The demo agent's manifest names the demo agent's absolute path, which
 * changes when cordon is rebuilt or installed elsewhere: cordon rewrites
 * it at every start, as long as its first line is still this one.
 */
#define DEMO_MANAGED                                                           \
	"# Written by cordon at every start; delete this line to keep "        \
	"your edits.\n"

/* demo_file for a DEMO_MANAGED file: replaced unless the operator took
 * it over (removed the first line). */
static int
demo_file_managed(const char *home, const char *rel, const char *text)
{
	char path[PATH_MAX], head[sizeof(DEMO_MANAGED)], *base;
	ssize_t n;
	int fd, rc;

	if (join(path, sizeof(path), home, rel))
		return -1;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return errno == ENOENT ? demo_file(home, rel, text) : -1;
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n != (ssize_t)sizeof(head) - 1 ||
	    memcmp(head, DEMO_MANAGED, sizeof(head) - 1) != 0)
		return 0;	   /* the operator's now */
	base = strrchr(path, '/'); /* join() made one */
	*base++ = '\0';
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	rc = atomic_write_at(
	    fd, base, text, strlen(text), 0644, (uid_t)-1, (gid_t)-1);
	close(fd);
	return rc;
}

static int
demo_dir(const char *home, const char *rel)
{
	char path[PATH_MAX];

	if (join(path, sizeof(path), home, rel))
		return -1;
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/*
 * The demo's two missions (MI-1), both on the demo agent and both
 * writing a vault note: the daily summary and the weekly review.
 */
static const char demo_daily[] =
    "# A daily summary: every evening at 20:00 UTC the demo agent writes\n"
    "# a note beneath 00_Inbox/cordon/missions/daily-summary/.  It can\n"
    "# also be run by hand from the dashboard's Missions view.\n"
    "id: daily-summary\n"
    "label: Daily summary\n"
    "agent: demo\n"
    "prompt: \"Summarise today's notes in at most {words} words\"\n"
    "options:\n"
    "  words: {type: integer, min: 50, max: 1000, default: 200}\n"
    "outputs:\n"
    "  - {type: vault-note, folder: "
    "00_Inbox/cordon/missions/daily-summary, filenameHint: summary}\n"
    "permissions: [vault-write]\n"
    "trigger: {manual: true, cron: \"0 20 * * *\", timezone: UTC}\n"
    "timeoutMs: 60000\n";

static const char demo_weekly[] =
    "# A weekly review: Sundays at 18:00 in %s; by hand with\n"
    "# options from the dashboard.  The event output is counted only.\n"
    "id: weekly-review\n"
    "label: Weekly review\n"
    "agent: demo\n"
    "prompt: \"Review the week's notes about {project}; at most {words} "
    "words, {tone} tone, draft: {draft}\"\n"
    "options:\n"
    "  project: {type: string, maxLength: 60, pattern: "
    "\"^[A-Za-z0-9 _-]+$\", default: cordon}\n"
    "  words:   {type: integer, min: 50, max: 2000, default: 400}\n"
    "  draft:   {type: boolean, default: true}\n"
    "  tone:    {type: enum, values: [plain, formal], default: plain}\n"
    "outputs:\n"
    "  - {type: vault-note, folder: "
    "00_Inbox/cordon/missions/weekly-review, filenameHint: review}\n"
    "  - {type: event, event: review.ready}\n"
    "permissions: [vault-write, event-emit]\n"
    "trigger: {manual: true, cron: \"0 18 * * 0\", timezone: %s}\n"
    "timeoutMs: 300000\n"
    "catchUp: false\n";

/* A demo home: a small vault, the demo agent's manifest, two missions. */
int
home_make_demo(const char *home)
{
	char agent[PATH_MAX + 64], manifest[4 * PATH_MAX + 2048],
	    weekly[sizeof(demo_weekly) + 64];
	const char *tz = "Europe/Berlin";
	struct stat st;
	int n;

	if ((mkdir(home, 0700) == -1 && errno != EEXIST) ||
	    demo_dir(home, "agents") || demo_dir(home, "missions") ||
	    demo_dir(home, "vault") || demo_dir(home, "vault/00_Inbox") ||
	    demo_dir(home, "vault/10_Projects")) {
		log_warn("demo home");
		return -1;
	}
	if (cordon_program("cordon-demo-agent", agent, sizeof(agent)) == -1)
		return -1;
	n = snprintf(manifest, sizeof(manifest),
	    DEMO_MANAGED
	    "# The demo agent: a tiny program shipped with cordon.\n"
	    "name: demo\n"
	    "displayName: Demo agent\n"
	    "description: Streams a short coloured answer; shows cordon "
	    "at work.\n"
	    "transport: subprocess\n"
	    "transportConfig:\n"
	    "  bin: %s\n"
	    "  args: [\"{prompt}\"]\n"
	    "  timeoutMs: 30000\n"
	    "healthProbe:\n"
	    "  type: command\n"
	    "  command: [\"%s\", \"--version\"]\n"
	    "  timeoutMs: 2000\n"
	    "# Control Room actions: read-only, bounded, output shown once.\n"
	    "actions:\n"
	    "  - id: version\n"
	    "    label: Version\n"
	    "    command: [\"%s\", \"--version\"]\n"
	    "    hint: --version\n"
	    "  - id: environment\n"
	    "    label: Environment\n"
	    "    command: [\"%s\", \"--env\"]\n"
	    "    hint: names only\n"
	    "  - id: confinement\n"
	    "    label: Confinement\n"
	    "    command: [\"%s\", \"--confinement\"]\n"
	    "    hint: uid, caps, seccomp\n",
	    agent, agent, agent, agent, agent);
	if (n < 0 || (size_t)n >= sizeof(manifest))
		return -1;
	/* Without zone data the weekly review keeps to UTC. */
	if (stat("/usr/share/zoneinfo/Europe/Berlin", &st) == -1 ||
	    !S_ISREG(st.st_mode))
		tz = "UTC";
	n = snprintf(weekly, sizeof(weekly), demo_weekly, tz, tz);
	if (n < 0 || (size_t)n >= sizeof(weekly))
		return -1;
	if (demo_file_managed(home, "agents/demo.yaml", manifest) ||
	    demo_file(home, "missions/daily-summary.yaml", demo_daily) ||
	    demo_file(home, "missions/weekly-review.yaml", weekly) ||
	    demo_file(home, "vault/Welcome.md",
		"# Welcome to the cordon demo vault\n\n"
		"This is a small Markdown vault. cordon may add drafts "
		"beneath\n"
		"`00_Inbox/cordon/` and read notes; nothing else.\n") ||
	    demo_file(home, "vault/10_Projects/cordon.md",
		"# cordon\n\nA privilege-separated supervisor for agent CLIs.\n"
		"\n- [[Welcome]]\n")) {
		log_warn("demo files");
		return -1;
	}
	return 0;
}
