/*
 * The shared shape of every cordon daemon: fd 3 is the control channel to
 * cordond, data channels to peer daemons arrive over it as MSG_PEER_FD,
 * and SIGTERM or the parent's departure ends the event loop.
 */
#ifndef CORDON_DAEMON_H
#define CORDON_DAEMON_H

#include "ipc.h"
#include "proc.h"

#define DAEMON_CTL_FD 3

struct event_base;

struct daemon {
	enum proc_id d_self;
	struct event_base *d_base;
	struct ipc_conn *d_parent;
	struct ipc_conn *d_peers[PROC_MAX];
	const struct ipc_dispatch *d_peer_table; /* rows for data channels */
	void (*d_peer_up)(struct daemon *, enum proc_id);
	/* Adds the daemon's own facts to its MSG_STATUS_OK answer. */
	void (*d_status_extra)(struct daemon *, struct json_object *);
	void *d_arg;
};

/*
 * Create the event base and signal handlers (before confinement, since
 * they need calls the filters refuse), then the caller confines itself
 * and calls daemon_start() to begin reading messages.
 */
void daemon_prepare(
    struct daemon *, enum proc_id self, const struct ipc_dispatch *peer_table);
void daemon_start(struct daemon *, const struct ipc_dispatch *parent_table);
int daemon_loop(struct daemon *);

/* Common handlers every parent table lists. */
void daemon_status_h(struct ipc_conn *, struct ipc_msg *, void *);
void daemon_peer_fd_h(struct ipc_conn *, struct ipc_msg *, void *);
void daemon_shutdown_h(struct ipc_conn *, struct ipc_msg *, void *);

#define DAEMON_PARENT_ROWS                                                     \
	{MSG_STATUS, PROC_BIT(PROC_PARENT), 2, 64, IPC_FD_NONE,                \
	    daemon_status_h},                                                  \
	    {MSG_PEER_FD, PROC_BIT(PROC_PARENT), 2, 64, IPC_FD_REQUIRED,       \
		daemon_peer_fd_h},                                             \
	{                                                                      \
		MSG_SHUTDOWN, PROC_BIT(PROC_PARENT), 2, 64, IPC_FD_NONE,       \
		    daemon_shutdown_h                                          \
	}

/* Common getopt handling for daemons: --user NAME, --debug. */
#define DAEMON_MAX_PROTECT 4
struct daemon_args {
	const char *da_user;
	const char *da_path; /* the daemon's one path argument, if any */
	int da_debug;
	/* --protect DIR (repeatable, the spawner only): dirs no agent may
	 * reach besides the fixed SBX-2 list (config, audit, vault). */
	const char *da_protect[DAEMON_MAX_PROTECT];
	size_t da_nprotect;
	/* --state-dir DIR (the spawner only): where its scheduler state
	 * lives; absolute, cordond creates it 0700. */
	const char *da_state;
};
#define DAEMON_ARG_PROTECT 0x1u /* flags: accept --protect */
#define DAEMON_ARG_STATE   0x2u /* flags: accept --state-dir */
/* A daemon's own numeric option: --NAME N, N in [min, max], into *val. */
#define DAEMON_MAX_NUMOPTS 4
struct daemon_numopt {
	const char *dn_name;
	long dn_min;
	long dn_max;
	long *dn_val; /* keeps its default when the option is absent */
};
/* nums: NULL, or an array ending with a NULL dn_name. */
void daemon_parse_args(int argc, char **argv, const char *pathopt,
    const struct daemon_numopt *nums, unsigned int flags,
    struct daemon_args *a);

/* Small json-c accessors that refuse wrong types and embedded NULs. */
const char *json_get_str(struct json_object *, const char *key, size_t maxlen);
int json_get_int(struct json_object *, const char *key, long long min,
    long long max, long long *out);

#endif
