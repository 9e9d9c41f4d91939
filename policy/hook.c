/*
 * SBX-8: the pre-tool hook protocols of Claude Code, Codex and Gemini CLI
 * (see hook.h).  Which CLI is calling is told by the input itself: Gemini
 * names its event BeforeTool, Codex's PreToolUse carries a turn_id,
 * anything else that says PreToolUse (or no event) is Claude Code.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "charset.h"
#include "hook.h"
#include "json.h"

#define HOOK_PATH_MAX 4095

/* How a tool's input is read beyond its first key. */
#define HT_PATCH 0x1 /* the key holds a patch: each file it touches */
#define HT_LIST	 0x2 /* the key holds a list of paths (or globs) */
#define HT_DIR	 0x4 /* dir_path/directory: where the command runs */
#define HT_OPT	 0x8 /* the path may be absent (the cwd is meant) */

struct hook_tool {
	const char *ht_name;
	enum hook_kind ht_kind;
	const char *ht_keys[3]; /* the first present names the line or path */
	int ht_flags;
};

static const struct hook_tool claude_tools[] = {
    {"Bash", HK_SHELL, {"command"}, 0},
    {"Read", HK_READ, {"file_path"}, 0},
    {"NotebookRead", HK_READ, {"notebook_path"}, 0},
    {"Write", HK_WRITE, {"file_path"}, 0},
    {"Edit", HK_WRITE, {"file_path"}, 0},
    {"MultiEdit", HK_WRITE, {"file_path"}, 0},
    {"NotebookEdit", HK_WRITE, {"notebook_path"}, 0},
    {"Glob", HK_SEARCH, {"path"}, HT_OPT},
    {"Grep", HK_SEARCH, {"path"}, HT_OPT},
    {"LS", HK_SEARCH, {"path"}, HT_OPT},
    {"WebFetch", HK_WEB, {NULL}, 0},
    {"WebSearch", HK_WEB, {NULL}, 0},
    {"Task", HK_INERT, {NULL}, 0},
    {"Agent", HK_INERT, {NULL}, 0},
    {"TodoWrite", HK_INERT, {NULL}, 0},
    {"ExitPlanMode", HK_INERT, {NULL}, 0},
    {"BashOutput", HK_INERT, {NULL}, 0},
    {"KillShell", HK_INERT, {NULL}, 0},
    {"KillBash", HK_INERT, {NULL}, 0},
    {"AskUserQuestion", HK_INERT, {NULL}, 0},
    {NULL, HK_UNKNOWN, {NULL}, 0},
};

static const struct hook_tool codex_tools[] = {
    {"Bash", HK_SHELL, {"command"}, 0},
    {"apply_patch", HK_WRITE, {"command"}, HT_PATCH},
    {"view_image", HK_READ, {"path"}, 0},
    {"spawn_agent", HK_INERT, {NULL}, 0},
    {"update_plan", HK_INERT, {NULL}, 0},
    {NULL, HK_UNKNOWN, {NULL}, 0},
};

static const struct hook_tool gemini_tools[] = {
    {"run_shell_command", HK_SHELL, {"command"}, HT_DIR},
    {"read_file", HK_READ, {"file_path", "absolute_path"}, 0},
    {"read_many_files", HK_READ, {"include", "paths"}, HT_LIST},
    {"write_file", HK_WRITE, {"file_path"}, 0},
    {"replace", HK_WRITE, {"file_path"}, 0},
    {"list_directory", HK_SEARCH, {"dir_path", "path"}, HT_OPT},
    {"glob", HK_SEARCH, {"dir_path", "path"}, HT_OPT},
    {"grep_search", HK_SEARCH, {"dir_path", "path"}, HT_OPT},
    {"search_file_content", HK_SEARCH, {"dir_path", "path"}, HT_OPT},
    {"web_fetch", HK_WEB, {NULL}, 0},
    {"google_web_search", HK_WEB, {NULL}, 0},
    {"write_todos", HK_INERT, {NULL}, 0},
    {"save_memory", HK_INERT, {NULL}, 0},
    {"ask_user", HK_INERT, {NULL}, 0},
    {"activate_skill", HK_INERT, {NULL}, 0},
    {"get_internal_docs", HK_INERT, {NULL}, 0},
    {"enter_plan_mode", HK_INERT, {NULL}, 0},
    {"exit_plan_mode", HK_INERT, {NULL}, 0},
    {"update_topic", HK_INERT, {NULL}, 0},
    {"complete_task", HK_INERT, {NULL}, 0},
    {NULL, HK_UNKNOWN, {NULL}, 0},
};

static const char *const kind_names[] = {
    "shell", "read", "write", "search", "web", "inert", "unknown"};

const char *
hook_kind_name(enum hook_kind k)
{
	return (size_t)k < sizeof(kind_names) / sizeof(kind_names[0])
		   ? kind_names[k]
		   : "unknown";
}

int
hook_kind_parse(const char *s)
{
	size_t i;

	for (i = 0; s != NULL && i < sizeof(kind_names) / sizeof(kind_names[0]);
	     i++)
		if (strcmp(s, kind_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *
hook_cli_name(enum hook_cli c)
{
	return c == HOOK_CODEX	  ? "codex"
	       : c == HOOK_GEMINI ? "gemini"
				  : "claude";
}

/* The tool's entry, or the unknown one that ends its CLI's table. */
static const struct hook_tool *
tool_find(enum hook_cli cli, const char *name)
{
	const struct hook_tool *t = cli == HOOK_CODEX	 ? codex_tools
				    : cli == HOOK_GEMINI ? gemini_tools
							 : claude_tools;

	for (; t->ht_name != NULL; t++)
		if (strcmp(t->ht_name, name) == 0)
			break;
	return t;
}

const char *
hook_input_key(enum hook_cli cli, const char *tool)
{
	const struct hook_tool *t = tool_find(cli, tool);

	if ((t->ht_flags & (HT_PATCH | HT_LIST)) != 0 ||
	    (t->ht_kind != HK_SHELL && t->ht_kind != HK_READ &&
		t->ht_kind != HK_WRITE))
		return NULL;
	return t->ht_keys[0];
}

int
hook_tool_name_ok(const char *s)
{
	return charset_shape(
	    s, strlen(s), "a-zA-Z0-9_.-", "a-zA-Z0-9_.-", 1, HOOK_TOOL_MAX);
}

/* Room in hk_buf for a copy of n bytes; NULL if there is none. */
static char *
buf_put(struct hook_call *hc, size_t *used, const char *s, size_t n)
{
	char *d;

	if (n == 0 || n > HOOK_PATH_MAX || memchr(s, '\0', n) != NULL ||
	    *used + n + 1 > sizeof(hc->hk_buf))
		return NULL;
	d = hc->hk_buf + *used;
	memcpy(d, s, n);
	d[n] = '\0';
	*used += n + 1;
	return d;
}

static int
add_check(
    struct hook_call *hc, enum hook_kind k, const char *line, const char *path)
{
	if (hc->hk_nchecks == HOOK_CHECKS_MAX)
		return -1;
	hc->hk_checks[hc->hk_nchecks].hc_kind = k;
	hc->hk_checks[hc->hk_nchecks].hc_line = line;
	hc->hk_checks[hc->hk_nchecks].hc_path = path;
	hc->hk_nchecks++;
	return 0;
}

/*
 * An apply_patch body: every "*** Add File: ", "*** Update File: ",
 * "*** Delete File: " and "*** Move to: " line names a file it writes.
 * A patch that names none is not one.
 */
static int
decode_patch(struct hook_call *hc, const char *p, size_t *used)
{
	static const char *const heads[] = {"*** Add File: ",
	    "*** Update File: ", "*** Delete File: ", "*** Move to: ", NULL};
	const char *e, *path;
	size_t i, n, before = hc->hk_nchecks;

	for (; *p != '\0'; p = *e != '\0' ? e + 1 : e) {
		if ((e = strchr(p, '\n')) == NULL)
			e = p + strlen(p);
		for (i = 0; heads[i] != NULL; i++) {
			n = strlen(heads[i]);
			if ((size_t)(e - p) <= n ||
			    strncmp(p, heads[i], n) != 0)
				continue;
			/* A CR before the newline is not part of the name. */
			if ((path = buf_put(hc, used, p + n,
				 (size_t)(e - p) - n -
				     (e[-1] == '\r' ? 1 : 0))) == NULL ||
			    add_check(hc, HK_WRITE, NULL, path) == -1)
				return -1;
		}
	}
	return hc->hk_nchecks > before ? 0 : -1;
}

/* A list of paths (read_many_files): each one is checked as a read. */
static int
decode_list(struct hook_call *hc, struct json_object *v)
{
	struct json_object *el;
	size_t i, n;

	if (!json_object_is_type(v, json_type_array) ||
	    (n = json_object_array_length(v)) == 0 || n > HOOK_CHECKS_MAX)
		return -1;
	for (i = 0; i < n; i++) {
		el = json_object_array_get_idx(v, i);
		if (!json_object_is_type(el, json_type_string) ||
		    json_object_get_string_len(el) == 0 ||
		    json_object_get_string_len(el) > HOOK_PATH_MAX ||
		    strlen(json_object_get_string(el)) !=
			(size_t)json_object_get_string_len(el) ||
		    add_check(hc, HK_READ, NULL, json_object_get_string(el)) ==
			-1)
			return -1;
	}
	return 0;
}

/* Gemini's run_shell_command may run in dir_path (relative to cwd). */
static int
decode_dir(struct hook_call *hc, struct json_object *input, size_t *used)
{
	const char *d = NULL;
	char *j;
	size_t cl, dl;

	if (json_object_object_get_ex(input, "dir_path", NULL))
		d = json_get_str(input, "dir_path", HOOK_PATH_MAX);
	else if (json_object_object_get_ex(input, "directory", NULL))
		d = json_get_str(input, "directory", HOOK_PATH_MAX);
	else
		return 0;
	if (d == NULL)
		return -1;
	if (d[0] == '\0')
		return 0;
	if (d[0] == '/') {
		hc->hk_cwd = d;
		return 0;
	}
	if (hc->hk_cwd == NULL || hc->hk_cwd[0] != '/')
		return -1;
	cl = strlen(hc->hk_cwd);
	dl = strlen(d);
	if (cl + 1 + dl > HOOK_PATH_MAX ||
	    *used + cl + 1 + dl + 1 > sizeof(hc->hk_buf))
		return -1;
	j = hc->hk_buf + *used;
	memcpy(j, hc->hk_cwd, cl);
	j[cl] = '/';
	memcpy(j + cl + 1, d, dl);
	j[cl + 1 + dl] = '\0';
	*used += cl + 1 + dl + 1;
	hc->hk_cwd = j;
	return 0;
}

static int
decode_tool(
    struct hook_call *hc, const struct hook_tool *t, struct json_object *input)
{
	struct json_object *v = NULL;
	const char *key = NULL, *s;
	size_t used = 0, i;

	for (i = 0; i < 3 && t->ht_keys[i] != NULL; i++)
		if (json_object_object_get_ex(input, t->ht_keys[i], &v)) {
			key = t->ht_keys[i];
			break;
		}
	switch (t->ht_kind) {
	case HK_WEB:
	case HK_INERT:
	case HK_UNKNOWN:
		return add_check(hc, t->ht_kind, NULL, NULL);
	default:
		break;
	}
	if (key == NULL)
		return (t->ht_flags & HT_OPT) != 0
			   ? add_check(hc, t->ht_kind, NULL, NULL)
			   : -1;
	if (t->ht_flags & HT_LIST)
		return decode_list(hc, v);
	if ((s = json_get_str(input, key,
		 t->ht_kind == HK_SHELL || (t->ht_flags & HT_PATCH)
		     ? 16 * 1024 * 1024
		     : HOOK_PATH_MAX)) == NULL)
		return -1;
	if (t->ht_flags & HT_PATCH)
		return decode_patch(hc, s, &used);
	if (t->ht_kind == HK_SHELL) {
		if ((t->ht_flags & HT_DIR) &&
		    decode_dir(hc, input, &used) == -1)
			return -1;
		return add_check(hc, HK_SHELL, s, NULL);
	}
	if (s[0] == '\0')
		return (t->ht_flags & HT_OPT) != 0
			   ? add_check(hc, t->ht_kind, NULL, NULL)
			   : -1;
	return add_check(hc, t->ht_kind, NULL, s);
}

int
hook_decode(struct json_object *in, struct hook_call *hc)
{
	const struct hook_tool *t;
	struct json_object *input;
	const char *ev;

	memset(hc, 0, sizeof(*hc));
	if (in == NULL || !json_object_is_type(in, json_type_object))
		return -1;
	/* Only what is needed is read: newer fields are not our concern. */
	ev = json_get_str(in, "hook_event_name", 32);
	if (ev == NULL &&
	    json_object_object_get_ex(in, "hook_event_name", NULL))
		return -1;
	if (ev != NULL && strcmp(ev, "BeforeTool") == 0)
		hc->hk_cli = HOOK_GEMINI;
	else if (ev != NULL && strcmp(ev, "PreToolUse") != 0)
		return -1;
	else if (json_object_object_get_ex(in, "turn_id", NULL))
		hc->hk_cli = HOOK_CODEX;
	else
		hc->hk_cli = HOOK_CLAUDE;
	if ((hc->hk_tool = json_get_str(in, "tool_name", HOOK_TOOL_MAX)) ==
		NULL ||
	    !hook_tool_name_ok(hc->hk_tool) ||
	    !json_object_object_get_ex(in, "tool_input", &input) ||
	    !json_object_is_type(input, json_type_object))
		return -1;
	if (json_object_object_get_ex(in, "cwd", NULL) &&
	    (hc->hk_cwd = json_get_str(in, "cwd", HOOK_PATH_MAX)) == NULL)
		return -1;
	t = tool_find(hc->hk_cli, hc->hk_tool);
	if (decode_tool(hc, t, input) == -1) {
		memset(hc, 0, sizeof(*hc));
		return -1;
	}
	return 0;
}

int
hook_answer(enum hook_cli cli, int allow, const char *rule, const char *msg,
    char *out, size_t outsz, char *err, size_t errsz, int *status)
{
	const char *o = "";
	int n;

	if (outsz == 0 || errsz == 0)
		return -1;
	out[0] = err[0] = '\0';
	if (allow) {
		*status = 0;
		/* Codex reads permissionDecision "allow" without a rewrite
		 * of the input as a failed hook: it wants silence. */
		if (cli == HOOK_CLAUDE)
			o = "{\"hookSpecificOutput\":{\"hookEventName\":"
			    "\"PreToolUse\",\"permissionDecision\":\"allow\","
			    "\"permissionDecisionReason\":"
			    "\"cordon gate: allowed\"}}\n";
		else if (cli == HOOK_GEMINI)
			o = "{\"decision\":\"allow\"}\n";
		return snprintf(out, outsz, "%s", o) >= (int)outsz ? -1 : 0;
	}
	/* Exit 2 with the reason on stderr blocks in all three. */
	*status = 2;
	n = snprintf(err, errsz, "cordon gate: %s (%s)\n", msg, rule);
	return n < 0 || (size_t)n >= errsz ? -1 : 0;
}

int
hook_gemini_settings(const char *name, const char *cordon, int oauth,
    long timeout_ms, char *out, size_t outsz)
{
	size_t n = strlen(name);
	int w;

	if (!charset_shape(name, n, "a-zA-Z0-9-", "a-zA-Z0-9-", 1, 64))
		return -1;
	/* Written into a JSON string and a shell line as is. */
	if (cordon == NULL || !charset_shape(cordon, strlen(cordon), "/",
				  "a-zA-Z0-9/._+-", 1, SIZE_MAX))
		return -1;
	w = snprintf(out, outsz,
	    "{\"security\":{\"auth\":{\"selectedType\":\"%s\"}},"
	    "\"hooksConfig\":{\"enabled\":true},\"hooks\":{\"BeforeTool\":"
	    "[{\"matcher\":\".*\",\"hooks\":[{\"type\":\"command\","
	    "\"name\":\"%s\",\"command\":\"%s gate\","
	    "\"timeout\":%ld}]}]}}\n",
	    oauth ? "oauth-personal" : "gemini-api-key", name, cordon,
	    timeout_ms);
	return w < 0 || (size_t)w >= outsz ? -1 : 0;
}

/* The first of keys (NULL-ended) the JSON object buf sets, or
 * "not-strict-json". */
static const char *
hook_json_keys(const char *buf, size_t len, const char *const *keys)
{
	struct json_object *o;
	const char *bad = NULL;
	size_t i;

	if ((o = json_parse_object(buf, len, HOOK_PROJECT_DEPTH)) == NULL)
		return "not-strict-json";
	for (i = 0; keys[i] != NULL && bad == NULL; i++)
		if (json_object_object_get_ex(o, keys[i], NULL))
			bad = keys[i];
	json_object_put(o);
	return bad;
}

const char *
hook_gemini_project(const char *buf, size_t len)
{
	/* The settings whose merge could turn cordon's hook off. */
	static const char *const keys[] = {"hooksConfig", "hooks", NULL};

	return hook_json_keys(buf, len, keys);
}

const char *
hook_claude_config(const char *buf, size_t len)
{
	static const char *const keys[] = {"env", NULL};

	return hook_json_keys(buf, len, keys);
}
