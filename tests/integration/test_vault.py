# VA-1 ... VA-5, API-6, AU-6, MI-4: vaultd as the vault's only writer and
# a symlink-proof reader.  Writes are driven with python in cordond's,
# the spawner's and auditd's place (vault_util.Vaultd); reads also go
# through the real cordon over HTTP.  Every test checks the file tree.
import ctypes
import json
import os
import re
import threading
import time

import pytest

import note_md as nm
import vault_util as vu
from vault_util import (CHAT_OK, ERROR, LIST_OK, MISSION_OK, READ_OK,
                        sha8, temps, tree)

AGENT = "demo"
T_MS = 1778926333456  # 2026-05-16T10:12:13.456Z
CREATED = "2026-05-16T10:12:13.456Z"
CHATS = "00_Inbox/cordon/chats"


def literal(text):
    """VA-5's rendering of plain text without leading blanks, controls
    or invisible code points: ASCII punctuation escaped, hard breaks
    inside a paragraph, blank lines between paragraphs."""
    out, prev = [], False
    for ln in re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", text).split("\n"):
        if not ln.strip(" \t"):
            prev = False
            continue
        if prev or out:
            out.append("\\\n" if prev else "\n\n")
        out.append(ln)
        prev = True
    return "".join(out)


def render(prompt, response, agent=AGENT, created=CREATED):
    """The VA-5 layout, for prompts of at most 60 characters on a line
    without control characters."""
    title = literal(" ".join(prompt.split())) or "chat"
    body = (f"---\ntype: chat\nstatus: draft\nsource: cordon\n"
            f"agent: \"{agent}\"\ncreated: {created}\n---\n\n# {title}\n\n"
            f"## prompt\n\n{literal(prompt)}\n\n## response\n\n"
            f"{literal(response)}")
    return body if body.endswith("\n") else body + "\n"


@pytest.fixture
def vd(tmp_path):
    """A lone vaultd with a fake auditd that acknowledges every record;
    .outside is a directory beside the vault that must stay empty."""
    (tmp_path / "vault").mkdir()
    (tmp_path / "outside").mkdir()
    v = vu.Vaultd(tmp_path / "vault").start()
    v.root = tmp_path / "vault"
    v.outside = tmp_path / "outside"
    yield v
    rc = v.stop()
    print(v.stderr())
    assert rc == 0, f"vaultd exit {rc}"
    assert tree(v.outside) == {}, "something was written outside the vault"
    assert temps(v.root) == [], "temp files left behind"


def no_prompt_in_records(records, text):
    blob = json.dumps(records)
    assert text not in blob


# ---- chat notes (VA-3, VA-4, VA-5, AU-6) ----

def test_va5_chat_note_layout_and_record(vd):
    prompt = "Summarise NONCE-1d9f the plan\nsecond line"
    t, r = vd.chat(prompt=prompt, response="the answer")
    assert t == CHAT_OK, r
    name = f"2026-05-16-1012-{AGENT}-{sha8(prompt)}.md"
    assert r == {"path": f"{CHATS}/{name}", "bytes": r["bytes"]}
    data = (vd.root / CHATS / name).read_bytes()
    assert data.decode() == render(prompt, "the answer")
    assert r["bytes"] == len(data)
    assert oct((vd.root / CHATS / name).stat().st_mode & 0o777) == "0o600"
    # AU-2 shape for vault.write, nothing of the prompt (AU-5).
    assert vd.records == [{"kind": "vault.write", "agent": AGENT,
                           "path": r["path"], "action": "create",
                           "bytes": r["bytes"]}]
    no_prompt_in_records(vd.records, "NONCE-1d9f")


def test_va5_name_has_no_prompt_character(vd):
    prompt = "../../etc/passwd %2e%2e/ \\ x.md\x00"[:-1]
    t, r = vd.chat(prompt=prompt)
    assert t == CHAT_OK, r
    assert r["path"] == f"{CHATS}/2026-05-16-1012-{AGENT}-{sha8(prompt)}.md"
    assert len(os.listdir(vd.root / CHATS)) == 1


def test_va5_collisions_numbered(vd):
    paths = [vd.chat(prompt="same")[1]["path"] for _ in range(3)]
    base = f"{CHATS}/2026-05-16-1012-{AGENT}-{sha8('same')}"
    assert paths == [base + ".md", base + "-02.md", base + "-03.md"]


def test_va5_collisions_exhausted(vd):
    for i in range(99):
        t, r = vd.chat(prompt="p")
        assert t == CHAT_OK, (i, r)
    before = tree(vd.root)
    assert vd.chat(prompt="p") == (ERROR, {"error": "exists"})
    assert tree(vd.root) == before


def test_va5_control_characters_removed(vd):
    prompt = "red \x1b[31mtext\x07 bell\r\n\x7fdel \u0085c1 \ttab"
    t, r = vd.chat(prompt=prompt, response="a\x00b"[:1] + "\x1b]0;x\x07\r\nz")
    assert t == CHAT_OK, r
    data = (vd.root / r["path"]).read_bytes().decode()
    for ch in "\x1b\x07\r\x7f\u0085\x00":
        assert ch not in data
    assert "red \\[31mtext bell\\\ndel c1 \ttab" in data
    assert "\n\n## response\n\na\\]0\\;x\\\nz\n" in data


# VA-5: every hostile construct, as prompt and as response, alone and
# combined, is literal text to a real CommonMark parser; the title, the
# headings and the frontmatter are cordon's alone.
@pytest.mark.parametrize("i", range(len(nm.HOSTILE) + 1))
def test_va5_hostile_note_is_literal(vd, i):
    text = nm.HOSTILE[i] if i < len(nm.HOSTILE) else \
        "\n".join(nm.HOSTILE) + "".join(nm.HOSTILE)
    t, r = vd.chat(prompt="say " + text, response=text)
    assert t == CHAT_OK, r
    data = (vd.root / r["path"]).read_text()
    # Templater and Dataview read the raw file: none of their openers.
    for opener in ("<%", "::", "%%", "[[", "](", "`="):
        assert opener not in data, opener
    note = nm.parse_note(data)
    assert note["prompt"] == nm.shown("say " + text)
    assert note["response"] == nm.shown(text)
    assert nm.shown("say " + text).startswith(note["title"].rstrip("…"))


def test_va5_title_cut_at_a_word(vd):
    prompt = ("Please summarise the following rather long prompt about "
              "several interesting things")
    t, r = vd.chat(prompt=prompt, response="ok")
    assert t == CHAT_OK, r
    note = nm.parse_note((vd.root / r["path"]).read_text())
    assert note["title"] == \
        "Please summarise the following rather long prompt about…"


def test_va5_mission_note_is_literal(vd):
    text = "\n".join(nm.HOSTILE)
    t, r = vd.mission("daily", M, "hostile", text)
    assert t == MISSION_OK, r
    data = (vd.root / M / "hostile.md").read_text()
    assert "<%" not in data and "::" not in data
    assert nm.parse_body(data) == nm.shown(text)


@pytest.mark.parametrize("obj", [
    {"agent": "../x"}, {"agent": "Demo"}, {"agent": "-demo"},
    {"agent": "a" * 65}, {"agent": 7}, {"prompt": ""},
    {"prompt": "x" * 256001}, {"prompt": "a\x00b"}, {"prompt": None},
    {"response": "a\x00b"}, {"response": ["x"]}, {"time": -1},
    {"time": 253402300800000}, {"time": "1778926333456"},
    {"time": 1.5}, {"extra": 1}, {"promptSha8": None},
    {"promptSha8": "148de9c"}, {"promptSha8": "148de9c5a"},
    {"promptSha8": "148DE9C5"}, {"promptSha8": "../x.md/"},
    {"promptSha8": "148de9c\x00"}, {"promptSha8": 14},
], ids=lambda o: json.dumps(o)[:40])
def test_va5_chat_note_invalid_request(vd, obj):
    before = tree(vd.root)
    req = {"agent": AGENT, "prompt": "p", "promptSha8": sha8("p"),
           "response": "r", "time": T_MS}
    req.update(obj)
    t, r = vd.peers["spawner"].call(vu.CHAT, req)
    assert (t, r) == (ERROR, {"error": "invalid-request"})
    assert tree(vd.root) == before and vd.records == []


def test_va5_chat_note_needs_its_hash(vd):
    """The spawner sends the name's hash; a note without one is refused."""
    before = tree(vd.root)
    t, r = vd.peers["spawner"].call(vu.CHAT, {
        "agent": AGENT, "prompt": "p", "response": "r", "time": T_MS})
    assert (t, r) == (ERROR, {"error": "invalid-request"})
    assert tree(vd.root) == before and vd.records == []
    # vaultd names the note with the hash it is given, not one of its own.
    t, r = vd.chat(prompt="p", promptSha8="0123abcd")
    assert t == CHAT_OK, r
    assert r["path"] == f"{CHATS}/2026-05-16-1012-{AGENT}-0123abcd.md"


def test_va5_prompt_limit_in_code_points(vd):
    # 256 000 four-byte characters: over 1 MB, still one valid prompt.
    t, r = vd.chat(prompt="\U0001F600" * 256000, response="")
    assert t == CHAT_OK, r


def test_va5_response_bounds(vd):
    big = ("y" * 1023 + "\n") * 8192  # 8 MiB exactly
    t, r = vd.chat(prompt="big", response=big)
    assert t == CHAT_OK, r
    assert (vd.root / r["path"]).read_text() == render("big", big)
    before = tree(vd.root)
    assert vd.chat(prompt="big2", response=big + "z") == \
        (ERROR, {"error": "invalid-request"})
    assert tree(vd.root) == before


def test_va3_mission_content_bounds(vd):
    t, r = vd.mission("daily", M, "x", "a\x00b")
    assert (t, r) == (ERROR, {"error": "invalid-request"})
    t, r = vd.mission("daily", M, "x", "c" * (8 * 1024 * 1024 + 1))
    assert (t, r) == (ERROR, {"error": "invalid-request"})
    assert vd.mission("daily", M, "x", "") == (MISSION_OK, {"bytes": 1})


def test_su3_chat_note_only_from_spawner(vd):
    before = tree(vd.root)
    t, r = vd.peers["broker"].call(vu.CHAT, {
        "agent": AGENT, "prompt": "p", "response": "r", "time": T_MS})
    assert (t, r) == (ERROR, {"error": "bad-message"})
    t, r = vd.peers["spawner"].call(vu.READ, {"path": "a.md"})
    assert (t, r) == (ERROR, {"error": "bad-message"})
    assert tree(vd.root) == before


@pytest.mark.parametrize("mode", ["refuse", "none"])
def test_au6_no_note_without_audit(tmp_path, mode):
    (tmp_path / "vault").mkdir()
    v = vu.Vaultd(tmp_path / "vault", audit=mode).start()
    try:
        before = tree(tmp_path / "vault")
        assert v.chat() == (ERROR, {"error": "audit-unavailable"})
        assert v.mission("m1", "00_Inbox/cordon/missions/m1", "x") == \
            (ERROR, {"error": "audit-unavailable"})
        after = tree(tmp_path / "vault")
        # Never a note, never a temp; with no auditd at all, not even a
        # folder (a refused record may leave the empty folders).
        assert {k for k, v in after.items() if v[0] != "dir"} == \
            {k for k, v in before.items() if v[0] != "dir"}
        if mode == "none":
            assert after == before, (before, after)
        assert temps(tmp_path / "vault") == []
    finally:
        assert v.stop() == 0


def _until(pred, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return False


def _notes(root):
    d = root / CHATS
    return {f"{CHATS}/{n}" for n in os.listdir(d)
            if not n.startswith(".")} if d.is_dir() else set()


@pytest.mark.parametrize("step", ["record-pending", "acknowledged"])
def test_au6_crash_between_steps_never_a_note_without_record(tmp_path,
                                                             step):
    """A chat note's durable steps (docs/audit.md, "Durability"): the
    vault.write record goes out, the temp is written and fsynced while
    auditd syncs the record, and only the acknowledgement lets the
    rename happen.  kill -9 with the record sent and not acknowledged,
    or after the note was answered: every note on disk has its record,
    a record whose note is absent is the intent docs/audit.md describes,
    and no temp outlives the restart."""
    root = tmp_path / "vault"
    root.mkdir()
    v = vu.Vaultd(root, audit="hold").start()
    response = "x" * 65536
    body = render("crash", response)
    try:
        v.peers["spawner"].request(vu.CHAT, {
            "agent": AGENT, "prompt": "crash", "promptSha8": sha8("crash"),
            "response": response, "time": T_MS})
        assert _until(lambda: v.records and temps(root)), v.stderr()
        (rec,) = v.records
        assert rec["kind"] == "vault.write", rec
        assert rec["bytes"] == len(body.encode()), rec
        # Record out, note staged: nothing is visible before the
        # acknowledgement, however long it takes.
        time.sleep(0.3)
        assert _notes(root) == set()
        if step == "acknowledged":
            v.auditd.release.set()
            t, _, _, r = v.peers["spawner"].recv()
            assert t == CHAT_OK and r["path"] == rec["path"], r
            assert (root / rec["path"]).read_text() == body
        v.kill9()
    finally:
        v.stop()
    v2 = vu.Vaultd(root).start()
    try:
        assert temps(root) == []
        assert _notes(root) == ({rec["path"]} if step == "acknowledged"
                                else set())
    finally:
        assert v2.stop() == 0


# ---- mission notes (VA-3, MI-4) ----

def test_va3_mission_note_create_then_update(vd):
    folder = "00_Inbox/cordon/missions/daily/summaries"
    assert vd.mission("daily", folder, "report", "one\n") == \
        (MISSION_OK, {"bytes": 4})
    assert vd.mission("daily", folder + "/", "report.md", "two!\n") == \
        (MISSION_OK, {"bytes": 6})
    assert (vd.root / folder / "report.md").read_text() == "two\\!\n"
    # MI-4: no path in the answer nor in the records.
    assert vd.records == [
        {"kind": "vault.write", "missionId": "daily", "action": "create",
         "bytes": 4},
        {"kind": "vault.update", "missionId": "daily", "action": "update",
         "bytes": 6}]


def test_va3_mission_folder_url_decoded_once(vd):
    t, r = vd.mission("daily", "00_Inbox%2Fcordon%2Fmissions%2Fdaily",
                      "a%2Db")
    assert (t, r) == (MISSION_OK, {"bytes": 7})
    assert (vd.root / "00_Inbox/cordon/missions/daily/a-b.md").exists()


M = "00_Inbox/cordon/missions/daily"


@pytest.mark.parametrize("folder,hint", [
    ("00_Inbox/cordon/missions/dailyX", "x"),          # summariesX-style
    ("00_Inbox/cordon/missions/other", "x"),
    ("00_Inbox/cordon/chats", "x"),
    ("00_Inbox/cordon/missions", "x"),
    ("10_Projects", "x"),
    ("/etc", "x"),
    ("/" + M, "x"),
    (M + "/../../../../etc", "x"),
    (M + "/%2e%2e/%2e%2e/x", "x"),
    (M + "%2f..%2f..%2fx", "x"),
    (M + "/%252e%252e", "x"),
    (M + "/a\\b", "x"),
    (M + "%5Ca", "x"),
    (M + "/.hidden", "x"),
    (M + "//a", "x"),
    (M + "/%ZZ", "x"),
    (M + "/a%00b", "x"),
    ("../vault-evil/" + M, "x"),
    (M, "../escape"),
    (M, "%2e%2e%2fescape"),
    (M, ".hidden"),
    (M, "a" * 97),
    (M, ""),
    (M, "%ZZ"),
    (M, "x.md%00.txt"),
    (M, "a\\b"),
    (M, "a b"),
], ids=lambda s: s[-30:])
def test_va3_mission_hostile_refused(vd, folder, hint):
    before = tree(vd.root)
    assert vd.mission("daily", folder, hint) == \
        (ERROR, {"error": "invalid-path"})
    assert tree(vd.root) == before and vd.records == []


def test_va3_mission_summaries_x_boundary(vd):
    assert vd.mission("summaries", "00_Inbox/cordon/missions/summariesX",
                      "x") == (ERROR, {"error": "invalid-path"})
    assert vd.mission("summaries", "00_Inbox/cordon/missions/summaries",
                      "x")[0] == MISSION_OK


def test_va3_mission_bad_id_and_fields(vd):
    before = tree(vd.root)
    for obj in [{"missionId": "../x", "folder": M, "hint": "x",
                 "content": "c"},
                {"missionId": "daily", "folder": M, "hint": "x"},
                {"missionId": "daily", "folder": M, "hint": "x",
                 "content": "c", "path": "/etc/x"}]:
        t, r = vd.peers["spawner"].call(vu.MISSION, obj)
        assert (t, r) == (ERROR, {"error": "invalid-request"})
    assert tree(vd.root) == before


# ---- symlinks (VA-1, VA-4) ----

@pytest.mark.parametrize("where", ["outside", "decoy"])
def test_va4_inbox_replaced_by_symlink(vd, where):
    # "decoy" is a folder Landlock lets vaultd write: only the
    # no-symlink walk (VA-1) stops that one.
    inbox = vd.root / "00_Inbox/cordon"
    os.rename(inbox, vd.root / "00_Inbox/cordon.real")
    decoy = vd.root / "00_Inbox/cordon.real/decoy"
    decoy.mkdir()
    os.symlink(vd.outside if where == "outside" else decoy, inbox)
    assert vd.chat() == (ERROR, {"error": "write-failed"})
    assert vd.mission("daily", M, "x") == (ERROR, {"error": "write-failed"})
    assert vd.records == [] and tree(decoy) == {}


@pytest.mark.parametrize("where", ["outside", "decoy"])
def test_va4_chats_replaced_by_symlink(vd, where):
    decoy = vd.root / "00_Inbox/cordon/decoy"
    decoy.mkdir()
    os.symlink(vd.outside if where == "outside" else decoy,
               vd.root / CHATS)
    assert vd.chat() == (ERROR, {"error": "write-failed"})
    assert tree(decoy) == {}


def test_va4_mission_folder_replaced_by_symlink(vd):
    assert vd.mission("daily", M + "/out", "x")[0] == MISSION_OK
    os.rename(vd.root / M / "out", vd.root / M / "out.real")
    os.symlink(vd.outside, vd.root / M / "out")
    assert vd.mission("daily", M + "/out", "y") == \
        (ERROR, {"error": "write-failed"})
    os.unlink(vd.root / M / "out")
    os.rename(vd.root / M / "out.real", vd.root / M / "out")
    # The mission's own folder swapped too.
    os.rename(vd.root / M, vd.root / (M + ".real"))
    os.symlink(vd.outside, vd.root / M)
    assert vd.mission("daily", M, "z") == (ERROR, {"error": "write-failed"})


@pytest.mark.parametrize("where", ["outside", "decoy"])
def test_va4_symlinked_note_never_replaced(vd, where):
    os.makedirs(vd.root / M)
    target = (vd.outside if where == "outside" else vd.root / M) / "v.md"
    os.symlink(target, vd.root / M / "x.md")
    assert vd.mission("daily", M, "x") == (ERROR, {"error": "write-failed"})
    assert not target.exists()
    os.unlink(vd.root / M / "x.md")


_libc = ctypes.CDLL(None, use_errno=True)
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def exchange(a, b):
    if _libc.renameat2(_AT_FDCWD, str(a).encode(), _AT_FDCWD,
                       str(b).encode(), _RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")


NOTES, WINDOW, RETRIES = 1000, 8, 3


@pytest.mark.parametrize("where", ["outside", "decoy"])
@pytest.mark.parametrize("swapped", [CHATS, "00_Inbox/cordon"])
def test_va4_symlink_swap_race(vd, swapped, where):
    """One thread keeps exchanging a directory of the target path with a
    symlink to outside (or to a decoy folder Landlock would allow) while
    a thousand notes are written.  At most WINDOW are in flight, so none
    waits anywhere near vaultd's bound on a queued write (`busy`, VA-4's
    neutral answer to load, not to the race); a `busy` one is sent again,
    at most RETRIES times: the test counts, it does not time."""
    os.makedirs(vd.root / CHATS, exist_ok=True)
    decoy = vd.root / "00_Inbox/cordon/decoy"
    decoy.mkdir()
    real = vd.root / swapped
    link = vd.root / (swapped + ".link")
    target = vd.outside if where == "outside" else decoy
    if where == "decoy" and swapped == "00_Inbox/cordon":
        # Relative, so it never resolves through the swapped link itself.
        target = "cordon.link/decoy"
    os.symlink(target, link)
    stop = threading.Event()
    swaps = [0]

    def swapper():
        while not stop.is_set():
            exchange(real, link)
            exchange(real, link)
            swaps[0] += 2
            time.sleep(0.0002)  # let some notes through as well

    th = threading.Thread(target=swapper)
    th.start()
    spawner = vd.peers["spawner"]

    def send(i):
        prompt = f"race note {i}"
        return spawner.request(vu.CHAT, {
            "agent": AGENT, "prompt": prompt, "promptSha8": sha8(prompt),
            "response": f"r{i}", "time": T_MS})

    answers = {}  # note number -> (type, answer)
    try:
        pending, sent = {}, 0  # request id -> (note number, retries)
        while len(answers) < NOTES:
            while sent < NOTES and len(pending) < WINDOW:
                pending[send(sent)] = (sent, 0)
                sent += 1
            got = spawner.recv(30)
            assert got is not None, f"only {len(answers)} answers"
            t, mid, _, r = got
            i, tries = pending.pop(mid)
            if r == {"error": "busy"} and tries < RETRIES:
                pending[send(i)] = (i, tries + 1)
                continue
            answers[i] = (t, r)
    finally:
        stop.set()
        th.join()
    assert swaps[0] > 0
    assert os.path.isdir(real) and not os.path.islink(real)
    ok = {}
    for i, (t, r) in answers.items():
        if t == CHAT_OK:
            ok[r["path"]] = f"race note {i}"
        else:
            assert r == {"error": "write-failed"}, r
    assert ok, "no note was written at all"
    # Not one byte outside; every acknowledged note whole where it says.
    assert tree(vd.outside) == {} and tree(decoy) == {}
    for path, prompt in ok.items():
        i = prompt.split()[-1]
        assert (vd.root / path).read_text() == render(prompt, f"r{i}")
    notes = [n for n in os.listdir(vd.root / CHATS) if n.endswith(".md")]
    assert len(notes) == len(ok)
    assert {r["path"] for r in vd.records} >= set(ok)
    print(f"{swaps[0]} swaps, {len(ok)} of 1000 notes written")
    os.unlink(link)


def test_va4_kill9_during_burst(tmp_path):
    """kill -9 in a burst of writes: every note whole or absent, and no
    temp file visible to the reader, then or after the restart."""
    root = tmp_path / "vault"
    root.mkdir()
    v = vu.Vaultd(root).start()
    spawner = v.peers["spawner"]
    big = "x" * 65536 + "\n"
    prompts = {}
    for i in range(200):
        prompts[sha8(f"crash {i}")] = f"crash {i}"
        spawner.request(vu.CHAT, {"agent": AGENT, "prompt": f"crash {i}",
                                  "promptSha8": sha8(f"crash {i}"),
                                  "response": big, "time": T_MS})
    for _ in range(20):
        assert spawner.recv(30) is not None
    v.kill9()
    v.stop()
    chats = root / CHATS
    names = [n for n in os.listdir(chats) if not n.startswith(".")]
    print(f"{len(names)} of 200 notes before the kill, "
          f"{len(temps(root))} temp(s) left")
    assert 20 <= len(names) <= 200
    for n in names:
        prompt = prompts[n[len("2026-05-16-1012-demo-"):][:8]]
        assert (chats / n).read_text() == render(prompt, big), n
    # The reader never shows a temp, even before the sweep.
    v2 = vu.Vaultd(root).start()
    try:
        assert temps(root) == []
        t, r = v2.list(CHATS)
        assert t == LIST_OK
        assert sorted(x["name"] for x in r["notes"]) == sorted(names)
    finally:
        assert v2.stop() == 0


# ---- reads through vaultd directly (VA-2) ----

def test_va2_reader_hides_temps_and_hidden(vd):
    os.makedirs(vd.root / "n")
    (vd.root / "n/.cordon-tmp-0011223344556677").write_text("partial")
    (vd.root / "n/.secret.md").write_text("s")
    (vd.root / "n/ok.md").write_text("ok")
    (vd.root / "n/x.txt").write_text("t")
    t, r = vd.list("n")
    assert t == LIST_OK
    assert [x["name"] for x in r["notes"]] == ["ok.md"]
    assert vd.read("n/.cordon-tmp-0011223344556677") == \
        (ERROR, {"error": "invalid-path"})
    os.unlink(vd.root / "n/.cordon-tmp-0011223344556677")


def test_va1_status_reports_resolver(vd):
    assert vd.status["vaultResolve"] == "openat2"
    assert vd.status["landlock"] == "on" and vd.status["seccomp"] == 2


# ---- API-6 over HTTP through the real cordon (VA-2) ----

def err(code):
    return {"ok": False, "error": code}


@pytest.fixture
def hv(cordon, tmp_path):
    """The real cordon with notes in its vault, a symlinked file and a
    symlinked folder pointing outside, and a snapshot of both trees."""
    root = os.path.join(cordon.home, "vault")
    out = tmp_path / "outside-http"
    out.mkdir()
    (out / "secret.md").write_text("outside secret\n")
    files = {
        "Welcome.md": "# hi\n",
        "10_Projects/cordon.md": "project\n",
        "10_Projects/deep/a b.md": "spaced\n",
        "notes.txt": "text\n",
        ".obsidian/x.md": "conf\n",
        ".git/config.md": "git\n",
        "60_Attachments/z.md": "att\n",
        "node_modules/m.md": "mod\n",
        "%2e%2e%2fetc%2fpasswd.md": "literal name\n",
        "big.md": "x" * (4 * 1024 * 1024 + 1),
        "max.md": "y" * (4 * 1024 * 1024),
    }
    for rel, text in files.items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    os.symlink(out / "secret.md", os.path.join(root, "link.md"))
    os.symlink(out, os.path.join(root, "linkdir"))
    # A second name of a file outside the vault (VA-2: no note either).
    os.link(out / "secret.md", os.path.join(root, "hardlink.md"))
    os.symlink(os.path.join(root, "Welcome.md"),
               os.path.join(root, "inner-link.md"))
    cordon.vault = root
    cordon.outside = out
    before = (tree(root), tree(out))
    cordon.responses.clear()
    yield cordon
    assert (tree(root), tree(out)) == before, "the read API changed files"
    assert temps(root) == []
    for r in cordon.responses:
        # Never an absolute path in any answer (API-6, PER-9).
        assert cordon.home.encode() not in r.body, r
        assert str(out).encode() not in r.body, r
        assert r.header("Cache-Control") == "no-store", r


def get(c, target):
    r = c.request("GET", target)
    assert r is not None
    return r.status, r.json()


def test_api6_read_note(hv):
    assert get(hv, "/api/vault/note?path=Welcome.md") == (200, {
        "ok": True, "path": "Welcome.md", "content": "# hi\n",
        "bytes": 5})
    assert get(hv, "/api/vault/note?path=10_Projects%2Fdeep%2Fa%20b.md") \
        == (200, {"ok": True, "path": "10_Projects/deep/a b.md",
                  "content": "spaced\n", "bytes": 7})
    st, body = get(hv, "/api/vault/note?path=max.md")
    assert st == 200 and body["bytes"] == 4 * 1024 * 1024


def test_api6_list_notes_and_folders(hv):
    st, body = get(hv, "/api/vault/notes")
    assert st == 200, body
    names = [n["name"] for n in body["notes"]]
    # Only .md notes, none hidden, no symlinks, sorted; skip list honoured.
    assert names == ["%2e%2e%2fetc%2fpasswd.md", "Welcome.md", "big.md",
                     "max.md"]
    assert body["folders"] == ["00_Inbox", "10_Projects"]
    assert body["dir"] == ""
    st, body = get(hv, "/api/vault/notes?dir=10_Projects")
    assert st == 200 and [n["name"] for n in body["notes"]] == ["cordon.md"]
    assert body["folders"] == ["deep"]
    assert get(hv, "/api/vault/notes?dir=") [0] == 200


def test_api6_root_listing_repeats(hv):
    # Regression: the root was listed through a dup of vaultd's held fd,
    # which shares its offset, so every listing after the first was empty.
    first = get(hv, "/api/vault/notes")
    for _ in range(3):
        assert get(hv, "/api/vault/notes") == first
    assert first[1]["folders"] == ["00_Inbox", "10_Projects"]


@pytest.mark.parametrize("value", [
    "../../etc/passwd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "%2E%2E/%2E%2E/etc/passwd.md",
    "/etc/passwd",
    "%2Fetc%2Fpasswd.md",
    "../vault-evil/x.md",
    "x.md%00.txt",
    "a%5Cb.md",
    ".obsidian/x.md",
    ".git/config.md",
    "60_Attachments/z.md",
    "node_modules/m.md",
    "notes.txt",
    "%ZZ",
    "a%2",
    "",
    "Welcome.md/",
    "10_Projects//cordon.md",
    "%FF.md",
    "a%0Ab.md",
], ids=lambda s: s or "empty")
def test_api6_va2_hostile_read_refused(hv, value):
    assert get(hv, f"/api/vault/note?path={value}") == \
        (400, err("invalid-path"))


def test_api6_va2_hard_link_is_no_note(hv):
    """A hard link is a second name of a file that may live outside the
    vault: neither read nor listed (the listing test sees none)."""
    st, body = get(hv, "/api/vault/note?path=hardlink.md")
    assert (st, body) == (404, err("not-found")), body
    assert "outside secret" not in json.dumps(body)


def test_api6_deep_path_is_not_internal(hv):
    """A path of many folders within the broker's bound reaches vaultd
    whole ('/' is not escaped on the wire, which doubled it), so it gets
    vaultd's own answer, never 500 internal."""
    st, body = get(hv, "/api/vault/note?path=" + "a/" * 1500 + "x.md")
    assert st != 500 and body.get("error") != "internal", (st, body)
    assert "refused vault-read message" not in hv.stderr()


def test_api6_va2_double_encoding_is_literal(hv):
    # Decoded once: "%2e%2e%2f..." is a literal name, here it exists.
    st, body = get(hv, "/api/vault/note?path=%252e%252e%252fetc%252fpasswd.md")
    assert st == 200 and body["content"] == "literal name\n"
    assert get(hv, "/api/vault/note?path=%252e%252e%252fx.md") == \
        (404, err("not-found"))


def test_api6_raw_backslash_refused(hv):
    r = hv.request("GET", "/api/vault/note?path=a\\b.md")
    assert r is not None and r.status == 400, r


@pytest.mark.parametrize("value", ["link.md", "linkdir/secret.md",
                                   "inner-link.md", "missing.md",
                                   "10_Projects.md", "10_Projects/x.md"])
def test_api6_va1_symlinks_and_missing_not_found(hv, value):
    assert get(hv, f"/api/vault/note?path={value}") == \
        (404, err("not-found"))


def test_api6_too_large(hv):
    assert get(hv, "/api/vault/note?path=big.md") == \
        (413, err("too-large"))


@pytest.mark.parametrize("value,status,code", [
    ("..", 400, "invalid-path"),
    ("../", 400, "invalid-path"),
    ("/", 400, "invalid-path"),
    ("/etc", 400, "invalid-path"),
    (".obsidian", 400, "invalid-path"),
    ("60_Attachments", 400, "invalid-path"),
    ("%2e%2e", 400, "invalid-path"),
    ("%ZZ", 400, "invalid-path"),
    ("linkdir", 404, "not-found"),
    ("missing", 404, "not-found"),
    ("Welcome.md", 404, "not-found"),
])
def test_api6_va2_hostile_list_refused(hv, value, status, code):
    assert get(hv, f"/api/vault/notes?dir={value}") == (status, err(code))


@pytest.mark.parametrize("query", [
    "?path=Welcome.md&path=Welcome.md", "?path=Welcome.md&x=1",
    "?x=Welcome.md", "?dir=", "", "?pathx=Welcome.md", "?path"])
def test_api6_strict_query(hv, query):
    assert get(hv, f"/api/vault/note{query}") == (400, err("invalid-path"))


def test_api6_needs_auth(hv):
    r = hv.request("GET", "/api/vault/note?path=Welcome.md", auth=False)
    assert r.status == 401


def test_va1_health_shows_resolver(cordon):
    h = cordon.health()
    vd = [d for d in h["daemons"] if d["name"] == "vaultd"][0]
    assert vd["status"]["vaultResolve"] == "openat2"
    assert vd["status"]["landlock"] == "on"
