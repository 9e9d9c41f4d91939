/*
 * The strict cordon.yaml loader (config_load): every key known, every
 * value checked, errors as "file:line:col: message" without the value;
 * connectors' secret-looking keys named, never their values.  Reads
 * cordon.yaml only; runs in cordon and cordond before any daemon.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "charset.h"
#include "cordon_limits.h"
#include "cordond.h"
#include "log.h"
#include "manifest.h"
#include "redact.h"
#include "yamljson.h"

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
	return mp_name_ok(s, CONNECTOR_ID_MAX);
}

/* A key printed in a message: only [A-Za-z0-9_-], 1..64 bytes, else "?". */
static const char *
connector_key_shown(const char *key)
{
	return charset_shape(
		   key, strlen(key), "a-zA-Z0-9_-", "a-zA-Z0-9_-", 1, 64)
		   ? key
		   : "?";
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
		if (!charset_has("a-zA-Z0-9.:[]-", s[a]))
			return 0; /* '@' (userinfo), '%' and the rest */
	return a > 8 && s[8] != ':';
}

/* ^(env:[A-Z_][A-Z0-9_]{0,63}|none)$ */
static int
connector_authref_ok(const char *s, size_t len)
{
	if (strlen(s) != len)
		return 0;
	if (strcmp(s, "none") == 0)
		return 1;
	return strncmp(s, "env:", 4) == 0 &&
	       charset_shape(s + 4, len - 4, "A-Z_", "A-Z0-9_", 1, 64);
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

/* listen.port, listen.allowRemote and listen.origins.  0, or -1 (said). */
static int
config_listen(struct cordon_config *cf, struct json_object *sl)
{
	struct json_object *v;
	size_t i;

	if (sl != NULL && json_object_object_get_ex(sl, "port", &v)) {
		if (!json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 0 ||
		    json_object_get_int64(v) > 65535) {
			config_error(cf, v ? v : sl, "port must be 0..65535");
			return -1;
		}
		if (cf->cf_port == -1)
			cf->cf_port = (int)json_object_get_int64(v);
	}
	if (sl != NULL && json_object_object_get_ex(sl, "allowRemote", &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			config_error(cf, v ? v : sl, "expected true or false");
			return -1;
		}
		cf->cf_allow_remote = json_object_get_boolean(v);
	}
	if (sl == NULL || !json_object_object_get_ex(sl, "origins", &v))
		return 0;
	if (!json_object_is_type(v, json_type_array) ||
	    json_object_array_length(v) > CORDON_MAX_ORIGINS) {
		config_error(cf, v ? v : sl,
		    "origins must be a list "
		    "of at most 8 origins");
		return -1;
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
			return -1;
		}
		cf->cf_origins[cf->cf_norigins++] = strdup(s);
	}
	return 0;
}

/* The scalar settings: numbers, strings and vault.root.  0, or -1. */
static int
config_values(struct cordon_config *cf, struct json_object *root,
    struct json_object *const sec[5])
{
	struct json_object *sl = sec[0], *sv = sec[1], *sb = sec[2],
			   *sa = sec[3], *ss = sec[4];
	char vroot[PATH_MAX];

	if (config_int(cf, sa, "retentionDays", 0, 36500,
		"retentionDays must be 0..36500", &cf->cf_retention_days) ||
	    config_int(cf, ss, "maxRuns", 1, LIM_RUNS_TOTAL_MAX,
		"maxRuns must be 1..256", &cf->cf_max_runs) ||
	    config_int(cf, ss, "maxRunsPerAgent", 1, LIM_RUNS_PER_AGENT_MAX,
		"maxRunsPerAgent must be 1..64", &cf->cf_max_runs_agent) ||
	    config_int(cf, ss, "jobsKeep", 1, LIM_JOBS_KEEP_MAX,
		"jobsKeep must be 1..1000", &cf->cf_jobs_keep) ||
	    config_int(cf, ss, "jobsKeepMiB", 1, LIM_JOBS_KEEP_MIB_MAX,
		"jobsKeepMiB must be 1..65536", &cf->cf_jobs_keep_mib))
		return -1;
	if (config_string(cf, sl, "address", cf->cf_listen,
		sizeof(cf->cf_listen)) == -1 ||
	    config_string(cf, sb, "user", cf->cf_broker_user,
		sizeof(cf->cf_broker_user)) == -1)
		return -1;
	vroot[0] = '\0';
	if (config_string(cf, sv, "root", vroot, sizeof(vroot)) == -1)
		return -1;
	if (vroot[0] != '\0' &&
	    (vroot[0] != '/' || realpath(vroot, cf->cf_vault) == NULL)) {
		config_error(cf, root,
		    "vault.root must be an existing "
		    "absolute directory");
		return -1;
	}
	return 0;
}

/* What only the whole file says: a reachable listener is asked for,
 * and a vault is known.  0, or -1. */
static int
config_final(
    struct cordon_config *cf, struct json_object *root, struct json_object *sl)
{
	if (strcmp(cf->cf_listen, "127.0.0.1") != 0) {
		if (!cf->cf_allow_remote) {
			config_error(cf, sl,
			    "listen.address other than "
			    "127.0.0.1 needs listen.allowRemote: true");
			return -1;
		}
		log_warnx("listening on %s: reachable beyond this machine; "
			  "token authentication stays on",
		    cf->cf_listen);
	}
	if (cf->cf_vault[0] == '\0') {
		config_error(cf, root, "vault.root is required");
		return -1;
	}
	return 0;
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
	    "maxRuns", "maxRunsPerAgent", "jobsKeep", "jobsKeepMiB", NULL};
	struct json_object *root, *sec[5];
	struct yaml_err ye;
	struct stat st;
	int err = 0, rc = -1;

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
		goto out;
	sec[0] = config_section(cf, root, "listen", listen, &err);
	sec[1] = config_section(cf, root, "vault", vault, &err);
	sec[2] = config_section(cf, root, "broker", broker, &err);
	sec[3] = config_section(cf, root, "audit", audit, &err);
	sec[4] = config_section(cf, root, "spawner", spawner, &err);
	if (err || config_connectors(cf, root) == -1 ||
	    config_values(cf, root, sec) == -1 ||
	    config_listen(cf, sec[0]) == -1 ||
	    config_final(cf, root, sec[0]) == -1)
		goto out;
	rc = 0;
out:
	json_object_put(root);
	return rc;
}
