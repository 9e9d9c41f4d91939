/*
 * Sandbox roots (see roots.h): expand "~/", realpath, refuse protected.
 * The only place roots are resolved: built into the spawner and, from
 * here, into `cordon check`.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argv.h"
#include "manifest.h"
#include "pathsafe.h"
#include "roots.h"
#include "util.h"

void
roots_free(struct roots *r)
{
	strv_free(r->r_read);
	strv_free(r->r_write);
	memset(r, 0, sizeof(*r));
}

/*
 * SBX-2: where the home's protected entries lead when one, or a dir
 * above it, is a link (a dotfiles setup: ~/.bashrc -> ~/dotfiles/bashrc,
 * ~/.config -> ~/dotfiles/config).  A root may hold that target where it
 * may never hold the entry, so the target is protected as the entry is.
 * One missing is resolved through its dir, for what may be made there.
 * Resolved once, with the protect_ctx of the process (one per process).
 */
static char roots_links[PROTECT_LINKS_MAX][PATH_MAX];

static void
protect_links(struct protect_ctx *pc)
{
	const char *const *l[2];
	char p[PATH_MAX], rp[PATH_MAX], *slash;
	size_t n[2], i, k, len;

	l[0] = protect_home_list(&n[0]);
	l[1] = protect_startup_list(&n[1]);
	for (k = 0; k < 2; k++)
		for (i = 0; i < n[k]; i++) {
			if (snprintf(p, sizeof(p), "%s/%s", pc->pc_home,
				l[k][i]) >= (int)sizeof(p))
				continue; /* protected as written */
			if (realpath(p, rp) == NULL) {
				slash = strrchr(p, '/');
				*slash = '\0';
				if (realpath(p, rp) == NULL ||
				    (len = strlen(rp)) + 1 +
					    strlen(slash + 1) >=
					sizeof(rp))
					continue;
				rp[len] = '/';
				strcpy(rp + len + 1, slash + 1);
				*slash = '/';
			}
			if (strcmp(rp, p) == 0 ||
			    pc->pc_nlinks == PROTECT_LINKS_MAX)
				continue;
			memcpy(roots_links[pc->pc_nlinks], rp, sizeof(rp));
			pc->pc_links[pc->pc_nlinks] =
			    roots_links[pc->pc_nlinks];
			pc->pc_nlinks++;
		}
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
	protect_links(pc);
	return 0;
}

int
roots_protect_add(struct protect_ctx *pc, const char *dir, char *buf)
{
	if (pc->pc_nextra == PROTECT_EXTRA_MAX) {
		errno = E2BIG;
		return -1;
	}
	/* One that does not exist yet is kept as written. */
	if (realpath(dir, buf) == NULL &&
	    snprintf(buf, PATH_MAX, "%s", dir) >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	pc->pc_extra[pc->pc_nextra++] = buf;
	return 0;
}

int
roots_protect_set(struct protect_ctx *pc, char *homebuf, size_t homesz,
    const char *const *dirs, size_t n, char (*buf)[PATH_MAX])
{
	size_t i;

	if (roots_protect_init(pc, homebuf, homesz) == -1)
		return -1;
	for (i = 0; i < n; i++)
		if (dirs[i][0] == '/' &&
		    roots_protect_add(pc, dirs[i], buf[i]) == -1)
			return -1;
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
	out->r_nscan = out->r_nwrite;
	return 0;
fail:
	roots_free(out);
	return -1;
}

/* ---- SBX-9: each agent's private home ---- */

int
agent_home_path(const char *state, const char *name, char *out, size_t outsz)
{
	char rp[PATH_MAX];

	/* Names are the manifest's ^[a-z0-9][a-z0-9-]{0,63}$: never "..". */
	if (state == NULL || state[0] != '/' || name == NULL ||
	    name[0] == '\0' || name[0] == '.' || strchr(name, '/') != NULL) {
		errno = EINVAL;
		return -1;
	}
	if (realpath(state, rp) != NULL)
		state = rp;
	if (snprintf(out, outsz, "%s/" AGENT_HOMES_DIR "/%s", state, name) >=
	    (int)outsz) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/*
 * dfd/name, made 0700 if missing: a dir of ours, never a link; its fd,
 * or -1 with errno.  dfd is closed either way.
 */
int
roots_dir_make(int dfd, const char *name)
{
	struct stat st;
	int fd = -1, e;

	if (mkdirat(dfd, name, 0700) == 0 || errno == EEXIST)
		fd = openat(
		    dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	e = errno;
	close(dfd);
	errno = e;
	if (fd == -1)
		return -1;
	if (fstat(fd, &st) == 0 && st.st_uid != geteuid())
		errno = EPERM;
	else if (fstat(fd, &st) == 0 &&
		 ((st.st_mode & 07777) == 0700 || fchmod(fd, 0700) == 0))
		return fd;
	e = errno;
	close(fd);
	errno = e;
	return -1;
}

int
agent_home_make(const char *state, const char *name, char *out, size_t outsz)
{
	static const char *const cli_dirs[] = {".claude", ".codex", ".gemini"};
	int sfd, hfd, afd;
	size_t i;

	if (agent_home_path(state, name, out, outsz) == -1)
		return -1;
	if ((sfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (hfd = roots_dir_make(sfd, AGENT_HOMES_DIR)) == -1 ||
	    (afd = roots_dir_make(hfd, name)) == -1)
		return -1;
	/*
	 * The CLIs' own dirs (Codex refuses a CODEX_HOME that does not
	 * exist); mkdirat never follows what the agent may have put there.
	 */
	for (i = 0; i < sizeof(cli_dirs) / sizeof(cli_dirs[0]); i++)
		(void)mkdirat(afd, cli_dirs[i], 0700);
	close(afd);
	return 0;
}

const char *
errno_name(int e)
{
	const char *n = strerrorname_np(e);

	return n != NULL ? n : "EIO";
}

int
roots_add_home(struct roots *r, const char *home)
{
	char **w, *h;

	if ((h = strdup(home)) == NULL)
		return -1;
	if ((w = realloc(r->r_write, (r->r_nwrite + 2) * sizeof(char *))) ==
	    NULL) {
		free(h);
		return -1;
	}
	r->r_write = w;
	r->r_nscan = r->r_nwrite;
	w[r->r_nwrite++] = h;
	w[r->r_nwrite] = NULL;
	r->r_home = h;
	return 0;
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

/* PATH as shown in a reason: at most 200 bytes, control bytes as '?'. */
#define BIN_PATH_SHOW 200

static void
path_shown(const char *path, char *out, size_t outsz)
{
	size_t i;

	for (i = 0; path[i] != '\0' && i < BIN_PATH_SHOW && i + 4 < outsz; i++)
		out[i] = path[i] > 0x1f && path[i] != 0x7f ? path[i] : '?';
	snprintf(out + i, outsz - i, "%s", path[i] ? "..." : "");
	if (out[0] == '\0')
		snprintf(out, outsz, "(empty)");
}

/* 1 if a resolved path lies in one of the agent's roots. */
static int
in_roots(const struct roots *rt, const char *p)
{
	size_t i;

	for (i = 0; i < rt->r_nread; i++)
		if (protect_is_under(p, rt->r_read[i]))
			return 1;
	for (i = 0; i < rt->r_nwrite; i++)
		if (protect_is_under(p, rt->r_write[i]))
			return 1;
	return 0;
}

/* 1 if the file at rp lies under the operator's home, outside the roots. */
static int
hidden_home(
    const struct protect_ctx *pc, const struct roots *rt, const char *rp)
{
	return pc->pc_home != NULL && strcmp(pc->pc_home, "/") != 0 &&
	       protect_is_under(rp, pc->pc_home) && !in_roots(rt, rp);
}

/*
 * A script's interpreter ("#!/usr/bin/env node" -> node on PATH), as
 * a resolved path in out, and as the kernel or env names it in named
 * (if not NULL); 0, or -1 when it is no script or the interpreter cannot
 * be found (the kernel then says so at exec).
 */
static int
script_interp(const char *rp, char *const *envp, char *out, size_t outsz,
    char named[PATH_MAX])
{
	char line[256], *p, *tok, *save = NULL, found[PATH_MAX];
	ssize_t n;
	int fd;

	if ((fd = open(rp, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return -1;
	line[n] = '\0';
	if ((p = strchr(line, '\n')) != NULL)
		*p = '\0';
	if ((tok = strtok_r(line + 2, " \t", &save)) == NULL || tok[0] != '/')
		return -1;
	if (strcmp(strrchr(tok, '/') + 1, "env") == 0) {
		/* env's own flags (-S, -i) come before the program. */
		while ((tok = strtok_r(NULL, " \t", &save)) != NULL &&
		       tok[0] == '-')
			;
		if (tok == NULL || strchr(tok, '=') != NULL ||
		    agent_resolve_bin(tok, envp, found, sizeof(found)) == -1)
			return -1;
		tok = found;
	}
	if (named != NULL && snprintf(named, PATH_MAX, "%s", tok) >= PATH_MAX)
		return -1;
	return realpath(tok, out) != NULL && strlen(out) < outsz ? 0 : -1;
}

/*
 * SU-5: the program at path, as exec names it (a link on the way is
 * what exec follows then) and resolved, and every dir above it, is
 * beyond another user's reach: owned by root, the spawner's uid or the
 * agents' (the owner of their home: --user's when cordon runs as root),
 * writable by no one else.  0, or -1 and why.
 */
static int
bin_owned(const struct protect_ctx *pc, const char *name, const char *path,
    char *why, size_t whysz)
{
	struct pathsafe ps;
	struct stat st;
	uid_t user = geteuid();

	if (pc != NULL && pc->pc_home != NULL && stat(pc->pc_home, &st) == 0)
		user = st.st_uid;
	pathsafe_init(&ps, geteuid(), user);
	if (pathsafe_chain(&ps, path, 0) == 0)
		return 0;
	snprintf(why, whysz,
	    "the program %s resolves to %s, which another user can replace: "
	    "%s %s",
	    name, path, ps.ps_bad, ps.ps_why);
	return -1;
}

/*
 * SU-5 for a program found once: out as exec names it (on PATH, or as
 * written), rp where it resolves.  -1 and why; 1 if it is a script (its
 * interpreter resolved into ip), else 0.
 */
static int
bin_safe_found(const struct protect_ctx *pc, char *const *envp, const char *out,
    const char *rp, char ip[PATH_MAX], char *why, size_t whysz)
{
	char in[PATH_MAX];
	const char *name = strrchr(out, '/') + 1;
	int script;

	if (bin_owned(pc, name, out, why, whysz) == -1)
		return -1;
	script = script_interp(rp, envp, ip, PATH_MAX, in) == 0;
	if (script && bin_owned(pc, name, in, why, whysz) == -1)
		return -1;
	return script;
}

int
agent_bin_safe(const char *bin, char *const *envp, const struct protect_ctx *pc,
    char *why, size_t whysz)
{
	char out[PATH_MAX], rp[PATH_MAX], ip[PATH_MAX];

	if (agent_resolve_bin(bin, envp, out, sizeof(out)) == -1 ||
	    realpath(out, rp) == NULL)
		return 0; /* agent_bin_check says why */
	return bin_safe_found(pc, envp, out, rp, ip, why, whysz) == -1 ? -1 : 0;
}

int
agent_bin_check(const char *bin, char *const *envp, const struct roots *rt,
    const struct protect_ctx *pc, char *out, size_t outsz, char *why,
    size_t whysz)
{
	char rp[PATH_MAX], ip[PATH_MAX], shown[BIN_PATH_SHOW + 8];
	const char *path = "", *name;
	size_t i;
	int script;

	if (agent_resolve_bin(bin, envp, out, outsz) == -1) {
		if (bin != NULL && strchr(bin, '/') != NULL) {
			snprintf(why, whysz,
			    "binary not found: no executable file at %s", bin);
			return -1;
		}
		for (i = 0; envp[i] != NULL; i++)
			if (strncmp(envp[i], "PATH=", 5) == 0)
				path = envp[i] + 5;
		path_shown(path, shown, sizeof(shown));
		snprintf(why, whysz, "binary %s not found on PATH %s",
		    bin != NULL ? bin : "", shown);
		return -1;
	}
	/* One walk of PATH: the program found is the one checked. */
	if (realpath(out, rp) == NULL)
		return 0;
	if ((script = bin_safe_found(pc, envp, out, rp, ip, why, whysz)) == -1)
		return -1;
	if (rt == NULL)
		return 0;
	name = strrchr(out, '/') + 1;
	/*
	 * A program file itself is always readable and executable (the
	 * sandbox adds it), so a script named where it lies runs wherever
	 * it is (a checkout under the home, ~/bin/tool).  One reached
	 * through a link into a package under the home (npm's or pipx's
	 * user prefix) loads its siblings (node_modules), which it cannot
	 * read there.
	 */
	if (script && strcmp(out, rp) != 0 && hidden_home(pc, rt, rp)) {
		snprintf(why, whysz,
		    "the program %s is the script %s, under the operator's "
		    "home, which the sandbox hides (install it system-wide or "
		    "add its directory to sandbox.readRoots)",
		    name, rp);
		return -1;
	}
	if (script && hidden_home(pc, rt, ip)) {
		snprintf(why, whysz,
		    "the interpreter of %s resolves to %s, under the "
		    "operator's home, which the sandbox hides (install it "
		    "system-wide or add its directory to sandbox.readRoots)",
		    name, ip);
		return -1;
	}
	return 0;
}
