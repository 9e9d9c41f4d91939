/*
 * The missions directory loader (MI-1), shared by the spawner and `cordon
 * check`: strict validation by mission_parse, then the checks that need
 * the agents and the host's zone data.  Reports problems by a callback
 * (fixed phrases, never a value of the file).  Reads only the missions
 * directory and /usr/share/zoneinfo.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mission_load.h"
#include "vaultpath.h"
#include "util.h"
#include "yamljson.h"

struct mload {
	mload_agent_fn ld_agent;
	mload_report_fn ld_report;
	void *ld_arg;
	size_t ld_problems;
};

static void
mload_at(struct mload *ld, const char *file, struct json_object *at,
    const char *code, const char *msg)
{
	unsigned long line = 0, col = 0;

	if (at != NULL)
		(void)yaml_mark(at, &line, &col);
	ld->ld_report(file, line, col, code, msg, ld->ld_arg);
	ld->ld_problems++;
}

int
mission_tz_ok(const char *tz)
{
	char path[sizeof(MISSION_ZONEINFO) + 80];
	struct stat st;

	if (tz == NULL || !mission_tz_name_ok(tz))
		return 0;
	if (strcmp(tz, "UTC") == 0)
		return 1;
	snprintf(path, sizeof(path), "%s/%s", MISSION_ZONEINFO, tz);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The node of root's key k (for line:col), else root. */
static struct json_object *
node_of(struct json_object *root, const char *k1, const char *k2)
{
	struct json_object *v, *w;

	if (!json_object_object_get_ex(root, k1, &v) || v == NULL)
		return root;
	if (k2 != NULL && json_object_is_type(v, json_type_object) &&
	    json_object_object_get_ex(v, k2, &w) && w != NULL)
		return w;
	return v;
}

/* A string member of root, or NULL. */
static const char *
str_of(struct json_object *root, const char *k1, const char *k2)
{
	struct json_object *v = node_of(root, k1, k2);

	if (v == root || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/*
 * The checks beyond the file itself; 0 or -1 (reported).  m is NULL when
 * the file has problems of its own: the agent and the zone are checked
 * on the tree then, so that one pass reports them all.
 */
static int
mload_world(struct mload *ld, const char *file, struct json_object *root,
    const struct mission *m)
{
	struct json_object *opts, *o;
	const char *agent, *tz;
	int bad = 0;
	size_t i;

	agent = m != NULL ? m->mi_agent : str_of(root, "agent", NULL);
	tz = m != NULL ? m->mi_tz : str_of(root, "trigger", "timezone");
	if (agent != NULL && vaultpath_name_ok(agent, strlen(agent)) &&
	    !ld->ld_agent(agent, ld->ld_arg)) {
		mload_at(ld, file, node_of(root, "agent", NULL),
		    "unknown-agent", "agent: no valid agent of that name");
		bad = 1;
	}
	if (tz != NULL && !mission_tz_ok(tz)) {
		mload_at(ld, file, node_of(root, "trigger", "timezone"),
		    "unknown-timezone", "trigger.timezone: unknown time zone");
		bad = 1;
	}
	/* A cron run has nobody to ask: every option needs a default. */
	if (m != NULL && m->mi_has_cron) {
		opts = node_of(root, "options", NULL);
		for (i = 0; i < m->mi_nopts; i++) {
			if (m->mi_opts[i].o_has_default)
				continue;
			o = opts;
			if (opts != root &&
			    json_object_is_type(opts, json_type_object))
				o = node_of(opts, m->mi_opts[i].o_name, NULL);
			mload_at(ld, file, o, "cron-needs-default",
			    "options: a cron mission needs a default for "
			    "every option");
			bad = 1;
			break;
		}
	}
	return bad ? -1 : 0;
}

/* One file into *out; 0, or -1 (problems reported). */
static int
mload_file(struct mload *ld, const char *dir, const char *file,
    struct mission_loaded *out)
{
	struct policy_err errs[MISSION_ERRS_MAX];
	struct json_object *root;
	struct yaml_err ye;
	char path[4096];
	size_t i, nerrs = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    (int)sizeof(path)) {
		mload_at(ld, file, NULL, "invalid", "path too long");
		return -1;
	}
	memset(&ye, 0, sizeof(ye));
	if ((root = yaml_load_file(path, &ye)) == NULL) {
		ld->ld_report(file, ye.ye_line, ye.ye_col, "yaml",
		    ye.ye_msg[0] ? ye.ye_msg : "cannot be loaded", ld->ld_arg);
		ld->ld_problems++;
		return -1;
	}
	if (mission_parse(root, &out->ml_m, errs, MISSION_ERRS_MAX, &nerrs) ==
	    -1) {
		for (i = 0; i < nerrs && i < MISSION_ERRS_MAX; i++)
			ld->ld_report(file, errs[i].pe_line, errs[i].pe_col,
			    errs[i].pe_code, errs[i].pe_msg, ld->ld_arg);
		ld->ld_problems += nerrs > 0 ? nerrs : 1;
		if (nerrs == 0)
			ld->ld_report(
			    file, 0, 0, "invalid", "invalid", ld->ld_arg);
		(void)mload_world(ld, file, root, NULL);
		json_object_put(root);
		return -1;
	}
	if (mload_world(ld, file, root, &out->ml_m) == -1) {
		mission_free(&out->ml_m);
		json_object_put(root);
		return -1;
	}
	out->ml_line = out->ml_col = out->ml_pline = out->ml_pcol = 0;
	(void)yaml_mark(node_of(root, "id", NULL), &out->ml_line, &out->ml_col);
	(void)yaml_mark(
	    node_of(root, "permissions", NULL), &out->ml_pline, &out->ml_pcol);
	json_object_put(root);
	snprintf(out->ml_file, sizeof(out->ml_file), "%s", file);
	return 0;
}

static int
is_yaml(const char *n)
{
	size_t l = strlen(n);

	return n[0] != '.' && l > 5 && l < MISSION_FILE_MAX &&
	       strcmp(n + l - 5, ".yaml") == 0;
}

size_t
missions_load_dir(const char *dir, mload_agent_fn agent_fn,
    mload_report_fn report, void *arg, struct mission_loaded *out, size_t max,
    size_t *n)
{
	struct mload ld = {agent_fn, report, arg, 0};
	unsigned char dup[MISSIONS_MAX];
	size_t nfiles = 0, i, j, k,
	       limit = max < MISSIONS_MAX ? max : MISSIONS_MAX;
	char **files;

	*n = 0;
	if ((files = dir_names(dir, is_yaml, &nfiles)) == NULL) {
		if (errno == E2BIG)
			mload_at(&ld, ".", NULL, "too-many", "too many files");
		else if (errno != ENOENT)
			mload_at(
			    &ld, ".", NULL, "unreadable", "cannot be read");
		return ld.ld_problems;
	}
	/* The first files by name load; the same ones on every host. */
	for (i = 0; i < nfiles; i++) {
		if (i >= limit)
			mload_at(&ld, files[i], NULL, "too-many",
			    "too many missions; file ignored");
		else if (mload_file(&ld, dir, files[i], &out[*n]) == 0)
			(*n)++;
	}
	dir_names_free(files, nfiles);
	/* An id used twice disables every mission that uses it. */
	memset(dup, 0, sizeof(dup));
	for (i = 0; i < *n; i++)
		for (j = i + 1; j < *n; j++)
			if (strcmp(out[i].ml_m.mi_id, out[j].ml_m.mi_id) == 0)
				dup[i] = dup[j] = 1;
	for (i = 0, k = 0; i < *n; i++) {
		if (dup[i]) {
			report(out[i].ml_file, out[i].ml_line, out[i].ml_col,
			    "duplicate-id",
			    "id: used by another mission; both disabled", arg);
			ld.ld_problems++;
			mission_free(&out[i].ml_m);
			continue;
		}
		if (k != i)
			out[k] = out[i];
		k++;
	}
	*n = k;
	return ld.ld_problems;
}
