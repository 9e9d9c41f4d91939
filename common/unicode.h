/*
 * The code points that are invisible or reorder text (SBX-7, SP-10,
 * VA-5), defined once for the cleaner, the gate and the note renderer,
 * and a strict UTF-8 decoder to find them.  Pure: no I/O, no allocation.
 */
#ifndef CORDON_UNICODE_H
#define CORDON_UNICODE_H

#include <stddef.h>
#include <stdint.h>

enum uni_class {
	UNI_PLAIN = 0,
	/* Invisible or reordering: bidi controls, zero-width and other
	 * format characters, fillers, variation selectors, tags, line and
	 * paragraph separators.  Shown as <U+XXXX> wherever text is shown;
	 * refused in a gated command. */
	UNI_HIDDEN,
	/* Whitespace other than ASCII space and tab (NBSP, en space, ...):
	 * looks like a word break the shell does not make.  Shown as is
	 * in text; refused in a gated command. */
	UNI_SPACE,
};

enum uni_class uni_class(uint32_t cp);

#define UNI_MARK_MAX 10 /* "<U+10FFFF>" */
/* "<U+XXXX>" (4 to 6 upper-case hex digits) into m; returns its length. */
size_t uni_mark(uint32_t cp, char m[UNI_MARK_MAX]);

/*
 * Decode one code point of s[*i..len) (RFC 3629: no overlongs, surrogates
 * or values above U+10FFFF) into *cp and advance *i.  On invalid or
 * truncated input *cp = U+FFFD, *i advances one byte, returns -1.
 */
int uni_utf8_next(const char *s, size_t len, size_t *i, uint32_t *cp);

/* Code points in a valid UTF-8 span (the bytes that are not continuations). */
size_t uni_utf8_chars(const char *s, size_t len);

/*
 * s holds what the gate refuses in a command (SBX-7): a UNI_HIDDEN or
 * UNI_SPACE code point, a control character but tab and newline (the
 * cleaner would drop it from what the operator sees), or invalid UTF-8.
 */
int uni_gate_refused(const char *s, size_t len);

#endif
