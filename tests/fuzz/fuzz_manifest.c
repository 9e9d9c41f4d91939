/*
 * libFuzzer target for policy/manifest.c (+ argv/env builders and the
 * gate hook's read-back, policy/hook_wire.c, on what it accepts): any YAML
 * either validates into a manifest whose invariants hold, or fails with
 * NUL-terminated messages; never a crash or leak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "argv.h"
#include "env.h"
#include "hook.h"
#include "manifest.h"
#include "yamljson.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_valid(const struct manifest *m)
{
	static const char *const penv[] = {"PATH=/bin", "GITHUB_TOKEN=x", NULL};
	const char *err;
	char **v, why[256];
	size_t i;
	int in;

	if (m->m_name == NULL || m->m_bin == NULL || m->m_args == NULL ||
	    m->m_nactions > LIM_ACTIONS_MAX ||
	    m->m_nenv > LIM_ENV_MAX_ENTRIES || m->m_probe_cmd == NULL)
		abort();
	for (i = 0; i < m->m_nactions; i++)
		if (m->m_actions[i].a_timeout_ms > LIM_ACTION_TIMEOUT_MAX_MS ||
		    m->m_actions[i].a_ncommand == 0)
			abort();
	if (m->m_limits.l_cpu_sec > LIM_CPU_SEC_MAX ||
	    m->m_limits.l_run_output_bytes > LIM_RUN_OUTPUT_MAX)
		abort();
	if (argv_build(m, "-fuzz prompt", "/c", &v, &in, &err) == 0) {
		for (i = 1; v[i] != NULL; i++)
			if (strcmp(v[i], "-fuzz prompt") == 0 &&
			    m->m_prompt_via == MF_PROMPT_ARGV) {
				/* a standalone dash prompt must follow "--" */
				size_t j;

				for (j = 1; j < i; j++)
					if (strcmp(v[j], "--") == 0)
						break;
				if (j == i)
					abort();
			}
		strv_free(v);
	}
	if (argv_redacted(m, &v) == 0)
		strv_free(v);
	/* SBX-8: the gate hook read back from the args, a string as why. */
	why[sizeof(why) - 1] = 'x';
	if (hook_gate_check(m, why, sizeof(why)) == -1 &&
	    memchr(why, '\0', sizeof(why)) == NULL)
		abort();
	if (env_build(penv, m, "/w", NULL, NULL, 0, &v, &err) == 0) {
		for (i = 0; v[i] != NULL; i++)
			if (strncmp(v[i], "GITHUB_TOKEN=", 13) == 0)
				abort();
		strv_free(v);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct policy_err errs[8];
	struct json_object *o;
	struct yaml_err yerr;
	struct manifest m;
	size_t i, n = 0;

	if ((o = yaml_load_buf((const char *)data, len, &yerr)) == NULL)
		return 0;
	if (manifest_parse(o, &m, errs, 8, &n) == 0) {
		if (n != 0)
			abort();
		check_valid(&m);
		manifest_free(&m);
	} else {
		if (n == 0)
			abort();
		for (i = 0; i < n && i < 8; i++)
			if (memchr(errs[i].pe_msg, '\0',
				sizeof(errs[i].pe_msg)) == NULL)
				abort();
	}
	json_object_put(o);
	return 0;
}
