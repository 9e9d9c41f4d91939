/*
 * The declared payload shapes of the spawner's dispatch rows (SU-3): keys,
 * types and bounds, which the codec checks before a handler runs
 * (common/ipc.h). Apart so that tests/unit/test_shapes.c can try each with
 * hostile payloads.
 */
#ifndef CORDON_SPAWNER_SHAPES_H
#define CORDON_SPAWNER_SHAPES_H

#include <limits.h>
#include <stdint.h>

#include "cordon_limits.h"
#include "egress.h"
#include "gate.h"
#include "json.h"
#include "msg.h"
#include "vaultpath.h"

/*
 * SU-3: the broker's payloads, typed and bounded; names, patterns and
 * state (a known agent, a held approval) are the handlers'.
 */
#define RUN_START_MAX (4 * 1024 * 1024)
static const struct json_shape agent_get_shape[] = {
    JS_STR("name", JS_REQ, 0, LIM_NAME_MAX),
};
static const struct json_shape run_start_shape[] = {
    JS_STR("agent", JS_REQ, 0, LIM_NAME_MAX),
    JS_STR("prompt", JS_REQ, 0, RUN_START_MAX),
    JS_STR("session", JS_OPT, 0, LIM_SESSION_MAX), JS_STR("via", JS_OPT, 0, 8),
    JS_STR("worktree", JS_OPT, 0, LIM_PATH_MAX), /* MC-2 */
};
static const struct json_shape run_id_shape[] = {
    JS_STR("runId", JS_REQ, 0, 16),
};
static const struct json_shape action_run_shape[] = {
    JS_STR("agent", JS_REQ, 0, LIM_NAME_MAX),
    JS_STR("action", JS_REQ, 0, LIM_ACTION_ID_MAX),
};
static const struct json_shape run_credit_shape[] = {
    JS_STR("runId", JS_REQ, 0, 16),
    JS_INT("bytes", JS_REQ, 0, 1LL << 40),
};
/* MI-1: sched names a declared cron mission's slot. */
static const struct json_shape mission_fire_shape[] = {
    JS_STR("id", JS_REQ, 1, MSG_MISSION_ID_MAX),
    JS_BOOL("now", JS_REQ),
    JS_BOOL("missed", JS_REQ),
};
static const struct json_shape mission_run_shape[] = {
    JS_STR("id", JS_REQ, 0, VAULT_NAME_MAX),
    JS_OBJ("options", JS_OPT),
};

/* egressd's report of one connection, for the run view (EG-4). */
static const struct json_shape egress_conn_shape[] = {
    JS_STR("runId", JS_REQ, 0, 16),
    JS_INT("conn", JS_REQ, 1, UINT_MAX),
    JS_STR("state", JS_REQ, 0, 8),
    JS_STR("host", JS_OPT, 0, EGRESS_HOST_MAX),
    JS_INT("port", JS_OPT, 1, 65535),
    JS_STR("decision", JS_REQ, 0, 8),
    JS_STR("rule", JS_OPT, 0, 16),
    JS_STR("reason", JS_OPT, 0, 32),
    JS_STR("end", JS_OPT, 0, 32),
    JS_INT("bytesUp", JS_REQ, 0, LLONG_MAX),
    JS_INT("bytesDown", JS_REQ, 0, LLONG_MAX),
    JS_INT("durationMs", JS_REQ, 0, LLONG_MAX),
};

/* Worktree runs (MC-2): an id bounded here, its pattern worktree.c's. */
static const struct json_shape worktree_id_shape[] = {
    JS_STR("id", JS_REQ, 0, LIM_JOB_ID_MAX),
};
/*
 * Detached jobs (MC-3): MSG_JOB_START takes run_start_shape; a job's id
 * is bounded here, its pattern and existence are job.c's.
 */
static const struct json_shape job_id_shape[] = {
    JS_STR("jobId", JS_REQ, 0, LIM_JOB_ID_MAX),
};
static const struct json_shape job_events_shape[] = {
    JS_STR("jobId", JS_REQ, 0, LIM_JOB_ID_MAX),
    JS_INT("offset", JS_REQ, 0, INT64_MAX / 2),
    JS_INT("limit", JS_REQ, 1, LIM_JOB_PAGE_MAX),
};
static const struct json_shape job_wait_shape[] = {
    JS_STR("jobId", JS_REQ, 0, LIM_JOB_ID_MAX),
    JS_INT("timeoutMs", JS_REQ, 0, LIM_JOB_WAIT_MS_MAX),
};

static const struct json_shape gate_scrub_shape[] = {
    JS_STR("runId", JS_REQ, 16, 16),
    JS_STR("text", JS_REQ, 0, GATE_LINE_MAX),
};

#endif
