/*
 * SBX-8: the gate hook a Claude Code or Codex manifest wires on its
 * command line, read back for its timeout.  Each of these CLIs runs a
 * tool call whose hook timed out, so the hook must outlast `cordon
 * gate`'s own bound (gate_answer_sec) by GATE_HOOK_MARGIN: then the gate
 * always refuses first.  Gemini CLI's hook is written by cordon and
 * needs no check.  Pure: the manifest's words only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agentcli.h"
#include "cordon_limits.h"
#include "gate.h"
#include "hook.h"
#include "json.h"
#include "manifest.h"
#include "util.h"

#define HOOK_DEFAULT_TIMEOUT 600 /* Claude Code's, for a command hook */
#define HOOK_TIMEOUT_CAP     1000000000L

static int
word_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
	       c == '/';
}

/*
 * The command of cordon's gate hook, however cordon is named and
 * whatever the shell does around it: "gate" as a word of its own
 * ("{cordon} gate", "exec /opt/cordon gate 2>>log").  A hook of another
 * program that has such a word is held to the gate's bound too.
 */
static int
is_gate_command(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i + 4 <= n; i++)
		if (memcmp(s + i, "gate", 4) == 0 &&
		    (i == 0 || !word_byte(s[i - 1])) &&
		    (i + 4 == n || !word_byte(s[i + 4])))
			return 1;
	return 0;
}

/* One more gate hook: the shortest timeout counts, and blocks if each does. */
static void
gate_found(struct hook_gate_wiring *w, long timeout, int blocks)
{
	if (!w->hg_found || timeout < w->hg_timeout)
		w->hg_timeout = timeout;
	w->hg_blocks = w->hg_found ? w->hg_blocks && blocks : blocks;
	w->hg_found = 1;
}

/*
 * The value of an option given as "OPT=value" or "OPT value" (or, with
 * a short form, "-c value", "-cvalue" and "-c=value", as Codex's parser
 * takes them), from args[*i] on; *i moves past it.  NULL at the end.
 */
static const char *
opt_value(char *const *args, size_t n, size_t *i, const char *opt,
    const char *shortopt)
{
	size_t ol = strlen(opt), sl = shortopt != NULL ? strlen(shortopt) : 0;
	const char *a;

	for (; *i < n && (a = args[*i]) != NULL; (*i)++) {
		if (strncmp(a, opt, ol) == 0 && a[ol] == '=')
			return args[(*i)++] + ol + 1;
		if (sl > 0 && strncmp(a, shortopt, sl) == 0 && a[sl] != '\0')
			return args[(*i)++] + sl + (a[sl] == '=');
		if ((strcmp(a, opt) == 0 ||
			(sl > 0 && strcmp(a, shortopt) == 0)) &&
		    *i + 1 < n && args[*i + 1] != NULL) {
			*i += 2;
			return args[*i - 1];
		}
	}
	return NULL;
}

/* A hook's JSON timeout in whole seconds: a fraction rounds down. */
static long
json_timeout(struct json_object *x)
{
	double d;

	if (json_object_is_type(x, json_type_int))
		return (long)json_object_get_int64(x);
	if (!json_object_is_type(x, json_type_double))
		return 0;
	d = json_object_get_double(x);
	return d >= (double)HOOK_TIMEOUT_CAP ? HOOK_TIMEOUT_CAP
	       : d > 0			     ? (long)d
					     : 0;
}

/* A JSON string that names the gate. */
static int
json_gate_word(struct json_object *x)
{
	return json_object_is_type(x, json_type_string) &&
	       is_gate_command(json_object_get_string(x),
		   (size_t)json_object_get_string_len(x));
}

/* A key of h that is there and not false. */
static int
json_set(struct json_object *h, const char *key)
{
	struct json_object *x;

	return json_object_object_get_ex(h, key, &x) &&
	       !(json_object_is_type(x, json_type_boolean) &&
		   !json_object_get_boolean(x));
}

/* A matcher every tool name matches: none, "", "*" or ".*". */
static int
matcher_all(const char *s, size_t n)
{
	return n == 0 || (n == 1 && s[0] == '*') ||
	       (n == 2 && s[0] == '.' && s[1] == '*');
}

/*
 * One Claude Code hook: 1, a gate hook, if its command, or an argument of
 * its exec form ("args"), names the gate.  One that runs in the
 * background ("async", "asyncRewake": the call runs without waiting) or
 * only once ("once": the later calls run without it) is no gate.
 */
static int
claude_hook(struct json_object *h, struct hook_gate_wiring *w)
{
	struct json_object *x, *args = NULL;
	size_t k;
	int gate = 0;
	long t;

	if (json_object_object_get_ex(h, "command", &x))
		gate = json_gate_word(x);
	if (json_object_object_get_ex(h, "args", &args) &&
	    json_object_is_type(args, json_type_array))
		for (k = 0; k < json_object_array_length(args); k++)
			gate |=
			    json_gate_word(json_object_array_get_idx(args, k));
	if (!gate)
		return 0;
	if (json_set(h, "async") || json_set(h, "asyncRewake") ||
	    json_set(h, "once"))
		w->hg_async = 1;
	t = json_object_object_get_ex(h, "timeout", &x) ? json_timeout(x)
							: HOOK_DEFAULT_TIMEOUT;
	gate_found(w, t,
	    json_object_object_get_ex(h, "onFailure", &x) &&
		json_object_is_type(x, json_type_string) &&
		strcmp(json_object_get_string(x), "block") == 0);
	return 1;
}

/*
 * Claude Code: a --settings value's JSON, hooks.PreToolUse[].hooks[].
 * Claude Code takes the last one given; each is read here, the
 * shortest timeout counting.  One that also sets disableAllHooks (not
 * false) runs no hook at all.  A file's name (Claude Code reads the
 * file), or JSON that the strict parser refuses (a duplicate key,
 * which Claude Code reads, the last one winning), cannot be read here:
 * unread.
 */
static void
claude_gate(const char *v, struct hook_gate_wiring *w)
{
	struct json_object *o, *pre, *hs, *x, *mt, *h;
	size_t i, j, gates = 0;
	int all;

	v += strspn(v, " \t\r\n");
	if (v[0] != '{' || (o = json_parse_object(v, strlen(v), 16)) == NULL) {
		w->hg_unread = 1;
		return;
	}
	if (json_object_object_get_ex(o, "hooks", &pre) &&
	    json_object_object_get_ex(pre, "PreToolUse", &pre) &&
	    json_object_is_type(pre, json_type_array))
		for (i = 0; i < json_object_array_length(pre); i++) {
			x = json_object_array_get_idx(pre, i);
			if (!json_object_object_get_ex(x, "hooks", &hs) ||
			    !json_object_is_type(hs, json_type_array))
				continue;
			all = !json_object_object_get_ex(x, "matcher", &mt) ||
			      (json_object_is_type(mt, json_type_string) &&
				  matcher_all(json_object_get_string(mt),
				      (size_t)json_object_get_string_len(mt)));
			for (j = 0; j < json_object_array_length(hs); j++) {
				h = json_object_array_get_idx(hs, j);
				if (!claude_hook(h, w))
					continue;
				gates++;
				if (all &&
				    !json_object_object_get_ex(h, "if", NULL))
					w->hg_covers = 1;
			}
		}
	if (gates > 0 && json_set(o, "disableAllHooks"))
		w->hg_async = 1; /* the gate hook wired, and no hook runs */
	json_object_put(o);
}

/*
 * v without the blanks outside its quoted strings (TOML lets a key and
 * its '=' have them; '...' is a literal string, "..." one with
 * escapes), into buf: NULL if it does not fit.
 */
static const char *
unblank(const char *v, char *buf, size_t bufsz)
{
	size_t n = 0;
	char quote = 0;

	for (; *v != '\0'; v++) {
		if (quote == 0 && (*v == '"' || *v == '\''))
			quote = *v;
		else if (*v == quote && (quote == '\'' || v[-1] != '\\'))
			quote = 0;
		else if (quote == 0 && (*v == ' ' || *v == '\t'))
			continue;
		if (n + 1 == bufsz)
			return NULL;
		buf[n++] = *v;
	}
	buf[n] = '\0';
	return buf;
}

/* A -c key that sets hooks: hooks, hooks.X, "hooks".X, 'hooks'.X. */
static int
codex_hooks_key(const char *v)
{
	v += *v == '"' || *v == '\'';
	return strncmp(v, "hooks", 5) == 0 &&
	       (v[5] == '=' || v[5] == '.' || v[5] == '"' || v[5] == '\'');
}

/*
 * A key "async..." (async, asyncRewake) not false, between a Codex hook
 * table's braces: Codex runs the call without waiting for that hook.
 */
static int
toml_async(const char *open, const char *close)
{
	const char *t, *k, *e;

	for (t = open; (t = strstr(t, "async")) != NULL && t < close; t++) {
		k = t > open && (t[-1] == '"' || t[-1] == '\'') ? t - 1 : t;
		if ((k == open || k[-1] == ',' || k[-1] == '{') &&
		    (e = strchr(t, '=')) != NULL && e < close &&
		    strncmp(e + 1, "false", 5) != 0)
			return 1;
	}
	return 0;
}

/*
 * One step of a walk over TOML with its blanks out: *quote is the quote
 * of the string p is in (0 outside one), updated past p.  1 if p is
 * outside any string, neither opening nor closing one.
 */
static int
toml_plain(const char *p, const char *start, char *quote)
{
	if (*quote == 0 && (*p == '"' || *p == '\'')) {
		*quote = *p;
		return 0;
	}
	if (*quote != 0) {
		if (*p == *quote &&
		    (*quote == '\'' || p == start || p[-1] != '\\'))
			*quote = 0;
		return 0;
	}
	return 1;
}

/* The table that holds the one opening at open, in v; NULL if none. */
static const char *
toml_parent(const char *v, const char *open)
{
	const char *stack[16], *p;
	char quote = 0;
	size_t d = 0;

	for (p = v; p < open; p++)
		if (!toml_plain(p, v, &quote))
			continue;
		else if (*p == '{' && d++ < nitems(stack))
			stack[d - 1] = p;
		else if (*p == '}' && d > 0)
			d--;
	return d > 0 && d <= nitems(stack) ? stack[d - 1] : NULL;
}

/*
 * The value of key (bare or quoted) among the keys of the table that
 * opens at t; NULL if it has none.
 */
static const char *
toml_key(const char *t, const char *key)
{
	size_t kl = strlen(key), d = 0;
	const char *p;
	char quote = 0;

	for (p = t + 1; *p != '\0'; p++) {
		if (d == 0 && quote == 0 && (p[-1] == '{' || p[-1] == ',') &&
		    ((strncmp(p, key, kl) == 0 && p[kl] == '=') ||
			((*p == '"' || *p == '\'') &&
			    strncmp(p + 1, key, kl) == 0 && p[kl + 1] == *p &&
			    p[kl + 2] == '=')))
			return strchr(p, '=') + 1;
		if (!toml_plain(p, t, &quote))
			continue;
		if (*p == '{' || *p == '[')
			d++;
		else if ((*p == '}' || *p == ']') && d-- == 0)
			return NULL;
	}
	return NULL;
}

/* The gate hook's table, whose keys start at open in v, sees every
 * tool: its group's matcher, if any, is a string that matches all. */
static int
codex_covers(const char *v, const char *open)
{
	const char *g = open > v ? toml_parent(v, open - 1) : NULL, *mt, *e;

	if (g == NULL || (mt = toml_key(g, "matcher")) == NULL)
		return 1;
	if (*mt != '"' && *mt != '\'')
		return 0;
	return (e = strchr(mt + 1, *mt)) != NULL &&
	       matcher_all(mt + 1, (size_t)(e - mt - 1));
}

/* A digit's value in base, or -1. */
static int
digit_in(char c, int base)
{
	int d = c >= '0' && c <= '9'			 ? c - '0'
		: (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
							 : -1;

	return d < base ? d : -1;
}

/*
 * A TOML integer from s to the ',' or '}' that ends it (blanks already
 * out): decimal with an optional '+', or 0x, 0o, 0b digits, with '_'
 * only between two digits; clamped at HOOK_TIMEOUT_CAP.  -1 if it is no
 * such integer (a float, a string, a minus: Codex's unsigned timeout
 * takes none of them).
 */
static long
toml_uint(const char *s)
{
	long v = 0;
	int base = 10, n = 0, d;

	if (s[0] == '+')
		s++;
	else if (s[0] == '0' && (s[1] == 'x' || s[1] == 'o' || s[1] == 'b')) {
		base = s[1] == 'x' ? 16 : s[1] == 'o' ? 8 : 2;
		s += 2;
	}
	if (base == 10 && s[0] == '0' && s[1] != ',' && s[1] != '}')
		return -1; /* TOML has no leading zero */
	for (; *s != ',' && *s != '}'; s++) {
		if (*s == '_' && n > 0 && digit_in(s[1], base) != -1)
			continue;
		if ((d = digit_in(*s, base)) == -1)
			return -1;
		v = v > HOOK_TIMEOUT_CAP / base ? HOOK_TIMEOUT_CAP
						: v * base + d;
		n++;
	}
	return n > 0 ? (v < HOOK_TIMEOUT_CAP ? v : HOOK_TIMEOUT_CAP) : -1;
}

/*
 * Codex: a -c/--config value that sets hooks (hooks.PreToolUse=[{...
 * hooks=[{...command="...",timeout=N}]}], or the same one table up),
 * TOML, blanks aside.  Only the hook table that holds the gate's
 * command is read: its timeout= integer, between the braces around it
 * (one that is no TOML integer is unread).
 * One without a timeout counts as 0 (Codex's default is not ours); one
 * with async= other than false is no gate (Codex runs the call without
 * waiting for it).  A value that names the gate where no command="..." or
 * command='...' here does (a multi-line string, an escape) is unread.
 */
static void
codex_gate(const char *val, struct hook_gate_wiring *w)
{
	static const char *const cmds[] = {"command=\"", "command='"};
	static char buf[LIM_ARG_MAX_BYTES + 1];
	const char *v, *p, *q, *open, *close, *t;
	size_t c;
	long timeout, n;
	int found = 0;

	if ((v = unblank(val, buf, sizeof(buf))) == NULL) {
		w->hg_unread = is_gate_command(val, strlen(val));
		return;
	}
	/* features.hooks=false, or features={hooks=false}: no hook runs. */
	if (strncmp(v, "features.hooks=", 15) == 0)
		w->hg_off |= strcmp(v + 15, "true") != 0;
	else if (strncmp(v, "features={", 10) == 0 &&
		 (t = toml_key(v + 9, "hooks")) != NULL)
		w->hg_off |=
		    strncmp(t, "true", 4) != 0 || (t[4] != ',' && t[4] != '}');
	if (!codex_hooks_key(v))
		return;
	for (c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++)
		for (p = v; (p = strstr(p, cmds[c])) != NULL; p = q + 1) {
			p += strlen(cmds[c]);
			if ((q = strchr(p, cmds[c][8])) == NULL)
				break;
			if (!is_gate_command(p, (size_t)(q - p)))
				continue;
			for (open = p; open > v && open[-1] != '{'; open--)
				;
			if ((close = strchr(q, '}')) == NULL)
				break;
			found = 1;
			timeout = 0;
			w->hg_async |= toml_async(open, close);
			for (t = open;
			     (t = strstr(t, "timeout=")) != NULL && t < close;
			     t++)
				if (t == open || t[-1] == ',' || t[-1] == '{') {
					if ((n = toml_uint(t + 8)) == -1)
						w->hg_unread = 1;
					else
						timeout = n;
				}
			gate_found(w, timeout, 0);
			w->hg_covers |= codex_covers(v, open);
		}
	if (!found && is_gate_command(v, strlen(v)))
		w->hg_unread = 1;
}

int
hook_gate_wiring(const struct manifest *m, struct hook_gate_wiring *w)
{
	enum agent_cli cli = agent_cli_mf(m);
	const char *v;
	size_t i = 0;

	memset(w, 0, sizeof(*w));
	while (cli == AGENT_CLI_CLAUDE && (v = opt_value(m->m_args, m->m_nargs,
					       &i, "--settings", NULL)) != NULL)
		claude_gate(v, w);
	while (cli == AGENT_CLI_CODEX && (v = opt_value(m->m_args, m->m_nargs,
					      &i, "--config", "-c")) != NULL)
		codex_gate(v, w);
	/* Codex's --disable=hooks is features.hooks=false. */
	for (i = 0;
	     cli == AGENT_CLI_CODEX && (v = opt_value(m->m_args, m->m_nargs, &i,
					    "--disable", NULL)) != NULL;)
		w->hg_off |= strcmp(v, "hooks") == 0;
	w->hg_async |= w->hg_found && w->hg_off;
	return w->hg_found;
}

int
hook_gate_check(const struct manifest *m, char *why, size_t whysz)
{
	struct hook_gate_wiring w;
	long need = gate_answer_sec(&m->m_commands) + GATE_HOOK_MARGIN;
	char t[32] = "none";

	(void)hook_gate_wiring(m, &w);
	if (w.hg_unread) {
		snprintf(why, whysz,
		    "hooks: the args give the CLI settings that cordon cannot "
		    "read for the gate hook's timeout (a --settings file, or "
		    "a value it does not parse): give them inline, as "
		    "docs/agents.md shows");
		return -1;
	}
	if (w.hg_async) {
		snprintf(why, whysz,
		    "hooks: the CLI would not wait for the gate hook, or not "
		    "run it (async, asyncRewake, once, disableAllHooks, "
		    "Codex's hooks feature off): it would run a call without "
		    "its verdict");
		return -1;
	}
	if (!w.hg_found || w.hg_timeout >= need)
		return 0;
	if (w.hg_timeout > 0)
		snprintf(t, sizeof(t), "%ld s", w.hg_timeout);
	snprintf(why, whysz,
	    "hooks: the gate hook's timeout (%s) is under askTimeoutSec + "
	    "%d s (%ld s): the CLI would run a call the gate had not yet "
	    "answered",
	    t, GATE_ANSWER_MARGIN + GATE_HOOK_MARGIN, need);
	return -1;
}
