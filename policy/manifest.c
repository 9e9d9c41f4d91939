/*
 * Strict validator for agent manifests (SP-15, SP-5, SEC-3): json-c tree
 * (from yaml_load_*) -> struct manifest, every problem collected with its
 * line:col.  Pure: no I/O, no globals; allocates only into *out.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "charset.h"
#include "argv.h"
#include "text.h"
#include "env.h"
#include "manifest.h"
#include "manifest_parse.h"
#include "redact.h"
#include "schema.h"
#include "util.h"
#include "yamljson.h"

/* A control character other than those in allow. */
static int
has_ctl(const char *s, size_t len, const char *allow)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] < 0x20 || s[i] == 0x7f) &&
		    strchr(allow, s[i]) == NULL)
			return 1;
	return 0;
}

/* A string value: NUL-free, UTF-8, minc..maxc code points. */
static const char *
mp_strval(struct schema *p, struct json_object *v, struct json_object *parent,
    const char *path, size_t minc, size_t maxc, int flags)
{
	const char *s;
	size_t len;

	if ((s = schema_string(p, v, parent, path, &len)) == NULL)
		return NULL;
	if (strlen(s) != len || !utf8_valid(s, len)) {
		schema_err(p, v, parent, path, "must not contain NUL");
		return NULL;
	}
	if (schema_chars(p, v, parent, path, s, len, minc, maxc) == -1)
		return NULL;
	if (((flags & S_NOCTL) && has_ctl(s, len, "")) ||
	    ((flags & S_TEXT) && has_ctl(s, len, "\n\t"))) {
		schema_err(
		    p, v, parent, path, "must not contain control characters");
		return NULL;
	}
	if ((flags & S_NONL) && strpbrk(s, "\n\r") != NULL) {
		schema_err(p, v, parent, path, "must not contain a newline");
		return NULL;
	}
	return s;
}

char *
mp_str(struct schema *p, struct json_object *obj, const char *key,
    const char *path, int required, size_t minc, size_t maxc, int flags)
{
	struct json_object *v;
	const char *s;

	if (!schema_key(p, obj, key, path, required, &v) ||
	    (s = mp_strval(p, v, obj, path, minc, maxc, flags)) == NULL)
		return NULL;
	return schema_dup(p, s);
}

/* One of the names in vals; its index, or -1 (absent: def). */
int
mp_enum(struct schema *p, struct json_object *obj, const char *key,
    const char *path, const char *const *vals, int def)
{
	struct json_object *v;
	const char *s;
	char msg[96];
	size_t n;
	int i;

	if (!schema_get(obj, key, &v))
		return def;
	if ((s = mp_strval(p, v, obj, path, 1, 64, S_NOCTL)) == NULL)
		return def;
	for (i = 0; vals[i] != NULL; i++)
		if (strcmp(vals[i], s) == 0)
			return i;
	/* The accepted values, never the one written. */
	if (text_nearest(s, vals) != NULL) {
		snprintf(msg, sizeof(msg),
		    "unsupported value; did you mean %s?",
		    text_nearest(s, vals));
		schema_errc(p, v, obj, path, "unsupported-value", msg);
		return def;
	}
	n = (size_t)snprintf(msg, sizeof(msg), "unsupported value; one of");
	for (i = 0; vals[i] != NULL && n < sizeof(msg); i++)
		n += (size_t)snprintf(
		    msg + n, sizeof(msg) - n, "%s %s", i ? "," : "", vals[i]);
	schema_errc(p, v, obj, path, "unsupported-value", msg);
	return def;
}

int
manifest_secret_declared(const struct manifest *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->m_nsecrets; i++)
		if (strcmp(m->m_secrets[i].s_env, name) == 0)
			return 1;
	return 0;
}

int
mp_name_ok(const char *s, size_t maxlen)
{
	return charset_shape(s, strlen(s), "a-z0-9", "a-z0-9-", 1, maxlen);
}

/* SEC-3: "$NAME" or "${NAME}" naming a secret mapping or a secret-looking
 * variable, anywhere in s. */
static int
refs_secret(const struct manifest *m, const char *s)
{
	const char *q, *e;
	char name[129];
	size_t n;

	for (q = strchr(s, '$'); q != NULL; q = strchr(q + 1, '$')) {
		e = q + 1 + (q[1] == '{');
		for (n = 0;
		     n < sizeof(name) - 1 && charset_has("A-Za-z0-9_", e[n]);
		     n++)
			name[n] = e[n];
		name[n] = '\0';
		if (n == 0)
			continue;
		if (env_secretish(name) || manifest_secret_declared(m, name))
			return 1;
	}
	return 0;
}

/* An argv-like array of strings (SP-2): 1..LIM_ARGS_MAX elements (0 ok if
 * !nonempty), each <= 32 KiB, no NUL, no secret. */
char **
mp_argv(struct schema *p, const struct manifest *m, struct json_object *v,
    struct json_object *parent, const char *path, int nonempty, size_t *np)
{
	struct json_object *el;
	const char *s;
	char **out;
	size_t i, n;

	*np = 0;
	if (!schema_is(v, json_type_array)) {
		schema_err(p, v, parent, path, "must be a list of strings");
		return NULL;
	}
	n = json_object_array_length(v);
	if ((nonempty && n == 0) || n > LIM_ARGS_MAX) {
		schema_err(p, v, parent, path, "wrong number of elements");
		return NULL;
	}
	if ((out = calloc(n + 1, sizeof(char *))) == NULL) {
		p->oom = 1;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(v, i);
		s = mp_strval(p, el, v, path, nonempty && i == 0 ? 1 : 0,
		    LIM_ARG_MAX_BYTES, 0);
		if (s == NULL) {
			out[i] =
			    schema_dup(p, ""); /* no holes: freed by count */
			continue;
		}
		if (strlen(s) > LIM_ARG_MAX_BYTES)
			schema_err(p, el, v, path, "element too long");
		else if (redact_value_secretish(s) || refs_secret(m, s) ||
			 (i > 0 && out[i - 1] != NULL &&
			     argv_secret_flag(out[i - 1]) &&
			     strstr(s, "{prompt}") == NULL))
			schema_err(
			    p, el, v, path, "secret in arguments refused");
		out[i] = schema_dup(p, s);
	}
	*np = n;
	return out;
}

/* A command (SP-1, SP-2): a non-empty argv of mp_argv, no {prompt}. */
char **
mp_command(struct schema *p, const struct manifest *m, struct json_object *v,
    struct json_object *parent, const char *path, size_t *np)
{
	char **c = mp_argv(p, m, v, parent, path, 1, np);
	size_t i;

	for (i = 0; c != NULL && i < *np; i++)
		if (c[i] != NULL && mp_prompt_refs(c[i]) > 0)
			schema_err(p, json_object_array_get_idx(v, i), v, path,
			    "{prompt} refused here");
	return c;
}

/* Occurrences of "{prompt}" in s. */
size_t
mp_prompt_refs(const char *s)
{
	size_t n = 0;

	while (s != NULL && (s = strstr(s, "{prompt}")) != NULL) {
		n++;
		s += 8;
	}
	return n;
}

static int
path_ok(const char *s)
{
	const char *q;

	if (s[0] != '/' || strlen(s) > LIM_PATH_MAX)
		return 0;
	for (q = s; (q = strstr(q, "..")) != NULL; q++)
		if ((q == s || q[-1] == '/') && (q[2] == '\0' || q[2] == '/'))
			return 0;
	return 1;
}

/*
 * Copies of a name and its value, or -1 with neither (out of memory,
 * p->oom set): a counted entry never holds a NULL that a later check of
 * the same manifest would compare.
 */
static int
mp_pair(struct schema *p, const char *k, const char *v, char **ko, char **vo)
{
	*ko = schema_dup(p, k);
	*vo = schema_dup(p, v);
	if (*ko != NULL && *vo != NULL)
		return 0;
	free(*ko);
	free(*vo);
	*ko = *vo = NULL;
	return -1;
}

/*
 * parent's key, when present, as a mapping of at most max entries, with
 * a zeroed array for it (one more element of elsz bytes, the end) in
 * *arr.  NULL when absent or refused (an error added, where naming it).
 */
static struct json_object *
mp_map(struct schema *p, struct json_object *parent, const char *key,
    const char *where, size_t max, size_t elsz, void **arr)
{
	struct json_object *v;
	size_t n;

	if (!schema_get(parent, key, &v))
		return NULL;
	if (!schema_is(v, json_type_object)) {
		schema_err(p, v, parent, where, "must be a mapping");
		return NULL;
	}
	n = (size_t)json_object_object_length(v);
	if (n > max) {
		schema_err(p, v, parent, where, "too many entries");
		return NULL;
	}
	if ((*arr = calloc(n + 1, elsz)) == NULL) {
		p->oom = 1;
		return NULL;
	}
	return v;
}

static void
mp_secrets(struct schema *p, struct manifest *m, struct json_object *root)
{
	struct json_object *v;
	const char *s, *q;
	void *arr;
	int ok;

	v = mp_map(p, root, "secrets", "secrets", LIM_SECRETS_MAX,
	    sizeof(*m->m_secrets), &arr);
	if (v == NULL)
		return;
	m->m_secrets = arr;
	json_object_object_foreach (v, k, pv) {
		if (!env_name_ok(k)) {
			schema_err(
			    p, pv, v, "secrets", "invalid environment name");
			continue;
		}
		if (env_shared(k)) {
			/* cordond would hand it to every agent's spawner env */
			schema_err(p, pv, v, "secrets",
			    "name is passed to every agent");
			continue;
		}
		s = mp_strval(
		    p, pv, v, "secrets", 1, LIM_SECRET_PATH_MAX, S_NOCTL);
		if (s == NULL)
			continue;
		/* dotted path: segments of [A-Za-z0-9_-], no empty one */
		ok = s[0] != '.' && s[strlen(s) - 1] != '.' &&
		     strstr(s, "..") == NULL;
		for (q = s; ok && *q != '\0'; q++)
			ok = charset_has("A-Za-z0-9_.-", *q);
		if (!ok) {
			schema_err(p, pv, v, "secrets", "invalid dotted path");
			continue;
		}
		if (mp_pair(p, k, s, &m->m_secrets[m->m_nsecrets].s_env,
			&m->m_secrets[m->m_nsecrets].s_path) == 0)
			m->m_nsecrets++;
	}
}

static void
mp_env(struct schema *p, struct manifest *m, struct json_object *tc)
{
	struct json_object *v;
	const char *s;
	char num[32];
	void *arr;

	v = mp_map(p, tc, "env", "transportConfig.env", LIM_ENV_MAX_ENTRIES,
	    sizeof(*m->m_env), &arr);
	if (v == NULL)
		return;
	m->m_env = arr;
	json_object_object_foreach (v, k, ev) {
		if (!env_name_ok(k)) {
			schema_err(p, ev, v, "transportConfig.env",
			    "environment name refused");
			continue;
		}
		if (manifest_secret_declared(m, k) || env_secretish(k)) {
			schema_err(p, ev, v, "transportConfig.env",
			    "secret-looking name: map it under secrets");
			continue;
		}
		if (schema_is(ev, json_type_int)) {
			snprintf(num, sizeof(num), "%lld",
			    (long long)json_object_get_int64(ev));
			s = num;
		} else if ((s = mp_strval(p, ev, v, "transportConfig.env", 0,
				LIM_ENV_VALUE_MAX_CHARS, S_NONL)) == NULL)
			continue;
		if (redact_value_secretish(s) || refs_secret(m, s)) {
			schema_err(p, ev, v, "transportConfig.env",
			    "secret in environment value refused");
			continue;
		}
		if (mp_pair(p, k, s, &m->m_env[m->m_nenv].e_name,
			&m->m_env[m->m_nenv].e_value) == 0)
			m->m_nenv++;
	}
}

static const char *const tc_keys[] = {
    "bin", "args", "timeoutMs", "env", "cwd", NULL};

static void
mp_transport_config(
    struct schema *p, struct manifest *m, struct json_object *root)
{
	struct json_object *tc, *v;
	long long x;
	size_t i, refs = 0;

	if (!schema_get(root, "transportConfig", &tc)) {
		schema_err(p, NULL, root, "transportConfig", "missing");
		return;
	}
	if (!schema_is(tc, json_type_object)) {
		schema_err(p, tc, root, "transportConfig", "must be a mapping");
		return;
	}
	schema_keys(p, tc, "transportConfig", tc_keys);
	m->m_bin = mp_str(
	    p, tc, "bin", "transportConfig.bin", 1, 1, LIM_PATH_MAX, S_NOCTL);
	if (m->m_bin != NULL &&
	    ((strchr(m->m_bin, '/') != NULL && !path_ok(m->m_bin)) ||
		mp_prompt_refs(m->m_bin) > 0 || m->m_bin[0] == '-')) {
		(void)schema_get(tc, "bin", &v);
		schema_err(p, v, tc, "transportConfig.bin",
		    "must be a name or an absolute path");
	}
	if (schema_get(tc, "args", &v))
		m->m_args = mp_argv(
		    p, m, v, tc, "transportConfig.args", 0, &m->m_nargs);
	else if ((m->m_args = calloc(1, sizeof(char *))) == NULL)
		p->oom = 1;
	for (i = 0; i < m->m_nargs && m->m_args != NULL; i++) {
		if (m->m_args[i] == NULL)
			continue;
		refs += mp_prompt_refs(m->m_args[i]);
	}
	if (m->m_prompt_via == MF_PROMPT_ARGV && refs != 1) {
		(void)schema_get(tc, "args", &v);
		schema_err(p, v, tc, "transportConfig.args",
		    "needs exactly one {prompt} (or promptVia: stdin)");
	} else if (m->m_prompt_via == MF_PROMPT_STDIN && refs != 0) {
		(void)schema_get(tc, "args", &v);
		schema_err(p, v, tc, "transportConfig.args",
		    "{prompt} refused with promptVia: stdin");
	}
	m->m_timeout_ms =
	    m->m_transport == MF_SUBPROCESS ? LIM_RUN_TIMEOUT_DEF_MS : 0;
	if (schema_int(p, tc, "timeoutMs", "transportConfig.timeoutMs", 1,
		LIM_RUN_TIMEOUT_MAX_MS, &x) == 1)
		m->m_timeout_ms = (long)x;
	mp_env(p, m, tc);
	m->m_cwd = mp_str(
	    p, tc, "cwd", "transportConfig.cwd", 0, 1, LIM_PATH_MAX, S_NOCTL);
	if (m->m_cwd != NULL && !path_ok(m->m_cwd)) {
		(void)schema_get(tc, "cwd", &v);
		schema_err(p, v, tc, "transportConfig.cwd",
		    "must be an absolute path without ..");
	}
}

struct lim_def {
	const char *key;
	size_t off;
	unsigned long long min, def, max;
};

static const struct lim_def lim_defs[] = {
    {"cpuSec", offsetof(struct mf_limits, l_cpu_sec), 1, LIM_CPU_SEC_DEF,
	LIM_CPU_SEC_MAX},
    {"fileBytes", offsetof(struct mf_limits, l_file_bytes), 1,
	LIM_FILE_BYTES_DEF, LIM_FILE_BYTES_MAX},
    {"nofile", offsetof(struct mf_limits, l_nofile), 16, LIM_NOFILE_DEF,
	LIM_NOFILE_MAX},
    {"nproc", offsetof(struct mf_limits, l_nproc), 1, LIM_NPROC_DEF,
	LIM_NPROC_MAX},
    {"memBytes", offsetof(struct mf_limits, l_mem_bytes), 0, LIM_MEM_BYTES_DEF,
	LIM_MEM_BYTES_MAX},
    {"tmpBytes", offsetof(struct mf_limits, l_tmp_bytes), LIM_TMP_BYTES_MIN,
	LIM_TMP_BYTES_DEF, LIM_TMP_BYTES_MAX},
    {"runOutputBytes", offsetof(struct mf_limits, l_run_output_bytes), 1,
	LIM_RUN_OUTPUT_DEF, LIM_RUN_OUTPUT_MAX},
    {"actionOutputBytes", offsetof(struct mf_limits, l_action_output_bytes), 1,
	LIM_ACTION_OUTPUT_DEF, LIM_ACTION_OUTPUT_MAX},
};

static void
mp_limits(struct schema *p, struct manifest *m, struct json_object *root)
{
	static const char *const keys[] = {"cpuSec", "fileBytes", "nofile",
	    "nproc", "memBytes", "tmpBytes", "runOutputBytes",
	    "actionOutputBytes", NULL};
	struct json_object *lv;
	unsigned long long *f;
	size_t i;
	long long x;

	for (i = 0; i < nitems(lim_defs); i++)
		*(unsigned long long *)((char *)&m->m_limits +
					lim_defs[i].off) = lim_defs[i].def;
	if (!schema_get(root, "limits", &lv))
		return;
	if (!schema_is(lv, json_type_object)) {
		schema_err(p, lv, root, "limits", "must be a mapping");
		return;
	}
	schema_keys(p, lv, "limits", keys);
	for (i = 0; i < nitems(lim_defs); i++) {
		/* Above the ceiling is clamped to it, below the floor refused.
		 */
		if (schema_int(p, lv, lim_defs[i].key, "limits",
			(long long)lim_defs[i].min, INT64_MAX, &x) != 1)
			continue;
		f = (unsigned long long *)((char *)&m->m_limits +
					   lim_defs[i].off);
		*f = (unsigned long long)x > lim_defs[i].max
			 ? lim_defs[i].max
			 : (unsigned long long)x;
	}
}

/* A list of short strings: paths 1, absolute paths; paths 2, absolute or
 * home-relative ("~/x") paths.  Always allocated (empty if absent) unless
 * refused. */
static char **
mp_strlist(struct schema *p, struct json_object *obj, const char *key,
    const char *path, size_t maxn, size_t maxc, int paths, size_t *np)
{
	struct json_object *v, *el;
	const char *s;
	char **out;
	size_t i, n = 0;

	*np = 0;
	if (schema_get(obj, key, &v) &&
	    (!schema_is(v, json_type_array) ||
		(n = json_object_array_length(v)) > maxn)) {
		schema_err(p, v, obj, path, "must be a short list");
		return NULL;
	}
	if ((out = calloc(n + 1, sizeof(char *))) == NULL) {
		p->oom = 1;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(v, i);
		if ((s = mp_strval(p, el, v, path, 1, maxc, S_NOCTL)) == NULL)
			continue;
		if (paths == 2 && s[0] == '~' && s[1] == '/' && s[2] != '\0' &&
		    path_ok(s + 1))
			out[(*np)++] = schema_dup(p, s);
		else if (paths && !path_ok(s))
			schema_err(p, el, v, path,
			    paths == 2 ? "must be an absolute or ~/ path "
					 "without .."
				       : "must be an absolute path without ..");
		else
			out[(*np)++] = schema_dup(p, s);
	}
	return out;
}

static void
mp_sandbox(struct schema *p, struct manifest *m, struct json_object *root)
{
	static const char *const keys[] = {"network", "isolation", "readRoots",
	    "writeRoots", "required", "worktrees", NULL};
	static const char *const nets[] = {"allow", "none", "proxy", NULL};
	static const char *const isos[] = {"landlock", "namespace", NULL};
	struct json_object *sb;
	struct mf_sandbox *s = &m->m_sandbox;

	s->sb_required = 1;	     /* SBX-5: never silently weaker */
	s->sb_network = MF_NET_NONE; /* SBX-3: allow only where written */
	if (!schema_get(root, "sandbox", &sb)) {
		s->sb_read_roots =
		    mp_strlist(p, root, "", "", 0, 0, 1, &s->sb_nread);
		s->sb_write_roots =
		    mp_strlist(p, root, "", "", 0, 0, 1, &s->sb_nwrite);
		return;
	}
	if (!schema_is(sb, json_type_object)) {
		schema_err(p, sb, root, "sandbox", "must be a mapping");
		return;
	}
	s->sb_present = 1;
	schema_keys(p, sb, "sandbox", keys);
	s->sb_network = (enum mf_network)mp_enum(
	    p, sb, "network", "sandbox.network", nets, MF_NET_NONE);
	s->sb_isolation = (enum mf_isolation)mp_enum(
	    p, sb, "isolation", "sandbox.isolation", isos, MF_ISO_LANDLOCK);
	s->sb_read_roots = mp_strlist(p, sb, "readRoots", "sandbox.readRoots",
	    LIM_ROOTS_MAX, LIM_PATH_MAX, 2, &s->sb_nread);
	s->sb_write_roots =
	    mp_strlist(p, sb, "writeRoots", "sandbox.writeRoots", LIM_ROOTS_MAX,
		LIM_PATH_MAX, 2, &s->sb_nwrite);
	s->sb_required = schema_bool(p, sb, "required", "sandbox.required", 1);
	s->sb_worktrees =
	    schema_bool(p, sb, "worktrees", "sandbox.worktrees", 0);
}

/* SBX-6: the gate's policy, validated by policy/gate.c (defaults if absent). */
static void
mp_commands(struct schema *p, struct manifest *m, struct json_object *root)
{
	struct json_object *node = NULL;
	size_t n = 0;

	(void)schema_get(root, "commands", &node);
	if (gate_policy_parse(node, &m->m_commands,
		p->n < p->max ? p->errs + p->n : NULL,
		p->n < p->max ? p->max - p->n : 0, &n) == -1 &&
	    n == 0)
		n = 1; /* refused without a problem it could record */
	p->n += n;
}

/*
 * SP-15: capabilities as a list of names, or as agentic-os writes them, a
 * mapping of name to true/false (the true ones are kept).
 */
static void
mp_capabilities(struct schema *p, struct manifest *m, struct json_object *root)
{
	struct json_object *v;
	char path[LIM_CAPABILITY_MAX + 16];
	size_t n = 0;

	if (!schema_get(root, "capabilities", &v) ||
	    !schema_is(v, json_type_object)) {
		m->m_capabilities = mp_strlist(p, root, "capabilities",
		    "capabilities", LIM_CAPABILITIES_MAX, LIM_CAPABILITY_MAX, 0,
		    &m->m_ncapabilities);
		return;
	}
	if ((size_t)json_object_object_length(v) > LIM_CAPABILITIES_MAX) {
		schema_err(p, v, root, "capabilities", "must be a short list");
		return;
	}
	if ((m->m_capabilities = calloc(
		 (size_t)json_object_object_length(v) + 1, sizeof(char *))) ==
	    NULL) {
		p->oom = 1;
		return;
	}
	json_object_object_foreach (v, k, on) {
		if (!schema_token_ok(k, LIM_CAPABILITY_MAX)) {
			schema_errc(p, on, v, "capabilities", "invalid",
			    "must name capabilities with plain names");
			continue;
		}
		snprintf(path, sizeof(path), "capabilities.%s", k);
		if (!schema_is(on, json_type_boolean))
			schema_errc(p, on, v, path, "wrong-type",
			    "must be true or false");
		else if (json_object_get_boolean(on))
			m->m_capabilities[n++] = schema_dup(p, k);
	}
	m->m_ncapabilities = n;
}

/*
 * Keys of the agentic-os schema that cordon does not act on: accepted
 * whatever they hold, and listed for `cordon check` to warn about.  Any
 * other unknown key is refused.
 */
static const char *const ignored_keys[] = {"postRunUsage", NULL};

static void
mp_ignored(struct manifest *m, struct json_object *root)
{
	struct json_object *v;
	size_t i;

	for (i = 0; ignored_keys[i] != NULL && m->m_nignored < MF_IGNORED_MAX;
	     i++)
		if (schema_get(root, ignored_keys[i], &v)) {
			m->m_ignored[m->m_nignored].ig_key = ignored_keys[i];
			(void)yaml_mark(v, &m->m_ignored[m->m_nignored].ig_line,
			    &m->m_ignored[m->m_nignored].ig_col);
			m->m_nignored++;
		}
}

static const char *const top_keys[] = {"name", "displayName", "description",
    "transport", "transportConfig", "capabilities", "healthProbe", "actions",
    "secrets", "promptVia", "limits", "sandbox", "commands", "postRunUsage",
    "egress", "login", NULL};
static const char *const transports[] = {
    "subprocess", "streamJson", "codexJson", "geminiJson", NULL};
static const char *const prompt_vias[] = {"argv", "stdin", NULL};

static int
mp_parse(struct json_object *root, struct manifest *out,
    struct policy_err *errs, size_t maxerrs, size_t *nerrs, int keep)
{
	struct schema p = SCHEMA_INIT(errs, maxerrs);
	struct manifest *m = out;
	struct json_object *v;

	memset(m, 0, sizeof(*m));
	if (!schema_is(root, json_type_object)) {
		schema_err(&p, root, NULL, "", "manifest must be a mapping");
		goto done;
	}
	schema_keys(&p, root, "", top_keys);
	m->m_name =
	    mp_str(&p, root, "name", "name", 1, 1, LIM_NAME_MAX, S_NOCTL);
	if (m->m_name != NULL && !mp_name_ok(m->m_name, LIM_NAME_MAX)) {
		(void)schema_get(root, "name", &v);
		schema_err(&p, v, root, "name",
		    "must match ^[a-z0-9][a-z0-9-]{0,63}$");
	}
	m->m_display_name = mp_str(&p, root, "displayName", "displayName", 0, 1,
	    LIM_DISPLAY_NAME_MAX, S_NOCTL);
	m->m_description = mp_str(&p, root, "description", "description", 0, 0,
	    LIM_DESCRIPTION_MAX, S_TEXT);
	if (!schema_get(root, "transport", &v))
		schema_err(&p, NULL, root, "transport", "missing");
	m->m_transport = (enum mf_transport)mp_enum(
	    &p, root, "transport", "transport", transports, MF_SUBPROCESS);
	m->m_prompt_via = (enum mf_prompt_via)mp_enum(
	    &p, root, "promptVia", "promptVia", prompt_vias, MF_PROMPT_ARGV);
	/* secrets first: args and env are checked against the mapping */
	mp_secrets(&p, m, root);
	mp_transport_config(&p, m, root);
	mp_capabilities(&p, m, root);
	mp_ignored(m, root);
	mp_probe(&p, m, root);
	mp_actions(&p, m, root);
	mp_limits(&p, m, root);
	mp_sandbox(&p, m, root);
	mf_egress_parse(&p, m, root);
	mp_commands(&p, m, root);
	/* SBX-9: the CLI's own login command, for `cordon agent login`. */
	if (schema_get(root, "login", &v))
		m->m_login = mp_command(&p, m, v, root, "login", &m->m_nlogin);
done:
	if (schema_finish(&p, root, nerrs) == -1) {
		if (!keep)
			manifest_free(m);
		return -1;
	}
	return 0;
}

int
manifest_parse(struct json_object *root, struct manifest *out,
    struct policy_err *errs, size_t maxerrs, size_t *nerrs)
{
	return mp_parse(root, out, errs, maxerrs, nerrs, 0);
}

int
manifest_parse_partial(struct json_object *root, struct manifest *out,
    struct policy_err *errs, size_t maxerrs, size_t *nerrs)
{
	return mp_parse(root, out, errs, maxerrs, nerrs, 1);
}

void
manifest_free(struct manifest *m)
{
	size_t i;

	if (m == NULL)
		return;
	free(m->m_name);
	free(m->m_display_name);
	free(m->m_description);
	free(m->m_bin);
	strv_free(m->m_args);
	for (i = 0; m->m_env != NULL && i < m->m_nenv; i++) {
		free(m->m_env[i].e_name);
		free(m->m_env[i].e_value);
	}
	free(m->m_env);
	free(m->m_cwd);
	gate_policy_free(&m->m_commands);
	strv_free(m->m_capabilities);
	strv_free(m->m_probe_cmd);
	strv_free(m->m_login);
	for (i = 0; i < LIM_ACTIONS_MAX; i++) {
		free(m->m_actions[i].a_id);
		free(m->m_actions[i].a_label);
		free(m->m_actions[i].a_hint);
		strv_free(m->m_actions[i].a_command);
	}
	for (i = 0; m->m_secrets != NULL && i < m->m_nsecrets; i++) {
		free(m->m_secrets[i].s_env);
		free(m->m_secrets[i].s_path);
	}
	free(m->m_secrets);
	strv_free(m->m_sandbox.sb_read_roots);
	strv_free(m->m_sandbox.sb_write_roots);
	free(m->m_egress.eg_allow);
	free(m->m_egress.eg_test);
	for (i = 0; i < m->m_egress.eg_nroutes; i++) {
		free(m->m_egress.eg_routes[i].mr_secret);
		free(m->m_egress.eg_routes[i].mr_base_env);
	}
	free(m->m_egress.eg_routes);
	memset(m, 0, sizeof(*m));
}

const struct mf_action *
manifest_action(const struct manifest *m, const char *id)
{
	size_t i;

	for (i = 0; i < m->m_nactions; i++)
		if (m->m_actions[i].a_id != NULL &&
		    strcmp(m->m_actions[i].a_id, id) == 0)
			return &m->m_actions[i];
	return NULL;
}

const char *
manifest_transport_name(enum mf_transport t)
{
	return (size_t)t < nitems(transports) - 1 ? transports[t]
						  : "subprocess";
}
