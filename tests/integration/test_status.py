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
    for name in ("auditd", "vaultd", "egressd", "spawner", "broker"):
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
        "auditd", "vaultd", "egressd", "spawner", "broker"]
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

