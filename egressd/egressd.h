/*
 * The map of cordon-egressd (EG-1, EG-2, EG-4): the only process of
 * cordon that opens outbound connections.  The spawner hands it each
 * `network: proxy` run's listening socket (made inside the run's own
 * network namespace) with the run's allowlist; it accepts the agent's
 * CONNECT requests there, resolves and checks the target itself, and
 * splices allowed tunnels; a plain request on a credential route (EG-3)
 * goes to the route's upstream over TLS with the route's key put on.
 * egressd.c: the daemon, its dispatch rows and runs; tunnel.c: one
 * connection from accept to its audit record; pump.c: an open tunnel's
 * bytes moved by splice(2); route.c: a routed request; tls.c: the TLS
 * client.
 */
#ifndef CORDON_EGRESSD_H
#define CORDON_EGRESSD_H

#include <sys/queue.h>
#include <sys/socket.h>

#include <stdint.h>

#include "daemon.h"
#include "egress.h"
#include "log.h"
#include "util.h"

struct bufferevent;
struct event_base;
struct json_object;
struct evdns_base;
struct evdns_getaddrinfo_request;
struct event;

#define EG_ADDRS_MAX	   8		/* addresses tried per target */
#define EG_STEP_SEC	   10		/* resolve, connect: each within */
#define EG_HIWAT	   (256 * 1024) /* buffered one way before pausing */
#define EG_RUNS_MAX	   256		/* runs at once */
#define EG_REFUSE_LINGER   2		/* seconds to deliver a refusal */
#define EG_ACCEPT_PAUSE_MS 100		/* a proxy out of descriptors waits */
#define EG_REC_RATE	   20		/* records a second, per run (EG-4) */
#define EG_REC_BURST	   100		/* ... and at once */

struct eg_test {
	char et_host[EGRESS_HOST_MAX + 1];
	int et_fam; /* 4, 6 */
	unsigned char et_addr[16];
};

struct tunnel;
struct pump;

struct erun {
	TAILQ_ENTRY(erun) er_entry;
	char er_id[17];
	char er_agent[65];
	struct egress_rule er_allow[EGRESS_ALLOW_MAX];
	size_t er_nallow;
	unsigned int er_max_conns;
	unsigned long long er_max_bytes;
	unsigned int er_idle_sec;
	/* Test-only (CORDON_TEST_EGRESS=1): a name map and one address
	 * exempt from the refused classes. */
	struct eg_test er_test[EGRESS_TEST_MAX];
	size_t er_ntest;
	int er_test_allow_fam; /* 0: none */
	unsigned char er_test_allow[16];
	/* EG-3: credential routes and their keys (wiped at the run's end) */
	struct egress_route er_routes[EGRESS_ROUTES_MAX];
	char *er_keys[EGRESS_ROUTES_MAX];
	size_t er_nroutes;
	int er_fd; /* the listener, in the run's netns */
	struct event *er_accept_ev;
	struct event *er_accept_pause; /* out of descriptors: resumes it */
	struct log_limit er_loglim;    /* the lines its proxy causes */
	unsigned int er_nconns;
	unsigned int er_seq;	     /* connections accepted so far, numbered */
	unsigned long long er_bytes; /* both ways, all tunnels */
	/* EG-4: one token per record; those refused for want of one */
	struct rate er_rate;
	unsigned int er_limited;
	TAILQ_HEAD(, tunnel) er_tunnels;
};

enum tun_state { T_HEAD, T_RESOLVE, T_CONNECT, T_OPEN, T_CLOSING };

struct tunnel {
	TAILQ_ENTRY(tunnel) t_entry;
	struct erun *t_run;
	unsigned int t_seq; /* the run's connection number, from 1 */
	enum tun_state t_state;
	struct bufferevent *t_cli, *t_up;
	struct event *t_timer;
	struct evdns_getaddrinfo_request *t_dns;
	struct egress_req t_req;
	int t_rule;		       /* allowlist index, or -1 */
	int t_named;		       /* the host matched a rule: recordable */
	enum egress_reason t_why;      /* ER_NONE: allowed */
	const char *t_end;	       /* how an allowed tunnel ended */
	int t_paused_cli, t_paused_up; /* reads held for backpressure */
	int t_eof;  /* EOF read: 1 the agent's, 2 the upstream's (EG-4) */
	int t_shut; /* and passed on: the other side's sending shut */
	struct sockaddr_storage t_addrs[EG_ADDRS_MAX];
	socklen_t t_alen[EG_ADDRS_MAX];
	size_t t_naddrs, t_next;
	uint64_t t_start, t_last; /* monotonic ms */
	unsigned long long t_bytes_up, t_bytes_down;
	struct pump *t_pump; /* set once the kernel moves the bytes */
	int t_pump_tried;
	/* EG-3: a plain request (route.c) */
	int t_http;			    /* 1: not a CONNECT */
	const struct egress_route *t_route; /* the route it names, or NULL */
	char *t_rhead;			    /* the head to send, key and all */
	size_t t_rhead_len;
	unsigned long long t_body_left; /* of its Content-Length */
	int t_status; /* the response's; < 200: no final head yet */
};

struct egressd {
	struct daemon eg_d;
	struct evdns_base *eg_dns;
	int eg_test; /* --test-egress: test-only keys honoured */
	TAILQ_HEAD(, erun) eg_runs;
	size_t eg_nruns;
};

extern struct egressd eg;

/* tunnel.c */
void tunnel_accept_cb(int fd, short ev, void *arg); /* arg: the erun */
void tunnel_close(struct tunnel *, const char *end);
void tunnel_limited_flush(struct erun *);	 /* the rate-limited, counted */
int tunnel_half_close(struct tunnel *, int dir); /* 1: t is gone */
int tunnel_budget(struct tunnel *, size_t);	 /* 0, or -1: over budget */
void tunnel_refuse(struct tunnel *, enum egress_reason);
void tunnel_resolve(struct tunnel *);

/* pump.c */
int pump_start(struct tunnel *);
void pump_free(struct tunnel *);

/* route.c (EG-3) */
int route_head(struct tunnel *); /* 0: a CONNECT; 1: handled here */
struct bufferevent *route_upstream_new(struct tunnel *);
void route_connected(struct tunnel *);
void route_splice_up(struct tunnel *);
int route_answer(struct tunnel *);
void route_record(const struct tunnel *, struct json_object *);
void route_done(struct tunnel *);

/* tls.c (EG-3) */
void tls_init(const char *test_ca); /* before confinement: opens the CA */
struct bufferevent *tls_bev_new(
    struct event_base *, const struct egress_route *);
int tls_failed(struct bufferevent *); /* the error was TLS's */

#endif
