/*
 * The cordon process table: who exists and how peers are named.  Senders
 * in dispatch tables are bits of this enum, derived from the channel a
 * message arrived on, never from anything inside the message.
 */
#ifndef CORDON_PROC_H
#define CORDON_PROC_H

enum proc_id {
	PROC_PARENT = 0, /* cordond */
	PROC_AUDITD,
	PROC_VAULTD,
	PROC_EGRESSD, /* before the spawner: under systemd, it dials us */
	PROC_GATED,   /* likewise: the spawner and the broker dial it */
	PROC_SPAWNER,
	PROC_BROKER,
	PROC_SCHED, /* last: under systemd it dials the spawner, no one it */
	PROC_MAX
};

#define PROC_BIT(p) (1u << (p))

const char *proc_name(enum proc_id);
int proc_lookup(const char *name); /* -1 if unknown */

/* May daemon a talk to daemon b?  (The edges of DESIGN.md.) */
int proc_edge(enum proc_id a, enum proc_id b);

/*
 * Daemon a reports that b broke framing on their channel: the one to
 * restart, which is the less trusted of the two (auditd, vaultd, the
 * spawner, gated, egressd, the broker, sched, from most to least
 * trusted: gated parses what the agents send, egressd faces the agents'
 * traffic and the network; sched holds nothing but a clock), so a report
 * can never
 * take down a daemon more trusted than its sender.  -1 without an edge.
 */
int proc_blame(enum proc_id a, enum proc_id b);

#endif
