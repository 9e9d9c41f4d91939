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
	PROC_SPAWNER,
	PROC_BROKER,
	PROC_MAX
};

#define PROC_BIT(p) (1u << (p))

const char *proc_name(enum proc_id);
int proc_lookup(const char *name); /* -1 if unknown */

/* May daemon a talk to daemon b?  (The edges of DESIGN.md.) */
int proc_edge(enum proc_id a, enum proc_id b);

#endif
