# Credential routes (EG-3, EG-4) over the real `cordon run`: a
# `network: proxy` agent (python3, its program the prompt) sends plain
# HTTP to its route's URL on the loopback proxy; egressd forwards it over
# TLS to a mock upstream with the real key put on.  The mock listens on
# 127.0.0.2 with certificates of a test CA made here, which egressd trusts
# only through CORDON_TEST_EGRESS_CA, honoured with CORDON_TEST_EGRESS=1
# (never in production), as are testResolve / testAllowAddress.
# Touches only the temp dirs it makes and sockets on 127.0.0.2.
import hashlib
import http.server
import json
import os
import signal
import socketserver
import ssl
import subprocess
import threading
import time

import pytest

from agents_util import audit_lines, audit_records, text_of, wait_audit
from test_egress import UP_ADDR, long_run

REAL = "sk-ant-real-0c0ffee0c0ffee0c0ffee"
REAL2 = "sk-openai-real-7e57ab1e7e57ab1e"

MANIFEST = """
name: netbot
transport: subprocess
transportConfig:
  bin: /usr/bin/python3
  args: ["-c", "{{prompt}}"]
secrets:
  ANTHROPIC_API_KEY: anthropic.apiKey
  OPENAI_API_KEY: openai.apiKey
sandbox:
  network: proxy
egress:
  allow: ["mock.test:{good}", "mock.test:{wrong}", "mock.test:{selfs}"]
  idleTimeoutSec: 30
  routes:
    anthropic:
      upstream: https://mock.test:{good}
      secret: ANTHROPIC_API_KEY
      auth: x-api-key
      baseUrlEnv: ANTHROPIC_BASE_URL
    openai:
      upstream: https://mock.test:{good}/v1
      secret: OPENAI_API_KEY
      auth: bearer
      baseUrlEnv: OPENAI_BASE_URL
    wrongname:
      upstream: https://mock.test:{wrong}
      secret: ANTHROPIC_API_KEY
      auth: x-api-key
    selfsigned:
      upstream: https://mock.test:{selfs}
      secret: ANTHROPIC_API_KEY
      auth: x-api-key
  testResolve:
    mock.test: {addr}
  testAllowAddress: {addr}
"""


def openssl(*args):
    subprocess.run(("openssl",) + args, check=True, capture_output=True)


def make_cert(d, name, cn, ca=None):
    """A P-256 key and a certificate for cn: signed by ca, or self-signed."""
    key, crt = str(d / f"{name}.key"), str(d / f"{name}.pem")
    ext = d / f"{name}.ext"
    ext.write_text(f"subjectAltName=DNS:{cn}\n")
    if ca is None:
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out",
                crt, "-subj", f"/CN={cn}", "-days", "2", "-addext",
                f"subjectAltName=DNS:{cn}")
        return key, crt
    csr = str(d / f"{name}.csr")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-keyout", key, "-out", csr, "-subj", f"/CN={cn}")
    openssl("x509", "-req", "-in", csr, "-CA", ca[1], "-CAkey", ca[0],
            "-CAcreateserial", "-out", crt, "-days", "2", "-extfile",
            str(ext))
    return key, crt


def make_ca(d):
    """A test CA in d (a world-readable dir): its key and certificate."""
    ca = str(d / "ca.key"), str(d / "ca.pem")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:P-256", "-nodes", "-keyout", ca[0], "-out",
            ca[1], "-subj", "/CN=cordon test CA", "-days", "2", "-addext",
            "basicConstraints=critical,CA:TRUE", "-addext",
            "keyUsage=critical,keyCertSign")
    os.chmod(d, 0o755)
    os.chmod(ca[1], 0o644)
    return ca


class Mock(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n) if n else b""
        self.server.seen.append({
            "path": self.path, "host": self.headers.get("Host"),
            "x-api-key": self.headers.get_all("x-api-key"),
            "authorization": self.headers.get_all("Authorization"),
            "cookie": self.headers.get("Cookie"), "body": body.decode()})
        if self.path.endswith("/drop"):
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"partial")
            self.wfile.flush()
            time.sleep(0.2)
            self.connection.shutdown(2)
            return
        if self.path.endswith("/silent"):
            self.connection.shutdown(2)  # closed before any answer
            self.close_connection = True
            return
        if self.path.endswith("/folded"):
            # A head with an obs-fold line: not passed on.
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\n"
                             b"Content-Length: 2\r\n\r\nok")
            self.wfile.flush()
            self.close_connection = True
            return
        if self.path.endswith("/keepalive"):
            # An upstream that would keep its connection for another
            # request, and says so.
            self.send_response(200)
            self.send_header("Connection", "keep-alive")
            self.send_header("Keep-Alive", "timeout=60")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
            self.wfile.flush()
            return
        if self.path.endswith("/slow"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for i in range(60):
                self.wfile.write(f"data: {i}\n\n".encode())
                self.wfile.flush()
                time.sleep(0.5)
            return
        # The Messages API's shape: an SSE stream in two bursts.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"event: message_start\ndata: {}\n\n")
        self.wfile.flush()
        time.sleep(1.0)
        self.wfile.write(b"event: message_stop\ndata: {}\n\n")
        self.wfile.flush()
        self.close_connection = True

    do_GET = do_POST


def serve(cert, handler=Handler):
    srv = Mock((UP_ADDR, 0), handler)
    srv.seen = []
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert[1], cert[0])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.fixture
def mocks(tmp_path, monkeypatch):
    d = tmp_path / "pki"
    d.mkdir()
    ca = make_ca(d)
    good = serve(make_cert(d, "good", "mock.test", ca))
    wrong = serve(make_cert(d, "wrong", "other.test", ca))
    selfs = serve(make_cert(d, "selfs", "mock.test"))
    monkeypatch.setenv("CORDON_TEST_EGRESS", "1")
    monkeypatch.setenv("CORDON_TEST_EGRESS_CA", ca[1])
    yield {"good": good, "wrong": wrong, "selfs": selfs, "ca": ca[1]}
    for s in (good, wrong, selfs):
        s.shutdown()
        s.server_close()


def route_home(tmp_path, mocks):
    home = tmp_path / "home"
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "netbot.yaml").write_text(MANIFEST.format(
        good=mocks["good"].server_address[1],
        wrong=mocks["wrong"].server_address[1],
        selfs=mocks["selfs"].server_address[1], addr=UP_ADDR))
    p = home / "secrets.yaml"
    p.write_text(f"anthropic:\n  apiKey: {REAL}\nopenai:\n  apiKey: {REAL2}\n")
    os.chmod(p, 0o600)
    return home


# The agent: each request sent raw to its proxy, what came back printed
# as one JSON line (head, body, when the first and last bytes came).
CLIENT = r'''
import hashlib, json, os, socket, time
def ask(raw, timeout=20):
    out = {}
    try:
        s = socket.create_connection(("127.0.0.1", 3128), timeout=timeout)
        s.sendall(raw)
        data, t0, first = b"", time.monotonic(), None
        while True:
            c = s.recv(65536)
            if not c:
                break
            if first is None:
                first = time.monotonic() - t0
            data += c
        out["last"] = time.monotonic() - t0
        out["first"] = first
        head, _, body = data.partition(b"\r\n\r\n")
        out["head"] = head.decode("latin-1")
        out["body"] = body[:300].decode("latin-1")
    except Exception as e:
        out["err"] = type(e).__name__
    print(json.dumps(out), flush=True)
# Any value (or word of one) whose hash is one of the real keys'?
words = [w for v in os.environ.values() for w in [v] + v.split("=")]
with open("/proc/self/environ", "rb") as f:
    words += f.read().decode("latin-1").replace("=", "\0").split("\0")
hit = any(hashlib.sha256(w.encode()).hexdigest()[:16] in SHAS for w in words)
print(json.dumps({"real": hit, "n": len(words),
                  "key": os.environ.get("ANTHROPIC_API_KEY") == PH,
                  "base": os.environ.get("ANTHROPIC_BASE_URL"),
                  "obase": os.environ.get("OPENAI_BASE_URL")}), flush=True)
for req in json.loads(DATA):
    ask(req.encode("latin-1"))
'''

PH = "cordon-egress-placeholder"


def post(path, body="{}", extra=""):
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:3128\r\n"
            f"x-api-key: {PH}\r\nAuthorization: Bearer {PH}\r\n"
            f"Cookie: stolen=1\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n{body}")


def agent_run(c, reqs):
    prompt = (f"PH = {PH!r}\nSHAS = {[sha(REAL), sha(REAL2)]!r}\n"
              f"DATA = {json.dumps(json.dumps(reqs))}\n" + CLIENT)
    r, events = long_run(c, prompt, timeout=90)
    lines = [json.loads(ln) for ln in text_of(events).splitlines()
             if ln.startswith("{")]
    assert len(lines) == len(reqs) + 1, (events, c.stderr())
    return lines[0], lines[1:]


def sha(s):
    return hashlib.sha256(s.encode()).hexdigest()[:16]


def no_key_anywhere(c, home):
    for ln in audit_lines(home):
        for k in (REAL, REAL2, PH):
            assert k.encode() not in ln
    assert REAL not in c.stderr() and REAL2 not in c.stderr()


def test_eg3_routed_request_gets_real_key(cordon_factory, tmp_path, mocks):
    home = route_home(tmp_path, mocks)
    c = cordon_factory(home=home)
    env, out = agent_run(c, [post("/anthropic/v1/messages", '{"m":1}'),
                             post("/openai/chat/completions?x=1")])
    # The agent holds the placeholder and the route's URL, never the key.
    assert env["key"] is True
    assert env["base"] == "http://127.0.0.1:3128/anthropic"
    assert env["obase"] == "http://127.0.0.1:3128/openai"
    assert env["real"] is False and env["n"] > 10, env
    # Streamed as it came: the first event long before the last.
    assert out[0]["head"].startswith("HTTP/1.1 200"), out
    assert "message_start" in out[0]["body"], out
    assert "message_stop" in out[0]["body"], out
    assert out[0]["last"] - out[0]["first"] > 0.7, out
    seen = mocks["good"].seen
    assert len(seen) == 2, seen
    a, o = seen
    assert a["path"] == "/v1/messages" and a["body"] == '{"m":1}'
    assert a["x-api-key"] == [REAL] and a["authorization"] is None
    assert a["cookie"] is None
    assert a["host"] == f"mock.test:{mocks['good'].server_address[1]}"
    assert o["path"] == "/v1/chat/completions?x=1"
    assert o["authorization"] == [f"Bearer {REAL2}"] and o["x-api-key"] is None
    recs = wait_audit(home, lambda r: r["kind"] == "egress.request")
    deadline = time.monotonic() + 10
    while len(audit_records(home, "egress.request")) < 2 and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    recs = audit_records(home, "egress.request")
    assert {r["route"] for r in recs} == {"anthropic", "openai"}
    for r in recs:
        assert r["decision"] == "allow" and r["status"] == 200
        assert r["host"] == "mock.test" and r["bytesDown"] > 0
        assert r["bytesUp"] > 0 and r["rule"].startswith("allow.")
        assert set(r) == {"ts", "id", "seq", "prev", "kind", "runId",
                          "agent", "route", "host", "port", "decision",
                          "rule", "end", "status", "bytesUp", "bytesDown",
                          "durationMs"}
    no_key_anywhere(c, home)


def refused(ans, code, reason):
    return (ans.get("head", "").startswith(f"HTTP/1.1 {code}") and
            f"cordon-egress: {reason}\r\n" in ans["head"] + "\r\n")


def test_eg3_tls_failures_are_clean_502(cordon_factory, tmp_path, mocks):
    home = route_home(tmp_path, mocks)
    c = cordon_factory(home=home)
    _, out = agent_run(c, [post("/wrongname/v1/messages"),
                           post("/selfsigned/v1/messages")])
    for ans in out:
        assert refused(ans, "502", "upstream-tls-failed"), out
    # Neither upstream got a request, let alone the key.
    assert mocks["wrong"].seen == [] and mocks["selfs"].seen == []
    recs = wait_audit(home, lambda r: r["kind"] == "egress.request" and
                      r.get("reason") == "upstream-tls-failed")
    assert recs[0]["decision"] == "deny"
    no_key_anywhere(c, home)


def test_eg3_smuggling_refused(cordon_factory, tmp_path, mocks):
    home = route_home(tmp_path, mocks)
    c = cordon_factory(home=home)
    dup = ("POST /anthropic/v1/messages HTTP/1.1\r\nHost: a\r\nHost: b\r\n"
           "Content-Length: 0\r\n\r\n")
    lf = "POST /anthropic/v1/messages HTTP/1.1\nHost: a\r\n\r\n"
    crlf = "POST /anthropic/v1/x\r\nEvil: 1 HTTP/1.1\r\n\r\n"
    huge = post("/anthropic/v1/messages", extra="X: " + "a" * 9000 + "\r\n")
    te = ("POST /anthropic/v1/messages HTTP/1.1\r\nTransfer-Encoding: "
          "chunked\r\n\r\n0\r\n\r\n")
    dot = post("/anthropic/../admin")
    absolute = ("GET http://mock.test/v1 HTTP/1.1\r\nHost: mock.test\r\n"
                "\r\n")
    unknown = post("/other/v1/messages")
    # A second request after the first's body: never read, never sent.
    piggy = post("/anthropic/v1/messages", "{}") + post("/anthropic/v1/x")
    _, out = agent_run(c, [dup, lf, crlf, huge, te, dot, absolute, unknown,
                           piggy])
    for i, ans in enumerate(out[:7]):
        assert refused(ans, "403", "bad-request"), (i, out)
    assert refused(out[7], "403", "route-not-found"), out
    assert out[8]["head"].startswith("HTTP/1.1 200"), out
    assert [s["path"] for s in mocks["good"].seen] == ["/v1/messages"]
    recs = wait_audit(home, lambda r: r["kind"] == "egress.request" and
                      r.get("reason") == "route-not-found")
    # An unknown route is the agent's text: neither route nor host written.
    assert "route" not in recs[0] and "host" not in recs[0]
    no_key_anywhere(c, home)


def test_eg3_placeholder_via_connect_gains_nothing(cordon_factory, tmp_path,
                                                   mocks):
    """CONNECT to the upstream and speak TLS itself: the agent has only
    the placeholder to send, and that is all the upstream sees."""
    home = route_home(tmp_path, mocks)
    c = cordon_factory(home=home)
    port = mocks["good"].server_address[1]
    prog = (
        "import os, socket, ssl\n"
        "s = socket.create_connection(('127.0.0.1', 3128), timeout=20)\n"
        f"s.sendall(b'CONNECT mock.test:{port} HTTP/1.1\\r\\n\\r\\n')\n"
        "print(s.recv(200).split(b'\\r\\n')[0])\n"
        "ctx = ssl.create_default_context()\n"
        "ctx.check_hostname = False\n"
        "ctx.verify_mode = ssl.CERT_NONE\n"
        "t = ctx.wrap_socket(s, server_hostname='mock.test')\n"
        "k = os.environ['ANTHROPIC_API_KEY'].encode()\n"
        "t.sendall(b'POST /v1/direct HTTP/1.1\\r\\nHost: mock.test\\r\\n'"
        " b'x-api-key: ' + k + b'\\r\\nContent-Length: 0\\r\\n\\r\\n')\n"
        "print(t.recv(100).split(b'\\r\\n')[0])\n")
    r, events = long_run(c, prog)
    assert "Connection established" in text_of(events), events
    seen = mocks["good"].seen
    assert [s["x-api-key"] for s in seen] == [[PH]], seen
    no_key_anywhere(c, home)


def test_eg3_upstream_drops_mid_stream(cordon_factory, tmp_path, mocks):
    home = route_home(tmp_path, mocks)
    c = cordon_factory(home=home)
    _, out = agent_run(c, [post("/anthropic/v1/drop")])
    # The status and what came, then a clean close: no hang, no 200 lie
    # about the length (the agent sees a short body).
    assert out[0]["head"].startswith("HTTP/1.1 200"), out
    assert out[0]["body"] == "partial" and out[0]["last"] < 15, out
    wait_audit(home, lambda r: r["kind"] == "egress.request" and
               r.get("status") == 200)


def test_eg3_upstream_unanswered_or_bad_head_is_502(cordon_factory, tmp_path,
                                                     mocks):
    home = route_home(tmp_path, mocks)
    c = cordon_factory(home=home)
    _, out = agent_run(c, [post("/anthropic/v1/silent"),
                           post("/anthropic/v1/folded")])
    # Not an empty close the agent CLI cannot explain: a 502 with why.
    assert refused(out[0], "502", "upstream-closed"), out
    # A head the agent's client might read otherwise than egressd does.
    assert refused(out[1], "502", "upstream-bad-answer"), out
    assert "X-A" not in out[1]["head"] and out[1]["last"] < 15, out
    assert out[0]["last"] < 15, out
    assert mocks["good"].seen[0]["x-api-key"] == [REAL]
    recs = wait_audit(home, lambda r: r["kind"] == "egress.request" and
                      r.get("end") == "upstream-error")
    assert recs[0]["decision"] == "allow" and "status" not in recs[0]
    no_key_anywhere(c, home)


# A client that reuses a connection when the answer lets it.
REUSE = r'''
import http.client, json
c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=20)
out = []
for i in range(2):
    try:
        c.request("POST", "/anthropic/v1/keepalive", body="{}",
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        out.append({"status": r.status, "body": r.read().decode(),
                    "conn": r.getheader("Connection"),
                    "ka": r.getheader("Keep-Alive"),
                    "close": r.will_close})
    except Exception as e:
        out.append({"err": type(e).__name__})
print(json.dumps(out), flush=True)
'''


def test_eg3_routed_answer_says_connection_close(cordon_factory, tmp_path,
                                                 mocks):
    home = route_home(tmp_path, mocks)
    c = cordon_factory(home=home)
    _, events = long_run(c, REUSE, timeout=90)
    lines = [ln for ln in text_of(events).splitlines() if ln.startswith("[")]
    assert lines, (events, c.stderr())
    out = json.loads(lines[0])
    # Each answer tells the agent its connection ends, whatever the
    # upstream said: the client opens a new one and both requests work.
    assert len(out) == 2, out
    for a in out:
        assert a == {"status": 200, "body": "ok", "conn": "close",
                     "ka": None, "close": True}, out
    assert len(mocks["good"].seen) == 2
    recs = wait_audit(home, lambda r: r["kind"] == "egress.request" and
                      r.get("status") == 200)
    assert recs[0]["decision"] == "allow"
    no_key_anywhere(c, home)


def test_eg3_egressd_killed_mid_stream(cordon_factory, tmp_path, mocks):
    home = route_home(tmp_path, mocks)
    c = cordon_factory(home=home)
    pid = c.daemon_pids()["egressd"]
    prog = ("import socket\n"
            "s = socket.create_connection(('127.0.0.1', 3128))\n"
            "s.sendall(b'POST /anthropic/v1/slow HTTP/1.1\\r\\n'"
            " b'Content-Length: 0\\r\\n\\r\\n')\n"
            "print(s.recv(12), flush=True)\n"
            "s.settimeout(20)\n"
            "n = 0\n"
            "while True:\n"
            "    c = s.recv(4096)\n"
            "    if not c: break\n"
            "    n += len(c)\n"
            "print('gone', n > 0, flush=True)\n")
    result = {}

    def go():
        result["r"] = long_run(c, prog)

    t = threading.Thread(target=go)
    t.start()
    deadline = time.monotonic() + 20
    while not mocks["good"].seen and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    os.kill(pid, signal.SIGKILL)
    t.join(40)
    text = text_of(result["r"][1])
    assert "HTTP/1.1 200" in text and "gone True" in text, text
    c.health_when(lambda h: {x["name"]: x for x in h["daemons"]}
                  ["egressd"]["up"])
    # A later run routes again, with the key.
    mocks["good"].seen.clear()
    _, out = agent_run(c, [post("/anthropic/v1/messages")])
    assert out[0]["head"].startswith("HTTP/1.1 200"), out
    assert mocks["good"].seen[0]["x-api-key"] == [REAL]


def test_eg3_check_validates_routes(tmp_path):
    from conftest import child_env, cordon_bin

    home = tmp_path / "chk"
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "r.yaml").write_text(
        "name: r\ntransport: subprocess\n"
        "transportConfig: {bin: /usr/bin/python3, args: ['-c', '{prompt}']}\n"
        "secrets: {ANTHROPIC_API_KEY: anthropic.apiKey}\n"
        "sandbox: {network: proxy}\n"
        "egress:\n  allow: [api.anthropic.com]\n  routes:\n"
        "    anthropic: {upstream: 'https://evil.example', secret: "
        "ANTHROPIC_API_KEY, auth: x-api-key}\n")
    p = subprocess.run([cordon_bin(), "check", "--home", str(home),
                        "--json"], env=child_env(), capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 1, p.stdout + p.stderr
    probs = [x for x in json.loads(p.stdout)["problems"]
             if x["key"].startswith("egress")]
    assert [x["key"] for x in probs] == ["egress.routes.anthropic.upstream"]
    assert "egress.allow" in probs[0]["message"], probs
    assert "evil.example" not in p.stdout  # never an echo of the input


# The agent ends its sending side once its request is out (EG-3, EG-4):
# whole, then with its body cut short.
HALF = r'''
import json, socket, time
def half(raw):
    out = {}
    s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
    s.sendall(raw)
    s.shutdown(socket.SHUT_WR)
    data, t0 = b"", time.monotonic()
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            data += c
    except OSError as e:
        out["err"] = type(e).__name__
    out["last"] = time.monotonic() - t0
    head, _, body = data.partition(b"\r\n\r\n")
    out["head"] = head.decode("latin-1")
    out["body"] = body.decode("latin-1")
    print(json.dumps(out), flush=True)
for raw in json.loads(DATA):
    half(raw.encode())
'''


def test_eg3_eg4_route_agent_half_close(cordon_factory, tmp_path, mocks):
    """A routed request whose agent ends its sending side as soon as the
    request is out still gets the whole answer, streamed, then the end;
    one cut short of its Content-Length is closed, never left open."""
    home = route_home(tmp_path, mocks)
    c = cordon_factory(home=home)
    whole = post("/anthropic/v1/messages", '{"m":1}')
    cut = post("/anthropic/v1/messages", '{"m":2}')[:-3]
    prog = f"DATA = {json.dumps(json.dumps([whole, cut]))}\n" + HALF
    _, events = long_run(c, prog, timeout=90)
    out = [json.loads(ln) for ln in text_of(events).splitlines()
           if ln.startswith("{")]
    assert len(out) == 2, (events, c.stderr())
    assert out[0]["head"].startswith("HTTP/1.1 200"), out
    assert "message_start" in out[0]["body"], out
    assert "message_stop" in out[0]["body"], out
    assert out[1]["last"] < 15 and "message_stop" not in out[1]["body"], out
    deadline = time.monotonic() + 10
    while len(audit_records(home, "egress.request")) < 2 and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    recs = audit_records(home, "egress.request")
    assert len(recs) == 2, recs
    done = [r for r in recs if r.get("status") == 200]
    # An upstream that closes without close_notify (this mock) ended
    # the answer, as for any response with its own framing.
    assert len(done) == 1 and done[0]["end"] == "closed", recs
    assert done[0]["bytesUp"] > 0 and done[0]["bytesDown"] > 0, recs
    assert mocks["good"].seen[0]["body"] == '{"m":1}'
    no_key_anywhere(c, home)
