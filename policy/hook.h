/*
 * SBX-8: the pre-tool hook protocols of the real agent CLIs, pure.  One
 * hook input (Claude Code PreToolUse, Codex PreToolUse, Gemini CLI
 * BeforeTool), already parsed as JSON, becomes the gate checks it needs:
 * each tool of each CLI maps to one kind (a shell line, a file read, a
 * file write, a search under a directory, a web tool, a tool with no
 * effect outside the agent, or an unknown tool), and the verdict goes
 * back in the form that CLI expects.  No I/O; nothing is allocated.
 */
#ifndef CORDON_POLICY_HOOK_H
#define CORDON_POLICY_HOOK_H

#include <stddef.h>

struct json_object;

#define HOOK_CHECKS_MAX	 16   /* gate checks one tool call may need */
#define HOOK_PATHS_BYTES 8192 /* paths taken out of a patch, in all */
#define HOOK_TOOL_MAX	 64
#define HOOK_ANSWER_MAX	 512

enum hook_cli { HOOK_CLAUDE, HOOK_CODEX, HOOK_GEMINI };

enum hook_kind {
	HK_SHELL,  /* hc_line: a shell line */
	HK_READ,   /* hc_path: a file read */
	HK_WRITE,  /* hc_path: a file written, edited or deleted */
	HK_SEARCH, /* hc_path or NULL (the cwd): a directory searched */
	HK_WEB,	   /* a web fetch or search: the sandbox's network decides */
	HK_INERT,  /* no effect outside the agent (todo lists, subagents) */
	HK_UNKNOWN /* not known to cordon: refused (SBX-6 fails closed) */
};

struct hook_check {
	enum hook_kind hc_kind;
	const char *hc_line; /* HK_SHELL */
	const char *hc_path; /* HK_READ, HK_WRITE; HK_SEARCH may be NULL */
};

struct hook_call {
	enum hook_cli hk_cli;
	const char *hk_tool; /* ^[A-Za-z0-9_.-]{1,64}$, as the CLI names it */
	const char *hk_cwd;  /* the CLI's cwd, or NULL */
	struct hook_check hk_checks[HOOK_CHECKS_MAX];
	size_t hk_nchecks; /* >= 1 */
	/* storage for paths and a cwd joined here (patches, dir_path) */
	char hk_buf[HOOK_PATHS_BYTES];
};

/*
 * Decode one hook input.  Strings point into in (or hk_buf): in must
 * outlive *out.  0, or -1 when the input is not a pre-tool hook call of a
 * known CLI or a tool's input lacks what its check needs (the caller
 * refuses: bad-input).
 */
int hook_decode(struct json_object *in, struct hook_call *out);

/*
 * The input key holding a tool's shell line or its one file path
 * (Claude Code's Bash: "command", Read: "file_path"), or NULL for a tool
 * of any other kind: what an operator reads first of a tool call.
 */
const char *hook_input_key(enum hook_cli cli, const char *tool);

/* "shell" "read" "write" "search" "web" "inert" "unknown" */
const char *hook_kind_name(enum hook_kind);
/* The kind of a name hook_kind_name gives; -1 for anything else. */
int hook_kind_parse(const char *);
/* 1 if a tool's name is [A-Za-z0-9_.-]{1,HOOK_TOOL_MAX}. */
int hook_tool_name_ok(const char *);
/* "claude" "codex" "gemini" */
const char *hook_cli_name(enum hook_cli);

/*
 * The verdict in cli's protocol: what goes to stdout (may be empty) and
 * to stderr (may be empty), and the exit status.  rule and msg are fixed
 * codes and phrases (never the command).  0, or -1 if a buffer is short.
 */
int hook_answer(enum hook_cli cli, int allow, const char *rule, const char *msg,
    char *out, size_t outsz, char *err, size_t errsz, int *status);

/*
 * SBX-8: Gemini CLI's user settings, which cordon writes itself before
 * each run (Gemini CLI reads its hooks from there, in the agent's
 * writable home): the gate hook for every tool, named name (fresh per
 * run, so a hooksConfig.disabled entry written for one run names no
 * later one), run as cordon (the absolute path of the binary, never a
 * PATH lookup), hooks on, and the way in (oauth: the login the agent
 * made with `cordon agent login`, else the API key), waiting timeout_ms
 * (above the gate's own bound: SBX-8).  0, or -1 if name
 * is not ^[A-Za-z0-9-]{1,64}$, cordon not an absolute path of
 * [A-Za-z0-9/._+-], or out is short.
 */
int hook_gemini_settings(const char *name, const char *cordon, int oauth,
    long timeout_ms, char *out, size_t outsz);

/*
 * SBX-8: Gemini CLI's project settings (.gemini/settings.json in its
 * working dir, which the agent may write) outrank the user settings
 * cordon writes, key by key; one that sets hooksConfig (hooks off, a
 * hook disabled) or replaces hooks unwires the gate hook.  NULL if the
 * len bytes of buf are a strict JSON object with neither key, else what
 * is wrong: the key's name, or "not-strict-json" (comments included:
 * what cordon cannot read exactly as the CLI does, it refuses).
 */
#define HOOK_PROJECT_MAX   (64 * 1024) /* bytes of project settings read */
#define HOOK_PROJECT_DEPTH 32
const char *hook_gemini_project(const char *buf, size_t len);

/*
 * SBX-8: Claude Code's global config (.claude.json in its config dir,
 * the agent's home, which the agent may write) is read whatever
 * --setting-sources= says, and its env is put into the CLI's own
 * environment, which its hook's `/bin/sh -c` inherits: an LD_PRELOAD
 * there would run the agent's library in place of `cordon gate`.  NULL
 * if the len bytes of buf are a strict JSON object without env, else
 * "env" or "not-strict-json".
 */
#define HOOK_CLAUDE_MAX (1024 * 1024) /* bytes of the global config read */
const char *hook_claude_config(const char *buf, size_t len);

/*
 * SBX-8: the gate hook a Claude Code or Codex manifest wires in its args
 * (Claude Code's --settings JSON, Codex's -c/--config
 * hooks.PreToolUse=...): found, its timeout in seconds (Claude Code's
 * default when it sets none; 0 for a Codex hook without one), whether
 * it blocks the call when it fails (Claude Code's onFailure), and
 * whether one sees every tool (no matcher but one that matches all,
 * no Claude Code "if").
 */
struct hook_gate_wiring {
	int hg_found;
	long hg_timeout; /* the shortest, if several */
	int hg_blocks;	 /* each blocks */
	int hg_unread;	 /* settings the CLI reads and this cannot */
	int hg_async;	 /* one the CLI would not wait for, or not run */
	int hg_covers;	 /* one that every tool call goes through */
	int hg_off;	 /* Codex's hooks feature turned off */
};
struct manifest;
/* 1 and *w filled when the args wire a gate hook, else 0. */
int hook_gate_wiring(const struct manifest *, struct hook_gate_wiring *w);
/*
 * 0, or -1 with why (fixed words and numbers) when that hook's timeout
 * is shorter than `cordon gate`'s bound plus GATE_HOOK_MARGIN: the CLI
 * would run a call the gate had not answered.
 */
int hook_gate_check(const struct manifest *, char *why, size_t whysz);

#endif
