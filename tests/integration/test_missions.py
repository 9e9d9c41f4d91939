# Mission scenarios (MI-1 ... MI-4, API-7) on the spawner side,
# driven over HTTP and through `cordon check`, the audit trail and the
# vault: manual runs on the fake `hermes`, permission gates, outputs that
# fail half-way, timeouts, refused mission files, and the cron scheduler
# on an injected clock (CORDON_TEST_CLOCK_FILE) across spawner restarts.
# Touches only the temp dirs it creates and processes it starts.
import json
import os
import signal
import subprocess
import threading
import time
import uuid

import pytest

from agents_util import (FAKE_DIR, audit_lines, audit_records, make_agents_home,
                         post_json, server_env, wait_audit)
from audit_util import assert_nonce_absent, walk_values
from conftest import BUILD, HTTP_S, RESTART_S, SLOW, child_env, cordon_bin

MISSIONS_VAULT = os.path.join("vault", "00_Inbox", "cordon", "missions")
RESULT_KEYS = {"runId", "status", "durationMs", "outputsPersisted",
               "outputsEmitted", "errorClass"}
RECORD_KEYS = RESULT_KEYS | {"kind", "missionId", "trigger", "ts", "id",
                             "seq", "prev"}
SETTLE = 1.5 if SLOW else 0.75  # ticks are 250 ms on the test clock

GOOD = {
    "echo": """
id: echo
label: Echo
agent: hermes
prompt: "say {topic} {n} {loud} {tone}"
options:
  topic: {type: string, maxLength: 200}
  n:     {type: integer, min: 1, max: 10, default: 3}
  loud:  {type: boolean, default: false}
  tone:  {type: enum, values: [plain, formal], default: plain}
outputs:
  - {type: vault-note, folder: 00_Inbox/cordon/missions/echo, filenameHint: echo}
  - {type: event, event: echo.done}
permissions: [vault-write, event-emit]
trigger: {manual: true}
""",
    "slow": """
id: slow
label: Slow
agent: hermes
prompt: "sleep 30"
outputs:
  - {type: vault-note, folder: 00_Inbox/cordon/missions/slow, filenameHint: slow}
permissions: [vault-write]
timeoutMs: 1500
""",
    "noperm": """
id: noperm
label: No permission
agent: hermes
prompt: "say hello"
outputs:
  - {type: vault-note, folder: 00_Inbox/cordon/missions/noperm, filenameHint: x}
permissions: [event-emit]
""",
    "twoout": """
id: twoout
label: Two outputs
agent: hermes
prompt: "say twice"
outputs:
  - {type: vault-note, folder: 00_Inbox/cordon/missions/twoout/a, filenameHint: one}
  - {type: vault-note, folder: 00_Inbox/cordon/missions/twoout/b, filenameHint: two}
permissions: [vault-write]
""",
    "linkout": """
id: linkout
label: Through a symlink
agent: hermes
prompt: "say link"
outputs:
  - {type: vault-note, folder: 00_Inbox/cordon/missions/linkout, filenameHint: l}
permissions: [vault-write]
""",
}

# Refused at load: each disables its own mission only.
BAD = {
    # An option smuggled into another argv element: missions have one
    # prompt, rendered into the one prompt element; no args of their own.
    "smuggle": """
id: smuggle
label: Smuggle
agent: hermes
prompt: "say {model}"
args: ["--model", "{model}"]
options:
  model: {type: string, maxLength: 20}
outputs:
  - {type: event, event: x.y}
permissions: [event-emit]
""",
    "outside": """
id: outside
label: Outside
agent: hermes
prompt: "say out"
outputs:
  - {type: vault-note, folder: 00_Inbox/cordon/chats, filenameHint: x}
permissions: [vault-write]
""",
    "traverse": """
id: traverse
label: Traverse
agent: hermes
prompt: "say out"
outputs:
  - {type: vault-note, folder: 00_Inbox/cordon/missions/traverse/../../x, filenameHint: x}
permissions: [vault-write]
""",
    "dup1": """
id: twin
label: Twin one
agent: hermes
prompt: "say a"
outputs:
  - {type: event, event: x.y}
permissions: [event-emit]
""",
    "dup2": """
id: twin
label: Twin two
agent: hermes
prompt: "say b"
outputs:
  - {type: event, event: x.y}
permissions: [event-emit]
""",
    "nozone": """
id: nozone
label: No zone
agent: hermes
prompt: "say z"
outputs:
  - {type: event, event: x.y}
permissions: [event-emit]
trigger: {manual: true, cron: "0 1 * * *", timezone: Mars/Olympus_Mons}
""",
    "cronreq": """
id: cronreq
label: Cron with a required option
agent: hermes
prompt: "say {who}"
options:
  who: {type: string, maxLength: 20}
outputs:
  - {type: event, event: x.y}
permissions: [event-emit]
trigger: {manual: true, cron: "0 1 * * *"}
""",
    "noagent": """
id: noagent
label: No agent
agent: nobody-here
prompt: "say z"
outputs:
  - {type: event, event: x.y}
permissions: [event-emit]
""",
}


def write_missions(home, missions):
    d = home / "missions"
    d.mkdir(exist_ok=True)
    for name, text in missions.items():
        (d / f"{name}.yaml").write_text(text.lstrip())


def missions_home(tmp_path, name="home", bad=True):
    home = make_agents_home(tmp_path, name)
    write_missions(home, dict(GOOD, **(BAD if bad else {})))
    v = home / MISSIONS_VAULT
    (v / "twoout").mkdir(parents=True)
    # The second output's folder and linkout's own folder are symlinks
    # out of the vault: vaultd refuses them (RESOLVE_NO_SYMLINKS).
    outside = tmp_path / f"{name}.outside"
    outside.mkdir()
    os.symlink(outside, v / "twoout" / "b")
    os.symlink(outside, v / "linkout")
    return home


@pytest.fixture
def mc(tmp_path, monkeypatch, cordon_factory):
    server_env(monkeypatch)
    monkeypatch.delenv("CORDON_TEST_CLOCK_FILE", raising=False)
    return cordon_factory(home=missions_home(tmp_path))


def mission_run(c, mid, body=None, raw=None):
    return post_json(c, f"/api/missions/{mid}/run",
                     {} if body is None and raw is None else body, raw)


def files_under(path):
    out = []
    for root, _, names in os.walk(path):
        out.extend(os.path.join(root, n) for n in names)
    return sorted(out)


def mission_records(home, mid=None):
    return [r for r in audit_records(home, "mission.run")
            if mid is None or r["missionId"] == mid]


def check(home):
    # The PATH `cordon run` gets here (SP-1: check resolves binaries on it).
    env = dict(child_env(), PATH=FAKE_DIR + ":/usr/bin:/bin")
    return subprocess.run([cordon_bin(), "check", "--home", str(home)],
                          capture_output=True, text=True, env=env,
                          timeout=HTTP_S)


# ---- MI-1: loading, `cordon check` ----

def test_mi1_check_reports_each_bad_mission(tmp_path):
    home = missions_home(tmp_path)
    r = check(home)
    assert r.returncode == 1, r
    lines = r.stdout.splitlines()
    mdir = os.path.join(str(home.resolve()), "missions")
    for name in BAD:
        mine = [ln for ln in lines if ln.startswith(f"{mdir}/{name}.yaml:")]
        assert mine, (name, r.stdout)
        for ln in mine:  # FILE:LINE:COL: message
            rest = ln[len(f"{mdir}/{name}.yaml:"):]
            line, col, msg = rest.split(":", 2)
            assert line.isdigit() and col.isdigit() and msg.strip(), ln
    for name in GOOD:
        if name != "noperm":
            assert f"/{name}.yaml:" not in r.stdout, r.stdout
    assert_noperm_foreseen(r, mdir)
    assert any("both disabled" in ln for ln in lines
               if "/dup1.yaml:" in ln), r.stdout
    assert any("time zone" in ln for ln in lines if "/nozone.yaml:" in ln)
    assert any("default" in ln for ln in lines if "/cronreq.yaml:" in ln)
    assert any("agent" in ln for ln in lines if "/noagent.yaml:" in ln)
    # No value of a file is quoted back.
    assert "Mars" not in r.stdout and "nobody-here" not in r.stdout
    assert "--model" not in r.stdout


def assert_noperm_foreseen(r, mdir):
    """MI-2: the mission loads, but check says its runs would be refused."""
    lines = [ln for ln in r.stdout.splitlines()
             if ln.startswith(f"{mdir}/noperm.yaml:")]
    assert len(lines) == 1 and lines[0].endswith(
        ": permissions: a vault-note output needs vault-write; runs would "
        "be refused (permission-denied)"), r.stdout


def test_mi1_check_good_missions_only(tmp_path):
    home = missions_home(tmp_path, bad=False)
    r = check(home)
    mdir = os.path.join(str(home.resolve()), "missions")
    # Only what runs would refuse: noperm's missing permission (and the
    # agents made broken on purpose: a missing binary, an unset secret).
    assert r.returncode == 1, r
    assert_noperm_foreseen(r, mdir)
    assert [ln for ln in r.stdout.splitlines() if ln.startswith(mdir)
            and "/noperm.yaml:" not in ln] == [], r.stdout
    (home / "missions" / "noperm.yaml").unlink()
    r = check(home)
    assert r.stdout.splitlines()[-1] == f"ok {len(GOOD) - 1} missions"


def test_mi1_list_has_valid_missions_only_and_nothing_private(mc):
    r = mc.request("GET", "/api/missions")
    assert r.status == 200, r
    body = r.json()
    assert body["ok"] is True
    by = {m["id"]: m for m in body["missions"]}
    assert set(by) == set(GOOD)  # every refused file is disabled
    e = by["echo"]
    assert e["agent"] == "hermes" and e["manual"] is True
    assert "cron" not in e and e["timezone"] == "UTC"
    assert e["outputs"] == [{"type": "vault-note"}, {"type": "event"}]
    assert e["permissions"] == ["vault-write", "event-emit"]
    assert e["running"] is False and "lastRun" not in e
    assert "elapsedMs" not in e
    opts = {o["name"]: o for o in e["options"]}
    assert opts["topic"] == {"name": "topic", "type": "string",
                             "required": True, "maxLength": 200}
    assert opts["n"]["min"] == 1 and opts["n"]["default"] == 3
    assert opts["tone"]["values"] == ["plain", "formal"]
    # MI-2: never a folder or a hint; missions get no path.
    raw = r.body.decode()
    assert "00_Inbox" not in raw and "filenameHint" not in raw
    assert "folder" not in raw and "hint" not in raw
    # The spawner logged each refusal as missions/FILE:LINE:COL.
    err = mc.stderr()
    for name in BAD:
        assert f"missions/{name}.yaml:" in err, (name, err)


# ---- API-7 / MI-3: ids and bodies ----

@pytest.mark.parametrize("mid,code,status", [
    ("nope", "mission-not-found", 404),
    ("twin", "mission-not-found", 404),      # disabled: used twice
    ("smuggle", "mission-not-found", 404),   # disabled at load
    ("%ZZ", "mission-id-malformed", 400),
    ("%2e%2e", "mission-id-malformed", 400),
    ("Echo", "mission-id-malformed", 400),
    # outside the router's segment charset or length: the same answer
    ("echo+", "mission-id-malformed", 400),
    ("echo;x", "mission-id-malformed", 400),
    ("e" * 129, "mission-id-malformed", 400),
    ("e" * 300, "mission-id-malformed", 400),
])
def test_api7_ids(mc, mid, code, status):
    r = mission_run(mc, mid)
    assert r.status == status, r
    assert r.json()["error"] == code


@pytest.mark.parametrize("raw", [
    b"{foo:1}", b'{"foo":1}', b'{"options":[]}', b'{"options":1}',
    b'{"options":{},"x":1}', b"[]", b"",
])
def test_api7_bodies(mc, raw):
    before = len(audit_lines(mc.home))
    r = mission_run(mc, "echo", raw=raw)
    assert r.status == 400, r
    assert r.json()["error"] == "invalid-body"
    assert not [x for x in audit_records(mc.home, "mission.run")]
    assert len(audit_lines(mc.home)) >= before


def test_mi3_options_over_the_wire_bound(mc):
    """Options the spawner's channel would refuse (over 256 KiB once
    written) are refused by the broker as invalid options, not answered
    500 internal with a refusal in the spawner's log."""
    r = mission_run(mc, "echo", {"options": {"topic": "x" * 300000}})
    assert r.status == 400 and r.json() == {
        "ok": False, "error": "mission-options-invalid"}, r
    assert "refused mission-run message" not in mc.stderr()


def test_mi3_options_invalid_never_echoed(mc):
    nonce = uuid.uuid4().hex
    hostile = [
        {"topic": f"x{nonce}", "nope": f"sk-ant-api03-{nonce}"},  # unknown
        {"topic": f"/etc/{nonce}" * 40},                # over maxLength
        {"topic": f"a{nonce}", "n": 11},                # out of bounds
        {"topic": f"a{nonce}", "tone": f"loud{nonce}"},  # not in the enum
        {"topic": f"a{nonce}", "loud": "true"},         # wrong type
        {"topic": f"a\n{nonce}"},                       # control character
        {"n": 2},                                       # missing required
    ]
    for opts in hostile:
        r = mission_run(mc, "echo", {"options": opts})
        assert r.status == 400, (opts, r)
        assert r.json() == {"ok": False,
                            "error": "mission-options-invalid"}, r
        assert nonce not in r.body.decode()
    recs = mission_records(mc.home, "echo")
    assert recs and all(x["status"] == "error" and
                        x["errorClass"] == "options-invalid" for x in recs)
    assert not audit_records(mc.home, "agent.invoke")
    assert_nonce_absent(os.path.join(mc.home, "audit"), nonce)
    assert nonce not in mc.stderr()
    assert files_under(os.path.join(mc.home, MISSIONS_VAULT, "echo")) == []


# ---- runs ----

def test_mi_manual_run_writes_note_and_neutral_record(mc):
    r = mission_run(mc, "echo", {"options": {"topic": "weather", "n": 2}})
    assert r.status == 200, r
    b = r.json()
    assert b["ok"] is True and b["status"] == "success", b
    assert b["outputsPersisted"] == 1 and b["outputsEmitted"] == 1
    assert set(b) <= RESULT_KEYS | {"ok"} and "errorClass" not in b
    notes = files_under(os.path.join(mc.home, MISSIONS_VAULT, "echo"))
    assert len(notes) == 1 and os.path.basename(notes[0]).startswith("echo-")
    with open(notes[0]) as f:
        text = f.read()
    assert "say weather 2 false plain" in text  # the rendered prompt
    rec = wait_audit(mc.home, lambda x: x["kind"] == "mission.run" and
                     x["runId"] == b["runId"])[0]
    assert set(rec) <= RECORD_KEYS, rec
    assert rec["trigger"] == "manual" and rec["status"] == "success"
    assert rec["outputsPersisted"] == 1 and rec["outputsEmitted"] == 1
    # The agent's own records, as for chat runs, under the same runId.
    inv = [x for x in audit_records(mc.home, "agent.invoke")
           if x["runId"] == b["runId"]]
    assert len(inv) == 1 and inv[0]["argsRedacted"] == [
        "-z", "[PROMPT_REDACTED]"]
    assert [x for x in audit_records(mc.home, "agent.invoke.complete")
            if x["runId"] == b["runId"]]
    w = [x for x in audit_records(mc.home, "vault.write")
         if x.get("missionId") == "echo"]
    assert len(w) == 1 and "path" not in w[0]
    # lastRun in the listing, neutral too.
    m = {x["id"]: x for x in mc.request("GET", "/api/missions")
         .json()["missions"]}["echo"]
    last = m["lastRun"]
    assert last["runId"] == b["runId"] and last["trigger"] == "manual"
    assert last["status"] == "success" and last["finishedAt"] > 0


def test_mi3_au5_hostile_option_values_stay_out_of_audit(mc):
    nonce = uuid.uuid4().hex
    for topic in (f"sk-ant-api03-{nonce}AAAA", f"/home/alice/{nonce}/.ssh",
                  f"--flag={nonce}", f"{{topic}}{nonce}"):
        r = mission_run(mc, "echo", {"options": {"topic": topic}})
        assert r.status == 200, (topic, r)
        assert r.json()["status"] == "success"
        assert nonce not in r.body.decode()
    listing = mc.request("GET", "/api/missions").body.decode()
    assert nonce not in listing
    assert_nonce_absent(os.path.join(mc.home, "audit"), nonce)
    assert nonce not in mc.stderr()


def test_mi_timeout(mc):
    t0 = time.monotonic()
    r = mission_run(mc, "slow")
    assert r.status == 200, r
    b = r.json()
    assert b["ok"] is False and b["status"] == "error"
    assert b["errorClass"] == "timeout" and b["outputsPersisted"] == 0
    assert time.monotonic() - t0 < 15
    assert files_under(os.path.join(mc.home, MISSIONS_VAULT, "slow")) == []
    rec = wait_audit(mc.home, lambda x: x["kind"] == "mission.run" and
                     x["runId"] == b["runId"])[0]
    assert rec["errorClass"] == "timeout" and rec["status"] == "error"
    assert [x for x in audit_records(mc.home, "agent.invoke.error")
            if x["runId"] == b["runId"] and x["errorClass"] == "timeout"]


def test_mi_busy(mc):
    first = {}

    def bg():
        first["r"] = mission_run(mc, "slow")

    t = threading.Thread(target=bg)
    t.start()
    deadline = time.monotonic() + HTTP_S
    while time.monotonic() < deadline:
        ms = {m["id"]: m for m in mc.request("GET", "/api/missions")
              .json()["missions"]}
        if ms["slow"]["running"]:
            break
        time.sleep(0.05)
    # API-7: a running mission says for how long, on the spawner's clock.
    assert isinstance(ms["slow"]["elapsedMs"], int), ms["slow"]
    assert 0 <= ms["slow"]["elapsedMs"] < 30000, ms["slow"]
    r = mission_run(mc, "slow")
    t.join(HTTP_S)
    assert r.status == 409 and r.json()["error"] == "mission-busy", r
    assert first["r"].json()["errorClass"] == "timeout"


def test_api4_mission_run_not_cancelled_by_its_run_id(mc):
    """API-4: a mission's run has no stream: its run id, seen in its
    agent.invoke record, cancels nothing, and the run ends on its own."""
    first = {}

    def bg():
        first["r"] = mission_run(mc, "slow")

    t = threading.Thread(target=bg)
    t.start()
    inv = wait_audit(mc.home, lambda x: x["kind"] == "agent.invoke")[0]
    time.sleep(0.5)  # its child runs (the spawn follows the record's ack)
    r = post_json(mc, f"/api/runs/{inv['runId']}/cancel", {})
    t.join(HTTP_S)
    assert r.status == 404 and r.json()["error"] == "unknown-run", r
    b = first["r"].json()
    assert b["runId"] == inv["runId"] and b["errorClass"] == "timeout", b


def test_mi2_permission_denied_nothing_runs_or_is_written(mc):
    r = mission_run(mc, "noperm")
    assert r.status == 200, r
    b = r.json()
    assert b["ok"] is False and b["status"] == "denied"
    assert b["errorClass"] == "permission-denied"
    assert b["outputsPersisted"] == 0
    assert files_under(os.path.join(mc.home, MISSIONS_VAULT, "noperm")) == []
    assert not os.path.exists(os.path.join(mc.home, MISSIONS_VAULT,
                                           "noperm"))
    rec = wait_audit(mc.home, lambda x: x["kind"] == "mission.run" and
                     x["runId"] == b["runId"])[0]
    assert rec["status"] == "denied"
    assert rec["errorClass"] == "permission-denied"
    assert not [x for x in audit_records(mc.home, "agent.invoke")
                if x["runId"] == b["runId"]]


def test_mi_second_output_fails_first_persisted(mc, tmp_path):
    r = mission_run(mc, "twoout")
    assert r.status == 200, r
    b = r.json()
    assert b["status"] == "error" and b["errorClass"] == "output-failed"
    assert b["outputsPersisted"] == 1
    a = files_under(os.path.join(mc.home, MISSIONS_VAULT, "twoout", "a"))
    assert len(a) == 1
    assert os.listdir(tmp_path / "home.outside") == []
    rec = wait_audit(mc.home, lambda x: x["kind"] == "mission.run" and
                     x["runId"] == b["runId"])[0]
    assert rec["outputsPersisted"] == 1
    assert rec["errorClass"] == "output-failed"


def test_mi_output_folder_through_symlink_refused(mc, tmp_path):
    r = mission_run(mc, "linkout")
    assert r.status == 200, r
    b = r.json()
    assert b["status"] == "error" and b["errorClass"] == "output-failed"
    assert b["outputsPersisted"] == 0
    assert os.listdir(tmp_path / "home.outside") == []


def test_mi_demo_missions_run(cordon_factory, tmp_path, monkeypatch):
    """The demo home ships daily-summary and weekly-review; both run."""
    monkeypatch.delenv("CORDON_TEST_CLOCK_FILE", raising=False)
    home = tmp_path / "demo"
    c = cordon_factory(extra_args=("--allow-root", "--demo"), home=home)
    assert check(home).returncode == 0
    ids = {m["id"] for m in c.request("GET", "/api/missions")
           .json()["missions"]}
    assert ids == {"daily-summary", "weekly-review"}
    for mid, body in (("daily-summary", {}),
                      ("weekly-review", {"options": {"project": "alpha",
                                                     "tone": "formal"}})):
        r = mission_run(c, mid, body)
        assert r.status == 200, r
        assert r.json()["status"] == "success", r
        assert len(files_under(os.path.join(str(home), MISSIONS_VAULT,
                                            mid))) == 1


# ---- the scheduler ----

CRON = {
    "tick": """
id: tick
label: Every minute
agent: hermes
prompt: "say tick"
outputs:
  - {type: event, event: tick.done}
permissions: [event-emit]
trigger: {manual: false, cron: "* * * * *", timezone: Europe/Berlin}
""",
    "hourly": """
id: hourly
label: Hourly
agent: hermes
prompt: "say hourly"
outputs:
  - {type: event, event: hourly.done}
permissions: [event-emit]
trigger: {manual: true, cron: "0 * * * *", timezone: UTC}
""",
    "hourlycatch": """
id: hourlycatch
label: Hourly, caught up
agent: hermes
prompt: "say caught"
outputs:
  - {type: event, event: hourly.done}
permissions: [event-emit]
trigger: {manual: true, cron: "0 * * * *", timezone: UTC}
catchUp: true
""",
}

T0 = 1795669200  # 2026-11-26T05:00:00Z: minute 0


def set_clock(path, t):
    tmp = str(path) + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{t}\n")
    os.replace(tmp, path)


@pytest.fixture
def clocked(tmp_path, monkeypatch):
    server_env(monkeypatch)
    clock = tmp_path / "clock"
    monkeypatch.setenv("CORDON_TEST_CLOCK_FILE", str(clock))
    return clock


def wait_records(home, pred, n, bound=HTTP_S):
    deadline = time.monotonic() + bound
    while True:
        recs = [r for r in mission_records(home) if pred(r)]
        if len(recs) >= n or time.monotonic() > deadline:
            return recs
        time.sleep(0.05)


def test_cron_once_per_slot_across_spawner_restart(clocked, tmp_path,
                                                   cordon_factory):
    home = make_agents_home(tmp_path)
    write_missions(home, {"tick": CRON["tick"]})
    set_clock(clocked, T0 + 5)
    c = cordon_factory(home=home)
    is_tick = lambda r: r["missionId"] == "tick"  # noqa: E731
    recs = wait_records(home, is_tick, 1)
    assert len(recs) == 1, c.stderr()
    assert recs[0]["trigger"] == "cron" and recs[0]["status"] == "success"
    with open(os.path.join(str(home), "state", "sched", "missions.json")) as f:
        assert json.load(f)["tick"]["lastSlot"] == T0
    # The same slot, many ticks later and across a SIGKILLed spawner.
    old = c.daemon_pids()["spawner"]
    os.kill(old, signal.SIGKILL)
    c.health_when(lambda h: any(d["name"] == "spawner" and d["up"] and
                                d.get("pid") not in (None, old)
                                for d in h["daemons"]), RESTART_S)
    set_clock(clocked, T0 + 50)
    time.sleep(SETTLE)
    assert len(wait_records(home, is_tick, 2, SETTLE)) == 1
    # The next slot fires exactly once.
    set_clock(clocked, T0 + 61)
    recs = wait_records(home, is_tick, 2)
    time.sleep(SETTLE)
    recs = [r for r in mission_records(home) if is_tick(r)]
    assert len(recs) == 2, recs
    assert len({r["runId"] for r in recs}) == 2
    # manual: false: the API refuses a manual run.
    r = mission_run(c, "tick")
    assert r.status == 404 and r.json()["error"] == "mission-not-found"


def test_cron_missed_slot_skipped_or_caught_up(clocked, tmp_path,
                                               cordon_factory):
    home = make_agents_home(tmp_path)
    write_missions(home, {"hourly": CRON["hourly"],
                          "hourlycatch": CRON["hourlycatch"]})
    set_clock(clocked, T0 - 30)  # 04:59:30: no slot matches
    c = cordon_factory(home=home)
    state = os.path.join(str(home), "state", "sched", "missions.json")
    deadline = time.monotonic() + HTTP_S
    while time.monotonic() < deadline:
        try:
            with open(state) as f:
                st = json.load(f)
            if {"hourly", "hourlycatch"} <= set(st):
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    assert st["hourly"]["lastSlot"] == T0 - 60
    assert os.stat(os.path.dirname(state)).st_mode & 0o777 == 0o700
    assert c.stop() == 0
    c.close()
    # 05:00 passes while cordon is down.
    set_clock(clocked, T0 + 190)
    c2 = cordon_factory(home=home)
    skipped = wait_records(home, lambda r: r["missionId"] == "hourly", 1)
    caught = wait_records(home, lambda r: r["missionId"] == "hourlycatch", 1)
    time.sleep(SETTLE)
    assert len(mission_records(home, "hourly")) == 1
    assert len(mission_records(home, "hourlycatch")) == 1
    assert skipped[0]["status"] == "skipped"
    assert skipped[0]["errorClass"] == "skipped-missed"
    assert skipped[0]["trigger"] == "cron"
    assert caught[0]["status"] == "success" and caught[0]["trigger"] == "cron"
    ms = {m["id"]: m for m in c2.request("GET", "/api/missions")
          .json()["missions"]}
    assert ms["hourly"]["lastRun"]["status"] == "skipped"
    assert ms["hourly"]["cron"] == "0 * * * *"
    # The next hour's slot runs both, once each.
    set_clock(clocked, T0 + 3600 + 1)
    wait_records(home, lambda r: r["missionId"] == "hourly" and
                 r["status"] == "success", 1)
    time.sleep(SETTLE)
    assert len(mission_records(home, "hourly")) == 2
    assert len(mission_records(home, "hourlycatch")) == 2
    for rec in mission_records(home):
        for v in walk_values(rec):
            assert "say" not in str(v)


def test_cron_slot_while_running_is_skipped_busy(clocked, tmp_path,
                                                 cordon_factory):
    home = make_agents_home(tmp_path)
    write_missions(home, {"long": """
id: long
label: Long
agent: hermes
prompt: "sleep 30"
outputs:
  - {type: event, event: long.done}
permissions: [event-emit]
trigger: {manual: true, cron: "* * * * *"}
timeoutMs: 60000
"""})
    set_clock(clocked, T0 + 5)
    c = cordon_factory(home=home)
    deadline = time.monotonic() + HTTP_S
    while time.monotonic() < deadline:
        m = c.request("GET", "/api/missions").json()["missions"][0]
        if m["running"]:
            break
        time.sleep(0.05)
    assert m["running"], c.stderr()
    set_clock(clocked, T0 + 65)
    recs = wait_records(home, lambda r: r["missionId"] == "long", 1)
    assert len(recs) == 1, recs
    assert recs[0]["status"] == "skipped" and recs[0]["errorClass"] == "busy"
    # A manual run meanwhile is refused too.
    r = mission_run(c, "long")
    assert r.status == 409 and r.json()["error"] == "mission-busy", r


def test_mi1_too_many_missions_same_choice_everywhere(tmp_path, monkeypatch,
                                                      cordon_factory):
    """MI-1: past 64 mission files the first 64 by name load and the rest
    are named as ignored, whatever order the filesystem lists them in."""
    server_env(monkeypatch)
    monkeypatch.delenv("CORDON_TEST_CLOCK_FILE", raising=False)
    home = make_agents_home(tmp_path)
    # Created in reverse, so directory order is unlikely to be name order.
    many = {}
    for i in reversed(range(70)):
        many[f"m{i:02d}"] = (
            f"id: m{i:02d}\nlabel: M\nagent: hermes\nprompt: hi\n"
            "outputs:\n  - {type: vault-note, folder: "
            f"00_Inbox/cordon/missions/m{i:02d}, filenameHint: m}}\n"
            "permissions: [vault-write]\n")
    write_missions(home, many)
    r = check(home)
    assert r.returncode == 1
    ignored = sorted(l.split(":")[0].split("/")[-1]
                     for l in r.stdout.splitlines()
                     if "too many missions; file ignored" in l)
    assert ignored == [f"m{i}.yaml" for i in range(64, 70)], r.stdout
    c = cordon_factory(home=home)
    ids = sorted(m["id"] for m in c.request("GET", "/api/missions")
                 .json()["missions"])
    assert ids == [f"m{i:02d}" for i in range(64)]


def test_api7_router_malformed_id_recorded_under_route(mc):
    """A segment the router's charset refuses is answered by the route,
    so its http.request record names the route template, never the id."""
    r = mission_run(mc, "echo+")
    assert (r.status, r.json()["error"]) == (400, "mission-id-malformed")
    deadline = time.monotonic() + 5
    while True:  # the record is written after the answer went out
        recs = [x for x in audit_records(mc.home, "http.request")
                if x["status"] == 400 and x["method"] == "POST"]
        if recs or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert recs and recs[-1]["route"] == "/api/missions/{}/run", recs
    assert b"echo+" not in b"".join(audit_lines(mc.home))
