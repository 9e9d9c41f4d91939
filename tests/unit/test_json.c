/*
 * Unit tests for common/json.c, the one parser of untrusted JSON (IPC
 * payloads, HTTP bodies, agent stream lines): what json-c's strict mode
 * alone would let through is refused, valid documents pass unchanged.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <json-c/json.h>

#include "json.h"

static int
parses(const char *s)
{
	struct json_object *o = json_parse_object(s, strlen(s), JSON_MAX_DEPTH);
	int ok = o != NULL;

	json_object_put(o);
	return ok;
}

static void
test_valid(void **state)
{
	static const char *const ok[] = {
	    "{}",
	    "{\"a\":1}",
	    "{\"a\":{\"a\":1},\"b\":[{\"a\":1},{\"a\":2}]}",
	    "{\"a\":[],\"b\":{},\"c\":\"x,y:{z}\"}",
	    "{\"k\":\"\\\\u0000\"}", /* an escaped backslash, then text */
	    "{\"k\":\"a\\u0000b\"}", /* json_get_str refuses it */
	    "{\"k\":\"\\u0001\\n\\\"\"}",
	    " {\"a\" : [ 1 , 2.5e3 , -0 , true , false , null ] } ",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!parses(ok[i]))
			fail_msg("refused: %s", ok[i]);
}

/* PER-8, API-*: duplicate keys, escaped NULs and json-c leniencies. */
static void
test_hostile(void **state)
{
	static const char *const bad[] = {
	    "{\"a\":1,\"a\":2}",
	    "{\"prompt\":\"x\",\"prompt\":\"-rf\"}",
	    "{\"a\":{\"b\":1,\"b\":1}}",
	    "{\"x\":[{\"k\":1,\"k\":2}]}",
	    "{\"a\":{\"z\":1},\"a\":{\"y\":2}}",
	    "{\"prompt\\u0000x\":\"v\"}",
	    "{'a':1}",
	    "{\"a\":NaN}",
	    "{\"a\":Infinity}",
	    "{\"a\":\"\x01\"}",
	    "{\"a\":1}x",
	    "[1]",
	    "{\"a\":\"\xc0\xaf\"}",
	    "{\"a\":1,}",
	    "{\"a\" 1}",
	    "}{",
	    "",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parses(bad[i]))
			fail_msg("accepted case %zu", i);
}

static void
test_depth(void **state)
{
	char buf[4 * JSON_LEX_DEPTH + 16];
	size_t i, n = 0;

	(void)state;
	/* JSON_MAX_DEPTH levels pass, one more does not. */
	for (i = 0; i < JSON_MAX_DEPTH - 1; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "{\"a\":");
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "{}");
	for (i = 0; i < JSON_MAX_DEPTH - 1; i++)
		buf[n++] = '}';
	buf[n] = '\0';
	assert_true(parses(buf));
	n = 0;
	for (i = 0; i < JSON_LEX_DEPTH + 1; i++)
		buf[n++] = '[';
	buf[n] = '\0';
	assert_false(parses(buf));
	assert_null(json_parse_object("{}", 2, JSON_LEX_DEPTH + 1));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid),
	    cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_depth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
