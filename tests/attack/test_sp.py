# SP-2 ... SP-17, SEC-3, VA-5: hostile prompts and hostile agents through
# the real API: prompts that want to be flags, environment injection
# through manifests and cordond's own environment, children that print
# terminal and browser escapes or the secrets they hold, never exit,
# fork-bomb, escape their process group or fill their write root.  The
# hostile agent is tests/fake-agents/hostile.  Invariants after every
# case (conftest.py): nothing outside the roots changed, no secret
# anywhere, daemons untouched, no process left behind.
import json
import os
import time

import pytest

from agents_util import (FILE_SECRET, GRACE, Stream, post_json, run,
                         text_of, wait_audit)
from conftest import hostile_manifest, run_world


# Manifests that try to inject into the child's environment (SP-5) or
# otherwise break SP-15: each must be refused at load, alone.
BASE = ("name: {n}\ntransport: subprocess\ntransportConfig:\n"
        "  bin: hermes\n  args: [\"-z\", \"{{prompt}}\"]\n")
BAD_ENV = {
    "ldpreload": "LD_PRELOAD: /tmp/x.so",
    "ldlibrary": "LD_LIBRARY_PATH: /tmp",
    "ldaudit": "LD_AUDIT: /tmp/x.so",
    "dyld": "DYLD_INSERT_LIBRARIES: /tmp/x.dylib",
    "nodeopts": "NODE_OPTIONS: --require /tmp/x.js",
    "pythonpath": "PYTHONPATH: /tmp",
    "pythonstartup": "PYTHONSTARTUP: /tmp/x.py",
    "pythonhome": "PYTHONHOME: /tmp",
    "gitconfig": "GIT_CONFIG_GLOBAL: /tmp/x",
    "gitconfigcount": "GIT_CONFIG_COUNT: \"1\"",
    "bashenv": "BASH_ENV: /tmp/x.sh",
    "envvar": "ENV: /tmp/x.sh",
    "perl5opt": "PERL5OPT: -Mevil",
    "rubyopt": "RUBYOPT: -revil",
    "javatool": "JAVA_TOOL_OPTIONS: -javaagent:/tmp/x.jar",
    "lowercase": "path: /tmp",
    "dashname": "MY-VAR: x",
    "digitfirst": "1VAR: x",
    "newline": "SOME_VAR: \"a\\nb\"",
    "carriage": "SOME_VAR: \"a\\rb\"",
    "nul": "SOME_VAR: \"a\\0b\"",
    "long": "SOME_VAR: " + "v" * 4097,
    "many": "\n    ".join(f"V{i}: x" for i in range(65)),
}
BAD_OTHER = {
    "argsecret": BASE.replace("\"-z\", ", "\"--key=ghp_" + "a" * 36 +
                              "\", \"-z\", "),
    "unknownkey": BASE + "runAsRoot: true\n",
    "dupaction": BASE + "actions:\n" + "".join(
        "  - id: a\n    label: A\n    command: [hermes]\n    hint: h\n"
        for _ in range(2)),
    "sshroot": BASE + "sandbox:\n  readRoots: [\"~/.ssh\"]\n",
    "auditroot": BASE + "sandbox:\n  writeRoots: [\"{home}/audit\"]\n",
    "vaultroot": BASE + "sandbox:\n  writeRoots: [\"{home}/vault\"]\n",
    "etcroot": BASE + "sandbox:\n  writeRoots: [\"/\"]\n",
}
BAD = {f"env-{k}": BASE + "  env:\n    " + v + "\n" for k, v in
       BAD_ENV.items()}
BAD.update({f"bad-{k}": v for k, v in BAD_OTHER.items()})
# Hostile variables in cordond's own environment (SP-5).
INHERITED = {
    "BASH_ENV": "/tmp/attack-bash-env", "ENV": "/tmp/attack-env",
    "PYTHONSTARTUP": "/tmp/attack.py", "NODE_OPTIONS": "--inspect",
    "PERL5OPT": "-Mattack", "RUBYOPT": "-rattack",
    "JAVA_TOOL_OPTIONS": "-Dattack", "GIT_CONFIG_GLOBAL": "/tmp/attack",
    "MY_SERVICE_TOKEN": "tok-attack-1", "DB_PASSWORD": "pw-attack-2",
    "SOME_API_KEY": "key-attack-3", "AWS_ACCESS_KEY_ID": "AKIAATTACK",
    "CLIENT_SECRET": "sec-attack-4", "NPM_CREDENTIALS": "cred-attack-5",
}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Hostile manifests beside the good ones, and hostile variables in
    cordond's own environment (SP-5)."""
    extra = {n: t.replace("{n}", n) for n, t in BAD.items()}
    extra["stubborn"] = hostile_manifest("stubborn", "{ws}").replace(
        "timeoutMs: 8000", "timeoutMs: 1000")
    extra["sleeper"] = hostile_manifest("sleeper", "{ws}") + (
        "actions:\n  - id: sleep10\n    label: Sleep\n"
        "    command: [sleep, \"10\"]\n    hint: sleeps\n"
        "    timeoutMs: 1000\n")
    yield from run_world(tmp_path_factory, extra=extra, env=INHERITED)


@pytest.fixture(scope="module")
def listed(world):
    r = world.c.request("GET", "/api/agents")
    return {a["name"] for a in r.json()["agents"]}


@pytest.mark.parametrize("name", sorted(BAD))
def test_sp5_sp15_hostile_manifest_refused_alone(c, listed, name):
    assert name not in listed
    assert f"agents/{name}.yaml:" in c.stderr(), name
    assert "hermes" in listed and "hostile" in listed
    r, _ = run(c, name, "hello")
    assert r.status == 404 and r.json()["error"] == "unknown-agent"


# ---- SP-3: a prompt never becomes a flag ----

FLAGS = ["--help", "-c", "-", "--", "-z", "--version", "-rf /",
         "--dangerously-skip-permissions", "-p=1", "-\nx", "--output=/etc/x"]
# agent -> how its child shows the prompt (None: refused)
SHAPES = {
    "marked": None,
    "claude-code": None,
    "fused": "hermes --prompt={}: ok\n",
    "dashdash": "hermes -z -- {}: ok\n",
    "viastdin": "hermes heard {n} chars: {}\n",
}


@pytest.mark.parametrize("prompt", FLAGS, ids=lambda p: repr(p)[1:-1])
@pytest.mark.parametrize("agent", list(SHAPES))
def test_sp3_prompt_flag_injection(c, world, agent, prompt):
    r, ev = run(c, agent, prompt)
    shape = SHAPES[agent]
    if shape is None:
        assert r.status == 400, r
        assert r.json() == {"ok": False, "error": "prompt-flag-like"}
        return
    assert r.status == 200, r
    # The whole prompt arrived as one element (or stdin), unchanged.
    assert text_of(ev) == shape.format(prompt, n=len(prompt)), ev


@pytest.mark.parametrize("prompt", ["\u2014help", " --help", "\t-c",
                                    "x --help", "\u2010c"],
                         ids=["emdash", "space", "tab", "word", "hyphen"])
def test_sp3_not_a_flag_is_accepted_whole(c, prompt):
    r, ev = run(c, "hermes", prompt)
    assert r.status == 200, r
    assert text_of(ev) == f"hermes heard {len(prompt)} chars: {prompt}\n"


# ---- SP-4 / SP-5: cordond's own environment never reaches a child ----



@pytest.fixture(scope="module")
def child_env(world):
    r, ev = run(world.c, "envdump", "env")
    assert r.status == 200, r
    return json.loads(text_of(ev))


@pytest.mark.parametrize("name", sorted(INHERITED))
def test_sp5_inherited_variable_never_passed(c, child_env, name):
    assert name not in child_env
    assert INHERITED[name] not in json.dumps(child_env)


def test_sp4_forced_color_variables(c, child_env):
    assert child_env["NO_COLOR"] == "1" and child_env["FORCE_COLOR"] == "0"


# ---- SP-10 / VA-5: escapes for the terminal and the browser ----

ESC_KEYS = ["csi", "osc52", "osc8", "title", "dcs", "c1csi", "bel", "cr",
            "nul", "bs", "del", "vt", "apc", "esc8", "script", "img"]


@pytest.fixture(scope="module")
def escapes(world):
    r, ev = run(world.c, "hostile", "allescapes")
    assert r.status == 200, r
    lines = {}
    for ln in text_of(ev).split("\n"):
        k, _, v = ln.partition("=")
        if k:
            lines[k] = v
    saved = [e for e in ev if e["kind"] == "saved"]
    assert saved, ev
    with open(os.path.join(world.vault, saved[0]["path"]), "rb") as f:
        note = f.read().decode()
    return r, lines, note


def bad_chars(s):
    return [hex(ord(ch)) for ch in s
            if (ord(ch) < 0x20 and ch not in "\n\t") or
            0x7f <= ord(ch) <= 0x9f]


@pytest.mark.parametrize("key", ESC_KEYS)
def test_sp10_escape_cleaned_in_stream_and_note(c, escapes, key):
    r, lines, note = escapes
    assert key in lines, lines
    v = lines[key]
    assert v.startswith("<") and v.endswith(">"), (key, v)
    assert bad_chars(v) == [], (key, v)
    # The note holds agent text literally, its punctuation escaped (VA-5).
    part = [ln for ln in note.split("\n") if ln.startswith(key + "\\=")]
    assert part and bad_chars(part[0]) == [], (key, part)
    # A browser reads the stream as data, never as a page.
    assert r.header("Content-Type") == "application/x-ndjson"
    assert r.header("X-Content-Type-Options") == "nosniff"


def test_sp10_osc52_payload_not_left_for_a_terminal(c, escapes):
    _, lines, note = escapes
    assert "52;c;" not in lines["osc52"] and "52;c;" not in note
    assert "8;;http" not in lines["osc8"]


# ---- SP-11: the secrets it was given, printed every way ----

LEAKS = ["raw", "split", "longline", "ansi", "stderr", "many", "env"]


# The key printed the ways an agent that wants it out would (the fake
# agent's evade()); each form must be gone from the stream, whatever its
# shape, and so must every other form of it.
EVASIONS = ["halves", "tab", "zwsp", "shy", "nbsp", "ideosp", "shorthand",
            "perchar", "spaced", "reversed", "urlenc", "urlquote", "hex",
            "hexupper", "b64", "b64url", "b64inner"]


def secret_forms(v):
    import base64
    import urllib.parse
    b = v.encode()
    return [v, v[::-1], "".join(f"%{x:02X}" for x in b),
            urllib.parse.quote(v, safe=""), b.hex(), b.hex().upper(),
            base64.b64encode(b).decode().rstrip("="),
            base64.urlsafe_b64encode(b).decode().rstrip("="),
            base64.b64encode(b"x" + b).decode()[4:-4]]


def squeeze(text):
    """The text without what an evasion puts between characters."""
    for ch in ("\n", "\t", " ", "\u200b", "\u00ad", "\u00a0", "\u3000",
               "\U0001bca0", "<U+200B>", "<U+00AD>", "<U+1BCA0>"):
        text = text.replace(ch, "")
    return text


@pytest.mark.parametrize("how", EVASIONS)
def test_sp11_secret_evasions_scrubbed(c, world, how):
    """SP-11: two halves on two lines, a tab, zero-width space, soft
    hyphen, no-break or ideographic space, shorthand format control
    inside, one character per line, spaced, reversed, %-encoded, hex,
    base64 (also inside a longer blob): masked in the stream."""
    r, ev = run(c, "hostile", f"secret {how}")
    assert r.status == 200, r
    out = text_of(ev)
    assert "unknown evasion" not in out
    assert "***" in out, out[-300:]
    flat = squeeze(out)
    for form in secret_forms(FILE_SECRET):
        assert form not in out and form not in flat, (how, form, out[-300:])


@pytest.mark.parametrize("how", LEAKS)
def test_sp11_printed_secret_scrubbed(c, world, how):
    r, ev = run(c, "hostile", f"secret {how}")
    assert r.status == 200, r
    out = text_of(ev)
    assert FILE_SECRET not in out and FILE_SECRET[:8] not in out, out[-300:]
    if how != "stderr":
        assert "***" in out, out[-300:]
    errs = [e for e in ev if e["kind"] == "error"]
    for e in errs:  # SP-12: stock messages only, never stderr
        assert "key" not in e["errorMessage"], e


# ---- SP-8 / SP-17 / API-4: never exit, escape the group ----

def test_sp8_never_exit_killed_at_deadline(c):
    t0 = time.monotonic()
    r, ev = run(c, "stubborn", "neverexit")
    took = time.monotonic() - t0
    err = [e for e in ev if e["kind"] == "error"]
    assert err and err[0]["errorClass"] == "timeout", ev
    assert ev[-1]["kind"] in ("done", "saved") and took < 1 + 2 + GRACE + 1


def test_api4_cancel_of_sigterm_ignoring_agent(c):
    s = Stream(c, "hostile", "neverexit")
    rid = s.start()
    t0 = time.monotonic()
    r = post_json(c, f"/api/runs/{rid}/cancel", {})
    assert r.status == 200, r
    ev = s.finish(bound=3 + GRACE + 2)
    s.close()
    assert time.monotonic() - t0 < 3 + GRACE + 1
    assert [e["kind"] for e in ev][-1] == "done"


# SP-8, SP-17, API-4: each run's pid 1 is cordon-init, so the agent is
# no namespace init and a SIGTERM it has no handler for ends it.

def test_sp8_timeout_ends_at_the_sigterm(c):
    """`sleep 10` with a 1 s deadline ends at its SIGTERM, well before
    the SIGKILL a grace later (as pid 1 it ignored the SIGTERM)."""
    t0 = time.monotonic()
    r = post_json(c, "/api/agents/sleeper/actions/sleep10", {})
    took = time.monotonic() - t0
    assert r.status == 200, r
    assert r.json()["ok"] is False and \
        r.json()["errorClass"] == "timeout", r.json()
    assert took < 1 + 2, took  # deadline + grace: the SIGKILL's moment


def test_api4_cancelled_agent_prints_nothing_after(c):
    """A cancelled agent that ignores nothing stops at the SIGTERM: no
    output after the cancel answered, and the run ends cancelled."""
    s = Stream(c, "hostile", "ticker")
    rid = s.start()
    s.read_until(lambda b: b"tick 2" in b)
    r = post_json(c, f"/api/runs/{rid}/cancel", {})
    assert r.status == 200, r
    at_cancel = s.buf.count(b"tick ")
    ev = s.finish(bound=3 + GRACE)
    s.close()
    ticks = [e for e in ev if e["kind"] == "token"]
    text = "".join(e["text"] for e in ticks)
    # at most what was already in flight when the cancel was answered
    assert text.count("tick ") <= at_cancel + 1, (at_cancel, text)
    assert ev[-1]["kind"] == "done" and ev[-1]["cancelled"] is True, ev
    assert ev[-1]["exitCode"] != 0, ev
    rec = wait_audit(c.home, lambda x: x["kind"] ==
                     "agent.invoke.complete" and x["runId"] == rid)
    assert rec[0]["status"] == "cancelled", rec


def test_api4_agent_trapping_sigterm_gets_it(c):
    """cordon-init passes the SIGTERM on: an agent with a handler ends
    cleanly, in its own way."""
    s = Stream(c, "hostile", "trapterm")
    rid = s.start()
    s.read_until(lambda b: b"trapping" in b)
    t0 = time.monotonic()
    r = post_json(c, f"/api/runs/{rid}/cancel", {})
    assert r.status == 200, r
    ev = s.finish(bound=3 + GRACE)
    s.close()
    assert time.monotonic() - t0 < 3, "it needed the SIGKILL"
    assert "got TERM" in text_of(ev), ev
    assert ev[-1]["kind"] == "done" and ev[-1]["exitCode"] == 0, ev


def test_sp17_orphans_are_reaped(c):
    """A grandchild whose parent died is re-parented to pid 1 of the
    run, which reaps it: no zombie is left in the run."""
    r, ev = run(c, "hostile", "orphan")
    assert r.status == 200, r
    assert "zombies 0" in text_of(ev), text_of(ev)


def test_sp8_exit_code_and_signal_death_reported(c, world):
    """Through cordon-init the agent's own end is what the run reports:
    its exit code, and a kill by a signal as `killed`."""
    f = world.ws / "fill.bin"
    try:
        r, ev = run(c, "fsize", "fillquiet")  # exits 5 at the bound
        err = [e for e in ev if e["kind"] == "error"]
        assert err and err[0]["errorClass"] == "non-zero-exit", ev
        assert ev[-1]["kind"] == "done" and ev[-1]["exitCode"] == 5, ev
        r, ev = run(c, "hostile", "abort")  # SIGABRT
        err = [e for e in ev if e["kind"] == "error"]
        assert err and err[0]["errorClass"] == "killed", ev
        assert ev[-1]["kind"] == "done" and ev[-1]["exitCode"] == -1, ev
    finally:
        if f.exists():
            f.unlink()


@pytest.mark.parametrize("agent,mode", [
    ("hostile", "setsid"), ("hostile", "daemonize"),
    ("hostilens", "setsid"), ("hostilens", "daemonize")])
def test_sp17_child_leaving_the_group_dies_with_the_run(c, world, agent,
                                                         mode):
    r, ev = run(c, agent, mode)
    assert r.status == 200, r
    deadline = time.monotonic() + 2 + GRACE
    while world.agent_procs() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = world.agent_procs()
    for p in left:  # ours to clean up, so the next case starts clean
        try:
            os.kill(p, 9)
        except ProcessLookupError:
            pass
    assert left == [], "a descendant outlived its run"


# ---- SP-7: fork bombs and full disks ----

def test_sp7_fork_bomb_children_die_with_the_run(c, world):
    r, ev = run(c, "hostile", "forkbomb 40")
    assert r.status == 200, r
    assert "forkbomb" in text_of(ev)


def test_sp7_fork_bomb_bounded_by_nproc(c):
    r, ev = run(c, "nproc", "forkbomb 60")
    out = text_of(ev)
    assert r.status == 200, r
    got = int(out.split()[2])
    assert got <= 20, out


@pytest.mark.parametrize("mode", ["fill", "fillquiet"])
def test_sp7_fill_write_root_bounded(c, world, mode):
    r, ev = run(c, "fsize", mode)
    assert r.status == 200, r
    f = world.ws / "fill.bin"
    try:
        assert f.stat().st_size <= 1048576
    finally:
        f.unlink()
    err = [e for e in ev if e["kind"] == "error"]
    assert err and err[0]["errorClass"] in ("killed", "non-zero-exit"), ev
    assert [e["kind"] for e in ev][-1] == "done"
