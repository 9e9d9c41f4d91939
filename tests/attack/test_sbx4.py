# SBX-3, SBX-4, SP-7: what an agent could change or leave for others.
# A hostile agent (sbx_probe.py run by the system python3) tries, through
# the real API: metadata changes outside its write roots, set-id bits
# anywhere, reading a secret file while a sibling run swaps folders under
# the cover, unix sockets of the host by path under network: none, a
# concurrent run's prompt in /proc, and memory and /tmp past the bounds.
# Under --allow-root (the module's world, conftest.py) and under a plain
# user (setpriv, as tests/integration/test_sandbox.py does), with a
# second, fresh local user checking that nothing left behind serves it.
# Each case must fail; the invariants prove nothing outside changed.
import ctypes
import os
import pathlib
import pwd
import secrets
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
import time
import uuid

import pytest

from agents_util import run, text_of
from conftest import run_world

PROBE_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "sbx_probe.py")
ISO = ["landlock", "namespace"]
REAL = "REAL-dotenv-" + uuid.uuid4().hex[:12]


def probe_manifest(name, ws, probe_dir, iso="namespace", limits="",
                   net="none"):
    return (f"name: {name}\ntransport: subprocess\ntransportConfig:\n"
            "  bin: /usr/bin/python3\n"
            f"  args: [\"-I\", \"{probe_dir}/sbx_probe.py\", \"{{prompt}}\"]\n"
            f"  cwd: {ws}\n  timeoutMs: 20000\n"
            f"sandbox:\n  isolation: {iso}\n  network: {net}\n"
            f"  readRoots: [\"{probe_dir}\"]\n  writeRoots: [\"{ws}\"]\n"
            + (f"limits:\n{limits}" if limits else ""))


def node_manifest(name, ws):
    return (f"name: {name}\ntransport: subprocess\ntransportConfig:\n"
            "  bin: /usr/bin/node\n  args: [\"-e\", \"{prompt}\"]\n"
            f"  cwd: {ws}\n  timeoutMs: 20000\n"
            f"sandbox:\n  network: none\n  writeRoots: [\"{ws}\"]\n")


@pytest.fixture(scope="module")
def probe_dir():
    d = tempfile.mkdtemp(prefix="cordon-probe-", dir="/var/tmp")
    shutil.copy(PROBE_SRC, d)
    os.chmod(d, 0o755)
    os.chmod(os.path.join(d, "sbx_probe.py"), 0o644)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def world(tmp_path_factory, probe_dir):
    extra = {f"p-{i}": probe_manifest(f"p-{i}", "{ws}", probe_dir, i)
             for i in ISO}
    extra["p-mem"] = probe_manifest("p-mem", "{ws}", probe_dir,
                                    limits="  memBytes: 268435456\n")
    extra["nodeagent"] = node_manifest("nodeagent", "{ws}")
    yield from run_world(tmp_path_factory, extra=extra, outside_tmp=True)


def probe(c, agent, prompt):
    r, ev = run(c, agent, prompt)
    assert r.status == 200, (prompt, r)
    return text_of(ev).strip()


@pytest.fixture(scope="module")
def other_user():
    """A fresh local user, made for this module and removed after."""
    if os.getuid() != 0:
        pytest.skip("needs root to add a user")
    name = "cordon-o" + uuid.uuid4().hex[:8]
    p = subprocess.run(["/usr/sbin/useradd", "--no-create-home", "--shell",
                        "/usr/sbin/nologin", name], capture_output=True,
                       timeout=30)
    assert p.returncode == 0, p.stderr
    yield pwd.getpwnam(name)
    subprocess.run(["/usr/sbin/userdel", name], capture_output=True,
                   timeout=30)


def as_user(u, argv):
    return subprocess.run(["setpriv", f"--reuid={u.pw_uid}",
                           f"--regid={u.pw_gid}", "--clear-groups", "--"]
                          + argv, capture_output=True, text=True,
                          timeout=30)


def setid_files(root):
    out = []
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            st = os.lstat(os.path.join(d, n))
            if st.st_mode & (stat.S_ISUID | stat.S_ISGID):
                out.append(os.path.join(d, n))
    return out


def reachable(path):
    """Let another user walk down to path (the test's own dirs only)."""
    p = pathlib.Path(path)
    for q in [p] + list(p.parents):
        if str(q).startswith("/var/tmp/cordon-"):
            os.chmod(q, os.stat(q).st_mode | 0o711)


# ---- SBX-4: no metadata change outside the write roots ----

META = [
    # (id, prompt template): the agent's uid owns each target.
    ("chmod-key", "chmod {op}/.ssh/id_rsa 0644"),
    ("chmod-ssh-dir", "chmod {op}/.ssh 0755"),
    ("chmod-home", "chmod {op} 0777"),
    ("chmod-bashrc", "chmod {op}/.bashrc 0666"),
    ("chmod-secrets-yaml", "chmod {home}/secrets.yaml 0644"),
    ("chmod-outside", "chmod {outside}/keep.txt 0666"),
    ("fchmodat2-outside", "fchmodat2 {outside}/keep.txt 0666"),
    ("suid-root-binary-outside", "chmod {outside}/rootbin 04755"),
    ("utime-bashrc", "utime {op}/.bashrc"),
    ("utime-outside", "utime {outside}/keep.txt"),
    ("setxattr-outside", "setxattr {outside}/keep.txt"),
    ("setxattr-home", "setxattr {op}"),
    ("chown-outside", "chown {outside}/keep.txt"),
]


@pytest.fixture(scope="module")
def rootbin(world):
    p = world.outside / "rootbin"
    shutil.copy("/usr/bin/id", p)
    os.chmod(p, 0o755)
    return p


@pytest.mark.parametrize("prompt", [p for _, p in META],
                         ids=[i for i, _ in META])
@pytest.mark.parametrize("iso", ISO)
def test_sbx4_no_metadata_change_outside_roots(c, world, rootbin, iso,
                                               prompt):
    p = prompt.format(op=world.op, home=world.home, outside=world.outside)
    out = probe(c, f"p-{iso}", p)
    mode = p.split(" ", 1)[0]
    assert out.startswith(f"{mode} BLOCKED "), (p, out)
    assert not os.stat(rootbin).st_mode & stat.S_ISUID


@pytest.mark.parametrize("iso", ISO)
def test_sbx4_metadata_inside_root_still_allowed(c, world, iso):
    t = world.ws / "meta.txt"
    t.write_text("x\n")
    try:
        for p in (f"chmod {t} 0600", f"utime {t}", f"chmod {t} 0755"):
            out = probe(c, f"p-{iso}", p)
            assert out.endswith(" ESCAPED"), (p, out)  # i.e. it worked
        assert stat.S_IMODE(os.stat(t).st_mode) == 0o755
        assert os.stat(t).st_mtime == 0
    finally:
        t.unlink()


# ---- SBX-4: no S_ISUID / S_ISGID anywhere ----

SETID = [
    ("chmod-4755", "chmod {t} 04755"),
    ("chmod-g+s", "chmod {t} 02755"),
    ("chmod-6755", "chmod {t} 06755"),
    ("fchmod", "fchmod {t} 04755"),
    ("fchmodat", "fchmodat {t} 04711"),
    ("fchmodat2", "fchmodat2 {t} 04755"),
    ("create-4755", "create {ws}/made-suid 04755"),
    ("mkdir-g+s", "mkdir {ws}/made-sgid 02755"),
    ("mknod-4755", "mknod {ws}/made-node 04755"),
    ("install-m-4755", "install {ws}/installed 4755"),
    ("install-m-2755", "install {ws}/installed2 2755"),
]


def check_other_user_gains_nothing(u, ws, t, owner_uid):
    """u runs what the agent left: it runs as u, never as the owner."""
    assert setid_files(ws) == [], setid_files(ws)
    reachable(ws)
    os.chmod(ws, 0o755)
    r = as_user(u, [str(t), "-u"])
    assert r.returncode == 0, r
    assert r.stdout.strip() == str(u.pw_uid) != str(owner_uid), r


@pytest.mark.parametrize("iso", ISO)
def test_sbx4_no_setid_bits_as_root(c, world, other_user, iso):
    t = world.ws / "t"
    shutil.copy("/usr/bin/id", t)
    os.chmod(t, 0o755)
    try:
        for rid, prompt in SETID:
            p = prompt.format(t=t, ws=world.ws)
            out = probe(c, f"p-{iso}", p)
            mode = p.split(" ", 1)[0]
            assert out.startswith(f"{mode} BLOCKED "), (rid, out)
        check_other_user_gains_nothing(other_user, world.ws, t, 0)
    finally:
        for n in ("t", "made-suid", "made-node", "installed",
                  "installed2"):
            (world.ws / n).unlink(missing_ok=True)
        shutil.rmtree(world.ws / "made-sgid", ignore_errors=True)


# ---- SBX-2, SBX-4: the secret-file cover holds against a sibling run
# that swaps folders (RENAME_EXCHANGE) while the next run is set up ----

def test_sbx4_cover_holds_while_a_sibling_swaps(c, world):
    race = world.ws / "race"
    for d, v in (("a", REAL), ("b", "DECOY")):
        (race / d).mkdir(parents=True)
        (race / d / ".env").write_text(v + "\n")
    got, refused = [], 0
    swap = {}

    def swapper():
        swap["out"] = probe(c, "p-namespace",
                            f"swap {race}/a {race}/b 4")

    th = threading.Thread(target=swapper)
    th.start()
    try:
        time.sleep(0.5)
        for _ in range(12):
            r, ev = run(c, "p-landlock", f"cat {race}/a/.env {race}/b/.env")
            if r.status != 200:  # the tree would not hold still: refused
                refused += 1
                continue
            got.append(text_of(ev).strip())
    finally:
        th.join()
        shutil.rmtree(race, ignore_errors=True)
    assert swap["out"].startswith("swap OK ") and \
        int(swap["out"].split()[2]) > 100, swap
    assert all(REAL not in g for g in got), (got, refused, swap)
    assert got, "every run refused"


# ---- SBX-3: no host unix socket by path under network: none ----

UNIX = [("raw", "sendto"), ("raw", "sendmsg"), ("dgram", "sendto"),
        ("dgram-cloexec", "sendmsg"), ("dgram", "connect"),
        ("seqpacket", "connect"), ("stream", "connect"),
        ("raw", "connect"), ("stream", "sendto"), ("pair", "sendto")]


@pytest.mark.parametrize("iso", ISO)
def test_sbx3_no_host_unix_socket_by_path(c, world, iso):
    d = world.ws / "socks"
    d.mkdir()
    dg = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    st = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sq = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        dg.bind(str(d / "dg"))
        st.bind(str(d / "st"))
        st.listen(4)
        sq.bind(str(d / "sq"))
        sq.listen(4)
        for t, how in UNIX:
            target = {"seqpacket": "sq", "stream": "st"}.get(t, "dg")
            if how == "connect" and t in ("stream",):
                target = "st"
            out = probe(c, f"p-{iso}", f"unix {t} {how} {d / target}")
            assert out.startswith("unix BLOCKED "), (t, how, out)
        for s in (dg, st, sq):
            s.setblocking(False)
        with pytest.raises(BlockingIOError):
            dg.recv(64)
        with pytest.raises(BlockingIOError):
            st.accept()
        with pytest.raises(BlockingIOError):
            sq.accept()
    finally:
        for s in (dg, st, sq):
            s.close()
        shutil.rmtree(d, ignore_errors=True)


# ---- SBX-4: a run sees no other run's argv (its prompt) ----

@pytest.mark.parametrize("iso", ISO)
def test_sbx4_no_other_runs_argv(c, world, iso):
    mark = "mk" + uuid.uuid4().hex[:16]
    held = {}
    th = threading.Thread(target=lambda: held.setdefault(
        "out", probe(c, "p-namespace", f"sleep 4 {mark}")))
    th.start()
    try:
        # The host sees it (promptVia: argv; cordon check says so) ...
        deadline = time.monotonic() + 3
        seen = False
        while not seen and time.monotonic() < deadline:
            for pid in os.listdir("/proc"):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        seen = seen or mark.encode() in f.read()
                except OSError:
                    pass
            time.sleep(0.05)
        assert seen
        # ... another run does not.
        out = probe(c, f"p-{iso}", "proc-argv " + mark[::-1])
        assert out == "proc-argv BLOCKED ENOENT", out
    finally:
        th.join()
    assert held["out"] == "sleep OK"


# ---- SBX-4, SP-8: pid 1 of the run is out of the agent's reach ----

@pytest.mark.parametrize("iso", ISO)
def test_sbx4_init_out_of_reach(c, world, iso):
    """cordon-init holds the socket the spawner reads the agent's wait
    status from: an agent that took it (pidfd_getfd) could report any
    end it liked.  Its descriptors and memory stay out of reach, and
    the agent's own exit is what the run reports."""
    check_init_out_of_reach(c, f"p-{iso}")


def check_init_out_of_reach(c, agent):
    r, ev = run(c, agent, "init-reach")
    assert r.status == 200, r
    assert text_of(ev).strip() == "init-reach BLOCKED EPERM", ev
    errs = [e for e in ev if e["kind"] == "error"]
    assert errs and errs[0]["errorClass"] == "non-zero-exit", ev
    assert ev[-1]["kind"] == "done" and ev[-1]["exitCode"] == 3, ev


# ---- SBX-4: System V IPC: none of the host's, none left behind ----

LIBC = ctypes.CDLL(None, use_errno=True)
IPC_CREAT, IPC_RMID = 0o1000, 0


def sysv_ids(key):
    """(shm, msg, sem) ids of key on the host, -1 where none."""
    return (LIBC.shmget(key, 0, 0), LIBC.msgget(key, 0),
            LIBC.semget(key, 0, 0))


def sysv_remove(key):
    shm, msg, sem = sysv_ids(key)
    if shm != -1:
        LIBC.shmctl(shm, IPC_RMID, None)
    if msg != -1:
        LIBC.msgctl(msg, IPC_RMID, None)
    if sem != -1:
        LIBC.semctl(sem, 0, IPC_RMID)


def check_sysv_apart(c, agent):
    """The agent makes System V objects of its own (mode 0644, which
    every local user could read were they the host's) and looks for one
    of root's (0600: its own as uid 0).  Its objects are its run's
    only; the host's are out of its sight; none outlives the run."""
    hk, ok = (secrets.randbelow(1 << 30) + 1 for _ in range(2))
    host = LIBC.shmget(hk, 4096, IPC_CREAT | 0o600)
    assert host != -1
    try:
        out = probe(c, agent, f"sysv {hk} {ok}")
        assert out == "sysv OK 1 1 1", out
        assert sysv_ids(ok) == (-1, -1, -1)
    finally:
        LIBC.shmctl(host, IPC_RMID, None)
        sysv_remove(ok)


@pytest.mark.parametrize("iso", ISO)
def test_sbx4_sysv_ipc_apart(c, world, iso):
    check_sysv_apart(c, f"p-{iso}")


# ---- SP-7: default bounds on memory ----

def test_sp7_memory_bound_by_default(c, world):
    assert probe(c, "p-namespace", "mem 64") == "mem ESCAPED"  # fits
    assert probe(c, "p-namespace", "mem 2300") == "mem BLOCKED ENOMEM"
    assert probe(c, "p-mem", "mem 400") == "mem BLOCKED ENOMEM"


# ---- real agent CLIs still run under the default ----

def test_sbx4_node_runs_and_spawns(c, world):
    if not os.path.exists("/usr/bin/node"):
        pytest.skip("no node")
    assert probe(c, "nodeagent", "console.log(1)") == "1"
    out = probe(c, "nodeagent",
                "const cp=require('child_process');"
                "console.log(cp.execFileSync(process.execPath,"
                "['-e','console.log(require(\"os\").tmpdir())']).toString()"
                ".trim())")
    assert out == "/tmp", out


# ---- the same under a plain user (cordon run --user) ----

@pytest.fixture(scope="module")
def user_world(probe_dir, other_user):
    import test_sandbox as ts
    from conftest import finish
    u = ts.cordon_test_user()
    base = pathlib.Path(tempfile.mkdtemp(prefix="cordon-sbx4u-",
                                         dir="/var/tmp"))
    mp = pytest.MonkeyPatch()
    w = ts.make_world(base, mp)
    ws = str(w["work"])
    for n, t in (("p", probe_manifest("p", ws, probe_dir)),
                 ("p-ll", probe_manifest("p-ll", ws, probe_dir,
                                         "landlock")),
                 ("p-tmp", probe_manifest("p-tmp", ws, probe_dir,
                                          limits="  tmpBytes: 16777216\n"))):
        ts.add_agent(w, n, t)
    ts.give_world(w, u)
    c = ts.user_cordon(w)
    try:
        c.start()
        w["c"], w["u"] = c, u
        yield w
    finally:
        finish(c)
        mp.undo()
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("agent", ["p", "p-ll"])
def test_sbx4_no_setid_bits_as_user(user_world, other_user, agent):
    w, c, u = user_world, user_world["c"], user_world["u"]
    t = w["work"] / "t"
    shutil.copy("/usr/bin/id", t)
    os.chown(t, u.pw_uid, u.pw_gid)
    os.chmod(t, 0o755)
    os.chmod(w["op"] / ".ssh" / "id_rsa", 0o600)
    try:
        for rid, prompt in SETID:
            p = prompt.format(t=t, ws=w["work"])
            out = probe(c, agent, p)
            assert out.startswith(p.split(" ", 1)[0] + " BLOCKED "), \
                (rid, out)
        # Outside the roots, on files the operator's uid owns.
        for p in (f"chmod {w['op']}/.ssh/id_rsa 0644",
                  f"chmod {w['op']} 0777", f"utime {w['op']}/.bashrc",
                  f"setxattr {w['op']}/.bashrc"):
            out = probe(c, agent, p)
            assert out.startswith(p.split(" ", 1)[0] + " BLOCKED "), out
        assert stat.S_IMODE(os.stat(w["op"] / ".ssh" / "id_rsa").st_mode) \
            == 0o600
        check_other_user_gains_nothing(other_user, w["work"], t, u.pw_uid)
    finally:
        for n in ("t", "made-suid", "made-node", "installed",
                  "installed2"):
            (w["work"] / n).unlink(missing_ok=True)
        shutil.rmtree(w["work"] / "made-sgid", ignore_errors=True)


@pytest.mark.parametrize("agent", ["p", "p-ll"])
def test_sbx4_init_out_of_reach_as_user(user_world, agent):
    check_init_out_of_reach(user_world["c"], agent)


@pytest.mark.parametrize("agent", ["p", "p-ll"])
def test_sbx4_sysv_ipc_apart_as_user(user_world, agent):
    check_sysv_apart(user_world["c"], agent)


def test_sp7_private_tmp_is_bounded(user_world):
    c = user_world["c"]
    assert probe(c, "p", "tmpsize") == "tmpsize OK 512"
    assert probe(c, "p-tmp", "tmpsize") == "tmpsize OK 16"
    assert probe(c, "p-tmp", "fill /tmp 64") == "fill BLOCKED ENOSPC"
    # Nothing of it on the host: the tmpfs went with the run.
    assert probe(c, "p-tmp", "fill /tmp 8") == "fill ESCAPED"
