/*
 * SBX-2: what an agent never reaches.  The lists are DATA.md's, kept here
 * as tables; the tests are lexical on paths the caller has resolved.
 */
#include <string.h>

#include "protect.h"
#include "text.h"
#include "util.h"

/* Credentials and tool configs, relative to the operator's home. */
static const char *const protect_home[] = {
    ".ssh",
    ".gnupg",
    ".gpg",
    ".aws",
    ".azure",
    ".gcloud",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".config/gh",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".password-store",
    ".terraform",
    ".cargo/credentials",
    ".cargo/credentials.toml",
};

/* Shell start-up files: never writable, so never reachable at all. */
static const char *const protect_startup[] = {
    ".profile",
    ".bash_profile",
    ".bash_login",
    ".bashrc",
    ".zprofile",
    ".zshenv",
    ".zshrc",
    ".config/fish/config.fish",
};

/* Where each entry leads may be protected too (struct protect_ctx). */
_Static_assert(
    nitems(protect_home) + nitems(protect_startup) <= PROTECT_LINKS_MAX,
    "PROTECT_LINKS_MAX holds a link for every entry");

/* Secret-looking file names: prefix, suffix or infix, ignoring case. */
enum pn_how { PN_PREFIX, PN_SUFFIX, PN_INFIX, PN_EXACT };
static const struct protect_name {
	const char *pn_text;
	enum pn_how pn_how;
} protect_names[] = {
    {".env", PN_PREFIX},
    {".pem", PN_SUFFIX},
    {".key", PN_SUFFIX},
    {"id_rsa", PN_PREFIX},
    {"id_ed25519", PN_PREFIX},
    {"id_ecdsa", PN_PREFIX},
    {"id_dsa", PN_PREFIX},
    {"private_key", PN_EXACT},
    {".secret", PN_PREFIX},
    {"secret", PN_INFIX},
    {"credentials", PN_INFIX},
};

const char *const *
protect_home_list(size_t *n)
{
	*n = nitems(protect_home);
	return protect_home;
}

const char *const *
protect_startup_list(size_t *n)
{
	*n = nitems(protect_startup);
	return protect_startup;
}

static int
ci_infix(const char *s, size_t len, const char *lit)
{
	size_t ll = strlen(lit), i;

	for (i = 0; i + ll <= len; i++)
		if (text_span_ci_eq(s + i, ll, lit))
			return 1;
	return 0;
}

/* One component [s, s + len). */
static int
name_secret(const char *s, size_t len)
{
	const struct protect_name *pn;
	size_t i, ll;

	for (i = 0; i < nitems(protect_names); i++) {
		pn = &protect_names[i];
		ll = strlen(pn->pn_text);
		switch (pn->pn_how) {
		case PN_PREFIX:
			if (len >= ll && text_span_ci_eq(s, ll, pn->pn_text))
				return 1;
			break;
		case PN_SUFFIX:
			if (len >= ll &&
			    text_span_ci_eq(s + len - ll, ll, pn->pn_text))
				return 1;
			break;
		case PN_INFIX:
			if (ci_infix(s, len, pn->pn_text))
				return 1;
			break;
		case PN_EXACT:
			if (len == ll && text_span_ci_eq(s, ll, pn->pn_text))
				return 1;
			break;
		}
	}
	return 0;
}

int
protect_name_secret(const char *name)
{
	if (name == NULL || name[0] == '\0')
		return 0;
	return name_secret(name, strlen(name));
}

/* path is base, or lies beneath it.  Both absolute, no trailing '/'. */
static int
is_under(const char *path, const char *base)
{
	size_t bl = strlen(base);

	if (bl == 1 && base[0] == '/')
		return 1;
	return strncmp(path, base, bl) == 0 &&
	       (path[bl] == '\0' || path[bl] == '/');
}

int
protect_is_under(const char *path, const char *base)
{
	return path != NULL && base != NULL && path[0] == '/' &&
	       base[0] == '/' && is_under(path, base);
}

/* home + "/" + rel into buf; 0, or -1 when it does not fit. */
static int
home_join(const char *home, const char *rel, char *buf, size_t bufsz)
{
	size_t hl = strlen(home), rl = strlen(rel);

	if (hl == 1)
		hl = 0; /* home "/" (odd, but then "/.ssh") */
	if (hl + 1 + rl + 1 > bufsz)
		return -1;
	memcpy(buf, home, hl);
	buf[hl] = '/';
	memcpy(buf + hl + 1, rel, rl + 1);
	return 0;
}

static int
abs_ok(const char *p)
{
	size_t len;

	if (p == NULL || p[0] != '/')
		return 0;
	len = strlen(p);
	return len == 1 || p[len - 1] != '/';
}

int
protect_path_hit(const struct protect_ctx *pc, const char *path)
{
	char buf[PROTECT_PATH_MAX];
	const char *s, *e;
	size_t i;

	if (!abs_ok(path))
		return 1; /* fail closed */
	if (pc->pc_home != NULL && abs_ok(pc->pc_home)) {
		for (i = 0; i < nitems(protect_home); i++)
			if (home_join(pc->pc_home, protect_home[i], buf,
				sizeof(buf)) == -1 ||
			    is_under(path, buf))
				return 1;
		for (i = 0; i < nitems(protect_startup); i++)
			if (home_join(pc->pc_home, protect_startup[i], buf,
				sizeof(buf)) == -1 ||
			    is_under(path, buf))
				return 1;
	}
	for (i = 0; i < pc->pc_nextra && i < PROTECT_EXTRA_MAX; i++)
		if (abs_ok(pc->pc_extra[i]) && is_under(path, pc->pc_extra[i]))
			return 1;
	for (i = 0; i < pc->pc_nlinks && i < PROTECT_LINKS_MAX; i++)
		if (abs_ok(pc->pc_links[i]) && is_under(path, pc->pc_links[i]))
			return 1;
	for (s = path + 1; *s != '\0'; s = *e ? e + 1 : e) {
		if ((e = strchr(s, '/')) == NULL)
			e = s + strlen(s);
		if (name_secret(s, (size_t)(e - s)))
			return 1;
	}
	return 0;
}

/* How root relates to the protected path p, or NULL if it does not. */
static const char *
relation(const char *root, const char *p)
{
	if (strcmp(root, p) == 0)
		return "is a protected path";
	if (is_under(root, p))
		return "is inside a protected path";
	if (is_under(p, root))
		return "contains a protected path";
	return NULL;
}

const char *
protect_root_conflict(const struct protect_ctx *pc, const char *root)
{
	const char *const *lists[2] = {protect_home, protect_startup};
	size_t nlist[2] = {nitems(protect_home), nitems(protect_startup)};
	char buf[PROTECT_PATH_MAX];
	const char *why;
	size_t i, l;

	if (!abs_ok(root))
		return "must be an absolute path";
	if (strcmp(root, "/") == 0)
		return "is /";
	if (pc->pc_home != NULL && abs_ok(pc->pc_home) &&
	    strcmp(root, pc->pc_home) == 0)
		return "is the home directory";
	for (i = 0; i < pc->pc_nextra && i < PROTECT_EXTRA_MAX; i++)
		if (abs_ok(pc->pc_extra[i]) &&
		    (why = relation(root, pc->pc_extra[i])) != NULL)
			return why;
	for (i = 0; i < pc->pc_nlinks && i < PROTECT_LINKS_MAX; i++)
		if (abs_ok(pc->pc_links[i]) &&
		    (why = relation(root, pc->pc_links[i])) != NULL)
			return why;
	if (pc->pc_runs != NULL && abs_ok(pc->pc_runs) &&
	    (why = relation(root, pc->pc_runs)) != NULL)
		return why;
	if (pc->pc_home == NULL || !abs_ok(pc->pc_home))
		return NULL;
	for (l = 0; l < 2; l++)
		for (i = 0; i < nlist[l]; i++) {
			if (home_join(pc->pc_home, lists[l][i], buf,
				sizeof(buf)) == -1)
				return "is too long";
			if ((why = relation(root, buf)) != NULL)
				return why;
		}
	return NULL;
}
