/*
 * SBX-8: the hook wiring cordon writes itself, for a CLI that reads it
 * from a settings file in the agent's writable home (Gemini CLI's
 * ~/.gemini/settings.json): the whole file is cordon's, written afresh
 * before every chat run, so whatever the agent wrote there last run
 * (its hook unwired, hooks off) is gone.  Written through held dir fds,
 * never following a link the agent left.  Claude Code and Codex take
 * their hooks on the command line (the shipped manifests' args), which
 * the agent cannot change.  Gemini CLI's project settings and .env
 * files, writable too, could outrank that file: hookproj.c refuses a
 * run while they could.
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

/* The CLIs whose hooks are a file: matched on bin's last component. */
static int
hookcfg_wanted(const struct agent *ag)
{
	return hookproj_gemini(ag->ag_mf.m_bin) &&
	       ag->ag_sb.pl_roots.r_home != NULL;
}

int
hookcfg_run(const struct agent *ag)
{
	char name[32] = "cordon-gate-", buf[512];
	size_t n = strlen(name);
	struct stat st;
	int hfd, gfd = -1, r = -1, e;

	if (!hookcfg_wanted(ag))
		return 0;
	if ((hfd = open(ag->ag_sb.pl_roots.r_home,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	/* The agent may have removed it, or left a link in its place. */
	if ((mkdirat(hfd, HOOKCFG_DIR, 0700) == 0 || errno == EEXIST) &&
	    (gfd = openat(hfd, HOOKCFG_DIR,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) != -1 &&
	    random_hex(name + n, sizeof(name) - n, 8) == 0 &&
	    hook_gemini_settings(name, sandbox_cordon(),
		fstatat(gfd, HOOKCFG_OAUTH, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode),
		buf, sizeof(buf)) == 0)
		r = atomic_write_at(gfd, HOOKCFG_SETTINGS, buf, strlen(buf),
		    0600, (uid_t)-1, (gid_t)-1);
	e = errno;
	if (gfd != -1)
		close(gfd);
	close(hfd);
	errno = e;
	return r;
}
