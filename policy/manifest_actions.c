/*
 * A manifest's `probe:` and `actions:` (SP-15): each a fixed argv
 * (SP-2) checked like the agent's own, with its bounds and output kind.
 * Pure: no I/O, no globals; allocates only into the manifest.
 */
#include <string.h>

#include <json-c/json.h>

#include "cordon_limits.h"
#include "manifest_parse.h"

static const char *const probe_keys[] = {
    "type", "command", "timeoutMs", "intervalSec", NULL};
static const char *const probe_types[] = {"command", NULL};

void
mp_probe(struct schema *p, struct manifest *m, struct json_object *root)
{
	struct json_object *hp, *v;
	long long x;

	m->m_probe_timeout_ms = LIM_PROBE_TIMEOUT_DEF_MS;
	m->m_probe_interval_sec = LIM_PROBE_INTERVAL_DEF_SEC;
	if (schema_get(root, "healthProbe", &hp)) {
		if (!schema_is(hp, json_type_object)) {
			schema_err(
			    p, hp, root, "healthProbe", "must be a mapping");
			return;
		}
		schema_keys(p, hp, "healthProbe", probe_keys);
		(void)mp_enum(
		    p, hp, "type", "healthProbe.type", probe_types, 0);
		if (schema_get(hp, "command", &v))
			m->m_probe_cmd = mp_command(p, m, v, hp,
			    "healthProbe.command", &m->m_nprobe_cmd);
		if (schema_int(p, hp, "timeoutMs", "healthProbe.timeoutMs", 1,
			LIM_PROBE_TIMEOUT_MAX_MS, &x) == 1)
			m->m_probe_timeout_ms = (long)x;
		if (schema_int(p, hp, "intervalSec", "healthProbe.intervalSec",
			1, LIM_PROBE_INTERVAL_MAX_SEC, &x) == 1)
			m->m_probe_interval_sec = (long)x;
	}
	if (m->m_probe_cmd == NULL && m->m_bin != NULL) {
		/* SP-18 default: [bin, --version] */
		if ((m->m_probe_cmd = calloc(3, sizeof(char *))) == NULL) {
			p->oom = 1;
			return;
		}
		m->m_probe_cmd[0] = schema_dup(p, m->m_bin);
		m->m_probe_cmd[1] = schema_dup(p, "--version");
		m->m_nprobe_cmd = 2;
	}
}

static const char *const action_keys[] = {
    "id", "label", "command", "timeoutMs", "hint", "output", NULL};
static const char *const outputs[] = {"text", "json", NULL};

static void
mp_action(struct schema *p, struct manifest *m, struct json_object *av,
    struct json_object *arr, struct mf_action *a)
{
	struct json_object *v;
	long long x;
	size_t j;

	if (!schema_is(av, json_type_object)) {
		schema_err(
		    p, av, arr, "actions", "each action must be a mapping");
		return;
	}
	schema_keys(p, av, "actions", action_keys);
	a->a_id =
	    mp_str(p, av, "id", "actions.id", 1, 1, LIM_ACTION_ID_MAX, S_NOCTL);
	if (a->a_id != NULL && !mp_name_ok(a->a_id, LIM_ACTION_ID_MAX)) {
		(void)schema_get(av, "id", &v);
		schema_err(p, v, av, "actions.id",
		    "must match ^[a-z0-9][a-z0-9-]{0,31}$");
	}
	a->a_label = mp_str(p, av, "label", "actions.label", 1, 1,
	    LIM_ACTION_LABEL_MAX, S_NOCTL);
	a->a_hint = mp_str(
	    p, av, "hint", "actions.hint", 0, 1, LIM_ACTION_HINT_MAX, S_NOCTL);
	if (schema_get(av, "command", &v))
		a->a_command =
		    mp_command(p, m, v, av, "actions.command", &a->a_ncommand);
	else
		schema_err(p, NULL, av, "actions.command", "missing");
	a->a_timeout_ms = LIM_ACTION_TIMEOUT_DEF_MS;
	if (schema_int(p, av, "timeoutMs", "actions.timeoutMs", 1,
		LIM_ACTION_TIMEOUT_MAX_MS, &x) == 1)
		a->a_timeout_ms = (long)x;
	a->a_output = (enum mf_output)mp_enum(
	    p, av, "output", "actions.output", outputs, MF_OUT_TEXT);
	/* duplicate ids */
	for (j = 0; a->a_id != NULL && &m->m_actions[j] != a; j++)
		if (m->m_actions[j].a_id != NULL &&
		    strcmp(m->m_actions[j].a_id, a->a_id) == 0) {
			(void)schema_get(av, "id", &v);
			schema_err(
			    p, v, av, "actions.id", "duplicate action id");
			break;
		}
}

void
mp_actions(struct schema *p, struct manifest *m, struct json_object *root)
{
	struct json_object *v;
	size_t i, n;

	if (!schema_get(root, "actions", &v))
		return;
	if (!schema_is(v, json_type_array)) {
		schema_err(p, v, root, "actions", "must be a list");
		return;
	}
	n = json_object_array_length(v);
	if (n > LIM_ACTIONS_MAX) {
		schema_err(p, v, root, "actions", "at most 10 actions");
		n = LIM_ACTIONS_MAX;
	}
	for (i = 0; i < n; i++)
		mp_action(
		    p, m, json_object_array_get_idx(v, i), v, &m->m_actions[i]);
	m->m_nactions = n;
}
