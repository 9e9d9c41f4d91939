/*
 * mission.c's table of missions, for the files that read it.  Private
 * to the spawner.
 */
#ifndef CORDON_SPAWNER_MISSION_INT_H
#define CORDON_SPAWNER_MISSION_INT_H

#include <stdint.h>
#include <time.h>

#include "mission.h"
#include "mission_load.h"

struct mission_last {
	char ml_run_id[17];
	const char *ml_trigger;	 /* "manual" | "cron" */
	const char *ml_status;	 /* success | error | denied | skipped */
	const char *ml_errclass; /* NULL, or one of the closed set */
	uint64_t ml_ms;
	unsigned int ml_persisted, ml_emitted;
	int64_t ml_finished; /* epoch ms */
};

struct mission_ent {
	struct mission me_m;
	int me_running;
	uint64_t me_started; /* monotonic ms, while running */
	int me_has_last;
	struct mission_last me_last;
	int me_skipped; /* a cron skip recorded since the last run began */
};

extern struct mission_ent *mission_tab[MISSIONS_MAX];
extern size_t mission_n;

#endif
