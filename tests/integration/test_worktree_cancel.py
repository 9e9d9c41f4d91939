# Worktree runs (MC-2) are cancellable at every step: the run or job is
# answered with its id before its checkout is made, a cancel (or a
# streamed client that leaves) during the checkout kills the git step,
# removes the partial checkout and ends it cancelled with no agent ever
# started, and a checkout that fails is the run's own failure in its
# stream.  The test hook's pause before the clone is the window.  A
# real cordon, a temp home, the fake `wtagent`.  Touches only the temp
# dirs it makes and sockets to 127.0.0.1.
import json
import os
import re
import socket
import time

import pytest

from agents_util import audit_records, post_json, procs_with_arg, wait_audit
from test_worktree import make_repo, run_wt, wt, wt_env  # noqa: F401

SLOW_STEP = {"CORDON_TEST_WORKTREE_DELAY_MS": "20000"}


def checkouts(c):
    base = os.path.join(c.home, "state", "worktrees")
    return os.listdir(base) if os.path.isdir(base) else []


def gone(c, bound=8.0):
    """The checkout dir is removed and the step's sleep is no more."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if checkouts(c) == [] and not procs_with_arg("20.000"):
            return True
        time.sleep(0.1)
    return False


def agent_started(c, rid):
    return [x for x in audit_records(c.home)
            if x["kind"] == "agent.invoke" and x.get("runId") == rid]


def stream_start(c, agent="wt", prompt="x"):
    """A streamed worktree run on its own socket: (socket, runId, bytes
    read so far), once its start line arrived, its checkout under way."""
    repo = make_repo(os.path.join(c.repos, "main"))
    body = json.dumps({"prompt": prompt, "worktree": repo}).encode()
    s = socket.create_connection(("127.0.0.1", c.port), timeout=5)
    s.sendall((f"POST /api/agents/{agent}/run HTTP/1.1\r\n"
               f"Host: 127.0.0.1:{c.port}\r\n"
               f"Authorization: Bearer {c.token}\r\n"
               f"Content-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
    got = b""
    while (m := re.search(rb'"kind":"start","runId":"([0-9a-f]{16})"',
                          got)) is None:
        chunk = s.recv(65536)  # times out if the start never comes
        assert chunk, got
        got += chunk
    assert got.startswith(b"HTTP/1.1 200"), got
    assert checkouts(c) == [m.group(1).decode()]
    return s, m.group(1).decode(), got


def stream_rest(s, got):
    try:
        while b'"kind":"done"' not in got and (chunk := s.recv(65536)):
            got += chunk
    finally:
        s.close()
    return [json.loads(x) for x in re.findall(rb'\{"kind".*\}', got)]


@pytest.mark.parametrize("wt_env", [SLOW_STEP])
def test_mc2_job_cancelled_during_checkout(wt):
    c = wt
    repo = make_repo(os.path.join(c.repos, "main"))
    t = time.monotonic()
    r = post_json(c, "/api/agents/wt/jobs", {"prompt": repo,
                                             "worktree": repo})
    assert r.status == 200, (r, c.stderr())
    assert time.monotonic() - t < 5  # answered before the checkout
    jid = r.json()["jobId"]
    assert checkouts(c) == [jid]
    job = c.request("GET", f"/api/jobs/{jid}").json()["job"]
    assert job["state"] == "running"
    assert jid in [j["jobId"] for j in c.request("GET", "/api/jobs").json()[
        "jobs"]]
    r = post_json(c, f"/api/jobs/{jid}/cancel", {})
    assert r.status == 200, r
    w = c.request("GET", f"/api/jobs/{jid}/wait?timeoutMs=5000").json()
    assert w["timedOut"] is False
    assert w["job"]["state"] == "cancelled"
    assert w["job"]["cancelReason"] == "requested"
    evs = c.request("GET", f"/api/jobs/{jid}/events?offset=0").json()[
        "events"]
    assert [e for e in evs if e["kind"] == "done"][-1]["cancelled"] is True
    assert gone(c)
    end = wait_audit(c.home, lambda x: x["kind"] == "job.end" and
                     x["jobId"] == jid)
    assert end[0]["state"] == "cancelled"
    assert end[0]["cancelReason"] == "requested"
    assert agent_started(c, jid) == []
    assert not [x for x in audit_records(c.home, "worktree.create")
                if x.get("worktreeId") == jid]


@pytest.mark.parametrize("wt_env", [SLOW_STEP])
def test_mc2_streamed_run_cancelled_during_checkout(wt):
    c = wt
    s, rid, got = stream_start(c)
    r = post_json(c, f"/api/runs/{rid}/cancel", {})
    assert r.status == 200, (r, c.stderr())
    evs = stream_rest(s, got)
    done = [e for e in evs if e["kind"] == "done"]
    assert done and done[-1]["cancelled"] is True, evs
    assert gone(c)
    assert agent_started(c, rid) == []
    # Over: nothing left to cancel.
    assert post_json(c, f"/api/runs/{rid}/cancel", {}).status == 404


@pytest.mark.parametrize("wt_env", [SLOW_STEP])
def test_mc2_client_leaving_during_checkout_cancels(wt):
    c = wt
    s, rid, _ = stream_start(c)
    s.close()
    assert gone(c), c.stderr()
    assert agent_started(c, rid) == []
    # The spawner is free for the next run.
    r = post_json(c, "/api/agents/nowt/run",
                  {"prompt": os.path.join(c.repos, "none", "x")})
    assert r.status == 200


# A step past its deadline fails the run in its stream: the fixed code
# and reason class, agent.invoke.error, nothing left behind.
@pytest.mark.parametrize("wt_env", [{"CORDON_TEST_WORKTREE_DELAY_MS": "20000",
                                     "CORDON_TEST_WORKTREE_STEP_MS": "500"}])
def test_mc2_worktree_step_deadline(wt):
    c = wt
    repo = make_repo(os.path.join(c.repos, "main"))
    t = time.monotonic()
    r, evs = run_wt(c, "wt", repo, prompt="x")
    assert time.monotonic() - t < 5
    assert r.status == 200, (r, c.stderr())
    err = [e for e in evs if e["kind"] == "error"]
    assert err and err[0]["errorClass"] == "spawn-failed", evs
    assert (err[0]["error"], err[0]["reason"]) == \
        ("worktree-failed", "git-timeout")
    done = [e for e in evs if e["kind"] == "done"][-1]
    assert done["exitCode"] == -1 and "cancelled" not in done
    rid = [e for e in evs if e["kind"] == "start"][0]["runId"]
    rec = wait_audit(c.home, lambda x: x["kind"] == "agent.invoke.error" and
                     x["runId"] == rid)
    assert rec[0]["errorClass"] == "spawn-failed"
    assert agent_started(c, rid) == []
    assert checkouts(c) == []
    assert c.request("GET", "/api/worktrees").json()["worktrees"] == []
    # A job's checkout that fails: the job failed, with the same words.
    r = post_json(c, "/api/agents/wt/jobs", {"prompt": "x", "worktree": repo})
    assert r.status == 200, r
    jid = r.json()["jobId"]
    w = c.request("GET", f"/api/jobs/{jid}/wait?timeoutMs=5000").json()
    assert w["job"]["state"] == "failed", w
    evs = c.request("GET", f"/api/jobs/{jid}/events?offset=0").json()[
        "events"]
    err = [e for e in evs if e["kind"] == "error"]
    assert (err[0]["error"], err[0]["reason"]) == \
        ("worktree-failed", "git-timeout")
    assert checkouts(c) == []
    # Through `cordon mcp` (MC-1): a tool error with the same words.
    from test_mcp import Mcp, init
    m = Mcp(c.home)
    try:
        init(m)
        r, _ = m.call("run_agent", {"agent": "wt", "prompt": "x",
                                    "worktree": repo})
        res = r["result"]
        assert res["isError"] is True, res
        sc = res["structuredContent"]
        assert (sc["errorClass"], sc["error"], sc["reason"]) == \
            ("spawn-failed", "worktree-failed", "git-timeout"), sc
    finally:
        m.close()
    assert checkouts(c) == []
    # And the next run, without the slow step's company, is not stuck.
    r = post_json(c, "/api/agents/nowt/run",
                  {"prompt": os.path.join(c.repos, "none", "x")})
    assert r.status == 200


# A spawner killed while a checkout is under way: the git step dies with
# it, and the half-made checkout (no meta.json: never listed, so never
# removable through the API) is removed by the next spawner at its start.
@pytest.mark.parametrize("wt_env", [SLOW_STEP])
def test_mc2_spawner_killed_during_checkout_leaves_nothing(wt):
    import signal
    c = wt
    s, rid, got = stream_start(c)
    old = c.daemon_pids()["spawner"]
    os.kill(old, signal.SIGKILL)
    evs = stream_rest(s, got)
    assert [e for e in evs if e["kind"] == "error"], evs
    c.health_when(lambda h: h["status"] == "ok" and [
        d for d in h["daemons"] if d["name"] == "spawner"][0].get("pid")
        not in (None, old))
    assert gone(c), checkouts(c)
    assert agent_started(c, rid) == []
    assert c.request("GET", "/api/worktrees").json()["worktrees"] == []
