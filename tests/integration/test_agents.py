# Agent scenarios over HTTP: the built-in manifests against our
# fake `claude` and `hermes`, env building, secrets, output cleaning and
# scrubbing, caps, deadlines, group kills, cancel, busy, actions, audit.
# Every chat run needs the audit issue's auditd (agent.invoke must be
# acknowledged before a spawn, AU-6); `saved` events need vaultd's
# chat notes.  Tests that depend on vaultd say so in their docstring.
import hashlib
import json
import os
import pathlib
import re
import socket
import time
import uuid

import pytest

from agents_util import (DECOYS, ENV_SECRET, FILE_SECRET, GRACE, Stream,
                         audit_lines, audit_records, make_agents_home,
                         marker, post_json, probed, procs_with_arg, run,
                         server_env, text_of, wait_audit, walk_values)
from conftest import HTTP_S, SLOW
import note_md as nm


@pytest.fixture
def agents(tmp_path, monkeypatch, cordon_factory):
    server_env(monkeypatch)
    home = make_agents_home(tmp_path)
    return cordon_factory(home=home)


def kinds(events):
    return [e["kind"] for e in events]


# ---- API-2 / SP-15 / SP-18 ----

def test_api2_sp15_builtin_manifests_listed(agents):
    # SP-18: the probe (`hermes --version`) runs at start; wait for it.
    deadline = time.monotonic() + 5
    while True:
        r = agents.request("GET", "/api/agents")
        live = {a["name"] for a in r.json()["agents"]
                if a["readiness"]["status"] == "live"}
        # Probes finish in any order: wait for the ones asserted below.
        if ({"claude-code", "hermes"} <= live and len(live) >= 4) or \
                time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert r.status == 200, r
    body = r.json()
    by = {a["name"]: a for a in body["agents"]}
    assert {"claude-code", "hermes"} <= set(by)
    assert by["claude-code"]["transport"] == "streamJson"
    assert by["hermes"]["transport"] == "subprocess"
    acts = by["hermes"]["actions"]
    assert len(acts) == 7
    assert all(set(a) == {"id", "label", "hint"} for a in acts)
    assert by["hermes"]["readiness"] == {"status": "live", "probed": True,
                                         "version": "hermes 0.9.1-fake"}
    assert by["envdump"]["hasKey"] == {"FAKE_API_KEY": True}
    assert by["needkey"]["missingSecrets"] == ["NEVER_SET_KEY"]
    # SEC-3: names and flags only, never a value.
    assert FILE_SECRET.encode() not in r.body
    for v in DECOYS.values():
        assert v.encode() not in r.body


def test_api2_get_and_unknown(agents):
    r = agents.request("GET", "/api/agents/hermes")
    assert r.status == 200 and r.json()["agent"]["name"] == "hermes"
    for name in ("nosuch", "Hermes", "her%00mes", "-x", "a" * 65):
        r = agents.request("GET", f"/api/agents/{name}")
        assert r.status == 404, (name, r)
        assert r.json() == {"ok": False, "error": "unknown-agent"}


SLOWPROBE = """
name: slowprobe
transport: subprocess
transportConfig:
  bin: hermes
  args: ["-z", "{prompt}"]
healthProbe:
  type: command
  command: ["sleep", "2"]
  timeoutMs: 4000
"""


def test_sp18_not_probed_yet_says_so(tmp_path, monkeypatch, cordon_factory):
    """SP-18: before its first probe answers, an agent reads offline with
    probed false (a view says "checking"); once answered, probed true."""
    server_env(monkeypatch)
    home = make_agents_home(tmp_path, extra={"slowprobe": SLOWPROBE})
    c = cordon_factory(home=home)
    rd = c.request("GET", "/api/agents/slowprobe").json()["agent"][
        "readiness"]
    assert rd["status"] == "offline" and rd["probed"] is False, rd
    deadline = time.monotonic() + (20 if SLOW else 8)
    while True:
        rd = c.request("GET", "/api/agents/slowprobe").json()["agent"][
            "readiness"]
        if rd["probed"]:
            break
        assert time.monotonic() < deadline, rd
        time.sleep(0.1)
    # `sleep 2` prints no version: it ran, so degraded, and now probed.
    assert rd["status"] == "degraded", rd


def test_sp6_no_daemon_fd_reaches_an_action_or_a_probe(agents):
    """SP-6: a child gets exactly its fd map.  A health probe and an
    action get nothing above stdio, a chat run only its gate socket on
    fd 3.  The spawner's own channel to cordond (its fd 3, not marked
    close-on-exec) once reached every probe and action: an agent could
    speak to cordond as the spawner."""
    deadline = time.monotonic() + (20 if SLOW else 8)
    while True:
        rd = agents.request("GET", "/api/agents/fdshow").json()["agent"][
            "readiness"]
        if rd["probed"] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert rd.get("version") == "fds none", rd
    r = post_json(agents, "/api/agents/fdshow/actions/fds", {})
    assert r.status == 200, r
    assert r.json()["stdout"] == "fds none\n", r.json()
    r, ev = run(agents, "fdshow", "fds")
    assert r.status == 200, r
    assert re.fullmatch(r"fds 3=socket:\[\d+\]\n", text_of(ev)), ev


def test_sp11_sp18_probe_version_is_scrubbed(agents):
    """SP-11: the probe's version line leaves the spawner (/api/agents),
    so it is scrubbed like any output: key patterns masked, home paths
    shortened."""
    rd = probed(agents, "leakprobe")
    assert rd.get("version") == "v1.0 *** *** ~/.cfg", rd


def test_sp18_missing_binary_offline_and_spawn_failed(agents, tmp_path):
    time.sleep(0.3)  # the start-up probe
    r = agents.request("GET", "/api/agents/nobin")
    assert r.json()["agent"]["readiness"]["status"] == "offline"
    r, _ = run(agents, "nobin", "hello")
    assert r.status == 502 and r.json()["error"] == "spawn-failed"


def test_sp15_invalid_manifest_disables_only_that_agent(
        tmp_path, monkeypatch, cordon_factory):
    server_env(monkeypatch)
    bad = {
        "elevenacts": "name: elevenacts\ntransport: subprocess\n"
        "transportConfig:\n  bin: hermes\n  args: [\"{prompt}\"]\n"
        "actions:\n" + "".join(
            f"  - id: a{i}\n    label: A\n    command: [hermes]\n"
            for i in range(11)),
        "ldpreload": "name: ldpreload\ntransport: subprocess\n"
        "transportConfig:\n  bin: hermes\n  args: [\"{prompt}\"]\n"
        "  env:\n    LD_PRELOAD: /tmp/x.so\n",
        "httptransport": "name: httptransport\ntransport: http\n"
        "transportConfig:\n  bin: hermes\n",
    }
    base = ("name: {n}\ntransport: subprocess\ntransportConfig:\n"
            "  bin: hermes\n  args: [\"-z\", \"{{prompt}}\"]\n")
    act = "  - id: {i}\n    label: A\n    command: [hermes]\n"
    more = {
        "dupids": base + "actions:\n" + act.format(i="a") +
        act.format(i="a"),
        "longid": base + "actions:\n" + act.format(i="a" * 33),
        "slowact": base + "actions:\n" + act.format(i="a") +
        "    timeoutMs: 60001\n",
        "nodeopts": base + "  env:\n    NODE_OPTIONS: --inspect\n",
        "lowerenv": base + "  env:\n    lower_case: x\n",
        "nlvalue": base + "  env:\n    SOME_VAR: \"a\\nb\"\n",
        "argsecret": "name: argsecret\ntransport: subprocess\n"
        "transportConfig:\n  bin: hermes\n  args: [\"--key=sk-ant-"
        "api03-abcdefghijklmnopqrstuvwxyz0123\", \"{prompt}\"]\n",
        "unknownkey": base + "surprise: 1\n",
    }
    for n, text in more.items():
        bad[n] = text.replace("{n}", n)
    c = cordon_factory(home=make_agents_home(tmp_path, extra=bad))
    names = {a["name"] for a in c.request("GET", "/api/agents").json()
             ["agents"]}
    assert "hermes" in names and "claude-code" in names
    assert not names & set(bad)
    err = c.stderr()
    for n in bad:  # SP-15: each problem reported with file:line:col
        assert f"agents/{n}.yaml:" in err, n
    assert "/tmp/x.so" not in err and "sk-ant-api03" not in err


# ---- SP-16: both transports ----

def test_va4_inbox_moved_away_is_made_again(agents):
    """VA-4: vaultd may write only the inbox it made at start (Landlock
    ties the rule to that directory).  If the operator deletes or moves
    it (Obsidian's "delete folder" moves it to .trash), the next note
    fails and vaultd exits once it has answered; cordond restarts it, it
    makes the inbox again, and notes are saved again."""
    vault = pathlib.Path(agents.home) / "vault"
    r, ev = run(agents, "hermes", "first note")
    assert kinds(ev)[-1] == "saved", ev
    pid = agents.daemon_pids()["vaultd"]
    os.rename(vault / "00_Inbox" / "cordon", vault / "trashed-inbox")
    r, ev = run(agents, "hermes", "second note")
    assert r.status == 200 and "saved" not in kinds(ev), ev
    deadline = time.monotonic() + (20 if SLOW else 10)
    while agents.daemon_pids().get("vaultd") in (pid, None):
        assert time.monotonic() < deadline, agents.stderr()
        time.sleep(0.1)
    assert "the vault inbox was moved or replaced" in agents.stderr()
    deadline = time.monotonic() + (20 if SLOW else 10)
    while True:
        r, ev = run(agents, "hermes", "third note")
        if kinds(ev)[-1] == "saved" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert kinds(ev)[-1] == "saved", (ev, agents.stderr())
    assert (vault / ev[-1]["path"]).is_file()


def test_api3_streams_left_early_do_not_leak(agents):
    """API-3: a client that leaves a run stream cancels the run, and the
    broker frees the request it held: libevent detaches a request its
    user still owns from the failed connection and leaves it to us.  It
    leaked, with its body: 16 streams of a 1 MB body left early cost the
    broker about 16 MB; now next to nothing."""
    if SLOW:
        pytest.skip("a sanitized build holds freed memory back")
    pid = agents.daemon_pids()["broker"]

    def rss_kib():
        with open(f"/proc/{pid}/status") as f:
            return int([ln for ln in f if ln.startswith("VmRSS:")][0]
                       .split()[1])

    body = b'{"prompt":"sleep 30"' + b" " * 1000000 + b"}"
    head = (f"POST /api/agents/hermes/run HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{agents.port}\r\n"
            f"Authorization: Bearer {agents.token}\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n").encode()

    def leave_early():
        for _ in range(200):
            s = socket.create_connection(("127.0.0.1", agents.port),
                                         timeout=HTTP_S)
            s.sendall(head + body)
            buf = b""
            while b"\r\n\r\n" not in buf:
                buf += s.recv(65536)
            status = int(buf.split(b" ")[1])
            if status == 200:
                while b'"kind":"start"' not in buf:
                    buf += s.recv(65536)
                s.close()
                return
            s.close()
            assert status == 429, buf[:200]
            time.sleep(0.1)
        raise AssertionError("no run slot came free")

    for _ in range(4):
        leave_early()
    before = rss_kib()
    for _ in range(16):
        leave_early()
    assert rss_kib() - before < 6 * 1024, (before, rss_kib())
    assert agents.daemon_pids()["broker"] == pid


def test_api3_run_started_after_a_503_is_cancelled(agents):
    """API-3: the broker gives a run's start 3 s; a spawner slower than
    that (stopped here for 3.5 s) has the client answered 503, yet it
    starts the run once it goes on.  Nobody can see or cancel that run:
    the broker cancels it at its first event, instead of letting it run
    (and hold a slot) unseen."""
    import signal
    pid = agents.daemon_pids()["spawner"]
    os.kill(pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        r, _ = run(agents, "hermes", "sleep 30")
        assert r.status == 503 and r.json()["error"] == "unavailable", r
        time.sleep(max(0.0, 3.5 - (time.monotonic() - t0)))
    finally:
        os.kill(pid, signal.SIGCONT)
    rec = wait_audit(agents.home, lambda x: x["kind"] ==
                     "agent.invoke.complete" and x["agent"] == "hermes",
                     bound=10.0)
    assert rec[0]["status"] == "cancelled", rec
    assert rec[0]["durationMs"] < 10000, rec


def test_per8_cancel_takes_no_body(agents):
    """PER-8: a cancel has no body (or {}); anything else is refused and
    cancels nothing."""
    s = Stream(agents, "hermes", "sleep 30")
    try:
        rid = s.start()
        for raw in (b'{"evil":true}', b"not json"):
            r = post_json(agents, f"/api/runs/{rid}/cancel", raw=raw)
            assert r.status == 400 and r.json() == {
                "ok": False, "error": "invalid-body"}, r
        r = post_json(agents, f"/api/runs/{rid}/cancel", {})
        assert r.status == 200 and r.json() == {"ok": True}, r
    finally:
        s.close()


def test_sp16_claude_stream_json(agents):
    """The saved event needs vaultd's chat notes."""
    r, ev = run(agents, "claude-code", "hello there")
    assert r.status == 200, r
    assert ev[0]["kind"] == "start" and len(ev[0]["runId"]) == 16
    assert text_of(ev) == "Hello from fake claude: 11 chars"
    usage = [e for e in ev if e["kind"] == "usage"]
    assert usage and usage[0]["output_tokens"] == 7
    done = [e for e in ev if e["kind"] == "done"][0]
    assert done["exitCode"] == 0 and done["truncated"] is False
    assert kinds(ev)[-2:] == ["done", "saved"]
    assert ev[-1]["path"].startswith("00_Inbox/cordon/chats/")
    # VA-5: the spawner's hash names the note.
    sha8 = hashlib.sha256(b"hello there").hexdigest()[:8]
    assert ev[-1]["path"].endswith(f"-claude-code-{sha8}.md")


def test_sp16_claude_assistant_fallback(agents):
    r, ev = run(agents, "claude-code", "nodelta please")
    assert text_of(ev) == "whole answer"


def test_sp16_hermes_subprocess_stream(agents):
    r, ev = run(agents, "hermes", "what is up")
    assert r.status == 200
    assert text_of(ev) == "hermes heard 10 chars: what is up\n"
    assert "done" in kinds(ev)


def test_sp3_prompt_via_stdin_may_start_with_dash(agents):
    r, ev = run(agents, "viastdin", "-rf looks like a flag")
    assert r.status == 200, r
    assert "-rf looks like a flag" in text_of(ev)


# ---- SP-4 / SP-5 / SEC-2: the child's environment ----

def test_sp4_child_env_is_built(agents):
    r, ev = run(agents, "envdump", "env")
    env = json.loads(text_of(ev))
    # Python's own locale coercion may add LC_CTYPE (an allowlisted name).
    env.pop("LC_CTYPE", None)
    # CORDON_GATE_FD: the run's gate channel (SBX-6), set by the spawner;
    # CORDON_GATE: the same by path, in the run's own /tmp (SBX-8), and
    # CORDON_GATE_WAIT: how long `cordon gate` waits for a verdict.
    # TMPDIR, TMP, TEMP: the run's private tmp (SBX-1).  HOME, the XDG
    # dirs and each CLI's own dir: the agent's private home (SBX-9).
    assert set(env) == {"PATH", "HOME", "LANG", "TZ", "PWD", "NO_COLOR",
                        "FORCE_COLOR", "MANIFEST_VAR", "FAKE_API_KEY",
                        "CORDON_GATE_FD", "CORDON_GATE", "CORDON_GATE_WAIT",
                        "TMPDIR", "TMP", "TEMP", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
                        "XDG_DATA_HOME", "XDG_STATE_HOME", "CLAUDE_CONFIG_DIR",
                        "CODEX_HOME", "GEMINI_CLI_HOME"}
    assert env["CORDON_GATE"] == "/tmp/.cordon-gate"
    assert env["HOME"].endswith("/homes/envdump")
    assert env["TMPDIR"] == env["TMP"] == env["TEMP"]
    # Every run sees its private tmp as /tmp (SBX-4), where the host allows.
    assert env["TMPDIR"] == "/tmp"
    assert env["CORDON_GATE_FD"] == "3"
    assert env["CORDON_GATE_WAIT"] == "70"  # the default ask's 60 s + 10
    assert env["NO_COLOR"] == "1" and env["FORCE_COLOR"] == "0"
    assert env["MANIFEST_VAR"] == "hello"
    # The declared secret reached the child (and is scrubbed on the way
    # out); the decoys in the server's env never did.
    assert env["FAKE_API_KEY"] == "***"
    for k, v in DECOYS.items():
        assert k not in env and v not in r.body.decode()


def test_sec2_env_var_wins_over_secrets_file(
        tmp_path, monkeypatch, cordon_factory):
    server_env(monkeypatch, {"FAKE_API_KEY": ENV_SECRET})
    c = cordon_factory(home=make_agents_home(tmp_path))
    r, ev = run(c, "envdump", "envlen FAKE_API_KEY")
    assert text_of(ev) == f"{len(ENV_SECRET)}\n"


def test_sec2_secrets_file_used(agents):
    r, ev = run(agents, "envdump", "envlen FAKE_API_KEY")
    assert text_of(ev) == f"{len(FILE_SECRET)}\n"


def test_sp13_missing_secret_spawns_nothing(agents, tmp_path):
    r, ev = run(agents, "needkey", "hello")
    assert r.status == 409 and r.json() == {"ok": False,
                                            "error": "missing-secret"}
    assert not marker(tmp_path).exists()
    recs = wait_audit(agents.home, lambda x: x["kind"] ==
                      "agent.invoke.error" and x["agent"] == "needkey")
    assert recs[0]["errorClass"] == "missing-secret"
    assert not [x for x in audit_records(agents.home, "agent.invoke")
                if x["agent"] == "needkey"]


def test_sec1_secrets_file_0644_refused(tmp_path, monkeypatch,
                                        cordon_factory):
    server_env(monkeypatch)
    c = cordon_factory(home=make_agents_home(tmp_path, secrets_mode=0o644))
    a = c.request("GET", "/api/agents/envdump").json()["agent"]
    assert a["missingSecrets"] == ["FAKE_API_KEY"]
    assert a["hasKey"] == {"FAKE_API_KEY": False}
    r, _ = run(c, "envdump", "env")
    assert r.status == 409 and r.json()["error"] == "missing-secret"
    assert "secrets.yaml must be 0600" in c.stderr()
    assert FILE_SECRET not in c.stderr()


def test_sec2_overlong_secret_is_missing(tmp_path, monkeypatch,
                                        cordon_factory):
    """SEC-2/SP-13: a value over 8 KiB is no value (the scrubber must
    hold a whole one): from the environment or from secrets.yaml, the
    run is refused missing-secret and nothing is spawned."""
    server_env(monkeypatch, {"FAKE_API_KEY": "k" * 8193})
    home = make_agents_home(tmp_path, secrets=False)
    (home / "secrets.yaml").write_text("fake:\n  apiKey: " + "y" * 9000 +
                                       "\n")
    os.chmod(home / "secrets.yaml", 0o600)
    c = cordon_factory(home=home)
    r, _ = run(c, "envdump", "env")
    assert r.status == 409 and r.json()["error"] == "missing-secret", r
    assert "k" * 100 not in c.stderr() and "y" * 100 not in c.stderr()


# ---- API-3 prompt and body rules (nothing spawned) ----

def test_sec1_secrets_file_other_owner_refused(tmp_path, monkeypatch,
                                               cordon_factory):
    server_env(monkeypatch)
    home = make_agents_home(tmp_path)
    os.chown(home / "secrets.yaml", 65534, 65534)  # nobody
    c = cordon_factory(home=home)
    r, _ = run(c, "envdump", "env")
    assert r.status == 409 and r.json()["error"] == "missing-secret"


@pytest.mark.parametrize("body,code", [
    ({"prompt": ""}, "invalid-prompt"),
    ({"prompt": 123}, "invalid-prompt"),
    ({"prompt": None}, "invalid-prompt"),
    ({"prompt": "a\u0000b"}, "invalid-prompt"),
    ({"prompt": "x" * 256001}, "invalid-prompt"),
    ({"prompt": "hi", "extra": 1}, "invalid-body"),
    ({}, "invalid-body"),
    ({"prompt": "hi", "session": "bad session!"}, "invalid-session"),
    ({"prompt": "hi", "session": "s" * 97}, "invalid-session"),
    ({"prompt": "hi", "session": ".."}, "invalid-session"),  # API-3: no dot
])
def test_api3_bad_bodies_refused(agents, tmp_path, body, code):
    r = post_json(agents, "/api/agents/marked/run", body)
    assert r.status == 400 and r.json() == {"ok": False, "error": code}
    assert not marker(tmp_path).exists()


def test_api3_not_json_refused(agents, tmp_path):
    r = post_json(agents, "/api/agents/marked/run", raw=b"{prompt: hi}")
    assert r.status == 400 and r.json()["error"] == "invalid-body"
    assert not marker(tmp_path).exists()


def test_sp3_prompt_flag_like_refused(agents, tmp_path):
    for agent in ("marked", "claude-code"):
        r, _ = run(agents, agent, "--dangerously-skip-permissions")
        assert r.status == 400, r
        assert r.json() == {"ok": False, "error": "prompt-flag-like"}
    assert not marker(tmp_path).exists()
    assert b"dangerously" not in b"".join(audit_lines(agents.home))


def test_api3_max_prompt_accepted(agents, tmp_path):
    r, ev = run(agents, "marked", "é" * 16000)  # one 32 KiB argv element
    assert r.status == 200, r
    assert marker(tmp_path).exists()


def test_api3_unknown_agent_run(agents):
    r, _ = run(agents, "nosuch", "hello")
    assert r.status == 404 and r.json()["error"] == "unknown-agent"


# ---- SP-10 / SP-11 ----

def test_sp11_output_scrubbed(agents):
    r, ev = run(agents, "envdump", "leak")
    out = text_of(ev)
    assert FILE_SECRET not in out
    assert "PRIVATE KEY" not in out and "MIIEowIBAAKCAQEA7bq" not in out
    assert "eyJhbGciOiJIUzI1NiJ9" not in out
    assert "AKIAIOSFODNN7EXAMPLE" not in out
    assert "abcdef0123456789abcdef" not in out
    assert "/home/alice/" not in out and "~/project/file.txt" in out
    assert "***" in out and "secret *** end" in out


def test_sp10_output_cleaned(agents):
    r, ev = run(agents, "hermes", "ansi")
    out = text_of(ev)
    assert "\x1b" not in out and "\x9b" not in out and "\r" not in out
    assert not any(ord(ch) < 32 and ch not in "\n\t" for ch in out)
    assert "red" in out and "line2" in out


# ---- SP-9 / SP-17 / SP-8 ----

def test_sp9_flood_truncated_and_killed(agents):
    t0 = time.monotonic()
    r, ev = run(agents, "hermes", "flood")
    done = [e for e in ev if e["kind"] == "done"][0]
    assert done["truncated"] is True
    assert len(text_of(ev).encode()) <= 8 * 1024 * 1024
    assert time.monotonic() - t0 < (60 if SLOW else 20)
    rec = wait_audit(agents.home, lambda x: x["kind"] ==
                     "agent.invoke.complete" and x["truncated"])
    assert rec[0]["bytesOut"] <= 8 * 1024 * 1024


def test_sp9_stderr_flood_truncated_and_killed(agents):
    """SP-9: stderr is never shown, but it is read: an agent that floods
    it is capped like stdout, killed and marked truncated."""
    t0 = time.monotonic()
    r, ev = run(agents, "hermes", "errflood")
    done = [e for e in ev if e["kind"] == "done"][0]
    assert done["truncated"] is True, done
    assert time.monotonic() - t0 < (60 if SLOW else 20)
    rec = wait_audit(agents.home, lambda x: x["kind"] ==
                     "agent.invoke.complete" and x["truncated"])
    assert rec[0]["bytesOut"] == 0, rec


def test_sp17_grandchild_holding_pipe(agents):
    nonce = f"grandchild {uuid.uuid4().hex}"
    t0 = time.monotonic()
    r, ev = run(agents, "hermes", nonce)
    took = time.monotonic() - t0
    assert "done" in kinds(ev)
    assert "parent leaves" in text_of(ev)
    # Kill grace (2 s) plus slack; the grandchild sleeps 60 s.
    assert took < 2.0 + GRACE + 1.0, took
    deadline = time.monotonic() + GRACE
    while procs_with_arg(nonce) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert procs_with_arg(nonce) == []


def test_sp8_run_deadline(agents):
    t0 = time.monotonic()
    r, ev = run(agents, "quick", "sleep 30")
    took = time.monotonic() - t0
    err = [e for e in ev if e["kind"] == "error"]
    assert err and err[0]["errorClass"] == "timeout"
    assert err[0]["errorMessage"] == "The agent did not finish in time."
    assert kinds(ev)[-1] == "done"
    assert took < 1.0 + 2.0 + GRACE, took


# ---- SP-14, API-4, client gone ----

def test_sp14_busy(agents):
    streams = []
    try:
        for _ in range(4):
            s = Stream(agents, "hermes", "sleep 30")
            s.start()
            streams.append(s)
        r, _ = run(agents, "hermes", "hello")
        assert r.status == 429 and r.json() == {"ok": False,
                                                "error": "busy"}
    finally:
        for s in streams:
            s.close()


def test_sbx5_sandboxed_agent_runs(tmp_path, monkeypatch, cordon_factory):
    # SBX-1: a manifest with a sandbox block is served and its runs are
    # sandboxed (tests/integration/test_sandbox.py has the escapes).
    server_env(monkeypatch)
    boxed = ("name: boxed\ntransport: subprocess\ntransportConfig:\n"
             "  bin: hermes\n  args: [\"-z\", \"{prompt}\"]\n"
             "sandbox:\n  network: none\n  isolation: namespace\n")
    home = make_agents_home(tmp_path, extra={"boxed": boxed})
    c = cordon_factory(home=home)
    a = c.request("GET", "/api/agents/boxed").json()["agent"]
    assert a["sandbox"]["isolation"] == "namespace"
    assert a["sandbox"]["network"] == "none"
    assert a["sandbox"]["enforced"] is True
    r, ev = run(c, "boxed", "cwd")
    assert r.status == 200 and text_of(ev).strip() != ""


def test_sp14_busy_bound_from_config(tmp_path, monkeypatch, cordon_factory):
    # spawner.maxRunsPerAgent in cordon.yaml replaces the default of 4.
    server_env(monkeypatch)
    home = make_agents_home(tmp_path)
    (home / "cordon.yaml").write_text("spawner:\n  maxRunsPerAgent: 1\n")
    c = cordon_factory(home=home)
    s = Stream(c, "hermes", "sleep 30")
    try:
        s.start()
        r, _ = run(c, "hermes", "hello")
        assert r.status == 429 and r.json() == {"ok": False,
                                                "error": "busy"}
    finally:
        s.close()


def test_api4_cancel(agents):
    s = Stream(agents, "hermes", "sleep 30")
    run_id = s.start()
    t0 = time.monotonic()
    r = post_json(agents, f"/api/runs/{run_id}/cancel", {})
    assert r.status == 200 and r.json() == {"ok": True}
    ev = s.finish(bound=3.0 + GRACE)
    s.close()
    assert time.monotonic() - t0 < 3.0 + GRACE
    assert ev[-1]["kind"] == "done"
    rec = wait_audit(agents.home, lambda x: x["kind"] ==
                     "agent.invoke.complete" and x["runId"] == run_id)
    assert rec[0]["status"] == "cancelled"


def test_api4_unknown_run(agents):
    for rid in ("0123456789abcdef", "nothex", "0123456789ABCDEF"):
        r = post_json(agents, f"/api/runs/{rid}/cancel", {})
        assert r.status == 404 and r.json()["error"] == "unknown-run"


def test_api3_client_gone_cancels(agents):
    s = Stream(agents, "hermes", "sleep 30")
    run_id = s.start()
    s.close()
    rec = wait_audit(agents.home, lambda x: x["kind"] ==
                     "agent.invoke.complete" and x["runId"] == run_id,
                     bound=3.0 + 2 * GRACE)
    assert rec[0]["status"] == "cancelled"


# ---- API-5 ----

def test_api5_hermes_actions(agents):
    for a in ("status", "sessions", "skills", "plugins", "kanban", "doctor",
              "insights"):
        r = post_json(agents, f"/api/agents/hermes/actions/{a}", {})
        assert r.status == 200, (a, r)
        body = r.json()
        assert body["ok"] is True and body["exitCode"] == 0, body
        assert body["truncated"] is False
    rec = wait_audit(agents.home, lambda x: x["kind"] == "agent.action" and
                     x["actionId"] == "insights")
    assert rec[0]["status"] == "success"
    assert "stdout" not in rec[0]


def test_api5_action_fail_soft(agents):
    r = post_json(agents, "/api/agents/quick/actions/slow", {})
    assert r.status == 200
    # SP-12: the stock message, and what ended it in fixed words.
    assert r.json() == {"ok": False, "errorClass": "timeout",
                        "errorMessage": "The agent did not finish in time.",
                        "reason": "no end within the action's 1000 ms"}
    r = post_json(agents, "/api/agents/quick/actions/broken", {})
    assert r.json()["ok"] is False
    assert r.json()["errorClass"] == "non-zero-exit"
    # SP-12: stderr only as its last lines, cleaned and scrubbed.
    assert r.json()["reason"] == "exited with status 2"
    assert r.json()["stderrTail"] == "bad things"
    assert "stderr" not in r.json()
    r = post_json(agents, "/api/agents/quick/actions/big", {})
    body = r.json()
    assert body["ok"] is True and body["truncated"] is True
    assert len(body["stdout"]) <= 256 * 1024


def test_api5_unknown_agent_and_action_not_audited(agents):
    before = len(audit_records(agents.home, "agent.action"))
    r = post_json(agents, "/api/agents/nosuch/actions/status", {})
    assert r.status == 404 and r.json()["error"] == "unknown-agent"
    r = post_json(agents, "/api/agents/hermes/actions/nosuch", {})
    assert r.status == 404 and r.json()["error"] == "unknown-action"
    r = post_json(agents, "/api/agents/hermes/actions/status",
                  {"x": 1})
    assert r.status == 400 and r.json()["error"] == "invalid-body"
    time.sleep(0.2)
    assert len(audit_records(agents.home, "agent.action")) == before


# ---- AU-4 / AU-5 ----

def test_au5_nonce_prompt_absent_from_audit(agents):
    nonce = f"nonce-{uuid.uuid4().hex}"
    prompts = [f"say {nonce}", f"nodelta {nonce}"]
    for agent, p in (("hermes", prompts[0]), ("claude-code", prompts[1]),
                     ("quick", f"sleep 5 {nonce}")):
        r, ev = run(agents, agent, p)
        assert r.status == 200
    recs = wait_audit(agents.home, lambda x: x["kind"] == "agent.invoke" and
                      x["promptSha256"] == hashlib.sha256(
                          prompts[0].encode()).hexdigest()[:8])
    assert recs[0]["promptChars"] == len(prompts[0])
    assert recs[0]["argsRedacted"] == ["-z", "[PROMPT_REDACTED]"]
    assert recs[0]["bin"] == "hermes"
    raw = b"\n".join(audit_lines(agents.home))
    assert nonce.encode() not in raw
    for rec in audit_records(agents.home):
        for v in walk_values(rec):
            assert nonce not in str(v)


def test_api3_quiet_agent_outlives_http_idle_timeout(agents):
    # The broker's per-request I/O timeout is 10 s; a run may be silent
    # longer than that and still stream its answer.
    s = Stream(agents, "hermes", "sleep 11")
    s.start()
    ev = s.finish(bound=30)
    s.close()
    assert "woke" in text_of(ev), ev
    assert kinds(ev)[-2:] == ["done", "saved"]


def test_sp10_emoji_line_clamped_on_code_points(agents):
    r, ev = run(agents, "hermes", "emoji")
    out = text_of(ev)
    first, _, rest = out.partition("\n")
    assert first == "\U0001F600" * 1000 + " … [+2000 chars]"
    assert rest == "next\n"


def test_sp10_invalid_utf8_replaced(agents):
    r, ev = run(agents, "hermes", "badutf8")
    assert text_of(ev) == "ok \ufffd\ufffd \ufffd end\n"


def test_sp16_overlong_ndjson_line_skipped(agents):
    r, ev = run(agents, "claude-code", "hugeline")
    assert r.status == 200
    assert text_of(ev).endswith(" after")
    assert kinds(ev)[-2] == "done"


def test_au6_no_audit_ack_no_spawn(agents, tmp_path):
    # auditd frozen: agent.invoke is never acknowledged, so the run is
    # refused after the bounded wait and nothing is spawned (fail closed).
    import signal
    pid = agents.daemon_pids()["auditd"]
    os.kill(pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        r, _ = run(agents, "marked", "hello")
        took = time.monotonic() - t0
    finally:
        os.kill(pid, signal.SIGCONT)
    assert r.status == 503 and r.json() == {"ok": False,
                                            "error": "audit-unavailable"}
    assert took < 3.0 + GRACE
    assert not marker(tmp_path).exists()


def test_sp9_flow_control_relays_everything_in_order(agents):
    # ~3 MB of short lines: several flow-control windows (MSG_RUN_CREDIT)
    # must pass, with nothing lost or reordered.
    s = Stream(agents, "hermes", "lines 300000")
    s.start()
    ev = s.finish(bound=60 if SLOW else 30)
    s.close()
    lines = text_of(ev).split("\n")
    assert lines[:-1] == [f"line {i}" for i in range(300000)]
    assert [e for e in ev if e["kind"] == "done"][0]["truncated"] is False


def test_api3_client_gone_while_flow_controlled(agents):
    # The run is held by flow control when its client leaves: the cancel
    # still ends it promptly (and nothing waits for credits).
    s = Stream(agents, "hermes", "lines 2000000")
    run_id = s.start()
    s.close()
    rec = wait_audit(agents.home, lambda x: x["kind"] ==
                     "agent.invoke.complete" and x["runId"] == run_id,
                     bound=3.0 + 2 * GRACE)
    assert rec[0]["status"] == "cancelled"


# ---- tokens stream as they come (SP-11 early flush) ----

SLOWCLAUDE = """
name: slowclaude
transport: streamJson
transportConfig:
  bin: claude
  args: ["-p", "--output-format=stream-json", "--include-partial-messages",
         "--verbose", "{prompt}"]
secrets:
  FAKE_API_KEY: fake.apiKey
"""


def test_sp11_long_line_streams_before_its_end(
        tmp_path, monkeypatch, cordon_factory):
    server_env(monkeypatch)
    c = cordon_factory(home=make_agents_home(
        tmp_path, extra={"slowclaude": SLOWCLAUDE}))
    s = Stream(c, "slowclaude", "slowline")
    try:
        s.start()
        assert s.status == 200
        # The line's head arrives while the agent is still writing it.
        buf = s.read_until(lambda b: b"first piece streams" in b)
        assert b"last words" not in buf and b"after the key" not in buf
        ev = s.finish()
    finally:
        s.close()
    out = text_of(ev)
    assert out == ("first piece streams then more words key *** "
                   "after the key last words\n")
    half = len(FILE_SECRET) // 2
    raw = s.buf.decode()
    for part in (FILE_SECRET, FILE_SECRET[:half], FILE_SECRET[half:]):
        assert part not in raw
    tokens = [e["text"] for e in ev if e["kind"] == "token"]
    assert len(tokens) >= 3  # several events, not one at the line's end


# ---- tool use and retries as events (SP-16, SP-12, VA-5) ----

TOOLCLAUDE = SLOWCLAUDE.replace("slowclaude", "toolclaude")


@pytest.fixture
def toolclaude(tmp_path, monkeypatch, cordon_factory):
    server_env(monkeypatch)
    return cordon_factory(home=make_agents_home(
        tmp_path, extra={"toolclaude": TOOLCLAUDE}))


def tool_events(ev):
    return [e for e in ev if e["kind"] in ("tool", "tool_result")]


def test_sp16_tool_use_streams_cleaned_and_scrubbed(toolclaude):
    """Tool calls and results are events of their own, between the
    tokens where the agent made them, each string through the cleaner
    and the scrubber; separate messages are separate paragraphs."""
    r, ev = run(toolclaude, "toolclaude", "tools please")
    assert r.status == 200, r
    assert text_of(ev) == ("I will use Bash.\n\nI will use Bash.\n\n"
                           "I will use Bash.\n\nDone.")
    t = tool_events(ev)
    assert [e["kind"] for e in t] == ["tool", "tool_result"] * 2 + ["tool"]
    # SP-11: the secret inside the Bash command is masked.
    assert t[0] == {"kind": "tool", "id": "toolu_01", "tool": "Bash",
                    "input": "curl -H 'X-Key: ***' http://x/"}
    # SP-10: the result is cleaned (no escape sequence).
    assert t[1] == {"kind": "tool_result", "id": "toolu_01", "ok": True,
                    "summary": "fetched 3 bytes\nred"}
    # A file tool shows its path, /home/<u>/ scrubbed.
    assert t[2]["tool"] == "Read" and t[2]["input"] == "~/notes.txt"
    # Bounds: 500 code points of a result, 300 of an input, then "…".
    assert t[3]["ok"] is False and t[3]["summary"].startswith("EACCES ")
    assert len(t[3]["summary"]) == 501 and t[3]["summary"][-1] == "…"
    assert t[4]["tool"] == "mcp__x__y" and t[4]["id"] == "toolu_03"
    assert t[4]["input"].startswith('{"q":"word word')
    assert len(t[4]["input"]) == 301 and t[4]["input"][-1] == "…"
    assert FILE_SECRET not in json.dumps(ev)
    # Each call comes after the text before it, before the text after.
    first = [e["kind"] for e in ev].index("tool")
    assert text_of(ev[:first]) == "I will use Bash."
    assert text_of(ev[:first + 2]) == "I will use Bash."


def test_sp16_fallback_messages_are_paragraphs(toolclaude):
    """Without partial messages, each assistant message's text is the
    fallback, and a new message (or text after a tool) is a new
    paragraph, not "I will use Bash.I will use Bash.Done."."""
    r, ev = run(toolclaude, "toolclaude", "nodelta tools")
    assert text_of(ev) == ("I will use Bash.\n\nI will use Bash.\n\n"
                           "I will use Bash.\n\nDone.")
    assert len(tool_events(ev)) == 5


def test_va5_note_keeps_tool_lines(toolclaude):
    """The saved note holds each tool call and result as a plain line,
    scrubbed, rendered literally like the rest of the response."""
    r, ev = run(toolclaude, "toolclaude", "tools please")
    assert ev[-1]["kind"] == "saved", ev
    data = (pathlib.Path(toolclaude.home) / "vault" /
            ev[-1]["path"]).read_text()
    assert FILE_SECRET not in data
    resp = nm.parse_note(data)["response"]
    assert resp.startswith("I will use Bash. [tool] Bash: curl -H 'X-Key: "
                           "***' http://x/ [result] ok: fetched 3 bytes red "
                           "I will use Bash. [tool] Read: ~/notes.txt "
                           "[result] error: EACCES denied"), resp
    assert resp.endswith("[tool] mcp__x__y: " + tool_events(ev)[-1]["input"]
                         + " Done.")


def test_sp12_api_retries_are_notices_and_name_network_none(toolclaude):
    """Claude Code's api_retry lines become notices whose text cordon
    builds from numbers (never the agent's error text); failing after
    them in a sandbox with network: none says so in the error."""
    r, ev = run(toolclaude, "toolclaude", "retry")
    notices = [e for e in ev if e["kind"] == "notice"]
    assert [n["text"] for n in notices] == [
        "the agent is retrying its model API (attempt 1 of 10: "
        "no connection)",
        "the agent is retrying its model API (attempt 2 of 10: "
        "no connection)"]
    err = [e for e in ev if e["kind"] == "error"][0]
    assert err["errorClass"] == "non-zero-exit"
    assert err["reason"] == ("the agent could not reach its model API: "
                             "this agent's sandbox has network: none")
    assert "ECONNREFUSED" not in r.body.decode()
    assert "sk-ant-leak" not in r.body.decode()


def test_sp12_network_reason_only_when_denied(
        tmp_path, monkeypatch, cordon_factory):
    """With network: allow, or without a retry, the reason is the exit,
    never the network."""
    server_env(monkeypatch)
    allow = TOOLCLAUDE.replace("toolclaude", "netclaude") + \
        "sandbox:\n  network: allow\n"
    c = cordon_factory(home=make_agents_home(
        tmp_path, extra={"netclaude": allow, "toolclaude": TOOLCLAUDE}))
    r, ev = run(c, "netclaude", "retry")
    err = [e for e in ev if e["kind"] == "error"][0]
    assert err["errorClass"] == "non-zero-exit", err
    assert err["reason"] == "exited with status 1", err
    assert [e["kind"] for e in ev].count("notice") == 2
