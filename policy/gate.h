/*
 * SBX-6, SBX-7: the command gate's policy, pure.  A shell line (a Bash
 * tool call) or a plain argv is split into simple commands; each is
 * checked against the allowlist, the always-refused list, the extra rules
 * and the destructive shapes (DATA.md), and every argument that names a
 * path is resolved (by the caller's callback) and refused when it lands
 * in a protected path (policy/protect.h).  Unparseable input is refused:
 * the gate fails closed.  No I/O here: resolution is the callback's job.
 */
#ifndef CORDON_POLICY_GATE_H
#define CORDON_POLICY_GATE_H

#include <stddef.h>

#include "cordon_limits.h"
#include "policy.h"
#include "protect.h"

struct json_object;

#define GATE_LINE_MAX  16384 /* bytes of one shell line */
#define GATE_CMDS_MAX  32    /* simple commands in one line */
#define GATE_WORDS_MAX 256   /* words in one simple command */
#define GATE_NAMES_MAX 64    /* entries in a manifest list */
#define GATE_HOSTS_MAX 32

enum gate_verdict { GATE_ALLOW = 0, GATE_DENY, GATE_ASK };

/*
 * The manifest's `commands:` block, after validation.  Lists extend the
 * defaults; they never shrink the always-refused list or the shapes.
 *   commands:
 *     allow: [make, cargo]      # added to the default allowlist
 *     deny:  [curl]             # removed from the allowlist
 *     ask:   [npm]              # these always wait for the operator
 *     hosts: [api.github.com]   # curl/wget hosts that need no approval
 *     askTimeoutSec: 60         # 5 .. 600
 */
struct gate_policy {
	char **gp_allow;
	size_t gp_nallow;
	char **gp_deny;
	size_t gp_ndeny;
	char **gp_ask;
	size_t gp_nask;
	char **gp_hosts;
	size_t gp_nhosts;
	long gp_ask_timeout_sec;
};

/*
 * Validate a `commands:` node (NULL when absent: the defaults) into *out.
 * Problems go to errs via the same line:col marks as the manifest
 * (yaml_mark); returns 0, or -1 with nothing allocated.
 */
int gate_policy_parse(struct json_object *node, struct gate_policy *out,
    struct policy_err *errs, size_t maxerrs, size_t *nerrs);
void gate_policy_free(struct gate_policy *);
/* SBX-7: how long an ask waits for the operator, in seconds. */
long gate_ask_timeout(const struct gate_policy *);
/* SBX-8: how long `cordon gate` waits for any verdict, in seconds. */
long gate_answer_sec(const struct gate_policy *);
/* The policy as a `commands:` node gate_policy_parse takes back. */
struct json_object *gate_policy_json(const struct gate_policy *);

/*
 * Resolve path (relative to cwd when not absolute; "~" and "~/" against
 * home) to its nearest existing ancestor's realpath plus the rest, into
 * out.  Returns 0, or -1 when it cannot be resolved (then refused).
 */
typedef int (*gate_resolve_fn)(
    const char *path, const char *cwd, char *out, size_t outsz, void *arg);

struct gate_req {
	const char *gr_line;  /* a shell line, or NULL */
	size_t gr_linelen;    /* bytes of gr_line; 0: strlen (so a
			       * caller holding a length sees NULs) */
	char *const *gr_argv; /* a plain argv (when gr_line is NULL) */
	size_t gr_argc;
	const char *gr_cwd;	  /* absolute, resolved */
	const char *gr_workspace; /* absolute, resolved: the run's workdir */
};

struct gate_result {
	enum gate_verdict g_verdict;
	/* The deciding command's name (basename, [A-Za-z0-9._+-]{1,64},
	 * else "?"): the first refused, else the first asked, else the
	 * first command. */
	char g_verb[65];
	/* Fixed rule code ^[a-z0-9][a-z0-9.-]{0,63}$, e.g. "allowlist",
	 * "not-allowlisted", "always-refused", "destructive",
	 * "protected-path", "cwd-outside-workspace", "unparseable",
	 * "git-option", "chmod-mode", "pkill-target", "init-sh-form",
	 * "ask-rm-recursive", "ask-git-push", "ask-host", "ask-manifest";
	 * also "env-assignment" (VAR=value naming a runtime-control or
	 * lookup variable), "kill-target", "rm-outside-workspace",
	 * "script-outside-workspace", "net-option" (curl/wget options
	 * that re-route or read config), "url-refused" (a URL that does
	 * not parse or is not http/https), "docker-option",
	 * "invisible-characters" (SBX-7: a bidi control, an invisible or
	 * non-ASCII space code point, a control character but tab and
	 * newline, or invalid UTF-8 in the line, an argument or the cwd;
	 * such a command is refused, never held for the operator). */
	char g_rule[65];
};

/*
 * Decide one request.  Across the commands of a line a destructive shape
 * wins, then the first refusal, then the first ask, else allow.  Returns
 * 0 with *res filled; -1 on bad arguments or out of memory, *res then a
 * deny ("unparseable").  gp NULL: the defaults.
 */
int gate_check(const struct gate_policy *, const struct gate_req *,
    const struct protect_ctx *, gate_resolve_fn, void *arg,
    struct gate_result *);

/* "allow" | "deny" | "ask" */
const char *gate_verdict_name(enum gate_verdict);
/* A resolved path into .git/config or .git/hooks (programs git runs). */
int gate_git_internal(const char *path);

#endif
