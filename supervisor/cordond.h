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
};

/* home.c */
int home_resolve(struct cordon_config *, const char *home);
int home_prepare(const struct cordon_config *, uid_t, gid_t);
/* Only the state dir (the agents' homes, SBX-9): `cordon agent login`. */
int home_prepare_state(const struct cordon_config *, uid_t, gid_t);
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

/* check.c: cordon check; audit_cli.c: cordon audit */
int cmd_check(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_status(int argc, char **argv); /* status.c */
int cmd_login(int argc, char **argv);  /* status.c */
int cmd_token(int argc, char **argv);  /* status.c */
int cmd_gate(int argc, char **argv);   /* gate_cli.c (SBX-6) */

/* cordond.c */
int cordond_main(struct cordon_config *);

#endif
