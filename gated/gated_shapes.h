/*
 * The declared payload shapes of gated's dispatch rows and of a gate call
 * (SU-3): keys, types and bounds, which the codec checks before a handler
 * runs (common/ipc.h).  Apart so that tests/unit/test_shapes.c can try
 * each with hostile payloads.
 */
#ifndef CORDON_GATED_SHAPES_H
#define CORDON_GATED_SHAPES_H

#include <limits.h>

#include "cordon_limits.h"
#include "gate.h"
#include "json.h"
#include "protect.h"

/* The spawner's: a run's channel and what deciding its calls needs; the
 * values (ids, names, paths, the policy) are gated.c's. */
static const struct json_shape gate_open_shape[] = {
    JS_STR("runId", JS_REQ, 16, 16),
    JS_STR("agent", JS_REQ, 1, LIM_NAME_MAX),
    JS_STR("workspace", JS_REQ, 1, PATH_MAX - 1),
    JS_OBJ("commands", JS_REQ), /* gate_policy_parse, the one validator */
    JS_STR("home", JS_OPT, 1, PATH_MAX - 1),
    JS_ARR("protect", JS_REQ, PROTECT_EXTRA_MAX),
    JS_ARR("links", JS_OPT, PROTECT_LINKS_MAX),
    JS_STR("runs", JS_OPT, 1, PATH_MAX - 1),
};
static const struct json_shape gate_run_shape[] = {
    JS_STR("runId", JS_REQ, 16, 16),
};

/* The broker's. */
static const struct json_shape approval_decide_shape[] = {
    JS_STR("id", JS_REQ, 16, 16),
    JS_STR("decision", JS_REQ, 0, 8),
};

/* A gate call from an agent's `cordon gate` (SBX-6, SBX-8): a route of
 * the gate channel rather than a row, checked as one. */
static const struct json_shape gate_call_shape[] = {
    JS_STR("tool", JS_REQ, 1, 64),
    JS_STR("kind", JS_REQ, 0, 16),
    JS_STR("cwd", JS_REQ, 1, PATH_MAX - 1),
    JS_STR("filePath", JS_OPT, 1, PATH_MAX - 1),
    JS_STR("line", JS_OPT, 0, GATE_LINE_MAX),
    JS_ARR("argv", JS_OPT, GATE_WORDS_MAX),
    JS_INT("deadline", JS_REQ, 0, INT64_MAX),
};

#endif
