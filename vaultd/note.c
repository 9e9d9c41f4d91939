/*
 * Note bodies (VA-5): the chat note's frontmatter, title, prompt and
 * response sections, and mission note content.  The structure is
 * cordon's; every character of the prompt and of agent text goes through
 * policy/notemd.c, which makes it literal text.  Pure formatting into
 * memory it allocates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notemd.h"
#include "vaultd.h"
#include "vaultpath.h"

#define NOTE_HEAD_MAX 512 /* frontmatter + headings, without title */

int
vault_note_chat(const char *agent, const char *prompt, size_t plen,
    const char *response, size_t rlen, long long time_ms, char **out,
    size_t *outlen)
{
	struct vault_utc u;
	char *buf, *p;
	size_t cap;
	int r;

	*out = NULL;
	if (vaultpath_utc(time_ms, &u) == -1)
		return -1;
	cap = 2 * NOTE_HEAD_MAX + NOTEMD_TITLE_MAX + notemd_max(plen) +
	      notemd_max(rlen);
	if ((buf = malloc(cap)) == NULL)
		return -1;
	/* The agent name is vaultpath_name_ok: nothing to quote in it. */
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
	p += notemd_title(p, prompt, plen);
	memcpy(p, "\n\n## prompt\n\n", 13);
	p += 13;
	p += notemd_text(p, prompt, plen);
	memcpy(p, "\n\n## response\n\n", 15);
	p += 15;
	p += notemd_text(p, response, rlen);
	if (p[-1] != '\n')
		*p++ = '\n';
	*out = buf;
	*outlen = (size_t)(p - buf);
	return 0;
}

int
vault_note_mission(const char *content, size_t len, char **out, size_t *outlen)
{
	char *buf;
	size_t n;

	if ((buf = malloc(notemd_max(len) + 1)) == NULL)
		return -1;
	n = notemd_text(buf, content, len);
	if (n == 0 || buf[n - 1] != '\n')
		buf[n++] = '\n';
	*out = buf;
	*outlen = n;
	return 0;
}
