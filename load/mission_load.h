/*
 * The missions directory loader (MI-1), one for the spawner and `cordon
 * check`: every missions/NAME.yaml through the YAML loader and
 * mission_parse, then what needs the world around it: the agent is among
 * the valid manifests, the time zone exists, a cron mission has a default
 * for every option, ids are unique (an id used twice disables both).
 * Reads only the missions directory and /usr/share/zoneinfo.
 */
#ifndef CORDON_LOAD_MISSION_LOAD_H
#define CORDON_LOAD_MISSION_LOAD_H

#include <stddef.h>

#include "mission.h"

#define MISSIONS_MAX	 64  /* mission files read */
#define MISSION_FILE_MAX 128 /* bytes of a mission file's name */
#define MISSION_ERRS_MAX 32  /* problems reported per file */
#define MISSION_ZONEINFO "/usr/share/zoneinfo"

struct mission_loaded {
	struct mission ml_m;
	char ml_file[MISSION_FILE_MAX];	 /* NAME.yaml */
	unsigned long ml_line, ml_col;	 /* of its id */
	unsigned long ml_pline, ml_pcol; /* of its permissions (or the file) */
};

/* 1 if an agent of that name is loaded (valid manifest). */
typedef int (*mload_agent_fn)(const char *name, void *arg);
/* One problem: file is NAME.yaml; line and col 1-based, 0 if unknown;
 * code a fixed word ("unknown-key", "unknown-agent", ...). */
typedef void (*mload_report_fn)(const char *file, unsigned long line,
    unsigned long col, const char *code, const char *msg, void *arg);

/*
 * Load dir into out[0 .. *n) (at most max, by file name), reporting every
 * problem; a file with any problem is left out.  Returns the number of
 * problems (a missing dir is none).  Free each with mission_free.
 */
size_t missions_load_dir(const char *dir, mload_agent_fn, mload_report_fn,
    void *arg, struct mission_loaded *out, size_t max, size_t *n);

/* A time zone name that exists: "UTC", or lexically
 * ^[A-Za-z_]+(/[A-Za-z0-9_+-]+){0,2}$ and a regular file beneath
 * MISSION_ZONEINFO.  1 yes, 0 no. */
int mission_tz_ok(const char *tz);

#endif
