/*
 * cordon check [--home DIR]: load every agents/NAME.yaml with the same
 * loader and validator the spawner uses, print every problem as
 * FILE:LINE:COL: message, exit 1 if any (2 on bad usage).  Sandbox roots
 * are resolved and checked against the protected set exactly as the
 * spawner does at load (SBX-2).  Missions (the sibling missions/ dir) go
 * through the spawner's own loader (spawner/mission_load.c), against the
 * valid manifests.  Reads only.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cordond.h"
#include "../spawner/mission_load.h"
#include "../spawner/roots.h"
#include "manifest.h"
#include "util.h"
#include "yamljson.h"

#define CHECK_MAX_FILES 256
#define CHECK_MAX_ERRS	64

/* Problems in file order. */
static int
check_errcmp(const void *a, const void *b)
{
	const struct policy_err *x = a, *y = b;

	if (x->pe_line != y->pe_line)
		return x->pe_line < y->pe_line ? -1 : 1;
	if (x->pe_col != y->pe_col)
		return x->pe_col < y->pe_col ? -1 : 1;
	return 0;
}

static int
check_is_yaml(const char *n)
{
	size_t l = strlen(n);

	return n[0] != '.' && l > 5 && strcmp(n + l - 5, ".yaml") == 0;
}

/* One manifest file; returns the number of problems printed. */
static size_t
check_file(const char *path, const struct protect_ctx *pc, char **names,
    size_t *nnames)
{
	struct policy_err errs[CHECK_MAX_ERRS];
	struct roots r;
	char why[PATH_MAX];
	struct yaml_err yerr;
	struct json_object *root, *nv;
	struct manifest m;
	size_t i, n = 0;
	unsigned long l, c;

	memset(&yerr, 0, sizeof(yerr));
	if ((root = yaml_load_file(path, &yerr)) == NULL) {
		printf("%s:%lu:%lu: %s\n", path, yerr.ye_line, yerr.ye_col,
		    yerr.ye_msg[0] ? yerr.ye_msg : "cannot be loaded");
		return 1;
	}
	if (manifest_parse(root, &m, errs, CHECK_MAX_ERRS, &n) == -1) {
		qsort(errs, n < CHECK_MAX_ERRS ? n : CHECK_MAX_ERRS,
		    sizeof(errs[0]), check_errcmp);
		for (i = 0; i < n && i < CHECK_MAX_ERRS; i++)
			printf("%s:%lu:%lu: %s\n", path, errs[i].pe_line,
			    errs[i].pe_col, errs[i].pe_msg);
		if (n > CHECK_MAX_ERRS)
			printf("%s: %zu more problems\n", path,
			    n - CHECK_MAX_ERRS);
		json_object_put(root);
		return n > 0 ? n : 1;
	}
	/* An agent name must be unique across files. */
	for (i = 0; i < *nnames; i++)
		if (strcmp(names[i], m.m_name) == 0)
			break;
	if (i < *nnames) {
		(void)json_object_object_get_ex(root, "name", &nv);
		(void)yaml_mark(nv, &l, &c);
		printf("%s:%lu:%lu: name: duplicate agent name\n", path, l, c);
		n = 1;
	} else if ((names[*nnames] = strdup(m.m_name)) != NULL)
		(*nnames)++;
	/* SBX-2: the spawner resolves the roots the same way at load. */
	if (roots_resolve(&m, pc, &r, why, sizeof(why)) == -1) {
		if (!json_object_object_get_ex(root, "sandbox", &nv) &&
		    !json_object_object_get_ex(root, "transportConfig", &nv))
			nv = root;
		(void)yaml_mark(nv, &l, &c);
		printf("%s:%lu:%lu: %s; the agent would be disabled\n", path, l,
		    c, why);
		n++;
	} else
		roots_free(&r);
	manifest_free(&m);
	json_object_put(root);
	return n;
}

struct check_names {
	char **cn_names;
	size_t cn_n;
	const char *cn_dir;
};

static int
check_agent_known(const char *name, void *arg)
{
	const struct check_names *cn = arg;
	size_t i;

	for (i = 0; i < cn->cn_n; i++)
		if (strcmp(cn->cn_names[i], name) == 0)
			return 1;
	return 0;
}

static void
check_mission_problem(const char *file, unsigned long line, unsigned long col,
    const char *msg, void *arg)
{
	const struct check_names *cn = arg;

	printf("%s/%s:%lu:%lu: %s\n", cn->cn_dir, file, line, col, msg);
}

/* MI-1: the missions dir beside agents/; returns the problems printed. */
static size_t
check_missions(const char *agents_dir, char **names, size_t nnames)
{
	struct check_names cn = {names, nnames, NULL};
	struct mission_loaded *ml;
	char dir[PATH_MAX], *slash;
	size_t n = 0, i, problems;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", agents_dir);
	if ((slash = strrchr(dir, '/')) == NULL ||
	    (size_t)(slash - dir) + sizeof("/missions") > sizeof(dir))
		return 0;
	memcpy(slash, "/missions", sizeof("/missions"));
	if (stat(dir, &st) == -1 && errno == ENOENT)
		return 0;
	cn.cn_dir = dir;
	if ((ml = calloc(MISSIONS_MAX, sizeof(*ml))) == NULL) {
		printf("%s: out of memory\n", dir);
		return 1;
	}
	problems = missions_load_dir(dir, check_agent_known,
	    check_mission_problem, &cn, ml, MISSIONS_MAX, &n);
	for (i = 0; i < n; i++)
		mission_free(&ml[i].ml_m);
	free(ml);
	if (problems == 0)
		printf("ok %zu missions\n", n);
	return problems;
}

int
cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"home", required_argument, NULL, 'H'}, {NULL, 0, NULL, 0}};
	struct cordon_config cf;
	const char *home = NULL;
	char **list, *names[CHECK_MAX_FILES], path[PATH_MAX];
	char homebuf[PATH_MAX], cfgdir[PATH_MAX], protect_buf[3][PATH_MAX];
	char *slash;
	const char *extra[3];
	struct protect_ctx pc;
	size_t nfiles = 0, nlist = 0, nnames = 0, problems = 0, i;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 'H') {
			fprintf(stderr, "usage: cordon check [--home DIR]\n");
			return 2;
		}
		home = optarg;
	}
	if (optind != argc) {
		fprintf(stderr, "usage: cordon check [--home DIR]\n");
		return 2;
	}
	memset(&cf, 0, sizeof(cf));
	if (home_resolve(&cf, home) == -1) {
		fprintf(stderr, "cordon: check: cannot resolve the home\n");
		return 2;
	}
	/* The spawner's protected set: its config dir, audit dir, vault. */
	if (config_load(&cf) == -1)
		return 1; /* it printed file:line:col */
	if (roots_protect_init(&pc, homebuf, sizeof(homebuf)) == -1) {
		fprintf(stderr, "cordon: check: no home directory\n");
		return 2;
	}
	snprintf(cfgdir, sizeof(cfgdir), "%s", cf.cf_agents);
	if ((slash = strrchr(cfgdir, '/')) != NULL && slash != cfgdir)
		*slash = '\0';
	extra[0] = cfgdir;
	extra[1] = cf.cf_audit;
	extra[2] = cf.cf_vault;
	for (i = 0; i < 3; i++) {
		if (extra[i][0] != '/')
			continue;
		if (realpath(extra[i], protect_buf[i]) == NULL)
			snprintf(protect_buf[i], PATH_MAX, "%s", extra[i]);
		pc.pc_extra[pc.pc_nextra++] = protect_buf[i];
	}
	if ((list = dir_names(cf.cf_agents, check_is_yaml, &nlist)) != NULL) {
		for (i = 0; i < nlist; i++) {
			/* In name order, the first CHECK_MAX_FILES. */
			if (nfiles == CHECK_MAX_FILES) {
				printf(
				    "%s: too many manifests\n", cf.cf_agents);
				problems++;
				break;
			}
			if (snprintf(path, sizeof(path), "%s/%s", cf.cf_agents,
				list[i]) >= (int)sizeof(path)) {
				printf("%s: name too long\n", list[i]);
				problems++;
				continue;
			}
			problems += check_file(path, &pc, names, &nnames);
			nfiles++;
		}
		dir_names_free(list, nlist);
	} else if (errno == E2BIG) {
		printf("%s: too many files\n", cf.cf_agents);
		problems++;
	} else if (errno != ENOENT) {
		printf("%s: cannot be read\n", cf.cf_agents);
		problems++;
	}
	if (problems == 0)
		printf("ok %zu agents\n", nfiles);
	problems += check_missions(cf.cf_agents, names, nnames);
	for (i = 0; i < nnames; i++)
		free(names[i]);
	if (problems > 0) {
		fprintf(stderr, "cordon: check: %zu problem%s\n", problems,
		    problems == 1 ? "" : "s");
		return 1;
	}
	return 0;
}
