/*
 * The command gate's paths: every word that names a file is resolved by
 * the caller's callback (against each cwd the line may be in) and
 * refused when it lands in a protected path; globs are judged by their
 * fixed directory and the names they could match.  No I/O here.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "gate_impl.h"

/* Resolve p against cwd number i (absolute and ~ paths: any). */
int
gate_resolve_at(struct gctx *x, const char *p, size_t i, char *out)
{
	if (x->resolve(p, x->cwd[i], out, G_PATH_MAX, x->arg) == -1)
		return -1;
	out[G_PATH_MAX - 1] = '\0';
	return 0;
}

/* How many cwds a path must be tried against. */
size_t
gate_ncwd(struct gctx *x, const char *p)
{
	return (p[0] == '/' || p[0] == '~') ? 1 : x->ncwd;
}

/*
 * The text handed to the resolver: a literal leading ~ becomes ./~.
 * -1 when it does not fit (never a truncated path).
 */
int
gate_query(const char *p, unsigned f, char *q, size_t qsz)
{
	int n;

	if (p[0] == '~' && !(f & SH_TILDE))
		n = snprintf(q, qsz, "./%s", p);
	else
		n = snprintf(q, qsz, "%s", p);
	return n < 0 || (size_t)n >= qsz ? -1 : 0;
}

static int
glob_hits_secret(const struct protect_ctx *pc, const char *pat)
{
	const char *const *l;
	char first[256];
	const char *sl;
	size_t i, n;

	for (i = 0; g_secret_samples[i] != NULL; i++)
		if (fnmatch(pat, g_secret_samples[i], FNM_PERIOD) == 0)
			return 1;
	(void)pc;
	l = protect_home_list(&n);
	for (i = 0; i < n; i++) {
		sl = strchr(l[i], '/');
		snprintf(first, sizeof(first), "%.*s",
		    sl ? (int)(sl - l[i]) : (int)strlen(l[i]), l[i]);
		if (fnmatch(pat, first, FNM_PERIOD) == 0)
			return 1;
	}
	l = protect_startup_list(&n);
	for (i = 0; i < n; i++)
		if (fnmatch(pat, l[i], FNM_PERIOD) == 0)
			return 1;
	return 0;
}

/*
 * .git/config and .git/hooks name programs git runs (core.pager, hooks):
 * no command may name them (git config has its own rule), no file tool
 * write them.
 */
int
gate_git_internal(const char *p)
{
	const char *q;

	for (q = p; (q = strstr(q, "/.git/")) != NULL; q++)
		if (strcmp(q + 6, "config") == 0 ||
		    gate_has_prefix(q + 6, "hooks"))
			return 1;
	return 0;
}

/* Could the component at p (a pattern) be "config" or "hooks"? */
static int
git_glob_hit(const char *p)
{
	char comp[256];

	snprintf(comp, sizeof(comp), "%.*s", (int)strcspn(p, "/"), p);
	return fnmatch(comp, "config", FNM_PERIOD) == 0 ||
	       fnmatch(comp, "hooks", FNM_PERIOD) == 0;
}

/* ".." after the first glob: it climbs out of the fixed directory. */
static int
glob_climbs(const char *q)
{
	const char *p = q + strcspn(q, "*?[");

	for (; (p = strstr(p, "..")) != NULL; p += 2)
		if (p[-1] == '/' && (p[2] == '/' || p[2] == '\0'))
			return 1;
	return 0;
}

/*
 * A glob: its fixed directory must not be or hold a protected path, and
 * no glob component may match a protected name.
 */
static int
check_glob(struct gctx *x, const char *q, struct gres *r)
{
	char dir[G_PATH_MAX], out[G_PATH_MAX], comp[256], prev[256];
	const char *g = q + strcspn(q, "*?["), *sl, *rest, *e = q;
	size_t i, dl;

	for (sl = g; sl > q && sl[-1] != '/'; sl--)
		;
	if (sl == q) {
		snprintf(dir, sizeof(dir), ".");
		rest = q;
	} else {
		dl = (size_t)(sl - q - 1);
		snprintf(dir, sizeof(dir), "%.*s", dl == 0 ? 1 : (int)dl, q);
		rest = sl;
	}
	for (i = 0; i < gate_ncwd(x, dir); i++) {
		if (gate_resolve_at(x, dir, i, out) == -1) {
			gate_res_set(r, GATE_DENY, "unparseable");
			return -1;
		}
		if (protect_path_hit(x->pc, out) ||
		    protect_root_conflict(x->pc, out) != NULL ||
		    gate_git_internal(out))
			goto hit;
		/* the directory is a .git: its config and hooks */
		if ((sl = strrchr(out, '/')) != NULL &&
		    strcmp(sl, "/.git") == 0 && git_glob_hit(rest))
			goto hit;
	}
	prev[0] = '\0';
	for (; *rest != '\0'; rest = *e ? e + 1 : e) {
		e = rest + strcspn(rest, "/");
		/* ".." after a glob climbs out of the directory just checked */
		if ((size_t)(e - rest) >= sizeof(comp) ||
		    (e - rest == 2 && rest[0] == '.' && rest[1] == '.')) {
			gate_res_set(r, GATE_DENY, "unparseable");
			return -1;
		}
		snprintf(comp, sizeof(comp), "%.*s", (int)(e - rest), rest);
		if (fnmatch(prev, ".git", FNM_PERIOD) == 0 &&
		    git_glob_hit(rest))
			goto hit;
		memcpy(prev, comp, sizeof(prev));
		/* a fixed name after a glob is checked as check_path would */
		if (protect_name_secret(comp))
			goto hit;
		if (strcspn(comp, "*?[") != strlen(comp) &&
		    glob_hits_secret(x->pc, comp))
			goto hit;
	}
	return 0;
hit:
	gate_res_set(r, GATE_DENY, "protected-path");
	return -1;
}

/* A path argument: resolvable and not protected. */
int
gate_check_path(struct gctx *x, const char *p, unsigned f, struct gres *r)
{
	char q[G_PATH_MAX], out[G_PATH_MAX];
	size_t i;

	if (*p == '\0')
		return 0;
	if (gate_query(p, f, q, sizeof(q)) == -1) {
		gate_res_set(r, GATE_DENY, "unparseable");
		return -1;
	}
	if (f & SH_GLOB)
		return check_glob(x, q, r);
	for (i = 0; i < gate_ncwd(x, q); i++) {
		if (gate_resolve_at(x, q, i, out) == -1) {
			gate_res_set(r, GATE_DENY, "unparseable");
			return -1;
		}
		if (protect_path_hit(x->pc, out) || gate_git_internal(out)) {
			gate_res_set(r, GATE_DENY, "protected-path");
			return -1;
		}
	}
	return 0;
}

/*
 * A recursive command's operand (cp -r, grep -r, ls -R, chmod -R): it must
 * not contain a protected path either (~ holds ~/.ssh), nor be one.
 */
int
gate_check_tree(struct gctx *x, const char *p, unsigned f, struct gres *r)
{
	char q[G_PATH_MAX], out[G_PATH_MAX];
	size_t i;

	if (gate_check_path(x, p, f, r) == -1)
		return -1;
	if (*p == '\0' || (f & SH_GLOB))
		return 0; /* a glob's matches were checked as paths */
	if (gate_query(p, f, q, sizeof(q)) == -1) {
		gate_res_set(r, GATE_DENY, "unparseable");
		return -1;
	}
	for (i = 0; i < gate_ncwd(x, q); i++) {
		if (gate_resolve_at(x, q, i, out) == -1) {
			gate_res_set(r, GATE_DENY, "unparseable");
			return -1;
		}
		if (protect_root_conflict(x->pc, out) != NULL) {
			gate_res_set(r, GATE_DENY, "protected-path");
			return -1;
		}
	}
	return 0;
}

/* 1 if every resolution of p lies inside the workspace. */
int
gate_inside_ws(struct gctx *x, const char *p, unsigned f)
{
	char q[G_PATH_MAX], out[G_PATH_MAX];
	size_t i;

	if (gate_query(p, f, q, sizeof(q)) == -1)
		return 0;
	if (f & SH_GLOB) {
		if (glob_climbs(q))
			return 0;
		/* its fixed directory */
		const char *g = q + strcspn(q, "*?[");

		while (g > q && g[-1] != '/')
			g--;
		if (g == q)
			snprintf(q, sizeof(q), ".");
		else if (g - q > 1)
			q[g - q - 1] = '\0';
		else
			q[1] = '\0';
	}
	for (i = 0; i < gate_ncwd(x, q); i++)
		if (gate_resolve_at(x, q, i, out) == -1 ||
		    !gate_path_within(out, x->ws))
			return 0;
	return 1;
}

int
gate_looks_path(const char *s)
{
	return strchr(s, '/') != NULL || s[0] == '~' || s[0] == '.';
}
