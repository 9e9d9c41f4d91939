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

#define HOOK_DEFAULT_TIMEOUT 600 /* Claude Code's, for a command hook */

/* "... gate": the command of cordon's gate hook, however cordon is named. */
static int
is_gate_command(const char *s, size_t n)
{
	return n >= 5 && memcmp(s + n - 5, " gate", 5) == 0;
}

/*
 * The value of an option given as "OPT=value" or "OPT value" (or, for
 * Codex, "-c value"), from args[*i] on; *i moves past it.  NULL at the
 * end.
 */
static const char *
opt_value(char *const *args, size_t n, size_t *i, const char *opt,
    const char *shortopt)
{
	size_t ol = strlen(opt);

	for (; *i < n && args[*i] != NULL; (*i)++) {
		if (strncmp(args[*i], opt, ol) == 0 && args[*i][ol] == '=')
			return args[(*i)++] + ol + 1;
		if ((strcmp(args[*i], opt) == 0 ||
			(shortopt != NULL &&
			    strcmp(args[*i], shortopt) == 0)) &&
		    *i + 1 < n && args[*i + 1] != NULL) {
			*i += 2;
			return args[*i - 1];
		}
	}
	return NULL;
}

/* Claude Code: --settings JSON, hooks.PreToolUse[].hooks[]. */
static void
claude_gate(const char *v, struct hook_gate_wiring *w)
{
	struct json_object *o, *pre, *hs, *h, *x;
	size_t i, j;

	if (v[0] != '{' || (o = json_parse_object(v, strlen(v), 16)) == NULL)
		return;
	if (json_object_object_get_ex(o, "hooks", &pre) &&
	    json_object_object_get_ex(pre, "PreToolUse", &pre) &&
	    json_object_is_type(pre, json_type_array))
		for (i = 0; i < json_object_array_length(pre); i++) {
			x = json_object_array_get_idx(pre, i);
			if (!json_object_object_get_ex(x, "hooks", &hs) ||
			    !json_object_is_type(hs, json_type_array))
				continue;
			for (j = 0; j < json_object_array_length(hs); j++) {
				h = json_object_array_get_idx(hs, j);
				if (!json_object_object_get_ex(
					h, "command", &x) ||
				    !json_object_is_type(x, json_type_string) ||
				    !is_gate_command(json_object_get_string(x),
					(size_t)json_object_get_string_len(x)))
					continue;
				w->hg_found = 1;
				w->hg_timeout = HOOK_DEFAULT_TIMEOUT;
				if (json_object_object_get_ex(h, "timeout", &x))
					w->hg_timeout =
					    json_object_is_type(
						x, json_type_int)
						? (long)json_object_get_int64(x)
						: 0;
				w->hg_blocks =
				    json_object_object_get_ex(
					h, "onFailure", &x) &&
				    json_object_is_type(x, json_type_string) &&
				    strcmp(json_object_get_string(x),
					"block") == 0;
			}
		}
	json_object_put(o);
}

/*
 * v without the blanks outside its double-quoted strings (TOML lets a
 * key and its '=' have them), into buf: NULL if it does not fit.
 */
static const char *
unblank(const char *v, char *buf, size_t bufsz)
{
	size_t n = 0;
	int quoted = 0;

	for (; *v != '\0'; v++) {
		if (*v == '"' && (!quoted || v[-1] != '\\'))
			quoted = !quoted;
		else if (!quoted && (*v == ' ' || *v == '\t'))
			continue;
		if (n + 1 == bufsz)
			return NULL;
		buf[n++] = *v;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * Codex: -c/--config hooks.PreToolUse=[{...hooks=[{...command="...",
 * timeout=N}]}] (TOML, blanks aside).  Only the hook table that holds
 * the gate's command is read: its timeout= digits, between the braces
 * around it.  One without a timeout counts as 0 (Codex's default is not
 * ours).
 */
static void
codex_gate(const char *val, struct hook_gate_wiring *w)
{
	static const char key[] = "hooks.PreToolUse=", cmd[] = "command=\"";
	static char buf[LIM_ARG_MAX_BYTES + 1];
	const char *v, *p, *q, *open, *close, *t;

	if ((v = unblank(val, buf, sizeof(buf))) == NULL ||
	    strncmp(v, key, sizeof(key) - 1) != 0)
		return;
	for (p = v; (p = strstr(p, cmd)) != NULL; p = q + 1) {
		p += sizeof(cmd) - 1;
		if ((q = strchr(p, '"')) == NULL)
			break;
		if (!is_gate_command(p, (size_t)(q - p)))
			continue;
		for (open = p; open > v && open[-1] != '{'; open--)
			;
		if ((close = strchr(q, '}')) == NULL)
			break;
		w->hg_found = 1;
		w->hg_timeout = 0;
		for (t = open; (t = strstr(t, "timeout=")) != NULL && t < close;
		     t++)
			if ((t == open || t[-1] == ',' || t[-1] == '{') &&
			    t[8] >= '0' && t[8] <= '9')
				w->hg_timeout = strtol(t + 8, NULL, 10);
	}
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
	return w->hg_found;
}

int
hook_gate_check(const struct manifest *m, char *why, size_t whysz)
{
	struct hook_gate_wiring w;
	long need = gate_answer_sec(&m->m_commands) + GATE_HOOK_MARGIN;
	char t[32] = "none";

	if (hook_gate_wiring(m, &w) == 0 || w.hg_timeout >= need)
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
