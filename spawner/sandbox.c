/*
 * The per-run sandbox (SBX-1 ... SBX-5).  In the spawner: probe the host
 * once, plan each agent at load, prepare each run (private tmp, env,
 * Landlock paths) and remove its tmp after.  In the child, between fork
 * and execve, in this order: user namespace ids, mounts (namespace
 * isolation), the secret-file scan, capabilities, no_new_privs, Landlock,
 * the agent's seccomp layer.  The child half logs nothing and allocates
 * nothing; a failed step returns its code with errno set (fail closed).
 * Touches: one dir of its own under $TMPDIR or /tmp (cordon-runs.XXXXXX,
 * locked while the spawner lives) holding the per-run tmp dirs, and
 * such dirs that a dead spawner of the same uid left (swept at start).
 */
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <linux/filter.h>
#include <linux/magic.h>

#include "confine.h"
#include "ipc.h"
#include "log.h"
#include "msg.h"
#include "protect.h"
#include "sandbox.h"

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

#define nitems(a) (sizeof(a) / sizeof((a)[0]))

struct sandbox_host sbx_host = {-1, 0, 0, 0, 0, 0, 0};

/* The dir of the runs' private tmps, and its parent (sandbox_tmp_open). */
static char sbx_runs[PATH_MAX], sbx_runs_real[PATH_MAX];
static int sbx_runs_fd = -1, sbx_base_fd = -1;

/* `cordon` beside the spawner, so agent hooks can run `cordon gate`. */
static char sbx_cordon[PATH_MAX];
/* `cordon-init` beside the spawner: pid 1 of each run's pid namespace. */
static char sbx_init[PATH_MAX];
/* Where cordon and cordon-init are (sandbox_helpers_dir), or NULL: beside
 * this program. */
static const char *sbx_helpers;

/*
 * The agent seccomp layer, compiled once at start (DESIGN: build once,
 * install in the child), indexed by enum mf_network: [MF_NET_ALLOW]
 * network allowed, [MF_NET_NONE] SC_AGENT_NO_NET, [MF_NET_PROXY]
 * SC_AGENT_PROXY.  A child whose plan has the layer and finds no program
 * refuses the run.
 */
static struct sock_fprog sbx_bpf[3];

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

static const char *const sbx_step_names[] = {
	[SBX_STEP_UIDMAP - SPAWN_STEP_HOOK_BASE] = "uid_map",
	[SBX_STEP_PRIVATE - SPAWN_STEP_HOOK_BASE] = "mount private",
	[SBX_STEP_ROOT - SPAWN_STEP_HOOK_BASE] = "root",
	[SBX_STEP_READONLY - SPAWN_STEP_HOOK_BASE] = "mount_setattr readonly",
	[SBX_STEP_WRITABLE - SPAWN_STEP_HOOK_BASE] = "mount_setattr writable",
	[SBX_STEP_TMP - SPAWN_STEP_HOOK_BASE] = "private tmp",
	[SBX_STEP_PROC - SPAWN_STEP_HOOK_BASE] = "mount proc",
	[SBX_STEP_SCAN_BOUND - SPAWN_STEP_HOOK_BASE] = "secret scan bound",
	[SBX_STEP_SECRET_FILE - SPAWN_STEP_HOOK_BASE] =
	    "secret-looking file under a write root",
	[SBX_STEP_SHADOW - SPAWN_STEP_HOOK_BASE] = "shadow secret file",
	[SBX_STEP_CHDIR - SPAWN_STEP_HOOK_BASE] = "chdir",
	[SBX_STEP_CAPS - SPAWN_STEP_HOOK_BASE] = "capabilities",
	[SBX_STEP_NNP - SPAWN_STEP_HOOK_BASE] = "no_new_privs",
	[SBX_STEP_LL_RULESET - SPAWN_STEP_HOOK_BASE] =
	    "landlock_create_ruleset",
	[SBX_STEP_LL_RESTRICT - SPAWN_STEP_HOOK_BASE] =
	    "landlock_restrict_self",
	[SBX_STEP_SECCOMP - SPAWN_STEP_HOOK_BASE] = "seccomp",
	[SBX_STEP_NOTIFY - SPAWN_STEP_HOOK_BASE] = "seccomp listener",
	[SBX_STEP_HIDE - SPAWN_STEP_HOOK_BASE] = "hide socket dir",
	[SBX_STEP_CGROUP - SPAWN_STEP_HOOK_BASE] = "pids cgroup",
	[SBX_STEP_GATE - SPAWN_STEP_HOOK_BASE] = "gate fifo dir",
	[SBX_STEP_PROXY - SPAWN_STEP_HOOK_BASE] = "proxy listener",
};
/* clang-format on */

const char *
sandbox_step_name(int step)
{
	int i = step - SPAWN_STEP_HOOK_BASE;

	if (step < SPAWN_STEP_HOOK_BASE)
		return spawn_step_name(step);
	if (i > 0 && i < (int)nitems(sbx_step_names))
		return sbx_step_names[i];
	return NULL;
}

/* ---- host ---- */

/* Can this process make a user namespace (and mount in it)? */
static int
probe_userns(void)
{
	pid_t pid;
	int st;

	pid = (pid_t)syscall(SYS_clone,
	    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | SIGCHLD,
	    0, 0, 0, 0);
	if (pid == -1)
		return 0;
	if (pid == 0)
		_exit(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0
			  ? 0
			  : 1);
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static const char *sbx_hide;

void
sandbox_hide_dir(const char *dir)
{
	sbx_hide = dir;
}

void
sandbox_helpers_dir(const char *dir)
{
	sbx_helpers = dir;
}

void
sandbox_host_probe(void)
{
	char self[PATH_MAX], *slash;
	ssize_t n;

	sbx_host.sh_landlock_abi = confine_landlock_abi();
	sbx_host.sh_seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2;
	sbx_host.sh_userns = probe_userns();
	for (size_t i = 0; i < nitems(sbx_bpf); i++)
		confine_seccomp_agent_free(&sbx_bpf[i]);
	if (confine_seccomp_agent_build(0, &sbx_bpf[MF_NET_ALLOW]) == -1 ||
	    confine_seccomp_agent_build(
		SC_AGENT_NO_NET, &sbx_bpf[MF_NET_NONE]) == -1 ||
	    confine_seccomp_agent_build(
		SC_AGENT_PROXY, &sbx_bpf[MF_NET_PROXY]) == -1) {
		/* SBX-5: not offered, so plans and health say so. */
		log_warn("sandbox: building the agent seccomp layer; runs "
			 "that need it are refused");
		sbx_host.sh_seccomp = 0;
	}
	sbx_cordon[0] = sbx_init[0] = '\0';
	if (sbx_helpers != NULL && snprintf(self, sizeof(self), "%s/x",
				       sbx_helpers) < (int)sizeof(self))
		n = (ssize_t)strlen(self);
	else
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			if (snprintf(sbx_cordon, sizeof(sbx_cordon),
				"%s/cordon", self) >= (int)sizeof(sbx_cordon) ||
			    access(sbx_cordon, X_OK) == -1)
				sbx_cordon[0] = '\0';
			if (snprintf(sbx_init, sizeof(sbx_init),
				"%s/cordon-init",
				self) >= (int)sizeof(sbx_init) ||
			    access(sbx_init, X_OK) == -1)
				sbx_init[0] = '\0';
		}
	}
	if (sbx_init[0] == '\0')
		log_warnx("sandbox: no cordon-init beside the spawner; runs "
			  "in a pid namespace are refused");
	log_info("sandbox host: landlock ABI %d, user namespaces %s, "
		 "seccomp %s",
	    sbx_host.sh_landlock_abi, sbx_host.sh_userns ? "yes" : "no",
	    sbx_host.sh_seccomp ? "yes" : "no");
}

/*
 * SP-7 in health: whether runs get their own pids cgroup, and if not,
 * what bounds their processes instead (fixed texts).
 */
struct json_object *
sandbox_pids_json(void)
{
	struct json_object *o = json_object_new_object();
	const char *state;

	if (sbx_host.sh_pids_cg)
		state = "on: each run has its own pids.max";
	else if (sbx_host.sh_pids_required)
		state = "missing: the spawner runs as root and has no pids "
			"cgroup; runs are refused";
	else if (sbx_host.sh_pids_systemd)
		state = "off: the unit's TasksMax bounds the spawner";
	else
		state = "off: RLIMIT_NPROC in each run's user namespace";
	json_object_object_add(
	    o, "on", json_object_new_boolean(sbx_host.sh_pids_cg));
	json_object_object_add(
	    o, "required", json_object_new_boolean(sbx_host.sh_pids_required));
	json_object_object_add(o, "state", json_object_new_string(state));
	return o;
}

struct json_object *
sandbox_host_json(void)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "landlockAbi",
	    json_object_new_int(
		sbx_host.sh_landlock_abi < 0 ? -1 : sbx_host.sh_landlock_abi));
	json_object_object_add(
	    o, "userns", json_object_new_boolean(sbx_host.sh_userns));
	json_object_object_add(
	    o, "seccomp", json_object_new_boolean(sbx_host.sh_seccomp));
	json_object_object_add(
	    o, "privateTmp", json_object_new_boolean(sbx_host.sh_private_tmp));
	return o;
}

/* ---- plan ---- */

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
	return 0;
}

void
sandbox_plan_free(struct sandbox_plan *pl)
{
	roots_free(&pl->pl_roots);
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

int
sandbox_run_prepare(struct sandbox_run *sx, const struct sandbox_plan *pl,
    const char *bin, const char *cwd, char *const *envp,
    unsigned long long tmp_bytes)
{
	static const char *const tmpvars[] = {"TMPDIR", "TMP", "TEMP"};
	const struct roots *rt = &pl->pl_roots;
	const char *tmpview;
	size_t i, n, k;
	int saved;

	memset(sx, 0, sizeof(*sx));
	sx->sx_plan = pl;
	sx->sx_uid = geteuid();
	sx->sx_gid = getegid();
	sx->sx_cwd = cwd;
	if (pl->pl_layers & SBX_L_USERNS)
		sx->sx_clone |= CLONE_NEWUSER;
	if ((pl->pl_layers & (SBX_L_USERNS | SBX_L_PIDNS)) ==
	    (SBX_L_USERNS | SBX_L_PIDNS))
		sx->sx_clone |= CLONE_NEWPID;
	/* SBX-4: whatever isolation says, wherever the host allows it. */
	if (pl->pl_layers & SBX_L_MOUNTNS)
		sx->sx_clone |= CLONE_NEWNS;
	if (pl->pl_network != MF_NET_ALLOW && (pl->pl_layers & SBX_L_NETNS))
		sx->sx_clone |= CLONE_NEWNET;

	/* The per-run private tmp; namespace mode shows it as /tmp. */
	if (sbx_runs_fd == -1) {
		errno = ENOENT; /* sandbox_tmp_open failed: refuse the run */
		return -1;
	}
	/*
	 * A mount namespace gets a tmpfs of its own (tmp_tree) but for a
	 * root spawner, whose ids it cannot map: a dir here, as without one.
	 */
	if ((!(sx->sx_clone & CLONE_NEWNS) || sx->sx_uid == 0) &&
	    (snprintf(sx->sx_tmp, sizeof(sx->sx_tmp), "%s/cordon-run.XXXXXX",
		 sbx_runs) >= (int)sizeof(sx->sx_tmp) ||
		mkdtemp(sx->sx_tmp) == NULL)) {
		sx->sx_tmp[0] = '\0';
		return -1;
	}
	sx->sx_tmp_bytes = tmp_bytes;
	tmpview = (sx->sx_clone & CLONE_NEWNS) ? "/tmp" : sx->sx_tmp;

	for (n = 0; envp[n] != NULL; n++)
		;
	if ((sx->sx_envp =
		    calloc(n + nitems(tmpvars) + nitems(sbx_proxy_env) + 1,
			sizeof(char *))) == NULL)
		goto fail;
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
			goto fail;
		}
		sx->sx_envp[k++] = sx->sx_own[i];
	}

	for (i = 0; i < nitems(sbx_system); i++)
		if (sx_path(sx, sbx_system[i].cp_path,
			sbx_system[i].cp_access) == -1)
			goto fail;
	for (i = 0; i < rt->r_nread; i++)
		if (sx_path(sx, rt->r_read[i], CONFINE_LL_READ) == -1)
			goto fail;
	/* Agents run their own scripts (./init.sh) in the workspace. */
	for (i = 0; i < rt->r_nwrite; i++)
		if (sx_path(sx, rt->r_write[i],
			CONFINE_LL_READ | CONFINE_LL_WRITE | CONFINE_LL_EXEC) ==
		    -1)
			goto fail;
	/*
	 * SP-17: pid 1 of a pid namespace ignores signals it has no handler
	 * for, so such a run's pid 1 is cordon-init, which forks the agent.
	 */
	if (sx->sx_clone & CLONE_NEWPID) {
		if (sbx_init[0] == '\0') {
			errno = ENOENT;
			goto fail;
		}
		sx->sx_init = sbx_init;
		if (sx_path(sx, sbx_init, CONFINE_LL_READ | CONFINE_LL_EXEC) ==
		    -1)
			goto fail;
	}
	if (sx_path(sx, tmpview, CONFINE_LL_READ | CONFINE_LL_WRITE) == -1 ||
	    sx_path(sx, bin, CONFINE_LL_READ | CONFINE_LL_EXEC) == -1 ||
	    (sbx_cordon[0] != '\0' && sx_path(sx, sbx_cordon,
					  CONFINE_LL_READ | CONFINE_LL_EXEC |
					      CONFINE_LL_OPTIONAL) == -1))
		goto fail;
	return 0;
fail:
	saved = errno;
	sandbox_run_end(sx);
	errno = saved;
	return -1;
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
	if (sx->sx_tmp[0] != '\0') {
		if (sandbox_rmtree(sx->sx_tmp) == -1)
			log_warn("sandbox: removing a run's private tmp");
		sx->sx_tmp[0] = '\0';
	}
}

/*
 * Emptying a dir, in bounded stack and fds: a dir RM_DEPTH below the one
 * being emptied (top) is moved up into top and picked up by the next
 * pass, so an agent's tmp of any depth goes.  Dirs are made 0700 first
 * so nothing inside can refuse; links are removed, never followed.
 */
#define RM_DEPTH      32
#define RM_PASSES_MAX 65536

/*
 * 0: moved; -1: failed.  Names the agent planted in top make us pick
 * another; if all are taken this pass, the next pass (which removes
 * them) tries again.
 */
static int
rm_move_up(int dfd, const char *name, int top)
{
	static unsigned long seq;
	char to[32];
	int i;

	for (i = 0; i < 16; i++) {
		snprintf(to, sizeof(to), ".rm.%lu", seq++);
		if (renameat2(dfd, name, top, to, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	return 0;
}

static int
rm_level(int top, int dfd, int depth, int *again)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, rc = 0, sub;

	if ((fd = dup(dfd)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	rewinddir(d); /* the dup shares dfd's offset: top's, walked before */
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			rc = -1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(dfd, de->d_name, 0) == -1)
				rc = -1;
			continue;
		}
		if (depth == RM_DEPTH) {
			if (rm_move_up(dfd, de->d_name, top) == -1)
				rc = -1;
			else
				*again = 1;
			continue;
		}
		sub = openat(dfd, de->d_name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub == -1) {
			rc = -1;
			continue;
		}
		(void)fchmod(sub, 0700);
		if (rm_level(top, sub, depth + 1, again) == -1)
			rc = -1;
		close(sub);
		/* Not empty yet: a dir below it waits for the next pass. */
		if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) == -1 &&
		    !(errno == ENOTEMPTY && *again))
			rc = -1;
	}
	closedir(d);
	return rc;
}

static int
rm_contents(int dfd)
{
	int again, passes = 0, rc;

	do {
		again = 0;
		rc = rm_level(dfd, dfd, 0, &again);
	} while (rc == 0 && again && ++passes < RM_PASSES_MAX);
	return rc == 0 && !again ? 0 : -1;
}

int
sandbox_rmtree(const char *path)
{
	int dfd, rc;

	/*
	 * Most runs leave their tmp empty: one rmdir (which never follows a
	 * link: a symlink is ENOTDIR).  Anything else takes the walk.
	 */
	if (rmdir(path) == 0 || errno == ENOENT)
		return 0;
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd == -1)
		return errno == ENOENT ? 0 : -1;
	(void)fchmod(dfd, 0700);
	rc = rm_contents(dfd);
	close(dfd);
	if (rmdir(path) == -1)
		rc = -1;
	return rc;
}

/*
 * The runs' private tmps live in one dir of this spawner's (sbx_runs),
 * flock()ed for as long as it lives.  It is made under a dot name and
 * renamed to cordon-runs.* only once locked, so a sweep never meets it
 * unlocked.  At start, every cordon-runs.* dir of our uid whose lock is
 * free is what a spawner that died (SIGKILL, a crash) left: removed.
 */
#define RUNS_PREFIX "cordon-runs."

/* 1: a dead spawner's dir, removed; -1: one that would not go; 0: not one. */
static int
runs_stale(int bfd, const char *name)
{
	struct stat st;
	int fd, rc = 0;

	fd = openat(bfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return 0;
	if (fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	    (st.st_mode & 077) == 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
		rc = rm_contents(fd) == 0 &&
			     unlinkat(bfd, name, AT_REMOVEDIR) == 0
			 ? 1
			 : -1;
	close(fd);
	return rc;
}

static void
runs_sweep(int bfd)
{
	struct dirent *de;
	DIR *d;
	int fd, gone = 0, left = 0, r;

	if ((fd = dup(bfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, RUNS_PREFIX, strlen(RUNS_PREFIX)) != 0)
			continue;
		if ((r = runs_stale(bfd, de->d_name)) == 1)
			gone++;
		else if (r == -1)
			left++;
	}
	closedir(d);
	if (gone > 0)
		log_info("sandbox: removed %d runs dir(s) a stopped spawner "
			 "left",
		    gone);
	if (left > 0)
		log_warnx("sandbox: %d runs dir(s) a stopped spawner left "
			  "could not be removed",
		    left);
}

int
sandbox_tmp_open(void)
{
	const char *base = getenv("TMPDIR");
	char tmp[PATH_MAX], *name;
	int saved;

	if (sbx_runs_fd != -1)
		return 0;
	if (base == NULL || base[0] != '/')
		base = "/tmp";
	if ((sbx_base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return -1;
	runs_sweep(sbx_base_fd);
	if (snprintf(tmp, sizeof(tmp), "%s/." RUNS_PREFIX "XXXXXX", base) >=
		(int)sizeof(tmp) ||
	    mkdtemp(tmp) == NULL)
		goto fail;
	/* ".cordon-runs.XXXXXX": ours is the same name without the dot. */
	name = strrchr(tmp, '/') + 1;
	snprintf(sbx_runs, sizeof(sbx_runs), "%s/%s", base, name + 1);
	if ((sbx_runs_fd = openat(sbx_base_fd, name,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    flock(sbx_runs_fd, LOCK_EX | LOCK_NB) == -1 ||
	    renameat2(sbx_base_fd, name, sbx_base_fd, name + 1,
		RENAME_NOREPLACE) == -1) {
		saved = errno;
		(void)unlinkat(sbx_base_fd, name, AT_REMOVEDIR);
		errno = saved;
		goto fail;
	}
	if (realpath(sbx_runs, sbx_runs_real) == NULL)
		snprintf(sbx_runs_real, sizeof(sbx_runs_real), "%s", sbx_runs);
	sbx_host.sh_private_tmp = 1;
	return 0;
fail:
	saved = errno;
	if (sbx_runs_fd != -1)
		close(sbx_runs_fd);
	close(sbx_base_fd);
	sbx_runs_fd = sbx_base_fd = -1;
	sbx_runs[0] = '\0';
	errno = saved;
	return -1;
}

const char *
sandbox_tmp_dir(void)
{
	return sbx_runs_fd != -1 ? sbx_runs_real : NULL;
}

void
sandbox_tmp_close(void)
{
	if (sbx_runs_fd == -1)
		return;
	if (rm_contents(sbx_runs_fd) == -1 ||
	    unlinkat(sbx_base_fd, strrchr(sbx_runs, '/') + 1, AT_REMOVEDIR) ==
		-1)
		log_warn("sandbox: removing the runs' tmp dir");
	close(sbx_runs_fd);
	close(sbx_base_fd);
	sbx_runs_fd = sbx_base_fd = -1;
	sbx_runs[0] = '\0';
	sbx_host.sh_private_tmp = 0;
}

/* ---- the child: no logging, no allocation ---- */

static int
write_file(const char *path, const char *s)
{
	size_t len = strlen(s);
	int fd, r;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	r = write(fd, s, len) == (ssize_t)len ? 0 : -1;
	if (r == -1 && errno == 0)
		errno = EIO;
	close(fd);
	return r;
}

/*
 * Map our own ids.  Root without capabilities may not map uid 0 (the
 * kernel asks for CAP_SETFCAP), so as root the ids stay unmapped: the
 * agent sees itself as the overflow uid and still owns its files as 0.
 */
static int
child_idmap(const struct sandbox_run *sx)
{
	char buf[64];
	int r, e;

	if (sx->sx_uid == 0)
		return 0;
	/*
	 * The spawner is not dumpable, so /proc/self of its child belongs to
	 * root: be dumpable while writing the maps.  The flag belongs to
	 * the memory, which this child shares with the spawner, so for
	 * these three writes the spawner is dumpable too (a process of the
	 * same uid could attach then: threat-model.md, same-uid attacks).
	 */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == -1)
		return -1;
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)sx->sx_uid,
	    (unsigned)sx->sx_uid);
	r = write_file("/proc/self/setgroups", "deny") == -1 ||
		    write_file("/proc/self/uid_map", buf) == -1
		? -1
		: 0;
	snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)sx->sx_gid,
	    (unsigned)sx->sx_gid);
	if (r == 0 && write_file("/proc/self/gid_map", buf) == -1)
		r = -1;
	/*
	 * Dumpable is the memory's, and the child shares the spawner's
	 * (CLONE_VM): never leave it set, whatever failed.
	 */
	e = errno;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1)
		return -1;
	errno = e;
	return r;
}

static int
setattr_at(
    int dfd, const char *path, unsigned int flags, uint64_t set, uint64_t clr)
{
	struct mount_attr ma;

	memset(&ma, 0, sizeof(ma));
	ma.attr_set = set;
	ma.attr_clr = clr;
	return (int)syscall(
	    SYS_mount_setattr, dfd, path, flags, &ma, sizeof(ma));
}

/* What every mount an agent sees carries, rw or not (SBX-4). */
#define SBX_MNT_SAFE (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define SBX_MNT_RO   (MOUNT_ATTR_RDONLY | SBX_MNT_SAFE)
#define SBX_MNT_DEAD (SBX_MNT_RO | MOUNT_ATTR_NOEXEC) /* covers */

/*
 * Mounts are made detached and attached by handle: a path an agent or
 * a sibling run can rename is looked up once, as an O_PATH fd, and the
 * mount lands on that very object (move_mount to an empty path), never
 * on whatever the path names a moment later (SBX-2, SBX-4).
 */

/* A detached copy of the tree at fd with attrs set (and RDONLY cleared
 * on its top when rw): its fd, or -1. */
static int
tree_clone(int fd, uint64_t set, int rw)
{
	int t, e;

	t = (int)syscall(SYS_open_tree, fd, "",
	    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (t == -1)
		return -1;
	if (setattr_at(t, "", AT_EMPTY_PATH | AT_RECURSIVE, set, 0) == -1 ||
	    (rw &&
		setattr_at(t, "", AT_EMPTY_PATH, 0, MOUNT_ATTR_RDONLY) == -1)) {
		e = errno;
		close(t);
		errno = e;
		return -1;
	}
	return t;
}

/* A detached tmpfs of size bytes and mode: its mount fd, or -1. */
static int
tmpfs_new(unsigned long long size, const char *mode, uint64_t attrs)
{
	char num[24];
	int fs, m, e;

	snprintf(num, sizeof(num), "%llu", size);
	if ((fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC)) == -1)
		return -1;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", num, 0) ==
		-1 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", mode, 0) ==
		-1 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) ==
		-1) {
		e = errno;
		close(fs);
		errno = e;
		return -1;
	}
	m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs);
	e = errno;
	close(fs);
	errno = e;
	return m;
}

/* Attach the detached mount m onto what to (an O_PATH fd) holds; closes m. */
static int
attach_fd(int m, int to)
{
	int r, e;

	r = (int)syscall(SYS_move_mount, m, "", to, "",
	    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	e = errno;
	close(m);
	errno = e;
	return r;
}

/* Onto a fixed system path (/tmp, the socket dir) no agent can rename. */
static int
attach_path(int m, const char *path)
{
	int r, e;

	r = (int)syscall(
	    SYS_move_mount, m, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH);
	e = errno;
	close(m);
	errno = e;
	return r;
}

/* 1 if path is /tmp or beneath it. */
static int
under_tmp(const char *p)
{
	return strncmp(p, "/tmp", 4) == 0 && (p[4] == '\0' || p[4] == '/');
}

/* 1 if p lies strictly beneath dir. */
static int
beneath(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(p, dir, n) == 0 && p[n] == '/';
}

/* mkdir -p of rel (relative) beneath dfd. */
static int
mkdirs_at(int dfd, const char *rel)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = buf;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (buf[0] != '\0' && mkdirat(dfd, buf, 0755) == -1 &&
			    errno != EEXIST)
				return -1;
			if (c == '\0')
				break;
			*p = c;
		}
	}
	return 0;
}

/*
 * The secret-file cover (SBX-2), by handle: each hit is opened beneath
 * the dir fd the scan holds (O_PATH | O_NOFOLLOW), checked to be what the
 * scan saw (the inode getdents listed), and covered on that object.  A
 * sibling run sharing the root may rename or exchange folders across the
 * walk: an entry that is gone or is another inode than listed makes the
 * pass untrusted, and a pass that covered or missed anything is followed
 * by another; the run is refused if the tree will not hold still
 * (SBX_SCAN_PASSES).
 */
#define SBX_SCAN_PASSES 4
#define SBX_COVERS_MAX	256 /* folder covers per run */

struct scan {
	const struct sandbox_run *sc_sx;
	int sc_shadow;	/* 1: shadow hits; 0: refuse on the first */
	int sc_emptyfd; /* the empty file shadows bind from */
	struct stat sc_empty;
	size_t sc_entries;
	size_t sc_moved; /* covers made, entries moved: this pass */
	int sc_inocheck; /* getdents inodes are the ones opened */
	dev_t sc_dirdev[SBX_COVERS_MAX]; /* each folder cover's tmpfs */
	size_t sc_ndirs;
};

/* 1 if what fd holds is one of this run's covers already. */
static int
scan_covered(const struct scan *sc, const struct stat *st)
{
	size_t i;

	if (!S_ISDIR(st->st_mode))
		return st->st_dev == sc->sc_empty.st_dev &&
		       st->st_ino == sc->sc_empty.st_ino;
	for (i = 0; i < sc->sc_ndirs; i++)
		if (st->st_dev == sc->sc_dirdev[i])
			return 1;
	return 0;
}

/*
 * 1 if what fd holds is not the entry the scan listed (ino from
 * getdents): renamed or exchanged meanwhile, so the pass is not to be
 * trusted.  A mount root (a cover, a mount in the root) lists the inode
 * beneath it; overlayfs may list another inode than it gives: both kept.
 */
static int
scan_moved(const struct scan *sc, int fd, ino_t ino)
{
	struct statx stx;

	if (!sc->sc_inocheck || ino == 0)
		return 0;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO,
		&stx) == -1)
		return 1;
	if (stx.stx_attributes_mask & stx.stx_attributes &
	    STATX_ATTR_MOUNT_ROOT)
		return 0;
	return stx.stx_ino != ino;
}

/* Cover name beneath dfd, if it still is a dir (isdir) or a file. */
static int
scan_cover(struct scan *sc, int dfd, const char *name, int isdir, ino_t ino)
{
	struct stat st;
	int t, m, r;

	if (!sc->sc_shadow) {
		errno = EEXIST;
		return SBX_STEP_SECRET_FILE;
	}
	t = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (t == -1 && errno == ENOENT) {
		sc->sc_moved++; /* gone since listed: look again */
		return 0;
	}
	if (t == -1)
		return SBX_STEP_SHADOW;
	if (fstat(t, &st) == -1)
		goto fail;
	if (scan_covered(sc, &st)) {
		close(t);
		return 0;
	}
	/* Swapped for a link, a dir for a file, another entry: look again. */
	if (S_ISLNK(st.st_mode) || (S_ISDIR(st.st_mode) != isdir) ||
	    scan_moved(sc, t, ino)) {
		sc->sc_moved++;
		close(t);
		return 0;
	}
	if (isdir) {
		if (sc->sc_ndirs == SBX_COVERS_MAX) {
			errno = E2BIG;
			close(t);
			return SBX_STEP_SCAN_BOUND;
		}
		m = tmpfs_new(4096, "0555", SBX_MNT_DEAD);
	} else
		m = tree_clone(sc->sc_emptyfd, SBX_MNT_DEAD, 0);
	if (m == -1 || attach_fd(m, t) == -1)
		goto fail;
	if (isdir) {
		/* The cover's own dev, for the passes after this one. */
		r = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW);
		if (r == 0)
			sc->sc_dirdev[sc->sc_ndirs++] = st.st_dev;
	}
	sc->sc_moved++; /* a pass that covered something is checked again */
	close(t);
	return 0;
fail:
	r = errno;
	close(t);
	errno = r;
	return SBX_STEP_SHADOW;
}

/* Bounded walk of one directory; never follows a symlink. */
static int
scan_dir(struct scan *sc, int dfd, int depth)
{
	char buf[4096] __attribute__((aligned(8)));
	struct stat st;
	long n, off;
	int sub, r;

	if (depth > SBX_SCAN_MAX_DEPTH) {
		errno = E2BIG;
		return SBX_STEP_SCAN_BOUND;
	}
	for (;;) {
		n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));
		if (n == -1)
			return SBX_STEP_SCAN_BOUND;
		if (n == 0)
			return 0;
		for (off = 0; off < n;) {
			struct dirent64 *de = (void *)(buf + off);
			const char *name = de->d_name;

			off += de->d_reclen;
			if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
				continue;
			if (++sc->sc_entries > SBX_SCAN_MAX_ENTRIES) {
				errno = E2BIG;
				return SBX_STEP_SCAN_BOUND;
			}
			/* d_type spares a stat per entry; not every fs fills
			 * it in. */
			if (de->d_type == DT_DIR)
				st.st_mode = S_IFDIR;
			else if (de->d_type == DT_LNK)
				st.st_mode = S_IFLNK;
			else if (de->d_type != DT_UNKNOWN)
				st.st_mode = S_IFREG;
			else if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) ==
				 -1)
				continue; /* gone meanwhile */
			if (S_ISLNK(st.st_mode))
				continue;
			/*
			 * A folder with a secret's name (secrets/,
			 * credentials/) holds secrets: covered with an empty
			 * read-only tmpfs, or the run refused, like a file.
			 */
			if (protect_name_secret(name)) {
				if ((r = scan_cover(sc, dfd, name,
					 S_ISDIR(st.st_mode), de->d_ino)) != 0)
					return r;
				continue;
			}
			if (!S_ISDIR(st.st_mode))
				continue;
			sub = openat(dfd, name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			/* Unreadable now, but its owner could chmod it later:
			 * fail closed. */
			if (sub == -1 &&
			    (errno == ENOENT || errno == ENOTDIR)) {
				sc->sc_moved++; /* moved since listed */
				continue;
			}
			if (sub == -1)
				return SBX_STEP_SCAN_BOUND;
			if (scan_moved(sc, sub, de->d_ino)) {
				sc->sc_moved++; /* another dir by that name */
				close(sub);
				continue;
			}
			r = scan_dir(sc, sub, depth + 1);
			close(sub);
			if (r != 0)
				return r;
		}
	}
}

static int
scan_roots(const struct sandbox_run *sx, int shadow, int emptyfd)
{
	const struct roots *rt = &sx->sx_plan->pl_roots;
	struct statfs sf;
	struct scan sc;
	size_t i;
	int dfd, pass, r;

	memset(&sc, 0, sizeof(sc));
	sc.sc_sx = sx;
	sc.sc_shadow = shadow;
	sc.sc_emptyfd = emptyfd;
	if (shadow && fstat(emptyfd, &sc.sc_empty) == -1)
		return SBX_STEP_SHADOW;
	for (pass = 0; pass < SBX_SCAN_PASSES; pass++) {
		sc.sc_entries = 0;
		sc.sc_moved = 0;
		/* Not the agent's own home (SBX-9): its login lives there. */
		for (i = 0; i < rt->r_nscan; i++) {
			dfd = open(rt->r_write[i],
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (dfd == -1 && errno == ENOTDIR)
				continue; /* a file root: named at load */
			if (dfd == -1)
				return SBX_STEP_ROOT; /* a root that vanished */
			sc.sc_inocheck = fstatfs(dfd, &sf) == 0 &&
					 sf.f_type != OVERLAYFS_SUPER_MAGIC;
			r = scan_dir(&sc, dfd, 0);
			close(dfd);
			if (r != 0)
				return r;
		}
		if (sc.sc_moved == 0)
			return 0;
	}
	errno = EAGAIN; /* the tree kept moving under the scan */
	return SBX_STEP_SHADOW;
}

/* A path of the ruleset, shown again in the agent's view by handle. */
struct tmproot {
	const char *tr_path;
	int tr_tree;   /* its detached copy */
	int tr_dir;    /* a directory (else a file) */
	int tr_nested; /* beneath another root under /tmp */
};

/* The mountpoint for a root under /tmp, made inside the private tmp. */
static int
tmp_mountpoint(int tmpfd, const struct tmproot *tr)
{
	char parent[PATH_MAX], *slash;
	const char *rel = tr->tr_path + 5; /* past "/tmp/" */
	int fd;

	if (tr->tr_dir)
		return mkdirs_at(tmpfd, rel);
	if (snprintf(parent, sizeof(parent), "%s", rel) >= (int)sizeof(parent))
		return -1;
	if ((slash = strrchr(parent, '/')) != NULL) {
		*slash = '\0';
		if (mkdirs_at(tmpfd, parent) == -1)
			return -1;
	}
	fd = openat(
	    tmpfd, rel, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	close(fd);
	return 0;
}

/*
 * The run's /tmp, detached: a tmpfs of its own bounded size (SP-7), or,
 * for a spawner running as root (whose ids the user namespace cannot
 * map, so it could create nothing in a tmpfs made there), a copy of
 * the per-run dir sandbox_run_prepare made.  Both nosuid,nodev.
 */
static int
tmp_tree(const struct sandbox_run *sx)
{
	int fd, t;

	if (sx->sx_tmp[0] == '\0')
		return tmpfs_new(sx->sx_tmp_bytes, "0700", SBX_MNT_SAFE);
	if ((fd = open(sx->sx_tmp,
		 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	t = tree_clone(fd, SBX_MNT_RO, 1);
	close(fd);
	return t;
}

/*
 * SBX-8: the gate by path.  GATE_FIFO_DIR in the run's own /tmp (a
 * tmpfs only this mount namespace shows; for a root spawner a dir of its
 * own 0700 runs dir), its named pipes made here, then covered by a
 * read-only copy of itself so the agent can neither remove nor replace
 * them (a FIFO opens for writing on a read-only mount).  The dir's fd
 * goes to the spawner, which serves the pipes through it.
 */
static int
child_gate_dir(int tmpfd)
{
	const char *name = GATE_FIFO_DIR + 5; /* past "/tmp/" */
	char n[16];
	int gfd, m, fd, i, r;

	if (mkdirat(tmpfd, name, 0700) == -1 ||
	    (gfd = openat(tmpfd, name,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	for (i = 0; i < GATE_FIFO_SLOTS; i++) {
		snprintf(n, sizeof(n), "%d.in", i);
		if (mknodat(gfd, n, S_IFIFO | 0600, 0) == -1)
			return -1;
		snprintf(n, sizeof(n), "%d.out", i);
		if (mknodat(gfd, n, S_IFIFO | 0600, 0) == -1)
			return -1;
	}
	if ((m = tree_clone(gfd, SBX_MNT_DEAD, 0)) == -1 ||
	    (fd = open(GATE_FIFO_DIR,
		 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    attach_fd(m, fd) == -1)
		return -1;
	close(fd);
	r = ipc_sendmsg_fd(SBX_NOTIFY_FD, "g", 1, gfd) == 1 ? 0 : -1;
	close(gfd);
	return r;
}

/*
 * Namespace isolation (SBX-4): the whole host read-only, nosuid, nodev;
 * the write roots copied in by handle and writable (still nosuid,
 * nodev); a private /tmp (roots under /tmp shown again inside it); a
 * fresh /proc; secret-looking files in write roots covered.
 */
static int
child_mounts(const struct sandbox_run *sx)
{
	const struct roots *rt = &sx->sx_plan->pl_roots;
	struct tmproot tr[SBX_PATHS_MAX];
	int wtree[SBX_WRITE_MAX], wfd[SBX_WRITE_MAX];
	struct stat st;
	size_t i, j, ntr = 0, nw = 0;
	int fd, tmpm, tmpfd, emptyfd, r, m;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return SBX_STEP_PRIVATE;
	/*
	 * Every path of the ruleset under /tmp (roots, the agent's binary,
	 * `cordon` for the gate), copied before /tmp is covered.
	 */
	for (i = 0; i < sx->sx_npaths; i++) {
		const char *p = sx->sx_paths[i].cp_path;

		if (!under_tmp(p) || strcmp(p, "/tmp") == 0 ||
		    ntr == nitems(tr))
			continue;
		tr[ntr].tr_path = p;
		tr[ntr].tr_nested = 0;
		fd = open(p, O_PATH | O_CLOEXEC);
		if (fd == -1 &&
		    (sx->sx_paths[i].cp_access & CONFINE_LL_OPTIONAL))
			continue;
		if (fd == -1 || fstat(fd, &st) == -1)
			return SBX_STEP_ROOT;
		tr[ntr].tr_dir = S_ISDIR(st.st_mode);
		tr[ntr].tr_tree = tree_clone(fd, SBX_MNT_RO,
		    (sx->sx_paths[i].cp_access & CONFINE_LL_WRITE) != 0);
		close(fd);
		if (tr[ntr].tr_tree == -1)
			return SBX_STEP_ROOT;
		ntr++;
	}
	/*
	 * A cwd under /tmp beneath no root (an operator's HOME there) is
	 * shown too, read-only: the agent may enter it, and Landlock still
	 * decides what it may read, as for any other path of the host.
	 */
	if (sx->sx_cwd != NULL && under_tmp(sx->sx_cwd) &&
	    strcmp(sx->sx_cwd, "/tmp") != 0 && ntr < nitems(tr)) {
		for (j = 0; j < ntr; j++)
			if (strcmp(sx->sx_cwd, tr[j].tr_path) == 0 ||
			    beneath(sx->sx_cwd, tr[j].tr_path))
				break;
		if (j == ntr) {
			if ((fd = open(sx->sx_cwd,
				 O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
				return SBX_STEP_CHDIR;
			tr[ntr].tr_path = sx->sx_cwd;
			tr[ntr].tr_nested = 0;
			tr[ntr].tr_dir = 1;
			tr[ntr].tr_tree = tree_clone(fd, SBX_MNT_RO, 0);
			close(fd);
			if (tr[ntr].tr_tree == -1)
				return SBX_STEP_CHDIR;
			ntr++;
		}
	}
	for (i = 0; i < ntr; i++)
		for (j = 0; j < ntr; j++)
			if (i != j && beneath(tr[i].tr_path, tr[j].tr_path))
				tr[i].tr_nested = 1;
	/* Write roots elsewhere: held, and copied writable, by handle. */
	for (i = 0; i < rt->r_nwrite && nw < nitems(wfd); i++) {
		if (under_tmp(rt->r_write[i]))
			continue;
		if ((wfd[nw] = open(rt->r_write[i],
			 O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1)
			return SBX_STEP_ROOT;
		if ((wtree[nw] = tree_clone(wfd[nw], SBX_MNT_RO, 1)) == -1)
			return SBX_STEP_WRITABLE;
		nw++;
	}
	/* The private tmp, its shadow source and the mountpoints in it. */
	if ((tmpm = tmp_tree(sx)) == -1)
		return SBX_STEP_TMP;
	if ((tmpfd = openat(tmpm, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return SBX_STEP_TMP;
	if ((emptyfd = openat(tmpfd, ".cordon-shadow",
		 O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400)) ==
	    -1)
		return SBX_STEP_TMP;
	for (i = 0; i < ntr; i++)
		if (!tr[i].tr_nested && tr[i].tr_path[4] != '\0' &&
		    tmp_mountpoint(tmpfd, &tr[i]) == -1)
			return SBX_STEP_TMP;
	/* Everything the agent did not get a copy of: read-only. */
	if (setattr_at(AT_FDCWD, "/", AT_RECURSIVE, SBX_MNT_RO, 0) == -1)
		return SBX_STEP_READONLY;
	/*
	 * But /dev itself (not /dev/shm, /dev/pts): /dev/null and the few
	 * others of sbx_system are devices; Landlock lets an agent open
	 * those and nothing else there, and no agent can make a node.
	 */
	if (stat("/dev", &st) == 0 &&
	    setattr_at(AT_FDCWD, "/dev", 0, 0, MOUNT_ATTR_NODEV) == -1 &&
	    errno != EINVAL)
		return SBX_STEP_READONLY;
	for (i = 0; i < nw; i++) {
		r = attach_fd(wtree[i], wfd[i]);
		close(wfd[i]);
		if (r == -1)
			return SBX_STEP_WRITABLE;
	}
	if (attach_path(tmpm, "/tmp") == -1)
		return SBX_STEP_TMP;
	/*
	 * Parents before the roots nested in them.  The mountpoints are in
	 * this run's own tmp; a nested one lies in a root copied just now.
	 */
	for (r = 0; r < 2; r++)
		for (i = 0; i < ntr; i++) {
			if (tr[i].tr_nested != r)
				continue;
			if ((fd = open(tr[i].tr_path,
				 O_PATH | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
			    attach_fd(tr[i].tr_tree, fd) == -1)
				return SBX_STEP_ROOT;
			close(fd);
		}
	if ((sx->sx_clone & CLONE_NEWPID) &&
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		NULL) == -1)
		return SBX_STEP_PROC;
	if (sx->sx_gate && child_gate_dir(tmpfd) == -1)
		return SBX_STEP_GATE;
	/* cordon's own sockets: nothing there for an agent to dial. */
	if (sbx_hide != NULL && stat(sbx_hide, &st) == 0 &&
	    ((m = tmpfs_new(4096, "0555", SBX_MNT_DEAD)) == -1 ||
		attach_path(m, sbx_hide) == -1))
		return SBX_STEP_HIDE;
	if ((r = scan_roots(sx, 1, emptyfd)) != 0)
		return r;
	/* Only the shadows hold the empty file now. */
	(void)unlinkat(tmpfd, ".cordon-shadow", 0);
	close(emptyfd);
	close(tmpfd);
	/* The old cwd is beneath the mounts: enter it again. */
	if (sx->sx_cwd != NULL && chdir(sx->sx_cwd) == -1)
		return SBX_STEP_CHDIR;
	return 0;
}

/*
 * EG-1, in the child of a proxy run (its own empty netns, its caps in
 * its own user namespace): bring up lo, listen on 127.0.0.1:3128 and
 * hand the listener to the spawner, which gives it to egressd.  Stack
 * and syscalls only (the spawn helper is vfork-style).
 */
static int
child_proxy(void)
{
	struct sockaddr_in sin;
	struct ifreq ifr;
	int s, fd, r;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	r = ioctl(s, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (r == 0)
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	close(s);
	if (r == -1 ||
	    (fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(EGRESS_PROXY_PORT);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r = bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
		    listen(fd, 64) == 0 &&
		    ipc_sendmsg_fd(SBX_NOTIFY_FD, "p", 1, fd) == 1
		? 0
		: -1;
	close(fd);
	return r;
}

int
sandbox_child(void *arg)
{
	const struct sandbox_run *sx = arg;
	unsigned int l = sx->sx_plan->pl_layers, rs;
	int fd, r;

	/*
	 * SP-7 first: every process the agent (or this hook) makes is
	 * counted against the run's pids.max.  "0" is the writer itself.
	 */
	if (sx->sx_cgroup) {
		r = write(SBX_CGROUP_FD, "0", 1);
		if (r != 1) {
			if (r != -1)
				errno = EIO;
			return SBX_STEP_CGROUP;
		}
		close(SBX_CGROUP_FD);
	}
	if ((sx->sx_clone & CLONE_NEWUSER) && child_idmap(sx) == -1)
		return SBX_STEP_UIDMAP;
	if (sx->sx_clone & CLONE_NEWNS) {
		if ((r = child_mounts(sx)) != 0)
			return r;
	} else if ((r = scan_roots(sx, 0, -1)) != 0)
		return r; /* Landlock cannot carve a hole: refuse (SBX-2) */
	/* EG-1: while the child still holds its namespace's caps. */
	if (sx->sx_plan->pl_network == MF_NET_PROXY && child_proxy() == -1)
		return SBX_STEP_PROXY;
	if ((l & SBX_L_CAPS) && confine_drop_caps_agent() == -1)
		return SBX_STEP_CAPS;
	if ((l & SBX_L_NNP) && confine_no_new_privs() == -1)
		return SBX_STEP_NNP;
	if (l & SBX_L_LANDLOCK) {
		rs = CONFINE_RS_QUIET | CONFINE_RS_LOG_EXEC;
		if (l & SBX_L_LL_NET)
			rs |= CONFINE_RS_NO_NET;
		if ((fd = confine_landlock_ruleset(
			 sx->sx_paths, sx->sx_npaths, rs)) == -1)
			return SBX_STEP_LL_RULESET;
		if (confine_landlock_restrict(fd, rs) == -1)
			return SBX_STEP_LL_RESTRICT;
	}
	if (l & SBX_L_SECCOMP) {
		/* Compiled at start; loading it is one syscall. */
		fd = confine_seccomp_agent_install(
		    &sbx_bpf[(l & SBX_L_SC_NET) ? sx->sx_plan->pl_network
						: MF_NET_ALLOW]);
		if (fd == -1)
			return SBX_STEP_SECCOMP;
		/* The listener goes to the spawner; the agent never has it. */
		r = ipc_sendmsg_fd(SBX_NOTIFY_FD, "n", 1, fd) == 1 ? 0 : -1;
		close(fd);
		if (r == -1)
			return SBX_STEP_NOTIFY;
	}
	/* The way back for the listener, the gate dir and the proxy: done. */
	close(SBX_NOTIFY_FD);
	return 0;
}
