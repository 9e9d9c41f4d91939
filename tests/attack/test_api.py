# API-2 ... API-5, API-8 (and PER-8 strict bodies): hostile JSON bodies,
# encodings, route paths and query strings.  The run route is aimed at
# `marked`, whose child writes a marker file when it starts: a refused
# body must spawn nothing.  Invariants after every row (conftest.py).
import json

import pytest

from agents_util import post_json
from conftest import bug

RUN = "/api/agents/marked/run"


def deep(n):
    return b"[" * n + b"]" * n


BODIES = [
    # (id, raw body, status, code)
    ("dup-prompt", b'{"prompt":"hi","prompt":"--help"}', 400,
     "invalid-body"),
    ("dup-session", b'{"prompt":"hi","session":"a","session":"b"}', 400,
     "invalid-body"),
    ("raw-ff", b'{"prompt":"\xff"}', 400, "invalid-body"),
    ("overlong-slash", b'{"prompt":"\xc0\xaf"}', 400, "invalid-body"),
    ("overlong-nul", b'{"prompt":"a\xc0\x80b"}', 400, "invalid-body"),
    ("overlong-dot3", b'{"prompt":"\xe0\x80\xae"}', 400, "invalid-body"),
    ("utf8-surrogate", b'{"prompt":"\xed\xa0\x80"}', 400, "invalid-body"),
    ("above-10ffff", b'{"prompt":"\xf4\x90\x80\x80"}', 400, "invalid-body"),
    ("five-byte", b'{"prompt":"\xf8\x88\x80\x80\x80"}', 400,
     "invalid-body"),
    ("truncated-seq", b'{"prompt":"\xe2\x82"}', 400, "invalid-body"),
    ("lone-continuation", b'{"prompt":"\x80"}', 400, "invalid-body"),
    ("invalid-in-key", b'{"pro\xffmpt":"hi"}', 400, "invalid-body"),
    ("escaped-nul", b'{"prompt":"a\\u0000b"}', 400, "invalid-prompt"),
    ("escaped-nul-key", b'{"prompt\\u0000x":"hi"}', 400, "invalid-body"),
    ("raw-nul", b'{"prompt":"a\x00b"}', 400, "invalid-body"),
    ("raw-newline", b'{"prompt":"a\nb"}', 400, "invalid-body"),
    ("raw-tab", b'{"prompt":"a\tb"}', 400, "invalid-body"),
    ("bom", b'\xef\xbb\xbf{"prompt":"hi"}', 400, "invalid-body"),
    ("nan", b'{"prompt":NaN}', 400, "invalid-body"),
    ("infinity", b'{"prompt":"hi","session":Infinity}', 400,
     "invalid-body"),
    ("neg-infinity", b'{"prompt":-Infinity}', 400, "invalid-body"),
    ("huge-exponent", b'{"prompt":1e999999}', 400, "invalid-body"),
    ("huge-int", b'{"prompt":"hi","session":' + b"9" * 400 + b"}", 400,
     "invalid-session"),
    ("number-prompt", b'{"prompt":123456789012345678901234567890}', 400,
     "invalid-prompt"),
    ("deep-array-1k", deep(1000), 400, "invalid-body"),
    ("deep-array-100k", deep(100000), 400, "invalid-body"),
    ("deep-prompt", b'{"prompt":' + deep(5000) + b"}", 400, "invalid-body"),
    ("deep-object", b'{"a":' * 3000 + b"1" + b"}" * 3000, 400,
     "invalid-body"),
    ("trailing-garbage", b'{"prompt":"hi"} x', 400, "invalid-body"),
    ("two-objects", b'{"prompt":"hi"}{"prompt":"--help"}', 400,
     "invalid-body"),
    ("trailing-comma", b'{"prompt":"hi",}', 400, "invalid-body"),
    ("comment", b'{"prompt":"hi" /* c */}', 400, "invalid-body"),
    ("line-comment", b'{"prompt":"hi"} // c', 400, "invalid-body"),
    ("single-quotes", b"{'prompt':'hi'}", 400, "invalid-body"),
    ("unquoted-key", b'{prompt:"hi"}', 400, "invalid-body"),
    ("empty", b"", 400, "invalid-body"),
    ("spaces", b"   ", 400, "invalid-body"),
    ("null", b"null", 400, "invalid-body"),
    ("array", b'["hi"]', 400, "invalid-body"),
    ("string", b'"hi"', 400, "invalid-body"),
    ("number", b"1", 400, "invalid-body"),
    ("true", b"true", 400, "invalid-body"),
    ("prompt-array", b'{"prompt":["hi"]}', 400, "invalid-prompt"),
    ("prompt-object", b'{"prompt":{"a":1}}', 400, "invalid-prompt"),
    ("prompt-true", b'{"prompt":true}', 400, "invalid-prompt"),
    ("key-case", b'{"Prompt":"hi"}', 400, "invalid-body"),
    ("key-space", b'{"prompt ":"hi"}', 400, "invalid-body"),
    ("env-in-body", b'{"prompt":"hi","env":{"LD_PRELOAD":"/tmp/x.so"}}',
     400, "invalid-body"),
    ("args-in-body", b'{"prompt":"hi","args":["--help"]}', 400,
     "invalid-body"),
    ("bin-in-body", b'{"prompt":"hi","bin":"/bin/sh"}', 400,
     "invalid-body"),
    ("cwd-in-body", b'{"prompt":"hi","cwd":"/root"}', 400, "invalid-body"),
    ("proto", b'{"prompt":"hi","__proto__":{"x":1}}', 400, "invalid-body"),
    ("session-slash", b'{"prompt":"hi","session":"../x"}', 400,
     "invalid-session"),
    ("session-empty", b'{"prompt":"hi","session":""}', 400,
     "invalid-session"),
    ("session-nul", b'{"prompt":"hi","session":"a\\u0000"}', 400,
     "invalid-session"),
    ("session-number", b'{"prompt":"hi","session":5}', 400,
     "invalid-session"),
    ("session-null", b'{"prompt":"hi","session":null}', 400,
     "invalid-session"),
    ("session-unicode", '{"prompt":"hi","session":"s\u00e9"}'.encode(),
     400, "invalid-session"),
    ("prompt-256001", b'{"prompt":"' + b"x" * 256001 + b'"}', 400,
     "invalid-prompt"),
    ("prompt-flag", b'{"prompt":"--help"}', 400, "prompt-flag-like"),
]


def _id(r):
    return r.values[0] if hasattr(r, "values") else r[0]


MARKED = BODIES


@pytest.mark.parametrize("body,text", [
    (b'{"prompt":"x\\ud800y"}', "x\ufffdy"),
    (b'{"prompt":"\\udc00x"}', "\ufffdx"),
    (b'{"prompt":"\\ude00\\ud83d"}', "\ufffd\ufffd"),
    (b'{"prompt":"\\ud83d\\ude00"}', "\U0001F600"),
], ids=["lone-high", "lone-low", "swapped-pair", "valid-pair"])
def test_api3_escaped_surrogates_reach_agent_as_valid_utf8(c, body, text):
    r = post_json(c, "/api/agents/hermes/run", raw=body)
    assert r.status == 200, r
    toks = [json.loads(ln) for ln in r.body.split(b"\n") if ln]
    out = "".join(e["text"] for e in toks if e["kind"] == "token")
    assert out.endswith(f": {text}\n"), out


@pytest.mark.parametrize("rid,body,status,code", MARKED,
                         ids=[_id(r) for r in MARKED])
def test_api3_hostile_run_body(c, world, rid, body, status, code):
    mark = world.base / "home.marks" / "marker"
    if mark.exists():
        mark.unlink()
    r = post_json(c, RUN, raw=body)
    assert r is not None and r.status == status, r
    assert r.json() == {"ok": False, "error": code}, r
    assert not mark.exists(), "a refused body started the agent"


@pytest.mark.parametrize("body", [
    b'{"decision":"deny","decision":"allow"}',
    b'{"decision":"allow\\u0000"}', b'{"decision":"\xc0\xaf"}',
    b'{"decision":NaN}', deep(50000), b'{"decision":"allow"} {}'],
    ids=["dup", "nul", "overlong", "nan", "deep", "trailing"])
def test_sbx7_hostile_decision_body(c, body):
    """Refused before the lookup: a valid body would get 404."""
    r = post_json(c, "/api/approvals/0123456789abcdef", raw=body)
    assert r.status == 400, r
    assert r.json()["error"] in ("invalid-body", "invalid-decision"), r


@pytest.mark.parametrize("body", [b'{"x":1}', b"[]", b'{"a":' * 500 +
                                  b"1" + b"}" * 500, b"\xff", b"null"],
                         ids=["unknown-key", "array", "deep", "bad-utf8",
                              "null"])
def test_api5_hostile_action_body(c, body):
    r = post_json(c, "/api/agents/hermes/actions/status", raw=body)
    assert r.status == 400 and r.json() == {"ok": False,
                                            "error": "invalid-body"}, r


ROUTES = [
    # (id, method, target, status, code)
    ("agent-dotdot", "POST", "/api/agents/%2e%2e/run", 404,
     "unknown-agent"),
    ("agent-encoded-slash", "POST", "/api/agents/hermes%2frun/x", 404,
     "not-found"),
    ("agent-overlong-dots", "POST", "/api/agents/%c0%ae%c0%ae/run", 404,
     "unknown-agent"),
    ("agent-nul", "POST", "/api/agents/hermes%00/run", 404, "unknown-agent"),
    ("agent-upper", "POST", "/api/agents/HERMES/run", 404, "unknown-agent"),
    ("agent-bad-pct", "POST", "/api/agents/%zz/run", 404, "unknown-agent"),
    ("agent-long", "POST", "/api/agents/" + "a" * 300 + "/run", 404,
     "not-found"),
    ("agent-nonce", "POST", "/api/agents/{n}/run", 404, "unknown-agent"),
    ("agent-empty", "POST", "/api/agents//run", 404, "not-found"),
    ("run-trailing-slash", "POST", "/api/agents/hermes/run/", 404,
     "not-found"),
    ("run-dot-segment", "POST", "/api/agents/hermes/./run", 404,
     "not-found"),
    ("run-dotdot-segment", "POST", "/api/agents/x/../hermes/run", 404,
     "not-found"),
    ("get-run", "GET", "/api/agents/hermes/run", 405, "method-not-allowed"),
    ("action-dotdot", "POST", "/api/agents/hermes/actions/%2e%2e", 404,
     "unknown-action"),
    ("action-slash", "POST", "/api/agents/hermes/actions/status%2f..", 404,
     "unknown-action"),
    ("action-upper", "POST", "/api/agents/hermes/actions/STATUS", 404,
     "unknown-action"),
    ("action-nonce", "POST", "/api/agents/hermes/actions/{n}", 404,
     "unknown-action"),
    ("action-of-unknown", "POST", "/api/agents/{n}/actions/status", 404,
     "unknown-agent"),
    ("cancel-dotdot", "POST", "/api/runs/%2e%2e/cancel", 404,
     "unknown-run"),
    ("cancel-long", "POST", "/api/runs/" + "0" * 64 + "/cancel", 404,
     "unknown-run"),
    ("cancel-nonce", "POST", "/api/runs/{n}/cancel", 404, "unknown-run"),
    ("agent-get-dotdot", "GET", "/api/agents/..", 404, "unknown-agent"),
    ("agent-get-pct", "GET", "/api/agents/%2e%2e%2fhealth", 404,
     "unknown-agent"),
    ("agent-get-nonce", "GET", "/api/agents/{n}", 404, "unknown-agent"),
    ("approval-nonce", "POST", "/api/approvals/{n}", 404,
     "unknown-approval"),
    ("api-dotdot-health", "GET", "/api/agents/../health", 404, "not-found"),
    ("api-double-slash", "GET", "//api/health", 400, "bad-request"),
    ("api-encoded-api", "GET", "/%61pi/health", 404, "not-found"),
]


@pytest.mark.parametrize("rid,method,target,status,code", ROUTES,
                         ids=[r[0] for r in ROUTES])
def test_api_hostile_route(c, world, rid, method, target, status, code):
    target = target.replace("{n}", world.nonce())
    r = c.request(method, target,
                  headers=[("Content-Type", "application/json")],
                  body=b'{"prompt":"hi"}' if target.endswith("/run") else
                  (b"{}" if method == "POST" else b""))
    assert r is not None and r.status == status, r
    assert r.json() == {"ok": False, "error": code}, r


QUERIES = [
    "kind=bogus", "kind=agent.invoke&kind=agent.invoke", "limit=0",
    "limit=-1", "limit=1001", "limit=1e3", "limit=0x10", "limit=" + "9" * 30,
    "limit=%00", "limit=10%00", "since=yesterday", "since=-1",
    "since=" + "9" * 30, "agent=../x", "agent=a%00b", "agent=%ff",
    "x=1", "kind", "kind=%zz", "limit=%2010", "kind=http.request;x",
    "agent=" + "a" * 200,
]


@pytest.mark.parametrize("q", QUERIES)
def test_api8_hostile_audit_query(c, q):
    r = c.request("GET", "/api/audit?" + q)
    assert r is not None and r.status == 400, r
    assert r.json() == {"ok": False, "error": "invalid-query"}, r


def test_api8_audit_answers_never_hold_bodies(c, world):
    n = world.nonce()
    post_json(c, RUN, {"prompt": f"say {n}"})
    r = c.request("GET", "/api/audit?limit=1000")
    assert r.status == 200, r
    assert n.encode() not in r.body
    assert len(r.json()["records"]) <= 1000


def test_api2_listing_holds_no_secret_or_env_value(c):
    r = c.request("GET", "/api/agents")
    assert r.status == 200
    body = json.dumps(r.json())
    assert "hello" not in body  # MANIFEST_VAR's value of envdump
    assert "MANIFEST_VAR" not in body
