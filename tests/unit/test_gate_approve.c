/*
 * SBX-7, SBX-8: the broker's decision on a held call (gated/
 * gate_approve.c, approval_decide_h).  A decision that reaches gated
 * after the ask's time is up, before its timer ran (gated was busy or
 * stopped), gets the timer's answer: unknown-approval to the broker and
 * ask-timeout in the trail, never ask-allow; one in time is the
 * operator's.  gated's other files are stood in for here: gate_audit
 * records the verdict, and ipc_reply / ipc_reply_error (linked with
 * --wrap) record the answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "gated/gated.h"
#include "ipc.h"
#include "util.h"

struct gated gd;

static const char *verdict; /* what gate_audit was given, or NULL */
static const char *answer;  /* "ok", or the error code replied */

void
gate_audit(struct gate_item *gi, const char *v, int allow)
{
	if (gi->gi_state == GI_HELD) {
		gd.gd_nheld--;
		gi->gi_state = GI_AUDIT;
		if (gi->gi_timer != NULL)
			event_del(gi->gi_timer);
	}
	verdict = v;
	(void)allow;
}

void
gate_rule_set(char *dst, size_t dstsz, const char *src)
{
	snprintf(dst, dstsz, "%s", src);
}

int
gate_scpy(char *dst, size_t dstsz, const char *src)
{
	return snprintf(dst, dstsz, "%s", src) >= (int)dstsz ? -1 : 0;
}

int
gate_path_inside(const char *path, const char *dir)
{
	return 0;
}

int __wrap_ipc_reply(struct ipc_conn *, const struct ipc_msg *, uint32_t,
    struct json_object *, int);
int __wrap_ipc_reply_error(
    struct ipc_conn *, const struct ipc_msg *, const char *);

int
__wrap_ipc_reply(struct ipc_conn *c, const struct ipc_msg *req, uint32_t type,
    struct json_object *payload, int fd)
{
	answer = type == MSG_APPROVAL_DECIDE_OK ? "ok" : "?";
	return 0;
}

int
__wrap_ipc_reply_error(
    struct ipc_conn *c, const struct ipc_msg *req, const char *code)
{
	answer = code;
	return 0;
}

#define ID "0123456789abcdef"

/* One held, scrubbed call whose time is up in left_ms (< 0: past). */
static struct event_base *base; /* the timers', never run */

static int
setup(void **state)
{
	TAILQ_INIT(&gd.gd_items);
	gd.gd_nheld = 0;
	return (base = event_base_new()) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	event_base_free(base);
	return 0;
}

static void
held(struct gate_item *gi, int64_t left_ms)
{
	struct timeval tv = {60, 0};

	memset(gi, 0, sizeof(*gi));
	gi->gi_fd = gi->gi_fifo = -1;
	gi->gi_state = GI_HELD;
	snprintf(gi->gi_id, sizeof(gi->gi_id), ID);
	snprintf(gi->gi_verb, sizeof(gi->gi_verb), "git");
	gi->gi_args = strdup("git push origin");
	gi->gi_until = (int64_t)now_ms_mono() + left_ms;
	/* The timer has not run, whatever its time. */
	assert_non_null(gi->gi_timer = evtimer_new(base, NULL, NULL));
	assert_int_equal(evtimer_add(gi->gi_timer, &tv), 0);
	TAILQ_INSERT_TAIL(&gd.gd_items, gi, gi_entry);
	gd.gd_nheld++;
	verdict = answer = NULL;
}

static void
decide(const char *decision)
{
	struct ipc_msg m;

	memset(&m, 0, sizeof(m));
	m.m_type = MSG_APPROVAL_DECIDE;
	m.m_fd = -1;
	m.m_obj = json_object_new_object();
	json_object_object_add(m.m_obj, "id", json_object_new_string(ID));
	json_object_object_add(
	    m.m_obj, "decision", json_object_new_string(decision));
	approval_decide_h(NULL, &m, NULL);
	json_object_put(m.m_obj);
}

static void
unhold(struct gate_item *gi)
{
	TAILQ_REMOVE(&gd.gd_items, gi, gi_entry);
	event_free(gi->gi_timer);
	free(gi->gi_args);
}

static void
test_sbx8_decision_after_its_time_is_the_timeout(void **state)
{
	struct gate_item gi;

	held(&gi, -1);
	decide("allow");
	assert_string_equal(answer, "unknown-approval");
	assert_non_null(verdict);
	assert_string_equal(verdict, "ask-timeout");
	assert_int_equal(gi.gi_state, GI_AUDIT);
	assert_int_equal(gd.gd_nheld, 0);
	/* Decided once: a second decision finds nothing held. */
	verdict = NULL;
	decide("allow");
	assert_string_equal(answer, "unknown-approval");
	assert_null(verdict);
	unhold(&gi);
}

static void
test_sbx7_decision_in_time_is_the_operators(void **state)
{
	struct gate_item gi;

	held(&gi, 60000);
	decide("allow");
	assert_string_equal(answer, "ok");
	assert_string_equal(verdict, "ask-allow");
	unhold(&gi);
	held(&gi, 60000);
	decide("deny");
	assert_string_equal(answer, "ok");
	assert_string_equal(verdict, "ask-deny");
	unhold(&gi);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_sbx8_decision_after_its_time_is_the_timeout, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(
		test_sbx7_decision_in_time_is_the_operators, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
