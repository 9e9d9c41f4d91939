# One cordon per home, one auditd per audit dir (SU-1, AU-6, AU-7): two
# instances raced on one home, a restart overlapping the old one's
# shutdown, cordond killed with -9, auditd killed while records flow; in
# every case the audit chain still verifies.  And a stopped cordon leaves
# no run files: `cordon status` says "not running".  Touches only the
# temp homes and the processes it starts.
import os
import re
import signal
import subprocess
import threading
import time

from audit_util import check_chain, cordon_audit, records, wait_until
from conftest import (BACK_S, READY_S, Cordon, child_env, cordon_bin,
                      finish, make_home)

ROUNDS = 20  # bounded: enough to have lost the race both ways
REFUSED = re.compile(r"^cordon: (.+) is in use by another cordon "
                     r"\(pid (\d+)\); not starting$", re.M)


def instance(home, tag):
    c = Cordon(home, extra_args=("--allow-root",))
    # Two on one home: each its own stderr and TMPDIR (runs' tmps).
    c.stderr_path = f"{home}.{tag}.stderr"
    c.tmpdir = f"{home}.{tag}.tmp"
    return c


def refused_by(c, pid):
    """c was refused, naming pid, and exited 1."""
    assert c.returncode == 1, (c.returncode, c.stderr())
    m = REFUSED.search(c.stderr())
    assert m, c.stderr()
    assert int(m.group(2)) == pid, (m.group(0), pid)


def run_file(home, name):
    with open(os.path.join(home, "run", name)) as f:
        return f.read().strip()


def status(home):
    return subprocess.run([cordon_bin(), "status", "--home", str(home)],
                          capture_output=True, text=True, timeout=30,
                          env=child_env())


def verified(home):
    r = cordon_audit("verify", "--home", str(home))
    assert r.returncode == 0, r.stdout + r.stderr
    check_chain(os.path.join(home, "audit"))
    return records(os.path.join(home, "audit"))


def lock_holders(path):
    """Pids holding a POSIX lock on path's inode, from /proc/locks."""
    ino = os.stat(path).st_ino
    pids = []
    with open("/proc/locks") as f:
        for line in f:
            w = line.split()
            if w[1] == "->":  # a waiter
                continue
            if w[1] == "POSIX" and int(w[5].split(":")[2]) == ino:
                pids.append(int(w[4]))
    return pids


def fds_on(pid, path):
    out = []
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == path:
                    out.append(fd)
            except OSError:
                pass
    except OSError:
        pass
    return out


def test_su1_two_instances_raced_one_runs(tmp_path):
    """SU-1, AU-7: two `cordon run` on one home at once, again and again:
    exactly one runs, the other refuses naming its pid and writes nothing
    (the run files stay the winner's), and the chain verifies."""
    home = str(make_home(tmp_path))
    for i in range(ROUNDS):
        a, b = instance(home, f"a{i}"), instance(home, f"b{i}")
        try:
            a.launch()
            b.launch()
            up = [c for c in (a, b) if c.ready_or_exit()]
            assert len(up) == 1, (a.stderr(), b.stderr())
            win = up[0]
            lose = b if win is a else a
            refused_by(lose, win.pid)
            win.health()  # records flow
            assert run_file(home, "token") == win.token
            assert int(run_file(home, "port")) == win.port
        finally:
            finish(a)
            finish(b)
    recs = verified(home)
    assert sum(r["kind"] == "system.boot" for r in recs) == ROUNDS
    assert sum(r["kind"] == "system.shutdown" for r in recs) == ROUNDS


def test_su1_second_instance_touches_nothing(cordon):
    """SU-1: a second cordon on a running home refuses before writing:
    token, port and audit files unchanged, bytes and times."""
    home = cordon.home
    files = [os.path.join(home, "run", n) for n in ("token", "port")]
    audit = os.path.join(home, "audit")
    files += [os.path.join(audit, n) for n in sorted(os.listdir(audit))]
    before = {p: (os.stat(p).st_mtime_ns, open(p, "rb").read())
              for p in files}
    second = instance(home, "second").launch()
    try:
        assert not second.ready_or_exit()
        refused_by(second, cordon.pid)
    finally:
        finish(second)
    assert sorted(os.listdir(audit)) == sorted(
        os.path.basename(p) for p in files[2:])
    after = {p: (os.stat(p).st_mtime_ns, open(p, "rb").read())
             for p in files}
    assert after == before


def test_su1_lock_held_by_cordond_and_auditd_alone(cordon):
    """SU-1, AU-6: cordond holds the home's lock and auditd the audit
    dir's; no other daemon inherits either fd (so no agent can)."""
    home = cordon.home
    run_lock = os.path.join(home, "run", "lock")
    audit_lock = os.path.join(home, "audit", "lock")
    pids = cordon.daemon_pids()
    assert lock_holders(run_lock) == [cordon.pid]
    assert lock_holders(audit_lock) == [pids["auditd"]]
    assert run_file(home, "lock") == str(cordon.pid)
    for name, pid in pids.items():
        assert not fds_on(pid, run_lock), name
        if name != "auditd":
            assert not fds_on(pid, audit_lock), name
    assert os.stat(run_lock).st_mode & 0o777 == 0o600


def test_su1_restart_overlapping_shutdown(tmp_path):
    """SU-1, AU-7: SIGTERM and at once a new start, repeatedly: the new
    one runs only once the old one is gone, else it refuses naming it;
    every old one stops cleanly and the chain verifies."""
    home = str(make_home(tmp_path))
    old = instance(home, "s").start()
    try:
        for i in range(ROUNDS // 2):
            old.proc.send_signal(signal.SIGTERM)
            new = instance(home, f"n{i}").launch()
            if new.ready_or_exit():
                assert old.proc.poll() is not None  # it had gone
            else:
                refused_by(new, old.pid)
                finish(new)
                new = instance(home, f"r{i}")
            finish(old)
            if new.proc is None:
                new.start()
            old = new
            old.health()
    finally:
        finish(old)
    recs = verified(home)
    assert (sum(r["kind"] == "system.boot" for r in recs) ==
            sum(r["kind"] == "system.shutdown" for r in recs))


def test_su1_kill9_then_start(tmp_path):
    """SU-1, AU-6: cordond killed with -9 leaves stale run files and its
    daemons finishing; `cordon status` says not running (the kernel
    dropped the lock), a new start replaces the files, and the chain
    verifies, the old auditd's last records included."""
    home = str(make_home(tmp_path))
    old = instance(home, "k").start()
    try:
        for i in range(3):
            old.health()
            os.kill(old.pid, signal.SIGKILL)
            old.proc.wait(READY_S)
            old.returncode = old.proc.returncode
            assert os.path.exists(os.path.join(home, "run", "token"))
            r = status(home)
            assert r.returncode == 3, r.stdout + r.stderr
            assert r.stderr.strip() == "cordon: status: not running"
            new = instance(home, f"k{i}").start()
            assert new.token != old.token
            assert int(run_file(home, "port")) == new.port
            # Its daemons end on their parent-death signal.
            wait_until(lambda: not old.leftovers(), READY_S)
            finish(old)
            old = new
        assert status(home).returncode == 0
    finally:
        finish(old)
    verified(home)


def test_au6_auditd_killed_while_records_flow(cordon):
    """AU-6, AU-7, SU-1: auditd killed and restarted by cordond while the
    broker keeps sending records: each new auditd takes the audit dir's
    lock once the old one is gone, and the chain verifies."""
    home = cordon.home
    audit_lock = os.path.join(home, "audit", "lock")
    stop = threading.Event()

    def load():
        while not stop.is_set():
            try:
                cordon.request()
            except OSError:
                pass

    t = threading.Thread(target=load)
    t.start()
    try:
        for _ in range(3):
            pid = cordon.daemon_pids()["auditd"]
            os.kill(pid, signal.SIGKILL)
            h = cordon.health_when(lambda h: any(
                d["name"] == "auditd" and d.get("pid") not in (None, pid)
                and d["up"] for d in h["daemons"]), bound=BACK_S + 5)
            new = [d["pid"] for d in h["daemons"] if d["name"] == "auditd"]
            assert lock_holders(audit_lock) == new
    finally:
        stop.set()
        t.join()
    assert cordon.stop() == 0
    verified(home)


def test_su1_clean_stop_removes_run_files(cordon):
    """A clean stop removes run/token and run/port (the lock file stays,
    unlocked); `cordon status` then says not running, exit 3."""
    home = cordon.home
    assert cordon.stop() == 0
    assert sorted(os.listdir(os.path.join(home, "run"))) == ["lock"]
    r = status(home)
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stderr.strip() == "cordon: status: not running"


def test_su1_stale_run_files_not_running(tmp_path):
    """Run files nobody's lock stands behind are stale: not running."""
    home = make_home(tmp_path)
    os.makedirs(home / "run", mode=0o700)
    (home / "run" / "token").write_text("a" * 64 + "\n")
    (home / "run" / "port").write_text("1\n")
    r = status(home)
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stderr.strip() == "cordon: status: not running"
