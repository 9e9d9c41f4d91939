/*
 * What the strict-validator tests (test_manifest, test_mission,
 * test_gate, test_hook, and those that read a manifest: test_argv,
 * test_env, test_hook_wire) share: a YAML document loaded or the test
 * failed, a manifest parsed from one, the search of a validator's problems for
 * one at line:col, and the fixtures under tests/fixtures/.  Header-only,
 * included after <cmocka.h>.
 */
#ifndef CORDON_TEST_POLICY_TEST_H
#define CORDON_TEST_POLICY_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "manifest.h"
#include "policy.h"
#include "yamljson.h"

/* The document as a json-c tree; a YAML error fails the test. */
static inline struct json_object *
pt_load(const char *yaml)
{
	struct yaml_err ye;
	struct json_object *root;

	memset(&ye, 0, sizeof(ye));
	if ((root = yaml_load_buf(yaml, strlen(yaml), &ye)) == NULL)
		fail_msg("yaml: %lu:%lu %s", ye.ye_line, ye.ye_col, ye.ye_msg);
	return root;
}

/* The manifest of a YAML document: manifest_parse's result (0 valid). */
static inline int
pt_manifest(const char *yaml, struct manifest *m)
{
	struct json_object *root = pt_load(yaml);
	size_t n = 0;
	int r = manifest_parse(root, m, NULL, 0, &n);

	json_object_put(root);
	return r;
}

static inline void
pt_print(const struct policy_err *errs, size_t nerrs, size_t max)
{
	size_t i;

	for (i = 0; i < nerrs && i < max; i++)
		print_error("  got %lu:%lu %s\n", errs[i].pe_line,
		    errs[i].pe_col, errs[i].pe_msg);
}

/* One of the problems is at line:col and its message contains msg. */
static inline void
pt_expect(const struct policy_err *errs, size_t nerrs, size_t max,
    unsigned long line, unsigned long col, const char *msg)
{
	size_t i;

	for (i = 0; i < nerrs && i < max; i++)
		if (errs[i].pe_line == line && errs[i].pe_col == col &&
		    strstr(errs[i].pe_msg, msg) != NULL)
			return;
	pt_print(errs, nerrs, max);
	fail_msg("no '%s' at %lu:%lu", msg, line, col);
}

/*
 * tests/fixtures/DIR/NAME, found from this source's path or from the
 * source root; the caller frees it.
 */
static inline char *
pt_fixture(const char *dir, const char *name)
{
	char path[4096], *buf;
	const char *slash = strrchr(__FILE__, '/');
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%.*s/../fixtures/%s/%s",
	    slash ? (int)(slash - __FILE__) : 1, slash ? __FILE__ : ".", dir,
	    name);
	if ((f = fopen(path, "r")) == NULL) {
		snprintf(path, sizeof(path), "tests/fixtures/%s/%s", dir, name);
		f = fopen(path, "r");
	}
	if (f == NULL)
		fail_msg("fixture %s/%s", dir, name);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

#endif
