# The per-run sandbox (SBX-1 ... SBX-5), each case a real escape attempt by
# a real child: tests/sandbox/escape.c (built as escape-agent) run through
# the real API, in both isolation modes and both network settings.  Every
# attempt must fail and the same binary must do its legitimate work.
# Touches only the temp dirs it creates and sockets to 127.0.0.1.
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from agents_util import (procs_with_arg, run, server_env, text_of,
                         wait_audit)
from conftest import BUILD, cordon_bin, user_bin

ESCAPE = os.path.join(BUILD, "tests", "escape-agent")
SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot-a-real-key\n"
MODES = [("landlock", "none"), ("landlock", "allow"),
         ("namespace", "none"), ("namespace", "allow")]


def agent_name(iso, net):
    return f"esc-{iso}-{net}"


def manifest(name, work, ro, iso=None, net=None, write=None, read=None,
             required=None, extra="", escape=ESCAPE):
    sb = []
    if iso:
        sb.append(f"  isolation: {iso}")
    if net:
        sb.append(f"  network: {net}")
    if read is not None:
        sb.append(f"  readRoots: {json.dumps(read)}")
    elif ro:
        sb.append(f"  readRoots: [{json.dumps(str(ro))}]")
    if write is not None:
        sb.append(f"  writeRoots: {json.dumps(write)}")
    if required is not None:
        sb.append(f"  required: {'true' if required else 'false'}")
    block = ("sandbox:\n" + "\n".join(sb) + "\n") if sb else ""
    return (f"name: {name}\ntransport: subprocess\ntransportConfig:\n"
            f"  bin: {escape}\n  args: [\"{{prompt}}\"]\n"
            f"  cwd: {work}\n  timeoutMs: 20000\n"
            # The operator's home, for the escape agent (its HOME is its
            # own, SBX-9); add_agent and the attack world fill it in.
            "  env:\n    ESCAPE_OP_HOME: \"{op}\"\n"
            f"healthProbe:\n  command: [\"{escape}\", \"--version\"]\n"
            + block + extra)


def make_world(base, monkeypatch):
    """The operator's home with secrets in it, a workspace, a read root."""
    if not os.path.exists(ESCAPE):
        pytest.skip("escape-agent not built")
    op = base / "operator"
    (op / ".ssh").mkdir(parents=True)
    (op / ".ssh" / "id_rsa").write_text(SSH_KEY)
    (op / ".bashrc").write_text("# operator's\n")
    work = base / "work"
    work.mkdir()
    (work / "README").write_text("hello\n")
    os.symlink(op / ".ssh", work / "sshlink")
    if os.path.exists("/usr/bin/git"):
        subprocess.run(["git", "init", "-q", str(work)], check=True,
                       env={"HOME": str(op), "PATH": "/usr/bin:/bin"})
        subprocess.run(["git", "-C", str(work), "config",
                        "safe.directory", "*"], check=True,
                       env={"HOME": str(op), "PATH": "/usr/bin:/bin"})
    ro = base / "ro"
    ro.mkdir()
    (ro / "data.txt").write_text("readable\n")
    server_env(monkeypatch, {"HOME": str(op)})
    home = base / "home"
    (home / "agents").mkdir(parents=True)
    (home / "secrets.yaml").write_text("fake:\n  apiKey: s3cr3t-value\n")
    os.chmod(home / "secrets.yaml", 0o600)
    return {"op": op, "work": work, "ro": ro, "home": home, "tmp": base}


@pytest.fixture
def world(monkeypatch):
    """Outside /tmp, so namespace mode's private /tmp hides none of it:
    what stops each attempt there is Landlock and the read-only view."""
    base = pathlib.Path(tempfile.mkdtemp(prefix="cordon-sbx-",
                                         dir="/var/tmp"))
    try:
        yield make_world(base, monkeypatch)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def world_tmp(tmp_path, monkeypatch):
    """Under /tmp: roots there are shown again inside the private /tmp."""
    return make_world(tmp_path, monkeypatch)


def add_agent(w, name, text):
    (w["home"] / "agents" / f"{name}.yaml").write_text(
        text.replace("{op}", str(w["op"])))


@pytest.fixture
def sandboxed(world, cordon_factory):
    for iso, net in MODES:
        add_agent(world, agent_name(iso, net),
                  manifest(agent_name(iso, net), world["work"], world["ro"],
                           iso, net))
    world["c"] = cordon_factory(home=world["home"])
    return world


def attempt(c, agent, prompt):
    """One run; the agent's single output line (or the error event)."""
    r, ev = run(c, agent, prompt)
    assert r.status == 200, (prompt, r)
    errors = [e for e in ev if e["kind"] == "error"]
    return text_of(ev).strip(), errors


def assert_blocked(c, agent, prompt, why=None):
    """Blocked; with why, by that errno (which names the layer)."""
    out, errors = attempt(c, agent, prompt)
    mode = prompt.split(" ", 1)[0]
    assert out.startswith(f"{mode} BLOCKED "), (agent, prompt, out, errors)
    if why is not None:
        assert out == f"{mode} BLOCKED {why}", (agent, prompt, out)
    return out


# Which layer answers each attempt, by its errno: Landlock EACCES (and
# EPERM for signals, ABI >= 6), the read-only view EROFS, the view's
# cover of the home's protected dirs (its sockets too) ENOENT, the pid
# namespace ESRCH, the agent's seccomp layer EPERM / EAFNOSUPPORT.
LAYER = {
    "namespace": {"read-ssh": "ENOENT", "read": "EACCES",
                  "write-bashrc": "EROFS", "write": "EROFS",
                  "follow-link": "ENOENT", "symlink": "EACCES",
                  "unshare": "EPERM", "mount": "EPERM", "proc1": "OWNPID",
                  "kill": "ESRCH"},
}
# SBX-4: `isolation: landlock` still loads, but weakens nothing: wherever
# the host has user namespaces its runs get the same view.
LAYER["landlock"] = LAYER["namespace"]


@pytest.mark.parametrize("iso,net", MODES)
def test_sbx1_sbx2_escapes_blocked(sandboxed, iso, net):
    w, c = sandboxed, sandboxed["c"]
    a = agent_name(iso, net)
    home = w["home"]
    why = LAYER[iso]
    # SBX-2: credentials, cordon's own secrets, shell start-up files, the
    # vault and the audit dir.
    assert_blocked(c, a, "read-ssh", why["read-ssh"])
    assert_blocked(c, a, f"read {home}/secrets.yaml", why["read"])
    assert_blocked(c, a, "write-bashrc", why["write-bashrc"])
    assert_blocked(c, a, f"write {home}/vault/planted.md", why["write"])
    assert_blocked(c, a, f"write {home}/audit/planted.jsonl", why["write"])
    # A symlink in its own write root leads nowhere new; it cannot make
    # one either (Landlock grants no MAKE_SYM).
    assert_blocked(c, a, f"follow-link {w['work']}/sshlink",
                   why["follow-link"])
    assert_blocked(c, a, "symlink", why["symlink"])
    # SBX-1's seccomp layer: no namespaces, no mounts.
    assert_blocked(c, a, "unshare", why["unshare"])
    assert_blocked(c, a, "mount", why["mount"])
    # Other processes' secrets and signals.
    assert_blocked(c, a, "proc1", why["proc1"])
    pids = c.daemon_pids()
    assert_blocked(c, a, f"kill {pids['vaultd']}", why["kill"])
    assert c.daemon_pids()["vaultd"] == pids["vaultd"]
    # Abstract unix sockets of the host: Landlock's scope (ABI >= 6), and
    # with network: none the empty network namespace.
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lst.bind(f"\0cordon-sbx-test-{os.getpid()}")
    lst.listen(1)
    try:
        assert_blocked(c, a, f"abstract cordon-sbx-test-{os.getpid()}",
                       "EACCES" if net == "none" else "EPERM")
    finally:
        lst.close()
    assert (w["op"] / ".bashrc").read_text() == "# operator's\n"
    assert not (home / "vault" / "planted.md").exists()
    assert not os.path.exists(home / "audit" / "planted.jsonl")


@pytest.mark.parametrize("iso,net", MODES)
def test_sbx3_network(sandboxed, iso, net):
    c = sandboxed["c"]
    a = agent_name(iso, net)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    port = srv.getsockname()[1]
    try:
        out, errors = attempt(c, a, f"connect {port}")
    finally:
        srv.close()
    if net == "none":
        assert out.startswith("connect BLOCKED "), (out, errors)
    else:  # network: allow only where the manifest says so
        assert out == "connect ESCAPED", (out, errors)


@pytest.mark.parametrize("iso,net", MODES)
def test_sbx3_host_unix_sockets(sandboxed, iso, net):
    """SBX-3: network: none keeps an agent off the host's unix sockets
    with a path too (the user's bus, systemd, gpg-agent, docker), which
    neither the empty network namespace nor Landlock covers: no
    connect(2), no datagram addressed to a path.  A stand-in daemon
    listens in /var/tmp, which both isolation modes can see."""
    c = sandboxed["c"]
    a = agent_name(iso, net)
    d = tempfile.mkdtemp(prefix="cordon-sbx3-", dir="/var/tmp")
    stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        stream.bind(os.path.join(d, "s"))
        stream.listen(1)
        dgram.bind(os.path.join(d, "d"))
        for mode, path in (("unixpath", "s"), ("dgram", "d")):
            out, errors = attempt(c, a, f"{mode} {os.path.join(d, path)}")
            if net == "none":
                assert out == f"{mode} BLOCKED EACCES", (out, errors)
            else:  # network: allow reaches them: the threat model says so
                assert out == f"{mode} ESCAPED", (out, errors)
    finally:
        stream.close()
        dgram.close()
        shutil.rmtree(d)


@pytest.mark.parametrize("iso,net", MODES)
def test_sbx1_legitimate_work(sandboxed, iso, net):
    w, c = sandboxed, sandboxed["c"]
    a = agent_name(iso, net)
    out, _ = attempt(c, a, "write-workdir")
    assert out == "write-workdir OK"
    assert (w["work"] / "written-by-agent").read_text() == "ok\n"
    out, _ = attempt(c, a, f"read-root {w['ro']}/data.txt")
    assert out == "read-root OK"
    out, _ = attempt(c, a, "write-tmp")
    assert out == "write-tmp OK"
    # SBX-1: no capability survives the exec, even as root.
    out, _ = attempt(c, a, "caps")
    assert out == "caps OK"
    out, _ = attempt(c, a, "git")
    assert out in ("git OK", "git SKIP"), out


def test_sbx1_private_tmp_is_private_and_removed(sandboxed):
    c = sandboxed["c"]
    # SBX-4: in either isolation the agent runs in its own pid namespace
    # (pid 2: cordon-init is pid 1) and its tmp is /tmp, a view of its own.
    for a in ("esc-landlock-none", "esc-namespace-none"):
        out, _ = attempt(c, a, "whoami")
        assert "pid=2 " in out and out.endswith("tmp=/tmp"), out
        before = set(os.listdir("/tmp"))
        attempt(c, a, "write-tmp")
        assert "agent-tmp-file" not in set(os.listdir("/tmp")) - before
    # SBX-1, SBX-3: each ended run's tmp, and a root spawner's per-run
    # source of its /run cover, are removed with the run.
    base = pathlib.Path(c.tmpdir)
    runs = [base / d for d in runs_dirs(base)]
    assert len(runs) == 1, runs
    assert wait_for(lambda: not [
        n for n in os.listdir(runs[0])
        if n.startswith(("cordon-run.", "cordon-cover."))]), \
        os.listdir(runs[0])


@pytest.mark.parametrize("mode,name", [("ptrace", "ptrace"), ("bpf", "bpf")])
def test_sbx1_seccomp_kill_names_the_syscall(sandboxed, mode, name):
    c = sandboxed["c"]
    out, errors = attempt(c, "esc-landlock-none", mode)
    assert "ESCAPED" not in out
    assert len(errors) == 1, (out, errors)
    assert errors[0]["errorClass"] == "killed"
    assert errors[0]["detail"] == f"seccomp: {name}"
    deadline = time.monotonic() + 5
    while f"seccomp: {name}" not in c.stderr() and \
            time.monotonic() < deadline:
        time.sleep(0.1)
    assert f"agent esc-landlock-none: seccomp: {name}" in c.stderr()


def test_sbx1_agent_layers_stay_in_the_agent(sandboxed):
    """The spawn helper's child runs on the spawner's memory until its
    execve (vfork-style): applying an agent's layers there must change
    nothing the spawner reports of itself.  The spawner has no Landlock
    of its own, so health must still say so after agents applied theirs
    (before the fix, the child's restrict_self set the spawner's flag)."""
    c = sandboxed["c"]
    for iso, net in MODES:
        out, _ = attempt(c, agent_name(iso, net), "write-tmp")
        assert out == "write-tmp OK", (iso, net, out)
    sp = [d for d in c.health()["daemons"] if d["name"] == "spawner"][0]
    assert sp["status"]["landlock"] == "off", sp["status"]
    with open(f"/proc/{sp['pid']}/status") as f:
        st = dict(line.split(":", 1) for line in f if ":" in line)
    assert st["Seccomp"].strip() == str(sp["status"]["seccomp"]), st
    assert st["CapEff"].strip() == sp["status"]["capEff"], st


def test_sbx1_health_reports_layers(sandboxed):
    c = sandboxed["c"]
    h = c.health()
    sp = [d for d in h["daemons"] if d["name"] == "spawner"][0]
    host = sp["status"]["sandboxHost"]
    assert host["landlockAbi"] >= 1 and host["userns"] is True
    assert host["seccomp"] is True and host["privateTmp"] is True
    r = c.request("GET", "/api/agents")
    agents = {a["name"]: a for a in r.json()["agents"]}
    ns = agents["esc-namespace-none"]["sandbox"]
    assert ns["isolation"] == "namespace" and ns["network"] == "none"
    assert ns["enforced"] is True
    for layer in ("userns", "mountns", "pidns", "netns", "landlock",
                  "seccomp", "seccomp-net", "caps", "no_new_privs"):
        assert layer in ns["layers"], (layer, ns)
    ll = agents["esc-landlock-allow"]["sandbox"]
    # SBX-4: what runs get, whatever the manifest wrote.
    assert ll["isolation"] == "namespace" and ll["enforced"] is True
    assert "netns" not in ll["layers"] and "mountns" in ll["layers"]


# ---- refused at load (SBX-2) and fail closed (SBX-1) ----

def test_sbx2_root_over_other_runs_tmps_refused_at_load(world):
    """SBX-2: a root that contains the spawner's dir of the runs' private
    tmps (the other runs' tmps) is refused at load; roots beside it are
    not."""
    from conftest import Cordon, finish
    w = world
    c = Cordon(w["home"], extra_args=("--allow-root",))
    add_agent(w, "overtmp", manifest("overtmp", w["work"], None,
                                     read=[c.tmpdir]))
    add_agent(w, "okroot", manifest("okroot", w["work"], w["ro"]))
    try:
        c.start()
        names = [a["name"] for a in c.request("GET", "/api/agents")
                 .json()["agents"]]
        assert "okroot" in names and "overtmp" not in names, names
        err = c.stderr()
        assert "agents/overtmp.yaml" in err and \
            "sandbox.readRoots[0]: contains a protected path" in err, err
    finally:
        finish(c)


def test_sbx2_root_in_ssh_refused_at_load(world, cordon_factory):
    w = world
    add_agent(w, "sshroot", manifest("sshroot", w["work"], None,
                                     read=["~/.ssh"]))
    add_agent(w, "okroot", manifest("okroot", w["work"], w["ro"]))
    c = cordon_factory(home=w["home"])
    names = [a["name"] for a in c.request("GET", "/api/agents")
             .json()["agents"]]
    assert "okroot" in names and "sshroot" not in names
    assert "agents/sshroot.yaml" in c.stderr()
    assert str(w["op"]) not in c.stderr()  # the reason names no path
    r = subprocess.run([cordon_bin(), "check", "--home", str(w["home"])],
                       capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, HOME=str(w["op"])))
    assert r.returncode != 0
    assert "sshroot.yaml" in r.stdout + r.stderr


def test_sbx2_root_holding_a_linked_startup_file_refused_at_load(
        world, cordon_factory):
    """SBX-2: with ~/.bashrc a link into ~/dotfiles, the spawner refuses
    a write root of ~/dotfiles (an agent would write the operator's
    shell start-up through it); the same manifest loads for a root
    beside it."""
    w = world
    (w["op"] / "dotfiles").mkdir()
    (w["op"] / "dotfiles" / "bashrc").write_text("# rc\n")
    (w["op"] / ".bashrc").unlink()
    (w["op"] / ".bashrc").symlink_to(w["op"] / "dotfiles" / "bashrc")
    add_agent(w, "dotroot", manifest("dotroot", w["work"], None,
                                     write=[str(w["op"] / "dotfiles")]))
    add_agent(w, "okroot", manifest("okroot", w["work"], w["ro"]))
    c = cordon_factory(home=w["home"])
    names = [a["name"] for a in c.request("GET", "/api/agents")
             .json()["agents"]]
    assert "okroot" in names and "dotroot" not in names, names
    err = c.stderr()
    assert "agents/dotroot.yaml" in err and \
        "sandbox.writeRoots[0]: contains a protected path" in err, err
    assert "dotfiles" not in err


def test_sbx2_symlinked_root_refused(world, cordon_factory):
    w = world
    os.symlink(w["op"] / ".ssh", w["tmp"] / "innocent")
    add_agent(w, "linkroot", manifest("linkroot", w["work"], None,
                                      write=[str(w["tmp"] / "innocent")]))
    c = cordon_factory(home=w["home"])
    names = [a["name"] for a in c.request("GET", "/api/agents")
             .json()["agents"]]
    assert "linkroot" not in names
    assert "agents/linkroot.yaml" in c.stderr()


@pytest.mark.parametrize("iso", ["landlock", "namespace"])
def test_sbx1_vanished_root_is_spawn_failed(world, cordon_factory, iso):
    w = world
    gone = w["tmp"] / "gone"
    gone.mkdir()
    add_agent(w, "vanish", manifest("vanish", w["work"], None, iso, "none",
                                    write=[str(gone), str(w["work"])]))
    c = cordon_factory(home=w["home"])
    gone.rmdir()
    r, _ = run(c, "vanish", "write-workdir")
    assert r.status == 502 and r.json()["error"] == "spawn-failed"
    assert "agent vanish: sandbox: root: ENOENT" in c.stderr()


@pytest.mark.parametrize("iso", ["landlock", "namespace"])
def test_sbx2_secret_file_shadowed(world, cordon_factory, iso):
    """SBX-2, SBX-4: shadowed in either isolation (runs refused only
    where no mount namespace can be had, sandbox.required: false)."""
    w = world
    (w["work"] / ".env").write_text("TOKEN=abc\n")
    (w["work"] / "sub").mkdir()
    (w["work"] / "sub" / "server.pem").write_text("PEM\n")
    # ssh-keygen's default names for each key type (-t ecdsa, -t dsa).
    (w["work"] / "sub" / "id_ecdsa").write_text("KEY\n")
    (w["work"] / "sub" / "id_dsa").write_text("KEY\n")
    add_agent(w, "nssecret", manifest("nssecret", w["work"], None,
                                      iso, "none"))
    c = cordon_factory(home=w["home"])
    for f in (".env", "sub/server.pem", "sub/id_ecdsa", "sub/id_dsa"):
        out, _ = attempt(c, "nssecret", f"size {w['work']}/{f}")
        assert out == "size OK 0", (f, out)
        out, _ = attempt(c, "nssecret", f"write {w['work']}/{f}")
        assert out.startswith("write BLOCKED "), (f, out)
    assert (w["work"] / ".env").read_text() == "TOKEN=abc\n"


def test_sbx2_secret_folder_covered_or_refused(world, cordon_factory):
    """SBX-2: a folder with a secret's name (secrets/, credentials/) in a
    write root holds secrets as much as a file so named: it is covered
    (empty, read-only) in either isolation (SBX-4).  The gate already
    treated such a component as protected."""
    w = world
    (w["work"] / "secrets").mkdir()
    (w["work"] / "secrets" / "prod.yaml").write_text("db_password: x\n")
    add_agent(w, "nsfolder", manifest("nsfolder", w["work"], None,
                                      "namespace", "none"))
    add_agent(w, "llfolder", manifest("llfolder", w["work"], None,
                                      "landlock", "none"))
    c = cordon_factory(home=w["home"])
    out, _ = attempt(c, "nsfolder", f"size {w['work']}/secrets/prod.yaml")
    assert out.startswith("size BLOCKED "), out
    out, _ = attempt(c, "nsfolder",
                     f"write {w['work']}/secrets/planted.yaml")
    assert out.startswith("write BLOCKED "), out
    out, _ = attempt(c, "nsfolder", "write-workdir")
    assert out == "write-workdir OK", out
    out, _ = attempt(c, "llfolder", f"size {w['work']}/secrets/prod.yaml")
    assert out.startswith("size BLOCKED "), out
    out, _ = attempt(c, "llfolder", "write-workdir")
    assert out == "write-workdir OK", out
    assert (w["work"] / "secrets" / "prod.yaml").read_text() == \
        "db_password: x\n"
    assert not (w["work"] / "secrets" / "planted.yaml").exists()


@pytest.mark.parametrize("key,name", [("writeRoots", ".env"),
                                      ("readRoots", "tls.key")])
def test_sbx2_root_with_a_secret_name_refused(world, cordon_factory, key,
                                              name):
    """SBX-2: a root that is itself a secret-named file is refused at
    load (the scan covers only what lies beneath a root)."""
    w = world
    (w["work"] / name).write_text("SECRET=1\n")
    root = json.dumps([str(w["work"] / name)])
    add_agent(w, "fileroot", manifest(
        "fileroot", w["work"], None,
        write=json.loads(root) if key == "writeRoots" else None,
        read=json.loads(root) if key == "readRoots" else None))
    c = cordon_factory(home=w["home"])
    assert wait_for(lambda: "has a secret file's name" in c.stderr()), \
        c.stderr()
    r, _ = run(c, "fileroot", "whoami")
    assert r.status == 404 and r.json()["error"] == "unknown-agent", r


def test_sbx2_secret_scan_bound_fails_closed(world, cordon_factory):
    # Deeper than the scan looks (32 levels): refused, never unscanned.
    w = world
    deep = w["work"]
    for i in range(34):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    add_agent(w, "deep", manifest("deep", w["work"], None, "namespace",
                                  "none"))
    c = cordon_factory(home=w["home"])
    r, _ = run(c, "deep", "write-workdir")
    assert r.status == 502 and r.json()["error"] == "spawn-failed"
    assert "agent deep: sandbox: secret scan bound: E2BIG" in c.stderr()


def test_sbx5_missing_layer_and_required_false(world, cordon_factory):
    """Every layer is present here; required: false changes nothing."""
    w = world
    add_agent(w, "soft", manifest("soft", w["work"], None, "namespace",
                                  "none", required=False))
    c = cordon_factory(home=w["home"])
    a = c.request("GET", "/api/agents/soft").json()["agent"]
    assert a["sandbox"]["enforced"] is True and "reason" not in a["sandbox"]
    out, _ = attempt(c, "soft", "unshare")
    assert out.startswith("unshare BLOCKED ")


@pytest.mark.parametrize("iso", ["landlock", "namespace"])
def test_sbx4_roots_under_tmp(world_tmp, cordon_factory, iso):
    w = world_tmp
    add_agent(w, "tmproots", manifest("tmproots", w["work"], w["ro"], iso,
                                      "none"))
    c = cordon_factory(home=w["home"])
    for p, want in (("write-workdir", "write-workdir OK"),
                    (f"read-root {w['ro']}/data.txt", "read-root OK"),
                    ("write-tmp", "write-tmp OK"), ("caps", "caps OK")):
        out, _ = attempt(c, "tmproots", p)
        assert out == want, (p, out)
    assert (w["work"] / "written-by-agent").exists()
    # The read root stays read-only where it is shown again.
    out, _ = attempt(c, "tmproots", f"write {w['ro']}/data.txt")
    assert out.startswith("write BLOCKED "), out
    assert_blocked(c, "tmproots", "read-ssh")
    assert_blocked(c, "tmproots", f"read {w['home']}/secrets.yaml")


# ---- an unprivileged spawner (its own uid and gid mapped) ----

USER = "cordon-test"


def give_world(w, u):
    """The whole test world to user u, so a cordon run as u can use it."""
    os.chmod(w["tmp"], 0o755)
    for root, dirs, files in os.walk(w["tmp"]):
        for n in dirs + files:
            os.lchown(os.path.join(root, n), u.pw_uid, u.pw_gid)
    os.lchown(w["tmp"], u.pw_uid, u.pw_gid)


def cordon_test_user():
    from conftest import system_user
    return system_user(USER, home=True)


def user_escape():
    """The escape agent where USER may run it (the build may not be)."""
    return os.path.join(user_bin(), "escape-agent")


def user_cordon(w, extra_args=()):
    """A cordon on w's home from user_bin(): as USER itself (no
    extra_args), or as root dropping to USER (--user)."""
    from conftest import Cordon
    prefix = [] if extra_args else [
        "setpriv", f"--reuid={USER}", f"--regid={USER}", "--init-groups",
        "--"]
    return Cordon(w["home"], extra_args=extra_args, prefix=prefix,
                  bindir=user_bin())


@pytest.mark.parametrize("iso", ["landlock", "namespace"])
def test_sbx1_unprivileged_spawner(world, iso):
    from conftest import finish
    u = cordon_test_user()
    w = world
    add_agent(w, "plain", manifest("plain", w["work"], w["ro"], iso, "none",
                                   escape=user_escape()))
    give_world(w, u)
    c = user_cordon(w)
    try:
        c.start()
        out, _ = attempt(c, "plain", "whoami")
        assert out.startswith("whoami OK"), out
        for p, want in (("write-workdir", "write-workdir OK"),
                        (f"read-root {w['ro']}/data.txt", "read-root OK"),
                        ("write-tmp", "write-tmp OK"), ("caps", "caps OK")):
            out, _ = attempt(c, "plain", p)
            assert out == want, (p, out, c.stderr())
        assert os.stat(w["work"] / "written-by-agent").st_uid == u.pw_uid
        assert_blocked(c, "plain", "read-ssh", "ENOENT")
        assert_blocked(c, "plain", "unshare", "EPERM")
        out, errors = attempt(c, "plain", "ptrace")
        assert errors and errors[0]["detail"] == "seccomp: ptrace"
    finally:
        finish(c)


HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "fake-agents", "hostile")


def test_sp7_nproc_bounds_a_run_in_its_user_namespace(world):
    """SP-7: limits.nproc is RLIMIT_NPROC inside the run's own user
    namespace, so it counts that run's processes only.  An unprivileged
    spawner (the kernel never applies RLIMIT_NPROC to uid 0)."""
    from conftest import finish
    u = cordon_test_user()
    w = world
    bomb_agent(w, nproc=8, hostile=os.path.join(user_bin(), "hostile"))
    give_world(w, u)
    c = user_cordon(w)
    try:
        c.start()
        r, ev = run(c, "bomb", "forkbomb 30")
        assert r.status == 200, r
        out = text_of(ev)
        assert out.startswith("forkbomb stopped "), (out, c.stderr())
        # The agent itself counts: at most 7 more.
        assert int(out.split()[2]) <= 7, out
        # A second run has its own count, unaffected by the first.
        r, ev = run(c, "bomb", "forkbomb 3")
        assert text_of(ev).startswith("forkbomb forked 3"), text_of(ev)
    finally:
        finish(c)



# ---- SP-7 as root: each run in its own pids cgroup ----

def v1_hierarchy(controller):
    """Our cgroup in the cgroup v1 hierarchy with controller (this
    suite's hosts), or skip."""
    if os.getuid() != 0:
        pytest.skip("needs root: cordon delegates the pids cgroup as root")
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            fields, sup = pre.split(), post.split()
            if sup and sup[0] == "cgroup" and \
                    controller in sup[2].split(","):
                with open("/proc/self/cgroup") as g:
                    for ln in g:
                        _, ctl, path = ln.rstrip("\n").split(":", 2)
                        if controller in ctl.split(","):
                            return fields[4] + (path if path != "/"
                                                else "")
    pytest.skip(f"no cgroup v1 {controller} hierarchy on this host")


def pids_hierarchy():
    return v1_hierarchy("pids")


def cordon_group(pid):
    """cordond's group: named by its pid namespace and its pid there."""
    return f"cordon.{os.stat('/proc/self/ns/pid').st_ino}.{pid}"


def bomb_agent(w, name="bomb", nproc=9, hostile=HOSTILE):
    add_agent(w, name, (
        f"name: {name}\ntransport: subprocess\ntransportConfig:\n"
        f"  bin: {os.path.realpath(hostile)}\n"
        "  args: [\"-z\", \"{prompt}\"]\n"
        f"  cwd: {w['work']}\n  timeoutMs: 20000\n"
        f"limits:\n  nproc: {nproc}\n"))


def group_procs(cg, g):
    """The pids in run group g of cordon's pids cgroup cg."""
    with open(os.path.join(cg, g, "cgroup.procs")) as f:
        return {int(x) for x in f.read().split()}


def neverexit_run(c):
    """A run of the bomb agent that never exits, once it says so: the
    stream (the caller closes it) and the pids of the agent and its
    child."""
    from agents_util import Stream
    prompt = f"neverexit {os.urandom(6).hex()}"  # its argv, unique
    s = Stream(c, "bomb", prompt)
    try:
        s.start()
        s.read_until(lambda b: b"never exiting" in b)
        agent = set(hostile_procs(prompt))
        # cordon-init (its argv names the agent), the agent, its child
        assert len(agent) == 3, agent
    except BaseException:
        s.close()
        raise
    return s, agent


def run_groups(cg):
    return sorted(n for n in os.listdir(cg) if n.startswith("run."))


def wait_for(pred, bound=5.0):
    deadline = time.monotonic() + bound
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def hostile_procs(word):
    """Live hostile agents (and their children) run with prompt word:
    the repo's or user_bin()'s copy (the word is unique to one run)."""
    out = []
    for pid in procs_with_arg(word):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if any(os.path.basename(a) == b"hostile"
                       for a in f.read().split(b"\0")):
                    out.append(pid)
        except OSError:
            pass
    return out


def test_sp7_pids_cgroup_per_run_as_root(world, cordon_factory):
    """SP-7 for root agents: cordond delegates cordon.<pidns>.<pid> in the pids
    hierarchy, each run gets run.N with pids.max = limits.nproc, joined
    before execve, and the group is gone once the run ended."""
    pids = pids_hierarchy()
    w = world
    bomb_agent(w)
    c = cordon_factory(home=w["home"])
    cg = os.path.join(pids, cordon_group(c.pid))
    assert os.path.isdir(cg), c.stderr()
    # health says the layer is on, and each agent lists it
    sp = [d for d in c.health()["daemons"] if d["name"] == "spawner"][0]
    pc = sp["status"]["pidsCgroup"]
    assert pc["on"] is True and pc["state"].startswith("on:"), pc
    r = c.request("GET", "/api/agents")
    bomb = [a for a in r.json()["agents"] if a["name"] == "bomb"][0]
    assert "pids-cgroup" in bomb["sandbox"]["layers"], bomb
    # during a run: its group, with the manifest's bound, holds the agent
    s, agent = neverexit_run(c)
    try:
        mine = [(g, p) for g, p in
                ((g, group_procs(cg, g)) for g in run_groups(cg))
                if p & agent]
        assert len(mine) == 1, (run_groups(cg), mine)
        group, procs = mine[0]
        assert procs == agent, (procs, agent)
        with open(os.path.join(cg, group, "pids.max")) as f:
            assert f.read().strip() == "9"
        assert not procs & set(c.daemon_pids().values())
    finally:
        s.close()  # the client leaves: the run is cancelled
    assert wait_for(lambda: not os.path.exists(os.path.join(cg, group)),
                    10), (run_groups(cg), c.stderr())
    for pid in procs:
        assert not os.path.exists(f"/proc/{pid}") or \
            proc_state(pid) in "ZX", pid
    # a fork bomb stops at the bound (the agent itself counts)
    r, ev = run(c, "bomb", "forkbomb 30")
    assert r.status == 200, r
    out = text_of(ev)
    assert out.startswith("forkbomb stopped "), (out, c.stderr())
    assert int(out.split()[2]) <= 8, out
    assert wait_for(lambda: run_groups(cg) == []), run_groups(cg)
    c.stop()
    assert not os.path.exists(cg), "cordon's pids cgroup outlived it"


def test_sp17_sp7_a_descendant_that_cannot_die_holds_nothing(
        world, cordon_factory):
    """SP-17: a run whose descendant cannot die (here frozen, so SIGKILL
    cannot finish it, and cordon-init, pid 1 of the run's namespace,
    cannot exit before it) still ends, a grace after its SIGKILL.  SP-7: its
    pids group, still holding the process, does not hold up the spawner;
    other runs go on, and the group is removed from the loop once the
    process is gone."""
    pids = pids_hierarchy()
    freezer = os.path.join(v1_hierarchy("freezer"),
                           f"cordon-test-{os.urandom(4).hex()}")
    w = world
    bomb_agent(w)
    c = cordon_factory(home=w["home"])
    cg = os.path.join(pids, cordon_group(c.pid))
    os.mkdir(freezer)
    state = os.path.join(freezer, "freezer.state")
    try:
        s, agent = neverexit_run(c)
        try:
            group = [g for g in run_groups(cg)
                     if group_procs(cg, g) & agent]
            assert len(group) == 1, run_groups(cg)
            group = group[0]
            child = [p for p in agent if proc_ppid(p) in agent and
                     proc_ppid(proc_ppid(p)) in agent][0]
            with open(os.path.join(freezer, "cgroup.procs"), "w") as f:
                f.write(str(child))
            with open(state, "w") as f:
                f.write("FROZEN")
            assert wait_for(lambda: open(state).read().strip() ==
                            "FROZEN"), open(state).read()
        finally:
            s.close()  # cancelled: SIGTERM, SIGKILL, then it ends anyway
        wait_audit(w["home"], lambda r: r["kind"] in (
            "agent.invoke.complete", "agent.invoke.error") and
            r.get("agent") == "bomb", 15)
        assert "the run ends without it" in c.stderr()
        assert child in group_procs(cg, group)
        # the spawner carries on meanwhile, the group still held
        r, ev = run(c, "bomb", "forkbomb 2")
        assert r.status == 200 and \
            text_of(ev).startswith("forkbomb forked 2"), text_of(ev)
        assert child in group_procs(cg, group)
        with open(state, "w") as f:
            f.write("THAWED")
        assert wait_for(lambda: not os.path.exists(os.path.join(cg, group)),
                        5), (run_groups(cg), c.stderr())
        assert "still holds a process" not in c.stderr()
    finally:
        with open(state, "w") as f:
            f.write("THAWED")
        procs = os.path.join(freezer, "cgroup.procs")
        wait_for(lambda: open(procs).read() == "", 5)
        os.rmdir(freezer)


def test_sbx5_no_dir_for_private_tmps_disables_every_agent(world):
    """SBX-5: a spawner that cannot make its dir of the runs' private tmps
    (cordond's TMPDIR is a file) runs no agent without one: every agent
    is disabled, whatever its sandbox.required, and log and health say
    why."""
    from conftest import Cordon, finish
    w = world
    bomb_agent(w)
    add_agent(w, "lax", manifest("lax", w["work"], w["ro"], "landlock",
                                 "allow", required=False))
    c = Cordon(w["home"], extra_args=("--allow-root",))
    open(c.tmpdir, "w").close()
    try:
        c.start()
        r = c.request("GET", "/api/agents")
        assert r.json()["agents"] == [], r.json()
        sp = [d for d in c.health()["daemons"] if d["name"] == "spawner"][0]
        assert sp["status"]["sandboxHost"]["privateTmp"] is False, sp
        assert "this host lacks private-tmp" in c.stderr()
        r, ev = run(c, "bomb", "forkbomb 1")
        assert r.status == 404, r
    finally:
        finish(c)
        os.unlink(c.tmpdir)


def test_au3_a_run_going_at_stop_ends_killed_in_the_audit(world,
                                                          cordon_factory):
    """AU-3/SP-17: cordon stopped (SIGTERM) with a run going: the run is
    killed and its agent.invoke gets its end record, errorClass killed,
    before system.shutdown; no process and no tmp is left (finish)."""
    from agents_util import audit_records
    w = world
    bomb_agent(w)
    c = cordon_factory(home=w["home"])
    s, agent = neverexit_run(c)
    try:
        assert c.stop() == 0, c.stderr()
    finally:
        s.close()
    recs = audit_records(w["home"])
    inv = [r for r in recs if r["kind"] == "agent.invoke"]
    assert len(inv) == 1, recs
    ends = [r for r in recs if r.get("runId") == inv[0]["runId"] and
            r["kind"] in ("agent.invoke.complete", "agent.invoke.error")]
    assert len(ends) == 1 and ends[0]["kind"] == "agent.invoke.error", recs
    assert ends[0]["errorClass"] == "killed", ends
    down = [r for r in recs if r["kind"] == "system.shutdown"]
    assert len(down) == 1 and down[0]["seq"] > ends[0]["seq"], recs
    for pid in agent:
        assert not os.path.exists(f"/proc/{pid}") or \
            proc_state(pid) in "ZX", pid


def proc_ppid(pid):
    with open(f"/proc/{pid}/stat") as f:
        st = f.read()
    return int(st[st.rindex(")") + 2:].split()[1])


def runs_dirs(base):
    return sorted(n for n in os.listdir(base) if "cordon-runs." in n)


def run_tmps(d):
    """The runs' private tmps in a runs dir (a root spawner's runs may
    also have a cordon-cover.* dir there, the source of their /run
    cover when a path beneath /run is shown again in it)."""
    return [n for n in os.listdir(d) if n.startswith("cordon-run.")]


def deep_tree(top, depth):
    """What an agent might leave in its tmp: a file at every level of a
    chain of dirs deeper than the spawner's walk goes at once."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", 0o700, dir_fd=fd)
        os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
        nfd = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    os.close(fd)


def test_sbx1_private_tmps_do_not_outlive_the_spawner(world, cordon_factory):
    """SBX-1: the runs' private tmps live in one locked dir of the
    spawner's under cordond's TMPDIR (each test cordon has its own).  A
    spawner killed with a run (and a deep tree in its tmp) has that dir
    swept by the next one; one stopped with a run still going removes it
    itself."""
    w = world
    bomb_agent(w)
    c = cordon_factory(home=w["home"])
    base = pathlib.Path(c.tmpdir)
    first = runs_dirs(base)
    assert len(first) == 1 and first[0].startswith("cordon-runs."), first
    s, agent = neverexit_run(c)
    try:
        # the agent's health probe may still hold a tmp of its own
        assert wait_for(lambda: len(run_tmps(base / first[0])) == 1)
        runs = run_tmps(base / first[0])
        deep_tree(base / first[0] / runs[0], 150)
        spawner = c.daemon_pids()["spawner"]
        os.kill(spawner, signal.SIGKILL)
        c.health_when(lambda h: any(
            d["name"] == "spawner" and d["up"] and d.get("pid") != spawner
            for d in h["daemons"]))
    finally:
        s.close()
    now = runs_dirs(base)
    assert len(now) == 1 and now != first, (first, now, c.stderr())
    assert "removed 1 runs dir(s) a stopped spawner left" in c.stderr()
    s, agent = neverexit_run(c)  # still going when cordon stops
    try:
        assert wait_for(lambda: len(run_tmps(base / now[0])) == 1)
        assert c.stop() == 0, c.stderr()
    finally:
        s.close()
    assert os.listdir(base) == [], (os.listdir(base), c.stderr())


def proc_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            st = f.read()
        return st[st.rindex(")") + 2]
    except OSError:
        return "X"


@pytest.mark.parametrize("mode", ["setsid", "daemonize"])
def test_sp7_descendant_leaving_the_group_dies_with_the_run(
        world, cordon_factory, mode):
    """SP-7/SP-17: a descendant that calls setsid (and one that also
    double-forks and closes its stdio) is killed when the run ends, and
    the run's cgroup is removed."""
    pids = pids_hierarchy()
    w = world
    bomb_agent(w, "leaver")
    c = cordon_factory(home=w["home"])
    cg = os.path.join(pids, cordon_group(c.pid))
    prompt = f"{mode} {os.urandom(6).hex()}"  # its argv, unique
    r, ev = run(c, "leaver", prompt)
    assert r.status == 200, r
    assert text_of(ev).startswith(("setsid parent", "daemonized")), ev
    assert wait_for(lambda: hostile_procs(prompt) == []), \
        (hostile_procs(prompt), c.stderr())
    assert wait_for(lambda: run_groups(cg) == []), run_groups(cg)


def test_sp7_stale_cgroups_of_dead_cordons(world, cordon_factory):
    """cordond removes the cordon.<pidns>.<pid> groups of cordons that are gone
    (kill -9), when nothing runs in them; one still holding a process is
    left alone, and so is an empty group of another pid namespace, whose
    pid means nothing here (a cordon in a container or chroot)."""
    pids = pids_hierarchy()
    dead = []
    for _ in range(2):
        p = subprocess.Popen(["/bin/true"])
        p.wait()
        dead.append(p.pid)
    empty = os.path.join(pids, cordon_group(dead[0]))
    busy = os.path.join(pids, cordon_group(dead[1]))
    other_ns = os.stat("/proc/self/ns/pid").st_ino + 1
    foreign = os.path.join(pids, f"cordon.{other_ns}.{dead[0]}")
    sleeper = None
    try:
        os.makedirs(os.path.join(foreign, "run.2"))
        os.makedirs(os.path.join(empty, "run.3"))
        os.makedirs(os.path.join(busy, "run.1"))
        sleeper = subprocess.Popen(["/bin/sleep", "60"])
        with open(os.path.join(busy, "run.1", "cgroup.procs"), "w") as f:
            f.write(str(sleeper.pid))
        c = cordon_factory(home=world["home"])
        assert not os.path.exists(empty), c.stderr()
        assert os.path.isdir(os.path.join(foreign, "run.2"))
        assert os.path.isdir(os.path.join(busy, "run.1"))
        assert sleeper.poll() is None
        assert "pids cgroups of dead cordons still hold processes" in \
            c.stderr()
    finally:
        if sleeper is not None:
            sleeper.kill()
            sleeper.wait()
        for d in (os.path.join(empty, "run.3"), empty,
                  os.path.join(foreign, "run.2"), foreign,
                  os.path.join(busy, "run.1"), busy):
            wait_for(lambda: _rmdir(d), 2)


def _rmdir(d):
    try:
        os.rmdir(d)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def test_sp7_root_without_pids_cgroup_refuses_runs(world, cordon_factory):
    """Fail closed: a spawner running as root with no pids cgroup cannot
    bound a run's processes, so it refuses every run (spawn-failed, the
    step named) and health says why.  The hierarchy is hidden by running
    cordon in a mount namespace where it is not mounted."""
    pids = pids_hierarchy()
    mnt = pids
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            sup = post.split()
            if sup and sup[0] == "cgroup" and "pids" in sup[2].split(","):
                mnt = pre.split()[4]
    w = world
    bomb_agent(w)
    c = cordon_factory(home=w["home"], prefix=[
        "unshare", "--mount", "--propagation", "private", "--",
        "/bin/sh", "-c", f"umount {mnt} && exec \"$@\"", "sh"])
    sp = [d for d in c.health()["daemons"] if d["name"] == "spawner"][0]
    pc = sp["status"]["pidsCgroup"]
    assert pc["on"] is False and pc["required"] is True, pc
    assert pc["state"].startswith("missing:"), pc
    r, _ = run(c, "bomb", "forkbomb 3")
    assert r.status == 502 and r.json()["error"] == "spawn-failed", r
    assert "agent bomb: sandbox: pids cgroup: ENODEV" in c.stderr()
    assert not os.path.exists(os.path.join(pids, cordon_group(c.pid)))


def test_sp7_pids_cgroup_delegated_to_user(world):
    """Started as root with --user NAME: cordon.<pidns>.<pid> belongs to NAME's
    uid, and the spawner (running as NAME) makes each run's group in it."""
    from conftest import finish
    pids = pids_hierarchy()
    u = cordon_test_user()
    w = world
    bomb_agent(w, hostile=os.path.join(user_bin(), "hostile"))
    give_world(w, u)
    c = user_cordon(w, ("--user", USER))
    try:
        c.start()
        cg = os.path.join(pids, cordon_group(c.pid))
        st = os.stat(cg)
        assert (st.st_uid, st.st_gid) == (u.pw_uid, u.pw_gid)
        s, agent = neverexit_run(c)
        try:
            groups = [g for g in run_groups(cg)
                      if group_procs(cg, g) == agent]
            assert len(groups) == 1, run_groups(cg)
            assert os.stat(os.path.join(cg, groups[0])).st_uid == u.pw_uid
        finally:
            s.close()
        assert wait_for(lambda: not os.path.exists(
            os.path.join(cg, groups[0])), 10), c.stderr()
        r, ev = run(c, "bomb", "forkbomb 30")
        out = text_of(ev)
        assert out.startswith("forkbomb stopped "), (out, c.stderr())
        assert int(out.split()[2]) <= 8, out
        assert c.stop() == 0, c.stderr()
        assert not os.path.exists(cg)
    finally:
        finish(c)


def test_sbx2_protects_the_users_home_with_user(world):
    """SBX-2 as root with --user NAME: the home the spawner protects (and
    gives agents as HOME) is NAME's, not cordond's own (root's here), so
    a manifest root over NAME's home is refused at load.  It was root's:
    an agent could write NAME's ~/.bashrc."""
    from conftest import finish
    u = cordon_test_user()
    w = world
    add_agent(w, "userhome", manifest("userhome", u.pw_dir, None,
                                      escape=user_escape()))
    add_agent(w, "plain", manifest("plain", w["work"], w["ro"],
                                   escape=user_escape()))
    give_world(w, u)
    c = user_cordon(w, ("--user", USER))
    try:
        c.start()
        assert wait_for(lambda: "agents/userhome.yaml: transportConfig.cwd"
                        "[0]: is the home directory" in c.stderr()), \
            c.stderr()
        r, _ = run(c, "userhome", "whoami")
        assert r.status == 404 and r.json()["error"] == "unknown-agent", r
        out, _ = attempt(c, "plain", "whoami")
        assert out.startswith("whoami OK "), out
    finally:
        finish(c)


def test_sbx2_home_under_a_system_path_disables_agents(monkeypatch):
    """SBX-2: every agent may read /opt (and /usr, /etc): a cordon home
    there (secrets.yaml, the token, the audit dir) would be open to all of
    them, and Landlock cannot carve it out.  Every agent is disabled."""
    if not os.path.isdir("/opt"):
        pytest.skip("no /opt on this host")
    from conftest import Cordon, finish
    base = pathlib.Path(tempfile.mkdtemp(prefix="cordon-sbx-", dir="/opt"))
    c = None
    try:
        w = make_world(base, monkeypatch)
        add_agent(w, "plain", manifest("plain", w["work"], w["ro"]))
        c = Cordon(w["home"], extra_args=("--allow-root",))
        c.start()
        assert wait_for(lambda: "agents/plain.yaml: sandbox: a protected "
                        "path lies under /opt, which every agent may read"
                        in c.stderr()), c.stderr()
        r, _ = run(c, "plain", "whoami")
        assert r.status == 404 and r.json()["error"] == "unknown-agent", r
    finally:
        if c is not None:
            finish(c)
        shutil.rmtree(base, ignore_errors=True)
