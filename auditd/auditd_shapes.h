/*
 * The declared payload shapes of auditd's dispatch rows (SU-3): keys, types and
 * bounds, which the codec checks before a handler runs (common/ipc.h).
 * Apart so that tests/unit/test_shapes.c can try each with hostile
 * payloads.
 */
#ifndef CORDON_AUDITD_SHAPES_H
#define CORDON_AUDITD_SHAPES_H

#include "audit_schema.h"
#include "auditd.h"
#include "json.h"

/*
 * SU-3: a record is tagged by its kind; the rest of its fields are the
 * kind's, which audit_schema.c's table declares and audit_validate
 * checks in full.
 */
static const struct json_shape record_shape[] = {
    JS_STR("kind", JS_REQ, 1, AUDIT_KIND_MAX),
    JS_REST,
};
static const struct json_shape tail_shape[] = {
    JS_INT("limit", JS_REQ, 1, AUDIT_TAIL_MAX),
    JS_STR("kind", JS_OPT, 0, AUDIT_KIND_MAX),
    JS_STR("agent", JS_OPT, 0, 64),
    JS_INT("since", JS_OPT, 0, AUDIT_COUNT_MAX),
};

#endif
