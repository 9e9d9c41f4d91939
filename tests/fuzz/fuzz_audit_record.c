/*
 * libFuzzer target for common/audit_schema.c: hostile record bytes
 * through the strict JSON parser and audit_validate().  Input: byte 0
 * picks the sender, the rest is the record.  An accepted record must keep
 * the schema's promises: only known fields, printable ASCII strings,
 * kind first, and validating the output again gives the same bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "audit_schema.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
ascii_only(struct json_object *v)
{
	const char *s;
	size_t i, n;

	if (json_object_is_type(v, json_type_array)) {
		for (i = 0; i < json_object_array_length(v); i++)
			ascii_only(json_object_array_get_idx(v, i));
		return;
	}
	if (!json_object_is_type(v, json_type_string))
		return;
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	check(n <= 512);
	for (i = 0; i < n; i++)
		check(s[i] >= 0x20 && s[i] <= 0x7e);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *in, *out, *again;
	const struct audit_kind *k;
	const char *a, *b;
	enum proc_id from;
	size_t i, n = 0;
	char *raw;

	if (size < 1)
		return 0;
	from = (enum proc_id)(data[0] % (PROC_MAX + 1));
	if ((raw = malloc(size)) == NULL)
		return 0;
	memcpy(raw, data + 1, size - 1);
	in = json_parse_object(raw, size - 1, JSON_MAX_DEPTH);
	if (in != NULL && audit_validate(in, from, &out) == 0) {
		check(from < PROC_MAX);
		k = audit_kind_lookup(json_object_get_string(
		    json_object_object_get(out, "kind")));
		check(k != NULL && (k->ak_senders & PROC_BIT(from)) != 0);
		json_object_object_foreach (out, key, val) {
			if (n++ == 0) {
				check(strcmp(key, "kind") == 0);
				continue;
			}
			for (i = 0; i < k->ak_nfields; i++)
				if (strcmp(k->ak_fields[i].af_name, key) == 0)
					break;
			check(i < k->ak_nfields);
			ascii_only(val);
		}
		/* Idempotent: the output is itself a valid record. */
		check(audit_validate(out, from, &again) == 0);
		a = json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN);
		b = json_object_to_json_string_ext(
		    again, JSON_C_TO_STRING_PLAIN);
		check(strcmp(a, b) == 0);
		check(strlen(a) <= AUDIT_RECORD_MAX);
		json_object_put(again);
		json_object_put(out);
	}
	json_object_put(in);
	free(raw);
	return 0;
}
