/*
 * Credential routes (EG-3): the manifest's `egress.routes`, the match of
 * a routed request's target and the head egressd sends upstream in its
 * place, with every credential the agent sent taken off and the real one
 * put on.  Pure: no I/O, no globals; allocates only into the manifest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "charset.h"
#include "egress.h"
#include "env.h"
#include "manifest.h"
#include "manifest_parse.h"
#include "schema.h"

static const char *const auth_names[EGA_MAX] = {
    [EGA_X_API_KEY] = "x-api-key",
    [EGA_BEARER] = "bearer",
    [EGA_X_GOOG_API_KEY] = "x-goog-api-key",
};

/*
 * Headers never forwarded upstream: Host (the upstream's own is put),
 * the hop-by-hop ones, every header that carries a credential, so the
 * only key the upstream sees is the route's, and the method overrides a
 * framework may honour (a POST read as TRACE echoes the key back).
 */
static const char *const dropped[] = {"host", "connection", "keep-alive",
    "proxy-connection", "te", "trailer", "upgrade", "expect", "authorization",
    "proxy-authorization", "cookie", "x-api-key", "x-goog-api-key", "api-key",
    "apikey", "x-auth-token", "x-auth-key", "x-openai-key", "x-anthropic-key",
    "x-http-method-override", "x-http-method", "x-method-override", NULL};

const char *
egress_auth_name(enum egress_auth a)
{
	return (unsigned)a < EGA_MAX ? auth_names[a] : "";
}

int
egress_auth_parse(const char *s, size_t len, enum egress_auth *a)
{
	size_t i;

	for (i = 0; i < EGA_MAX; i++)
		if (strlen(auth_names[i]) == len &&
		    memcmp(auth_names[i], s, len) == 0) {
			*a = (enum egress_auth)i;
			return 0;
		}
	return -1;
}

/* The base path: [A-Za-z0-9._~%/-], no dot segment, no empty segment. */
static int
base_ok(const char *s, size_t len)
{
	size_t i, seg = 0;

	if (len > EGRESS_BASE_MAX)
		return 0;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == '/') {
			if (i > 0 &&
			    (seg == 0 || (seg == 1 && s[i - 1] == '.') ||
				(seg == 2 && s[i - 1] == '.' &&
				    s[i - 2] == '.')))
				return 0;
			seg = 0;
			continue;
		}
		if (!charset_has("a-zA-Z0-9._~%-", c))
			return 0;
		seg++;
	}
	return !((seg == 1 && s[len - 1] == '.') ||
		 (seg == 2 && s[len - 1] == '.' && s[len - 2] == '.'));
}

int
egress_upstream_parse(const char *s, size_t len, struct egress_route *ro)
{
	static const char scheme[] = "https://";
	struct egress_rule r;
	const char *auth, *slash;
	size_t alen, sl = sizeof(scheme) - 1, blen;

	if (len <= sl || strncasecmp(s, scheme, sl) != 0)
		return -1;
	auth = s + sl;
	slash = memchr(auth, '/', len - sl);
	alen = slash ? (size_t)(slash - auth) : len - sl;
	/* The authority is an allowlist entry's form, without a wildcard. */
	if (alen == 0 || memchr(auth, '@', alen) != NULL ||
	    memchr(auth, '*', alen) != NULL ||
	    egress_rule_parse(auth, alen, &r) == -1)
		return -1;
	blen = slash ? len - sl - alen : 0;
	while (blen > 0 && slash[blen - 1] == '/')
		blen--;
	if (blen > 0 && !base_ok(slash, blen))
		return -1;
	memcpy(ro->ro_host, r.er_host, sizeof(ro->ro_host));
	ro->ro_port = r.er_port;
	ro->ro_ip = r.er_kind == EK_IP4 ? 4 : r.er_kind == EK_IP6 ? 6 : 0;
	memcpy(ro->ro_addr, r.er_addr, sizeof(ro->ro_addr));
	if (blen > 0)
		memcpy(ro->ro_base, slash, blen);
	ro->ro_base[blen] = '\0';
	return 0;
}

int
egress_upstream_format(const struct egress_route *ro, char *buf, size_t sz)
{
	int n;

	n = snprintf(buf, sz, "https://%s%s%s:%u%s", ro->ro_ip == 6 ? "[" : "",
	    ro->ro_host, ro->ro_ip == 6 ? "]" : "", ro->ro_port, ro->ro_base);
	return n < 0 || (size_t)n >= sz ? -1 : 0;
}

int
egress_route_match(const struct egress_route *ro, size_t n, const char *target,
    size_t tlen, size_t *rest)
{
	size_t i, nl;

	if (tlen < 2 || target[0] != '/')
		return -1;
	for (i = 0; i < n; i++) {
		nl = strlen(ro[i].ro_name);
		if (tlen < 1 + nl || memcmp(target + 1, ro[i].ro_name, nl) != 0)
			continue;
		if (tlen == 1 + nl || target[1 + nl] == '/' ||
		    target[1 + nl] == '?') {
			*rest = 1 + nl;
			return (int)i;
		}
	}
	return -1;
}

/* Append s[0, n) to out at *off: 0, or -1 (no room). */
static int
put(char *out, size_t sz, size_t *off, const char *s, size_t n)
{
	if (n >= sz - *off)
		return -1;
	memcpy(out + *off, s, n);
	*off += n;
	return 0;
}

static int
puts0(char *out, size_t sz, size_t *off, const char *s)
{
	return put(out, sz, off, s, strlen(s));
}

static int
header_dropped(const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len);
	size_t i, n = colon ? (size_t)(colon - line) : len;

	/* "X_Api_Key" too: a CGI or WSGI upstream reads it as X-Api-Key. */
	for (i = 0; dropped[i] != NULL; i++)
		if (egress_header_like(line, n, dropped[i]))
			return 1;
	return 0;
}

int
egress_route_head(const char *buf, const struct egress_http *hp,
    const struct egress_route *ro, size_t rest, const char *key, char *out,
    size_t sz)
{
	const char *t = buf + hp->hp_target_off + rest;
	size_t tl = hp->hp_target_len - rest, off = 0, i;
	char port[16];
	int rc = 0;

	if (key == NULL || key[0] == '\0' || strpbrk(key, "\r\n") != NULL ||
	    sz == 0)
		return -1;
	/* Origin-form upstream too: "//host/..." is read as a host by some
	 * servers' URL parsers. */
	if (ro->ro_base[0] == '\0' && tl >= 2 && t[0] == '/' && t[1] == '/')
		return -1;
	rc |= put(out, sz, &off, buf, hp->hp_method_len);
	rc |= puts0(out, sz, &off, " ");
	rc |= puts0(out, sz, &off, ro->ro_base);
	if (tl == 0 || t[0] == '?')
		rc |= puts0(out, sz, &off, ro->ro_base[0] ? "" : "/");
	rc |= put(out, sz, &off, t, tl);
	rc |= puts0(out, sz, &off, " HTTP/1.1\r\nHost: ");
	rc |= puts0(out, sz, &off, ro->ro_ip == 6 ? "[" : "");
	rc |= puts0(out, sz, &off, ro->ro_host);
	rc |= puts0(out, sz, &off, ro->ro_ip == 6 ? "]" : "");
	if (ro->ro_port != 443) {
		snprintf(port, sizeof(port), ":%u", ro->ro_port);
		rc |= puts0(out, sz, &off, port);
	}
	rc |= puts0(out, sz, &off, "\r\n");
	for (i = 0; i < hp->hp_nheaders; i++) {
		if (header_dropped(buf + hp->hp_hoff[i], hp->hp_hlen[i]))
			continue;
		rc |= put(out, sz, &off, buf + hp->hp_hoff[i], hp->hp_hlen[i]);
		rc |= puts0(out, sz, &off, "\r\n");
	}
	switch (ro->ro_auth) {
	case EGA_BEARER:
		rc |= puts0(out, sz, &off, "Authorization: Bearer ");
		break;
	case EGA_X_GOOG_API_KEY:
		rc |= puts0(out, sz, &off, "x-goog-api-key: ");
		break;
	default:
		rc |= puts0(out, sz, &off, "x-api-key: ");
		break;
	}
	rc |= puts0(out, sz, &off, key);
	rc |= puts0(out, sz, &off, "\r\nConnection: close\r\n\r\n");
	if (rc != 0) {
		explicit_bzero(out, sz); /* no half head with a key in it */
		return -1;
	}
	return (int)off;
}

/* ---- the manifest's egress.routes ---- */

static const char *const route_keys[] = {
    "upstream", "secret", "auth", "baseUrlEnv", NULL};

static int
env_declared(const struct manifest *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->m_nenv; i++)
		if (strcmp(m->m_env[i].e_name, name) == 0)
			return 1;
	return 0;
}

/* The route's upstream host must be one the allowlist reaches. */
static int
upstream_listed(const struct mf_egress *e, const struct egress_route *ro)
{
	enum egress_reason why;

	return egress_match(e->eg_allow, e->eg_nallow, ro->ro_host, ro->ro_ip,
		   ro->ro_addr, ro->ro_port, &why) >= 0;
}

static void
route_one(struct schema *p, struct manifest *m, const char *name,
    struct json_object *v, struct json_object *parent)
{
	struct mf_egress *e = &m->m_egress;
	struct mf_route *mr = &e->eg_routes[e->eg_nroutes];
	struct json_object *f;
	char path[96], key[128];
	const char *s;
	size_t len;
	int bad = 0;

	snprintf(path, sizeof(path), "egress.routes.%s", name);
	if (!schema_is(v, json_type_object)) {
		schema_err(p, v, parent, path, "must be a mapping");
		return;
	}
	schema_keys(p, v, path, route_keys);
	memcpy(mr->mr_route.ro_name, name, strlen(name) + 1);
	snprintf(key, sizeof(key), "%s.upstream", path);
	if (schema_key(p, v, "upstream", key, 1, &f) &&
	    (s = schema_string(p, f, v, key, &len)) != NULL) {
		if (egress_upstream_parse(s, len, &mr->mr_route) == -1) {
			schema_err(
			    p, f, v, key, "must be https://host[:port][/path]");
			bad = 1;
		} else if (e->eg_allow != NULL &&
			   !upstream_listed(e, &mr->mr_route)) {
			schema_err(p, f, v, key,
			    "its host and port must be on egress.allow");
			bad = 1;
		}
	} else
		bad = 1;
	snprintf(key, sizeof(key), "%s.auth", path);
	if (schema_key(p, v, "auth", key, 1, &f) &&
	    (s = schema_string(p, f, v, key, &len)) != NULL) {
		if (egress_auth_parse(s, len, &mr->mr_route.ro_auth) == -1) {
			schema_err(p, f, v, key,
			    "must be x-api-key, bearer or x-goog-api-key");
			bad = 1;
		}
	} else
		bad = 1;
	snprintf(key, sizeof(key), "%s.secret", path);
	if (schema_key(p, v, "secret", key, 1, &f) &&
	    (s = schema_string(p, f, v, key, &len)) != NULL) {
		if (!manifest_secret_declared(m, s)) {
			schema_err(
			    p, f, v, key, "must name an entry of secrets:");
			bad = 1;
		} else if ((mr->mr_secret = schema_dup(p, s)) == NULL)
			bad = 1;
	} else
		bad = 1;
	snprintf(key, sizeof(key), "%s.baseUrlEnv", path);
	if (schema_get(v, "baseUrlEnv", &f) &&
	    (s = schema_string(p, f, v, key, &len)) != NULL) {
		if (!env_name_ok(s) || env_secretish(s) ||
		    manifest_secret_declared(m, s) || env_declared(m, s)) {
			schema_err(p, f, v, key,
			    "must be an environment name of its own (not "
			    "under transportConfig.env or secrets)");
			bad = 1;
		} else if ((mr->mr_base_env = schema_dup(p, s)) == NULL)
			bad = 1;
	}
	if (bad) {
		free(mr->mr_secret);
		free(mr->mr_base_env);
		memset(mr, 0, sizeof(*mr));
		return;
	}
	e->eg_nroutes++;
}

void
mf_egress_routes(struct schema *p, struct manifest *m, struct json_object *eg)
{
	struct mf_egress *e = &m->m_egress;
	struct json_object *v;
	size_t n;

	if (!schema_get(eg, "routes", &v))
		return;
	if (!schema_is(v, json_type_object) ||
	    (n = (size_t)json_object_object_length(v)) == 0 ||
	    n > EGRESS_ROUTES_MAX) {
		schema_err(p, v, eg, "egress.routes",
		    "must be a mapping of 1 to 4 routes");
		return;
	}
	if ((e->eg_routes = calloc(n, sizeof(*e->eg_routes))) == NULL) {
		p->oom = 1;
		return;
	}
	json_object_object_foreach (v, k, rv) {
		if (!mp_name_ok(k, EGRESS_ROUTE_NAME_MAX)) {
			schema_err(p, rv, v, "egress.routes",
			    "route names are ^[a-z0-9][a-z0-9-]{0,31}$");
			continue;
		}
		route_one(p, m, k, rv, v);
	}
}

struct json_object *
mf_egress_routes_json(const struct mf_egress *e)
{
	struct json_object *a = json_object_new_array(), *o;
	char up[EGRESS_HOST_MAX + EGRESS_BASE_MAX + 32];
	size_t i;

	for (i = 0; i < e->eg_nroutes; i++) {
		const struct mf_route *mr = &e->eg_routes[i];

		if (egress_upstream_format(&mr->mr_route, up, sizeof(up)) == -1)
			continue;
		o = json_object_new_object();
		json_object_object_add(
		    o, "name", json_object_new_string(mr->mr_route.ro_name));
		json_object_object_add(
		    o, "upstream", json_object_new_string(up));
		json_object_object_add(o, "auth",
		    json_object_new_string(
			egress_auth_name(mr->mr_route.ro_auth)));
		if (mr->mr_base_env != NULL)
			json_object_object_add(o, "baseUrlEnv",
			    json_object_new_string(mr->mr_base_env));
		json_object_array_add(a, o);
	}
	return a;
}
