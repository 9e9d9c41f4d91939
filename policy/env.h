/*
 * Child environment rules (SP-4, SP-5) and DATA.md's env tables.  The
 * child env is built, never inherited.  Pure: no I/O, no globals but
 * const tables; env_build allocates only what it hands back.
 */
#ifndef CORDON_POLICY_ENV_H
#define CORDON_POLICY_ENV_H

#include <stddef.h>

struct manifest;

/* DATA.md tables (NULL-terminated). */
extern const char *const env_allowlist[];  /* 27 names */
extern const char *const env_allow_prefix; /* "CORDON_" */
extern const char *const env_forced[];	   /* "NO_COLOR=1", "FORCE_COLOR=0" */
extern const char *const env_known_secrets[]; /* 32 names */
extern const char *const env_runtime_exact[];
extern const char *const env_runtime_prefix[];

/* SP-5: manifest env key ^[A-Z_][A-Z0-9_]*$ and not runtime-control. */
int env_name_ok(const char *name);
/* SP-5: runtime-control name (LD_*, NODE_OPTIONS, PYTHON*, ...). */
int env_runtime_control(const char *name);
/*
 * SP-5: a known secret name or a secret-looking name (token, api_key,
 * secret, password, ..., *_PAT, *_DSN, database URLs).  The name-pattern
 * rule itself lives in common/redact.c (redact_key_secretish), since the
 * output scrubber, below policy/, applies the same rule to key=value.
 */
int env_secretish(const char *name);
/*
 * 1 if the name passes from the spawner's environment to every agent
 * (the allowlist or CORDON_*): never a name to map a secret to (SEC-3).
 */
int env_shared(const char *name);

/*
 * SP-4/SP-5: build the child env from parent_env (NULL-terminated
 * "NAME=value" strings): allowlisted names and CORDON_* unless secretish
 * (parent values with \n or \r are skipped), the forced pair, the
 * manifest env on top, PWD=cwd, then secrets under their manifest names
 * (secret_names[i]=secret_values[i]; for a `network: proxy` agent, a
 * secret a credential route holds is EGRESS_PLACEHOLDER instead, and
 * each route's baseUrlEnv its URL on the run's proxy: EG-3).  A secret value
 * with \n or \r, a secret name the manifest's secrets: does not map, or a cwd
 * that is not absolute fails.  Returns 0 and a NULL-terminated malloc'd envp
 * (free with strv_free), or -1 with *errcode one of "invalid-argument",
 * "out-of-memory".
 */
int env_build(const char *const *parent_env, const struct manifest *,
    const char *cwd, const char *const *secret_names,
    const char *const *secret_values, size_t nsecrets, char ***envp_out,
    const char **errcode);

/*
 * SBX-9: the agent's private home in an env env_build made: HOME, the
 * XDG base dirs beneath it and each CLI's own dir variable
 * (env_home_vars), replacing inherited values; a name the manifest's
 * env: sets keeps the manifest's value.  0, or -1 (out of memory, or a
 * home that is not absolute or holds \n, \r): *envp is then freed and
 * NULL.
 */
struct env_home_var {
	const char *hv_name;
	const char *hv_rel; /* beneath the home; "" for the home itself */
};
extern const struct env_home_var env_home_vars[]; /* ended by NULL */
int env_home(char ***envp, const struct manifest *, const char *home);
/*
 * SBX-8, SBX-9: 0 if the manifest's env: sets none of env_home_vars, or
 * each to exactly what env_home would (its place in home); else -1 with
 * why naming the first other one and the value cordon would use: a CLI
 * dir cordon neither writes nor checks (its hook config, its env) is
 * refused, and so is a HOME or XDG dir outside the private home.
 */
int env_home_foreign(
    const struct manifest *, const char *home, char *why, size_t whysz);

/*
 * SBX-8: each of names (NULL-ended) the env does not have yet, set to ""
 * (a name the env has keeps its value).  0, or -1 (out of memory): *envp
 * is then freed and NULL.
 */
int env_pin(char ***envp, const char *const *names);

#endif
