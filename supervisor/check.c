/*
 * cordon check [--home DIR] [--json]: load every agents/NAME.yaml with the
 * same loader and validator the spawner uses and report every problem of
 * every file in one pass, as FILE:LINE:COL: KEY: message (or one JSON
 * document), exit 1 if any (2 on bad usage).  Beyond the schema it
 * foresees what would refuse a run later: sandbox roots resolved and
 * checked against the protected set as the spawner does at load (SBX-2),
 * binaries not on the PATH cordon would have (SP-1), secrets that do not
 * resolve (SEC-2, SP-13), Gemini CLI files in the project or the home
 * that would unwire the gate hook (SBX-8).  Missions (the sibling missions/
 * dir) go through the spawner's own loader (load/mission_load.c), against
 * the valid manifests, and their outputs against their permissions (MI-2).
 * Reads only; a secret's value is never shown, only its manifest name.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "charset.h"
#include "cli.h"
#include "cordond.h"
#include "env.h"
#include "hook.h"
#include "hookproj.h"
#include "manifest.h"
#include "mission_load.h"
#include "roots.h"
#include "secrets.h"
#include "util.h"
#include "yamljson.h"

#define CHECK_MAX_FILES 256
#define CHECK_MAX_ERRS	64
#define CHECK_PATH_SHOW 200  /* bytes of $PATH named in a problem */
#define CHECK_MSG_MAX	1024 /* one problem's text */

#define CHECK_PENDING_MAX 128

/* One problem of the file at hand, until the file is done. */
struct pending {
	unsigned long pd_line, pd_col;
	size_t pd_seq;
	int pd_warn; /* a warning: reported, not a problem */
	const char *pd_code;
	char pd_msg[CHECK_MSG_MAX];
};

/* Where the problems go: each file's in line order, printed or gathered
 * for --json. */
struct check {
	int ck_json;
	struct json_object *ck_problems; /* --json: the array */
	struct json_object *ck_warnings; /* --json: the array */
	size_t ck_n;			 /* problems so far */
	size_t ck_argv;			 /* agents with promptVia argv */
	size_t ck_seq;			 /* problems and warnings so far */
	char ck_secrets[PATH_MAX + 16];	 /* secrets.yaml beside agents/ */
	const char *ck_state;		 /* the spawner's state dir */
	const struct protect_ctx *ck_pc; /* the spawner's protected set */
	struct json_object *ck_homes;	 /* --json: {agent: its home} */
	char ck_file[PATH_MAX + MISSION_FILE_MAX]; /* the file at hand */
	struct pending ck_pend[CHECK_PENDING_MAX];
	size_t ck_npend;
};

static int
check_pendcmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->pd_line != y->pd_line)
		return x->pd_line < y->pd_line ? -1 : 1;
	if (x->pd_col != y->pd_col)
		return x->pd_col < y->pd_col ? -1 : 1;
	return x->pd_seq < y->pd_seq ? -1 : 1;
}

/*
 * The file at hand's problems, in line order.  A message is "key.path:
 * phrase" or a bare phrase; the JSON form splits the key off.  Nothing
 * here is a value of the file.
 */
static void
check_flush(struct check *ck)
{
	struct json_object *o;
	const struct pending *p;
	const char *sep;
	size_t i, klen;

	qsort(ck->ck_pend, ck->ck_npend, sizeof(ck->ck_pend[0]), check_pendcmp);
	for (i = 0; i < ck->ck_npend; i++) {
		p = &ck->ck_pend[i];
		if (!ck->ck_json) {
			if (p->pd_line > 0)
				printf("%s:%lu:%lu: %s%s\n", ck->ck_file,
				    p->pd_line, p->pd_col,
				    p->pd_warn ? "warning: " : "", p->pd_msg);
			else
				printf("%s: %s%s\n", ck->ck_file,
				    p->pd_warn ? "warning: " : "", p->pd_msg);
			continue;
		}
		/* A key path is a run of [A-Za-z0-9_.[]]. */
		sep = strstr(p->pd_msg, ": ");
		klen = sep != NULL ? (size_t)(sep - p->pd_msg) : 0;
		if (!charset_shape(p->pd_msg, klen, "A-Za-z0-9_.[]",
			"A-Za-z0-9_.[]", 1, klen))
			klen = 0;
		o = json_object_new_object();
		json_object_object_add(
		    o, "file", json_object_new_string(ck->ck_file));
		json_object_object_add(
		    o, "line", json_object_new_int64((int64_t)p->pd_line));
		json_object_object_add(
		    o, "column", json_object_new_int64((int64_t)p->pd_col));
		json_object_object_add(o, "key",
		    klen ? json_object_new_string_len(p->pd_msg, (int)klen)
			 : NULL);
		json_object_object_add(o, "code",
		    json_object_new_string(
			p->pd_code != NULL ? p->pd_code : "invalid"));
		json_object_object_add(o, "message",
		    json_object_new_string(
			klen ? p->pd_msg + klen + 2 : p->pd_msg));
		json_object_array_add(
		    p->pd_warn ? ck->ck_warnings : ck->ck_problems, o);
	}
	ck->ck_npend = 0;
}

/* One problem (or warning) of file (line 0: of the file as a whole). */
static void
check_note(struct check *ck, const char *file, unsigned long line,
    unsigned long col, const char *code, const char *msg, int warn)
{
	struct pending *p;

	if (strcmp(file, ck->ck_file) != 0) {
		check_flush(ck);
		snprintf(ck->ck_file, sizeof(ck->ck_file), "%s", file);
	}
	if (ck->ck_npend == CHECK_PENDING_MAX)
		check_flush(ck);
	p = &ck->ck_pend[ck->ck_npend];
	p->pd_line = line;
	p->pd_col = col;
	p->pd_seq = ck->ck_seq++;
	p->pd_warn = warn;
	p->pd_code = code;
	snprintf(p->pd_msg, sizeof(p->pd_msg), "%s", msg);
	ck->ck_npend++;
	if (!warn)
		ck->ck_n++;
}

static void
check_report(struct check *ck, const char *file, unsigned long line,
    unsigned long col, const char *code, const char *msg)
{
	check_note(ck, file, line, col, code, msg, 0);
}

/* SP-15: agentic-os keys the manifest holds that cordon does not act on. */
static void
check_ignored(struct check *ck, const char *file, const struct manifest *m)
{
	char msg[160];
	size_t i;

	for (i = 0; i < m->m_nignored; i++) {
		snprintf(msg, sizeof(msg),
		    "%s: ignored (an agentic-os key cordon does not act on)",
		    m->m_ignored[i].ig_key);
		check_note(ck, file, m->m_ignored[i].ig_line,
		    m->m_ignored[i].ig_col, "ignored-key", msg, 1);
	}
}

/* The same at a node of the tree (its line:col). */
static void
check_report_at(struct check *ck, const char *file, struct json_object *at,
    const char *code, const char *msg)
{
	unsigned long l = 0, c = 0;

	(void)yaml_mark(at, &l, &c);
	check_report(ck, file, l, c, code, msg);
}

static int
check_is_yaml(const char *n)
{
	size_t l = strlen(n);

	return n[0] != '.' && l > 5 && strcmp(n + l - 5, ".yaml") == 0;
}

/* The node of root[k1][k2][idx] for line:col, or the nearest parent. */
static struct json_object *
check_node(struct json_object *root, const char *k1, const char *k2, int idx)
{
	struct json_object *v, *w;

	if (!json_object_object_get_ex(root, k1, &v) || v == NULL)
		return root;
	if (k2 != NULL && json_object_is_type(v, json_type_object) &&
	    json_object_object_get_ex(v, k2, &w) && w != NULL)
		v = w;
	if (idx >= 0 && json_object_is_type(v, json_type_array) &&
	    (size_t)idx < json_object_array_length(v))
		v = json_object_array_get_idx(v, (size_t)idx);
	return v;
}

/*
 * SP-1: a program the spawner would not find.  The PATH is the one
 * cordon run would pass on (the manifest's env PATH, else this shell's),
 * named, cut and cleaned; the program's name is not repeated.
 */
static void
check_bin(struct check *ck, const char *file, const struct manifest *m,
    const struct roots *rt, const char *bin, struct json_object *at,
    const char *key)
{
	const char *path = getenv("PATH");
	char env[PATH_MAX + 8], *envp[2] = {env, NULL}, out[PATH_MAX];
	char shown[CHECK_PATH_SHOW + 4], msg[CHECK_PATH_SHOW + 160];
	char why[AGENT_REASON_MAX], wide[CHECK_MSG_MAX];
	size_t i;
	int own = 0, unsafe;

	for (i = 0; i < m->m_nenv; i++)
		if (strcmp(m->m_env[i].e_name, "PATH") == 0) {
			path = m->m_env[i].e_value;
			own = 1;
		}
	if (path == NULL)
		path = "";
	snprintf(env, sizeof(env), "PATH=%s", path);
	if (bin == NULL)
		return;
	if (agent_resolve_bin(bin, envp, out, sizeof(out)) == 0) {
		/* SU-5: another user's to replace; SP-12: where the
		 * sandbox would hide it. */
		if (rt == NULL)
			return;
		unsafe = agent_bin_safe(
			     bin, envp, ck->ck_pc, why, sizeof(why)) == -1;
		if (unsafe || agent_bin_check(bin, envp, rt, ck->ck_pc, out,
				  sizeof(out), why, sizeof(why)) == -1) {
			snprintf(wide, sizeof(wide),
			    "%s: %.*s; runs would fail (spawn-failed)", key,
			    (int)(sizeof(wide) - 64), why);
			check_report_at(ck, file, at,
			    unsafe ? "bin-unsafe" : "bin-hidden", wide);
		}
		return;
	}
	if (bin[0] == '/') {
		snprintf(msg, sizeof(msg),
		    "%s: no executable file at that path; runs would fail "
		    "(spawn-failed)",
		    key);
		check_report_at(ck, file, at, "bin-not-found", msg);
		return;
	}
	for (i = 0; path[i] != '\0' && i < CHECK_PATH_SHOW; i++)
		shown[i] = path[i] > 0x1f && path[i] != 0x7f ? path[i] : '?';
	snprintf(shown + i, sizeof(shown) - i, "%s", path[i] ? "..." : "");
	snprintf(msg, sizeof(msg),
	    "%s: not found on %s PATH %s; runs would fail (spawn-failed)", key,
	    own ? "the manifest's env" : "cordon's",
	    shown[0] ? shown : "(empty)");
	check_report_at(ck, file, at, "bin-not-found", msg);
}

/*
 * MC-2: a warning: worktree runs need git, found on the spawner's fixed
 * PATH for it (not the manifest's); without it each one would fail.
 */
static void
check_git(struct check *ck, const char *file, const struct manifest *m,
    struct json_object *root)
{
	char env[] = WT_GIT_PATH, *envp[2] = {env, NULL}, out[PATH_MAX];
	unsigned long l = 0, c = 0;

	if (!m->m_sandbox.sb_worktrees ||
	    agent_resolve_bin("git", envp, out, sizeof(out)) == 0)
		return;
	(void)yaml_mark(check_node(root, "sandbox", "worktrees", -1), &l, &c);
	check_note(ck, file, l, c, "git-not-found",
	    "sandbox.worktrees: git not found on the spawner's " WT_GIT_PATH
	    "; worktree runs would fail (worktree-failed)",
	    1);
}

/*
 * SBX-8: the spawner's load check of the gate hook's timeout, in its
 * words; a warning for a Claude Code gate hook that lets a call through
 * when it fails (no onFailure: block), and one for a gate hook that sees
 * only some tools (a matcher, Claude Code's "if").
 */
static void
check_gate_hook(struct check *ck, const char *file, const struct manifest *m,
    struct json_object *root)
{
	struct hook_gate_wiring w;
	char why[AGENT_REASON_MAX], msg[CHECK_MSG_MAX];
	struct json_object *at =
	    check_node(root, "transportConfig", "args", -1);
	unsigned long l = 0, c = 0;

	if (hook_gate_check(m, why, sizeof(why)) == -1) {
		snprintf(
		    msg, sizeof(msg), "%s; the agent would be disabled", why);
		check_report_at(ck, file, at, "hook-timeout", msg);
	}
	if (hook_gate_wiring(m, &w) != 1)
		return;
	(void)yaml_mark(at, &l, &c);
	if (agent_cli_mf(m) == AGENT_CLI_CLAUDE && !w.hg_blocks)
		check_note(ck, file, l, c, "hook-fails-open",
		    "transportConfig.args: the gate hook has no \"onFailure\": "
		    "\"block\"; Claude Code runs a call whose hook could not "
		    "start or failed",
		    1);
	if (!w.hg_covers)
		check_note(ck, file, l, c, "hook-partial",
		    "transportConfig.args: the gate hook's matcher (or \"if\") "
		    "lets some tool calls past it; the gate checks only the "
		    "others, and the sandbox alone holds the rest",
		    1);
}

/*
 * SBX-8: what would refuse each run of a Gemini CLI agent before it
 * starts, by the spawner's own check, in the same words: project
 * settings or a .env file that could unwire its gate hook.  The cwd is
 * the one a run gets (SP-6: the manifest's, else the operator's home).
 */
static void
check_hooks(struct check *ck, const char *file, const struct manifest *m,
    struct json_object *root)
{
	const char *cwd = m->m_cwd, *op = getenv("HOME");
	char home[PATH_MAX], why[AGENT_REASON_MAX], msg[CHECK_MSG_MAX];
	struct json_object *at;

	if (cwd == NULL)
		cwd = op != NULL && op[0] == '/' ? op : "/";
	if (agent_home_path(ck->ck_state, m->m_name, home, sizeof(home)) == -1)
		return;
	/* SBX-8, SBX-9: the spawner's own load check, in its words. */
	if (env_home_foreign(m, home, why, sizeof(why)) == -1) {
		at = check_node(root, "transportConfig", "env", -1);
		snprintf(
		    msg, sizeof(msg), "%s; the agent would be disabled", why);
		check_report_at(ck, file, at, "home-env", msg);
	}
	check_gate_hook(ck, file, m, root);
	if (hookproj_check(agent_cli_mf(m), cwd, home, why, sizeof(why)) == 0)
		return;
	at = check_node(root, "transportConfig", "cwd", -1);
	snprintf(msg, sizeof(msg), "%s; runs would fail (spawn-failed)", why);
	check_report_at(ck, file, at, "hooks-refused", msg);
}

/*
 * SBX-8: a transport of a real CLI (streamJson: Claude Code, codexJson:
 * Codex, geminiJson: Gemini CLI) with a bin cordon does not recognise as
 * that CLI (agent_cli) runs without the hook config cordon writes and
 * binds read-only for it, and without its checks of the files that
 * could unwire the gate hook: a warning, naming what cordon saw.
 */
static void
check_cli(struct check *ck, const char *file, const struct manifest *m,
    struct json_object *root)
{
	enum agent_cli want, got = agent_cli_mf(m);
	unsigned long l = 0, c = 0;
	char msg[CHECK_MSG_MAX];

	want = m->m_transport == MF_STREAMJSON	 ? AGENT_CLI_CLAUDE
	       : m->m_transport == MF_CODEXJSON	 ? AGENT_CLI_CODEX
	       : m->m_transport == MF_GEMINIJSON ? AGENT_CLI_GEMINI
						 : AGENT_CLI_NONE;
	if (want == AGENT_CLI_NONE || got == want)
		return;
	snprintf(msg, sizeof(msg),
	    "transportConfig.bin: transport %s runs %s, but cordon reads this "
	    "bin as %s: runs get none of %s's read-only hook config nor its "
	    "hook checks; name its command (%s) or its npm package's script, "
	    "as docs/agents.md says",
	    manifest_transport_name(m->m_transport), agent_cli_name(want),
	    got == AGENT_CLI_NONE ? "no CLI it knows" : agent_cli_name(got),
	    agent_cli_name(want), agent_cli_name(want));
	(void)yaml_mark(check_node(root, "transportConfig", "bin", -1), &l, &c);
	check_note(ck, file, l, c, "cli-unknown", msg, 1);
}

/* SEC-2, SP-13: each secret the manifest maps resolves, or is named. */
static void
check_secrets(struct check *ck, const char *file, const struct manifest *m,
    struct json_object *root)
{
	struct secret_set ss;
	char msg[160];
	size_t i;

	if (m->m_nsecrets == 0)
		return;
	if (secrets_resolve(ck->ck_secrets, m, &ss) == -1)
		for (i = 0; i < ss.ss_nmissing; i++) {
			snprintf(msg, sizeof(msg),
			    "secrets.%s: not set in cordon's environment nor "
			    "in secrets.yaml; runs would be refused "
			    "(missing-secret)",
			    ss.ss_missing[i]);
			check_report_at(ck, file,
			    check_node(root, "secrets", ss.ss_missing[i], -1),
			    "missing-secret", msg);
		}
	secrets_clear(&ss); /* wipes every value */
}

/*
 * SP-1, SP-18, SEC-2: what runs, probes and actions would execute, and
 * the secrets they would need.
 */
static void
check_runtime(struct check *ck, const char *path, const struct manifest *m,
    struct json_object *root)
{
	struct json_object *nv;
	size_t i;

	check_bin(ck, path, m, NULL, m->m_bin,
	    check_node(root, "transportConfig", "bin", -1),
	    "transportConfig.bin");
	if (m->m_nprobe_cmd > 0 && m->m_probe_cmd != NULL &&
	    json_object_object_get_ex(root, "healthProbe", &nv))
		check_bin(ck, path, m, NULL, m->m_probe_cmd[0],
		    check_node(root, "healthProbe", "command", 0),
		    "healthProbe.command[0]");
	for (i = 0; i < m->m_nactions; i++)
		if (m->m_actions[i].a_ncommand > 0 &&
		    m->m_actions[i].a_command != NULL &&
		    m->m_actions[i].a_command[0][0] != '\0') {
			nv = check_node(root, "actions", NULL, (int)i);
			check_bin(ck, path, m, NULL,
			    m->m_actions[i].a_command[0],
			    check_node(nv, "command", NULL, 0),
			    "actions.command[0]");
		}
	check_secrets(ck, path, m, root);
}

/*
 * What a manifest's settings expose, or no longer change (SBX-4): a
 * warning for a key that weakens nothing, and a count of the agents
 * whose prompt goes by argv (summed up once, at the end).
 */
static void
check_exposures(struct check *ck, const char *path, struct json_object *root,
    const struct manifest *m)
{
	struct json_object *sb, *iso;
	unsigned long l = 0, c = 0;

	if (m->m_prompt_via == MF_PROMPT_ARGV)
		ck->ck_argv++;
	if (json_object_object_get_ex(root, "sandbox", &sb) &&
	    json_object_object_get_ex(sb, "isolation", &iso) &&
	    strcmp(json_object_get_string(iso), "landlock") == 0) {
		(void)yaml_mark(iso, &l, &c);
		check_note(ck, path, l, c, "isolation-landlock",
		    "sandbox.isolation: landlock weakens nothing: every run "
		    "gets namespace isolation where the host allows it",
		    1);
	}
}

/*
 * SBX-9: where the agent's private home is (the spawner makes it at
 * load); the secret-file scan leaves it alone, as the run does.
 */
static void
check_home(struct check *ck, const char *name)
{
	char home[PATH_MAX];

	if (agent_home_path(ck->ck_state, name, home, sizeof(home)) == -1)
		return;
	if (ck->ck_json)
		json_object_object_add(
		    ck->ck_homes, name, json_object_new_string(home));
	else
		fprintf(stderr, "cordon: check: note: agent %s: home %s\n",
		    name, home);
}

/* A manifest that did not validate: its n problems (errs), then what
 * did validate, looked at further in this pass. */
static void
check_invalid(struct check *ck, const char *path, struct manifest *m,
    struct json_object *root, const struct policy_err *errs, size_t n)
{
	char msg[64];
	size_t i;

	check_ignored(ck, path, m);
	for (i = 0; i < n && i < CHECK_MAX_ERRS; i++)
		check_report(ck, path, errs[i].pe_line, errs[i].pe_col,
		    errs[i].pe_code, errs[i].pe_msg);
	if (n > CHECK_MAX_ERRS || n == 0) {
		snprintf(msg, sizeof(msg), "%zu more problems",
		    n > CHECK_MAX_ERRS ? n - CHECK_MAX_ERRS : 1);
		check_report(ck, path, 0, 0, "invalid", msg);
	}
	check_runtime(ck, path, m, root);
}

/* An agent name must be unique across files. */
static void
check_unique(struct check *ck, const char *path, const struct manifest *m,
    struct json_object *root, char **names, size_t *nnames)
{
	size_t i;

	for (i = 0; i < *nnames; i++)
		if (strcmp(names[i], m->m_name) == 0)
			break;
	if (i < *nnames)
		check_report_at(ck, path, check_node(root, "name", NULL, -1),
		    "duplicate-name", "name: duplicate agent name");
	else if ((names[*nnames] = strdup(m->m_name)) != NULL)
		(*nnames)++;
}

/* One manifest file; 1 if it loaded (its problems may be foreseen ones). */
static int
check_file(struct check *ck, const char *path, const struct protect_ctx *pc,
    char **names, size_t *nnames)
{
	struct policy_err errs[CHECK_MAX_ERRS];
	struct roots r;
	char why[PATH_MAX];
	struct yaml_err yerr;
	struct json_object *root, *nv;
	struct manifest m;
	const struct roots *rt;
	size_t i, n = 0;
	int rok;

	memset(&yerr, 0, sizeof(yerr));
	if ((root = yaml_load_file(path, &yerr)) == NULL) {
		check_report(ck, path, yerr.ye_line ? yerr.ye_line : 0,
		    yerr.ye_col, "yaml",
		    yerr.ye_msg[0] ? yerr.ye_msg : "cannot be loaded");
		return 0;
	}
	if (manifest_parse_partial(root, &m, errs, CHECK_MAX_ERRS, &n) == -1) {
		check_invalid(ck, path, &m, root, errs, n);
		manifest_free(&m);
		json_object_put(root);
		return 0;
	}
	check_ignored(ck, path, &m);
	check_unique(ck, path, &m, root, names, nnames);
	check_exposures(ck, path, root, &m);
	/* SBX-2: the spawner resolves the roots the same way at load. */
	if ((rok = roots_resolve(&m, pc, &r, why, sizeof(why))) == -1) {
		if (!json_object_object_get_ex(root, "sandbox", &nv) &&
		    !json_object_object_get_ex(root, "transportConfig", &nv))
			nv = root;
		strncat(why, "; the agent would be disabled",
		    sizeof(why) - strlen(why) - 1);
		check_report_at(ck, path, nv, "root-refused", why);
	}
	rt = rok == 0 ? &r : NULL;
	/* SP-1, SP-12, SP-18: what runs, probes and actions would execute. */
	check_bin(ck, path, &m, rt, m.m_bin,
	    check_node(root, "transportConfig", "bin", -1),
	    "transportConfig.bin");
	if (m.m_nprobe_cmd > 0 &&
	    json_object_object_get_ex(root, "healthProbe", &nv))
		check_bin(ck, path, &m, rt, m.m_probe_cmd[0],
		    check_node(root, "healthProbe", "command", 0),
		    "healthProbe.command[0]");
	for (i = 0; i < m.m_nactions; i++)
		if (m.m_actions[i].a_ncommand > 0) {
			nv = check_node(root, "actions", NULL, (int)i);
			check_bin(ck, path, &m, rt, m.m_actions[i].a_command[0],
			    check_node(nv, "command", NULL, 0),
			    "actions.command[0]");
		}
	if (rok == 0)
		roots_free(&r);
	check_git(ck, path, &m, root);
	check_secrets(ck, path, &m, root);
	check_cli(ck, path, &m, root);
	check_hooks(ck, path, &m, root);
	check_home(ck, m.m_name);
	manifest_free(&m);
	json_object_put(root);
	return 1;
}

struct check_names {
	char **cn_names;
	size_t cn_n;
	const char *cn_dir;
	struct check *cn_ck;
};

static int
check_agent_known(const char *name, void *arg)
{
	const struct check_names *cn = arg;
	size_t i;

	for (i = 0; i < cn->cn_n; i++)
		if (strcmp(cn->cn_names[i], name) == 0)
			return 1;
	return 0;
}

static void
check_mission_problem(const char *file, unsigned long line, unsigned long col,
    const char *code, const char *msg, void *arg)
{
	const struct check_names *cn = arg;
	char path[PATH_MAX + MISSION_FILE_MAX];

	snprintf(path, sizeof(path), "%s/%s", cn->cn_dir, file);
	check_report(cn->cn_ck, path, line, col, code, msg);
}

/*
 * MI-2: outputs a mission's permissions do not cover; the spawner
 * refuses each run of it (permission-denied), so it is a problem now.
 */
static void
check_permissions(struct check_names *cn, const struct mission_loaded *ml)
{
	const struct mission *m = &ml->ml_m;
	int note = 0, event = 0;
	size_t i;

	if (mission_permitted(m) == 0)
		return;
	for (i = 0; i < m->mi_nouts; i++)
		if (m->mi_outs[i].u_type == MI_OUT_VAULT_NOTE)
			note |= !(m->mi_perms & MI_PERM_VAULT_WRITE);
		else
			event |= !(m->mi_perms & MI_PERM_EVENT_EMIT);
	check_mission_problem(ml->ml_file, ml->ml_pline, ml->ml_pcol,
	    "permission-denied",
	    note && event ? "permissions: a vault-note output needs "
			    "vault-write and an event output event-emit; "
			    "runs would be refused (permission-denied)"
	    : note	  ? "permissions: a vault-note output needs "
			    "vault-write; runs would be refused "
			    "(permission-denied)"
			  : "permissions: an event output needs event-emit; "
			    "runs would be refused (permission-denied)",
	    cn);
}

/* MI-1: the missions dir beside agents/; returns the missions loaded. */
static size_t
check_missions(
    struct check *ck, const char *agents_dir, char **names, size_t nnames)
{
	struct check_names cn = {names, nnames, NULL, ck};
	struct mission_loaded *ml;
	char dir[PATH_MAX], *slash;
	size_t n = 0, i;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", agents_dir);
	if ((slash = strrchr(dir, '/')) == NULL ||
	    (size_t)(slash - dir) + sizeof("/missions") > sizeof(dir))
		return 0;
	memcpy(slash, "/missions", sizeof("/missions"));
	if (stat(dir, &st) == -1 && errno == ENOENT)
		return 0;
	cn.cn_dir = dir;
	if ((ml = calloc(MISSIONS_MAX, sizeof(*ml))) == NULL) {
		check_report(ck, dir, 0, 0, "internal", "out of memory");
		return 0;
	}
	(void)missions_load_dir(dir, check_agent_known, check_mission_problem,
	    &cn, ml, MISSIONS_MAX, &n);
	for (i = 0; i < n; i++) {
		check_permissions(&cn, &ml[i]);
		mission_free(&ml[i].ml_m);
	}
	free(ml);
	return n;
}

/*
 * The protected set of the spawner: its config dir, audit dir, vault
 * and state dir.
 */
static int
check_protect(const struct cordon_config *cf, struct protect_ctx *pc,
    char *homebuf, size_t homesz, char (*buf)[PATH_MAX], char *cfgdir)
{
	const char *extra[4];
	char *slash;

	snprintf(cfgdir, PATH_MAX, "%s", cf->cf_agents);
	if ((slash = strrchr(cfgdir, '/')) != NULL && slash != cfgdir)
		*slash = '\0';
	extra[0] = cfgdir;
	extra[1] = cf->cf_audit;
	extra[2] = cf->cf_vault;
	extra[3] = cf->cf_state; /* sched's state, jobs, the agents' homes */
	return roots_protect_set(pc, homebuf, homesz, extra, 4, buf);
}

/* Every NAME.yaml of agents/; returns the number that loaded. */
static size_t
check_agents(struct check *ck, const struct cordon_config *cf,
    const struct protect_ctx *pc, char **names, size_t *nnames)
{
	char **list, path[PATH_MAX];
	size_t nlist = 0, nfiles = 0, ok = 0, i;

	if ((list = dir_names(cf->cf_agents, check_is_yaml, &nlist)) == NULL) {
		if (errno == E2BIG)
			check_report(ck, cf->cf_agents, 0, 0, "too-many",
			    "too many files");
		else if (errno != ENOENT)
			check_report(ck, cf->cf_agents, 0, 0, "unreadable",
			    "cannot be read");
		return 0;
	}
	for (i = 0; i < nlist; i++) {
		/* In name order, the first CHECK_MAX_FILES. */
		if (nfiles == CHECK_MAX_FILES) {
			check_report(ck, cf->cf_agents, 0, 0, "too-many",
			    "too many manifests");
			break;
		}
		if (snprintf(path, sizeof(path), "%s/%s", cf->cf_agents,
			list[i]) >= (int)sizeof(path)) {
			check_report(
			    ck, list[i], 0, 0, "invalid", "name too long");
			continue;
		}
		ok += (size_t)check_file(ck, path, pc, names, nnames);
		nfiles++;
	}
	dir_names_free(list, nlist);
	return ok;
}

/* The --json document and the problem count; the exit code. */
static int
check_finish(struct check *ck, size_t nagents, size_t nmissions)
{
	struct json_object *doc;

	if (ck->ck_json) {
		doc = json_object_new_object();
		json_object_object_add(
		    doc, "ok", json_object_new_boolean(ck->ck_n == 0));
		json_object_object_add(
		    doc, "agents", json_object_new_int64((int64_t)nagents));
		json_object_object_add(
		    doc, "missions", json_object_new_int64((int64_t)nmissions));
		json_object_object_add(doc, "problems", ck->ck_problems);
		json_object_object_add(doc, "warnings", ck->ck_warnings);
		json_object_object_add(doc, "homes", ck->ck_homes);
		printf("%s\n", json_object_to_json_string_ext(
				   doc, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(doc);
	}
	if (ck->ck_n > 0) {
		fprintf(stderr, "cordon: check: %zu problem%s\n", ck->ck_n,
		    ck->ck_n == 1 ? "" : "s");
		return 1;
	}
	return 0;
}

/* The report's arrays, and the home itself (SU-5). */
static void
check_begin(struct check *ck, const struct cordon_config *cf)
{
	if (ck->ck_json) {
		ck->ck_problems = json_object_new_array();
		ck->ck_warnings = json_object_new_array();
		ck->ck_homes = json_object_new_object();
	}
	/* It named the path; the rest is checked all the same. */
	if (home_safe(cf, (uid_t)-1) == -1)
		check_report(ck, cf->cf_config, 0, 0, "home-unsafe",
		    "another user can change the home; cordon run would "
		    "refuse it");
	ck->ck_state = cf->cf_state;
}

int
cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"home", required_argument, NULL, 'H'},
	    {"json", no_argument, NULL, 'j'}, {NULL, 0, NULL, 0}};
	static struct check ck;
	struct cordon_config cf;
	const char *home = NULL;
	char *names[CHECK_MAX_FILES];
	char homebuf[PATH_MAX], cfgdir[PATH_MAX], protect_buf[4][PATH_MAX];
	struct protect_ctx pc;
	size_t nagents, nmissions, nnames = 0, i, before;
	int ch;

	memset(&ck, 0, sizeof(ck));
	optind = 1;
	while ((ch = cli_getopt("check", argc, argv, "", opts)) != -1) {
		if (ch == 'H')
			home = optarg;
		else if (ch == 'j')
			ck.ck_json = 1;
		else
			return 2;
	}
	if (optind != argc)
		return cli_extra_arg("check", argv[optind]);
	memset(&cf, 0, sizeof(cf));
	if (home_resolve(&cf, home) == -1) {
		fprintf(stderr, "cordon: check: cannot resolve the home\n");
		return 2;
	}
	check_begin(&ck, &cf);
	/* The spawner's protected set needs the config (vault, audit). */
	if (config_load(&cf) == -1) {
		/* It printed FILE:LINE:COL on stderr. */
		check_report(&ck, cf.cf_config, 0, 0, "config-invalid",
		    "cordon.yaml is invalid; cordon run would not start");
		nagents = nmissions = 0;
		check_flush(&ck);
		goto out;
	}
	if (check_protect(&cf, &pc, homebuf, sizeof(homebuf), protect_buf,
		cfgdir) == -1) {
		fprintf(stderr, "cordon: check: no home directory\n");
		json_object_put(ck.ck_problems);
		json_object_put(ck.ck_warnings);
		json_object_put(ck.ck_homes);
		return 2;
	}
	snprintf(
	    ck.ck_secrets, sizeof(ck.ck_secrets), "%s/secrets.yaml", cfgdir);
	ck.ck_pc = &pc;
	nagents = check_agents(&ck, &cf, &pc, names, &nnames);
	check_flush(&ck);
	if (ck.ck_n == 0 && !ck.ck_json)
		printf("ok %zu agents\n", nagents);
	if (ck.ck_argv > 0)
		fprintf(stderr,
		    "cordon: check: note: %zu agent%s take the prompt by argv: "
		    "while a run lives, every user of this host can read it "
		    "in /proc/PID/cmdline (promptVia: stdin keeps it out)\n",
		    ck.ck_argv, ck.ck_argv == 1 ? "" : "s");
	before = ck.ck_n;
	nmissions = check_missions(&ck, cf.cf_agents, names, nnames);
	check_flush(&ck);
	if (ck.ck_n == before && nmissions > 0 && !ck.ck_json)
		printf("ok %zu missions\n", nmissions);
	for (i = 0; i < nnames; i++)
		free(names[i]);
out:
	return check_finish(&ck, nagents, nmissions);
}
