/*
 * libFuzzer target for policy/hook.c (SBX-8): whatever the hook input,
 * decoding either refuses it with no check, or yields 1..HOOK_CHECKS_MAX
 * checks whose lines and paths are strings carrying what each kind needs,
 * and a tool name of the allowed characters.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "hook.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hook_call hc;
	struct json_object *in;
	size_t i;

	in = json_parse_object((const char *)data, size, JSON_MAX_DEPTH);
	if (hook_decode(in, &hc) == -1) {
		if (hc.hk_nchecks != 0)
			abort();
		json_object_put(in);
		return 0;
	}
	if (hc.hk_nchecks == 0 || hc.hk_nchecks > HOOK_CHECKS_MAX ||
	    hc.hk_tool == NULL || strlen(hc.hk_tool) > HOOK_TOOL_MAX ||
	    strspn(hc.hk_tool, "abcdefghijklmnopqrstuvwxyz"
			       "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
		strlen(hc.hk_tool))
		abort();
	for (i = 0; i < hc.hk_nchecks; i++) {
		const struct hook_check *c = &hc.hk_checks[i];

		if (hook_kind_parse(hook_kind_name(c->hc_kind)) !=
		    (int)c->hc_kind)
			abort();
		if ((c->hc_kind == HK_SHELL) != (c->hc_line != NULL))
			abort();
		if ((c->hc_kind == HK_READ || c->hc_kind == HK_WRITE) &&
		    (c->hc_path == NULL || c->hc_path[0] == '\0'))
			abort();
		if (c->hc_path != NULL && strlen(c->hc_path) > 4095)
			abort();
	}
	if (hc.hk_cwd != NULL && strlen(hc.hk_cwd) > 4095)
		abort();
	json_object_put(in);
	return 0;
}
