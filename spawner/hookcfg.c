/*
 * SBX-8: the hook wiring cordon writes itself, for a CLI that reads it
 * from a settings file in the agent's writable home (Gemini CLI's
 * ~/.gemini/settings.json): the whole file is cordon's, written afresh
 * before every chat run, so whatever the agent wrote there last run
 * (its hook unwired, hooks off) is gone.  Written through held dir fds,
 * never following a link the agent left.  Claude Code and Codex take
 * their hooks on the command line (the shipped manifests' args), which
 * the agent cannot change.  Gemini CLI's project settings, in the run's
 * working dir and writable, outrank that file key by key: a run is
 * refused while they set the keys that could unwire the hook
 * (hookcfg_project).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook.h"
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
	const char *b = ag->ag_mf.m_bin;

	if (b != NULL && strrchr(b, '/') != NULL)
		b = strrchr(b, '/') + 1;
	return b != NULL && strcmp(b, "gemini") == 0 &&
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
	    hook_gemini_settings(name,
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

/* The project settings' bytes (fewer than bufsz), or -1 with errno. */
static ssize_t
hookcfg_read(int dfd, char *buf, size_t bufsz)
{
	struct stat st;
	ssize_t n = 0;
	size_t len = 0;
	int fd, e = 0;

	if ((fd = openat(dfd, HOOKCFG_SETTINGS,
		 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) == -1)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL; /* a FIFO or a device: never read */
	while (e == 0 && len < bufsz &&
	       ((n = read(fd, buf + len, bufsz - len)) > 0 ||
		   (n == -1 && errno == EINTR)))
		if (n > 0)
			len += (size_t)n;
	if (e == 0 && n == -1)
		e = errno;
	else if (e == 0 && len == bufsz)
		e = EFBIG;
	close(fd);
	errno = e;
	return e == 0 ? (ssize_t)len : -1;
}

int
hookcfg_project(
    const struct agent *ag, const char *cwd, char *why, size_t whysz)
{
	static char buf[HOOK_PROJECT_MAX];
	const char *bad = NULL;
	struct stat st;
	ssize_t n;
	int cfd, gfd = -1;

	if (!hookcfg_wanted(ag) || cwd == NULL)
		return 0;
	/* No dir, no .gemini: nothing for the CLI to read (SBX-1 reports
	 * a missing root). */
	if ((cfd = open(cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return 0;
	/* A link the CLI would follow is refused, never read through. */
	if (fstatat(cfd, HOOKCFG_DIR, &st, AT_SYMLINK_NOFOLLOW) == -1)
		bad = errno == ENOENT ? NULL : errno_name(errno);
	else if (S_ISLNK(st.st_mode))
		bad = errno_name(ELOOP);
	else if (S_ISDIR(st.st_mode) &&
		 (gfd = openat(cfd, HOOKCFG_DIR,
		      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		bad = errno_name(errno);
	close(cfd);
	if (gfd != -1) {
		n = hookcfg_read(gfd, buf, sizeof(buf));
		if (n == -1 && errno != ENOENT)
			bad = errno_name(errno);
		else if (n != -1)
			bad = hook_gemini_project(buf, (size_t)n);
		close(gfd);
	}
	if (bad == NULL)
		return 0;
	if (strcmp(bad, "hooks") == 0 || strcmp(bad, "hooksConfig") == 0)
		snprintf(why, whysz,
		    "hooks: project settings %s/" HOOKCFG_DIR
		    "/" HOOKCFG_SETTINGS " set %s, which outranks cordon's "
		    "gate hook; remove that key",
		    cwd, bad);
	else
		snprintf(why, whysz,
		    "hooks: project settings %s/" HOOKCFG_DIR
		    "/" HOOKCFG_SETTINGS " cannot be checked (%s); make "
		    "them a plain file of strict JSON",
		    cwd, bad);
	return -1;
}
