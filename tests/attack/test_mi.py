# MI-1 ... MI-4 and API-7: hostile mission files, ids, run bodies,
# option values and agents.  The module's home holds a set of good
# missions (most on `marked`, whose child writes a marker file when it
# starts: a refused request must spawn nothing) beside 60-odd hostile
# mission files, each of which must be refused at load (`cordon check`
# names it as FILE:LINE:COL, the spawner disables it) without touching
# the good ones.  Runs: agents that never exit, flood, print their
# secret or escape sequences, leave the process group; output folders
# and note names swapped for links, FIFOs and folders; concurrent runs.
# The scheduler runs on a frozen test clock (CORDON_TEST_CLOCK_FILE), so
# its state file is written once at start and never during a case.
# Invariants after every case (conftest.py).
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import uuid

import pytest

from agents_util import (FILE_SECRET, GRACE, audit_records,
                         make_agents_home, post_json)
from conftest import HTTP_S, World, bug, child_env, cordon_bin

CLOCK = 1795669230  # 2026-11-26T05:00:30Z: no good cron slot matches
DATE = "2026-11-26"
INBOX = os.path.join("00_Inbox", "cordon", "missions")
RESULT_KEYS = {"ok", "runId", "status", "durationMs", "outputsPersisted",
               "outputsEmitted", "errorClass"}
RECORD_KEYS = {"kind", "missionId", "trigger", "runId", "status",
               "durationMs", "outputsPersisted", "outputsEmitted",
               "errorClass", "ts", "id", "seq", "prev"}
# Nonces written into the hostile files before the world exists; they are
# added to the world's set, so no audit file or error answer may hold one.
FILE_NONCES = ["nx" + uuid.uuid4().hex[:20] for _ in range(4)]
N0, N1, N2, N3 = FILE_NONCES


def err(code):
    return {"ok": False, "error": code}


EV = "  - {type: event, event: x.done}\n"


def note_out(mid, hint=None, sub=""):
    return (f"  - {{type: vault-note, folder: {INBOX}/{mid}{sub}, "
            f"filenameHint: {hint or mid}}}\n")


def mission(mid, agent="hermes", prompt='"say hi"', options="", outputs=EV,
            perms="[event-emit]", extra="", label=None):
    return (f"id: {mid}\nlabel: {label or 'L ' + mid}\nagent: {agent}\n"
            f"prompt: {prompt}\n" + (f"options:\n{options}" if options
                                      else "") +
            f"outputs:\n{outputs}permissions: {perms}\n" + extra)


MARK_OPTS = ("  topic: {type: string, maxLength: 64}\n"
             "  n:     {type: integer, min: 1, max: 10, default: 3}\n"
             "  loud:  {type: boolean, default: false}\n"
             "  tone:  {type: enum, values: [plain, formal], default: plain}\n"
             "  word:  {type: string, maxLength: 16, pattern: \"^[a-z]+$\", "
             "default: abc}\n")

GOOD = {
    # Hostile bodies and option values are aimed at these: marked agent.
    "mark": mission("mark", "marked", '"say {topic} {n} {loud} {tone} '
                    '{word}"', MARK_OPTS, note_out("mark"),
                    "[vault-write]"),
    "markbare": mission("markbare", "marked", '"{topic}"',
                        "  topic: {type: string, maxLength: 4096}\n",
                        note_out("markbare"), "[vault-write]"),
    "marknoperm": mission("marknoperm", "marked", '"say x"',
                          outputs=note_out("marknoperm"),
                          perms="[event-emit]"),
    "markext": mission("markext", "marked", '"say x"', perms="[external-api]"),
    "markhalf": mission("markhalf", "marked", '"say x"',
                        outputs=EV + note_out("markhalf"),
                        perms="[event-emit]"),
    # Hostile agents.
    "neverexit": mission("neverexit", "hostile", "neverexit",
                         extra="timeoutMs: 1500\n"),
    "flood": mission("flood", "hermes", "flood", outputs=note_out("flood"),
                     perms="[vault-write]", extra="timeoutMs: 8000\n"),
    "secret": mission("secret", "hostile", '"secret {how}"',
                      "  how: {type: enum, values: [raw, split, longline, "
                      "ansi, crlf, many, env, stderr]}\n",
                      note_out("secret"), "[vault-write]"),
    "escape": mission("escape", "hostile", "allescapes",
                      outputs=note_out("escape"), perms="[vault-write]"),
    "leave": mission("leave", "hostile", '"{mode}"',
                     "  mode: {type: enum, values: [setsid, daemonize, "
                     "neverexit]}\n", extra="timeoutMs: 1500\n"),
    "slow": mission("slow", "hermes", '"sleep 2"', extra="timeoutMs: 8000\n"),
    "names": mission("names", "hermes", '"say {path}"',
                     "  path: {type: string, maxLength: 200}\n",
                     note_out("names"), "[vault-write]"),
    "fifo": mission("fifo", outputs=note_out("fifo", "f"),
                    perms="[vault-write]"),
    "linkname": mission("linkname", outputs=note_out("linkname", "l"),
                        perms="[vault-write]"),
    "swap": mission("swap", outputs=note_out("swap"), perms="[vault-write]"),
    "deep": mission("deep", outputs=note_out("deep", "d", "/a/b/c/d"),
                    perms="[vault-write]"),
    "needkey": mission("needkey", "needkey"),
    "nobin": mission("nobin", "nobin"),
    "fused": mission("fused", "fused", '"{topic}"',
                     "  topic: {type: string, maxLength: 200}\n",
                     note_out("fused"), "[vault-write]"),
    "stdin": mission("stdin", "viastdin", '"{topic}"',
                     "  topic: {type: string, maxLength: 200}\n",
                     note_out("stdin"), "[vault-write]"),
    "nightly": mission("nightly", extra="trigger: {manual: false, cron: "
                       "\"0 3 * * *\", timezone: Europe/Berlin}\n"),
    "redos": mission("redos", "marked", '"say {v}"',
                     "  v: {type: string, maxLength: 4096, "
                     "pattern: \"^(a|aa|aaa)*b$\"}\n"),
}


def bad_opt(mid, opts, prompt=None):
    names = re.findall(r"^  ([A-Za-z_][A-Za-z0-9_]*):", opts, re.M)
    p = prompt or '"say ' + " ".join("{%s}" % n for n in names) + '"'
    return mission(mid, options=opts, prompt=p)


def cron(mid, expr):
    return mission(mid, extra=f"trigger: {{manual: true, cron: {expr}}}\n")


def tz(mid, zone):
    return mission(mid, extra=f"trigger: {{manual: true, cron: \"0 1 * * *\""
                   f", timezone: {zone}}}\n")


def folder(mid, f):
    return mission(mid, outputs=f"  - {{type: vault-note, folder: {f}, "
                   "filenameHint: x}\n", perms="[vault-write]")


def hint(mid, h):
    return mission(mid, outputs=f"  - {{type: vault-note, folder: "
                   f"{INBOX}/{mid}, filenameHint: {h}}}\n",
                   perms="[vault-write]")


# (file stem, the id it declares or None, text): each refused at load.
BAD = [
    ("unknown-top", "unknown-top",
     mission("unknown-top", extra=f"shell: \"rm -rf / {N0}\"\n")),
    ("env-top", "env-top",
     mission("env-top", extra=f"env: {{LD_PRELOAD: /tmp/{N0}.so}}\n")),
    ("sandbox-top", "sandbox-top",
     mission("sandbox-top", extra="sandbox: {isolation: none}\n")),
    ("args-top", "args-top",
     mission("args-top",
             extra="args: [\"--dangerously-skip-permissions\"]\n")),
    ("bin-top", "bin-top", mission("bin-top", extra="bin: /bin/sh\n")),
    ("cwd-top", "cwd-top", mission("cwd-top", extra="cwd: /root\n")),
    ("opt-unknown-key", "opt-unknown-key",
     bad_opt("opt-unknown-key",
             f"  a: {{type: string, maxLength: 5, secret: {N0}}}\n")),
    ("opt-other-type-key", "opt-other-type-key",
     bad_opt("opt-other-type-key",
             "  a: {type: string, maxLength: 5, min: 1}\n")),
    ("opt-bad-type", "opt-bad-type",
     bad_opt("opt-bad-type", "  a: {type: path}\n")),
    ("opt-no-maxlength", "opt-no-maxlength",
     bad_opt("opt-no-maxlength", "  a: {type: string}\n")),
    ("opt-maxlength-huge", "opt-maxlength-huge",
     bad_opt("opt-maxlength-huge", "  a: {type: string, maxLength: 4097}\n")),
    ("opt-min-gt-max", "opt-min-gt-max",
     bad_opt("opt-min-gt-max", "  a: {type: integer, min: 5, max: 1}\n")),
    ("opt-huge-min", "opt-huge-min",
     bad_opt("opt-huge-min", "  a: {type: integer, min: "
             "99999999999999999999, max: 1}\n")),
    ("opt-default-out", "opt-default-out",
     bad_opt("opt-default-out",
             "  a: {type: integer, min: 1, max: 5, default: 6}\n")),
    ("opt-default-type", "opt-default-type",
     bad_opt("opt-default-type",
             "  a: {type: boolean, default: \"yes please\"}\n")),
    ("opt-default-pattern", "opt-default-pattern",
     bad_opt("opt-default-pattern", "  a: {type: string, maxLength: 9, "
             "pattern: \"^[a-z]+$\", default: \"../x\"}\n")),
    ("opt-backref", "opt-backref",
     bad_opt("opt-backref", "  a: {type: string, maxLength: 9, "
             "pattern: \"^(a)\\\\1$\"}\n")),
    ("opt-star-height", "opt-star-height",
     bad_opt("opt-star-height", "  a: {type: string, maxLength: 9, "
             "pattern: \"^(a+)+$\"}\n")),
    ("opt-pattern-interval", "opt-pattern-interval",
     bad_opt("opt-pattern-interval", "  a: {type: string, maxLength: 9, "
             "pattern: \"^(ab{1,255}){1,255}$\"}\n")),
    ("opt-pattern-long", "opt-pattern-long",
     bad_opt("opt-pattern-long", "  a: {type: string, maxLength: 9, "
             "pattern: \"" + "a" * 257 + "\"}\n")),
    ("opt-pattern-broken", "opt-pattern-broken",
     bad_opt("opt-pattern-broken",
             "  a: {type: string, maxLength: 9, pattern: \"^[a-$\"}\n")),
    ("opt-enum-dup", "opt-enum-dup",
     bad_opt("opt-enum-dup", "  a: {type: enum, values: [x, y, x]}\n")),
    ("opt-enum-path", "opt-enum-path",
     bad_opt("opt-enum-path", "  a: {type: enum, values: [\"../etc\"]}\n")),
    ("opt-enum-flag", "opt-enum-flag",
     bad_opt("opt-enum-flag", "  a: {type: enum, values: [\"a b\", x]}\n")),
    ("opt-enum-empty", "opt-enum-empty",
     bad_opt("opt-enum-empty", "  a: {type: enum, values: []}\n")),
    ("opt-name-upper", "opt-name-upper",
     bad_opt("opt-name-upper", "  Abc: {type: boolean}\n",
             '"say {Abc}"')),
    ("opt-name-proto", "opt-name-proto",
     bad_opt("opt-name-proto", "  __proto__: {type: boolean}\n",
             '"say {__proto__}"')),
    ("opt-17", "opt-17",
     bad_opt("opt-17", "".join(f"  o{i}: {{type: boolean, default: true}}\n"
                              for i in range(17)))),
    ("tpl-undeclared", "tpl-undeclared",
     mission("tpl-undeclared", prompt=f'"say {{secret}} {N1}"')),
    ("tpl-lone-brace", "tpl-lone-brace",
     mission("tpl-lone-brace", prompt='"say { x"')),
    ("tpl-double-brace", "tpl-double-brace",
     bad_opt("tpl-double-brace", "  a: {type: boolean}\n", '"say {{a}}"')),
    ("tpl-ctl", "tpl-ctl", mission("tpl-ctl", prompt='"say \\e[31m"')),
    ("tpl-huge", "tpl-huge",
     mission("tpl-huge", prompt='"' + "x" * 16385 + '"')),
    ("cron-61", "cron-61", cron("cron-61", '"61 * * * *"')),
    ("cron-4-fields", "cron-4-fields", cron("cron-4-fields", '"* * * *"')),
    ("cron-6-fields", "cron-6-fields",
     cron("cron-6-fields", '"* * * * * *"')),
    ("cron-at-daily", "cron-at-daily", cron("cron-at-daily", '"@daily"')),
    ("cron-names", "cron-names", cron("cron-names", '"0 0 * * MON"')),
    ("cron-step-0", "cron-step-0", cron("cron-step-0", '"*/0 * * * *"')),
    ("cron-range-out", "cron-range-out",
     cron("cron-range-out", '"0-70 * * * *"')),
    ("cron-tab", "cron-tab", cron("cron-tab", '"0\\t0 * * *"')),
    ("cron-a-step", "cron-a-step", cron("cron-a-step", '"5/10 * * * *"')),
    ("cron-shell", "cron-shell",
     cron("cron-shell", f'"$(reboot{N1}) * * * *"')),
    ("cron-number", "cron-number", cron("cron-number", "5")),
    ("cron-long", "cron-long",
     cron("cron-long", '"' + "1," * 70 + '1 * * * *"')),
    ("cron-no-default", "cron-no-default",
     mission("cron-no-default", prompt='"say {who}"',
             options="  who: {type: string, maxLength: 9}\n",
             extra="trigger: {cron: \"0 1 * * *\"}\n")),
    ("manual-off-no-cron", "manual-off-no-cron",
     mission("manual-off-no-cron", extra="trigger: {manual: false}\n")),
    ("trigger-unknown-key", "trigger-unknown-key",
     mission("trigger-unknown-key",
             extra="trigger: {manual: true, at: now}\n")),
    ("tz-unknown", "tz-unknown", tz("tz-unknown", f"Mars/Olympus{N2}")),
    ("tz-dotdot", "tz-dotdot", tz("tz-dotdot", "\"../../../etc/passwd\"")),
    ("tz-mid-dotdot", "tz-mid-dotdot",
     tz("tz-mid-dotdot", "\"Europe/../../../etc/passwd\"")),
    ("tz-absolute", "tz-absolute", tz("tz-absolute", "/etc/localtime")),
    ("tz-folder", "tz-folder", tz("tz-folder", "Europe")),
    ("tz-space", "tz-space", tz("tz-space", "\"Europe/Berlin \"")),
    ("tz-nul", "tz-nul", tz("tz-nul", "\"Europe/Berlin\\0x\"")),
    ("tz-posix", "tz-posix", tz("tz-posix", "\"EST+5EDT,M3.2.0,M11.1.0\"")),
    ("tz-colon", "tz-colon", tz("tz-colon", "\":/etc/passwd\"")),
    ("out-chats", "out-chats", folder("out-chats", "00_Inbox/cordon/chats")),
    ("out-other-mission", "out-other-mission",
     folder("out-other-mission", f"{INBOX}/mark")),
    ("out-prefix", "out-prefix", folder("out-prefix", f"{INBOX}/out-prefixx")),
    ("out-dotdot", "out-dotdot",
     folder("out-dotdot", f"{INBOX}/out-dotdot/../../chats")),
    ("out-encoded", "out-encoded",
     folder("out-encoded", f"{INBOX}/out-encoded/%2e%2e/%2e%2e")),
    ("out-absolute", "out-absolute", folder("out-absolute", "/etc/cron.d")),
    ("out-hidden", "out-hidden",
     folder("out-hidden", f"{INBOX}/out-hidden/.obsidian")),
    ("out-backslash", "out-backslash",
     folder("out-backslash", f"\"{INBOX}/out-backslash/..\\\\..\"")),
    ("out-too-deep", "out-too-deep",
     folder("out-too-deep", f"{INBOX}/out-too-deep/a/b/c/d/e")),
    ("out-double-slash", "out-double-slash",
     folder("out-double-slash", f"{INBOX}/out-double-slash//x")),
    ("out-vault-root", "out-vault-root", folder("out-vault-root", "\".\"")),
    ("hint-dotdot", "hint-dotdot", hint("hint-dotdot", "\"../x\"")),
    ("hint-slash", "hint-slash", hint("hint-slash", "a/b")),
    ("hint-hidden", "hint-hidden", hint("hint-hidden", ".x")),
    ("hint-long", "hint-long", hint("hint-long", "h" * 97)),
    ("hint-nonce-space", "hint-nonce-space",
     hint("hint-nonce-space", f"\"a {N2}\"")),
    ("out-unknown-key", "out-unknown-key",
     mission("out-unknown-key", outputs=f"  - {{type: vault-note, folder: "
             f"{INBOX}/out-unknown-key, filenameHint: x, path: /etc}}\n",
             perms="[vault-write]")),
    ("out-bad-type", "out-bad-type",
     mission("out-bad-type", outputs="  - {type: shell, event: x}\n")),
    ("out-event-bad", "out-event-bad",
     mission("out-event-bad", outputs="  - {type: event, event: ../X}\n")),
    ("out-none", "out-none", mission("out-none", outputs="  []\n")),
    ("out-nine", "out-nine", mission("out-nine", outputs=EV * 9)),
    ("perm-unknown", "perm-unknown", mission("perm-unknown", perms="[root]")),
    ("perm-twice", "perm-twice",
     mission("perm-twice", perms="[event-emit, event-emit]")),
    ("perm-star", "perm-star", mission("perm-star", perms="\"*\"")),
    ("agent-missing", "agent-missing",
     mission("agent-missing", f"nobody{N3}")),
    ("agent-dotdot", "agent-dotdot", mission("agent-dotdot", "\"../hermes\"")),
    ("agent-case", "agent-case", mission("agent-case", "HERMES")),
    ("timeout-zero", "timeout-zero",
     mission("timeout-zero", extra="timeoutMs: 0\n")),
    ("timeout-huge", "timeout-huge",
     mission("timeout-huge", extra="timeoutMs: 3600001\n")),
    ("timeout-text", "timeout-text",
     mission("timeout-text", extra="timeoutMs: 1h\n")),
    ("label-escape", "label-escape",
     mission("label-escape", label="\"\\e[2J\\e]0;owned\\a\"")),
    ("label-long", "label-long", mission("label-long", label="l" * 81)),
    ("id-dotdot", None, mission("../x")),
    ("id-upper", None, mission("Upper")),
    ("id-leading-dash", None, mission("-dash")),
    ("id-long", None, mission("a" * 65)),
    ("id-number", None, mission("12345")),
    ("dup-key", "dup-key",
     mission("dup-key", prompt='"say hi"\nprompt: "--help"')),
    ("yaml-alias", "yaml-alias",
     "base: &b {x: 1}\n" + mission("yaml-alias")),
    ("yaml-broken", None, "id: [unclosed\n"),
    ("yaml-list", None, "- id: yaml-list\n"),
    ("yaml-empty", None, ""),
    ("yaml-deep", None, "a: " + "[" * 40 + "]" * 40 + "\n"),
    ("dup-id-one", "twin", mission("twin", label="Twin one")),
    ("dup-id-two", "twin", mission("twin", label="Twin two")),
]
BAD_IDS = {b[1] for b in BAD if b[1]}
SKIPPED = {"yaml-empty"}  # an empty file: reported at 0:0
# The spawner reads at most 64 mission files: the module's home holds the
# good ones, the special files below and every third hostile one (and
# both twins); `cordon check` sees every hostile file, in homes of 50.
IN_WORLD = {b[0] for i, b in enumerate(BAD) if i % 3 == 0} | {
    "dup-id-one", "dup-id-two"}
BATCH = 50


def write_missions(mdir, base, outside):
    mdir.mkdir(parents=True)
    for name, text in GOOD.items():
        (mdir / f"{name}.yaml").write_text(text)
    for name, _, text in BAD:
        if name in IN_WORLD:
            (mdir / f"{name}.yaml").write_text(text)
    # Files the loader must refuse without reading what they point at.
    os.symlink(base / "operator" / ".ssh" / "id_rsa", mdir / "key.yaml")
    (outside / "linked.yaml").write_text(mission("linked"))
    os.symlink(outside / "linked.yaml", mdir / "linked.yaml")
    os.mkfifo(mdir / "fifo-file.yaml")
    (mdir / "dir.yaml").mkdir()
    (mdir / "dir.yaml" / "x.yaml").write_text(mission("indir"))
    (mdir / "huge.yaml").write_text(mission("huge") + "#" * (1 << 20))
    # Not mission files at all: ignored, never loaded.
    (mdir / ".hidden.yaml").write_text(mission("hidden"))
    (mdir / "other.yml").write_text(mission("other"))
    (mdir / "backup.yaml~").write_text(mission("backup"))


def check(home):
    return subprocess.run([cordon_bin(), "check", "--home", str(home)],
                          capture_output=True, text=True, env=child_env(),
                          timeout=HTTP_S)


REFUSED_FILES = ["key", "linked", "fifo-file", "dir", "huge"]
IGNORED_IDS = ["hidden", "other", "backup", "indir", "linked", "huge"]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    base = tmp_path_factory.mktemp("attack")
    # A place beside everything for the symlinked mission's target.
    spare = base / "spare"
    spare.mkdir()
    write_missions(base / "home" / "missions", base, spare)
    clock = base / "clock"
    clock.write_text(f"{CLOCK}\n")
    try:
        w = World(base, mp, env={"CORDON_TEST_CLOCK_FILE": str(clock)})
    except BaseException:
        mp.undo()
        raise
    w.nonces.update(FILE_NONCES)
    try:
        # The scheduler's one write (the frozen slot) happens before any
        # case takes its snapshot.
        state = os.path.join(w.home, "state", "sched", "missions.json")
        deadline = time.monotonic() + HTTP_S
        while not os.path.exists(state) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.path.exists(state), w.c.stderr()
        plant(w)
        yield w
    finally:
        try:
            w.stop()
        finally:
            mp.undo()
            shutil.rmtree(base, ignore_errors=True)


def plant(w):
    """Folders the traps go in (inside the inbox, which cordon may write;
    what the traps point at is outside and snapshotted).  The traps are
    set and removed by their cases: the invariants read every note."""
    v = os.path.join(w.vault, INBOX)
    for d in ("fifo", "linkname", "swap"):
        os.makedirs(os.path.join(v, d))


@pytest.fixture(scope="module")
def checked(world):
    """`cordon check` on the module's home, once."""
    return check(world.home)


@pytest.fixture(scope="module")
def batches(world):
    """Every hostile file checked in homes of BATCH beside valid agents:
    file name -> (the check's result, the missions dir as it prints)."""
    out = {}
    for k in range(0, len(BAD), BATCH):
        home = make_agents_home(world.base, f"check{k}")
        (home / "missions").mkdir()
        for name, _, text in BAD[k:k + BATCH]:
            (home / "missions" / f"{name}.yaml").write_text(text)
        r = check(home)
        mdir = os.path.join(str(home.resolve()), "missions")
        for name, _, _ in BAD[k:k + BATCH]:
            out[name] = (r, mdir)
    return out


def marker(world):
    return world.base / "home.marks" / "marker"


@pytest.fixture
def mark(world):
    m = marker(world)
    if m.exists():
        m.unlink()
    return m


def mission_run(c, mid, body=None, raw=None):
    return post_json(c, f"/api/missions/{mid}/run",
                     {} if body is None and raw is None else body, raw)


def listing(c):
    r = c.request("GET", "/api/missions")
    assert r is not None and r.status == 200, r
    return {m["id"]: m for m in r.json()["missions"]}


def result(r, status, ec=None):
    """A 200 run answer of this status and class, neutral keys only."""
    assert r is not None and r.status == 200, r
    b = r.json()
    assert set(b) <= RESULT_KEYS, b
    assert b["status"] == status and b.get("errorClass") == ec, b
    assert b["ok"] is (status == "success"), b
    assert re.fullmatch(r"[0-9a-f]{16}", b["runId"]), b
    return b


def notes(world, mid):
    out = {}
    d = os.path.join(world.vault, INBOX, mid)
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as f:
                    out[os.path.relpath(p, d)] = f.read()
    return out


def clear_notes(world, mid):
    d = os.path.join(world.vault, INBOX, mid)
    for n in os.listdir(d) if os.path.isdir(d) else ():
        p = os.path.join(d, n)
        if os.path.isfile(p) and not os.path.islink(p):
            os.unlink(p)


def run_record(world, run_id):
    deadline = time.monotonic() + HTTP_S
    while time.monotonic() < deadline:
        recs = [x for x in audit_records(world.home, "mission.run")
                if x["runId"] == run_id]
        if recs:
            assert len(recs) == 1 and set(recs[0]) <= RECORD_KEYS, recs
            return recs[0]
        time.sleep(0.05)
    raise AssertionError("no mission.run record")


# ---- MI-1: hostile mission files, each refused alone ----

@pytest.mark.parametrize("name,mid,text", BAD, ids=[b[0] for b in BAD])
def test_mi1_hostile_file_refused_at_load(c, world, batches, name, mid,
                                          text):
    checked, mdir = batches[name]
    pre = f"{mdir}/{name}.yaml:"
    mine = [ln for ln in checked.stdout.splitlines() if ln.startswith(pre)]
    assert checked.returncode == 1
    assert mine, (name, checked.stdout[-2000:])
    for ln in mine:  # FILE:LINE:COL: message
        line, col, msg = ln[len(pre):].split(":", 2)
        assert line.isdigit() and col.isdigit() and msg.strip(), ln
        if name not in SKIPPED:
            assert int(line) >= 1, ln
    if name in IN_WORLD:  # the spawner disabled it, with its place
        assert re.search(rf"missions/{re.escape(name)}\.yaml:\d+:\d+: ",
                         c.stderr()), name
    for n in FILE_NONCES:  # no value of a file is quoted back
        assert n not in checked.stdout + checked.stderr
        assert n not in c.stderr()
    if mid is not None:
        assert mid not in listing(c)
        r = mission_run(c, mid)
        assert (r.status, r.json()) == (404, err("mission-not-found")), r


@pytest.mark.parametrize("name", REFUSED_FILES)
def test_mi1_link_fifo_dir_or_huge_file_refused(c, world, checked, name):
    """A symlink (to the operator's key, to a valid mission), a FIFO, a
    folder and a file over 1 MiB named *.yaml: refused unread, and the
    key's bytes are never quoted."""
    mdir = os.path.join(str(world.home.resolve()), "missions")
    assert f"{mdir}/{name}.yaml:" in checked.stdout
    assert f"missions/{name}.yaml:" in c.stderr()
    for blob in (checked.stdout, checked.stderr, c.stderr()):
        assert "attack-decoy-key" not in blob and "OPENSSH" not in blob


def test_mi1_good_missions_untouched_by_hostile_neighbours(c, checked):
    ms = listing(c)
    assert set(ms) == set(GOOD), sorted(set(ms) ^ set(GOOD))
    for mid in IGNORED_IDS + sorted(BAD_IDS):
        assert mid not in ms
    assert "/.hidden.yaml" not in checked.stdout
    assert "other.yml" not in checked.stdout
    assert "backup.yaml~" not in checked.stdout
    # The twins are both disabled, each reported.
    assert "both disabled" in checked.stdout
    n = ms["nightly"]
    assert n["manual"] is False and n["cron"] == "0 3 * * *"
    assert n["timezone"] == "Europe/Berlin"


def test_mi1_check_in_a_home_with_the_fifo_returns(c, tmp_path):
    """`cordon check` on a home whose only mission file is a FIFO that
    nobody writes: answers promptly (the loader never blocks)."""
    home = tmp_path / "h"
    (home / "agents").mkdir(parents=True)
    (home / "missions").mkdir()
    os.mkfifo(home / "missions" / "x.yaml")
    t0 = time.monotonic()
    r = subprocess.run([cordon_bin(), "check", "--home", str(home)],
                       capture_output=True, text=True, env=child_env(),
                       timeout=HTTP_S)
    assert r.returncode == 1 and "x.yaml:" in r.stdout, r
    assert time.monotonic() - t0 < HTTP_S


def test_mi4_listing_holds_no_folder_hint_or_file_value(c):
    r = c.request("GET", "/api/missions")
    assert r.status == 200, r
    raw = r.body.decode()
    for bad in ("00_Inbox", "folder", "filenameHint", "hint", "prompt",
                "say ", "marked.marks", "/tmp", "attack-decoy"):
        assert bad not in raw, bad
    for n in FILE_NONCES:
        assert n not in raw


# ---- API-7 / MI-3: ids ----

IDS = [
    # (id, target segment, status, code)
    ("unknown", "nope", 404, "mission-not-found"),
    ("nonce", "{n}", 404, "mission-not-found"),
    ("upper", "MARK", 400, "mission-id-malformed"),
    ("mixed-case", "Mark", 400, "mission-id-malformed"),
    ("leading-dash", "-mark", 400, "mission-id-malformed"),
    ("trailing-dash", "mark-", 404, "mission-not-found"),
    ("dotdot", "..", 400, "mission-id-malformed"),
    ("enc-dotdot", "%2e%2e", 400, "mission-id-malformed"),
    ("enc-slash", "mark%2f..%2fmark", 400, "mission-id-malformed"),
    ("enc-backslash", "mark%5c", 400, "mission-id-malformed"),
    ("double-enc", "%256dark", 400, "mission-id-malformed"),
    ("nul", "mark%00", 400, "mission-id-malformed"),
    ("nul-mid", "ma%00rk", 400, "mission-id-malformed"),
    ("bad-pct", "%zz", 400, "mission-id-malformed"),
    ("short-pct", "mark%2", 400, "mission-id-malformed"),
    ("lone-pct", "%", 400, "mission-id-malformed"),
    ("overlong-dot", "%c0%ae%c0%ae", 400, "mission-id-malformed"),
    ("utf8", "m%c3%a4rk", 400, "mission-id-malformed"),
    ("fullwidth", "%ef%bd%8dark", 400, "mission-id-malformed"),
    ("space", "mark%20", 400, "mission-id-malformed"),
    ("newline", "mark%0a", 400, "mission-id-malformed"),
    # Outside the router's segment charset or length: the route still
    # answers, 400 like any malformed id, and never calls the handler.
    ("plus", "mark+", 400, "mission-id-malformed"),
    ("star", "mark*", 400, "mission-id-malformed"),
    ("bang", "mark!", 400, "mission-id-malformed"),
    ("dollar", "$mark", 400, "mission-id-malformed"),
    ("amp", "mark&x=1", 400, "mission-id-malformed"),
    ("quote", "mark'", 400, "mission-id-malformed"),
    ("parens", "(mark)", 400, "mission-id-malformed"),
    ("comma", "mark,mark", 400, "mission-id-malformed"),
    ("semicolon", "mark;x", 400, "mission-id-malformed"),
    ("equals", "mark=", 400, "mission-id-malformed"),
    ("colon", "mark:", 400, "mission-id-malformed"),
    ("at", "mark@evil", 400, "mission-id-malformed"),
    ("dot", "mark.yaml", 400, "mission-id-malformed"),
    ("len-64", "a" * 64, 404, "mission-not-found"),
    ("len-65", "a" * 65, 400, "mission-id-malformed"),
    ("len-128", "a" * 128, 400, "mission-id-malformed"),
    ("len-129", "a" * 129, 400, "mission-id-malformed"),
    ("len-300", "a" * 300, 400, "mission-id-malformed"),
    ("len-300-plus", "a" * 299 + "+", 400, "mission-id-malformed"),
    ("len-7000", "a" * 7000, 400, "mission-id-malformed"),
    ("disabled-twin", "twin", 404, "mission-not-found"),
    ("disabled-file", "unknown-top", 404, "mission-not-found"),
    ("cron-only", "nightly", 404, "mission-not-found"),
    ("ignored-hidden", "hidden", 404, "mission-not-found"),
    ("symlinked", "linked", 404, "mission-not-found"),
]


@pytest.mark.parametrize("seg,status,code", [r[1:] for r in IDS],
                         ids=[r[0] for r in IDS])
def test_api7_hostile_mission_id(c, world, mark, seg, status, code):
    r = mission_run(c, seg.replace("{n}", world.nonce()))
    assert r is not None and (r.status, r.json()) == (status, err(code)), r
    assert not mark.exists(), "a refused id started an agent"


def test_api7_id_decoded_once_runs_the_mission(c, world, mark):
    """%6d is "m": decoded once, the id is `mark` and it runs."""
    r = mission_run(c, "%6dark", {"options": {"topic": "x"}})
    result(r, "success")
    assert mark.exists()


ROUTES = [
    ("get-run", "GET", "/api/missions/mark/run", 405, "method-not-allowed"),
    ("trailing-slash", "POST", "/api/missions/mark/run/", 404, "not-found"),
    ("dot-segment", "POST", "/api/missions/mark/./run", 404, "not-found"),
    ("dotdot-segment", "POST", "/api/missions/x/../mark/run", 404,
     "not-found"),
    ("empty-id", "POST", "/api/missions//run", 404, "not-found"),
    ("extra-segment", "POST", "/api/missions/mark/run/x", 404, "not-found"),
    ("get-run-malformed", "GET", "/api/missions/mark+/run", 405,
     "method-not-allowed"),
    ("malformed-extra-segment", "POST", "/api/missions/mark+/run/x", 404,
     "not-found"),
    ("malformed-no-run", "POST", "/api/missions/mark+", 404, "not-found"),
    ("post-list", "POST", "/api/missions", 405, "method-not-allowed"),
]


@pytest.mark.parametrize("method,target,status,code",
                         [r[1:] for r in ROUTES], ids=[r[0] for r in ROUTES])
def test_api7_hostile_route(c, mark, method, target, status, code):
    r = c.request(method, target,
                  headers=[("Content-Type", "application/json")],
                  body=b"{}" if method == "POST" else b"")
    assert r is not None and (r.status, r.json()) == (status, err(code)), r
    assert not mark.exists()


# ---- API-7 / MI-3: bodies and option values, aimed at `mark` ----

def deep(n):
    return b"[" * n + b"]" * n


BODIES = [
    # (id, raw body, status, code)
    ("unknown-key", b'{"prompt":"--help"}', 400, "invalid-body"),
    ("options-and-more", b'{"options":{},"args":["-x"]}', 400,
     "invalid-body"),
    ("options-array", b'{"options":[]}', 400, "invalid-body"),
    ("options-string", b'{"options":"topic=x"}', 400, "invalid-body"),
    ("options-null", b'{"options":null}', 400, "invalid-body"),
    ("options-number", b'{"options":1}', 400, "invalid-body"),
    ("dup-options", b'{"options":{"topic":"a"},"options":{"topic":"b"}}',
     400, "invalid-body"),
    ("dup-option-key", b'{"options":{"topic":"a","topic":"--help"}}', 400,
     "invalid-body"),
    ("key-case", b'{"Options":{}}', 400, "invalid-body"),
    ("proto", b'{"__proto__":{"topic":"x"}}', 400, "invalid-body"),
    ("raw-ff", b'{"options":{"topic":"\xff"}}', 400, "invalid-body"),
    ("overlong-slash", b'{"options":{"topic":"\xc0\xaf"}}', 400,
     "invalid-body"),
    ("overlong-nul", b'{"options":{"topic":"a\xc0\x80b"}}', 400,
     "invalid-body"),
    ("overlong-dots", b'{"options":{"topic":"\xe0\x80\xae\xe0\x80\xae"}}',
     400, "invalid-body"),
    ("utf8-surrogate", b'{"options":{"topic":"\xed\xa0\x80"}}', 400,
     "invalid-body"),
    ("above-10ffff", b'{"options":{"topic":"\xf4\x90\x80\x80"}}', 400,
     "invalid-body"),
    ("invalid-in-key", b'{"options":{"to\xffpic":"x"}}', 400,
     "invalid-body"),
    ("raw-nul", b'{"options":{"topic":"a\x00b"}}', 400, "invalid-body"),
    ("raw-newline", b'{"options":{"topic":"a\nb"}}', 400, "invalid-body"),
    ("escaped-nul-key", b'{"options":{"topic\\u0000":"x"}}', 400,
     "invalid-body"),
    ("bom", b'\xef\xbb\xbf{}', 400, "invalid-body"),
    ("nan", b'{"options":{"n":NaN}}', 400, "invalid-body"),
    ("infinity", b'{"options":{"n":Infinity}}', 400, "invalid-body"),
    ("huge-exponent", b'{"options":{"n":1e999999}}', 400, "invalid-body"),
    ("deep-option", b'{"options":{"topic":' + deep(5000) + b"}}", 400,
     "invalid-body"),
    ("deep-object", b'{"options":' * 3000 + b"{}" + b"}" * 3000, 400,
     "invalid-body"),
    ("deep-100k", deep(100000), 400, "invalid-body"),
    ("trailing-garbage", b'{} x', 400, "invalid-body"),
    ("two-objects", b'{}{"options":{}}', 400, "invalid-body"),
    ("trailing-comma", b'{"options":{"topic":"x",}}', 400, "invalid-body"),
    ("comment", b'{/* c */}', 400, "invalid-body"),
    ("single-quotes", b"{'options':{}}", 400, "invalid-body"),
    ("empty", b"", 400, "invalid-body"),
    ("null", b"null", 400, "invalid-body"),
    ("array", b"[{}]", 400, "invalid-body"),
    ("string", b'"{}"', 400, "invalid-body"),
]


@pytest.mark.parametrize("body,status,code", [b[1:] for b in BODIES],
                         ids=[b[0] for b in BODIES])
def test_api7_hostile_run_body(c, world, mark, body, status, code):
    r = mission_run(c, "mark", raw=body)
    assert r is not None and (r.status, r.json()) == (status, err(code)), r
    assert not mark.exists(), "a refused body started the agent"


# Option values refused by the schema: 400 mission-options-invalid,
# nothing echoed (the nonce is in each), nothing started.
def _opts():
    n = "{n}"
    return [
        ("unknown-option", {"topic": "x", "bin": f"/bin/sh{n}"}),
        ("unknown-only", {f"x{n}": 1}),
        ("missing-required", {"n": 2}),
        ("no-options", None),
        ("topic-number", {"topic": 5}),
        ("topic-array", {"topic": [f"a{n}"]}),
        ("topic-object", {"topic": {"x": n}}),
        ("topic-null", {"topic": None}),
        ("topic-bool", {"topic": True}),
        ("topic-empty", {"topic": ""}),
        ("topic-65", {"topic": n + "x" * 65}),
        ("topic-65-emoji", {"topic": "\U0001F600" * 65}),
        ("topic-newline", {"topic": f"a\n{n}"}),
        ("topic-cr", {"topic": f"a\r{n}"}),
        ("topic-tab", {"topic": f"a\t{n}"}),
        ("topic-esc", {"topic": f"\x1b[2J{n}"}),
        ("topic-del", {"topic": f"a\x7f{n}"}),
        ("topic-c1", {"topic": f"a\x9b{n}"}),
        ("topic-u2028", {"topic": f"a\u2028{n}"}),
        ("topic-nul", {"topic": f"a\x00{n}"}),
        ("n-string", {"topic": "x", "n": "5"}),
        ("n-float", {"topic": "x", "n": 5.0}),
        ("n-bool", {"topic": "x", "n": True}),
        ("n-zero", {"topic": "x", "n": 0}),
        ("n-eleven", {"topic": "x", "n": 11}),
        ("n-negative", {"topic": "x", "n": -1}),
        ("n-int64-max", {"topic": "x", "n": 9223372036854775807}),
        ("n-int64-min", {"topic": "x", "n": -9223372036854775808}),
        ("n-huge", {"topic": "x", "n": 10 ** 30}),
        ("loud-string", {"topic": "x", "loud": "true"}),
        ("loud-int", {"topic": "x", "loud": 1}),
        ("tone-outside", {"topic": "x", "tone": f"loud{n}"}),
        ("tone-case", {"topic": "x", "tone": "Plain"}),
        ("tone-space", {"topic": "x", "tone": "plain "}),
        ("tone-nul", {"topic": "x", "tone": "plain\x00"}),
        ("tone-array", {"topic": "x", "tone": ["plain"]}),
        ("word-dotdot", {"topic": "x", "word": "../../etc"}),
        ("word-absolute", {"topic": "x", "word": "/etc/passwd"}),
        ("word-encoded", {"topic": "x", "word": "%2e%2e"}),
        ("word-flag", {"topic": "x", "word": "--dangerously"}),
        ("word-upper", {"topic": "x", "word": "ABC"}),
        ("word-17", {"topic": "x", "word": "a" * 17}),
    ]


OPTS = _opts()


@pytest.mark.parametrize("opts", [o[1] for o in OPTS],
                         ids=[o[0] for o in OPTS])
def test_mi3_hostile_options_refused(c, world, mark, opts):
    nonce = world.nonce()
    if opts is None:
        body = json.dumps({})
    else:
        body = json.dumps({"options": opts}).replace("{n}", nonce)
    before = len(audit_records(world.home, "mission.run"))
    r = mission_run(c, "mark", raw=body.encode())
    assert r is not None and (r.status, r.json()) == (
        400, err("mission-options-invalid")), r
    assert not mark.exists(), "refused options started the agent"
    # The refusal is audited, neutral (MI-4).
    deadline = time.monotonic() + HTTP_S
    while time.monotonic() < deadline:
        recs = audit_records(world.home, "mission.run")
        if len(recs) > before:
            break
        time.sleep(0.05)
    rec = recs[-1]
    assert rec["missionId"] == "mark" and rec["status"] == "error"
    assert rec["errorClass"] == "options-invalid", rec
    assert set(rec) <= RECORD_KEYS, rec


FLAGS = ["--dangerously-skip-permissions", "-rf", "--model=evil", "-",
         "--", "-p /etc/passwd"]


@pytest.mark.parametrize("value", FLAGS, ids=range(len(FLAGS)))
def test_mi3_sp3_flag_like_whole_prompt_refused(c, world, mark, value):
    """A template that is one placeholder: a flag-like value would stand
    as the agent's own argument; refused, nothing started (SP-3)."""
    r = mission_run(c, "markbare", {"options": {"topic": value}})
    assert (r.status, r.json()) == (400, err("mission-options-invalid")), r
    assert not mark.exists()


@pytest.mark.parametrize("mid", ["fused", "stdin"])
def test_mi3_sp3_flag_like_value_delivered_whole(c, world, mid):
    """Fused (`--prompt={prompt}`) and stdin agents take the same value
    as data, whole, in one place."""
    clear_notes(world, mid)
    v = "--dangerously-skip-permissions --yolo ../../etc"
    result(mission_run(c, mid, {"options": {"topic": v}}), "success")
    (body,) = notes(world, mid).values()
    want = f"--prompt={v}" if mid == "fused" else f"chars: {v}"
    # The note holds the text literally, its punctuation escaped (VA-5).
    plain = re.sub(rb"\\([!-/:-@\[-`{-~])", rb"\1", body)
    assert want.encode() in plain, body


VALUES = ["../../../../etc/cron.d/x", "/etc/passwd", "%2e%2e%2f%2e%2e",
          "{path}{topic}{prompt}", "x.md\u202egpj", "a/b\\c",
          "name: x\n"[:-1] + " --- type: evil", "sk-ant-api03-{n}AAAA"]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_mi2_va5_option_values_never_shape_names(c, world, value):
    """Path-, template- and secret-shaped option values end up as text in
    the note, never in its name or front matter, and never in audit."""
    clear_notes(world, "names")
    value = value.replace("{n}", world.nonce())
    b = result(mission_run(c, "names", {"options": {"path": value}}),
               "success")
    assert b["outputsPersisted"] == 1
    got = notes(world, "names")
    assert list(got) == [f"names-{DATE}.md"], got
    # A mission note is the answer alone: no front matter to forge.
    assert got[f"names-{DATE}.md"].startswith(b"hermes heard "), got
    rec = run_record(world, b["runId"])
    assert value not in json.dumps(rec)


def test_mi3_pattern_cannot_stall_the_spawner(c, world, mark):
    """A 4096-char value against an alternation under a star: answered
    promptly, and the daemons answer meanwhile."""
    t0 = time.monotonic()
    r = mission_run(c, "redos", {"options": {"v": "a" * 4095 + "c"}})
    assert (r.status, r.json()) == (400, err("mission-options-invalid")), r
    assert time.monotonic() - t0 < 5
    assert not mark.exists()


def test_mi3_largest_values_render_and_run(c, world):
    """maxLength 4096 in 4-byte code points: accepted as characters."""
    r = mission_run(c, "markbare", {"options": {"topic": "\U0001F600" * 4096}})
    result(r, "success")
    r = mission_run(c, "markbare",
                    {"options": {"topic": "\U0001F600" * 4097}})
    assert (r.status, r.json()) == (400, err("mission-options-invalid")), r


# ---- MI-2: permissions before anything runs ----

@pytest.mark.parametrize("mid", ["marknoperm", "markext", "markhalf"])
def test_mi2_undeclared_permission_denies_before_start(c, world, mark, mid):
    b = result(mission_run(c, mid), "denied", "permission-denied")
    assert b["outputsPersisted"] == 0 and b["outputsEmitted"] == 0
    assert not mark.exists(), "a denied mission started its agent"
    assert notes(world, mid) == {}
    rec = run_record(world, b["runId"])
    assert rec["status"] == "denied"
    assert not [x for x in audit_records(world.home, "agent.invoke")
                if x["runId"] == b["runId"]]


# ---- runs: hostile agents ----

def test_mi_agent_never_exits_is_stopped_at_timeout(c, world):
    t0 = time.monotonic()
    b = result(mission_run(c, "neverexit"), "error", "timeout")
    assert time.monotonic() - t0 < 1.5 + 2 + GRACE + 2
    assert b["outputsEmitted"] == 0


@pytest.mark.parametrize("mode", ["setsid", "daemonize", "neverexit"])
def test_mi_agent_leaving_its_group_leaves_nothing(c, world, mode):
    """The invariants count what is left after the case."""
    r = mission_run(c, "leave", {"options": {"mode": mode}})
    assert r.status == 200, r
    assert r.json()["status"] in ("success", "error"), r


def test_mi_flood_is_bounded(c, world):
    clear_notes(world, "flood")
    t0 = time.monotonic()
    r = mission_run(c, "flood")
    assert r is not None and r.status == 200, r
    assert time.monotonic() - t0 < 8 + 2 + GRACE
    b = r.json()
    assert b["status"] in ("success", "error"), b
    for body in notes(world, "flood").values():
        assert len(body) <= 4 * 1024 * 1024, len(body)


HOWS = ["raw", "split", "longline", "ansi", "crlf", "many", "env"]


@pytest.mark.parametrize("how", HOWS)
def test_mi_secret_printed_by_agent_scrubbed_from_note(c, world, how):
    """The invariants check every note for the secret; the note must be
    there for that to mean anything."""
    clear_notes(world, "secret")
    b = result(mission_run(c, "secret", {"options": {"how": how}}),
               "success")
    assert b["outputsPersisted"] == 1
    (body,) = notes(world, "secret").values()
    assert FILE_SECRET.encode() not in body
    assert FILE_SECRET[:16].encode() not in body


def test_mi_secret_on_stderr_fails_cleanly(c, world):
    clear_notes(world, "secret")
    b = result(mission_run(c, "secret", {"options": {"how": "stderr"}}),
               "error", "non-zero-exit")
    assert b["outputsPersisted"] == 0 and notes(world, "secret") == {}


def test_mi_escape_sequences_cleaned_from_note(c, world):
    clear_notes(world, "escape")
    result(mission_run(c, "escape"), "success")
    (body,) = notes(world, "escape").values()
    for bad in (b"\x1b", b"\xc2\x9b", b"\x07", b"\r", b"\x00", b"\x08",
                b"\x7f", b"\x0b", b"\x0c"):
        assert bad not in body, bad


# ---- runs: output folders and note names ----

def test_mi_fifo_in_place_of_the_note_fails_without_blocking(c, world):
    p = os.path.join(world.vault, INBOX, "fifo", f"f-{DATE}.md")
    os.mkfifo(p)
    try:
        t0 = time.monotonic()
        b = result(mission_run(c, "fifo"), "error", "output-failed")
        assert b["outputsPersisted"] == 0
        assert time.monotonic() - t0 < HTTP_S
        # vaultd still answers.
        assert c.request("GET", "/api/vault/notes").status == 200
    finally:
        os.unlink(p)


def test_mi_symlink_in_place_of_the_note_is_never_followed(c, world):
    p = os.path.join(world.vault, INBOX, "linkname", f"l-{DATE}.md")
    os.symlink(world.outside / "keep.txt", p)
    try:
        b = result(mission_run(c, "linkname"), "error", "output-failed")
        assert b["outputsPersisted"] == 0
        assert os.readlink(p) == str(world.outside / "keep.txt")
    finally:
        os.unlink(p)


@pytest.mark.parametrize("what", ["folder", "missions"])
def test_mi_output_folder_swapped_for_symlink(c, world, what):
    if what == "folder":
        d = os.path.join(world.vault, INBOX, "swap")
    else:
        d = os.path.join(world.vault, INBOX)
    os.rename(d, d + ".real")
    os.symlink(world.outside, d)
    try:
        b = result(mission_run(c, "swap"), "error", "output-failed")
        assert b["outputsPersisted"] == 0
        assert sorted(os.listdir(world.outside)) == ["keep.txt"]
    finally:
        os.unlink(d)
        os.rename(d + ".real", d)


def test_mi_output_folder_planted_as_file(c, world):
    d = os.path.join(world.vault, INBOX, "deep", "a")
    os.makedirs(os.path.dirname(d), exist_ok=True)
    with open(d, "w") as f:
        f.write("in the way\n")
    try:
        b = result(mission_run(c, "deep"), "error", "output-failed")
        assert b["outputsPersisted"] == 0
    finally:
        os.unlink(d)


def test_mi_deep_folder_written_beneath_the_mission_only(c, world):
    b = result(mission_run(c, "deep"), "success")
    assert b["outputsPersisted"] == 1
    assert list(notes(world, "deep")) == [f"a/b/c/d/d-{DATE}.md"]


# ---- runs: agents that cannot run ----

def test_mi_agent_missing_secret_unavailable(c, world):
    r = mission_run(c, "needkey")
    assert (r.status, r.json()) == (409, err("agent-unavailable")), r


def test_mi_agent_binary_missing_spawn_failed(c, world):
    result(mission_run(c, "nobin"), "error", "spawn-failed")


# ---- runs: concurrency and disconnects ----

def test_mi_concurrent_runs_of_one_mission(c, world):
    """Eight at once: one runs, the others are refused busy."""
    out = []

    def go():
        out.append(mission_run(c, "slow"))

    ts = [threading.Thread(target=go) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(HTTP_S)
    assert len(out) == 8 and all(r is not None for r in out), out
    ok = [r for r in out if r.status == 200]
    busy = [r for r in out if r.status == 409]
    assert len(ok) == 1 and len(busy) == 7, [r.status for r in out]
    assert ok[0].json()["status"] == "success"
    assert all(r.json() == err("mission-busy") for r in busy)


def test_mi_disconnect_does_not_stop_or_duplicate_a_run(c, world):
    """The client hangs up: the run finishes and is recorded once; a run
    meanwhile is busy."""
    before = len([x for x in audit_records(world.home, "mission.run")
                  if x["missionId"] == "slow"])
    body = b"{}"
    req = (f"POST /api/missions/slow/run HTTP/1.1\r\nHost: 127.0.0.1:"
           f"{c.port}\r\nAuthorization: Bearer {c.token}\r\n"
           "Content-Type: application/json\r\n"
           f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    with socket.create_connection(("127.0.0.1", c.port), timeout=5) as s:
        s.sendall(req)
        deadline = time.monotonic() + HTTP_S
        while time.monotonic() < deadline and not listing(c)["slow"][
                "running"]:
            time.sleep(0.05)
    r = mission_run(c, "slow")
    assert (r.status, r.json()) == (409, err("mission-busy")), r
    deadline = time.monotonic() + HTTP_S
    while time.monotonic() < deadline and listing(c)["slow"]["running"]:
        time.sleep(0.05)

    def slow_records():
        return [x for x in audit_records(world.home, "mission.run")
                if x["missionId"] == "slow"]
    # mission.run is sent as the run ends and written on auditd's next
    # pass: it may land just after the listing says the run is over.
    deadline = time.monotonic() + HTTP_S
    while time.monotonic() < deadline and len(slow_records()) <= before:
        time.sleep(0.05)
    time.sleep(0.3)  # a duplicate would come with the first
    recs = slow_records()
    assert len(recs) == before + 1, recs
    last = listing(c)["slow"]["lastRun"]
    assert last["runId"] == recs[-1]["runId"] and last["status"] == "success"


def test_mi_runs_of_other_missions_while_one_is_busy(c, world):
    out = {}

    def go():
        out["slow"] = mission_run(c, "slow")

    t = threading.Thread(target=go)
    t.start()
    deadline = time.monotonic() + HTTP_S
    while time.monotonic() < deadline and not listing(c)["slow"]["running"]:
        time.sleep(0.05)
    result(mission_run(c, "markbare", {"options": {"topic": "x"}}),
           "success")
    t.join(HTTP_S)
    result(out["slow"], "success")


# ---- MI-4: the trail after the attack ----

def test_mi4_records_neutral_and_listing_holds_no_value(c, world):
    n = world.nonce()
    result(mission_run(c, "names", {"options": {"path": f"p{n}"}}),
           "success")
    recs = audit_records(world.home, "mission.run")
    assert recs
    for rec in recs:
        assert set(rec) <= RECORD_KEYS, rec
        assert rec["trigger"] in ("manual", "cron")
    raw = c.request("GET", "/api/missions").body.decode()
    assert n not in raw
    for m in listing(c).values():
        if "lastRun" in m:
            assert set(m["lastRun"]) <= RESULT_KEYS - {"ok"} | {
                "trigger", "finishedAt"}, m
