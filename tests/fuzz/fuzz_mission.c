/*
 * libFuzzer target for policy/mission.c and policy/cron.c: the first
 * input byte picks a mode.  Mode 0: any YAML either validates into a
 * mission whose invariants hold (and whose options validator, renderer
 * and permission gate run on fuzz-chosen options), or fails with
 * NUL-terminated messages.  Mode 1: the rest is a run's options JSON for
 * a fixed mission.  Mode 2: the rest is a cron schedule.  Never a crash,
 * a leak or an unbounded regcomp.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cordon_limits.h"
#include "json.h"
#include "mission.h"
#include "yamljson.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char fixed[] =
    "id: f\nlabel: F\nagent: a\n"
    "prompt: \"{s} {n} {b} {e}\"\n"
    "options:\n"
    "  s: {type: string, maxLength: 64, pattern: \"^[a-z ]*(x|y)+$\"}\n"
    "  n: {type: integer, min: -3, max: 3, default: 0}\n"
    "  b: {type: boolean, default: true}\n"
    "  e: {type: enum, values: [p, q], default: p}\n"
    "outputs:\n  - {type: event, event: f}\n"
    "permissions: [event-emit]\n";

static void
check_resolved(const struct mission *m, struct json_object *res)
{
	char *out = NULL;
	size_t i;

	if ((size_t)json_object_object_length(res) != m->mi_nopts)
		abort();
	for (i = 0; i < m->mi_nopts; i++)
		if (!json_object_object_get_ex(res, m->mi_opts[i].o_name, NULL))
			abort();
	if (mission_render(m, res, &out) == 0) {
		if (out == NULL || strlen(out) == 0 ||
		    strlen(out) > (size_t)LIM_PROMPT_MAX_CHARS * 4)
			abort();
		free(out);
	} else if (out != NULL)
		abort();
}

static void
check_valid(const struct mission *m)
{
	struct json_object *res = NULL;
	size_t i;

	if (m->mi_id == NULL || m->mi_label == NULL || m->mi_agent == NULL ||
	    m->mi_prompt == NULL || m->mi_tz == NULL ||
	    m->mi_nopts > MI_OPTIONS_MAX || m->mi_nouts == 0 ||
	    m->mi_nouts > MI_OUTPUTS_MAX || m->mi_timeout_ms < 1 ||
	    m->mi_timeout_ms > MI_TIMEOUT_MAX_MS ||
	    (!m->mi_manual && !m->mi_has_cron) ||
	    (m->mi_has_cron && m->mi_cron_text == NULL))
		abort();
	for (i = 0; i < m->mi_nouts; i++)
		if (m->mi_outs[i].u_type == MI_OUT_VAULT_NOTE
			? m->mi_outs[i].u_folder == NULL ||
			      m->mi_outs[i].u_hint == NULL
			: m->mi_outs[i].u_event == NULL)
			abort();
	for (i = 0; i < m->mi_nopts; i++)
		if (m->mi_opts[i].o_name == NULL ||
		    (m->mi_opts[i].o_has_default &&
			m->mi_opts[i].o_default == NULL))
			abort();
	(void)mission_permitted(m);
	/* defaults only (a cron run) */
	if (mission_options(m, NULL, &res) == 0) {
		check_resolved(m, res);
		json_object_put(res);
	} else if (res != NULL)
		abort();
}

static void
fuzz_yaml(const uint8_t *data, size_t len)
{
	struct policy_err errs[8];
	struct json_object *o;
	struct yaml_err yerr;
	struct mission m;
	size_t i, n = 0;

	if ((o = yaml_load_buf((const char *)data, len, &yerr)) == NULL)
		return;
	if (mission_parse(o, &m, errs, 8, &n) == 0) {
		if (n != 0)
			abort();
		check_valid(&m);
		mission_free(&m);
	} else {
		if (n == 0 || m.mi_id != NULL || m.mi_nopts != 0)
			abort();
		for (i = 0; i < n && i < 8; i++)
			if (memchr(errs[i].pe_msg, '\0',
				sizeof(errs[i].pe_msg)) == NULL)
				abort();
	}
	json_object_put(o);
}

static void
fuzz_options(const uint8_t *data, size_t len)
{
	static struct mission m;
	static int loaded;
	struct json_object *o, *r, *res = NULL;
	struct yaml_err yerr;
	size_t n;

	if (!loaded) {
		if ((r = yaml_load_buf(fixed, strlen(fixed), &yerr)) == NULL ||
		    mission_parse(r, &m, NULL, 0, &n) != 0)
			abort();
		json_object_put(r);
		loaded = 1;
	}
	if ((o = json_parse_object((const char *)data, len, 8)) == NULL)
		return;
	if (mission_options(&m, o, &res) == 0) {
		check_resolved(&m, res);
		json_object_put(res);
	} else if (res != NULL)
		abort();
	json_object_put(o);
}

static void
fuzz_cron(const uint8_t *data, size_t len)
{
	struct mi_cron c;
	const char *why = NULL;
	char buf[256];
	int i;

	if (len >= sizeof(buf))
		return;
	memcpy(buf, data, len);
	buf[len] = '\0';
	if (cron_parse(buf, &c, &why) == 0) {
		if (c.c_min >> 60 || c.c_hour >> 24 || (c.c_mday & 1) ||
		    (c.c_mon & 1) || (c.c_mon >> 13) || (c.c_wday >> 7) ||
		    c.c_min == 0 || c.c_wday == 0)
			abort();
		for (i = 0; i < 7; i++)
			(void)cron_match(&c, i * 9, i * 3, i * 4 + 1, i, i);
	} else if (why == NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (len == 0)
		return 0;
	switch (data[0] % 3) {
	case 0:
		fuzz_yaml(data + 1, len - 1);
		break;
	case 1:
		fuzz_options(data + 1, len - 1);
		break;
	default:
		fuzz_cron(data + 1, len - 1);
		break;
	}
	return 0;
}
