/*
 * SBX-6, SBX-7: the command gate's verdict.  A shell line is split by
 * policy/shlex.c, each simple command checked (names, assignments,
 * paths, the rules in gate_rules.c and gate_net.c, the destructive shapes
 * in gate_shape.c) and the verdicts combined.  Pure: no I/O (paths are
 * resolved by the caller's callback), no globals but tables.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "gate_impl.h"
#include "unicode.h"
#include "util.h"

_Static_assert(GATE_WORDS_MAX <= SHLEX_WORDS_MAX, "argv must fit a sh_cmd");
_Static_assert(GATE_CMDS_MAX == SHLEX_CMDS_MAX, "one command limit");

void
gate_res_set(struct gres *r, enum gate_verdict v, const char *rule)
{
	if (r->r_v == GATE_DENY || (r->r_v == GATE_ASK && v != GATE_DENY))
		return;
	if (v == GATE_ALLOW)
		return;
	r->r_v = v;
	r->r_rule = rule;
}

/*
 * The verb a call's record names (AU-4): a command name the policy knows
 * (its tables, the manifest's lists), else "?".  Any other first word is
 * the agent's text, which may carry data (a key it holds, as a name).
 */
static void
res_verb(struct gres *r, const struct gate_policy *gp, const char *name)
{
	int known =
	    name != NULL && gate_name_ok(name) &&
	    (schema_in_list(g_allow, name) || schema_in_list(g_refused, name) ||
		schema_in_list(g_builtins, name) ||
		schema_in_list(g_opaque, name) ||
		schema_in_list(g_wrappers, name) ||
		schema_in_list(g_shells, name) ||
		gate_in_vec(gp->gp_allow, gp->gp_nallow, name) ||
		gate_in_vec(gp->gp_deny, gp->gp_ndeny, name) ||
		gate_in_vec(gp->gp_ask, gp->gp_nask, name));

	snprintf(r->r_verb, sizeof(r->r_verb), "%s", known ? name : "?");
}

/* The wrapped command's index: past the wrapper at k and its options,
 * assignments and durations. */
size_t
gate_wrapper_skip(const struct sh_cmd *c, size_t k)
{
	for (k++; k < c->c_nw; k++) {
		const char *s = c->c_w[k].w_s;

		if (s[0] != '-' && strchr(s, '=') == NULL &&
		    strspn(s, "0123456789.smhd") != strlen(s))
			break;
	}
	return k;
}

/* The first word after assignments, and after wrappers when unwrap. */
size_t
gate_cmd_start(const struct sh_cmd *c, int unwrap)
{
	size_t k = 0, lvl;

	while (k < c->c_nw && shlex_is_assignment(&c->c_w[k]))
		k++;
	for (lvl = 0; unwrap && lvl < 4 && k < c->c_nw &&
		      schema_in_list(g_wrappers, gate_base_name(c->c_w[k].w_s));
	     lvl++)
		k = gate_wrapper_skip(c, k);
	return k;
}

static const char *
cmd_name(const struct sh_cmd *c, int unwrap)
{
	size_t k = gate_cmd_start(c, unwrap);

	return k < c->c_nw ? gate_base_name(c->c_w[k].w_s) : NULL;
}

/* Every argument that names a file, and every redirection target. */
/* cp -r/-R/-a, grep -r/-R, ls -R, chmod -R, or --recursive/--archive. */
static int
recursive(const struct sh_cmd *c, size_t k, const char *name)
{
	const char *s, *letters;
	size_t j;

	if (strcmp(name, "cp") == 0)
		letters = "rRa";
	else if (strcmp(name, "grep") == 0)
		letters = "rR";
	else if (strcmp(name, "ls") == 0 || strcmp(name, "chmod") == 0)
		letters = "R";
	else
		return 0;
	for (j = k + 1; j < c->c_nw; j++) {
		s = c->c_w[j].w_s;
		if (strcmp(s, "--") == 0)
			break;
		if (strcmp(s, "--recursive") == 0 ||
		    strcmp(s, "--dereference-recursive") == 0 ||
		    (strcmp(name, "cp") == 0 && strcmp(s, "--archive") == 0))
			return 1;
		if (s[0] == '-' && s[1] != '-' && s[1] != '\0' &&
		    strpbrk(s + 1, letters) != NULL)
			return 1;
	}
	return 0;
}

static int
check_args(struct gctx *x, const struct sh_cmd *c, size_t k, const char *name,
    struct gres *r)
{
	const struct sh_word *w = c->c_w;
	const char *s, *eq;
	size_t j;
	int file = schema_in_list(g_filecmds, name), dd = 0;
	int grep_pat = strcmp(name, "grep") == 0;
	int tree = recursive(c, k, name);

	for (j = 0; j < c->c_nr; j++) {
		const struct sh_redir *rd = &c->c_r[j];

		if ((rd->r_op == SH_R_DUPOUT || rd->r_op == SH_R_DUPIN) &&
		    (all_digits(rd->r_s) || strcmp(rd->r_s, "-") == 0))
			continue;
		if (rd->r_f & SH_GLOB) {
			gate_res_set(r, GATE_DENY, "unparseable");
			return -1;
		}
		if (gate_check_path(x, rd->r_s, rd->r_f, r) == -1)
			return -1;
	}
	for (j = 0; j < k; j++) { /* assignment values */
		eq = strchr(w[j].w_s, '=') + 1;
		if (gate_looks_path(eq) &&
		    gate_check_path(x, eq, w[j].w_f | SH_TILDE, r) == -1)
			return -1;
	}
	if (strchr(w[k].w_s, '/') != NULL &&
	    gate_check_path(x, w[k].w_s, w[k].w_f, r) == -1)
		return -1;
	if (strcmp(name, "echo") == 0)
		return 0;
	for (j = k + 1; j < c->c_nw; j++) {
		s = w[j].w_s;
		if (!dd && strcmp(s, "--") == 0) {
			dd = 1;
			continue;
		}
		if (!dd && s[0] == '-' && s[1] != '\0') {
			if ((eq = strchr(s, '=')) != NULL &&
			    gate_looks_path(eq + 1) &&
			    gate_check_path(
				x, eq + 1, w[j].w_f | SH_TILDE, r) == -1)
				return -1;
			if (grep_pat && (strcmp(s, "-e") == 0 ||
					    strcmp(s, "--regexp") == 0)) {
				grep_pat = 0;
				j++; /* the pattern */
			} else if (grep_pat &&
				   (strcmp(s, "-f") == 0 ||
				       strcmp(s, "--file") == 0 ||
				       gate_has_prefix(s, "--regexp=") ||
				       gate_has_prefix(s, "--file=")))
				grep_pat = 0;
			continue;
		}
		if (grep_pat) {
			grep_pat = 0;
			continue;
		}
		if (s[0] == '@' && gate_looks_path(s + 1) &&
		    gate_check_path(x, s + 1, w[j].w_f, r) == -1)
			return -1;
		if ((file || gate_looks_path(s)) &&
		    (tree ? gate_check_tree(x, s, w[j].w_f, r)
			  : gate_check_path(x, s, w[j].w_f, r)) == -1)
			return -1;
	}
	return 0;
}

static int
env_name_refused(const char *w)
{
	char name[130];

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(w, "="), w);
	return env_runtime_control(name) || schema_in_list(g_env_exact, name) ||
	       gate_prefix_list(g_env_prefix, name);
}

static int
allowed_name(const struct gate_policy *gp, const char *name)
{
	if (gate_in_vec(gp->gp_deny, gp->gp_ndeny, name))
		return 0;
	return schema_in_list(g_allow, name) ||
	       schema_in_list(g_builtins, name) ||
	       gate_in_vec(gp->gp_allow, gp->gp_nallow, name);
}

/* w is /usr/bin/NAME, /bin/NAME or /usr/local/bin/NAME. */
static int
system_bin(const char *w)
{
	static const char *const dirs[] = {
	    "/usr/bin/", "/bin/", "/usr/local/bin/"};
	size_t i, l;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		l = strlen(dirs[i]);
		if (strncmp(w, dirs[i], l) == 0 && w[l] != '\0' &&
		    strchr(w + l, '/') == NULL)
			return 1;
	}
	return 0;
}

/* The deny rule for a command whose words from k on cannot be judged
 * (unparseable words or redirections, a refused assignment before k, no
 * or a globbed command word), or NULL. */
static const char *
cmd_refusal(const struct sh_cmd *c, size_t k)
{
	size_t j;

	if (c->c_bad)
		return "unparseable";
	for (j = 0; j < c->c_nw; j++)
		if (c->c_w[j].w_f & SH_BAD)
			return "unparseable";
	/* a redirection target too: > `cmd`, > $VAR, > ~user/x */
	for (j = 0; j < c->c_nr; j++)
		if (c->c_r[j].r_f & SH_BAD)
			return "unparseable";
	for (j = 0; j < k; j++)
		if (env_name_refused(c->c_w[j].w_s))
			return "env-assignment";
	if (k >= c->c_nw || (c->c_w[k].w_f & SH_GLOB))
		return "unparseable";
	return NULL;
}

/* The deny rule for command word w0, named name, or NULL. */
static const char *
name_refusal(struct gctx *x, const char *w0, const char *name)
{
	if (schema_in_list(g_opaque, name))
		return "unparseable";
	if (schema_in_list(g_refused, name))
		return "always-refused";
	if (strcmp(name, "init.sh") == 0 && strcmp(w0, "./init.sh") != 0)
		return "init-sh-form";
	if (!gate_name_ok(name) || !allowed_name(x->gp, name) ||
	    (strchr(w0, '/') != NULL && schema_in_list(g_builtins, name)))
		return "not-allowlisted";
	/*
	 * An allowlisted name is the system's program, not any file of
	 * that name: a path is taken only into the system's bin folders
	 * (/tmp/x/ls, ./cat are other programs).
	 */
	if (strchr(w0, '/') != NULL && strcmp(w0, "./init.sh") != 0 &&
	    !system_bin(w0))
		return "command-path";
	return NULL;
}

static void
eval_cmd(struct gctx *x, struct sh_cmd *c, int depth, struct gres *r)
{
	const struct sh_word *w;
	const char *name, *w0, *why;
	size_t k, n;

	memset(r, 0, sizeof(*r));
	r->r_v = GATE_ALLOW;
	r->r_rule = "allowlist";
	k = gate_cmd_start(c, 0);
	res_verb(r, x->gp, cmd_name(c, 1));
	if (gate_shape_cmd(x, c)) {
		gate_res_set(r, GATE_DENY, "destructive");
		r->r_destructive = 1;
		return;
	}
	if ((why = cmd_refusal(c, k)) != NULL) {
		gate_res_set(r, GATE_DENY, why);
		return;
	}
	w = c->c_w + k;
	n = c->c_nw - k;
	w0 = w[0].w_s;
	name = gate_base_name(w0);
	res_verb(r, x->gp, name);
	if ((why = name_refusal(x, w0, name)) != NULL) {
		gate_res_set(r, GATE_DENY, why);
		return;
	}
	if (check_args(x, c, k, name, r) == -1)
		return;
	if (strcmp(name, "chmod") == 0 && gate_rule_chmod(w, n, r) == -1)
		return;
	if (strcmp(name, "pkill") == 0 && gate_rule_pkill(w, n, r) == -1)
		return;
	if (strcmp(name, "kill") == 0 && gate_rule_kill(w, n, r) == -1)
		return;
	if (strcmp(name, "git") == 0 && gate_rule_git(x, w, n, r) == -1)
		return;
	if ((strcmp(name, "curl") == 0 || strcmp(name, "wget") == 0) &&
	    gate_rule_net(x, w, n, name[0] == 'w', r) == -1)
		return;
	if (strcmp(name, "docker") == 0 && gate_rule_docker(x, w, n, r) == -1)
		return;
	if ((strcmp(name, "sh") == 0 || strcmp(name, "bash") == 0) &&
	    gate_rule_shell(x, w, n, depth, r) == -1)
		return;
	if (strcmp(name, "rm") == 0 && gate_rule_rm(x, w, n, r) == -1)
		return;
	if (strcmp(name, "cd") == 0 && gate_rule_cd(x, w, n, r) == -1)
		return;
	if (gate_in_vec(x->gp->gp_ask, x->gp->gp_nask, name))
		gate_res_set(r, GATE_ASK, "ask-manifest");
}

static int
line_ok(const char *s, size_t n)
{
	size_t i;

	if (n > GATE_LINE_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t' &&
			s[i] != '\n') ||
		    s[i] == 0x7f)
			return 0;
	return utf8_valid(s, n);
}

static void
res_unparseable(struct gres *r)
{
	memset(r, 0, sizeof(*r));
	r->r_v = GATE_DENY;
	r->r_rule = "unparseable";
	snprintf(r->r_verb, sizeof(r->r_verb), "?");
}

/* Pick the line's verdict: destructive, first deny, first ask, allow. */
static void
pick(const struct gres *rs, size_t n, struct gres *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rs[i].r_destructive)
			goto found;
	for (i = 0; i < n; i++)
		if (rs[i].r_v == GATE_DENY)
			goto found;
	for (i = 0; i < n; i++)
		if (rs[i].r_v == GATE_ASK)
			goto found;
	i = 0;
found:
	*out = rs[i];
}

static void
eval_cmds(
    struct gctx *x, struct sh_cmd *cmds, size_t n, int depth, struct gres *out)
{
	struct gres *rs;
	const char *nm;
	size_t i, j;

	if ((rs = calloc(n, sizeof(*rs))) == NULL) {
		x->oom = 1;
		res_unparseable(out);
		return;
	}
	for (i = 0; i < n; i++) {
		eval_cmd(x, &cmds[i], depth, &rs[i]);
		/* curl ... | sh: a download piped into a shell */
		nm = cmd_name(&cmds[i], 1);
		if (!cmds[i].c_pipe_in || nm == NULL ||
		    !schema_in_list(g_shells, nm))
			continue;
		for (j = i; j > 0 && cmds[j].c_pipe_in; j--) {
			const char *up = cmd_name(&cmds[j - 1], 1);

			if (up != NULL && (strcmp(up, "curl") == 0 ||
					      strcmp(up, "wget") == 0)) {
				rs[i].r_v = GATE_DENY;
				rs[i].r_rule = "destructive";
				rs[i].r_destructive = 1;
				res_verb(&rs[i], x->gp, nm);
				break;
			}
		}
	}
	pick(rs, n, out);
	free(rs);
}

void
gate_line(struct gctx *x, const char *s, size_t n, int depth, struct gres *r)
{
	struct sh_line sl;

	res_unparseable(r);
	if (!line_ok(s, n))
		return;
	if (gate_forkbomb(s, n)) {
		r->r_rule = "destructive";
		r->r_destructive = 1;
		return;
	}
	switch (shlex_split(s, n, &sl)) {
	case 0:
		eval_cmds(x, sl.sl_cmds, sl.sl_ncmd, depth, r);
		shlex_free(&sl);
		break;
	case -2:
		x->oom = 1;
		break;
	default:
		break;
	}
}

/* A plain argv: one command, no shell in between. */
static void
gate_argv(struct gctx *x, char *const *argv, size_t argc, struct gres *r)
{
	struct sh_cmd *c;
	size_t i, tot = 0;

	res_unparseable(r);
	if (argc == 0 || argc > GATE_WORDS_MAX || argv == NULL)
		return;
	for (i = 0; i < argc; i++) {
		if (argv[i] == NULL)
			return;
		tot += strlen(argv[i]) + 1;
		if (tot > GATE_LINE_MAX ||
		    !utf8_valid(argv[i], strlen(argv[i])))
			return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		x->oom = 1;
		return;
	}
	for (i = 0; i < argc; i++) {
		c->c_w[i].w_s = argv[i];
		c->c_w[i].w_q = 0; /* literal: never an assignment */
	}
	c->c_nw = argc;
	eval_cmds(x, c, 1, 0, r);
	free(c);
}

static const struct gate_policy gate_defaults = {
    .gp_ask_timeout_sec = GATE_ASK_TIMEOUT};

/* A refused code point in the line, an argument or the cwd. */
static int
gate_hidden(const struct gate_req *req)
{
	size_t i, n;

	if (uni_gate_refused(req->gr_cwd, strlen(req->gr_cwd)))
		return 1;
	if (req->gr_line != NULL) {
		n = req->gr_linelen ? req->gr_linelen : strlen(req->gr_line);
		/* A NUL is the parser's to refuse (unparseable). */
		return memchr(req->gr_line, '\0', n) == NULL &&
		       uni_gate_refused(req->gr_line, n);
	}
	for (i = 0; i < req->gr_argc; i++)
		if (req->gr_argv[i] != NULL &&
		    uni_gate_refused(req->gr_argv[i], strlen(req->gr_argv[i])))
			return 1;
	return 0;
}

int
gate_check(const struct gate_policy *gp, const struct gate_req *req,
    const struct protect_ctx *pc, gate_resolve_fn resolve, void *arg,
    struct gate_result *res)
{
	struct gctx *x;
	struct gres r;
	int rc = 0;

	if (res == NULL)
		return -1;
	memset(res, 0, sizeof(*res));
	res->g_verdict = GATE_DENY;
	snprintf(res->g_verb, sizeof(res->g_verb), "?");
	snprintf(res->g_rule, sizeof(res->g_rule), "unparseable");
	if (req == NULL || pc == NULL || resolve == NULL ||
	    req->gr_workspace == NULL || req->gr_workspace[0] != '/' ||
	    req->gr_cwd == NULL || req->gr_cwd[0] != '/')
		return -1;
	/* SBX-7: what the operator would see must be what runs, and no
	 * name check may be fooled by a character nobody sees. */
	if (gate_hidden(req)) {
		snprintf(
		    res->g_rule, sizeof(res->g_rule), "invisible-characters");
		return 0;
	}
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return -1;
	x->gp = gp != NULL ? gp : &gate_defaults;
	x->pc = pc;
	x->resolve = resolve;
	x->arg = arg;
	x->ws = req->gr_workspace;
	x->ncwd = 1;
	if (resolve(req->gr_cwd, req->gr_cwd, x->cwd[0], G_PATH_MAX, arg) ==
		-1 ||
	    memchr(x->cwd[0], '\0', G_PATH_MAX) == NULL ||
	    !gate_path_within(x->cwd[0], x->ws)) {
		snprintf(
		    res->g_rule, sizeof(res->g_rule), "cwd-outside-workspace");
		free(x);
		return 0;
	}
	if (req->gr_line != NULL)
		gate_line(x, req->gr_line,
		    req->gr_linelen ? req->gr_linelen : strlen(req->gr_line), 0,
		    &r);
	else
		gate_argv(x, req->gr_argv, req->gr_argc, &r);
	if (x->oom) {
		res_unparseable(&r);
		rc = -1;
	}
	free(x);
	res->g_verdict = r.r_v;
	snprintf(res->g_verb, sizeof(res->g_verb), "%s", r.r_verb);
	snprintf(res->g_rule, sizeof(res->g_rule), "%s", r.r_rule);
	return rc;
}

const char *
gate_verdict_name(enum gate_verdict v)
{
	switch (v) {
	case GATE_ALLOW:
		return "allow";
	case GATE_ASK:
		return "ask";
	default:
		return "deny";
	}
}
