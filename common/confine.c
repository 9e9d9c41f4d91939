/*
 * Self-confinement for every cordon daemon (SU-2, SBX-1): service user,
 * capabilities, no_new_privs, Landlock, rlimits, seccomp, in that order,
 * and the health report of what holds.  Each layer is fail-closed; only
 * confine_self() calls fatal.  The layers themselves: confine_caps.c,
 * confine_landlock.c, confine_seccomp.c.  Touches only this process.
 */
#include "config.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cap-ng.h>
#include <json-c/json.h>
#include <seccomp.h>

#include "confine.h"
#include "landlock_abi.h"
#include "log.h"
#include "confine_impl.h"
#include "util.h"

/* Root with a service user: its entry (fatal if it is unknown or uid
 * 0); else NULL. */
static struct passwd *
confine_user(const struct confine_spec *cs, const char *name)
{
	struct passwd *pw;

	if (getuid() == 0 && cs->cs_user != NULL) {
		errno = 0;
		if ((pw = getpwnam(cs->cs_user)) == NULL) {
			if (errno != 0)
				fatal("%s: getpwnam %s", name, cs->cs_user);
			fatalx("%s: no such user %s", name, cs->cs_user);
		}
		if (pw->pw_uid == 0)
			fatalx(
			    "%s: service user %s is uid 0", name, cs->cs_user);
		return pw;
	}
	if (cs->cs_user != NULL)
		log_debug("%s: not root, staying uid %u", name,
		    (unsigned int)getuid());
	return NULL;
}

/* The daemon's Landlock ruleset (fatal when it cannot be had), or -1
 * for the spawner, which has none of its own. */
static int
confine_ruleset(const struct confine_spec *cs, const char *name)
{
	int rsfd, no_net;

	if (confine_landlock_abi() < 1)
		fatalx("%s: landlock unavailable: %s; refusing to run "
		       "unconfined",
		    name, ll_unavailable_why(ll_abi_errno));
	/*
	 * Landlock learned network rights in ABI 4.  Below that, a daemon
	 * under the allowlist filter is still kept off the network: none of
	 * the SC_* groups grants socket, bind or connect.  A denylist daemon
	 * has no such second layer and must refuse (fail closed).
	 */
	no_net = cs->cs_no_net;
	if (no_net && confine_landlock_abi() < 4 &&
	    cs->cs_seccomp == CONFINE_SECCOMP_ALLOW) {
		log_info("landlock ABI %d has no network rights; the seccomp "
			 "allowlist (no socket, bind or connect) denies the "
			 "network instead",
		    confine_landlock_abi());
		no_net = 0;
	}
	rsfd = -1;
	if (!cs->cs_no_landlock &&
	    (rsfd = confine_landlock_ruleset(cs->cs_paths, cs->cs_npaths,
		 no_net ? CONFINE_RS_NO_NET : 0)) == -1)
		fatal("%s: landlock ruleset", name);
	return rsfd;
}

/* The whole sequence */

void
confine_self(const struct confine_spec *cs)
{
	struct passwd *pw;
	struct rlimit rl;
	const char *name;
	uid_t uid = 0;
	gid_t gid = 0;
	int rsfd;

	if (cs == NULL)
		fatalx("confine: no spec");
	name = cs->cs_name != NULL ? cs->cs_name : log_procname();

	/* (a) Resolve the service user while /etc/passwd is still visible. */
	if ((pw = confine_user(cs, name)) != NULL) {
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}
	/* (b) Open the allowed paths now, with the ids that can see them. */
	rsfd = confine_ruleset(cs, name);

	/* (c) Service user; clear the bounding set while we still may. */
	if (pw != NULL) {
		if (cap_drop_bounding() == -1)
			fatal("%s: dropping the bounding set", name);
		if (confine_switch_user(uid, gid) == -1)
			fatal("%s: switching to user %s", name, cs->cs_user);
	}

	/* (d) (e) */
	if (confine_drop_caps() == -1)
		fatal("%s: dropping capabilities", name);
	if (confine_no_new_privs() == -1)
		fatal("%s: no_new_privs", name);

	/* (f) */
	if (rsfd != -1) {
		if (confine_landlock_restrict(rsfd, 0) == -1)
			fatal("%s: landlock_restrict_self", name);
		ll_on = 1;
	}

	/* (g) */
	if (cs->cs_nofile != 0) {
		rl.rlim_cur = rl.rlim_max = cs->cs_nofile;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			fatal("%s: RLIMIT_NOFILE %lu", name, cs->cs_nofile);
	}

	/* (h) Last: the filter no longer allows the calls above. */
	if (confine_seccomp(cs->cs_seccomp, cs->cs_syscalls) == -1)
		fatal("%s: seccomp", name);
	log_debug("confined: uid %u, landlock ABI %d, seccomp %s",
	    (unsigned int)getuid(), ll_abi,
	    cs->cs_seccomp == CONFINE_SECCOMP_ALLOW ? "allowlist" : "denylist");
}

/* Health report (SU-2); only SC_BASE syscalls. */

static int
st_add(struct json_object *o, const char *key, struct json_object *v)
{
	if (v == NULL || json_object_object_add(o, key, v) != 0) {
		json_object_put(v);
		return 1;
	}
	return 0;
}

struct json_object *
confine_status_json(void)
{
	struct json_object *o;
	uint64_t eff;
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	char hex[17];
	int nnp, sc, abi, bad = 0;

	if (getresuid(&ru, &eu, &su) == -1 || getresgid(&rg, &eg, &sg) == -1 ||
	    cap_read(&eff, NULL, NULL) == -1)
		return NULL;
	nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	sc = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	/* Probing would be killed under an allowlist: only when unfiltered. */
	abi = ll_abi;
	if (abi == -2 && sc == 0)
		abi = confine_landlock_abi();
	if (abi < 0)
		abi = -1;
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)eff);

	if ((o = json_object_new_object()) == NULL)
		return NULL;
	bad |= st_add(o, "pid", json_object_new_int((int)getpid()));
	bad |= st_add(o, "uid", json_object_new_int((int)eu));
	bad |= st_add(o, "gid", json_object_new_int((int)eg));
	bad |= st_add(o, "capEff", json_object_new_string(hex));
	bad |= st_add(o, "noNewPrivs", json_object_new_int(nnp));
	bad |= st_add(o, "seccomp", json_object_new_int(sc));
	bad |=
	    st_add(o, "landlock", json_object_new_string(ll_on ? "on" : "off"));
	bad |= st_add(o, "landlockAbi", json_object_new_int(abi));
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}
