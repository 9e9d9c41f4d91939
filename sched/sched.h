/*
 * The map of cordon-sched (MI-1): the cron scheduler of missions, a
 * daemon of its own so that neither the spawner (secrets, programs) nor
 * cordond (root) parses a cron line or a state file.  The spawner
 * declares its cron missions (id, cron, zone); sched keeps the last slot
 * of each in DIR/missions.json, written before it fires, and tells the
 * spawner which mission's slot came (MSG_MISSION_FIRE).  The spawner
 * alone decides what a fire does.  sched.c: the daemon, its rows and the
 * declaration; sched_state.c: the state file and the minute tick.
 */
#ifndef CORDON_SCHED_H
#define CORDON_SCHED_H

#include <time.h>

#include "daemon.h"
#include "mission.h"
#include "msg.h"

#define SCHED_STATE	 "missions.json"
#define SCHED_STATE_MAX	 (256 * 1024)
#define SCHED_LOOKBACK_S (7 * 86400)
#define SCHED_TICK_MS	 250 /* under the test clock, or while waiting */

struct smission {
	char sm_id[MSG_MISSION_ID_MAX + 1];
	char sm_tz[MI_TZ_MAX + 1];
	struct mi_cron sm_cron;
	int sm_has_slot;
	long long sm_last; /* epoch seconds of the last slot seen */
};

struct sched {
	struct daemon s_d;
	int s_dirfd; /* the state dir, held from before confinement */
	struct smission s_m[MSG_MISSION_CRON_N];
	size_t s_n;
	int s_declared; /* the spawner on this channel declared its list */
	struct event *s_tick;
	int s_clock_warned;
	int s_held; /* the state file cannot be written: nothing fires */
	unsigned long long s_fires;
};

extern struct sched sc;

/* sched_state.c */
void sched_state_load(void); /* refused or absent: starts clean */
int sched_state_last(const char *id, long long *out);
void sched_tick_start(void);
void sched_tick_soon(void);

#endif
