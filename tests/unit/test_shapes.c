/*
 * SU-3: every dispatch row's declared payload shape, tried with hostile
 * payloads made from the declaration itself: each key missing, null,
 * of every other type, one past each bound, with a NUL; a leftover key.
 * One row of the table per dispatch row of every daemon; the codec's
 * use of a row's shape (refused before the handler, answered with the
 * row's code) is test_ipc's test_su3_shape_before_handler.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "daemon.h"
#include "json.h"
#include "auditd/auditd_shapes.h"
#include "broker/broker_shapes.h"
#include "egressd/egressd_shapes.h"
#include "sched/sched_shapes.h"
#include "gated/gated_shapes.h"
#include "spawner/spawner_shapes.h"
#include "supervisor/cordond_shapes.h"
#include "vaultd/vaultd_shapes.h"

#define ROW(name, s, good)                                                     \
	{                                                                      \
		name, s, sizeof(s) / sizeof((s)[0]), good                      \
	}

static const struct row {
	const char *r_name;
	const struct json_shape *r_shape;
	size_t r_n;
	const char *r_good; /* a payload that fits */
} rows[] = {
    /* Rows of every daemon's parent table, and the broker's status. */
    {"MSG_STATUS, MSG_SHUTDOWN, MSG_HEALTH, MSG_LOGIN_USED, "
     "MSG_AGENT_LIST, MSG_APPROVAL_LIST, MSG_MISSION_LIST",
	NULL, 0, "{}"},
    ROW("MSG_PEER_FD", daemon_peer_fd_shape, "{\"peer\":\"broker\"}"),
    /* cordond */
    ROW("MSG_SESSION_ADD", session_add_shape,
	"{\"id\":\"0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef\","
	"\"page\":\"0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef\"}"),
    ROW("MSG_PEER_BAD", peer_bad_shape, "{\"peer\":\"spawner\"}"),
    /* broker */
    ROW("MSG_BROKER_CONFIG", config_shape,
	"{\"token\":\"0123456789abcdef0123456789abcdef"
	"0123456789abcdef0123456789abcdef\",\"port\":8080,"
	"\"listen\":\"127.0.0.1\",\"loginCode\":\"x\",\"origins\":[],"
	"\"sessions\":[]}"),
    ROW("MSG_RUN_EVENT", run_event_shape,
	"{\"runId\":\"0123456789abcdef\",\"kind\":\"token\","
	"\"text\":\"hi\"}"),
    /* auditd */
    ROW("MSG_AUDIT_RECORD", record_shape,
	"{\"kind\":\"system.boot\",\"version\":\"1\"}"),
    ROW("MSG_AUDIT_TAIL", tail_shape,
	"{\"limit\":1,\"kind\":\"system.boot\",\"agent\":\"a\","
	"\"since\":0}"),
    /* vaultd */
    ROW("MSG_VAULT_CHAT_NOTE", chat_shape,
	"{\"agent\":\"a\",\"prompt\":\"p\",\"promptSha8\":\"01234567\","
	"\"response\":\"r\",\"time\":0}"),
    ROW("MSG_VAULT_MISSION_NOTE", mission_shape,
	"{\"missionId\":\"m\",\"folder\":\"f\",\"hint\":\"h\","
	"\"content\":\"c\"}"),
    ROW("MSG_VAULT_READ", read_shape, "{\"path\":\"a.md\"}"),
    ROW("MSG_VAULT_LIST", list_shape, "{\"dir\":\"\"}"),
    /* spawner */
    ROW("MSG_AGENT_GET", agent_get_shape, "{\"name\":\"a\"}"),
    ROW("MSG_RUN_START", run_start_shape,
	"{\"agent\":\"a\",\"prompt\":\"p\",\"session\":\"s\","
	"\"via\":\"mcp\",\"worktree\":\"/r\"}"),
    ROW("MSG_RUN_CANCEL", run_id_shape, "{\"runId\":\"0123456789abcdef\"}"),
    ROW("MSG_ACTION_RUN", action_run_shape,
	"{\"agent\":\"a\",\"action\":\"x\"}"),
    ROW("MSG_RUN_CREDIT", run_credit_shape,
	"{\"runId\":\"0123456789abcdef\",\"bytes\":1}"),
    ROW("MSG_MISSION_FIRE", mission_fire_shape,
	"{\"id\":\"m\",\"now\":true,\"missed\":false}"),
    ROW("MSG_MISSION_RUN", mission_run_shape, "{\"id\":\"m\",\"options\":{}}"),
    ROW("MSG_EGRESS_CONN", egress_conn_shape,
	"{\"runId\":\"0123456789abcdef\",\"conn\":1,\"state\":\"end\","
	"\"host\":\"example.com\",\"port\":443,\"decision\":\"allow\","
	"\"rule\":\"allow.0\",\"reason\":\"x\",\"end\":\"closed\","
	"\"bytesUp\":0,\"bytesDown\":0,\"durationMs\":0}"),
    ROW("MSG_JOB_GET, MSG_JOB_CANCEL", job_id_shape, "{\"jobId\":\"j\"}"),
    ROW("MSG_WORKTREE_REMOVE", worktree_id_shape, "{\"id\":\"w\"}"),
    ROW("MSG_JOB_EVENTS", job_events_shape,
	"{\"jobId\":\"j\",\"offset\":0,\"limit\":1}"),
    ROW("MSG_JOB_WAIT", job_wait_shape, "{\"jobId\":\"j\",\"timeoutMs\":0}"),
    ROW("MSG_GATE_SCRUB", gate_scrub_shape,
	"{\"runId\":\"0123456789abcdef\",\"text\":\"ls\"}"),
    /* egressd */
    ROW("MSG_EGRESS_OPEN", open_shape,
	"{\"runId\":\"0123456789abcdef\",\"agent\":\"a\","
	"\"allow\":[\"example.com:443\"],\"maxConnections\":1,"
	"\"maxBytes\":1,\"idleTimeoutSec\":1,\"testResolve\":{},"
	"\"testAllowAddress\":\"127.0.0.1\",\"routes\":[]}"),
    ROW("MSG_EGRESS_CLOSE", close_shape, "{\"runId\":\"0123456789abcdef\"}"),
    /* sched (MI-1) */
    ROW("MSG_MISSION_CRON", mission_cron_shape, "{\"missions\":[]}"),
    ROW("MSG_MISSION_CRON (one mission)", mission_cron_item_shape,
	"{\"id\":\"m\",\"cron\":\"0 9 * * 1\",\"timezone\":\"UTC\"}"),
    /* gated */
    ROW("MSG_GATE_OPEN", gate_open_shape,
	"{\"runId\":\"0123456789abcdef\",\"agent\":\"a\","
	"\"workspace\":\"/w\",\"commands\":{},\"home\":\"/h\","
	"\"protect\":[],\"runs\":\"/r\"}"),
    ROW("MSG_GATE_RELAY, MSG_GATE_CLOSE", gate_run_shape,
	"{\"runId\":\"0123456789abcdef\"}"),
    ROW("MSG_APPROVAL_DECIDE", approval_decide_shape,
	"{\"id\":\"0123456789abcdef\",\"decision\":\"allow\"}"),
    ROW("gate call (the gate channel)", gate_call_shape,
	"{\"tool\":\"Bash\",\"kind\":\"shell\",\"cwd\":\"/w\","
	"\"filePath\":\"a\",\"line\":\"ls\",\"argv\":[\"ls\"],"
	"\"deadline\":1}"),
};

/* The shape's verdict on good with key set to v (NULL: JSON null). */
static int
with(const struct row *r, const char *key, struct json_object *v)
{
	struct json_object *o;
	int ok;

	o = json_parse_object(r->r_good, strlen(r->r_good), 16);
	assert_non_null(o);
	json_object_object_add(o, key, v);
	ok = json_shape_ok(o, r->r_shape, r->r_n);
	json_object_put(o);
	return ok;
}

/* The shape's verdict on good without key. */
static int
without(const struct row *r, const char *key)
{
	struct json_object *o;
	int ok;

	o = json_parse_object(r->r_good, strlen(r->r_good), 16);
	assert_non_null(o);
	json_object_object_del(o, key);
	ok = json_shape_ok(o, r->r_shape, r->r_n);
	json_object_put(o);
	return ok;
}

static struct json_object *
str_of_len(long long len, char c)
{
	struct json_object *v;
	char *buf;

	assert_true(len >= 0 && len < 64LL * 1024 * 1024);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	memset(buf, c, (size_t)len);
	v = json_object_new_string_len(buf, (int)len);
	free(buf);
	return v;
}

static struct json_object *
arr_of_len(long long n)
{
	struct json_object *a = json_object_new_array();

	while (n-- > 0)
		json_object_array_add(a, json_object_new_int(0));
	return a;
}

/* One of each JSON type but the declared one, and null. */
static void
wrong_types(const struct row *r, const struct json_shape *js)
{
	struct json_object *v[] = {
	    json_object_new_string("1"),
	    json_object_new_int(1),
	    json_object_new_double(1.5),
	    json_object_new_boolean(1),
	    json_object_new_array(),
	    json_object_new_object(),
	};
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (json_object_is_type(v[i], (enum json_type)js->js_type)) {
			json_object_put(v[i]);
			continue;
		}
		if (with(r, js->js_key, v[i]))
			fail_msg("%s: %s of type %d passed", r->r_name,
			    js->js_key, (int)json_object_get_type(v[i]));
	}
	/* JSON null, the hole a failed constructor leaves. */
	if (with(r, js->js_key, NULL))
		fail_msg("%s: %s null passed", r->r_name, js->js_key);
}

static void
bounds(const struct row *r, const struct json_shape *js)
{
	struct json_object *nul;

	switch (js->js_type) {
	case json_type_string:
		assert_true(with(r, js->js_key, str_of_len(js->js_max, 'a')));
		assert_false(
		    with(r, js->js_key, str_of_len(js->js_max + 1, 'a')));
		if (js->js_min > 0)
			assert_false(with(
			    r, js->js_key, str_of_len(js->js_min - 1, 'a')));
		if (js->js_max > 0) {
			nul = str_of_len(js->js_max, '\0');
			assert_false(with(r, js->js_key, nul));
		}
		break;
	case json_type_int:
		assert_true(
		    with(r, js->js_key, json_object_new_int64(js->js_max)));
		assert_true(
		    with(r, js->js_key, json_object_new_int64(js->js_min)));
		if (js->js_max < LLONG_MAX)
			assert_false(with(r, js->js_key,
			    json_object_new_int64(js->js_max + 1)));
		if (js->js_min > LLONG_MIN)
			assert_false(with(r, js->js_key,
			    json_object_new_int64(js->js_min - 1)));
		break;
	case json_type_array:
		assert_true(with(r, js->js_key, arr_of_len(js->js_max)));
		assert_false(with(r, js->js_key, arr_of_len(js->js_max + 1)));
		break;
	default:
		break;
	}
}

/* SU-3: hostile payloads, made from each row's declaration. */
static void
test_su3_rows_refuse_hostile_payloads(void **state)
{
	const struct row *r;
	const struct json_shape *js;
	size_t i, k;
	int rest;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		r = &rows[i];
		rest = 0;
		for (k = 0; k < r->r_n; k++)
			rest |= r->r_shape[k].js_type == JSON_SHAPE_REST;
		if (!without(r, "zz"))
			fail_msg(
			    "%s: its good payload did not pass", r->r_name);
		/* A key nobody declared. */
		if (with(r, "zz", json_object_new_int(1)) != rest)
			fail_msg("%s: a leftover key", r->r_name);
		for (k = 0; k < r->r_n; k++) {
			js = &r->r_shape[k];
			if (js->js_type == JSON_SHAPE_REST)
				continue;
			if (without(r, js->js_key) == js->js_required)
				fail_msg(
				    "%s: %s missing", r->r_name, js->js_key);
			wrong_types(r, js);
			bounds(r, js);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_su3_rows_refuse_hostile_payloads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
