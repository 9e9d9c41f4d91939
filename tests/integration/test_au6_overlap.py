# AU-6, SP-17: a chat run's sandbox is set up while auditd syncs its
# agent.invoke, and the agent's execve waits for the acknowledgement:
# cordon-init, pid 1 of the run's namespace, forks the agent only once
# the spawner sends its go.  auditd is frozen (SIGSTOP) to hold a run
# there; each test proves the held child existed, that the agent never
# ran when the record was not acknowledged (its MARK_FILE never written),
# and that nothing of the held child is left (process reaped, private
# tmp and pids group removed).  A real cordon, a temp home, the fake
# `hermes`.  Touches only the temp dirs it makes, its own processes and
# sockets to 127.0.0.1.
import os
import pathlib
import signal
import threading
import time

import pytest

from agents_util import (GRACE, MANIFESTS, audit_records,
                         make_agents_home, marker,
                         post_json, procs_with_arg, run, server_env,
                         wait_audit)
from test_worktree_cancel import stream_rest, stream_start
import test_sandbox as ts

# From `marked` (its MARK_FILE proves the agent ran):
HELD_MANIFESTS = {
    # A worktree run is answered (and so cancellable) before its spawn;
    # it writes its tree and its agent's home only.
    "heldwt": MANIFESTS["marked"].replace("marked", "heldwt").replace(
        "{mark}", "{wtmark}").replace(
        '["{markdir}"]', '["{repos}"]\n  worktrees: true'),
    # Its second write root is removed once cordon runs: the spawn fails.
    "vanish": MANIFESTS["marked"].replace("marked", "vanish").replace(
        '["{markdir}"]', '["{markdir}", "{gone}"]'),
}


@pytest.fixture
def held(tmp_path, monkeypatch, cordon_factory):
    server_env(monkeypatch)
    repos = tmp_path / "repos"
    repos.mkdir()
    gone = tmp_path / "gone"
    gone.mkdir()
    home = tmp_path / "home"
    wtmark = home / "state" / "homes" / "heldwt" / "marker"
    extra = {n: t.replace("{repos}", str(repos)).replace(
        "{gone}", str(gone)).replace("{wtmark}", str(wtmark))
        for n, t in HELD_MANIFESTS.items()}
    c = cordon_factory(home=make_agents_home(tmp_path, extra=extra))
    c.repos, c.gone, c.wtmark = str(repos), gone, wtmark
    c.mark = marker(tmp_path)
    # The start's probes are over: the only run group is a test's.
    deadline = time.monotonic() + 10
    while run_groups(c) and time.monotonic() < deadline:
        time.sleep(0.05)
    return c


class Frozen:
    """auditd stopped: agent.invoke sent, never acknowledged meanwhile."""

    def __init__(self, c):
        self.pid = c.daemon_pids()["auditd"]

    def __enter__(self):
        os.kill(self.pid, signal.SIGSTOP)
        return self

    def __exit__(self, *exc):
        self.thaw()

    def thaw(self):
        try:
            os.kill(self.pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


def in_background(fn, *args):
    """fn(*args) on a thread: (thread, {"r": its result} or {"e": ...})."""
    out = {}

    def body():
        try:
            out["r"] = fn(*args)
        except Exception as e:  # a connection the test broke
            out["e"] = e
    t = threading.Thread(target=body)
    t.start()
    return t, out


def run_tmps(c):
    return sorted(str(p) for p in
                  pathlib.Path(c.tmpdir).glob("cordon-runs.*/cordon-run.*"))


def run_groups(c):
    """The run groups beneath cordon's pids cgroup, or None without one."""
    try:
        cg = os.path.join(ts.pids_hierarchy(), ts.cordon_group(c.pid))
    except pytest.skip.Exception:
        return None
    return ts.run_groups(cg) if os.path.isdir(cg) else None


def wait_held(word, bound=10.0):
    """The held cordon-init of the run whose prompt is word: its argv
    names the agent's.  Only it: the agent was never forked."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        pids = procs_with_arg(word)
        if pids:
            time.sleep(0.2)  # had the agent been forked, it is by now
            pids = procs_with_arg(word)
            assert len(pids) == 1, pids
            with open(f"/proc/{pids[0]}/cmdline", "rb") as f:
                assert os.path.basename(
                    f.read().split(b"\0")[0]) == b"cordon-init"
            return pids[0]
        time.sleep(0.02)
    raise AssertionError("no held child while agent.invoke was pending")


def assert_dropped(c, pid):
    """The held child is killed and reaped (no zombie), and its private
    tmp and pids group are removed."""
    deadline = time.monotonic() + GRACE
    while (os.path.exists(f"/proc/{pid}") or run_tmps(c) or
           run_groups(c)) and \
            time.monotonic() < deadline:
        time.sleep(0.02)
    assert not os.path.exists(f"/proc/{pid}"), "held child not reaped"
    assert run_tmps(c) == []
    assert run_groups(c) in (None, [])


def invoke_records(c, agent):
    return [x for x in audit_records(c.home)
            if x["kind"].startswith("agent.invoke") and
            x.get("agent") == agent]


def test_au6_held_child_dropped_when_audit_never_acks(held):
    """auditd never acknowledges agent.invoke: the run is refused
    audit-unavailable after the bounded wait, the held child (made while
    the record was pending) is killed and reaped, and the agent never
    ran."""
    c = held
    word = f"held-{os.urandom(4).hex()}"
    with Frozen(c):
        t, out = in_background(run, c, "marked", word)
        pid = wait_held(word)
        assert len(run_tmps(c)) == 1  # the sandbox is set up already
        g = run_groups(c)
        assert g is None or len(g) == 1, g  # and its pids group
        assert not c.mark.exists()
        t.join(10)
        r, _ = out["r"]
        assert r.status == 503 and r.json() == {
            "ok": False, "error": "audit-unavailable"}, r
        assert_dropped(c, pid)
    time.sleep(0.5)
    assert not c.mark.exists()
    assert procs_with_arg(word) == []


def test_au6_held_child_dropped_when_auditd_dies(held):
    """auditd dies with agent.invoke in flight: audit-unavailable at
    once, the held child dropped, the agent never ran; the next run,
    with auditd restarted, runs."""
    c = held
    word = f"held-{os.urandom(4).hex()}"
    with Frozen(c) as f:
        t, out = in_background(run, c, "marked", word)
        pid = wait_held(word)
        os.kill(f.pid, signal.SIGKILL)
        t.join(10)
        r, _ = out["r"]
        assert r.status == 503 and r.json() == {
            "ok": False, "error": "audit-unavailable"}, r
        assert_dropped(c, pid)
    assert not c.mark.exists()
    deadline = time.monotonic() + 10
    while True:
        r, ev = run(c, "marked", "again")
        if r.status == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert r.status == 200, r
    assert c.mark.read_text() == "ran\n"


def test_au6_api4_cancelled_while_held(held):
    """API-4: a run cancelled while its child is held ends cancelled
    once agent.invoke is acknowledged: agent.invoke, then its end
    saying cancelled; the held child dropped, the agent never ran."""
    c = held
    word = f"held-{os.urandom(4).hex()}"
    with Frozen(c) as f:
        s, rid, got = stream_start(c, "heldwt", word)
        pid = wait_held(word)
        r = post_json(c, f"/api/runs/{rid}/cancel", {})
        assert r.status == 200, r
        f.thaw()
        evs = stream_rest(s, got)
        done = [e for e in evs if e["kind"] == "done"]
        assert done and done[-1]["cancelled"] is True, evs
        assert not [e for e in evs if e["kind"] == "token"], evs
        assert_dropped(c, pid)
    wait_audit(c.home, lambda x: x["kind"] == "agent.invoke.complete" and
               x.get("runId") == rid)
    recs = [x for x in invoke_records(c, "heldwt") if x["runId"] == rid]
    assert [x["kind"] for x in recs] == [
        "agent.invoke", "agent.invoke.complete"], recs
    assert recs[1]["status"] == "cancelled" and recs[1]["durationMs"] == 0
    assert not c.wtmark.exists()


def test_au6_reader_gone_while_held(held):
    """The broker's channel is replaced (its reader gone) while the
    child is held: once agent.invoke is acknowledged the run ends
    unstarted, its held child dropped; the agent never ran."""
    c = held
    word = f"held-{os.urandom(4).hex()}"
    with Frozen(c) as f:
        t, out = in_background(run, c, "marked", word)
        pid = wait_held(word)
        broker = c.daemon_pids()["broker"]
        os.kill(broker, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while c.daemon_pids().get("broker") in (None, broker):
            assert time.monotonic() < deadline, "broker not restarted"
            time.sleep(0.1)
        time.sleep(0.5)  # its new channel reached the spawner
        f.thaw()
        t.join(10)
        assert_dropped(c, pid)
    time.sleep(0.5)
    assert not c.mark.exists()
    assert [x["kind"] for x in invoke_records(c, "marked")] == [
        "agent.invoke"]


def test_au6_spawn_failed_while_record_in_flight(held):
    """The spawn fails while agent.invoke is pending (its write root
    vanished): reported once the record is acknowledged, as before:
    502 spawn-failed, agent.invoke then agent.invoke.error."""
    c = held
    c.gone.rmdir()
    with Frozen(c) as f:
        t, out = in_background(run, c, "vanish", "hello")
        deadline = time.monotonic() + 10
        while "agent vanish: sandbox: root: ENOENT" not in c.stderr():
            assert time.monotonic() < deadline, c.stderr()
            time.sleep(0.02)
        assert t.is_alive()  # the answer waits for the acknowledgement
        f.thaw()
        t.join(10)
    r, _ = out["r"]
    assert r.status == 502 and r.json()["error"] == "spawn-failed", r
    wait_audit(c.home, lambda x: x["kind"] == "agent.invoke.error" and
               x.get("agent") == "vanish")
    recs = invoke_records(c, "vanish")
    assert [x["kind"] for x in recs] == [
        "agent.invoke", "agent.invoke.error"], recs
    assert recs[1]["errorClass"] == "spawn-failed"
    assert run_tmps(c) == []
    assert not c.mark.exists()
