# SBX-9: each agent's private, persistent home.  Runs of an agent see
# HOME (and each CLI's own dir variable) pointing at a dir cordon made
# for it alone, beneath its state dir; what the agent writes there is
# there at its next run; no agent reads another's home or the operator's
# dotfiles; the CLI's own login file in its home refuses nothing, and
# `cordon check` says where each home is.  Everything lives under
# /var/tmp, so namespace mode's private /tmp hides none of it: what
# stops an attempt is the sandbox.
import json
import os
import shutil
import subprocess
import tempfile

import pytest

from agents_util import make_agents_home, run, server_env, text_of
from conftest import Cordon, child_env, cordon_bin, finish

HOMEBOT = """#!/bin/sh
# A fake agent CLI that keeps state in its home, as real ones do.
set -u
set -- $1
case "$1" in
write) mkdir -p "$HOME/.claude/session-env" &&
       echo "$2" > "$HOME/.claude/x" && echo wrote ;;
read) cat "$HOME/.claude/x" ;;
login) printf '{"mark":"kept"}\\n' > "$CLAUDE_CONFIG_DIR/.credentials.json" &&
       echo saved ;;
cred) cat "$CLAUDE_CONFIG_DIR/.credentials.json" ;;
env) for v in HOME CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME \\
        XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME; do
       eval "echo $v=\\${$v-unset}"; done ;;
peek) cat "$2" 2>&1; echo "rc=$?" ;;
*) echo "?" ;;
esac
"""


def manifest(name, bin_path, extra=""):
    return (f"name: {name}\ntransport: subprocess\n"
            f"transportConfig:\n  bin: {bin_path}\n"
            "  args: [\"{prompt}\"]\n" + extra)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    base = tempfile.mkdtemp(prefix="cordon-home-", dir="/var/tmp")
    mp = pytest.MonkeyPatch()
    c = None
    try:
        op = os.path.join(base, "operator")
        os.makedirs(os.path.join(op, ".ssh"))
        with open(os.path.join(op, ".ssh", "id_rsa"), "w") as f:
            f.write("operator-private-key-material\n")
        with open(os.path.join(op, ".claude.json"), "w") as f:
            f.write('{"operator":"own"}\n')
        bindir = os.path.join(base, "bin")
        os.mkdir(bindir)
        bot = os.path.join(bindir, "homebot")
        with open(bot, "w") as f:
            f.write(HOMEBOT)
        os.chmod(bot, 0o755)
        from pathlib import Path
        # SP-12: a CLI installed under the operator's home (npm's user
        # prefix): a script there, and the same with its dir a read root.
        # npm links bin/NAME to the package's script beside its modules.
        npm = os.path.join(op, ".npm-global", "bin")
        pkg = os.path.join(op, ".npm-global", "lib", "node_modules",
                           "fakecli")
        os.makedirs(npm)
        os.makedirs(pkg)
        script = os.path.join(pkg, "cli.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\necho fakecli ran\n")
        os.chmod(script, 0o755)
        cli = os.path.join(npm, "fakecli")
        os.symlink("../lib/node_modules/fakecli/cli.sh", cli)
        # SP-12: an agent that fails at start, saying why on stderr
        # (with a secret in it, which must come back scrubbed).
        failer = os.path.join(bindir, "failer")
        with open(failer, "w") as f:
            f.write("#!/bin/sh\necho starting\n"
                    "echo using \"$FAKE_API_KEY\" now >&2\n"
                    "echo cannot start: no config >&2\nexit 1\n")
        os.chmod(failer, 0o755)
        home = make_agents_home(Path(base), name="ch", extra={
            "alpha": manifest("alpha", bot), "beta": manifest("beta", bot),
            "nobin": manifest("nobin", "nosuch-cli"),
            "homecli": manifest("homecli", cli),
            "homedirect": manifest("homedirect", script),
            "homecliok": manifest(
                "homecliok", cli,
                f"sandbox:\n  readRoots: [\"{os.path.dirname(npm)}\"]\n"),
            "failer": manifest("failer", failer)
            + "secrets:\n  FAKE_API_KEY: fake.apiKey\n",
        })
        server_env(mp, {"HOME": op})
        c = Cordon(home, ["--allow-root"]).start()
        yield {"c": c, "home": str(home), "op": op, "base": base}
    finally:
        if c is not None:
            finish(c)
        mp.undo()
        shutil.rmtree(base, ignore_errors=True)


def say(w, agent, prompt):
    r, ev = run(w["c"], agent, prompt)
    assert r.status == 200, r
    return ev


def agent_home(w, name):
    r = w["c"].request("GET", f"/api/agents/{name}")
    assert r.status == 200, r
    return r.json()["agent"]["home"]


def test_sbx9_home_is_cordons_and_private(world):
    h = agent_home(world, "alpha")
    assert h == os.path.join(os.path.realpath(world["home"]), "state",
                             "homes", "alpha")
    st = os.stat(h)
    assert st.st_mode & 0o777 == 0o700 and st.st_uid == os.geteuid()
    assert oct(os.stat(os.path.dirname(h)).st_mode & 0o777) == "0o700"
    assert agent_home(world, "beta") != h


def test_sbx9_env_points_into_the_home(world):
    h = agent_home(world, "alpha")
    got = dict(ln.split("=", 1) for ln in
               text_of(say(world, "alpha", "env")).splitlines())
    assert got == {
        "HOME": h, "CLAUDE_CONFIG_DIR": h + "/.claude",
        "CODEX_HOME": h + "/.codex", "GEMINI_CLI_HOME": h,
        "XDG_CONFIG_HOME": h + "/.config", "XDG_CACHE_HOME": h + "/.cache",
        "XDG_DATA_HOME": h + "/.local/share",
        "XDG_STATE_HOME": h + "/.local/state"}


def test_sbx9_home_persists_across_runs(world):
    ev = say(world, "alpha", "write kept-between-runs")
    assert text_of(ev) == "wrote\n", ev
    assert text_of(say(world, "alpha", "read")) == "kept-between-runs\n"
    h = agent_home(world, "alpha")
    with open(os.path.join(h, ".claude", "x")) as f:
        assert f.read() == "kept-between-runs\n"


def test_sbx9_agent_cannot_read_another_agents_home(world):
    say(world, "alpha", "write alpha-only")
    other = os.path.join(agent_home(world, "alpha"), ".claude", "x")
    out = text_of(say(world, "beta", "peek " + other))
    assert "alpha-only" not in out
    assert "rc=0" not in out
    assert ("Permission denied" in out or
            "No such file" in out), out


def test_sbx9_operator_dotfiles_stay_unreachable(world):
    for p in (os.path.join(world["op"], ".ssh", "id_rsa"),
              os.path.join(world["op"], ".claude.json")):
        out = text_of(say(world, "alpha", "peek " + p))
        assert "rc=0" not in out, out
        assert "operator" not in out.replace(world["op"], ""), out


# SBX-9, SBX-2: the CLI's own login file in its own home is the agent's,
# not a secret of the operator's left in a write root: no run refuses,
# nothing covers it, and `cordon check` agrees.
def test_sbx9_own_credentials_do_not_refuse_runs(world):
    assert text_of(say(world, "beta", "login")) == "saved\n"
    ev = say(world, "beta", "cred")
    assert not [e for e in ev if e["kind"] == "error"], ev
    assert '"mark":"kept"' in text_of(ev)
    env = child_env()
    env["HOME"] = world["op"]
    r = subprocess.run([cordon_bin(), "check", "--home", world["home"]],
                       capture_output=True, text=True, timeout=30, env=env)
    assert "alpha" not in r.stdout and "beta.yaml" not in r.stdout, r.stdout
    h = agent_home(world, "beta")
    assert f"agent beta: home {h}" in r.stderr, r.stderr
    r = subprocess.run([cordon_bin(), "check", "--json", "--home",
                        world["home"]], capture_output=True, text=True,
                       timeout=30, env=env)
    assert json.loads(r.stdout)["homes"]["beta"] == h


# SBX-2, SBX-9: the homes live in the state dir, which no manifest root
# may name, contain or enter.
def test_sbx9_no_root_may_reach_the_homes(world, tmp_path):
    from agents_util import make_agents_home as mk
    h = agent_home(world, "alpha")
    home = mk(tmp_path, name="ch", extra={"thief": manifest(
        "thief", "/bin/cat", f"sandbox:\n  readRoots: [\"{h}\"]\n")})
    env = child_env()
    env["HOME"] = world["op"]
    # The thief's own cordon home has its own state dir: name alpha's.
    os.symlink(os.path.join(world["home"], "state"), home / "state")
    r = subprocess.run([cordon_bin(), "check", "--home", str(home)],
                       capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 1
    assert ("sandbox.readRoots[0]: is inside a protected path"
            in r.stdout), r.stdout


# SP-12: every refusal and failure says what and where: in the API (a
# reason beside the stock code), in the log, and in `cordon check`.
def check_out(w, *extra):
    env = child_env()
    env["HOME"] = w["op"]
    env["PATH"] = os.environ["PATH"]
    return subprocess.run([cordon_bin(), "check", *extra, "--home",
                           w["home"]], capture_output=True, text=True,
                          timeout=30, env=env)


def test_sp12_binary_not_found_names_path(world):
    path = os.environ["PATH"]  # cordond's, as server_env set it
    r, _ = run(world["c"], "nobin", "hello")
    assert r.status == 502, r
    assert r.json() == {"ok": False, "error": "spawn-failed",
                        "reason": f"binary nosuch-cli not found on PATH "
                                  f"{path}"}, r.json()
    assert ("agent nobin: spawn-failed: binary nosuch-cli not found on "
            f"PATH {path}") in world["c"].stderr()
    out = check_out(world).stdout
    assert f"transportConfig.bin: not found on cordon's PATH {path}" in out


def test_sp12_cli_under_operator_home_refused_with_reason(world):
    cli = os.path.join(world["op"], ".npm-global", "lib", "node_modules",
                       "fakecli", "cli.sh")
    r, _ = run(world["c"], "homecli", "hello")
    assert r.status == 502, r
    why = (f"the program fakecli is the script {cli}, under the operator's"
           " home, which the sandbox hides (install it system-wide or add"
           " its directory to sandbox.readRoots)")
    assert r.json() == {"ok": False, "error": "spawn-failed",
                        "reason": why}, r.json()
    assert f"agent homecli: spawn-failed: {why}" in world["c"].stderr()
    out = check_out(world).stdout
    assert f"transportConfig.bin: {why}; runs would fail" in out, out
    # Made readable, as the reason says: it runs.
    ev = say(world, "homecliok", "hello")
    assert text_of(ev) == "fakecli ran\n", ev
    assert "homecliok" not in out
    # A script named where it lies (a checkout under the home) is the
    # file the sandbox adds: it runs as it is.
    ev = say(world, "homedirect", "hello")
    assert text_of(ev) == "fakecli ran\n", ev
    assert "homedirect" not in out


def test_sp12_exit_at_start_shows_scrubbed_stderr_tail(world):
    from agents_util import FILE_SECRET
    ev = say(world, "failer", "hello")
    err = [e for e in ev if e["kind"] == "error"]
    assert err == [{"kind": "error", "errorClass": "non-zero-exit",
                    "errorMessage": "The agent exited with an error.",
                    "reason": "exited with status 1",
                    "stderrTail": "using *** now\ncannot start: no config"}
                   ], ev
    assert FILE_SECRET not in json.dumps(ev)
    run_id = ev[0]["runId"]
    assert (f"agent failer: run {run_id}: non-zero-exit: exited with "
            "status 1") in world["c"].stderr()
    assert FILE_SECRET not in world["c"].stderr()
