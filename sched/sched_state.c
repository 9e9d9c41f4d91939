/*
 * sched's state file and its minute tick (MI-1).  DIR/missions.json
 * {"<id>": {"lastSlot": N}} is written atomically (atomic_write_at:
 * temp file, fsync, rename, fsync dir) BEFORE a fire is sent, so a
 * restart never fires a slot twice.  A slot missed while cordon was down
 * (at most SCHED_LOOKBACK_S back) is sent as missed; the spawner runs it
 * late (catchUp) or records it skipped.  A state file that is not a
 * regular file, too large or not a JSON object is refused (a fixed log
 * line) and the schedule starts clean: every mission as first seen, so
 * nothing counts as missed.  Reads and writes only DIR/missions.json
 * (and its temp file) through the held DIR; reads zone data, and the
 * test clock (CORDON_TEST_CLOCK_FILE).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "json.h"
#include "log.h"
#include "sched.h"
#include "util.h"
#include "wallclock.h"

static struct json_object *state; /* the file's object, kept whole */

/* The file's object, or NULL: absent, or refused (logged). */
static struct json_object *
state_read(void)
{
	struct json_object *o = NULL;
	struct stat st;
	char *buf;
	int fd;

	fd = openat(sc.s_dirfd, SCHED_STATE,
	    O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd == -1) {
		if (errno != ENOENT)
			log_warnx("state file refused; starting clean");
		return NULL;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > SCHED_STATE_MAX ||
	    (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		log_warnx("state file refused; starting clean");
		close(fd);
		return NULL;
	}
	if (read_full(fd, buf, (size_t)st.st_size) == -1 ||
	    (o = json_parse_object(buf, (size_t)st.st_size, 4)) == NULL)
		log_warnx("state file refused; starting clean");
	free(buf);
	close(fd);
	return o;
}

void
sched_state_load(void)
{
	if ((state = state_read()) == NULL &&
	    (state = json_object_new_object()) == NULL)
		fatalx("out of memory");
}

/* The last slot the file holds for id: 0, or -1 (none, or unusable). */
int
sched_state_last(const char *id, long long *out)
{
	struct json_object *v, *ls;

	if (!json_object_object_get_ex(state, id, &v) ||
	    !json_object_is_type(v, json_type_object) ||
	    !json_object_object_get_ex(v, "lastSlot", &ls) ||
	    !json_object_is_type(ls, json_type_int) ||
	    json_object_get_int64(ls) < 0 ||
	    json_object_get_int64(ls) > WALLCLOCK_MAX)
		return -1;
	*out = json_object_get_int64(ls);
	return 0;
}

static void
state_set(const char *id, long long slot)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "lastSlot", json_object_new_int64(slot));
	json_object_object_add(state, id, o);
}

static int
state_save(void)
{
	const char *s =
	    json_object_to_json_string_ext(state, JSON_C_TO_STRING_PLAIN);

	return atomic_write_at(
	    sc.s_dirfd, SCHED_STATE, s, strlen(s), 0600, (uid_t)-1, (gid_t)-1);
}

/* Does slot (epoch seconds) match m's cron, in the current zone? */
static int
slot_match(long long slot, void *arg)
{
	const struct smission *m = arg;
	time_t t = (time_t)slot;
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL)
		return 0;
	return cron_match(&m->sm_cron, tm.tm_min, tm.tm_hour, tm.tm_mday,
	    tm.tm_mon, tm.tm_wday);
}

struct scan {
	const struct smission *sn_m;
	long long sn_now;
	int sn_cur, sn_missed;
};

static void
scan_in_zone(void *arg)
{
	struct scan *sn = arg;

	mission_slots_scan(sn->sn_m->sm_last, sn->sn_now, SCHED_LOOKBACK_S,
	    slot_match, (void *)sn->sn_m, &sn->sn_cur, &sn->sn_missed);
}

static void
fire(const struct smission *m, int cur, int missed)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(m->sm_id));
	json_object_object_add(o, "now", json_object_new_boolean(cur));
	json_object_object_add(o, "missed", json_object_new_boolean(missed));
	if (ipc_send(sc.s_d.d_peers[PROC_SPAWNER], MSG_MISSION_FIRE, o, -1) ==
	    -1)
		log_warnx("a fire was not sent");
	else
		sc.s_fires++;
	json_object_put(o);
}

/* One evaluation; -1 while there is no spawner or no list yet. */
static int
sched_tick(void)
{
	unsigned char cur[MSG_MISSION_CRON_N], missed[MSG_MISSION_CRON_N];
	struct smission *m;
	struct scan sn;
	long long slot;
	size_t i;
	int changed = 0;
	time_t now;

	if (sc.s_d.d_peers[PROC_SPAWNER] == NULL || !sc.s_declared)
		return -1;
	if (wallclock_now(&now) == -1 || now < 0) {
		if (!sc.s_clock_warned++)
			log_warnx("test clock unreadable; scheduler waits");
		return 0;
	}
	sc.s_clock_warned = 0;
	slot = (long long)now - (long long)now % 60;
	memset(cur, 0, sizeof(cur));
	memset(missed, 0, sizeof(missed));
	for (i = 0; i < sc.s_n; i++) {
		m = &sc.s_m[i];
		if (!m->sm_has_slot) { /* first sight: nothing was missed */
			m->sm_last = slot - 60;
			m->sm_has_slot = 1;
		}
		if (slot <= m->sm_last)
			continue; /* done already (or the clock went back) */
		sn.sn_m = m;
		sn.sn_now = slot;
		sn.sn_cur = sn.sn_missed = 0;
		if (wallclock_in_zone(m->sm_tz, scan_in_zone, &sn) == -1)
			continue;
		cur[i] = (unsigned char)sn.sn_cur;
		missed[i] = (unsigned char)sn.sn_missed;
		m->sm_last = slot;
		state_set(m->sm_id, slot);
		changed = 1;
	}
	/* Written before any fire: a restart never fires a slot again. */
	sc.s_held = changed && state_save() == -1;
	if (sc.s_held) {
		log_warn("state file cannot be written; fires held");
		return 0;
	}
	for (i = 0; i < sc.s_n; i++)
		if (cur[i] || missed[i])
			fire(&sc.s_m[i], cur[i], missed[i]);
	return 0;
}

static void
tick_arm(int soon)
{
	struct timeval tv;
	struct timespec ts;
	long ms;

	if (wallclock_test_file() != NULL || soon)
		ms = SCHED_TICK_MS;
	else {
		/* Just past the next minute boundary. */
		clock_gettime(CLOCK_REALTIME, &ts);
		ms = 60000 - (long)(ts.tv_sec % 60) * 1000 -
		     ts.tv_nsec / 1000000 + 50;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(sc.s_tick, &tv);
}

static void
tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	tick_arm(sched_tick() == -1);
}

void
sched_tick_soon(void)
{
	struct timeval tv = {0, 0};

	evtimer_add(sc.s_tick, &tv);
}

void
sched_tick_start(void)
{
	if ((sc.s_tick = evtimer_new(sc.s_d.d_base, tick_cb, NULL)) == NULL)
		fatalx("scheduler timer");
	tick_arm(1);
}
