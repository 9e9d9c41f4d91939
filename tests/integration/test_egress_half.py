# A tunnel's half-close (EG-4) over the real `cordon run`: a side that
# ends its sending (shutdown(SHUT_WR), as curl, HTTP/1.0 clients and TLS
# stacks do once their request is out) ends one direction only; what the
# other side still sends crosses whole, and the tunnel ends (one record)
# once both directions have.  The upstream is egress_util's on 127.0.0.2.
# Touches only the temp dirs it makes and sockets on 127.0.0.2.
import json
import time

import pytest

from agents_util import audit_records, text_of
from egress_util import BIG, start_upstream
from test_egress import connect, egress_home, get, long_run

# The agent: each case sent raw to the proxy; one JSON line back each.
CLIENT = r'''
import json, socket, time
def upto(s, end=None):  # to end (byte by byte), or to EOF
    data = b""
    while end is None or end not in data:
        c = s.recv(65536 if end is None else 1)
        if not c:
            break
        data += c
    return data
def half(raw, after, send=0, pipelined=False, hold=0):
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
         req.get("pipelined", False), req.get("hold", 0))
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
    recs = []
    deadline = time.monotonic() + 15
    while len(recs) < n and time.monotonic() < deadline:
        recs = audit_records(home, "egress.connect")
        time.sleep(0.05)
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
    deadline = time.monotonic() + 15
    while not up.heard and time.monotonic() < deadline:
        time.sleep(0.05)
    assert up.heard == [SENT], up.heard
    rec = records(home, 1)[0]
    assert rec["end"] == "closed", rec
    assert rec["bytesUp"] == len(get("/half")) + SENT, rec
    assert rec["bytesDown"] == len(
        "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nhalf-ok"), rec


def test_eg4_half_open_tunnel_still_times_out(tmp_path, cordon_factory, up):
    """EG-4: an agent that ends its sending and then never reads, while
    the upstream sends without end, does not keep the tunnel: no byte
    moves once the buffers are full, and the idle timeout closes it."""
    port = up.server_address[1]
    home = egress_home(tmp_path, port, budget=1 << 30)
    c = cordon_factory(home=home)
    out = half_run(c, [{"raw": connect("up.test", port),
                        "after": get("/flood"), "hold": 8}])
    assert out[0].get("held") == 8, out
    rec = records(home, 1)[0]
    assert rec["end"] == "idle-timeout", rec
    assert rec["durationMs"] < 8000, rec  # before the agent let go
