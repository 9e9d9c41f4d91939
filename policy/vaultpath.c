/*
 * Pure vault path rules for vaultd (VA-2, VA-3, VA-5): URL decoding once,
 * lexical checks, hint and chat note naming.  Touches nothing but its
 * arguments; anything unexpected is refused.
 */
#include <stdio.h>
#include <string.h>

#include "charset.h"
#include "text.h"
#include "util.h"
#include "vaultpath.h"

/* Folders never read or listed (VA-2); dot-folders are refused anyway. */
static const char *const vaultpath_skip[] = {
    ".obsidian",
    ".trash",
    ".git",
    "node_modules",
    "60_Attachments",
};

long
vaultpath_decode(const char *in, size_t inlen, char *out, size_t outsz)
{
	size_t i, o = 0;
	int hi, lo, c;

	if (in == NULL || out == NULL || outsz == 0)
		return -1;
	for (i = 0; i < inlen; i++) {
		c = (unsigned char)in[i];
		if (c == '%') {
			if (inlen - i < 3 ||
			    (hi = hex_digit((unsigned char)in[i + 1])) == -1 ||
			    (lo = hex_digit((unsigned char)in[i + 2])) == -1)
				return -1;
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == '\0' || o + 1 >= outsz)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return (long)o;
}

/* A read/list segment: see vaultpath_read_ok. */
static int
read_seg_ok(const char *s, size_t len)
{
	size_t i;
	int c;

	if (len == 0 || len > VAULT_SEG_MAX || s[0] == '.')
		return 0;
	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f || c == '\\')
			return 0;
	}
	for (i = 0; i < sizeof(vaultpath_skip) / sizeof(vaultpath_skip[0]); i++)
		if (text_span_ci_eq(s, len, vaultpath_skip[i]))
			return 0;
	return 1;
}

/* Every '/'-separated segment of path passes read_seg_ok. */
static int
read_segs_ok(const char *path, size_t len)
{
	size_t start = 0, i;

	if (len == 0 || len > VAULT_PATH_MAX || path[0] == '/')
		return 0;
	for (i = 0; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		if (!read_seg_ok(path + start, i - start))
			return 0;
		start = i + 1;
	}
	return 1;
}

static int
ends_md(const char *s, size_t len)
{
	return len >= 3 && memcmp(s + len - 3, ".md", 3) == 0;
}

int
vaultpath_read_ok(const char *path, size_t len)
{
	if (path == NULL || !read_segs_ok(path, len))
		return 0;
	/* "x/.md" cannot happen: a segment never starts with '.'. */
	return ends_md(path, len);
}

int
vaultpath_dir_ok(const char *path, size_t len)
{
	if (path == NULL)
		return 0;
	if (len == 0)
		return 1;
	return read_segs_ok(path, len);
}

/* A write segment (VA-3): [A-Za-z0-9._-]{1,max}, no leading dot. */
static int
write_seg_ok(const char *s, size_t len, size_t max)
{
	return len > 0 && s[0] != '.' &&
	       charset_shape(s, len, "A-Za-z0-9._-", "A-Za-z0-9._-", 1, max);
}

int
vaultpath_hint_name(const char *hint, size_t len, char *out, size_t outsz)
{
	if (hint == NULL || out == NULL || outsz < VAULT_HINT_MAX + 4 ||
	    !write_seg_ok(hint, len, VAULT_HINT_MAX))
		return -1;
	memcpy(out, hint, len);
	if (ends_md(hint, len))
		out[len] = '\0';
	else
		memcpy(out + len, ".md", 4);
	return 0;
}

int
vaultpath_name_ok(const char *name, size_t len)
{
	return name != NULL &&
	       charset_shape(name, len, "a-z0-9", "a-z0-9-", 1, VAULT_NAME_MAX);
}

int
vaultpath_mission_folder_ok(const char *id, const char *folder, size_t len)
{
	static const char root[] = VAULT_MISSIONS "/";
	size_t rlen = sizeof(root) - 1, idlen, i, start, depth = 0;

	if (id == NULL || folder == NULL ||
	    !vaultpath_name_ok(id, (idlen = strlen(id))))
		return 0;
	/* One trailing '/' is allowed, and only one. */
	if (len > 0 && folder[len - 1] == '/')
		len--;
	/* Segment-boundary match: "missions/<id>X" is not beneath <id>. */
	if (len < rlen + idlen || memcmp(folder, root, rlen) != 0 ||
	    memcmp(folder + rlen, id, idlen) != 0)
		return 0;
	i = rlen + idlen;
	if (i == len)
		return 1;
	if (folder[i] != '/' || len > VAULT_PATH_MAX / 2)
		return 0;
	start = ++i;
	for (; i <= len; i++) {
		if (i < len && folder[i] != '/')
			continue;
		if (!write_seg_ok(folder + start, i - start, VAULT_SEG_MAX) ||
		    ++depth > VAULT_FOLDER_DEPTH)
			return 0;
		start = i + 1;
	}
	return 1;
}

/* Days since 1970-01-01 to a civil date (H. Hinnant's algorithm). */
static void
civil_from_days(long long z, int *y, int *m, int *d)
{
	long long era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

int
vaultpath_utc(long long ms, struct vault_utc *u)
{
	long long secs, days, rem;

	if (u == NULL || ms < 0 || ms > VAULT_TIME_MAX)
		return -1;
	secs = ms / 1000;
	days = secs / 86400;
	rem = secs % 86400;
	civil_from_days(days, &u->vu_year, &u->vu_mon, &u->vu_day);
	u->vu_hour = (int)(rem / 3600);
	u->vu_min = (int)(rem % 3600 / 60);
	u->vu_sec = (int)(rem % 60);
	u->vu_ms = (int)(ms % 1000);
	return 0;
}

int
vaultpath_chat_name(char *out, size_t outsz, long long ms, const char *agent,
    const char *sha8, unsigned n)
{
	struct vault_utc u;
	char suffix[8] = "";
	int r;

	if (out == NULL || outsz < VAULT_CHAT_NAME_MAX || agent == NULL ||
	    sha8 == NULL || !vaultpath_name_ok(agent, strlen(agent)) ||
	    !hex_lower_n(sha8, 8) || n < 1 || n > VAULT_COLLISIONS ||
	    vaultpath_utc(ms, &u) == -1)
		return -1;
	if (n > 1)
		snprintf(suffix, sizeof(suffix), "-%02u", n);
	r = snprintf(out, outsz, "%04d-%02d-%02d-%02d%02d-%s-%s%s.md",
	    u.vu_year, u.vu_mon, u.vu_day, u.vu_hour, u.vu_min, agent, sha8,
	    suffix);
	if (r < 0 || (size_t)r >= outsz)
		return -1;
	return 0;
}
