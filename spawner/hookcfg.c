/*
 * SBX-8: the hook wiring and config files cordon writes itself, for a
 * CLI that reads them from the agent's writable home: the whole file
 * is cordon's, written afresh before every chat run, so whatever the
 * agent wrote there last run is gone.  Written through held dir fds,
 * never following a link the agent left.
 *   - Gemini CLI's ~/.gemini/settings.json holds its gate hook (it has
 *     no flag for one).
 *   - Codex takes its hook on the command line, but also runs the
 *     hooks, `notify` program and MCP servers of CODEX_HOME/config.toml
 *     and CODEX_HOME/hooks.json (trusted by --dangerously-bypass-hook-
 *     trust), trusts a project's .codex/ by that config's [projects],
 *     and loads CODEX_HOME/.env into its environment, which its hook's
 *     `bash -c` inherits (BASH_ENV): all three are written holding
 *     nothing but a note.
 * Claude Code takes its hooks on the command line; what it reads from
 * its home is checked by hookproj.c.  Gemini CLI's project settings
 * and .env files, writable too, could outrank its file: hookproj.c
 * refuses a run while they could.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook.h"
#include "hookproj.h"
#include "log.h"
#include "spawner.h"
#include "util.h"

#define HOOKCFG_DIR	 ".gemini"
#define HOOKCFG_SETTINGS "settings.json"
#define HOOKCFG_OAUTH	 "oauth_creds.json" /* Gemini CLI's login */
#define HOOKCFG_CODEX	 ".codex"	    /* CODEX_HOME (SBX-9) */

#define HOOKCFG_NOTE                                                           \
	"cordon writes this file afresh before every run of this agent; "      \
	"what is written here does not last (docs/agents.md, "                 \
	"\"Codex's own files\")"

/* Codex's files in CODEX_HOME that can run or trust a program. */
static const struct {
	const char *path, *text; /* path: under the home */
} hookcfg_codex[] = {
    {HOOKCFG_CODEX "/config.toml", "# " HOOKCFG_NOTE "\n"},
    {HOOKCFG_CODEX "/hooks.json", "{\"hooks\":{}}\n"},
    {HOOKCFG_CODEX "/.env", "# " HOOKCFG_NOTE "\n"},
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

static int
hookcfg_gemini(int hfd, const char **file)
{
	char name[32] = "cordon-gate-", buf[512];
	size_t n = strlen(name);
	struct stat st;
	int gfd, r = -1, e;

	*file = HOOKCFG_DIR "/" HOOKCFG_SETTINGS;
	if ((gfd = hookcfg_dir(hfd, HOOKCFG_DIR)) == -1)
		return -1;
	if (random_hex(name + n, sizeof(name) - n, 8) == 0 &&
	    hook_gemini_settings(name, sandbox_cordon(),
		fstatat(gfd, HOOKCFG_OAUTH, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode),
		buf, sizeof(buf)) == 0)
		r = atomic_write_at(gfd, HOOKCFG_SETTINGS, buf, strlen(buf),
		    0600, (uid_t)-1, (gid_t)-1);
	e = errno;
	close(gfd);
	errno = e;
	return r;
}

static int
hookcfg_codex_files(int hfd, const char **file)
{
	size_t i;
	int cfd, r = 0, e;

	*file = HOOKCFG_CODEX;
	if ((cfd = hookcfg_dir(hfd, HOOKCFG_CODEX)) == -1)
		return -1;
	for (i = 0;
	     r == 0 && i < sizeof(hookcfg_codex) / sizeof(hookcfg_codex[0]);
	     i++) {
		*file = hookcfg_codex[i].path;
		r = atomic_write_at(cfd, strchr(*file, '/') + 1,
		    hookcfg_codex[i].text, strlen(hookcfg_codex[i].text), 0600,
		    (uid_t)-1, (gid_t)-1);
	}
	e = errno;
	close(cfd);
	errno = e;
	return r;
}

int
hookcfg_run(const struct agent *ag, const char **file)
{
	int hfd, r = 0, e;

	*file = "";
	if (ag->ag_sb.pl_roots.r_home == NULL ||
	    (!hookproj_gemini(ag->ag_mf.m_bin) &&
		!hookproj_codex(ag->ag_mf.m_bin)))
		return 0;
	if ((hfd = open(ag->ag_sb.pl_roots.r_home,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if (hookproj_gemini(ag->ag_mf.m_bin))
		r = hookcfg_gemini(hfd, file);
	else
		r = hookcfg_codex_files(hfd, file);
	e = errno;
	close(hfd);
	errno = e;
	return r;
}
