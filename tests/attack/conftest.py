# Shared harness of the attack corpus: one real `cordon run --home` per
# module (fake agents, a hostile one, the sandbox escape agent, gatebot),
# and the invariants checked after every case by the `c` fixture:
#   - no file outside the allowed roots changed (a fake operator HOME with
#     ~/.ssh and ~/.bashrc, the cordon home but for audit/ run/ and the
#     chat inbox, the vault outside the inbox, a folder beside the write
#     root);
#   - no secret in any response, audit file, note or cordon's stderr; no
#     case nonce in any audit file or error response;
#   - every daemon healthy with the same pid and no restart;
#   - no agent process left behind.
# The integration harness (tests/integration) is reused, not copied: its
# conftest is loaded under another name and re-exported here, because its
# helper modules import it as `conftest`.
import hashlib
import importlib.util
import os
import pathlib
import shutil
import stat
import sys
import tempfile
import time
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
INTEG = os.path.join(os.path.dirname(HERE), "integration")
sys.path.insert(0, INTEG)

_spec = importlib.util.spec_from_file_location(
    "integration_conftest", os.path.join(INTEG, "conftest.py"))
_integ = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_integ)
globals().update({k: v for k, v in vars(_integ).items()
                  if not k.startswith("__") and k not in
                  ("cordon", "cordon_factory")})

from agents_util import (DECOYS, FAKE_DIR, FILE_SECRET,  # noqa: E402
                         GRACE, make_agents_home, procs_with_arg,
                         server_env)
from audit_util import check_chain  # noqa: E402

Cordon = _integ.Cordon
finish = _integ.finish
proc_children = _integ.proc_children
BUILD = _integ.BUILD
ESCAPE = os.path.join(BUILD, "tests", "escape-agent")
HOSTILE = os.path.join(FAKE_DIR, "hostile")
SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nattack-decoy-key\n"
# Values that must never leave the spawner (SEC-3, SP-11).
SECRETS = [FILE_SECRET, FILE_SECRET[:16]] + list(DECOYS.values())


def hostile_manifest(name, ws, extra="", env=None, iso="landlock"):
    envs = "".join(f"    {k}: {v}\n" for k, v in (env or {}).items())
    return (f"name: {name}\ntransport: subprocess\ntransportConfig:\n"
            f"  bin: {HOSTILE}\n  args: [\"-z\", \"{{prompt}}\"]\n"
            f"  cwd: {ws}\n  timeoutMs: 8000\n"
            + (f"  env:\n{envs}" if envs else "") +
            "secrets:\n  HOSTILE_KEY: fake.apiKey\n"
            f"sandbox:\n  isolation: {iso}\n  network: none\n"
            f"  writeRoots: [\"{ws}\"]\n" + extra)


def tree_digest(root, skip=()):
    """rel path -> (kind, mode, mtime_ns, sha256) for everything beneath
    root, symlinks not followed; paths under a skipped prefix are left
    out (the roots cordon may write)."""
    out = {}
    root = str(root)
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root)
            if any(rel == s or rel.startswith(s + "/") for s in skip):
                continue
            st = os.lstat(p)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir", st.st_mode)
            elif not stat.S_ISREG(st.st_mode):  # a FIFO: never opened
                out[rel] = ("special", st.st_mode, st.st_mtime_ns)
            else:
                with open(p, "rb") as f:
                    h = hashlib.sha256(f.read()).hexdigest()
                out[rel] = ("file", st.st_mode, st.st_mtime_ns, h)
    return out


class World:
    """The module's cordon and everything the invariants look at."""

    def __init__(self, base, monkeypatch, extra=None, config=None,
                 env=None):
        self.base = base
        self.op = base / "operator"  # the operator's HOME
        (self.op / ".ssh").mkdir(parents=True)
        (self.op / ".ssh" / "id_rsa").write_text(SSH_KEY)
        (self.op / ".bashrc").write_text("# operator's own\n")
        self.ws = base / "ws"  # the hostile agents' write root
        self.ws.mkdir()
        # A symlink in the write root to the operator's keys (SBX-2).
        os.symlink(self.op / ".ssh", self.ws / "sshlink")
        self.outside = base / "outside"  # beside it: must stay as it is
        self.outside.mkdir()
        (self.outside / "keep.txt").write_text("untouched\n")
        ws = str(self.ws)
        manifests = {
            "hostile": hostile_manifest("hostile", ws),
            "hostilens": hostile_manifest("hostilens", ws, iso="namespace"),
            "nproc": hostile_manifest("nproc", ws, "limits:\n  nproc: 20\n"),
            "fsize": hostile_manifest("fsize", ws,
                                      "limits:\n  fileBytes: 1048576\n"),
            "fused": ("name: fused\ntransport: subprocess\n"
                      "transportConfig:\n  bin: hermes\n"
                      "  args: [\"--prompt={prompt}\"]\n"),
            "dashdash": ("name: dashdash\ntransport: subprocess\n"
                         "transportConfig:\n  bin: hermes\n"
                         "  args: [\"-z\", \"--\", \"{prompt}\"]\n"),
        }
        for n, t in (extra or {}).items():
            manifests[n] = t.replace("{home}", str(base / "home")).replace(
                "{ws}", ws).replace("{op}", str(self.op))
        self.home = make_agents_home(base, extra=manifests)
        if config:
            (self.home / "cordon.yaml").write_text(config)
        server_env(monkeypatch, dict(env or {}, HOME=str(self.op)))
        self.c = Cordon(self.home, ["--allow-root"]).start()
        self.vault = os.path.join(self.home, "vault")
        self.nonces = set()
        self.baseline = self.pids()

    def nonce(self):
        n = "nx" + uuid.uuid4().hex[:20]
        self.nonces.add(n)
        return n

    def pids(self):
        h = self.c.health()
        return {d["name"]: d["pid"] for d in h["daemons"]}

    def protected(self):
        return (tree_digest(self.op), tree_digest(self.outside),
                # state/homes: each agent's own home, a write root (SBX-9)
                tree_digest(self.home, skip=("audit", "run", "vault",
                                             "state/homes")),
                tree_digest(self.vault, skip=("00_Inbox/cordon",)))

    def audit_blob(self):
        d = os.path.join(self.home, "audit")
        blob = b""
        for n in sorted(os.listdir(d)):
            with open(os.path.join(d, n), "rb") as f:
                blob += f.read()
        return blob

    def notes_blob(self):
        blob = b""
        inbox = os.path.join(self.vault, "00_Inbox", "cordon")
        for dirpath, _, names in os.walk(inbox):
            for n in names:
                with open(os.path.join(dirpath, n), "rb") as f:
                    blob += f.read()
        return blob

    def agent_procs(self):
        """Live processes of our fake agents or the escape agent started
        by this world's cordon (their HOME is this world's operator HOME;
        other suites on the host run the same fakes)."""
        home = b"HOME=" + str(self.op).encode()
        found = set()
        for mark in (HOSTILE, ESCAPE, os.path.join(FAKE_DIR, "hermes"),
                     os.path.join(FAKE_DIR, "gatebot")):
            for pid in procs_with_arg(mark):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        args = f.read().split(b"\0")
                    with open(f"/proc/{pid}/environ", "rb") as f:
                        env = f.read().split(b"\0")
                except OSError:
                    continue
                # Health probes (`BIN --version`, SP-18) come and go on
                # their own schedule, bounded by their own timeout.
                if home in env and b"--version" not in args:
                    found.add(pid)
        return sorted(found)

    def stop(self):
        try:
            check_chain(os.path.join(self.home, "audit"))
        finally:
            finish(self.c)


def start_world(tmp_path_factory, extra=None, config=None, env=None,
                outside_tmp=False):
    """outside_tmp: under /var/tmp, so namespace mode's private /tmp
    hides none of it (what stops an attempt is then the sandbox)."""
    mp = pytest.MonkeyPatch()
    if outside_tmp:
        base = pathlib.Path(tempfile.mkdtemp(prefix="cordon-attack-",
                                             dir="/var/tmp"))
    else:
        base = tmp_path_factory.mktemp("attack")
    try:
        return World(base, mp, extra, config, env), mp
    except BaseException:
        mp.undo()
        raise


def run_world(tmp_path_factory, **kw):
    """Body of a module's `world` fixture: `yield from run_world(...)`
    with start_world's keywords; stops and removes it afterwards."""
    w, mp = start_world(tmp_path_factory, **kw)
    yield w
    try:
        w.stop()
    finally:
        mp.undo()
        shutil.rmtree(w.base, ignore_errors=True)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Override in a module for other manifests or config."""
    yield from run_world(tmp_path_factory)


def bug(why):
    """A case that finds a real bug in cordon: strict, so the fix turns
    it red until the mark goes."""
    return pytest.mark.xfail(strict=True, reason="BUG: " + why)


def describe(pids):
    out = []
    for p in pids:
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ")[:120]
            ppid = _integ.proc_status(p).get("PPid")
        except OSError:
            continue
        out.append((p, ppid, cmd))
    return out


def check_invariants(w, before, nresp):
    c = w.c
    # No agent process outlives its case (SP-17): bounded by the kill
    # grace, most cases are already clean.
    deadline = time.monotonic() + 2.0 + GRACE
    while w.agent_procs() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = w.agent_procs()
    assert left == [], f"agent processes left behind: {describe(left)}"
    # Every daemon up, same pids, no restart.
    h = c.health()
    assert h["status"] == "ok", h
    assert {d["name"]: d["pid"] for d in h["daemons"]} == w.baseline, h
    assert all(d["restarts"] == 0 for d in h["daemons"]), h
    # Nothing outside the allowed roots changed.
    assert w.protected() == before, "a file outside the allowed roots " \
        "changed"
    # No secret anywhere it could leave; no nonce in audit or errors.
    audit = w.audit_blob()
    notes = w.notes_blob()
    err = c.stderr().encode()
    for s in SECRETS + [c.token]:
        b = s.encode()
        assert b not in audit, "secret in the audit files"
        assert b not in notes, "secret in a vault note"
        assert b not in err, "secret in cordon's log"
    for r in c.responses[nresp:]:
        blob = repr(r.headers).encode() + r.body
        for s in SECRETS + [c.token]:
            assert s.encode() not in blob, f"secret in a response: {r}"
        if r.status >= 400:
            for n in w.nonces:
                assert n.encode() not in blob, f"nonce echoed: {r}"
    for n in w.nonces:
        assert n.encode() not in audit, "nonce in the audit files"


@pytest.fixture
def c(world):
    """The module's cordon for one case; the invariants after it."""
    before = world.protected()
    nresp = len(world.c.responses)
    yield world.c
    check_invariants(world, before, nresp)
