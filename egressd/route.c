/*
 * A routed request (EG-3): a plain HTTP request on a run's proxy whose
 * target names one of its credential routes.  Its head is parsed by
 * policy/egress_req.c and rewritten by policy/egress_route.c (the
 * agent's credentials off, the route's key on, "Connection: close");
 * tunnel.c resolves, checks and connects the upstream as for a tunnel,
 * over TLS (tls.c); the body goes up to its Content-Length, the response
 * streams back as it comes, its head with "Connection: close".  One
 * egress.request record each.  Touches only the connection it is given.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "egressd.h"
#include "log.h"

static const char connect_prefix[] = "CONNECT ";

int
route_head(struct tunnel *t)
{
	struct erun *r = t->t_run;
	struct evbuffer *in = bufferevent_get_input(t->t_cli);
	size_t len = evbuffer_get_length(in), n, rest = 0;
	size_t cl = sizeof(connect_prefix) - 1;
	struct egress_http hp;
	enum egress_reason why;
	const char *buf;
	int rc, i, hl;

	n = len < EGRESS_HEAD_MAX ? len : EGRESS_HEAD_MAX;
	buf = (const char *)evbuffer_pullup(in, (ssize_t)n);
	if (r->er_nroutes == 0 ||
	    memcmp(buf, connect_prefix, n < cl ? n : cl) == 0)
		return 0; /* a CONNECT (or not yet told apart): tunnel.c's */
	t->t_http = 1;
	if ((rc = egress_http_parse(buf, n, &hp)) == 0)
		return 1;
	if (rc == -1) {
		tunnel_refuse(t, ER_BAD_REQUEST);
		return 1;
	}
	if ((i = egress_route_match(r->er_routes, r->er_nroutes,
		 buf + hp.hp_target_off, hp.hp_target_len, &rest)) < 0) {
		tunnel_refuse(t, ER_ROUTE_NOT_FOUND);
		return 1;
	}
	t->t_route = &r->er_routes[i];
	/* The upstream is the tunnel's target from here on. */
	memcpy(t->t_req.rq_host, t->t_route->ro_host, sizeof(t->t_req.rq_host));
	t->t_req.rq_port = t->t_route->ro_port;
	t->t_req.rq_ip = t->t_route->ro_ip;
	memcpy(t->t_req.rq_addr, t->t_route->ro_addr, 16);
	t->t_named = 1;
	t->t_rule = egress_match(r->er_allow, r->er_nallow, t->t_req.rq_host,
	    t->t_req.rq_ip, t->t_req.rq_addr, t->t_req.rq_port, &why);
	if (t->t_rule < 0) {
		tunnel_refuse(t, why);
		return 1;
	}
	if ((t->t_rhead = malloc(EGRESS_UP_HEAD_MAX)) == NULL ||
	    (hl = egress_route_head(buf, &hp, t->t_route, rest, r->er_keys[i],
		 t->t_rhead, EGRESS_UP_HEAD_MAX)) < 0) {
		tunnel_refuse(t, ER_BAD_REQUEST);
		return 1;
	}
	t->t_rhead_len = (size_t)hl;
	t->t_body_left = hp.hp_clen;
	evbuffer_drain(in, hp.hp_head_len);
	bufferevent_disable(t->t_cli, EV_READ); /* until the upstream is up */
	tunnel_resolve(t);
	return 1;
}

struct bufferevent *
route_upstream_new(struct tunnel *t)
{
	return tls_bev_new(eg.eg_d.d_base, t->t_route);
}

/* Up to the rest of the body, from the agent to the upstream. */
void
route_splice_up(struct tunnel *t)
{
	struct evbuffer *in = bufferevent_get_input(t->t_cli);
	size_t n = evbuffer_get_length(in);

	if (n > t->t_body_left)
		n = (size_t)t->t_body_left;
	if (n > 0) {
		if (tunnel_budget(t, n) == -1) {
			tunnel_close(t, "budget-exceeded");
			return;
		}
		t->t_bytes_up += n;
		t->t_body_left -= n;
		evbuffer_remove_buffer(in, bufferevent_get_output(t->t_up), n);
	}
	/* One request per connection: nothing after its body is read. */
	if (t->t_body_left == 0)
		bufferevent_disable(t->t_cli, EV_READ);
	else if (evbuffer_get_length(bufferevent_get_output(t->t_up)) >=
		 EG_HIWAT) {
		bufferevent_disable(t->t_cli, EV_READ);
		t->t_paused_cli = 1;
	}
}

/* Connected and verified: the rewritten head, then the body. */
void
route_connected(struct tunnel *t)
{
	if (tunnel_budget(t, t->t_rhead_len) == -1) {
		tunnel_close(t, "budget-exceeded");
		return;
	}
	evbuffer_add(
	    bufferevent_get_output(t->t_up), t->t_rhead, t->t_rhead_len);
	t->t_bytes_up += t->t_rhead_len;
	route_done(t); /* the head with the key: wiped at once */
	bufferevent_enable(t->t_up, EV_READ);
	if (t->t_body_left > 0)
		bufferevent_enable(t->t_cli, EV_READ);
	route_splice_up(t);
}

/*
 * The response's head (each 1xx one, then the final one), rewritten for
 * the agent with "Connection: close" by policy/egress_req.c: held until
 * it is whole, never the body.  1: what follows streams as it comes; 0:
 * not yet, or t was refused or closed (not to be touched).
 */
int
route_answer(struct tunnel *t)
{
	struct evbuffer *in = bufferevent_get_input(t->t_up);
	char out[EGRESS_RESP_OUT_MAX];
	struct egress_resp rs;
	const char *buf;
	size_t n;
	int rc;

	while (t->t_status < 200 && (n = evbuffer_get_length(in)) > 0) {
		if (n > EGRESS_HEAD_MAX)
			n = EGRESS_HEAD_MAX;
		buf = (const char *)evbuffer_pullup(in, (ssize_t)n);
		rc = egress_resp_head(buf, n, out, sizeof(out), &rs);
		if (rc == 0)
			return 0;
		if (rc == -1 && t->t_bytes_down == 0) {
			tunnel_refuse(t, ER_UPSTREAM_BAD_ANSWER);
			return 0;
		}
		if (rc == -1) { /* after a 1xx: the agent has a head */
			tunnel_close(t, "upstream-error");
			return 0;
		}
		if (tunnel_budget(t, rs.rs_out_len) == -1) {
			tunnel_close(t, "budget-exceeded");
			return 0;
		}
		evbuffer_drain(in, rs.rs_head_len);
		evbuffer_add(
		    bufferevent_get_output(t->t_cli), out, rs.rs_out_len);
		t->t_bytes_down += rs.rs_out_len;
		t->t_status = rs.rs_status;
	}
	return t->t_status >= 200;
}

void
route_record(const struct tunnel *t, struct json_object *o)
{
	if (t->t_route != NULL)
		json_object_object_add(
		    o, "route", json_object_new_string(t->t_route->ro_name));
	if (t->t_status > 0)
		json_object_object_add(
		    o, "status", json_object_new_int(t->t_status));
}

void
route_done(struct tunnel *t)
{
	if (t->t_rhead == NULL)
		return;
	explicit_bzero(t->t_rhead, EGRESS_UP_HEAD_MAX);
	free(t->t_rhead);
	t->t_rhead = NULL;
	t->t_rhead_len = 0;
}
