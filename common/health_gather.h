/*
 * Health gathered once, for cordond's MSG_HEALTH and for the broker under
 * systemd (API-1): each daemon's own MSG_STATUS, asked of all at once with
 * one bound, and the answer's shape {status, daemons: [{name, up,
 * status?, ...}]} built the same way by both.
 */
#ifndef CORDON_HEALTH_GATHER_H
#define CORDON_HEALTH_GATHER_H

#include "proc.h"

struct ipc_conn;
struct json_object;

#define HEALTH_WAIT_S 1 /* for each daemon's status */

/*
 * Runs once every answer is in or timed out: status[p] is daemon p's
 * report, or NULL.  The gatherer puts them after done returns (take a
 * reference to keep one).
 */
typedef void (*health_done_fn)(struct json_object *const *status, void *arg);

struct health_gather;

/* NULL when out of memory; nothing is asked until health_gather_go. */
struct health_gather *health_gather_new(health_done_fn, void *arg);
/* Ask p over conn (a failed send counts as no answer). */
void health_gather_ask(struct health_gather *, enum proc_id, struct ipc_conn *);
/* p's report made here (the asker's own); the gatherer owns it. */
void health_gather_own(
    struct health_gather *, enum proc_id, struct json_object *status);
/* Every ask is out: done runs when the last answer is in (maybe now). */
void health_gather_go(struct health_gather *);

/* One daemon's entry {name, up, status?}; status may be NULL. */
struct json_object *health_entry(
    enum proc_id, int up, struct json_object *status);
/* The answer: {status: "ok" | "degraded", daemons}; takes daemons. */
struct json_object *health_answer(struct json_object *daemons, int allup);

#endif
