# EG-2, EG-3: a hostile agent behind `network: proxy` through the real
# egressd.  EG-2: names whose answers (the test resolver) carry an
# internal IPv4 address in IPv6 forms other than "mapped" (local-use
# NAT64, IPv4-translated), and CONNECT authorities spelt to be read as a
# listed one (trailing dot, userinfo, port forms, percent-encoding, zone
# ids, a decimal address, a wildcard's apex or a suffix without its dot):
# each a fixed 403, no unlisted name in a record.  EG-3, against its
# credential route: request targets an upstream would read
# as leaving the route's base path once it decodes them (%2e%2e, encoded
# or back slashes, "..;"), and methods that make an upstream echo the
# request, the route's key with it, back to the agent (TRACE).  The mock
# upstream (TLS, a test CA, on 127.0.0.2) honours TRACE as a careless
# server does.  Each case: a fixed 403 bad-request, nothing reached the
# upstream, the key nowhere in what the agent got, one egress.request
# record of the refusal; and a session cookie the upstream sets for the
# key never reaches the agent.  The module's invariants after each case
# (conftest.py), with the route's key being the file secret they look
# for.
import json

import pytest

import test_egress_route as er
from agents_util import FILE_SECRET, audit_records
from conftest import run_world
from test_egress import UP_ADDR

MANIFEST = """name: netbot
transport: subprocess
transportConfig:
  bin: /usr/bin/python3
  args: ["-c", "{{prompt}}"]
secrets:
  ANTHROPIC_API_KEY: fake.apiKey
sandbox:
  network: proxy
egress:
  allow: ["mock.test:{port}", "nat64.test", "siit.test", "*.wild.test"]
  idleTimeoutSec: 30
  routes:
    anthropic:
      upstream: https://mock.test:{port}/v1/base
      secret: ANTHROPIC_API_KEY
      auth: x-api-key
  testResolve:
    mock.test: {addr}
    nat64.test: "64:ff9b:1::7f00:1"
    siit.test: "::ffff:0:169.254.169.254"
  testAllowAddress: {addr}
"""


class Echo(er.Handler):
    def do_TRACE(self):
        """The request as it came, key and all (RFC 9110 TRACE)."""
        self.server.seen.append({"path": self.path, "method": "TRACE"})
        body = (self.requestline + "\r\n" + str(self.headers)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "message/http")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


    def do_GET(self):
        if not self.path.endswith("/cookie"):
            return super().do_GET()
        # A session handed out for the key: worth as much as the key.
        self.server.seen.append({"path": self.path, "method": "GET"})
        self.send_response(200)
        self.send_header("Set-Cookie", "sess=earned-by-key; Secure")
        self.send_header("set-cookie2", "old=earned-by-key")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


@pytest.fixture(scope="module")
def mock(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = er.make_ca(d)
    srv = er.serve(er.make_cert(d, "good", "mock.test", ca), Echo)
    yield srv, ca[1]
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def world(tmp_path_factory, mock):
    srv, ca = mock
    yield from run_world(
        tmp_path_factory,
        extra={"netbot": MANIFEST.format(port=srv.server_address[1],
                                         addr=UP_ADDR)},
        env={"CORDON_TEST_EGRESS": "1", "CORDON_TEST_EGRESS_CA": ca})


def req(method, target):
    return (f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:3128\r\n"
            f"x-api-key: {er.PH}\r\nContent-Length: 0\r\n\r\n")


ESCAPES = [
    ("enc-dotdot", "GET", "/anthropic/%2e%2e/%2e%2e/admin"),
    ("enc-dotdot-upper", "GET", "/anthropic/%2E%2E/admin"),
    ("half-enc-dotdot", "POST", "/anthropic/.%2e/admin"),
    ("enc-dot", "GET", "/anthropic/%2e/x"),
    ("enc-slash-dotdot", "GET", "/anthropic/x%2f..%2f..%2fadmin"),
    ("enc-backslash-dotdot", "GET", "/anthropic/..%5cadmin"),
    ("backslash-dotdot", "GET", "/anthropic/..\\admin"),
    ("param-dotdot", "GET", "/anthropic/..;/admin"),
    ("enc-nul", "GET", "/anthropic/%00/admin"),
    ("bad-escape", "GET", "/anthropic/%zz"),
    ("overlong-dotdot", "GET", "/anthropic/%c0%ae%c0%ae/admin"),
    ("trace", "TRACE", "/anthropic/messages"),
    ("trace-lower", "trace", "/anthropic/messages"),
    ("track", "TRACK", "/anthropic/messages"),
]


@pytest.mark.parametrize("case,method,target", ESCAPES,
                         ids=[e[0] for e in ESCAPES])
def test_eg3_route_escape_refused(c, world, mock, case, method, target):
    srv, _ = mock
    srv.seen.clear()
    before = len(audit_records(world.home, "egress.request"))
    _, out = er.agent_run(c, [req(method, target)])
    ans = out[0]
    assert er.refused(ans, "403", "bad-request"), (case, ans)
    assert FILE_SECRET not in json.dumps(ans), case
    assert srv.seen == [], (case, srv.seen)
    recs = er.wait_audit(world.home, lambda r: r["kind"] ==
                         "egress.request" and r.get("reason") ==
                         "bad-request")
    assert len(audit_records(world.home, "egress.request")) > before, recs


def test_eg3_route_near_misses_reach_upstream(c, world, mock):
    """What looks like them but is not: sent, under the route's base."""
    srv, _ = mock
    srv.seen.clear()
    _, out = er.agent_run(c, [req("GET", "/anthropic/%2e%2ex/a%2Fb"),
                              req("GET", "/anthropic/v1?next=/../x")])
    for ans in out:
        assert ans["head"].startswith("HTTP/1.1 200"), out
    assert [s["path"] for s in srv.seen] == [
        "/v1/base/%2e%2ex/a%2Fb", "/v1/base/v1?next=/../x"], srv.seen
    assert FILE_SECRET not in json.dumps(out)


def test_eg3_route_answer_keeps_no_session(c, world, mock):
    """A cookie the upstream set for the route's key never reaches the
    agent, who could take it to the upstream through a tunnel."""
    srv, _ = mock
    srv.seen.clear()
    _, out = er.agent_run(c, [req("GET", "/anthropic/cookie")])
    assert out[0]["head"].startswith("HTTP/1.1 200"), out
    assert out[0]["body"] == "ok", out
    assert "earned-by-key" not in json.dumps(out), out
    assert [s["path"] for s in srv.seen] == ["/v1/base/cookie"]


def connect(authority):
    return f"CONNECT {authority} HTTP/1.1\r\n\r\n"


# EG-2: names whose answers carry an internal IPv4 address in IPv6 forms
# that are not plainly "mapped", and authority spellings an allowlist
# entry might be read as.
CONNECTS = [
    ("nat64-local", connect("nat64.test:443"), "403", "address-refused"),
    ("siit-metadata", connect("siit.test:443"), "403", "address-refused"),
    ("trailing-dot", connect("siit.test.:443"), "403", "bad-request"),
    ("upper-trailing-dot", connect("NAT64.TEST.:443"), "403",
     "bad-request"),
    ("userinfo", connect("evil.example@siit.test:443"), "403",
     "bad-request"),
    ("port-zero-lead", connect("siit.test:0443"), "403", "bad-request"),
    ("port-plus", connect("siit.test:+443"), "403", "bad-request"),
    ("port-empty", connect("siit.test:"), "403", "bad-request"),
    ("port-huge", connect("siit.test:4294967739"), "403", "bad-request"),
    ("pct-host", connect("%73iit.test:443"), "403", "bad-request"),
    ("wild-apex", connect("wild.test:443"), "403", "host-not-allowed"),
    ("wild-suffix-trick", connect("evilwild.test:443"), "403",
     "host-not-allowed"),
    ("v6-zone", connect("[fe80::1%25lo]:443"), "403", "bad-request"),
    ("dec-ipv4", connect("2130706433:443"), "403", "bad-request"),
]


@pytest.mark.parametrize("case,raw,code,reason", CONNECTS,
                         ids=[e[0] for e in CONNECTS])
def test_eg2_connect_spellings_refused(c, world, case, raw, code, reason):
    _, out = er.agent_run(c, [raw])
    assert er.refused(out[0], code, reason), (case, out)
    assert "evil" not in json.dumps(
        audit_records(world.home, "egress.connect"))
