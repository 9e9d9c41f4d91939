/*
 * Missions (MI-1 ... MI-3): the strict validator of mission files
 * (missions/ID.yaml), the option schema applied to a run's options, the prompt
 * renderer and the permission gate.  Pure: no I/O, no clock, no globals;
 * allocates only into its outputs.  Error messages are fixed phrases with fixed
 * paths: no key, value or pattern of the file is ever quoted.
 */
#include <sys/types.h>

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "charset.h"
#include "argv.h"
#include "cordon_limits.h"
#include "mission.h"
#include "schema.h"
#include "text.h"
#include "unicode.h"
#include "util.h"
#include "vaultpath.h"

#define MI_OPT_NAME_MAX	  32
#define MI_ENUM_VALUE_MAX 64

/*
 * A control character: C0 (but those in allow), DEL, C1 (U+0080-U+009F,
 * UTF-8 C2 80..C2 9F) and the Unicode line/paragraph separators
 * (U+2028/U+2029, E2 80 A8/A9).  s is valid UTF-8.
 */
static int
has_ctl(const char *s, size_t len, const char *allow)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i;

	for (i = 0; i < len; i++) {
		if ((u[i] < 0x20 &&
			(u[i] == 0 || strchr(allow, s[i]) == NULL)) ||
		    u[i] == 0x7f)
			return 1;
		if (u[i] == 0xc2 && i + 1 < len && u[i + 1] >= 0x80 &&
		    u[i + 1] <= 0x9f)
			return 1;
		if (u[i] == 0xe2 && i + 2 < len && u[i + 1] == 0x80 &&
		    (u[i + 2] == 0xa8 || u[i + 2] == 0xa9))
			return 1;
	}
	return 0;
}

/* NUL-free, valid UTF-8, no control characters but those in allow. */
static int
text_ok(const char *s, size_t len, const char *allow)
{
	return strlen(s) == len && utf8_valid(s, len) &&
	       !has_ctl(s, len, allow);
}

/* A string value of minc..maxc code points; NULL (reported) if not. */
static const char *
ms_strval(struct schema *p, struct json_object *v, struct json_object *parent,
    const char *path, size_t minc, size_t maxc, const char *allow)
{
	const char *s;
	size_t len;

	if ((s = schema_string(p, v, parent, path, &len)) == NULL)
		return NULL;
	if (!text_ok(s, len, allow)) {
		schema_err(p, v, parent, path,
		    "must be UTF-8 without NUL or control characters");
		return NULL;
	}
	if (schema_chars(p, v, parent, path, s, len, minc, maxc) == -1)
		return NULL;
	return s;
}

static char *
ms_str(struct schema *p, struct json_object *obj, const char *key,
    const char *path, int required, size_t minc, size_t maxc)
{
	struct json_object *v;
	const char *s;

	if (!schema_key(p, obj, key, path, required, &v) ||
	    (s = ms_strval(p, v, obj, path, minc, maxc, "")) == NULL)
		return NULL;
	return schema_dup(p, s);
}

/* ^[a-z][a-zA-Z0-9_]{0,31}$ over [s, s + len). */
static int
opt_name_ok(const char *s, size_t len)
{
	return charset_shape(s, len, "a-z", "a-zA-Z0-9_", 1, MI_OPT_NAME_MAX);
}

/* ^[a-z0-9][a-z0-9.-]{0,63}$ */
static int
event_ok(const char *s)
{
	return charset_shape(
	    s, strlen(s), "a-z0-9", "a-z0-9.-", 1, MI_EVENT_MAX);
}

/* A string option value: 1..maxLength chars, no control characters,
 * matching the pattern.  1 if acceptable. */
static int
str_value_ok(const struct mi_option *o, const char *s, size_t len)
{
	regex_t re;
	size_t n;
	int rc;

	if (len > (size_t)o->o_max_length * 4 || !text_ok(s, len, ""))
		return 0;
	n = uni_utf8_chars(s, len);
	if (n < 1 || n > (size_t)o->o_max_length)
		return 0;
	if (o->o_pattern == NULL)
		return 1;
	if (regcomp(&re, o->o_pattern, REG_EXTENDED | REG_NOSUB) != 0)
		return 0;
	rc = regexec(&re, s, 0, NULL, 0);
	regfree(&re);
	return rc == 0;
}

/* A value of option o: a new json object of its type, or NULL. */
static struct json_object *
opt_value(const struct mi_option *o, struct json_object *v)
{
	const char *s;
	size_t i, len;
	long long x;

	switch (o->o_type) {
	case MI_OPT_STRING:
	case MI_OPT_ENUM:
		if (!schema_is(v, json_type_string))
			return NULL;
		s = json_object_get_string(v);
		len = (size_t)json_object_get_string_len(v);
		if (o->o_type == MI_OPT_STRING) {
			if (!str_value_ok(o, s, len))
				return NULL;
		} else {
			if (strlen(s) != len)
				return NULL;
			for (i = 0; i < o->o_nvalues; i++)
				if (strcmp(o->o_values[i], s) == 0)
					break;
			if (i == o->o_nvalues)
				return NULL;
		}
		return json_object_new_string_len(s, (int)len);
	case MI_OPT_INTEGER:
		if (!schema_is(v, json_type_int))
			return NULL;
		x = (long long)json_object_get_int64(v);
		/* json-c saturates out-of-range numbers at the int64 ends */
		if (x < o->o_min || x > o->o_max || x == INT64_MAX ||
		    x == INT64_MIN)
			return NULL;
		return json_object_new_int64((int64_t)x);
	case MI_OPT_BOOLEAN:
		if (!schema_is(v, json_type_boolean))
			return NULL;
		return json_object_new_boolean(json_object_get_boolean(v));
	}
	return NULL;
}

static const char *const opt_types[] = {
    "string", "integer", "boolean", "enum", NULL};
static const char *const keys_string[] = {
    "type", "maxLength", "pattern", "default", NULL};
static const char *const keys_integer[] = {
    "type", "min", "max", "default", NULL};
static const char *const keys_boolean[] = {"type", "default", NULL};
static const char *const keys_enum[] = {"type", "values", "default", NULL};

static void
ms_enum_values(struct schema *p, struct mi_option *o, struct json_object *ov)
{
	struct json_object *v, *el;
	const char *s;
	size_t i, j, n;

	if (!schema_key(p, ov, "values", "options.values", 1, &v))
		return;
	if (!schema_is(v, json_type_array) ||
	    (n = json_object_array_length(v)) == 0 || n > MI_ENUM_MAX) {
		schema_err(p, v, ov, "options.values",
		    "must be a list of 1 to 32 values");
		return;
	}
	if ((o->o_values = calloc(n, sizeof(char *))) == NULL) {
		p->oom = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(v, i);
		if ((s = ms_strval(p, el, v, "options.values", 1,
			 MI_ENUM_VALUE_MAX, "")) == NULL)
			continue;
		if (!schema_token_ok(s, MI_ENUM_VALUE_MAX)) {
			schema_err(p, el, v, "options.values",
			    "must match ^[A-Za-z0-9._-]{1,64}$");
			continue;
		}
		for (j = 0; j < o->o_nvalues; j++)
			if (strcmp(o->o_values[j], s) == 0)
				break;
		if (j < o->o_nvalues) {
			schema_err(
			    p, el, v, "options.values", "duplicate value");
			continue;
		}
		if ((o->o_values[o->o_nvalues] = schema_dup(p, s)) != NULL)
			o->o_nvalues++;
	}
}

/* A string option's keys: maxLength, pattern (MI-1). */
static void
ms_opt_string(struct schema *p, struct mi_option *o, struct json_object *ov)
{
	struct json_object *v;
	const char *s, *why;
	long long x;

	schema_keys(p, ov, "options", keys_string);
	if (schema_key(p, ov, "maxLength", "options.maxLength", 1, &v) &&
	    schema_intval(
		p, v, ov, "options.maxLength", 1, MI_STRING_MAX, &x) == 0)
		o->o_max_length = (long)x;
	if (schema_get(ov, "pattern", &v) &&
	    (s = ms_strval(
		 p, v, ov, "options.pattern", 1, MI_PATTERN_MAX, "")) != NULL) {
		if ((why = mission_pattern_refusal(s)) != NULL)
			schema_err(p, v, ov, "options.pattern", why);
		else
			o->o_pattern = schema_dup(p, s);
	}
}

/* One options.<name> entry; 0 if it is usable. */
static int
ms_option(struct schema *p, struct mi_option *o, const char *name,
    struct json_object *ov, struct json_object *opts)
{
	struct json_object *v;
	const char *s;
	size_t before = p->n;
	int t;

	if (!opt_name_ok(name, strlen(name))) {
		schema_err(p, ov, opts, "options",
		    "option names must match ^[a-z][a-zA-Z0-9_]{0,31}$");
		return -1;
	}
	if ((o->o_name = schema_dup(p, name)) == NULL)
		return -1;
	if (!schema_is(ov, json_type_object)) {
		schema_err(
		    p, ov, opts, "options", "each option must be a mapping");
		return -1;
	}
	if (!schema_key(p, ov, "type", "options.type", 1, &v))
		return -1;
	if ((s = ms_strval(p, v, ov, "options.type", 1, 16, "")) == NULL)
		return -1;
	for (t = 0; opt_types[t] != NULL; t++)
		if (strcmp(opt_types[t], s) == 0)
			break;
	if (opt_types[t] == NULL) {
		schema_err(p, v, ov, "options.type",
		    "must be string, integer, boolean or enum");
		return -1;
	}
	o->o_type = (enum mi_opt_type)t;
	switch (o->o_type) {
	case MI_OPT_STRING:
		ms_opt_string(p, o, ov);
		break;
	case MI_OPT_INTEGER:
		schema_keys(p, ov, "options", keys_integer);
		if (schema_key(p, ov, "min", "options.min", 1, &v))
			(void)schema_intval(p, v, ov, "options.min",
			    INT64_MIN + 1, INT64_MAX - 1, &o->o_min);
		if (schema_key(p, ov, "max", "options.max", 1, &v) &&
		    schema_intval(p, v, ov, "options.max", INT64_MIN + 1,
			INT64_MAX - 1, &o->o_max) == 0 &&
		    p->n == before && o->o_min > o->o_max)
			schema_err(p, v, ov, "options.max", "must be >= min");
		break;
	case MI_OPT_BOOLEAN:
		schema_keys(p, ov, "options", keys_boolean);
		break;
	case MI_OPT_ENUM:
		schema_keys(p, ov, "options", keys_enum);
		ms_enum_values(p, o, ov);
		break;
	}
	if (p->n != before)
		return -1;
	if (schema_get(ov, "default", &v)) {
		if ((o->o_default = opt_value(o, v)) == NULL) {
			schema_err(p, v, ov, "options.default",
			    "does not satisfy the option");
			return -1;
		}
		o->o_has_default = 1;
	}
	return 0;
}

static void
ms_options(struct schema *p, struct mission *m, struct json_object *root)
{
	struct json_object *opts;
	size_t n;

	if (!schema_get(root, "options", &opts))
		return;
	if (!schema_is(opts, json_type_object)) {
		schema_err(p, opts, root, "options", "must be a mapping");
		return;
	}
	n = (size_t)json_object_object_length(opts);
	if (n > MI_OPTIONS_MAX) {
		schema_err(p, opts, root, "options", "at most 16 options");
		return;
	}
	json_object_object_foreach (opts, k, ov) {
		(void)ms_option(p, &m->mi_opts[m->mi_nopts], k, ov, opts);
		m->mi_nopts++; /* freed by count, used or not */
	}
}

static const struct mi_option *
opt_find(const struct mission *m, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < m->mi_nopts; i++)
		if (m->mi_opts[i].o_name != NULL &&
		    strlen(m->mi_opts[i].o_name) == len &&
		    memcmp(m->mi_opts[i].o_name, name, len) == 0)
			return &m->mi_opts[i];
	return NULL;
}

/* The template's placeholders: NULL if each is {declared option}. */
static const char *
template_refusal(const struct mission *m, const char *s)
{
	const char *q;

	for (; *s != '\0'; s++) {
		if (*s == '}')
			return "a lone } is refused (no escapes)";
		if (*s != '{')
			continue;
		for (q = s + 1; *q != '\0' && *q != '}' && *q != '{'; q++)
			;
		if (*q != '}' || !opt_name_ok(s + 1, (size_t)(q - s - 1)))
			return "{ must open a {option} placeholder "
			       "(no escapes)";
		if (opt_find(m, s + 1, (size_t)(q - s - 1)) == NULL)
			return "placeholder names no declared option";
		s = q;
	}
	return NULL;
}

static void
ms_prompt(struct schema *p, struct mission *m, struct json_object *root)
{
	struct json_object *v;
	const char *s, *why;

	if (!schema_key(p, root, "prompt", "prompt", 1, &v))
		return;
	if ((s = ms_strval(p, v, root, "prompt", 1, MI_PROMPT_MAX, "\n\t")) ==
	    NULL)
		return;
	if (strlen(s) > MI_PROMPT_MAX) {
		schema_err(
		    p, v, root, "prompt", "length must be at most 16384 bytes");
		return;
	}
	if ((why = template_refusal(m, s)) != NULL) {
		schema_err(p, v, root, "prompt", why);
		return;
	}
	m->mi_prompt = schema_dup(p, s);
}

static const char *const vault_keys[] = {
    "type", "folder", "filenameHint", NULL};
static const char *const event_keys[] = {"type", "event", NULL};

static void
ms_output(struct schema *p, struct mission *m, struct mi_output *u,
    struct json_object *uv, struct json_object *arr)
{
	struct json_object *v;
	const char *s;
	char name[VAULT_HINT_MAX + 4];

	if (!schema_is(uv, json_type_object)) {
		schema_err(
		    p, uv, arr, "outputs", "each output must be a mapping");
		return;
	}
	if (!schema_key(p, uv, "type", "outputs.type", 1, &v))
		return;
	if ((s = ms_strval(p, v, uv, "outputs.type", 1, 16, "")) == NULL)
		return;
	if (strcmp(s, "vault-note") == 0) {
		u->u_type = MI_OUT_VAULT_NOTE;
		schema_keys(p, uv, "outputs", vault_keys);
		if (schema_key(p, uv, "folder", "outputs.folder", 1, &v) &&
		    (s = ms_strval(p, v, uv, "outputs.folder", 1,
			 VAULT_PATH_MAX, "")) != NULL) {
			if (m->mi_id != NULL && !vaultpath_mission_folder_ok(
						    m->mi_id, s, strlen(s)))
				schema_err(p, v, uv, "outputs.folder",
				    "must be 00_Inbox/cordon/missions/<id> "
				    "or beneath it");
			else if (m->mi_id != NULL)
				u->u_folder = schema_dup(p, s);
		}
		if (schema_key(
			p, uv, "filenameHint", "outputs.filenameHint", 1, &v) &&
		    (s = ms_strval(p, v, uv, "outputs.filenameHint", 1,
			 VAULT_HINT_MAX, "")) != NULL) {
			if (vaultpath_hint_name(
				s, strlen(s), name, sizeof(name)) == -1)
				schema_err(p, v, uv, "outputs.filenameHint",
				    "must be [A-Za-z0-9._-], not starting "
				    "with '.'");
			else
				u->u_hint = schema_dup(p, s);
		}
	} else if (strcmp(s, "event") == 0) {
		u->u_type = MI_OUT_EVENT;
		schema_keys(p, uv, "outputs", event_keys);
		if (schema_key(p, uv, "event", "outputs.event", 1, &v) &&
		    (s = ms_strval(p, v, uv, "outputs.event", 1, MI_EVENT_MAX,
			 "")) != NULL) {
			if (!event_ok(s))
				schema_err(p, v, uv, "outputs.event",
				    "must match ^[a-z0-9][a-z0-9.-]{0,63}$");
			else
				u->u_event = schema_dup(p, s);
		}
	} else
		schema_err(
		    p, v, uv, "outputs.type", "must be vault-note or event");
}

static void
ms_outputs(struct schema *p, struct mission *m, struct json_object *root)
{
	struct json_object *v;
	size_t i, n;

	if (!schema_key(p, root, "outputs", "outputs", 1, &v))
		return;
	if (!schema_is(v, json_type_array) ||
	    (n = json_object_array_length(v)) == 0 || n > MI_OUTPUTS_MAX) {
		schema_err(
		    p, v, root, "outputs", "must be a list of 1 to 8 outputs");
		return;
	}
	for (i = 0; i < n; i++)
		ms_output(
		    p, m, &m->mi_outs[i], json_object_array_get_idx(v, i), v);
	m->mi_nouts = n;
}

static const char *const perm_names[] = {
    "vault-write", "event-emit", "external-api", NULL};

static void
ms_permissions(struct schema *p, struct mission *m, struct json_object *root)
{
	struct json_object *v, *el;
	const char *s;
	unsigned int bit;
	size_t i, n;
	int k;

	if (!schema_get(root, "permissions", &v))
		return;
	if (!schema_is(v, json_type_array) ||
	    (n = json_object_array_length(v)) > 3) {
		schema_err(p, v, root, "permissions",
		    "must be a list of at most 3 permissions");
		return;
	}
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(v, i);
		if ((s = ms_strval(p, el, v, "permissions", 1, 16, "")) == NULL)
			continue;
		for (k = 0; perm_names[k] != NULL; k++)
			if (strcmp(perm_names[k], s) == 0)
				break;
		if (perm_names[k] == NULL) {
			schema_err(p, el, v, "permissions",
			    "must be vault-write, event-emit or external-api");
			continue;
		}
		bit = 1u << k;
		if (m->mi_perms & bit)
			schema_err(
			    p, el, v, "permissions", "permission named twice");
		m->mi_perms |= bit;
	}
}

static const char *const trigger_keys[] = {"manual", "cron", "timezone", NULL};

static void
ms_trigger(struct schema *p, struct mission *m, struct json_object *root)
{
	struct json_object *tr, *v;
	const char *s, *why;
	char msg[96];

	m->mi_manual = 1;
	if (!schema_get(root, "trigger", &tr))
		goto tz;
	if (!schema_is(tr, json_type_object)) {
		schema_err(p, tr, root, "trigger", "must be a mapping");
		goto tz;
	}
	schema_keys(p, tr, "trigger", trigger_keys);
	m->mi_manual = schema_bool(p, tr, "manual", "trigger.manual", 1);
	if (schema_get(tr, "cron", &v) &&
	    (s = ms_strval(
		 p, v, tr, "trigger.cron", 1, MI_CRON_TEXT_MAX, "")) != NULL) {
		if (cron_parse(s, &m->mi_cron, &why) == -1) {
			snprintf(msg, sizeof(msg), "%s", why);
			schema_err(p, v, tr, "trigger.cron", msg);
		} else {
			m->mi_has_cron = 1;
			m->mi_cron_text = schema_dup(p, s);
		}
	}
	if (schema_get(tr, "timezone", &v) &&
	    (s = ms_strval(p, v, tr, "trigger.timezone", 1, MI_TZ_MAX, "")) !=
		NULL) {
		if (!mission_tz_name_ok(s))
			schema_err(p, v, tr, "trigger.timezone",
			    "must be an IANA zone name such as "
			    "Europe/Berlin");
		else
			m->mi_tz = schema_dup(p, s);
	}
	if (!m->mi_manual && !schema_get(tr, "cron", NULL))
		schema_err(
		    p, tr, root, "trigger", "needs manual: true or a cron");
tz:
	if (m->mi_tz == NULL)
		m->mi_tz = schema_dup(p, "UTC");
}

static const char *const top_keys[] = {"id", "label", "agent", "prompt",
    "options", "outputs", "permissions", "trigger", "timeoutMs", "catchUp",
    NULL};

int
mission_parse(struct json_object *root, struct mission *out,
    struct policy_err *errs, size_t maxerrs, size_t *nerrs)
{
	struct schema p = SCHEMA_INIT(errs, maxerrs);
	struct mission *m = out;
	struct json_object *v;
	long long x;

	memset(m, 0, sizeof(*m));
	if (!schema_is(root, json_type_object)) {
		schema_err(&p, root, NULL, "", "mission must be a mapping");
		goto done;
	}
	schema_keys(&p, root, "", top_keys);
	m->mi_id = ms_str(&p, root, "id", "id", 1, 1, VAULT_NAME_MAX);
	if (m->mi_id != NULL &&
	    !vaultpath_name_ok(m->mi_id, strlen(m->mi_id))) {
		(void)schema_get(root, "id", &v);
		schema_err(
		    &p, v, root, "id", "must match ^[a-z0-9][a-z0-9-]{0,63}$");
		free(m->mi_id);
		m->mi_id = NULL;
	}
	m->mi_label = ms_str(&p, root, "label", "label", 1, 1, MI_LABEL_MAX);
	m->mi_agent = ms_str(&p, root, "agent", "agent", 1, 1, VAULT_NAME_MAX);
	if (m->mi_agent != NULL &&
	    !vaultpath_name_ok(m->mi_agent, strlen(m->mi_agent))) {
		(void)schema_get(root, "agent", &v);
		schema_err(&p, v, root, "agent",
		    "must match ^[a-z0-9][a-z0-9-]{0,63}$");
	}
	ms_options(&p, m, root); /* before the prompt: placeholders */
	ms_prompt(&p, m, root);
	ms_outputs(&p, m, root);
	ms_permissions(&p, m, root);
	ms_trigger(&p, m, root);
	m->mi_timeout_ms = MI_TIMEOUT_DEF_MS;
	if (schema_int(&p, root, "timeoutMs", "timeoutMs", 1, MI_TIMEOUT_MAX_MS,
		&x) == 1)
		m->mi_timeout_ms = (long)x;
	m->mi_catch_up = schema_bool(&p, root, "catchUp", "catchUp", 0);
done:
	if (schema_finish(&p, root, nerrs) == -1) {
		mission_free(m);
		return -1;
	}
	return 0;
}

void
mission_free(struct mission *m)
{
	size_t i, j;

	if (m == NULL)
		return;
	free(m->mi_id);
	free(m->mi_label);
	free(m->mi_agent);
	free(m->mi_prompt);
	for (i = 0; i < m->mi_nopts && i < MI_OPTIONS_MAX; i++) {
		free(m->mi_opts[i].o_name);
		free(m->mi_opts[i].o_pattern);
		for (j = 0; j < m->mi_opts[i].o_nvalues; j++)
			free(m->mi_opts[i].o_values[j]);
		free(m->mi_opts[i].o_values);
		if (m->mi_opts[i].o_default != NULL)
			json_object_put(m->mi_opts[i].o_default);
	}
	for (i = 0; i < m->mi_nouts && i < MI_OUTPUTS_MAX; i++) {
		free(m->mi_outs[i].u_folder);
		free(m->mi_outs[i].u_hint);
		free(m->mi_outs[i].u_event);
	}
	free(m->mi_cron_text);
	free(m->mi_tz);
	memset(m, 0, sizeof(*m));
}

int
mission_options(const struct mission *m, struct json_object *opts,
    struct json_object **resolved)
{
	const struct mi_option *o;
	struct json_object *res, *v, *nv;
	size_t i;

	*resolved = NULL;
	if (m == NULL ||
	    (opts != NULL && !json_object_is_type(opts, json_type_object)))
		return -1;
	if (opts != NULL) {
		if ((size_t)json_object_object_length(opts) > m->mi_nopts)
			return -1;
		json_object_object_foreach (opts, k, ov) {
			(void)ov;
			if (opt_find(m, k, strlen(k)) == NULL)
				return -1;
		}
	}
	if ((res = json_object_new_object()) == NULL)
		return -1;
	for (i = 0; i < m->mi_nopts; i++) {
		o = &m->mi_opts[i];
		if (opts != NULL &&
		    json_object_object_get_ex(opts, o->o_name, &v))
			nv = opt_value(o, v);
		else if (o->o_has_default)
			nv = opt_value(o, o->o_default);
		else
			nv = NULL;
		if (nv == NULL ||
		    json_object_object_add(res, o->o_name, nv) != 0) {
			json_object_put(nv);
			json_object_put(res);
			return -1;
		}
	}
	*resolved = res;
	return 0;
}

/* The text of a resolved value into buf (integers, booleans) or *s. */
static int
value_text(const struct mi_option *o, struct json_object *v, char *buf,
    size_t bufsz, const char **s, size_t *len)
{
	int n;

	switch (o->o_type) {
	case MI_OPT_STRING:
	case MI_OPT_ENUM:
		if (!schema_is(v, json_type_string))
			return -1;
		*s = json_object_get_string(v);
		*len = (size_t)json_object_get_string_len(v);
		return strlen(*s) == *len ? 0 : -1;
	case MI_OPT_INTEGER:
		if (!schema_is(v, json_type_int))
			return -1;
		n = snprintf(
		    buf, bufsz, "%lld", (long long)json_object_get_int64(v));
		if (n < 0 || (size_t)n >= bufsz)
			return -1;
		*s = buf;
		*len = (size_t)n;
		return 0;
	case MI_OPT_BOOLEAN:
		if (!schema_is(v, json_type_boolean))
			return -1;
		*s = json_object_get_boolean(v) ? "true" : "false";
		*len = strlen(*s);
		return 0;
	}
	return -1;
}

/* One pass over the template: the rendered length, and the text into
 * out when out != NULL.  -1 on anything off. */
static int
render_pass(const struct mission *m, struct json_object *resolved, char *out,
    size_t *total)
{
	const struct mi_option *o;
	struct json_object *v;
	const char *t, *q, *s;
	char num[32];
	size_t n = 0, len;

	for (t = m->mi_prompt; *t != '\0'; t++) {
		if (*t == '}')
			return -1;
		if (*t != '{') {
			if (out != NULL)
				out[n] = *t;
			n++;
			continue;
		}
		for (q = t + 1; *q != '\0' && *q != '}' && *q != '{'; q++)
			;
		if (*q != '}' ||
		    (o = opt_find(m, t + 1, (size_t)(q - t - 1))) == NULL ||
		    !json_object_object_get_ex(resolved, o->o_name, &v) ||
		    value_text(o, v, num, sizeof(num), &s, &len) == -1)
			return -1;
		if (len > LIM_PROMPT_MAX_CHARS * 4 ||
		    n > LIM_PROMPT_MAX_CHARS * 4)
			return -1;
		if (out != NULL)
			memcpy(out + n, s, len);
		n += len;
		t = q;
	}
	if (n > (size_t)LIM_PROMPT_MAX_CHARS * 4)
		return -1;
	*total = n;
	return 0;
}

int
mission_render(
    const struct mission *m, struct json_object *resolved, char **out)
{
	size_t n, n2;
	char *buf;

	*out = NULL;
	if (m == NULL || m->mi_prompt == NULL ||
	    !schema_is(resolved, json_type_object) ||
	    render_pass(m, resolved, NULL, &n) == -1)
		return -1;
	if ((buf = malloc(n + 1)) == NULL)
		return -1;
	if (render_pass(m, resolved, buf, &n2) == -1 || n2 != n) {
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	/* API-3 prompt rules on the result: one UTF-8 string, no NUL */
	if (strlen(buf) != n || argv_prompt_ok(buf, n) == -1) {
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}

int
mission_permitted(const struct mission *m)
{
	size_t i;
	unsigned int need;

	if (m == NULL)
		return -1;
	for (i = 0; i < m->mi_nouts; i++) {
		need = m->mi_outs[i].u_type == MI_OUT_VAULT_NOTE
			   ? MI_PERM_VAULT_WRITE
			   : MI_PERM_EVENT_EMIT;
		if ((m->mi_perms & need) != need)
			return -1;
	}
	return 0;
}
