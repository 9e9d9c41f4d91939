/*
 * The map of the command gate's pieces (internal to policy/): what
 * gate.c (verdicts), gate_path.c (resolution, protected paths),
 * gate_shape.c (destructive shapes), gate_rules.c and gate_net.c (the
 * per-command rules) and gate_tables.c (DATA.md's tables) share.
 */
#ifndef CORDON_POLICY_GATE_IMPL_H
#define CORDON_POLICY_GATE_IMPL_H

#include <stddef.h>

#include "gate.h"
#include "schema.h"
#include "shlex.h"

#define G_PATH_MAX  4096
#define G_CWDS_MAX  4 /* cwds a line may visit with cd */
#define G_DEPTH_MAX 2 /* nested sh -c */

/* One command's (or one line's) verdict while it is being decided. */
struct gres {
	enum gate_verdict r_v;
	const char *r_rule; /* a fixed code */
	char r_verb[65];
	int r_destructive;
};

/* One gate_check call. */
struct gctx {
	const struct gate_policy *gp;
	const struct protect_ctx *pc;
	gate_resolve_fn resolve;
	void *arg;
	const char *ws;
	/* the cwds a command may run in (a cd that fails keeps the old) */
	char cwd[G_CWDS_MAX][G_PATH_MAX];
	size_t ncwd;
	int oom;
};

/* ---- gate_tables.c: DATA.md "Command gate defaults" ---- */

extern const char *const g_allow[],
    *const g_refused[],
	*const g_builtins[],
	    *const g_opaque[],
		*const g_wrappers[],
		    *const g_shells[],
			*const g_filecmds[],
			    *const g_rm_targets[],
				*const g_chmod_wide[],
				    *const g_blockdev[],
					*const g_pkill_names[],
					    *const g_pkill_opts[],
						*const g_env_exact[],
						    *const g_env_prefix[],
							*const g_git_globarg[],
							    *const g_git_globflag[],
								*const g_git_badopt[],
								    *const g_git_badkey[],
									*const g_git_config_ok[],
									    *const g_git_badsub[],
										*const g_curl_long[],
										    *const g_wget_long[],
											*const g_curl_bad[],
											    *const g_wget_bad[],
												*const g_docker_bad[],
												    *const g_docker_badsub
													[],
													    *const g_secret_samples
														[];
extern const char g_curl_short[], g_wget_short[];

int gate_in_vec(char *const *, size_t, const char *);
int gate_has_prefix(const char *, const char *);
int gate_prefix_list(const char *const *, const char *);
int gate_caseprefix_list(const char *const *, const char *);
int gate_name_ok(const char *);
const char *gate_base_name(const char *);
int gate_path_within(const char *, const char *);

/* ---- gate.c ---- */

/* Raise r to v (deny beats ask beats allow); the first rule sticks. */
void gate_res_set(struct gres *, enum gate_verdict, const char *);
/* The word after the wrapper at k (sudo, env, timeout, ...) and its
 * options, assignments and durations: the wrapped command's index. */
size_t gate_wrapper_skip(const struct sh_cmd *, size_t k);
/* The first word after assignments, and after wrappers when unwrap. */
size_t gate_cmd_start(const struct sh_cmd *, int unwrap);
/* Decide a shell line (sh -c recurses here with depth + 1). */
void gate_line(struct gctx *, const char *, size_t, int depth, struct gres *);

/* ---- gate_path.c ---- */

int gate_resolve_at(struct gctx *, const char *, size_t, char *);
size_t gate_ncwd(struct gctx *, const char *);
int gate_query(const char *, unsigned, char *, size_t);
int gate_check_path(struct gctx *, const char *, unsigned, struct gres *);
int gate_check_tree(struct gctx *, const char *, unsigned, struct gres *);
int gate_inside_ws(struct gctx *, const char *, unsigned);
int gate_looks_path(const char *);

/* ---- gate_shape.c ---- */

struct gate_rmflags {
	int rf_rec, rf_force, rf_nopreserve;
};

void gate_rm_flags(const struct sh_word *, size_t, struct gate_rmflags *);
int gate_is_operand(const struct sh_word *, size_t, int *);
int gate_shape_cmd(struct gctx *, const struct sh_cmd *);
int gate_forkbomb(const char *, size_t);

/* ---- gate_rules.c, gate_net.c: -1 when refused (r says why) ---- */

int gate_rule_chmod(const struct sh_word *, size_t, struct gres *);
int gate_rule_pkill(const struct sh_word *, size_t, struct gres *);
int gate_rule_kill(const struct sh_word *, size_t, struct gres *);
int gate_rule_git(struct gctx *, const struct sh_word *, size_t, struct gres *);
int gate_rule_docker(
    struct gctx *, const struct sh_word *, size_t, struct gres *);
int gate_rule_shell(
    struct gctx *, const struct sh_word *, size_t, int, struct gres *);
int gate_rule_cd(struct gctx *, const struct sh_word *, size_t, struct gres *);
int gate_rule_rm(struct gctx *, const struct sh_word *, size_t, struct gres *);
int gate_rule_net(
    struct gctx *, const struct sh_word *, size_t, int wget, struct gres *);
#endif
