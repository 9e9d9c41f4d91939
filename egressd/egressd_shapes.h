/*
 * The declared payload shapes of egressd's dispatch rows (SU-3): keys, types
 * and bounds, which the codec checks before a handler runs (common/ipc.h).
 * Apart so that tests/unit/test_shapes.c can try each with hostile
 * payloads.
 */
#ifndef CORDON_EGRESSD_SHAPES_H
#define CORDON_EGRESSD_SHAPES_H

#include "egress.h"
#include "json.h"

/*
 * SU-3: the declared shapes of the two rows, checked by the codec before
 * the handler; the values (ids, rules, addresses) are open_parse's.
 */
static const struct json_shape open_shape[] = {
    JS_STR("runId", JS_REQ, 0, 16), JS_STR("agent", JS_REQ, 0, 64),
    JS_ARR("allow", JS_REQ, EGRESS_ALLOW_MAX),
    JS_INT("maxConnections", JS_REQ, 1, EGRESS_CONNS_MAX),
    JS_INT("maxBytes", JS_REQ, 1, (long long)EGRESS_BYTES_MAX),
    JS_INT("idleTimeoutSec", JS_REQ, 1, EGRESS_IDLE_MAX),
    JS_OBJ("testResolve", JS_OPT),
    JS_STR("testAllowAddress", JS_OPT, 0, EGRESS_ADDR_STR_MAX),
    JS_ARR("routes", JS_OPT, EGRESS_ROUTES_MAX), /* each: open_routes */
};
static const struct json_shape close_shape[] = {
    JS_STR("runId", JS_REQ, 0, 16),
};

#endif
