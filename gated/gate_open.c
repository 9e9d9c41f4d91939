/*
 * SBX-6: the values of a run's MSG_GATE_OPEN (its shape is the codec's):
 * a run id, an agent name, absolute paths and a `commands:` policy that
 * gate_policy_parse, the manifest's own validator, takes.  Anything else
 * refuses the whole frame.  Pure: it touches no file.
 */
#include <string.h>

#include <json-c/json.h>

#include "gated.h"
#include "json.h"
#include "manifest_parse.h"
#include "util.h"

/* An absolute path that fits, copied; -1 otherwise. */
static int
abs_copy(char *dst, size_t dstsz, const char *s)
{
	if (s[0] != '/' || strlen(s) >= dstsz)
		return -1;
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

/*
 * SBX-2: where the home's linked protected entries lead, as the spawner
 * resolved them, packed into gc_links; more than it holds refuses the
 * channel (its calls are then refused).
 */
static int
open_links(struct gate_chan *ch, struct json_object *o)
{
	struct protect_ctx *pc = &ch->gc_protect;
	struct json_object *a, *el;
	size_t i, n, used = 0;
	char *dst;

	if (!json_object_object_get_ex(o, "links", &a))
		return 0;
	if (!json_object_is_type(a, json_type_array) ||
	    (n = json_object_array_length(a)) > PROTECT_LINKS_MAX)
		return -1; /* the shape's, kept here too */
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(a, i);
		dst = ch->gc_links + used;
		if (!json_object_is_type(el, json_type_string) ||
		    abs_copy(dst, sizeof(ch->gc_links) - used,
			json_object_get_string(el)) == -1)
			return -1;
		pc->pc_links[i] = dst;
		used += strlen(dst) + 1;
	}
	pc->pc_nlinks = n;
	return 0;
}

/* SBX-2: the run's protected paths, resolved by the spawner. */
static int
open_protect(struct gate_chan *ch, struct json_object *o)
{
	struct protect_ctx *pc = &ch->gc_protect;
	struct json_object *a, *el;
	const char *s;
	size_t i, n;

	if ((s = json_shape_str(o, "home", NULL)) != NULL) {
		if (abs_copy(ch->gc_home, sizeof(ch->gc_home), s) == -1)
			return -1;
		pc->pc_home = ch->gc_home;
	}
	if ((s = json_shape_str(o, "runs", NULL)) != NULL) {
		if (abs_copy(ch->gc_runs, sizeof(ch->gc_runs), s) == -1)
			return -1;
		pc->pc_runs = ch->gc_runs;
	}
	json_object_object_get_ex(o, "protect", &a);
	n = json_object_array_length(a); /* <= PROTECT_EXTRA_MAX: the shape */
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(a, i);
		if (!json_object_is_type(el, json_type_string) ||
		    abs_copy(ch->gc_extra[i], sizeof(ch->gc_extra[i]),
			json_object_get_string(el)) == -1)
			return -1;
		pc->pc_extra[i] = ch->gc_extra[i];
	}
	pc->pc_nextra = n;
	return open_links(ch, o);
}

int
gate_open_parse(struct gate_chan *ch, struct json_object *o)
{
	struct json_object *cmds;
	const char *id, *agent;

	id = json_shape_str(o, "runId", NULL);
	agent = json_shape_str(o, "agent", NULL);
	if (!hex_lower_n(id, 16) || !mp_name_ok(agent, LIM_NAME_MAX) ||
	    abs_copy(ch->gc_ws, sizeof(ch->gc_ws),
		json_shape_str(o, "workspace", NULL)) == -1)
		return -1;
	memcpy(ch->gc_run, id, 17);
	memcpy(ch->gc_agent, agent, strlen(agent) + 1); /* <= LIM_NAME_MAX */
	json_object_object_get_ex(o, "commands", &cmds);
	if (gate_policy_parse(cmds, &ch->gc_policy, NULL, 0, NULL) == -1)
		return -1;
	return open_protect(ch, o);
}
