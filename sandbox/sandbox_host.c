/*
 * The host side of the per-run sandbox (SBX-5): what this host offers,
 * probed once at start after the spawner confined itself (Landlock ABI,
 * user namespaces, seccomp, the agent seccomp layer compiled once, the
 * helpers beside the spawner), and how health shows it.
 */
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <linux/filter.h>

#include "charset.h"
#include "config.h"
#include "confine.h"
#include "log.h"
#include "sandbox.h"
#include "sandbox_int.h"
#include "util.h"

struct sandbox_host sbx_host = {-1, 0, 0, 0, 0, 0, 0};

/*
 * `cordon` beside the spawner (a build tree), else in the bindir it was
 * installed to, so agent hooks can run `cordon gate`; empty if neither.
 */
char sbx_cordon[PATH_MAX];
/* `cordon-init` beside the spawner: pid 1 of each run's pid namespace. */
char sbx_init[PATH_MAX];
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
struct sock_fprog sbx_bpf[3];

/* Can this process make a user namespace (and mount in it)? */
static int
probe_userns(void)
{
	pid_t pid;
	int st;

	pid = (pid_t)syscall(SYS_clone,
	    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
		CLONE_NEWIPC | SIGCHLD,
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

void
sandbox_helpers_dir(const char *dir)
{
	sbx_helpers = dir;
}

/*
 * SBX-8: the hook wiring names this path in JSON and TOML strings and a
 * shell line, unquoted: only an absolute path of plain characters.
 */
static int
cordon_path_ok(const char *p)
{
	return charset_shape(
		   p, strlen(p), "/", "a-zA-Z0-9/._+-", 1, SIZE_MAX) &&
	       access(p, X_OK) == 0;
}

const char *
sandbox_cordon(void)
{
	return sbx_cordon[0] != '\0' ? sbx_cordon : NULL;
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
			    !cordon_path_ok(sbx_cordon))
				sbx_cordon[0] = '\0';
			if (snprintf(sbx_init, sizeof(sbx_init),
				"%s/cordon-init",
				self) >= (int)sizeof(sbx_init) ||
			    access(sbx_init, X_OK) == -1)
				sbx_init[0] = '\0';
		}
	}
	if (sbx_cordon[0] == '\0' &&
	    (snprintf(sbx_cordon, sizeof(sbx_cordon), "%s/cordon",
		 CORDON_BINDIR) >= (int)sizeof(sbx_cordon) ||
		!cordon_path_ok(sbx_cordon)))
		sbx_cordon[0] = '\0';
	if (sbx_cordon[0] == '\0')
		log_warnx("sandbox: no cordon beside the spawner nor in "
			  "%s; runs whose hooks name {cordon} are refused",
		    CORDON_BINDIR);
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
