/*
 * The snapshot behind GET /api/health (API-1, health_snap.h).  Every
 * answer was gathered at most HEALTH_MAX_AGE_MS before it is sent, so a
 * daemon that goes down shows in every answer sent that long after, at
 * the latest; within the bound, answers are the stored body with its
 * age, not a round trip through cordond and every daemon.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "broker.h"
#include "health_snap.h"
#include "util.h"

struct snap_wait {
	void *sw_hold; /* api_hold() of the request */
	TAILQ_ENTRY(snap_wait) sw_entry;
};

static struct {
	char *hs_body;	    /* {"ok":true,...} of the last gathering */
	size_t hs_len;	    /* strlen(hs_body) */
	uint64_t hs_asked;  /* when it was asked for (monotonic ms) */
	int hs_refreshing;  /* a gathering is in flight */
	uint64_t hs_asking; /* when that one was asked for */
	TAILQ_HEAD(, snap_wait) hs_wait;
} snap = {.hs_wait = TAILQ_HEAD_INITIALIZER(snap.hs_wait)};

/* The body with its age as the first member. */
static void
snap_send(struct evhttp_request *req, uint64_t now)
{
	struct evbuffer *b;

	if ((b = evbuffer_new()) == NULL ||
	    evbuffer_add_printf(
		b, "{\"ageMs\":%" PRIu64 ",", now - snap.hs_asked) < 0 ||
	    evbuffer_add(b, snap.hs_body + 1, snap.hs_len - 1) == -1) {
		if (b != NULL)
			evbuffer_free(b);
		send_error(req, 500, "internal");
		return;
	}
	send_json_buf(req, 200, b);
	evbuffer_free(b);
}

void
health_snap_get(struct evhttp_request *req, health_refresh_fn refresh)
{
	uint64_t now = now_ms_mono();
	struct snap_wait *sw;

	if (snap.hs_body != NULL && now - snap.hs_asked <= HEALTH_MAX_AGE_MS) {
		snap_send(req, now);
		return;
	}
	if ((sw = calloc(1, sizeof(*sw))) == NULL ||
	    (sw->sw_hold = api_hold(req)) == NULL) {
		free(sw);
		send_error(req, 500, "internal");
		return;
	}
	TAILQ_INSERT_TAIL(&snap.hs_wait, sw, sw_entry);
	if (snap.hs_refreshing)
		return;
	snap.hs_refreshing = 1;
	snap.hs_asking = now;
	refresh();
}

void
health_snap_done(struct json_object *answer)
{
	struct evhttp_request *req;
	struct snap_wait *sw;
	const char *s = NULL;
	size_t len = 0;
	char *body;
	uint64_t now;

	snap.hs_refreshing = 0;
	if (answer != NULL)
		s = json_object_to_json_string_length(
		    answer, JSON_C_TO_STRING_PLAIN, &len);
	/* A body is an object with at least "ok": never "{}". */
	if (s != NULL && len > 2 && s[0] == '{' && (body = strdup(s)) != NULL) {
		free(snap.hs_body);
		snap.hs_body = body;
		snap.hs_len = len;
		snap.hs_asked = snap.hs_asking;
	} else
		answer = NULL;
	now = now_ms_mono();
	while ((sw = TAILQ_FIRST(&snap.hs_wait)) != NULL) {
		TAILQ_REMOVE(&snap.hs_wait, sw, sw_entry);
		if ((req = api_release(sw->sw_hold)) != NULL) {
			if (answer != NULL)
				snap_send(req, now);
			else
				send_error(req, 503, "unavailable");
		}
		free(sw);
	}
}
