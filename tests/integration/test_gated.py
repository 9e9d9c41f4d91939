# cordon-gated, the command gate's own daemon (SBX-6, SBX-7, SBX-8),
# against a real cordon: a run's channel lives in gated as long as the
# run, a gated killed while it holds a call never turns into an allow
# (the call is refused, the run goes on and its next call is served by
# the restarted gated), and an approval is decided at most once.
# Touches only temp dirs it creates.
import json
import os
import signal
import threading
import time

from agents_util import (GRACE, Stream, _dechunk_partial, make_agents_home,
                         post_json, run, server_env, text_of, wait_audit)
from conftest import HTTP_S, RESTART_S
from test_gate import (approvals, decide, gate, gate_manifest,  # noqa: F401
                       hook_input, results, verb_runs, wait_approval)


def gate_status(c):
    h = c.health()
    return [d for d in h["daemons"] if d["name"] == "gated"][0]


def wait_runs(c, n, bound=HTTP_S):
    deadline = time.monotonic() + bound
    while True:
        st = gate_status(c).get("status", {}).get("gate", {})
        if st.get("runs") == n:
            return st
        assert time.monotonic() < deadline, st
        time.sleep(0.05)


def test_sbx6_gated_holds_a_channel_only_while_its_run_lives(gate):
    """The spawner hands each run's channel to gated and takes it back at
    the run's end: gated counts the run while it lives, none after."""
    wait_runs(gate, 0)
    s = Stream(gate, "gatebot", json.dumps([{"bash": "git push origin"}]))
    s.start()
    wait_approval(gate)
    st = wait_runs(gate, 1)
    assert st["held"] == 1, st
    assert gate_status(gate)["up"] is True
    r = decide(gate, approvals(gate)[0]["id"], "deny")
    assert r.status == 200, r
    s.finish()
    s.close()
    assert wait_runs(gate, 0)["held"] == 0


def test_sbx7_gated_killed_while_held_never_allows(gate):
    """A gated that dies holding a call: the call is refused (its reply
    socket closes with gated), never allowed; the approval is gone; the
    run goes on, and its next call reaches the restarted gated, which
    the spawner handed the run's channel again."""
    s = Stream(gate, "gatebot", json.dumps([{"bash": "git push origin"},
                                            {"bash": "ls -la"}]))
    s.start()
    a = wait_approval(gate)[0]
    pid = gate.daemon_pids()["gated"]
    os.kill(pid, signal.SIGKILL)
    ev = s.finish(bound=RESTART_S + HTTP_S)
    s.close()
    res = results(ev)
    assert res[0]["exit"] == 2 and res[0]["stdout"] == "", res[0]
    assert res[1]["exit"] == 0, res[1]
    assert [e for e in ev if e["kind"] == "done"], ev
    def restarted(h):
        g = [d for d in h["daemons"] if d["name"] == "gated"][0]
        return h["status"] == "ok" and g["pid"] != pid and g["restarts"]
    gate.health_when(restarted)
    assert approvals(gate) == []
    assert decide(gate, a["id"], "allow").status == 404
    wait_audit(gate.home, lambda x: x["kind"] == "verb.run" and
               x["verb"] == "ls" and x["verdict"] == "allow")
    assert not [x for x in verb_runs(gate.home)
                if x["verb"] == "git" and x["verdict"] in
                ("allow", "ask-allow")], verb_runs(gate.home)


def lines_out(buf):
    """The fake agent's whole lines so far in a stream's bytes."""
    body = _dechunk_partial(buf.partition(b"\r\n\r\n")[2])
    evs = [json.loads(ln) for ln in body.split(b"\n")[:-1] if ln]
    return text_of(evs).count("\n")


def test_sbx8_gated_stopped_calls_refused_at_the_gates_bound(gate):
    """gated stopped (hung) while calls wait, by fd 3 and by the named
    pipes: each call is refused at `cordon gate`'s bound (askTimeoutSec
    5 s + 10 s here), before a CLI's hook would time out and run it; the
    run goes on. Once gated resumes, with the run still alive, it reads
    the two calls past their callers' bound: each is recorded as denied
    (past-deadline), never as the allow nobody waited for."""
    hook = hook_input("claude-bash.json", gate.ws)
    pid = gate.daemon_pids()["gated"]
    os.kill(pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        s = Stream(gate, "gatequick", json.dumps([{"bash": "ls -la"},
                                                  {"closed": hook},
                                                  {"sleep": 10}]))
        run_id = s.start()
        s.read_until(lambda b: lines_out(b) >= 2, bound=60)
        secs = time.monotonic() - t0
    finally:
        os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + HTTP_S
    while len(recs := [x for x in verb_runs(gate.home)
                       if x.get("runId") == run_id]) < 2:
        assert time.monotonic() < deadline, recs
        time.sleep(0.05)
    assert [(x["verdict"], x["rule"]) for x in recs] == \
        [("deny", "past-deadline")] * 2, recs
    ev = s.finish(bound=30)
    s.close()
    res = results(ev)
    for i in (0, 1):
        assert res[i]["exit"] == 2, res[i]
        assert "(no-verdict)" in res[i]["stderr"], res[i]
    assert res[2]["slept"], res
    assert [e for e in ev if e["kind"] == "done"], ev
    assert secs < 55, secs  # two bounds of 15 s, not the CLI's 120 s
    assert not [x for x in verb_runs(gate.home)
                if x["verdict"] != "deny"], verb_runs(gate.home)


def test_sbx8_an_ask_is_held_no_longer_than_its_caller_waits(gate):
    """An ask that reaches gated late (gated stopped for 11 s of the
    caller's 15 s) is held only until shortly before the caller's bound,
    not for the agent's whole askTimeoutSec: it times out while its
    caller still waits, so its record is the answer the caller got."""
    pid = gate.daemon_pids()["gated"]
    os.kill(pid, signal.SIGSTOP)
    try:
        s = Stream(gate, "gatequick",
                   json.dumps([{"bash": "git push origin"}]))
        s.start()
        time.sleep(11)
    finally:
        os.kill(pid, signal.SIGCONT)
    a = wait_approval(gate)[0]
    assert a["expires"] - a["created"] <= 3_000, a
    res = results(s.finish(bound=30))
    s.close()
    # gated's answer (the ask's rule), not the caller's own no-verdict
    assert res[0]["exit"] == 2 and "(ask-git-push)" in res[0]["stderr"], \
        res[0]
    recs = [x for x in verb_runs(gate.home) if x["verb"] == "git"]
    assert [x["verdict"] for x in recs] == ["ask-timeout"], recs


def test_sbx8_an_approval_decided_after_its_time_is_a_timeout(gate):
    """An allow sent while gated is stopped, after the ask's time is up,
    is answered as the timer would have: 404, the call refused and
    recorded ask-timeout, never ask-allow.  End to end only: a stopped
    gated's first pass after SIGCONT runs the due timer (epoll_wait
    returns EINTR), before it reads the decision.  A decision read
    before its due timer ran is tests/unit/test_gate_approve.c's."""
    s = Stream(gate, "gatequick", json.dumps([{"bash": "git push origin"}]))
    s.start()
    a = wait_approval(gate)[0]
    pid = gate.daemon_pids()["gated"]
    os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep((a["expires"] - a["created"]) / 1000 + 1)
        out = {}
        t = threading.Thread(target=lambda: out.update(
            r=decide(gate, a["id"], "allow")))
        t.start()
        time.sleep(0.5)
    finally:
        os.kill(pid, signal.SIGCONT)
    t.join(HTTP_S)
    assert out["r"].status == 404, out
    res = results(s.finish(bound=30))
    s.close()
    assert res[0]["exit"] == 2, res[0]
    recs = [x for x in verb_runs(gate.home) if x["verb"] == "git"]
    assert [x["verdict"] for x in recs] == ["ask-timeout"], recs


def test_sbx7_an_approval_is_decided_once(gate):
    """The broker cannot decide an approval that is not held: one already
    decided, or one never made, is 404 and changes nothing."""
    s = Stream(gate, "gatebot", json.dumps([{"bash": "git push origin"}]))
    s.start()
    aid = wait_approval(gate)[0]["id"]
    assert decide(gate, aid, "deny").status == 200
    for d in ("allow", "deny"):
        r = decide(gate, aid, d)
        assert r.status == 404, r
        assert r.json() == {"ok": False, "error": "unknown-approval"}
    res = results(s.finish())
    s.close()
    assert res[0]["exit"] == 2, res[0]
    time.sleep(GRACE)
    recs = [x for x in verb_runs(gate.home) if x["verb"] == "git"]
    assert [x["verdict"] for x in recs] == ["ask-deny"], recs


def test_sbx6_a_burst_of_runs_each_gets_its_gate(tmp_path, monkeypatch,
                                                 cordon_factory):
    """Runs started together hand gated their channels in one go, more
    descriptors than the IPC codec queues on a channel: each run's gate
    still answers (a refused handoff left that run's calls unanswered
    until the hook's timeout denied them)."""
    server_env(monkeypatch)
    ws = tmp_path / "ws"
    ws.mkdir()
    n = 32
    home = make_agents_home(tmp_path, extra={
        "gateburst": gate_manifest("gateburst", ws)})
    (home / "cordon.yaml").write_text(
        f"spawner:\n  maxRuns: {n}\n  maxRunsPerAgent: {n}\n")
    c = cordon_factory(home=home)
    streams = [Stream(c, "gateburst", json.dumps([{"bash": "ls -la"}]))
               for _ in range(n)]
    for s in streams:
        s.start()
    for s in streams:
        ev = s.finish(bound=HTTP_S * 4)
        s.close()
        res = results(ev)
        assert res[0]["exit"] == 0, res[0]


GATE_HELD_MAX = 32  # gated.h
GATE_HELD_AGENT_MAX = 16


def test_sbx7_one_agent_cannot_take_every_approval_slot(
        tmp_path, monkeypatch, cordon_factory):
    """One agent's runs (as many as approval slots, each asking) hold at
    most GATE_HELD_AGENT_MAX approvals, the rest denied at once, so
    another agent's ask is still held for the operator (before, the
    first agent took every slot and the other's ask was denied)."""
    server_env(monkeypatch)
    ws = tmp_path / "ws"
    ws.mkdir()
    n = GATE_HELD_MAX
    home = make_agents_home(tmp_path, extra={
        "gatehog": gate_manifest("gatehog", ws),
        "gateother": gate_manifest("gateother", ws)})
    (home / "cordon.yaml").write_text(
        f"spawner:\n  maxRuns: {n + 1}\n  maxRunsPerAgent: {n}\n")
    c = cordon_factory(home=home)
    ask = json.dumps([{"bash": "git push origin"}])
    hogs = [Stream(c, "gatehog", ask) for _ in range(n)]
    for s in hogs:
        s.start()
    # Each hog run is held or denied: its denied ones end by themselves.
    deadline = time.monotonic() + HTTP_S * 2
    while True:
        held = [a for a in approvals(c) if a["agent"] == "gatehog"]
        done = [s for s in hogs if s.buf.endswith(b"0\r\n\r\n") or
                _poll_end(s)]
        if len(held) + len(done) == n:
            break
        assert time.monotonic() < deadline, (len(held), len(done))
        time.sleep(0.1)
    assert len(held) == GATE_HELD_AGENT_MAX, len(held)
    for s in done:
        res = results(s.finish())
        assert res[0]["exit"] == 2, res[0]
        assert "ask-unavailable" in res[0]["stderr"], res[0]
    other = Stream(c, "gateother", ask)
    other.start()
    wait_approval(c, lambda a: a["agent"] == "gateother")
    for a in approvals(c):
        assert decide(c, a["id"], "deny").status == 200
    for s in hogs + [other]:
        s.finish(bound=HTTP_S * 2)
        s.close()


def _poll_end(s):
    """Read what has come on a Stream without waiting; True once its
    answer is whole."""
    s.sock.setblocking(False)
    try:
        while True:
            chunk = s.sock.recv(65536)
            if not chunk:
                break
            s.buf += chunk
    except BlockingIOError:
        pass
    finally:
        s.sock.setblocking(True)
        s.sock.settimeout(HTTP_S)
    return s.buf.endswith(b"0\r\n\r\n")
