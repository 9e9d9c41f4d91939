/*
 * The shared shape of every cordon daemon.  Under cordond, fd 3 is the
 * control channel, data channels to peer daemons arrive over it as
 * MSG_PEER_FD, and SIGTERM or the parent's departure ends the event loop.
 * Under systemd (--systemd), fd 3 is the daemon's socket-activated
 * listener instead: peers connect to it and are told apart by
 * SO_PEERCRED, and the daemon dials the peers it talks to in
 * --socket-dir.  The message protocol is the same either way.
 */
#ifndef CORDON_DAEMON_H
#define CORDON_DAEMON_H

#include "ipc.h"
#include "proc.h"

#include <sys/types.h>

#include <stdint.h>

#define DAEMON_CTL_FD	   3
#define DAEMON_SOCKDIR_MAX 80 /* leaves room for "/spawner.sock" */

struct event_base;
struct event;
struct daemon_args;

/* systemd mode: one timer per peer we dial, with its backoff. */
struct daemon_dial {
	struct daemon *dd_d;
	enum proc_id dd_p;
	struct event *dd_ev;
	unsigned int dd_ms; /* before the next dial */
	uint64_t dd_since;  /* monotonic ms the channel came up */
};

struct daemon {
	enum proc_id d_self;
	struct event_base *d_base;
	struct ipc_conn *d_parent;
	struct ipc_conn *d_peers[PROC_MAX];
	const struct ipc_dispatch *d_peer_table; /* rows for data channels */
	void (*d_peer_up)(struct daemon *, enum proc_id);
	/* Adds the daemon's own facts to its MSG_STATUS_OK answer. */
	void (*d_status_extra)(struct daemon *, struct json_object *);
	/*
	 * SIGTERM/SIGINT: called instead of leaving the loop, once; the
	 * daemon leaves it itself when done (bounded).  A second signal
	 * leaves at once.  NULL: leave at once.
	 */
	void (*d_stop)(struct daemon *);
	int d_stopping;	 /* d_stop was called */
	int d_signalled; /* a SIGTERM or SIGINT came */
	void *d_arg;
	/* systemd mode (d_systemd): our listener, whom we accept, whom we
	 * dial and where. */
	int d_systemd;
	int d_listen_fd; /* -1 under cordond */
	struct event *d_accept_ev;
	struct daemon_dial d_dial[PROC_MAX];
	uid_t d_peer_uid[PROC_MAX];
	gid_t d_peer_gid[PROC_MAX];
	unsigned int d_peer_known; /* PROC_BIT()s with a --peer user */
	unsigned int d_peer_group; /* PROC_BIT()s with a --peer group too */
	char d_sockdir[DAEMON_SOCKDIR_MAX];
};

/*
 * Create the event base and signal handlers (before confinement, since
 * they need calls the filters refuse), then the caller confines itself
 * and calls daemon_start() to begin reading messages.
 */
void daemon_prepare(struct daemon *, enum proc_id self,
    const struct ipc_dispatch *peer_table, const struct daemon_args *);
/* The SC_* groups the daemon's mode adds to its own seccomp filter. */
unsigned int daemon_syscalls(const struct daemon *);
/* Under cordond, start reading the control channel; under systemd,
 * start accepting peers and dialling the peers we talk to. */
void daemon_start(struct daemon *, const struct ipc_dispatch *parent_table);
int daemon_loop(struct daemon *);

/* Common handlers every parent table lists (and, for MSG_STATUS, every
 * peer table under systemd: the broker gathers health itself). */
void daemon_status_h(struct ipc_conn *, struct ipc_msg *, void *);
void daemon_peer_fd_h(struct ipc_conn *, struct ipc_msg *, void *);
void daemon_shutdown_h(struct ipc_conn *, struct ipc_msg *, void *);

/* MSG_PEER_FD's payload: {peer}, the daemon at the other end. */
extern const struct json_shape daemon_peer_fd_shape[1];

/* clang-format off */
#define DAEMON_PARENT_ROWS						\
	{MSG_STATUS, PROC_BIT(PROC_PARENT), 2, 64, IPC_FD_NONE,		\
	    daemon_status_h, IPC_EMPTY},				\
	{MSG_PEER_FD, PROC_BIT(PROC_PARENT), 2, 64, IPC_FD_REQUIRED,	\
	    daemon_peer_fd_h, IPC_KEYS(daemon_peer_fd_shape)},		\
	{MSG_SHUTDOWN, PROC_BIT(PROC_PARENT), 2, 64, IPC_FD_NONE,	\
	    daemon_shutdown_h, IPC_EMPTY}
#define DAEMON_PEER_STATUS_ROW						\
	{MSG_STATUS, PROC_BIT(PROC_BROKER), 2, 64, IPC_FD_NONE,		\
	    daemon_status_h, IPC_EMPTY}
/* clang-format on */

/* Common getopt handling for daemons: --user NAME, --debug. */
struct daemon_args {
	const char *da_user;
	const char *da_path; /* the daemon's one path argument, if any */
	int da_debug;
	/* --systemd, --socket-dir DIR, --peer NAME=USER[:GROUP] (every
	 * daemon). */
	int da_systemd;
	const char *da_sockdir;
	const char *da_peer[PROC_MAX];	     /* user names by proc_id */
	const char *da_peer_group[PROC_MAX]; /* group names, or NULL */
};
#define DAEMON_ARG_PATH_OPT 0x4u /* flags: the path option may be absent */
/* A daemon's own numeric option: --NAME N, N in [min, max], into *val. */
#define DAEMON_MAX_NUMOPTS 8
struct daemon_numopt {
	const char *dn_name;
	long dn_min;
	long dn_max;
	long *dn_val; /* keeps its default when the option is absent */
};
/* A daemon's own directory option: --NAME DIR, DIR absolute, given at
 * most dp_max times, into dp_val[0 .. *dp_n - 1]. */
#define DAEMON_MAX_DIROPTS 4
struct daemon_diropt {
	const char *dp_name;
	size_t dp_max;
	const char **dp_val;
	size_t *dp_n; /* 0 when the option is absent */
};
/* nums, dirs: NULL, or an array ending with a NULL name. */
void daemon_parse_args(int argc, char **argv, const char *pathopt,
    const struct daemon_numopt *nums, const struct daemon_diropt *dirs,
    unsigned int flags, struct daemon_args *a);

/* Small json-c accessors that refuse wrong types and embedded NULs. */
const char *json_get_str(struct json_object *, const char *key, size_t maxlen);
int json_get_int(struct json_object *, const char *key, long long min,
    long long max, long long *out);

#endif
