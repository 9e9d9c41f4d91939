# Helpers for the agent scenarios (test_agents.py): a home with the
# built-in manifests and test manifests pointed at our fake `claude` and
# `hermes` (tests/fake-agents/), a server environment holding decoy
# secrets, NDJSON run streams over raw sockets, and audit-file readers.
# Touches only the temp dirs it creates and sockets to 127.0.0.1.
import glob
import json
import os
import shutil
import socket
import time

from audit_util import walk_values  # noqa: F401 (re-exported)
from conftest import HTTP_S, SLOW, _dechunk

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FAKE_DIR = os.path.join(ROOT, "tests", "fake-agents")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "agents")

# Decoys in cordond's environment that no child may see (SP-4, SP-5).
DECOYS = {
    "OPENAI_API_KEY": "sk-decoy-openai-0123456789",
    "GITHUB_TOKEN": "ghp_decoyGithubToken0123456789",
    "AWS_SECRET_ACCESS_KEY": "decoy/aws/secret/access/key/0123",
}
FILE_SECRET = "file-secret-value-9f8e7d"
ENV_SECRET = "env-secret-value-longer-1a2b3c4d"
GRACE = 4.0 if SLOW else 2.0  # slack on top of the kill grace

# Test manifests beside the two built-ins.  MARK_FILE lets a test prove a
# chat child never started (the fake writes it only for a chat run).
MANIFESTS = {
    "envdump": """
name: envdump
transport: subprocess
transportConfig:
  bin: hermes
  args: ["-z", "{prompt}"]
  env:
    MANIFEST_VAR: hello
secrets:
  FAKE_API_KEY: fake.apiKey
""",
    "needkey": """
name: needkey
transport: subprocess
transportConfig:
  bin: hermes
  args: ["-z", "{prompt}"]
  env:
    MARK_FILE: {mark}
secrets:
  NEVER_SET_KEY: nowhere.key
sandbox:
  writeRoots: ["{markdir}"]
""",
    "marked": """
name: marked
transport: subprocess
transportConfig:
  bin: hermes
  args: ["-z", "{prompt}"]
  env:
    MARK_FILE: {mark}
sandbox:
  writeRoots: ["{markdir}"]
""",
    "fdshow": """
name: fdshow
transport: subprocess
transportConfig:
  bin: hermes
  args: ["-z", "{prompt}"]
healthProbe:
  type: command
  command: ["hermes", "fds"]
actions:
  - id: fds
    label: Descriptors
    command: ["hermes", "fds"]
    hint: lists fds
""",
    "leakprobe": """
name: leakprobe
transport: subprocess
transportConfig:
  bin: hermes
  args: ["-z", "{prompt}"]
healthProbe:
  type: command
  command: ["hermes", "leakver"]
""",
    "nobin": """
name: nobin
transport: subprocess
transportConfig:
  bin: cordon-no-such-agent-binary
  args: ["{prompt}"]
""",
    "viastdin": """
name: viastdin
transport: subprocess
promptVia: stdin
transportConfig:
  bin: hermes
  args: ["-z"]
""",
    "quick": """
name: quick
transport: subprocess
transportConfig:
  bin: hermes
  args: ["-z", "{prompt}"]
  timeoutMs: 1000
actions:
  - id: slow
    label: Slow
    command: ["hermes", "slow"]
    timeoutMs: 1000
    hint: sleeps
  - id: big
    label: Big
    command: ["hermes", "bigout"]
    hint: floods
  - id: broken
    label: Broken
    command: ["hermes", "broken"]
    hint: fails
""",
}


def make_agents_home(tmp_path, name="home", secrets_mode=0o600,
                     secrets=True, extra=None):
    home = tmp_path / name
    (home / "agents").mkdir(parents=True)
    for f in ("claude-code.yaml", "hermes.yaml"):
        shutil.copy(os.path.join(FIXTURES, f), home / "agents" / f)
    # The marker lives in a dir of its own: the sandbox lets `marked`
    # write there and nowhere near the cordon home (SBX-1).
    markdir = tmp_path / f"{name}.marks"
    markdir.mkdir(exist_ok=True)
    mark = str(markdir / "marker")
    for n, text in dict(MANIFESTS, **(extra or {})).items():
        (home / "agents" / f"{n}.yaml").write_text(
            text.replace("{markdir}", str(markdir)).replace("{mark}", mark))
    if secrets:
        p = home / "secrets.yaml"
        p.write_text(f"fake:\n  apiKey: {FILE_SECRET}\n")
        os.chmod(p, secrets_mode)
    return home


def server_env(monkeypatch, extra=None):
    """cordond's own environment: fake agents first on PATH, decoys."""
    monkeypatch.setenv("PATH", FAKE_DIR + ":/usr/bin:/bin")
    for k, v in DECOYS.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("FAKE_API_KEY", raising=False)
    for k, v in (extra or {}).items():
        monkeypatch.setenv(k, v)


def marker(tmp_path, name="home"):
    return tmp_path / f"{name}.marks" / "marker"


# ---- HTTP ----

def post_json(c, target, obj=None, raw=None):
    body = raw if raw is not None else json.dumps(obj).encode()
    return c.request("POST", target,
                     headers=[("Content-Type", "application/json")],
                     body=body)


def run(c, agent, prompt, session=None):
    """A whole run: (Response, [events]).  Events only on 200."""
    obj = {"prompt": prompt}
    if session is not None:
        obj["session"] = session
    r = post_json(c, f"/api/agents/{agent}/run", obj)
    assert r is not None
    events = []
    if r.status == 200:
        assert r.header("Content-Type") == "application/x-ndjson", r
        for ln in r.body.split(b"\n"):
            if ln:
                events.append(json.loads(ln))
    return r, events


def text_of(events):
    return "".join(e["text"] for e in events if e["kind"] == "token")


def probed(c, name):
    """The agent's readiness once its first probe has answered (SP-18),
    or as it is when the bound passes."""
    deadline = time.monotonic() + (20 if SLOW else 8)
    while True:
        rd = c.request("GET", f"/api/agents/{name}").json()[
            "agent"]["readiness"]
        if rd["probed"] or time.monotonic() > deadline:
            return rd
        time.sleep(0.05)


class Stream:
    """A run read incrementally on its own socket (cancel, client gone)."""

    def __init__(self, c, agent, prompt):
        body = json.dumps({"prompt": prompt}).encode()
        head = (f"POST /api/agents/{agent}/run HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{c.port}\r\n"
                f"Authorization: Bearer {c.token}\r\n"
                "Content-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n").encode()
        self.sock = socket.create_connection(("127.0.0.1", c.port),
                                             timeout=HTTP_S)
        self.sock.sendall(head + body)
        self.buf = b""
        self.status = None

    def read_until(self, pred, bound=HTTP_S):
        deadline = time.monotonic() + bound
        while not pred(self.buf):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"stream stalled: {self.buf[-300:]!r}")
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.buf += chunk
        return self.buf

    def start(self):
        """Wait for the head and the start event; return the runId."""
        self.read_until(lambda b: b"\r\n\r\n" in b and
                        b'"kind":"start"' in b.split(b"\r\n\r\n", 1)[1])
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        self.status = int(head.split(b" ")[1])
        line = [ln for ln in _dechunk_partial(rest).split(b"\n") if ln][0]
        return json.loads(line)["runId"]

    def finish(self, bound=HTTP_S):
        """Read to the end; return the events."""
        self.read_until(lambda b: b.endswith(b"0\r\n\r\n"), bound)
        body = _dechunk(self.buf.partition(b"\r\n\r\n")[2])
        return [json.loads(ln) for ln in body.split(b"\n") if ln]

    def close(self):
        self.sock.close()


def _dechunk_partial(data):
    out = b""
    while data:
        size_line, sep, rest = data.partition(b"\r\n")
        if not sep:
            break
        n = int(size_line.split(b";")[0], 16)
        if n == 0 or len(rest) < n:
            out += rest[:n]
            break
        out += rest[:n]
        data = rest[n + 2:]
    return out


# ---- audit ----

def audit_lines(home):
    out = []
    for f in sorted(glob.glob(os.path.join(str(home), "audit", "*.jsonl"))):
        with open(f, "rb") as fh:
            out.extend(fh.read().splitlines())
    return out


def audit_records(home, kind=None):
    recs = [json.loads(ln) for ln in audit_lines(home) if ln.strip()]
    return [r for r in recs if kind is None or r["kind"] == kind]


def wait_audit(home, pred, bound=HTTP_S):
    deadline = time.monotonic() + bound
    while True:
        recs = [r for r in audit_records(home) if pred(r)]
        if recs:
            return recs
        if time.monotonic() > deadline:
            raise AssertionError("audit record not found")
        time.sleep(0.05)


def procs_with_arg(word):
    """pids whose command line has an element equal to word."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        if st[st.rindex(")") + 2] in "ZX":
            continue
        if word.encode() in args:
            found.append(int(d))
    return found
