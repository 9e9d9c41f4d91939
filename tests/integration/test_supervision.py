# SU-1, SU-2, API-1: cordond starts, confines, reports, restarts and stops
# its five daemons; refuses bad usage and bad config before starting any.
import glob
import json
import os
import re
import signal
import time

import pytest

from conftest import (BACK_S, DAEMONS, HTTP_S, RESTART_S, make_home,
                      proc_starttime, proc_status, run_once, uid_of)


def daemon(health, name):
    (d,) = [d for d in health["daemons"] if d["name"] == name]
    return d


# ---- API-1: health ----

def test_api1_health_five_daemons_in_order(cordon):
    h = cordon.health()
    assert h["ok"] is True
    assert h["version"] == "0.1.0"
    assert h["status"] == "ok"
    assert [d["name"] for d in h["daemons"]] == DAEMONS
    pids = set()
    for d in h["daemons"]:
        assert d["up"] is True, d
        assert d["restarts"] == 0, d
        assert isinstance(d["pid"], int) and d["pid"] > 1, d
        assert d["pid"] != cordon.pid
        assert proc_starttime(d["pid"]) is not None, d
        pids.add(d["pid"])
    assert len(pids) == len(DAEMONS)


def test_api1_health_content_type_and_no_store(cordon):
    r = cordon.request()
    assert r.status == 200
    assert r.header("Content-Type").startswith("application/json")
    assert r.header("Cache-Control") == "no-store"
    assert r.header("X-Content-Type-Options") == "nosniff"


def test_su1_daemons_are_children_of_cordond(cordon):
    for name, pid in cordon.daemon_pids().items():
        st = proc_status(pid)
        assert int(st["PPid"]) == cordon.pid, (name, st["PPid"])
        # fresh exec of its own binary, not a fork of cordond
        exe = os.readlink(f"/proc/{pid}/exe")
        assert os.path.basename(exe) == f"cordon-{name}", exe


# ---- SU-2: confinement, seen from /proc and self-reported ----

def test_su2_proc_status_confined(cordon):
    for name, pid in cordon.daemon_pids().items():
        st = proc_status(pid)
        assert st["NoNewPrivs"] == "1", (name, st["NoNewPrivs"])
        assert st["Seccomp"] == "2", (name, st["Seccomp"])
        assert st["CapEff"] == "0000000000000000", (name, st["CapEff"])
        assert st["CapPrm"] == "0000000000000000", (name, st["CapPrm"])


def test_su2_health_agrees_with_proc(cordon):
    h = cordon.health()
    for d in h["daemons"]:
        st = proc_status(d["pid"])
        uid = int(st["Uid"].split()[0])
        gid = int(st["Gid"].split()[0])
        s, o = d["status"], d["observed"]
        assert s["pid"] == d["pid"]
        assert s["uid"] == uid and o["uid"] == uid, (d, st["Uid"])
        assert s["gid"] == gid, (d, st["Gid"])
        assert s["capEff"] == st["CapEff"] == o["capEff"], d
        assert s["noNewPrivs"] == int(st["NoNewPrivs"]) == \
            o["noNewPrivs"] == 1, d
        assert s["seccomp"] == int(st["Seccomp"]) == o["seccomp"] == 2, d
        assert s["landlock"] in ("on", "off"), d
        assert isinstance(s["landlockAbi"], int), d
        if s["landlock"] == "on":
            assert s["landlockAbi"] >= 1, d
    # SBX-5: health says which sandbox layers the host offers agents; the
    # spawner, whose Landlock every agent would inherit, has none itself.
    sp = [d for d in h["daemons"] if d["name"] == "spawner"][0]
    host = sp["status"]["sandboxHost"]
    assert set(host) == {"landlockAbi", "userns", "seccomp", "privateTmp"}
    assert host["landlockAbi"] == sp["status"]["landlockAbi"]
    assert host["seccomp"] is True and host["privateTmp"] is True
    assert sp["status"]["landlock"] == "off"
    vd = [d for d in h["daemons"] if d["name"] == "vaultd"][0]
    assert vd["status"]["vaultResolve"] == "openat2"


def test_su2_broker_runs_as_nobody(cordon):
    nobody = uid_of("nobody")
    h = cordon.health()
    b = daemon(h, "broker")
    st = proc_status(b["pid"])
    assert [int(x) for x in st["Uid"].split()] == [nobody] * 4, st["Uid"]
    assert b["status"]["uid"] == nobody
    # --allow-root: the others keep uid 0, without capabilities
    for name in ("auditd", "vaultd", "spawner"):
        assert daemon(h, name)["status"]["uid"] == 0


# ---- SU-1: restart with backoff ----

@pytest.mark.parametrize("victim", DAEMONS)
def test_su1_kill9_daemon_restarts(cordon, victim):
    before = cordon.daemon_pids()
    old = before[victim]
    os.kill(old, signal.SIGKILL)
    t0 = time.monotonic()

    def back(h):
        d = daemon(h, victim)
        return d["up"] and d.get("pid") not in (None, old) and \
            d["restarts"] == 1 and h["status"] == "ok"

    h = cordon.health_when(back, RESTART_S)
    elapsed = time.monotonic() - t0
    d = daemon(h, victim)
    assert proc_starttime(d["pid"]) is not None
    st = proc_status(d["pid"])
    assert (st["NoNewPrivs"], st["Seccomp"], st["CapEff"]) == \
        ("1", "2", "0000000000000000"), st
    for other in DAEMONS:
        if other != victim:
            o = daemon(h, other)
            assert o["restarts"] == 0 and o["pid"] == before[other], o
    print(f"{victim} back after {elapsed:.3f}s")
    assert elapsed <= BACK_S, f"{victim} back only after {elapsed:.3f}s"


def test_su1_kill9_each_daemon_in_turn(cordon):
    for i, victim in enumerate(DAEMONS):
        old = cordon.daemon_pids()[victim]
        os.kill(old, signal.SIGKILL)
        cordon.health_when(
            lambda h: daemon(h, victim)["up"] and
            daemon(h, victim).get("pid") != old and
            daemon(h, victim)["restarts"] == 1 and h["status"] == "ok")
    h = cordon.health()
    assert [d["restarts"] for d in h["daemons"]] == [1] * len(DAEMONS)
    # the token survives a broker restart; the old broker pid is gone
    assert all(d["up"] for d in h["daemons"])


def test_su1_broker_restart_keeps_token_and_perimeter(cordon):
    old = cordon.daemon_pids()["broker"]
    os.kill(old, signal.SIGKILL)
    cordon.health_when(lambda h: daemon(h, "broker")["restarts"] == 1 and
                       daemon(h, "broker")["pid"] != old)
    r = cordon.request(auth=False)
    assert (r.status, r.body) == (401, b'{"ok":false,"error":"unauthorized"}')
    r = cordon.request(host="evil.example:%d" % cordon.port)
    assert r.status == 421


# ---- SU-1: stop ----

def test_su1_sigterm_exit0_all_daemons_gone(cordon):
    pids = cordon.daemon_pids()
    starts = {p: proc_starttime(p) for p in pids.values()}
    rc = cordon.stop(signal.SIGTERM)
    assert rc == 0, cordon.stderr()
    for name, pid in pids.items():
        assert proc_starttime(pid) != starts[pid], f"{name} ({pid}) alive"
    assert not cordon.leftovers()


def test_su1_sigint_exit0(cordon):
    pids = cordon.daemon_pids()
    starts = {p: proc_starttime(p) for p in pids.values()}
    assert cordon.stop(signal.SIGINT) == 0, cordon.stderr()
    for pid in pids.values():
        assert proc_starttime(pid) != starts[pid]


def audit_records(home):
    recs = []
    for path in sorted(glob.glob(os.path.join(home, "audit", "*.jsonl"))):
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}\.jsonl",
                            os.path.basename(path)), path
        with open(path, "rb") as f:
            data = f.read()
        assert data.endswith(b"\n"), path
        for line in data.split(b"\n")[:-1]:
            recs.append(json.loads(line))  # each line one JSON object
    return recs


def test_su1_audit_boot_then_shutdown(cordon):
    recs = audit_records(cordon.home)
    assert [r["kind"] for r in recs] == ["system.boot"]
    assert cordon.stop() == 0
    recs = audit_records(cordon.home)
    assert [r["kind"] for r in recs] == ["system.boot", "system.shutdown"]
    boot, down = recs
    ts = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"
    for r in recs:
        assert re.fullmatch(ts, r["ts"]), r
        assert isinstance(r["id"], str) and r["id"], r
        assert list(r)[:5] == ["ts", "id", "seq", "prev", "kind"], r
    assert boot["version"] == "0.1.0"
    assert isinstance(down["reason"], str) and down["reason"]
    assert boot["id"] != down["id"]
    assert boot["ts"] <= down["ts"]


def test_su1_token_and_port_files(cordon):
    run = os.path.join(cordon.home, "run")
    for name in ("token", "port"):
        st = os.stat(os.path.join(run, name))
        assert st.st_mode & 0o777 == 0o600, (name, oct(st.st_mode))
    assert re.fullmatch(r"[0-9a-f]{64}", cordon.token)
    with open(os.path.join(run, "port")) as f:
        assert int(f.read().strip()) == cordon.port
    # PER-5: the token is never on argv or in the environment
    for pid in [cordon.pid] + list(cordon.daemon_pids().values()):
        for what in ("cmdline", "environ"):
            with open(f"/proc/{pid}/{what}", "rb") as f:
                assert cordon.token.encode() not in f.read(), (pid, what)


# ---- bad usage and config: exit 2, nothing started ----

def assert_nothing_started(home):
    assert not os.path.exists(os.path.join(home, "run")), \
        os.listdir(home)
    assert not os.path.exists(os.path.join(home, "audit")), \
        os.listdir(home)


def test_su1_root_without_user_or_allow_root_exit2(tmp_path):
    if os.getuid() != 0:
        pytest.skip("needs root")
    home = make_home(tmp_path)
    p = run_once(["run", "--home", str(home), "--port", "0"])
    assert p.returncode == 2, p.stderr
    assert p.stdout == b""
    assert b"root" in p.stderr
    assert_nothing_started(home)


def test_su1_unknown_user_exit2(tmp_path):
    if os.getuid() != 0:
        pytest.skip("needs root")
    home = make_home(tmp_path)
    p = run_once(["run", "--home", str(home), "--port", "0", "--user",
                  "no-such-user-cordon"])
    assert p.returncode == 2, p.stderr
    assert p.stdout == b""
    assert_nothing_started(home)


def test_su1_user_root_is_a_root_rule_exit2(tmp_path):
    """--user root would run agents as root without saying so: a root
    rule, exit 2 like the others (it ran into the runs' checks, exit 1)."""
    if os.getuid() != 0:
        pytest.skip("needs root")
    home = make_home(tmp_path)
    p = run_once(["run", "--home", str(home), "--port", "0", "--user",
                  "root"])
    assert p.returncode == 2, p.stderr
    assert b"--allow-root" in p.stderr, p.stderr
    assert_nothing_started(home)


@pytest.mark.parametrize("port", ["abc", "-1", "65536", "80x", "",
                                  "0x10", "1.5", "99999999999999999999"])
def test_su1_port_garbage_exit2(tmp_path, port):
    home = make_home(tmp_path)
    p = run_once(["run", "--home", str(home), "--port", port,
                  "--allow-root"])
    assert not p.started
    assert p.returncode == 2, p.stderr
    assert p.stdout == b""
    assert p.stderr.strip() != b""
    assert_nothing_started(home)


@pytest.mark.parametrize("port", [" 0", "+0", "\t0"])
def test_su1_port_not_plain_digits_exit2(tmp_path, port):
    # "0..65535" means decimal digits; strtol's leading blanks and sign
    # are not part of that.
    home = make_home(tmp_path)
    p = run_once(["run", "--home", str(home), "--port", port,
                  "--allow-root"])
    assert not p.started, f"--port {port!r} accepted and cordon served"
    assert p.returncode == 2, p.stderr
    assert_nothing_started(home)


def test_su1_unknown_argument_exit2(tmp_path):
    home = make_home(tmp_path)
    p = run_once(["run", "--home", str(home), "--allow-root", "--bogus"])
    assert p.returncode == 2, p.stderr
    assert_nothing_started(home)


# (yaml text, line, column) of the offending key
BAD_YAML = [
    ("bogus: 1\n", 1, 1),
    ("listen:\n  port: 0\nbogus: 1\n", 3, 1),
    ("listen:\n  prot: 5\n", 2, 3),
    ("listen:\n  port: 0\n  extra:\n    a: 1\n", 3, 3),
    ("audit:\n  retentionDays: 3\n  nope: x\n", 3, 3),
    ("# comment\n\nvault:\n    root2: /tmp\n", 4, 5),
    ("broker:\n  user: nobody\n  group: nogroup\n", 3, 3),
    ("zzz:\n", 1, 1),
    ("spawner:\n  maxRuns: 8\n  maxruns: 8\n", 3, 3),
]


# SP-14 bounds are configurable within ceilings; outside them: exit 2 at
# the value's key, nothing started.
@pytest.mark.parametrize("text,line,col", [
    ("spawner:\n  maxRuns: 0\n", 2, 3),
    ("spawner:\n  maxRuns: 257\n", 2, 3),
    ("spawner:\n  maxRunsPerAgent: 65\n", 2, 3),
    ("spawner:\n  maxRunsPerAgent: \"4\"\n", 2, 3),
    ("audit:\n  retentionDays: -1\n", 2, 3),
])
def test_sp14_config_bounds_exit2(tmp_path, text, line, col):
    home = make_home(tmp_path)
    (home / "cordon.yaml").write_text(text)
    p = run_once(["run", "--home", str(home), "--port", "0",
                  "--allow-root"])
    assert p.returncode == 2, p.stderr
    m = re.search(r"cordon\.yaml:(\d+):(\d+): ", p.stderr.decode())
    assert m and (int(m.group(1)), int(m.group(2))) == (line, col), p.stderr
    assert_nothing_started(home)


@pytest.mark.parametrize("text,line,col", BAD_YAML)
def test_su1_bad_config_unknown_key_exit2(tmp_path, text, line, col):
    home = make_home(tmp_path)
    (home / "cordon.yaml").write_text(text)
    p = run_once(["run", "--home", str(home), "--port", "0",
                  "--allow-root"])
    assert p.returncode == 2, p.stderr
    assert p.stdout == b""
    err = p.stderr.decode()
    m = re.search(r"(\S*cordon\.yaml):(\d+):(\d+): (.*)", err)
    assert m, err
    assert (int(m.group(2)), int(m.group(3))) == (line, col), err
    assert m.group(1).endswith("/cordon.yaml")
    assert "unknown key" in m.group(4)
    assert_nothing_started(home)


def test_su1_config_known_keys_start(cordon_factory, tmp_path):
    home = make_home(tmp_path, "cfg")
    vault = tmp_path / "vault"
    vault.mkdir()
    (home / "cordon.yaml").write_text(
        "listen:\n  address: 127.0.0.1\n  port: 0\n  allowRemote: false\n"
        "  origins: []\nvault:\n  root: %s\nbroker:\n  user: nobody\n"
        "audit:\n  retentionDays: 30\nspawner:\n  maxRuns: 32\n"
        "  maxRunsPerAgent: 8\n" % vault)
    c = cordon_factory(home=home)
    assert c.health()["status"] == "ok"


def test_demo_on_a_fresh_account(tmp_path, monkeypatch):
    """README's first command on a fresh machine: `cordon run --demo` with
    a HOME that has no ~/.local/state yet makes it (0700) and starts."""
    fresh = tmp_path / "fresh-home"
    fresh.mkdir()
    monkeypatch.setenv("HOME", str(fresh))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    r = run_once(["run", "--demo", "--allow-root", "--port", "0"])
    assert r.started, r.stderr
    state = fresh / ".local" / "state"
    assert (state.stat().st_mode & 0o777) == 0o700
    assert (state / "cordon-demo" / "agents").is_dir()
    assert (state / "cordon-demo" / "missions" / "daily-summary.yaml").exists()


def demo_agent(c):
    """The demo agent once its first probe has answered."""
    deadline = time.monotonic() + HTTP_S
    while True:
        a = c.request("GET", "/api/agents/demo").json()["agent"]
        if a["readiness"]["probed"] or time.monotonic() > deadline:
            return a
        time.sleep(0.2)


def test_api2_demo_manifest_follows_the_build_and_shows_actions(
        cordon_factory, tmp_path):
    """The demo manifest names the demo agent's absolute path: one left
    by a build elsewhere is rewritten at start (while its first line is
    cordon's), so the demo agent is live, and its three read-only
    Control Room actions answer.  A manifest the operator took over (that
    line removed) is kept, and its agent offline with a reason."""
    home = tmp_path / "demo"
    (home / "agents").mkdir(parents=True)
    stale = ("# Written by cordon at every start; delete this line to keep "
             "your edits.\nname: demo\ntransport: subprocess\n"
             "transportConfig:\n  bin: /nonexistent/build/cordon-demo-agent\n"
             "  args: [\"{prompt}\"]\n")
    (home / "agents" / "demo.yaml").write_text(stale)
    c = cordon_factory(extra_args=("--allow-root", "--demo"), home=home)
    text = (home / "agents" / "demo.yaml").read_text()
    assert "/nonexistent/" not in text
    a = demo_agent(c)
    assert a["readiness"]["status"] == "live", a
    assert [x["id"] for x in a["actions"]] == [
        "version", "environment", "confinement"]
    out = {}
    for x in a["actions"]:
        r = c.request("POST", f"/api/agents/demo/actions/{x['id']}",
                      headers=[("Content-Type", "application/json")],
                      body=b"{}")
        assert r.status == 200 and r.json()["ok"] is True, (x, r)
        out[x["id"]] = r.json()["stdout"]
    assert out["version"].startswith("cordon-demo-agent ")
    assert "PATH\n" in out["environment"] and "=" not in out["environment"]
    assert "NoNewPrivs:\t1" in out["confinement"], out["confinement"]
    assert c.stop() == 0

    (home / "agents" / "demo.yaml").write_text(stale.split("\n", 1)[1])
    c = cordon_factory(extra_args=("--allow-root", "--demo"), home=home)
    assert "/nonexistent/" in (home / "agents" / "demo.yaml").read_text()
    r = demo_agent(c)["readiness"]
    assert (r["status"], r.get("reason")) == ("offline", "binary-missing"), r
