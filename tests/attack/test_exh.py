# PER-8: resource exhaustion against the daemons.  A hostile agent makes
# events that are not text (its stream-json retry notices; a proxy run's
# connection reports are the same kind) faster than its client takes
# them: text waits for the client (the credit window), these do not, so
# the broker must bound what it holds for that client itself.  Past the
# bound the client counts as gone: its connection is cut and its run
# cancelled.  A flood under the bound reaches a client that reads, whole.
# Every bound is a count or a size read from /proc, never a duration.
import json
import os
import resource
import socket
import time

from agents_util import HTTP_S, run, text_of, wait_audit
import test_conns as tc
from conftest import HOSTILE, run_world

import pytest

# Enough notices that what they take in NDJSON is several times
# AGENTS_CLIENT_CUT (4 MiB) plus the most loopback TCP buffers hold.
FLOOD_LINES = 320_000
# Well under AGENTS_CLIENT_CUT in NDJSON, even if the client read none.
SMALL_LINES = 12_800
# The broker's peak resident memory after a flood: its own few MiB plus
# the bound, far under what holding a whole flood takes.
BROKER_HWM_KIB = 32 * 1024



def flooder(name):
    return (f"name: {name}\ntransport: streamJson\ntransportConfig:\n"
            f"  bin: {HOSTILE}\n  args: [\"-z\", \"{{prompt}}\"]\n"
            "  timeoutMs: 120000\n"
            "limits:\n  runOutputBytes: 67108864\n"
            "sandbox:\n  network: none\n")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    yield from run_world(tmp_path_factory, extra={
        "flooder": flooder("flooder"),
        "flooder2": flooder("flooder2"),
    })


def broker_hwm_kib(world):
    with open(f"/proc/{world.pids()['broker']}/status") as f:
        for ln in f:
            if ln.startswith("VmHWM:"):
                return int(ln.split()[1])
    raise AssertionError("no VmHWM")


def start_run(c, agent, prompt, rcvbuf=None):
    body = json.dumps({"prompt": prompt}).encode()
    s = socket.socket()
    if rcvbuf is not None:  # a client that takes next to nothing
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(HTTP_S)
    s.connect(("127.0.0.1", c.port))
    s.sendall((f"POST /api/agents/{agent}/run HTTP/1.1\r\n"
               f"Host: 127.0.0.1:{c.port}\r\n"
               f"Authorization: Bearer {c.token}\r\n"
               "Content-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n"
               "Connection: close\r\n\r\n").encode() + body)
    return s


def read_to_end(s):
    data = b""
    while True:
        try:
            chunk = s.recv(1 << 20)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    s.close()
    return data


def run_over(world, agent):
    return wait_audit(world.home, lambda r: r.get("agent") == agent and
                      r["kind"] in ("agent.invoke.complete",
                                    "agent.invoke.error"), bound=120)


def test_per8_events_outpacing_their_client_cut_it(c, world):
    s = start_run(c, "flooder", f"retryflood {FLOOD_LINES}", rcvbuf=4096)
    # The client reads nothing until the run is over.
    run_over(world, "flooder")
    data = read_to_end(s)
    assert data.startswith(b"HTTP/1.1 200 "), data[:200]
    # Cut: the stream never ends (no done), far short of the flood.
    assert b'"kind":"done"' not in data
    assert data.count(b'"kind":"notice"') < FLOOD_LINES // 2
    assert broker_hwm_kib(world) < BROKER_HWM_KIB
    # The broker still answers, and the next run is whole.
    assert c.health()["status"] == "ok"
    s = start_run(c, "flooder", f"retryflood {SMALL_LINES}")
    data = read_to_end(s)
    assert data.count(b'"kind":"notice"') == SMALL_LINES
    assert b'"kind":"done"' in data


def test_per8_flood_under_the_bound_reaches_a_slow_client_whole(c, world):
    # Under the bound, a client that takes nothing until the run is over
    # loses nothing.
    s = start_run(c, "flooder2", f"retryflood {SMALL_LINES}", rcvbuf=4096)
    run_over(world, "flooder2")
    data = read_to_end(s)
    assert data.count(b'"kind":"notice"') == SMALL_LINES
    assert b'"kind":"done"' in data


# ---- an agent's calls that each cost a log line ----

# Far more calls than the log lets through for one run in the time they
# take; the old log had a line for each.
GATE_FLOOD = 20_000
GATE_PATH_FLOOD = 400
# LOG_LIMIT_N lines at once, one a second after, and the lines saying how
# many were left out, for as long as a flood could last on a slow host.
LOG_LINES_MAX = 60


def run_lines(c, rid):
    return [ln for ln in c.stderr().splitlines() if f"run {rid}" in ln]


@pytest.mark.parametrize("mode,n,what", [
    ("gateflood", GATE_FLOOD, "call without a reply socket dropped"),
    ("gatepathflood", GATE_PATH_FLOOD, "a call too large dropped"),
])
def test_per8_gate_call_flood_bounded_in_the_log(c, world, mode, n, what):
    r, ev = run(c, "hostile", f"{mode} {n}")
    assert r.status == 200, r
    assert text_of(ev) == "sent\n", [e.get("stderrTail") for e in ev]
    rid = ev[0]["runId"]
    # The daemon may still be reading the last calls: until it says
    # what it left out (at the latest when the run's channel closes).
    deadline = time.monotonic() + HTTP_S
    while time.monotonic() < deadline:
        lines = run_lines(c, rid)
        if any("more lines like these left out" in ln for ln in lines):
            break
        time.sleep(0.1)
    assert any(what in ln for ln in lines), lines[:5]
    assert len(lines) <= LOG_LINES_MAX, len(lines)
    # What was left out is said, with its count.
    left = [ln for ln in lines if "more lines like these left out" in ln]
    assert left, lines[-5:]
    assert c.health()["status"] == "ok"


# ---- a client with the token that leaves its connections open ----

BROKER_NOFILE = 256  # broker.h
BROKER_CONNS_MAX = BROKER_NOFILE - 32
RUNAWAY_CONNS = 400


def broker_fds(world):
    return len(os.listdir(f"/proc/{world.pids()['broker']}/fd"))


def test_per8_proven_connections_left_open_leave_room(c, world):
    """A runaway script with the token opens keep-alive connections, one
    request each, and never closes them: past BROKER_CONNS_MAX the one
    idle longest is shed for each new one, so the broker never runs out
    of descriptors (before, it stopped accepting at RLIMIT_NOFILE until
    the first ones timed out) and every request is answered."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1024:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))
    socks, most = [], 0
    try:
        for i in range(RUNAWAY_CONNS):
            s = socket.create_connection(("127.0.0.1", c.port),
                                         timeout=HTTP_S)
            socks.append(s)
            s.sendall(tc.head(c))
            r = tc.read_answer(s, HTTP_S)
            assert r is not None and r[0] == 200, (i, r)
            most = max(most, broker_fds(world))
        assert most < BROKER_NOFILE - 8, most
        held = sum(tc.still_open(s) for s in socks)
        assert held <= BROKER_CONNS_MAX, held
        r = c.request()
        assert r is not None and r.status == 200, r
    finally:
        for s in socks:
            s.close()
