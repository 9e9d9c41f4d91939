/*
 * The command gate's destructive shapes (DATA.md): rm -rf on wide
 * targets, chmod -R 777, mkfs, dd or a redirection onto a block device,
 * the fork bomb; wrappers (sudo, timeout, ...) are looked through.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate_impl.h"
#include "util.h"

static int
is_blockdev(const char *p)
{
	return gate_prefix_list(g_blockdev, p);
}

/* "./src/" -> "src", "~/ *" -> "~", "/ *" -> "/" (without the space) */
static void
rm_norm(const char *s, char *out, size_t outsz)
{
	size_t n;

	snprintf(out, outsz, "%s", s);
	for (;;) {
		n = strlen(out);
		if (n > 1 && out[n - 1] == '/')
			out[n - 1] = '\0';
		else if (n > 2 && strcmp(out + n - 2, "/*") == 0)
			out[n - 2] = '\0';
		else if (n > 1 && out[0] == '.' && out[1] == '/' && n > 2)
			memmove(out, out + 2, n - 1);
		else
			break;
	}
	if (strcmp(out, "./") == 0)
		out[1] = '\0';
	if (strcmp(out, "/*") == 0)
		out[1] = '\0';
	if (out[0] != '\0' && strspn(out, "*") == strlen(out))
		snprintf(out, outsz, "*");
}

/* Resolves to /, the home, or the workspace or one of its ancestors. */
static int
rm_wide(struct gctx *x, const char *p, unsigned f)
{
	char q[G_PATH_MAX], out[G_PATH_MAX];
	size_t i;

	if ((f & SH_GLOB) || gate_query(p, f, q, sizeof(q)) == -1)
		return 0;
	for (i = 0; i < gate_ncwd(x, q); i++) {
		if (gate_resolve_at(x, q, i, out) == -1)
			continue;
		if (strcmp(out, "/") == 0 || gate_path_within(x->ws, out) ||
		    (x->pc->pc_home != NULL &&
			strcmp(out, x->pc->pc_home) == 0))
			return 1;
	}
	return 0;
}

void
gate_rm_flags(const struct sh_word *w, size_t n, struct gate_rmflags *f)
{
	size_t j, l;
	int dd = 0;
	const char *s;

	memset(f, 0, sizeof(*f));
	for (j = 1; j < n; j++) {
		s = w[j].w_s;
		if (dd || s[0] != '-' || s[1] == '\0')
			continue;
		if (strcmp(s, "--") == 0) {
			dd = 1;
			continue;
		}
		if (s[1] == '-') {
			/* GNU takes any unambiguous prefix */
			l = strcspn(s + 2, "=");
			if (l >= 1 && strncmp("recursive", s + 2, l) == 0)
				f->rf_rec = 1;
			if (l >= 1 && strncmp("force", s + 2, l) == 0)
				f->rf_force = 1;
			if (l >= 2 &&
			    strncmp("no-preserve-root", s + 2, l) == 0)
				f->rf_nopreserve = 1;
			continue;
		}
		if (strpbrk(s + 1, "rR") != NULL)
			f->rf_rec = 1;
		if (strchr(s + 1, 'f') != NULL)
			f->rf_force = 1;
	}
}

/* Operand j of rm/chmod style argv (options anywhere until --). */
int
gate_is_operand(const struct sh_word *w, size_t j, int *dd)
{
	const char *s = w[j].w_s;

	if (*dd)
		return 1;
	if (strcmp(s, "--") == 0) {
		*dd = 1;
		return 0;
	}
	return s[0] != '-' || s[1] == '\0';
}

static int
shape_rm(struct gctx *x, const struct sh_word *w, size_t n)
{
	struct gate_rmflags f;
	char norm[G_PATH_MAX];
	size_t j;
	int dd = 0;

	gate_rm_flags(w, n, &f);
	if (f.rf_nopreserve)
		return 1;
	if (!f.rf_rec && !f.rf_force)
		return 0;
	for (j = 1; j < n; j++) {
		if (!gate_is_operand(w, j, &dd))
			continue;
		rm_norm(w[j].w_s, norm, sizeof(norm));
		if (schema_in_list(g_rm_targets, norm) ||
		    rm_wide(x, w[j].w_s, w[j].w_f))
			return 1;
	}
	return 0;
}

static int
shape_chmod(const struct sh_word *w, size_t n)
{
	size_t j;
	int rec = 0, wide = 0;

	for (j = 1; j < n; j++) {
		const char *s = w[j].w_s;

		if (s[0] == '-' && s[1] == '-' &&
		    strncmp("recursive", s + 2, strlen(s + 2)) == 0 && s[2])
			rec = 1;
		else if (s[0] == '-' && s[1] != '-' && strchr(s, 'R') != NULL)
			rec = 1;
		if (schema_in_list(g_chmod_wide, s))
			wide = 1;
	}
	return rec && wide;
}

static int
shape_dd(const struct sh_word *w, size_t n)
{
	size_t j;

	for (j = 1; j < n; j++) {
		const char *s = w[j].w_s;

		if (gate_has_prefix(s, "of=/dev/") &&
		    strcmp(s + 3, "/dev/null") != 0 &&
		    strcmp(s + 3, "/dev/stdout") != 0 &&
		    strcmp(s + 3, "/dev/stderr") != 0)
			return 1;
	}
	return 0;
}

/* A destructive shape in the command (DATA.md), wrappers looked through. */
int
gate_shape_cmd(struct gctx *x, const struct sh_cmd *c)
{
	size_t k = gate_cmd_start(c, 0), lvl, j;
	const char *name;
	char dev[G_PATH_MAX], q[G_PATH_MAX];
	int priv = 0;

	for (j = 0; j < c->c_nr; j++) {
		if (c->c_r[j].r_op == SH_R_IN || c->c_r[j].r_op == SH_R_DUPIN)
			continue;
		if (is_blockdev(c->c_r[j].r_s))
			return 1;
		if (gate_query(c->c_r[j].r_s, c->c_r[j].r_f, q, sizeof(q)) ==
		    -1)
			continue; /* refused by the path check */
		if (!(c->c_r[j].r_f & SH_GLOB) && !all_digits(q) &&
		    strcmp(q, "-") != 0 && gate_resolve_at(x, q, 0, dev) == 0 &&
		    is_blockdev(dev))
			return 1;
	}
	for (lvl = 0; lvl < 5 && k < c->c_nw; lvl++) {
		name = gate_base_name(c->c_w[k].w_s);
		if (gate_has_prefix(name, "mkfs"))
			return 1;
		if (strcmp(name, "rm") == 0) /* sudo rm: always */
			return priv || shape_rm(x, c->c_w + k, c->c_nw - k);
		if (strcmp(name, "chmod") == 0)
			return shape_chmod(c->c_w + k, c->c_nw - k);
		if (strcmp(name, "dd") == 0)
			return shape_dd(c->c_w + k, c->c_nw - k);
		if (!schema_in_list(g_wrappers, name))
			return 0;
		if (strcmp(name, "sudo") == 0 || strcmp(name, "doas") == 0 ||
		    strcmp(name, "su") == 0)
			priv = 1;
		k = gate_wrapper_skip(c, k);
	}
	return 0;
}

/* The :(){ :|:& };: shape, any name, any spacing. */
int
gate_forkbomb(const char *s, size_t n)
{
	static const char stop[] = "(){}|&;<>\"'`$ \t\n";
	char *t;
	size_t i, m = 0, b, nl, q;
	int hit = 0;

	if ((t = malloc(n + 1)) == NULL)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n')
			t[m++] = s[i];
	t[m] = '\0';
	for (i = 0; !hit && i + 3 <= m; i++) {
		if (memcmp(t + i, "(){", 3) != 0)
			continue;
		for (b = i; b > 0 && strchr(stop, t[b - 1]) == NULL; b--)
			;
		nl = i - b;
		q = i + 3;
		if (nl == 0 || q + 2 * nl + 2 > m)
			continue;
		hit = memcmp(t + q, t + b, nl) == 0 && t[q + nl] == '|' &&
		      memcmp(t + q + nl + 1, t + b, nl) == 0 &&
		      t[q + 2 * nl + 1] == '&';
	}
	free(t);
	return hit;
}
