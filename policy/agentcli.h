/*
 * SBX-8: which agent CLI a manifest runs, decided in one place for the
 * hook config cordon writes, the files each spawn binds read-only, the
 * project files a run is refused over, the pinned hook environment and
 * the default login.  Pure: the manifest's words only, no file is read.
 */
#ifndef CORDON_POLICY_AGENTCLI_H
#define CORDON_POLICY_AGENTCLI_H

#include <stddef.h>

enum agent_cli {
	AGENT_CLI_NONE, /* not one cordon knows: no hook wiring of its own */
	AGENT_CLI_CLAUDE,
	AGENT_CLI_CODEX,
	AGENT_CLI_GEMINI
};

/*
 * The CLI that bin (with its args, nargs of them) runs:
 *   - bin's last component is the CLI's command: "claude", "codex",
 *     "gemini" (a PATH name, npm's bin link, any absolute path);
 *   - bin is the CLI's own script, a path inside its npm package
 *     (".../@anthropic-ai/claude-code/...", ".../@openai/codex/...",
 *     ".../@google/gemini-cli/...");
 *   - bin's last component is "node" or "nodejs" and its first argument
 *     not starting with '-' is such a script (node options before it in
 *     the --opt or --opt=value form only).
 * Anything else is AGENT_CLI_NONE.  *nlead, when not NULL, is the count
 * of args that belong to the program (the script and the node options
 * before it: 0 unless the third form matched), what a login or a
 * version probe keeps before its own args.
 */
enum agent_cli agent_cli(
    const char *bin, char *const *args, size_t nargs, size_t *nlead);

struct manifest;
/* The CLI of a manifest: agent_cli on its transportConfig bin and args. */
enum agent_cli agent_cli_mf(const struct manifest *);

/* "claude" "codex" "gemini", or "none". */
const char *agent_cli_name(enum agent_cli);

#endif
