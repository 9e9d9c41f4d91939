# SBX-8: the Gemini CLI hook wiring cordon writes itself, with a fake
# agent whose binary is named `gemini` (cordon wires Gemini CLI by that
# name): the auth it picks (the agent's own login, else the API key), a
# run refused with its reason when the settings cannot be written, and
# project settings and .env files that would outrank the hook refuse the
# run until the operator removes them, and `cordon check` foresees each
# refusal in the same words.  Everything lives under /var/tmp, beside
# the agent's private home, so namespace mode's private /tmp hides none
# of it.
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from agents_util import make_agents_home, run, server_env, text_of
from conftest import BUILD, Cordon, child_env, cordon_bin, finish

# Prints the auth and hook wiring it finds, as Gemini CLI would read them;
# asked "env", the loader and shell variables of its environment.
FAKE_GEMINI = """#!/bin/sh
if [ "$1" = env ]; then
  env | grep -E '^(LD_[A-Z_]*|BASH_ENV|ENV|SHELLOPTS|NODE_OPTIONS)=' | sort
  exit 0
fi
cat "$HOME/.gemini/settings.json"
"""


@pytest.fixture(scope="module")
def world():
    base = tempfile.mkdtemp(prefix="cordon-hookcfg-", dir="/var/tmp")
    mp = pytest.MonkeyPatch()
    c = None
    try:
        bindir = os.path.join(base, "bin")
        work = os.path.join(base, "work")
        os.mkdir(bindir)
        os.mkdir(work)
        bot = os.path.join(bindir, "gemini")
        with open(bot, "w") as f:
            f.write(FAKE_GEMINI)
        os.chmod(bot, 0o755)
        home = make_agents_home(Path(base), name="ch", extra={
            "gem": (f"name: gem\ntransport: subprocess\n"
                    f"transportConfig:\n  bin: {bot}\n  cwd: {work}\n"
                    "  args: [\"{prompt}\"]\n"),
        })
        server_env(mp, {"HOME": os.path.join(base, "operator")})
        c = Cordon(home, ["--allow-root"]).start()
        yield {"c": c, "work": work, "home": str(home)}
    finally:
        if c is not None:
            finish(c)
        mp.undo()
        shutil.rmtree(base, ignore_errors=True)


def gemini_dir(w):
    r = w["c"].request("GET", "/api/agents/gem")
    assert r.status == 200, r
    return os.path.join(r.json()["agent"]["home"], ".gemini")


def settings_seen(w):
    r, ev = run(w["c"], "gem", "hello")
    assert r.status == 200, (r, r.body[:300])
    return json.loads(text_of(ev))


def assert_refused(w, why, foreseen=True):
    """The run is refused before it starts, saying why, in the API and
    the log (SP-12)."""
    r, _ = run(w["c"], "gem", "hello")
    assert r.status == 502, r
    assert r.json() == {"ok": False, "error": "spawn-failed",
                        "reason": why}, r.json()
    assert f"agent gem: spawn-failed: {why}" in w["c"].stderr()
    if foreseen:
        check_foresees(w, why)


def check_foresees(w, why):
    """`cordon check` reports the refusal a run would meet, with the
    run's own reason, in text and in --json (SBX-8)."""
    env = dict(child_env(), HOME=os.path.join(os.path.dirname(w["home"]),
                                              "operator"))
    r = subprocess.run([cordon_bin(), "check", "--home", w["home"]],
                       capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 1, r
    assert f"gem.yaml:5:3: {why}; runs would fail " \
        "(spawn-failed)" in r.stdout, r.stdout
    r = subprocess.run([cordon_bin(), "check", "--json", "--home",
                        w["home"]], capture_output=True, text=True,
                       timeout=30, env=env)
    got = [p for p in json.loads(r.stdout)["problems"]
           if p["code"] == "hooks-refused"]
    assert len(got) == 1 and f"{got[0]['key']}: {got[0]['message']}" == \
        f"{why}; runs would fail (spawn-failed)", got


def test_sbx8_gemini_auth_is_the_login_when_present(world):
    s = settings_seen(world)
    assert s["security"]["auth"]["selectedType"] == "gemini-api-key", s
    hook = s["hooks"]["BeforeTool"][0]["hooks"][0]
    # SBX-8: cordon by its absolute path, never found on a PATH.
    assert hook["command"] == \
        os.path.join(os.path.realpath(BUILD), "cordon") + " gate", s
    login = os.path.join(gemini_dir(world), "oauth_creds.json")
    with open(login, "w") as f:
        f.write('{"refresh_token":"mock"}\n')
    try:
        s2 = settings_seen(world)
        assert s2["security"]["auth"]["selectedType"] == "oauth-personal"
        # A fresh hook name each run (SBX-8).
        assert s2["hooks"]["BeforeTool"][0]["hooks"][0]["name"] != \
            hook["name"]
    finally:
        os.unlink(login)
    # A link where the login was is no login.
    os.symlink("/etc/hostname", login)
    try:
        s3 = settings_seen(world)
        assert s3["security"]["auth"]["selectedType"] == "gemini-api-key"
    finally:
        os.unlink(login)


def test_sbx8_gemini_settings_unwritable_refuses_run(world):
    """The agent left a link where its ~/.gemini was: the spawner does not
    follow it, and the run is refused saying why."""
    gdir = gemini_dir(world)
    aside = gdir + ".aside"
    os.rename(gdir, aside)
    os.symlink(aside, gdir)
    try:
        # Not foreseen: cordon rewrites that file before the next run.
        assert_refused(world, f"hooks: settings {gdir}/settings.json: "
                       "ENOTDIR", foreseen=False)
    finally:
        os.unlink(gdir)
        os.rename(aside, gdir)
    assert settings_seen(world)["hooksConfig"] == {"enabled": True}


PROJECT_REFUSED = [
    ('{"hooksConfig": {"enabled": false}}', "set hooksConfig, which "
     "outranks cordon's gate hook; remove that key"),
    ('{"hooks": "none"}', "set hooks, which outranks cordon's gate hook; "
     "remove that key"),
    ('{"hooksConfig": {}, // off\n}', "cannot be checked "
     "(not-strict-json); make them a plain file of strict JSON"),
]


@pytest.mark.parametrize("text,why", PROJECT_REFUSED)
def test_sbx8_gemini_project_settings_that_unwire_refused(world, text, why):
    proj = os.path.join(world["work"], ".gemini")
    os.makedirs(proj, exist_ok=True)
    f = os.path.join(proj, "settings.json")
    with open(f, "w") as fh:
        fh.write(text)
    try:
        assert_refused(world, f"hooks: project settings {f} {why}")
        # The operator's own project settings, without those keys, run.
        with open(f, "w") as fh:
            fh.write('{"context": {"fileName": "AGENTS.md"}}')
        assert settings_seen(world)["hooksConfig"] == {"enabled": True}
    finally:
        shutil.rmtree(proj)


def test_sbx8_gemini_project_settings_link_refused(world):
    """A link in place of the project's .gemini (which the CLI would
    follow) is refused, never read through."""
    proj = os.path.join(world["work"], ".gemini")
    os.symlink("/etc", proj)
    try:
        assert_refused(world, f"hooks: project settings {proj}/settings.json"
                       " cannot be checked (ELOOP); make them a plain file "
                       "of strict JSON")
    finally:
        os.unlink(proj)
    settings_seen(world)


def agent_home(w):
    return os.path.dirname(gemini_dir(w))


def write_env(w, where, text):
    """where: work/... or home/...; returns the file and a cleanup."""
    base, rel = where.split("/", 1)
    root = w["work"] if base == "work" else agent_home(w)
    f = os.path.join(root, rel)
    made = not os.path.isdir(os.path.dirname(f))
    os.makedirs(os.path.dirname(f), exist_ok=True)
    with open(f, "w") as fh:
        fh.write(text)

    def undo():
        os.unlink(f)
        if made:
            os.rmdir(os.path.dirname(f))
    return f, undo


@pytest.mark.parametrize("where", ["work/.env", "work/.gemini/.env",
                                   "home/.env", "home/.gemini/.env"])
def test_sbx8_gemini_env_file_loader_variables_pinned(world, where):
    """Gemini CLI loads the first .env it finds (the project, the dirs
    above it, its home) into its own environment, which each hook
    process inherits, but never a variable it already has: a Gemini CLI
    run has each loader and shell-startup variable set, empty, so an
    application's .env (or one the agent wrote) setting them runs, and
    changes nothing."""
    f, undo = write_env(world, where, "DATABASE_URL=postgres://db/x\n"
                        "BASH_ENV=/tmp/x\nLD_PRELOAD=/tmp/x.so\n"
                        "export LD_LIBRARY_PATH=/tmp\nSHELLOPTS=xtrace\n")
    try:
        r, ev = run(world["c"], "gem", "env")
        assert r.status == 200, (r, r.body[:300])
        seen = text_of(ev).splitlines()
    finally:
        undo()
    for v in ("BASH_ENV", "ENV", "LD_AUDIT", "LD_LIBRARY_PATH",
              "LD_PRELOAD", "NODE_OPTIONS", "SHELLOPTS"):
        assert f"{v}=" in seen, seen
    assert all(x.endswith("=") for x in seen), seen


@pytest.mark.parametrize("where", ["work/.env", "work/.gemini/.env",
                                   "home/.env", "home/.gemini/.env"])
def test_sbx8_gemini_env_file_unpinnable_refused(world, where):
    """A dynamic-loader variable that acts by being there at all
    (LD_TRACE_LOADED_OBJECTS: ld.so lists libraries and exits 0 in place
    of running the hook, an allow) cannot be pinned: a .env Gemini CLI
    could load that names one refuses the run, named, as `cordon check`
    foresees; so does a .env that is a link, never followed."""
    f, undo = write_env(world, where, "A=1\nLD_TRACE_LOADED_OBJECTS=1\n")
    try:
        assert_refused(world, f"hooks: {f}, which Gemini CLI may load "
                       "into the environment of its gate hook, names a "
                       "dynamic-loader variable (LD_*) that would take "
                       "the hook over; remove that line")
    finally:
        undo()
    f, undo = write_env(world, where, "A=1\n")
    os.unlink(f)
    os.symlink("/tmp/x", f)
    try:
        assert_refused(world, f"hooks: {f}, which Gemini CLI may load "
                       "into the environment of its gate hook, cannot be "
                       "checked (ELOOP); make it a plain file of at most "
                       "64 KiB")
    finally:
        undo()
    assert settings_seen(world)["hooksConfig"] == {"enabled": True}


def test_sbx8_gemini_env_dir_is_no_file(world):
    """A dir named .env (a Python virtualenv) is read by nobody."""
    d = os.path.join(world["work"], ".env")
    os.mkdir(d)
    try:
        assert settings_seen(world)["hooksConfig"] == {"enabled": True}
    finally:
        os.rmdir(d)
