/*
 * Unit tests for policy/streamjson.c (SP-16, SP-12): Claude Code's
 * stream-json lines, fed one after another into one state, give the
 * typed events each row expects, written compactly:
 *   T(text) F U(name=value,...) M(model) C(id,tool,input)
 *   R(id,ok,summary) Y(attempt,max,status)
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

#define LINES_MAX 8

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
		}
	}
#undef PUT
}

static void
test_sp16_rows(void **state)
{
	static char got[8192];
	struct sj_state st;
	struct sj_out so;
	size_t i, j;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		sj_init(&st);
		got[0] = '\0';
		for (j = 0; j < LINES_MAX && rows[i].lines[j] != NULL; j++) {
			const char *l = rows[i].lines[j];

			if (sj_decode(&st, l, strlen(l), &so) == -1) {
				assert_null(so.so_obj);
				assert_int_equal(so.so_n, 0);
				strcat(got, got[0] ? " -" : "-");
				continue;
			}
			render(&so, got, sizeof(got));
			sj_out_free(&so);
		}
		if (strcmp(got, rows[i].want) != 0)
			fail_msg("%s:\n got  [%s]\n want [%s]", rows[i].name,
			    got, rows[i].want);
	}
}

/* SP-12: retries are counted across lines (for the network reason). */
static void
test_sp12_retries_counted(void **state)
{
	static const char l[] =
	    "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1}";
	struct sj_state st;
	struct sj_out so;

	sj_init(&st);
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

	sj_init(&st);
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
	    cmocka_unit_test(test_sp12_retries_counted),
	    cmocka_unit_test(test_sp16_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
