/*
 * Child environment (SP-4, SP-5): DATA.md's tables and the builder.  The
 * env is built from the allowlist, never inherited wholesale.  Pure: no
 * I/O, no globals but const tables; allocates only what it returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "charset.h"
#include "env.h"
#include "cordon_limits.h"
#include "manifest.h"
#include "redact.h"
#include "util.h"

const char *const env_allowlist[] = {"PATH", "HOME", "USER", "LOGNAME", "SHELL",
    "TERM", "COLORTERM", "LANG", "LC_ALL", "LC_CTYPE", "LC_COLLATE",
    "LC_MESSAGES", "LC_NUMERIC", "LC_TIME", "LC_MONETARY", "TZ", "TMPDIR",
    "TMP", "TEMP", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
    "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "HOSTNAME", "PWD", "NODE_PATH", NULL};
const char *const env_allow_prefix = "CORDON_";
const char *const env_forced[] = {"NO_COLOR=1", "FORCE_COLOR=0", NULL};
const char *const env_known_secrets[] = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY",
    "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS",
    "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT", "GITLAB_TOKEN", "HF_TOKEN",
    "HUGGINGFACE_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN", "AZURE_OPENAI_API_KEY", "AZURE_CLIENT_SECRET",
    "VERTEX_AI_API_KEY", "DATABRICKS_TOKEN", "STRIPE_API_KEY",
    "SLACK_BOT_TOKEN", "SLACK_USER_TOKEN", "NPM_TOKEN", "PYPI_TOKEN",
    "DATABASE_URL", "DATABASE_URI", "REDIS_URL", "MONGODB_URI", "POSTGRES_URL",
    "KUBECONFIG", "SENTRY_DSN", "VAULT_TOKEN", "KAGGLE_KEY", NULL};
const char *const env_runtime_exact[] = {"BASH_ENV", "ENV", "NODE_OPTIONS",
    "PYTHONHOME", "PYTHONPATH", "GIT_CONFIG", "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "PERL5OPT", "PERL5LIB",
    "RUBYOPT", "JAVA_TOOL_OPTIONS", "_", NULL};
const char *const env_runtime_prefix[] = {
    "LD_", "DYLD_", "PYTHON", "GIT_CONFIG_", NULL};

static int
in_list(const char *const *list, const char *s, size_t len)
{
	size_t i;

	for (i = 0; list[i] != NULL; i++)
		if (strlen(list[i]) == len && memcmp(list[i], s, len) == 0)
			return 1;
	return 0;
}

static int
env_runtime_control_n(const char *name, size_t len)
{
	size_t i, pl;

	if (in_list(env_runtime_exact, name, len))
		return 1;
	for (i = 0; env_runtime_prefix[i] != NULL; i++) {
		pl = strlen(env_runtime_prefix[i]);
		if (len >= pl && memcmp(name, env_runtime_prefix[i], pl) == 0)
			return 1;
	}
	return 0;
}

int
env_runtime_control(const char *name)
{
	return name != NULL && env_runtime_control_n(name, strlen(name));
}

int
env_name_ok(const char *name)
{
	size_t len;

	if (name == NULL)
		return 0;
	len = strlen(name);
	return charset_shape(name, len, "A-Z_", "A-Z0-9_", 1, 128) &&
	       !env_runtime_control_n(name, len);
}

static int
env_secretish_n(const char *name, size_t len)
{
	return in_list(env_known_secrets, name, len) ||
	       redact_key_secretish(name, len);
}

int
env_secretish(const char *name)
{
	return name != NULL && env_secretish_n(name, strlen(name));
}

static int
env_shared_n(const char *name, size_t len)
{
	size_t pl = strlen(env_allow_prefix);

	return in_list(env_allowlist, name, len) ||
	       (len > pl && memcmp(name, env_allow_prefix, pl) == 0);
}

int
env_shared(const char *name)
{
	return name != NULL && env_shared_n(name, strlen(name));
}

/* Parent names that may pass (SP-4): allowlist or CORDON_*, minus PWD
 * (set from cwd) and anything secret-looking (SP-5). */
static int
parent_pass(const char *name, size_t len)
{
	if (len == 3 && memcmp(name, "PWD", 3) == 0)
		return 0;
	return env_shared_n(name, len) && !env_secretish_n(name, len);
}

static int
value_ok(const char *v)
{
	return strpbrk(v, "\n\r") == NULL;
}

struct envv {
	char **v;
	size_t n, cap;
	int oom;
};

/* Set NAME=value, replacing an earlier NAME. */
static void
envv_set(struct envv *e, const char *name, size_t nlen, const char *value)
{
	size_t i, vlen = strlen(value);
	char *s, **nv;

	if (e->oom)
		return;
	if ((s = malloc(nlen + 1 + vlen + 1)) == NULL) {
		e->oom = 1;
		return;
	}
	memcpy(s, name, nlen);
	s[nlen] = '=';
	memcpy(s + nlen + 1, value, vlen + 1);
	for (i = 0; i < e->n; i++)
		if (strncmp(e->v[i], s, nlen + 1) == 0) {
			explicit_bzero(e->v[i], strlen(e->v[i]));
			free(e->v[i]);
			e->v[i] = s;
			return;
		}
	if (e->n + 2 > e->cap) {
		size_t nc = e->cap ? e->cap * 2 : 32;

		if ((nv = reallocarray(e->v, nc, sizeof(char *))) == NULL) {
			free(s);
			e->oom = 1;
			return;
		}
		e->v = nv;
		e->cap = nc;
	}
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
}

/* The value of NAME in e, or NULL. */
static const char *
envv_get(const struct envv *e, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, n) == 0 && e->v[i][n] == '=')
			return e->v[i] + n + 1;
	return NULL;
}

/* A manifest env entry; "~/x" names x under the child's HOME, as sandbox
 * roots do (an agent's state dir beside its write root).  -1: no
 * absolute HOME to expand against. */
static int
env_set_manifest(struct envv *e, const struct mf_env *me)
{
	const char *home;
	char *joined;
	size_t n;

	if (strncmp(me->e_value, "~/", 2) != 0) {
		envv_set(e, me->e_name, strlen(me->e_name), me->e_value);
		return 0;
	}
	if ((home = envv_get(e, "HOME")) == NULL || home[0] != '/')
		return -1;
	n = strlen(home) + strlen(me->e_value);
	if ((joined = malloc(n)) == NULL) {
		e->oom = 1;
		return 0;
	}
	(void)snprintf(joined, n, "%s%s", home, me->e_value + 1);
	envv_set(e, me->e_name, strlen(me->e_name), joined);
	free(joined);
	return 0;
}

/* EG-3: the secret is a route's key (the run has a proxy). */
static int
env_routed(const struct manifest *m, const char *name)
{
	size_t i;

	if (m->m_sandbox.sb_network != MF_NET_PROXY)
		return 0;
	for (i = 0; i < m->m_egress.eg_nroutes; i++)
		if (strcmp(m->m_egress.eg_routes[i].mr_secret, name) == 0)
			return 1;
	return 0;
}

/* EG-3: each route's baseUrlEnv, the route's URL on the run's proxy. */
static void
env_route_urls(struct envv *e, const struct manifest *m)
{
	const struct mf_route *mr;
	char url[64];
	size_t i;

	if (m->m_sandbox.sb_network != MF_NET_PROXY)
		return;
	for (i = 0; i < m->m_egress.eg_nroutes; i++) {
		mr = &m->m_egress.eg_routes[i];
		if (mr->mr_base_env == NULL)
			continue;
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/%s",
		    EGRESS_PROXY_PORT, mr->mr_route.ro_name);
		envv_set(e, mr->mr_base_env, strlen(mr->mr_base_env), url);
	}
}

int
env_build(const char *const *parent_env, const struct manifest *m,
    const char *cwd, const char *const *secret_names,
    const char *const *secret_values, size_t nsecrets, char ***envp_out,
    const char **errcode)
{
	struct envv e = {0};
	const char *eq;
	size_t i;

	*envp_out = NULL;
	*errcode = "invalid-argument";
	if (cwd == NULL || cwd[0] != '/' || !value_ok(cwd) || m == NULL)
		return -1;
	for (i = 0; i < nsecrets; i++)
		if (secret_names[i] == NULL || secret_values[i] == NULL ||
		    !env_name_ok(secret_names[i]) ||
		    !value_ok(secret_values[i]) ||
		    /* only under a name the manifest maps */
		    !manifest_secret_declared(m, secret_names[i]))
			return -1;
	for (i = 0; i < m->m_nenv; i++)
		if (!env_name_ok(m->m_env[i].e_name) ||
		    !value_ok(m->m_env[i].e_value))
			return -1;
	for (i = 0; parent_env != NULL && parent_env[i] != NULL; i++) {
		if ((eq = strchr(parent_env[i], '=')) == NULL ||
		    !parent_pass(parent_env[i], (size_t)(eq - parent_env[i])) ||
		    !value_ok(eq + 1))
			continue;
		envv_set(
		    &e, parent_env[i], (size_t)(eq - parent_env[i]), eq + 1);
	}
	for (i = 0; env_forced[i] != NULL; i++) {
		eq = strchr(env_forced[i], '=');
		envv_set(
		    &e, env_forced[i], (size_t)(eq - env_forced[i]), eq + 1);
	}
	for (i = 0; i < m->m_nenv; i++)
		if (env_set_manifest(&e, &m->m_env[i]) == -1) {
			strv_free(e.v);
			return -1;
		}
	envv_set(&e, "PWD", 3, cwd);
	/* EG-3: a routed secret is egressd's; the agent gets a placeholder
	 * and the route's URL. */
	for (i = 0; i < nsecrets; i++)
		envv_set(&e, secret_names[i], strlen(secret_names[i]),
		    env_routed(m, secret_names[i]) ? EGRESS_PLACEHOLDER
						   : secret_values[i]);
	env_route_urls(&e, m);
	if (e.oom) {
		strv_free(e.v);
		*errcode = "out-of-memory";
		return -1;
	}
	*envp_out = e.v;
	*errcode = NULL;
	return 0;
}

/*
 * SBX-9: where each agent CLI keeps its state, pointed into the agent's
 * own home.  Gemini CLI puts its .gemini beneath GEMINI_CLI_HOME.
 */
const struct env_home_var env_home_vars[] = {
    {"HOME", ""},
    {"XDG_CONFIG_HOME", "/.config"},
    {"XDG_CACHE_HOME", "/.cache"},
    {"XDG_DATA_HOME", "/.local/share"},
    {"XDG_STATE_HOME", "/.local/state"},
    {"CLAUDE_CONFIG_DIR", "/.claude"},
    {"CODEX_HOME", "/.codex"},
    {"GEMINI_CLI_HOME", ""},
    {NULL, NULL},
};

/* An env built earlier, to add to in place. */
static int
envv_open(struct envv *e, char **v)
{
	if (v == NULL)
		return -1;
	for (e->n = 0; v[e->n] != NULL; e->n++)
		;
	e->v = v;
	e->cap = e->n + 1;
	return 0;
}

/* Hand it back; on out of memory free it and give NULL, -1. */
static int
envv_close(struct envv *e, char ***envp)
{
	*envp = e->v;
	if (e->oom) {
		strv_free(e->v);
		*envp = NULL;
		return -1;
	}
	return 0;
}

int
env_home(char ***envp, const struct manifest *m, const char *home)
{
	struct envv e = {0};
	char buf[4096];
	size_t i, j;
	int own;

	if (envv_open(&e, *envp) == -1)
		return -1;
	if (home == NULL || home[0] != '/' || !value_ok(home))
		e.oom = 1;
	for (i = 0; !e.oom && env_home_vars[i].hv_name != NULL; i++) {
		for (own = 0, j = 0; j < m->m_nenv; j++)
			if (strcmp(m->m_env[j].e_name,
				env_home_vars[i].hv_name) == 0)
				own = 1;
		if (own)
			continue;
		if (snprintf(buf, sizeof(buf), "%s%s", home,
			env_home_vars[i].hv_rel) >= (int)sizeof(buf)) {
			e.oom = 1;
			break;
		}
		envv_set(&e, env_home_vars[i].hv_name,
		    strlen(env_home_vars[i].hv_name), buf);
	}
	return envv_close(&e, envp);
}

int
env_home_foreign(
    const struct manifest *m, const char *home, char *why, size_t whysz)
{
	char want[4096];
	size_t i, j;

	for (j = 0; j < m->m_nenv; j++)
		for (i = 0; env_home_vars[i].hv_name != NULL; i++) {
			if (strcmp(m->m_env[j].e_name,
				env_home_vars[i].hv_name) != 0)
				continue;
			if (snprintf(want, sizeof(want), "%s%s", home,
				env_home_vars[i].hv_rel) < (int)sizeof(want) &&
			    strcmp(m->m_env[j].e_value, want) == 0)
				break;
			snprintf(why, whysz,
			    "env: %s: not the agent's private home (%s), "
			    "where cordon writes and checks its CLI's config; "
			    "remove it",
			    m->m_env[j].e_name, want);
			return -1;
		}
	return 0;
}

int
env_pin(char ***envp, const char *const *names)
{
	struct envv e = {0};
	size_t i, j, nl;
	int have;

	if (envv_open(&e, *envp) == -1)
		return -1;
	for (i = 0; !e.oom && names[i] != NULL; i++) {
		nl = strlen(names[i]);
		for (have = 0, j = 0; j < e.n; j++)
			if (strncmp(e.v[j], names[i], nl) == 0 &&
			    e.v[j][nl] == '=')
				have = 1;
		if (!have)
			envv_set(&e, names[i], nl, "");
	}
	return envv_close(&e, envp);
}
