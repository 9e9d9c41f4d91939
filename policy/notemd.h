/*
 * VA-5: prompt and agent text as literal Markdown for a vault note.  What
 * comes out is read by CommonMark, Obsidian and its common plugins
 * (Dataview, Templater) as plain text and line breaks, nothing else.
 * Pure: writes only into the caller's buffer.
 */
#ifndef CORDON_POLICY_NOTEMD_H
#define CORDON_POLICY_NOTEMD_H

#include <stddef.h>

#define NOTEMD_TITLE_CHARS 60 /* code points of a title before "…" */
/* Bytes of a rendered title at most (a code point grows to 13 at most). */
#define NOTEMD_TITLE_MAX (13 * (NOTEMD_TITLE_CHARS + 1) + 8)

/* Bytes notemd_text or notemd_line may write for len bytes of input. */
size_t notemd_max(size_t len);

/*
 * Render src as paragraphs of literal text into dst (notemd_max(len)
 * bytes): every ASCII punctuation character is backslash-escaped (so no
 * HTML, link, image, autolink, emphasis, heading, list, quote, table,
 * code, entity, math, wikilink, embed, comment, tag, template or inline
 * field can start), a line's leading blank becomes a character reference
 * (no indented code block, indentation kept), lines end in a hard break,
 * blank lines separate paragraphs; invisible and reordering code points
 * become a visible "<U+XXXX>", control characters but tab and newline are
 * dropped, invalid UTF-8 becomes U+FFFD.  No newline at either end.
 * Returns the bytes written.
 */
size_t notemd_text(char *dst, const char *src, size_t len);

/*
 * The note's title from the prompt, on one line, into dst
 * (NOTEMD_TITLE_MAX bytes): blanks collapsed, the first
 * NOTEMD_TITLE_CHARS code points, cut at a word boundary with "…" when
 * the prompt is longer, "chat" when empty; escaped as notemd_text does.
 * Returns the bytes written.
 */
size_t notemd_title(char *dst, const char *src, size_t len);

#endif
