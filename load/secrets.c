/*
 * Secrets (SEC-1, SEC-2, SEC-3): each manifest mapping ENV_NAME -> dotted
 * path is resolved from cordond's own environment first, then from
 * secrets.yaml (a regular file, owned by the operator, no group or other
 * bits), else the run is refused.  Reads only secrets.yaml; values stay
 * in this process and are wiped when a run ends.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "json.h"
#include "log.h"
#include "redact.h"
#include "secrets.h"
#include "util.h"
#include "yamljson.h"

#define SECRETS_MAX_BYTES (256 * 1024)

/*
 * SEC-1: the file through one descriptor (no swap between the checks and
 * the read).  NULL when absent or refused; refusals are logged neutrally.
 */
static struct json_object *
secrets_load(const char *path)
{
	struct json_object *root = NULL;
	struct yaml_err ye;
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd == -1) {
		if (errno != ENOENT)
			log_warnx("secrets.yaml cannot be opened; refused");
		return NULL;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		log_warnx("secrets.yaml is not a regular file; refused");
		goto out;
	}
	if (st.st_uid != getuid() || (st.st_mode & 077) != 0) {
		log_warnx("secrets.yaml must be 0600 and owned by the "
			  "operator; refused");
		goto out;
	}
	if (st.st_size > SECRETS_MAX_BYTES ||
	    (buf = malloc((size_t)st.st_size + 1)) == NULL)
		goto out;
	while (got < (size_t)st.st_size &&
	       (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	if (got != (size_t)st.st_size)
		goto out;
	if ((root = yaml_load_secret(buf, got, &ye)) == NULL)
		log_warnx("secrets.yaml:%lu:%lu: %s", ye.ye_line, ye.ye_col,
		    ye.ye_msg);
	else if (!json_object_is_type(root, json_type_object)) {
		json_wipe_put(root);
		root = NULL;
		log_warnx("secrets.yaml is not a mapping; refused");
	}
out:
	if (buf != NULL) {
		explicit_bzero(buf, got);
		free(buf);
	}
	close(fd);
	return root;
}

/* The string at a dotted path ("openrouter.apiKey"), or NULL. */
static const char *
secrets_path(struct json_object *root, const char *path)
{
	struct json_object *o = root, *v;
	char key[LIM_SECRET_PATH_MAX + 1];
	const char *p = path, *dot;
	size_t len;

	while (o != NULL && json_object_is_type(o, json_type_object)) {
		dot = strchr(p, '.');
		len = dot ? (size_t)(dot - p) : strlen(p);
		if (len == 0 || len >= sizeof(key))
			return NULL;
		memcpy(key, p, len);
		key[len] = '\0';
		if (!json_object_object_get_ex(o, key, &v))
			return NULL;
		if (dot == NULL) {
			if (!json_object_is_type(v, json_type_string) ||
			    json_object_get_string_len(v) == 0)
				return NULL;
			return json_object_get_string(v);
		}
		o = v;
		p = dot + 1;
	}
	return NULL;
}

/*
 * A usable value: non-empty, no NUL (by type), no line breaks, at most
 * LIM_SECRET_VALUE_MAX bytes (the scrubber must hold one whole).
 */
static int
secret_value_ok(const char *v)
{
	return v != NULL && v[0] != '\0' && strpbrk(v, "\r\n") == NULL &&
	       strlen(v) <= LIM_SECRET_VALUE_MAX;
}

int
secrets_resolve(
    const char *path, const struct manifest *mf, struct secret_set *ss)
{
	struct json_object *root = NULL;
	const char *v;
	size_t i;
	int loaded = 0, rc = 0;

	memset(ss, 0, sizeof(*ss));
	if (mf->m_nsecrets == 0)
		return 0;
	ss->ss_names = calloc(mf->m_nsecrets + 1, sizeof(char *));
	ss->ss_values = calloc(mf->m_nsecrets + 1, sizeof(char *));
	if (ss->ss_names == NULL || ss->ss_values == NULL)
		return -1;
	for (i = 0; i < mf->m_nsecrets; i++) {
		/* SEC-2: cordond's environment first, then the file. */
		v = getenv(mf->m_secrets[i].s_env);
		if (!secret_value_ok(v)) {
			if (!loaded) {
				root = secrets_load(path);
				loaded = 1;
			}
			v = root ? secrets_path(root, mf->m_secrets[i].s_path)
				 : NULL;
		}
		if (!secret_value_ok(v)) {
			if (ss->ss_nmissing < LIM_SECRETS_MAX)
				ss->ss_missing[ss->ss_nmissing++] =
				    mf->m_secrets[i].s_env;
			rc = -1;
			continue;
		}
		if ((ss->ss_names[ss->ss_n] = strdup(mf->m_secrets[i].s_env)) ==
			NULL ||
		    (ss->ss_values[ss->ss_n] = strdup(v)) == NULL) {
			free(ss->ss_names[ss->ss_n]);
			ss->ss_names[ss->ss_n] = NULL;
			rc = -1;
			break;
		}
		ss->ss_n++;
	}
	json_wipe_put(root); /* every copy of every value */
	return rc;
}

int
secrets_keys(struct secret_set *ss)
{
	if (ss->ss_keys == NULL &&
	    (ss->ss_keys = redact_keys_new(
		 (const char *const *)ss->ss_values, ss->ss_n)) == NULL)
		return -1;
	return 0;
}

void
secrets_clear(struct secret_set *ss)
{
	size_t i;

	redact_keys_free(ss->ss_keys);
	for (i = 0; i < ss->ss_n; i++) {
		free(ss->ss_names[i]);
		if (ss->ss_values[i] != NULL) {
			explicit_bzero(
			    ss->ss_values[i], strlen(ss->ss_values[i]));
			free(ss->ss_values[i]);
		}
	}
	free(ss->ss_names);
	free(ss->ss_values);
	memset(ss, 0, sizeof(*ss));
}
