# What leaves a run for the operator's eyes (MC-2, SBX-7, SP-11): text a
# hostile agent or caller chooses that cordon would show on the
# operator's terminal (`cordon worktree list`, `cordon status`) or in
# the dashboard, where a C1 control is a terminal's escape, a bidi
# control reorders what the operator reads before deciding, and a known
# value must be masked.  A worktree run's repository path is shown as it
# was given: one holding such a character is refused before anything is
# made.  A health probe's version line may come from the agent's own
# files.  Invariants after every case (conftest.py).
import json
import os

import pytest

from agents_util import FILE_SECRET, Stream, post_json, probed
from conftest import HOSTILE, hostile_manifest, run_world
from test_gate import decide, gate_manifest, results, wait_approval
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
