/*
 * The command line and environment cordond starts each daemon with
 * (SEC-2, SP-4, SP-7, SP-14, AU-8): only what that daemon needs, and a
 * built environment, so nothing of cordond's leaks into the daemons.
 * Reads the config, cordond's environment and the agents/ manifests'
 * secrets: keys; touches nothing.
 */
#include <dirent.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cordond.h"
#include "env.h"
#include "log.h"
#include "util.h"
#include "yamljson.h"

/*
 * The spawner's extra environment (SEC-2, SP-4): cordond's PATH and HOME
 * (agents resolve their binary and home from them; with --user as root,
 * that user's home, which SBX-2 then protects), TMPDIR (where the
 * runs' private tmps go; agents get their own) and every variable
 * that some agents/ YAML file maps under `secrets:` (ENV_NAME: dotted.path),
 * so secrets may come from cordond's own environment.  Nothing else of
 * ours reaches it.  Appends to envp from ne, at most max; returns ne.
 */
#define SPAWNER_ENV_MAX 64
_Static_assert(LAUNCH_ENVP_MAX >= 16 + SPAWNER_ENV_MAX, "envp bound");
static size_t
spawner_env(
    const struct cordon_config *conf, char **envp, size_t ne, size_t max)
{
	static char *held[SPAWNER_ENV_MAX];
	static size_t nheld;
	struct json_object *root, *sec;
	struct yaml_err ye;
	struct dirent *de;
	char file[PATH_MAX];
	const char *v;
	size_t i, len;
	DIR *d;

	for (i = 0; i < nheld; i++)
		free(held[i]);
	nheld = 0;
#define SPAWNER_ENV_ADD(name)                                                  \
	do {                                                                   \
		if ((v = getenv(name)) != NULL && ne < max &&                  \
		    nheld < SPAWNER_ENV_MAX &&                                 \
		    asprintf(&held[nheld], "%s=%s", name, v) != -1)            \
			envp[ne++] = held[nheld++];                            \
	} while (0)
	SPAWNER_ENV_ADD("PATH");
	/*
	 * The home the agents run in, and the one SBX-2 protects: with
	 * --user, that user's, never root's (whose HOME we may have).
	 */
	if (getuid() == 0 && conf->cf_user != NULL) {
		struct passwd *pw = getpwnam(conf->cf_user);

		if (pw != NULL && pw->pw_dir != NULL && pw->pw_dir[0] == '/' &&
		    ne < max && nheld < SPAWNER_ENV_MAX &&
		    asprintf(&held[nheld], "HOME=%s", pw->pw_dir) != -1)
			envp[ne++] = held[nheld++];
	} else
		SPAWNER_ENV_ADD("HOME");
	SPAWNER_ENV_ADD("TMPDIR");
	if ((d = opendir(conf->cf_agents)) == NULL)
		return ne;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 6 ||
		    strcmp(de->d_name + len - 5, ".yaml") != 0 ||
		    snprintf(file, sizeof(file), "%s/%s", conf->cf_agents,
			de->d_name) >= (int)sizeof(file) ||
		    (root = yaml_load_file(file, &ye)) == NULL)
			continue;
		if (json_object_object_get_ex(root, "secrets", &sec) &&
		    json_object_is_type(sec, json_type_object)) {
			json_object_object_foreach (sec, k, val) {
				(void)val;
				/*
				 * A name the manifest check accepts: never
				 * one that every agent gets (SEC-3).
				 */
				if (!env_name_ok(k) || env_shared(k))
					continue;
				for (i = 0; i < ne; i++)
					if (strncmp(envp[i], k, strlen(k)) ==
						0 &&
					    envp[i][strlen(k)] == '=')
						break;
				if (i == ne)
					SPAWNER_ENV_ADD(k);
			}
		}
		json_object_put(root);
	}
	closedir(d);
#undef SPAWNER_ENV_ADD
	return ne;
}

int
launch_test_egress(void)
{
	const char *v = getenv("CORDON_TEST_EGRESS");

	return v != NULL && strcmp(v, "1") == 0;
}

/* The spawner's own arguments after argv[0 .. na - 1]; the new na. */
static size_t
launch_spawner(struct cordon_config *conf, int cgroup,
    char *argv[LAUNCH_ARGV_MAX], size_t na)
{
	static char runs[16], runs_agent[16]; /* SP-14 bounds */
	static char jobs[16], jobs_mib[16];   /* MC-3 retention */
	static char cgfd[16];

	snprintf(runs, sizeof(runs), "%ld", conf->cf_max_runs);
	snprintf(
	    runs_agent, sizeof(runs_agent), "%ld", conf->cf_max_runs_agent);
	argv[na++] = "--home";
	argv[na++] = conf->cf_home[0] ? conf->cf_home : conf->cf_agents;
	argv[na++] = "--max-runs";
	argv[na++] = runs;
	argv[na++] = "--max-runs-per-agent";
	argv[na++] = runs_agent;
	snprintf(jobs, sizeof(jobs), "%ld", conf->cf_jobs_keep);
	snprintf(jobs_mib, sizeof(jobs_mib), "%ld", conf->cf_jobs_keep_mib);
	argv[na++] = "--jobs-keep";
	argv[na++] = jobs;
	argv[na++] = "--jobs-keep-mib";
	argv[na++] = jobs_mib;
	/* SBX-2: no agent root may reach these either. */
	argv[na++] = "--protect";
	argv[na++] = conf->cf_audit;
	argv[na++] = "--protect";
	argv[na++] = conf->cf_vault;
	/* Jobs and agents' homes: home_prepare made it. */
	argv[na++] = "--state-dir";
	argv[na++] = conf->cf_state;
	/* SP-7: its delegated pids cgroup, as fd 4. */
	if (cgroup) {
		snprintf(cgfd, sizeof(cgfd), "%d", SPAWNER_CG_FD);
		argv[na++] = "--pids-cgroup-fd";
		argv[na++] = cgfd;
	}
	return na;
}

int
launch_cmd(struct cordon_config *conf, enum proc_id id, int cgroup, char *path,
    size_t pathsz, char *argv[LAUNCH_ARGV_MAX])
{
	char prog[32];
	size_t na = 0;

	snprintf(prog, sizeof(prog), "cordon-%s", proc_name(id));
	if (cordon_program(prog, path, pathsz) == -1)
		return -1;
	argv[na++] = path;
	switch (id) {
	case PROC_AUDITD: {
		static char days[16]; /* AU-8, from audit.retentionDays */

		snprintf(days, sizeof(days), "%ld", conf->cf_retention_days);
		argv[na++] = "--audit-dir";
		argv[na++] = conf->cf_audit;
		argv[na++] = "--retention-days";
		argv[na++] = days;
		break;
	}
	case PROC_VAULTD:
		argv[na++] = "--vault";
		argv[na++] = conf->cf_vault;
		break;
	case PROC_SPAWNER:
		na = launch_spawner(conf, cgroup, argv, na);
		break;
	case PROC_SCHED: { /* MI-1: its own dir, home_prepare made it */
		static char dir[PATH_MAX];

		if (home_sched_dir(conf, dir, sizeof(dir)) == -1)
			return -1;
		argv[na++] = "--state-dir";
		argv[na++] = dir;
		break;
	}
	default:
		break;
	}
	/*
	 * EG-2 test hook: egress.testResolve/testAllowAddress honoured, in
	 * the spawner and egressd, only when cordon itself runs with
	 * CORDON_TEST_EGRESS=1; loud in the log and in health.
	 */
	if (launch_test_egress() &&
	    (id == PROC_EGRESSD || id == PROC_SPAWNER)) {
		argv[na++] = "--test-egress";
		argv[na++] = "1";
	}
	/* EG-3 test hook: the CA egressd trusts for routes instead of the
	 * system store (CORDON_TEST_EGRESS_CA, an absolute file). */
	if (launch_test_egress() && id == PROC_EGRESSD &&
	    getenv("CORDON_TEST_EGRESS_CA") != NULL &&
	    getenv("CORDON_TEST_EGRESS_CA")[0] == '/') {
		argv[na++] = "--test-ca";
		argv[na++] = getenv("CORDON_TEST_EGRESS_CA");
	}
	if (getuid() == 0) {
		if (id == PROC_BROKER) {
			argv[na++] = "--user";
			argv[na++] = conf->cf_broker_user;
		} else if (conf->cf_user != NULL) {
			argv[na++] = "--user";
			argv[na++] = (char *)conf->cf_user;
		}
	}
	if (conf->cf_debug)
		argv[na++] = "--debug";
	argv[na] = NULL;
	return 0;
}

void
launch_env(const struct cordon_config *conf, enum proc_id id,
    char *envp[LAUNCH_ENVP_MAX])
{
	/* CORDON_TEST_CLOCK_FILE: the scheduler's test clock; the
	 * CORDON_TEST_WORKTREE_* ones: a slow worktree step (test hooks). */
	static const char *const keep[] = {"JOURNAL_STREAM", "ASAN_OPTIONS",
	    "UBSAN_OPTIONS", "CORDON_SECCOMP_DEBUG", "CORDON_TEST_CLOCK_FILE",
	    "CORDON_TEST_WORKTREE_DELAY_MS", "CORDON_TEST_WORKTREE_CHECKOUT_MS",
	    "CORDON_TEST_WORKTREE_STEP_MS"};
	static char envbuf[nitems(keep)][512];
	const char *v;
	size_t i, ne = 0;

	/* A built environment: nothing of ours leaks into the daemons. */
	envp[ne++] = "LANG=C";
	envp[ne++] = "TZ=UTC"; /* no /etc/localtime read after confinement */
	for (i = 0; i < nitems(keep); i++) {
		if ((v = getenv(keep[i])) == NULL)
			continue;
		snprintf(envbuf[i], sizeof(envbuf[i]), "%s=%s", keep[i], v);
		envp[ne++] = envbuf[i];
	}
	if (id == PROC_SPAWNER)
		ne = spawner_env(conf, envp, ne, LAUNCH_ENVP_MAX - 1);
	envp[ne] = NULL;
}
