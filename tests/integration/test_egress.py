# Egress (EG-1, EG-2, EG-4) over the real `cordon run`: a
# `network: proxy` agent (python3, its program the prompt) reaches an
# allowed upstream through its loopback proxy and nothing else.  The
# upstream listens on 127.0.0.2, reachable only through the test-only
# egress.testResolve / testAllowAddress keys, honoured because cordon
# runs with CORDON_TEST_EGRESS=1 (never in production).
# Touches only the temp dirs it makes and sockets on 127.0.0.2.
import json
import os
import signal
import socket
import subprocess
import threading
import time

import pytest

from agents_util import audit_records, run, text_of, wait_audit
from conftest import HTTP_S, raw_http
from egress_util import BIG, UP_ADDR, start_upstream

MANIFEST = """
name: {name}
transport: subprocess
transportConfig:
  bin: /usr/bin/python3
  args: ["-c", "{{prompt}}"]
sandbox:
  network: proxy
egress:
  allow: ["up.test:{port}", "rebind.test:{port}", "meta.test:{port}",
          "ten.test:{port}", "v6lo.test:{port}", "{addr}:{port}",
          "*.wild.test:{port}", "nowhere.invalid"]
  maxConnections: {conns}
  maxBytes: {budget}
  idleTimeoutSec: 2
  testResolve:
    up.test: {addr}
    a.wild.test: {addr}
    rebind.test: 127.0.0.1
    meta.test: 169.254.169.254
    ten.test: 10.1.2.3
    v6lo.test: "::1"
  testAllowAddress: {addr}
"""

# The agent: each request is sent raw to the proxy, and what comes back
# is printed as one JSON line.  Data comes in as a JSON literal.
CLIENT = r'''
import json, socket, time
def ask(raw, after=b"", read=65536, hold=0.0, slow=False):
    out = {}
    try:
        s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
        if slow:
            for b in raw:
                s.sendall(bytes([b]))
                time.sleep(0.5)
        else:
            s.sendall(raw)
        head = b""
        while b"\r\n\r\n" not in head:
            c = s.recv(1)
            if not c:
                break
            head += c
        out["head"] = head.decode("latin-1")
        if head.startswith(b"HTTP/1.1 200") and after:
            s.sendall(after)
        if hold:
            time.sleep(hold)
        body = b""
        while len(body) < read:
            c = s.recv(65536)
            if not c:
                break
            body += c
        out["n"] = len(body)
        out["body"] = body[:200].decode("latin-1")
    except Exception as e:
        out["err"] = type(e).__name__
    print(json.dumps(out), flush=True)
for req in json.loads(DATA):
    ask(req["raw"].encode("latin-1"), req.get("after", "").encode(),
        req.get("read", 65536), req.get("hold", 0), req.get("slow", False))
'''


@pytest.fixture
def upstream():
    srv = start_upstream()
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()


def egress_home(tmp_path, port, name="home", conns=4, budget=2000000):
    home = tmp_path / name
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "netbot.yaml").write_text(MANIFEST.format(
        name="netbot", port=port, addr=UP_ADDR, conns=conns, budget=budget))
    return home


@pytest.fixture
def eg_env(monkeypatch):
    monkeypatch.setenv("CORDON_TEST_EGRESS", "1")


def connect(host, port):
    return (f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "\r\n")


def get(path="/"):
    return f"GET {path} HTTP/1.1\r\nHost: up.test\r\n\r\n"


def long_run(c, prompt, timeout=60):
    """A whole run allowed to last past the harness's usual bound."""
    body = json.dumps({"prompt": prompt}).encode()
    raw = (f"POST /api/agents/netbot/run HTTP/1.1\r\nHost: 127.0.0.1:"
           f"{c.port}\r\nAuthorization: Bearer {c.token}\r\n"
           f"Content-Type: application/json\r\nContent-Length: "
           f"{len(body)}\r\nConnection: close\r\n\r\n").encode() + body
    r = raw_http(c.port, raw, "POST", timeout=timeout)
    assert r is not None and r.status == 200, (r, c.stderr())
    return r, [json.loads(ln) for ln in r.body.split(b"\n") if ln]


def agent_run(c, reqs):
    """Run the client agent with reqs; its printed answers, in order."""
    prompt = f"DATA = {json.dumps(json.dumps(reqs))}\n" + CLIENT
    r, events = long_run(c, prompt)
    assert r.status == 200, (r, c.stderr())
    out = [json.loads(ln) for ln in text_of(events).splitlines()
           if ln.startswith("{")]
    assert len(out) == len(reqs), (events, c.stderr())
    return out


def egress_recs(home):
    return audit_records(home, "egress.connect")


def refused(ans, reason):
    return (ans.get("head", "").startswith("HTTP/1.1 403 Forbidden\r\n") and
            f"cordon-egress: {reason}\r\n" in ans["head"])


# ---- EG-1, EG-2: the allowed upstream, and nothing else ----

def test_eg1_eg2_allowed_upstream_reached(cordon_factory, tmp_path,
                                          upstream, eg_env):
    home = egress_home(tmp_path, upstream)
    c = cordon_factory(home=home)
    out = agent_run(c, [{"raw": connect("up.test", upstream),
                         "after": get()}])
    assert out[0]["head"].startswith("HTTP/1.1 200 Connection established")
    assert "hello-upstream" in out[0]["body"]
    recs = wait_audit(home, lambda r: r["kind"] == "egress.connect")
    rec = recs[0]
    assert rec["decision"] == "allow" and rec["host"] == "up.test"
    assert rec["port"] == upstream and rec["rule"] == "allow.0"
    assert rec["bytesUp"] > 0 and rec["bytesDown"] > 0
    assert set(rec) == {"ts", "id", "seq", "prev", "kind", "runId", "agent",
                        "host", "port", "decision", "rule", "end",
                        "bytesUp", "bytesDown", "durationMs"}


def test_eg4_run_stream_lists_connections(cordon_factory, tmp_path,
                                          upstream, eg_env):
    """EG-4: the run's own stream tells of each connection as it opens
    and as it ends (the dashboard's run view): host, port, decision,
    bytes, duration; a name the allowlist does not know is never shown."""
    home = egress_home(tmp_path, upstream)
    c = cordon_factory(home=home)
    reqs = [{"raw": connect("up.test", upstream), "after": get()},
            {"raw": connect("evil.example.com", 443), "read": 0}]
    prompt = f"DATA = {json.dumps(json.dumps(reqs))}\n" + CLIENT
    _, events = long_run(c, prompt)
    eg = [e for e in events if e["kind"] == "egress"]
    assert [(e["conn"], e["state"]) for e in eg] == [
        (1, "open"), (1, "end"), (2, "end")], eg
    opened, ended, denied = eg
    assert opened["host"] == "up.test" and opened["port"] == upstream
    assert opened["decision"] == "allow" and opened["rule"] == "allow.0"
    assert "end" not in opened and opened["bytesDown"] == 0
    assert ended["host"] == "up.test" and ended["end"] == "closed"
    assert ended["bytesUp"] == len(get()) and ended["bytesDown"] > 0
    assert ended["durationMs"] >= 0
    assert denied["decision"] == "deny"
    assert denied["reason"] == "host-not-allowed" and "host" not in denied
    assert "evil" not in json.dumps(eg)
    # The same facts as the audit records, nothing more.
    rec = wait_audit(home, lambda r: r["kind"] == "egress.connect")[0]
    assert set(ended) - {"kind", "conn", "state"} == \
        set(rec) - {"ts", "id", "seq", "prev", "kind", "runId", "agent"}


def test_eg4_name_under_a_wildcard_never_named(cordon_factory, tmp_path,
                                                upstream, eg_env):
    """EG-4, AU-4: a name only a wildcard rule covers is the agent's text
    (its labels may carry data, a key among them): reached or refused, it
    is in no record and no event of the run's stream; its rule says
    which entry let it through."""
    home = egress_home(tmp_path, upstream)
    c = cordon_factory(home=home)
    nonce = "n" + os.urandom(8).hex()
    reqs = [{"raw": connect("a.wild.test", upstream), "after": get()},
            {"raw": connect(nonce + ".wild.test", upstream)},
            {"raw": connect(nonce + ".wild.test", 22), "read": 0}]
    prompt = f"DATA = {json.dumps(json.dumps(reqs))}\n" + CLIENT
    _, events = long_run(c, prompt)
    out = [json.loads(ln) for ln in text_of(events).splitlines()
           if ln.startswith("{")]
    assert "hello-upstream" in out[0]["body"], out
    assert refused(out[2], "port-not-allowed"), out
    eg = [e for e in events if e["kind"] == "egress"]
    assert eg[1]["state"] == "end" and eg[1]["rule"] == "allow.6", eg
    recs = wait_audit(home, lambda r: r["kind"] == "egress.connect" and
                      r["decision"] == "allow")
    deadline = time.monotonic() + HTTP_S
    while len(egress_recs(home)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    recs = egress_recs(home)
    assert len(recs) == 3, recs
    assert recs[0]["rule"] == "allow.6" and "port" not in recs[0], recs
    for blob in (json.dumps(eg), json.dumps(recs)):
        assert "wild" not in blob and nonce not in blob, blob


def test_eg2_hostile_targets_refused(cordon_factory, tmp_path, upstream,
                                     eg_env):
    home = egress_home(tmp_path, upstream, conns=32)
    c = cordon_factory(home=home)
    p = upstream
    cases = [
        (connect("evil.example.com", 443), "host-not-allowed"),
        (connect("rebind.test", p), "address-refused"),      # 127.0.0.1
        (connect("ten.test", p), "address-refused"),         # 10.x
        (connect("meta.test", p), "address-refused"),        # metadata
        (connect("v6lo.test", p), "address-refused"),        # ::1
        (connect("93.184.216.34", 443), "host-not-allowed"),  # literal
        (connect("up.test", 22), "port-not-allowed"),
        (connect("wild.test", p), "host-not-allowed"),       # apex of *.
        (f"GET http://evil.example.com/ HTTP/1.1\r\nHost: "
         f"evil.example.com\r\n\r\n", "bad-request"),        # absolute-form
        (f"CONNECT up.test:{p}\r\nX: HTTP/1.1\r\n\r\n", "bad-request"),
        (f"CONNECT up.te\rst:{p} HTTP/1.1\r\n\r\n", "bad-request"),  # CR
        (f"CONNECT up.test:{p}\n HTTP/1.1\r\n\r\n", "bad-request"),  # LF
        (f"CONNECT up.test:{p}%0d%0aX: HTTP/1.1\r\n\r\n",
         "bad-request"),                                     # encoded CRLF
        (f"GET http://up.test:{p}/ HTTP/1.1\r\nHost: up.test\r\n\r\n",
         "bad-request"),                                     # absolute, listed
        (f"CONNECT up.test:{p} HTTP/1.1\r\nHost: up.test:{p}\r\n"
         f"Host: up.test:{p}\r\n\r\n", "bad-request"),       # dup Host
        (f"CONNECT up.test:{p} HTTP/1.1\r\nX: " + "a" * 9000 + "\r\n\r\n",
         "bad-request"),                                     # huge head
        (f"CONNECT up.test:{p} HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
         "bad-request"),                                     # obs-fold
    ]
    out = agent_run(c, [{"raw": raw, "read": 0} for raw, _ in cases])
    for (raw, reason), ans in zip(cases, out):
        assert refused(ans, reason), (raw[:60], ans)
    recs = wait_audit(home, lambda r: r["kind"] == "egress.connect" and
                      r["decision"] == "deny")
    deadline = time.monotonic() + HTTP_S
    while len(egress_recs(home)) < len(cases) and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    recs = egress_recs(home)
    assert len(recs) == len(cases)
    assert all(r["decision"] == "deny" for r in recs)
    # An unlisted name is the agent's text: never written.
    assert not any("evil" in json.dumps(r) for r in recs)
    assert {r["reason"] for r in recs} == {
        "host-not-allowed", "address-refused", "port-not-allowed",
        "bad-request"}


def test_eg2_listed_literal_reached(cordon_factory, tmp_path, upstream,
                                    eg_env):
    home = egress_home(tmp_path, upstream)
    c = cordon_factory(home=home)
    out = agent_run(c, [{"raw": connect(UP_ADDR, upstream),
                         "after": get()}])
    assert "hello-upstream" in out[0]["body"], out


def test_eg2_slowloris_refused(cordon_factory, tmp_path, upstream, eg_env):
    home = egress_home(tmp_path, upstream)
    c = cordon_factory(home=home)
    t0 = time.monotonic()
    # 12 s of one byte every 0.5 s: the head is due within 10 s.
    out = agent_run(c, [{"raw": connect("up.test", upstream) + "X" * 20,
                         "slow": True, "read": 0}])
    assert refused(out[0], "bad-request") or "err" in out[0], out
    assert time.monotonic() - t0 < 30


# ---- EG-4: budgets ----

def test_eg4_connection_cap(cordon_factory, tmp_path, upstream, eg_env):
    home = egress_home(tmp_path, upstream, conns=2)
    c = cordon_factory(home=home)
    # Two tunnels held open (idle), the third over the cap.
    prog = (f"import socket, time\nss = []\n"
            f"for i in range(3):\n"
            f"    s = socket.create_connection(('127.0.0.1', 3128))\n"
            f"    s.sendall(b'CONNECT up.test:{upstream} HTTP/1.1\\r\\n\\r\\n')\n"
            f"    time.sleep(0.3)\n"
            f"    ss.append(s)\n"
            f"for s in ss:\n"
            f"    print(s.recv(200).split(b'\\r\\n')[0:2], flush=True)\n")
    r, events = run(c, "netbot", prog)
    text = text_of(events)
    assert text.count("200 Connection established") == 2, text
    assert "403 Forbidden" in text and "budget-exceeded" in text, text


def test_eg4_record_rate_bounds_the_trail(cordon_factory, tmp_path,
                                          upstream, eg_env):
    """EG-4, AU-6: an agent opening connections in a loop cannot fill
    the trail: past the run's record rate each connection is refused
    (429, rate-limited) before anything is read, with no record of its
    own, and one rate-limited record counts them; every connection is in
    the trail, as a record or in a count."""
    home = egress_home(tmp_path, upstream)
    c = cordon_factory(home=home)
    n = 600
    prog = ("import socket, time, json\n"
            "t0 = time.monotonic(); got = {}\n"
            f"for i in range({n}):\n"
            "    s = socket.create_connection(('127.0.0.1', 3128))\n"
            "    s.sendall(b'CONNECT nowhere.test:443 HTTP/1.1\\r\\n\\r\\n')\n"
            "    k = s.recv(64).split(b' ')[1].decode()\n"
            "    got[k] = got.get(k, 0) + 1\n"
            "    s.close()\n"
            "print(json.dumps({'got': got, 's': time.monotonic() - t0}))\n")
    r, events = long_run(c, prog)
    out = json.loads([ln for ln in text_of(events).splitlines()
                      if ln.startswith("{")][0])
    assert set(out["got"]) == {"403", "429"}, out
    # The last count is written when the run's proxy closes, which may
    # come after the run's answer: wait until every 429 is counted.
    deadline = time.monotonic() + HTTP_S
    while True:
        recs = egress_recs(home)
        one = [x for x in recs if x.get("reason") == "host-not-allowed"]
        lim = [x for x in recs if x.get("reason") == "rate-limited"]
        if sum(x["refused"] for x in lim) >= out["got"]["429"] or \
                time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(one) == out["got"]["403"], (len(one), out)
    assert sum(x["refused"] for x in lim) == out["got"]["429"], (lim, out)
    assert len(one) + sum(x["refused"] for x in lim) == n
    # At most the burst, then the rate, over the time the agent took.
    assert len(one) <= 100 + 20 * (out["s"] + 1), (len(one), out)
    for x in lim:
        assert x["decision"] == "deny" and "host" not in x, x


def test_eg4_out_of_descriptors_pauses_the_proxy(cordon_factory, tmp_path,
                                                  upstream, eg_env):
    """egressd out of descriptors (its limit lowered under a run that
    holds connections open): the run's proxy stops accepting for a
    moment and tries again, instead of spinning on a listener that stays
    readable, logging each failed accept; a later run is served."""
    home = egress_home(tmp_path, upstream, conns=64)
    c = cordon_factory(home=home)
    pid = c.daemon_pids()["egressd"]
    nfd = len(os.listdir(f"/proc/{pid}/fd"))
    lim = nfd + 6  # the run's listener, then a few connections
    subprocess.run(["prlimit", f"--pid={pid}", f"--nofile={lim}:"],
                   check=True)
    prog = ("import socket, time\nss = []\n"
            "for i in range(24):\n"
            "    ss.append(socket.create_connection(('127.0.0.1', 3128)))\n"
            "time.sleep(3)\nprint(len(ss), flush=True)\n")
    r, events = run(c, "netbot", prog)
    assert r.status == 200 and text_of(events).strip() == "24", events
    log = c.stderr()
    pauses = log.count("out of descriptors; its proxy waits")
    assert 1 <= pauses <= 300, pauses  # one per pause, not per spin
    assert "accept: Too many open files" not in log
    subprocess.run(["prlimit", f"--pid={pid}", "--nofile=4096:"],
                   check=True)
    ans = agent_run(c, [{"raw": get("/")}])
    assert ans[0]["head"].startswith("HTTP/1.1"), ans


def test_eg4_byte_budget(cordon_factory, tmp_path, upstream, eg_env):
    home = egress_home(tmp_path, upstream, budget=1000000)
    c = cordon_factory(home=home)
    out = agent_run(c, [{"raw": connect("up.test", upstream),
                         "after": get("/big"), "read": BIG}])
    assert out[0]["head"].startswith("HTTP/1.1 200"), out
    assert out[0]["n"] < 1000000, out  # cut at the budget
    recs = wait_audit(home, lambda r: r["kind"] == "egress.connect")
    assert recs[0]["end"] == "budget-exceeded"
    assert recs[0]["bytesDown"] <= 1000000


def test_eg1_big_body_whole_and_counted(cordon_factory, tmp_path, upstream,
                                       eg_env):
    """EG-1, EG-4: a 3 MiB answer crosses the open tunnel (moved by
    splice once nothing is buffered) whole, byte for byte, and the record
    counts exactly what crossed each way."""
    home = egress_home(tmp_path, upstream, budget=16 * 1024 * 1024)
    c = cordon_factory(home=home)
    out = agent_run(c, [{"raw": connect("up.test", upstream),
                         "after": get("/big"), "read": 2 * BIG}])
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {BIG}\r\n\r\n"
    assert out[0]["n"] == len(head) + BIG, out
    assert out[0]["body"] == (head + "x" * 200)[:200], out
    recs = wait_audit(home, lambda r: r["kind"] == "egress.connect")
    assert recs[0]["end"] == "closed", recs
    assert recs[0]["bytesDown"] == len(head) + BIG, recs
    assert recs[0]["bytesUp"] == len(get("/big")), recs


def test_eg4_upstream_drops_mid_stream(cordon_factory, tmp_path, upstream,
                                       eg_env):
    home = egress_home(tmp_path, upstream)
    c = cordon_factory(home=home)
    out = agent_run(c, [{"raw": connect("up.test", upstream),
                         "after": get("/drop"), "read": 100000}])
    assert "partial" in out[0]["body"], out
    recs = wait_audit(home, lambda r: r["kind"] == "egress.connect")
    assert recs[0]["decision"] == "allow"
    assert recs[0]["end"] in ("closed", "upstream-error")


def test_eg4_idle_timeout(cordon_factory, tmp_path, upstream, eg_env):
    home = egress_home(tmp_path, upstream)
    c = cordon_factory(home=home)
    t0 = time.monotonic()
    out = agent_run(c, [{"raw": connect("up.test", upstream),
                         "read": 1}])  # says nothing: idle after 2 s
    assert out[0]["n"] == 0, out
    assert time.monotonic() - t0 < 15
    recs = wait_audit(home, lambda r: r["kind"] == "egress.connect")
    assert recs[0]["end"] == "idle-timeout"


# ---- EG-1: the daemon, its restarts, and what an agent cannot reach ----

def test_eg1_egressd_in_health(cordon_factory, tmp_path, upstream, eg_env):
    c = cordon_factory(home=egress_home(tmp_path, upstream))
    h = c.health()
    d = {x["name"]: x for x in h["daemons"]}["egressd"]
    assert d["up"] and d["status"]["noNewPrivs"] == 1
    assert d["status"]["seccomp"] == 2
    assert int(str(d["status"]["capEff"]), 16) == 0
    # Loud: the test hooks are on, and health says so.
    assert d["status"]["egress"]["testEgress"] is True


def test_eg1_egressd_killed_mid_stream(cordon_factory, tmp_path, upstream,
                                       eg_env):
    home = egress_home(tmp_path, upstream)
    c = cordon_factory(home=home)
    pid = c.daemon_pids()["egressd"]
    prog = (f"import socket, time\n"
            f"s = socket.create_connection(('127.0.0.1', 3128))\n"
            f"s.sendall(b'CONNECT up.test:{upstream} HTTP/1.1\\r\\n\\r\\n')\n"
            f"print(s.recv(100).split(b'\\r\\n')[0], flush=True)\n"
            f"s.settimeout(20)\n"
            f"print('gone', repr(s.recv(100)), flush=True)\n")
    result = {}

    def go():
        result["r"] = long_run(c, prog)

    t = threading.Thread(target=go)
    t.start()
    # The tunnel is up once egressd counts it.
    c.health_when(lambda h: {x["name"]: x for x in h["daemons"]}
                  ["egressd"].get("status", {}).get("egress", {})
                  .get("connections", 0) >= 1, bound=HTTP_S)
    os.kill(pid, signal.SIGKILL)
    t.join(30)
    text = text_of(result["r"][1])
    assert "200 Connection established" in text
    assert "gone b''" in text, text  # closed cleanly, no hang
    c.health_when(lambda h: {x["name"]: x for x in h["daemons"]}
                  ["egressd"]["up"])
    out = agent_run(c, [{"raw": connect("up.test", upstream),
                         "after": get()}])
    assert "hello-upstream" in out[0]["body"], out


def test_eg1_no_unix_socket_no_other_run(cordon_factory, tmp_path, upstream,
                                         eg_env):
    """EG-1: a proxy agent opens no unix socket (no daemon's socket, no
    D-Bus), and reaches nothing directly: not the upstream, not a port
    listening on the host's loopback, not a private address.  Another
    run's proxy is the same 127.0.0.1:3128 in that run's own namespace:
    from here that address is this run's proxy."""
    host = socket.socket()
    host.bind(("127.0.0.1", 0))
    host.listen(4)
    host_port = host.getsockname()[1]
    c = cordon_factory(home=egress_home(tmp_path, upstream))
    prog = ("import socket\n"
            "try:\n"
            "    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            "    print('unix-ok')\n"
            "except OSError as e:\n"
            "    print('unix-refused', e.errno)\n"
            "try:\n"
            "    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)\n"
            "    print('netlink-ok')\n"
            "except OSError as e:\n"
            "    print('netlink-refused')\n"
            "a, b = socket.socketpair()\n"
            "print('pair-ok')\n"
            # Another run's proxy or the host: nothing but our own lo.
            f"for h, p in (('127.0.0.2', {upstream}), ('127.0.0.1', {host_port}),"
            "             ('10.0.0.1', 443)):\n"
            "    try:\n"
            "        socket.create_connection((h, p), timeout=2)\n"
            "        print('reached', h)\n"
            "    except OSError:\n"
            "        print('unreachable', h)\n")
    r, events = run(c, "netbot", prog)
    text = text_of(events)
    assert "unix-refused" in text and "unix-ok" not in text, text
    assert "netlink-refused" in text, text
    assert "pair-ok" in text, text
    assert "reached" not in text, text
    assert text.count("unreachable") == 3, text
    host.settimeout(0.1)
    with pytest.raises(OSError):
        host.accept()  # nothing came through to the host's listener
    host.close()


def test_eg2_test_keys_refused_without_test_mode(cordon_factory, tmp_path,
                                                 upstream):
    home = egress_home(tmp_path, upstream)
    c = cordon_factory(home=home)
    r = c.request("GET", "/api/agents/netbot")
    assert r.status == 404, r
    assert "for tests only" in c.stderr()
    d = {x["name"]: x for x in c.health()["daemons"]}["egressd"]
    assert d["status"]["egress"]["testEgress"] is False


# ---- `cordon check` validates allowlists (EG-2) ----

def test_eg2_check_validates_allowlist(tmp_path):
    import subprocess
    from conftest import child_env, cordon_bin

    home = tmp_path / "chk"
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "a.yaml").write_text(
        "name: a\ntransport: subprocess\ntransportConfig:\n"
        "  bin: /bin/true\n  args: [\"{prompt}\"]\n"
        "sandbox: {network: proxy}\n"
        "egress:\n  allow: [ok.example.com, 'bad host', '*.com', "
        "'x.example.com:99999']\n")
    r = subprocess.run([cordon_bin(), "check", "--home", str(home),
                        "--json"], capture_output=True, text=True,
                       timeout=30, env=child_env())
    assert r.returncode == 1, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    probs = [p for p in doc["problems"] if p["key"] == "egress.allow"]
    assert len(probs) == 3, doc
    assert "bad host" not in r.stdout  # never an echo of the input
    (home / "agents" / "a.yaml").write_text(
        "name: a\ntransport: subprocess\ntransportConfig:\n"
        "  bin: /bin/true\n  args: [\"{prompt}\"]\n"
        "sandbox: {network: proxy}\negress: {allow: [ok.example.com]}\n")
    r = subprocess.run([cordon_bin(), "check", "--home", str(home)],
                       capture_output=True, text=True, timeout=30,
                       env=child_env())
    assert r.returncode == 0, r.stdout + r.stderr
