/*
 * The cron scheduler's two decisions (MI-1), pure: which minute slots
 * since the last one seen matter (cordon-sched), and what a fire
 * does to a mission (the spawner).  No clock, no zone: the caller's
 * match function breaks a slot down in the mission's zone.
 */
#include "mission.h"

void
mission_slots_scan(long long last, long long now, long long lookback,
    int (*match)(long long slot, void *arg), void *arg, int *cur, int *missed)
{
	long long s;

	*cur = match(now, arg);
	*missed = 0;
	s = last + 60;
	if (s < now - lookback)
		s = now - lookback;
	for (; s < now && !*missed; s += 60)
		*missed = match(s, arg);
}

void
mission_fire_decide(
    int cur, int missed, int catch_up, int running, struct mission_fire *out)
{
	out->mf_skip_missed = missed && !catch_up;
	out->mf_run = out->mf_busy = 0;
	if (!cur && !(missed && catch_up))
		return;
	if (running)
		out->mf_busy = 1;
	else
		out->mf_run = 1;
}
