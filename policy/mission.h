/*
 * Missions (MI-1 ... MI-4): the strict validator of mission files
 * (missions/ID.yaml), the option schema applied to a run's options, the
 * prompt template, and the five-field cron matcher.  Pure: no I/O, no clock, no
 * globals; time zones are the caller's (it hands in broken-down local time).
 *
 *   id: weekly-review            # ^[a-z0-9][a-z0-9-]{0,63}$
 *   label: Weekly review         # 1..80 chars, no control chars
 *   agent: claude-code           # an agent name (checked against the
 *                                # loaded agents by the spawner)
 *   prompt: "Review {project}; at most {words} words"
 *   options:
 *     project: {type: string, maxLength: 60, pattern: "^[A-Za-z0-9 _-]+$"}
 *     words:   {type: integer, min: 50, max: 2000, default: 400}
 *     draft:   {type: boolean, default: true}
 *     tone:    {type: enum, values: [plain, formal]}
 *   outputs:
 *     - {type: vault-note, folder: 00_Inbox/cordon/missions/weekly-review,
 *        filenameHint: review}
 *     - {type: event, event: review.ready}
 *   permissions: [vault-write, event-emit]
 *   trigger: {manual: true, cron: "0 18 * * 0", timezone: Europe/Berlin}
 *   timeoutMs: 300000
 *   catchUp: false
 */
#ifndef CORDON_POLICY_MISSION_H
#define CORDON_POLICY_MISSION_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"

struct json_object;

#define MI_OPTIONS_MAX	  16
#define MI_OUTPUTS_MAX	  8
#define MI_ENUM_MAX	  32	 /* values of one enum option */
#define MI_STRING_MAX	  4096	 /* an option's maxLength ceiling */
#define MI_PATTERN_MAX	  256	 /* bytes of an option's pattern */
#define MI_LABEL_MAX	  80	 /* chars */
#define MI_EVENT_MAX	  64	 /* ^[a-z0-9][a-z0-9.-]{0,63}$ */
#define MI_TZ_MAX	  64	 /* ^[A-Za-z_]+(/[A-Za-z0-9_+-]+){0,2}$ | UTC */
#define MI_CRON_TEXT_MAX  128	 /* bytes of a cron expression */
#define MI_TIMEOUT_DEF_MS 300000 /* 5 min */
#define MI_TIMEOUT_MAX_MS 3600000 /* 1 h */
#define MI_PROMPT_MAX	  16384	  /* template bytes; rendered <= prompt cap */

enum mi_opt_type { MI_OPT_STRING, MI_OPT_INTEGER, MI_OPT_BOOLEAN, MI_OPT_ENUM };

struct mi_option {
	char *o_name; /* ^[a-z][a-zA-Z0-9_]{0,31}$ */
	enum mi_opt_type o_type;
	int o_has_default; /* else the option is required */
	/* string */
	long o_max_length; /* 1 .. MI_STRING_MAX (chars), required */
	char *o_pattern;   /* POSIX ERE, anchored as written; NULL: none */
	/* integer: min <= max, both required; default inside */
	long long o_min, o_max;
	/* enum: 1 .. MI_ENUM_MAX values ^[A-Za-z0-9._-]{1,64}$, unique */
	char **o_values;
	size_t o_nvalues;
	/* default, as its JSON value (string, int, boolean or enum value) */
	struct json_object *o_default;
};

enum mi_out_type { MI_OUT_VAULT_NOTE, MI_OUT_EVENT };

struct mi_output {
	enum mi_out_type u_type;
	char *u_folder; /* vault-note: vaultpath_mission_folder_ok(id, ...) */
	char *u_hint;	/* vault-note: vaultpath's hint rule */
	char *u_event;	/* event: MI_EVENT_MAX pattern */
};

#define MI_PERM_VAULT_WRITE  0x1u
#define MI_PERM_EVENT_EMIT   0x2u
#define MI_PERM_EXTERNAL_API 0x4u

/* Five-field cron: minute hour day-of-month month day-of-week (0-7, 7=0);
 * numbers, '*', ranges a-b, steps * / n and a-b/n, lists; no names. */
struct mi_cron {
	uint64_t c_min;	 /* bit 0..59 */
	uint32_t c_hour; /* bit 0..23 */
	uint32_t c_mday; /* bit 1..31 */
	uint16_t c_mon;	 /* bit 1..12 */
	uint8_t c_wday;	 /* bit 0..6 */
	int c_mday_star; /* the field was '*' (POSIX: then only wday */
	int c_wday_star; /* restricts, and vice versa; both: either) */
};

struct mission {
	char *mi_id;
	char *mi_label;
	char *mi_agent;
	char *mi_prompt; /* only {option} placeholders of declared options */
	struct mi_option mi_opts[MI_OPTIONS_MAX];
	size_t mi_nopts;
	struct mi_output mi_outs[MI_OUTPUTS_MAX];
	size_t mi_nouts;
	unsigned int mi_perms; /* MI_PERM_*, as declared (not implied) */
	int mi_manual;	       /* trigger.manual, default true */
	int mi_has_cron;
	struct mi_cron mi_cron;
	char *mi_cron_text; /* as written, for the API */
	char *mi_tz;	    /* default "UTC" */
	long mi_timeout_ms;
	int mi_catch_up; /* default false */
};

/*
 * Validate root (from yaml_load_*) into *out, collecting every problem
 * with line:col (like manifest_parse).  Returns 0, or -1 with *out freed
 * (zeroed).  Required: id, label, agent, prompt, outputs (1 ..
 * MI_OUTPUTS_MAX).  Refused at load: unknown keys at any level (a key of
 * another option type included), a placeholder that is not a declared
 * option, "{" "}" not forming a placeholder ("{{", "{}", a lone brace:
 * there are no escapes), an output folder outside the mission's own
 * allowlisted folder, a bad hint, a bad event name, a permission named
 * twice or unknown, a cron that cron_parse refuses, neither manual nor
 * cron, a bad time zone name, an options pattern over MI_PATTERN_MAX
 * bytes, with a backreference, too large once expanded ({m,n} and '+'
 * multiply), with a quantifier on a group holding one or two quantifiers
 * in a row (star height 1: glibc's matcher needs minutes for those on a
 * 4096-char value), or that does not compile, a default that its own option
 * refuses.  Messages are fixed phrases with fixed paths ("options.max"),
 * never a key or value of the file.
 *
 * Not refused here: a declared option the template never uses (the
 * issue's own example declares two), and a cron mission with a required
 * option (no default), which the example also has.  A cron run resolves
 * its options with mission_options(m, NULL, ...): the loader calls that
 * once to tell whether the mission's cron trigger can ever run.
 * Permissions are checked at run time by mission_permitted, not here.
 */
int mission_parse(struct json_object *root, struct mission *out,
    struct policy_err *errs, size_t maxerrs, size_t *nerrs);
void mission_free(struct mission *);

/*
 * MI-3: validate a run's options (NULL or an object) against the schema:
 * unknown names, wrong types (an integer must be a JSON integer; booleans
 * and enum values are never coerced), out of bounds, pattern mismatch
 * (regexec on the whole value; the pattern anchors as written), invalid
 * UTF-8, NUL, control characters (C0 including \n \r \t, DEL, C1,
 * U+2028/U+2029), a string of 0 or more than maxLength code points, a
 * missing required option -> -1 and *resolved NULL (the caller answers
 * mission-options-invalid; there is no error text to echo).  0 and
 * *resolved: a new object with every declared option (defaults filled),
 * each value a fresh copy; opts is never modified.
 */
int mission_options(const struct mission *, struct json_object *opts,
    struct json_object **resolved);

/*
 * The prompt with each {name} replaced by its resolved value (integers in
 * decimal, booleans true/false), in one pass: a value containing "{x}"
 * is inserted as text, never expanded again.  0 and a malloc'd
 * NUL-terminated *out, or -1 and *out NULL (a placeholder whose value is
 * missing or of the wrong type in resolved, or a result that
 * argv_prompt_ok refuses, e.g. over LIM_PROMPT_MAX_CHARS).  The result is
 * one argv element (SP-3); it is never split.
 */
int mission_render(
    const struct mission *, struct json_object *resolved, char **out);

/*
 * MI-2: 0 when every output has its permission (vault-note: vault-write,
 * event: event-emit), else -1: the run is refused with permission-denied
 * before anything starts.
 */
int mission_permitted(const struct mission *);

/* mission_pattern.c: why an options pattern is refused (a fixed
 * phrase), or NULL when it is accepted. */
const char *mission_pattern_refusal(const char *pattern);

/* 1 if s is a zone name: ^[A-Za-z_]+(/[A-Za-z0-9_+-]+){0,2}$ (UTC
 * included), at most MI_TZ_MAX bytes. */
int mission_tz_name_ok(const char *s);
/*
 * Cron text -> *out; 0, or -1 with a fixed phrase in *why (never the
 * input).  Fields are separated by spaces (no tabs), at most 128 bytes;
 * numbers have 1 or 2 digits; "a/n" (a step without a range) is refused;
 * a step is 1 .. the field's width.  c_mday_star / c_wday_star are set
 * only when the field is exactly "*" (a stepped star restricts).
 */
int cron_parse(const char *text, struct mi_cron *out, const char **why);
/* 1 if the local time (tm fields: min, hour, mday, mon 0-11, wday)
 * matches.  Takes ints so that it needs no <time.h>. */
int cron_match(
    const struct mi_cron *, int min, int hour, int mday, int mon0, int wday);

/*
 * mission_fire.c (MI-1), the scheduler's decisions.  Slots are epoch
 * seconds on a minute boundary.  *cur: does now's slot match; *missed:
 * did one after last and before now (at most lookback seconds back).
 */
void mission_slots_scan(long long last, long long now, long long lookback,
    int (*match)(long long slot, void *arg), void *arg, int *cur, int *missed);
/* A fire {now, missed} for a mission: record skipped-missed (a missed
 * slot without catchUp), and run it, or record busy while it runs. */
struct mission_fire {
	int mf_skip_missed;
	int mf_run;
	int mf_busy;
};
void mission_fire_decide(
    int cur, int missed, int catch_up, int running, struct mission_fire *out);

#endif
