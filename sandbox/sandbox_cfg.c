/*
 * SBX-8: the config files of a CLI that reads hooks, programs or its
 * environment from the agent's home, read-only in every spawn of that
 * agent.  cordon writes its own copies outside the home (hookcfg.c); in
 * the child each copy is bound by handle over the home's file (an empty
 * dir of cordon's over a dir the CLI would load programs from), and the
 * CLI's dir is bound over itself, so the agent can neither write,
 * replace, rename over nor remove them, nor move the dir they are in,
 * while its run lasts.  A bind that cannot be made refuses the spawn.
 * The child half logs nothing and allocates nothing.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"
#include "sandbox_int.h"
#include "util.h"

/*
 * settings.json: its hooks; extensions/: each extension's hooks (which
 * run beside the gate hook and may rewrite the tool input it allowed),
 * MCP servers and SessionStart hooks, all started by the CLI itself.
 */
static const struct sbx_cfg_entry sbx_cfg_gemini[] = {
    {"settings.json", 0}, {"extensions", 1}, {NULL, 0}};
/* config.toml: hooks, notify, MCP servers, trusted projects; hooks.json:
 * more hooks; .env: Codex's own environment, its hook's too. */
static const struct sbx_cfg_entry sbx_cfg_codex[] = {
    {"config.toml", 0}, {"hooks.json", 0}, {".env", 0}, {NULL, 0}};

const char *
sandbox_cfg_dir(enum agent_cli cli)
{
	return cli == AGENT_CLI_GEMINI	? ".gemini"
	       : cli == AGENT_CLI_CODEX ? ".codex"
					: NULL;
}

const struct sbx_cfg_entry *
sandbox_cfg_files(enum agent_cli cli)
{
	static const struct sbx_cfg_entry none[] = {{NULL, 0}};

	return cli == AGENT_CLI_GEMINI	? sbx_cfg_gemini
	       : cli == AGENT_CLI_CODEX ? sbx_cfg_codex
					: none;
}

/* ---- the child: no logging, no allocation ---- */

/* dfd/name, never through a link: an O_PATH fd of a dir (isdir) or a
 * plain file, else -1 with errno. */
static int
cfg_open(int dfd, const char *name, int isdir)
{
	struct stat st;
	int fd, e;

	fd = openat(dfd, name,
	    O_PATH | O_NOFOLLOW | O_CLOEXEC | (isdir ? O_DIRECTORY : 0));
	if (fd == -1)
		return -1;
	if (fstat(fd, &st) == -1)
		e = errno;
	else if (isdir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode))
		return fd;
	else
		e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	close(fd);
	errno = e;
	return -1;
}

int
sbx_cfg_clone(const struct sandbox_run *sx, int trees[SBX_CFG_FILES_MAX],
    struct stat srcs[SBX_CFG_FILES_MAX])
{
	const struct sandbox_plan *pl = sx->sx_plan;
	const struct sbx_cfg_entry *f = sandbox_cfg_files(pl->pl_cfgcli);
	int dfd, fd, i;

	for (i = 0; i < SBX_CFG_FILES_MAX; i++)
		trees[i] = -1;
	if (pl->pl_cfgcli == AGENT_CLI_NONE)
		return 0;
	if (pl->pl_cfgdir == NULL) {
		errno = ENOENT;
		return SBX_STEP_HOOKCFG;
	}
	if ((dfd = open(pl->pl_cfgdir,
		 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return SBX_STEP_HOOKCFG;
	for (i = 0; f[i].ce_name != NULL && i < SBX_CFG_FILES_MAX; i++) {
		/* cordon's own, never a link nor but a file (a dir). */
		if ((fd = cfg_open(dfd, f[i].ce_name, f[i].ce_dir)) == -1 ||
		    fstat(fd, &srcs[i]) == -1)
			return SBX_STEP_HOOKCFG;
		trees[i] = sbx_tree_clone(fd, SBX_MNT_DEAD, 0);
		close(fd);
		if (trees[i] == -1)
			return SBX_STEP_HOOKCFG;
	}
	close(dfd);
	return 0;
}

int
sbx_cfg_attach(const struct sandbox_run *sx, int trees[SBX_CFG_FILES_MAX],
    const struct stat srcs[SBX_CFG_FILES_MAX])
{
	const struct sandbox_plan *pl = sx->sx_plan;
	const char *dir = sandbox_cfg_dir(pl->pl_cfgcli);
	const struct sbx_cfg_entry *f = sandbox_cfg_files(pl->pl_cfgcli);
	struct stat st;
	int hfd, cfd, fd, m, i;

	if (pl->pl_cfgcli == AGENT_CLI_NONE)
		return 0;
	/* The home as the run sees it: its own write root, attached. */
	if (pl->pl_roots.r_home == NULL ||
	    (hfd = open(pl->pl_roots.r_home,
		 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return SBX_STEP_HOOKCFG;
	/*
	 * The CLI's dir over itself, writable: a mountpoint the agent can
	 * neither rename nor remove, so the files below stay where the CLI
	 * looks for them.
	 */
	if ((cfd = cfg_open(hfd, dir, 1)) == -1 ||
	    (m = sbx_tree_clone(cfd, SBX_MNT_RO, 1)) == -1 ||
	    sbx_attach_fd(m, cfd) == -1)
		return SBX_STEP_HOOKCFG;
	close(cfd);
	/* Through the pin just made, each file covered by cordon's. */
	if ((cfd = cfg_open(hfd, dir, 1)) == -1)
		return SBX_STEP_HOOKCFG;
	for (i = 0; f[i].ce_name != NULL && i < SBX_CFG_FILES_MAX; i++) {
		if ((fd = cfg_open(cfd, f[i].ce_name, f[i].ce_dir)) == -1)
			return SBX_STEP_HOOKCFG;
		m = trees[i];
		trees[i] = -1;
		if (sbx_attach_fd(m, fd) == -1)
			return SBX_STEP_HOOKCFG;
		close(fd);
		/* What the CLI will open there is cordon's copy. */
		if (fstatat(cfd, f[i].ce_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			return SBX_STEP_HOOKCFG;
		if (st.st_dev != srcs[i].st_dev ||
		    st.st_ino != srcs[i].st_ino) {
			errno = EXDEV;
			return SBX_STEP_HOOKCFG;
		}
	}
	close(cfd);
	close(hfd);
	return 0;
}
