/*
 * SBX-8: files an agent can write that would reach its gate hook, read
 * before each run and by `cordon check`.  Claude Code's global config
 * (.claude/.claude.json in its home) is read whatever
 * --setting-sources= says, and its env reaches the hook process: a run
 * is refused while it sets env.  Gemini CLI's files outrank the hook
 * wiring cordon writes (hookcfg.c).  Its project
 * settings (.gemini/settings.json in the run's working dir) are merged
 * over cordon's user settings key by key; a .env file it finds (from
 * the working dir up to /, then in its home) is loaded into its own
 * environment, which every hook process inherits: a variable there
 * (LD_PRELOAD, BASH_ENV for the hook's bash) would run the agent's own
 * code in place of `cordon gate`.  The spawner pins those variables
 * empty in a Gemini CLI run (policy/hookenv.c), and Gemini CLI sets no
 * variable it already has; a .env naming one the pins cannot cover is
 * refused.  Both places are writable by the agent (the project, its
 * home), so a run is refused while either could unwire the hook, naming
 * the file.  Read through held fds, never through a link.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hook.h"
#include "hookenv.h"
#include "hookproj.h"
#include "roots.h"

#define HOOKPROJ_DIR	  ".gemini"
#define HOOKPROJ_SETTINGS "settings.json"
#define HOOKPROJ_ENV	  ".env"
#define HOOKPROJ_CLAUDE	  ".claude/.claude.json" /* CLAUDE_CONFIG_DIR's */

/* The bytes of dfd/name, a plain file (fewer than bufsz), or -1 with
 * errno (ELOOP for a link, never followed). */
static ssize_t
hookproj_read(int dfd, const char *name, char *buf, size_t bufsz)
{
	struct stat st;
	ssize_t n = 0;
	size_t len = 0;
	int fd, e = 0;

	if ((fd = openat(dfd, name,
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

/* The project settings: NULL, or what is wrong with them. */
static const char *
hookproj_settings(const char *cwd)
{
	static char buf[HOOK_PROJECT_MAX];
	const char *bad = NULL;
	struct stat st;
	ssize_t n;
	int cfd, gfd = -1;

	/* No dir, no .gemini: nothing for the CLI to read (SBX-1 reports
	 * a missing root). */
	if ((cfd = open(cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return NULL;
	/* A link the CLI would follow is refused, never read through. */
	if (fstatat(cfd, HOOKPROJ_DIR, &st, AT_SYMLINK_NOFOLLOW) == -1)
		bad = errno == ENOENT ? NULL : errno_name(errno);
	else if (S_ISLNK(st.st_mode))
		bad = errno_name(ELOOP);
	else if (S_ISDIR(st.st_mode) &&
		 (gfd = openat(cfd, HOOKPROJ_DIR,
		      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		bad = errno_name(errno);
	close(cfd);
	if (gfd != -1) {
		n = hookproj_read(gfd, HOOKPROJ_SETTINGS, buf, sizeof(buf));
		if (n == -1 && errno != ENOENT)
			bad = errno_name(errno);
		else if (n != -1)
			bad = hook_gemini_project(buf, (size_t)n);
		close(gfd);
	}
	return bad;
}

/*
 * dir's .gemini/.env and .env: 0 if each is absent, a dir (Gemini CLI
 * reads nothing from it) or a plain file naming nothing the pins leave
 * open; else 1, with the file in out and what is wrong in *bad.
 */
static int
hookproj_env_in(const char *dir, char *out, size_t outsz, const char **bad)
{
	static const char *const names[] = {
	    HOOKPROJ_DIR "/" HOOKPROJ_ENV, HOOKPROJ_ENV};
	static char buf[HOOK_PROJECT_MAX];
	const char *sep = strcmp(dir, "/") == 0 ? "" : "/";
	struct stat st;
	ssize_t n;
	size_t i;
	int dfd;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (snprintf(out, outsz, "%s%s%s", dir, sep, names[i]) >=
		    (int)outsz) {
			*bad = errno_name(ENAMETOOLONG);
			return 1;
		}
		if (lstat(out, &st) == -1) {
			if (errno == ENOENT || errno == ENOTDIR)
				continue;
			*bad = errno_name(errno);
			return 1;
		}
		if (S_ISDIR(st.st_mode))
			continue;
		/* The file's own dir, then the file, never through a link:
		 * the CLI would follow one to what the sandbox shows there. */
		if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
		    -1) {
			*bad = errno_name(errno);
			return 1;
		}
		n = hookproj_read(dfd, names[i], buf, sizeof(buf));
		close(dfd);
		if (n == -1) {
			*bad = errno_name(errno);
			return 1;
		}
		n = hookenv_dotenv_bad(buf, (size_t)n);
		explicit_bzero(buf, sizeof(buf)); /* an app's .env holds keys */
		if (n != 0) {
			*bad = NULL;
			return 1;
		}
	}
	return 0;
}

/*
 * Every .env Gemini CLI could load (it loads the first it finds), from
 * cwd up to /, then home: 1 at the first that leaves the hook open.
 */
static int
hookproj_env(const char *cwd, const char *home, char *out, size_t outsz,
    const char **bad)
{
	char dir[PATH_MAX], *slash;

	if (snprintf(dir, sizeof(dir), "%s", cwd) >= (int)sizeof(dir)) {
		snprintf(out, outsz, "%s", "the working dir");
		*bad = errno_name(ENAMETOOLONG);
		return 1;
	}
	for (;;) {
		if (hookproj_env_in(dir, out, outsz, bad))
			return 1;
		if (strcmp(dir, "/") == 0 ||
		    (slash = strrchr(dir, '/')) == NULL)
			break;
		if (slash == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
	}
	return hookproj_env_in(home, out, outsz, bad);
}

/*
 * Claude Code's global config in its config dir (the home's .claude,
 * SBX-9): NULL if absent, else what is wrong with it (hook.h).
 */
static const char *
hookproj_claude(const char *home)
{
	const char *bad = NULL;
	char *buf;
	ssize_t n;
	int hfd;

	if ((hfd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return NULL; /* no home: nothing for the CLI to read */
	if ((buf = malloc(HOOK_CLAUDE_MAX)) == NULL)
		bad = errno_name(ENOMEM);
	else if ((n = hookproj_read(
		      hfd, HOOKPROJ_CLAUDE, buf, HOOK_CLAUDE_MAX)) == -1)
		bad = errno == ENOENT ? NULL : errno_name(errno);
	else
		bad = hook_claude_config(buf, (size_t)n);
	free(buf);
	close(hfd);
	return bad;
}

int
hookproj_check(enum agent_cli cli, const char *cwd, const char *home, char *why,
    size_t whysz)
{
	char env[PATH_MAX + 16];
	const char *bad;

	if (cli == AGENT_CLI_CLAUDE && home != NULL &&
	    (bad = hookproj_claude(home)) != NULL) {
		if (strcmp(bad, "env") == 0)
			snprintf(why, whysz,
			    "hooks: Claude Code's config %s/" HOOKPROJ_CLAUDE
			    " sets env, which reaches the environment of its "
			    "gate hook; remove that key",
			    home);
		else
			snprintf(why, whysz,
			    "hooks: Claude Code's config %s/" HOOKPROJ_CLAUDE
			    " cannot be checked (%s); make it a plain file of "
			    "strict JSON of at most 1 MiB",
			    home, bad);
		return -1;
	}
	if (cli != AGENT_CLI_GEMINI || home == NULL || cwd == NULL ||
	    cwd[0] != '/')
		return 0;
	if ((bad = hookproj_settings(cwd)) != NULL) {
		if (strcmp(bad, "hooks") == 0 ||
		    strcmp(bad, "hooksConfig") == 0)
			snprintf(why, whysz,
			    "hooks: project settings %s/" HOOKPROJ_DIR
			    "/" HOOKPROJ_SETTINGS " set %s, which outranks "
			    "cordon's gate hook; remove that key",
			    cwd, bad);
		else
			snprintf(why, whysz,
			    "hooks: project settings %s/" HOOKPROJ_DIR
			    "/" HOOKPROJ_SETTINGS " cannot be checked (%s); "
			    "make them a plain file of strict JSON",
			    cwd, bad);
		return -1;
	}
	if (hookproj_env(cwd, home, env, sizeof(env), &bad)) {
		if (bad == NULL)
			snprintf(why, whysz,
			    "hooks: %s, which Gemini CLI may load into the "
			    "environment of its gate hook, names a "
			    "dynamic-loader "
			    "variable (LD_*) that would take the hook over; "
			    "remove that line",
			    env);
		else
			snprintf(why, whysz,
			    "hooks: %s, which Gemini CLI may load into the "
			    "environment of its gate hook, cannot be checked "
			    "(%s); make it a plain file of at most 64 KiB",
			    env, bad);
		return -1;
	}
	return 0;
}
