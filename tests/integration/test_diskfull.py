# A full disk loses nothing and starts nothing (AU-6, AU-7, VA-4, MC-3):
# a real cordon whose audit dir, vault or state dir is a small tmpfs that
# a filler file fills, driven over HTTP; then the space is freed and
# cordon carries on by itself.  Root only (mount); every mount is
# unmounted in a finally.  Touches only its temp dirs, the mounts it
# makes on them and the cordon it starts.
import contextlib
import errno
import json
import os
import subprocess
import time

import pytest

from agents_util import (audit_records, make_agents_home, post_json,
                         procs_with_arg, run, server_env, wait_audit)
from audit_util import check_chain, cordon_audit
from conftest import HTTP_S, SLOW
from test_missions import write_missions
from vault_util import temps

FILLER = ".cordon-test-filler"
BACK_S = 30.0 if SLOW else 15.0  # backoff tops out at 5 s per restart
CHATS = os.path.join("vault", "00_Inbox", "cordon", "chats")

MISSION = {"fill": """
id: fill
label: Fill
agent: marked
prompt: "say disk"
outputs:
  - {type: event, event: x.y}
permissions: [event-emit]
trigger: {manual: true}
"""}


@contextlib.contextmanager
def small_fs(path, kind="tmpfs"):
    """A small file system on PATH (made 0700), unmounted on the way out:
    a tmpfs, or an ext4 loop image beside PATH (its fdatasync can fail,
    and it allocates by blocks, not pages)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small file system")
    os.makedirs(path, mode=0o700, exist_ok=True)
    if kind == "tmpfs":
        argv = ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs",
                str(path)]
    else:
        if not os.path.exists("/usr/sbin/mkfs.ext4"):
            pytest.skip("no mkfs.ext4 (scripts/deps.sh test installs it)")
        img = str(path) + ".img"
        with open(img, "wb") as f:
            f.truncate(8 << 20)
        p = subprocess.run(["/usr/sbin/mkfs.ext4", "-q", "-F", "-m", "0",
                            img], capture_output=True)
        if p.returncode != 0:
            pytest.skip(f"cannot make an ext4 image here: {p.stderr!r}")
        argv = ["mount", "-o", "loop", img, str(path)]
    p = subprocess.run(argv, capture_output=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a small {kind} here: {p.stderr!r}")
    try:
        if kind != "tmpfs":
            os.rmdir(os.path.join(path, "lost+found"))
            os.chmod(path, 0o700)
        yield str(path)
    finally:
        # Lazy: a daemon still holding its directory fd cannot keep the
        # mount behind (a loop device is freed with its last user).
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(path):
    """Fill the file system of PATH with a filler file, to ENOSPC."""
    f = os.path.join(path, FILLER)
    fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (1 << 20, 4096, 1):
            block = b"\0" * size
            while True:
                try:
                    os.write(fd, block)
                except OSError as e:
                    assert e.errno == errno.ENOSPC, e
                    break
    finally:
        os.close(fd)


def free(path):
    os.unlink(os.path.join(path, FILLER))


def mark_of(c):
    return os.path.join(os.path.dirname(c.home),
                        os.path.basename(c.home) + ".marks", "marker")


def daemon(h, name):
    return [d for d in h["daemons"] if d["name"] == name][0]


def jobs_on_disk(c):
    d = os.path.join(c.home, "state", "jobs")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


@pytest.fixture
def home(tmp_path, monkeypatch):
    server_env(monkeypatch)
    h = make_agents_home(tmp_path)
    write_missions(h, MISSION)
    return h


def marks(c):
    """How many chat children of `marked` were started."""
    try:
        with open(mark_of(c)) as f:
            return f.read().count("ran\n")
    except FileNotFoundError:
        return 0


def notes(c):
    d = os.path.join(c.home, CHATS)
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def neutral(r, code, status=503):
    assert r is not None and (r.status, r.json()) == (
        status, {"ok": False, "error": code}), r


@pytest.mark.parametrize("kind", ["tmpfs", "ext4"])
def test_au6_audit_full_starts_nothing_and_loses_nothing(home, kind,
                                                         cordon_factory):
    """AU-6, AU-7: the audit dir fills.  Every answer before the failure
    was acknowledged and stays on disk; from the failure on, a chat run,
    a job and an action are refused with audit-unavailable, a mission
    ends in error, and none starts anything; GETs that need no record keep answering; health
    says auditd is down, its restarts paced by the backoff.  Space freed:
    auditd is back by itself and the chain verifies across the gap."""
    with small_fs(home / "audit", kind) as adir:
        c = cordon_factory(home=home)
        invoked = []  # runIds whose agent.invoke was acknowledged
        r, ev = run(c, "hermes", "hello before")
        assert r.status == 200 and ev[-1]["kind"] == "saved", ev
        invoked.append(ev[0]["runId"])
        fill(adir)
        # What still fits in the day file's last page is written and
        # acknowledged; the first record that does not is refused.
        for i in range(200):
            r, ev = run(c, "hermes", f"hello {i}")
            if r.status != 200:
                break
            invoked.append(ev[0]["runId"])
        neutral(r, "audit-unavailable")
        t_fail = time.monotonic()
        notes_then, marks_then = notes(c), marks(c)
        jobs_then = jobs_on_disk(c)
        c.health_when(lambda h: not daemon(h, "auditd")["up"])
        for _ in range(2):
            neutral(post_json(c, "/api/agents/marked/run", {"prompt": "a"}),
                    "audit-unavailable")
            neutral(post_json(c, "/api/agents/marked/jobs",
                              {"prompt": "a"}), "audit-unavailable")
            # A mission answers with its run's neutral result.
            r = post_json(c, "/api/missions/fill/run", {})
            assert r.status == 200, r
            m = r.json()
            assert (m["status"], m["errorClass"], m["outputsPersisted"],
                    m["outputsEmitted"]) == ("error", "audit-unavailable",
                                             0, 0), m
            neutral(post_json(c, "/api/agents/quick/actions/broken", {}),
                    "audit-unavailable")
        # Nothing started: no agent child, no note, no job.
        assert marks(c) == marks_then == 0
        assert notes(c) == notes_then and jobs_on_disk(c) == jobs_then
        for target in ("/api/jobs", "/api/agents", "/api/missions",
                       "/api/vault/notes?dir=00_Inbox/cordon/chats"):
            r = c.request("GET", target)
            assert r is not None and r.status == 200, (target, r)
        # Health tells the truth, and the restart storm stays paced by
        # the backoff (100 ms doubling to 5 s), and so does its log.
        time.sleep(6.0)
        h = c.health()
        assert h["status"] == "degraded" and not daemon(h, "auditd")["up"]
        waited = time.monotonic() - t_fail
        restarts = daemon(h, "auditd")["restarts"]
        assert 1 <= restarts <= 7 + waited / 5, (restarts, waited)
        assert len(c.stderr().splitlines()) < 20 + 8 * restarts
        free(adir)
        c.health_when(lambda h: daemon(h, "auditd")["up"], BACK_S)
        r, ev = run(c, "hermes", "hello after")
        assert r.status == 200 and ev[-1]["kind"] == "saved", ev
        invoked.append(ev[0]["runId"])
        c.stop()
        # A torn line of the failed group (a short write) was set aside:
        # every day file ends with a whole line (check_chain); whole
        # lines of that group stay (never acknowledged, but chained); the
        # chain verifies end to end and no acknowledged record is missing.
        p = cordon_audit("verify", "--home", c.home)
        assert p.returncode == 0 and p.stdout.startswith("ok "), p
        recs = check_chain(adir)
        got = {x["runId"] for x in recs if x["kind"] == "agent.invoke"}
        assert set(invoked) <= got, set(invoked) - got
        assert any(x["kind"] == "system.restart" and
                   x["daemon"] == "auditd" for x in recs)


@pytest.mark.parametrize("kind", ["tmpfs", "ext4"])
def test_va4_vault_full_note_refused_without_record(home, kind,
                                                    cordon_factory):
    """VA-4, AU-6: the vault fills.  A chat run still answers, without
    `saved`; no temp and no partial note are left, and no vault.write
    record claims a note that does not exist.  Space freed: the next
    note is written."""
    with small_fs(home / "vault", kind) as vdir:
        c = cordon_factory(home=home)
        r, ev = run(c, "hermes", "hello before")
        assert r.status == 200 and ev[-1]["kind"] == "saved", ev
        fill(vdir)
        before = notes(c)
        for i in range(3):
            r, ev = run(c, "hermes", f"hello full {i}")
            assert r.status == 200, r
            assert [e["kind"] for e in ev] == ["start", "token", "done"], ev
        assert notes(c) == before
        assert not temps(vdir)
        wait_audit(c.home, lambda x: x["kind"] == "agent.invoke.complete",
                   HTTP_S)
        written = [x["path"] for x in audit_records(c.home, "vault.write")]
        assert sorted(os.path.basename(p) for p in written) == before
        free(vdir)
        r, ev = run(c, "hermes", "hello after")
        assert r.status == 200 and ev[-1]["kind"] == "saved", ev
        assert os.path.isfile(os.path.join(c.home, "vault", ev[-1]["path"]))
        assert not temps(vdir)


def job(c, jid):
    r = c.request("GET", f"/api/jobs/{jid}")
    assert r is not None and r.status == 200, r
    return r.json()["job"]


@pytest.mark.parametrize("kind", ["tmpfs", "ext4"])
def test_mc3_job_start_on_full_state_refused(home, kind, cordon_factory):
    """MC-3: a job that cannot be kept never starts: with the state dir
    full, the start is refused with jobs-unavailable before any child
    runs, and leaves no file; space freed, the next job runs."""
    with small_fs(home / "state", kind) as sdir:
        c = cordon_factory(home=home)
        fill(sdir)
        for _ in range(3):
            neutral(post_json(c, "/api/agents/marked/jobs",
                              {"prompt": "hi"}), "jobs-unavailable")
        assert marks(c) == 0
        assert jobs_on_disk(c) == []
        r = c.request("GET", "/api/jobs")
        assert r.status == 200 and r.json()["jobs"] == [], r
        free(sdir)
        r = post_json(c, "/api/agents/marked/jobs", {"prompt": "hi"})
        assert r.status == 200, r
        jid = r.json()["jobId"]
        r = c.request("GET", f"/api/jobs/{jid}/wait?timeoutMs=20000")
        assert r.status == 200 and r.json()["job"]["state"] == "succeeded"
        assert marks(c) == 1


def test_mc3_running_job_on_full_state_ends(home, cordon_factory):
    """MC-3: a running job whose events no longer fit ends all the same
    (never `running` forever), says its events were cut, and its meta on
    disk stays whole JSON; once there is room again, it says so too."""
    with small_fs(home / "state") as sdir:
        c = cordon_factory(home=home)
        at = time.time() + (4.0 if SLOW else 2.0)
        r = post_json(c, "/api/agents/hermes/jobs",
                      {"prompt": f"until {at} full"})
        assert r.status == 200, r
        jid = r.json()["jobId"]
        assert job(c, jid)["state"] == "running"
        fill(sdir)
        r = c.request("GET", f"/api/jobs/{jid}/wait?timeoutMs=20000")
        assert r.status == 200, r
        j = r.json()["job"]
        assert j["state"] == "succeeded" and j["eventsCut"] is True, j
        with open(os.path.join(sdir, "jobs", f"{jid}.json")) as f:
            json.load(f)
        with open(os.path.join(sdir, "jobs", f"{jid}.jsonl"), "rb") as f:
            data = f.read()
        assert data.endswith(b"\n")  # whole lines only
        for ln in data.split(b"\n")[:-1]:
            json.loads(ln)
        free(sdir)
        # The next job's start proves room: the ended job's meta on disk
        # is brought up to date, no longer `running`.
        r = post_json(c, "/api/agents/hermes/jobs", {"prompt": "hi"})
        assert r.status == 200, r
        with open(os.path.join(sdir, "jobs", f"{jid}.json")) as f:
            meta = json.load(f)
        assert meta == j, (meta, j)


def test_mc2_worktree_run_on_full_state_leaves_nothing(tmp_path, monkeypatch,
                                                       cordon_factory):
    """MC-2, MC-3: with the state dir full, a worktree run is refused
    before its agent starts, and leaves no worktree dir, no branch and
    no git admin entry behind; space freed, the next one works."""
    from test_worktree import MANIFESTS as WT, git, make_repo, refs
    server_env(monkeypatch)
    repos = tmp_path / "repos"
    repos.mkdir()
    repo = make_repo(str(repos / "r"))
    extra = {n: t.replace("{repos}", str(repos)) for n, t in WT.items()}
    home = make_agents_home(tmp_path, extra=extra)
    with small_fs(home / "state") as sdir:
        c = cordon_factory(home=home)
        before = refs(repo)
        admin = sorted(os.listdir(os.path.join(repo, ".git")))
        fill(sdir)
        r = post_json(c, "/api/agents/wt/run",
                      {"prompt": "x", "worktree": repo})
        assert r is not None and r.status == 500, r
        assert r.json()["error"] == "worktree-failed", r
        assert refs(repo) == before
        assert sorted(os.listdir(os.path.join(repo, ".git"))) == admin
        listed = git("worktree", "list", "--porcelain", cwd=repo)
        assert [ln for ln in listed.splitlines()
                if ln.startswith("worktree ")] == [f"worktree {repo}"]
        wdir = os.path.join(sdir, "worktrees")
        assert not os.path.isdir(wdir) or os.listdir(wdir) == []
        assert c.request("GET", "/api/worktrees").json()["worktrees"] == []
        free(sdir)
        r = post_json(c, "/api/agents/wt/run",
                      {"prompt": "x", "worktree": repo})
        assert r is not None and r.status == 200, r
        done = [e for e in (json.loads(x) for x in r.body.split(b"\n")
                            if x) if e["kind"] == "done"]
        assert done and "worktree" in done[-1], r


def test_au7_rollover_on_a_full_disk_keeps_the_chain(tmp_path):
    """AU-6, AU-7: the disk is full when the day rolls over: the heads
    anchor cannot be rewritten (the heads file stays as it was, whole),
    the new day's first record is refused and auditd exits; restarted
    with space, the chain continues from the old day's last line into the
    new day and verifies against the heads."""
    from audit_util import (MSG_AUDIT_RECORD_OK, MSG_ERROR, Auditd,
                            day_files, http_rec)
    from test_audit import next_midnight, offset_to
    midnight = next_midnight() + 86400 * 9
    offset = offset_to(midnight - (4.0 if SLOW else 2.5))

    def record(a, n):
        rep = a.peers["broker"].record(http_rec(n))
        assert rep[0] == MSG_AUDIT_RECORD_OK, rep
        return rep[1]["seq"]

    with small_fs(tmp_path / "home" / "audit") as adir:
        acked = []
        for n in range(2):  # a stop anchors the head in the heads file
            a = Auditd(adir, clock_offset=offset)
            try:
                acked.append(record(a, n))
                if n == 0:
                    assert a.stop() == 0
            finally:
                if n == 0 and a.proc.poll() is None:
                    a.kill()
        try:
            with open(os.path.join(adir, "heads"), "rb") as f:
                heads = f.read()
            assert heads.endswith(b"\n") and b"seq=1 " in heads, heads
            fill(adir)
            time.sleep(max(0.0, midnight - (time.time() + offset)) + 0.3)
            rep = a.peers["broker"].record(http_rec(99))
            assert rep == (MSG_ERROR, {"error": "store-failed"}), rep
            assert a.proc.wait(10) == 1
        finally:
            if a.proc.poll() is None:
                a.kill()
        assert "(rollover)" in a.stderr()
        assert "heads file: No space left on device" in a.stderr()
        with open(os.path.join(adir, "heads"), "rb") as f:
            assert f.read() == heads
        free(adir)
        a = Auditd(adir, clock_offset=offset)
        try:
            acked.append(record(a, 100))
            assert a.stop() == 0
        finally:
            if a.proc.poll() is None:
                a.kill()
        d1 = time.strftime("%Y-%m-%d", time.gmtime(midnight - 1))
        d2 = time.strftime("%Y-%m-%d", time.gmtime(midnight))
        assert day_files(adir) == [f"{d1}.jsonl", f"{d2}.jsonl"]
        recs = check_chain(adir)
        assert [r["seq"] for r in recs] == acked == [1, 2, 3], recs
        assert recs[-1]["ts"].startswith(d2), recs
        p = cordon_audit("verify", "--home", os.path.dirname(adir))
        assert p.returncode == 0 and p.stdout.startswith("ok 3 records"), p


@pytest.mark.parametrize("where", ["run", "audit"])
def test_au6_start_on_a_full_home_refused(home, tmp_path, where):
    """AU-6: cordon started on a full run dir (token, port, lock) or
    audit dir refuses to start, says so, and leaves no process; started
    again with space, it runs."""
    from conftest import Cordon, finish
    with small_fs(home / where) as d:
        os.chmod(d, 0o700)
        fill(d)
        c = Cordon(home, ["--allow-root"])
        try:
            assert not c.launch().ready_or_exit()
        finally:
            c.close()
        assert c.returncode == 1, c.stderr()
        assert "No space left on device" in c.stderr()
        # No daemon of this home is left (each is given its dirs).
        assert procs_with_arg(str(home / "audit")) == []
        free(d)
        c = Cordon(home, ["--allow-root"])
        try:
            c.start()
        finally:
            finish(c)


def test_au6_torn_tail_set_aside_once_on_a_full_disk(tmp_path):
    """AU-6: a torn last line that cannot be set aside for want of space
    stops auditd's start and leaves the .torn file as it was, at every
    retry; once there is room, the tail is in it exactly once and the
    chain continues from the last whole line."""
    from audit_util import MSG_AUDIT_RECORD_OK, Auditd, day_files, http_rec
    with small_fs(tmp_path / "home" / "audit") as adir:
        a = Auditd(adir)
        for n in range(3):
            assert a.peers["broker"].record(http_rec(n))[0] == \
                MSG_AUDIT_RECORD_OK
        a.kill()  # no shutdown anchor
        path = os.path.join(adir, day_files(adir)[0])
        torn = b'{"ts":"2026-01-01T00:00:00.000Z","id":"x","seq":4,"pr' * 4
        with open(path, "ab") as f:
            f.write(torn)
        # What an earlier restart set aside: its last page has less room
        # left than this tail needs, so the new tail fits only in part.
        earlier = b"x" * (4096 - len(torn) // 2)
        with open(path + ".torn", "wb") as f:
            f.write(earlier)
        fill(adir)
        for _ in range(2):
            with pytest.raises(AssertionError, match="did not start"):
                Auditd(adir)
            with open(path + ".torn", "rb") as f:
                assert f.read() == earlier
        free(adir)
        a = Auditd(adir)
        try:
            rep = a.peers["broker"].record(http_rec(9))
            assert rep == (MSG_AUDIT_RECORD_OK, {"seq": 4}), rep
            assert a.stop() == 0
        finally:
            if a.proc.poll() is None:
                a.kill()
        with open(path + ".torn", "rb") as f:
            assert f.read() == earlier + torn
        assert [r["seq"] for r in check_chain(adir)] == [1, 2, 3, 4]
