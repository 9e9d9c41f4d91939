# VA-1 ... VA-5 and API-6: every path trick against the vault over HTTP
# (encoded `..`, `%2f`, double encoding, NUL, backslash, absolute paths,
# dot-folders, overlongs, symlinks, a FIFO and a folder dressed as notes),
# and hostile prompts against the chat note's name and body.  Invariants
# after every row (conftest.py): the vault outside the inbox, the files
# beside it and the operator's HOME are byte-for-byte unchanged.
import os
import re

import pytest

import note_md as nm
from agents_util import run, text_of


@pytest.fixture(scope="module", autouse=True)
def planted(world):
    v = world.vault
    files = {
        "Welcome.md": "# hi\n", "10_Projects/cordon.md": "project\n",
        "notes.txt": "text\n", ".obsidian/x.md": "conf\n",
        ".trash/t.md": "trash\n", ".git/config.md": "git\n",
        "10_Projects/.git/x.md": "nested git\n",
        "60_Attachments/z.md": "att\n", "node_modules/m.md": "mod\n",
        ".hidden.md": "hidden\n", "Upper.MD": "upper\n",
        "big.md": "x" * (4 * 1024 * 1024 + 1),
        "dir.md/inner.md": "inner\n",
    }
    for rel, text in files.items():
        p = os.path.join(v, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    (world.outside / "secret.md").write_text("outside secret\n")
    os.symlink(world.outside / "secret.md", os.path.join(v, "link.md"))
    os.symlink(world.outside, os.path.join(v, "linkdir"))
    os.symlink("Welcome.md", os.path.join(v, "inner-link.md"))
    os.symlink("10_Projects", os.path.join(v, "projlink"))
    os.symlink("loop.md", os.path.join(v, "loop.md"))
    os.symlink("/etc/passwd", os.path.join(v, "passwd.md"))
    os.symlink(world.op / ".ssh" / "id_rsa", os.path.join(v, "key.md"))
    os.mkfifo(os.path.join(v, "fifo.md"))


def err(code):
    return {"ok": False, "error": code}


READS = [
    # (id, raw query value, status, code)
    ("dotdot", "../../etc/passwd", 400, "invalid-path"),
    ("dotdot-md", "../x.md", 400, "invalid-path"),
    ("enc-dotdot", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", 400, "invalid-path"),
    ("enc-dotdot-upper", "%2E%2E/x.md", 400, "invalid-path"),
    ("half-enc", "..%2fx.md", 400, "invalid-path"),
    ("enc-backslash-dotdot", "..%5cx.md", 400, "invalid-path"),
    ("mid-dotdot", "10_Projects/../Welcome.md", 400, "invalid-path"),
    ("enc-mid-dotdot", "10_Projects%2f..%2fWelcome.md", 400,
     "invalid-path"),
    ("double-enc", "%252e%252e%252fx.md", 404, "not-found"),
    ("triple-enc", "%25252e%25252e%25252fx.md", 404, "not-found"),
    ("double-enc-slash", "10_Projects%252fcordon.md", 404, "not-found"),
    ("absolute", "/etc/passwd", 400, "invalid-path"),
    ("enc-absolute", "%2fetc%2fpasswd.md", 400, "invalid-path"),
    ("double-slash-abs", "//etc/passwd.md", 400, "invalid-path"),
    ("nul", "x.md%00.txt", 400, "invalid-path"),
    ("nul-only", "%00", 400, "invalid-path"),
    ("enc-backslash", "a%5cb.md", 400, "invalid-path"),
    ("win-drive", "C:%5cx.md", 400, "invalid-path"),
    ("dot-obsidian", ".obsidian/x.md", 400, "invalid-path"),
    ("dot-trash", ".trash/t.md", 400, "invalid-path"),
    ("dot-git", ".git/config.md", 400, "invalid-path"),
    ("nested-git", "10_Projects/.git/x.md", 400, "invalid-path"),
    ("attachments", "60_Attachments/z.md", 400, "invalid-path"),
    ("node-modules", "node_modules/m.md", 400, "invalid-path"),
    ("enc-dot-git", "%2egit/config.md", 400, "invalid-path"),
    ("hidden-note", ".hidden.md", 400, "invalid-path"),
    ("not-md", "notes.txt", 400, "invalid-path"),
    ("upper-ext", "Upper.MD", 400, "invalid-path"),
    ("trailing-slash", "Welcome.md/", 400, "invalid-path"),
    ("dot-segment", "./Welcome.md", 400, "invalid-path"),
    ("mid-dot-segment", "10_Projects/./cordon.md", 400, "invalid-path"),
    ("double-slash", "10_Projects//cordon.md", 400, "invalid-path"),
    ("overlong-dots", "%c0%ae%c0%ae/x.md", 400, "invalid-path"),
    ("overlong-slash", "a%c0%afb.md", 400, "invalid-path"),
    ("bad-utf8", "%ff.md", 400, "invalid-path"),
    ("newline", "a%0ab.md", 400, "invalid-path"),
    ("carriage", "a%0db.md", 400, "invalid-path"),
    ("bad-pct", "%ZZ.md", 400, "invalid-path"),
    ("short-pct", "a%2", 400, "invalid-path"),
    ("lone-pct", "%", 400, "invalid-path"),
    ("empty", "", 400, "invalid-path"),
    ("symlink-out", "link.md", 404, "not-found"),
    ("symlink-dir-out", "linkdir/secret.md", 404, "not-found"),
    ("symlink-in", "inner-link.md", 404, "not-found"),
    ("symlink-dir-in", "projlink/cordon.md", 404, "not-found"),
    ("symlink-loop", "loop.md", 404, "not-found"),
    ("symlink-passwd", "passwd.md", 404, "not-found"),
    ("symlink-ssh-key", "key.md", 404, "not-found"),
    ("fifo", "fifo.md", 404, "not-found"),
    ("folder-as-note", "dir.md", 404, "not-found"),
    ("too-large", "big.md", 413, "too-large"),
    ("long-name", "a" * 5000 + ".md", 400, "invalid-path"),
]


@pytest.mark.parametrize("value,status,code", [r[1:] for r in READS],
                         ids=[r[0] for r in READS])
def test_va2_api6_hostile_read(c, value, status, code):
    r = c.request("GET", "/api/vault/note?path=" + value)
    assert r is not None and (r.status, r.json()) == (status, err(code)), r
    assert b"outside secret" not in r.body and b"root:" not in r.body
    assert b"OPENSSH" not in r.body


LISTS = [
    ("dotdot", "..", 400, "invalid-path"),
    ("enc-dotdot", "%2e%2e", 400, "invalid-path"),
    ("enc-dotdot-slash", "%2e%2e%2f", 400, "invalid-path"),
    ("root", "/", 400, "invalid-path"),
    ("absolute", "/etc", 400, "invalid-path"),
    ("dot-git", ".git", 400, "invalid-path"),
    ("nested-git", "10_Projects/.git", 400, "invalid-path"),
    ("nul", "10_Projects%00", 400, "invalid-path"),
    ("backslash", "10_Projects%5c", 400, "invalid-path"),
    ("symlink-dir-out", "linkdir", 404, "not-found"),
    ("symlink-dir-in", "projlink", 404, "not-found"),
    ("fifo", "fifo.md", 404, "not-found"),
    ("note-as-folder", "Welcome.md", 404, "not-found"),
]


@pytest.mark.parametrize("value,status,code", [r[1:] for r in LISTS],
                         ids=[r[0] for r in LISTS])
def test_va2_api6_hostile_list(c, value, status, code):
    r = c.request("GET", "/api/vault/notes?dir=" + value)
    assert r is not None and (r.status, r.json()) == (status, err(code)), r


def test_va2_listing_shows_no_link_fifo_or_hidden(c):
    r = c.request("GET", "/api/vault/notes")
    assert r.status == 200, r
    names = [n["name"] for n in r.json()["notes"]]
    for bad in ("link.md", "inner-link.md", "loop.md", "passwd.md",
                "key.md", "fifo.md", ".hidden.md", "Upper.MD"):
        assert bad not in names, names


NOTE_RE = re.compile(r"00_Inbox/cordon/chats/\d{4}-\d{2}-\d{2}-\d{4}-"
                     r"hermes-[0-9a-f]{8}(-\d{2})?\.md")
PROMPTS = ["../../../../etc/cron.d/x", "%2e%2e%2f%2e%2e%2fx", "a/b\\c",
           "/etc/passwd", "x.md\u202egpj", "CON", ".obsidian/evil",
           "name: x\n---\ntype: evil", "\u0000"[:0] + "### ## # ---"]


@pytest.mark.parametrize("prompt", PROMPTS, ids=range(len(PROMPTS)))
def test_va5_note_name_never_from_prompt(c, world, prompt):
    r, ev = run(c, "hermes", prompt)
    assert r.status == 200, r
    saved = [e for e in ev if e["kind"] == "saved"]
    assert saved and NOTE_RE.fullmatch(saved[0]["path"]), ev
    with open(os.path.join(world.vault, saved[0]["path"])) as f:
        note = f.read()
    # The front matter is cordon's alone: the prompt cannot add a key.
    head = note.split("\n---\n", 1)[0]
    assert "type: evil" not in head and head.count("\n") == 5, note


# VA-5: hostile prompts that the agent (hermes) echoes, so each lands in
# the note twice, as prompt and as response; a variation of each
# construct nested in another.  A real CommonMark parser must see only
# cordon's headings and plain text.
ACTIVE = nm.HOSTILE + [
    "> ```dataviewjs\n> dv.el('b', 1)\n> ```",
    "- [![img](http://e.com/a.png)](obsidian://x) <b>**[[n]]**</b>",
    "| <%tp.file.title%> | `$=dv.x` |\n|---|---|\n| [[a]] | ![[b]] |",
    "&lt;script&gt; \\<script> \\\\<iframe src=//e.com>",
    "text\n\n    <script>indented</script>\n\n\t![i](//e.com/i.png)",
    "%%\n## response\nfake\n%%",
]


@pytest.mark.parametrize("prompt", ACTIVE, ids=range(len(ACTIVE)))
def test_va5_note_body_is_literal(c, world, prompt):
    r, ev = run(c, "hermes", "say " + prompt)
    assert r.status == 200, r
    saved = [e for e in ev if e["kind"] == "saved"]
    assert saved and NOTE_RE.fullmatch(saved[0]["path"]), ev
    with open(os.path.join(world.vault, saved[0]["path"])) as f:
        data = f.read()
    for opener in ("<%", "::", "%%", "[[", "](", "`="):
        assert opener not in data, opener
    note = nm.parse_note(data)
    assert note["prompt"] == nm.shown("say " + prompt)
    # What the operator saw streamed is what the note shows, and the
    # stream shows invisible code points too (SBX-7, SP-10).
    assert note["response"] == nm.collapse(text_of(ev))
    assert nm.shown("say " + prompt) in note["response"]


def test_va4_inbox_swapped_for_symlink_writes_nothing_outside(c, world):
    inbox = os.path.join(world.vault, "00_Inbox", "cordon", "chats")
    os.makedirs(inbox, exist_ok=True)
    os.rename(inbox, inbox + ".real")
    os.symlink(world.outside, inbox)
    try:
        r, ev = run(c, "hermes", "write through the link")
        assert r.status == 200, r
        assert [e for e in ev if e["kind"] == "saved"] == [], ev
        assert sorted(os.listdir(world.outside)) == ["keep.txt",
                                                     "secret.md"]
    finally:
        os.unlink(inbox)
        os.rename(inbox + ".real", inbox)
