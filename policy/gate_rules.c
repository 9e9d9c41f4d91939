/*
 * The command gate's extra rules per command (DATA.md): chmod only +x,
 * pkill only dev tools, kill never a group, git without options that run
 * programs, docker without the host, sh/bash scripts and -c text, cd
 * inside the workspace, rm -r asking.  curl/wget are in gate_net.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gate_impl.h"
#include "util.h"

int
gate_rule_chmod(const struct sh_word *w, size_t n, struct gres *r)
{
	const char *m;
	size_t j;

	for (j = 1; j < n; j++)
		if (w[j].w_s[0] == '-') {
			gate_res_set(r, GATE_DENY, "chmod-mode");
			return -1;
		}
	if (n < 2) {
		gate_res_set(r, GATE_DENY, "chmod-mode");
		return -1;
	}
	m = w[1].w_s;
	m += strspn(m, "ugoa");
	if (strcmp(m, "+x") != 0) {
		gate_res_set(r, GATE_DENY, "chmod-mode");
		return -1;
	}
	return 0;
}

int
gate_rule_pkill(const struct sh_word *w, size_t n, struct gres *r)
{
	const char *pat = NULL, *s;
	char first[65];
	size_t j;
	int full = 0;

	for (j = 1; j < n; j++) {
		s = w[j].w_s;
		if (s[0] == '-') {
			if (!schema_in_list(g_pkill_opts, s))
				goto bad;
			if (strcmp(s, "-f") == 0)
				full = 1;
		} else if (pat != NULL)
			goto bad;
		else
			pat = s;
	}
	if (pat == NULL)
		goto bad;
	if (!full) {
		if (!schema_in_list(g_pkill_names, pat))
			goto bad;
		return 0;
	}
	/* -f: the command line's first word is a dev tool; no regex */
	if (strspn(pat, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			"0123456789 ._/-") != strlen(pat))
		goto bad;
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(pat, " "), pat);
	if (schema_in_list(g_pkill_names, first))
		return 0;
bad:
	gate_res_set(r, GATE_DENY, "pkill-target");
	return -1;
}

/* kill: no process groups, no 0 / -1 / 1. */
int
gate_rule_kill(const struct sh_word *w, size_t n, struct gres *r)
{
	size_t j = 1;
	const char *s;
	int dd = 0;

	if (j < n && w[j].w_s[0] == '-' && strcmp(w[j].w_s, "--") != 0) {
		if (strcmp(w[j].w_s, "-s") == 0 || strcmp(w[j].w_s, "-n") == 0)
			j++;
		j++;
	}
	for (; j < n; j++) {
		s = w[j].w_s;
		if (!dd && strcmp(s, "--") == 0) {
			dd = 1;
			continue;
		}
		/* "00" is 0 too; pid_max is at most 2^22 (7 digits) */
		if (s[0] == '-' || s[0] == '0' || strcmp(s, "1") == 0 ||
		    (all_digits(s) && strlen(s) > 7) ||
		    (!all_digits(s) && s[0] != '%')) {
			gate_res_set(r, GATE_DENY, "kill-target");
			return -1;
		}
	}
	return 0;
}

static int
git_dir_ok(struct gctx *x, const struct sh_word *w, size_t *j, size_t n,
    const char *opt, struct gres *r)
{
	const char *s = w[*j].w_s, *v = NULL;
	unsigned f = w[*j].w_f;
	size_t l = strlen(opt);

	if (strncmp(s, opt, l) != 0)
		return 0;
	if (s[l] == '=')
		v = s + l + 1;
	else if (s[l] == '\0' && *j + 1 < n) {
		(*j)++;
		v = w[*j].w_s;
		f = w[*j].w_f;
	} else if (s[l] != '\0')
		return 0;
	if (v == NULL || *v == '\0' || !gate_inside_ws(x, v, f | SH_TILDE)) {
		gate_res_set(r, GATE_DENY, "git-option");
		return -1;
	}
	return 1;
}

int
gate_rule_git(struct gctx *x, const struct sh_word *w, size_t n, struct gres *r)
{
	const char *sub = NULL, *s;
	size_t j;
	int rc, cfgkey = 0;

	for (j = 1; j < n; j++) {
		s = w[j].w_s;
		if (strcmp(s, "-c") == 0 || gate_prefix_list(g_git_badopt, s) ||
		    gate_caseprefix_list(g_git_badkey, s))
			goto bad;
		if ((rc = git_dir_ok(x, w, &j, n, "--git-dir", r)) != 0 ||
		    (rc = git_dir_ok(x, w, &j, n, "--work-tree", r)) != 0) {
			if (rc == -1)
				return -1;
			continue;
		}
		if (sub == NULL && strcmp(s, "-C") == 0) {
			if ((rc = git_dir_ok(x, w, &j, n, "-C", r)) == -1)
				return -1;
			continue;
		}
		if (sub == NULL && s[0] == '-') {
			if (schema_in_list(g_git_globarg, s))
				j++; /* its value */
			else if (!schema_in_list(g_git_globflag, s) &&
				 !gate_has_prefix(s, "--namespace="))
				goto bad;
			continue;
		}
		if (sub == NULL) {
			sub = s;
			if (schema_in_list(g_git_badsub, sub))
				goto bad;
			continue;
		}
		/* git config KEY VALUE: a key from the short list */
		if (strcmp(sub, "config") == 0 && s[0] != '-' && !cfgkey) {
			cfgkey = 1;
			if (!gate_caseprefix_list(g_git_config_ok, s))
				goto bad;
			continue;
		}
		/* rebase -x, clone -u: run a program */
		if (((strcmp(sub, "rebase") == 0 && s[0] == '-' &&
			s[1] != '-' && strchr(s, 'x') != NULL)) ||
		    (strcmp(sub, "clone") == 0 && s[0] == '-' && s[1] != '-' &&
			strchr(s, 'u') != NULL))
			goto bad;
	}
	if (sub != NULL && strcmp(sub, "push") == 0)
		gate_res_set(r, GATE_ASK, "ask-git-push");
	return 0;
bad:
	gate_res_set(r, GATE_DENY, "git-option");
	return -1;
}

/* A bind source: inside the workspace (a named volume has no / . ~). */
static int
docker_src(struct gctx *x, const char *src, size_t len, struct gres *r)
{
	char buf[G_PATH_MAX];

	snprintf(buf, sizeof(buf), "%.*s", (int)len, src);
	if (!gate_looks_path(buf))
		return 0;
	if (gate_check_path(x, buf, SH_TILDE, r) == -1)
		return -1;
	if (!gate_inside_ws(x, buf, SH_TILDE)) {
		gate_res_set(r, GATE_DENY, "docker-option");
		return -1;
	}
	return 0;
}

/* --mount: comma-separated key=value fields, keys in any case. */
static int
docker_mount(struct gctx *x, const char *v, struct gres *r)
{
	const char *f, *e;
	size_t l;

	if (strchr(v, '"') != NULL) { /* CSV quoting: not analysed */
		gate_res_set(r, GATE_DENY, "docker-option");
		return -1;
	}
	for (f = v;; f = e + 1) {
		e = f + strcspn(f, ",");
		l = strcspn(f, "=,");
		if (f[l] == '=' &&
		    ((l == 6 && strncasecmp(f, "source", 6) == 0) ||
			(l == 3 && strncasecmp(f, "src", 3) == 0)) &&
		    docker_src(x, f + l + 1, (size_t)(e - f) - l - 1, r) == -1)
			return -1;
		if (*e == '\0')
			return 0;
	}
}

/*
 * docker: no host namespaces or devices; bind sources inside; no other
 * daemon (-H, a context); no subcommand that hands the host out; a build
 * context inside the workspace (it is sent to the daemon whole).
 */
int
gate_rule_docker(
    struct gctx *x, const struct sh_word *w, size_t n, struct gres *r)
{
	const char *s, *v, *p, *sub = NULL;
	char buf[G_PATH_MAX];
	size_t j, l;

	for (j = 1; j < n; j++) {
		s = w[j].w_s;
		l = strcspn(s, "=");
		snprintf(buf, sizeof(buf), "%.*s", (int)l, s);
		if (schema_in_list(g_docker_bad, buf) ||
		    (s[0] == '-' && s[1] == 'H'))
			goto bad;
		if (s[0] != '-') {
			/* any word: a global option's value may come first */
			if (schema_in_list(g_docker_badsub, s))
				goto bad;
			if (sub == NULL)
				sub = s;
			else if ((strcmp(sub, "build") == 0 ||
				     strcmp(sub, "buildx") == 0) &&
				 (gate_looks_path(s) || s[0] == '~') &&
				 docker_src(x, s, strlen(s), r) == -1)
				return -1;
			continue;
		}
		if (strcmp(buf, "--network") == 0 ||
		    strcmp(buf, "--net") == 0) {
			/* --network=host and --network host */
			v = s[l] == '=' ? s + l + 1
			    : j + 1 < n ? w[j + 1].w_s
					: "";
			if (strcmp(v, "host") == 0)
				goto bad;
			continue;
		}
		v = NULL;
		if (strcmp(buf, "-v") == 0 || strcmp(buf, "--volume") == 0 ||
		    strcmp(buf, "--mount") == 0) {
			if (s[l] == '=')
				v = s + l + 1;
			else if (j + 1 < n)
				v = w[++j].w_s;
		} else if (s[0] == '-' && s[1] != '-' &&
			   (p = strchr(s + 1, 'v')) != NULL) {
			/* -v/x:/y, -itv /x:/y: checked, the next word not
			 * consumed (it may be another option's) */
			v = p[1] != '\0' ? p + 1
			    : j + 1 < n	 ? w[j + 1].w_s
					 : NULL;
		}
		if (v == NULL)
			continue;
		if (strcmp(buf, "--mount") == 0) {
			if (docker_mount(x, v, r) == -1)
				return -1;
		} else if (docker_src(x, v, strcspn(v, ":,"), r) == -1)
			return -1;
	}
	return 0;
bad:
	gate_res_set(r, GATE_DENY, "docker-option");
	return -1;
}

int
gate_rule_shell(struct gctx *x, const struct sh_word *w, size_t n, int depth,
    struct gres *r)
{
	struct gctx *in;
	struct gres ir;
	const char *s;
	size_t j;
	int cflag = 0;

	for (j = 1; j < n; j++) {
		s = w[j].w_s;
		if (strcmp(s, "--") == 0) {
			j++;
			break;
		}
		if (s[0] != '-' && s[0] != '+')
			break;
		if (s[1] == '-') {
			if (strcmp(s, "--norc") != 0 &&
			    strcmp(s, "--noprofile") != 0 &&
			    strcmp(s, "--posix") != 0 &&
			    strcmp(s, "--login") != 0)
				goto bad;
			continue;
		}
		if (s[1] == '\0' || strspn(s + 1, "ceuxvln") != strlen(s + 1))
			goto bad;
		if (strchr(s + 1, 'c') != NULL)
			cflag = 1;
	}
	if (j >= n)
		goto bad; /* commands from stdin */
	if (!cflag) {
		if (gate_check_path(x, w[j].w_s, w[j].w_f, r) == -1)
			return -1;
		if (!gate_inside_ws(x, w[j].w_s, w[j].w_f)) {
			gate_res_set(r, GATE_DENY, "script-outside-workspace");
			return -1;
		}
		return 0;
	}
	if (depth >= G_DEPTH_MAX)
		goto bad;
	if ((in = malloc(sizeof(*in))) == NULL) {
		x->oom = 1;
		goto bad;
	}
	memcpy(in, x, sizeof(*in));
	gate_line(in, w[j].w_s, strlen(w[j].w_s), depth + 1, &ir);
	x->oom |= in->oom;
	free(in);
	if (ir.r_v != GATE_ALLOW) {
		gate_res_set(r, ir.r_v, ir.r_rule);
		if (r->r_v == ir.r_v) {
			memcpy(r->r_verb, ir.r_verb, sizeof(r->r_verb));
			r->r_destructive = ir.r_destructive;
		}
	}
	return r->r_v == GATE_DENY ? -1 : 0;
bad:
	gate_res_set(r, GATE_DENY, "unparseable");
	return -1;
}

int
gate_rule_cd(struct gctx *x, const struct sh_word *w, size_t n, struct gres *r)
{
	char q[G_PATH_MAX], out[G_PATH_MAX];
	size_t j = 1, i, k, nnew = 0;
	char(*nw)[G_PATH_MAX];

	while (j < n &&
	       (strcmp(w[j].w_s, "-P") == 0 || strcmp(w[j].w_s, "-L") == 0))
		j++;
	if (j < n && strcmp(w[j].w_s, "--") == 0)
		j++;
	if (j + 1 < n ||
	    (j < n && (strcmp(w[j].w_s, "-") == 0 || (w[j].w_f & SH_GLOB) ||
			  w[j].w_s[0] == '-'))) {
		gate_res_set(r, GATE_DENY, "unparseable");
		return -1;
	}
	if (j >= n || w[j].w_s[0] == '\0') {
		gate_res_set(r, GATE_DENY, "cwd-outside-workspace");
		return -1;
	}
	if (gate_query(w[j].w_s, w[j].w_f, q, sizeof(q)) == -1) {
		gate_res_set(r, GATE_DENY, "unparseable");
		return -1;
	}
	if ((nw = calloc(G_CWDS_MAX, G_PATH_MAX)) == NULL) {
		x->oom = 1;
		gate_res_set(r, GATE_DENY, "unparseable");
		return -1;
	}
	for (i = 0; i < gate_ncwd(x, q); i++) {
		if (gate_resolve_at(x, q, i, out) == -1 ||
		    !gate_path_within(out, x->ws) ||
		    protect_path_hit(x->pc, out)) {
			free(nw);
			gate_res_set(r, GATE_DENY, "cwd-outside-workspace");
			return -1;
		}
		for (k = 0; k < nnew && strcmp(nw[k], out) != 0; k++)
			;
		if (k == nnew && nnew < G_CWDS_MAX)
			memcpy(nw[nnew++], out, G_PATH_MAX);
	}
	/* a cd that fails leaves the old cwd: keep both */
	for (k = 0; k < nnew; k++) {
		for (i = 0; i < x->ncwd && strcmp(x->cwd[i], nw[k]) != 0; i++)
			;
		if (i < x->ncwd)
			continue;
		if (x->ncwd >= G_CWDS_MAX) {
			free(nw);
			gate_res_set(r, GATE_DENY, "unparseable");
			return -1;
		}
		memcpy(x->cwd[x->ncwd++], nw[k], G_PATH_MAX);
	}
	free(nw);
	return 0;
}

/* rm -r inside the workspace asks; outside it is refused. */
int
gate_rule_rm(struct gctx *x, const struct sh_word *w, size_t n, struct gres *r)
{
	struct gate_rmflags f;
	size_t j;
	int dd = 0;

	gate_rm_flags(w, n, &f);
	if (!f.rf_rec)
		return 0;
	for (j = 1; j < n; j++)
		if (gate_is_operand(w, j, &dd) &&
		    !gate_inside_ws(x, w[j].w_s, w[j].w_f)) {
			gate_res_set(r, GATE_DENY, "rm-outside-workspace");
			return -1;
		}
	gate_res_set(r, GATE_ASK, "ask-rm-recursive");
	return 0;
}
