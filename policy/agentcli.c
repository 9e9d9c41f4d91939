/*
 * SBX-8: which agent CLI a manifest runs (agentcli.h).  Pure.
 */
#include <string.h>

#include "agentcli.h"
#include "manifest.h"

static const struct {
	enum agent_cli ac_cli;
	const char *ac_cmd; /* the command npm links */
	const char *ac_pkg; /* its package dir, as a path segment */
} agent_clis[] = {
    {AGENT_CLI_CLAUDE, "claude", "/@anthropic-ai/claude-code/"},
    {AGENT_CLI_CODEX, "codex", "/@openai/codex/"},
    {AGENT_CLI_GEMINI, "gemini", "/@google/gemini-cli/"},
};
#define AGENT_CLIS (sizeof(agent_clis) / sizeof(agent_clis[0]))

static const char *
agent_base(const char *p)
{
	return strrchr(p, '/') != NULL ? strrchr(p, '/') + 1 : p;
}

/* The CLI whose command p's last component is (cmd) or whose package p
 * lies in. */
static enum agent_cli
agent_match(const char *p, int cmd)
{
	size_t i;

	for (i = 0; i < AGENT_CLIS; i++)
		if ((cmd && strcmp(agent_base(p), agent_clis[i].ac_cmd) == 0) ||
		    strstr(p, agent_clis[i].ac_pkg) != NULL)
			return agent_clis[i].ac_cli;
	return AGENT_CLI_NONE;
}

enum agent_cli
agent_cli(const char *bin, char *const *args, size_t nargs, size_t *nlead)
{
	enum agent_cli c;
	size_t i;

	if (nlead != NULL)
		*nlead = 0;
	if (bin == NULL)
		return AGENT_CLI_NONE;
	if ((c = agent_match(bin, 1)) != AGENT_CLI_NONE)
		return c;
	if (strcmp(agent_base(bin), "node") != 0 &&
	    strcmp(agent_base(bin), "nodejs") != 0)
		return AGENT_CLI_NONE;
	/* node [--opt[=value]]... SCRIPT: the script is the program. */
	for (i = 0; i < nargs && args != NULL && args[i] != NULL; i++) {
		if (strncmp(args[i], "--", 2) == 0 && args[i][2] != '\0')
			continue;
		if (args[i][0] == '-' ||
		    (c = agent_match(args[i], 0)) == AGENT_CLI_NONE)
			return AGENT_CLI_NONE;
		if (nlead != NULL)
			*nlead = i + 1;
		return c;
	}
	return AGENT_CLI_NONE;
}

enum agent_cli
agent_cli_mf(const struct manifest *m)
{
	return agent_cli(m->m_bin, m->m_args, m->m_nargs, NULL);
}

const char *
agent_cli_name(enum agent_cli c)
{
	size_t i;

	for (i = 0; i < AGENT_CLIS; i++)
		if (agent_clis[i].ac_cli == c)
			return agent_clis[i].ac_cmd;
	return "none";
}
