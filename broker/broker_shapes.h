/*
 * The declared payload shapes of the broker's dispatch rows (SU-3): keys, types
 * and bounds, which the codec checks before a handler runs (common/ipc.h).
 * Apart so that tests/unit/test_shapes.c can try each with hostile
 * payloads.
 */
#ifndef CORDON_BROKER_SHAPES_H
#define CORDON_BROKER_SHAPES_H

#include "broker.h"
#include "json.h"

/* SU-3: cordond's configuration; values are checked by the handler. */
static const struct json_shape config_shape[] = {
    JS_STR("token", JS_REQ, TOKEN_HEX, TOKEN_HEX),
    JS_INT("port", JS_REQ, 1, 65535),
    JS_STR("listen", JS_REQ, 0, 63),
    JS_STR("loginCode", JS_OPT, 0, 32),
    JS_ARR("origins", JS_OPT, 8),
    JS_ARR("sessions", JS_OPT, BROKER_MAX_SESSIONS),
};
/*
 * A run's event: which run and what kind; the rest are the event's own
 * fields (common/msg.h), relayed to the client as they are.
 */
static const struct json_shape run_event_shape[] = {
    JS_STR("runId", JS_REQ, 0, 16),
    JS_STR("kind", JS_REQ, 0, 16),
    JS_REST,
};

#endif
