/*
 * SBX-6: a run's handoff to gated (MSG_GATE_OPEN) is refused whole when
 * any value is wrong, whatever the codec's shape let through: a run id
 * that is not 16 lowercase hex digits, an agent name the manifest would
 * refuse, a relative or oversized path, a `commands:` policy the
 * manifest's own validator refuses.  A good one fills the run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "gated/gated.h"

#define GOOD_ID "0123456789abcdef"

/* A payload: good, with key replaced by the JSON text v (NULL: as is). */
static int
parse_with(const char *key, const char *v, struct gate_chan *ch)
{
	struct json_object *o = json_tokener_parse(
	    "{\"runId\":\"" GOOD_ID "\",\"agent\":\"demo\","
	    "\"workspace\":\"/w\",\"commands\":{\"allow\":[\"ls\"],"
	    "\"askTimeoutSec\":30},\"home\":\"/h\",\"protect\":[\"/p\"],"
	    "\"runs\":\"/r\"}");
	int r;

	assert_non_null(o);
	if (key != NULL)
		json_object_object_add(o, key, json_tokener_parse(v));
	memset(ch, 0, sizeof(*ch));
	r = gate_open_parse(ch, o);
	gate_policy_free(&ch->gc_policy);
	json_object_put(o);
	return r;
}

static void
test_sbx6_handoff_good_fills_run(void **state)
{
	struct json_object *o = json_tokener_parse(
	    "{\"runId\":\"" GOOD_ID "\",\"agent\":\"demo\","
	    "\"workspace\":\"/w\",\"commands\":{\"allow\":[\"ls\"]},"
	    "\"protect\":[\"/p\",\"/q\"]}");
	struct gate_chan ch;

	memset(&ch, 0, sizeof(ch));
	assert_int_equal(gate_open_parse(&ch, o), 0);
	assert_string_equal(ch.gc_run, GOOD_ID);
	assert_string_equal(ch.gc_agent, "demo");
	assert_string_equal(ch.gc_ws, "/w");
	assert_int_equal(ch.gc_policy.gp_nallow, 1);
	assert_int_equal(ch.gc_protect.pc_nextra, 2);
	assert_string_equal(ch.gc_protect.pc_extra[1], "/q");
	assert_null(ch.gc_protect.pc_home);
	gate_policy_free(&ch.gc_policy);
	json_object_put(o);
	assert_int_equal(parse_with(NULL, NULL, &ch), 0);
}

static void
test_sbx6_handoff_malformed_refused(void **state)
{
	static const struct {
		const char *key, *v;
	} bad[] = {
	    {"runId", "\"0123456789ABCDEF\""}, /* not lowercase hex */
	    {"runId", "\"0123456789abcdeg\""},
	    {"runId", "\"../../0123456789\""},
	    {"agent", "\"Demo\""},
	    {"agent", "\"-demo\""},
	    {"agent", "\"de mo\""},
	    {"workspace", "\"w\""}, /* relative */
	    {"workspace", "\"\""},
	    {"home", "\"h\""},
	    {"runs", "\"./r\""},
	    {"protect", "[\"p\"]"},
	    {"protect", "[1]"},
	    {"links", "[\"p\"]"},
	    {"links", "[1]"},
	    {"links", "\"/p\""},
	    {"commands", "{\"allow\":[\"rm\"],\"deny\":[\"rm\"]}"},
	    {"commands", "{\"allow\":[\"sudo\"]}"}, /* never allowed */
	    {"commands", "{\"allow\":\"ls\"}"},
	    {"commands", "{\"extra\":1}"},
	    {"commands", "{\"askTimeoutSec\":1}"},
	    {"commands", "{\"askTimeoutSec\":601}"},
	};
	struct gate_chan ch;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse_with(bad[i].key, bad[i].v, &ch) != -1)
			fail_msg("accepted %s: %s", bad[i].key, bad[i].v);
	}
}

static void
test_sbx6_handoff_path_too_long_refused(void **state)
{
	char v[PATH_MAX + 8];
	struct gate_chan ch;

	v[0] = '"';
	v[1] = '/';
	memset(v + 2, 'a', PATH_MAX);
	v[PATH_MAX + 2] = '"';
	v[PATH_MAX + 3] = '\0';
	assert_int_equal(parse_with("workspace", v, &ch), -1);
	assert_int_equal(parse_with("home", v, &ch), -1);
}

/* SBX-2: where linked protected entries lead, packed; over the bounds
 * (count, bytes) the channel is refused. */
static void
test_sbx2_handoff_links(void **state)
{
	char v[3 * 4000 + 16], *p = v;
	struct gate_chan ch;
	int i;

	assert_int_equal(
	    parse_with("links", "[\"/d/gnupg\",\"/d/rc\"]", &ch), 0);
	assert_int_equal(ch.gc_protect.pc_nlinks, 2);
	assert_string_equal(ch.gc_protect.pc_links[0], "/d/gnupg");
	assert_string_equal(ch.gc_protect.pc_links[1], "/d/rc");
	*p++ = '[';
	for (i = 0; i < PROTECT_LINKS_MAX + 1; i++)
		p += sprintf(p, "%s\"/%d\"", i ? "," : "", i);
	strcpy(p, "]");
	assert_int_equal(parse_with("links", v, &ch), -1);
	p = v;
	*p++ = '[';
	for (i = 0; i < 3; i++) {
		p += sprintf(p, "%s\"/", i ? "," : "");
		memset(p, 'a', 3990);
		p += 3990;
		*p++ = '"';
	}
	strcpy(p, "]");
	assert_int_equal(parse_with("links", v, &ch), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sbx6_handoff_good_fills_run),
	    cmocka_unit_test(test_sbx6_handoff_malformed_refused),
	    cmocka_unit_test(test_sbx6_handoff_path_too_long_refused),
	    cmocka_unit_test(test_sbx2_handoff_links),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
