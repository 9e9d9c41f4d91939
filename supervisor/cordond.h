/*
 * cordond: the supervisor.  Reads the config, opens the listening socket,
 * makes a socketpair per edge, execs auditd, vaultd, spawner and broker
 * (in that order) with only their own fds, restarts a daemon that dies,
 * and stops them in reverse order.  The map of supervisor/.
 */
#ifndef CORDON_CORDOND_H
#define CORDON_CORDOND_H

#include <limits.h>
#include <sys/types.h>

#include "ipc.h"
#include "proc.h"

#define CORDON_MAX_ORIGINS 8

struct cordon_config {
	char cf_home[PATH_MAX];	  /* --home, or "" for XDG mode */
	char cf_config[PATH_MAX]; /* cordon.yaml */
	char cf_agents[PATH_MAX]; /* agents/ */
	char cf_audit[PATH_MAX];  /* audit dir */
	char cf_rundir[PATH_MAX]; /* token and port files */
	char cf_vault[PATH_MAX];  /* vault root */
	char cf_state[PATH_MAX];  /* the spawner's scheduler state (0700) */
	char cf_listen[64];	  /* listen address */
	int cf_port;		  /* 0 = pick one */
	int cf_allow_remote;
	char *cf_origins[CORDON_MAX_ORIGINS];
	size_t cf_norigins;
	char cf_broker_user[64]; /* when root: the broker's uid */
	const char *cf_user;	 /* --user: operator for spawner/vaultd */
	int cf_allow_root;
	int cf_debug;
	int cf_demo;
	long cf_retention_days; /* audit.retentionDays (AU-8), 0 keeps all */
	long cf_max_runs;	/* spawner.maxRuns (SP-14) */
	long cf_max_runs_agent; /* spawner.maxRunsPerAgent (SP-14) */
	long cf_jobs_keep;	/* spawner.jobsKeep (MC-3) */
	long cf_jobs_keep_mib;	/* spawner.jobsKeepMiB (MC-3) */
};

/* home.c */
int home_resolve(struct cordon_config *, const char *home);
int home_prepare(const struct cordon_config *, uid_t, gid_t);
/* Only the state dir (the agents' homes, SBX-9): `cordon agent login`. */
int home_prepare_state(const struct cordon_config *, uid_t, gid_t);
int home_sched_dir(const struct cordon_config *, char *out, size_t outsz);
int home_make_demo(const char *home);
/* A program installed with cordon: beside this executable, else in
 * libexecdir.  0, or -1 if the path does not fit. */
int cordon_program(const char *name, char *out, size_t outsz);
int config_load(struct cordon_config *); /* 0, or -1 after printing
					    "file:line:col: message" */
int home_write_private(
    const char *dir, const char *name, const char *data, uid_t, gid_t);
int home_read_private(const char *dir, const char *name, char *buf, size_t);
void home_remove_private(const char *dir, const char *name, const char *data);
int home_lock(const struct cordon_config *); /* before any write */
int home_running(const char *rundir);
int home_read_run(const char *rundir, char *tok, size_t, char *port, size_t);
/* home_safe.c (SU-5): 0, or -1 after saying what to fix */
int home_safe(const struct cordon_config *, uid_t user);
/* home_safe; in XDG mode a missing config dir made, then checked */
int home_safe_make(const struct cordon_config *, uid_t user);
int home_rundir_ours(int dfd, const char *path);
int home_stdout_private(void);

/* check.c: cordon check; audit_cli.c: cordon audit */
int cmd_check(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_status(int argc, char **argv);	 /* status.c */
int cmd_login(int argc, char **argv);	 /* status.c */
int cmd_job(int argc, char **argv);	 /* job_cli.c (MC-3) */
int cmd_worktree(int argc, char **argv); /* worktree_cli.c (MC-2) */
int cmd_token(int argc, char **argv);	 /* status.c */
int cmd_gate(int argc, char **argv);	 /* gate_cli.c (SBX-6) */

/* cordond.c */
int cordond_main(struct cordon_config *);
/* The process table as health.c reads it. */
struct daemon_view {
	enum proc_id dv_id;
	pid_t dv_pid; /* 0 when not running */
	unsigned int dv_restarts;
	unsigned int dv_gen;	  /* bumped on every start */
	struct ipc_conn *dv_conn; /* its control channel; NULL when down */
};
/* The i-th daemon in start order into *v: 1, or 0 past the last. */
int cordond_daemon(size_t i, struct daemon_view *v);
void cordond_daemon_of(enum proc_id, struct daemon_view *v);

/* health.c: MSG_HEALTH from the broker */
void health_h(struct ipc_conn *, struct ipc_msg *, void *);

/* launch.c: the command line and environment of each daemon */
#define SPAWNER_CG_FD	4 /* the delegated pids cgroup, in the spawner */
#define LAUNCH_ARGV_MAX 28
#define LAUNCH_ENVP_MAX 80 /* a few fixed, and the spawner's secrets */
/* argv for daemon id (cgroup: the spawner gets SPAWNER_CG_FD), its
 * program into path.  0, or -1 if the path does not fit. */
int launch_cmd(struct cordon_config *, enum proc_id, int cgroup, char *path,
    size_t pathsz, char *argv[LAUNCH_ARGV_MAX]);
void launch_env(
    const struct cordon_config *, enum proc_id, char *envp[LAUNCH_ENVP_MAX]);
/* CORDON_TEST_EGRESS=1: the egress test hooks (EG-2) are on. */
int launch_test_egress(void);

/* runcg.c: the runs' pids cgroup (SP-7), delegated to the spawner */
int runcg_setup(const char *user); /* its fd, or -1 (said) */
void runcg_teardown(void);

#endif
