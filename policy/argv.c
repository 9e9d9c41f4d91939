/*
 * Argument vectors for agent runs (SP-1, SP-2, SP-3) and their audit form
 * (AU-4).  The prompt is exactly one element, or part of one fused
 * "--flag={prompt}" element, or goes by stdin.  Pure; allocates only what
 * it returns.
 */
#include <stdlib.h>
#include <string.h>

#include "agentcli.h"
#include "argv.h"
#include "text.h"
#include "unicode.h"
#include "cordon_limits.h"
#include "manifest.h"
#include "redact.h"
#include "util.h"

#define PH     "{prompt}"
#define PH_LEN 8
#define CO     "{cordon}"
#define CO_LEN 8

int
argv_prompt_ok(const char *prompt, size_t len)
{
	size_t n;

	if (prompt == NULL || len == 0 || memchr(prompt, '\0', len) != NULL ||
	    !utf8_valid(prompt, len))
		return -1;
	n = uni_utf8_chars(prompt, len);
	if (n < LIM_PROMPT_MIN_CHARS || n > LIM_PROMPT_MAX_CHARS)
		return -1;
	return 0;
}

/* s with its one "{prompt}" replaced by prompt. */
static char *
fill(const char *s, const char *prompt)
{
	const char *q = strstr(s, PH);
	size_t pre = (size_t)(q - s), pl = strlen(prompt);
	size_t post = strlen(q + PH_LEN);
	char *r;

	if ((r = malloc(pre + pl + post + 1)) == NULL)
		return NULL;
	memcpy(r, s, pre);
	memcpy(r + pre, prompt, pl);
	memcpy(r + pre + pl, q + PH_LEN, post + 1);
	return r;
}

/* SBX-8: s with each "{cordon}" replaced by cordon (a path, no braces). */
static char *
fill_cordon(const char *s, const char *cordon)
{
	const char *p, *q;
	size_t n = 0, cl = strlen(cordon), len = strlen(s);
	char *r, *w;

	for (p = s; (q = strstr(p, CO)) != NULL; p = q + CO_LEN)
		n++;
	if ((r = malloc(len + n * cl + 1)) == NULL)
		return NULL;
	for (p = s, w = r; (q = strstr(p, CO)) != NULL; p = q + CO_LEN) {
		memcpy(w, p, (size_t)(q - p));
		w += q - p;
		memcpy(w, cordon, cl);
		w += cl;
	}
	memcpy(w, p, strlen(p) + 1);
	return r;
}

int
argv_build(const struct manifest *m, const char *prompt, const char *cordon,
    char ***argv_out, int *prompt_stdin, const char **errcode)
{
	char *t;
	char **v;
	size_t i, n = 0, holder = (size_t)-1;
	int dashdash = 0, guarded = 0;

	*argv_out = NULL;
	*prompt_stdin = 0;
	*errcode = "invalid-prompt";
	if (prompt == NULL || argv_prompt_ok(prompt, strlen(prompt)) == -1)
		return -1;
	*errcode = "invalid-argument";
	if (m == NULL || m->m_bin == NULL || m->m_args == NULL)
		return -1;
	for (i = 0; i < m->m_nargs; i++) {
		if (m->m_args[i] == NULL ||
		    strlen(m->m_args[i]) > LIM_ARG_MAX_BYTES)
			return -1;
		if (strstr(m->m_args[i], PH) != NULL) {
			if (holder != (size_t)-1)
				return -1; /* the validator allows one */
			holder = i;
			guarded = dashdash;
		}
		if (strcmp(m->m_args[i], "--") == 0)
			dashdash = 1;
		if (strstr(m->m_args[i], CO) != NULL &&
		    (cordon == NULL || strchr(cordon, '{') != NULL)) {
			*errcode = "no-cordon";
			return -1;
		}
	}
	if (m->m_prompt_via == MF_PROMPT_STDIN) {
		if (holder != (size_t)-1)
			return -1;
		*prompt_stdin = 1;
	} else {
		if (holder == (size_t)-1)
			return -1;
		/* SP-3: an element that starts with the prompt is a flag
		 * if the prompt starts with '-', unless "--" came first. */
		if (prompt[0] == '-' && !guarded &&
		    strncmp(m->m_args[holder], PH, PH_LEN) == 0) {
			*errcode = "prompt-flag-like";
			return -1;
		}
		if (strlen(m->m_args[holder]) - PH_LEN + strlen(prompt) >
		    LIM_ARG_MAX_BYTES) {
			*errcode = "invalid-prompt";
			return -1;
		}
	}
	if ((v = calloc(m->m_nargs + 2, sizeof(char *))) == NULL)
		goto oom;
	if ((v[n++] = strdup(m->m_bin)) == NULL)
		goto oom;
	for (i = 0; i < m->m_nargs; i++) {
		/* The placeholder first: a prompt is never expanded. */
		if ((t = fill_cordon(
			 m->m_args[i], cordon != NULL ? cordon : "")) == NULL)
			goto oom;
		v[n] = i == holder ? fill(t, prompt) : t;
		if (i == holder)
			free(t);
		if (v[n] == NULL || strlen(v[n]) > LIM_ARG_MAX_BYTES)
			goto oom;
		n++;
	}
	*argv_out = v;
	*errcode = NULL;
	return 0;
oom:
	strv_free(v);
	*errcode = "invalid-argument";
	return -1;
}

static int
printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

/* "--api-key" / "-token": a flag whose name looks like a secret and whose
 * value therefore follows as the next element. */
int
argv_secret_flag(const char *s)
{
	const char *n = s;

	if (*n != '-' || strchr(s, '=') != NULL)
		return 0;
	while (*n == '-')
		n++;
	return *n != '\0' && redact_key_secretish(n, strlen(n));
}

int
argv_redacted(const struct manifest *m, char ***out)
{
	char **v;
	const char *s, *r;
	size_t i;

	*out = NULL;
	if ((v = calloc(m->m_nargs + 1, sizeof(char *))) == NULL)
		return -1;
	for (i = 0; i < m->m_nargs && i < 64; i++) {
		s = m->m_args[i] != NULL ? m->m_args[i] : "";
		if (strstr(s, PH) != NULL)
			r = ARGV_PROMPT_REDACTED;
		else if ((i > 0 && m->m_args[i - 1] != NULL &&
			     argv_secret_flag(m->m_args[i - 1])) ||
			 redact_value_secretish(s) || !printable(s) ||
			 strlen(s) > ARGV_REDACTED_MAX)
			r = ARGV_REDACTED;
		else
			r = s;
		if ((v[i] = strdup(r)) == NULL) {
			strv_free(v);
			return -1;
		}
	}
	*out = v;
	return 0;
}

/*
 * SBX-9: each known CLI's own login, after its program: Claude Code's
 * subscription sign-in, Codex's browser sign-in, Gemini CLI's interactive
 * start (it asks how to authenticate).  The CLI is agent_cli's.
 */
static const struct {
	enum agent_cli lc_cli;
	const char *lc_args[3];
} login_cmds[] = {
    {AGENT_CLI_CLAUDE, {"auth", "login", NULL}},
    {AGENT_CLI_CODEX, {"login", NULL}},
    {AGENT_CLI_GEMINI, {NULL}},
};

/*
 * One argument (not the program): SP-2 bounds, else "invalid-argument";
 * SEC-3, no secret (nor the value of a secret-looking flag), else
 * "secret-argument".  NULL when it may go.
 */
static const char *
login_arg_bad(const char *s, const char *prev)
{
	if (s[0] == '\0' || strlen(s) > LIM_ARG_MAX_BYTES)
		return "invalid-argument";
	if (redact_value_secretish(s) || argv_secret_flag(prev))
		return "secret-argument";
	return NULL;
}

int
argv_login(const struct manifest *m, char *const *args, size_t nargs,
    char ***out, const char **errcode)
{
	const char *const *def = NULL;
	char *const *lead;
	enum agent_cli cli;
	char **v;
	size_t i, n = 0, k, nlead = 0;

	*out = NULL;
	*errcode = "no-login";
	/* The program: login's first word, else bin and its script. */
	if (m->m_login != NULL) {
		lead = m->m_login;
		nlead = 1;
		n = m->m_nlogin - 1;
	} else if (m->m_bin == NULL)
		return -1;
	else {
		cli = agent_cli(m->m_bin, m->m_args, m->m_nargs, &nlead);
		for (i = 0; i < nitems(login_cmds) && def == NULL; i++)
			if (login_cmds[i].lc_cli == cli)
				def = login_cmds[i].lc_args;
		if (def == NULL)
			return -1;
		while (def[n] != NULL)
			n++;
		lead = m->m_args;
	}
	/* The operator's arguments replace the login's; the program stays. */
	if (args != NULL)
		n = nargs;
	*errcode = "invalid-argument";
	if (n > LIM_ARGS_MAX - 1)
		return -1;
	if ((v = calloc(n + nlead + 2, sizeof(char *))) == NULL)
		return -1;
	for (k = 0; k <= n + (m->m_login == NULL ? nlead : 0); k++) {
		size_t p = m->m_login == NULL ? nlead : 0, a;
		const char *s;

		/* [bin] [lead...] or [login[0]], then the arguments. */
		if (k == 0)
			s = m->m_login != NULL ? m->m_login[0] : m->m_bin;
		else if (k <= p)
			s = lead[k - 1];
		else {
			a = k - p - 1;
			s = args != NULL  ? args[a]
			    : def != NULL ? def[a]
					  : m->m_login[a + 1];
		}
		if ((k > p &&
			(*errcode = login_arg_bad(s, v[k - 1])) != NULL) ||
		    (v[k] = strdup(s)) == NULL) {
			if (k > 0 && *errcode == NULL)
				*errcode = "invalid-argument";
			strv_free(v);
			return -1;
		}
	}
	*out = v;
	return 0;
}
