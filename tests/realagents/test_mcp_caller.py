# A real Claude Code (pinned in tests/agents/package-lock.json) as the
# caller of `cordon mcp` (MC-1, MC-3): the operator's own CLI, outside
# cordon, with cordon registered as an MCP server by --mcp-config, its
# model the mock of tests/agents/mock_api.py scripted to call cordon's
# tools.  The delegated work is cordon's: a detached job of the fake
# hermes agent in its sandbox, audited via mcp.  Talks only to
# 127.0.0.1; touches only the temp dirs it makes.
import json
import os
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.join(ROOT, "tests", "agents"))

from agents_util import (make_agents_home, server_env,  # noqa: E402
                         wait_audit)
from conftest import Cordon, child_env, cordon_bin, finish  # noqa: E402
from mock_api import Mock  # noqa: E402

CLIS = os.environ.get("CORDON_AGENT_CLIS",
                      "/opt/cordon-test-agents/node_modules/.bin")
RUN_S = 120.0
KEY = "sk-ant-api03-mockKey" + "CallerQ1w2E3r4T5"


@pytest.fixture
def cordon_home(tmp_path, monkeypatch):
    if not os.access(os.path.join(CLIS, "claude"), os.X_OK):
        pytest.fail(f"claude not installed in {CLIS}; scripts/test's "
                    "agents suite installs it from tests/agents/")
    server_env(monkeypatch)
    c = Cordon(make_agents_home(tmp_path), ["--allow-root"]).start()
    yield c
    finish(c)


def claude(tmp_path, mock, home, prompt):
    """One `claude -p` whose MCP server is `cordon mcp --home HOME`."""
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"cordon": {
        "command": cordon_bin(), "args": ["mcp", "--home", str(home)]}}}))
    chome = tmp_path / "caller-home"
    chome.mkdir(exist_ok=True)
    env = dict(child_env(), HOME=str(chome), ANTHROPIC_BASE_URL=mock.url,
               ANTHROPIC_API_KEY=KEY, DISABLE_AUTOUPDATER="1",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    env["PATH"] = CLIS + ":" + env.get("PATH", "/usr/bin:/bin")
    return subprocess.run(
        [os.path.join(CLIS, "claude"), "-p", "--output-format=stream-json",
         "--verbose", f"--mcp-config={cfg}", "--strict-mcp-config",
         "--allowedTools=mcp__cordon__start_job,mcp__cordon__list_jobs",
         prompt],
        capture_output=True, text=True, timeout=RUN_S, env=env,
        cwd=str(chome))


def test_mc3_real_claude_code_starts_a_job_through_cordon_mcp(
        tmp_path, cordon_home):
    c = cordon_home
    with Mock() as mock:
        mock.script(
            [("say", "Delegating."),
             ("tool", "mcp__cordon__start_job",
              {"agent": "hermes", "prompt": "slowtokens 2"})],
            [("say", "Checking."), ("tool", "mcp__cordon__list_jobs", {})],
            [("say", "The job is cordon's now.")])
        r = claude(tmp_path, mock, c.home, "delegate a job to hermes")
        assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
        results = mock.tool_results("anthropic")
    # The tools answered the real CLI: a job id, then the job listed.
    assert len(results) == 2, (results, r.stdout[-3000:])
    jid = json.loads(results[0])["jobId"]
    listed = json.loads(results[1])["jobs"]
    assert [j["jobId"] for j in listed] == [jid]
    assert listed[0]["via"] == "mcp" and listed[0]["agent"] == "hermes"
    # Detached: it ran to its end in cordon, whoever was listening.
    deadline = time.monotonic() + 30
    while True:
        job = c.request("GET", f"/api/jobs/{jid}/wait?timeoutMs=5000") \
            .json()["job"]
        if job["state"] != "running" or time.monotonic() > deadline:
            break
    assert job["state"] == "succeeded", job
    s = wait_audit(c.home, lambda x: x["kind"] == "job.start" and
                   x["jobId"] == jid)
    assert s[0]["via"] == "mcp"
    inv = wait_audit(c.home, lambda x: x["kind"] == "agent.invoke" and
                     x["runId"] == jid)
    assert inv[0]["via"] == "mcp" and inv[0]["agent"] == "hermes"
