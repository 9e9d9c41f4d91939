# Fault injection: a real `cordon run --home --demo` under a
# steady load of concurrent chat runs, Control Room actions, vault reads
# and audit tails, while auditd, vaultd, the spawner and the broker are
# each SIGKILLed in turn, round after round.  Afterwards: every request
# got an answer (success or a neutral error from a fixed set; resets only
# while the broker was down), no acknowledged audit record is missing,
# `cordon audit verify` passes, no partial note exists, no agent process
# outlives cordon, every restart is audited and every daemon is up.
# CORDON_FAULT_ROUNDS=N runs N rounds instead of 5 (the long variant);
# CORDON_SLOW=1 (sanitizer builds) only widens the time bounds.
# Touches only its temp dirs, the cordon it starts and that cordon's
# children.
import hashlib
import json
import os
import re
import secrets
import signal
import socket
import threading
import time

from agents_util import (FAKE_DIR, _dechunk_partial, procs_with_arg,
                         server_env)
from audit_util import check_chain, cordon_audit
from conftest import BUILD, DAEMONS, SLOW, _dechunk
from vault_util import temps, tree

ROUNDS = int(os.environ.get("CORDON_FAULT_ROUNDS", "5"))
SETTLE_S = 1.0 if SLOW else 0.4  # load on the recovered system per kill
BACK_BOUND_S = 20.0 if SLOW else 10.0  # restart backoff reaches 1.6 s
REQ_S = 30.0  # one request, start to last byte
# An error or a reset counts as caused by a kill when the request
# overlapped [kill, daemon back + WINDOW_SLACK_S]: the spawner waits up to
# 2 s for an audit acknowledgement, and peers learn of a restart late.
WINDOW_SLACK_S = 6.0 if SLOW else 3.0
CHATS = "00_Inbox/cordon/chats"

# The neutral answers a fault may cause (PER-9, docs/agents.md): the
# daemon behind the route is down or auditd did not acknowledge.
NEUTRAL = {(503, "unavailable"), (503, "audit-unavailable"), (429, "busy")}
# errorClass values a run's stream may end with (docs/audit.md ERRCLASS).
ERRCLASS = {"spawn-failed", "timeout", "killed", "non-zero-exit",
            "transport-error", "missing-secret", "unknown"}
NOTE_RE = re.compile(
    r"(\d{4}-\d{2}-\d{2}-\d{4})-(demo|hermes)-([0-9a-f]{8})(-\d{2})?\.md")
NOTE_HEAD_RE = re.compile(
    r"---\ntype: chat\nstatus: draft\nsource: cordon\nagent: \"(\S+)\"\n"
    r"created: \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\n---\n\n"
    r"# [^\n]*\n\n## prompt\n\n(.*)\n\n## response\n\n", re.S)

# The fake chat agent: the test fake `hermes` with one Control Room
# action, tagged in its environment so that the orphan scan tells its
# processes from other tests' (actions and probes carry no prompt).
HERMES = """name: hermes
transport: subprocess
transportConfig:
  bin: hermes
  args: ["-z", "{prompt}"]
  timeoutMs: 20000
  env:
    CORDON_FAULT_TAG: {tag}
healthProbe:
  type: command
  command: ["hermes", "--version"]
  timeoutMs: 5000
actions:
  - id: status
    label: Status
    command: ["hermes", "status"]
    hint: Agent status
"""

SEEDED = {f"20_Notes/n{i}.md": f"# note {i}\n\n" + "text line\n" * (i * 40)
          for i in range(6)}


class Load:
    """Threads issuing requests until stopped; every request's outcome
    is kept with its start and end time."""

    def __init__(self, c, tag):
        self.c = c
        self.tag = tag
        self.stop = threading.Event()
        self.saved = threading.Event()
        self.lock = threading.Lock()
        self.log = []
        self.counter = 0
        self.threads = []

    def next_n(self):
        with self.lock:
            self.counter += 1
            return self.counter

    def http(self, kind, method, target, body=b""):
        """One request on its own connection, read to EOF; never raises
        on a reset.  Returns the outcome dict (also logged)."""
        lines = [f"{method} {target} HTTP/1.1",
                 f"Host: 127.0.0.1:{self.c.port}",
                 f"Authorization: Bearer {self.c.token}",
                 "Connection: close"]
        if method == "POST":
            lines += ["Content-Type: application/json",
                      f"Content-Length: {len(body)}"]
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
        t0 = time.monotonic()
        data, reset, timeout = b"", False, False
        try:
            with socket.create_connection(("127.0.0.1", self.c.port),
                                          timeout=REQ_S) as s:
                s.sendall(raw)
                while True:
                    left = t0 + REQ_S - time.monotonic()
                    if left <= 0:
                        timeout = True
                        break
                    s.settimeout(left)
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
        except (ConnectionResetError, BrokenPipeError):
            reset = True
        except socket.timeout:
            timeout = True
        try:
            got = parse(data)
        except (ValueError, IndexError, UnicodeDecodeError):
            got = {"outcome": "garbled", "data": data[:300]}
        out = {"kind": kind, "target": target, "t0": t0,
               "t1": time.monotonic(), **got}
        if timeout:
            out["outcome"] = "timeout"
        elif out["outcome"] != "answer":
            out["reset"] = reset
        with self.lock:
            self.log.append(out)
        return out

    def chat(self, agent):
        while not self.stop.is_set():
            prompt = f"{self.tag} {agent} {self.next_n()}"
            r = self.http("chat", "POST", f"/api/agents/{agent}/run",
                          json.dumps({"prompt": prompt}).encode())
            r["agent"], r["prompt"] = agent, prompt
            if r.get("status") != 200:
                time.sleep(0.05)  # a steady load, not a spin on errors
            elif any(e["kind"] == "saved" for e in r["events"]):
                self.saved.set()

    def action(self):
        while not self.stop.is_set():
            self.http("action", "POST", "/api/agents/hermes/actions/status",
                      b"{}")
            time.sleep(0.05)

    def vault(self):
        i = 0
        while not self.stop.is_set():
            rel = sorted(SEEDED)[i % len(SEEDED)]
            r = self.http("vault", "GET", f"/api/vault/note?path={rel}")
            r["rel"] = rel
            r = self.http("vault", "GET", "/api/vault/notes?dir=20_Notes")
            r["dir"] = "20_Notes"
            if self.saved.is_set():  # the folder exists from then on
                r = self.http("vault", "GET",
                              f"/api/vault/notes?dir={CHATS}")
                r["dir"] = CHATS
            i += 1
            time.sleep(0.02)

    def audit(self):
        while not self.stop.is_set():
            self.http("audit", "GET", "/api/audit?limit=50")
            time.sleep(0.05)

    def start(self):
        work = [(self.chat, ("demo",)), (self.chat, ("demo",)),
                (self.chat, ("hermes",)), (self.chat, ("hermes",)),
                (self.action, ()), (self.action, ()),
                (self.vault, ()), (self.audit, ())]
        for fn, args in work:
            t = threading.Thread(target=fn, args=args, daemon=True)
            t.start()
            self.threads.append(t)

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(REQ_S + 5)
        assert not any(t.is_alive() for t in self.threads), "load hung"


def parse(data):
    """What arrived: no bytes, a cut answer, or a whole answer."""
    if not data:
        return {"outcome": "no-answer"}
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        return {"outcome": "cut", "bytes": len(data)}
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    if "content-length" in hdrs:
        n = int(hdrs["content-length"])
        if len(rest) < n:
            return {"outcome": "cut", "status": status}
        body = rest[:n]
    elif "chunked" in hdrs.get("transfer-encoding", ""):
        if not rest.endswith(b"0\r\n\r\n"):
            return {"outcome": "cut", "status": status,
                    "events": events_of(_dechunk_partial(rest))}
        body = _dechunk(rest)
    else:
        body = rest
    out = {"outcome": "answer", "status": status, "body": body}
    if hdrs.get("content-type", "").startswith("application/x-ndjson"):
        out["events"] = events_of(body)
    else:
        out["json"] = json.loads(body)
    return out


def events_of(body):
    """The whole NDJSON lines of a stream, a cut last line left out."""
    return [json.loads(ln) for ln in body.split(b"\n")[:-1] if ln.strip()]


def seed_home(tmp_path, tag):
    home = tmp_path / "home"
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "hermes.yaml").write_text(
        HERMES.replace("{tag}", tag))
    for rel, text in SEEDED.items():
        p = home / "vault" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return home


def overlaps(r, windows):
    return any(r["t0"] <= end and r["t1"] >= start
               for start, end in windows)


def agent_procs(tag, demo_bin):
    """Live processes of this test's agents: every fake hermes child of
    this cordon has the tag in its environment; the demo agent is this
    build's binary."""
    def tagged(pid):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            return False
        return f"CORDON_FAULT_TAG={tag}".encode() in env

    hermes = [p for p in procs_with_arg(os.path.join(FAKE_DIR, "hermes"))
              if tagged(p)]
    return sorted(hermes + procs_with_arg(demo_bin))


def daemon(h, name):
    return [d for d in h["daemons"] if d["name"] == name][0]


def all_up(h):
    return h["status"] == "ok" and all(d["up"] for d in h["daemons"])


def test_faults_kill9_each_daemon_under_load(cordon_factory, tmp_path,
                                             monkeypatch):
    tag = "fault" + secrets.token_hex(6)
    server_env(monkeypatch)
    assert os.path.exists(os.path.join(FAKE_DIR, "hermes"))
    home = seed_home(tmp_path, tag)
    c = cordon_factory(extra_args=("--allow-root", "--demo"), home=home)
    vault = os.path.join(c.home, "vault")
    demo_bin = os.path.realpath(os.path.join(BUILD, "cordon-demo-agent"))
    outside_inbox = {k: v for k, v in tree(vault).items()
                     if not k.startswith("00_Inbox")}
    c.health_when(all_up)
    load = Load(c, tag)
    load.start()
    kills = []  # (victim, t_kill, t_back)
    seen_agents = 0  # the orphan scan's own proof that it finds agents
    try:
        time.sleep(SETTLE_S)
        for rnd in range(1, ROUNDS + 1):
            for victim in DAEMONS:
                old = daemon(c.health_when(all_up, BACK_BOUND_S),
                             victim)["pid"]
                t_kill = time.monotonic()
                os.kill(old, signal.SIGKILL)
                c.health_when(
                    lambda h: all_up(h) and
                    daemon(h, victim)["pid"] != old and
                    daemon(h, victim)["restarts"] == rnd, BACK_BOUND_S)
                kills.append((victim, t_kill, time.monotonic()))
                c.note_processes()
                seen_agents += len(agent_procs(tag, demo_bin))
                time.sleep(SETTLE_S)
    finally:
        load.finish()
    h = c.health_when(all_up, BACK_BOUND_S)
    assert [(d["name"], d["restarts"]) for d in h["daemons"]] == \
        [(n, ROUNDS) for n in DAEMONS], h  # nothing else died
    c.note_processes()
    assert c.stop() == 0, c.stderr()
    log = load.log
    windows = {v: [(t, b + WINDOW_SLACK_S) for n, t, b in kills if n == v]
               for v in DAEMONS}
    any_window = [w for ws in windows.values() for w in ws]
    summary = {}
    for r in log:
        key = (r["kind"], r["outcome"], r.get("status"),
               (r.get("json") or {}).get("error"))
        summary[key] = summary.get(key, 0) + 1
    for k in sorted(summary, key=str):
        print("requests", k, summary[k])
    print(f"{len(log)} requests, {len(kills)} kills in "
          f"{kills[-1][2] - kills[0][1]:.1f}s")

    # 1. Every request got an answer: no timeout; a reset or a cut answer
    #    only while the broker was down; errors only near a kill, from
    #    the fixed set.
    assert not [r for r in log
                if r["outcome"] in ("timeout", "garbled")]
    lost = [r for r in log if r["outcome"] in ("no-answer", "cut")]
    stray = [r for r in lost if not overlaps(r, windows["broker"])]
    assert not stray, stray[:5]
    print(f"{len(lost)} connections reset or cut during broker kills")
    answers = [r for r in log if r["outcome"] == "answer"]
    for r in answers:
        if r["status"] == 200:
            continue
        assert (r["status"], r["json"].get("error")) in NEUTRAL, r
        assert r["json"] == {"ok": False, "error": r["json"]["error"]}, r
        assert overlaps(r, any_window), r
    assert sum(1 for r in answers if r["status"] == 200) > len(log) / 2

    # Answers that succeeded are whole and true.
    runs = []
    for r in answers:
        if r["status"] != 200:
            continue
        if r["kind"] == "chat":
            ev = r["events"]
            assert ev[0]["kind"] == "start", r
            assert re.fullmatch(r"[0-9a-f]{16}", ev[0]["runId"]), r
            kinds = [e["kind"] for e in ev]
            assert "done" in kinds, r
            assert kinds[-1] in ("done", "saved"), r
            errs = [e for e in ev if e["kind"] == "error"]
            for e in errs:
                assert e["errorClass"] in ERRCLASS, e
                assert overlaps(r, any_window), (errs, r["t0"], r["t1"])
            runs.append(r)
        elif r["kind"] == "action":
            assert r["json"]["ok"] is True, r
            assert r["json"]["stdout"] == "hermes status: ok\n", r
        elif r["kind"] == "vault" and "rel" in r:
            assert r["json"]["content"] == SEEDED[r["rel"]], r
        elif r["kind"] == "vault" and r["dir"] == "20_Notes":
            assert [n["name"] for n in r["json"]["notes"]] == \
                sorted(os.path.basename(k) for k in SEEDED), r
        elif r["kind"] == "vault":  # the chats folder: whole notes only
            for n in r["json"]["notes"]:
                assert NOTE_RE.fullmatch(n["name"]), r
        elif r["kind"] == "audit":
            seqs = [x["seq"] for x in r["json"]["records"]]
            assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    started_cut = [r for r in lost if r["kind"] == "chat" and
                   r.get("events") and r["events"][0]["kind"] == "start"]

    # 2. The chain verifies across restarts and torn lines.
    p = cordon_audit("verify", "--home", c.home)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("ok "), p.stdout
    recs = check_chain(os.path.join(c.home, "audit"))
    print(p.stdout.strip(), "; torn:",
          [n for n in os.listdir(os.path.join(c.home, "audit"))
           if n.endswith(".torn")])

    # 3. No acknowledged record is missing.  A run's start event comes
    #    only after its agent.invoke is acknowledged; a note is renamed
    #    into place only after its vault.write is.
    invoked = {x["runId"] for x in recs if x["kind"] == "agent.invoke"}
    for r in runs + started_cut:
        assert r["events"][0]["runId"] in invoked, r
    written = {x["path"] for x in recs
               if x["kind"] == "vault.write" and "path" in x}
    saved = [e["path"] for r in runs for e in r["events"]
             if e["kind"] == "saved"]
    assert saved, "no chat note was saved"
    for path in saved:
        assert path in written, path
        assert os.path.isfile(os.path.join(vault, path)), path
    # Actions: the answer of an action that ran must not outrun its
    # agent.action record.
    acted = sum(1 for r in answers
                if r["kind"] == "action" and r["status"] == 200)
    action_recs = sum(1 for x in recs if x["kind"] == "agent.action"
                      and x["agent"] == "hermes")
    print(f"{len(runs)} whole runs, {len(saved)} notes saved, "
          f"{acted} actions answered, {action_recs} agent.action records")
    assert action_recs >= acted, (action_recs, acted)
    # Every restart is audited, numbered 1..ROUNDS per daemon.
    restarts = sorted((x["daemon"], x["restarts"]) for x in recs
                      if x["kind"] == "system.restart")
    assert restarts == sorted((n, i) for n in DAEMONS
                              for i in range(1, ROUNDS + 1)), restarts
    assert recs[-1]["kind"] == "system.shutdown"

    # 4. No partial note: no temp file, every note whole and named by the
    #    rules, every note on disk audited; nothing outside the inbox.
    assert temps(vault) == []
    chats = os.path.join(vault, CHATS)
    names = sorted(os.listdir(chats))
    for n in names:
        m = NOTE_RE.fullmatch(n)
        assert m, n
        with open(os.path.join(chats, n), encoding="utf-8") as f:
            text = f.read()
        hm = NOTE_HEAD_RE.match(text)
        assert hm and hm.group(1) == m.group(2), (n, text[:300])
        prompt = hm.group(2)
        assert prompt.startswith(tag), (n, prompt)
        assert hashlib.sha256(prompt.encode()).hexdigest()[:8] == \
            m.group(3), n
        assert text.endswith("\n"), n
        assert f"{CHATS}/{n}" in written, n
    assert {k: v for k, v in tree(vault).items()
            if not k.startswith("00_Inbox")} == outside_inbox

    # 5. No agent process outlives cordon (the same scan saw them live).
    assert seen_agents > 0
    assert agent_procs(tag, demo_bin) == []
