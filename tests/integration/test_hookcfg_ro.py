# SBX-8: the config files cordon writes for Gemini CLI and Codex are
# read-only in every spawn of the agent: fake agents named `gemini` and
# `codex` try to write, replace, rename over and remove them, and to move
# the dir they are in, from a run and from an action; a run started while
# another tampers still reads cordon's file; a file that cannot be bound
# refuses the spawn with its reason.  Everything lives under /var/tmp,
# beside the agents' private homes, so namespace mode's private /tmp
# hides none of it.
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from agents_util import make_agents_home, post_json, run, server_env, text_of
from conftest import (Cordon, child_env, cordon_bin, finish, system_user,
                      user_bin)

FILES = {"gemini": (".gemini", ["settings.json"]),
         "codex": (".codex", ["config.toml", "hooks.json", ".env"])}

# Asked "tamper", tries every way to change its CLI's config files and
# prints what each got; "tamper-wait" does so, then waits for the file
# named by its 2nd word to appear; anything else prints the files as the
# CLI would read them.
FAKE_CLI = """#!/usr/bin/python3
import errno, json, os, sys, time
FILES = %r
h = os.environ["HOME"]
d, names = FILES[os.path.basename(sys.argv[0])]
g = os.path.join(h, d)
words = sys.argv[1].split()
if words[0].startswith("tamper"):
    got = {}
    def op(key, f):
        try:
            f()
            got[key] = "ok"
        except OSError as e:
            got[key] = errno.errorcode[e.errno]
    for n in names:
        p = os.path.join(g, n)
        mine = os.path.join(g, "mine-" + n)
        with open(mine, "w") as f:
            f.write("agent\\n")
        op(n + ":write", lambda: open(p, "a").write("agent\\n"))
        op(n + ":trunc", lambda: open(p, "w").close())
        op(n + ":rename-over", lambda: os.rename(mine, p))
        op(n + ":unlink", lambda: os.unlink(p))
        op(n + ":chmod", lambda: os.chmod(p, 0o666))
        op(n + ":rename-away", lambda: os.rename(p, p + ".old"))
    op("dir:rename", lambda: os.rename(g, g + ".old"))
    op("dir:state", lambda: open(os.path.join(g, "state"), "w").write("x"))
    print(json.dumps(got), flush=True)
    if words[0] == "tamper-wait":
        for _ in range(200):
            if os.path.exists(words[1]):
                break
            time.sleep(0.05)
    sys.exit(0)
print(json.dumps({n: open(os.path.join(g, n)).read() for n in names}))
""" % (FILES,)


@pytest.fixture(scope="module")
def world():
    base = tempfile.mkdtemp(prefix="cordon-hookro-", dir="/var/tmp")
    mp = pytest.MonkeyPatch()
    c = None
    try:
        bindir = os.path.join(base, "bin")
        work = os.path.join(base, "work")
        os.mkdir(bindir)
        os.mkdir(work)
        os.chmod(work, 0o777)
        extra = {}
        for cli, name in (("gemini", "gem"), ("codex", "cdx")):
            bot = os.path.join(bindir, cli)
            with open(bot, "w") as f:
                f.write(FAKE_CLI)
            os.chmod(bot, 0o755)
            extra[name] = (
                f"name: {name}\ntransport: subprocess\n"
                f"transportConfig:\n  bin: {bot}\n  cwd: {work}\n"
                "  args: [\"{prompt}\"]\n"
                f"sandbox:\n  writeRoots: [{work}]\n"
                "actions:\n  - id: tamper\n    label: Tamper\n"
                f"    command: [{bot}, tamper]\n")
        # SBX-8, SBX-9: a CLI dir elsewhere than the private home, and one
        # that is exactly it.
        homes = os.path.join(os.path.realpath(base), "ro", "state", "homes")
        for name, val in (("far", os.path.join(base, "elsewhere")),
                          ("same", os.path.join(homes, "same", ".codex"))):
            extra[name] = (
                f"name: {name}\ntransport: subprocess\n"
                f"transportConfig:\n  bin: {bindir}/codex\n  cwd: {work}\n"
                "  args: [\"{prompt}\"]\n"
                f"  env:\n    CODEX_HOME: {val}\n")
        home = make_agents_home(Path(base), name="ro", extra=extra)
        server_env(mp, {"HOME": os.path.join(base, "operator")})
        c = Cordon(home, ["--allow-root"]).start()
        yield {"c": c, "work": work, "home": str(home), "homes": homes}
    finally:
        if c is not None:
            finish(c)
        mp.undo()
        shutil.rmtree(base, ignore_errors=True)


def agent_home(w, name):
    r = w["c"].request("GET", f"/api/agents/{name}")
    assert r.status == 200, r
    return r.json()["agent"]["home"]


def cordons_copy(w, name, cli):
    """What cordon wrote for this agent, outside its home."""
    d = os.path.join(w["home"], "state", "hookcfg", name)
    return {n: Path(d, n).read_text() for n in FILES[cli][1]}


def refused_all(got, cli):
    """Every write, replacement, removal and move was refused; the CLI's
    own state beside the files was not."""
    want = {"dir:rename": "EBUSY", "dir:state": "ok"}
    for n in FILES[cli][1]:
        want.update({n + ":write": "EROFS", n + ":trunc": "EROFS",
                     n + ":rename-over": "EBUSY", n + ":unlink": "EBUSY",
                     n + ":chmod": "EROFS", n + ":rename-away": "EBUSY"})
    assert got == want, got


@pytest.mark.parametrize("name,cli", [("gem", "gemini"), ("cdx", "codex")])
def test_sbx8_hook_config_read_only_in_run_and_action(world, name, cli):
    r, ev = run(world["c"], name, "tamper")
    assert r.status == 200, (r, r.body[:300])
    refused_all(json.loads(text_of(ev)), cli)
    r = post_json(world["c"], f"/api/agents/{name}/actions/tamper", {})
    assert r.status == 200 and r.json()["ok"] is True, r.json()
    refused_all(json.loads(r.json()["stdout"]), cli)
    # The run reads cordon's copy, whatever the home's file holds.
    r, ev = run(world["c"], name, "show")
    assert r.status == 200, r
    assert json.loads(text_of(ev)) == cordons_copy(world, name, cli)
    if cli == "gemini":
        s = json.loads(cordons_copy(world, name, cli)["settings.json"])
        assert s["hooks"]["BeforeTool"][0]["hooks"][0]["command"]. \
            endswith("/cordon gate"), s


def test_sbx8_concurrent_run_reads_cordons_file(world):
    """A run that tampers, and keeps going, while another run of the same
    agent starts: the second reads cordon's file with its own hook."""
    go = os.path.join(world["work"], "go")
    out = {}

    def first():
        out["r"] = run(world["c"], "gem", f"tamper-wait {go}")

    t = threading.Thread(target=first)
    t.start()
    try:
        time.sleep(1.0)
        r, ev = run(world["c"], "gem", "show")
        assert r.status == 200, r
        s = json.loads(json.loads(text_of(ev))["settings.json"])
        assert s["hooks"]["BeforeTool"][0]["hooks"][0]["name"]. \
            startswith("cordon-gate-"), s
        assert json.loads(text_of(ev)) == cordons_copy(world, "gem",
                                                       "gemini")
    finally:
        Path(go).touch()
        t.join(60)
        os.unlink(go)
    r, ev = out["r"]
    assert r.status == 200, r
    refused_all(json.loads(text_of(ev)), "gemini")


def test_sbx8_hook_config_unbindable_refuses_spawn(world):
    """A dir where the CLI's file would be cannot be bound over: the run
    and the action are refused, each saying why (fail closed)."""
    p = os.path.join(agent_home(world, "cdx"), ".codex", "hooks.json")
    os.rename(p, p + ".aside")
    os.mkdir(p)
    try:
        r, _ = run(world["c"], "cdx", "show")
        assert r.status == 502, r
        assert r.json() == {"ok": False, "error": "spawn-failed",
                            "reason": f"hooks: settings {p}: EISDIR"}
        r = post_json(world["c"], "/api/agents/cdx/actions/tamper", {})
        assert r.status == 200, r
        assert r.json()["ok"] is False, r.json()
        assert r.json()["errorClass"] == "spawn-failed", r.json()
        assert r.json()["reason"] == \
            "sandbox: hook config read-only: EISDIR", r.json()
    finally:
        os.rmdir(p)
        os.rename(p + ".aside", p)
    # cordon's own copy gone (an action rewrites nothing): refused too.
    src = os.path.join(world["home"], "state", "hookcfg", "cdx", ".env")
    os.rename(src, src + ".aside")
    try:
        r = post_json(world["c"], "/api/agents/cdx/actions/tamper", {})
        assert r.json()["ok"] is False, r.json()
        assert r.json()["reason"] == \
            "sandbox: hook config read-only: ENOENT", r.json()
    finally:
        os.rename(src + ".aside", src)
    r = post_json(world["c"], "/api/agents/cdx/actions/tamper", {})
    assert r.json()["ok"] is True, r.json()


def test_sbx8_manifest_env_cli_dir_elsewhere_refused(world):
    """A manifest pointing CODEX_HOME away from the private home (where
    cordon neither writes nor checks the CLI's config) disables the
    agent, naming the key; `cordon check` foresees it in the same words.
    The very path of the private home is accepted."""
    want = os.path.join(world["homes"], "far", ".codex")
    why = (f"env: CODEX_HOME: not the agent's private home ({want}), "
           "where cordon writes and checks its CLI's config; remove it")
    assert world["c"].request("GET", "/api/agents/far").status == 404
    assert f"agents/far.yaml: {why}; agent disabled" in world["c"].stderr()
    r, ev = run(world["c"], "same", "show")
    assert r.status == 200, r
    env = dict(child_env(), HOME=os.path.join(
        os.path.dirname(world["home"]), "operator"))
    r = subprocess.run([cordon_bin(), "check", "--home", world["home"]],
                       capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 1, r
    assert f"far.yaml:7:3: {why}; the agent would be disabled" in r.stdout, \
        r.stdout
    assert "same.yaml" not in r.stdout, r.stdout
    r = subprocess.run([cordon_bin(), "check", "--json", "--home",
                        world["home"]], capture_output=True, text=True,
                       timeout=30, env=env)
    got = [p for p in json.loads(r.stdout)["problems"]
           if p["code"] == "home-env"]
    assert len(got) == 1 and got[0]["file"].endswith("far.yaml") and \
        f"{got[0]['key']}: {got[0]['message']}" == \
        f"{why}; the agent would be disabled", got


def test_sbx8_hook_config_read_only_unprivileged():
    """The same binds made by a spawner of an ordinary user (its own
    user namespace): the run's agent cannot touch its hook config."""
    user = system_user("cordon-test", home=True)
    base = tempfile.mkdtemp(prefix="cordon-hookro-u-", dir="/var/tmp")
    os.chmod(base, 0o755)
    mp = pytest.MonkeyPatch()
    c = None
    try:
        bindir = os.path.join(base, "bin")
        os.mkdir(bindir, 0o755)
        bot = os.path.join(bindir, "gemini")
        with open(bot, "w") as f:
            f.write(FAKE_CLI)
        os.chmod(bot, 0o755)
        home = make_agents_home(Path(base), name="u", extra={
            "gem": (f"name: gem\ntransport: subprocess\n"
                    f"transportConfig:\n  bin: {bot}\n"
                    "  args: [\"{prompt}\"]\n")})
        for root, dirs, files in os.walk(base):
            for n in dirs + files:
                if not os.path.join(root, n).startswith(bindir):
                    os.lchown(os.path.join(root, n), user.pw_uid,
                              user.pw_gid)
        server_env(mp, {"HOME": user.pw_dir})
        c = Cordon(str(home), prefix=[
            "setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
            "--init-groups", "--"], bindir=user_bin()).start()
        r, ev = run(c, "gem", "tamper")
        assert r.status == 200, (r, r.body[:300], c.stderr()[-2000:])
        refused_all(json.loads(text_of(ev)), "gemini")
        r, ev = run(c, "gem", "show")
        assert r.status == 200, r
        own = Path(home, "state", "hookcfg", "gem", "settings.json")
        assert json.loads(text_of(ev)) == {"settings.json": own.read_text()}
    finally:
        if c is not None:
            finish(c)
        mp.undo()
        shutil.rmtree(base, ignore_errors=True)
