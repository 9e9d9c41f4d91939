/*
 * The declared payload shapes of sched's dispatch rows (SU-3), checked by
 * the codec before a handler runs (common/ipc.h); each declared mission
 * is checked against mission_cron_item_shape by the handler.  Apart so
 * that tests/unit/test_shapes.c can try each with hostile payloads.
 */
#ifndef CORDON_SCHED_SHAPES_H
#define CORDON_SCHED_SHAPES_H

#include "json.h"
#include "mission.h"
#include "msg.h"

/* MI-1: the spawner's cron missions, whole. */
static const struct json_shape mission_cron_shape[] = {
    JS_ARR("missions", JS_REQ, MSG_MISSION_CRON_N),
};
static const struct json_shape mission_cron_item_shape[] = {
    JS_STR("id", JS_REQ, 1, MSG_MISSION_ID_MAX),
    JS_STR("cron", JS_REQ, 1, MI_CRON_TEXT_MAX),
    JS_STR("timezone", JS_REQ, 1, MI_TZ_MAX),
};

#endif
