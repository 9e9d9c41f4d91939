# `cordon status --home DIR` against a real running cordon (SU-2, SBX-5):
# each daemon's uid, capabilities, no_new_privs, seccomp and Landlock, the
# host's sandbox layers and each agent's, read over the API with the
# runtime token.  Reads only.
import json
import os
import subprocess

from conftest import child_env, cordon_bin


def status(home, *extra):
    return subprocess.run([cordon_bin(), "status", "--home", str(home),
                           *extra], capture_output=True, text=True,
                          timeout=30, env=child_env())


def test_su2_status_names_every_daemon(cordon):
    r = status(cordon.home)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("cordon ") and lines[0].endswith(": ok")
    for name in ("auditd", "vaultd", "egressd", "gated", "spawner", "sched",
                 "broker"):
        row = [l for l in lines if l.split()[:1] == [name]]
        assert row, r.stdout
        cols = row[0].split()
        assert cols[1] == "yes"
        assert cols[5] == "0" * 16  # no capability left
        assert cols[6] == "1"  # no_new_privs
        assert cols[7] == "2"  # seccomp filter mode
    # SP-7: what bounds a run's processes, in the spawner's own words
    # (as root: each run's pids cgroup).
    h = cordon.health()
    st = [d for d in h["daemons"] if d["name"] == "spawner"][0]["status"]
    assert f"process bound (SP-7): {st['pidsCgroup']['state']}" in lines
    host = st["sandboxHost"]
    yn = {True: "yes", False: "no"}
    assert ("host sandbox layers: landlock ABI "
            f"{host['landlockAbi']}, user namespaces {yn[host['userns']]}, "
            f"seccomp {yn[host['seccomp']]}, private tmp yes") in lines, \
        r.stdout
    if os.geteuid() == 0:
        assert st["pidsCgroup"]["on"] is True, st


def test_su2_status_json_is_the_api(cordon):
    r = status(cordon.home, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # one document, nothing else
    assert set(doc) == {"ok", "health", "agents"} and doc["ok"] is True
    health, agents = doc["health"], doc["agents"]
    assert health == {**health, "ok": True, "status": "ok"}
    assert [d["name"] for d in health["daemons"]] == [
        "auditd", "vaultd", "egressd", "gated", "spawner", "sched", "broker"]
    assert isinstance(agents["agents"], list)


def test_status_not_running(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    r = status(home)
    assert r.returncode == 3
    assert r.stderr.strip() == "cordon: status: not running"


def test_status_bad_usage(tmp_path):
    for extra in (("--bogus",), ("extra",)):
        r = status(tmp_path, *extra)
        assert r.returncode == 2
        assert "usage: cordon status" in r.stderr


def test_per5_login_mints_a_one_time_url(cordon):
    """PER-5: `cordon login --home` asks the running cordon (with the
    runtime token) for a fresh one-time login URL; it works once."""
    r = subprocess.run([cordon_bin(), "login", "--home", str(cordon.home)],
                       capture_output=True, text=True, timeout=30,
                       env=child_env())
    assert r.returncode == 0, r.stderr
    url = [w for w in r.stdout.split() if w.startswith("http://")][0]
    assert url.startswith(f"http://127.0.0.1:{cordon.port}/ui/login?code=")
    target = url[url.index("/ui/"):]
    first = cordon.request("GET", target, auth=False)
    assert first.status == 303, first
    assert "cordon_session=" in str(first.headers)
    assert cordon.request("GET", target, auth=False).status == 401
    # The code cordond printed at start is separate and still good.
    assert cordon.login().status == 303


def test_per5_login_and_token_usage_errors(tmp_path):
    """Bad usage changes nothing: `cordon token` never overwrites, and
    `cordon login` with half an endpoint refuses."""
    f = tmp_path / "token"
    r = subprocess.run([cordon_bin(), "token", str(f)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and (f.stat().st_mode & 0o777) == 0o600
    tok = f.read_text()
    assert len(tok) == 65 and tok.endswith("\n")
    r = subprocess.run([cordon_bin(), "token", str(f)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and f.read_text() == tok
    assert tok.strip() not in r.stderr
    r = subprocess.run([cordon_bin(), "login", "--port", "1"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    r = subprocess.run([cordon_bin(), "login", "--token-file", str(f),
                        "--port", "0"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and tok.strip() not in r.stderr



def test_eg1_eg2_status_shows_the_egress_layer(cordon_factory, tmp_path):
    """EG-1, EG-2: `cordon status` prints egressd's proxy runs and open
    connections under its row, and each proxy agent's allowlist under
    its own; --json carries both as the API gives them."""
    home = tmp_path / "eg"
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "fetcher.yaml").write_text(
        "name: fetcher\ntransport: subprocess\ntransportConfig:\n"
        "  bin: /bin/echo\n  args: [\"{prompt}\"]\n"
        "sandbox: {network: proxy}\n"
        "egress: {allow: [api.example.com, '*.example.org:8443']}\n")
    c = cordon_factory(home=home)
    r = status(home)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "egress (EG-1): 0 proxy runs, 0 open connections" in lines, \
        r.stdout
    row = [i for i, l in enumerate(lines) if l.split()[:1] == ["fetcher"]]
    assert row and lines[row[0]].split()[3] == "proxy", r.stdout
    assert lines[row[0] + 1].split() == [
        "allow", "api.example.com:443,*.example.org:8443"], r.stdout
    doc = json.loads(status(home, "--json").stdout)
    eg = [d for d in doc["health"]["daemons"] if d["name"] == "egressd"][0]
    assert eg["status"]["egress"] == {"runs": 0, "connections": 0,
                                      "testEgress": False}
    ag = [a for a in doc["agents"]["agents"] if a["name"] == "fetcher"][0]
    assert ag["sandbox"]["egress"]["allow"] == [
        "api.example.com:443", "*.example.org:8443"]
    assert c.health()["status"] == "ok"
