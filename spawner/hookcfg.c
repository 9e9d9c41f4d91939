/*
 * SBX-8: the hook wiring and config files cordon writes itself, for a
 * CLI that would read them from the agent's writable home: the whole
 * file is cordon's, written afresh before every chat run into a
 * cordon-owned dir outside the home (STATE/hookcfg/NAME), which every
 * spawn of the agent binds read-only over the home's file
 * (sandbox_cfg.c).  In the home cordon only makes sure a plain file is
 * there to bind over (a run's mountpoint is never renamed over: that
 * would drop the bind in a run still going).  Written through held dir
 * fds, never following a link the agent left.
 *   - Gemini CLI's ~/.gemini/settings.json holds its gate hook (it has
 *     no flag for one); its ~/.gemini/extensions is an empty dir (an
 *     extension's hooks run beside the gate hook and may rewrite the
 *     tool input it allowed; its MCP servers and SessionStart hooks
 *     start with the CLI).
 *   - Codex takes its hook on the command line, but also runs the
 *     hooks, `notify` program and MCP servers of CODEX_HOME/config.toml
 *     and CODEX_HOME/hooks.json (trusted by --dangerously-bypass-hook-
 *     trust), trusts a project's .codex/ by that config's [projects],
 *     and loads CODEX_HOME/.env into its environment, which its hook's
 *     `bash -c` inherits (BASH_ENV): all three hold nothing but a note.
 * Claude Code takes its hooks on the command line; what it reads from
 * its home is checked by hookproj.c.  Gemini CLI's project settings
 * and .env files, writable too, could outrank its file: hookproj.c
 * refuses a run while they could.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate.h"
#include "hook.h"
#include "hookproj.h"
#include "log.h"
#include "spawner.h"
#include "util.h"

#define HOOKCFG_STATE "hookcfg" /* STATE/hookcfg/NAME: cordon's copies */
#define HOOKCFG_OAUTH "oauth_creds.json" /* Gemini CLI's login */

#define HOOKCFG_NOTE                                                           \
	"cordon shows its own copy of this file, read-only, in every run of "  \
	"this agent; what is written here is never read (docs/agents.md, "     \
	"\"Read-only hook config\")"

/* Codex's files in CODEX_HOME that can run or trust a program. */
static const struct {
	const char *name, *text;
} hookcfg_codex[] = {
    {"config.toml", "# " HOOKCFG_NOTE "\n"},
    {"hooks.json", "{\"hooks\":{}}\n"},
    {".env", "# " HOOKCFG_NOTE "\n"},
};

/* home/dir, made if missing, opened never through a link: a dir fd. */
static int
hookcfg_dir(int hfd, const char *dir)
{
	if (mkdirat(hfd, dir, 0700) == -1 && errno != EEXIST)
		return -1;
	return openat(
	    hfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * The file a run binds cordon's copy over: a plain file, made with text
 * if missing.  Something else there (a link, a FIFO) is no run's
 * mountpoint, so it goes; a dir cannot be bound over: EISDIR.
 */
static int
hookcfg_mountpoint(int dfd, const char *name, const char *text)
{
	struct stat st;
	size_t len = strlen(text);
	int fd, r;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISREG(st.st_mode))
			return 0;
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return -1;
		}
		if (unlinkat(dfd, name, 0) == -1)
			return -1;
	} else if (errno != ENOENT)
		return -1;
	if ((fd = openat(dfd, name,
		 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) ==
	    -1)
		return -1;
	r = write(fd, text, len) == (ssize_t)len ? 0 : -1;
	close(fd);
	return r;
}

/* The dir a run binds cordon's empty one over: made if missing; a link
 * or a file there is no run's mountpoint, so it goes.  What the agent
 * left inside stays, never seen by a run. */
static int
hookcfg_mountdir(int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st.st_mode))
			return 0;
		if (unlinkat(dfd, name, 0) == -1)
			return -1;
	} else if (errno != ENOENT)
		return -1;
	return mkdirat(dfd, name, 0700);
}

/* Gemini CLI's settings: the gate hook under a fresh name (SBX-8). */
static int
hookcfg_gemini(int cfd, int gfd, char *buf, size_t bufsz, long hook_ms)
{
	char name[32] = "cordon-gate-";
	size_t n = strlen(name);
	struct stat st;

	if (random_hex(name + n, sizeof(name) - n, 8) == -1 ||
	    hook_gemini_settings(name, sandbox_cordon(),
		fstatat(gfd, HOOKCFG_OAUTH, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode),
		hook_ms, buf, bufsz) == -1)
		return -1;
	return atomic_write_at(
	    cfd, "settings.json", buf, strlen(buf), 0600, (uid_t)-1, (gid_t)-1);
}

/* The files of cli: cordon's copies in cfd, the mountpoints in gfd;
 * *file the one being written, relative to the home. */
static char hookcfg_rel[64];

static int
hookcfg_files(
    enum agent_cli cli, int cfd, int gfd, const char **file, long hook_ms)
{
	char *rel = hookcfg_rel;
	const struct sbx_cfg_entry *f = sandbox_cfg_files(cli);
	const char *n;
	char buf[512];
	size_t i, j;

	*file = rel;
	for (i = 0; (n = f[i].ce_name) != NULL; i++) {
		snprintf(
		    rel, sizeof(hookcfg_rel), "%s/%s", sandbox_cfg_dir(cli), n);
		if (f[i].ce_dir) {
			/* cordon's empty dir: never written to after. */
			if ((mkdirat(cfd, n, 0700) == -1 && errno != EEXIST) ||
			    hookcfg_mountdir(gfd, n) == -1)
				return -1;
			continue;
		}
		if (cli == AGENT_CLI_GEMINI) {
			if (hookcfg_gemini(
				cfd, gfd, buf, sizeof(buf), hook_ms) == -1 ||
			    hookcfg_mountpoint(gfd, n, buf) == -1)
				return -1;
			continue;
		}
		for (j = 0; j < nitems(hookcfg_codex) &&
			    strcmp(hookcfg_codex[j].name, n) != 0;
		     j++)
			;
		if (j == nitems(hookcfg_codex) ||
		    atomic_write_at(cfd, n, hookcfg_codex[j].text,
			strlen(hookcfg_codex[j].text), 0600, (uid_t)-1,
			(gid_t)-1) == -1 ||
		    hookcfg_mountpoint(gfd, n, hookcfg_codex[j].text) == -1)
			return -1;
	}
	return 0;
}

int
hookcfg_load(struct agent *ag, const char *state, const char **file)
{
	struct sandbox_plan *pl = &ag->ag_sb;
	char path[PATH_MAX], rp[PATH_MAX];
	int sfd, dfd;

	*file = HOOKCFG_STATE;
	/* SBX-8: only a CLI with a dir of files cordon writes. */
	pl->pl_cfgcli = agent_cli_mf(&ag->ag_mf);
	if (sandbox_cfg_dir(pl->pl_cfgcli) == NULL)
		pl->pl_cfgcli = AGENT_CLI_NONE;
	if (pl->pl_cfgcli == AGENT_CLI_NONE)
		return 0;
	if (state == NULL || realpath(state, rp) == NULL ||
	    snprintf(path, sizeof(path), "%s/" HOOKCFG_STATE "/%s", rp,
		ag->ag_mf.m_name) >= (int)sizeof(path)) {
		errno = state == NULL ? EINVAL : errno;
		return -1;
	}
	/* Names are the manifest's ^[a-z0-9][a-z0-9-]{0,63}$: one segment. */
	if ((sfd = open(rp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (dfd = roots_dir_make(sfd, HOOKCFG_STATE)) == -1 ||
	    (dfd = roots_dir_make(dfd, ag->ag_mf.m_name)) == -1)
		return -1;
	close(dfd);
	if ((pl->pl_cfgdir = strdup(path)) == NULL)
		return -1;
	return hookcfg_run(ag, file);
}

int
hookcfg_run(const struct agent *ag, const char **file)
{
	const struct sandbox_plan *pl = &ag->ag_sb;
	const char *dir = sandbox_cfg_dir(pl->pl_cfgcli);
	int hfd, cfd, gfd = -1, r = -1, e;

	*file = "";
	if (pl->pl_roots.r_home == NULL || dir == NULL)
		return 0;
	/* A dir that fails is named by its first file. */
	snprintf(hookcfg_rel, sizeof(hookcfg_rel), "%s/%s", dir,
	    sandbox_cfg_files(pl->pl_cfgcli)[0].ce_name);
	*file = hookcfg_rel;
	if (pl->pl_cfgdir == NULL) {
		errno = ENOENT;
		return -1;
	}
	if ((cfd = open(pl->pl_cfgdir,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if ((hfd = open(pl->pl_roots.r_home,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) != -1)
		gfd = hookcfg_dir(hfd, dir);
	if (gfd != -1)
		r = hookcfg_files(pl->pl_cfgcli, cfd, gfd, file,
		    (gate_answer_sec(&ag->ag_mf.m_commands) +
			GATE_HOOK_MARGIN) *
			1000);
	e = errno;
	if (gfd != -1)
		close(gfd);
	if (hfd != -1)
		close(hfd);
	close(cfd);
	errno = e;
	return r;
}
