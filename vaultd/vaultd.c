/*
 * cordon-vaultd: the only process that may write the operator's vault,
 * and only beneath 00_Inbox/cordon/.  Holds one directory fd on the vault
 * root; its Landlock ruleset reads the vault and writes the inbox only.
 *
 * This milestone confines the daemon and answers status; note reads and
 * writes (VA-1 ... VA-5) belong to the vault work (issue 5) and are
 * refused by the dispatch table until then.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine.h"
#include "daemon.h"
#include "log.h"
#include "msg.h"

#define VAULT_INBOX "00_Inbox/cordon"

static struct daemon vaultd;

static const struct ipc_dispatch parent_table[] = {
    DAEMON_PARENT_ROWS,
    {MSG_NONE, 0, 0, 0, 0, NULL},
};

static const struct ipc_dispatch peer_table[] = {
    {MSG_NONE, 0, 0, 0, 0, NULL},
};

/*
 * Create 00_Inbox/cordon through held fds, never following a symlink.
 * Started as root for an operator, the directories are the operator's.
 */
static int
vault_make_inbox(int rootfd, uid_t uid, gid_t gid)
{
	int fd, next;
	const char *parts[] = {"00_Inbox", "cordon"};
	size_t i;

	if ((fd = dup(rootfd)) == -1)
		return -1;
	for (i = 0; i < 2; i++) {
		if (mkdirat(fd, parts[i], 0700) == -1 && errno != EEXIST) {
			close(fd);
			return -1;
		}
		next = openat(fd, parts[i],
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next == -1)
			return -1;
		fd = next;
		if (uid != (uid_t)-1 && fchown(fd, uid, gid) == -1) {
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}

int
main(int argc, char **argv)
{
	struct daemon_args a;
	struct confine_path paths[2];
	struct confine_spec spec;
	char inbox[PATH_MAX];
	struct passwd *pw;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	int rootfd;

	log_init("vaultd", 0);
	daemon_parse_args(argc, argv, "vault", &a);
	log_init("vaultd", a.da_debug);
	daemon_prepare(&vaultd, PROC_VAULTD, peer_table);

	rootfd = open(a.da_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd == -1)
		fatal("vault root");
	if (getuid() == 0 && a.da_user != NULL) {
		if ((pw = getpwnam(a.da_user)) == NULL)
			fatalx("no such user");
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}
	if (vault_make_inbox(rootfd, uid, gid) == -1)
		fatal("vault inbox");
	if (snprintf(inbox, sizeof(inbox), "%s/%s", a.da_path, VAULT_INBOX) >=
	    (int)sizeof(inbox))
		fatalx("vault path too long");

	memset(&spec, 0, sizeof(spec));
	paths[0].cp_path = a.da_path;
	paths[0].cp_access = CONFINE_LL_READ;
	paths[1].cp_path = inbox;
	paths[1].cp_access = CONFINE_LL_WRITE;
	spec.cs_name = "vaultd";
	spec.cs_user = a.da_user;
	spec.cs_paths = paths;
	spec.cs_npaths = 2;
	spec.cs_seccomp = CONFINE_SECCOMP_ALLOW;
	spec.cs_syscalls = SC_BASE | SC_FS_READ | SC_FS_WRITE;
	spec.cs_no_net = 1;
	spec.cs_nofile = 128;
	confine_self(&spec);

	daemon_start(&vaultd, parent_table);
	log_debug("ready");
	return daemon_loop(&vaultd);
}
