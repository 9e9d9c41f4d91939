/*
 * libFuzzer target for common/yamljson.c: any byte string must either load
 * or fail with a NUL-terminated message, never crash, leak or hang.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "yamljson.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct json_object *o;
	struct yaml_err err;

	o = yaml_load_buf((const char *)data, len, &err);
	if (o == NULL) {
		/* Every failure says something, within the buffer. */
		if (memchr(err.ye_msg, '\0', sizeof(err.ye_msg)) == NULL ||
		    err.ye_msg[0] == '\0')
			abort();
		return 0;
	}
	if (!json_object_is_type(o, json_type_object))
		abort();
	(void)json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	json_object_put(o);
	return 0;
}
