# SU-5, PER-5: cordon's home, runtime dir and CLI files against another
# local user (mallory, a throwaway account made here and removed after)
# and a careless operator.  A home or runtime dir that mallory can change
# (her own dir above it, a dir she squatted first, a group- or
# world-writable home, agents/ or manifest) is refused before cordon
# reads its config or writes anything; the CLIs read the token and port
# only from a runtime dir and files private to the caller, so a port
# file mallory swapped in never gets the token sent to her listener; a
# token file that is not private (or a FIFO) is refused, at once.  Under
# umask 000 every file cordon makes is still private.
import json
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
import time

import pytest

from agents_util import run, text_of
from conftest import (READY_S, USERADD, Cordon, child_env, cordon_bin,
                      finish, run_once)

MALLORY = "cordon-mallory"
USERDEL = "/usr/sbin/userdel"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root to make a second local user")


@pytest.fixture(scope="module")
def mallory():
    """Another local user, made for this module and removed after it."""
    subprocess.run([USERDEL, MALLORY], capture_output=True, timeout=30)
    p = subprocess.run([USERADD, "--system", "--no-create-home",
                        "--home-dir", "/nonexistent", "--shell",
                        "/usr/sbin/nologin", MALLORY],
                       capture_output=True, timeout=30)
    assert p.returncode == 0, p.stderr
    import pwd
    try:
        yield pwd.getpwnam(MALLORY)
    finally:
        subprocess.run([USERDEL, MALLORY], capture_output=True, timeout=30)


@pytest.fixture
def base():
    """A root-owned dir every user may enter, removed after the test."""
    d = tempfile.mkdtemp(prefix="cordon-homered-", dir="/var/tmp")
    os.chmod(d, 0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def as_mallory(pw):
    return ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}",
            "--clear-groups", "--"]


def give(path, pw):
    os.lchown(path, pw.pw_uid, pw.pw_gid)


def listener():
    """A socket standing for mallory's listener: (socket, port, got),
    got filled with whatever a client sends it."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(4)
    s.settimeout(5)
    got = []

    def serve():
        try:
            c, _ = s.accept()
            c.settimeout(3)
            got.append(c.recv(65536))
            c.close()
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()
    return s, s.getsockname()[1], got


def refused(p, path):
    assert not p.started, "cordon started"
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert path.encode() in p.stderr, p.stderr
    assert b"no other user" in p.stderr, p.stderr


def home_run(home, extra=()):
    return run_once(["run", "--home", home, "--port", "0", "--allow-root",
                     *extra])


# ---- the home and what cordon loads from it (SU-5)


def test_su5_home_in_another_users_dir_refused(mallory, base):
    """mallory owns the dir above the home: she could swap the home for
    one with her cordon.yaml and manifests at any start."""
    theirs = os.path.join(base, "shared")
    os.mkdir(theirs, 0o755)
    give(theirs, mallory)
    home = os.path.join(theirs, "home")
    os.mkdir(home, 0o700)
    refused(home_run(home), theirs)
    assert os.listdir(home) == [], "written before the refusal"


@pytest.mark.parametrize("shape", [
    "home-group-writable", "home-world-writable", "agents-group-writable",
    "manifest-world-writable", "manifest-theirs", "missions-theirs",
    "config-group-writable", "parent-world-writable-not-sticky",
    "home-theirs"])
def test_su5_home_others_can_change_refused(mallory, base, shape):
    """A careless operator's modes (or a file of mallory's in the home):
    refused, naming the path, before anything is written."""
    parent = os.path.join(base, "p")
    home = os.path.join(parent, "home")
    os.makedirs(os.path.join(home, "agents"))
    os.mkdir(os.path.join(home, "missions"))
    os.chmod(home, 0o700)
    mf = os.path.join(home, "agents", "a.yaml")
    with open(mf, "w") as f:
        f.write("name: a\ntransport: subprocess\n"
                "transportConfig:\n  bin: /bin/true\n")
    cfg = os.path.join(home, "cordon.yaml")
    with open(cfg, "w") as f:
        f.write("listen:\n  port: 0\n")
    culprit = {
        "home-group-writable": home, "home-world-writable": home,
        "agents-group-writable": os.path.join(home, "agents"),
        "manifest-world-writable": mf, "manifest-theirs": mf,
        "missions-theirs": os.path.join(home, "missions", "m.yaml"),
        "config-group-writable": cfg,
        "parent-world-writable-not-sticky": parent,
        "home-theirs": home}[shape]
    if shape == "missions-theirs":
        with open(culprit, "w") as f:
            f.write("id: m\n")
        give(culprit, mallory)
    elif shape in ("manifest-theirs", "home-theirs"):
        give(culprit, mallory)  # root's cordon in mallory's home
    elif shape.endswith("world-writable") or shape.endswith("not-sticky"):
        os.chmod(culprit, os.stat(culprit).st_mode | 0o002)
    else:
        os.chmod(culprit, os.stat(culprit).st_mode | 0o020)
    refused(home_run(home), culprit)
    assert not os.path.exists(os.path.join(home, "run"))
    assert not os.path.exists(os.path.join(home, "audit"))


@pytest.mark.parametrize("which", ["agents", "missions"])
@pytest.mark.parametrize("target", ["theirs", "world-writable", "dangling"])
def test_su5_loaded_dir_linked_where_others_write_refused(mallory, base,
                                                          which, target):
    """agents/ or missions/ is the operator's link to a dir mallory can
    write (hers, or world-writable and not sticky), empty for now, or to
    a name not made yet there: the manifests or missions cordon loads
    are hers as soon as she puts one in.  Where the link leads is
    checked as the home is: refused, naming that dir."""
    home = os.path.join(base, "home")
    os.mkdir(home, 0o700)
    shared = os.path.join(base, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o777 if target == "world-writable" else 0o755)
    if target == "theirs":
        give(shared, mallory)
    dest = shared
    if target == "dangling":
        os.chmod(shared, 0o777)
        dest = os.path.join(shared, "later")
    os.symlink(dest, os.path.join(home, which))
    refused(home_run(home), shared if target != "dangling" else
            os.path.join(home, which))
    assert not os.path.exists(os.path.join(home, "run"))
    assert not os.path.exists(os.path.join(home, "audit"))


def home_with_agent(base, mode):
    """A home of mode MODE with one valid agent, a."""
    home = os.path.join(base, "home")
    os.makedirs(os.path.join(home, "agents"))
    with open(os.path.join(home, "agents", "a.yaml"), "w") as f:
        f.write("name: a\ntransport: subprocess\n"
                "transportConfig:\n  bin: /bin/true\n"
                "  args: [\"{prompt}\"]\n")
    os.chmod(home, mode)
    return home


def test_su5_agent_login_refuses_a_home_others_can_change(base):
    """`cordon agent login` runs the program a manifest names: the same
    rule as `cordon run`, before the manifest is read."""
    home = home_with_agent(base, 0o775)
    r = subprocess.run([cordon_bin(), "agent", "login", "--home", home,
                        "--allow-root", "a"], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert home.encode() + b" is writable by group or others" in r.stderr
    assert not os.path.exists(os.path.join(home, "state"))


def test_su5_check_reports_a_home_others_can_change(base):
    """`cordon check` foresees the refusal: one problem naming the home,
    and the manifests are checked all the same."""
    home = home_with_agent(base, 0o770)
    r = subprocess.run([cordon_bin(), "check", "--home", home, "--json"],
                       capture_output=True, timeout=30)
    assert r.returncode == 1, (r.stdout, r.stderr)
    doc = json.loads(r.stdout)
    assert [p["code"] for p in doc["problems"]] == ["home-unsafe"], doc
    assert doc["agents"] == 1, doc
    assert home.encode() in r.stderr, r.stderr


def test_su5_sticky_parent_and_own_home_start(base):
    """Not overreach: a private home beneath a sticky, world-writable dir
    (as /tmp is) starts."""
    sticky = os.path.join(base, "tmp")
    os.mkdir(sticky)
    os.chmod(sticky, 0o1777)
    home = os.path.join(sticky, "home")
    os.mkdir(home, 0o700)
    c = Cordon(home, ["--allow-root"])
    try:
        c.start()
        assert c.health()["status"] == "ok"
    finally:
        finish(c)


# ---- the agents' programs (SU-5)

TOOL = "#!/bin/sh\necho ran-$1\n"


def test_su5_agent_program_another_user_can_replace_refused(mallory,
                                                            base):
    """An agent's program (by absolute path or found on PATH) in a dir
    mallory owns, in a world-writable dir that is not sticky, or itself
    writable by others: she could put her program in its place and get
    the run, with the agent's secrets.  Every such run is refused
    (spawn-failed, naming the path) and `cordon check` says so first;
    the same program in a dir of root's runs."""
    dirs = {"fine": 0o755, "theirs": 0o755, "loose": 0o777,
            "exposed": 0o755, "onpath": 0o755, "looselink": 0o777,
            "theirlink": 0o755}
    bins = {}
    for n, mode in dirs.items():
        d = os.path.join(base, n)
        os.mkdir(d)
        os.chmod(d, mode)
        b = os.path.join(d, "hrtool")
        if n.endswith("link"):
            # a link to the fine program, in a dir she can write: she
            # can point it at hers after the check
            os.symlink(bins["fine"], b)
        else:
            with open(b, "w") as f:
                f.write(TOOL)
            os.chmod(b, 0o777 if n == "exposed" else 0o755)
        if n in ("theirs", "onpath", "theirlink"):
            give(d, mallory)
        bins[n] = b
    # a script of root's whose interpreter is a link in a loose dir
    os.symlink("/bin/sh", os.path.join(base, "looselink", "sh"))
    d = os.path.join(base, "interplink")
    os.mkdir(d, 0o755)
    bins["interplink"] = os.path.join(d, "hrtool")
    with open(bins["interplink"], "w") as f:
        f.write(TOOL.replace("/bin/sh",
                             os.path.join(base, "looselink", "sh")))
    os.chmod(bins["interplink"], 0o755)
    home = os.path.join(base, "home")
    os.makedirs(os.path.join(home, "agents"))
    for n, b in bins.items():
        bin_, env = b, ""
        if n == "onpath":
            bin_ = "hrtool"
            env = f"  env: {{PATH: '{os.path.dirname(b)}:/usr/bin:/bin'}}\n"
        with open(os.path.join(home, "agents", f"{n}.yaml"), "w") as f:
            f.write(f"name: {n}\ntransport: subprocess\n"
                    f"transportConfig:\n  bin: {bin_}\n"
                    "  args: [\"{prompt}\"]\n" + env)
    r = subprocess.run([cordon_bin(), "check", "--home", home, "--json"],
                       capture_output=True, timeout=30)
    doc = json.loads(r.stdout)
    unsafe = sorted(os.path.basename(p["file"]) for p in doc["problems"]
                    if p["code"] == "bin-unsafe")
    assert unsafe == ["exposed.yaml", "interplink.yaml", "loose.yaml",
                      "looselink.yaml", "onpath.yaml", "theirlink.yaml",
                      "theirs.yaml"], doc["problems"]
    c = Cordon(home, ["--allow-root"])
    try:
        c.start()
        resp, ev = run(c, "fine", "x")
        assert resp.status == 200 and "ran-x" in text_of(ev), resp
        for n in ("theirs", "loose", "exposed", "onpath", "looselink",
                  "theirlink", "interplink"):
            resp, _ = run(c, n, "x")
            assert resp.status == 502, (n, resp)
            assert resp.json()["error"] == "spawn-failed", (n, resp)
            assert "another user can replace" in resp.json().get(
                "reason", ""), (n, resp.json())
    finally:
        finish(c)


# ---- the runtime dir and the token (PER-5, SU-5)


def xdg_env(base, runtime):
    cfg = os.path.join(base, "cfg")
    os.makedirs(os.path.join(cfg, "cordon"), exist_ok=True)
    vault = os.path.join(base, "vault")
    os.makedirs(vault, exist_ok=True)
    with open(os.path.join(cfg, "cordon", "cordon.yaml"), "w") as f:
        f.write(f"vault:\n  root: {vault}\n")
    return ["env", f"HOME={base}", f"XDG_CONFIG_HOME={cfg}",
            f"XDG_STATE_HOME={os.path.join(base, 'state')}",
            f"XDG_RUNTIME_DIR={runtime}"]


def xdg_cfg_env(base, cfg):
    """XDG mode with the config home cfg; state and runtime dirs root's."""
    runtime = os.path.join(base, "rt")
    os.makedirs(runtime, 0o700, exist_ok=True)
    return ["env", f"HOME={base}", f"XDG_CONFIG_HOME={cfg}",
            f"XDG_STATE_HOME={os.path.join(base, 'state')}",
            f"XDG_RUNTIME_DIR={runtime}"]


def as_mallory_ok(pw, argv):
    return subprocess.run(as_mallory(pw) + argv, capture_output=True,
                          timeout=30).returncode == 0


@pytest.mark.parametrize("cmd", ["run", "login", "missing-above"])
def test_su5_xdg_config_dir_made_before_another_user_can(mallory, base,
                                                         cmd):
    """XDG_CONFIG_HOME is a sticky, world-writable dir (as /tmp is), or
    lies missing in one, and has no `cordon/` yet: mallory could make it
    between cordon's check and its loads, with her cordon.yaml and
    manifests.  `cordon run` and `cordon agent login` make it first
    (0700, cordon's, as any dir missing above it), check it, and only
    then look for cordon.yaml (missing: exit 2); she can put nothing
    there after."""
    sticky = os.path.join(base, "tmp")
    os.mkdir(sticky)
    os.chmod(sticky, 0o1777)
    cfg = sticky
    if cmd == "missing-above":
        cfg = os.path.join(sticky, "cfg")
    args = (["agent", "login", "--allow-root", "a"] if cmd == "login"
            else ["run", "--port", "0", "--allow-root"])
    p = run_once(args, prefix=xdg_cfg_env(base, cfg))
    assert not p.started
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert b"cordon.yaml:0:0: missing" in p.stderr, p.stderr
    made = os.path.join(cfg, "cordon")
    for d in {cfg, made} - {sticky}:
        st = os.lstat(d)
        assert stat.S_ISDIR(st.st_mode), d
        assert st.st_uid == os.geteuid(), d
        assert stat.S_IMODE(st.st_mode) & 0o077 == 0, (d, st.st_mode)
    assert os.listdir(made) == []
    assert not as_mallory_ok(mallory, ["mkdir", os.path.join(made,
                                                             "agents")])
    assert not as_mallory_ok(mallory, ["mv", made, made + ".old"])


def test_su5_xdg_config_dir_made_first_by_another_user_refused(mallory,
                                                              base):
    """mallory made `cordon/` in the sticky XDG_CONFIG_HOME first, with
    a cordon.yaml and a manifest of hers: refused, naming it, before
    anything of it is loaded or anything is written."""
    cfg = os.path.join(base, "tmp")
    os.mkdir(cfg)
    os.chmod(cfg, 0o1777)
    theirs = os.path.join(cfg, "cordon")
    os.makedirs(os.path.join(theirs, "agents"))
    vault = os.path.join(base, "vault")
    with open(os.path.join(theirs, "cordon.yaml"), "w") as f:
        f.write(f"vault:\n  root: {vault}\n")
    with open(os.path.join(theirs, "agents", "evil.yaml"), "w") as f:
        f.write("name: evil\ntransport: subprocess\n"
                "transportConfig:\n  bin: /bin/true\n")
    for root, dirs, files in os.walk(theirs):
        for n in [root] + [os.path.join(root, x) for x in files]:
            give(n, mallory)
    p = run_once(["run", "--port", "0", "--allow-root"],
                 prefix=xdg_cfg_env(base, cfg))
    refused(p, theirs)
    assert not os.path.exists(vault)
    assert os.listdir(os.path.join(base, "rt")) == []
    assert not os.path.exists(os.path.join(base, "state"))


def test_per5_su5_runtime_dir_squatted_first_refused(mallory, base):
    """XDG_RUNTIME_DIR in a sticky shared dir (/tmp): mallory made
    `cordon/` there first.  cordon (root here) used it, wrote the token
    into her dir and she swapped the port file: `cordon status` sent the
    bearer token to her listener.  Now it refuses to start."""
    runtime = os.path.join(base, "rt")
    os.mkdir(runtime)
    os.chmod(runtime, 0o1777)
    squat = os.path.join(runtime, "cordon")
    os.mkdir(squat)
    os.chmod(squat, 0o777)
    give(squat, mallory)
    p = run_once(["run", "--port", "0", "--allow-root"],
                 prefix=xdg_env(base, runtime))
    refused(p, squat)
    assert os.listdir(squat) == [], "cordon wrote into mallory's dir"


def test_per5_su5_runtime_dir_through_their_link_refused(mallory, base):
    """XDG_RUNTIME_DIR names a link mallory owns (in a sticky shared
    dir), pointing at a private dir for now: she can repoint it at any
    time, so it is refused as hers, before anything is written."""
    runtime = os.path.join(base, "rt")
    os.mkdir(runtime)
    os.chmod(runtime, 0o1777)
    private = os.path.join(base, "private")
    os.mkdir(private, 0o700)
    link = os.path.join(runtime, "mine")
    os.symlink(private, link)
    give(link, mallory)
    p = run_once(["run", "--port", "0", "--allow-root"],
                 prefix=xdg_env(base, link))
    refused(p, link)
    assert os.listdir(private) == [], "cordon wrote through her link"


def test_per5_cli_sends_no_token_to_a_swapped_port(mallory, base):
    """The operator loosened run/ (chmod 777); mallory replaced run/port
    with her own file naming her listener.  `cordon status` reads the
    port only from a private dir and a file of the caller's: it refuses,
    and her listener gets nothing."""
    home = os.path.join(base, "home")
    os.mkdir(home, 0o700)
    os.chmod(base, 0o755)
    c = Cordon(home, ["--allow-root"])
    s = None
    try:
        c.start()
        run = os.path.join(home, "run")
        os.chmod(home, 0o711)  # mallory may pass through to run/
        os.chmod(run, 0o777)
        s, port, got = listener()
        q = subprocess.run(
            as_mallory(mallory) + ["sh", "-c",
                                   f"echo {port} > {run}/p.new && "
                                   f"mv -f {run}/p.new {run}/port"],
            capture_output=True, timeout=30)
        assert q.returncode == 0, q.stderr
        r = subprocess.run([cordon_bin(), "status", "--home", home],
                           capture_output=True, timeout=30)
        assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
        assert b"not private to you" in r.stderr, r.stderr
        assert c.token.encode() not in r.stderr + r.stdout
        s.close()
        assert not any(c.token.encode() in g for g in got), got
        assert got == [], got
        os.chmod(run, 0o700)
        os.chmod(home, 0o700)
        os.unlink(os.path.join(run, "port"))  # mallory's, not cordon's
    finally:
        if s is not None:
            s.close()
        finish(c)


@pytest.mark.parametrize("shape", ["readable-by-others", "fifo",
                                   "in-their-dir"])
def test_per5_token_file_not_private_refused(mallory, base, shape):
    """`--port N --token-file FILE` (cordon under systemd): a token file
    others can read, one in a dir another user can write, or a FIFO
    (which hung the CLI) is refused at once, and nothing is sent."""
    tok = os.path.join(base, "token")
    if shape == "in-their-dir":  # mallory may swap it for her own
        theirs = os.path.join(base, "theirs")
        os.mkdir(theirs, 0o755)
        give(theirs, mallory)
        tok = os.path.join(theirs, "token")
    if shape == "fifo":
        os.mkfifo(tok, 0o600)
    else:
        with open(tok, "w") as f:
            f.write("a" * 64 + "\n")
        os.chmod(tok, 0o644 if shape == "readable-by-others" else 0o600)
    s, port, got = listener()
    try:
        r = subprocess.run([cordon_bin(), "status", "--port", str(port),
                            "--token-file", tok],
                           capture_output=True, timeout=10)
        assert r.returncode == 1, (r.returncode, r.stderr)
        assert b"cannot read the token file" in r.stderr, r.stderr
        assert b"a" * 64 not in r.stderr
    finally:
        s.close()
    assert got == [], got


def test_per5_su5_every_file_private_under_umask_000(base):
    """A careless umask: every directory and file cordon makes in its
    home (run files, lock, audit, heads, state) is still writable by no
    one else, and the token, port, lock and audit files are 0600."""
    home = os.path.join(base, "home")
    os.mkdir(home, 0o700)
    c = Cordon(home, ["--allow-root"],
               prefix=["sh", "-c", 'umask 000 && exec "$@"', "sh"])
    try:
        c.start()
        assert c.health()["status"] == "ok"
        loose = []
        for top in ("run", "audit", "state"):
            for d, dirs, files in os.walk(os.path.join(home, top)):
                for n in [d] + [os.path.join(d, f) for f in files]:
                    m = os.lstat(n).st_mode
                    if m & 0o022 or (stat.S_ISREG(m) and m & 0o077):
                        loose.append((n, oct(m)))
        assert not loose, loose
        for rel in ("run/token", "run/port", "run/lock"):
            m = os.stat(os.path.join(home, rel)).st_mode
            assert stat.S_IMODE(m) == 0o600, (rel, oct(m))
    finally:
        finish(c)


@pytest.mark.parametrize("mode", [0o644, 0o600])
def test_per5_no_login_code_in_output_others_can_read(base, mode):
    """`cordon run > /tmp/cordon.log` under umask 022: whoever reads the
    log could spend the one-time code before the operator and hold a
    dashboard session.  Into a file others can read cordon prints the
    dashboard without a code (`cordon login` mints one); into a private
    file, the code as always."""
    home = os.path.join(base, "home")
    os.mkdir(home, 0o700)
    log = os.path.join(base, "cordon.log")
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    os.fchmod(fd, mode)
    p = subprocess.Popen([cordon_bin(), "run", "--home", home, "--port",
                          "0", "--allow-root"], stdin=subprocess.DEVNULL,
                         stdout=fd, stderr=subprocess.DEVNULL,
                         env=child_env())
    os.close(fd)
    try:
        deadline = time.monotonic() + READY_S
        text = ""
        while "dashboard" not in text and time.monotonic() < deadline:
            time.sleep(0.05)
            with open(log) as f:
                text = f.read()
        assert "cordon: dashboard http://127.0.0.1:" in text, text
        if mode == 0o600:
            assert "/ui/login?code=" in text, text
            return
        assert "code=" not in text, text
        assert "`cordon login` prints one" in text, text
        r = subprocess.run([cordon_bin(), "login", "--home", home],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert "/ui/login?code=" in r.stdout, r.stdout
    finally:
        p.terminate()
        assert p.wait(timeout=30) == 0
