# A tunnel's half-close (EG-4) over the real `cordon run`: a side that
# ends its sending (shutdown(SHUT_WR), as curl, HTTP/1.0 clients and TLS
# stacks do once their request is out) ends one direction only; what the
# other side still sends crosses whole, and the tunnel ends (one record)
# once both directions have; a half-open tunnel is still bound by the
# idle timeout, the run's cap and egressd's memory, and a reset from
# either side ends it whole.  The upstream is egress_util's on 127.0.0.2.
# Touches only the temp dirs it makes and sockets on 127.0.0.2.
import json
import os
import threading
import time

import pytest

from agents_util import audit_records, text_of
from audit_util import wait_until
from egress_util import BIG, start_upstream
from test_egress import connect, egress_home, get, long_run

# The agent: each case sent raw to the proxy; one JSON line back each.
CLIENT = r'''
import json, socket, struct, time
def upto(s, end=None):  # to end (byte by byte), or to EOF
    data = b""
    while end is None or end not in data:
        c = s.recv(65536 if end is None else 1)
        if not c:
            break
        data += c
    return data
def half(raw, after, send=0, pipelined=False, hold=0, reset=0):
    out = {}
    try:
        s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
        if pipelined:  # all before the tunnel is even up
            s.sendall(raw + after)
            s.shutdown(socket.SHUT_WR)
        else:
            s.sendall(raw)
            upto(s, b"\r\n\r\n")
            s.sendall(after)
            if not send:
                s.shutdown(socket.SHUT_WR)
        n = 0
        while n < reset:  # reads this much, then resets
            n += len(s.recv(65536))
        if reset:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                         struct.pack("ii", 1, 0))
            hold = 0.01
        if hold:  # never reads: egressd must end it, not hold it
            time.sleep(hold)
            out["held"] = hold
            s.close()
            print(json.dumps(out), flush=True)
            return
        data = upto(s)
        out["n"] = len(data)
        out["tail"] = data[-40:].decode("latin-1")
        if send:  # the upstream ended first: ours still goes up
            s.sendall(b"y" * send)
            s.shutdown(socket.SHUT_WR)
            out["sent"] = send
        s.close()
    except Exception as e:
        out["err"] = type(e).__name__
    print(json.dumps(out), flush=True)
for req in json.loads(DATA):
    half(req["raw"].encode(), req["after"].encode(), req.get("send", 0),
         req.get("pipelined", False), req.get("hold", 0),
         req.get("reset", 0))
'''

SENT = 2 * 1024 * 1024


@pytest.fixture
def up(monkeypatch):
    monkeypatch.setenv("CORDON_TEST_EGRESS", "1")
    srv = start_upstream()
    yield srv
    srv.shutdown()
    srv.server_close()


def half_run(c, reqs):
    prompt = f"DATA = {json.dumps(json.dumps(reqs))}\n" + CLIENT
    _, events = long_run(c, prompt)
    out = [json.loads(ln) for ln in text_of(events).splitlines()
           if ln.startswith("{")]
    assert len(out) == len(reqs), (events, c.stderr())
    return out


def records(home, n):
    wait_until(lambda: len(audit_records(home, "egress.connect")) >= n, 15)
    recs = audit_records(home, "egress.connect")
    assert len(recs) == n, recs
    return recs


def test_eg4_agent_half_close_gets_whole_answer(tmp_path, cordon_factory,
                                                up):
    """EG-4: the agent sends its request and ends its sending side; the
    answer still comes whole, a big one (moved by splice once the tunnel
    is open) and a small one sent with the CONNECT before the tunnel was
    up (buffered at first); one record each, every byte counted."""
    port = up.server_address[1]
    home = egress_home(tmp_path, port, budget=16 * 1024 * 1024)
    c = cordon_factory(home=home)
    out = half_run(c, [
        {"raw": connect("up.test", port), "after": get("/big")},
        {"raw": connect("up.test", port), "after": get("/"),
         "pipelined": True}])
    head = f"HTTP/1.1 200 OK\r\nContent-Length: {BIG}\r\n\r\n"
    assert out[0].get("n") == len(head) + BIG, out
    assert out[0]["tail"] == "x" * 40, out
    small = ("HTTP/1.1 200 Connection established\r\n\r\n"
             "HTTP/1.1 200 OK\r\nContent-Length: 14\r\n\r\nhello-upstream")
    assert out[1].get("n") == len(small), out
    assert out[1]["tail"].endswith("hello-upstream"), out
    recs = sorted(records(home, 2), key=lambda r: r["bytesDown"])
    assert [r["end"] for r in recs] == ["closed", "closed"], recs
    assert recs[1]["bytesDown"] == len(head) + BIG, recs
    assert recs[1]["bytesUp"] == len(get("/big")), recs
    assert recs[0]["bytesDown"] == len(small) - len(
        "HTTP/1.1 200 Connection established\r\n\r\n"), recs
    assert recs[0]["bytesUp"] == len(get("/")), recs


def test_eg4_upstream_half_close_agent_keeps_sending(tmp_path,
                                                     cordon_factory, up):
    """EG-4: the upstream answers and ends its sending side first; the
    agent reads that end, then still sends, and the upstream hears all
    of it before the agent's own end; one record, both ways counted."""
    port = up.server_address[1]
    home = egress_home(tmp_path, port, budget=16 * 1024 * 1024)
    c = cordon_factory(home=home)
    out = half_run(c, [{"raw": connect("up.test", port),
                        "after": get("/half"), "send": SENT}])
    assert out[0].get("sent") == SENT, out
    assert out[0]["tail"].endswith("half-ok"), out
    wait_until(lambda: up.heard, 15)
    assert up.heard == [SENT], up.heard
    rec = records(home, 1)[0]
    assert rec["end"] == "closed", rec
    assert rec["bytesUp"] == len(get("/half")) + SENT, rec
    assert rec["bytesDown"] == len(
        "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nhalf-ok"), rec


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(ln.split()[1]) for ln in f
                    if ln.startswith("VmRSS:"))


def test_eg4_half_open_tunnel_still_times_out(tmp_path, cordon_factory, up):
    """EG-4: an agent that ends its sending and then never reads, while
    the upstream sends without end, does not keep the tunnel nor grow
    egressd: no byte moves once the buffers are full, and the idle
    timeout closes it."""
    port = up.server_address[1]
    home = egress_home(tmp_path, port, budget=1 << 30)
    c = cordon_factory(home=home)
    pid = c.daemon_pids()["egressd"]
    rss, done = [rss_kib(pid)], threading.Event()

    def sample():
        while not done.wait(0.1):
            rss.append(rss_kib(pid))

    t = threading.Thread(target=sample)
    t.start()
    try:
        out = half_run(c, [{"raw": connect("up.test", port),
                            "after": get("/flood"), "hold": 8}])
    finally:
        done.set()
        t.join()
    assert out[0].get("held") == 8, out
    # What it cannot deliver waits in the kernel, not in egressd.
    assert max(rss) - rss[0] < 16 * 1024, rss
    rec = records(home, 1)[0]
    assert rec["end"] == "idle-timeout", rec
    assert rec["durationMs"] < 8000, rec  # before the agent let go


# ---- EG-4: a tunnel's other ends: resets, and many held half-open ----

def egressd_conns(c):
    d = {x["name"]: x for x in c.health()["daemons"]}["egressd"]
    return d.get("status", {}).get("egress", {}).get("connections")


def test_eg4_agent_reset_mid_splice(tmp_path, cordon_factory, up):
    """EG-4: the agent resets its connection while the upstream floods
    it: egressd closes the upstream too, writes the one record, and
    holds nothing of the tunnel after."""
    port = up.server_address[1]
    home = egress_home(tmp_path, port, budget=1 << 30)
    c = cordon_factory(home=home)
    out = half_run(c, [{"raw": connect("up.test", port),
                        "after": get("/flood"), "reset": 1 << 20,
                        "send": 1}])
    assert out[0].get("held"), out
    rec = records(home, 1)[0]
    assert rec["end"] == "closed" and rec["bytesDown"] >= 1 << 20, rec
    wait_until(lambda: "flood" in up.heard, 15)  # its upstream closed too
    assert egressd_conns(c) == 0


def test_eg4_upstream_reset_mid_splice(tmp_path, cordon_factory, up):
    """EG-4: the upstream resets after a partial answer: the agent gets
    what came, then the end, and the record says the upstream ended it."""
    port = up.server_address[1]
    home = egress_home(tmp_path, port)
    c = cordon_factory(home=home)
    out = half_run(c, [{"raw": connect("up.test", port),
                        "after": get("/rst")}])
    head = "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
    assert out[0].get("n") == len(head) + 50000, out
    rec = records(home, 1)[0]
    assert rec["end"] == "upstream-error", rec
    assert egressd_conns(c) == 0


# Seven tunnels, each read to the upstream's end, then held, silent.
HOLD = r'''
import socket, time
ss, heads = [], []
for i in range(7):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
    s.sendall(CONNECT)
    h = s.recv(39)
    heads.append(h.split(b" ")[1].decode())
    if h.startswith(b"HTTP/1.1 200"):
        s.sendall(GET)
        while s.recv(4096):
            pass
    ss.append(s)
time.sleep(5)
print("heads", " ".join(heads), flush=True)
'''


def test_eg4_many_half_open_tunnels_bounded(tmp_path, cordon_factory, up):
    """EG-4: tunnels the upstream has half-closed and the agent holds,
    saying nothing: they count against the run's cap (one more is
    refused), the idle timeout ends each, and egressd is left with no
    descriptor of theirs."""
    port = up.server_address[1]
    home = egress_home(tmp_path, port, conns=6)
    c = cordon_factory(home=home)
    pid = c.daemon_pids()["egressd"]
    nfd = len(os.listdir(f"/proc/{pid}/fd"))
    prog = (f"CONNECT = {connect('up.test', port).encode()!r}\n"
            f"GET = {get('/half').encode()!r}\n" + HOLD)
    _, events = long_run(c, prog)
    assert "heads 200 200 200 200 200 200 403" in text_of(events), events
    recs = records(home, 7)
    ends = sorted(r.get("end", r.get("reason")) for r in recs)
    assert ends == ["budget-exceeded"] + ["idle-timeout"] * 6, recs
    assert up.heard == [0] * 6, up.heard
    assert egressd_conns(c) == 0
    wait_until(lambda: len(os.listdir(f"/proc/{pid}/fd")) <= nfd)
