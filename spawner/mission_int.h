/*
 * Between mission.c (the table, runs, outputs, IPC) and mission_sched.c
 * (the cron scheduler and its state file).  Private to the spawner.
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
	int me_has_slot;
	long long me_last_slot; /* epoch seconds of the last cron slot seen */
};

extern struct mission_ent *mission_tab[MISSIONS_MAX];
extern size_t mission_n;

/* mission.c: a cron slot's run (defaults for options), or its skip. */
void mission_cron_run(struct mission_ent *);
void mission_skip(struct mission_ent *, const char *errclass);

/* mission_sched.c */
void mission_sched_start(const char *state_dir);
/* "now": the test clock (CORDON_TEST_CLOCK_FILE) if set, else real. */
time_t mission_now(void);
/* t broken down in zone tz (TZ set, tzset, localtime_r, restored). */
int mission_localtime(const char *tz, time_t t, struct tm *out);

#endif
