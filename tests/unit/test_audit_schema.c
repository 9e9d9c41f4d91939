/*
 * Unit tests for common/audit_schema.c: every kind of AU-3 accepted in
 * its documented shape and field order, and every hostile variant (AU-2,
 * AU-4: unknown kind or field, missing field, wrong type, bad pattern,
 * bound or sender) refused.
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

#include "audit_schema.h"
#include "json.h"

/* Validate JSON text as sent by `from`: 0 or -1; *keys gets the output's
 * keys joined by ',' when accepted. */
static int
check(const char *text, enum proc_id from, char *keys, size_t keysz)
{
	struct json_object *in, *out;
	int rc;

	in = json_parse_object(text, strlen(text), JSON_MAX_DEPTH);
	assert_non_null(in);
	rc = audit_validate(in, from, &out);
	json_object_put(in);
	if (rc == 0) {
		assert_non_null(out);
		if (keys != NULL) {
			keys[0] = '\0';
			json_object_object_foreach (out, k, v) {
				(void)v;
				if (keys[0] != '\0')
					strncat(keys, ",",
					    keysz - strlen(keys) - 1);
				strncat(keys, k, keysz - strlen(keys) - 1);
			}
		}
		json_object_put(out);
	} else
		assert_null(out);
	return rc;
}

#define OK(t, f)  assert_int_equal(check((t), (f), NULL, 0), 0)
#define BAD(t, f) assert_int_equal(check((t), (f), NULL, 0), -1)

#define INVOKE                                                                 \
	"\"kind\":\"agent.invoke\",\"agent\":\"demo\","                        \
	"\"runId\":\"0123456789abcdef\",\"transport\":\"subprocess\","         \
	"\"bin\":\"claude\",\"argsRedacted\":[\"-p\",\"[PROMPT_REDACTED]\"],"  \
	"\"promptSha256\":\"deadbeef\",\"promptChars\":12"

static void
test_au3_every_kind_in_schema_order(void **state)
{
	static const struct {
		const char *text;
		enum proc_id from;
		const char *keys;
	} v[] = {
	    {"{" INVOKE "}", PROC_SPAWNER,
		"kind,agent,runId,transport,bin,argsRedacted,promptSha256,"
		"promptChars"},
	    {"{\"truncated\":false,\"status\":\"success\",\"bytesOut\":3,"
	     "\"exitCode\":0,\"durationMs\":5,\"runId\":\"0123456789abcdef\","
	     "\"agent\":\"demo\",\"kind\":\"agent.invoke.complete\"}",
		PROC_SPAWNER,
		"kind,agent,runId,durationMs,exitCode,bytesOut,status,"
		"truncated"},
	    {"{\"kind\":\"agent.invoke.error\",\"agent\":\"a\",\"runId\":"
	     "\"0123456789abcdef\",\"errorClass\":\"timeout\",\"exitCode\":"
	     "-1,\"stderrSha8\":\"00ff00ff\",\"stderrChars\":0,"
	     "\"transport\":\"streamJson\"}",
		PROC_SPAWNER,
		"kind,agent,runId,errorClass,exitCode,stderrSha8,stderrChars,"
		"transport"},
	    {"{\"kind\":\"agent.action\",\"agent\":\"a\",\"actionId\":\"git-"
	     "status\",\"exitCode\":1,\"durationMs\":2,\"stdoutChars\":3,"
	     "\"stderrChars\":4,\"status\":\"error\",\"errorClass\":"
	     "\"non-zero-exit\"}",
		PROC_SPAWNER,
		"kind,agent,actionId,exitCode,durationMs,stdoutChars,"
		"stderrChars,status,errorClass"},
	    {"{\"kind\":\"vault.write\",\"agent\":\"a\",\"path\":\"00_Inbox/"
	     "cordon/note-1.md\",\"action\":\"create\",\"bytes\":10}",
		PROC_VAULTD, "kind,agent,path,action,bytes"},
	    {"{\"kind\":\"vault.update\",\"missionId\":\"daily\",\"action\":"
	     "\"update\",\"bytes\":0}",
		PROC_VAULTD, "kind,missionId,action,bytes"},
	    {"{\"kind\":\"mission.run\",\"missionId\":\"daily\",\"runId\":"
	     "\"0123456789abcdef\",\"trigger\":\"cron\",\"status\":\"denied\","
	     "\"durationMs\":1,\"outputsPersisted\":0,\"outputsEmitted\":2,"
	     "\"errorClass\":\"not-allowed\"}",
		PROC_SPAWNER,
		"kind,missionId,runId,trigger,status,durationMs,"
		"outputsPersisted,outputsEmitted,errorClass"},
	    {"{\"kind\":\"verb.run\",\"agent\":\"a\",\"runId\":"
	     "\"0123456789abcdef\",\"verb\":\"ls\",\"verdict\":\"allow\","
	     "\"rule\":\"allowlist\"}",
		PROC_GATED, "kind,agent,runId,verb,verdict,rule"},
	    {"{\"kind\":\"http.request\",\"method\":\"POST\",\"route\":\"/api/"
	     "agents/{}/run\",\"status\":201,\"durationMs\":3,\"bytesIn\":40,"
	     "\"bytesOut\":2}",
		PROC_BROKER,
		"kind,method,route,status,durationMs,bytesIn,bytesOut"},
	    /* EG-4 */
	    {"{\"kind\":\"egress.connect\",\"runId\":\"0123456789abcdef\","
	     "\"agent\":\"a\",\"host\":\"api.example.com\",\"port\":443,"
	     "\"decision\":\"allow\",\"rule\":\"allow.0\",\"end\":"
	     "\"closed\",\"bytesUp\":10,\"bytesDown\":20,\"durationMs\":5}",
		PROC_EGRESSD,
		"kind,runId,agent,host,port,decision,rule,end,bytesUp,"
		"bytesDown,durationMs"},
	    /* EG-3, EG-4: a routed request */
	    {"{\"kind\":\"egress.request\",\"runId\":\"0123456789abcdef\","
	     "\"agent\":\"a\",\"route\":\"anthropic\",\"host\":"
	     "\"api.anthropic.com\",\"port\":443,\"decision\":\"allow\","
	     "\"rule\":\"allow.0\",\"end\":\"closed\",\"status\":200,"
	     "\"bytesUp\":10,\"bytesDown\":20,\"durationMs\":5}",
		PROC_EGRESSD,
		"kind,runId,agent,route,host,port,decision,rule,end,status,"
		"bytesUp,bytesDown,durationMs"},
	    /* MC-3 */
	    {"{\"kind\":\"job.start\",\"jobId\":\"0123456789abcdef\","
	     "\"agent\":\"a\",\"via\":\"mcp\"}",
		PROC_SPAWNER, "kind,jobId,agent,via"},
	    {"{\"kind\":\"job.end\",\"jobId\":\"0123456789abcdef\","
	     "\"agent\":\"a\",\"state\":\"cancelled\",\"cancelReason\":"
	     "\"requested\",\"durationMs\":5,\"events\":3,\"bytes\":90}",
		PROC_SPAWNER,
		"kind,jobId,agent,state,cancelReason,durationMs,events,bytes"},
	    /* MC-2 */
	    {"{\"kind\":\"worktree.create\",\"worktreeId\":"
	     "\"0123456789abcdef\",\"agent\":\"a\"}",
		PROC_SPAWNER, "kind,worktreeId,agent"},
	    {"{\"kind\":\"worktree.remove\",\"worktreeId\":"
	     "\"0123456789abcdef\"}",
		PROC_SPAWNER, "kind,worktreeId"},
	    {"{\"kind\":\"system.boot\",\"version\":\"0.1.0\"}", PROC_PARENT,
		"kind,version"},
	    {"{\"kind\":\"system.shutdown\",\"reason\":\"fatal\"}", PROC_PARENT,
		"kind,reason"},
	    {"{\"kind\":\"system.restart\",\"daemon\":\"auditd\",\"restarts\":"
	     "3}",
		PROC_PARENT, "kind,daemon,restarts"},
	    {"{\"kind\":\"audit.retention\",\"deleted\":[\"2020-01-01\"]}",
		PROC_AUDITD, "kind,deleted"},
	};
	char keys[512];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(
		    check(v[i].text, v[i].from, keys, sizeof(keys)), 0);
		assert_string_equal(keys, v[i].keys);
	}
	/* Every kind of the table was exercised above. */
	audit_kinds(&n);
	assert_int_equal(n, sizeof(v) / sizeof(v[0]));
}

static void
test_au2_unknown_kind_or_field_refused(void **state)
{
	(void)state;
	BAD("{\"kind\":\"agent.invoked\"}", PROC_SPAWNER);
	BAD("{\"kind\":\"\"}", PROC_PARENT);
	BAD("{\"kind\":7,\"version\":\"1\"}", PROC_PARENT);
	BAD("{\"version\":\"0.1.0\"}", PROC_PARENT);
	BAD("{\"kind\":\"SYSTEM.BOOT\",\"version\":\"0.1.0\"}", PROC_PARENT);
	/* AU-4: no free-form field rides along, whatever its name. */
	BAD("{" INVOKE ",\"prompt\":\"hello\"}", PROC_SPAWNER);
	BAD("{" INVOKE ",\"stderr\":\"x\"}", PROC_SPAWNER);
	BAD("{\"kind\":\"system.boot\",\"version\":\"0.1.0\",\"message\":"
	    "\"x\"}",
	    PROC_PARENT);
	/* Fields the line gets from auditd are not the sender's to set. */
	BAD("{\"kind\":\"system.boot\",\"version\":\"0.1.0\",\"seq\":1}",
	    PROC_PARENT);
	BAD("{\"kind\":\"system.boot\",\"version\":\"0.1.0\",\"ts\":\"x\"}",
	    PROC_PARENT);
}

static void
test_au2_missing_or_mistyped_field_refused(void **state)
{
	(void)state;
	BAD("{\"kind\":\"system.boot\"}", PROC_PARENT);
	BAD("{\"kind\":\"system.boot\",\"version\":1}", PROC_PARENT);
	BAD("{\"kind\":\"system.boot\",\"version\":null}", PROC_PARENT);
	BAD("{\"kind\":\"system.restart\",\"daemon\":\"broker\",\"restarts\":"
	    "\"1\"}",
	    PROC_PARENT);
	BAD("{\"kind\":\"system.restart\",\"daemon\":\"broker\",\"restarts\":"
	    "1.0}",
	    PROC_PARENT);
	BAD("{\"kind\":\"system.restart\",\"daemon\":\"broker\",\"restarts\":"
	    "true}",
	    PROC_PARENT);
	BAD("{\"kind\":\"agent.invoke.complete\",\"agent\":\"a\",\"runId\":"
	    "\"0123456789abcdef\",\"durationMs\":5,\"exitCode\":0,"
	    "\"bytesOut\":3,\"status\":\"success\",\"truncated\":0}",
	    PROC_SPAWNER);
	BAD("{\"kind\":\"audit.retention\",\"deleted\":\"2020-01-01\"}",
	    PROC_AUDITD);
	BAD("{\"kind\":\"audit.retention\",\"deleted\":[20200101]}",
	    PROC_AUDITD);
}

static void
test_au2_integer_bounds(void **state)
{
	(void)state;
	OK("{\"kind\":\"system.restart\",\"daemon\":\"vaultd\",\"restarts\":"
	   "9007199254740992}",
	    PROC_PARENT);
	BAD("{\"kind\":\"system.restart\",\"daemon\":\"vaultd\",\"restarts\":"
	    "9007199254740993}",
	    PROC_PARENT);
	BAD("{\"kind\":\"system.restart\",\"daemon\":\"vaultd\",\"restarts\":"
	    "-1}",
	    PROC_PARENT);
	BAD("{\"kind\":\"system.restart\",\"daemon\":\"vaultd\",\"restarts\":"
	    "18446744073709551615}",
	    PROC_PARENT);
	BAD("{\"kind\":\"system.restart\",\"daemon\":\"vaultd\",\"restarts\":"
	    "1e3}",
	    PROC_PARENT);
	/* EG-4: egressd alone; a host is a name or address, nothing else. */
#define EGC(host)                                                              \
	"{\"kind\":\"egress.connect\",\"runId\":\"0123456789abcdef\","         \
	"\"agent\":\"a\"," host "\"decision\":\"deny\",\"reason\":"            \
	"\"host-not-allowed\",\"bytesUp\":0,\"bytesDown\":0,\"durationMs\":0}"
	OK(EGC(""), PROC_EGRESSD);
	OK(EGC("\"host\":\"2001:db8::1\","), PROC_EGRESSD);
	BAD(EGC(""), PROC_SPAWNER);
	BAD(EGC("\"host\":\"a.com/x\","), PROC_EGRESSD);
	BAD(EGC("\"host\":\"A.com\","), PROC_EGRESSD);
	BAD(EGC("\"headers\":\"x\","), PROC_EGRESSD);
#undef EGC
	/* EG-3: a routed request's record: the route's name, no path. */
#define EGR(extra)                                                             \
	"{\"kind\":\"egress.request\",\"runId\":\"0123456789abcdef\","         \
	"\"agent\":\"a\"," extra "\"decision\":\"deny\",\"reason\":"           \
	"\"route-not-found\",\"bytesUp\":0,\"bytesDown\":0,\"durationMs\":0}"
	OK(EGR(""), PROC_EGRESSD);
	BAD(EGR(""), PROC_SPAWNER);
	BAD(EGR("\"route\":\"/anthropic/v1\","), PROC_EGRESSD);
	BAD(EGR("\"path\":\"/v1\","), PROC_EGRESSD);
	BAD(EGR("\"status\":600,"), PROC_EGRESSD);
#undef EGR
	BAD("{\"kind\":\"http.request\",\"method\":\"GET\",\"route\":\"other\","
	    "\"status\":99,\"durationMs\":0,\"bytesIn\":0,\"bytesOut\":0}",
	    PROC_BROKER);
	BAD("{\"kind\":\"http.request\",\"method\":\"GET\",\"route\":\"other\","
	    "\"status\":600,\"durationMs\":0,\"bytesIn\":0,\"bytesOut\":0}",
	    PROC_BROKER);
	BAD("{\"kind\":\"agent.invoke.error\",\"agent\":\"a\",\"runId\":"
	    "\"0123456789abcdef\",\"errorClass\":\"timeout\",\"exitCode\":"
	    "256,\"stderrSha8\":\"00ff00ff\",\"stderrChars\":0,"
	    "\"transport\":\"streamJson\"}",
	    PROC_SPAWNER);
	BAD("{\"kind\":\"agent.invoke.error\",\"agent\":\"a\",\"runId\":"
	    "\"0123456789abcdef\",\"errorClass\":\"timeout\",\"exitCode\":"
	    "-2,\"stderrSha8\":\"00ff00ff\",\"stderrChars\":0,"
	    "\"transport\":\"streamJson\"}",
	    PROC_SPAWNER);
}

static void
test_au2_patterns(void **state)
{
	static const struct {
		enum audit_pat p;
		const char *s;
		int ok;
	} v[] = {
	    {AP_NAME, "demo-1", 1},
	    {AP_NAME, "Demo", 0},
	    {AP_NAME, "-a", 0},
	    {AP_NAME, "", 0},
	    {AP_NAME, "a_b", 0},
	    {AP_NAME, "a b", 0},
	    {AP_ACTIONID, "git-status", 1},
	    {AP_ACTIONID, "abcdefghijabcdefghijabcdefghijab", 1},
	    {AP_ACTIONID, "abcdefghijabcdefghijabcdefghijabc", 0},
	    {AP_RUNID, "0123456789abcdef", 1},
	    {AP_RUNID, "0123456789ABCDEF", 0},
	    {AP_RUNID, "0123456789abcde", 0},
	    {AP_HEX8, "deadbeef", 1},
	    {AP_HEX8, "deadbeefa", 0},
	    {AP_HEX8, "deadbeeg", 0},
	    {AP_BIN, "claude-code_1.2+x", 1},
	    {AP_BIN, "a/b", 0},
	    {AP_VPATH, "00_Inbox/cordon/n.md", 1},
	    {AP_VPATH, "a..b.md", 1},
	    {AP_VPATH, "../x.md", 0},
	    {AP_VPATH, "a/../b", 0},
	    {AP_VPATH, "/etc/passwd", 0},
	    {AP_VPATH, "a//b", 0},
	    {AP_VPATH, "a/./b", 0},
	    {AP_VPATH, "a/", 0},
	    {AP_VPATH, "..", 0},
	    {AP_VPATH, "a b", 0},
	    {AP_VERSION, "0.1.0+git-1", 1},
	    {AP_VERSION, "0.1 0", 0},
	    {AP_ROUTE, "/api/agents/{}/run", 1},
	    {AP_ROUTE, "/API", 0},
	    {AP_ROUTE, "/api?x", 0},
	    {AP_RULE, "git.no-c", 1},
	    {AP_RULE, ".x", 0},
	    {AP_ERRWORD, "not-allowed", 1},
	    {AP_ERRWORD, "1x", 0},
	    {AP_ERRWORD, "-x", 0},
	    {AP_ERRWORD, "a_b", 0},
	    {AP_DATE, "2026-11-26", 1},
	    {AP_DATE, "2026-1-26", 0},
	    {AP_DATE, "2026/11/26", 0},
	    {AP_DATE, "20261126xx", 0},
	};
	char long65[66];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (audit_pattern_ok(v[i].p, v[i].s, strlen(v[i].s)) != v[i].ok)
			fail_msg("pattern %d on \"%s\"", (int)v[i].p, v[i].s);
	}
	memset(long65, 'a', 65);
	long65[65] = '\0';
	assert_int_equal(audit_pattern_ok(AP_NAME, long65, 64), 1);
	assert_int_equal(audit_pattern_ok(AP_NAME, long65, 65), 0);
	/* Embedded NUL never passes. */
	assert_int_equal(audit_pattern_ok(AP_NAME, "ab\0c", 4), 0);
}

static void
test_au2_wrong_sender_refused(void **state)
{
	(void)state;
	BAD("{" INVOKE "}", PROC_BROKER);
	BAD("{" INVOKE "}", PROC_PARENT);
	BAD("{" INVOKE "}", PROC_VAULTD);
	BAD("{\"kind\":\"system.boot\",\"version\":\"0.1.0\"}", PROC_BROKER);
	BAD("{\"kind\":\"system.boot\",\"version\":\"0.1.0\"}", PROC_SPAWNER);
	BAD("{\"kind\":\"http.request\",\"method\":\"GET\",\"route\":\"other\","
	    "\"status\":200,\"durationMs\":0,\"bytesIn\":0,\"bytesOut\":0}",
	    PROC_SPAWNER);
	BAD("{\"kind\":\"vault.write\",\"agent\":\"a\",\"path\":\"n.md\","
	    "\"action\":\"create\",\"bytes\":1}",
	    PROC_SPAWNER);
	/* audit.retention is auditd's own: no channel may send it. */
	BAD("{\"kind\":\"audit.retention\",\"deleted\":[]}", PROC_PARENT);
	BAD("{\"kind\":\"audit.retention\",\"deleted\":[]}", PROC_BROKER);
	BAD("{\"kind\":\"system.boot\",\"version\":\"0.1.0\"}", PROC_MAX);
}

static void
test_au4_args_redacted_bounds(void **state)
{
	char buf[8192], *p;
	int i;

	(void)state;
	/* 64 elements pass, 65 do not. */
	for (int n = 64; n <= 65; n++) {
		p = buf +
		    sprintf(buf,
			"{\"kind\":\"agent.invoke\",\"agent\":\"demo\","
			"\"runId\":\"0123456789abcdef\",\"transport\":"
			"\"subprocess\",\"bin\":\"x\",\"argsRedacted\":[");
		for (i = 0; i < n; i++)
			p += sprintf(p, "%s\"a\"", i ? "," : "");
		sprintf(
		    p, "],\"promptSha256\":\"deadbeef\",\"promptChars\":1}");
		assert_int_equal(
		    check(buf, PROC_SPAWNER, NULL, 0), n == 64 ? 0 : -1);
	}
	/* 256 bytes pass, 257 do not. */
	for (int n = 256; n <= 257; n++) {
		p = buf +
		    sprintf(buf,
			"{\"kind\":\"agent.invoke\",\"agent\":\"demo\","
			"\"runId\":\"0123456789abcdef\",\"transport\":"
			"\"subprocess\",\"bin\":\"x\",\"argsRedacted\":[\"");
		memset(p, 'x', (size_t)n);
		sprintf(p + n,
		    "\"],\"promptSha256\":\"deadbeef\",\"promptChars\":1}");
		assert_int_equal(
		    check(buf, PROC_SPAWNER, NULL, 0), n == 256 ? 0 : -1);
	}
	/* Printable ASCII only: no control bytes, no UTF-8. */
	BAD("{\"kind\":\"agent.invoke\",\"agent\":\"demo\",\"runId\":"
	    "\"0123456789abcdef\",\"transport\":\"subprocess\",\"bin\":\"x\","
	    "\"argsRedacted\":[\"a\\nb\"],\"promptSha256\":\"deadbeef\","
	    "\"promptChars\":1}",
	    PROC_SPAWNER);
	BAD("{\"kind\":\"agent.invoke\",\"agent\":\"demo\",\"runId\":"
	    "\"0123456789abcdef\",\"transport\":\"subprocess\",\"bin\":\"x\","
	    "\"argsRedacted\":[\"caf\xc3\xa9\"],\"promptSha256\":\"deadbeef\","
	    "\"promptChars\":1}",
	    PROC_SPAWNER);
	BAD("{\"kind\":\"agent.invoke\",\"agent\":\"demo\",\"runId\":"
	    "\"0123456789abcdef\",\"transport\":\"subprocess\",\"bin\":\"x\","
	    "\"argsRedacted\":[1],\"promptSha256\":\"deadbeef\","
	    "\"promptChars\":1}",
	    PROC_SPAWNER);
	BAD("{\"kind\":\"agent.invoke\",\"agent\":\"demo\",\"runId\":"
	    "\"0123456789abcdef\",\"transport\":\"subprocess\",\"bin\":\"x\","
	    "\"argsRedacted\":[[\"a\"]],\"promptSha256\":\"deadbeef\","
	    "\"promptChars\":1}",
	    PROC_SPAWNER);
	/* promptSha256 is 8 hex, never the whole digest. */
	BAD("{\"kind\":\"agent.invoke\",\"agent\":\"demo\",\"runId\":"
	    "\"0123456789abcdef\",\"transport\":\"subprocess\",\"bin\":\"x\","
	    "\"argsRedacted\":[],\"promptSha256\":\"deadbeefdeadbeef\","
	    "\"promptChars\":1}",
	    PROC_SPAWNER);
}

static void
test_au4_vault_notes_one_owner_mission_path_absent(void **state)
{
	(void)state;
	/* MI-4: a mission note's vault path is never recorded. */
	BAD("{\"kind\":\"vault.write\",\"missionId\":\"m\",\"path\":\"a.md\","
	    "\"action\":\"create\",\"bytes\":1}",
	    PROC_VAULTD);
	BAD("{\"kind\":\"vault.write\",\"agent\":\"a\",\"missionId\":\"m\","
	    "\"path\":\"a.md\",\"action\":\"create\",\"bytes\":1}",
	    PROC_VAULTD);
	BAD("{\"kind\":\"vault.write\",\"action\":\"create\",\"bytes\":1}",
	    PROC_VAULTD);
	BAD("{\"kind\":\"vault.write\",\"agent\":\"a\",\"action\":\"create\","
	    "\"bytes\":1}",
	    PROC_VAULTD);
	BAD("{\"kind\":\"vault.write\",\"agent\":\"a\",\"path\":\"../a.md\","
	    "\"action\":\"create\",\"bytes\":1}",
	    PROC_VAULTD);
	BAD("{\"kind\":\"vault.write\",\"agent\":\"a\",\"path\":\"a.md\","
	    "\"action\":\"delete\",\"bytes\":1}",
	    PROC_VAULTD);
}

static void
test_au2_enums_exact(void **state)
{
	(void)state;
	BAD("{\"kind\":\"system.shutdown\",\"reason\":\"Signal\"}",
	    PROC_PARENT);
	BAD("{\"kind\":\"system.shutdown\",\"reason\":\"signal \"}",
	    PROC_PARENT);
	BAD("{\"kind\":\"system.shutdown\",\"reason\":\"sig\"}", PROC_PARENT);
	BAD("{\"kind\":\"system.restart\",\"daemon\":\"cordond\",\"restarts\":"
	    "1}",
	    PROC_PARENT);
	BAD("{\"kind\":\"http.request\",\"method\":\"get\",\"route\":\"other\","
	    "\"status\":200,\"durationMs\":0,\"bytesIn\":0,\"bytesOut\":0}",
	    PROC_BROKER);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_au3_every_kind_in_schema_order),
	    cmocka_unit_test(test_au2_unknown_kind_or_field_refused),
	    cmocka_unit_test(test_au2_missing_or_mistyped_field_refused),
	    cmocka_unit_test(test_au2_integer_bounds),
	    cmocka_unit_test(test_au2_patterns),
	    cmocka_unit_test(test_au2_wrong_sender_refused),
	    cmocka_unit_test(test_au4_args_redacted_bounds),
	    cmocka_unit_test(
		test_au4_vault_notes_one_owner_mission_path_absent),
	    cmocka_unit_test(test_au2_enums_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
