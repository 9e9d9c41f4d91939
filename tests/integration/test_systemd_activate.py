# SU-4: the daemons the systemd way, without systemd.  Each runs under
# systemd-socket-activate (Debian's systemd package) as its own system user
# created for the test, with no cordond: peers dial each other's unix
# sockets, tell each other apart by SO_PEERCRED, and the broker takes its
# TCP listener by activation and its token as a credential.  The sockets
# are left open to everyone (0666) on purpose: what refuses a stranger
# here is the daemon's own SO_PEERCRED check, not the file mode (the units'
# SocketMode=0660 + SocketGroup= layer is checked offline in
# test_systemd_units.py).
import grp
import hashlib
import http.client
import json
import os
import pathlib
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from audit_util import check_chain
from conftest import (BUILD, HTTP_S, READY_S, child_env, system_group,
                      system_user, user_bin)
from egress_util import BIG, start_upstream
from test_egress_route import make_ca, make_cert, serve

USERS = {
    "auditd": "cordon-sdt-auditd",
    "vaultd": "cordon-sdt-vaultd",
    "egressd": "cordon-sdt-egressd",
    # gated is the operator too (cordon-gated@USER), with a primary group
    # of its own by which auditd tells it from the spawner.
    "gated": "cordon-sdt-op",
    "spawner": "cordon-sdt-op",  # the operator: agents run as this person
    "broker": "cordon-sdt-broker",
    "sched": "cordon-sdt-sched",
}
GROUPS = {"gated": "cordon-sdt-gated"}  # as the unit's Group=
STRANGER = "cordon-sdt-other"
# Who dials whom: the --peer users each accepting daemon names.
PEERS = {
    "auditd": ["broker", "spawner", "vaultd", "egressd", "gated"],
    "vaultd": ["broker", "spawner"],
    "egressd": ["spawner", "broker"],
    "gated": ["spawner", "broker"],
    "spawner": ["broker", "sched"],
    "broker": [],
    "sched": [],
}
# The daemons the broker's health lists; sched, which nobody dials (its
# unit has no socket), is started after them.
DAEMONS = ["auditd", "vaultd", "egressd", "gated", "spawner", "broker"]
# MI-1 under the units: a cron mission fires at the test clock's slot.
CLOCK_T0 = 1795669200  # 2026-11-26T05:00:00Z
# EG-1 under systemd: an upstream on 127.0.0.2, reached by a `network:
# proxy` agent through egressd's test-only keys (--test-egress 1 on the
# spawner and egressd, as cordond passes with CORDON_TEST_EGRESS=1).
TUNNEL = ("import socket,sys\n"
          "s=socket.create_connection(('127.0.0.1',3128),timeout=20)\n"
          "s.sendall(sys.argv[1].replace('|','\\r\\n').encode())\n"
          "d=b''\n"
          "while True:\n"
          "    c=s.recv(65536)\n"
          "    if not c: break\n"
          "    d+=c\n"
          "print(d.split(b'\\r\\n')[0].decode(), len(d), "
          "d.count(b'x'))\n")

# An agent's attempt to pose as the spawner: dial a cordon socket.
# EG-3 under the units: a routed request to a TLS mock through the
# route's base URL, with the placeholder the agent holds; it prints
# whether its env had the placeholder, any value hashing as the real
# key, and the answer's status (the program is the prompt).
REAL = "sk-ant-sdt-real-5eed5eed5eed5eed"
ROUTE = ("import hashlib,http.client,json,os,urllib.parse\n"
         "e = os.environ\n"
         "u = urllib.parse.urlsplit(e['ANTHROPIC_BASE_URL'])\n"
         "c = http.client.HTTPConnection(u.hostname, u.port, timeout=20)\n"
         "c.request('POST', u.path + '/v1/messages', body='{}',\n"
         "          headers={'x-api-key': e['ANTHROPIC_API_KEY']})\n"
         "r = c.getresponse()\n"
         "body = r.read().decode()\n"
         "h = {hashlib.sha256(v.encode()).hexdigest() for v in e.values()}\n"
         "print(json.dumps({'ph': e['ANTHROPIC_API_KEY'] ==\n"
         "                  'cordon-egress-placeholder',\n"
         "                  'real': SHA in h, 'status': r.status,\n"
         "                  'stream': 'message_stop' in body}))\n")

DIAL = ("import socket,sys\n"
        "s=socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        "    s.connect(sys.argv[1]); s.settimeout(5)\n"
        "    print('dialled', s.recv(64)==b'')\n"
        "except OSError as e:\n"
        "    print('unreachable', e.errno)\n")

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root to create the test's system users")


def ensure_user(name):
    return system_user(name).pw_uid


def chown(path, user, mode):
    pw = pwd.getpwnam(user)
    os.chown(path, pw.pw_uid, pw.pw_gid)
    os.chmod(path, mode)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def activate_tcp(argv_of, log_path, env):
    """Start `systemd-socket-activate -l 127.0.0.1:PORT ...` (argv_of(port)
    gives the whole argv) with its output appended to log_path; return
    (process, port) once it listens.  A free_port() can be taken by some
    other socket before it is bound again: then systemd-socket-activate
    exits (address in use) and another port is tried."""
    for _ in range(5):
        port = free_port()
        start = os.path.getsize(log_path) if os.path.exists(log_path) else 0
        with open(log_path, "ab") as log:
            p = subprocess.Popen(argv_of(port), stdin=subprocess.DEVNULL,
                                 stdout=log, stderr=log, env=env)
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            with open(log_path, errors="replace") as f:
                f.seek(start)
                text = f.read()
            if "Listening on" in text:
                return p, port
            if p.poll() is not None:
                break
            time.sleep(0.02)
        if p.poll() is None:
            p.kill()
            p.wait()
            raise AssertionError(f"never listened: {text}")
        if "in use" not in text:
            raise AssertionError(f"systemd-socket-activate failed: {text}")
    raise AssertionError("no free port after five tries")


def as_user(user, group=None):
    return ["setpriv", "--reuid", user, "--regid", group or user,
            "--clear-groups", "--"]


def as_daemon(name):
    """As the daemon's unit runs it: its User= and Group=."""
    return as_user(USERS[name], GROUPS.get(name))


def peer_arg(p):
    """--peer's value for peer p: USER, or USER:GROUP where the unit
    names a Group= (auditd's gated=${CORDON_OPERATOR}:cordon-gated)."""
    return USERS[p] + (":" + GROUPS[p] if p in GROUPS else "")


class Machine:
    """A temp 'machine': /etc, /var and /run of cordon under one dir."""

    def __init__(self):
        if shutil.which("systemd-socket-activate") is None:
            pytest.fail("systemd-socket-activate is missing: "
                        "apt-get install systemd")
        self.uids = {d: ensure_user(u) for d, u in USERS.items()}
        for g in GROUPS.values():
            system_group(g)
        self.stranger = ensure_user(STRANGER)
        # Not under /tmp: a namespace run sees a private /tmp, and the
        # operator's home (its cwd) must stay where it is.
        self.root = tempfile.mkdtemp(prefix="cordon-sd-", dir="/var/tmp")
        os.chmod(self.root, 0o755)
        self.path = lambda *p: os.path.join(self.root, *p)
        # Programs in a dir every test user can reach (the build dir may
        # sit under a private home).
        self.bin = lambda name: os.path.join(user_bin(), name)
        for d in ["etc", "etc/agents", "etc/missions", "creds"]:
            os.mkdir(self.path(d), 0o755)
        # The socket dir outside /tmp, like /run/cordon: a namespace run
        # gets a private /tmp, which would hide it for the wrong reason.
        self.rundir = tempfile.mkdtemp(prefix="cordon-sdt-", dir="/run")
        os.chmod(self.rundir, 0o755)
        os.mkdir(self.path("audit"))
        chown(self.path("audit"), USERS["auditd"], 0o700)
        for d in ["vault", "vault/00_Inbox", "vault/00_Inbox/cordon"]:
            os.mkdir(self.path(d))
            chown(self.path(d), USERS["vaultd"], 0o755)
        for d in ["state", "ophome"]:
            os.mkdir(self.path(d))
            chown(self.path(d), USERS["spawner"], 0o700)
        os.mkdir(self.path("sched"))
        chown(self.path("sched"), USERS["sched"], 0o700)
        os.mkdir(self.path("clock"), 0o755)
        with open(self.path("clock", "now"), "w") as f:
            f.write(f"{CLOCK_T0 + 5}\n")
        os.chmod(self.path("clock", "now"), 0o644)
        demo = self.bin("cordon-demo-agent")
        with open(self.path("etc/agents/demo.yaml"), "w") as f:
            f.write(
                "name: demo\n"
                "transport: subprocess\n"
                "transportConfig:\n"
                f"  bin: {demo}\n"
                "  args: [\"{prompt}\"]\n"
                "  timeoutMs: 30000\n"
                "healthProbe:\n"
                "  type: command\n"
                f"  command: [\"{demo}\", \"--version\"]\n"
                "  timeoutMs: 2000\n")
        # Agents that try to dial the socket named by their prompt: with
        # network: allow (none refuses every connect), and one without.
        for name, iso, net in (("dialns", "namespace", "allow"),
                               ("dialll", "landlock", "allow"),
                               ("dialnone", "landlock", "none")):
            self.py_agent(name, f"{json.dumps(DIAL)}, \"{{prompt}}\"",
                          f"sandbox:\n  isolation: {iso}\n  network: {net}\n",
                          20000)
        self.up = start_upstream()
        up_port = self.up.server_address[1]
        self.proxy_agent("netbot", f"{json.dumps(TUNNEL)}, \"{{prompt}}\"",
                         f"  allow: [\"up.test:{up_port}\"]\n"
                         "  testResolve: {up.test: 127.0.0.2}\n")
        # A TLS mock of a provider API, with a certificate of a test CA
        # egressd (its own user) reads through --test-ca.
        pki = pathlib.Path(self.path("pki"))
        pki.mkdir()
        ca = make_ca(pki)
        self.ca = ca[1]
        self.tls = serve(make_cert(pki, "good", "mock.test", ca))
        tls_port = self.tls.server_address[1]
        self.proxy_agent("routebot", "\"{prompt}\"",
                         f"  allow: [\"mock.test:{tls_port}\"]\n"
                         "  testResolve: {mock.test: 127.0.0.2}\n"
                         "  routes:\n"
                         "    anthropic:\n"
                         f"      upstream: https://mock.test:{tls_port}\n"
                         "      secret: ANTHROPIC_API_KEY\n"
                         "      auth: x-api-key\n"
                         "      baseUrlEnv: ANTHROPIC_BASE_URL\n",
                         "secrets:\n  ANTHROPIC_API_KEY: anthropic.apiKey\n")
        # SBX-6 under the units: the gate's fake agent, working in a
        # workspace under the operator's 0700 home, as on Debian 12.
        os.mkdir(self.path("ophome", "ws"))
        chown(self.path("ophome", "ws"), USERS["spawner"], 0o700)
        with open(self.path("etc/agents/gatebot.yaml"), "w") as f:
            f.write("name: gatebot\n"
                    "transport: subprocess\n"
                    "transportConfig:\n"
                    f"  bin: {self.bin('gatebot')}\n"
                    "  args: [\"-p\", \"{prompt}\"]\n"
                    f"  cwd: {self.path('ophome', 'ws')}\n"
                    "  timeoutMs: 30000\n"
                    "  env:\n"
                    f"    CORDON_BIN: {self.bin('cordon')}\n"
                    + ("limits:\n  memBytes: 0\n"
                       if "ASAN_OPTIONS" in os.environ else ""))
        with open(self.path("etc/missions/tick.yaml"), "w") as f:
            f.write("id: tick\n"
                    "label: Every minute\n"
                    "agent: demo\n"
                    "prompt: tick\n"
                    "outputs:\n"
                    "  - {type: event, event: tick.done}\n"
                    "permissions: [event-emit]\n"
                    "trigger: {cron: \"* * * * *\"}\n")
        with open(self.path("etc/secrets.yaml"), "w") as f:
            f.write(f"anthropic:\n  apiKey: {REAL}\n")
        chown(self.path("etc/secrets.yaml"), USERS["spawner"], 0o600)
        subprocess.run([self.bin("cordon"), "token",
                        self.path("creds", "token")], check=True)
        chown(self.path("creds", "token"), USERS["broker"], 0o400)
        with open(self.path("creds", "token")) as f:
            self.token = f.read().strip()
        self.port = None  # the broker's, once start("broker") listens
        self.procs = {}
        self.logs = {}

    def py_agent(self, name, args, rest, timeout_ms=30000):
        """A python3 agent: -c, then args (YAML flow items); rest, the
        manifest's other keys."""
        with open(self.path(f"etc/agents/{name}.yaml"), "w") as f:
            f.write(f"name: {name}\n"
                    "transport: subprocess\n"
                    "transportConfig:\n"
                    "  bin: /usr/bin/python3\n"
                    f"  args: [\"-c\", {args}]\n"
                    f"  timeoutMs: {timeout_ms}\n" + rest)

    def proxy_agent(self, name, args, egress, extra=""):
        """A `network: proxy` python3 agent; its egress keys, with
        127.0.0.2 allowed."""
        self.py_agent(name, args, f"{extra}sandbox:\n  network: proxy\n"
                      f"egress:\n{egress}  testAllowAddress: 127.0.0.2\n")

    def sock(self, name):
        return os.path.join(self.rundir, f"{name}.sock")

    def argv(self, name):
        b = self.bin(f"cordon-{name}")
        args = [b, "--systemd", "--socket-dir", self.rundir]
        for p in PEERS[name]:
            args += ["--peer", f"{p}={peer_arg(p)}"]
        if name == "auditd":
            args += ["--audit-dir", self.path("audit")]
        elif name == "vaultd":
            args += ["--vault", self.path("vault")]
        elif name == "sched":
            args += ["--state-dir", self.path("sched")]
        elif name == "spawner":
            args += ["--home", self.path("etc"), "--state-dir",
                     self.path("state"), "--protect", self.path("audit"),
                     "--protect", self.path("vault")]
        if name in ("spawner", "egressd"):
            args += ["--test-egress", "1"]
        if name == "egressd":
            args += ["--test-ca", self.ca]
        return args

    def start(self, name):
        env = ["-E", "LANG=C", "-E", "TZ=UTC"]
        for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
            v = child_env().get(k)
            if v is not None:
                env += ["-E", f"{k}={v}"]
        if name == "sched":
            self.start_sched(env)
            return
        if name == "broker":
            env += ["-E", f"CREDENTIALS_DIRECTORY={self.path('creds')}"]
            self.logs[name] = self.path(f"{name}.log")
            self.procs[name], self.port = activate_tcp(
                lambda port: ["systemd-socket-activate", "-l",
                              f"127.0.0.1:{port}", "--fdname=http", *env,
                              *as_daemon(name), *self.argv(name)],
                self.logs[name], {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
            return
        listen = ["-l", self.sock(name), "--fdname=ipc"]
        if name == "spawner":
            env += ["-E", "PATH=/usr/bin:/bin", "-E",
                    f"HOME={self.path('ophome')}"]
        if os.path.exists(self.sock(name)):
            os.unlink(self.sock(name))  # as RemoveOnStop= would
        log = open(self.path(f"{name}.log"), "ab")
        self.logs[name] = self.path(f"{name}.log")
        self.procs[name] = subprocess.Popen(
            ["systemd-socket-activate", *listen, *env,
             *as_daemon(name), *self.argv(name)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
        log.close()
        # The socket exists once systemd-socket-activate listens; the
        # daemon itself starts on the first connection, as under systemd.
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            if os.path.exists(self.sock(name)):
                os.chmod(self.sock(name), 0o666)
                return
            time.sleep(0.02)
        raise AssertionError(f"{name} never listened: {self.log(name)}")

    def start_sched(self, env):
        """As its unit starts it: its own user, no socket of its own; it
        dials the spawner's."""
        env = dict(e.split("=", 1) for e in env[1::2])
        env["CORDON_TEST_CLOCK_FILE"] = self.path("clock", "now")
        self.logs["sched"] = self.path("sched.log")
        with open(self.logs["sched"], "ab") as log:
            self.procs["sched"] = subprocess.Popen(
                [*as_daemon("sched"), *self.argv("sched")],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)

    def start_all(self):
        for name in DAEMONS:
            self.start(name)
        self.start("sched")

    def log(self, name):
        with open(self.logs[name], errors="replace") as f:
            return f.read()

    def kill(self, name):
        p = self.procs.pop(name)
        p.kill()
        p.wait(timeout=10)

    def stop(self):
        for name in ["sched", *reversed(DAEMONS)]:
            p = self.procs.pop(name, None)
            if p is None:
                continue
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for srv in (self.up, self.tls):
            srv.shutdown()
            srv.server_close()
        if os.environ.get("CORDON_KEEP_SD") is None:
            shutil.rmtree(self.root, ignore_errors=True)
            shutil.rmtree(self.rundir, ignore_errors=True)

    def request(self, method, target, body=None, headers=None, auth=True):
        h = {"Host": f"127.0.0.1:{self.port}"}
        if auth:
            h["Authorization"] = f"Bearer {self.token}"
        if body is not None:
            h["Content-Type"] = "application/json"
            body = json.dumps(body)
        h.update(headers or {})
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=HTTP_S)
        try:
            c.request(method, target, body=body, headers=h)
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            c.close()

    def health(self):
        st, _, body = self.request("GET", "/api/health")
        assert st == 200, body
        return json.loads(body)

    def wait_health_ok(self, bound=READY_S):
        deadline = time.monotonic() + bound
        while True:
            h = self.health()
            if h["status"] == "ok" or time.monotonic() > deadline:
                return h
            time.sleep(0.1)


@pytest.fixture(scope="module")
def machine():
    m = Machine()
    try:
        m.start_all()
        yield m
    finally:
        m.stop()


def test_su4_health_each_daemon_its_own_user(machine):
    """SU-4, SU-2, EG-1: all six up with no cordond, each as its own
    user (gated as the operator, with a group of its own, like its
    unit), confined; health says systemd supervises them."""
    h = machine.wait_health_ok()
    assert h["status"] == "ok", h
    assert h["supervisor"] == "systemd"
    by = {d["name"]: d for d in h["daemons"]}
    assert [d["name"] for d in h["daemons"]] == DAEMONS
    for name, d in by.items():
        st = d["status"]
        assert d["up"] is True
        assert st["uid"] == machine.uids[name], (name, st)
        assert st["capEff"] == "0000000000000000"
        assert st["noNewPrivs"] == 1
        assert st["seccomp"] == 2
    # One user each but gated, the operator's; none root.
    assert len({d["status"]["uid"] for d in by.values()}) == \
        len(DAEMONS) - 1
    assert 0 not in {d["status"]["uid"] for d in by.values()}
    with open(f"/proc/{machine.procs['gated'].pid}/status") as f:
        gids = [ln.split()[1:] for ln in f if ln.startswith("Gid:")][0]
    assert set(gids) == {str(grp.getgrnam(GROUPS["gated"]).gr_gid)}, gids


def test_su4_chat_run_over_unix_sockets(machine):
    """SU-4: a chat run crosses broker -> spawner -> vaultd -> auditd over
    the activated sockets: streamed, saved by vaultd as its own user,
    audited by auditd as its own user."""
    machine.wait_health_ok()
    st, _, body = machine.request(
        "POST", "/api/agents/demo/run", {"prompt": "hello from systemd"})
    assert st == 200, body
    events = [json.loads(x) for x in body.decode().splitlines() if x]
    done = [e for e in events if e["kind"] == "done"]
    saved = [e for e in events if e["kind"] == "saved"]
    assert done and done[0]["exitCode"] == 0, events
    assert saved, events
    note = machine.path("vault", saved[0]["path"])
    assert os.stat(note).st_uid == machine.uids["vaultd"]
    deadline = time.monotonic() + HTTP_S
    while True:
        kinds = []
        for f in os.listdir(machine.path("audit")):
            if f.endswith(".jsonl"):
                assert os.stat(machine.path("audit", f)).st_uid == \
                    machine.uids["auditd"]
                with open(machine.path("audit", f)) as fh:
                    kinds += [json.loads(x)["kind"] for x in fh if x.strip()]
        if "agent.invoke.complete" in kinds and "vault.write" in kinds:
            break
        assert time.monotonic() < deadline, kinds
        time.sleep(0.1)
    assert "agent.invoke" in kinds
    # The agent ran as the operator.
    assert "hello from systemd" not in json.dumps(kinds)


def test_su4_stranger_refused_by_peercred(machine):
    """SU-4: another user that connects to a daemon's socket is refused
    and logged; the daemons stay healthy."""
    machine.wait_health_ok()
    code = (
        "import socket,sys\n"
        "s=socket.socket(socket.AF_UNIX)\n"
        "s.connect(sys.argv[1]); s.settimeout(5)\n"
        "try:\n"
        "    s.sendall(b'\\x00'*64)\n"
        "    d=s.recv(64)\n"
        "except (ConnectionResetError, BrokenPipeError):\n"
        "    d=b''\n"
        "print('closed' if d==b'' else 'open')\n")
    for name in ["auditd", "vaultd", "egressd", "gated", "spawner"]:
        r = subprocess.run(
            [*as_user(STRANGER), "/usr/bin/python3", "-c", code,
             machine.sock(name)],
            capture_output=True, text=True, timeout=HTTP_S)
        assert r.stdout.strip() == "closed", (name, r.stdout, r.stderr)
        deadline = time.monotonic() + HTTP_S
        want = f"refused a connection from uid {machine.stranger}"
        while want not in machine.log(name):
            assert time.monotonic() < deadline, machine.log(name)
            time.sleep(0.05)
    assert machine.health()["status"] == "ok"


def test_su4_wrong_edge_refused(machine):
    """SU-4: a real peer on an edge it does not have is refused too:
    vaultd's user dialling the spawner, the spawner's dialling the broker's
    peers the wrong way (it never accepts from auditd)."""
    code = (
        "import socket,sys\n"
        "s=socket.socket(socket.AF_UNIX)\n"
        "s.connect(sys.argv[1]); s.settimeout(5)\n"
        "print('closed' if s.recv(64)==b'' else 'open')\n")
    for user, sock in [(USERS["vaultd"], "spawner"),
                       (USERS["auditd"], "vaultd"),
                       (USERS["auditd"], "spawner")]:
        r = subprocess.run(
            [*as_user(user), "/usr/bin/python3", "-c", code,
             machine.sock(sock)],
            capture_output=True, text=True, timeout=HTTP_S)
        assert r.stdout.strip() == "closed", (user, sock, r.stderr)
        uid = pwd.getpwnam(user).pw_uid
        assert f"refused a connection from uid {uid}" in machine.log(sock)
    assert machine.health()["status"] == "ok"


def test_su4_login_url_minted_by_token_holder(machine):
    """SU-4, PER-5: under systemd the login URL comes from `cordon login`
    with the token file; it works once; only the bearer may mint one."""
    r = subprocess.run(
        [machine.bin("cordon"), "login", "--port", str(machine.port),
         "--token-file", machine.path("creds", "token")],
        capture_output=True, text=True, timeout=HTTP_S)
    assert r.returncode == 0, r.stderr
    url = [w for w in r.stdout.split() if w.startswith("http://")][0]
    target = url[url.index("/ui/"):]
    st, hdrs, _ = machine.request("GET", target, auth=False)
    assert st == 303 and "cordon_session=" in hdrs.get("Set-Cookie", "")
    cookie = hdrs["Set-Cookie"].split(";")[0]
    key = hdrs["Location"].partition("/ui/#page=")[2]
    st, _, _ = machine.request("GET", target, auth=False)
    assert st == 401  # one-time
    # A session (cookie and page key) cannot mint a code; no credentials
    # at all: 401.
    st, _, body = machine.request(
        "POST", "/api/login-code", {}, auth=False,
        headers={"Cookie": cookie, "X-Cordon-Page": key,
                 "Referer": f"http://127.0.0.1:{machine.port}/ui/"})
    assert st == 403 and json.loads(body)["error"] == "bearer-required"
    st, _, _ = machine.request("POST", "/api/login-code", {}, auth=False)
    assert st == 401
    st, _, body = machine.request("POST", "/api/login-code", {"x": 1})
    assert st == 400 and json.loads(body)["error"] == "invalid-body"


def test_su4_peer_restart_redialled(machine):
    """SU-4: a daemon that dies and is activated again (systemd's
    Restart=) is dialled again by its peers; health recovers."""
    machine.wait_health_ok()
    machine.kill("auditd")
    deadline = time.monotonic() + READY_S
    while machine.health()["status"] == "ok":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    machine.start("auditd")
    h = machine.wait_health_ok(bound=READY_S)
    assert h["status"] == "ok", h


def run_daemon(args, env=None):
    return subprocess.run(args, capture_output=True, text=True,
                          timeout=READY_S, stdin=subprocess.DEVNULL,
                          env=env or {"PATH": "/usr/bin:/bin"})


def test_su4_refuses_without_activation(tmp_path):
    """SU-4, fail closed: --systemd without a socket handed over, a peer
    left unnamed, a peer named that never dials us, or --peer without
    --systemd: each daemon refuses to start, saying why."""
    b = lambda n: os.path.join(BUILD, f"cordon-{n}")
    audit = ["--audit-dir", str(tmp_path)]
    peers = ["--peer", "broker=root", "--peer", "spawner=daemon",
             "--peer", "vaultd=bin", "--peer", "egressd=sys",
             "--peer", "gated=games"]
    cases = [
        ([b("auditd"), "--systemd", *audit, *peers], None,
         "not socket-activated"),
        ([b("auditd"), "--systemd", *audit, *peers],
         {"PATH": "/usr/bin", "LISTEN_PID": "1", "LISTEN_FDS": "1"},
         "LISTEN_PID does not name this process"),
        ([b("auditd"), "--systemd", *audit, "--peer", "broker=root"],
         None, "--peer vaultd=USER is required"),
        ([b("auditd"), "--systemd", *audit, *peers[:6]], None,
         "--peer egressd=USER is required"),
        ([b("egressd"), "--systemd", "--peer", "broker=root"], None,
         "--peer spawner=USER is required"),
        ([b("gated"), "--systemd", "--peer", "broker=root"], None,
         "--peer spawner=USER is required"),
        ([b("spawner"), "--systemd", "--home", str(tmp_path),
          "--peer", "broker=root", "--peer", "auditd=daemon"], None,
         "does not connect to"),
        ([b("auditd"), *audit, "--peer", "broker=root"], None,
         "need --systemd"),
        ([b("vaultd"), "--vault", str(tmp_path), "--systemd", "--peer",
          "broker=no-such-user-cordon", "--peer", "spawner=root"], None,
         "no such user"),
        ([b("vaultd"), "--vault", str(tmp_path), "--systemd", "--peer",
          "broker=root", "--peer", "spawner=root"], None,
         "cannot be told apart"),
        # One user told apart by a group (gated's): a group must exist,
        # be named whole, and differ.
        ([b("vaultd"), "--vault", str(tmp_path), "--systemd", "--peer",
          "broker=root:no-such-group-cordon", "--peer", "spawner=daemon"],
         None, "no such group"),
        ([b("vaultd"), "--vault", str(tmp_path), "--systemd", "--peer",
          "broker=root:", "--peer", "spawner=daemon"], None,
         "--peer NAME=USER[:GROUP]"),
        ([b("vaultd"), "--vault", str(tmp_path), "--systemd", "--peer",
          "broker=root:root", "--peer", "spawner=root:root"], None,
         "cannot be told apart"),
    ]
    for args, env, want in cases:
        r = run_daemon(args, env)
        assert r.returncode != 0, args
        if want:
            assert want in r.stderr, (args, r.stderr)


def test_su4_live_channel_never_displaced(machine):
    """SU-4: a second connection under a live peer's uid (an agent of the
    operator posing as the spawner, here a process of the broker's user)
    is refused and logged; the real channel keeps working."""
    machine.wait_health_ok()
    code = (
        "import socket,sys\n"
        "s=socket.socket(socket.AF_UNIX)\n"
        "s.connect(sys.argv[1]); s.settimeout(5)\n"
        "print('closed' if s.recv(64)==b'' else 'open')\n")
    # gated and the spawner share the operator's uid; auditd tells them
    # apart by gated's group, and each one's channel holds.
    for who, sock, peer in [("spawner", "auditd", "spawner"),
                            ("spawner", "vaultd", "spawner"),
                            ("spawner", "gated", "spawner"),
                            ("gated", "auditd", "gated"),
                            ("broker", "spawner", "broker")]:
        r = subprocess.run(
            [*as_daemon(who), "/usr/bin/python3", "-c", code,
             machine.sock(sock)],
            capture_output=True, text=True, timeout=HTTP_S)
        assert r.stdout.strip() == "closed", (who, sock, r.stderr)
        assert (f"refused a second connection as {peer} while one is live"
                in machine.log(sock)), machine.log(sock)
    h = machine.health()
    assert h["status"] == "ok", h
    st, _, body = machine.request(
        "POST", "/api/agents/demo/run", {"prompt": "still the spawner"})
    assert st == 200 and b'"saved"' in body, body


def audit_of(machine, kind, bound=HTTP_S):
    """The audit records of one kind, once there is one."""
    deadline = time.monotonic() + bound
    while True:
        recs = []
        for f in sorted(os.listdir(machine.path("audit"))):
            if f.endswith(".jsonl"):
                with open(machine.path("audit", f)) as fh:
                    recs += [json.loads(x) for x in fh if x.strip()]
        recs = [r for r in recs if r["kind"] == kind]
        if recs or time.monotonic() > deadline:
            return recs
        time.sleep(0.1)


def test_su4_sbx6_gate_resolves_paths_in_the_operators_home(machine):
    """SU-4, SBX-6 under the units: gated runs as the operator, so a file
    tool's path in a workspace under the operator's 0700 home resolves
    and is decided (allowed), as under cordond; as a user of its own it
    could not search the home and refused every such call
    (unresolvable-path)."""
    machine.wait_health_ok()
    ws = machine.path("ophome", "ws")
    calls = [{"tool": "Write", "input": {
        "file_path": os.path.join(ws, "ok.txt"), "content": "fine"}},
             {"tool": "Read", "input": {"file_path": os.path.join(
                 machine.path("ophome"), ".ssh", "id_rsa")}}]
    st, _, body = machine.request(
        "POST", "/api/agents/gatebot/run", {"prompt": json.dumps(calls)})
    assert st == 200, body
    text = "".join(json.loads(x).get("text", "")
                   for x in body.decode().splitlines() if x)
    res = {o["i"]: o for o in map(json.loads, text.splitlines())
           if "i" in o}
    assert res[0]["exit"] == 0, (res, machine.log("gated"))
    assert res[1]["exit"] == 2, res  # still the gate's to refuse
    recs = audit_of(machine, "verb.run")
    deadline = time.monotonic() + HTTP_S
    while len(recs) < 2 and time.monotonic() < deadline:
        recs = audit_of(machine, "verb.run")
    got = {(r["verb"], r["verdict"], r.get("rule")) for r in recs}
    assert ("Write", "allow") in {g[:2] for g in got}, recs
    assert ("Read", "deny", "protected-path") in got, recs


def test_su4_mi1_cron_fires_through_the_sched_unit(machine):
    """SU-4, MI-1 under systemd: cordon-sched, as its own user with no
    socket of its own, dials the spawner's socket, is told the cron
    missions and fires the test clock's slot once; the spawner runs it
    (mission.run, trigger cron) and sched's state dir holds the slot."""
    machine.wait_health_ok()
    recs = audit_of(machine, "mission.run")
    assert [(r["missionId"], r["trigger"]) for r in recs] == \
        [("tick", "cron")], (machine.log("sched"), machine.log("spawner"))
    assert recs[0]["status"] == "success", recs
    state = machine.path("sched", "missions.json")
    assert os.stat(state).st_uid == machine.uids["sched"]
    with open(state) as f:
        assert json.load(f) == {"tick": {"lastSlot": CLOCK_T0}}
    # The same slot again, later: never twice.
    time.sleep(1.0)
    assert len(audit_of(machine, "mission.run")) == 1


def test_su4_eg1_proxy_run_through_egressd_unit(machine):
    """SU-4, EG-1, EG-2, EG-4 under systemd: a `network: proxy` agent
    loads, its run's listener reaches egressd over egressd's own socket,
    a CONNECT to its one listed host streams 3 MiB back whole, an
    unlisted host gets the 403, and auditd (its own user) writes one
    egress.connect per connection."""
    machine.wait_health_ok()
    port = machine.up.server_address[1]
    for prompt, want in (
            (f"CONNECT up.test:{port} HTTP/1.1||GET /big HTTP/1.1|"
             "Host: up.test||", "HTTP/1.1 200 Connection established"),
            ("CONNECT evil.example:443 HTTP/1.1||", "HTTP/1.1 403 Forbidden")):
        st, _, body = machine.request(
            "POST", "/api/agents/netbot/run", {"prompt": prompt})
        assert st == 200, body
        text = "".join(json.loads(x).get("text", "")
                       for x in body.decode().splitlines() if x)
        assert text.startswith(want), text
        if "200" in want:
            assert text.split()[-1] == str(BIG), text
    recs = audit_of(machine, "egress.connect")
    deadline = time.monotonic() + HTTP_S
    while len(recs) < 2 and time.monotonic() < deadline:
        recs = audit_of(machine, "egress.connect")
    assert [r["decision"] for r in recs[-2:]] == ["allow", "deny"], recs
    ok = recs[-2]
    assert ok["agent"] == "netbot" and ok["host"] == "up.test"
    assert ok["bytesDown"] > BIG, ok
    assert recs[-1]["reason"] == "host-not-allowed"
    h = machine.health()
    eg = [d for d in h["daemons"] if d["name"] == "egressd"][0]
    assert eg["up"] and eg["status"]["egress"]["testEgress"] is True


def test_su4_eg3_routed_request_through_egressd_unit(machine):
    """SU-4, EG-3 under systemd: a credential route's request from a
    `network: proxy` agent reaches a TLS mock (a test CA egressd reads
    through --test-ca) with the real key, which the spawner, its own user,
    hands egressd over their socket; the agent's env held the placeholder
    and no value that is the key; one egress.request record, no key in
    the audit."""
    machine.wait_health_ok()
    n = len(machine.tls.seen)
    st, _, body = machine.request(
        "POST", "/api/agents/routebot/run",
        {"prompt": f"SHA = {hashlib.sha256(REAL.encode()).hexdigest()!r}\n"
                   + ROUTE})
    assert st == 200, (body, machine.log("spawner"))
    text = "".join(json.loads(x).get("text", "")
                   for x in body.decode().splitlines() if x)
    line = [ln for ln in text.splitlines() if ln.startswith("{")]
    assert line, (text, machine.log("egressd"), machine.log("spawner"))
    got = json.loads(line[0])
    assert got == {"ph": True, "real": False, "status": 200,
                   "stream": True}, got
    seen = machine.tls.seen[n:]
    assert len(seen) == 1 and seen[0]["x-api-key"] == [REAL], seen
    recs = audit_of(machine, "egress.request")
    assert recs and recs[-1]["decision"] == "allow", recs
    assert recs[-1]["route"] == "anthropic" and recs[-1]["status"] == 200
    for f in os.listdir(machine.path("audit")):
        with open(machine.path("audit", f), "rb") as fh:
            assert REAL.encode() not in fh.read()
    for name in DAEMONS:
        assert REAL not in machine.log(name)


def test_su4_agents_cannot_pose_as_the_spawner(machine):
    """SU-4, SBX-1, SBX-4: an agent finds cordon's socket dir covered
    (nothing to dial), whatever isolation its manifest writes: landlock
    weakens nothing now.  With network: none no agent can dial at all."""
    machine.wait_health_ok()
    for agent, sock in (("dialns", "auditd"), ("dialns", "vaultd"),
                        ("dialll", "auditd"), ("dialll", "vaultd")):
        st, _, body = machine.request(
            "POST", f"/api/agents/{agent}/run", {"prompt": machine.sock(sock)})
        assert st == 200, body
        text = "".join(json.loads(x).get("text", "")
                       for x in body.decode().splitlines() if x)
        assert "unreachable 2" in text, text  # ENOENT: an empty dir
    # SBX-3: with network: none (the default) no agent can even dial.
    st, _, body = machine.request(
        "POST", "/api/agents/dialnone/run", {"prompt": machine.sock("auditd")})
    assert st == 200, body
    text = "".join(json.loads(x).get("text", "")
                   for x in body.decode().splitlines() if x)
    assert "unreachable 13" in text, text  # EACCES: the seccomp layer
    assert machine.health()["status"] == "ok"


@pytest.mark.parametrize("token", [
    "", "\n", "a" * 63, "a" * 63 + "\n", "A" * 64, "a" * 65, "a" * 64 + "x",
    "a" * 64 + "\n\n", "a" * 64 + " ", "g" * 64, "a" * 32 + "\0" + "a" * 31,
])
def test_su4_broker_refuses_a_bad_token_credential(tmp_path, token):
    """SU-4, fail closed: the broker starts only with a 64-hex token
    credential (an optional newline), and never echoes what it read."""
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "token").write_text(token)
    log = str(tmp_path / "broker.log")
    p, port = activate_tcp(
        lambda port: [
            "systemd-socket-activate", "-l", f"127.0.0.1:{port}",
            "--fdname=http", "-E", f"CREDENTIALS_DIRECTORY={creds}",
            *[x for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS")
              if child_env().get(k) for x in ("-E", f"{k}={child_env()[k]}")],
            os.path.join(BUILD, "cordon-broker"), "--systemd"],
        log, {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    try:
        # the broker starts on the first connection, and refuses to run
        socket.create_connection(("127.0.0.1", port), 5).close()
        p.wait(timeout=READY_S)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    with open(log, errors="replace") as f:
        err = f.read()
    assert p.returncode != 0
    assert "token credential" in err, err
    if token.strip():
        assert token.strip()[:20] not in err


def test_su4_broker_takes_a_good_token_credential(tmp_path):
    """The same start with a good token serves, with it, over the socket."""
    creds = tmp_path / "creds"
    creds.mkdir()
    tok = "0123456789abcdef" * 4
    (creds / "token").write_text(tok + "\n")
    p, port = activate_tcp(
        lambda port: [
            "systemd-socket-activate", "-l", f"127.0.0.1:{port}",
            "--fdname=http", "-E", f"CREDENTIALS_DIRECTORY={creds}",
            *[x for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS")
              if child_env().get(k) for x in ("-E", f"{k}={child_env()[k]}")],
            os.path.join(BUILD, "cordon-broker"), "--systemd",
            "--socket-dir", str(tmp_path)],
        str(tmp_path / "broker.log"), {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    try:
        deadline = time.monotonic() + READY_S
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                c.request("GET", "/api/health", headers={
                    "Host": f"127.0.0.1:{port}",
                    "Authorization": f"Bearer {tok}"})
                r = c.getresponse()
                body = json.loads(r.read())
                c.close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        # No peers to ask: the broker alone is up, and says so.
        assert r.status == 200 and body["supervisor"] == "systemd"
        assert body["status"] == "degraded"
        assert [d["up"] for d in body["daemons"]] == [False] * 5 + [True]
    finally:
        p.kill()
        p.wait()


def test_au6_second_auditd_on_the_audit_dir_refuses(machine):
    """AU-6, AU-7 under systemd, where auditd is a unit of its own and no
    cordond is there: a second auditd activated on the same audit dir
    refuses, naming the pid of the one writing it; the chain holds."""
    machine.wait_health_ok()
    first = machine.procs["auditd"].pid
    sock = os.path.join(machine.rundir, "auditd-second.sock")
    log = machine.path("auditd-second.log")
    env = ["-E", "LANG=C", "-E", "TZ=UTC"]
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        if child_env().get(k) is not None:
            env += ["-E", f"{k}={child_env()[k]}"]
    with open(log, "wb") as f:
        p = subprocess.Popen(
            ["systemd-socket-activate", "-l", sock, "--fdname=ipc", *env,
             *as_daemon("auditd"), *machine.argv("auditd")],
            stdin=subprocess.DEVNULL, stdout=f, stderr=f,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    try:
        deadline = time.monotonic() + READY_S
        while not os.path.exists(sock):
            assert time.monotonic() < deadline, "never listened"
            time.sleep(0.02)
        s = socket.socket(socket.AF_UNIX)  # activates it, as systemd would
        s.connect(sock)
        rc = p.wait(READY_S + 10)  # it waits 5 s for the lock first
        s.close()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    with open(log, errors="replace") as f:
        text = f.read()
    assert rc != 0, text
    assert f"in use by another auditd (pid {first}); not starting" in text
    assert machine.procs["auditd"].poll() is None
    assert machine.wait_health_ok()["status"] == "ok"
    check_chain(machine.path("audit"))
