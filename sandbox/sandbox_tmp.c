/*
 * The tmp lifecycle of the runs: one dir of this spawner's under $TMPDIR
 * or /tmp (cordon-runs.XXXXXX, locked while the spawner lives) holding
 * the per-run tmp dirs, such dirs that a dead spawner of the same uid
 * left (swept at start), and the bounded, link-safe rm -r of both.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sandbox.h"
#include "sandbox_int.h"

/* The dir of the runs' private tmps, and its parent (sandbox_tmp_open). */
static char sbx_runs[PATH_MAX], sbx_runs_real[PATH_MAX];
static int sbx_runs_fd = -1, sbx_base_fd = -1;

/*
 * Emptying a dir, in bounded stack and fds: a dir RM_DEPTH below the one
 * being emptied (top) is moved up into top and picked up by the next
 * pass, so an agent's tmp of any depth goes.  Dirs are made 0700 first
 * so nothing inside can refuse; links are removed, never followed.
 */
#define RM_DEPTH      32
#define RM_PASSES_MAX 65536

/*
 * 0: moved; -1: failed.  Names the agent planted in top make us pick
 * another; if all are taken this pass, the next pass (which removes
 * them) tries again.
 */
static int
rm_move_up(int dfd, const char *name, int top)
{
	static unsigned long seq;
	char to[32];
	int i;

	for (i = 0; i < 16; i++) {
		snprintf(to, sizeof(to), ".rm.%lu", seq++);
		if (renameat2(dfd, name, top, to, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	return 0;
}

static int
rm_level(int top, int dfd, int depth, int *again)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, rc = 0, sub;

	if ((fd = dup(dfd)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	rewinddir(d); /* the dup shares dfd's offset: top's, walked before */
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			rc = -1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(dfd, de->d_name, 0) == -1)
				rc = -1;
			continue;
		}
		if (depth == RM_DEPTH) {
			if (rm_move_up(dfd, de->d_name, top) == -1)
				rc = -1;
			else
				*again = 1;
			continue;
		}
		sub = openat(dfd, de->d_name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub == -1) {
			rc = -1;
			continue;
		}
		(void)fchmod(sub, 0700);
		if (rm_level(top, sub, depth + 1, again) == -1)
			rc = -1;
		close(sub);
		/* Not empty yet: a dir below it waits for the next pass. */
		if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) == -1 &&
		    !(errno == ENOTEMPTY && *again))
			rc = -1;
	}
	closedir(d);
	return rc;
}

static int
rm_contents(int dfd)
{
	int again, passes = 0, rc;

	do {
		again = 0;
		rc = rm_level(dfd, dfd, 0, &again);
	} while (rc == 0 && again && ++passes < RM_PASSES_MAX);
	return rc == 0 && !again ? 0 : -1;
}

int
sandbox_rmtree(const char *path)
{
	int dfd, rc;

	/*
	 * Most runs leave their tmp empty: one rmdir (which never follows a
	 * link: a symlink is ENOTDIR).  Anything else takes the walk.
	 */
	if (rmdir(path) == 0 || errno == ENOENT)
		return 0;
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd == -1)
		return errno == ENOENT ? 0 : -1;
	(void)fchmod(dfd, 0700);
	rc = rm_contents(dfd);
	close(dfd);
	if (rmdir(path) == -1)
		rc = -1;
	return rc;
}

/*
 * The runs' private tmps live in one dir of this spawner's (sbx_runs),
 * flock()ed for as long as it lives.  It is made under a dot name and
 * renamed to cordon-runs.* only once locked, so a sweep never meets it
 * unlocked.  At start, every cordon-runs.* dir of our uid whose lock is
 * free is what a spawner that died (SIGKILL, a crash) left: removed.
 */
#define RUNS_PREFIX "cordon-runs."

/* 1: a dead spawner's dir, removed; -1: one that would not go; 0: not one. */
static int
runs_stale(int bfd, const char *name)
{
	struct stat st;
	int fd, rc = 0;

	fd = openat(bfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return 0;
	if (fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	    (st.st_mode & 077) == 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
		rc = rm_contents(fd) == 0 &&
			     unlinkat(bfd, name, AT_REMOVEDIR) == 0
			 ? 1
			 : -1;
	close(fd);
	return rc;
}

static void
runs_sweep(int bfd)
{
	struct dirent *de;
	DIR *d;
	int fd, gone = 0, left = 0, r;

	if ((fd = dup(bfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, RUNS_PREFIX, strlen(RUNS_PREFIX)) != 0)
			continue;
		if ((r = runs_stale(bfd, de->d_name)) == 1)
			gone++;
		else if (r == -1)
			left++;
	}
	closedir(d);
	if (gone > 0)
		log_info("sandbox: removed %d runs dir(s) a stopped spawner "
			 "left",
		    gone);
	if (left > 0)
		log_warnx("sandbox: %d runs dir(s) a stopped spawner left "
			  "could not be removed",
		    left);
}

int
sandbox_tmp_open(void)
{
	const char *base = getenv("TMPDIR");
	char tmp[PATH_MAX], *name;
	int saved;

	if (sbx_runs_fd != -1)
		return 0;
	if (base == NULL || base[0] != '/')
		base = "/tmp";
	if ((sbx_base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return -1;
	runs_sweep(sbx_base_fd);
	if (snprintf(tmp, sizeof(tmp), "%s/." RUNS_PREFIX "XXXXXX", base) >=
		(int)sizeof(tmp) ||
	    mkdtemp(tmp) == NULL)
		goto fail;
	/* ".cordon-runs.XXXXXX": ours is the same name without the dot. */
	name = strrchr(tmp, '/') + 1;
	snprintf(sbx_runs, sizeof(sbx_runs), "%s/%s", base, name + 1);
	if ((sbx_runs_fd = openat(sbx_base_fd, name,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    flock(sbx_runs_fd, LOCK_EX | LOCK_NB) == -1 ||
	    renameat2(sbx_base_fd, name, sbx_base_fd, name + 1,
		RENAME_NOREPLACE) == -1) {
		saved = errno;
		(void)unlinkat(sbx_base_fd, name, AT_REMOVEDIR);
		errno = saved;
		goto fail;
	}
	if (realpath(sbx_runs, sbx_runs_real) == NULL)
		snprintf(sbx_runs_real, sizeof(sbx_runs_real), "%s", sbx_runs);
	sbx_host.sh_private_tmp = 1;
	return 0;
fail:
	saved = errno;
	if (sbx_runs_fd != -1)
		close(sbx_runs_fd);
	close(sbx_base_fd);
	sbx_runs_fd = sbx_base_fd = -1;
	sbx_runs[0] = '\0';
	errno = saved;
	return -1;
}

const char *
sandbox_tmp_dir(void)
{
	return sbx_runs_fd != -1 ? sbx_runs_real : NULL;
}

void
sandbox_tmp_close(void)
{
	if (sbx_runs_fd == -1)
		return;
	if (rm_contents(sbx_runs_fd) == -1 ||
	    unlinkat(sbx_base_fd, strrchr(sbx_runs, '/') + 1, AT_REMOVEDIR) ==
		-1)
		log_warn("sandbox: removing the runs' tmp dir");
	close(sbx_runs_fd);
	close(sbx_base_fd);
	sbx_runs_fd = sbx_base_fd = -1;
	sbx_runs[0] = '\0';
	sbx_host.sh_private_tmp = 0;
}

const char *
sbx_runs_dir(void)
{
	return sbx_runs_fd != -1 ? sbx_runs : NULL;
}
