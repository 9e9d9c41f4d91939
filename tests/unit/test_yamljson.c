/*
 * Unit tests for common/yamljson.c: structure, scalar typing, every refusal
 * with its line:col, neutral error messages, and the file-opening rules.
 * Writes only inside a private mkdtemp(3) directory.
 */
#include <sys/stat.h>

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "yamljson.h"

#define MARKER "SECRETMARKER"
#define MIB    (1024 * 1024)

static struct json_object *
load(const char *s, struct yaml_err *err)
{
	return yaml_load_buf(s, strlen(s), err);
}

/* Must fail at line:col (0 = don't care) with msg as a substring. */
static void
expect_err_len(const char *s, size_t len, unsigned long line, unsigned long col,
    const char *msg)
{
	struct yaml_err err;
	struct json_object *o;

	o = yaml_load_buf(s, len, &err);
	if (o != NULL)
		fail_msg("loaded, expected \"%s\"", msg);
	if (strstr(err.ye_msg, msg) == NULL)
		fail_msg("got \"%s\", expected \"%s\"", err.ye_msg, msg);
	if (line != 0 && (err.ye_line != line || err.ye_col != col))
		fail_msg("\"%s\" at %lu:%lu, expected %lu:%lu", err.ye_msg,
		    err.ye_line, err.ye_col, line, col);
}

static void
expect_err(
    const char *s, unsigned long line, unsigned long col, const char *msg)
{
	expect_err_len(s, strlen(s), line, col, msg);
}

static void
expect_json(const char *s, const char *json)
{
	struct yaml_err err;
	struct json_object *o;

	if ((o = load(s, &err)) == NULL)
		fail_msg("%lu:%lu: %s", err.ye_line, err.ye_col, err.ye_msg);
	assert_string_equal(
	    json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), json);
	json_object_put(o);
}

static void
test_valid_mapping(void **state)
{
	(void)state;
	expect_json(
	    "name: demo\ncount: 3\n", "{\"name\":\"demo\",\"count\":3}");
	expect_json("---\na: b\n...\n", "{\"a\":\"b\"}");
	expect_json("{a: 1, b: [x, y]}", "{\"a\":1,\"b\":[\"x\",\"y\"]}");
	expect_json("k: h\xc3\xa9llo\n", "{\"k\":\"h\xc3\xa9llo\"}");
}

static void
test_valid_nested(void **state)
{
	(void)state;
	expect_json("agent:\n"
		    "  argv: [claude, --print]\n"
		    "  env:\n"
		    "    - {name: HOME, value: /home/a}\n"
		    "    - name: TERM\n"
		    "      value: dumb\n"
		    "  allow:\n"
		    "    -\n"
		    "    - true\n"
		    "    - []\n"
		    "    - {}\n",
	    "{\"agent\":{\"argv\":[\"claude\",\"--print\"],"
	    "\"env\":[{\"name\":\"HOME\",\"value\":\"\\/home\\/a\"},"
	    "{\"name\":\"TERM\",\"value\":\"dumb\"}],"
	    "\"allow\":[null,true,[],{}]}}");
	expect_json("s: |\n  line1\n  line2\nf: >-\n  a\n  b\n",
	    "{\"s\":\"line1\\nline2\\n\",\"f\":\"a b\"}");
}

struct typing {
	const char *t_yaml;
	enum json_type t_type;
	int64_t t_int;
	double t_dbl;
	const char *t_str; /* expected string, for json_type_string */
};

static const struct typing typing_table[] = {
    /* null */
    {"null", json_type_null, 0, 0, NULL},
    {"Null", json_type_null, 0, 0, NULL},
    {"NULL", json_type_null, 0, 0, NULL},
    {"~", json_type_null, 0, 0, NULL},
    {"", json_type_null, 0, 0, NULL},
    {"nULL", json_type_string, 0, 0, "nULL"},
    /* bool: YAML 1.2 only, no yes/no/on/off */
    {"true", json_type_boolean, 1, 0, NULL},
    {"True", json_type_boolean, 1, 0, NULL},
    {"TRUE", json_type_boolean, 1, 0, NULL},
    {"false", json_type_boolean, 0, 0, NULL},
    {"False", json_type_boolean, 0, 0, NULL},
    {"FALSE", json_type_boolean, 0, 0, NULL},
    {"tRUE", json_type_string, 0, 0, "tRUE"},
    {"yes", json_type_string, 0, 0, "yes"},
    {"no", json_type_string, 0, 0, "no"},
    {"on", json_type_string, 0, 0, "on"},
    {"off", json_type_string, 0, 0, "off"},
    /* int */
    {"0", json_type_int, 0, 0, NULL},
    {"42", json_type_int, 42, 0, NULL},
    {"-17", json_type_int, -17, 0, NULL},
    {"+5", json_type_int, 5, 0, NULL},
    {"0755", json_type_int, 755, 0, NULL},
    {"9223372036854775807", json_type_int, INT64_MAX, 0, NULL},
    {"-9223372036854775808", json_type_int, INT64_MIN, 0, NULL},
    {"0x1F", json_type_int, 31, 0, NULL},
    {"0xff", json_type_int, 255, 0, NULL},
    {"0x7fffffffffffffff", json_type_int, INT64_MAX, 0, NULL},
    {"0o17", json_type_int, 15, 0, NULL},
    {"0X1F", json_type_string, 0, 0, "0X1F"},
    {"0x", json_type_string, 0, 0, "0x"},
    {"-0x1", json_type_string, 0, 0, "-0x1"},
    {"0o8", json_type_string, 0, 0, "0o8"},
    {"0b101", json_type_string, 0, 0, "0b101"},
    {"1_000", json_type_string, 0, 0, "1_000"},
    {"12:30", json_type_string, 0, 0, "12:30"},
    /* float */
    {"1.5", json_type_double, 0, 1.5, NULL},
    {"-0.25", json_type_double, 0, -0.25, NULL},
    {".5", json_type_double, 0, 0.5, NULL},
    {"1.", json_type_double, 0, 1.0, NULL},
    {"1e3", json_type_double, 0, 1000.0, NULL},
    {"+1.5E-2", json_type_double, 0, 0.015, NULL},
    {"1.2.3", json_type_string, 0, 0, "1.2.3"},
    {"1e", json_type_string, 0, 0, "1e"},
    {"e3", json_type_string, 0, 0, "e3"},
    {".", json_type_string, 0, 0, "."},
    {".inf", json_type_string, 0, 0, ".inf"},
    {"-.Inf", json_type_string, 0, 0, "-.Inf"},
    {".nan", json_type_string, 0, 0, ".nan"},
    {".NaN", json_type_string, 0, 0, ".NaN"},
    /* plain strings */
    {"hello world", json_type_string, 0, 0, "hello world"},
    {"/usr/bin/env", json_type_string, 0, 0, "/usr/bin/env"},
    /* quoted: always strings */
    {"'42'", json_type_string, 0, 0, "42"},
    {"\"true\"", json_type_string, 0, 0, "true"},
    {"'null'", json_type_string, 0, 0, "null"},
    {"''", json_type_string, 0, 0, ""},
    {"\"\"", json_type_string, 0, 0, ""},
    {"'~'", json_type_string, 0, 0, "~"},
    {"\"1.5\"", json_type_string, 0, 0, "1.5"},
    {"'0x1F'", json_type_string, 0, 0, "0x1F"},
    {"\"a\\tb\"", json_type_string, 0, 0, "a\tb"},
    {"|\n  42", json_type_string, 0, 0, "42\n"},
    {">-\n  true", json_type_string, 0, 0, "true"},
};

static void
test_typing(void **state)
{
	const struct typing *t;
	struct json_object *o, *v;
	struct yaml_err err;
	char doc[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(typing_table) / sizeof(typing_table[0]); i++) {
		t = &typing_table[i];
		snprintf(doc, sizeof(doc), "v: %s\n", t->t_yaml);
		if ((o = load(doc, &err)) == NULL)
			fail_msg("[%s]: %s", t->t_yaml, err.ye_msg);
		assert_true(json_object_object_get_ex(o, "v", &v));
		if (json_object_get_type(v) != t->t_type)
			fail_msg("[%s]: type %s, expected %s", t->t_yaml,
			    json_type_to_name(json_object_get_type(v)),
			    json_type_to_name(t->t_type));
		switch (t->t_type) {
		case json_type_boolean:
		case json_type_int:
			assert_true(json_object_get_int64(v) == t->t_int);
			break;
		case json_type_double:
			assert_true(json_object_get_double(v) == t->t_dbl);
			break;
		case json_type_string:
			assert_string_equal(
			    json_object_get_string(v), t->t_str);
			break;
		default:
			break;
		}
		json_object_put(o);
	}
}

static void
test_keys_stay_strings(void **state)
{
	(void)state;
	expect_json("1: a\ntrue: b\nnull: c\n",
	    "{\"1\":\"a\",\"true\":\"b\",\"null\":\"c\"}");
}

static void
test_number_range(void **state)
{
	(void)state;
	expect_err("v: 9223372036854775808\n", 1, 4, "integer out of range");
	expect_err("v: -9223372036854775809\n", 1, 4, "integer out of range");
	expect_err("v: 0x8000000000000000\n", 1, 4, "integer out of range");
	expect_err("v: 1e999\n", 1, 4, "number out of range");
}

static void
test_duplicate_key(void **state)
{
	(void)state;
	expect_err("a: 1\nb:\n  c: 2\n  c: 3\n", 4, 3, "duplicate key");
	expect_err("a: 1\na: 1\n", 2, 1, "duplicate key");
	expect_err("x: {k: 1, k: 2}\n", 1, 11, "duplicate key");
}

static void
test_alias_refused(void **state)
{
	(void)state;
	expect_err("a: &x 1\nb: *x\n", 1, 4, "aliases are not allowed");
	expect_err("a: 1\nb: *x\n", 2, 4, "aliases are not allowed");
	expect_err("a:\n  - *x\n", 2, 5, "aliases are not allowed");
	expect_err("*x : 1\n", 1, 1, "aliases are not allowed");
	expect_err("&top\na: 1\n", 1, 1, "aliases are not allowed");
}

static void
test_tags_refused(void **state)
{
	(void)state;
	expect_err("a: !!str 1\n", 1, 4, "tags are not allowed");
	expect_err("a: !local x\n", 1, 4, "tags are not allowed");
	expect_err("a: !!seq [x]\n", 1, 4, "tags are not allowed");
	expect_err("!!map\na: 1\n", 1, 1, "tags are not allowed");
	expect_err("%TAG !e! tag:e.com,2000:\n---\na: 1\n", 0, 0,
	    "tag directives are not allowed");
	expect_json("%YAML 1.2\n---\na: 1\n", "{\"a\":1}");
}

static void
test_keys_refused(void **state)
{
	(void)state;
	expect_err("\"a\": 1\n", 1, 1, "key must be a plain scalar");
	expect_err("ok: 1\n'b': 2\n", 2, 1, "key must be a plain scalar");
	expect_err("? [a, b]\n: 1\n", 1, 3, "key must be a plain scalar");
	expect_err("? {a: b}\n: 1\n", 1, 3, "key must be a plain scalar");
	expect_err("? |\n  k\n: 1\n", 1, 3, "key must be a plain scalar");
	expect_err("x:\n  ? \n  : 1\n", 2, 4, "empty key");
}

static void
test_multi_document(void **state)
{
	(void)state;
	expect_err("a: 1\n---\nb: 2\n", 2, 1, "more than one document");
	expect_err("a: 1\n...\n---\nb: 2\n", 3, 1, "more than one document");
	expect_err("a: 1\n---\n", 2, 1, "more than one document");
}

static void
test_empty(void **state)
{
	(void)state;
	expect_err("", 1, 1, "empty document");
	expect_err("# nothing here\n\n", 0, 0, "empty document");
	expect_err_len(NULL, 0, 0, 0, "empty document");
}

static void
test_depth(void **state)
{
	char doc[256];
	struct yaml_err err;
	struct json_object *o;
	size_t n;

	(void)state;
	/* Top mapping + 31 sequences = 32 levels: accepted. */
	n = (size_t)snprintf(doc, sizeof(doc), "a: ");
	memset(doc + n, '[', 31);
	memset(doc + n + 31, ']', 31);
	doc[n + 62] = '\0';
	o = load(doc, &err);
	assert_non_null(o);
	json_object_put(o);

	/* 33 levels: refused at the 33rd opening bracket. */
	memset(doc + n, '[', 32);
	memset(doc + n + 32, ']', 32);
	doc[n + 64] = '\0';
	expect_err(doc, 1, (unsigned long)n + 32, "nesting too deep");
}

static void
test_depth_block(void **state)
{
	char doc[2048], *p = doc;
	size_t i;

	(void)state;
	/* 33 nested block mappings: k0 opens level 2 ... k31 opens level 33. */
	for (i = 0; i < 33; i++)
		p += sprintf(p, "%*sk%zu:\n", (int)i, "", i);
	p += sprintf(p, "%*sv: 1\n", 33, "");
	expect_err(doc, 33, 33, "nesting too deep");
}

static void
test_top_level(void **state)
{
	(void)state;
	expect_err("- a\n- b\n", 1, 1, "top level must be a mapping");
	expect_err("just a scalar\n", 1, 1, "top level must be a mapping");
	expect_err("[a: 1]\n", 1, 1, "top level must be a mapping");
	expect_err("---\n", 2, 1, "top level must be a mapping");
}

static void
test_syntax_error(void **state)
{
	(void)state;
	expect_err("a: b: c\n", 1, 5, "syntax error");
	expect_err("a: 1\nb: [1, 2\nc: 3\n", 0, 0, "syntax error");
	expect_err("a: 1\n  b: 2\n", 2, 4, "syntax error");
	expect_err("a: \"unterminated\n", 0, 0, "syntax error");
	expect_err("a:\n\t- x\n", 2, 1, "syntax error");
}

/* Every error class with the marker where the parser trips: no echo. */
static void
test_no_echo(void **state)
{
	static const char *const docs[] = {
	    "SECRETMARKER: 1\nSECRETMARKER: 2\n",
	    "a: [SECRETMARKER\n",
	    "a: SECRETMARKER: x\n",
	    "a: *SECRETMARKER\n",
	    "a: &SECRETMARKER 1\n",
	    "a: !SECRETMARKER x\n",
	    "a: !<tag:SECRETMARKER> x\n",
	    "%TAG !SECRETMARKER! tag:x,2000:\n---\na: 1\n",
	    "%SECRETMARKER x\n---\na: 1\n",
	    "\"SECRETMARKER\": 1\n",
	    "a: \"SECRETMARKER\\q\"\n",
	    "a: \"\\uSECRETMARKER\"\n",
	    "a: \"SECRETMARKER\\0\"\n",
	    "a: SECRETMARKER\xff\n",
	    "a: 1\n---\nSECRETMARKER: 2\n",
	    "- SECRETMARKER\n",
	    "v: 99999999999999999999\n",
	    "a:\n  - x\n  SECRETMARKER: 1\n",
	    "a: |\n  x\n SECRETMARKER: 1\n",
	    "? SECRETMARKER\n? SECRETMARKER\n",
	    "a: `SECRETMARKER\n",
	    "a: @SECRETMARKER\n",
	    "a: 'SECRETMARKER\n",
	    "SECRETMARKER\x01: 1\n",
	};
	struct yaml_err err;
	struct json_object *o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		o = load(docs[i], &err);
		if (o != NULL)
			fail_msg("doc %zu loaded", i);
		assert_true(err.ye_msg[0] != '\0');
		if (strstr(err.ye_msg, MARKER) != NULL ||
		    strstr(err.ye_msg, "99999") != NULL)
			fail_msg("doc %zu echoed: %s", i, err.ye_msg);
		assert_true(
		    memchr(err.ye_msg, '\0', sizeof(err.ye_msg)) != NULL);
	}
}

static void
test_nul_byte(void **state)
{
	static const char raw[] = "a: 1\nb: x\0y\n";

	(void)state;
	expect_err_len(raw, sizeof(raw) - 1, 2, 5, "invalid input");
	expect_err("a: \"x\\0y\"\n", 1, 4, "NUL");
	expect_err("\"a\\0\": 1\n", 1, 1, "key must be a plain scalar");
}

static void
test_utf8(void **state)
{
	(void)state;
	expect_err("a: \xff\n", 1, 4, "invalid input");
	expect_err("a: ok\nb: \xc0\xaf\n", 2, 4, "invalid input");
	expect_err("a: \xed\xa0\x80\n", 1, 4, "invalid input");
	expect_err("a: \xe2\x82\n", 1, 5, "invalid input");
	expect_err("a: \"\\ud800\"\n", 0, 0, "syntax error");
	/* UTF-16 is not sniffed: a UTF-16LE BOM is just bad UTF-8. */
	expect_err_len("\xff\xfe"
		       "a\0:\0 \0"
		       "1\0",
	    10, 1, 1, "invalid input");
	/* A UTF-8 BOM is harmless. */
	expect_json("\xef\xbb\xbf"
		    "a: 1\n",
	    "{\"a\":1}");
	expect_json("a: \xf0\x9f\x94\x92\n", "{\"a\":\"\xf0\x9f\x94\x92\"}");
}

static void
test_size_limit(void **state)
{
	struct yaml_err err;
	struct json_object *o;
	char *buf;

	(void)state;
	assert_non_null(buf = malloc(MIB + 1));
	memcpy(buf, "a: 1\n#", 6);
	memset(buf + 6, 'x', MIB - 6);
	buf[MIB - 1] = '\n';
	o = yaml_load_buf(buf, MIB, &err);
	assert_non_null(o);
	json_object_put(o);

	buf[MIB] = '\n';
	o = yaml_load_buf(buf, MIB + 1, &err);
	assert_null(o);
	assert_string_equal(err.ye_msg, "file too large");
	assert_int_equal(err.ye_line, 0);
	free(buf);
}

static char tmpdir[] = "/tmp/test_yamljson.XXXXXX";

static void
tmp_path(char *out, size_t outsz, const char *name)
{
	snprintf(out, outsz, "%s/%s", tmpdir, name);
}

static void
write_file(const char *name, const char *data, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	tmp_path(path, sizeof(path), name);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int
setup_tmp(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int
teardown_tmp(void **state)
{
	static const char *const names[] = {
	    "ok.yaml", "link.yaml", "subdir", "big.yaml", "fifo", "bad.yaml"};
	char path[PATH_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		tmp_path(path, sizeof(path), names[i]);
		(void)remove(path);
	}
	return rmdir(tmpdir);
}

static void
expect_file_err(const char *name, const char *msg)
{
	char path[PATH_MAX];
	struct yaml_err err;

	tmp_path(path, sizeof(path), name);
	assert_null(yaml_load_file(path, &err));
	assert_string_equal(err.ye_msg, msg);
	assert_int_equal(err.ye_line, 0);
}

static void
test_file(void **state)
{
	static const char ok[] = "name: demo\nlist: [1, 2]\n";
	char path[PATH_MAX], target[PATH_MAX];
	struct yaml_err err;
	struct json_object *o;
	char *big;

	(void)state;
	write_file("ok.yaml", ok, sizeof(ok) - 1);
	tmp_path(path, sizeof(path), "ok.yaml");
	assert_non_null(o = yaml_load_file(path, &err));
	assert_string_equal(
	    json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
	    "{\"name\":\"demo\",\"list\":[1,2]}");
	json_object_put(o);

	/* Errors inside the file keep their position. */
	write_file("bad.yaml", "a: 1\na: 2\n", 10);
	tmp_path(path, sizeof(path), "bad.yaml");
	assert_null(yaml_load_file(path, &err));
	assert_string_equal(err.ye_msg, "duplicate key");
	assert_int_equal(err.ye_line, 2);
	assert_int_equal(err.ye_col, 1);

	/* O_NOFOLLOW: a symlink to a good file is still refused. */
	tmp_path(target, sizeof(target), "ok.yaml");
	tmp_path(path, sizeof(path), "link.yaml");
	assert_int_equal(symlink(target, path), 0);
	expect_file_err("link.yaml", "cannot open file: symbolic link refused");

	tmp_path(path, sizeof(path), "subdir");
	assert_int_equal(mkdir(path, 0700), 0);
	expect_file_err("subdir", "not a regular file");

	/* A FIFO must be refused without blocking on open. */
	tmp_path(path, sizeof(path), "fifo");
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_file_err("fifo", "not a regular file");

	expect_file_err("missing.yaml", "cannot open file");

	assert_non_null(big = malloc(MIB + 1));
	memset(big, '#', MIB + 1);
	write_file("big.yaml", big, MIB + 1);
	free(big);
	expect_file_err("big.yaml", "file too large");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid_mapping),
	    cmocka_unit_test(test_valid_nested),
	    cmocka_unit_test(test_typing),
	    cmocka_unit_test(test_keys_stay_strings),
	    cmocka_unit_test(test_number_range),
	    cmocka_unit_test(test_duplicate_key),
	    cmocka_unit_test(test_alias_refused),
	    cmocka_unit_test(test_tags_refused),
	    cmocka_unit_test(test_keys_refused),
	    cmocka_unit_test(test_multi_document),
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_depth),
	    cmocka_unit_test(test_depth_block),
	    cmocka_unit_test(test_top_level),
	    cmocka_unit_test(test_syntax_error),
	    cmocka_unit_test(test_no_echo),
	    cmocka_unit_test(test_nul_byte),
	    cmocka_unit_test(test_utf8),
	    cmocka_unit_test(test_size_limit),
	    cmocka_unit_test(test_file),
	};

	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
