# SBX-8 with the real agent CLIs: each runs a tool call whose gate hook
# timed out, so the gate must refuse first.  A cordon of its own (the
# shipped manifests with askTimeoutSec 5, so `cordon gate`'s bound is
# 15 s), gated stopped while a shell call waits: the call never runs.
# And Claude Code's own switch, on a hook that only sleeps past its
# timeout (a gate hook that short is not loaded): with the shipped
# `onFailure: block` the call is blocked, and without it the call runs
# (the CLI's behaviour the rule is built on).
# Talks only to 127.0.0.1; touches only the temp dirs it makes.
import os
import signal
import uuid

import pytest

from test_real_agents import (EXAMPLES, api_resolve,  # noqa: F401
                              api_subst, chat, clis, finish,
                              install_manifest, kinds, mock, pki,
                              shell_turns, start_cordon, tool_results,
                              wait_live)

ASK = "commands:\n  askTimeoutSec: 5\n"
GATE = '"command":"{cordon} gate","timeout":120,"onFailure":"block"'
# Claude Code's only hook sleeps past its 3 s timeout.
SLEEPY = {GATE: '"command":"/bin/sleep 30","timeout":3,"onFailure":"block"'}
NOBLOCK = {GATE: '"command":"/bin/sleep 30","timeout":3'}
# A hook that would refuse after 5 s, run in the background: not a gate
# hook (a gate hook so wired is not loaded), to show what each CLI does.
CODEX_GATE = 'command="{cordon} gate",timeout=120'
ASYNC = {"claude-code": {GATE: '"command":"/bin/sleep 5; exit 2",'
                                '"timeout":120,"async":true'},
         "codex": {CODEX_GATE: 'command="sleep 5; echo no >&2; exit 2",'
                               'timeout=120,async=true'}}


@pytest.fixture(scope="module")
def bound(tmp_path_factory, clis, mock, pki):  # noqa: F811
    base = tmp_path_factory.mktemp("bound")
    op = base / "operator"
    work = op / "work"
    work.mkdir(parents=True)
    home = base / "home"
    (home / "agents").mkdir(parents=True)
    url = api_subst(mock)
    agents = {"claude-code": ("claude-code", {}),
              "codex": ("codex", {}), "gemini": ("gemini", {}),
              "claude-sleepy": ("claude-code", SLEEPY),
              "claude-noblock": ("claude-code", NOBLOCK),
              "claude-async": ("claude-code", ASYNC["claude-code"]),
              "codex-async": ("codex", ASYNC["codex"])}
    for name, (src, sub) in agents.items():
        dst = home / "agents" / f"{name}.yaml"
        install_manifest(os.path.join(EXAMPLES, f"{src}.yaml"), dst, name,
                         {}, str(work), subst=dict(url, **sub),
                         resolve=api_resolve())
        with open(dst, "a") as f:
            f.write(ASK)
    c = start_cordon(home, op, clis, pki)
    yield c, work
    finish(c)


def touch_with_gated_stopped(bound, mock, agent, cli):
    """A shell call that touches a file, made while gated is stopped:
    whether the file appeared, and the tool results the model got."""
    c, work = bound
    wait_live(c, agent)
    word = uuid.uuid4().hex[:10]
    marker = work / f"marker-{word}"
    mock.script(*shell_turns(cli, f"touch marker-{word}", "Done."))
    pid = c.daemon_pids()["gated"]
    os.kill(pid, signal.SIGSTOP)
    try:
        _, ev = chat(c, agent, f"touch {word}")
    finally:
        os.kill(pid, signal.SIGCONT)
    assert "done" in kinds(ev), ev
    return marker.exists(), tool_results(mock, cli)


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_sbx8_real_cli_call_refused_at_the_gates_bound(bound, mock, agent):
    ran, results = touch_with_gated_stopped(bound, mock, agent, agent)
    assert not ran, results


def test_sbx8_real_claude_on_failure_block_holds(bound, mock):
    """A hook that timed out, with onFailure: block: the call is
    blocked."""
    ran, results = touch_with_gated_stopped(bound, mock, "claude-sleepy",
                                            "claude-code")
    assert not ran, results


def test_sbx8_real_claude_timed_out_hook_runs_the_call(bound, mock):
    """What the rule guards against: Claude Code's hook timed out, no
    onFailure, and the call ran.  If this starts failing, the CLI
    changed: reread docs/agents.md's account of it."""
    ran, results = touch_with_gated_stopped(bound, mock, "claude-noblock",
                                            "claude-code")
    assert ran, results


@pytest.mark.parametrize("cli", ["claude-code", "codex"])
def test_sbx8_real_cli_runs_the_call_of_an_async_hook(bound, mock, cli):
    """What the async check guards against: a PreToolUse hook that runs
    in the background ("async") is not waited for, and the call runs
    at once.  If this starts failing, the CLI changed: reread
    docs/agents.md's account of it."""
    agent = "claude-async" if cli == "claude-code" else "codex-async"
    ran, results = touch_with_gated_stopped(bound, mock, agent, cli)
    assert ran, results
