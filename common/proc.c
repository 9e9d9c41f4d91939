/*
 * Process names and the edge table of DESIGN.md.  Pure data.
 */
#include <string.h>

#include "proc.h"

static const char *const proc_names[PROC_MAX] = {
    [PROC_PARENT] = "cordond",
    [PROC_AUDITD] = "auditd",
    [PROC_VAULTD] = "vaultd",
    [PROC_EGRESSD] = "egressd",
    [PROC_GATED] = "gated",
    [PROC_SPAWNER] = "spawner",
    [PROC_BROKER] = "broker",
    [PROC_SCHED] = "sched",
};

/*
 * Data channels between daemons (the parent has a control channel to
 * each).  A channel carries requests both ways where both tables have
 * rows for them, so the table is symmetric; who may send what is in each
 * receiver's dispatch table (docs/ARCHITECTURE.md "Message types per
 * edge").  egressd has three: the spawner (runs' listeners), auditd,
 * and the broker, whose one row there is MSG_STATUS (health).  sched
 * has one, the spawner: the cron missions in, their fires out.  gated
 * has three: the spawner (runs' gate channels), auditd (verb.run) and
 * the broker (approvals, health).
 */
/* clang-format off */
static const unsigned char proc_edges[PROC_MAX][PROC_MAX] = {
    [PROC_BROKER] =  {[PROC_SPAWNER] = 1, [PROC_VAULTD] = 1, [PROC_AUDITD] = 1,
		      [PROC_EGRESSD] = 1, [PROC_GATED] = 1},
    [PROC_SPAWNER] = {[PROC_BROKER] = 1, [PROC_VAULTD] = 1, [PROC_AUDITD] = 1,
		      [PROC_EGRESSD] = 1, [PROC_GATED] = 1, [PROC_SCHED] = 1},
    [PROC_EGRESSD] = {[PROC_SPAWNER] = 1, [PROC_AUDITD] = 1, [PROC_BROKER] = 1},
    [PROC_GATED] =   {[PROC_SPAWNER] = 1, [PROC_AUDITD] = 1, [PROC_BROKER] = 1},
    [PROC_VAULTD] =  {[PROC_BROKER] = 1, [PROC_SPAWNER] = 1, [PROC_AUDITD] = 1},
    [PROC_AUDITD] =  {[PROC_BROKER] = 1, [PROC_SPAWNER] = 1, [PROC_VAULTD] = 1,
		      [PROC_EGRESSD] = 1, [PROC_GATED] = 1},
    [PROC_SCHED] =   {[PROC_SPAWNER] = 1},
};

/* Trust, most trusted first (proc_blame). */
static const unsigned char proc_trust[PROC_MAX] = {
    [PROC_PARENT] = 0, [PROC_AUDITD] = 1, [PROC_VAULTD] = 2,
    [PROC_SPAWNER] = 3, [PROC_GATED] = 4, [PROC_EGRESSD] = 5,
    [PROC_BROKER] = 6, [PROC_SCHED] = 7,
};
/* clang-format on */

const char *
proc_name(enum proc_id p)
{
	if ((unsigned)p >= PROC_MAX)
		return "unknown";
	return proc_names[p];
}

int
proc_lookup(const char *name)
{
	int i;

	for (i = 0; i < PROC_MAX; i++)
		if (strcmp(proc_names[i], name) == 0)
			return i;
	return -1;
}

int
proc_edge(enum proc_id a, enum proc_id b)
{
	if ((unsigned)a >= PROC_MAX || (unsigned)b >= PROC_MAX)
		return 0;
	return proc_edges[a][b];
}

int
proc_blame(enum proc_id a, enum proc_id b)
{
	if (a == PROC_PARENT || b == PROC_PARENT || !proc_edge(a, b))
		return -1;
	return proc_trust[a] > proc_trust[b] ? (int)a : (int)b;
}
