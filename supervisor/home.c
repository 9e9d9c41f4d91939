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
#include "log.h"
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
	    join(cf->cf_audit, sizeof(cf->cf_audit), state, "cordon/audit"))
		return -1;
	/* Only `cordon run` needs the runtime dir; it checks cf_rundir. */
	cf->cf_rundir[0] = '\0';
	if ((run = getenv("XDG_RUNTIME_DIR")) != NULL && run[0] == '/' &&
	    join(cf->cf_rundir, sizeof(cf->cf_rundir), run, "cordon"))
		return -1;
	cf->cf_vault[0] = '\0'; /* must come from cordon.yaml */
	return 0;
}

static int
make_dir(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	struct stat st;

	if (mkdir(path, mode) == -1 && errno != EEXIST) {
		log_warn("mkdir %s", path);
		return -1;
	}
	if (lstat(path, &st) == -1 || !S_ISDIR(st.st_mode)) {
		log_warnx("%s is not a directory", path);
		return -1;
	}
	if (uid != (uid_t)-1 && chown(path, uid, gid) == -1) {
		log_warn("chown %s", path);
		return -1;
	}
	if (chmod(path, mode) == -1) {
		log_warn("chmod %s", path);
		return -1;
	}
	return 0;
}

/* Create the directories cordon owns (audit and runtime, both 0700). */
int
home_prepare(const struct cordon_config *cf, uid_t uid, gid_t gid)
{
	char parent[PATH_MAX], *slash;

	if (cf->cf_home[0] == '\0') {
		/* XDG: parents of the audit and runtime dirs may be missing */
		snprintf(parent, sizeof(parent), "%s", cf->cf_audit);
		if ((slash = strrchr(parent, '/')) != NULL) {
			*slash = '\0';
			if (make_dir(parent, 0700, uid, gid) == -1)
				return -1;
		}
	}
	if (make_dir(cf->cf_audit, 0700, uid, gid) == -1 ||
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

/* Write DIR/NAME with mode 0600 via a temp file and rename. */
int
home_write_private(
    const char *dir, const char *name, const char *data, uid_t uid, gid_t gid)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name) >=
		(int)sizeof(tmp) ||
	    join(dst, sizeof(dst), dir, name))
		return -1;
	unlink(tmp);
	fd = open(
	    tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1) {
		log_warn("create %s", dst);
		return -1;
	}
	if (write_full(fd, data, strlen(data)) == -1 || fsync(fd) == -1 ||
	    (uid != (uid_t)-1 && fchown(fd, uid, gid) == -1)) {
		log_warn("write %s", dst);
		close(fd);
		unlink(tmp);
		return -1;
	}
	close(fd);
	if (rename(tmp, dst) == -1) {
		log_warn("rename %s", dst);
		unlink(tmp);
		return -1;
	}
	return 0;
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

int
config_load(struct cordon_config *cf)
{
	static const char *const top[] = {
	    "listen", "vault", "broker", "audit", "spawner", NULL};
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
	if (err)
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

/* A demo home: a small vault and the demo agent's manifest. */
int
home_make_demo(const char *home)
{
	char self[PATH_MAX], agent[PATH_MAX + 64],
	    manifest[2 * PATH_MAX + 1024];
	char *slash;
	ssize_t n;

	if ((mkdir(home, 0700) == -1 && errno != EEXIST) ||
	    demo_dir(home, "agents") || demo_dir(home, "missions") ||
	    demo_dir(home, "vault") || demo_dir(home, "vault/00_Inbox") ||
	    demo_dir(home, "vault/10_Projects")) {
		log_warn("demo home");
		return -1;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	snprintf(agent, sizeof(agent), "%s/cordon-demo-agent", self);
	if (access(agent, X_OK) == -1)
		snprintf(agent, sizeof(agent), "%s/cordon-demo-agent",
		    CORDON_LIBEXECDIR);
	n = snprintf(manifest, sizeof(manifest),
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
	    "  timeoutMs: 2000\n",
	    agent, agent);
	if (n < 0 || (size_t)n >= sizeof(manifest))
		return -1;
	if (demo_file(home, "agents/demo.yaml", manifest) ||
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
