/*
 * cordon-sched (MI-1): the missions' cron scheduler (sched.h).  Its one
 * channel besides cordond's is the spawner's: the cron missions in
 * (MSG_MISSION_CRON, once per channel), their fires out
 * (MSG_MISSION_FIRE).  Holds no secret, runs nothing, opens no network
 * socket; Landlock lets it reach its state dir (read and write), zone
 * data and, under test, the test clock's directory (read).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "confine.h"
#include "json.h"
#include "log.h"
#include "sched.h"
#include "util.h"
#include "vaultpath.h"
#include "wallclock.h"
#include "sched_shapes.h"

struct sched sc;

static void mission_cron_h(struct ipc_conn *, struct ipc_msg *, void *);

static const struct ipc_dispatch parent_table[] = {
    DAEMON_PARENT_ROWS,
    IPC_END,
};

/* The spawner alone declares; one list per channel. */
static const struct ipc_dispatch peer_table[] = {
    {MSG_MISSION_CRON, PROC_BIT(PROC_SPAWNER), 2, MSG_MISSION_CRON_MAX,
	IPC_FD_NONE, mission_cron_h, IPC_KEYS_ONCE(mission_cron_shape)},
    IPC_END,
};

/* One declared mission into *sm: 0, or -1 if any value is refused. */
static int
cron_item(struct json_object *it, struct smission *sm)
{
	const char *id, *cron, *tz, *why;
	size_t len;

	if (!json_object_is_type(it, json_type_object) ||
	    !json_shape_ok(
		it, mission_cron_item_shape, nitems(mission_cron_item_shape)))
		return -1;
	id = json_shape_str(it, "id", &len);
	cron = json_shape_str(it, "cron", NULL);
	tz = json_shape_str(it, "timezone", NULL);
	if (!vaultpath_name_ok(id, len) || !mission_tz_name_ok(tz) ||
	    cron_parse(cron, &sm->sm_cron, &why) == -1)
		return -1;
	memcpy(sm->sm_id, id, len + 1);
	snprintf(sm->sm_tz, sizeof(sm->sm_tz), "%s", tz);
	sm->sm_has_slot = sched_state_last(id, &sm->sm_last) == 0;
	return 0;
}

/*
 * MSG_MISSION_CRON {missions: [{id, cron, timezone}]}: the whole list,
 * checked whole; a refused list changes nothing (and, once per channel,
 * nothing fires until the spawner connects again).
 */
static void
mission_cron_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *arr;
	struct smission *tab;
	size_t i, j, n;

	json_object_object_get_ex(m->m_obj, "missions", &arr);
	n = json_object_array_length(arr);
	if ((tab = calloc(MSG_MISSION_CRON_N, sizeof(*tab))) == NULL) {
		log_warnx("out of memory; mission list dropped");
		return;
	}
	for (i = 0; i < n; i++) {
		if (cron_item(json_object_array_get_idx(arr, i), &tab[i]) == -1)
			break;
		for (j = 0; j < i; j++)
			if (strcmp(tab[j].sm_id, tab[i].sm_id) == 0)
				break;
		if (j < i)
			break;
	}
	if (i < n) {
		log_warnx("mission list from the spawner refused");
		free(tab);
		return;
	}
	memcpy(sc.s_m, tab, n * sizeof(*tab));
	sc.s_n = n;
	sc.s_declared = 1;
	free(tab);
	log_debug("%zu cron mission(s) declared", n);
	sched_tick_soon();
}

/* A new spawner channel: its list comes again, on it. */
static void
sched_peer_up(struct daemon *d, enum proc_id p)
{
	if (p == PROC_SPAWNER)
		sc.s_declared = 0;
}

static void
sched_status(struct daemon *d, struct json_object *st)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(
	    o, "missions", json_object_new_int64((int64_t)sc.s_n));
	json_object_object_add(
	    o, "declared", json_object_new_boolean(sc.s_declared));
	json_object_object_add(
	    o, "fires", json_object_new_int64((int64_t)sc.s_fires));
	json_object_object_add(o, "held", json_object_new_boolean(sc.s_held));
	json_object_object_add(o, "testClock",
	    json_object_new_boolean(wallclock_test_file() != NULL));
	json_object_object_add(st, "sched", o);
}

/* The test clock's directory: the file is replaced by rename. */
static int
clock_dir(char *out, size_t outsz)
{
	const char *tc = wallclock_test_file();
	char *slash;

	if (tc == NULL || snprintf(out, outsz, "%s", tc) >= (int)outsz ||
	    (slash = strrchr(out, '/')) == NULL)
		return -1;
	if (slash == out)
		slash[1] = '\0';
	else
		*slash = '\0';
	return 0;
}

int
main(int argc, char **argv)
{
	static char clockdir[4096];
	struct confine_path paths[3];
	struct confine_spec spec;
	struct daemon_args a;
	size_t np = 0;

	log_init("sched", 0);
	daemon_parse_args(argc, argv, "state-dir", NULL, NULL, 0, &a);
	log_init("sched", a.da_debug);
	if (a.da_path[0] != '/')
		fatalx("usage: --state-dir must be absolute");
	daemon_prepare(&sc.s_d, PROC_SCHED, peer_table, &a);
	sc.s_d.d_peer_up = sched_peer_up;
	sc.s_d.d_status_extra = sched_status;
	/* Held, with the ids we start with: the file is opened through it. */
	sc.s_dirfd = open(a.da_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sc.s_dirfd == -1)
		fatal("state dir");
	if (wallclock_test_file() != NULL)
		log_warnx("test clock in use (CORDON_TEST_CLOCK_FILE)");

	paths[np].cp_path = a.da_path;
	paths[np++].cp_access = CONFINE_LL_READ | CONFINE_LL_WRITE;
	paths[np].cp_path = "/usr/share/zoneinfo";
	paths[np++].cp_access = CONFINE_LL_READ | CONFINE_LL_OPTIONAL;
	if (clock_dir(clockdir, sizeof(clockdir)) == 0) {
		paths[np].cp_path = clockdir;
		paths[np++].cp_access = CONFINE_LL_READ;
	}
	memset(&spec, 0, sizeof(spec));
	spec.cs_name = "sched";
	spec.cs_user = a.da_user;
	spec.cs_paths = paths;
	spec.cs_npaths = np;
	spec.cs_seccomp = CONFINE_SECCOMP_ALLOW;
	spec.cs_syscalls =
	    SC_BASE | SC_FS_READ | SC_FS_WRITE | daemon_syscalls(&sc.s_d);
	spec.cs_no_net = 1;
	spec.cs_nofile = 64;
	confine_self(&spec);

	/* The file is input: read confined. */
	sched_state_load();
	daemon_start(&sc.s_d, parent_table);
	sched_tick_start();
	log_debug("ready");
	daemon_loop(&sc.s_d);
	return 0;
}
