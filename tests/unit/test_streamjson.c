/*
 * Unit tests for policy/streamjson.c and streamjson_cli.c (SP-16,
 * SP-12): the lines of Claude Code's stream-json, `codex exec --json`
 * and Gemini CLI's stream-json (the real CLIs' shapes, as they printed
 * them against tests/agents/mock_api.py), fed one after another into
 * one state of the row's format, give the typed events each row
 * expects, written compactly:
 *   T(text) F U(name=value,...) M(model) C(id,tool,input)
 *   R(id,ok,summary) Y(attempt,max,status) E(warning,words)
 * and "-" for a line that is not a JSON object.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "streamjson.h"

#define LINES_MAX 10

struct row {
	const char *name;
	const char *lines[LINES_MAX];
	const char *want;
};

#define DELTA(t)                                                               \
	"{\"type\":\"stream_event\",\"event\":{\"type\":"                      \
	"\"content_block_delta\",\"delta\":{\"type\":\"text_delta\","          \
	"\"text\":\"" t "\"}}}"
#define MSG_START                                                              \
	"{\"type\":\"stream_event\",\"event\":{\"type\":\"message_start\"}}"
#define MSG_STOP                                                               \
	"{\"type\":\"stream_event\",\"event\":{\"type\":\"message_stop\"}}"
#define ASSISTANT(id, blocks)                                                  \
	"{\"type\":\"assistant\",\"message\":{\"id\":\"" id "\","              \
	"\"content\":[" blocks "]}}"
#define TEXT(t) "{\"type\":\"text\",\"text\":\"" t "\"}"
#define TOOL(id, name, input)                                                  \
	"{\"type\":\"tool_use\",\"id\":\"" id "\",\"name\":\"" name "\","      \
	"\"input\":" input "}"
#define CX_START(item) "{\"type\":\"item.started\",\"item\":" item "}"
#define CX_DONE(item)  "{\"type\":\"item.completed\",\"item\":" item "}"
#define GM_MSG(role, text, delta)                                              \
	"{\"type\":\"message\",\"role\":\"" role "\",\"content\":\"" text      \
	"\",\"delta\":" delta "}"
#define RESULT(blocks)                                                         \
	"{\"type\":\"user\",\"message\":{\"content\":[" blocks "]}}"

static const struct row rows[] = {
    {"not json", {"not json", "[1]", "{\"type\":", ""}, "- - - -"},
    {"unknown types pass", {"{\"type\":\"other\"}", "{}"}, ""},
    {"deltas stream", {DELTA("Hello"), DELTA(" you"), MSG_STOP},
	"T(Hello) T( you) F"},
    {"result: flush and usage",
	{"{\"type\":\"result\",\"duration_ms\":12,\"num_turns\":1,"
	 "\"total_cost_usd\":0.5,\"usage\":{\"input_tokens\":10,"
	 "\"output_tokens\":7,\"other\":3},\"result\":\"x\"}"},
	"F U(duration_ms=12,num_turns=1,total_cost_usd=0.5,"
	"input_tokens=10,output_tokens=7)"},
    {"usage of the wrong type is dropped",
	{"{\"type\":\"result\",\"duration_ms\":\"12\",\"usage\":{"
	 "\"input_tokens\":1.5}}"},
	"F U()"},
    {"init gives the model",
	{"{\"type\":\"system\",\"subtype\":\"init\",\"model\":\"m-1\"}"},
	"M(m-1)"},
    {"fallback text when no delta came",
	{ASSISTANT("m1", TEXT("whole") "," TEXT(" answer"))},
	"T(whole) T( answer)"},
    {"no fallback once deltas came", {DELTA("a"), ASSISTANT("m1", TEXT("a"))},
	"T(a)"},
    {"streamed messages are paragraphs",
	{MSG_START, DELTA("I will."), MSG_STOP, MSG_START, DELTA("Done."),
	    MSG_STOP},
	"T(I will.) F T(\n\n) T(Done.) F"},
    {"fallback messages are paragraphs",
	{ASSISTANT("m1", TEXT("I will use Bash.")),
	    ASSISTANT("m1", TOOL("t1", "Bash", "{\"command\":\"ls\"}")),
	    RESULT("{\"type\":\"tool_result\",\"tool_use_id\":\"t1\","
		   "\"content\":\"a b\"}"),
	    ASSISTANT("m2", TEXT("I will use Bash.")),
	    ASSISTANT("m3", TEXT("Done."))},
	"T(I will use Bash.) C(t1,Bash,ls) R(t1,1,a b) T(\n\n) "
	"T(I will use Bash.) T(\n\n) T(Done.)"},
    {"one message's blocks are not split",
	{ASSISTANT("m1", TEXT("a")), ASSISTANT("m1", TEXT("b"))}, "T(a) T(b)"},
    {"newlines already there count",
	{MSG_START, DELTA("a\\n"), MSG_START, DELTA("b\\n\\n"), MSG_START,
	    DELTA("\\nc")},
	"T(a\n) T(\n) T(b\n\n) T(\nc)"},
    {"a break never starts the answer", {MSG_START, DELTA("x")}, "T(x)"},
    {"tool inputs: the line, the path, else compact JSON",
	{ASSISTANT("m1",
	    TOOL("t1", "Bash",
		"{\"command\":\"ls -la\",\"timeout\":5}") "," TOOL("t2",
		"Write",
		"{\"file_path\":\"/w/a\",\"content\":\"z\"}") "," TOOL("t3",
		"Grep", "{\"pattern\":\"a/b\",\"path\":\"src\"}") "," TOOL("t4",
		"Bash", "{\"command\":5}") "," TOOL("t5", "Task", "{}"))},
	"C(t1,Bash,ls -la) C(t2,Write,/w/a) "
	"C(t3,Grep,{\"pattern\":\"a/b\",\"path\":\"src\"}) "
	"C(t4,Bash,{\"command\":5}) C(t5,Task,{})"},
    {"odd names and ids are not passed",
	{ASSISTANT("m1",
	    TOOL("t 1", "Ba sh",
		"{\"command\":\"x\"}") ","
				       "{\"type\":\"tool_use\",\"name\":7}")},
	"C(-,tool,{\"command\":\"x\"}) C(-,tool,)"},
    {"results: string, first text block, is_error",
	{RESULT("{\"type\":\"tool_result\",\"tool_use_id\":\"t1\","
		"\"content\":[{\"type\":\"image\"},{\"type\":\"text\","
		"\"text\":\"first\"},{\"type\":\"text\",\"text\":\"2nd\"}]}"
		",{\"type\":\"tool_result\",\"tool_use_id\":\"t2\","
		"\"is_error\":true,\"content\":\"no\"}"
		",{\"type\":\"tool_result\",\"is_error\":\"yes\"}")},
	"R(t1,1,first) R(t2,0,no) R(-,1,)"},
    {"text after a tool result is a new paragraph",
	{DELTA("a"), RESULT("{\"type\":\"tool_result\",\"tool_use_id\":\"t\"}"),
	    DELTA("b")},
	"T(a) R(t,1,) T(\n\n) T(b)"},
    {"a user prompt string is no result",
	{"{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}"}, ""},
    {"api_retry: numbers only",
	{"{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":2,"
	 "\"max_retries\":10,\"error_status\":null,\"error\":\"secret\"}",
	    "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":3,"
	    "\"max_retries\":10,\"error_status\":529}",
	    "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":-1,"
	    "\"max_retries\":\"x\",\"error_status\":99}",
	    "{\"type\":\"system\",\"subtype\":\"api_retry\"}"},
	"Y(2,10,0) Y(3,10,529) Y(0,0,-1) Y(0,0,-1)"},
};

/* codex exec --json */
static const struct row codex_rows[] = {
    {"codex: a chat with a shell call",
	{"{\"type\":\"thread.started\",\"thread_id\":\"01a2\"}",
	    "{\"type\":\"turn.started\"}",
	    CX_DONE("{\"id\":\"item_0\",\"type\":\"agent_message\","
		    "\"text\":\"Running it.\"}"),
	    CX_START("{\"id\":\"item_1\",\"type\":\"command_execution\","
		     "\"command\":\"/bin/bash -lc 'echo hi'\","
		     "\"aggregated_output\":\"\",\"exit_code\":null,"
		     "\"status\":\"in_progress\"}"),
	    CX_DONE("{\"id\":\"item_1\",\"type\":\"command_execution\","
		    "\"command\":\"/bin/bash -lc 'echo hi'\","
		    "\"aggregated_output\":\"hi\\n\",\"exit_code\":0,"
		    "\"status\":\"completed\"}"),
	    CX_DONE("{\"id\":\"item_2\",\"type\":\"agent_message\","
		    "\"text\":\"Ran it.\"}"),
	    "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":24,"
	    "\"cached_input_tokens\":3,\"output_tokens\":14,"
	    "\"reasoning_output_tokens\":0}}"},
	"T(Running it.) F C(item_1,Bash,echo hi) R(item_1,1,hi\n) T(\n\n) "
	"T(Ran it.) F F U(input_tokens=24,output_tokens=14,"
	"cache_read_input_tokens=3,reasoning_output_tokens=0)"},
    {"codex: a failed, a declined and an odd command",
	{CX_DONE("{\"id\":\"i1\",\"type\":\"command_execution\","
		 "\"aggregated_output\":\"no\",\"exit_code\":1,"
		 "\"status\":\"failed\"}"),
	    CX_DONE("{\"id\":\"i2\",\"type\":\"command_execution\","
		    "\"exit_code\":null,\"status\":\"declined\"}"),
	    CX_DONE("{\"id\":\"i3\",\"type\":\"command_execution\","
		    "\"exit_code\":0,\"status\":\"completed\"}"),
	    CX_START("{\"id\":\"i4\",\"type\":\"command_execution\","
		     "\"command\":\"bash -lc 'a' 'b'\"}"),
	    CX_START("{\"id\":\"i5\",\"type\":\"command_execution\","
		     "\"command\":\"ls -la\"}"),
	    CX_START("{\"id\":\"i6\",\"type\":\"command_execution\","
		     "\"command\":\"/bin/bash -lc \"}")},
	"R(i1,0,no) R(i2,0,) R(i3,1,) C(i4,Bash,'a' 'b') C(i5,Bash,ls -la) "
	"C(i6,Bash,/bin/bash -lc )"},
    {"codex: a patch, an MCP tool, a web search",
	{CX_DONE("{\"id\":\"i1\",\"type\":\"file_change\",\"changes\":"
		 "[{\"path\":\"/w/a.txt\",\"kind\":\"add\"}],"
		 "\"status\":\"completed\"}"),
	    CX_START("{\"id\":\"i2\",\"type\":\"mcp_tool_call\","
		     "\"server\":\"s\",\"tool\":\"lookup\","
		     "\"arguments\":{\"q\":1},\"status\":\"in_progress\"}"),
	    CX_DONE("{\"id\":\"i2\",\"type\":\"mcp_tool_call\","
		    "\"tool\":\"lookup\",\"result\":{\"content\":[{\"type\":"
		    "\"text\",\"text\":\"found\"}]},\"status\":\"completed\"}"),
	    CX_DONE("{\"id\":\"i3\",\"type\":\"mcp_tool_call\","
		    "\"error\":{\"message\":\"boom\"},\"status\":\"failed\"}"),
	    CX_START("{\"id\":\"i4\",\"type\":\"web_search\","
		     "\"query\":\"cordon\"}"),
	    CX_DONE("{\"id\":\"i5\",\"type\":\"reasoning\","
		    "\"text\":\"thinking\"}")},
	"C(i1,apply_patch,[{\"path\":\"/w/a.txt\",\"kind\":\"add\"}]) "
	"R(i1,1,) C(i2,lookup,{\"q\":1}) R(i2,1,found) R(i3,0,boom) "
	"C(i4,web_search,cordon)"},
    {"codex: retries and errors",
	{"{\"type\":\"error\",\"message\":\"Reconnecting... waiting for "
	 "network (Connection failed: error sending request)\"}",
	    "{\"type\":\"error\",\"message\":\"Reconnecting... 2/5 (x)\"}",
	    "{\"type\":\"error\",\"message\":\"Reconnecting... 0/5\"}",
	    "{\"type\":\"error\",\"message\":\"stream closed\"}",
	    CX_DONE("{\"id\":\"i1\",\"type\":\"error\","
		    "\"message\":\"odd\"}"),
	    "{\"type\":\"turn.failed\",\"error\":{\"message\":\"gone\"}}"},
	"Y(0,0,-1) Y(2,5,-1) Y(0,0,-1) F E(0,stream closed) E(1,odd) "
	"F E(0,gone)"},
    {"codex: other formats' lines are no events",
	{DELTA("a"), "{\"type\":\"message\",\"role\":\"assistant\","
		     "\"content\":\"b\"}"},
	""},
};

/* gemini --output-format stream-json */
static const struct row gemini_rows[] = {
    {"gemini: a chat with a shell call",
	{"{\"type\":\"init\",\"session_id\":\"2c37\",\"model\":\"auto\"}",
	    GM_MSG("user", "say hi", "false"),
	    GM_MSG("assistant", "Runni", "true"),
	    GM_MSG("assistant", "ng it.", "true"),
	    "{\"type\":\"tool_use\",\"tool_name\":\"run_shell_command\","
	    "\"tool_id\":\"run_shell_command_17_0\",\"parameters\":"
	    "{\"command\":\"echo hi\"}}",
	    "{\"type\":\"tool_result\",\"tool_id\":\"run_shell_command_17_0\","
	    "\"status\":\"success\",\"output\":\"hi\"}",
	    GM_MSG("assistant", "Ran it.", "true"),
	    "{\"type\":\"result\",\"status\":\"success\",\"stats\":{"
	    "\"total_tokens\":57,\"input_tokens\":36,\"output_tokens\":21,"
	    "\"cached\":0,\"duration_ms\":526,\"tool_calls\":1}}"},
	"M(auto) T(Runni) T(ng it.) C(run_shell_command_17_0,"
	"run_shell_command,echo hi) R(run_shell_command_17_0,1,hi) "
	"T(\n\n) T(Ran it.) F U(duration_ms=526,input_tokens=36,"
	"output_tokens=21,cache_read_input_tokens=0,tool_calls=1)"},
    {"gemini: tools: a path, JSON, a refusal, whole messages",
	{"{\"type\":\"tool_use\",\"tool_name\":\"read_file\","
	 "\"tool_id\":\"t1\",\"parameters\":{\"file_path\":\"/w/a\"}}",
	    "{\"type\":\"tool_use\",\"tool_name\":\"glob\","
	    "\"tool_id\":\"t 2\",\"parameters\":{\"pattern\":\"*\"}}",
	    "{\"type\":\"tool_result\",\"tool_id\":\"t1\",\"status\":"
	    "\"error\",\"output\":\"shown\",\"error\":{\"type\":\"X\","
	    "\"message\":\"cordon gate: refused\"}}",
	    "{\"type\":\"tool_result\",\"tool_id\":\"t3\",\"status\":"
	    "\"error\",\"output\":\"only\"}",
	    GM_MSG("assistant", "one", "false"),
	    GM_MSG("assistant", "two", "false")},
	"C(t1,read_file,/w/a) C(-,glob,{\"pattern\":\"*\"}) "
	"R(t1,0,cordon gate: refused) R(t3,0,only) T(one) "
	"T(\n\n) T(two)"},
    {"gemini: errors, a failed result",
	{"{\"type\":\"error\",\"severity\":\"warning\","
	 "\"message\":\"slow\"}",
	    "{\"type\":\"error\",\"severity\":\"error\"}",
	    "{\"type\":\"result\",\"status\":\"error\",\"error\":{"
	    "\"type\":\"FatalAuthenticationError\",\"message\":\"bad key\"},"
	    "\"stats\":{\"input_tokens\":\"x\"}}",
	    "{\"type\":\"init\"}"},
	"E(1,slow) E(0,) F E(0,bad key) F U()"},
};

/* The events of one decoded line, written compactly into b. */
static void
render(const struct sj_out *so, char *b, size_t bsz)
{
	const struct sj_event *e;
	size_t i, j, o = strlen(b);

#define PUT(...) (o += (size_t)snprintf(b + o, bsz - o, __VA_ARGS__))
	for (i = 0; i < so->so_n; i++) {
		e = &so->so_ev[i];
		if (o > 0)
			PUT(" ");
		switch (e->se_kind) {
		case SJ_TEXT:
			PUT("T(%.*s)", (int)e->se_len, e->se_text);
			break;
		case SJ_FLUSH:
			PUT("F");
			break;
		case SJ_USAGE:
			PUT("U(");
			for (j = 0; j < so->so_nusage; j++) {
				const struct sj_num *n = &so->so_usage[j];

				PUT("%s%s=", j ? "," : "", n->sn_name);
				if (n->sn_double)
					PUT("%g", n->sn_dbl);
				else
					PUT("%lld", (long long)n->sn_int);
			}
			PUT(")");
			break;
		case SJ_MODEL:
			PUT("M(%.*s)", (int)e->se_len, e->se_text);
			break;
		case SJ_TOOL:
			PUT("C(%s,%s,%.*s)", e->se_id ? e->se_id : "-",
			    e->se_tool, (int)e->se_len,
			    e->se_text ? e->se_text : "");
			break;
		case SJ_TOOL_RESULT:
			PUT("R(%s,%d,%.*s)", e->se_id ? e->se_id : "-",
			    e->se_ok, (int)e->se_len,
			    e->se_text ? e->se_text : "");
			break;
		case SJ_RETRY:
			PUT("Y(%d,%d,%d)", e->se_attempt, e->se_max,
			    e->se_status);
			break;
		case SJ_ERROR:
			PUT("E(%d,%.*s)", e->se_ok, (int)e->se_len,
			    e->se_text ? e->se_text : "");
			break;
		}
	}
#undef PUT
}

static void
run_rows(enum sj_format fmt, const struct row *rw, size_t nrows)
{
	static char got[8192];
	struct sj_state st;
	struct sj_out so;
	size_t i, j;

	for (i = 0; i < nrows; i++) {
		sj_init(&st, fmt);
		got[0] = '\0';
		for (j = 0; j < LINES_MAX && rw[i].lines[j] != NULL; j++) {
			const char *l = rw[i].lines[j];

			if (sj_decode(&st, l, strlen(l), &so) == -1) {
				assert_null(so.so_obj);
				assert_int_equal(so.so_n, 0);
				strcat(got, got[0] ? " -" : "-");
				continue;
			}
			render(&so, got, sizeof(got));
			sj_out_free(&so);
		}
		if (strcmp(got, rw[i].want) != 0)
			fail_msg("%s:\n got  [%s]\n want [%s]", rw[i].name, got,
			    rw[i].want);
	}
}

static void
test_sp16_rows(void **state)
{
	run_rows(SJ_CLAUDE, rows, sizeof(rows) / sizeof(rows[0]));
}

static void
test_sp16_codex_rows(void **state)
{
	run_rows(
	    SJ_CODEX, codex_rows, sizeof(codex_rows) / sizeof(codex_rows[0]));
}

static void
test_sp16_gemini_rows(void **state)
{
	run_rows(SJ_GEMINI, gemini_rows,
	    sizeof(gemini_rows) / sizeof(gemini_rows[0]));
}

/* SP-12: retries are counted across lines (for the network reason). */
static void
test_sp12_retries_counted(void **state)
{
	static const char l[] =
	    "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1}";
	struct sj_state st;
	struct sj_out so;

	sj_init(&st, SJ_CLAUDE);
	assert_int_equal(st.ss_retries, 0);
	assert_int_equal(sj_decode(&st, l, strlen(l), &so), 0);
	sj_out_free(&so);
	assert_int_equal(sj_decode(&st, l, strlen(l), &so), 0);
	sj_out_free(&so);
	assert_int_equal(st.ss_retries, 2);
}

/* SP-16: a line over SJ_LINE_MAX is not decoded; events are bounded. */
static void
test_sp16_bounds(void **state)
{
	static char big[SJ_LINE_MAX + 64], many[SJ_EVENTS_MAX * 64];
	struct sj_state st;
	struct sj_out so;
	size_t i, o;

	sj_init(&st, SJ_CLAUDE);
	/* {"type":"result","pad":"zzz...z"} of SJ_LINE_MAX + 1 bytes */
	memset(big, 'z', SJ_LINE_MAX + 1);
	memcpy(big, "{\"type\":\"result\",\"pad\":\"", 24);
	memcpy(big + SJ_LINE_MAX - 1, "\"}", 2);
	assert_int_equal(sj_decode(&st, big, SJ_LINE_MAX + 1, &so), -1);
	assert_null(so.so_obj);
	memcpy(big + SJ_LINE_MAX - 2, "\"}", 2);
	assert_int_equal(sj_decode(&st, big, SJ_LINE_MAX, &so), 0);
	assert_int_equal(so.so_n, 2); /* flush, usage */
	sj_out_free(&so);
	o = (size_t)snprintf(many, sizeof(many),
	    "{\"type\":\"assistant\",\"message\":{\"content\":[");
	for (i = 0; i < SJ_EVENTS_MAX + 8; i++)
		o += (size_t)snprintf(many + o, sizeof(many) - o,
		    "%s{\"type\":\"text\",\"text\":\"x\"}", i ? "," : "");
	snprintf(many + o, sizeof(many) - o, "]}}");
	assert_int_equal(sj_decode(&st, many, strlen(many), &so), 0);
	assert_int_equal(so.so_n, SJ_EVENTS_MAX);
	sj_out_free(&so);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sp16_rows),
	    cmocka_unit_test(test_sp16_codex_rows),
	    cmocka_unit_test(test_sp16_gemini_rows),
	    cmocka_unit_test(test_sp12_retries_counted),
	    cmocka_unit_test(test_sp16_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
