# SBX-3, SBX-4: the host's /run is covered in every run's view.  Host
# daemons listen there (docker's socket is root on the host, the system
# bus, systemd, the users' runtime dirs), and with `network: allow` no
# other layer keeps an agent from connecting to a unix socket by path.
# A stand-in daemon listens in a dir of its own under /run; a hostile
# agent (sbx_probe.py) tries to reach it by /run and by /var/run, as the
# module's root cordon and as a plain user's, in both isolation modes;
# what an agent needs from /run (the resolver's dir, which
# /etc/resolv.conf names on systemd-resolved hosts) is still shown, and
# its own /tmp and TCP still work.
import os
import pathlib
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import uuid

import pytest

from conftest import run_world
from test_sbx4 import probe, probe_dir, probe_manifest  # noqa: F401

ISO = ["landlock", "namespace"]
RESOLVE = pathlib.Path("/run/systemd/resolve")
AGENTS = [(iso, net) for iso in ISO for net in ("allow", "none")]


def agent(iso, net):
    return f"p-{iso}-{net}"


@pytest.fixture(scope="module")
def world(tmp_path_factory, probe_dir):
    extra = {agent(i, n): probe_manifest(agent(i, n), "{ws}", probe_dir, i,
                                         net=n) for i, n in AGENTS}
    yield from run_world(tmp_path_factory, extra=extra, outside_tmp=True)


@pytest.fixture(scope="module")
def host_run():
    """A stand-in host daemon under /run: a stream and a datagram socket
    any user may reach, and a file; the resolver's dir with a file in it
    (made here, and removed after, where the host has none)."""
    if os.getuid() != 0:
        pytest.skip("needs root to write in /run")
    d = pathlib.Path(tempfile.mkdtemp(prefix="cordon-test-", dir="/run"))
    os.chmod(d, 0o755)
    made = [] if RESOLVE.exists() else [p for p in (RESOLVE.parent, RESOLVE)
                                        if not p.exists()]
    for p in made:
        p.mkdir(mode=0o755)
    mark = RESOLVE / f"cordon-test-{uuid.uuid4().hex[:12]}"
    st = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dg = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        st.bind(str(d / "s"))
        st.listen(4)
        dg.bind(str(d / "d"))
        for n in ("s", "d"):
            os.chmod(d / n, 0o777)
        (d / "f").write_text("host\n")
        os.chmod(d / "f", 0o644)
        mark.write_text("resolver\n")
        os.chmod(mark, 0o644)
        st.setblocking(False)
        dg.setblocking(False)
        yield {"dir": d, "st": st, "dg": dg, "mark": mark}
    finally:
        st.close()
        dg.close()
        shutil.rmtree(d, ignore_errors=True)
        mark.unlink(missing_ok=True)
        for p in reversed(made):
            shutil.rmtree(p, ignore_errors=True)


def check_run_covered(c, name, h):
    d = h["dir"]
    for base in ("/run", "/var/run"):
        p = f"{base}/{d.name}"
        for t, how, s in (("stream", "connect", "s"),
                          ("dgram", "sendto", "d"),
                          ("dgram", "connect", "d")):
            out = probe(c, name, f"unix {t} {how} {p}/{s}")
            assert out in ("unix BLOCKED ENOENT", "unix BLOCKED EACCES"), \
                (name, p, t, how, out)
        out = probe(c, name, f"cat {p}/f")
        assert out == "cat OK ENOENT", (name, out)
    # Nothing reached the daemon.
    with pytest.raises(BlockingIOError):
        h["st"].accept()
    with pytest.raises(BlockingIOError):
        h["dg"].recv(64)
    # What an agent needs from /run is still there, read-only.
    out = probe(c, name, f"cat {h['mark']}")
    assert out == "cat OK resolver", (name, out)
    out = probe(c, name, f"write {h['mark']}")
    assert out.startswith("write BLOCKED "), (name, out)
    # Its own /tmp is its own, writable.
    out = probe(c, name, "write /tmp/own")
    assert out == "write ESCAPED", (name, out)


@pytest.mark.parametrize("iso,net", AGENTS)
def test_sbx3_host_run_sockets_covered(c, world, host_run, iso, net):
    check_run_covered(c, agent(iso, net), host_run)


def listening(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.listen(1)
    s.setblocking(False)
    os.chmod(path, 0o777)
    return s


def check_home_sockets(c, name, op):
    """SBX-2: a daemon's socket in a protected dir of the operator's home
    (gpg-agent's where there is no /run/user, Docker Desktop's) is out of
    reach, as the rest of the dir; one elsewhere in the home is not, as
    the threat model says."""
    places = {"gpg": op / ".gnupg" / "S.gpg-agent",
              "docker": op / ".docker" / "run" / "docker.sock",
              "ssh": op / ".ssh" / "agent.sock",
              "plain": op / "sockets" / "s"}
    made, socks = [], []
    try:
        for p in places.values():
            for d in reversed(p.relative_to(op).parents[:-1]):
                if not (op / d).exists():
                    (op / d).mkdir(mode=0o755)
                    made.append(op / d)
            socks.append(listening(p))
        for what, p in places.items():
            out = probe(c, name, f"unix stream connect {p}")
            if what == "plain":
                assert out == "unix ESCAPED", (name, out)
            else:
                assert out == "unix BLOCKED ENOENT", (name, what, out)
    finally:
        for s in socks:
            s.close()
        for p in places.values():
            p.unlink(missing_ok=True)
        for d in reversed(made):
            shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("iso", ISO)
def test_sbx2_home_protected_dir_sockets_covered(c, world, iso):
    check_home_sockets(c, agent(iso, "allow"), world.op)


def check_linked_home_sockets(c, name, op):
    """SBX-2, SBX-3: a protected dir of the home that is a link (a
    dotfiles setup: ~/.gnupg -> dotfiles/gnupg) is covered where it
    leads, so a daemon's socket there is out of reach by either path;
    the rest of the dotfiles dir is not.  A dangling protected link, and
    one to a dir the run does not show (the host's /tmp), change
    nothing: the run goes on."""
    dot = op / "dotfiles-sbx3"
    for ln in (".gnupg", ".kube", ".azure"):
        assert not os.path.lexists(op / ln), ln
    hidden = pathlib.Path(tempfile.mkdtemp(prefix="cordon-sbx3l-",
                                           dir="/tmp"))
    links = {op / ".gnupg": "dotfiles-sbx3/gnupg",
             op / ".kube": str(dot / "nowhere"),
             op / ".azure": str(hidden)}
    socks = []
    try:
        (dot / "gnupg").mkdir(parents=True, mode=0o755)
        (dot / "other").mkdir(mode=0o755)
        os.chmod(dot, 0o755)
        os.chmod(hidden, 0o755)
        for ln, to in links.items():
            ln.symlink_to(to)
        socks.append(listening(dot / "gnupg" / "S.gpg-agent"))
        socks.append(listening(dot / "other" / "s"))
        socks.append(listening(hidden / "s"))
        for p in (op / ".gnupg" / "S.gpg-agent",
                  dot / "gnupg" / "S.gpg-agent"):
            out = probe(c, name, f"unix stream connect {p}")
            assert out == "unix BLOCKED ENOENT", (name, p, out)
        out = probe(c, name, f"unix stream connect {dot / 'other' / 's'}")
        assert out == "unix ESCAPED", (name, out)
        with pytest.raises(BlockingIOError):
            socks[0].accept()
    finally:
        for s in socks:
            s.close()
        for ln in links:
            if os.path.islink(ln):
                ln.unlink()
        shutil.rmtree(dot, ignore_errors=True)
        shutil.rmtree(hidden, ignore_errors=True)


@pytest.mark.parametrize("iso", ISO)
def test_sbx3_linked_home_protected_dir_sockets_covered(c, world, iso):
    check_linked_home_sockets(c, agent(iso, "allow"), world.op)


@pytest.mark.parametrize("iso", ISO)
def test_sbx3_network_allow_still_reaches_tcp(c, world, iso):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    try:
        port = srv.getsockname()[1]
        out = probe(c, agent(iso, "allow"), f"tcp 127.0.0.1 {port}")
        assert out == "tcp OK", out
    finally:
        srv.close()


# ---- the same under a plain user's cordon ----

@pytest.fixture(scope="module")
def user_world(probe_dir):
    import test_sandbox as ts
    from conftest import finish
    u = ts.cordon_test_user()
    base = pathlib.Path(tempfile.mkdtemp(prefix="cordon-sbx3r-",
                                         dir="/var/tmp"))
    mp = pytest.MonkeyPatch()
    w = ts.make_world(base, mp)
    for i in ISO:
        ts.add_agent(w, agent(i, "allow"),
                     probe_manifest(agent(i, "allow"), str(w["work"]),
                                    probe_dir, i, net="allow"))
    ts.give_world(w, u)
    c = ts.user_cordon(w)
    try:
        c.start()
        w["c"] = c
        yield w
    finally:
        finish(c)
        mp.undo()
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("iso", ISO)
def test_sbx3_host_run_sockets_covered_as_user(user_world, host_run, iso):
    check_run_covered(user_world["c"], agent(iso, "allow"), host_run)


@pytest.mark.parametrize("iso", ISO)
def test_sbx2_home_protected_dir_sockets_covered_as_user(user_world, iso):
    check_home_sockets(user_world["c"], agent(iso, "allow"),
                       user_world["op"])


@pytest.mark.parametrize("iso", ISO)
def test_sbx3_linked_home_protected_dir_sockets_covered_as_user(user_world,
                                                                iso):
    check_linked_home_sockets(user_world["c"], agent(iso, "allow"),
                              user_world["op"])


# ---- DNS on a systemd-resolved host: /etc/resolv.conf is a link ----

STUB = "127.0.0.53"  # systemd-resolved's stub, named by its stub file
ANSWER = "192.0.2.7"


def dns_answer(q):
    """The answer to a query q: ANSWER for an A question, none else."""
    end = 12
    while q[end] != 0:
        end += q[end] + 1
    question = q[12:end + 5]
    qtype = struct.unpack(">H", q[end + 1:end + 3])[0]
    an = (struct.pack(">HHHIH", 0xC00C, 1, 1, 60, 4) +
          socket.inet_aton(ANSWER)) if qtype == 1 else b""
    return (q[:2] + struct.pack(">HHHHH", 0x8180, 1, 1 if an else 0, 0, 0)
            + question + an)


@pytest.fixture(scope="module")
def resolved_host(probe_dir, tmp_path_factory):
    """A cordon on a host as systemd-resolved leaves it: /etc/resolv.conf
    a link to /run/systemd/resolve/stub-resolv.conf, which names the stub
    resolver, answered here.  The host's /etc stays as it is: cordon runs
    in a mount namespace of its own with a copy of /etc bound over it."""
    import test_sandbox as ts
    from conftest import Cordon, finish
    if os.getuid() != 0:
        pytest.skip("needs root for /run and a mount namespace")
    try:
        srv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        srv.bind((STUB, 53))
    except OSError as e:
        pytest.skip(f"the stub resolver's address is taken: {e}")
    base = pathlib.Path(tempfile.mkdtemp(prefix="cordon-sbx3d-",
                                         dir="/var/tmp"))
    etc = base / "etc"
    made = [p for p in (RESOLVE.parent, RESOLVE) if not p.exists()]
    stub = RESOLVE / "stub-resolv.conf"
    had_stub = stub.exists()
    mp = pytest.MonkeyPatch()
    stop = threading.Event()

    def serve():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                q, peer = srv.recvfrom(512)
                srv.sendto(dns_answer(q), peer)
            except (socket.timeout, IndexError, struct.error):
                pass

    th = threading.Thread(target=serve, daemon=True)
    c = None
    try:
        subprocess.run(["cp", "-a", "/etc", str(etc)], check=True)
        os.unlink(etc / "resolv.conf")
        os.symlink("../run/systemd/resolve/stub-resolv.conf",
                   etc / "resolv.conf")
        for p in made:
            p.mkdir(mode=0o755)
        if not had_stub:
            stub.write_text(f"nameserver {STUB}\noptions edns0\n")
        th.start()
        (base / "w").mkdir()
        w = ts.make_world(base / "w", mp)
        for i in ISO:
            ts.add_agent(w, agent(i, "allow"),
                         probe_manifest(agent(i, "allow"), str(w["work"]),
                                        probe_dir, i, net="allow"))
        c = Cordon(w["home"], ["--allow-root"], prefix=[
            "unshare", "-m", "--propagation", "private", "--", "sh", "-c",
            'mount --bind "$0" /etc && exec "$@"', str(etc)]).start()
        yield c
    finally:
        if c is not None:
            finish(c)
        stop.set()
        if th.is_alive():
            th.join()
        srv.close()
        mp.undo()
        if not had_stub:
            stub.unlink(missing_ok=True)
        for p in reversed(made):
            shutil.rmtree(p, ignore_errors=True)
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("iso", ISO)
def test_sbx3_network_allow_dns_through_run_link(resolved_host, iso):
    """The resolver's dir is shown again under the cover of /run, so a
    name resolves through /etc/resolv.conf's link as on the host."""
    out = probe(resolved_host, agent(iso, "allow"),
                "resolve api.cordon-test.example")
    assert out == f"resolve OK {ANSWER}", out
