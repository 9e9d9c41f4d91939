/*
 * What each agent child gets, decided in the spawner: the plan of an
 * agent, built once at load (the layers its manifest needs against what
 * the host offers, its roots resolved), and each run's preparation
 * before the spawn (its private tmp, its environment, its Landlock path
 * list, its namespaces).  Touches: one per-run tmp dir in the runs' dir
 * (sandbox_tmp.c), removed at sandbox_run_end.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "confine.h"
#include "log.h"
#include "msg.h"
#include "protect.h"
#include "sandbox.h"
#include "sandbox_int.h"
#include "util.h"

/* clang-format off */
/*
 * What every agent may read and execute: the system, nothing of the
 * operator's.  /proc is the agent's own in namespace mode; otherwise
 * Landlock's ptrace rule keeps other processes' files (environ, mem)
 * out of reach.  Devices: only the harmless ones; no /dev/pts (a pty
 * of the operator's would be writable) and no /dev/shm.
 */
static const struct confine_path sbx_system[] = {
	{ "/usr",	CONFINE_LL_READ | CONFINE_LL_EXEC },
	{ "/bin",	CONFINE_LL_READ | CONFINE_LL_EXEC | CONFINE_LL_OPTIONAL },
	{ "/sbin",	CONFINE_LL_READ | CONFINE_LL_EXEC | CONFINE_LL_OPTIONAL },
	{ "/lib",	CONFINE_LL_READ | CONFINE_LL_EXEC | CONFINE_LL_OPTIONAL },
	{ "/lib64",	CONFINE_LL_READ | CONFINE_LL_EXEC | CONFINE_LL_OPTIONAL },
	{ "/lib32",	CONFINE_LL_READ | CONFINE_LL_EXEC | CONFINE_LL_OPTIONAL },
	{ "/libx32",	CONFINE_LL_READ | CONFINE_LL_EXEC | CONFINE_LL_OPTIONAL },
	{ "/opt",	CONFINE_LL_READ | CONFINE_LL_EXEC | CONFINE_LL_OPTIONAL },
	{ "/etc",	CONFINE_LL_READ },
	{ "/run/systemd/resolve", CONFINE_LL_READ | CONFINE_LL_OPTIONAL },
	{ "/proc",	CONFINE_LL_READ },
	{ "/sys",	CONFINE_LL_READ | CONFINE_LL_OPTIONAL },
	{ "/dev/null",	CONFINE_LL_READ | CONFINE_LL_WRITE },
	{ "/dev/zero",	CONFINE_LL_READ | CONFINE_LL_OPTIONAL },
	{ "/dev/full",	CONFINE_LL_READ | CONFINE_LL_WRITE | CONFINE_LL_OPTIONAL },
	{ "/dev/random", CONFINE_LL_READ | CONFINE_LL_OPTIONAL },
	{ "/dev/urandom", CONFINE_LL_READ },
	{ "/dev/tty",	CONFINE_LL_READ | CONFINE_LL_WRITE | CONFINE_LL_OPTIONAL },
};

static const struct {
	unsigned int bit;
	const char *name;
} sbx_layer_names[] = {
	{ SBX_L_USERNS,	  "userns" },
	{ SBX_L_MOUNTNS,  "mountns" },
	{ SBX_L_PIDNS,	  "pidns" },
	{ SBX_L_NETNS,	  "netns" },
	{ SBX_L_CAPS,	  "caps" },
	{ SBX_L_NNP,	  "no_new_privs" },
	{ SBX_L_LANDLOCK, "landlock" },
	{ SBX_L_LL_NET,	  "landlock-net" },
	{ SBX_L_LL_SCOPE, "landlock-scope" },
	{ SBX_L_LL_LOG,	  "landlock-log" },
	{ SBX_L_SECCOMP,  "seccomp" },
	{ SBX_L_SC_NET,	  "seccomp-net" },
	{ SBX_L_PRIV_TMP, "private-tmp" },
	{ SBX_L_SECRETS,  "secret-files" },
	{ SBX_L_PIDS_CG,  "pids-cgroup" },
};

/* clang-format on */

/* ---- plan ---- */

const struct confine_path *
sandbox_system_paths(size_t *n)
{
	*n = nitems(sbx_system);
	return sbx_system;
}

static unsigned int
host_layers(enum mf_network net)
{
	unsigned int l = SBX_L_CAPS | SBX_L_NNP | SBX_L_SECRETS;
	int abi = sbx_host.sh_landlock_abi;

	if (sbx_host.sh_private_tmp)
		l |= SBX_L_PRIV_TMP;
	if (sbx_host.sh_userns)
		l |= SBX_L_USERNS | SBX_L_MOUNTNS | SBX_L_PIDNS | SBX_L_NETNS;
	if (sbx_host.sh_seccomp)
		l |= SBX_L_SECCOMP | SBX_L_SC_NET;
	if (abi >= 1)
		l |= SBX_L_LANDLOCK;
	if (abi >= 4 && net == MF_NET_NONE)
		l |= SBX_L_LL_NET;
	if (abi >= 6)
		l |= SBX_L_LL_SCOPE;
	if (abi >= 7)
		l |= SBX_L_LL_LOG;
	if (sbx_host.sh_pids_cg)
		l |= SBX_L_PIDS_CG;
	return l;
}

static void
layer_list(unsigned int bits, char *buf, size_t sz)
{
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < nitems(sbx_layer_names); i++)
		if (bits & sbx_layer_names[i].bit) {
			snprintf(buf + len, sz - len, "%s%s", len ? " " : "",
			    sbx_layer_names[i].name);
			len = strlen(buf);
		}
}

int
sandbox_plan_build(const struct manifest *mf, const struct protect_ctx *pc,
    struct sandbox_plan *pl, char *why, size_t whysz)
{
	const struct mf_sandbox *sb = &mf->m_sandbox;
	unsigned int want, have, extra;
	char missing[160];

	memset(pl, 0, sizeof(*pl));
	pl->pl_isolation = sb->sb_isolation;
	pl->pl_network = sb->sb_network;
	/* No sandbox: block at all gets the default, which requires itself. */
	pl->pl_required = sb->sb_present ? sb->sb_required : 1;
	want = SBX_L_CAPS | SBX_L_NNP | SBX_L_LANDLOCK | SBX_L_SECCOMP |
	       SBX_L_PRIV_TMP | SBX_L_SECRETS;
	/*
	 * SBX-4: every run, whatever isolation says (landlock is kept so
	 * that older manifests load; it weakens nothing now).
	 */
	want |= SBX_L_USERNS | SBX_L_MOUNTNS | SBX_L_PIDNS;
	if (pl->pl_network != MF_NET_ALLOW)
		want |= SBX_L_USERNS | SBX_L_NETNS | SBX_L_SC_NET;
	have = host_layers(pl->pl_network);
	/*
	 * EG-1: a proxy run without its own netns would reach every host,
	 * and without the seccomp layer could not hand its listener over:
	 * whatever sandbox.required says, no such run.
	 */
	if (pl->pl_network == MF_NET_PROXY) {
		pl->pl_egress = &mf->m_egress;
		if ((have & (SBX_L_NETNS | SBX_L_SECCOMP)) !=
		    (SBX_L_NETNS | SBX_L_SECCOMP)) {
			snprintf(why, whysz,
			    "sandbox: network proxy needs netns and seccomp, "
			    "which this host lacks");
			return -1;
		}
	}
	/* Never optional: sandbox_run_prepare refuses a run without it. */
	if (!(have & SBX_L_PRIV_TMP)) {
		snprintf(why, whysz, "sandbox: this host lacks private-tmp");
		return -1;
	}
	/*
	 * SBX-2 holds for the system rules too: a protected path beneath
	 * one (cordon's home under /opt, a home under /opt) would be open
	 * to every agent, and Landlock cannot carve it out.
	 */
	for (size_t i = 0; i < nitems(sbx_system); i++)
		if (protect_root_conflict(pc, sbx_system[i].cp_path) != NULL) {
			snprintf(why, whysz,
			    "sandbox: a protected path lies under %s, which "
			    "every agent may read",
			    sbx_system[i].cp_path);
			return -1;
		}
	/* Layers the ABI adds on top, never required of the host. */
	extra = have & (SBX_L_LL_NET | SBX_L_LL_SCOPE | SBX_L_LL_LOG);
	if (!(have & SBX_L_LANDLOCK))
		extra = 0;
	/*
	 * SP-7: never in want, so that sandbox.required: false cannot make
	 * a root run without it; aproc_start refuses that run instead.
	 */
	extra |= have & SBX_L_PIDS_CG;
	pl->pl_want = want;
	pl->pl_layers = (want & have) | extra;
	if ((want & ~have) != 0) {
		layer_list(want & ~have, missing, sizeof(missing));
		if (pl->pl_required) {
			snprintf(
			    why, whysz, "sandbox: this host lacks %s", missing);
			return -1;
		}
		snprintf(pl->pl_reason, sizeof(pl->pl_reason),
		    "host lacks %s (sandbox.required is false)", missing);
	}
	if (roots_resolve(mf, pc, &pl->pl_roots, why, whysz) == -1)
		return -1;
	if (pc->pc_home != NULL)
		snprintf(pl->pl_home, sizeof(pl->pl_home), "%s", pc->pc_home);
	return 0;
}

void
sandbox_plan_free(struct sandbox_plan *pl)
{
	roots_free(&pl->pl_roots);
	free(pl->pl_cfgdir);
	pl->pl_cfgdir = NULL;
}

struct json_object *
sandbox_plan_json(const struct sandbox_plan *pl)
{
	struct json_object *o = json_object_new_object(), *a;
	size_t i;

	/* What runs get, not what the manifest wrote (SBX-4, SBX-5). */
	json_object_object_add(o, "isolation",
	    json_object_new_string(
		(pl->pl_layers & SBX_L_MOUNTNS) ? "namespace" : "landlock"));
	json_object_object_add(o, "network",
	    json_object_new_string(pl->pl_network == MF_NET_NONE    ? "none"
				   : pl->pl_network == MF_NET_PROXY ? "proxy"
								    : "allow"));
	if (pl->pl_egress != NULL)
		json_object_object_add(
		    o, "egress", mf_egress_json(pl->pl_egress));
	a = json_object_new_array();
	for (i = 0; i < nitems(sbx_layer_names); i++)
		if (pl->pl_layers & sbx_layer_names[i].bit)
			json_object_array_add(
			    a, json_object_new_string(sbx_layer_names[i].name));
	json_object_object_add(o, "layers", a);
	json_object_object_add(o, "enforced",
	    json_object_new_boolean((pl->pl_want & ~pl->pl_layers) == 0));
	if (pl->pl_reason[0] != '\0')
		json_object_object_add(
		    o, "reason", json_object_new_string(pl->pl_reason));
	return o;
}

/* ---- per run, in the spawner ---- */

static int
sx_path(struct sandbox_run *sx, const char *path, unsigned int access)
{
	if (sx->sx_npaths == SBX_PATHS_MAX) {
		errno = E2BIG;
		return -1;
	}
	sx->sx_paths[sx->sx_npaths].cp_path = path;
	sx->sx_paths[sx->sx_npaths++].cp_access = access;
	return 0;
}

#define SBX_PROXY_URL "http://127.0.0.1:" SBX_STR(EGRESS_PROXY_PORT)
#define SBX_STR(x)    SBX_STR2(x)
#define SBX_STR2(x)   #x
static const char *const sbx_proxy_env[] = {
    "HTTPS_PROXY=" SBX_PROXY_URL,
    "HTTP_PROXY=" SBX_PROXY_URL,
    "https_proxy=" SBX_PROXY_URL,
    "http_proxy=" SBX_PROXY_URL,
    "NO_PROXY=localhost,127.0.0.1",
    "no_proxy=localhost,127.0.0.1",
};

/* Proxy settings a proxy run gets from us alone (and others keep). */
static int
env_is_proxy(const char *e)
{
	static const char *const names[] = {
	    "HTTPS_PROXY=", "HTTP_PROXY=", "https_proxy=", "http_proxy=",
	    "NO_PROXY=", "no_proxy=", "ALL_PROXY=", "all_proxy="};
	size_t i;

	for (i = 0; i < nitems(names); i++)
		if (strncmp(e, names[i], strlen(names[i])) == 0)
			return 1;
	return 0;
}

static int
env_is_tmp(const char *e)
{
	return strncmp(e, "TMPDIR=", 7) == 0 || strncmp(e, "TMP=", 4) == 0 ||
	       strncmp(e, "TEMP=", 5) == 0;
}

/* Step: the namespaces a run gets, from the plan's layers. */
static void
run_namespaces(struct sandbox_run *sx, const struct sandbox_plan *pl)
{
	/*
	 * SBX-4: and an IPC namespace of its own, so no System V object
	 * (shared memory, queue, semaphore) or POSIX queue of the host is
	 * in reach (as root the agent owns every root-owned one), and none
	 * it makes outlives the run for another user to read.
	 */
	if (pl->pl_layers & SBX_L_USERNS)
		sx->sx_clone |= CLONE_NEWUSER | CLONE_NEWIPC;
	if ((pl->pl_layers & (SBX_L_USERNS | SBX_L_PIDNS)) ==
	    (SBX_L_USERNS | SBX_L_PIDNS))
		sx->sx_clone |= CLONE_NEWPID;
	/* SBX-4: whatever isolation says, wherever the host allows it. */
	if (pl->pl_layers & SBX_L_MOUNTNS)
		sx->sx_clone |= CLONE_NEWNS;
	if (pl->pl_network != MF_NET_ALLOW && (pl->pl_layers & SBX_L_NETNS))
		sx->sx_clone |= CLONE_NEWNET;
}

/* Step: the per-run private tmp; namespace mode shows it as /tmp. */
static int
run_tmp(struct sandbox_run *sx, unsigned long long tmp_bytes)
{
	const char *runs;

	if ((runs = sbx_runs_dir()) == NULL) {
		errno = ENOENT; /* sandbox_tmp_open failed: refuse the run */
		return -1;
	}
	/*
	 * A mount namespace gets a tmpfs of its own (tmp_tree) but for a
	 * root spawner, whose ids it cannot map: a dir here, as without one.
	 */
	if ((!(sx->sx_clone & CLONE_NEWNS) || sx->sx_uid == 0) &&
	    (snprintf(sx->sx_tmp, sizeof(sx->sx_tmp), "%s/cordon-run.XXXXXX",
		 runs) >= (int)sizeof(sx->sx_tmp) ||
		mkdtemp(sx->sx_tmp) == NULL)) {
		sx->sx_tmp[0] = '\0';
		return -1;
	}
	sx->sx_tmp_bytes = tmp_bytes;
	return 0;
}

/*
 * SBX-3, SBX-4: the same dir for a root spawner's cover of the host's
 * /run, needed only when a path of the ruleset beneath /run is there to
 * be shown again in it (a mountpoint made in it); else the cover is an
 * empty tmpfs made in the child.  One that appears meanwhile fails the
 * run's mounts (closed), it is not shown unmounted.
 */
static int
run_cover_dir(struct sandbox_run *sx)
{
	const char *runs = sbx_runs_dir();
	struct stat st;
	size_t i;

	if (!(sx->sx_clone & CLONE_NEWNS) || sx->sx_uid != 0)
		return 0;
	for (i = 0; i < sx->sx_npaths; i++)
		if (strncmp(sx->sx_paths[i].cp_path, "/run/", 5) == 0 &&
		    stat(sx->sx_paths[i].cp_path, &st) == 0)
			break;
	if (i == sx->sx_npaths)
		return 0;
	if (runs == NULL ||
	    snprintf(sx->sx_runview, sizeof(sx->sx_runview),
		"%s/cordon-cover.XXXXXX",
		runs) >= (int)sizeof(sx->sx_runview) ||
	    mkdtemp(sx->sx_runview) == NULL) {
		sx->sx_runview[0] = '\0';
		return -1;
	}
	return 0;
}

/*
 * 1 if the run's view shows the host's dir p: it lies beneath none of
 * the dirs the view replaces, or within a path of the ruleset shown
 * again in one (/tmp's and /run's roots).
 */
static int
view_shows(const struct sandbox_run *sx, const char *p)
{
	static const char *const own[] = {"/tmp", "/run", "/var/run", "/proc"};
	const char *cp;
	size_t i, j;

	for (i = 0; i < nitems(own); i++)
		if (protect_is_under(p, own[i]))
			break;
	if (i == nitems(own))
		return 1;
	for (j = 0; j < sx->sx_npaths; j++) {
		cp = sx->sx_paths[j].cp_path;
		if (strcmp(cp, own[i]) != 0 && protect_is_under(cp, own[i]) &&
		    protect_is_under(p, cp))
			return 1;
	}
	return 0;
}

/* 1 if covering the dir p would take the home or a path of the run. */
static int
holds_run(const struct sandbox_run *sx, const char *home, const char *p)
{
	size_t i;

	if (protect_is_under(home, p) ||
	    (sx->sx_cwd != NULL && protect_is_under(sx->sx_cwd, p)))
		return 1;
	for (i = 0; i < sx->sx_npaths; i++)
		if (protect_is_under(sx->sx_paths[i].cp_path, p))
			return 1;
	return 0;
}

/* rp (st its dir) into sx_links, unless within one there; any within
 * it out.  0, or -1 with errno. */
static int
link_add(struct sandbox_run *sx, const char *rp, const struct stat *st)
{
	struct sbx_link *lk = sx->sx_links;
	size_t i;

	for (i = 0; i < sx->sx_nlinks; i++)
		if (protect_is_under(rp, lk[i].lk_path))
			return 0;
	for (i = 0; i < sx->sx_nlinks; i++)
		if (protect_is_under(lk[i].lk_path, rp)) {
			free(lk[i].lk_path);
			lk[i--] = lk[--sx->sx_nlinks];
		}
	if (sx->sx_nlinks == SBX_LINKS_MAX) {
		errno = E2BIG;
		return -1;
	}
	if ((lk[sx->sx_nlinks].lk_path = strdup(rp)) == NULL)
		return -1;
	lk[sx->sx_nlinks].lk_dev = st->st_dev;
	lk[sx->sx_nlinks++].lk_ino = st->st_ino;
	return 0;
}

/*
 * Step (SBX-2, SBX-3): where each protected dir of the home that is a
 * link leads (a dotfiles setup: ~/.gnupg -> ~/dotfiles/gnupg), resolved
 * once here for the child to cover.  Nothing for a dangling link, one
 * to no dir or to a dir the view does not show, nor one to a dir that
 * holds the home or a path of the run (covering would take it from
 * the run; the operator shows that dir).  The link is the operator's:
 * no root may contain a protected path of the home.
 */
static int
run_home_links(struct sandbox_run *sx, const struct sandbox_plan *pl)
{
	const char *const *l;
	char p[PATH_MAX], rp[PATH_MAX];
	struct stat st;
	size_t i, n;

	if (!(sx->sx_clone & CLONE_NEWNS) || pl->pl_home[0] == '\0')
		return 0;
	l = protect_home_list(&n);
	for (i = 0; i < n; i++) {
		if (snprintf(p, sizeof(p), "%s/%s", pl->pl_home, l[i]) >=
			(int)sizeof(p) ||
		    lstat(p, &st) == -1 || !S_ISLNK(st.st_mode) ||
		    realpath(p, rp) == NULL || stat(rp, &st) == -1 ||
		    !S_ISDIR(st.st_mode) || !view_shows(sx, rp) ||
		    holds_run(sx, pl->pl_home, rp))
			continue;
		if (link_add(sx, rp, &st) == -1)
			return -1;
	}
	return 0;
}

/*
 * Step: the run's environment, the caller's without its tmp (and, for a
 * proxy run, proxy) settings, then ours: the proxy, the tmp vars.
 */
static int
run_env(struct sandbox_run *sx, const struct sandbox_plan *pl,
    char *const *envp, const char *tmpview)
{
	static const char *const tmpvars[] = {"TMPDIR", "TMP", "TEMP"};
	size_t i, n, k;

	for (n = 0; envp[n] != NULL; n++)
		;
	if ((sx->sx_envp =
		    calloc(n + nitems(tmpvars) + nitems(sbx_proxy_env) + 1,
			sizeof(char *))) == NULL)
		return -1;
	for (i = k = 0; i < n; i++)
		if (!env_is_tmp(envp[i]) &&
		    !(pl->pl_network == MF_NET_PROXY && env_is_proxy(envp[i])))
			sx->sx_envp[k++] = envp[i];
	/* EG-1: the run's own proxy, on loopback of its own netns. */
	for (i = 0; pl->pl_network == MF_NET_PROXY && i < nitems(sbx_proxy_env);
	     i++)
		sx->sx_envp[k++] = (char *)sbx_proxy_env[i];
	for (i = 0; i < nitems(tmpvars); i++) {
		if (asprintf(&sx->sx_own[i], "%s=%s", tmpvars[i], tmpview) ==
		    -1) {
			sx->sx_own[i] = NULL;
			return -1;
		}
		sx->sx_envp[k++] = sx->sx_own[i];
	}
	return 0;
}

/* Step: the Landlock path list: the system, the roots, what it runs. */
static int
run_paths(struct sandbox_run *sx, const struct sandbox_plan *pl,
    const char *bin, const char *tmpview)
{
	const struct roots *rt = &pl->pl_roots;
	size_t i;

	for (i = 0; i < nitems(sbx_system); i++)
		if (sx_path(sx, sbx_system[i].cp_path,
			sbx_system[i].cp_access) == -1)
			return -1;
	for (i = 0; i < rt->r_nread; i++)
		if (sx_path(sx, rt->r_read[i], CONFINE_LL_READ) == -1)
			return -1;
	/* Agents run their own scripts (./init.sh) in the workspace. */
	for (i = 0; i < rt->r_nwrite; i++)
		if (sx_path(sx, rt->r_write[i],
			CONFINE_LL_READ | CONFINE_LL_WRITE | CONFINE_LL_EXEC) ==
		    -1)
			return -1;
	/*
	 * SP-17: pid 1 of a pid namespace ignores signals it has no handler
	 * for, so such a run's pid 1 is cordon-init, which forks the agent.
	 */
	if (sx->sx_clone & CLONE_NEWPID) {
		if (sbx_init[0] == '\0') {
			errno = ENOENT;
			return -1;
		}
		sx->sx_init = sbx_init;
		if (sx_path(sx, sbx_init, CONFINE_LL_READ | CONFINE_LL_EXEC) ==
		    -1)
			return -1;
	}
	if (sx_path(sx, tmpview, CONFINE_LL_READ | CONFINE_LL_WRITE) == -1 ||
	    sx_path(sx, bin, CONFINE_LL_READ | CONFINE_LL_EXEC) == -1 ||
	    (sbx_cordon[0] != '\0' && sx_path(sx, sbx_cordon,
					  CONFINE_LL_READ | CONFINE_LL_EXEC |
					      CONFINE_LL_OPTIONAL) == -1))
		return -1;
	return 0;
}

int
sandbox_run_prepare(struct sandbox_run *sx, const struct sandbox_plan *pl,
    const char *bin, const char *cwd, char *const *envp,
    unsigned long long tmp_bytes)
{
	const char *tmpview;
	int saved;

	memset(sx, 0, sizeof(*sx));
	sx->sx_plan = pl;
	sx->sx_uid = geteuid();
	sx->sx_gid = getegid();
	sx->sx_cwd = cwd;
	run_namespaces(sx, pl);
	tmpview = (sx->sx_clone & CLONE_NEWNS) ? "/tmp" : sx->sx_tmp;
	if (run_tmp(sx, tmp_bytes) == -1 ||
	    run_env(sx, pl, envp, tmpview) == -1 ||
	    run_paths(sx, pl, bin, tmpview) == -1 || run_cover_dir(sx) == -1 ||
	    run_home_links(sx, pl) == -1) {
		saved = errno;
		sandbox_run_end(sx);
		errno = saved;
		return -1;
	}
	return 0;
}

void
sandbox_run_end(struct sandbox_run *sx)
{
	size_t i;

	for (i = 0; i < nitems(sx->sx_own); i++) {
		free(sx->sx_own[i]);
		sx->sx_own[i] = NULL;
	}
	free(sx->sx_envp);
	sx->sx_envp = NULL;
	for (i = 0; i < sx->sx_nlinks; i++)
		free(sx->sx_links[i].lk_path);
	sx->sx_nlinks = 0;
	if (sx->sx_tmp[0] != '\0') {
		if (sandbox_rmtree(sx->sx_tmp) == -1)
			log_warn("sandbox: removing a run's private tmp");
		sx->sx_tmp[0] = '\0';
	}
	if (sx->sx_runview[0] != '\0') {
		if (sandbox_rmtree(sx->sx_runview) == -1)
			log_warn("sandbox: removing a run's /run cover");
		sx->sx_runview[0] = '\0';
	}
}
