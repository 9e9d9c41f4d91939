/*
 * GET /api/health answered from a snapshot (API-1): the answer names its
 * age ("ageMs", since the gathering it shows was asked for), which is
 * never over HEALTH_MAX_AGE_MS.  A request that finds the snapshot older
 * waits for a fresh one; concurrent requests share one gathering.
 */
#ifndef CORDON_HEALTH_SNAP_H
#define CORDON_HEALTH_SNAP_H

struct evhttp_request;
struct json_object;

#define HEALTH_MAX_AGE_MS 250

/* Starts one gathering; it ends with health_snap_done(). */
typedef void (*health_refresh_fn)(void);

/* Answers req now from a fresh snapshot, or once refresh has made one. */
void health_snap_get(struct evhttp_request *, health_refresh_fn refresh);
/* A gathering ended: answer (the body without "ageMs"; not taken) is
 * the new snapshot, or NULL if there is none (the waiting get 503). */
void health_snap_done(struct json_object *answer);

#endif
