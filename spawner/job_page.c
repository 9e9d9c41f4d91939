/*
 * Detached jobs (MC-3): one page of a job's events file, the JSONL lines
 * from a line number on.  Only the page is read: from a cursor (where
 * the previous page ended) when the wanted line is at or past it, else
 * after counting newlines from the top a block at a time, so a client
 * reading on in order never makes the spawner's loop read the whole
 * file for each page.  Reads the fd it is given, nothing else.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "json.h"
#include "spawner.h"

/* Where line off starts, counted on from the cursor or the top; -1:
 * the file ends first. */
static int
page_seek(int fd, const struct job_cursor *cur, uint64_t off, uint64_t *pos)
{
	char blk[16384];
	uint64_t line = 0, at = 0;
	const char *p, *nl, *end;
	ssize_t n;

	if (off >= cur->jc_line) {
		line = cur->jc_line;
		at = cur->jc_pos;
	}
	*pos = at;
	while (line < off) {
		if ((n = pread(fd, blk, sizeof(blk), (off_t)at)) <= 0)
			return -1;
		end = blk + n;
		for (p = blk; line < off &&
			      (nl = memchr(p, '\n', (size_t)(end - p))) != NULL;
		     p = nl + 1)
			line++, *pos = at + (uint64_t)(nl + 1 - blk);
		at += (uint64_t)n;
	}
	return 0;
}

uint64_t
job_page(int fd, uint64_t size, struct job_cursor *cur, uint64_t off,
    uint64_t lim, size_t page, struct json_object *arr)
{
	struct json_object *ev;
	const char *p, *nl, *end;
	uint64_t taken = 0, pos;
	char *buf = NULL;
	ssize_t n = 0;
	size_t want;

	if (page_seek(fd, cur, off, &pos) == -1 || pos >= size)
		return 0;
	want = size - pos < page ? (size_t)(size - pos) : page;
	/* A first line longer than a page is read whole. */
	if ((buf = malloc(want)) != NULL &&
	    (n = pread(fd, buf, want, (off_t)pos)) > 0 && (size_t)n == page &&
	    memchr(buf, '\n', (size_t)n) == NULL) {
		free(buf);
		want = (size_t)(size - pos);
		if ((buf = malloc(want)) != NULL)
			n = pread(fd, buf, want, (off_t)pos);
	}
	end = buf != NULL && n > 0 ? buf + n : buf;
	for (p = buf; p < end && taken < lim; p = nl + 1) {
		/* Past the page, or a line still being written. */
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			break;
		taken++;
		if ((ev = json_parse_object(
			 p, (size_t)(nl - p), JSON_MAX_DEPTH)) != NULL)
			json_object_array_add(arr, ev);
	}
	if (taken > 0) {
		cur->jc_line = off + taken;
		cur->jc_pos = pos + (uint64_t)(p - buf);
	}
	free(buf);
	return taken;
}
