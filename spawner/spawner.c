/*
 * cordon-spawner: runs agent CLIs from manifests.  The only daemon that
 * executes programs or holds secret values.  Its seccomp layer is a deny
 * set inherited by every agent; each agent adds its own stricter layer.
 *
 * This milestone confines the daemon and answers status; runs, actions
 * and health probes (SP-*) belong to the spawner work (issue 3) and are
 * refused by the dispatch table until then.
 */
#include <string.h>

#include "confine.h"
#include "daemon.h"
#include "log.h"
#include "msg.h"

static struct daemon spawner;

static const struct ipc_dispatch parent_table[] = {
    DAEMON_PARENT_ROWS,
    {MSG_NONE, 0, 0, 0, 0, NULL},
};

static const struct ipc_dispatch peer_table[] = {
    {MSG_NONE, 0, 0, 0, 0, NULL},
};

int
main(int argc, char **argv)
{
	struct daemon_args a;
	struct confine_spec spec;

	log_init("spawner", 0);
	daemon_parse_args(argc, argv, "home", &a);
	log_init("spawner", a.da_debug);
	daemon_prepare(&spawner, PROC_SPAWNER, peer_table);

	/*
	 * No Landlock on the spawner itself: every agent inherits it, and
	 * agents get their own per-run ruleset instead (SBX-1).
	 */
	memset(&spec, 0, sizeof(spec));
	spec.cs_name = "spawner";
	spec.cs_user = a.da_user;
	spec.cs_seccomp = CONFINE_SECCOMP_DENY;
	spec.cs_nofile = 4096;
	confine_self(&spec);

	daemon_start(&spawner, parent_table);
	log_debug("ready");
	return daemon_loop(&spawner);
}
