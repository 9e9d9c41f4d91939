/*
 * Unit tests for policy/mission.c (MI-1 ... MI-3): the issue's two
 * examples load, every refusal of mission_parse comes with its line:col
 * and a message that never quotes the file, every option type's bounds
 * hold in mission_options, hostile values are accepted only as the
 * schema allows and never leave the function, and mission_render keeps
 * the prompt one string.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy_test.h"
#include <json-c/json.h>

#include "cordon_limits.h"
#include "json.h"
#include "mission.h"
#include "yamljson.h"

#define MAXE 64

static struct policy_err errs[MAXE];
static size_t nerrs;

static const char weekly[] =
    "id: weekly-review            # ^[a-z0-9][a-z0-9-]{0,63}$\n"
    "label: Weekly review         # 1..80 chars, no control chars\n"
    "agent: claude-code\n"
    "prompt: \"Review {project}; at most {words} words\"\n"
    "options:\n"
    "  project: {type: string, maxLength: 60, pattern: "
    "\"^[A-Za-z0-9 _-]+$\"}\n"
    "  words:   {type: integer, min: 50, max: 2000, default: 400}\n"
    "  draft:   {type: boolean, default: true}\n"
    "  tone:    {type: enum, values: [plain, formal]}\n"
    "outputs:\n"
    "  - {type: vault-note, folder: "
    "00_Inbox/cordon/missions/weekly-review,\n"
    "     filenameHint: review}\n"
    "  - {type: event, event: review.ready}\n"
    "permissions: [vault-write, event-emit]\n"
    "trigger: {manual: true, cron: \"0 18 * * 0\", timezone: "
    "Europe/Berlin}\n"
    "timeoutMs: 300000\n"
    "catchUp: false\n";

/* The issue's own text of the same example (prompt as in the issue). */
static const char weekly_issue[] =
    "id: weekly-review            # ^[a-z0-9][a-z0-9-]{0,63}$\n"
    "label: Weekly review\n"
    "agent: claude-code\n"
    "prompt: \"Review the week's notes about {project}; at most {words} "
    "words\"\n"
    "options:\n"
    "  project: {type: string, maxLength: 60, pattern: "
    "\"^[A-Za-z0-9 _-]+$\"}\n"
    "  words:   {type: integer, min: 50, max: 2000, default: 400}\n"
    "  draft:   {type: boolean, default: true}\n"
    "  tone:    {type: enum, values: [plain, formal]}\n"
    "outputs:\n"
    "  - {type: vault-note, folder: "
    "00_Inbox/cordon/missions/weekly-review, filenameHint: review}\n"
    "  - {type: event, event: review.ready}\n"
    "permissions: [vault-write, event-emit]\n"
    "trigger: {manual: true, cron: \"0 18 * * 0\", timezone: "
    "Europe/Berlin}\n"
    "timeoutMs: 300000\n";

static const char daily[] =
    "id: daily-summary\n"
    "label: Daily inbox summary\n"
    "agent: claude-code\n"
    "prompt: |\n"
    "  Summarise the notes added to the inbox today.\n"
    "  Keep it under {words} words.\n"
    "options:\n"
    "  words: {type: integer, min: 50, max: 1000, default: 300}\n"
    "outputs:\n"
    "  - type: vault-note\n"
    "    folder: 00_Inbox/cordon/missions/daily-summary\n"
    "    filenameHint: summary\n"
    "permissions: [vault-write]\n"
    "trigger:\n"
    "  manual: true\n"
    "  cron: \"0 20 * * *\"\n"
    "  timezone: Europe/Berlin\n"
    "timeoutMs: 600000\n";

/* The smallest mission: lines 1..7, extra lines appended from line 8. */
#define MIN                                                                    \
	"id: t\n"                                                              \
	"label: T\n"                                                           \
	"agent: a\n"                                                           \
	"prompt: \"hi {x}\"\n"                                                 \
	"outputs:\n"                                                           \
	"  - {type: event, event: t.done}\n"                                   \
	"permissions: [event-emit]\n"
#define MIN_OPT_X "options:\n  x: {type: boolean, default: true}\n"

static int
parse(const char *yaml, struct mission *m)
{
	struct json_object *root = pt_load(yaml);
	int rc;

	nerrs = 0;
	rc = mission_parse(root, m, errs, MAXE, &nerrs);
	json_object_put(root);
	return rc;
}

static void
must_parse(const char *yaml, struct mission *m)
{

	if (parse(yaml, m) != 0) {
		pt_print(errs, nerrs, MAXE);
		fail_msg("refused");
	}
	assert_int_equal(nerrs, 0);
}

/* Refused, with a problem at line:col whose message contains msg, and
 * no message quoting any of the secret-ish probe strings. */
static void
refused_at(
    const char *yaml, unsigned long line, unsigned long col, const char *msg)
{
	struct mission m;
	size_t i;

	if (parse(yaml, &m) != -1) {
		mission_free(&m);
		fail_msg("accepted:\n%s", yaml);
	}
	assert_true(nerrs > 0);
	/* freed and zeroed on failure */
	assert_null(m.mi_id);
	assert_int_equal(m.mi_nopts, 0);
	for (i = 0; i < nerrs && i < MAXE; i++) {
		assert_null(strstr(errs[i].pe_msg, "LEAK"));
		assert_null(strstr(errs[i].pe_msg, "sk-"));
	}
	pt_expect(errs, nerrs, MAXE, line, col, msg);
}

static const struct mi_option *
opt(const struct mission *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->mi_nopts; i++)
		if (strcmp(m->mi_opts[i].o_name, name) == 0)
			return &m->mi_opts[i];
	fail_msg("no option %s", name);
	return NULL;
}

static struct json_object *
jobj(const char *text)
{
	struct json_object *o = json_parse_object(text, strlen(text), 8);

	if (o == NULL)
		fail_msg("bad test JSON");
	return o;
}

/* mission_options on the JSON text: its rc; *res kept if wanted. */
static int
options(const struct mission *m, const char *text, struct json_object **res)
{
	struct json_object *o = text ? jobj(text) : NULL, *r = NULL;
	const char *before;
	char *copy = NULL;
	int rc;

	if (o != NULL && (before = json_object_to_json_string(o)) != NULL)
		copy = strdup(before);
	rc = mission_options(m, o, &r);
	if (rc == -1)
		assert_null(r);
	else
		assert_non_null(r);
	/* the caller's object is never modified */
	if (o != NULL) {
		assert_string_equal(copy, json_object_to_json_string(o));
		json_object_put(o);
	}
	free(copy);
	if (res != NULL)
		*res = r;
	else
		json_object_put(r);
	return rc;
}

static void
test_weekly_example(void **state)
{
	struct mission m;
	const struct mi_option *o;

	(void)state;
	must_parse(weekly, &m);
	assert_string_equal(m.mi_id, "weekly-review");
	assert_string_equal(m.mi_label, "Weekly review");
	assert_string_equal(m.mi_agent, "claude-code");
	assert_string_equal(
	    m.mi_prompt, "Review {project}; at most {words} words");
	assert_int_equal(m.mi_nopts, 4);
	o = opt(&m, "project");
	assert_int_equal(o->o_type, MI_OPT_STRING);
	assert_int_equal(o->o_max_length, 60);
	assert_string_equal(o->o_pattern, "^[A-Za-z0-9 _-]+$");
	assert_false(o->o_has_default);
	o = opt(&m, "words");
	assert_int_equal(o->o_type, MI_OPT_INTEGER);
	assert_int_equal(o->o_min, 50);
	assert_int_equal(o->o_max, 2000);
	assert_true(o->o_has_default);
	assert_int_equal(json_object_get_int64(o->o_default), 400);
	o = opt(&m, "draft");
	assert_int_equal(o->o_type, MI_OPT_BOOLEAN);
	assert_true(json_object_get_boolean(o->o_default));
	o = opt(&m, "tone");
	assert_int_equal(o->o_type, MI_OPT_ENUM);
	assert_int_equal(o->o_nvalues, 2);
	assert_string_equal(o->o_values[0], "plain");
	assert_string_equal(o->o_values[1], "formal");
	assert_false(o->o_has_default);
	assert_int_equal(m.mi_nouts, 2);
	assert_int_equal(m.mi_outs[0].u_type, MI_OUT_VAULT_NOTE);
	assert_string_equal(
	    m.mi_outs[0].u_folder, "00_Inbox/cordon/missions/weekly-review");
	assert_string_equal(m.mi_outs[0].u_hint, "review");
	assert_int_equal(m.mi_outs[1].u_type, MI_OUT_EVENT);
	assert_string_equal(m.mi_outs[1].u_event, "review.ready");
	assert_int_equal(m.mi_perms, MI_PERM_VAULT_WRITE | MI_PERM_EVENT_EMIT);
	assert_true(m.mi_manual);
	assert_true(m.mi_has_cron);
	assert_string_equal(m.mi_cron_text, "0 18 * * 0");
	assert_string_equal(m.mi_tz, "Europe/Berlin");
	assert_true(m.mi_cron.c_min == 1);
	assert_int_equal(m.mi_timeout_ms, 300000);
	assert_false(m.mi_catch_up);
	assert_int_equal(mission_permitted(&m), 0);
	/* required options without defaults: a cron run cannot resolve
	 * them, which is how the loader tells (see mission.h) */
	assert_int_equal(options(&m, NULL, NULL), -1);
	mission_free(&m);
	assert_null(m.mi_id);

	must_parse(weekly_issue, &m);
	assert_int_equal(m.mi_nopts, 4);
	mission_free(&m);
}

static void
test_daily_example(void **state)
{
	struct mission m;
	struct json_object *res;
	char *out;

	(void)state;
	must_parse(daily, &m);
	assert_string_equal(m.mi_id, "daily-summary");
	assert_true(m.mi_has_cron);
	assert_int_equal(m.mi_cron.c_hour, 1u << 20);
	assert_int_equal(m.mi_timeout_ms, 600000);
	assert_int_equal(mission_permitted(&m), 0);
	/* every option has a default: a cron run resolves with none */
	assert_int_equal(options(&m, NULL, &res), 0);
	assert_int_equal(mission_render(&m, res, &out), 0);
	assert_string_equal(out, "Summarise the notes added to the inbox "
				 "today.\nKeep it under 300 words.\n");
	free(out);
	json_object_put(res);
	assert_int_equal(options(&m, "{\"words\": 1000}", &res), 0);
	assert_int_equal(mission_render(&m, res, &out), 0);
	assert_non_null(strstr(out, "under 1000 words"));
	free(out);
	json_object_put(res);
	mission_free(&m);
}

static void
test_defaults(void **state)
{
	struct mission m;

	(void)state;
	must_parse(MIN MIN_OPT_X, &m);
	assert_true(m.mi_manual);
	assert_false(m.mi_has_cron);
	assert_null(m.mi_cron_text);
	assert_string_equal(m.mi_tz, "UTC");
	assert_int_equal(m.mi_timeout_ms, MI_TIMEOUT_DEF_MS);
	assert_false(m.mi_catch_up);
	mission_free(&m);
	/* a cron-only mission, catch-up on */
	must_parse(MIN MIN_OPT_X "trigger: {manual: false, cron: \"*/5 * * * "
				 "*\"}\ncatchUp: true\ntimeoutMs: 3600000\n",
	    &m);
	assert_false(m.mi_manual);
	assert_true(m.mi_has_cron);
	assert_true(m.mi_catch_up);
	assert_int_equal(m.mi_timeout_ms, MI_TIMEOUT_MAX_MS);
	mission_free(&m);
	/* an unused option is allowed: the issue's example has two */
	must_parse(MIN MIN_OPT_X "  y: {type: boolean, default: false}\n", &m);
	mission_free(&m);
	/* deeper folder and timezone forms */
	must_parse("id: t\nlabel: T\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: vault-note, folder: "
		   "00_Inbox/cordon/missions/t/a/b/, filenameHint: x.md}\n"
		   "permissions: [vault-write, external-api]\n"
		   "trigger: {timezone: America/Argentina/Buenos_Aires}\n",
	    &m);
	assert_int_equal(
	    m.mi_perms, MI_PERM_VAULT_WRITE | MI_PERM_EXTERNAL_API);
	mission_free(&m);
	must_parse("id: t\nlabel: T\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n"
		   "trigger: {timezone: Etc/GMT+1}\n",
	    &m);
	assert_int_equal(m.mi_perms, 0);
	assert_int_equal(mission_permitted(&m), -1);
	mission_free(&m);
}

static void
test_refused_top(void **state)
{
	struct json_object *arr;
	struct mission m;

	(void)state;
	refused_at(MIN MIN_OPT_X "foo: 1\n", 10, 1, "unknown key");
	refused_at(MIN MIN_OPT_X
	    "sk-ant-api03-LEAKLEAKLEAKLEAKLEAKLEAKLEAKLEAKLEAKLEAK: 1\n",
	    10, 1, "unknown key");
	refused_at("label: T\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n",
	    1, 1, "id: missing");
	refused_at("id: Weekly\nlabel: T\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n",
	    1, 1, "id: must match");
	refused_at("id: -x\nlabel: T\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n",
	    1, 1, "id: must match");
	refused_at("id: 12\nlabel: T\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n",
	    1, 1, "id: must be a string");
	refused_at("id: t\nlabel: \"\"\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n",
	    2, 1, "label: length must be");
	refused_at("id: t\nlabel: "
		   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		   "aaaaaaaaaaaaaaaaaaaaaaa\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n",
	    2, 1, "label: length must be");
	refused_at("id: t\nlabel: \"a\\tb\"\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n",
	    2, 1, "label: must be UTF-8 without NUL or control");
	refused_at("id: t\nlabel: \"a\\x85b\"\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n",
	    2, 1, "label: must be UTF-8 without NUL or control");
	refused_at("id: t\nlabel: T\nagent: Claude\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n",
	    3, 1, "agent: must match");
	refused_at("id: t\nlabel: T\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n",
	    1, 1, "agent: missing");
	refused_at(MIN MIN_OPT_X "timeoutMs: 0\n", 10, 1,
	    "timeoutMs: must be 1..3600000");
	refused_at(MIN MIN_OPT_X "timeoutMs: 3600001\n", 10, 1,
	    "timeoutMs: must be 1..3600000");
	refused_at(MIN MIN_OPT_X "timeoutMs: \"5\"\n", 10, 1,
	    "timeoutMs: must be an integer");
	refused_at(MIN MIN_OPT_X "catchUp: yes\n", 10, 1,
	    "catchUp: must be true or false");
	/* not a mapping at all (the YAML loader refuses this too) */
	arr = json_object_new_array();
	nerrs = 0;
	assert_int_equal(mission_parse(arr, &m, errs, MAXE, &nerrs), -1);
	assert_int_equal(nerrs, 1);
	json_object_put(arr);
	assert_int_equal(mission_parse(NULL, &m, errs, MAXE, &nerrs), -1);
	/* more errors than room: counted, none written past the end */
	nerrs = 0;
	{
		struct yaml_err ye;
		struct json_object *r =
		    yaml_load_buf("a: 1\nb: 2\nc: 3\n", 15, &ye);

		assert_non_null(r);
		assert_int_equal(mission_parse(r, &m, errs, 1, &nerrs), -1);
		assert_true(nerrs > 1);
		json_object_put(r);
	}
}

static void
test_refused_prompt(void **state)
{
	struct mission m;
	char *big;
	size_t n, o;

	(void)state;
	refused_at("id: t\nlabel: T\nagent: a\noutputs:\n"
		   "  - {type: event, event: a}\n",
	    1, 1, "prompt: missing");
	refused_at("id: t\nlabel: T\nagent: a\nprompt: \"\"\noutputs:\n"
		   "  - {type: event, event: a}\n",
	    4, 1, "prompt: length must be");
	refused_at(MIN, 4, 1, "placeholder names no declared option");
	refused_at("id: t\nlabel: T\nagent: a\nprompt: \"{prompt}\"\n"
		   "outputs:\n  - {type: event, event: a}\n",
	    4, 1, "placeholder names no declared option");
	refused_at(
	    "id: t\nlabel: T\nagent: a\nprompt: \"a {{x}} b\"\n" MIN_OPT_X
	    "outputs:\n  - {type: event, event: a}\n",
	    4, 1, "{ must open");
	refused_at("id: t\nlabel: T\nagent: a\nprompt: \"a { b\"\n"
		   "outputs:\n  - {type: event, event: a}\n",
	    4, 1, "{ must open");
	refused_at("id: t\nlabel: T\nagent: a\nprompt: \"a {x\"\n" MIN_OPT_X
		   "outputs:\n  - {type: event, event: a}\n",
	    4, 1, "{ must open");
	refused_at("id: t\nlabel: T\nagent: a\nprompt: \"a } b\"\n"
		   "outputs:\n  - {type: event, event: a}\n",
	    4, 1, "a lone }");
	refused_at("id: t\nlabel: T\nagent: a\nprompt: \"{x}}\"\n" MIN_OPT_X
		   "outputs:\n  - {type: event, event: a}\n",
	    4, 1, "a lone }");
	refused_at("id: t\nlabel: T\nagent: a\nprompt: \"{}\"\n"
		   "outputs:\n  - {type: event, event: a}\n",
	    4, 1, "{ must open");
	refused_at("id: t\nlabel: T\nagent: a\nprompt: \"{ x }\"\n" MIN_OPT_X
		   "outputs:\n  - {type: event, event: a}\n",
	    4, 1, "{ must open");
	refused_at("id: t\nlabel: T\nagent: a\nprompt: \"{X}\"\n"
		   "outputs:\n  - {type: event, event: a}\n",
	    4, 1, "{ must open");
	refused_at("id: t\nlabel: T\nagent: a\nprompt: \"a\\x01b\"\n"
		   "outputs:\n  - {type: event, event: a}\n",
	    4, 1, "control");
	/* the byte ceiling: 16384 bytes ok, one more refused */
	n = MI_PROMPT_MAX + 200;
	big = malloc(n);
	assert_non_null(big);
	o = (size_t)snprintf(big, n,
	    "id: t\nlabel: T\nagent: a\noutputs:\n  - {type: event, "
	    "event: a}\nprompt: ");
	memset(big + o, 'p', MI_PROMPT_MAX);
	strcpy(big + o + MI_PROMPT_MAX, "\n");
	must_parse(big, &m);
	mission_free(&m);
	/* multibyte: 16384 bytes but fewer chars, still by bytes */
	memcpy(big + o, "\xc3\xa9", 2);
	must_parse(big, &m);
	mission_free(&m);
	strcpy(big + o + MI_PROMPT_MAX, "p\n");
	refused_at(big, 6, 1, "prompt: length must be");
	memcpy(big + o, "pp", 2);
	refused_at(big, 6, 1, "prompt: length must be");
	free(big);
}

static void
test_refused_options(void **state)
{
	char yaml[4096];
	size_t i, o;

	(void)state;
#define OPT_HEAD                                                               \
	"id: t\nlabel: T\nagent: a\nprompt: \"{x}\"\n"                         \
	"outputs:\n  - {type: event, event: a}\n"                              \
	"options:\n"
	/* options at line 7, its entries from line 8 */
	refused_at(OPT_HEAD "  x: {type: string}\n", 8, 3,
	    "options.maxLength: missing");
	refused_at(OPT_HEAD "  x: {type: string, maxLength: 0}\n", 8, 21,
	    "options.maxLength: must be 1..");
	refused_at(OPT_HEAD "  x: {type: string, maxLength: 4097}\n", 8, 21,
	    "options.maxLength: must be 1..");
	refused_at(OPT_HEAD "  x: {type: string, maxLength: 4, min: 1}\n", 8,
	    35, "unknown key");
	refused_at(OPT_HEAD "  x: {type: integer, min: 1, max: 2, values: "
			    "[a]}\n",
	    8, 38, "unknown key");
	refused_at(OPT_HEAD
	    "  x: {type: boolean, default: true, "
	    "sk-ant-api03-LEAKLEAKLEAKLEAKLEAKLEAKLEAKLEAKLEAKLEAK: 1}\n",
	    8, 37, "unknown key");
	refused_at(OPT_HEAD "  x: {type: float}\n", 8, 7,
	    "options.type: must be string, integer");
	refused_at(
	    OPT_HEAD "  x: {default: 1}\n", 8, 3, "options.type: missing");
	refused_at(OPT_HEAD "  x: 1\n", 8, 3, "each option must be a mapping");
	refused_at(OPT_HEAD "  x: {type: boolean}\n  Bad: {type: boolean}\n", 9,
	    3, "option names must match");
	refused_at(OPT_HEAD "  x: {type: boolean}\n  sk-LEAK: {type: "
			    "boolean}\n",
	    9, 3, "option names must match");
	refused_at(OPT_HEAD "  x: {type: integer, max: 2}\n", 8, 3,
	    "options.min: missing");
	refused_at(OPT_HEAD "  x: {type: integer, min: 2}\n", 8, 3,
	    "options.max: missing");
	refused_at(OPT_HEAD "  x: {type: integer, min: 3, max: 2}\n", 8, 30,
	    "options.max: must be >= min");
	refused_at(OPT_HEAD "  x: {type: integer, min: 1.5, max: 2}\n", 8, 22,
	    "options.min: must be an integer");
	refused_at(OPT_HEAD "  x: {type: integer, min: 1, max: 2, default: "
			    "3}\n",
	    8, 38, "options.default: does not satisfy");
	refused_at(OPT_HEAD "  x: {type: integer, min: 1, max: 2, default: "
			    "\"1\"}\n",
	    8, 38, "options.default: does not satisfy");
	refused_at(OPT_HEAD "  x: {type: boolean, default: 1}\n", 8, 22,
	    "options.default: does not satisfy");
	refused_at(OPT_HEAD "  x: {type: string, maxLength: 3, default: "
			    "abcd}\n",
	    8, 35, "options.default: does not satisfy");
	refused_at(OPT_HEAD "  x: {type: string, maxLength: 3, default: "
			    "\"\"}\n",
	    8, 35, "options.default: does not satisfy");
	refused_at(OPT_HEAD "  x: {type: string, maxLength: 9, pattern: "
			    "\"^a+$\", default: b}\n",
	    8, 52, "options.default: does not satisfy");
	refused_at(OPT_HEAD "  x: {type: string, maxLength: 9, default: "
			    "\"a\\nb\"}\n",
	    8, 35, "options.default: does not satisfy");
	refused_at(
	    OPT_HEAD "  x: {type: enum}\n", 8, 3, "options.values: missing");
	refused_at(OPT_HEAD "  x: {type: enum, values: []}\n", 8, 19,
	    "options.values: must be a list of 1 to 32");
	refused_at(OPT_HEAD "  x: {type: enum, values: a}\n", 8, 19,
	    "options.values: must be a list of 1 to 32");
	refused_at(OPT_HEAD "  x: {type: enum, values: [a, b, a]}\n", 8, 34,
	    "options.values: duplicate value");
	refused_at(OPT_HEAD "  x: {type: enum, values: [a, \"b c\"]}\n", 8, 31,
	    "options.values: must match");
	refused_at(OPT_HEAD "  x: {type: enum, values: [a, 1]}\n", 8, 31,
	    "options.values: must be a string");
	refused_at(OPT_HEAD "  x: {type: enum, values: [a], default: b}\n", 8,
	    32, "options.default: does not satisfy");
	/* 33 enum values */
	o = (size_t)snprintf(
	    yaml, sizeof(yaml), OPT_HEAD "  x: {type: enum, values: [v0");
	for (i = 1; i < 33; i++)
		o += (size_t)snprintf(yaml + o, sizeof(yaml) - o, ", v%zu", i);
	snprintf(yaml + o, sizeof(yaml) - o, "]}\n");
	refused_at(yaml, 8, 19, "options.values: must be a list of 1 to 32");
	/* 17 options */
	o = (size_t)snprintf(yaml, sizeof(yaml), OPT_HEAD);
	for (i = 0; i < 17; i++)
		o += (size_t)snprintf(yaml + o, sizeof(yaml) - o,
		    "  %c: {type: boolean, default: true}\n", (int)('a' + i));
	snprintf(yaml + o, sizeof(yaml) - o, "  x: {type: boolean}\n");
	refused_at(yaml, 7, 1, "options: at most 16 options");
	refused_at(OPT_HEAD "  x: {type: boolean}\n  y: [1]\n", 9, 3,
	    "each option must be a mapping");
	refused_at("id: t\nlabel: T\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\noptions: [x]\n",
	    7, 1, "options: must be a mapping");
}

static void
test_refused_patterns(void **state)
{
	char yaml[1024], pat[300];

	(void)state;
#define PAT(p)                                                                 \
	OPT_HEAD "  x: {type: string, maxLength: 9, pattern: \"" p "\"}\n"
	/* the pattern node's mark: "pattern" at column 35 of line 8 */
	refused_at(PAT("([a-z]"), 8, 35, "does not compile");
	refused_at(PAT("a{2,1}"), 8, 35, "does not compile");
	refused_at(PAT("(a)\\\\1"), 8, 35, "backreferences are refused");
	refused_at(PAT("^(a*)\\\\2$"), 8, 35, "backreferences are refused");
	refused_at(PAT("((a{100}){100}){100}"), 8, 35, "too complex");
	refused_at(PAT("a{30000}"), 8, 35, "too complex");
	/* star height 1: glibc takes minutes on these with 4096 chars */
	refused_at(PAT("^([a-z]*){1,1000}$"), 8, 35, "too complex");
	refused_at(PAT("^(.*){2}!"), 8, 35, "too complex");
	refused_at(PAT("(x(a?)y)*"), 8, 35, "too complex");
	refused_at(PAT("a**"), 8, 35, "too complex");
	refused_at(PAT("a+{2}"), 8, 35, "too complex");
	refused_at(PAT("^[a-z]{1,1100}$"), 8, 35, "too complex");
	refused_at(PAT("((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+"), 8, 35,
	    "too complex");
	refused_at(PAT("a\\tb"), 8, 35, "control");
	refused_at(OPT_HEAD "  x: {type: string, maxLength: 9, pattern: "
			    "\"\"}\n",
	    8, 35, "options.pattern: length must be");
	memset(pat, 'a', 257);
	pat[257] = '\0';
	snprintf(yaml, sizeof(yaml),
	    OPT_HEAD "  x: {type: string, maxLength: 9, pattern: \"%s\"}\n",
	    pat);
	refused_at(yaml, 8, 35, "options.pattern: length must be");
	/* 256 bytes is fine, and so are ordinary patterns */
	pat[256] = '\0';
	snprintf(yaml, sizeof(yaml),
	    OPT_HEAD "  x: {type: string, maxLength: 9, pattern: \"%s\"}\n",
	    pat);
	{
		struct mission m;
		static const char *const fine[] = {"^[a-z]{1,255}$",
		    "^(foo|bar)-[0-9]{2,4}$", "^[[:alnum:]_.-]+$", "^[]a-]+$",
		    "x{0}", "^\\\\{$", "^[a-z]{1,1000}$", "(a|b)+$",
		    "^(ab|cd)*[0-9]?(e|f){2}$", NULL};
		size_t i;

		must_parse(yaml, &m);
		mission_free(&m);
		for (i = 0; fine[i] != NULL; i++) {
			snprintf(yaml, sizeof(yaml),
			    OPT_HEAD "  x: {type: string, maxLength: 9, "
				     "pattern: \"%s\"}\n",
			    fine[i]);
			must_parse(yaml, &m);
			mission_free(&m);
		}
	}
}

static void
test_refused_outputs(void **state)
{
	(void)state;
#define OUT_HEAD                                                               \
	"id: t\nlabel: T\nagent: a\nprompt: p\n"                               \
	"permissions: [vault-write, event-emit]\noutputs:\n"
	/* outputs at line 6, the entries from line 7 */
	refused_at(
	    "id: t\nlabel: T\nagent: a\nprompt: p\n", 1, 1, "outputs: missing");
	refused_at(
	    OUT_HEAD "  []\n", 6, 1, "outputs: must be a list of 1 to 8");
	refused_at("id: t\nlabel: T\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n  - {type: event, event: a}\n"
		   "  - {type: event, event: a}\n  - {type: event, event: a}\n"
		   "  - {type: event, event: a}\n  - {type: event, event: a}\n"
		   "  - {type: event, event: a}\n  - {type: event, event: a}\n"
		   "  - {type: event, event: a}\n",
	    5, 1, "outputs: must be a list of 1 to 8");
	refused_at(
	    OUT_HEAD "  - event\n", 7, 5, "each output must be a mapping");
	refused_at(OUT_HEAD "  - {event: a}\n", 7, 5, "outputs.type: missing");
	refused_at(OUT_HEAD "  - {type: webhook, url: x}\n", 7, 6,
	    "outputs.type: must be vault-note or event");
	refused_at(
	    OUT_HEAD "  - {type: event}\n", 7, 5, "outputs.event: missing");
	refused_at(OUT_HEAD "  - {type: event, event: Review}\n", 7, 19,
	    "outputs.event: must match");
	refused_at(OUT_HEAD "  - {type: event, event: a, folder: x}\n", 7, 29,
	    "unknown key");
	refused_at(OUT_HEAD "  - {type: vault-note, filenameHint: r}\n", 7, 5,
	    "outputs.folder: missing");
	refused_at(OUT_HEAD "  - {type: vault-note, folder: "
			    "00_Inbox/cordon/missions/t}\n",
	    7, 5, "outputs.filenameHint: missing");
	refused_at(OUT_HEAD "  - {type: vault-note, folder: "
			    "00_Inbox/cordon/missions/t, filenameHint: r, "
			    "event: x}\n",
	    7, 77, "unknown key");
#define FOLDER(f)                                                              \
	OUT_HEAD "  - {type: vault-note, filenameHint: r, folder: " f "}\n"
	/* folder's mark: column 41 */
	refused_at(FOLDER("00_Inbox/cordon/missions/other"), 7, 41,
	    "outputs.folder: must be");
	refused_at(FOLDER("00_Inbox/cordon/missions/t2"), 7, 41,
	    "outputs.folder: must be");
	refused_at(
	    FOLDER("00_Inbox/cordon/chats"), 7, 41, "outputs.folder: must be");
	refused_at(FOLDER("00_Inbox/cordon/missions"), 7, 41,
	    "outputs.folder: must be");
	refused_at(FOLDER("00_Inbox/cordon/missions/t/../other"), 7, 41,
	    "outputs.folder: must be");
	refused_at(FOLDER("00_Inbox/cordon/missions/t/.hidden"), 7, 41,
	    "outputs.folder: must be");
	refused_at(FOLDER("/etc"), 7, 41, "outputs.folder: must be");
	refused_at(FOLDER("../x"), 7, 41, "outputs.folder: must be");
	refused_at(FOLDER("00_Inbox/cordon/missions/t%2f..%2fx"), 7, 41,
	    "outputs.folder: must be");
	refused_at(FOLDER("00_Inbox\\\\cordon\\\\missions\\\\t"), 7, 41,
	    "outputs.folder: must be");
	refused_at(FOLDER("00_Inbox/cordon/missions/t/a/b/c/d/e"), 7, 41,
	    "outputs.folder: must be");
	refused_at(FOLDER("00_Inbox/cordon/missions/t//a"), 7, 41,
	    "outputs.folder: must be");
#define HINT(h)                                                                \
	OUT_HEAD "  - {type: vault-note, folder: "                             \
		 "00_Inbox/cordon/missions/t, filenameHint: " h "}\n"
	/* filenameHint's mark: column 60 */
	refused_at(HINT(".hidden"), 7, 60, "outputs.filenameHint: must be");
	refused_at(HINT("a/b"), 7, 60, "outputs.filenameHint: must be");
	refused_at(HINT("\"a b\""), 7, 60, "outputs.filenameHint: must be");
	refused_at(HINT("\"\""), 7, 60, "outputs.filenameHint: length must be");
	refused_at(
	    HINT("sk-LEAK%2f.."), 7, 60, "outputs.filenameHint: must be");
	refused_at(OUT_HEAD "  x\n", 6, 1, "outputs: must be a list");
}

static void
test_refused_permissions_trigger(void **state)
{
	(void)state;
#define PT_HEAD                                                                \
	"id: t\nlabel: T\nagent: a\nprompt: p\n"                               \
	"outputs:\n  - {type: event, event: a}\n"
	/* line 7 onwards */
	refused_at(PT_HEAD "permissions: [event-emit, event-emit]\n", 7, 27,
	    "permission named twice");
	refused_at(PT_HEAD "permissions: [event-emit, shell]\n", 7, 27,
	    "must be vault-write, event-emit or external-api");
	refused_at(PT_HEAD "permissions: event-emit\n", 7, 1,
	    "permissions: must be a list");
	refused_at(PT_HEAD "permissions: [vault-write, event-emit, "
			   "external-api, vault-write]\n",
	    7, 1, "permissions: must be a list of at most 3");
	refused_at(PT_HEAD "trigger: {manual: false}\n", 7, 1,
	    "trigger: needs manual: true or a cron");
	refused_at(PT_HEAD "trigger: {manual: \"no\"}\n", 7, 11,
	    "trigger.manual: must be true or false");
	refused_at(PT_HEAD "trigger: {cron: \"60 * * * *\"}\n", 7, 11,
	    "trigger.cron: value out of range");
	refused_at(PT_HEAD "trigger: {cron: \"*/0 * * * *\"}\n", 7, 11,
	    "trigger.cron: bad step");
	refused_at(PT_HEAD "trigger: {cron: \"0 0 * * * *\"}\n", 7, 11,
	    "trigger.cron: needs exactly five fields");
	refused_at(PT_HEAD "trigger: {cron: \"\"}\n", 7, 11,
	    "trigger.cron: length must be");
	refused_at(PT_HEAD "trigger: {cron: 5}\n", 7, 11,
	    "trigger.cron: must be a string");
	refused_at(PT_HEAD "trigger: {manual: false, cron: \"1-\"}\n", 7, 26,
	    "trigger.cron: malformed range");
	refused_at(PT_HEAD "trigger: {timezone: ../../etc/passwd}\n", 7, 11,
	    "trigger.timezone: must be an IANA");
	refused_at(PT_HEAD "trigger: {timezone: Europe/Berlin/X/Y}\n", 7, 11,
	    "trigger.timezone: must be an IANA");
	refused_at(PT_HEAD "trigger: {timezone: Europe/}\n", 7, 11,
	    "trigger.timezone: must be an IANA");
	refused_at(PT_HEAD "trigger: {timezone: \"Europe Berlin\"}\n", 7, 11,
	    "trigger.timezone: must be an IANA");
	refused_at(PT_HEAD "trigger: {timezone: /UTC}\n", 7, 11,
	    "trigger.timezone: must be an IANA");
	refused_at(PT_HEAD "trigger: {at: 5}\n", 7, 11, "unknown key");
	refused_at(
	    PT_HEAD "trigger: manual\n", 7, 1, "trigger: must be a mapping");
}

static void
test_permitted(void **state)
{
	struct mission m;

	(void)state;
	must_parse(PT_HEAD "permissions: [vault-write]\n", &m);
	assert_int_equal(mission_permitted(&m), -1);
	mission_free(&m);
	must_parse(PT_HEAD "permissions: [external-api]\n", &m);
	assert_int_equal(mission_permitted(&m), -1);
	mission_free(&m);
	must_parse(PT_HEAD "permissions: [event-emit]\n", &m);
	assert_int_equal(mission_permitted(&m), 0);
	mission_free(&m);
	must_parse("id: t\nlabel: T\nagent: a\nprompt: p\noutputs:\n"
		   "  - {type: event, event: a}\n"
		   "  - {type: vault-note, folder: 00_Inbox/cordon/missions/t,"
		   " filenameHint: n}\n"
		   "permissions: [event-emit]\n",
	    &m);
	assert_int_equal(mission_permitted(&m), -1);
	mission_free(&m);
	assert_int_equal(mission_permitted(NULL), -1);
}

static void
test_options_types(void **state)
{
	struct mission m;
	struct json_object *res, *v;

	(void)state;
	must_parse(weekly, &m);
	/* required ones missing */
	assert_int_equal(options(&m, "{}", NULL), -1);
	assert_int_equal(options(&m, "{\"project\": \"cordon\"}", NULL), -1);
	/* resolved: every declared option, defaults filled */
	assert_int_equal(
	    options(&m, "{\"project\": \"cordon\", \"tone\": \"plain\"}", &res),
	    0);
	assert_int_equal(json_object_object_length(res), 4);
	assert_true(json_object_object_get_ex(res, "words", &v));
	assert_int_equal(json_object_get_int64(v), 400);
	assert_true(json_object_object_get_ex(res, "draft", &v));
	assert_true(json_object_is_type(v, json_type_boolean));
	assert_true(json_object_get_boolean(v));
	json_object_put(res);
#define OK2 "\"project\": \"p\", \"tone\": \"formal\""
	/* integer bounds and types */
	assert_int_equal(options(&m, "{" OK2 ", \"words\": 50}", NULL), 0);
	assert_int_equal(options(&m, "{" OK2 ", \"words\": 2000}", NULL), 0);
	assert_int_equal(options(&m, "{" OK2 ", \"words\": 49}", NULL), -1);
	assert_int_equal(options(&m, "{" OK2 ", \"words\": 2001}", NULL), -1);
	assert_int_equal(options(&m, "{" OK2 ", \"words\": -1}", NULL), -1);
	assert_int_equal(options(&m, "{" OK2 ", \"words\": 100.0}", NULL), -1);
	assert_int_equal(options(&m, "{" OK2 ", \"words\": 1e2}", NULL), -1);
	assert_int_equal(
	    options(&m, "{" OK2 ", \"words\": \"100\"}", NULL), -1);
	assert_int_equal(options(&m, "{" OK2 ", \"words\": true}", NULL), -1);
	assert_int_equal(options(&m, "{" OK2 ", \"words\": null}", NULL), -1);
	assert_int_equal(options(&m, "{" OK2 ", \"words\": [100]}", NULL), -1);
	assert_int_equal(
	    options(&m, "{" OK2 ", \"words\": 99999999999999999999999}", NULL),
	    -1);
	/* boolean */
	assert_int_equal(options(&m, "{" OK2 ", \"draft\": false}", NULL), 0);
	assert_int_equal(options(&m, "{" OK2 ", \"draft\": 0}", NULL), -1);
	assert_int_equal(
	    options(&m, "{" OK2 ", \"draft\": \"true\"}", NULL), -1);
	/* enum */
	assert_int_equal(
	    options(&m, "{\"project\": \"p\", \"tone\": \"Plain\"}", NULL), -1);
	assert_int_equal(
	    options(&m, "{\"project\": \"p\", \"tone\": \"\"}", NULL), -1);
	assert_int_equal(
	    options(&m, "{\"project\": \"p\", \"tone\": 1}", NULL), -1);
	assert_int_equal(
	    options(&m, "{\"project\": \"p\", \"tone\": \"plain \"}", NULL),
	    -1);
	/* string: pattern, length (chars), type */
	assert_int_equal(
	    options(&m, "{\"project\": \"a;b\", \"tone\": \"plain\"}", NULL),
	    -1);
	assert_int_equal(
	    options(&m, "{\"project\": \"\", \"tone\": \"plain\"}", NULL), -1);
	assert_int_equal(
	    options(&m, "{\"project\": 5, \"tone\": \"plain\"}", NULL), -1);
	assert_int_equal(
	    options(&m,
		"{\"project\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaaaaaaaaaaaaaaaaa\", \"tone\": \"plain\"}",
		NULL),
	    0); /* 60 */
	assert_int_equal(
	    options(&m,
		"{\"project\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaaaaaaaaaaaaaaaaaa\", \"tone\": \"plain\"}",
		NULL),
	    -1); /* 61 */
	/* unknown names, not an object, too many */
	assert_int_equal(options(&m, "{" OK2 ", \"extra\": 1}", NULL), -1);
	assert_int_equal(options(&m, "{" OK2 ", \"Words\": 100}", NULL), -1);
	v = json_object_new_array();
	assert_int_equal(mission_options(&m, v, &res), -1);
	assert_null(res);
	json_object_put(v);
	mission_free(&m);
}

/* A no-pattern string option: what the schema allows is accepted as a
 * value, everything that could break a prompt line is not. */
static void
test_options_hostile(void **state)
{
	struct mission m;
	struct json_object *o, *res, *v;
	static const char *const refused[] = {
	    "{\"s\": \"a\\nb\"}",     /* newline */
	    "{\"s\": \"a\\rb\"}",     /* CR */
	    "{\"s\": \"a\\tb\"}",     /* tab */
	    "{\"s\": \"a\\u0001b\"}", /* C0 */
	    "{\"s\": \"a\\u001bb\"}", /* ESC */
	    "{\"s\": \"a\\u007fb\"}", /* DEL */
	    "{\"s\": \"a\\u0085b\"}", /* NEL (C1) */
	    "{\"s\": \"a\\u009bb\"}", /* CSI (C1) */
	    "{\"s\": \"a\\u2028b\"}", /* line separator */
	    "{\"s\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}", /* 41 */
	    NULL};
	static const char *const accepted[] = {
	    "{\"s\": \"sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA\"}",
	    "{\"s\": \"../../etc/passwd\"}", "{\"s\": \"--dangerously-skip\"}",
	    "{\"s\": \"$(rm -rf ~); `id` {s}\"}",
	    "{\"s\": \"\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
	    "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
	    "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
	    "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9"
	    "\\u00e9\\u00e9\\u00e9\\u00e9\\u00e9\"}", /* 40 chars, 80 bytes */
	    NULL};
	size_t i;

	(void)state;
	must_parse("id: t\nlabel: T\nagent: a\nprompt: \"<{s}>\"\n"
		   "options:\n  s: {type: string, maxLength: 40}\n"
		   "outputs:\n  - {type: event, event: a}\n",
	    &m);
	for (i = 0; refused[i] != NULL; i++)
		if (options(&m, refused[i], NULL) != -1)
			fail_msg("accepted #%zu", i);
	for (i = 0; accepted[i] != NULL; i++)
		if (options(&m, accepted[i], NULL) != 0)
			fail_msg("refused #%zu", i);
	/* invalid UTF-8 and an embedded NUL, built directly */
	o = json_object_new_object();
	json_object_object_add(o, "s", json_object_new_string("a\xff"));
	assert_int_equal(mission_options(&m, o, &res), -1);
	assert_null(res);
	json_object_object_add(o, "s", json_object_new_string("\xed\xa0\x80"));
	assert_int_equal(mission_options(&m, o, &res), -1);
	json_object_object_add(o, "s", json_object_new_string_len("a\0b", 3));
	assert_int_equal(mission_options(&m, o, &res), -1);
	assert_null(res);
	/* the secret-looking value is accepted, and only copied into the
	 * resolved object (mission_options has no error channel at all) */
	json_object_object_add(
	    o, "s", json_object_new_string("sk-ant-api03-LEAKLEAKLEAK"));
	assert_int_equal(mission_options(&m, o, &res), 0);
	assert_true(json_object_object_get_ex(res, "s", &v));
	assert_string_equal(
	    json_object_get_string(v), "sk-ant-api03-LEAKLEAKLEAK");
	assert_true(v != json_object_object_get(o, "s")); /* a copy */
	json_object_put(res);
	json_object_put(o);
	mission_free(&m);
}

static void
test_render(void **state)
{
	struct mission m;
	struct json_object *res, *o;
	char *out, *big;
	size_t i;

	(void)state;
	must_parse(weekly, &m);
	assert_int_equal(options(&m,
			     "{\"project\": \"--rm -rf\", \"tone\": \"plain\", "
			     "\"words\": 77}",
			     &res),
	    0);
	assert_int_equal(mission_render(&m, res, &out), 0);
	assert_string_equal(out, "Review --rm -rf; at most 77 words");
	free(out);
	/* a resolved object missing a placeholder's value, or of the
	 * wrong type, is refused */
	json_object_object_del(res, "words");
	out = (char *)1;
	assert_int_equal(mission_render(&m, res, &out), -1);
	assert_null(out);
	json_object_object_add(res, "words", json_object_new_string("77"));
	assert_int_equal(mission_render(&m, res, &out), -1);
	json_object_put(res);
	assert_int_equal(mission_render(&m, NULL, &out), -1);
	mission_free(&m);

	/* values are inserted once, never re-expanded; booleans and
	 * negative integers as text */
	must_parse("id: t\nlabel: T\nagent: a\n"
		   "prompt: \"[{a}] [{b}] [{n}] [{f}]\"\n"
		   "options:\n  a: {type: string, maxLength: 40}\n"
		   "  b: {type: string, maxLength: 40, default: x}\n"
		   "  n: {type: integer, min: -5, max: 5, default: -5}\n"
		   "  f: {type: boolean, default: false}\n"
		   "outputs:\n  - {type: event, event: a}\n",
	    &m);
	assert_int_equal(
	    options(&m, "{\"a\": \"{b} {{n}} } \\\" ' x y\"}", &res), 0);
	assert_int_equal(mission_render(&m, res, &out), 0);
	assert_string_equal(out, "[{b} {{n}} } \" ' x y] [x] [-5] [false]");
	free(out);
	json_object_put(res);
	mission_free(&m);

	/* over LIM_PROMPT_MAX_CHARS after expansion: refused */
	big = malloc(MI_PROMPT_MAX + 512);
	assert_non_null(big);
	i = (size_t)snprintf(big, 512,
	    "id: t\nlabel: T\nagent: a\noptions:\n"
	    "  a: {type: string, maxLength: 4096}\n"
	    "outputs:\n  - {type: event, event: a}\nprompt: \"");
	for (; i < 100 * 3 + 200; i += 3)
		memcpy(big + i, "{a}", 3);
	memcpy(big + i, "\"\n", 3);
	must_parse(big, &m);
	free(big);
	big = malloc(4097);
	assert_non_null(big);
	memset(big, 'q', 4096);
	big[4096] = '\0';
	o = json_object_new_object();
	json_object_object_add(o, "a", json_object_new_string(big));
	assert_int_equal(mission_options(&m, o, &res), 0);
	assert_int_equal(mission_render(&m, res, &out), -1);
	assert_null(out);
	json_object_put(res);
	/* small enough: one string of the exact size */
	big[100] = '\0';
	json_object_object_add(o, "a", json_object_new_string(big));
	assert_int_equal(mission_options(&m, o, &res), 0);
	assert_int_equal(mission_render(&m, res, &out), 0);
	assert_true(strlen(out) % 100 == 0 && strlen(out) > 10000);
	free(out);
	json_object_put(res);
	json_object_put(o);
	free(big);
	mission_free(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_weekly_example),
	    cmocka_unit_test(test_daily_example),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_refused_top),
	    cmocka_unit_test(test_refused_prompt),
	    cmocka_unit_test(test_refused_options),
	    cmocka_unit_test(test_refused_patterns),
	    cmocka_unit_test(test_refused_outputs),
	    cmocka_unit_test(test_refused_permissions_trigger),
	    cmocka_unit_test(test_permitted),
	    cmocka_unit_test(test_options_types),
	    cmocka_unit_test(test_options_hostile),
	    cmocka_unit_test(test_render),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
