/*
 * Secrets (SEC-1, SEC-2): a manifest's secrets resolved from cordond's
 * environment, then from secrets.yaml; by the spawner before each run and
 * by `cordon check` (which keeps only the names of those missing).
 */
#ifndef CORDON_LOAD_SECRETS_H
#define CORDON_LOAD_SECRETS_H

#include <stddef.h>

#include "cordon_limits.h"
#include "manifest.h"

struct redact_keys;

struct secret_set {
	char **ss_names;
	char **ss_values;
	size_t ss_n;
	struct redact_keys *ss_keys; /* SP-11: by secrets_keys, or NULL */
	size_t ss_nmissing;
	const char *ss_missing[LIM_SECRETS_MAX]; /* names (the manifest's) */
};

/*
 * Resolve every secret the manifest maps, from the environment and then
 * from the secrets file at path.  0 with all values, or -1 with
 * ss_missing naming what could not be found (or on allocation failure,
 * with ss_nmissing 0).  The caller always calls secrets_clear(), which
 * wipes the values and their keys.
 */
int secrets_resolve(
    const char *path, const struct manifest *, struct secret_set *);
/*
 * SP-11: the scrubber's keys for the resolved values, derived once here
 * for every redactor of the run or action (its output, stderr tail,
 * prompt note, gate calls).  0, or -1 (allocation failure).
 */
int secrets_keys(struct secret_set *);
void secrets_clear(struct secret_set *);

#endif
