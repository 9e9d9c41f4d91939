/*
 * Agent manifests (SP-15): the agentic-os fields plus cordon's secrets,
 * promptVia, limits and sandbox.  manifest_parse() validates a json-c
 * tree from yaml_load_*() strictly; pure (no I/O, no globals).
 */
#ifndef CORDON_POLICY_MANIFEST_H
#define CORDON_POLICY_MANIFEST_H

#include <stddef.h>

#include "cordon_limits.h"
#include "egress.h"
#include "gate.h"
#include "policy.h"

struct json_object;

#define MF_IGNORED_MAX 4 /* agentic-os keys cordon does not act on */

/* SP-16: plain text, or one CLI's JSON event stream (streamjson.h). */
enum mf_transport { MF_SUBPROCESS, MF_STREAMJSON, MF_CODEXJSON, MF_GEMINIJSON };
enum mf_output { MF_OUT_TEXT, MF_OUT_JSON };
enum mf_prompt_via { MF_PROMPT_ARGV, MF_PROMPT_STDIN };
enum mf_network { MF_NET_ALLOW, MF_NET_NONE, MF_NET_PROXY };
enum mf_isolation { MF_ISO_LANDLOCK, MF_ISO_NAMESPACE };

/* Every char ** below is NULL-terminated and also counted. */
struct mf_env {
	char *e_name;  /* ^[A-Z_][A-Z0-9_]*$, not runtime-control */
	char *e_value; /* <= 4096 chars, no \n \r, no secret */
};

struct mf_secret {
	char *s_env;  /* env name the child sees, ^[A-Z_][A-Z0-9_]*$ */
	char *s_path; /* dotted path in secrets.yaml, e.g. openrouter.apiKey */
};

struct mf_action {
	char *a_id;	  /* ^[a-z0-9][a-z0-9-]{0,31}$ */
	char *a_label;	  /* 1-40 chars */
	char **a_command; /* non-empty argv; [0] the bin as written */
	size_t a_ncommand;
	long a_timeout_ms;	 /* default 5000, <= 60000 */
	char *a_hint;		 /* 1-20 chars, or NULL if absent */
	enum mf_output a_output; /* default text */
};

struct mf_limits { /* SP-7, SP-9: defaults filled, clamped to ceilings */
	unsigned long long l_cpu_sec;
	unsigned long long l_file_bytes;
	unsigned long long l_nofile;
	unsigned long long l_nproc;
	unsigned long long l_mem_bytes; /* 0 = no limit */
	unsigned long long l_tmp_bytes; /* the private /tmp's size */
	unsigned long long l_run_output_bytes;
	unsigned long long l_action_output_bytes;
};

/*
 * SBX-1 ... SBX-5.  Lexical checks only; the roots are resolved
 * (symlinks followed) and refuses protected ones at load: load/roots.c.
 */
struct mf_sandbox {
	int sb_present;			/* the block was written */
	enum mf_network sb_network;	/* default none (SBX-3) */
	enum mf_isolation sb_isolation; /* default landlock */
	char **sb_read_roots;		/* absolute, or "~/..." */
	size_t sb_nread;
	char **sb_write_roots; /* absent: the cwd, when there is one */
	size_t sb_nwrite;
	int sb_required; /* default 1 */
	/* MC-2: a run may ask for a disposable worktree (default off) */
	int sb_worktrees;
};

/*
 * EG-2, EG-4: the `egress:` block of a `network: proxy` agent
 * (policy/egress_mf.c).  testResolve and testAllowAddress are test-only:
 * parsed here, refused by the spawner unless cordon runs with
 * CORDON_TEST_EGRESS=1 (docs/agents.md).
 */
struct mf_egress_test {
	char et_host[EGRESS_HOST_MAX + 1]; /* lower case */
	char et_addr[EGRESS_ADDR_STR_MAX]; /* an address, as text */
};
/* EG-3: a credential route; its key is the manifest secret mr_secret. */
struct mf_route {
	struct egress_route mr_route;
	char *mr_secret;   /* a name under `secrets:`: the agent sees the
			      placeholder in it */
	char *mr_base_env; /* NULL, or the variable given the route's URL */
};
struct mf_egress {
	int eg_present;
	struct egress_rule *eg_allow; /* 1..EGRESS_ALLOW_MAX */
	size_t eg_nallow;
	unsigned int eg_max_conns;
	unsigned long long eg_max_bytes;
	unsigned int eg_idle_sec;
	struct mf_egress_test *eg_test; /* test-only */
	size_t eg_ntest;
	char eg_test_allow[EGRESS_ADDR_STR_MAX]; /* test-only; "" if absent */
	struct mf_route *eg_routes;		 /* EG-3 */
	size_t eg_nroutes;
};

struct manifest {
	char *m_name;	      /* ^[a-z0-9][a-z0-9-]{0,63}$ */
	char *m_display_name; /* NULL if absent */
	char *m_description;  /* NULL if absent */
	enum mf_transport m_transport;

	/* transportConfig */
	char *m_bin;   /* as written; the spawner resolves it on PATH */
	char **m_args; /* as written, "{prompt}" placeholders intact */
	size_t m_nargs;
	long
	    m_timeout_ms; /* subprocess default 120000; JSON streams 0 = none */
	struct mf_env *m_env;
	size_t m_nenv;
	char *m_cwd; /* absolute, or NULL if absent */

	char **m_capabilities; /* a list, or a mapping's true names */
	size_t m_ncapabilities;
	/* agentic-os keys present that cordon does not act on (SP-15) */
	struct mf_ignored {
		const char *ig_key; /* static */
		unsigned long ig_line, ig_col;
	} m_ignored[MF_IGNORED_MAX];
	size_t m_nignored;

	/* healthProbe (SP-18): default command [bin, "--version"] */
	char **m_probe_cmd;
	size_t m_nprobe_cmd;
	long m_probe_timeout_ms;   /* <= 10000 */
	long m_probe_interval_sec; /* as written; use max(15, this) */

	struct mf_action m_actions[LIM_ACTIONS_MAX];
	size_t m_nactions;

	/* cordon's additions */
	struct mf_secret *m_secrets;
	size_t m_nsecrets;
	enum mf_prompt_via m_prompt_via; /* default argv */
	struct mf_limits m_limits;
	struct mf_sandbox m_sandbox;
	struct mf_egress m_egress;     /* EG-2: with sandbox.network: proxy */
	struct gate_policy m_commands; /* SBX-6: `commands:` or defaults */
	/*
	 * SBX-9: `login:`, the argv `cordon agent login` runs ([0] the
	 * program as written), or NULL: the default for a known CLI.
	 */
	char **m_login;
	size_t m_nlogin;
};

/*
 * Validate root (a json-c object from yaml_load_*) into *out.  Collects
 * every problem (up to maxerrs, counted in *nerrs even beyond) with the
 * line:col of yaml_mark().  Returns 0 if valid; -1 if not, and then *out
 * holds nothing (it is freed).  Unknown keys, duplicate action ids,
 * secrets in args/command/env values, env names that reference a secrets
 * mapping, and transports other than subprocess|streamJson|codexJson|geminiJson
 * are refused.
 */
int manifest_parse(struct json_object *root, struct manifest *out,
    struct policy_err *errs, size_t maxerrs, size_t *nerrs);
/*
 * The same, but *out keeps what did validate even when -1 is returned
 * (members that did not are NULL or empty), for `cordon check` to look
 * further in one pass.  Never to be run: the caller always frees it.
 */
int manifest_parse_partial(struct json_object *root, struct manifest *out,
    struct policy_err *errs, size_t maxerrs, size_t *nerrs);
void manifest_free(struct manifest *);

/* 1 if `secrets:` maps an env name name. */
int manifest_secret_declared(const struct manifest *, const char *name);
/* The action with this id, or NULL. */
const struct mf_action *manifest_action(
    const struct manifest *, const char *id);
/* The string form of a transport: "subprocess", "streamJson", ... */
const char *manifest_transport_name(enum mf_transport);
/* The one lowercase name shape, ^[a-z0-9][a-z0-9-]{0,maxlen-1}$, of
 * agents, actions, routes, missions, connectors: 1 if s has it, else 0. */
int mp_name_ok(const char *s, size_t maxlen);

#endif
