# Shared harness for the integration scenarios: start the real `cordon run`
# with a fresh home, talk raw HTTP to its broker, and stop it cleanly.
# Touches only temp dirs it creates and processes it starts.
import atexit
import grp
import json
import os
import pwd
import re
import selectors
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

BUILD = os.environ.get("CORDON_BUILD", "/work/main/build")
SLOW = os.environ.get("CORDON_SLOW") == "1"
# Bounds on waits, never sleeps: the fast values are generous already.
READY_S = 30.0 if SLOW else 10.0
STOP_S = 30.0 if SLOW else 10.0
RESTART_S = 10.0 if SLOW else 3.0
BACK_S = 3.0 if SLOW else 1.0  # SU-1: a killed daemon is back within 1 s
HTTP_S = 30.0 if SLOW else 10.0
DAEMONS = ["auditd", "vaultd", "egressd", "gated", "spawner", "sched",
           "broker"]


def cordon_bin(bindir=None):
    """The cordon program of the build, or of bindir (user_bin())."""
    return os.path.join(bindir or BUILD, "cordon")


def help_commands(text):
    """The command names `cordon --help` lists under "commands:"."""
    names, inside = [], False
    for line in text.splitlines():
        if line == "commands:":
            inside = True
        elif inside and line.startswith("  ") and line.strip():
            names.append(line.split()[0])
        elif inside:
            break
    return names


def child_env():
    env = dict(os.environ)
    # Sanitizer builds: keep the caller's options, but LeakSanitizer cannot
    # work inside the seccomp'd daemons.
    if "ASAN_OPTIONS" in env and "detect_leaks" not in env["ASAN_OPTIONS"]:
        env["ASAN_OPTIONS"] = env["ASAN_OPTIONS"] + ":detect_leaks=0"
    return env


def proc_starttime(pid):
    """Field 22 of /proc/PID/stat, or None if there is no such live process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    rest = data[data.rindex(")") + 2:].split()
    if rest[0] in ("Z", "X"):  # dead, only waiting to be reaped
        return None
    return rest[19]


def proc_status(pid):
    """/proc/PID/status as a dict of field -> raw value string."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


def proc_children(ppid):
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                data = f.read()
        except OSError:
            continue
        rest = data[data.rindex(")") + 2:].split()
        if int(rest[1]) == ppid:
            kids.append(int(d))
    return kids


class Response:
    def __init__(self, status, reason, headers, body):
        self.status = status
        self.reason = reason
        self.headers = headers  # list of (name, value), order kept
        self.body = body

    def header(self, name):
        """The single value of a header; fails if repeated."""
        vals = self.header_all(name)
        assert len(vals) <= 1, f"{name} repeated: {vals}"
        return vals[0] if vals else None

    def header_all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self):
        return (f"<Response {self.status} {self.headers!r} "
                f"{self.body[:300]!r}>")


def _recv_response(sock, method, deadline):
    buf = b""
    while b"\r\n\r\n" not in buf:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            if not buf:
                return None  # closed without any answer
            raise AssertionError(f"truncated response head: {buf!r}")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    proto, status, *reason = lines[0].split(" ", 2)
    assert proto.startswith("HTTP/1."), lines[0]
    headers = []
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        headers.append((k.strip(), v.strip()))
    status = int(status)
    clen = [v for k, v in headers if k.lower() == "content-length"]
    chunked = any(k.lower() == "transfer-encoding" and "chunked" in v.lower()
                  for k, v in headers)
    body = rest
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        body = b""
    elif clen:
        n = int(clen[0])
        while len(body) < n:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        body = body[:n]
    else:
        while True:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        if chunked:
            body = _dechunk(body)
    return Response(status, reason[0] if reason else "", headers, body)


def _dechunk(data):
    out = b""
    while data:
        size_line, _, data = data.partition(b"\r\n")
        n = int(size_line.split(b";")[0], 16)
        if n == 0:
            break
        out += data[:n]
        data = data[n + 2:]
    return out


def read_all(s, timeout=10.0):
    """Everything a socket sends until it closes, resets or falls silent
    for timeout seconds."""
    s.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    return data


def raw_http(port, raw, method="GET", timeout=HTTP_S):
    """Send raw request bytes to 127.0.0.1:port; return a Response, or
    None when the server closed the connection without answering."""
    deadline = time.monotonic() + timeout
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            return _recv_response(s, method, deadline)
        except ConnectionResetError:
            return None


class Cordon:
    """One `cordon run` under test."""

    def __init__(self, home, extra_args=(), prefix=(), user_uid=None,
                 bindir=None):
        self.home = str(home)
        self.bindir = bindir  # None: the build's programs
        self.extra_args = list(extra_args)
        self.prefix = list(prefix)
        self.proc = None
        self.port = None
        self.token = None
        self.code = None
        self.stdout_line = None
        self.returncode = None
        self.seen = {}  # pid -> starttime of every cordon process observed
        self.responses = []  # every Response that request() returned
        self.stderr_path = os.path.join(self.home, "..",
                                        os.path.basename(self.home) +
                                        ".stderr")
        self.stderr_path = os.path.abspath(self.stderr_path)
        # cordond's TMPDIR, where the spawner keeps the runs' private tmps:
        # one per home, so teardown can prove nothing was left in it.
        self.tmpdir = os.path.abspath(self.home + ".tmp")

    @property
    def pid(self):
        return self.proc.pid

    # ---- life cycle ----

    def start(self):
        if not self.launch().ready_or_exit():
            pytest.fail(f"cordon exited {self.returncode} before the "
                        f"dashboard line\nstderr:\n{self.stderr()}")
        return self

    def ready_or_exit(self):
        """After launch(), for a start that may be refused: True once the
        dashboard line is out, False once cordon exited (returncode)."""
        line = self._read_line(READY_S)
        if line is None:  # stdout closed (exiting) or READY_S passed
            try:
                self.proc.wait(STOP_S)
            except subprocess.TimeoutExpired:
                self._kill()
                self.returncode = self.proc.returncode
                pytest.fail(f"no dashboard line within {READY_S}s\n"
                            f"stderr:\n{self.stderr()}")
            self.returncode = self.proc.returncode
            return False
        self._ready(line)
        return True

    def launch(self):
        """Start `cordon run` without waiting for it."""
        argv = self.prefix + [cordon_bin(self.bindir), "run", "--home",
                              self.home,
                              "--port", "0"] + self.extra_args
        self._stderr = open(self.stderr_path, "wb")
        if not os.path.lexists(self.tmpdir):  # a test may put one there
            os.makedirs(self.tmpdir, mode=0o700)
            # Owned like the home (--demo makes its home).
            st = os.stat(self.home if os.path.isdir(self.home)
                         else os.path.dirname(self.home))
            os.chown(self.tmpdir, st.st_uid, st.st_gid)
        env = child_env()
        env["TMPDIR"] = self.tmpdir
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE,
                                     stderr=self._stderr, env=env)
        return self

    def _ready(self, line):
        self.stdout_line = line
        prefix = "cordon: dashboard http://127.0.0.1:"
        assert line.startswith(prefix), line
        hostport, _, query = line[len("cordon: dashboard http://"):] \
            .partition("/ui/login?code=")
        self.port = int(hostport.split(":")[1])
        self.code = query
        assert len(self.code) == 32 and all(
            c in "0123456789abcdef" for c in self.code), line
        with open(os.path.join(self.home, "run", "token")) as f:
            self.token = f.read().strip()
        self.note_processes()
        return self

    def _read_line(self, timeout):
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        buf = b""
        try:
            while b"\n" not in buf:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    return None
                buf += chunk
        finally:
            sel.close()
        return buf.split(b"\n", 1)[0].decode()

    def note_processes(self):
        """Remember cordond's current children so teardown can prove they
        are gone."""
        if self.proc is None or self.proc.poll() is not None:
            return
        for pid in proc_children(self.proc.pid):
            st = proc_starttime(pid)
            if st is not None:
                self.seen[pid] = st

    def stop(self, sig=signal.SIGTERM):
        """Signal cordond and wait (bounded); returns its exit code."""
        if self.proc.poll() is None:
            self.note_processes()
            self.proc.send_signal(sig)
            try:
                self.proc.wait(STOP_S)
            except subprocess.TimeoutExpired:
                self._kill()
                pytest.fail(f"cordon did not stop within {STOP_S}s\n"
                            f"stderr:\n{self.stderr()}")
        self.returncode = self.proc.returncode
        return self.returncode

    def _kill(self):
        self.note_processes()
        self.proc.kill()
        self.proc.wait(STOP_S)
        for pid in self.seen:
            if proc_starttime(pid) == self.seen[pid]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def leftovers(self):
        """Processes this cordon started that still exist."""
        return sorted(pid for pid, st in self.seen.items()
                      if proc_starttime(pid) == st)

    def stderr(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def close(self):
        if self.proc is None:
            return
        if self.proc.stdout:
            self.proc.stdout.close()
        self._stderr.close()

    # ---- HTTP ----

    def request(self, method="GET", target="/api/health", headers=(),
                body=b"", host=True, auth=True):
        """One request on its own connection.  host=True sends the right
        Host, a string sends that, None sends none; auth adds the bearer
        token.  headers is a list of (name, value), repeats allowed."""
        lines = [f"{method} {target} HTTP/1.1"]
        if host is True:
            lines.append(f"Host: 127.0.0.1:{self.port}")
        elif host is not None:
            lines.append(f"Host: {host}")
        if auth:
            lines.append(f"Authorization: Bearer {self.token}")
        for k, v in headers:
            lines.append(f"{k}: {v}")
        if body or method == "POST":
            lines.append(f"Content-Length: {len(body)}")
        lines.append("Connection: close")
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        r = raw_http(self.port, raw, method)
        if r is not None:
            self.responses.append(r)
        self.note_processes()
        return r

    def health(self):
        r = self.request()
        assert r is not None and r.status == 200, (r, self.stderr())
        return r.json()

    def health_when(self, pred, bound=RESTART_S):
        """Poll health until pred(health) holds; the broker may be down
        meanwhile.  Returns the last health, or fails after bound."""
        deadline = time.monotonic() + bound
        last = None
        while True:
            try:
                r = self.request()
                if r is not None and r.status == 200:
                    last = r.json()
                    if pred(last):
                        return last
            except OSError:
                pass
            if time.monotonic() >= deadline:
                pytest.fail(f"condition not met within {bound}s; last "
                            f"health: {json.dumps(last)}\n"
                            f"stderr:\n{self.stderr()}")
            time.sleep(0.02)

    def daemon_pids(self):
        h = self.health()
        return {d["name"]: d.get("pid") for d in h["daemons"]}

    def login(self, code=None):
        code = self.code if code is None else code
        return self.request("GET", f"/ui/login?code={code}",
                            auth=False)

    def session(self, code=None):
        """PER-5: log in; the session cookie's id and the page key that
        the redirect's fragment carries to the dashboard."""
        r = self.login(code)
        assert r is not None and r.status == 303, r
        return session_of(r)


def session_of(r):
    """The (session id, page key) of a login's 303 answer."""
    sid = re.match(r"cordon_session=([0-9a-f]{64});",
                   r.header("Set-Cookie") or "")
    key = re.fullmatch(r"/ui/#page=([0-9a-f]{64})", r.header("Location")
                       or "")
    assert sid and key, r
    return sid.group(1), key.group(1)


def session_headers(sid, key):
    """What the dashboard sends with a cookie-authenticated request."""
    return [("Cookie", f"cordon_session={sid}"), ("X-Cordon-Page", key)]


def finish(c):
    """Teardown: SIGTERM, bounded wait, exit 0, nothing left behind."""
    try:
        if c.proc is None:
            return
        stopped_here = c.returncode is None
        rc = c.stop()
        left = c.leftovers()
        print(f"cordon stderr:\n{c.stderr()}")
        if stopped_here:
            assert rc == 0, f"cordon exit {rc} on SIGTERM, want 0"
        assert not left, f"processes left after cordon stopped: {left}"
        # Stopped here: a cordon stopped earlier may share its home (and
        # so its tmpdir) with one that is still running.
        if stopped_here and rc == 0 and os.path.isdir(c.tmpdir):
            tmps = os.listdir(c.tmpdir)
            assert not tmps, f"runs' tmps left after cordon stopped: {tmps}"
    finally:
        c.close()


def make_home(tmp_path, name="home"):
    home = tmp_path / name
    home.mkdir()
    return home


@pytest.fixture
def cordon_factory(tmp_path):
    """Start cordons with custom options; all are stopped at teardown."""
    started = []

    def start(extra_args=("--allow-root",), home=None, prefix=()):
        c = Cordon(home or make_home(tmp_path, f"home{len(started)}"),
                   extra_args, prefix)
        started.append(c)
        return c.start()

    yield start
    errors = []
    for c in started:
        try:
            finish(c)
        except BaseException as e:  # stop every cordon, then report
            errors.append(e)
    if errors:
        raise errors[0]


@pytest.fixture
def cordon(cordon_factory):
    """A running cordon as root with --allow-root and a fresh home."""
    return cordon_factory()


def run_once(args, timeout=READY_S, prefix=(), bindir=None):
    """Run `cordon ARGS` expecting it to exit by itself (usage errors).
    If it starts serving instead, it is stopped at once and the result
    has .started = True."""
    argv = list(prefix) + [cordon_bin(bindir)] + list(args)
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=child_env())
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    out, started = b"", False
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not sel.select(left):
            break
        chunk = os.read(p.stdout.fileno(), 4096)
        if not chunk:
            break
        out += chunk
        if b"dashboard" in out:
            started = True
            break
    sel.close()
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    try:
        rest, err = p.communicate(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        p.kill()
        rest, err = p.communicate()
        pytest.fail(f"{argv} hung (stderr: {err!r})")
    res = subprocess.CompletedProcess(argv, p.returncode, out + rest, err)
    res.started = started
    return res


def uid_of(name):
    return pwd.getpwnam(name).pw_uid


# By absolute path: a test may have narrowed PATH to /usr/bin:/bin, and
# useradd lives in /usr/sbin.
USERADD = "/usr/sbin/useradd"
GROUPADD = "/usr/sbin/groupadd"


def _system_entry(name, lookup, argv):
    """lookup(name), after running argv if it is missing: a fresh machine
    has none, and no test may rely on a previous run.  Safe when another
    test process makes the same entry at the same time (an "already
    exists" answer, or /etc/passwd locked: a bounded retry)."""
    if os.geteuid() != 0:
        pytest.skip(f"needs root to create {name}")
    err = b""
    for _ in range(10):
        try:
            return lookup(name)
        except KeyError:
            pass
        p = subprocess.run(argv, capture_output=True, timeout=30)
        err = p.stderr
        if p.returncode == 0 or b"already exists" in err:
            return lookup(name)
        time.sleep(0.2)  # /etc/passwd or /etc/group locked by another
    pytest.fail(f"{argv[0]} {name}: {err!r}")


def system_user(name, home=False):
    """The system user NAME (a pwd entry), made here if it is missing."""
    opts = (["--create-home"] if home else
            ["--no-create-home", "--home-dir", "/nonexistent"])
    return _system_entry(name, pwd.getpwnam,
                         [USERADD, "--system", *opts, "--shell",
                          "/usr/sbin/nologin", name])


def system_group(name):
    """The system group NAME (a grp entry), made here if it is missing."""
    return _system_entry(name, grp.getgrnam,
                         [GROUPADD, "--system", name])


_USER_BIN = []  # the directory user_bin() made, once per process


def user_bin():
    """A directory every local user may enter, holding a copy of what a
    test runs as another user (SU-1, SU-4, SBX-1): the build's programs
    (cordon, its daemons, cordon-init: each finds the others beside
    itself), tests/escape-agent and the fake agents, flat.  The build and
    the checkout may lie under a home only its owner enters (root's /root
    is 0700 on Debian), as an installed cordon never does.  Under /var/tmp
    (a namespace run's /tmp is private); made once per process and removed
    when it exits."""
    if _USER_BIN:
        return _USER_BIN[0]
    d = tempfile.mkdtemp(prefix="cordon-userbin-", dir="/var/tmp")
    atexit.register(shutil.rmtree, d, True)
    os.chmod(d, 0o755)
    fake = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "fake-agents")
    srcs = [os.path.join(BUILD, n) for n in sorted(os.listdir(BUILD))
            if n == "cordon" or n.startswith("cordon-")]
    srcs.append(os.path.join(BUILD, "tests", "escape-agent"))
    srcs += [os.path.join(fake, n) for n in sorted(os.listdir(fake))]
    for src in srcs:
        if os.path.isfile(src) and os.access(src, os.X_OK):
            dst = os.path.join(d, os.path.basename(src))
            shutil.copy2(src, dst)
            os.chmod(dst, 0o755)
    _USER_BIN.append(d)
    return d
