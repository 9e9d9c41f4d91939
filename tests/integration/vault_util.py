# Helpers for the vault scenarios: run cordon-vaultd alone with python in
# cordond's place (control channel on fd 3, peer channels by MSG_PEER_FD),
# playing auditd, the spawner and the broker over real socketpairs.
# Touches only the temp dirs and the processes it starts.
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import threading
import time

from conftest import BUILD, READY_S, STOP_S, child_env

HDR = struct.Struct("=IIIHH")  # type, id, len, flags, zero (host order)
FLAG_FD = 1
FLAG_REPLY = 2

ERROR = 1
STATUS, STATUS_OK, PEER_FD = 10, 11, 12
AUDIT_RECORD, AUDIT_RECORD_OK = 30, 31
CHAT, CHAT_OK, MISSION, MISSION_OK = 40, 41, 42, 43
READ, READ_OK, LIST, LIST_OK = 44, 45, 46, 47

WAIT_S = 10.0


class Chan:
    """One framed channel end (common/ipc.h) held by python."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.next_id = 1
        self.lock = threading.Lock()

    def send(self, mtype, obj, mid=0, flags=0, fd=None):
        body = json.dumps(obj, separators=(",", ":")).encode()
        if fd is not None:
            flags |= FLAG_FD
        frame = HDR.pack(mtype, mid, len(body), flags, 0) + body
        with self.lock:
            if fd is not None:
                # The descriptor travels with the frame's first byte alone.
                n = socket.send_fds(self.sock, [frame[:1]], [fd])
                frame = frame[n:]
            self.sock.sendall(frame)

    def request(self, mtype, obj):
        with self.lock:
            mid = self.next_id
            self.next_id += 1
        self.send(mtype, obj, mid)
        return mid

    def recv(self, timeout=WAIT_S):
        """(type, id, flags, obj), or None on EOF or timeout."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buf) >= HDR.size:
                t, i, n, f, _ = HDR.unpack_from(self.buf)
                if len(self.buf) >= HDR.size + n:
                    body = self.buf[HDR.size:HDR.size + n]
                    self.buf = self.buf[HDR.size + n:]
                    return t, i, f, json.loads(body)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                self.sock.settimeout(left)
                chunk = self.sock.recv(1 << 20)
            except (socket.timeout, OSError):
                return None
            if not chunk:
                return None
            self.buf += chunk

    def call(self, mtype, obj, timeout=WAIT_S):
        mid = self.request(mtype, obj)
        while True:
            r = self.recv(timeout)
            assert r is not None, "vaultd did not answer"
            if r[1] == mid and r[2] & FLAG_REPLY:
                return r[0], r[3]


class FakeAuditd(threading.Thread):
    """auditd's end: acknowledges ("ack") or refuses ("refuse") every
    record, keeping what it saw; "hold" acknowledges each only once
    .release is set."""

    def __init__(self, chan, mode="ack"):
        super().__init__(daemon=True)
        self.chan = chan
        self.mode = mode
        self.records = []
        self.release = threading.Event()
        self.stop = False

    def run(self):
        while not self.stop:
            r = self.chan.recv(0.2)
            if r is None:
                continue
            t, mid, _, obj = r
            if t != AUDIT_RECORD:
                continue
            self.records.append(obj)
            while self.mode == "hold" and not self.stop and \
                    not self.release.wait(0.2):
                pass
            try:
                if self.mode in ("ack", "hold"):
                    self.chan.send(AUDIT_RECORD_OK,
                                   {"seq": len(self.records)}, mid,
                                   FLAG_REPLY)
                else:
                    self.chan.send(ERROR, {"error": "bad-record"}, mid,
                                   FLAG_REPLY)
            except OSError:
                return


class Vaultd:
    """cordon-vaultd --vault DIR with python as cordond and its peers."""

    def __init__(self, vault, audit="ack", stderr_path=None):
        self.vault = str(vault)
        self.audit_mode = audit
        self.stderr_path = stderr_path or (self.vault + ".vaultd.stderr")
        self.proc = None

    def start(self):
        parent, child = socket.socketpair()
        self._stderr = open(self.stderr_path, "ab")
        cfd = child.fileno()

        def to_fd3():
            os.dup2(cfd, 3)

        self.proc = subprocess.Popen(
            [os.path.join(BUILD, "cordon-vaultd"), "--vault", self.vault],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            # Python's own fds are close-on-exec; fd 3 is made here.
            stderr=self._stderr, close_fds=False, preexec_fn=to_fd3,
            env=child_env(), cwd="/")
        child.close()
        self.ctl = Chan(parent)
        t, obj = self.ctl.call(STATUS, {}, READY_S)
        assert t == STATUS_OK, (t, obj, self.stderr())
        self.status = obj
        self.peers = {}
        names = ["spawner", "broker"]
        if self.audit_mode != "none":
            names.insert(0, "auditd")
        for name in names:
            ours, theirs = socket.socketpair()
            self.ctl.send(PEER_FD, {"peer": name}, fd=theirs.fileno())
            theirs.close()
            self.peers[name] = Chan(ours)
        self.auditd = None
        if "auditd" in self.peers:
            self.auditd = FakeAuditd(self.peers["auditd"], self.audit_mode)
            self.auditd.start()
        # Round trip on the control channel: every PEER_FD was handled.
        t, _ = self.ctl.call(STATUS, {}, READY_S)
        assert t == STATUS_OK
        return self

    @property
    def records(self):
        return self.auditd.records if self.auditd else []

    def chat(self, agent="demo", prompt="hello", response="world",
             time_ms=1778926333456, **extra):
        obj = {"agent": agent, "prompt": prompt, "promptSha8": sha8(prompt),
               "response": response, "time": time_ms}
        obj.update(extra)
        return self.peers["spawner"].call(CHAT, obj)

    def mission(self, mission_id, folder, hint, content="result\n"):
        return self.peers["spawner"].call(
            MISSION, {"missionId": mission_id, "folder": folder,
                      "hint": hint, "content": content})

    def read(self, path):
        return self.peers["broker"].call(READ, {"path": path})

    def list(self, d=""):
        return self.peers["broker"].call(LIST, {"dir": d})

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(STOP_S)

    def stop(self):
        if self.auditd:
            self.auditd.stop = True
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STOP_S)
                raise AssertionError("vaultd did not stop on SIGTERM")
        if self.auditd:
            self.auditd.join(STOP_S)
        for ch in list(getattr(self, "peers", {}).values()) + \
                [getattr(self, "ctl", None)]:
            if ch is not None:
                ch.sock.close()
        self._stderr.close()
        return self.proc.returncode

    def stderr(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""


def sha8(prompt):
    return hashlib.sha256(prompt.encode()).hexdigest()[:8]


def tree(root):
    """Every path beneath root (relative), symlinks not followed, with
    file contents, to compare before and after."""
    out = {}
    root = str(root)
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir",)
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", f.read())
    return out


def temps(root):
    """Leftover temp files anywhere beneath root."""
    return [os.path.join(d, n) for d, _, files in os.walk(str(root))
            for n in files if n.startswith(".cordon-tmp-")]
