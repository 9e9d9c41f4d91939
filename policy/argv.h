/*
 * Argument vectors for agent runs (SP-1, SP-2, SP-3) and their redacted
 * form for audit (AU-4).  Pure; allocates only what it hands back.
 */
#ifndef CORDON_POLICY_ARGV_H
#define CORDON_POLICY_ARGV_H

#include <stddef.h>

struct manifest;

#define ARGV_PROMPT_REDACTED "[PROMPT_REDACTED]"
#define ARGV_REDACTED	     "[REDACTED]"
#define ARGV_REDACTED_MAX    256 /* AU: argsRedacted strings <= 256 bytes */

/*
 * API-3 prompt rules: valid UTF-8, 1 … 256000 code points, no NUL.
 * 0 ok, -1 bad (errcode "invalid-prompt").
 */
int argv_prompt_ok(const char *prompt, size_t len);

/*
 * Build argv: [0] = bin as written (the spawner resolves it), then
 * transportConfig.args with the single "{prompt}" placeholder replaced
 * (the prompt becomes exactly one element, or part of a fused
 * "--flag={prompt}" element).  With promptVia stdin the args carry no
 * placeholder and *prompt_stdin is set to 1: the caller writes the prompt
 * to the child's stdin.  Each "{cordon}" in an element becomes cordon,
 * the absolute path of the cordon binary as the run sees it (SBX-8: the
 * hook wiring names it, never a PATH lookup the agent could redirect).
 * Errors (*errcode, a fixed string):
 *   invalid-prompt    NUL, empty, too long, not UTF-8, or the element
 *                     holding it > 32 KiB;
 *   prompt-flag-like  prompt starts with '-' and would stand as its own
 *                     element not after "--" (SP-3);
 *   no-cordon         an element names {cordon} and cordon is NULL;
 *   invalid-argument  any other element bad (NUL-free by construction,
 *                     > 32 KiB), or out of memory.
 * Returns 0 and a NULL-terminated malloc'd vector (strv_free), or -1.
 */
int argv_build(const struct manifest *, const char *prompt, const char *cordon,
    char ***argv_out, int *prompt_stdin, const char **errcode);

/*
 * AU-4: the args (WITHOUT argv[0]; bin goes separately as its basename)
 * with the prompt element as "[PROMPT_REDACTED]" and secret-looking
 * values, values after a secret-looking flag, and anything not printable
 * ASCII or over 256 bytes as "[REDACTED]".  NULL-terminated, <= 64.
 * 0, or -1 (out of memory).
 */
int argv_redacted(const struct manifest *, char ***out);
/* "--api-key", "-token": a flag whose name looks like a secret, without
 * "=": the next element is its value.  1 yes, 0 no. */
int argv_secret_flag(const char *arg);

/*
 * SBX-9: the argv of `cordon agent login`: the manifest's `login:`, else
 * the known CLI's own login after its bin (claude: auth login; codex:
 * login; gemini: none, its interactive start), the CLI as agent_cli
 * tells it (for `node SCRIPT`, the login follows the script).  args
 * (nargs of them), when not NULL, replace the login's arguments; the
 * program stays the manifest's.  Each argument within
 * SP-2's bounds and holding no secret (SEC-3).  0 and a NULL-terminated
 * vector (strv_free), or -1 and *errcode: "no-login" (no `login:` and
 * an unknown CLI), "secret-argument", "invalid-argument".
 */
int argv_login(const struct manifest *, char *const *args, size_t nargs,
    char ***out, const char **errcode);

#endif
