/*
 * SP-16: the JSON event streams of the real agent CLIs, pure: Claude
 * Code's stream-json, `codex exec --json` and Gemini CLI's
 * `--output-format stream-json`, one decoder per format behind one
 * interface.  One line in, the typed events it carries out: text to
 * stream (with a paragraph break between messages and after tool use),
 * flush points, usage numbers, the model, tool calls and their results,
 * the agent's model API retries and the errors it reports.  The caller
 * cleans and scrubs every string before it leaves (SP-10, SP-11).  No
 * I/O; nothing is allocated but json-c's tree of the line.
 */
#ifndef CORDON_POLICY_STREAMJSON_H
#define CORDON_POLICY_STREAMJSON_H

#include <stddef.h>
#include <stdint.h>

struct json_object;

#define SJ_LINE_MAX	(1024 * 1024) /* longest line decoded */
#define SJ_DEPTH	32	      /* deepest JSON nesting of a line */
#define SJ_EVENTS_MAX	64	      /* events of one line; more are dropped */
#define SJ_ID_MAX	64	      /* tool ids and names, bytes */
#define SJ_INPUT_CHARS	300	      /* a tool input summary, code points */
#define SJ_RESULT_CHARS 500	      /* a tool result summary, code points */
#define SJ_USAGE_MAX	8

/* Which CLI's stream a state decodes (the manifest's transport). */
enum sj_format { SJ_CLAUDE, SJ_CODEX, SJ_GEMINI };

enum sj_kind {
	SJ_TEXT,	/* se_text: text of the answer */
	SJ_FLUSH,	/* a message ended: held text may go now */
	SJ_USAGE,	/* the numbers are in so_usage */
	SJ_MODEL,	/* se_text: the model's name (system/init) */
	SJ_TOOL,	/* se_id, se_tool; se_text: its input, whole */
	SJ_TOOL_RESULT, /* se_id, se_ok; se_text: its result, whole */
	SJ_RETRY,	/* se_attempt of se_max (0: not said), se_status */
	SJ_ERROR,	/* se_ok: 1 a warning, 0 an error; se_text: its words */
};

struct sj_event {
	enum sj_kind se_kind;
	const char *se_text; /* not NUL-terminated: se_len bytes */
	size_t se_len;
	const char *se_id;   /* ^[A-Za-z0-9_-]{1,64}$, or NULL */
	const char *se_tool; /* ^[A-Za-z0-9_.:-]{1,64}$, or "tool" */
	int se_ok;
	int se_attempt, se_max; /* 1..1000, or 0 */
	int se_status;		/* HTTP status 100..599, or 0 (none) */
};

/* One usage number of a result line, as the agent typed it. */
struct sj_num {
	const char *sn_name; /* a static name */
	int sn_double;
	int64_t sn_int;
	double sn_dbl;
};

/* What the stream said so far, between lines. */
struct sj_state {
	enum sj_format ss_format;
	int ss_delta;		    /* text came as deltas: skip the whole */
	int ss_text;		    /* some text was emitted */
	int ss_break;		    /* a paragraph break is due before text */
	int ss_nl;		    /* newlines ending the text, 0..2 */
	char ss_msg[SJ_ID_MAX + 1]; /* the last assistant message's id */
	unsigned ss_retries;	    /* api_retry lines seen */
};

struct sj_out {
	struct json_object *so_obj; /* the line's tree; sj_out_free puts it */
	struct sj_event so_ev[SJ_EVENTS_MAX];
	size_t so_n;
	struct sj_num so_usage[SJ_USAGE_MAX];
	size_t so_nusage;
};

void sj_init(struct sj_state *, enum sj_format);
/*
 * Decode one line (without its newline).  0: it is a JSON object (its
 * events, maybe none, are in *out; call sj_out_free after use); -1: it
 * is not, or it is longer than SJ_LINE_MAX (ignored, *out is empty).
 */
int sj_decode(
    struct sj_state *, const char *line, size_t len, struct sj_out *out);
void sj_out_free(struct sj_out *);

#endif
