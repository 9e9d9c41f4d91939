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
#include "yamljson.h"

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

/* SEC-1: secrets.yaml's tree is wiped, every string, before it is freed;
 * the secret loader builds the same tree as the ordinary one. */
static void
test_wipe(void **state)
{
	static const char doc[] =
	    "openrouter:\n  apiKey: sk-or-v1-abcdef0123456789\n"
	    "nested:\n  deeper:\n    - \"quoted-secret-value\"\n"
	    "    - {k: short}\n"
	    "long: " /* past json-c's inline string size */
	    "0123456789abcdef0123456789abcdef0123456789abcdef\n";
	struct json_object *a, *b, *v, *keep[4];
	struct yaml_err ye;
	size_t i;
	const char *s;

	(void)state;
	a = yaml_load_buf(doc, sizeof(doc) - 1, &ye);
	b = yaml_load_secret(doc, sizeof(doc) - 1, &ye);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(json_object_equal(a, b));
	json_object_put(a);

	/* Hold the strings so json_wipe_put's free leaves them readable. */
	json_object_object_get_ex(b, "openrouter", &v);
	json_object_object_get_ex(v, "apiKey", &keep[0]);
	json_object_object_get_ex(b, "nested", &v);
	json_object_object_get_ex(v, "deeper", &v);
	keep[1] = json_object_array_get_idx(v, 0);
	json_object_object_get_ex(
	    json_object_array_get_idx(v, 1), "k", &keep[2]);
	json_object_object_get_ex(b, "long", &keep[3]);
	for (i = 0; i < 4; i++) {
		assert_non_null(keep[i]);
		json_object_get(keep[i]);
	}
	json_wipe_put(b);
	for (i = 0; i < 4; i++) {
		s = json_object_get_string(keep[i]);
		for (size_t j = 0;
		     j < (size_t)json_object_get_string_len(keep[i]); j++)
			assert_int_equal(s[j], 0);
		json_object_put(keep[i]);
	}
	json_wipe_put(NULL);
}

/* SU-3: a dispatch row's declared shape, checked in one place. */
static void
test_su3_shape(void **state)
{
	static const struct json_shape sh[] = {
	    JS_STR("runId", JS_REQ, 1, 4),
	    JS_ARR("allow", JS_REQ, 2),
	    JS_INT("max", JS_OPT, 0, 9),
	    JS_BOOL("on", JS_OPT),
	};
	static const struct json_shape rest[] = {
	    JS_STR("kind", JS_REQ, 1, 8),
	    JS_REST,
	};
	static const struct {
		const char *in;
		const struct json_shape *sh;
		size_t n;
		int ok;
	} cases[] = {
	    {"{\"runId\":\"a\",\"allow\":[]}", sh, 4, 1},
	    {"{\"runId\":\"abcd\",\"allow\":[1,2],\"max\":9,\"on\":true}", sh,
		4, 1},
	    {"{\"allow\":[]}", sh, 4, 0},			  /* required */
	    {"{\"runId\":1,\"allow\":[]}", sh, 4, 0},		  /* type */
	    {"{\"runId\":\"a\",\"allow\":{}}", sh, 4, 0},	  /* type */
	    {"{\"runId\":\"a\",\"allow\":[],\"x\":1}", sh, 4, 0}, /* leftover */
	    {"{\"runId\":\"a\",\"allow\":[],\"max\":\"3\"}", sh, 4, 0},
	    {"{\"runId\":\"\",\"allow\":[]}", sh, 4, 0},	 /* too short */
	    {"{\"runId\":\"abcde\",\"allow\":[]}", sh, 4, 0},	 /* too long */
	    {"{\"runId\":\"a\\u0000\",\"allow\":[]}", sh, 4, 0}, /* NUL */
	    {"{\"runId\":\"a\",\"allow\":[1,2,3]}", sh, 4, 0},	 /* items */
	    {"{\"runId\":\"a\",\"allow\":[],\"max\":10}", sh, 4, 0},
	    {"{\"runId\":\"a\",\"allow\":[],\"max\":-1}", sh, 4, 0},
	    {"{\"runId\":\"a\",\"allow\":[],\"max\":1.0}", sh, 4, 0},
	    {"{\"runId\":\"a\",\"allow\":[],\"max\":99999999999999999999}", sh,
		4, 0},
	    {"{\"runId\":\"a\",\"allow\":[],\"on\":1}", sh, 4, 0},
	    {"{\"kind\":\"x\",\"any\":[1]}", rest, 2, 1}, /* the rest */
	    {"{\"any\":[1]}", rest, 2, 0},
	    {"{}", NULL, 0, 1}, /* no keys declared: {} alone */
	    {"{\"x\":1}", NULL, 0, 0},
	};
	struct json_object *o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o = json_parse_object(cases[i].in, strlen(cases[i].in), 16);
		assert_non_null(o);
		if (json_shape_ok(o, cases[i].sh, cases[i].n) != cases[i].ok)
			fail_msg("case %zu", i);
		if (cases[i].ok && cases[i].sh == sh) {
			assert_string_equal(json_shape_str(o, "runId", NULL),
			    json_object_get_string(
				json_object_object_get(o, "runId")));
			assert_true(json_shape_int(o, "max", 42) >= 0);
		}
		json_object_put(o);
	}
	assert_int_equal(json_shape_ok(NULL, sh, 4), 0);
	o = json_parse_object("{}", 2, 16);
	assert_null(json_shape_str(o, "runId", NULL));
	assert_int_equal(json_shape_int(o, "max", 42), 42);
	json_object_put(o);
}

/*
 * PER-8: json_shape_ok in its two steps, as the broker's routes answer
 * them: the keys (required, leftovers), then the first row that misfits.
 */
static void
test_per8_shape_steps(void **state)
{
	static const struct json_shape sh[] = {
	    JS_STR("via", JS_OPT, 0, 3),
	    JS_INT("n", JS_OPT, 0, 9),
	    JS_STR("prompt", JS_REQ, 1, 8),
	};
	static const struct {
		const char *in;
		int keys;   /* json_shape_keys_ok */
		size_t bad; /* the first row that misfits, 3: none */
	} cases[] = {
	    {"{\"prompt\":\"hi\"}", 1, 3},
	    {"{\"via\":\"mcp\",\"n\":9,\"prompt\":\"hi\"}", 1, 3},
	    {"{\"via\":\"mcp\"}", 0, 2},		 /* required */
	    {"{\"prompt\":\"hi\",\"x\":1}", 0, 3},	 /* leftover */
	    {"{\"prompt\":1,\"via\":1}", 1, 0},		 /* order */
	    {"{\"prompt\":1,\"n\":10}", 1, 1},		 /* bounds */
	    {"{\"prompt\":\"\",\"via\":\"mcp\"}", 1, 2}, /* too short */
	    {"{\"prompt\":\"a\\u0000\"}", 1, 2},	 /* NUL */
	};
	struct json_object *o;
	size_t i, r;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o = json_parse_object(cases[i].in, strlen(cases[i].in), 16);
		assert_non_null(o);
		if (json_shape_keys_ok(o, sh, 3) != cases[i].keys)
			fail_msg("keys, case %zu", i);
		for (r = 0; r < 3 && json_shape_row_ok(o, &sh[r]); r++)
			;
		if (r != cases[i].bad)
			fail_msg("row, case %zu", i);
		assert_int_equal(json_shape_ok(o, sh, 3),
		    cases[i].keys && cases[i].bad == 3);
		json_object_put(o);
	}
	assert_int_equal(json_shape_keys_ok(NULL, sh, 3), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid),
	    cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_depth),
	    cmocka_unit_test(test_wipe),
	    cmocka_unit_test(test_su3_shape),
	    cmocka_unit_test(test_per8_shape_steps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
