/*
 * SBX-8: what a Gemini CLI run would read from places the agent can
 * write and that could take over cordon's gate hook, checked before each
 * run by the spawner and by `cordon check` alike (one function, one
 * reason).  Pure of the daemons: files are read, never written.
 */
#ifndef CORDON_HOOKPROJ_H
#define CORDON_HOOKPROJ_H

#include <stddef.h>

#include "agentcli.h"

/*
 * 0 if an agent running cli (agent_cli), run in cwd with its private home
 * home, leaves cordon's gate hook wired (always, for a CLI other than
 * Claude Code or Gemini CLI, or with no home); else -1 with why (what,
 * where, what to do) set:
 *   - Claude Code: home/.claude/.claude.json sets env (which reaches
 *     its hook process), is no strict JSON object, is a link or over
 *     HOOK_CLAUDE_MAX;
 *   - cwd/.gemini/settings.json sets hooks or hooksConfig, is no strict
 *     JSON object, or is reached through a link (they outrank the user
 *     settings cordon writes, key by key);
 *   - a .env file Gemini CLI could load (.gemini/.env or .env in cwd or
 *     any dir above it, in home) names an LD_* variable the run's pins
 *     do not cover (hookenv_dotenv_bad), or is a link, too large, or
 *     unreadable: its variables reach the environment of every hook
 *     process.
 */
int hookproj_check(enum agent_cli cli, const char *cwd, const char *home,
    char *why, size_t whysz);

#endif
