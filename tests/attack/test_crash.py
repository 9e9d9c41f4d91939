# SU-1, AU-6, SP-17: crashes and restarts.  SIGKILL of cordond and of its
# daemons while runs are live, through the real `cordon run` on a home of
# its own per case (a crash is what the module's invariants forbid, so
# each case has a cordon of its own): the agents' processes die, every
# run ends in the trail or is marked by the restart, the chain verifies,
# nothing is left behind and the next start is clean.
import glob
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid

import pytest

from agents_util import (Stream, audit_records, post_json, procs_with_arg,
                         run, wait_audit)
from conftest import (BUILD, GRACE, HTTP_S, RESTART_S, Cordon, check_chain,
                      describe, finish, hostile_manifest, proc_starttime,
                      run_world)


PROMPT = "neverexit "  # the agent and its child ignore SIGTERM


class UserWorld:
    """A cordon run by a plain user (`setpriv`, as test_sandbox does),
    with the hostile agent in both isolation modes."""

    def __init__(self, base, mp):
        import test_sandbox as ts
        w = ts.make_world(base, mp)
        ws = str(w["work"])
        for n, iso in (("hostile", "landlock"), ("hostilens", "namespace")):
            ts.add_agent(w, n, hostile_manifest(n, ws, iso=iso))
        ts.give_world(w, ts.cordon_test_user())
        self.home = w["home"]
        self.vault = os.path.join(self.home, "vault")
        self.again = lambda: ts.user_cordon(w)
        self.c = self.again().start()

    def pids(self):
        return {d["name"]: d["pid"] for d in self.c.health()["daemons"]}


@pytest.fixture
def rw(tmp_path_factory):
    """A cordon of the case's own, root's (`--allow-root`)."""
    yield from run_world(tmp_path_factory)


@pytest.fixture(params=["root", "user"])
def w(request, tmp_path_factory):
    """A cordon of the case's own: root's (`--allow-root`), or a plain
    user's."""
    if request.param == "root":
        yield from run_world(tmp_path_factory)
        return
    base = pathlib.Path(tempfile.mkdtemp(prefix="cordon-crash-",
                                         dir="/var/tmp"))
    mp = pytest.MonkeyPatch()
    try:
        uw = UserWorld(base, mp)
        try:
            yield uw
        finally:
            check_chain(os.path.join(uw.home, "audit"))
            finish(uw.c)
    finally:
        mp.undo()
        shutil.rmtree(base, ignore_errors=True)


def nonce_procs(n):
    """Live processes of this case's agent: its prompt, the argument
    `neverexit N`, is on their command line."""
    return procs_with_arg(PROMPT + n)


def wait_gone(pred, bound):
    """Poll pred() (a list of what is left) until it is empty or the bound
    passes; return what is left."""
    deadline = time.monotonic() + bound
    left = pred()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = pred()
    return left


def kill_all(pids):
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def run_groups(cordond):
    """The pids cgroups of runs beneath the one cordond made as root
    (SP-7), where the pids controller is mounted (v1) or unified (v2)."""
    with open(f"/proc/{cordond}/cgroup") as f:
        lines = [ln.rstrip("\n").split(":", 2) for ln in f]
    v1 = [p for _, ctl, p in lines if "pids" in ctl.split(",")]
    base = ("/sys/fs/cgroup/pids" + v1[0] if v1 else
            "/sys/fs/cgroup" + [p for h, _, p in lines if h == "0"][0])
    return glob.glob(f"{base.rstrip('/')}/cordon.*.{cordond}/run.*")


def verify(home):
    return subprocess.run([os.path.join(BUILD, "cordon"), "audit",
                           "verify", "--home", str(home)],
                          capture_output=True, text=True, timeout=30)


def kill_cordond(c, n):
    """SIGKILL of cordond; then what is left of it and of the agents
    whose prompt holds n, once every daemon had its time to stop."""
    c.note_processes()
    daemons = dict(c.seen)
    os.kill(c.pid, signal.SIGKILL)
    c.returncode = c.proc.wait(RESTART_S)
    return wait_gone(lambda: [p for p, st in daemons.items()
                              if proc_starttime(p) == st] +
                     nonce_procs(n), 5 + GRACE)


def live_run(w, agent, n):
    """A run of an agent that ignores SIGTERM and has a child that does
    too, with n in its prompt; its stream once the agent runs."""
    s = Stream(w.c, agent, PROMPT + n)
    rid = s.start()
    s.read_until(lambda b: b"never exiting" in b)
    assert nonce_procs(n), "the agent is not running"
    return s, rid


# ---- cordond killed ----

@pytest.mark.parametrize("agent", ["hostile", "hostilens"])
def test_su1_cordond_killed_runs_end_recorded_nothing_left(w, agent):
    """SIGKILL of cordond mid-run: every daemon dies with it (SIGTERM by
    PR_SET_PDEATHSIG, and its control channel closes), the spawner kills
    the run and its end record still reaches the trail (AU-6: auditd
    waits for its peers' last records), nothing of the run or of cordon
    is left, and a new `cordon run` on the same home starts cleanly."""
    n = uuid.uuid4().hex
    s, rid = live_run(w, agent, n)
    c1 = w.c
    left = kill_cordond(c1, n)
    s.close()
    try:
        assert left == [], f"left behind: {describe(left)}"
        ends = [r for r in audit_records(w.home)
                if r.get("runId") == rid and r["kind"] != "agent.invoke"]
        assert [(r["kind"], r["errorClass"]) for r in ends] == \
            [("agent.invoke.error", "killed")], ends
        v = verify(w.home)
        assert v.returncode == 0, v
        assert os.listdir(c1.tmpdir) == [], "runs' tmps left behind"
    finally:
        kill_all(nonce_procs(n))
        finish(c1)
    # The lock went with cordond; the next start is clean.  The world's
    # teardown stops it and checks the chain again.
    w.c = (w.again() if isinstance(w, UserWorld) else
           Cordon(w.home, ["--allow-root"])).start()
    assert w.c.health()["status"] == "ok"


def test_su1_cordond_killed_job_ends_cancelled_and_recorded(rw):
    """SIGKILL of cordond while a detached job runs (MC-3): the spawner
    cancels it as on a stop, and both its meta and the trail say so
    (`job.end` `cancelled`, `cancelReason` `shutdown`), so the next
    start neither calls it lost nor leaves it without an end."""
    w = rw
    n = uuid.uuid4().hex
    r = post_json(w.c, "/api/agents/hostile/jobs", {"prompt": PROMPT + n})
    assert r.status == 200, r
    jid = r.json()["jobId"]
    assert wait_gone(lambda: [] if nonce_procs(n) else [1], HTTP_S) == []
    c1 = w.c
    left = kill_cordond(c1, n)
    try:
        assert left == [], f"left behind: {describe(left)}"
    finally:
        kill_all(nonce_procs(n))
        finish(c1)
    w.c = Cordon(w.home, ["--allow-root"]).start()
    job = w.c.request("GET", f"/api/jobs/{jid}").json()["job"]
    assert (job["state"], job.get("cancelReason")) == \
        ("cancelled", "shutdown"), job
    ends = [(x["state"], x.get("cancelReason")) for x in
            audit_records(w.home) if x["kind"] == "job.end"]
    assert ends == [("cancelled", "shutdown")], ends


# ---- spawner killed ----

@pytest.mark.parametrize("agent", ["hostile", "hostilens"])
def test_sp17_spawner_killed_run_dies_and_is_marked(w, agent):
    """SIGKILL of the spawner mid-run: the agent and its child die with
    it (cordon-init, or the agent, has PR_SET_PDEATHSIG SIGKILL; a pid
    namespace's init takes the namespace with it), the client's stream
    ends with an error, the dead spawner's runs' tmp dir (with any /run
    cover in it) and, as root, the run's pids cgroup are removed by the
    next one, and the trail marks the run: its `agent.invoke` has no
    end record and `system.restart` of the spawner follows it."""
    n = uuid.uuid4().hex
    s, rid = live_run(w, agent, n)
    root = not isinstance(w, UserWorld)
    if root:  # as root each run has a pids cgroup of its own
        assert run_groups(w.c.pid), "no run group seen"
    old = w.pids()["spawner"]
    os.kill(old, signal.SIGKILL)
    try:
        ev = s.finish()
        assert ev[-1]["kind"] == "done", ev
        assert [e for e in ev if e["kind"] == "error"], ev
        left = wait_gone(lambda: nonce_procs(n), 2 + GRACE)
        assert left == [], f"agent outlived its spawner: {describe(left)}"
        w.c.health_when(lambda h: h["status"] == "ok" and [
            d for d in h["daemons"] if d["name"] == "spawner"][0].get(
                "pid") not in (None, old))
        if root:  # the new spawner removed the dead one's run group
            assert wait_gone(lambda: run_groups(w.c.pid), RESTART_S) == []
        # The new spawner's own runs dir only.
        assert len(os.listdir(w.c.tmpdir)) == 1, os.listdir(w.c.tmpdir)
        recs = audit_records(w.home)
        mine = [r["kind"] for r in recs if r.get("runId") == rid]
        assert mine == ["agent.invoke"], mine
        at = [i for i, r in enumerate(recs) if r.get("runId") == rid][0]
        assert any(r["kind"] == "system.restart" and
                   r["daemon"] == "spawner" for r in recs[at:]), recs[at:]
    finally:
        s.close()
        kill_all(nonce_procs(n))


def test_au6_auditd_stopped_refused_run_is_ended_in_the_trail(rw):
    """auditd stopped (SIGSTOP) while a run asks for its `agent.invoke`:
    the run is refused at the bound (503 `audit-unavailable`, its agent
    never forked). auditd, continued, still writes that `agent.invoke`;
    the end the spawner sent after it on the same channel says the run
    never started, so the trail shows no run that seems lost to a
    crash."""
    w = rw
    a = w.pids()["auditd"]
    os.kill(a, signal.SIGSTOP)
    try:
        r = post_json(w.c, "/api/agents/hermes/run", {"prompt": "stopped"})
    finally:
        os.kill(a, signal.SIGCONT)
    assert (r.status, r.json()["error"]) == (503, "audit-unavailable"), r
    rid = wait_audit(w.home, lambda x: x["kind"] == "agent.invoke")[0][
        "runId"]
    end = wait_audit(w.home, lambda x: x.get("runId") == rid and
                     x["kind"] != "agent.invoke")
    assert [(x["kind"], x["errorClass"]) for x in end] == \
        [("agent.invoke.error", "spawn-failed")], end
    # auditd goes on: the next run is served.
    r, ev = run(w.c, "hermes", "after")
    assert r.status == 200, r


# ---- broker killed ----

def test_su1_broker_killed_mid_stream_run_cancelled_job_goes_on(rw):
    """SIGKILL of the broker while a chat run streams and a detached job
    runs: the chat run has no reader left, so it is cancelled, ended in
    the trail (`agent.invoke.complete` `cancelled`) and its agent gone;
    the job, which needs no reader, runs on to its end."""
    w = rw
    n = uuid.uuid4().hex
    # A job that outlasts the broker's restart by far: it sleeps 8 s.
    r = post_json(w.c, "/api/agents/hermes/jobs", {"prompt": "sleep 8"})
    assert r.status == 200, r
    jid = r.json()["jobId"]
    s = Stream(w.c, "hostile", "ticker " + n)
    rid = s.start()
    s.read_until(lambda b: b"tick 2" in b)
    old = w.pids()["broker"]
    os.kill(old, signal.SIGKILL)
    try:
        end = wait_audit(w.home, lambda x: x.get("runId") == rid and
                         x["kind"] != "agent.invoke")
        assert [(x["kind"], x.get("status")) for x in end] == \
            [("agent.invoke.complete", "cancelled")], end
        left = wait_gone(lambda: procs_with_arg("ticker " + n), 2 + GRACE)
        assert left == [], f"left behind: {describe(left)}"
    finally:
        s.close()
        kill_all(procs_with_arg("ticker " + n))
    w.c.health_when(lambda h: h["status"] == "ok" and [
        d for d in h["daemons"] if d["name"] == "broker"][0].get(
            "pid") not in (None, old))
    job = w.c.request("GET", f"/api/jobs/{jid}").json()["job"]
    assert job["state"] == "running", job
    job = w.c.request("GET", f"/api/jobs/{jid}/wait?timeoutMs=20000")
    assert job.json()["job"]["state"] == "succeeded", job


# ---- repeated kills ----

def test_su1_repeated_kills_keep_cordond_bounded(rw):
    """A daemon killed again and again comes back each time, with every
    restart counted, and cordond holds no more descriptors than before."""
    w = rw
    before = len(os.listdir(f"/proc/{w.c.pid}/fd"))
    for i in range(1, 6):
        old = w.pids()["gated"]
        os.kill(old, signal.SIGKILL)
        # The backoff doubles: 0.1 s, then up to 1.6 s for the fifth.
        w.c.health_when(
            lambda h: h["status"] == "ok" and [
                d for d in h["daemons"] if d["name"] == "gated"][0].get(
                    "pid") not in (None, old), 2 * RESTART_S + 5)
    h = w.c.health()
    assert [d["restarts"] for d in h["daemons"] if d["name"] == "gated"] \
        == [5], h
    assert len(os.listdir(f"/proc/{w.c.pid}/fd")) == before


# ---- auditd killed ----

def test_au6_auditd_killed_under_runs_nothing_runs_unrecorded(rw):
    """SIGKILL of auditd while runs start and end: a run whose agent ran
    has its `agent.invoke` in the trail (AU-6: the agent waits for it);
    one that could not get it is refused; the chain verifies, every
    `seq` once, and auditd is back."""
    w = rw
    results = []

    def runs():
        for i in range(24):
            results.append(run(w.c, "hermes", f"crash run {i}"))

    old = w.pids()["auditd"]
    t = threading.Thread(target=runs)
    t.start()
    wait_gone(lambda: len(results) < 4 and [1], HTTP_S)
    os.kill(old, signal.SIGKILL)
    t.join(HTTP_S * 6)
    assert not t.is_alive()
    w.c.health_when(lambda h: h["status"] == "ok" and [
        d for d in h["daemons"] if d["name"] == "auditd"][0].get(
            "pid") not in (None, old), 2 * RESTART_S)
    # Back: runs are served and recorded again.
    r, ev = run(w.c, "hermes", "after the crash")
    assert r.status == 200 and [e for e in ev if e["kind"] == "done"], r
    results.append((r, ev))
    last = ev[0]["runId"]
    wait_audit(w.home, lambda r: r.get("runId") == last and
               r["kind"] == "agent.invoke.complete")
    recs = audit_records(w.home)
    invoked = {r["runId"] for r in recs if r["kind"] == "agent.invoke"}
    ran = refused = 0
    for r, ev in results:
        if r.status != 200:
            refused += 1
            continue
        rid = ev[0]["runId"]
        if [e for e in ev if e["kind"] == "token"]:
            ran += 1
            assert rid in invoked, (rid, ev)
    # A note is saved only with its record, and each record's note is
    # there (vaultd was not the one killed).
    saved = {e["path"] for _, ev in results for e in ev
             if e["kind"] == "saved"}
    written = {r["path"] for r in recs if r["kind"] == "vault.write"}
    assert saved <= written, saved - written
    for p in written:
        assert os.path.isfile(os.path.join(w.vault, p)), p
    # An end record auditd died holding is lost with it: its run is
    # marked by the restart that follows (docs/audit.md, "Durability").
    ended = {r["runId"] for r in recs if r["kind"] in (
        "agent.invoke.complete", "agent.invoke.error")}
    restart = [i for i, r in enumerate(recs) if r["kind"] ==
               "system.restart" and r["daemon"] == "auditd"]
    assert len(restart) == 1, restart
    for i, r in enumerate(recs):
        if r["kind"] == "agent.invoke" and r["runId"] not in ended:
            assert i < restart[0], r
    assert ran, results
    seqs = [(r["ts"][:10], r["seq"]) for r in recs]
    assert len(seqs) == len(set(seqs)), "a seq twice"
    v = verify(w.home)
    assert v.returncode == 0, v
