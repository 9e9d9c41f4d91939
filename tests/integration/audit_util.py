# Helpers for the audit scenarios: read and check the audit dir
# the way an admin would, scan it for a nonce (AU-5), and drive a daemon
# (cordon-auditd, and others) directly as cordond does (fd 3 socketpair,
# the IPC frames of common/ipc.h).  Touches only the temp dirs and
# processes it creates.
import hashlib
import json
import os
import re
import socket
import struct
import subprocess
import threading
import time

from conftest import BUILD, child_env

GENESIS = "0" * 64
DAY_RE = re.compile(r"\d{4}-\d{2}-\d{2}\.jsonl")

# common/msg.h
MSG_ERROR = 1
MSG_STATUS, MSG_STATUS_OK, MSG_PEER_FD, MSG_SHUTDOWN = 10, 11, 12, 13
MSG_AUDIT_RECORD, MSG_AUDIT_RECORD_OK = 30, 31
MSG_AUDIT_TAIL, MSG_AUDIT_TAIL_OK = 32, 33
FLAG_FD, FLAG_REPLY = 1, 2
HDR = struct.Struct("=IIIHH")


def day_files(audit_dir):
    return sorted(p for p in os.listdir(audit_dir) if DAY_RE.fullmatch(p))


def read_lines(audit_dir):
    """Every line of every day file, as (file, raw bytes without \\n)."""
    out = []
    for name in day_files(audit_dir):
        with open(os.path.join(audit_dir, name), "rb") as f:
            data = f.read()
        assert data == b"" or data.endswith(b"\n"), f"{name}: torn tail"
        out += [(name, ln) for ln in data.split(b"\n")[:-1]]
    return out


def records(audit_dir):
    return [json.loads(ln) for _, ln in read_lines(audit_dir)]


def check_chain(audit_dir, genesis=True):
    """An independent check of AU-7: seq +1 and prev = SHA-256 of the
    previous line's bytes (without its newline), across day files."""
    prev, seq = None, None
    recs = []
    for name, ln in read_lines(audit_dir):
        r = json.loads(ln)
        assert list(r)[:5] == ["ts", "id", "seq", "prev", "kind"], r
        if prev is None:
            if genesis:
                assert r["prev"] == GENESIS and r["seq"] == 1, r
        else:
            assert r["seq"] == seq + 1, (name, r)
            assert r["prev"] == prev, (name, r)
        prev = hashlib.sha256(ln).hexdigest()
        seq = r["seq"]
        recs.append(r)
    return recs


def walk_values(v):
    """Every key and scalar of a parsed JSON value, recursively."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from walk_values(x)
    elif isinstance(v, list):
        for x in v:
            yield from walk_values(x)
    else:
        yield v


def assert_nonce_absent(audit_dir, nonce):
    """AU-5: the nonce is in no file of the audit dir, by a raw scan of
    every file (day files, torn tails, heads) and by a walk of every value
    of every parsed line.  Returns how many files and values were seen."""
    raw = nonce.encode()
    files = values = 0
    for root, _, names in os.walk(audit_dir):
        for n in names:
            with open(os.path.join(root, n), "rb") as f:
                data = f.read()
            files += 1
            assert raw not in data, f"nonce in {n}"
            assert raw.lower() not in data.lower(), f"nonce in {n}"
    for r in records(audit_dir):
        for v in walk_values(r):
            values += 1
            assert nonce not in str(v), r
    return files, values


def cordon_audit(*args):
    return subprocess.run([os.path.join(BUILD, "cordon"), "audit", *args],
                          capture_output=True, text=True, timeout=60,
                          env=child_env())


# ---- cordon-auditd driven directly, as cordond would ----

class Channel:
    """One framed IPC channel; a reader thread pairs replies with ids."""

    def __init__(self, sock):
        self.sock = sock
        self.lock = threading.Lock()
        self.next_id = 1
        self.waiting = {}  # id -> [event, reply]
        self.closed = False
        self.stray = []  # frames that answered nothing we asked
        self.t = threading.Thread(target=self._reader, daemon=True)
        self.t.start()

    def _reader(self):
        buf = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                buf += chunk
                while len(buf) >= HDR.size:
                    typ, mid, ln, flags, _ = HDR.unpack_from(buf)
                    if len(buf) < HDR.size + ln:
                        break
                    body = json.loads(buf[HDR.size:HDR.size + ln])
                    buf = buf[HDR.size + ln:]
                    with self.lock:
                        w = self.waiting.pop(mid, None)
                    if w is not None:
                        w[1] = (typ, body)
                        w[0].set()
                    else:
                        self.stray.append((typ, mid, body))
        except OSError:
            pass
        self.closed = True
        with self.lock:
            for w in self.waiting.values():
                w[0].set()
            self.waiting.clear()

    def send(self, typ, obj, want_reply=True, raw=None):
        body = raw if raw is not None else json.dumps(obj).encode()
        w = [threading.Event(), None]
        with self.lock:
            mid = self.next_id if want_reply else 0
            self.next_id += 1
            if self.closed:
                w[0].set()
                return w
            if want_reply:
                self.waiting[mid] = w
            try:
                self.sock.sendall(HDR.pack(typ, mid, len(body), 0, 0) + body)
            except (BrokenPipeError, ConnectionResetError):
                # The daemon is gone (e.g. it refused to start): no reply.
                self.waiting.pop(mid, None)
                w[0].set()
        return w

    def ask(self, typ, obj, timeout=10.0, raw=None):
        """(type, payload) of the reply, or None if the channel died."""
        w = self.send(typ, obj, raw=raw)
        assert w[0].wait(timeout), "no reply"
        return w[1]

    def record(self, rec, timeout=10.0):
        return self.ask(MSG_AUDIT_RECORD, rec, timeout)

    def send_fd(self, typ, obj, fd):
        body = json.dumps(obj).encode()
        frame = HDR.pack(typ, 0, len(body), FLAG_FD, 0) + body
        with self.lock:
            # The fd rides on the frame's first byte (common/ipc.c).
            socket.send_fds(self.sock, [frame[:1]], [fd])
            self.sock.sendall(frame[1:])


class Driven:
    """A cordon daemon with a socketpair on fd 3, as cordond starts it,
    and peer channels (names) handed over with MSG_PEER_FD."""

    def __init__(self, argv, env, stderr_path, peers):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.stderr_path = stderr_path
        self._err = open(self.stderr_path, "ab")
        fd3 = theirs.fileno()

        def to_fd3():
            os.dup2(fd3, 3)
            os.set_inheritable(3, True)

        self.proc = subprocess.Popen(argv, preexec_fn=to_fd3,
                                     stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=self._err, env=env,
                                     close_fds=False)
        theirs.close()
        self.parent = Channel(mine)
        rep = self.parent.ask(MSG_STATUS, {})
        if rep is None:
            self.proc.wait(10)
        assert rep is not None and rep[0] == MSG_STATUS_OK, \
            f"{argv[0]} did not start: {self.stderr()}"
        self.peers = {}
        for name in peers:
            a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            self.parent.send_fd(MSG_PEER_FD, {"peer": name}, b.fileno())
            b.close()
            self.peers[name] = Channel(a)
        # A round trip after the fds proves every channel is installed.
        assert self.parent.ask(MSG_STATUS, {})[0] == MSG_STATUS_OK

    def stderr(self):
        with open(self.stderr_path, "rb") as f:
            return f.read().decode("utf-8", "replace")


class Auditd(Driven):
    """cordon-auditd with a socketpair on fd 3 and optional peer channels
    (broker, spawner, vaultd) handed over with MSG_PEER_FD."""

    def __init__(self, audit_dir, retention=None, clock_offset=None,
                 peers=("broker", "spawner", "vaultd")):
        self.dir = str(audit_dir)
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        argv = [os.path.join(BUILD, "cordon-auditd"), "--audit-dir",
                self.dir]
        if retention is not None:
            argv += ["--retention-days", str(retention)]
        env = child_env()
        env.pop("CORDON_AUDIT_CLOCK_OFFSET_S", None)
        if clock_offset is not None:
            env["CORDON_AUDIT_CLOCK_OFFSET_S"] = str(int(clock_offset))
        super().__init__(argv, env, self.dir.rstrip("/") + ".auditd.stderr",
                         peers)

    def stop(self, timeout=10.0):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout)
        self._close()
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self._close()

    def _close(self):
        for ch in [self.parent, *self.peers.values()]:
            try:
                ch.sock.close()
            except OSError:
                pass
        self._err.close()


def http_rec(n=0, status=200):
    return {"kind": "http.request", "method": "GET", "route": "/api/health",
            "status": status, "durationMs": n, "bytesIn": 0,
            "bytesOut": 10}


def boot_rec():
    return {"kind": "system.boot", "version": "0.1.0"}


def wait_until(pred, bound=10.0):
    deadline = time.monotonic() + bound
    while not pred():
        assert time.monotonic() < deadline, "condition not met"
        time.sleep(0.02)
