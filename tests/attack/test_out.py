# What leaves a run for the operator's eyes (MC-2, SBX-7, SP-10, SP-11):
# text a hostile agent or caller chooses that cordon would show on the
# operator's terminal (`cordon worktree list`, `cordon status`) or in
# the dashboard, where a C1 control is a terminal's escape, a bidi
# control reorders what the operator reads before deciding, and a known
# value must be masked.  A worktree run's repository path is shown as it
# was given: one holding such a character is refused before anything is
# made.  A health probe's version line may come from the agent's own
# files.  A command held for approval is shown as it would run.  The
# `cordon` commands clean whatever an API answer holds before printing.
# Invariants after every case that uses the module's cordon
# (conftest.py).
import http.server
import json
import os
import subprocess
import threading

import pytest

from agents_util import FILE_SECRET, Stream, post_json, probed, run, \
    wait_audit
from conftest import HOSTILE, child_env, cordon_bin, hostile_manifest, \
    run_world
from test_gate import (decide, gate_manifest, results, verb_runs,
                       wait_approval)
from test_worktree import make_repo


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    # An agent whose earlier run left its key in its write root, and
    # whose health probe (SP-18) prints what it finds there.
    left = tmp_path_factory.mktemp("left")
    (left / "version.txt").write_text(FILE_SECRET + "\n")
    probe = ("healthProbe:\n  type: command\n"
             f"  command: [\"{HOSTILE}\", \"-z\", \"version\"]\n")
    extra = {"wtout": hostile_manifest("wtout", "{ws}",
                                       "  worktrees: true\n"),
             "probeleft": hostile_manifest("probeleft", str(left)) + probe,
             "gatebot": gate_manifest("gatebot", "{ws}",
                                      "commands:\n  askTimeoutSec: 5\n")}
    for w in run_world(tmp_path_factory, extra=extra):
        # cordon's own state/worktrees, made on first use, not by a case
        w.c.request("GET", "/api/worktrees")
        yield w


# A repository's dir name the agent (its write root) or an MCP caller
# could make, each something a terminal or a browser would not show as
# it is: C1 CSI and OSC 52 as code points (U+009B, U+009D ... U+009C),
# NEL, a right-to-left override, an isolate, a zero-width space, a
# no-break space.
SHOWN = {
    "c1csi": "r\u009b2Jq",
    "c1osc52": "r\u009d52;c;aGk=\u009cq",
    "c1nel": "r\u0085q",
    "rlo": "r\u202egpj.q",
    "isolate": "r\u2066q\u2069",
    "zwsp": "r\u200bq",
    "nbsp": "r\u00a0q",
}


@pytest.mark.parametrize("how", sorted(SHOWN))
def test_mc2_repo_path_shown_to_operator_refused(c, world, how):
    repo = make_repo(os.path.join(world.ws, "wtrepo-" + how,
                                  SHOWN[how]))
    r = post_json(c, "/api/agents/wtout/run",
                  {"prompt": "x", "worktree": repo})
    assert r is not None and r.status == 400, r
    assert r.json() == {"ok": False, "error": "worktree-refused",
                        "reason": "not-a-repo"}, r.body
    assert SHOWN[how].encode() not in r.body
    assert c.request("GET", "/api/worktrees").json()["worktrees"] == []


def test_sp11_sp18_probe_version_masks_known_values(c):
    """SP-11, SP-18: a probe runs without secrets, but its version line (shown
    by /api/agents, the dashboard, `cordon status`) may be read from the
    agent's own files: the agent's known values are masked there too."""
    rd = probed(c, "probeleft")
    assert rd.get("version") == "hostile 1.0 ***", rd


# Calls held for the operator (git push asks) whose command line, shown
# with its line breaks as blanks or its words joined as they are, would
# read as something else: an `echo` of harmless words, or a push to the
# remote `origin` of the branch `main`.
HELD = {
    "newline": ({"bash": "echo done\ngit push origin main"},
                "echo done\ngit push origin main"),
    "words": ({"plain": ["git", "push", "origin main", "it's"]},
              "git push 'origin main' 'it'\\''s'"),
}


@pytest.mark.parametrize("how", sorted(HELD))
def test_sbx7_held_command_shown_as_it_runs(c, how):
    """SBX-7: what is shown for approval is exactly what would run."""
    call, shown = HELD[how]
    s = Stream(c, "gatebot", json.dumps([call]))
    s.start()
    try:
        a = wait_approval(c)
        assert len(a) == 1 and a[0]["args"] == shown, a
        assert decide(c, a[0]["id"], "deny").status == 200
        res = results(s.finish())
    finally:
        s.close()
    assert res[0]["exit"] != 0, res


# What a terminal acts on or hides: C0 but tab and newline, DEL, C1 (as
# code points: a JSON answer cannot hold a raw 0x9b), bidi controls.
TERMINAL_BAD = [chr(c) for c in range(0x20) if chr(c) not in "\t\n"] + \
    [chr(c) for c in range(0x7f, 0xa0)] + \
    ["\u202e", "\u2066", "\u2069", "\u200b"]
DIRTY = ("x\u001b]52;c;aGk=\u0007\u009b2J\u009d0;title\u009c"
         "\u001b]8;;https://evil.example\u001b\\y\u202ez\u2066\u200b")


class _Api(http.server.BaseHTTPRequestHandler):
    """A stand-in for a cordon API whose every field is hostile."""

    def do_GET(self):  # noqa: N802
        row = {"id": "w1", "jobId": "j1", "agent": DIRTY, "state": DIRTY,
               "events": 1, "repo": DIRTY, "createdMs": 0}
        body = json.dumps({"ok": True, "jobs": [row],
                           "worktrees": [row]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


@pytest.fixture
def dirty_api(tmp_path):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    tok = tmp_path / "token"
    tok.write_text("a" * 64 + "\n")
    os.chmod(tok, 0o600)
    yield ["--port", str(srv.server_address[1]), "--token-file", str(tok)]
    srv.shutdown()
    srv.server_close()


@pytest.mark.parametrize("cmd", [["job", "list"], ["job", "list", "--json"],
                                 ["worktree", "list"],
                                 ["worktree", "list", "--json"]])
def test_sp10_cli_hands_the_terminal_no_control(dirty_api, cmd):
    """SP-10: whatever a field of the API's answer holds, a `cordon`
    command prints (or hands on as JSON) no escape, control or bidi
    character: every string goes through the one cleaner first."""
    r = subprocess.run([cordon_bin(), *cmd, *dirty_api],
                       capture_output=True, timeout=30, env=child_env())
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "x" in out and "<U+202E>" in out, out
    for ch in TERMINAL_BAD:
        assert ch not in out.replace("\n", "").replace("\t", ""), \
            (hex(ord(ch)), out)


def test_au4_gate_records_name_no_agent_word(c, world):
    """AU-4, SEC-3: a gate call's record names its command or tool only
    when the policy knows the name; a word of the agent's own (a key it
    holds, as a command or a tool name) is in no record (the invariants
    look for the nonce in every audit file)."""
    n = world.nonce()
    before = len(verb_runs(world.home))
    r, ev = run(c, "gatebot", json.dumps([
        {"bash": f"{n} --all"}, {"plain": [n]},
        {"bash": f"./{n} > out.txt"}, {"tool": n, "input": {}},
        {"bash": "ls"}]))
    assert r.status == 200, r
    res = results(ev)
    assert [res[i]["exit"] != 0 for i in range(5)] == [True] * 4 + [False]
    wait_audit(world.home, lambda x: x["kind"] == "verb.run" and
               x["verb"] == "ls")
    recs = verb_runs(world.home)[before:]
    assert [x["verb"] for x in recs] == ["-"] * 4 + ["ls"], recs
