# AU-1 ... AU-7 and PER-10: a nonce put in every place a hostile client
# or agent can put one — prompt, session, path segments, query strings,
# headers, cookies, unknown body keys, agent output — never reaches the
# audit files (raw scan and parsed walk, by the invariants in conftest.py
# after every row).  The records that are written are checked for shape:
# route templates, redacted argv, lengths only.
import json
import os
import stat
import subprocess
import time

import pytest

from agents_util import audit_records, post_json, run, wait_audit
from audit_util import walk_values
from conftest import BUILD, child_env, raw_http


def place(c, n):
    """Requests putting nonce n in one place each: id -> callable."""
    return {
        "prompt": lambda: run(c, "hermes", f"say {n}"),
        "prompt-flag": lambda: run(c, "hermes", f"--{n}"),
        "prompt-fused": lambda: run(c, "fused", f"-{n}"),
        "prompt-stdin": lambda: run(c, "viastdin", f"-{n}"),
        "session": lambda: run(c, "hermes", "hi", session=n),
        "agent-segment": lambda: run(c, n, "hi"),
        "action-segment": lambda: post_json(
            c, f"/api/agents/hermes/actions/{n}", {}),
        "run-segment": lambda: post_json(c, f"/api/runs/{n}/cancel", {}),
        "approval-segment": lambda: post_json(
            c, f"/api/approvals/{n}", {"decision": "deny"}),
        "unknown-route": lambda: c.request("GET", f"/api/{n}"),
        "audit-query": lambda: c.request("GET", f"/api/audit?agent={n}"),
        "vault-query": lambda: c.request(
            "GET", f"/api/vault/note?path={n}.md"),
        "user-agent": lambda: c.request(headers=[("User-Agent", n)]),
        "referer": lambda: c.request(headers=[("Referer", f"http://{n}/")]),
        "forwarded-for": lambda: c.request(
            headers=[("X-Forwarded-For", n)]),
        "x-api-key": lambda: c.request(headers=[("X-Api-Key", n)]),
        "cookie": lambda: c.request(headers=[("Cookie", f"x={n}")]),
        "page-key": lambda: c.request(
            auth=False, headers=[("X-Cordon-Page", n)]),
        "bad-bearer": lambda: c.request(
            auth=False, headers=[("Authorization", f"Bearer {n}")]),
        "body-unknown-key": lambda: post_json(
            c, "/api/agents/hermes/run", {"prompt": "hi", n: 1}),
        "body-bad-json": lambda: post_json(
            c, "/api/agents/hermes/run", raw=n.encode()),
        "action-body": lambda: post_json(
            c, "/api/agents/hermes/actions/status", {"x": n}),
        "host-header": lambda: c.request(host=f"{n}:{c.port}"),
        "login-code": lambda: c.request("GET", f"/ui/login?code={n}",
                                        auth=False),
        "raw-request-line": lambda: raw_http(
            c.port, (f"GET /api/health?{n} HTTP/1.1\r\nHost: 127.0.0.1:"
                     f"{c.port}\r\nAuthorization: Bearer {c.token}\r\n"
                     "Connection: close\r\n\r\n").encode()),
        "agent-output": lambda: run(c, "hermes", f"echo {n}"),
        "agent-stderr": lambda: run(c, "hermes", f"fail {n}"),
    }


PLACES = list(place(None, "x"))


@pytest.mark.parametrize("where", PLACES)
def test_au5_nonce_never_audited(c, world, where):
    n = world.nonce()

    def sentinels():
        return len([r for r in audit_records(world.home, "http.request")
                    if r["route"].startswith("/api/runs/")])
    before = sentinels()
    place(c, n)[where]()
    # http.request records follow the answers, in order (GETs of health
    # and audit are not recorded): once a later request's record is in,
    # so is every record of this case, and the invariants scan them.
    post_json(c, "/api/runs/0000000000000000/cancel", {})
    deadline = time.monotonic() + 5
    while sentinels() <= before:
        assert time.monotonic() < deadline, "request never audited"
        time.sleep(0.02)


def test_per10_request_records_carry_templates(c, world):
    n = world.nonce()
    run(c, n, "hi")
    post_json(c, f"/api/runs/{n}/cancel", {})
    recs = wait_audit(world.home, lambda r: r["kind"] == "http.request"
                      and r["route"].startswith("/api/runs/"))
    for r in audit_records(world.home, "http.request"):
        assert set(r) >= {"method", "route", "status", "durationMs",
                          "bytesIn", "bytesOut"}, r
        assert "{" in r["route"] or r["route"].count("/") <= 3, r
    assert recs[-1]["route"] in ("/api/runs/{}/cancel",
                                 "/api/runs/{runId}/cancel"), recs[-1]


def test_au4_flag_prompt_redacted_in_argv(c, world):
    n = world.nonce()
    r, _ = run(c, "fused", f"-{n}")
    assert r.status == 200
    rec = wait_audit(world.home, lambda x: x["kind"] == "agent.invoke" and
                     x["agent"] == "fused")[-1]
    assert len(rec["argsRedacted"]) == 1, rec
    assert "[PROMPT_REDACTED]" in rec["argsRedacted"][0], rec
    assert rec["promptChars"] == len(n) + 1


def test_au4_secret_shaped_prompt_never_audited(c, world):
    fake = "ghp_" + "Z9" * 18
    r, _ = run(c, "hermes", f"token {fake}")
    assert r.status == 200
    wait_audit(world.home, lambda x: x["kind"] == "agent.invoke.complete")
    for rec in audit_records(world.home):
        for v in walk_values(rec):
            assert fake not in str(v), rec


def test_au1_modes_after_the_attack(c, world):
    d = os.path.join(world.home, "audit")
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    for name in os.listdir(d):
        st = os.stat(os.path.join(d, name))
        assert stat.S_IMODE(st.st_mode) == 0o600, name


def test_au2_every_record_has_only_schema_fields(c, world):
    # No stray field carries input: every key is a short camelCase name.
    for rec in audit_records(world.home):
        for k in rec:
            assert k.isidentifier() and len(k) <= 24, rec


def test_au7_chain_verifies_after_the_attack(c, world):
    p = subprocess.run([os.path.join(BUILD, "cordon"), "audit", "verify",
                        "--home", str(world.home)], capture_output=True,
                       text=True, timeout=60, env=child_env())
    assert p.returncode == 0, (p.stdout, p.stderr)


def test_api8_audit_tail_holds_no_nonce(c, world):
    r = c.request("GET", "/api/audit?limit=1000")
    assert r.status == 200, r
    for n in world.nonces:
        assert n.encode() not in r.body
    assert json.loads(r.body)["ok"] is True
