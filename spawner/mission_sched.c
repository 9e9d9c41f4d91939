/*
 * The mission scheduler: cron evaluated in each mission's time zone once
 * per minute slot.  DIR/missions.json {"<id>": {"lastSlot": N}} is
 * written atomically (temp file, fsync, rename, fsync dir) BEFORE a cron
 * run starts, so a restart never fires a slot twice.  A slot missed while
 * cordon was down (at most 7 days back) is recorded once as skipped
 * (skipped-missed), or run once, late, with catchUp: true; a mission
 * still running when its slot comes is skipped (busy).
 * Test hook: CORDON_TEST_CLOCK_FILE=/abs/path makes "now" the UTC epoch
 * seconds written in that file, re-read every 250 ms tick.
 * Reads and writes only DIR/missions.json (and its temp file); reads
 * zone data.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "json.h"
#include "log.h"
#include "mission_int.h"
#include "spawner.h"
#include "util.h"

#define SCHED_TEST_TICK_MS 250
#define SCHED_LOOKBACK_S   (7 * 86400)
#define SCHED_STATE	   "missions.json"
#define SCHED_STATE_MAX	   (256 * 1024)
#define SCHED_SLOT_MAX	   253402300740LL /* 9999-12-31T23:59 */

static char state_dir[PATH_MAX];
static struct json_object *state; /* the file's object, kept whole */
static const char *test_clock;	  /* CORDON_TEST_CLOCK_FILE, or NULL */
static struct event *tick_ev;
static int clock_warned;

/* Local time is the mission's zone until tz_pop (single-threaded). */
struct tz_saved {
	char ts_old[128];
	int ts_have;
};

static int
tz_push(const char *tz, struct tz_saved *sv)
{
	const char *old = getenv("TZ");

	sv->ts_have = old != NULL && strlen(old) < sizeof(sv->ts_old);
	if (sv->ts_have)
		snprintf(sv->ts_old, sizeof(sv->ts_old), "%s", old);
	if (setenv("TZ", tz != NULL ? tz : "UTC", 1) == -1)
		return -1;
	tzset();
	return 0;
}

static void
tz_pop(const struct tz_saved *sv)
{
	if (sv->ts_have)
		setenv("TZ", sv->ts_old, 1);
	else
		unsetenv("TZ");
	tzset();
}

int
mission_localtime(const char *tz, time_t t, struct tm *out)
{
	struct tz_saved sv;
	int rc;

	if (tz_push(tz, &sv) == -1)
		return -1;
	rc = localtime_r(&t, out) == NULL ? -1 : 0;
	tz_pop(&sv);
	return rc;
}

/* The test clock's value: decimal seconds, optional trailing space. */
static int
test_clock_read(time_t *out)
{
	char buf[32];
	long long v = 0;
	ssize_t n;
	int fd, i;

	if ((fd = open(test_clock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	for (i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) {
		v = v * 10 + (buf[i] - '0');
		if (v > SCHED_SLOT_MAX)
			return -1;
	}
	if (i == 0)
		return -1;
	for (; i < n; i++)
		if (buf[i] != '\n' && buf[i] != ' ' && buf[i] != '\r')
			return -1;
	*out = (time_t)v;
	return 0;
}

static int
sched_now(time_t *out)
{
	if (test_clock == NULL) {
		*out = time(NULL);
		return 0;
	}
	return test_clock_read(out);
}

time_t
mission_now(void)
{
	time_t t;

	return sched_now(&t) == 0 ? t : time(NULL);
}

static void
state_load(void)
{
	char path[PATH_MAX + 32], *buf;
	struct json_object *v, *ls;
	struct mission_ent *e;
	struct stat st;
	size_t i;
	int fd;

	state = NULL;
	snprintf(path, sizeof(path), "%s/%s", state_dir, SCHED_STATE);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		if (errno != ENOENT)
			log_warn("mission state");
		goto fresh;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > SCHED_STATE_MAX ||
	    (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		log_warnx("mission state unusable; starting afresh");
		close(fd);
		goto fresh;
	}
	if (read_full(fd, buf, (size_t)st.st_size) == -1 ||
	    (state = json_parse_object(buf, (size_t)st.st_size, 4)) == NULL)
		log_warnx("mission state unreadable; starting afresh");
	free(buf);
	close(fd);
fresh:
	if (state == NULL)
		state = json_object_new_object();
	for (i = 0; i < mission_n; i++) {
		e = mission_tab[i];
		if (json_object_object_get_ex(state, e->me_m.mi_id, &v) &&
		    json_object_is_type(v, json_type_object) &&
		    json_object_object_get_ex(v, "lastSlot", &ls) &&
		    json_object_is_type(ls, json_type_int) &&
		    json_object_get_int64(ls) >= 0 &&
		    json_object_get_int64(ls) <= SCHED_SLOT_MAX) {
			e->me_last_slot = json_object_get_int64(ls);
			e->me_has_slot = 1;
		}
	}
}

/* Atomically (atomic_write_at), the state file.  0 or -1. */
static int
state_save(void)
{
	const char *s;
	int dfd, rc;

	s = json_object_to_json_string_ext(state, JSON_C_TO_STRING_PLAIN);
	if ((dfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	rc = atomic_write_at(
	    dfd, SCHED_STATE, s, strlen(s), 0600, (uid_t)-1, (gid_t)-1);
	close(dfd);
	return rc;
}

static void
state_set(const char *id, long long slot)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "lastSlot", json_object_new_int64(slot));
	json_object_object_add(state, id, o);
}

static int
slot_matches(const struct mission *m, long long slot)
{
	struct tm tm;
	time_t t = (time_t)slot;

	if (localtime_r(&t, &tm) == NULL)
		return 0;
	return cron_match(&m->mi_cron, tm.tm_min, tm.tm_hour, tm.tm_mday,
	    tm.tm_mon, tm.tm_wday);
}

/*
 * Slots after e's last one up to now: *cur if now's slot matches, *missed
 * if an earlier one did (at most SCHED_LOOKBACK_S back).  Evaluated in
 * the mission's zone; the spawner is single-threaded.
 */
static void
slots_eval(
    const struct mission_ent *e, long long now_slot, int *cur, int *missed)
{
	const struct mission *m = &e->me_m;
	struct tz_saved sv;
	long long s;

	*cur = *missed = 0;
	if (tz_push(m->mi_tz, &sv) == -1)
		return;
	*cur = slot_matches(m, now_slot);
	s = e->me_last_slot + 60;
	if (s < now_slot - SCHED_LOOKBACK_S)
		s = now_slot - SCHED_LOOKBACK_S;
	for (; s < now_slot && !*missed; s += 60)
		*missed = slot_matches(m, s);
	tz_pop(&sv);
}

/* One evaluation; -1 while auditd or vaultd is not there yet. */
static int
sched_tick(void)
{
	unsigned char cur[MISSIONS_MAX], missed[MISSIONS_MAX];
	struct mission_ent *e;
	long long slot;
	size_t i;
	int changed = 0, c, mi;
	time_t now;

	/* Nothing is decided before auditd and vaultd can hear of it. */
	if (sp.sp_d.d_peers[PROC_AUDITD] == NULL ||
	    sp.sp_d.d_peers[PROC_VAULTD] == NULL)
		return -1;
	if (sched_now(&now) == -1 || now < 0) {
		if (!clock_warned++)
			log_warnx("test clock unreadable; scheduler waits");
		return 0;
	}
	clock_warned = 0;
	slot = (long long)now - (long long)now % 60;
	memset(cur, 0, sizeof(cur));
	memset(missed, 0, sizeof(missed));
	for (i = 0; i < mission_n; i++) {
		e = mission_tab[i];
		if (!e->me_m.mi_has_cron)
			continue;
		if (!e->me_has_slot) { /* first sight: nothing was missed */
			e->me_last_slot = slot - 60;
			e->me_has_slot = 1;
		}
		if (slot <= e->me_last_slot)
			continue; /* done already (or the clock went back) */
		slots_eval(e, slot, &c, &mi);
		cur[i] = (unsigned char)c;
		missed[i] = (unsigned char)mi;
		e->me_last_slot = slot;
		state_set(e->me_m.mi_id, slot);
		changed = 1;
	}
	/* Written before any run starts: a restart never fires it again. */
	if (changed && state_save() == -1) {
		log_warn("mission state cannot be written; cron runs held");
		return 0;
	}
	for (i = 0; i < mission_n; i++) {
		e = mission_tab[i];
		if (missed[i] && !e->me_m.mi_catch_up)
			mission_skip(e, "skipped-missed");
		if (!cur[i] && !(missed[i] && e->me_m.mi_catch_up))
			continue;
		if (e->me_running)
			mission_skip(e, "busy");
		else
			mission_cron_run(e);
	}
	return 0;
}

static void
tick_arm(int soon)
{
	struct timeval tv;
	struct timespec ts;
	long ms;

	if (test_clock != NULL || soon)
		ms = SCHED_TEST_TICK_MS;
	else {
		/* Just past the next minute boundary. */
		clock_gettime(CLOCK_REALTIME, &ts);
		ms = 60000 - (long)(ts.tv_sec % 60) * 1000 -
		     ts.tv_nsec / 1000000 + 50;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(tick_ev, &tv);
}

static void
tick_cb(evutil_socket_t fd, short ev, void *arg)
{
	tick_arm(sched_tick() == -1);
}

void
mission_sched_stop(void)
{
	if (tick_ev != NULL)
		evtimer_del(tick_ev);
}

void
mission_sched_start(const char *dir)
{
	const char *tc = getenv("CORDON_TEST_CLOCK_FILE");
	struct timeval now = {0, 100 * 1000};
	size_t i, ncron = 0;

	for (i = 0; i < mission_n; i++)
		ncron += mission_tab[i]->me_m.mi_has_cron != 0;
	if (ncron == 0)
		return;
	if (dir == NULL || dir[0] != '/' ||
	    snprintf(state_dir, sizeof(state_dir), "%s", dir) >=
		(int)sizeof(state_dir)) {
		log_warnx("no --state-dir: cron triggers are off");
		return;
	}
	if (tc != NULL && tc[0] == '/') {
		test_clock = tc;
		log_warnx("test clock in use (CORDON_TEST_CLOCK_FILE)");
	}
	state_load();
	if ((tick_ev = evtimer_new(sp.sp_d.d_base, tick_cb, NULL)) == NULL)
		fatalx("scheduler timer");
	evtimer_add(tick_ev, &now);
}
