/*
 * Between the files of the per-run sandbox only (sandbox_*.c); the rest
 * of the spawner uses sandbox.h.
 */
#ifndef CORDON_SANDBOX_INT_H
#define CORDON_SANDBOX_INT_H

#include <sys/mount.h>
#include <sys/stat.h>

#include <limits.h>
#include <stdint.h>

#include <linux/filter.h>

#include "sandbox.h"

/* sandbox_host.c: set by sandbox_host_probe, empty when not found. */
extern char sbx_cordon[PATH_MAX];
extern char sbx_init[PATH_MAX];
/* sandbox_host.c: the agent seccomp layer, by enum mf_network. */
extern struct sock_fprog sbx_bpf[3];

/* sandbox_tmp.c: the runs' dir while sandbox_tmp_open holds it; or NULL. */
const char *sbx_runs_dir(void);

/* What every mount an agent sees carries, rw or not (SBX-4). */
#define SBX_MNT_SAFE (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define SBX_MNT_RO   (MOUNT_ATTR_RDONLY | SBX_MNT_SAFE)
#define SBX_MNT_DEAD (SBX_MNT_RO | MOUNT_ATTR_NOEXEC) /* covers */

/* sandbox_mnt.c, in the child: detached mounts, attached by handle. */
int sbx_tree_clone(int fd, uint64_t set, int rw);
int sbx_tree_readonly(int m);
int sbx_tmpfs_new(unsigned long long size, const char *mode, uint64_t attrs);
int sbx_scratch_tree(
    const char *dir, unsigned long long bytes, const char *mode, uint64_t set);
int sbx_attach_fd(int m, int to);

/*
 * A path of the ruleset beneath a dir the view covers (/tmp, /run),
 * copied while the host is in view and shown again by handle.
 */
struct tmproot {
	const char *tr_path;
	int tr_tree;   /* its detached copy */
	int tr_dir;    /* a directory (else a file) */
	int tr_nested; /* beneath another such path */
};
int sbx_copy_under(const struct sandbox_run *, const char *dir,
    struct tmproot *tr, size_t max, size_t *n);
void sbx_mark_nested(struct tmproot *tr, size_t n);
int sbx_cover_mountpoints(
    int basefd, const char *dir, const struct tmproot *tr, size_t n);
int sbx_attach_under(const struct tmproot *tr, size_t n);

/*
 * sandbox_sockdirs.c, in the child (SBX-3, SBX-4): the host's /run, and
 * /var/run where it is a dir of its own, covered.  Copies of the paths
 * shown again taken while the host is in view; the covers attached once
 * it is read-only.  0, or SBX_STEP_RUNDIR (SBX_STEP_ROOT for a copy)
 * with errno set.
 */
struct sbx_runview {
	struct tmproot rv_tr[SBX_PATHS_MAX]; /* paths under /run */
	size_t rv_ntr;
	int rv_run;   /* the host's /run (O_PATH), or -1: none */
	int rv_var;   /* /var/run where not the same dir, or -1 */
	int rv_cover; /* the cover of /run, detached, read-only */
};
int sbx_run_copy(const struct sandbox_run *, struct sbx_runview *);
int sbx_run_cover(struct sbx_runview *);
/*
 * The same file (SBX-2, SBX-3): each protected dir of the operator's
 * home (policy/protect.c) that the view shows, and each dir of
 * sx_links (where one that is a link leads), covered by an empty
 * read-only tmpfs.  0, or SBX_STEP_HOMEDIR with errno set (ESTALE: a
 * dir of sx_links is not the one the spawner found).
 */
int sbx_home_cover(const struct sandbox_run *);
/* 0, or an SBX_STEP_* with errno set. */
int sbx_child_mounts(const struct sandbox_run *);

/*
 * sandbox_cfg.c, in the child (SBX-8): cordon's copies of the CLI's
 * config files, cloned read-only while their dir is in view (before
 * /tmp is covered) into trees[] (-1 past the last); then, once the home
 * is attached, its CLI dir pinned and each copy attached over its file
 * there, checked by inode.  0, or SBX_STEP_HOOKCFG with errno set.
 */
int sbx_cfg_clone(const struct sandbox_run *, int trees[SBX_CFG_FILES_MAX],
    struct stat srcs[SBX_CFG_FILES_MAX]);
int sbx_cfg_attach(const struct sandbox_run *, int trees[SBX_CFG_FILES_MAX],
    const struct stat srcs[SBX_CFG_FILES_MAX]);

/* sandbox_scan.c, in the child: 0, or an SBX_STEP_* with errno set. */
int sbx_scan_roots(const struct sandbox_run *, int shadow, int emptyfd);

#endif
