# PER-8: every route that takes a body declares its shape in front.c's
# route table, checked there once before the handler runs.  One table:
# for each such route, a missing required key, a leftover key, a wrong
# type, a non-object, an empty body and oversized strings, each with its
# fixed code; and where a bad path parameter and a bad body meet, which
# is answered first.  A refused body starts nothing and writes no record
# but its own http.request one.  Invariants after every row (conftest.py).
import json
import time

import pytest

from agents_util import audit_records, post_json

SESSION_MAX = 96   # LIM_SESSION_MAX
PATH_MAX = 4096    # LIM_PATH_MAX
PROMPT_MAX = 256000  # LIM_PROMPT_MAX_CHARS
BIG = "a" * 70000


def j(o):
    return json.dumps(o).encode()


def run_rows(target, route):
    """API-3's body, the same on /run and /jobs."""
    return [
        (target, route, b"", "invalid-body"),
        (target, route, b"[]", "invalid-body"),
        (target, route, b'"hi"', "invalid-body"),
        (target, route, b"{", "invalid-body"),
        (target, route, j({}), "invalid-body"),
        (target, route, j({"session": "abc"}), "invalid-body"),
        (target, route, j({"prompt": "hi", "x": 1}), "invalid-body"),
        (target, route, j({"prompt": "hi", "agent": "hermes"}),
         "invalid-body"),
        (target, route, j({"prompt": 1}), "invalid-prompt"),
        (target, route, j({"prompt": None}), "invalid-prompt"),
        (target, route, j({"prompt": "hi", "session": 1}), "invalid-session"),
        (target, route, j({"prompt": "hi", "worktree": 1}),
         "invalid-worktree"),
        (target, route, j({"prompt": "hi", "via": 1}), "invalid-body"),
        (target, route, j({"prompt": "x" * (PROMPT_MAX + 1)}),
         "invalid-prompt"),
        (target, route, j({"prompt": "hi", "session": "a" * (SESSION_MAX + 1)}),
         "invalid-session"),
        (target, route, j({"prompt": "hi", "worktree": "/" + "a" * PATH_MAX}),
         "invalid-worktree"),
        (target, route, j({"prompt": "hi", "via": "mcp" * 3}), "invalid-body"),
        (target, route, j({"prompt": "hi", "via": "cli"}), "invalid-body"),
        (target, route, j({"prompt": "hi", "worktree": "rel"}),
         "invalid-worktree"),
        # Keys are checked in order via, worktree, session, prompt, each
        # its type and its pattern before the next key.
        (target, route, j({"prompt": 1, "via": "cli", "worktree": 1}),
         "invalid-body"),
        (target, route, j({"prompt": 1, "worktree": "rel", "session": 1}),
         "invalid-worktree"),
        (target, route, j({"prompt": 1, "session": "../x"}),
         "invalid-session"),
        (target, route, j({"prompt": 1, "session": "a", "x": 1}),
         "invalid-body"),
    ]


NOBODY = [
    # (target, route): routes that take no input, empty or {}
    ("/api/login-code", "/api/login-code"),
    ("/api/agents/hermes/actions/status", "/api/agents/{}/actions/{}"),
    ("/api/runs/0123456789abcdef/cancel", "/api/runs/{}/cancel"),
    ("/api/jobs/j1/cancel", "/api/jobs/{}/cancel"),
    ("/api/worktrees/w1/remove", "/api/worktrees/{}/remove"),
]

APPROVAL = "/api/approvals/0123456789abcdef"
MISSION = "/api/missions/nightly/run"

ROWS = (
    run_rows("/api/agents/marked/run", "/api/agents/{}/run")
    + run_rows("/api/agents/marked/jobs", "/api/agents/{}/jobs")
    + [(t, r, body, "invalid-body") for t, r in NOBODY
       for body in (j({"x": 1}), b"[]", b"null", b"{", j({"x": BIG}))]
    + [
        (APPROVAL, "/api/approvals/{}", b"", "invalid-body"),
        (APPROVAL, "/api/approvals/{}", b"[]", "invalid-body"),
        (APPROVAL, "/api/approvals/{}", j({}), "invalid-body"),
        (APPROVAL, "/api/approvals/{}", j({"decision": "allow", "x": 1}),
         "invalid-body"),
        (APPROVAL, "/api/approvals/{}", j({"decision": 1}),
         "invalid-decision"),
        (APPROVAL, "/api/approvals/{}", j({"decision": "allowallow"}),
         "invalid-decision"),
        (APPROVAL, "/api/approvals/{}", j({"decision": "maybe"}),
         "invalid-decision"),
        (MISSION, "/api/missions/{}/run", b"", "invalid-body"),
        (MISSION, "/api/missions/{}/run", b'"x"', "invalid-body"),
        (MISSION, "/api/missions/{}/run", j({"x": 1}), "invalid-body"),
        (MISSION, "/api/missions/{}/run", j({"options": {}, "x": 1}),
         "invalid-body"),
        (MISSION, "/api/missions/{}/run", j({"options": []}),
         "invalid-body"),
        (MISSION, "/api/missions/{}/run", j({"options": "a"}),
         "invalid-body"),
        (MISSION, "/api/missions/{}/run",
         j({"options": {"k": "a" * (256 * 1024)}}),
         "mission-options-invalid"),
    ]
)

# A bad path parameter and a bad body: which answers is the route's.
ORDER = [
    ("/api/agents/%2e%2e/run", "/api/agents/{}/run", 404, "unknown-agent"),
    ("/api/agents/%2e%2e/jobs", "/api/agents/{}/jobs", 404,
     "unknown-agent"),
    ("/api/agents/hermes/actions/%2e%2e", "/api/agents/{}/actions/{}", 404,
     "unknown-action"),
    ("/api/runs/%2e%2e/cancel", "/api/runs/{}/cancel", 400, "invalid-body"),
    ("/api/jobs/%2e%2e/cancel", "/api/jobs/{}/cancel", 400,
     "invalid-job-id"),
    ("/api/worktrees/%2e%2e/remove", "/api/worktrees/{}/remove", 400,
     "invalid-worktree-id"),
    ("/api/approvals/XYZ", "/api/approvals/{}", 404, "unknown-approval"),
    ("/api/missions/UPPER/run", "/api/missions/{}/run", 400,
     "mission-id-malformed"),
]


def _refused(c, world, target, route, body, status, code):
    mark = world.base / "home.marks" / "marker"
    if mark.exists():
        mark.unlink()
    before = audit_records(world.home)
    mine = len([r for r in before if r["kind"] == "http.request"
                and r["route"] == route])
    r = post_json(c, target, raw=body)
    assert r is not None and r.status == status, r
    assert r.json() == {"ok": False, "error": code}, r
    # Its own record, and nothing else: no run, job or decision.
    deadline = time.monotonic() + 5
    while True:
        recs = audit_records(world.home)
        got = [x for x in recs if x["kind"] == "http.request"
               and x["route"] == route]
        if len(got) > mine:
            break
        assert time.monotonic() < deadline, "request never audited"
        time.sleep(0.02)
    assert got[-1]["status"] == status, got[-1]
    time.sleep(0.1)
    new = audit_records(world.home)[len(before):]
    assert [x["kind"] for x in new if x["kind"] != "http.request"] == [], new
    assert not mark.exists(), "a refused body started the agent"


@pytest.mark.parametrize("target,route,body,code", ROWS,
                         ids=[f"{r[0]}-{i}" for i, r in enumerate(ROWS)])
def test_per8_declared_body_refused(c, world, target, route, body, code):
    _refused(c, world, target, route, body, 400, code)


@pytest.mark.parametrize("target,route,status,code", ORDER,
                         ids=[r[0] for r in ORDER])
def test_per8_path_and_body_order(c, world, target, route, status, code):
    _refused(c, world, target, route, j({"x": 1}), status, code)


def test_per8_get_body_not_looked_at(c):
    """A route that declares no body (every GET) never reads one."""
    r = c.request("GET", "/api/agents",
                  headers=[("Content-Type", "application/json")],
                  body=b"{not json")
    assert r.status == 200, r
