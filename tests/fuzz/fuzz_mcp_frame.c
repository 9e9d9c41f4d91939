/*
 * libFuzzer target for supervisor/mcp_frame.c (MC-1): whatever the
 * line, a frame is refused with a JSON-RPC code and nothing kept, or
 * accepted as exactly one of request, notification or response with
 * the members each needs (a method of at most 64 bytes, an id that is
 * an integer of at most 2^53-1 either way or a short string, params an
 * object).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_frame f;
	int rc;

	rc = mcp_frame_parse((const char *)data, size, &f);
	if (rc != 0) {
		if ((rc != MCP_EPARSE && rc != MCP_EREQUEST) ||
		    f.f_obj != NULL || f.f_id != NULL || f.f_method != NULL)
			abort();
		return 0;
	}
	if (f.f_obj == NULL)
		abort();
	switch (f.f_kind) {
	case MF_REQUEST:
	case MF_NOTIFY:
		if (f.f_method == NULL || f.f_method[0] == '\0' ||
		    strlen(f.f_method) > 64 ||
		    (f.f_kind == MF_REQUEST) != (f.f_id != NULL))
			abort();
		if (f.f_params != NULL &&
		    !json_object_is_type(f.f_params, json_type_object))
			abort();
		break;
	case MF_RESPONSE:
		if (f.f_id == NULL || f.f_method != NULL)
			abort();
		break;
	default:
		abort();
	}
	/* An integer id is one json-c kept as sent (not clamped). */
	if (f.f_id != NULL && json_object_is_type(f.f_id, json_type_int) &&
	    (json_object_get_int64(f.f_id) < -MCP_ID_INT_MAX ||
		json_object_get_int64(f.f_id) > MCP_ID_INT_MAX))
		abort();
	if (f.f_id != NULL && !json_object_is_type(f.f_id, json_type_int) &&
	    !(json_object_is_type(f.f_id, json_type_string) &&
		json_object_get_string_len(f.f_id) >= 1 &&
		json_object_get_string_len(f.f_id) <= MCP_ID_MAX))
		abort();
	mcp_frame_free(&f);
	return 0;
}
