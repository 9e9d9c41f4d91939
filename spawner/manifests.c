/*
 * The agent table: every agents/ YAML file loaded at start through the one
 * YAML loader and the strict manifest validator (SP-15); an invalid file
 * disables that agent only.  Also the agent's public face for API-2:
 * names, actions, readiness, missing secret names, never a value.
 * Reads only the agents directory.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "env.h"
#include "hook.h"
#include "log.h"
#include "spawner.h"
#include "util.h"
#include "yamljson.h"

#define MANIFEST_MAX_ERRS 32

static int
agents_cmp(const void *a, const void *b)
{
	const struct agent *const *x = a, *const *y = b;

	return strcmp((*x)->ag_mf.m_name, (*y)->ag_mf.m_name);
}

/* EG-1, EG-2: why a proxy agent may not load here, or NULL. */
static const char *
egress_refused(const struct manifest *mf)
{
	const struct mf_egress *e = &mf->m_egress;

	if ((e->eg_ntest > 0 || e->eg_test_allow[0] != '\0') &&
	    sp.sp_test_egress != 1)
		return "egress.testResolve and testAllowAddress are for tests "
		       "only (CORDON_TEST_EGRESS=1)";
	return NULL;
}

/* dir/file read and validated into a new agent, its manifest alone
 * filled; NULL (the problems logged) when it cannot be used. */
static struct agent *
agent_parse(const char *dir, const char *file)
{
	struct policy_err errs[MANIFEST_MAX_ERRS];
	struct json_object *root;
	struct yaml_err ye;
	struct agent *ag;
	char path[PATH_MAX];
	size_t i, nerrs = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path))
		return NULL;
	if ((root = yaml_load_file(path, &ye)) == NULL) {
		log_warnx("agents/%s:%lu:%lu: %s; agent disabled", file,
		    ye.ye_line, ye.ye_col, ye.ye_msg);
		return NULL;
	}
	if ((ag = calloc(1, sizeof(*ag))) == NULL) {
		json_object_put(root);
		return NULL;
	}
	if (manifest_parse(root, &ag->ag_mf, errs, MANIFEST_MAX_ERRS, &nerrs) ==
	    -1) {
		for (i = 0; i < nerrs && i < MANIFEST_MAX_ERRS; i++)
			log_warnx("agents/%s:%lu:%lu: %s", file,
			    errs[i].pe_line, errs[i].pe_col, errs[i].pe_msg);
		log_warnx("agents/%s is invalid; agent disabled", file);
		json_object_put(root);
		free(ag);
		return NULL;
	}
	json_object_put(root);
	return ag;
}

static void
agent_load_file(const char *dir, const char *file)
{
	struct agent *ag;
	char why[256], home[PATH_MAX];
	const char *refused, *cfg;

	if ((ag = agent_parse(dir, file)) == NULL)
		return;
	/*
	 * SBX-1, SBX-2, SBX-5: every agent gets a sandbox (the default one
	 * without a sandbox: block); roots are resolved and checked now, and
	 * an agent whose required layers this host lacks is disabled.
	 */
	if (sandbox_plan_build(&ag->ag_mf, &sp.sp_protect, &ag->ag_sb, why,
		sizeof(why)) == -1) {
		log_warnx("agents/%s: %s; agent disabled", file, why);
		goto disable;
	}
	/*
	 * SBX-9: the agent's private home, made now (a dir, 0700, through
	 * held fds), its last write root; without one, no agent.
	 */
	if (agent_home_make(sp.sp_state[0] != '\0' ? sp.sp_state : NULL,
		ag->ag_mf.m_name, home, sizeof(home)) == -1 ||
	    roots_add_home(&ag->ag_sb.pl_roots, home) == -1) {
		log_warn("agents/%s: no private home under the state dir; "
			 "agent disabled",
		    file);
		goto disable;
	}
	/* SBX-8, SBX-9: no CLI dir cordon neither writes nor checks. */
	if (env_home_foreign(&ag->ag_mf, home, why, sizeof(why)) == -1) {
		log_warnx("agents/%s: %s; agent disabled", file, why);
		goto disable;
	}
	/* SBX-8: a gate hook the CLI would give up on first, no agent. */
	if (hook_gate_check(&ag->ag_mf, why, sizeof(why)) == -1) {
		log_warnx("agents/%s: %s; agent disabled", file, why);
		goto disable;
	}
	/* SBX-8: hook wiring the agent cannot rewrite, or no agent. */
	if (hookcfg_load(
		ag, sp.sp_state[0] != '\0' ? sp.sp_state : NULL, &cfg) == -1) {
		log_warn("agents/%s: cannot write its hook config (%s); agent "
			 "disabled",
		    file, cfg);
		goto disable;
	}
	if ((refused = egress_refused(&ag->ag_mf)) != NULL) {
		log_warnx("agents/%s: %s; agent disabled", file, refused);
		goto disable;
	}
	if (ag->ag_sb.pl_reason[0] != '\0')
		log_warnx("agents/%s: sandbox weaker than asked: %s", file,
		    ag->ag_sb.pl_reason);
	if (agent_find(ag->ag_mf.m_name) != NULL ||
	    sp.sp_nagents == SPAWNER_MAX_AGENTS) {
		log_warnx("agents/%s: duplicate name or too many agents; "
			  "agent disabled",
		    file);
		goto disable;
	}
	sp.sp_agents[sp.sp_nagents++] = ag;
	log_debug("agent %s loaded", ag->ag_mf.m_name);
	return;
disable:
	sandbox_plan_free(&ag->ag_sb);
	manifest_free(&ag->ag_mf);
	free(ag);
}

static int
agent_file(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && len >= 6 &&
	       strcmp(name + len - 5, ".yaml") == 0;
}

void
agents_load(void)
{
	char **files;
	size_t i, n;

	/* What the host offers, once, before any agent is planned. */
	sandbox_host_probe();
	if ((files = dir_names(sp.sp_agents_dir, agent_file, &n)) == NULL) {
		if (errno != ENOENT)
			log_warn("agents directory");
		return;
	}
	/* In name order: past the bound, the same files are left out on
	 * every host. */
	for (i = 0; i < n; i++)
		agent_load_file(sp.sp_agents_dir, files[i]);
	dir_names_free(files, n);
	qsort(sp.sp_agents, sp.sp_nagents, sizeof(sp.sp_agents[0]), agents_cmp);
	log_info("%zu agent(s) loaded", sp.sp_nagents);
}

struct agent *
agent_find(const char *name)
{
	size_t i;

	for (i = 0; i < sp.sp_nagents; i++)
		if (strcmp(sp.sp_agents[i]->ag_mf.m_name, name) == 0)
			return sp.sp_agents[i];
	return NULL;
}

static const char *
readiness_name(enum readiness r)
{
	switch (r) {
	case RD_LIVE:
		return "live";
	case RD_DEGRADED:
		return "degraded";
	default:
		/* SP-18's three states; not probed yet counts as offline. */
		return "offline";
	}
}

static void
add_str(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(
	    o, k, v != NULL ? json_object_new_string(v) : NULL);
}

/* API-2: what the broker may show.  Secret names only, never values. */
struct json_object *
agent_json(const struct agent *ag, int full)
{
	const struct manifest *mf = &ag->ag_mf;
	struct json_object *o, *acts, *a, *rd, *miss, *has;
	struct secret_set ss;
	size_t i, j;
	int found;

	if ((o = json_object_new_object()) == NULL)
		return NULL;
	add_str(o, "name", mf->m_name);
	add_str(o, "displayName",
	    mf->m_display_name ? mf->m_display_name : mf->m_name);
	add_str(o, "description", mf->m_description);
	add_str(o, "transport", manifest_transport_name(mf->m_transport));
	acts = json_object_new_array();
	for (i = 0; i < mf->m_nactions; i++) {
		a = json_object_new_object();
		add_str(a, "id", mf->m_actions[i].a_id);
		add_str(a, "label", mf->m_actions[i].a_label);
		add_str(a, "hint", mf->m_actions[i].a_hint);
		json_object_array_add(acts, a);
	}
	json_object_object_add(o, "actions", acts);
	rd = json_object_new_object();
	add_str(rd, "status", readiness_name(ag->ag_ready));
	add_str(rd, "version", ag->ag_version[0] ? ag->ag_version : NULL);
	if (ag->ag_ready != RD_LIVE && ag->ag_ready != RD_UNKNOWN &&
	    ag->ag_why != NULL) {
		add_str(rd, "reason", ag->ag_why);
		/* SP-12: which binary, on which PATH, or under which home. */
		if (strcmp(ag->ag_why, "binary-missing") == 0 &&
		    ag->ag_detail[0] != '\0')
			add_str(rd, "detail", ag->ag_detail);
	}
	/* Before its first probe has answered an agent reads "offline"
	 * (SP-18 has three states); "probed" lets a view say "checking". */
	json_object_object_add(
	    rd, "probed", json_object_new_boolean(ag->ag_ready != RD_UNKNOWN));
	json_object_object_add(o, "readiness", rd);

	/* Resolve, keep only names and flags, wipe the values at once. */
	secrets_resolve(sp.sp_secrets, mf, &ss);
	miss = json_object_new_array();
	has = json_object_new_object();
	for (i = 0; i < mf->m_nsecrets; i++) {
		found = 0;
		for (j = 0; j < ss.ss_n; j++)
			if (strcmp(ss.ss_names[j], mf->m_secrets[i].s_env) == 0)
				found = 1;
		if (!found)
			json_object_array_add(miss,
			    json_object_new_string(mf->m_secrets[i].s_env));
		json_object_object_add(has, mf->m_secrets[i].s_env,
		    json_object_new_boolean(found));
	}
	secrets_clear(&ss);
	json_object_object_add(o, "missingSecrets", miss);
	json_object_object_add(o, "hasKey", has);
	json_object_object_add(o, "sandbox", sandbox_plan_json(&ag->ag_sb));
	if (full) {
		struct json_object *caps = json_object_new_array();

		for (i = 0; i < mf->m_ncapabilities; i++)
			json_object_array_add(caps,
			    json_object_new_string(mf->m_capabilities[i]));
		json_object_object_add(o, "capabilities", caps);
		add_str(o, "promptVia",
		    mf->m_prompt_via == MF_PROMPT_STDIN ? "stdin" : "argv");
		/*
		 * SBX-9: where its private home is, for the operator's own
		 * dashboard (a place cordon chose, not a value of the env).
		 */
		add_str(o, "home", ag->ag_sb.pl_roots.r_home);
	}
	return o;
}
