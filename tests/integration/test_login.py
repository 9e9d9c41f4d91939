# SBX-9, SP-1, SEC-3: `cordon agent login NAME` runs an agent CLI's own
# login on the operator's terminal (a pty driven from here), in the
# agent's private home and sandbox: what it writes there is what the
# agent's next runs see, and no sibling agent does; it gets no secret,
# no controlling terminal, no way to push keystrokes into the terminal,
# no writable place but the agent's own, and the network.  Everything lives
# under /var/tmp (a run's private /tmp would hide it).
import fcntl
import json
import os
import pty
import select
import shutil
import socket
import subprocess
import tempfile
import termios
import time

import pytest

from agents_util import make_agents_home, run, server_env, text_of
from conftest import Cordon, child_env, cordon_bin, finish

CODE = "the-pasted-code-42"


def manifest(name, bin_path, extra=""):
    return (f"name: {name}\ntransport: subprocess\n"
            f"transportConfig:\n  bin: {bin_path}\n"
            "  args: [\"-z\", \"{prompt}\"]\n" + extra)


@pytest.fixture(scope="module")
def world():
    base = tempfile.mkdtemp(prefix="cordon-login-", dir="/var/tmp")
    mp = pytest.MonkeyPatch()
    try:
        ws = os.path.join(base, "ws")
        os.mkdir(ws)
        from pathlib import Path
        home = make_agents_home(Path(base), name="lh", extra={
            "fake": manifest("fake", "fakecli",
                             f"  cwd: {ws}\nlogin: [fakecli, login]\n"),
            "sibling": manifest("sibling", "fakecli"),
            "nologin": manifest("nologin", "hermes"),
        })
        server_env(mp)  # fake agents on PATH, decoy secrets in the env
        yield {"home": str(home), "base": base, "ws": ws}
    finally:
        mp.undo()
        shutil.rmtree(base, ignore_errors=True)


def on_tty(slave):
    """In the child: a session whose controlling terminal is the pty, as
    the operator's shell has."""
    def setup():
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    return setup


def login_on_pty(w, *args, answer=CODE, timeout=30):
    """Run `cordon agent login` on a fresh pty; type answer when asked.
    Its exit code and everything it wrote to the terminal."""
    master, slave = pty.openpty()
    p = subprocess.Popen(
        [cordon_bin(), "agent", "login", "--home", w["home"],
         "--allow-root", *args],
        stdin=slave, stdout=slave, stderr=slave, env=child_env(),
        start_new_session=True, preexec_fn=on_tty(slave))
    out, typed, end = b"", False, time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            r, _, _ = select.select([master], [], [], 0.2)
            if r:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    chunk = b""
                out += chunk
            if not typed and b"paste the code:" in out:
                os.write(master, answer.encode() + b"\n")
                typed = True
            if p.poll() is not None and not r:
                break
        else:
            p.kill()
            pytest.fail("login did not end: %r" % out)
        # Nothing the login pushed waits to be read by the next program.
        os.set_blocking(slave, False)
        with pytest.raises(BlockingIOError):
            os.read(slave, 100)
        return p.wait(), out.decode(errors="replace")
    finally:
        os.close(master)
        os.close(slave)


def report_of(out):
    line = [ln for ln in out.splitlines() if "logged in " in ln]
    assert line, out
    return json.loads(line[-1].split("logged in ", 1)[1])


def agent_home(w, name):
    return os.path.join(os.path.realpath(w["home"]), "state", "homes", name)


def test_sbx9_login_on_the_terminal_writes_the_home(world):
    # Outside the agent's roots: cordon's config, the operator's files.
    planted = os.path.join(world["home"], "agents", "planted.yaml")
    outside = os.path.join(world["base"], "outside")
    rc, out = login_on_pty(world, "fake", "--", "login", planted, outside)
    assert rc == 0, out
    rep = report_of(out)
    assert rep["tty"] is True  # the operator's terminal, as fds 0-2
    # SBX-9: no keystroke into the operator's shell, no taking the
    # terminal as its own; SEC-3: no secret of cordon's environment.
    assert rep["tiocsti"] == "EPERM", rep
    assert rep["tiocsctty"] == "EPERM", rep
    assert rep["devtty"] == "ENXIO", rep
    assert rep["secret_env"] == [], rep
    # It writes where a run of the agent may, and nowhere else.
    for p in (planted, outside):
        assert rep["write " + p] in ("EROFS", "EACCES"), rep
        assert not os.path.exists(p)
    cred = os.path.join(agent_home(world, "fake"), ".fakecli",
                        "credentials.json")
    with open(cred) as f:
        assert json.load(f) == {"code": CODE}
    assert oct(os.stat(cred).st_mode & 0o777) == "0o600"  # umask 077
    assert f"fake: its own login, in {agent_home(world, 'fake')}" in out


def test_sbx9_runs_see_the_login_and_siblings_do_not(world):
    rc, out = login_on_pty(world, "fake", answer="for-the-runs")
    assert rc == 0, out
    c = Cordon(world["home"], ["--allow-root"]).start()
    try:
        r, ev = run(c, "fake", "show")
        assert r.status == 200, r
        assert text_of(ev) == 'credentials {"code": "for-the-runs"}\n', ev
        cred = os.path.join(agent_home(world, "fake"), ".fakecli",
                            "credentials.json")
        r, ev = run(c, "sibling", "peek " + cred)
        assert "for-the-runs" not in text_of(ev), ev
        assert text_of(ev).startswith("cannot read: "), ev
        r, ev = run(c, "sibling", "show")
        assert text_of(ev).startswith("no credentials: "), ev
        # While cordon runs, the login says it is not in its trail.
        rc, out = login_on_pty(world, "fake", answer="again")
        assert rc == 0, out
        assert ("cordon is running on this home; the login is not in its"
                " audit trail") in out
    finally:
        finish(c)


def test_sbx9_login_has_the_network(world):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(20)
    port = srv.getsockname()[1]
    try:
        master, slave = pty.openpty()
        p = subprocess.Popen(
            [cordon_bin(), "agent", "login", "--home", world["home"],
             "--allow-root", "fake", "--", "net", str(port)],
            stdin=slave, stdout=slave, stderr=slave, env=child_env())
        conn, _ = srv.accept()
        assert conn.recv(100) == b"hello from the login\n"
        conn.close()
        assert p.wait(timeout=20) == 0
        os.close(master)
        os.close(slave)
    finally:
        srv.close()


def cli(w, *args, user_args=("--allow-root",)):
    return subprocess.run(
        [cordon_bin(), "agent", "login", "--home", w["home"], *user_args,
         *args], capture_output=True, text=True, timeout=30,
        env=child_env(), stdin=subprocess.DEVNULL)


# SEC-3: an operator argument that looks like a secret never reaches a
# command line; nothing starts.
def test_sec3_login_refuses_a_secret_argument(world):
    key = "sk-ant-api03-" + "k" * 40
    r = cli(world, "fake", "--", "login", key)
    assert r.returncode == 2, r
    assert "looks like a secret" in r.stderr
    assert key not in r.stderr + r.stdout
    r = cli(world, "fake", "--", "--api-key", "plain-value")
    assert r.returncode == 2 and "looks like a secret" in r.stderr, r


def test_sbx9_login_refusals_say_why(world):
    # Bad usage or configuration: exit 2, as everywhere in cordon.
    r = cli(world, "nologin")
    assert r.returncode == 2, r
    assert ("nologin: no login command: its program is none of claude, "
            "codex, gemini; add login: [PROGRAM, ARGS...] to its manifest"
            in r.stderr), r.stderr
    r = cli(world, "nosuch")
    assert r.returncode == 2 and "no valid agent by that name" in r.stderr
    # The root rules of `cordon run`.
    r = cli(world, "fake", user_args=())
    assert r.returncode == 2 and "running as root" in r.stderr, r
    r = cli(world, "fake", "extra")
    assert r.returncode == 2 and "unexpected argument" in r.stderr, r
    r = subprocess.run([cordon_bin(), "agent", "logn"], capture_output=True,
                       text=True, timeout=30, env=child_env())
    assert r.returncode == 2 and "unknown subcommand" in r.stderr, r


# SBX-1: a call the agent's seccomp layer ends a run for ends a login,
# named.
def test_sbx1_login_ptrace_ends_it(world):
    r = cli(world, "fake", "--", "ptrace")
    assert r.returncode == 1, r
    assert "fake: seccomp: ptrace; login ended" in r.stderr, r.stderr
    assert "ptrace returned" not in r.stdout


# SP-15: `login:` is validated like any command, and `cordon check`
# says so.
def test_sbx9_check_validates_login(world, tmp_path):
    home = make_agents_home(tmp_path, name="ck", extra={
        "bad": manifest("bad", "fakecli",
                        "login: [fakecli, \"{prompt}\"]\n")})
    r = subprocess.run([cordon_bin(), "check", "--home", str(home)],
                       capture_output=True, text=True, timeout=30,
                       env=child_env())
    assert r.returncode == 1
    assert "bad.yaml:" in r.stdout and "login: {prompt} refused here" \
        in r.stdout, r.stdout
