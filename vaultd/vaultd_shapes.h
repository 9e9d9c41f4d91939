/*
 * The declared payload shapes of vaultd's dispatch rows (SU-3): keys, types and
 * bounds, which the codec checks before a handler runs (common/ipc.h).
 * Apart so that tests/unit/test_shapes.c can try each with hostile
 * payloads.
 */
#ifndef CORDON_VAULTD_SHAPES_H
#define CORDON_VAULTD_SHAPES_H

#include "json.h"
#include "vaultd.h"
#include "vaultpath.h"

/*
 * SU-3: the payloads, typed and bounded; what a name, hash or path may
 * hold is the handler's (policy/vaultpath.c).  A payload that does not
 * fit is answered "invalid-request".
 */
static const struct json_shape chat_shape[] = {
    JS_STR("agent", JS_REQ, 0, VAULT_NAME_MAX),
    JS_STR("prompt", JS_REQ, 0, VAULT_PROMPT_BYTES),
    JS_STR("promptSha8", JS_REQ, 0, 8),
    JS_STR("response", JS_REQ, 0, VAULT_BODY_BYTES),
    JS_INT("time", JS_REQ, 0, VAULT_TIME_MAX),
};
static const struct json_shape mission_shape[] = {
    JS_STR("missionId", JS_REQ, 0, VAULT_NAME_MAX),
    JS_STR("folder", JS_REQ, 0, VAULT_RAW_MAX),
    JS_STR("hint", JS_REQ, 0, 3 * VAULT_HINT_MAX),
    JS_STR("content", JS_REQ, 0, VAULT_BODY_BYTES),
};
static const struct json_shape read_shape[] = {
    JS_STR("path", JS_REQ, 0, VAULT_RAW_MAX),
};
static const struct json_shape list_shape[] = {
    JS_STR("dir", JS_REQ, 0, VAULT_RAW_MAX),
};

#endif
