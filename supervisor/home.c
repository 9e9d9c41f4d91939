/*
 * cordon's home: where config, manifests, audit, runtime files and the
 * vault live (--home DIR, or the XDG paths), the strict cordon.yaml
 * loader, and the embedded demo home.  Runs in cordond before any daemon.
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

#include <json-c/json.h>

#include "config.h"
#include "cordon_limits.h"
#include "cordond.h"
#include "lockfile.h"
#include "log.h"
#include "redact.h"
#include "util.h"
#include "yamljson.h"

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
	if (home_prepare_state(cf, uid, gid) == -1 ||
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

/* A small private file DIR/NAME, without its newline: 0, or -1. */
int
home_read_private(const char *dir, const char *name, char *buf, size_t bufsz)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (join(path, sizeof(path), dir, name) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	n = read(fd, buf, bufsz - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return 0;
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

/* ---- cordon.yaml ---- */

static void
config_error(
    const struct cordon_config *cf, struct json_object *at, const char *msg)
{
	unsigned long line = 0, col = 0;

	yaml_mark(at, &line, &col);
	fprintf(stderr, "%s:%lu:%lu: %s\n", cf->cf_config, line, col, msg);
}

/* Every key of o must be one of the names given. */
static int
config_keys(const struct cordon_config *cf, struct json_object *o,
    const char *const *names)
{
	const char *const *n;

	json_object_object_foreach (o, key, val) {
		for (n = names; *n != NULL; n++)
			if (strcmp(*n, key) == 0)
				break;
		if (*n == NULL) {
			config_error(cf, val ? val : o, "unknown key");
			return -1;
		}
	}
	return 0;
}

static struct json_object *
config_section(const struct cordon_config *cf, struct json_object *root,
    const char *name, const char *const *keys, int *err)
{
	struct json_object *s;

	if (!json_object_object_get_ex(root, name, &s))
		return NULL;
	if (!json_object_is_type(s, json_type_object)) {
		config_error(cf, s ? s : root, "expected a mapping");
		*err = 1;
		return NULL;
	}
	if (config_keys(cf, s, keys) == -1) {
		*err = 1;
		return NULL;
	}
	return s;
}

static int
config_string(const struct cordon_config *cf, struct json_object *sec,
    const char *key, char *out, size_t outsz)
{
	struct json_object *v;
	int len;

	if (sec == NULL || !json_object_object_get_ex(sec, key, &v))
		return 0;
	len = json_object_is_type(v, json_type_string)
		  ? json_object_get_string_len(v)
		  : -1;
	if (len <= 0 || (size_t)len >= outsz ||
	    strlen(json_object_get_string(v)) != (size_t)len) {
		config_error(cf, v ? v : sec, "expected a non-empty string");
		return -1;
	}
	memcpy(out, json_object_get_string(v), (size_t)len + 1);
	return 0;
}

/* An integer key within [min, max]: 0 (absent leaves *out), -1 reported. */
static int
config_int(const struct cordon_config *cf, struct json_object *sec,
    const char *key, long min, long max, const char *msg, long *out)
{
	struct json_object *v;

	if (sec == NULL || !json_object_object_get_ex(sec, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < min || json_object_get_int64(v) > max) {
		config_error(cf, v ? v : sec, msg);
		return -1;
	}
	*out = (long)json_object_get_int64(v);
	return 0;
}

/*
 * SEC-4: connectors.<id> {type, baseUrl, authRef}, strictly.  A connector
 * carries a reference to its credential (authRef: env:NAME or none),
 * never the credential: a key that looks like a secret, at any depth, is
 * refused by name and its value is never printed.  authRef is checked
 * here and resolved by nobody yet: no connector runtime exists (no
 * mission output uses external-api), so nothing reads the variable.
 */
#define CONNECTORS_MAX	    32
#define CONNECTOR_ID_MAX    64
#define CONNECTOR_URL_MAX   2048
#define CONNECTOR_PATH_MAX  256 /* the printed key path */
#define CONNECTOR_DEPTH_MAX 16

static int
connector_id_ok(const char *s)
{
	size_t i, len = strlen(s);

	if (len == 0 || len > CONNECTOR_ID_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= '0' && s[i] <= '9') || (s[i] == '-' && i > 0)))
			return 0;
	return 1;
}

/* A key printed in a message: only [A-Za-z0-9_-], 1..64 bytes, else "?". */
static const char *
connector_key_shown(const char *key)
{
	size_t i, len = strlen(key);

	if (len == 0 || len > 64)
		return "?";
	for (i = 0; i < len; i++)
		if (!((key[i] >= 'a' && key[i] <= 'z') ||
			(key[i] >= 'A' && key[i] <= 'Z') ||
			(key[i] >= '0' && key[i] <= '9') || key[i] == '_' ||
			key[i] == '-'))
			return "?";
	return key;
}

/*
 * The common redactor's name rule, also on the camelCase split
 * ("privateKey" -> "private_Key"), which that rule reads as one word.
 */
static int
connector_key_secretish(const char *key)
{
	char split[2 * CONNECTOR_PATH_MAX];
	size_t i, n = 0, len = strlen(key);

	if (redact_key_secretish(key, len))
		return 1;
	for (i = 0; i < len && n + 2 < sizeof(split); i++) {
		if (i > 0 && key[i] >= 'A' && key[i] <= 'Z' &&
		    ((key[i - 1] >= 'a' && key[i - 1] <= 'z') ||
			(key[i - 1] >= '0' && key[i - 1] <= '9')))
			split[n++] = '_';
		split[n++] = key[i];
	}
	split[n] = '\0';
	return redact_key_secretish(split, n);
}

/* Every secret-looking key below o (any depth), reported by name. */
static int
connector_secrets(const struct cordon_config *cf, const char *id,
    struct json_object *o, const char *path, int depth)
{
	char sub[CONNECTOR_PATH_MAX], msg[CONNECTOR_PATH_MAX + 128];
	size_t i;
	int bad = 0;

	if (depth > CONNECTOR_DEPTH_MAX)
		return 0;
	if (json_object_is_type(o, json_type_array)) {
		for (i = 0; i < json_object_array_length(o); i++)
			bad |= connector_secrets(cf, id,
			    json_object_array_get_idx(o, i), path, depth + 1);
		return bad;
	}
	if (!json_object_is_type(o, json_type_object))
		return 0;
	json_object_object_foreach (o, key, val) {
		/* The connector's own fields mean what they say. */
		if (depth == 0 &&
		    (strcmp(key, "type") == 0 || strcmp(key, "baseUrl") == 0 ||
			strcmp(key, "authRef") == 0))
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", path,
		    path[0] != '\0' ? "." : "", connector_key_shown(key));
		if (connector_key_secretish(key)) {
			snprintf(msg, sizeof(msg),
			    "connectors.%s: %s: secret-looking key; "
			    "use authRef",
			    id, sub);
			config_error(cf, val ? val : o, msg);
			bad = 1;
			continue;
		}
		if (val != NULL)
			bad |= connector_secrets(cf, id, val, sub, depth + 1);
	}
	return bad;
}

/* https://host[:port][/path...]: no userinfo, no controls or spaces. */
static int
connector_url_ok(const char *s, size_t len)
{
	size_t i, a;

	if (len <= 8 || len > CONNECTOR_URL_MAX || strlen(s) != len ||
	    strncmp(s, "https://", 8) != 0)
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f || s[i] == '\\')
			return 0;
	for (a = 8; a < len && s[a] != '/' && s[a] != '?' && s[a] != '#'; a++)
		if (!((s[a] >= 'a' && s[a] <= 'z') ||
			(s[a] >= 'A' && s[a] <= 'Z') ||
			(s[a] >= '0' && s[a] <= '9') || s[a] == '.' ||
			s[a] == '-' || s[a] == ':' || s[a] == '[' ||
			s[a] == ']'))
			return 0; /* '@' (userinfo), '%' and the rest */
	return a > 8 && s[8] != ':';
}

/* ^(env:[A-Z_][A-Z0-9_]{0,63}|none)$ */
static int
connector_authref_ok(const char *s, size_t len)
{
	size_t i;

	if (strlen(s) != len)
		return 0;
	if (strcmp(s, "none") == 0)
		return 1;
	if (len < 5 || len > 4 + 64 || strncmp(s, "env:", 4) != 0 ||
	    !((s[4] >= 'A' && s[4] <= 'Z') || s[4] == '_'))
		return 0;
	for (i = 5; i < len; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

/* One connector's string field through check, or a fixed message. */
static int
connector_field(const struct cordon_config *cf, const char *id,
    struct json_object *c, const char *key, int (*ok)(const char *, size_t),
    const char *why)
{
	struct json_object *v;
	char msg[160];

	if (!json_object_object_get_ex(c, key, &v)) {
		snprintf(
		    msg, sizeof(msg), "connectors.%s: %s is required", id, key);
		config_error(cf, c, msg);
		return -1;
	}
	if (!json_object_is_type(v, json_type_string) ||
	    !ok(json_object_get_string(v),
		(size_t)json_object_get_string_len(v))) {
		snprintf(msg, sizeof(msg), "connectors.%s: %s", id, why);
		config_error(cf, v ? v : c, msg);
		return -1;
	}
	return 0;
}

static int
connector_type_ok(const char *s, size_t len)
{
	return strlen(s) == len && strcmp(s, "http") == 0;
}

static int
config_connectors(const struct cordon_config *cf, struct json_object *root)
{
	static const char *const fields[] = {
	    "type", "baseUrl", "authRef", NULL};
	struct json_object *s;
	const char *const *f;
	char msg[160];
	int bad = 0;

	if (!json_object_object_get_ex(root, "connectors", &s))
		return 0;
	if (!json_object_is_type(s, json_type_object)) {
		config_error(
		    cf, s ? s : root, "connectors: expected a mapping");
		return -1;
	}
	if (json_object_object_length(s) > CONNECTORS_MAX) {
		config_error(cf, s, "connectors: at most 32 connectors");
		return -1;
	}
	json_object_object_foreach (s, id, c) {
		if (!connector_id_ok(id)) {
			config_error(cf, c ? c : s,
			    "connectors: a connector id must match "
			    "^[a-z0-9][a-z0-9-]{0,63}$");
			bad = 1;
			continue;
		}
		if (c == NULL || !json_object_is_type(c, json_type_object)) {
			snprintf(msg, sizeof(msg),
			    "connectors.%s: expected a mapping", id);
			config_error(cf, c ? c : s, msg);
			bad = 1;
			continue;
		}
		/* Secret-looking keys first: named, never their values. */
		if (connector_secrets(cf, id, c, "", 0)) {
			bad = 1;
			continue;
		}
		json_object_object_foreach (c, key, val) {
			for (f = fields; *f != NULL; f++)
				if (strcmp(*f, key) == 0)
					break;
			if (*f == NULL) {
				snprintf(msg, sizeof(msg),
				    "connectors.%s: unknown key", id);
				config_error(cf, val ? val : c, msg);
				bad = 1;
			}
		}
		if (connector_field(cf, id, c, "type", connector_type_ok,
			"type must be one of: http") == -1)
			bad = 1;
		if (connector_field(cf, id, c, "baseUrl", connector_url_ok,
			"baseUrl must be an https:// URL without userinfo, "
			"spaces or control characters") == -1)
			bad = 1;
		if (connector_field(cf, id, c, "authRef", connector_authref_ok,
			"authRef must be env:NAME ([A-Z_][A-Z0-9_]{0,63}) "
			"or none") == -1)
			bad = 1;
	}
	return bad ? -1 : 0;
}

int
config_load(struct cordon_config *cf)
{
	static const char *const top[] = {"listen", "vault", "broker", "audit",
	    "spawner", "connectors", NULL};
	static const char *const listen[] = {
	    "address", "port", "allowRemote", "origins", NULL};
	static const char *const vault[] = {"root", NULL};
	static const char *const broker[] = {"user", NULL};
	static const char *const audit[] = {"retentionDays", NULL};
	static const char *const spawner[] = {
	    "maxRuns", "maxRunsPerAgent", NULL};
	struct json_object *root, *sl, *sv, *sb, *sa, *ss, *v;
	struct yaml_err ye;
	struct stat st;
	char vroot[PATH_MAX];
	int err = 0;
	size_t i;

	if (stat(cf->cf_config, &st) == -1 && errno == ENOENT) {
		if (cf->cf_home[0] == '\0') {
			fprintf(stderr,
			    "%s:0:0: missing (vault.root is "
			    "required without --home)\n",
			    cf->cf_config);
			return -1;
		}
		return 0; /* --home without cordon.yaml: all defaults */
	}
	if ((root = yaml_load_file(cf->cf_config, &ye)) == NULL) {
		fprintf(stderr, "%s:%lu:%lu: %s\n", cf->cf_config, ye.ye_line,
		    ye.ye_col, ye.ye_msg);
		return -1;
	}
	if (config_keys(cf, root, top) == -1)
		goto fail;
	sl = config_section(cf, root, "listen", listen, &err);
	sv = config_section(cf, root, "vault", vault, &err);
	sb = config_section(cf, root, "broker", broker, &err);
	sa = config_section(cf, root, "audit", audit, &err);
	ss = config_section(cf, root, "spawner", spawner, &err);
	if (err || config_connectors(cf, root) == -1)
		goto fail;
	if (config_int(cf, sa, "retentionDays", 0, 36500,
		"retentionDays must be 0..36500", &cf->cf_retention_days) ||
	    config_int(cf, ss, "maxRuns", 1, LIM_RUNS_TOTAL_MAX,
		"maxRuns must be 1..256", &cf->cf_max_runs) ||
	    config_int(cf, ss, "maxRunsPerAgent", 1, LIM_RUNS_PER_AGENT_MAX,
		"maxRunsPerAgent must be 1..64", &cf->cf_max_runs_agent))
		goto fail;
	if (config_string(cf, sl, "address", cf->cf_listen,
		sizeof(cf->cf_listen)) == -1 ||
	    config_string(cf, sb, "user", cf->cf_broker_user,
		sizeof(cf->cf_broker_user)) == -1)
		goto fail;
	vroot[0] = '\0';
	if (config_string(cf, sv, "root", vroot, sizeof(vroot)) == -1)
		goto fail;
	if (vroot[0] != '\0') {
		if (vroot[0] != '/' || realpath(vroot, cf->cf_vault) == NULL) {
			config_error(cf, root,
			    "vault.root must be an existing "
			    "absolute directory");
			goto fail;
		}
	}
	if (sl != NULL && json_object_object_get_ex(sl, "port", &v)) {
		if (!json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 0 ||
		    json_object_get_int64(v) > 65535) {
			config_error(cf, v ? v : sl, "port must be 0..65535");
			goto fail;
		}
		if (cf->cf_port == -1)
			cf->cf_port = (int)json_object_get_int64(v);
	}
	if (sl != NULL && json_object_object_get_ex(sl, "allowRemote", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			config_error(cf, v ? v : sl, "expected true or false");
			goto fail;
		}
		cf->cf_allow_remote = json_object_get_boolean(v);
	}
	if (sl != NULL && json_object_object_get_ex(sl, "origins", &v)) {
		if (!json_object_is_type(v, json_type_array) ||
		    json_object_array_length(v) > CORDON_MAX_ORIGINS) {
			config_error(cf, v ? v : sl,
			    "origins must be a list "
			    "of at most 8 origins");
			goto fail;
		}
		for (i = 0; i < json_object_array_length(v); i++) {
			struct json_object *o = json_object_array_get_idx(v, i);
			const char *s;
			if (!json_object_is_type(o, json_type_string) ||
			    (s = json_object_get_string(o)) == NULL ||
			    (strncmp(s, "http://", 7) != 0 &&
				strncmp(s, "https://", 8) != 0) ||
			    strlen(s) > 200 || strchr(s, ' ') != NULL) {
				config_error(cf, o ? o : v,
				    "origin must be http(s)://host[:port]");
				goto fail;
			}
			cf->cf_origins[cf->cf_norigins++] = strdup(s);
		}
	}
	if (strcmp(cf->cf_listen, "127.0.0.1") != 0) {
		if (!cf->cf_allow_remote) {
			config_error(cf, sl,
			    "listen.address other than "
			    "127.0.0.1 needs listen.allowRemote: true");
			goto fail;
		}
		log_warnx("listening on %s: reachable beyond this machine; "
			  "token authentication stays on",
		    cf->cf_listen);
	}
	if (cf->cf_vault[0] == '\0') {
		config_error(cf, root, "vault.root is required");
		goto fail;
	}
	json_object_put(root);
	return 0;
fail:
	json_object_put(root);
	return -1;
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
