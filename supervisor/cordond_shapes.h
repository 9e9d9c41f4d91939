/*
 * The declared payload shapes of cordond's dispatch rows (SU-3): keys, types
 * and bounds, which the codec checks before a handler runs (common/ipc.h).
 * Apart so that tests/unit/test_shapes.c can try each with hostile
 * payloads.
 */
#ifndef CORDON_CORDOND_SHAPES_H
#define CORDON_CORDOND_SHAPES_H

#include "json.h"
#include "msg.h"

/* SU-3: the payloads the daemons may send cordond. */
static const struct json_shape session_add_shape[] = {
    JS_STR("id", JS_REQ, SESSION_ID_HEX, SESSION_ID_HEX),
    JS_STR("page", JS_REQ, SESSION_PAGE_HEX, SESSION_PAGE_HEX),
};
static const struct json_shape peer_bad_shape[] = {
    JS_STR("peer", JS_REQ, 1, 16),
};

#endif
