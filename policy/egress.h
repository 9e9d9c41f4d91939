/*
 * Egress rules (EG-2, EG-4): the allowlist of a `network: proxy` agent,
 * the classes of addresses never reached, and the strict parser of the
 * one request an agent sends its proxy (CONNECT host:port).  Pure: no
 * I/O, no globals, no allocation; the manifest's `egress:` block is read
 * by egress_mf.c into these types.
 */
#ifndef CORDON_POLICY_EGRESS_H
#define CORDON_POLICY_EGRESS_H

#include <stddef.h>

#define EGRESS_ALLOW_MAX    32	 /* allowlist entries per agent */
#define EGRESS_HOST_MAX	    253	 /* a DNS name, RFC 1123 */
#define EGRESS_RULE_MAX	    264	 /* "*." + host + ":65535", or "[v6]:port" */
#define EGRESS_PORT_DEF	    443	 /* an entry without :port */
#define EGRESS_PROXY_PORT   3128 /* the proxy in every proxy run's netns */
#define EGRESS_HEAD_MAX	    8192 /* request line + headers, bytes */
#define EGRESS_HEAD_SEC	    10	 /* whole head within (slowloris) */
#define EGRESS_HEADERS_MAX  64	 /* header lines */
#define EGRESS_TEST_MAX	    8	 /* egress.testResolve entries */
#define EGRESS_ADDR_STR_MAX 46	 /* INET6_ADDRSTRLEN */

/* Per run: defaults and the ceilings a manifest may raise them to. */
#define EGRESS_CONNS_DEF 32
#define EGRESS_CONNS_MAX 256
#define EGRESS_BYTES_DEF (1024ULL * 1024 * 1024)
#define EGRESS_BYTES_MAX (64ULL * 1024 * 1024 * 1024)
#define EGRESS_IDLE_DEF	 120
#define EGRESS_IDLE_MAX	 3600

enum egress_kind {
	EK_NAME,     /* exactly this name */
	EK_WILDCARD, /* "*.suffix": any name with at least one more label */
	EK_IP4,	     /* exactly this address */
	EK_IP6,
};

struct egress_rule {
	char er_host[EGRESS_HOST_MAX + 1]; /* lower case; the suffix for
					      EK_WILDCARD; the text of an
					      address */
	unsigned int er_port;
	enum egress_kind er_kind;
	unsigned char er_addr[16]; /* EK_IP4 (first 4), EK_IP6 */
};

/* Why a connection was refused: the reason its 403 and record carry. */
enum egress_reason {
	ER_NONE = 0,
	ER_HOST_NOT_ALLOWED,
	ER_PORT_NOT_ALLOWED,
	ER_ADDRESS_REFUSED,
	ER_RESOLVE_FAILED,
	ER_BUDGET_EXCEEDED,
	ER_BAD_REQUEST,
	ER_CONNECT_FAILED,
	ER_ROUTE_NOT_FOUND, /* EG-3: a plain request no route matches */
	ER_TLS_FAILED,	    /* EG-3: the upstream's TLS failed or was not
			       verified */
	ER_UPSTREAM_CLOSED, /* EG-3: the upstream closed before any answer */
	ER_UPSTREAM_BAD_ANSWER, /* EG-3: its response head was refused */
	ER_MAX
};
/* "host-not-allowed", ...; "" for ER_NONE. */
const char *egress_reason_name(enum egress_reason);

/*
 * One allowlist entry as a manifest writes it: "host", "*.domain",
 * "host:port", an IPv4 address, or "[IPv6]" (each with an optional
 * :port, 1..65535, default 443).  Names are RFC 1123 (labels of
 * [A-Za-z0-9-], 1..63, no leading or trailing '-', 253 in all, the last
 * label not all digits).  0, or -1: refused.
 */
int egress_rule_parse(const char *s, size_t len, struct egress_rule *);
/* The canonical text of a rule (re-parses to the same rule). */
int egress_rule_format(const struct egress_rule *, char *buf, size_t sz);

/* A DNS name (either case) that cannot read as an address: text_dns_name
 * with TEXT_DNS_NAMED. */
int egress_hostname_ok(const char *s, size_t len);
/* A dotted-quad IPv4 or an IPv6 address (no brackets): 4 or 6, else 0. */
int egress_ip_parse(const char *s, size_t len, unsigned char addr[16]);

/*
 * A target (lower-case name, or an address of family ip 4/6) on port:
 * the index of the first rule that allows it, or -1 and *why
 * (ER_HOST_NOT_ALLOWED: no rule names the host; ER_PORT_NOT_ALLOWED:
 * some does, not on this port).  An address matches only a rule that
 * lists that address; a name never matches an address rule.
 */
int egress_match(const struct egress_rule *, size_t n, const char *host, int ip,
    const unsigned char addr[16], unsigned int port, enum egress_reason *why);

/*
 * EG-4: 1 if a rule names the target itself (whatever its port), not
 * through a wildcard: only such a name is the operator's text.  The
 * labels a wildcard leaves open are the agent's and may carry data.
 */
int egress_listed(const struct egress_rule *, size_t n, const char *host,
    int ip, const unsigned char addr[16]);

/* Classes of addresses never connected to, whatever the allowlist says. */
enum egress_addr_class {
	EA_PUBLIC = 0,
	EA_UNSPECIFIED, /* 0.0.0.0/8, :: */
	EA_LOOPBACK,	/* 127/8, ::1 */
	EA_PRIVATE,	/* 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7,
			   fec0::/10 */
	EA_LINKLOCAL,	/* 169.254/16, fe80::/10 */
	EA_METADATA,	/* 169.254.169.254, fd00:ec2::254 */
	EA_MULTICAST,	/* 224/4, ff00::/8 */
	EA_RESERVED,	/* 240/4, 192.0.0/24, 198.18/15, documentation
			   ranges, 100::/64, 64:ff9b:1::/48 */
};
/*
 * family 4 or 6.  An IPv6 address that carries an IPv4 one (mapped
 * ::ffff:0:0/96, translated ::ffff:0:0:0/96, compatible ::/96, NAT64
 * 64:ff9b::/96, 6to4 2002::/16) is the class of that IPv4 address.
 */
enum egress_addr_class egress_addr_class(int family, const unsigned char *a);

/* The one request a proxy client sends (EG-2). */
struct egress_req {
	char rq_host[EGRESS_HOST_MAX + 1]; /* lower case, no brackets */
	unsigned int rq_port;
	int rq_ip; /* 0: a name; 4, 6: an address literal */
	unsigned char rq_addr[16];
	size_t rq_head_len; /* bytes up to and with the blank line */
};
/*
 * Parse the head at buf[0, len): 1 complete and valid (*rq filled), 0
 * not complete yet (and len < EGRESS_HEAD_MAX), -1 refused.  Accepted:
 * "CONNECT authority HTTP/1.x" then header lines, CRLF only; refused:
 * any other method or form, bare CR or LF, control characters, obs-fold,
 * a space before a colon, more than EGRESS_HEADERS_MAX headers, a second
 * Host or one naming another authority, Content-Length and
 * Transfer-Encoding (a CONNECT has no body), a head over
 * EGRESS_HEAD_MAX.
 */
int egress_req_parse(const char *buf, size_t len, struct egress_req *rq);

/*
 * EG-3: credential routes (egress_route.c).  A route maps the base URL an
 * agent sees, http://127.0.0.1:EGRESS_PROXY_PORT/NAME, to an https
 * upstream; egressd takes every auth header the agent sent off the
 * request and adds the real one.  The agent holds EGRESS_PLACEHOLDER.
 */
#define EGRESS_ROUTES_MAX     4
#define EGRESS_ROUTE_NAME_MAX 32
#define EGRESS_BASE_MAX	      128  /* the upstream's base path */
#define EGRESS_TARGET_MAX     4096 /* a routed request's target */
#define EGRESS_KEY_MAX	      4096 /* a key's value (LIM_SECRET_VALUE_MAX) */
#define EGRESS_UP_HEAD_MAX    (EGRESS_HEAD_MAX + EGRESS_KEY_MAX + 512)
#define EGRESS_BODY_MAX	      (64ULL * 1024 * 1024) /* Content-Length */
#define EGRESS_PLACEHOLDER    "cordon-egress-placeholder"

enum egress_auth {
	EGA_X_API_KEY,	    /* x-api-key: KEY (Anthropic API keys) */
	EGA_BEARER,	    /* Authorization: Bearer KEY (OpenAI, OAuth) */
	EGA_X_GOOG_API_KEY, /* x-goog-api-key: KEY (Gemini) */
	EGA_MAX
};
/* "x-api-key", "bearer", "x-goog-api-key"; the parse: 0, or -1. */
const char *egress_auth_name(enum egress_auth);
int egress_auth_parse(const char *s, size_t len, enum egress_auth *);

struct egress_route {
	char ro_name[EGRESS_ROUTE_NAME_MAX + 1]; /* as an agent's name */
	char ro_host[EGRESS_HOST_MAX + 1];	 /* lower case, no brackets */
	int ro_ip;				 /* 0: a name; 4, 6 */
	unsigned char ro_addr[16];
	unsigned int ro_port;		   /* default 443 */
	char ro_base[EGRESS_BASE_MAX + 1]; /* "" or "/a/b", no trailing / */
	enum egress_auth ro_auth;
};
/*
 * "https://host[:port][/base/path]" into ro's host, port and base: a
 * name (RFC 1123), an IPv4 address or "[IPv6]"; no userinfo, query or
 * fragment; the path of [A-Za-z0-9._~%/-] with no dot segment.  0, or
 * -1.
 */
int egress_upstream_parse(const char *s, size_t len, struct egress_route *ro);
/* The canonical text of the upstream of ro (re-parses to the same). */
int egress_upstream_format(const struct egress_route *ro, char *buf, size_t sz);

/* A plain HTTP request to the proxy (EG-3), parsed by egress_http_parse. */
struct egress_http {
	size_t hp_method_len; /* the method: buf[0, hp_method_len) */
	size_t hp_target_off; /* origin-form, from '/' */
	size_t hp_target_len;
	unsigned long long hp_clen; /* Content-Length; 0 if absent */
	size_t hp_nheaders;
	size_t hp_hoff[EGRESS_HEADERS_MAX]; /* each header line (no CRLF) */
	size_t hp_hlen[EGRESS_HEADERS_MAX];
	size_t hp_head_len; /* bytes up to and with the blank line */
};
/*
 * Parse a plain request head at buf[0, len): 1 complete and valid, 0
 * not complete yet, -1 refused.  Accepted: "METHOD /target HTTP/1.x"
 * (METHOD one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS: never
 * TRACE, which would echo the key back; origin-form only, visible ASCII
 * but '#' and backslash, no dot segment plain or percent-encoded, at most
 * EGRESS_TARGET_MAX) then header lines as egress_req_parse takes them,
 * at most one Host, at most one Content-Length (digits, at most
 * EGRESS_BODY_MAX); refused besides: Transfer-Encoding (a body has a
 * length, or none: no request smuggling by chunking), and either name
 * spelt with '_' (egress_header_like).
 */
int egress_http_parse(const char *buf, size_t len, struct egress_http *hp);

/*
 * A header name s[0, len) that a server may read as name (lower case,
 * '-' separated): ASCII case ignored, and '_' for '-', as CGI and WSGI
 * servers fold both to one.  1, or 0.
 */
int egress_header_like(const char *s, size_t len, const char *name);

/* A routed request's response head, as egressd passes it on (EG-3). */
struct egress_resp {
	size_t rs_head_len; /* bytes of buf up to and with the blank line */
	size_t rs_out_len;  /* bytes written to out */
	int rs_status;	    /* 100 ... 599 */
};
#define EGRESS_RESP_OUT_MAX (EGRESS_HEAD_MAX + 32)
/*
 * The upstream's response head at buf[0, len), rewritten into out[0, sz)
 * for the agent: its lines as they came but Connection, Keep-Alive,
 * Proxy-Connection, Set-Cookie and Set-Cookie2 (a session the route's
 * key earned is not the agent's), then "Connection: close" (the
 * agent's connection carries one request, and the agent must not reuse
 * it).  Read with the
 * request scanner's rules (CRLF only, no obs-fold, no control character,
 * at most EGRESS_HEAD_MAX bytes and EGRESS_HEADERS_MAX lines) under a
 * status line "HTTP/1.x NNN[ reason]", NNN 100 ... 599.  1 complete
 * (*rs filled), 0 not complete yet, -1 refused.  The body is not
 * touched: it follows the head as it comes.
 */
int egress_resp_head(
    const char *buf, size_t len, char *out, size_t sz, struct egress_resp *rs);
/*
 * The route a request's target names ("/NAME", "/NAME/...",
 * "/NAME?..."): its index and *rest, the offset in the target after
 * "/NAME"; or -1.
 */
int egress_route_match(const struct egress_route *, size_t n,
    const char *target, size_t tlen, size_t *rest);
/*
 * The head egressd sends upstream for the request at buf: the method,
 * the route's base path and the rest of the target, HTTP/1.1; Host the
 * upstream's; every header but Host, the hop-by-hop ones and every
 * credential header (Authorization, Proxy-Authorization, X-Api-Key,
 * X-Goog-Api-Key, Api-Key, Cookie, ...); then the route's own auth
 * header with key and "Connection: close".  Its length, or -1 (no room
 * in out[0, sz), a key with a line break, or a target that would start
 * "//" upstream).
 */
int egress_route_head(const char *buf, const struct egress_http *hp,
    const struct egress_route *ro, size_t rest, const char *key, char *out,
    size_t sz);

/*
 * egress_mf.c, for manifest.c: the `egress:` block into m->m_egress,
 * checked against sandbox.network (read before it).
 */
struct schema;
struct manifest;
struct mf_egress;
struct json_object;
/* egress_route.c: the block's `routes:` (after `allow:` is read). */
void mf_egress_routes(
    struct schema *, struct manifest *, struct json_object *eg);
void mf_egress_parse(
    struct schema *, struct manifest *, struct json_object *root);
/*
 * An egress policy as JSON: {allow: [rule...], maxConnections, maxBytes,
 * idleTimeoutSec, routes?}, what the dashboard shows and what egressd is
 * handed. The test-only keys are not in it.
 */
struct json_object *mf_egress_json(const struct mf_egress *e);
/* Its routes: [{name, upstream, auth, baseUrlEnv?}], never a key. */
struct json_object *mf_egress_routes_json(const struct mf_egress *e);

#endif
