/*
 * The command gate's curl/wget rule: URLs must be http(s) with a host
 * that parses (asked unless the manifest lists it), no option that
 * re-routes the request or reads a config, and file values checked.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gate_impl.h"
#include "text.h"

/* A curl/wget URL: http(s) only, a host that parses; ask unless listed. */
static int
check_url(struct gctx *x, const char *u, struct gres *r)
{
	char host[256];
	const char *a, *e, *at, *h, *p;
	size_t hl;

	if ((p = strstr(u, "://")) != NULL) {
		if (!((p - u == 4 && strncasecmp(u, "http", 4) == 0) ||
			(p - u == 5 && strncasecmp(u, "https", 5) == 0)))
			goto bad;
		a = p + 3;
	} else
		a = u;
	e = a + strcspn(a, "/?#");
	for (at = NULL, h = a; h < e; h++)
		if (*h == '@')
			at = h;
	h = at ? at + 1 : a;
	if (*h == '[') {
		p = memchr(h, ']', (size_t)(e - h));
		if (p == NULL || (p + 1 != e && p[1] != ':'))
			goto bad;
		hl = (size_t)(p + 1 - h);
		if (hl < 3 || hl >= sizeof(host) ||
		    strspn(h + 1, "0123456789abcdefABCDEF:.") != hl - 2)
			goto bad;
		p++;
	} else {
		p = memchr(h, ':', (size_t)(e - h));
		if (p == NULL)
			p = e;
		hl = (size_t)(p - h);
		if (hl == 0 || hl >= sizeof(host))
			goto bad;
	}
	if (p < e) { /* ":port" */
		if (e - p < 2 || e - p > 6 ||
		    strspn(p + 1, "0123456789") != (size_t)(e - p - 1))
			goto bad;
	}
	text_lower_copy(host, h, hl);
	if (hl > 1 && host[hl - 1] == '.' && host[0] != '[')
		host[hl - 1] = '\0';
	if (host[0] != '[' &&
	    !text_dns_name(host, strlen(host), TEXT_DNS_LOWER))
		goto bad;
	if (!gate_in_vec(x->gp->gp_hosts, x->gp->gp_nhosts, host))
		gate_res_set(r, GATE_ASK, "ask-host");
	return 0;
bad:
	gate_res_set(r, GATE_DENY, "url-refused");
	return -1;
}

/* A file named by a curl/wget option value ("@file", "name=@file"). */
static int
net_file(struct gctx *x, const char *v, unsigned f, int is_path, struct gres *r)
{
	const char *at;

	if (is_path)
		return gate_check_path(x, v, f | SH_TILDE, r);
	if (v[0] == '@' || v[0] == '<')
		return gate_check_path(x, v + 1, f | SH_TILDE, r);
	if ((at = strpbrk(v, "@<")) != NULL)
		return gate_check_path(x, at + 1, f | SH_TILDE, r);
	return 0;
}

/* An option whose value is a file name. */
static int
net_is_path(const char *opt, int wget)
{
	static const char *const sub[] = {"output", "file", "cookie", "cert",
	    "trace", "dump-header", "directory-prefix", "key", "capath",
	    "stderr", NULL};
	size_t i;

	if (opt[1] != '-')
		return strchr(wget ? "OoaP" : "oDTbcE", opt[1]) != NULL;
	for (i = 0; sub[i] != NULL; i++)
		if (strstr(opt, sub[i]) != NULL)
			return 1;
	return 0;
}

/*
 * curl 7.x and wget (getopt_long) take any unambiguous prefix of a long
 * option ("--conf" is --config): the full name when opt is one of longs
 * or abbreviates exactly one, else opt.
 */
static const char *
net_long(const char *const *longs, const char *opt)
{
	const char *hit = NULL;
	size_t l = strlen(opt);

	if (schema_in_list(longs, opt))
		return opt;
	for (; *longs != NULL; longs++)
		if (strncmp(*longs, opt, l) == 0) {
			if (hit != NULL)
				return opt;
			hit = *longs;
		}
	return hit != NULL ? hit : opt;
}

/* opt is, or abbreviates, a refused long option. */
static int
net_long_bad(const char *const *bad, const char *opt)
{
	size_t l = strlen(opt);

	for (; *bad != NULL; bad++)
		if ((*bad)[1] == '-' && strncmp(*bad, opt, l) == 0)
			return 1;
	return 0;
}

int
gate_rule_net(
    struct gctx *x, const struct sh_word *w, size_t n, int wget, struct gres *r)
{
	const char *shorts = wget ? g_wget_short : g_curl_short;
	const char *const *longs = wget ? g_wget_long : g_curl_long;
	const char *const *bad = wget ? g_wget_bad : g_curl_bad;
	const char *s, *v, *opt;
	char lopt[80];
	size_t j, l;
	int dd = 0, takes;

	for (j = 1; j < n; j++) {
		s = w[j].w_s;
		if (dd || s[0] != '-' || s[1] == '\0') {
			if (check_url(x, s, r) == -1)
				return -1;
			continue;
		}
		if (strcmp(s, "--") == 0) {
			dd = 1;
			continue;
		}
		v = NULL;
		if (s[1] == '-') {
			l = strcspn(s, "=");
			snprintf(lopt, sizeof(lopt), "%.*s", (int)l, s);
			if (net_long_bad(bad, lopt))
				goto netbad;
			opt = net_long(longs, lopt);
			takes = schema_in_list(longs, opt);
			if (s[l] == '=')
				v = s + l + 1;
			else if (takes && j + 1 < n)
				v = w[++j].w_s;
		} else {
			/* a cluster: the first letter taking a value ends it */
			for (l = 1;
			     s[l] != '\0' && strchr(shorts, s[l]) == NULL;
			     l++) {
				snprintf(lopt, sizeof(lopt), "-%c", s[l]);
				if (schema_in_list(bad, lopt))
					goto netbad;
			}
			snprintf(lopt, sizeof(lopt), "-%c", s[l] ? s[l] : '?');
			opt = s[l] ? lopt : s;
			takes = s[l] != '\0';
			if (takes && s[l + 1] != '\0')
				v = s + l + 1;
			else if (takes && j + 1 < n)
				v = w[++j].w_s;
		}
		if (schema_in_list(bad, opt))
			goto netbad;
		if (v == NULL)
			continue;
		if (strcmp(opt, "--url") == 0) {
			if (check_url(x, v, r) == -1)
				return -1;
			continue;
		}
		if (net_file(x, v, w[j].w_f, net_is_path(opt, wget), r) == -1)
			return -1;
	}
	return 0;
netbad:
	gate_res_set(r, GATE_DENY, "net-option");
	return -1;
}
