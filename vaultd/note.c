/*
 * Note bodies (VA-5): the chat note's frontmatter, title, prompt and
 * response sections, and mission note content, all with control
 * characters removed.  Pure formatting into memory it allocates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vaultd.h"
#include "vaultpath.h"

#define NOTE_TITLE_CHARS 60
#define NOTE_HEAD_MAX	 512 /* frontmatter + headings, without title */

/*
 * Copy valid UTF-8 without control characters: C0 but \n and \t, DEL and
 * C1 (U+0080..U+009F).  The sender already cleaned agent output (SP-10,
 * common/sanitize.c, which also clamps long lines); a note keeps whole
 * lines, so only this last filter runs here.  Returns bytes written.
 */
static size_t
note_filter(char *dst, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		if (s[i] < 0x20 && s[i] != '\n' && s[i] != '\t')
			continue;
		if (s[i] == 0x7f)
			continue;
		if (s[i] == 0xc2 && i + 1 < len && s[i + 1] >= 0x80 &&
		    s[i + 1] <= 0x9f) {
			i++;
			continue;
		}
		dst[o++] = (char)s[i];
	}
	return o;
}

/* First NOTE_TITLE_CHARS code points of filtered text, on one line. */
static size_t
note_title(char *dst, const char *src, size_t len)
{
	size_t i, o = 0, chars = 0;

	while (len > 0 && (*src == ' ' || *src == '\n' || *src == '\t')) {
		src++;
		len--;
	}
	for (i = 0; i < len; i++) {
		if (((unsigned char)src[i] & 0xc0) != 0x80 &&
		    ++chars > NOTE_TITLE_CHARS)
			break;
		dst[o++] = (src[i] == '\n' || src[i] == '\t') ? ' ' : src[i];
	}
	while (o > 0 && dst[o - 1] == ' ')
		o--;
	if (o == 0) {
		memcpy(dst, "chat", 4);
		o = 4;
	}
	return o;
}

int
vault_note_chat(const char *agent, const char *prompt, size_t plen,
    const char *response, size_t rlen, long long time_ms, char **out,
    size_t *outlen)
{
	struct vault_utc u;
	char *buf, *p, *title;
	size_t cap, n, pl;
	int r;

	*out = NULL;
	if (vaultpath_utc(time_ms, &u) == -1)
		return -1;
	cap = 2 * NOTE_HEAD_MAX + 4 * NOTE_TITLE_CHARS + plen + rlen;
	if ((buf = malloc(cap)) == NULL)
		return -1;
	r = snprintf(buf, NOTE_HEAD_MAX,
	    "---\ntype: chat\nstatus: draft\nsource: cordon\nagent: \"%s\"\n"
	    "created: %04d-%02d-%02dT%02d:%02d:%02d.%03dZ\n---\n\n# ",
	    agent, u.vu_year, u.vu_mon, u.vu_day, u.vu_hour, u.vu_min, u.vu_sec,
	    u.vu_ms);
	if (r < 0 || r >= NOTE_HEAD_MAX - 64) {
		free(buf);
		return -1;
	}
	p = buf + r;
	/* The prompt goes in filtered first; the title is cut from it. */
	title = p;
	p += 4 * NOTE_TITLE_CHARS + 16; /* room for the title, moved later */
	memcpy(p, "\n\n## prompt\n\n", 13);
	p += 13;
	pl = note_filter(p, prompt, plen);
	n = note_title(title, p, pl);
	p += pl;
	memcpy(p, "\n\n## response\n\n", 15);
	p += 15;
	p += note_filter(p, response, rlen);
	if (p[-1] != '\n')
		*p++ = '\n';
	/* Close the gap left after the title. */
	memmove(title + n, title + 4 * NOTE_TITLE_CHARS + 16,
	    (size_t)(p - (title + 4 * NOTE_TITLE_CHARS + 16)));
	p -= 4 * NOTE_TITLE_CHARS + 16 - n;
	*out = buf;
	*outlen = (size_t)(p - buf);
	return 0;
}

int
vault_note_mission(const char *content, size_t len, char **out, size_t *outlen)
{
	char *buf;
	size_t n;

	if ((buf = malloc(len + 1)) == NULL)
		return -1;
	n = note_filter(buf, content, len);
	if (n == 0 || buf[n - 1] != '\n')
		buf[n++] = '\n';
	*out = buf;
	*outlen = n;
	return 0;
}
