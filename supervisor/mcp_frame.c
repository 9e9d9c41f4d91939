/*
 * One JSON-RPC 2.0 frame of `cordon mcp` (MC-1): parsed strictly with
 * the project's JSON parser and sorted into request, notification or
 * response.  No I/O; fuzzed by tests/fuzz/fuzz_mcp_frame.c.
 */
#include <string.h>

#include <json-c/json.h>

#include "json.h"
#include "mcp.h"

#define MCP_METHOD_MAX 64

static int
id_ok(struct json_object *id)
{
	size_t len;

	/* One that every caller (JavaScript's too) reads back as sent:
	 * json-c clamps what does not fit in 64 bits. */
	if (json_object_is_type(id, json_type_int))
		return json_object_get_int64(id) >= -MCP_ID_INT_MAX &&
		       json_object_get_int64(id) <= MCP_ID_INT_MAX;
	if (!json_object_is_type(id, json_type_string))
		return 0;
	len = (size_t)json_object_get_string_len(id);
	return len >= 1 && len <= MCP_ID_MAX &&
	       strlen(json_object_get_string(id)) == len;
}

int
mcp_frame_parse(const char *buf, size_t len, struct mcp_frame *f)
{
	struct json_object *o, *v;
	const char *s;
	int has_id, has_method, has_result, has_error;
	size_t nkeys = 1;

	memset(f, 0, sizeof(*f));
	while (len > 0 && (*buf == ' ' || *buf == '\t')) {
		buf++;
		len--;
	}
	if (len > 0 && *buf == '[')
		return MCP_EREQUEST; /* batches are not part of MCP */
	if ((o = json_parse_object(buf, len, JSON_MAX_DEPTH)) == NULL)
		return MCP_EPARSE;
	if ((s = json_get_str(o, "jsonrpc", 3)) == NULL ||
	    strcmp(s, "2.0") != 0)
		goto bad;
	has_id = json_object_object_get_ex(o, "id", &v);
	if (has_id && !id_ok(v))
		goto bad;
	f->f_id = has_id ? v : NULL;
	has_method = json_object_object_get_ex(o, "method", NULL);
	has_result = json_object_object_get_ex(o, "result", NULL);
	has_error = json_object_object_get_ex(o, "error", NULL);
	nkeys += (size_t)has_id;
	if (has_method) {
		if ((f->f_method = json_get_str(o, "method", MCP_METHOD_MAX)) ==
			NULL ||
		    f->f_method[0] == '\0')
			goto bad;
		nkeys++;
		if (json_object_object_get_ex(o, "params", &v)) {
			if (!json_object_is_type(v, json_type_object))
				goto bad;
			f->f_params = v;
			nkeys++;
		}
		f->f_kind = has_id ? MF_REQUEST : MF_NOTIFY;
	} else if (has_id && has_result + has_error == 1) {
		f->f_kind = MF_RESPONSE;
		nkeys++;
	} else
		goto bad;
	if ((size_t)json_object_object_length(o) != nkeys)
		goto bad;
	f->f_obj = o;
	return 0;
bad:
	json_object_put(o);
	memset(f, 0, sizeof(*f));
	return MCP_EREQUEST;
}

void
mcp_frame_free(struct mcp_frame *f)
{
	json_object_put(f->f_obj);
	memset(f, 0, sizeof(*f));
}
