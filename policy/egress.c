/*
 * Egress allowlists and address classes (EG-2): what a `network: proxy`
 * agent may reach, decided on names and on the addresses they resolve
 * to.  Pure: no I/O, no globals, no allocation.
 */
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>

#include "egress.h"
#include "text.h"

static const char *const reason_names[ER_MAX] = {
    [ER_NONE] = "",
    [ER_HOST_NOT_ALLOWED] = "host-not-allowed",
    [ER_PORT_NOT_ALLOWED] = "port-not-allowed",
    [ER_ADDRESS_REFUSED] = "address-refused",
    [ER_RESOLVE_FAILED] = "resolve-failed",
    [ER_BUDGET_EXCEEDED] = "budget-exceeded",
    [ER_BAD_REQUEST] = "bad-request",
    [ER_CONNECT_FAILED] = "connect-failed",
    [ER_ROUTE_NOT_FOUND] = "route-not-found",
    [ER_TLS_FAILED] = "upstream-tls-failed",
    [ER_UPSTREAM_CLOSED] = "upstream-closed",
    [ER_UPSTREAM_BAD_ANSWER] = "upstream-bad-answer",
};

const char *
egress_reason_name(enum egress_reason r)
{
	if ((unsigned)r >= ER_MAX)
		return "bad-request";
	return reason_names[r];
}

int
egress_hostname_ok(const char *s, size_t len)
{
	return text_dns_name(s, len, TEXT_DNS_NAMED);
}

int
egress_ip_parse(const char *s, size_t len, unsigned char addr[16])
{
	char buf[EGRESS_ADDR_STR_MAX];

	if (len == 0 || len >= sizeof(buf) || memchr(s, '\0', len) != NULL)
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(addr, 0, 16);
	/* inet_pton's IPv4 form is the strict dotted quad (no octal). */
	if (inet_pton(AF_INET, buf, addr) == 1)
		return 4;
	if (strchr(buf, '%') == NULL && inet_pton(AF_INET6, buf, addr) == 1)
		return 6;
	return 0;
}

/* ":port" at s[0, len): 1..65535, digits only, no leading zero. */
static int
port_parse(const char *s, size_t len, unsigned int *port)
{
	unsigned int v = 0;
	size_t i;

	if (len < 2 || len > 6 || s[0] != ':' || s[1] == '0')
		return -1;
	for (i = 1; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*port = v;
	return 0;
}

int
egress_rule_parse(const char *s, size_t len, struct egress_rule *r)
{
	const char *host = s, *colon;
	size_t hlen;
	int fam;

	memset(r, 0, sizeof(*r));
	r->er_port = EGRESS_PORT_DEF;
	if (len == 0 || len > EGRESS_RULE_MAX || memchr(s, '\0', len) != NULL)
		return -1;
	if (s[0] == '[') {
		/* "[v6]" or "[v6]:port" */
		if ((colon = memchr(s, ']', len)) == NULL)
			return -1;
		host = s + 1;
		hlen = (size_t)(colon - host);
		if ((size_t)(colon + 1 - s) < len &&
		    port_parse(colon + 1, len - (size_t)(colon + 1 - s),
			&r->er_port) == -1)
			return -1;
		if (egress_ip_parse(host, hlen, r->er_addr) != 6)
			return -1;
		r->er_kind = EK_IP6;
		text_lower_copy(r->er_host, host, hlen);
		return 0;
	}
	hlen = len;
	if ((colon = memchr(s, ':', len)) != NULL) {
		hlen = (size_t)(colon - s);
		if (port_parse(colon, len - hlen, &r->er_port) == -1)
			return -1;
	}
	if ((fam = egress_ip_parse(host, hlen, r->er_addr)) == 4) {
		r->er_kind = EK_IP4;
	} else if (hlen > 2 && host[0] == '*' && host[1] == '.') {
		host += 2;
		hlen -= 2;
		/* A suffix of at least two labels: never "*.com". */
		if (!egress_hostname_ok(host, hlen) ||
		    memchr(host, '.', hlen) == NULL)
			return -1;
		r->er_kind = EK_WILDCARD;
	} else if (egress_hostname_ok(host, hlen))
		r->er_kind = EK_NAME;
	else
		return -1;
	text_lower_copy(r->er_host, host, hlen);
	return 0;
}

int
egress_rule_format(const struct egress_rule *r, char *buf, size_t sz)
{
	int n;

	switch (r->er_kind) {
	case EK_WILDCARD:
		n = snprintf(buf, sz, "*.%s:%u", r->er_host, r->er_port);
		break;
	case EK_IP6:
		n = snprintf(buf, sz, "[%s]:%u", r->er_host, r->er_port);
		break;
	default:
		n = snprintf(buf, sz, "%s:%u", r->er_host, r->er_port);
	}
	return n < 0 || (size_t)n >= sz ? -1 : 0;
}

static int
rule_names(const struct egress_rule *r, const char *host, int ip,
    const unsigned char addr[16])
{
	size_t hl, sl;

	switch (r->er_kind) {
	case EK_NAME:
		return ip == 0 && strcmp(r->er_host, host) == 0;
	case EK_WILDCARD:
		hl = strlen(host);
		sl = strlen(r->er_host);
		return ip == 0 && hl > sl + 1 && host[hl - sl - 1] == '.' &&
		       strcmp(host + hl - sl, r->er_host) == 0;
	case EK_IP4:
		return ip == 4 && memcmp(r->er_addr, addr, 4) == 0;
	case EK_IP6:
		return ip == 6 && memcmp(r->er_addr, addr, 16) == 0;
	}
	return 0;
}

int
egress_listed(const struct egress_rule *rules, size_t n, const char *host,
    int ip, const unsigned char addr[16])
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rules[i].er_kind != EK_WILDCARD &&
		    rule_names(&rules[i], host, ip, addr))
			return 1;
	return 0;
}

int
egress_match(const struct egress_rule *rules, size_t n, const char *host,
    int ip, const unsigned char addr[16], unsigned int port,
    enum egress_reason *why)
{
	size_t i;
	int named = 0;

	for (i = 0; i < n; i++) {
		if (!rule_names(&rules[i], host, ip, addr))
			continue;
		if (rules[i].er_port == port)
			return (int)i;
		named = 1;
	}
	*why = named ? ER_PORT_NOT_ALLOWED : ER_HOST_NOT_ALLOWED;
	return -1;
}

/* a within prefix/bits (big-endian bytes). */
static int
in_net(const unsigned char *a, const unsigned char *net, unsigned int bits)
{
	unsigned int full = bits / 8, rest = bits % 8;

	if (memcmp(a, net, full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	return ((a[full] ^ net[full]) & (0xff << (8 - rest)) & 0xff) == 0;
}

struct net_class {
	unsigned char n_net[16];
	unsigned int n_bits;
	enum egress_addr_class n_class;
};

/* Most specific first: metadata before link-local. */
static const struct net_class v4_nets[] = {
    {{169, 254, 169, 254}, 32, EA_METADATA},
    {{0}, 8, EA_UNSPECIFIED},
    {{127}, 8, EA_LOOPBACK},
    {{10}, 8, EA_PRIVATE},
    {{172, 16}, 12, EA_PRIVATE},
    {{192, 168}, 16, EA_PRIVATE},
    {{100, 64}, 10, EA_PRIVATE},
    {{169, 254}, 16, EA_LINKLOCAL},
    {{224}, 4, EA_MULTICAST},
    {{240}, 4, EA_RESERVED}, /* and 255.255.255.255 */
    {{192, 0, 0}, 24, EA_RESERVED},
    {{192, 0, 2}, 24, EA_RESERVED},
    {{198, 18}, 15, EA_RESERVED},
    {{198, 51, 100}, 24, EA_RESERVED},
    {{203, 0, 113}, 24, EA_RESERVED},
};

static const struct net_class v6_nets[] = {
    {{0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54}, 128,
	EA_METADATA},
    {{0}, 128, EA_UNSPECIFIED},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, EA_LOOPBACK},
    {{0xfc}, 7, EA_PRIVATE},
    {{0xfe, 0xc0}, 10, EA_PRIVATE},
    {{0xfe, 0x80}, 10, EA_LINKLOCAL},
    {{0xff}, 8, EA_MULTICAST},
    {{0x01, 0x00}, 64, EA_RESERVED},
    /* Local-use NAT64 (RFC 8215): the IPv4 address it carries sits where
     * the local prefix length puts it, so the class cannot be read off. */
    {{0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48, EA_RESERVED},
    {{0x20, 0x01, 0x0d, 0xb8}, 32, EA_RESERVED},
};

static enum egress_addr_class
class_of(const struct net_class *t, size_t n, const unsigned char *a)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (in_net(a, t[i].n_net, t[i].n_bits))
			return t[i].n_class;
	return EA_PUBLIC;
}

enum egress_addr_class
egress_addr_class(int family, const unsigned char *a)
{
	static const unsigned char mapped[12] = {
	    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const unsigned char compat[12] = {0};
	static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
	static const unsigned char translated[12] = {
	    0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};

	if (family == 4)
		return class_of(
		    v4_nets, sizeof(v4_nets) / sizeof(v4_nets[0]), a);
	if (family != 6)
		return EA_RESERVED;
	/* Exactly :: and ::1 first: they also lie in ::/96. */
	if (in_net(a, v6_nets[1].n_net, 128))
		return EA_UNSPECIFIED;
	if (in_net(a, v6_nets[2].n_net, 128))
		return EA_LOOPBACK;
	/* Carriers of an IPv4 address are that address's class. */
	if (memcmp(a, mapped, 12) == 0 || memcmp(a, compat, 12) == 0 ||
	    memcmp(a, nat64, 12) == 0 || memcmp(a, translated, 12) == 0)
		return egress_addr_class(4, a + 12);
	if (a[0] == 0x20 && a[1] == 0x02)
		return egress_addr_class(4, a + 2);
	return class_of(v6_nets, sizeof(v6_nets) / sizeof(v6_nets[0]), a);
}
