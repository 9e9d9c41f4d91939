/*
 * The per-run sandbox of every agent child (SBX-1 ... SBX-5): what this
 * host offers (probed once), what each agent gets (a plan built at load),
 * and the steps run in the child between fork and execve.  The child
 * half logs nothing: a failed step travels back to the spawner through
 * the spawn helper's status pipe as {step, errno}.
 */
#ifndef CORDON_SANDBOX_H
#define CORDON_SANDBOX_H

#include <sys/types.h>

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "agentcli.h"
#include "confine.h"
#include "manifest.h"
#include "roots.h"
#include "spawn_helper.h"

struct json_object;

/* Layers, as health names them (sandbox_layer_names). */
#define SBX_L_USERNS   0x0001u
#define SBX_L_MOUNTNS  0x0002u /* + read-only nosuid,nodev view, own /tmp */
#define SBX_L_PIDNS    0x0004u /* + a fresh /proc */
#define SBX_L_NETNS    0x0008u
#define SBX_L_CAPS     0x0010u
#define SBX_L_NNP      0x0020u
#define SBX_L_LANDLOCK 0x0040u
#define SBX_L_LL_NET   0x0080u /* ABI >= 4: TCP bind/connect denied */
#define SBX_L_LL_SCOPE 0x0100u /* ABI >= 6: signals, abstract unix */
#define SBX_L_SECCOMP  0x0200u
#define SBX_L_SC_NET   0x0400u /* socket(): AF_UNIX only */
#define SBX_L_PRIV_TMP 0x0800u
#define SBX_L_SECRETS  0x1000u /* secret-looking files shadowed/refused */
#define SBX_L_LL_LOG   0x2000u /* ABI >= 7: denials logged */
#define SBX_L_PIDS_CG  0x4000u /* SP-7: the run's own pids cgroup */

/*
 * Secret-file scan of the write roots, at every spawn: beyond either bound
 * the run is refused.  Sized for a workspace with node_modules; the
 * child pays the walk before execve (docs/PERFORMANCE.md has its cost).
 */
#define SBX_SCAN_MAX_ENTRIES 100000
#define SBX_SCAN_MAX_DEPTH   32

/*
 * In the child, before execve only: the socket on which the seccomp
 * listener ("n"), the gate's FIFO dir ("g", SBX-8) and, for network:
 * proxy, the proxy's listener ("p", EG-1) go back to the spawner, one
 * tagged byte and fd each (fd 3 is the gate channel).
 */
#define SBX_NOTIFY_FD 4
/* In the child, before execve only: its run's cgroup.procs (SP-7). */
#define SBX_CGROUP_FD 5
/*
 * In cordon-init (pid 1 of a run's pid namespace): where it reports the
 * agent's wait status to the spawner; the agent never has it.
 */
#define SBX_INIT_FD 6

/* Write roots of a run: the manifest's and the agent's home (SBX-9). */
#define SBX_WRITE_MAX (LIM_ROOTS_MAX + 1)
/* Landlock rules per run: system table + roots + tmp + bin + cordon. */
#define SBX_PATHS_MAX (32 + LIM_ROOTS_MAX + SBX_WRITE_MAX + 3)

/* Protected dirs of the home that are links, per run (SBX-3). */
#define SBX_LINKS_MAX 24

/* Child steps (SPAWN_STEP_HOOK_BASE + n), named by sandbox_step_name. */
enum sbx_step {
	SBX_STEP_UIDMAP = SPAWN_STEP_HOOK_BASE + 1,
	SBX_STEP_PRIVATE,
	SBX_STEP_ROOT, /* a root cannot be opened or bound */
	SBX_STEP_READONLY,
	SBX_STEP_WRITABLE,
	SBX_STEP_TMP,
	SBX_STEP_PROC,
	SBX_STEP_SCAN_BOUND,
	SBX_STEP_SECRET_FILE,
	SBX_STEP_SHADOW,
	SBX_STEP_CHDIR,
	SBX_STEP_CAPS,
	SBX_STEP_NNP,
	SBX_STEP_LL_RULESET,
	SBX_STEP_LL_RESTRICT,
	SBX_STEP_SECCOMP,
	SBX_STEP_NOTIFY,  /* handing the seccomp listener to the spawner */
	SBX_STEP_HIDE,	  /* covering cordon's socket dir (systemd mode) */
	SBX_STEP_CGROUP,  /* the run's pids cgroup: made, or joined (SP-7) */
	SBX_STEP_GATE,	  /* the gate's FIFO dir (SBX-8) */
	SBX_STEP_PROXY,	  /* EG-1: lo up, the proxy listener, handed over */
	SBX_STEP_HOOKCFG, /* SBX-8: the CLI's config files bound read-only */
	SBX_STEP_RUNDIR,  /* SBX-3, SBX-4: the host's /run covered */
	SBX_STEP_HOMEDIR, /* SBX-2, SBX-3: the home's protected dirs covered */
	SBX_STEP_MAX
};

/*
 * SBX-8: CLIs that read hooks, programs or their environment from files
 * in the agent's home (sandbox_cfg.c).  Each has one dir there (its
 * ".gemini", ".codex"), pinned in every spawn (a mountpoint: no rename,
 * no rmdir) but writable for the CLI's own state, and entries in it
 * that only cordon writes: a run sees cordon's copy, read-only (a file
 * cordon wrote, or an empty dir over one the CLI would load programs
 * from).  The CLI is agent_cli's; one without such a dir (Claude Code)
 * has none of this.
 */
#define SBX_CFG_FILES_MAX 4
struct sbx_cfg_entry {
	const char *ce_name; /* in the CLI's dir; NULL ends a list */
	int ce_dir;	     /* cordon's empty dir, else cordon's file */
};
/* Its dir under the home (".gemini"), or NULL for none. */
const char *sandbox_cfg_dir(enum agent_cli);
/* Its read-only entries in that dir, ended by a NULL name. */
const struct sbx_cfg_entry *sandbox_cfg_files(enum agent_cli);

struct sandbox_host {
	int sh_landlock_abi; /* -1: unavailable */
	int sh_userns;	     /* a user namespace can be created */
	int sh_seccomp;	     /* filters load (the spawner runs under one) */
	int sh_private_tmp;  /* sandbox_tmp_open made the runs' tmp dir */
	/*
	 * SP-7: cordond delegated a pids cgroup (each run gets a child
	 * group); without one, a spawner running as root outside systemd
	 * refuses every run (sh_pids_required).
	 */
	int sh_pids_cg;
	int sh_pids_required;
	int sh_pids_systemd; /* under systemd: the unit's TasksMax bounds us */
};

extern struct sandbox_host sbx_host;

/* What one agent gets; built at load. */
struct sandbox_plan {
	enum mf_isolation pl_isolation;
	enum mf_network pl_network;
	unsigned int pl_want;	/* SBX_L_* the manifest's settings need */
	unsigned int pl_layers; /* what this host gives it */
	int pl_required;
	char pl_reason[160]; /* fixed text: which layers are missing */
	const struct mf_egress *pl_egress; /* network: proxy (EG-2): the
					      manifest's, which outlives us */
	struct roots pl_roots;
	/*
	 * SBX-8: a CLI whose config in the home can run or unwire hooks,
	 * and the dir of cordon's own copies of those files (set at load,
	 * freed with the plan), bound read-only over the home's in every
	 * spawn of the agent.
	 */
	enum agent_cli pl_cfgcli; /* AGENT_CLI_NONE: no entries */
	char *pl_cfgdir;
	/* SBX-2: the operator's home, whose protected dirs runs see covered */
	char pl_home[PATH_MAX];
};

/* Per run: prepared in the spawner, applied in the child. */
struct sandbox_run {
	const struct sandbox_plan *sx_plan;
	uid_t sx_uid;
	gid_t sx_gid;
	unsigned long sx_clone; /* CLONE_NEW* for the spawn helper */
	const char *sx_cwd;
	char sx_tmp[PATH_MAX];		 /* the run's private tmp dir, in
					    sandbox_tmp_open's; empty when the run
					    gets a tmpfs */
	unsigned long long sx_tmp_bytes; /* that tmpfs's size (SP-7) */
	char sx_runview[PATH_MAX];	 /* a root spawner's per-run dir
					    for the view's /run; else empty
					    (sandbox_sockdirs.c) */
	struct confine_path sx_paths[SBX_PATHS_MAX];
	size_t sx_npaths;
	char **sx_envp; /* the run's env with TMPDIR/TMP/TEMP = private tmp */
	int sx_cgroup;	/* 1: join the run's cgroup on SBX_CGROUP_FD first */
	const char *sx_init; /* cordon-init, for a run in a pid namespace */
	int sx_gate; /* SBX-8: make GATE_FIFO_DIR, send it on SBX_NOTIFY_FD */
	char *sx_own[3];
	/*
	 * SBX-3: the dirs the home's protected links lead to, resolved
	 * here, with the dev and inode the child must find there to cover
	 * them (sandbox_sockdirs.c).
	 */
	struct sbx_link {
		char *lk_path;
		dev_t lk_dev;
		ino_t lk_ino;
	} sx_links[SBX_LINKS_MAX];
	size_t sx_nlinks;
};

/* Once at start, after the spawner confined itself. */
void sandbox_host_probe(void);
/*
 * Before sandbox_host_probe, for programs built elsewhere than the
 * spawner (the benches): the dir holding cordon and cordon-init.
 */
void sandbox_helpers_dir(const char *dir);
/*
 * SBX-8: the absolute path of `cordon` as every run sees it (beside the
 * spawner, else in the bindir), which hook wiring names; or NULL.
 */
const char *sandbox_cordon(void);
/*
 * Once at start: sweep the runs' tmp dirs that dead spawners of our uid
 * left under $TMPDIR (or /tmp), then make and lock our own.  0, or -1
 * with errno: every run is then refused at sandbox_run_prepare.  At exit
 * sandbox_tmp_close removes it with whatever runs left in it.
 */
int sandbox_tmp_open(void);
void sandbox_tmp_close(void);
/* That dir, resolved, while open (SBX-2: no root may reach it); or NULL. */
const char *sandbox_tmp_dir(void);
/*
 * Under systemd: the dir of cordon's sockets, which namespace-isolation
 * runs see covered by an empty read-only tmpfs (an agent shares the
 * spawner's uid and would pass as the spawner there).  dir must outlive
 * every run; NULL hides nothing.
 */
void sandbox_hide_dir(const char *dir);
struct json_object *sandbox_host_json(void);
/* SP-7: {on, required, state} of the runs' pids cgroup, for health. */
struct json_object *sandbox_pids_json(void);

/*
 * At load: 0 and *pl filled (roots resolved), or -1 and a fixed-shape
 * reason in why (the agent is then disabled).
 */
int sandbox_plan_build(const struct manifest *, const struct protect_ctx *,
    struct sandbox_plan *, char *why, size_t whysz);
void sandbox_plan_free(struct sandbox_plan *);
struct json_object *sandbox_plan_json(const struct sandbox_plan *);

/*
 * Before a spawn: 0, or -1 with errno.  The per-run tmp exists after a
 * success; sandbox_run_end removes it (fd-based, never following links).
 */
int sandbox_run_prepare(struct sandbox_run *, const struct sandbox_plan *,
    const char *bin, const char *cwd, char *const *envp,
    unsigned long long tmp_bytes);
void sandbox_run_end(struct sandbox_run *);

/* The spawn helper's hook. */
int sandbox_child(void *arg);

/*
 * What every agent may read and execute, the system and nothing of the
 * operator's: the table, its length in *n.  A worktree run's git steps
 * get it too (MC-2).
 */
const struct confine_path *sandbox_system_paths(size_t *n);

/* "landlock_restrict_self", "uid_map", ...; NULL when unknown. */
const char *sandbox_step_name(int step);

/* ---- the parent's side of a child (sandbox_io.c) ---- */

/*
 * SP-7: the rlimits of a child of a plan with these layers, into rl;
 * their number.  RLIMIT_NPROC only in a user namespace of its own.
 */
#define SBX_RLIMITS_MAX 6
size_t sandbox_rlimits(const struct mf_limits *, unsigned int layers,
    struct spawn_rlimit rl[SBX_RLIMITS_MAX]);
/*
 * What the child sent on SBX_NOTIFY_FD before execve, one tagged fd
 * each: its seccomp listener ("n") into *notify, the gate's FIFO dir
 * ("g", SBX-8) into *gatedir, a proxy run's listener ("p", EG-1) into
 * *proxy (each -1 before; proxy may be NULL where no proxy is made).
 * 0, or -1 if anything else came.
 */
int sandbox_recv_fds(int sock, int *notify, int *gatedir, int *proxy);
/* "seccomp: NAME" for a syscall number of arch into out. */
void sandbox_syscall_name(uint32_t arch, long nr, char *out, size_t outsz);
/*
 * A call the agent's seccomp layer handed to listener (ptrace, bpf, ...):
 * refused (EPERM) and named into name; the caller ends the child.
 */
enum sbx_notify {
	SBX_NOTIFY_FAILED = -1, /* could not read it: end the child anyway */
	SBX_NOTIFY_NONE,	/* nothing to answer (its caller died) */
	SBX_NOTIFY_GONE,    /* no process holds the filter: stop listening */
	SBX_NOTIFY_REFUSED, /* refused, named in name */
};
int sandbox_notify_answer(int listener, char *name, size_t namesz);

/* rm -r of path's contents and path, by fd, never following a link. */
int sandbox_rmtree(const char *path);

#endif
