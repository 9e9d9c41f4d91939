/*
 * Sandbox roots (see roots.h): expand "~/", realpath, refuse protected.
 * The only place roots are resolved: built into the spawner and, from
 * here, into `cordon check`.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argv.h"
#include "manifest.h"
#include "roots.h"

void
roots_free(struct roots *r)
{
	argv_free(r->r_read);
	argv_free(r->r_write);
	memset(r, 0, sizeof(*r));
}

int
roots_protect_init(struct protect_ctx *pc, char *homebuf, size_t homesz)
{
	const char *home = getenv("HOME");
	struct passwd *pw;
	char rp[PATH_MAX];

	memset(pc, 0, sizeof(*pc));
	if (home == NULL || home[0] != '/') {
		if ((pw = getpwuid(getuid())) == NULL || pw->pw_dir == NULL ||
		    pw->pw_dir[0] != '/')
			return -1;
		home = pw->pw_dir;
	}
	/* A home that does not exist (yet) is still protected lexically. */
	if (realpath(home, rp) != NULL)
		home = rp;
	if (snprintf(homebuf, homesz, "%s", home) >= (int)homesz)
		return -1;
	pc->pc_home = homebuf;
	return 0;
}

/*
 * One root: "~/x" against the (resolved) home, then realpath.  0 with
 * *out malloc'd, or -1 and why.
 */
static int
root_one(const struct protect_ctx *pc, const char *key, size_t idx,
    const char *root, char **out, char *why, size_t whysz)
{
	char joined[PATH_MAX], rp[PATH_MAX];
	const char *conflict;

	if (root[0] == '~') {
		if (pc->pc_home == NULL || root[1] != '/' ||
		    snprintf(joined, sizeof(joined), "%s%s", pc->pc_home,
			root + 1) >= (int)sizeof(joined)) {
			snprintf(why, whysz, "%s[%zu]: cannot be resolved", key,
			    idx);
			return -1;
		}
		root = joined;
	}
	if (realpath(root, rp) == NULL) {
		snprintf(why, whysz, "%s[%zu]: %s", key, idx,
		    errno == ENOENT ? "does not exist" : "cannot be resolved");
		return -1;
	}
	if ((conflict = protect_root_conflict(pc, rp)) != NULL) {
		snprintf(why, whysz, "%s[%zu]: %s", key, idx, conflict);
		return -1;
	}
	/*
	 * SBX-2's names hold for the root itself too (the scan at each
	 * spawn covers what lies beneath): a root named .env or tls.key is
	 * the secret file.
	 */
	if (protect_name_secret(strrchr(rp, '/') + 1)) {
		snprintf(
		    why, whysz, "%s[%zu]: has a secret file's name", key, idx);
		return -1;
	}
	if ((*out = strdup(rp)) == NULL) {
		snprintf(why, whysz, "%s: out of memory", key);
		return -1;
	}
	return 0;
}

static int
root_list(const struct protect_ctx *pc, const char *key, char *const *in,
    size_t n, char ***outv, size_t *outn, char *why, size_t whysz)
{
	size_t i;

	*outn = 0;
	if ((*outv = calloc(n + 1, sizeof(char *))) == NULL) {
		snprintf(why, whysz, "%s: out of memory", key);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (root_one(pc, key, i, in[i], &(*outv)[i], why, whysz) == -1)
			return -1;
		(*outn)++;
	}
	return 0;
}

int
roots_resolve(const struct manifest *m, const struct protect_ctx *pc,
    struct roots *out, char *why, size_t whysz)
{
	const struct mf_sandbox *s = &m->m_sandbox;
	char *cwd[2] = {m->m_cwd, NULL};

	memset(out, 0, sizeof(*out));
	if (root_list(pc, "sandbox.readRoots", s->sb_read_roots, s->sb_nread,
		&out->r_read, &out->r_nread, why, whysz) == -1)
		goto fail;
	/* Write roots default to the workdir, when the manifest names one. */
	if (s->sb_nwrite > 0) {
		if (root_list(pc, "sandbox.writeRoots", s->sb_write_roots,
			s->sb_nwrite, &out->r_write, &out->r_nwrite, why,
			whysz) == -1)
			goto fail;
	} else if (root_list(pc, "transportConfig.cwd", cwd,
		       m->m_cwd != NULL ? 1 : 0, &out->r_write, &out->r_nwrite,
		       why, whysz) == -1)
		goto fail;
	return 0;
fail:
	roots_free(out);
	return -1;
}

static int
exec_file_ok(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

/* SP-1: bin as written, resolved against the built env's PATH. */
int
agent_resolve_bin(const char *bin, char *const *envp, char *out, size_t outsz)
{
	const char *path = NULL, *p, *e;
	size_t i, dl;

	if (bin == NULL || bin[0] == '\0')
		return -1;
	if (strchr(bin, '/') != NULL) {
		if (bin[0] != '/' || !exec_file_ok(bin) ||
		    snprintf(out, outsz, "%s", bin) >= (int)outsz)
			return -1;
		return 0;
	}
	for (i = 0; envp[i] != NULL; i++)
		if (strncmp(envp[i], "PATH=", 5) == 0)
			path = envp[i] + 5;
	if (path == NULL)
		return -1;
	for (p = path; *p != '\0'; p = *e ? e + 1 : e) {
		e = strchr(p, ':');
		if (e == NULL)
			e = p + strlen(p);
		dl = (size_t)(e - p);
		/* Relative entries (and "") never resolve an agent. */
		if (dl == 0 || p[0] != '/')
			continue;
		if (snprintf(out, outsz, "%.*s/%s", (int)dl, p, bin) >=
		    (int)outsz)
			continue;
		if (exec_file_ok(out))
			return 0;
	}
	return -1;
}
