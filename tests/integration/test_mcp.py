# `cordon mcp` (MC-1) driven over stdio as an MCP caller drives it: a
# real cordon with a temp home and the fake agents, JSON-RPC 2.0 frames
# one per line, every bad input answered with a fixed error and no
# echo.  Touches only the temp home and sockets to 127.0.0.1.
import json
import os
import selectors
import socket
import subprocess
import threading
import time

import pytest

from agents_util import (audit_records, make_agents_home, post_json,
                         server_env, wait_audit)
from conftest import HTTP_S, child_env, cordon_bin

NONCE = "mcp-nonce-5c1d9e"


class Mcp:
    """One `cordon mcp --home H` child and its stdio."""

    def __init__(self, home, *extra):
        self.proc = subprocess.Popen(
            [cordon_bin(), "mcp", "--home", str(home), *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=child_env())
        self.buf = b""
        self.next_id = 1

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def recv(self, timeout=HTTP_S):
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            assert left > 0 and sel.select(left), "no frame from cordon mcp"
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            assert chunk, "cordon mcp closed stdout"
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)

    def request(self, method, params=None, timeout=HTTP_S):
        """Send a request; (its answer, [notifications before it])."""
        rid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        notes = []
        while True:
            o = self.recv(timeout)
            if o.get("id") == rid and "method" not in o:
                return o, notes
            notes.append(o)

    def call(self, name, args=None, progress=None, timeout=HTTP_S):
        p = {"name": name}
        if args is not None:
            p["arguments"] = args
        if progress is not None:
            p["_meta"] = {"progressToken": progress}
        return self.request("tools/call", p, timeout)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(HTTP_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr):
            f.close()


@pytest.fixture
def agents(tmp_path, monkeypatch, cordon_factory):
    server_env(monkeypatch)
    return cordon_factory(home=make_agents_home(tmp_path))


@pytest.fixture
def mcp(agents):
    m = Mcp(agents.home)
    yield m
    m.close()


def init(m):
    r, _ = m.request("initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}})
    m.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return r


def error_of(r):
    assert "result" not in r, r
    return r["error"]["code"], r["error"].get("data", {}).get("error")


# ---- the protocol ----

def test_mc1_initialize_tools_and_ping(mcp):
    r = init(mcp)
    res = r["result"]
    assert res["protocolVersion"] == "2025-06-18"
    assert res["capabilities"] == {"tools": {"listChanged": False}}
    assert res["serverInfo"]["name"] == "cordon"
    # A revision this server does not speak: it offers its own.
    r, _ = mcp.request("initialize", {"protocolVersion": "1999-01-01",
                                      "capabilities": {}})
    assert r["result"]["protocolVersion"] == "2025-06-18"
    assert mcp.request("ping")[0]["result"] == {}
    tools = mcp.request("tools/list")[0]["result"]["tools"]
    by = {t["name"]: t for t in tools}
    assert set(by) == {"list_agents", "run_agent", "start_job", "job_status",
                       "job_events", "wait_job", "cancel_job", "list_jobs"}
    # MC-3: the job tools' schemas are as strict.
    for t in by.values():
        assert t["inputSchema"]["additionalProperties"] is False
    ev = by["job_events"]["inputSchema"]
    assert ev["required"] == ["jobId"]
    assert ev["properties"]["offset"]["type"] == "integer"
    assert by["wait_job"]["inputSchema"]["properties"]["timeoutMs"][
        "maximum"] == 60000
    assert ev["properties"]["jobId"]["maxLength"] == 80
    s = by["run_agent"]["inputSchema"]
    assert s["additionalProperties"] is False
    assert s["required"] == ["agent", "prompt"]
    # MC-1: a bound on every string.
    assert all("maxLength" in p for p in s["properties"].values())
    assert s["properties"]["prompt"]["maxLength"] == 256000


def test_mc1_list_agents(mcp):
    init(mcp)
    r, _ = mcp.call("list_agents", {})
    res = r["result"]
    assert res["isError"] is False
    agents = res["structuredContent"]["agents"]
    by = {a["name"]: a for a in agents}
    assert {"claude-code", "hermes"} <= set(by)
    a = by["claude-code"]
    assert set(a) == {"name", "displayName", "description", "transport",
                      "readiness", "missingSecrets", "sandbox"}, a
    assert {"network", "isolation", "layers", "enforced"} <= \
        set(a["sandbox"])
    assert a["sandbox"]["network"] == "none"
    # The model's text is the same document.
    assert json.loads(res["content"][0]["text"]) == \
        res["structuredContent"]


def test_mc1_run_agent_streams_progress_and_tools(agents, mcp):
    init(mcp)
    r, notes = mcp.call("run_agent", {"agent": "claude-code",
                                      "prompt": "tools " + NONCE},
                        progress="p1")
    res = r["result"]
    assert res["isError"] is False, res
    sc = res["structuredContent"]
    assert sc["text"].endswith("Done.") and sc["exitCode"] == 0
    assert res["content"][0]["text"] == sc["text"]
    kinds = [t["kind"] for t in sc["tools"]]
    assert kinds.count("tool") == 3 and "tool_result" in kinds
    assert sc["tools"][0]["tool"] == "Bash"
    # Progress while it ran: strictly increasing, for our token only.
    prog = [n["params"] for n in notes
            if n.get("method") == "notifications/progress"]
    assert prog and all(p["progressToken"] == "p1" for p in prog)
    nums = [p["progress"] for p in prog]
    assert nums == sorted(set(nums))
    assert any(p["message"] == "tool: Bash" for p in prog)
    # MC-1: a run like any other, its caller recorded as via: mcp.
    inv = wait_audit(agents.home, lambda x: x["kind"] == "agent.invoke" and
                     x["runId"] == sc["runId"])
    assert inv[0]["via"] == "mcp"
    wait_audit(agents.home, lambda x: x["kind"] ==
               "agent.invoke.complete" and x["runId"] == sc["runId"])
    # AU-5: the prompt's nonce is in no audit record.
    assert NONCE not in json.dumps(audit_records(agents.home))


def test_mc1_run_without_progress_token_sends_none(mcp):
    init(mcp)
    r, notes = mcp.call("run_agent", {"agent": "claude-code",
                                      "prompt": "hello"})
    assert r["result"]["isError"] is False
    assert "chars" in r["result"]["structuredContent"]["text"]
    assert notes == []


def test_mc1_api_refusal_is_a_tool_error(mcp):
    init(mcp)
    r, _ = mcp.call("run_agent", {"agent": "no-such-agent", "prompt": "x"})
    res = r["result"]
    assert res["isError"] is True
    assert res["structuredContent"] == {"error": "unknown-agent"}


# ---- bad input, each answered with a fixed code and no echo ----

BAD = "zq-echo-canary-77"


def test_mc1_malformed_frames(mcp):
    for raw, code, err in (
            (b"{not json " + BAD.encode() + b"\n", -32700, "parse-error"),
            (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n', -32600,
             "invalid-request"),
            (b'{"jsonrpc":"1.0","id":1,"method":"ping"}\n', -32600,
             "invalid-request"),
            (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n', -32600,
             "invalid-request"),
            (b'{"jsonrpc":"2.0","id":1,"method":"ping","x":1}\n', -32600,
             "invalid-request"),
            (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}\n',
             -32600, "invalid-request"),
            (b'{"jsonrpc":"2.0","id":"' + b"i" * 200 +
             b'","method":"ping"}\n', -32600, "invalid-request"),
            (b'{"jsonrpc":"2.0","id":1,"method":"ping"}\x00\n', -32700,
             "parse-error")):
        mcp.send_raw(raw)
        r = mcp.recv()
        assert r["id"] is None, raw
        assert error_of(r) == (code, err), raw
        assert BAD not in json.dumps(r)
    # Still serving.
    assert mcp.request("ping")[0]["result"] == {}


def test_mc1_integer_ids_only_as_sent(mcp):
    # An integer id json-c would clamp (past 64 bits) would be answered
    # as another id; MC-1 keeps ids to what every caller reads back.
    for rid in ("18446744073709551616", "99999999999999999999999",
                "-9223372036854775809", str(2 ** 53), str(-2 ** 53)):
        mcp.send_raw(b'{"jsonrpc":"2.0","id":%s,"method":"ping"}\n' %
                     rid.encode())
        r = mcp.recv()
        assert r["id"] is None, rid
        assert error_of(r) == (-32600, "invalid-request"), rid
    for rid in (2 ** 53 - 1, -(2 ** 53 - 1), 0):
        mcp.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
        assert mcp.recv() == {"jsonrpc": "2.0", "id": rid, "result": {}}


def test_mc1_socket_stdio_caller_reading_late(tmp_path):
    # A caller that hands cordon mcp one socket as stdin and stdout (as
    # a socket-activated service does): stdin is made non-blocking, which
    # the shared socket's stdout is too.  A caller that reads late still
    # gets every answer; cordon mcp waits for it, never gives up.
    a, b = socket.socketpair()
    p = subprocess.Popen([cordon_bin(), "mcp", "--home", str(tmp_path)],
                         stdin=b, stdout=b, stderr=subprocess.DEVNULL,
                         env=child_env())
    b.close()
    n = 5000

    def ask():
        a.sendall(b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n'
                           % i for i in range(n)))
        a.shutdown(socket.SHUT_WR)

    t = threading.Thread(target=ask)
    t.start()
    try:
        time.sleep(1)  # its answers fill the socket meanwhile
        a.settimeout(HTTP_S)
        data = b""
        while True:
            chunk = a.recv(65536)
            if not chunk:
                break
            data += chunk
        ids = [json.loads(x)["id"] for x in data.split(b"\n") if x]
        assert ids == list(range(n))
        assert p.wait(HTTP_S) == 0
    finally:
        t.join(HTTP_S)
        a.close()
        if p.poll() is None:
            p.kill()
            p.wait()


def test_mc1_oversized_frame_refused_once(mcp):
    mcp.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"'
                 + b"a" * (3 * 1024 * 1024) + b'"}}\n')
    r = mcp.recv()
    assert error_of(r) == (-32600, "frame-too-large") and r["id"] is None
    # The rest of that frame was dropped; the next one is served.
    assert mcp.request("ping")[0]["result"] == {}
    assert mcp.proc.poll() is None


def test_mc1_unknown_method_and_notification(mcp):
    r, _ = mcp.request("resources/" + BAD)
    assert error_of(r) == (-32601, "unknown-method")
    assert BAD not in json.dumps(r)
    # An unknown notification gets no answer at all.
    mcp.send({"jsonrpc": "2.0", "method": "notifications/" + BAD})
    assert mcp.request("ping")[0]["result"] == {}


@pytest.mark.parametrize("params,err", [
    ({"name": BAD}, "unknown-tool"),
    ({"name": "run_agent", "arguments": {"agent": "hermes", "prompt": "x",
                                         BAD: 1}}, "unknown-field"),
    ({"name": "run_agent", "arguments": {"agent": "hermes"}},
     "invalid-argument"),
    ({"name": "run_agent"}, "invalid-argument"),
    ({"name": "run_agent", "arguments": {"agent": 7, "prompt": "x"}},
     "invalid-argument"),
    ({"name": "run_agent", "arguments": {"agent": "../" + BAD,
                                         "prompt": "x"}},
     "invalid-argument"),
    ({"name": "run_agent", "arguments": {"agent": "a" * 65,
                                         "prompt": "x"}},
     "invalid-argument"),
    ({"name": "run_agent", "arguments": {"agent": "hermes", "prompt": ""}},
     "invalid-argument"),
    ({"name": "run_agent", "arguments": {"agent": "hermes",
                                         "prompt": "x" * 256001}},
     "invalid-argument"),
    ({"name": "run_agent", "arguments": {"agent": "hermes", "prompt": "x",
                                         "session": "a.b"}},
     "invalid-argument"),
    ({"name": "list_agents", "arguments": {"x": 1}}, "unknown-field"),
    ({"name": "list_agents", BAD: 1}, "invalid-params"),
    ({"name": "list_agents", "_meta": {"progressToken": [1]}},
     "invalid-params"),
    ({"arguments": {}}, "invalid-params"),
    # MC-3: the job tools, each bad input refused before any API call.
    ({"name": "job_status", "arguments": {"jobId": "../" + BAD}},
     "invalid-argument"),
    ({"name": "job_status", "arguments": {"jobId": "a" * 81}},
     "invalid-argument"),
    ({"name": "job_status", "arguments": {"jobId": "a.b"}},
     "invalid-argument"),
    ({"name": "job_status", "arguments": {"jobId": ""}},
     "invalid-argument"),
    ({"name": "job_status"}, "invalid-argument"),
    ({"name": "cancel_job", "arguments": {"jobId": "a/b"}},
     "invalid-argument"),
    ({"name": "job_events", "arguments": {"jobId": "ab", "offset": -1}},
     "invalid-argument"),
    ({"name": "job_events", "arguments": {"jobId": "ab",
                                          "offset": 2 ** 60}},
     "invalid-argument"),
    ({"name": "job_events", "arguments": {"jobId": "ab", "offset": "1"}},
     "invalid-argument"),
    ({"name": "job_events", "arguments": {"jobId": "ab", "offset": 1.5}},
     "invalid-argument"),
    ({"name": "job_events", "arguments": {"jobId": "ab", "limit": 0}},
     "invalid-argument"),
    ({"name": "wait_job", "arguments": {"jobId": "ab",
                                        "timeoutMs": 60001}},
     "invalid-argument"),
    ({"name": "wait_job", "arguments": {"jobId": "ab", BAD: 1}},
     "unknown-field"),
    ({"name": "start_job", "arguments": {"agent": "hermes"}},
     "invalid-argument"),
    ({"name": "list_jobs", "arguments": {"all": True}}, "unknown-field"),
])
def test_mc1_bad_tool_params(agents, mcp, params, err):
    before = len(audit_records(agents.home, "agent.invoke"))
    r, _ = mcp.request("tools/call", params)
    assert error_of(r) == (-32602, err)
    assert BAD not in json.dumps(r)
    # Refused before anything reached cordon: no run started.
    assert len(audit_records(agents.home, "agent.invoke")) == before


def test_mc1_stdin_closed_mid_run_cancels_it(agents, mcp):
    init(mcp)
    mcp.send({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
              "params": {"name": "run_agent", "_meta": {"progressToken": 1},
                         "arguments": {"agent": "claude-code",
                                       "prompt": "slowline"}}})
    first = mcp.recv()  # the run streams: it has started
    assert first["method"] == "notifications/progress"
    mcp.proc.stdin.close()
    assert mcp.proc.wait(HTTP_S) == 0
    # API-3: the client gone, the run is cancelled, never left running.
    done = wait_audit(agents.home, lambda x: x["kind"] ==
                      "agent.invoke.complete")
    assert done[0]["status"] == "cancelled"


def test_mc1_cancelled_notification_ends_the_call(agents, mcp):
    init(mcp)
    mcp.send({"jsonrpc": "2.0", "id": "r1", "method": "tools/call",
              "params": {"name": "run_agent", "_meta": {"progressToken": 1},
                         "arguments": {"agent": "claude-code",
                                       "prompt": "slowline"}}})
    assert mcp.recv()["method"] == "notifications/progress"
    mcp.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": "r1", "reason": "user"}})
    done = wait_audit(agents.home, lambda x: x["kind"] ==
                      "agent.invoke.complete")
    assert done[0]["status"] == "cancelled"
    # No answer for the cancelled request; the server goes on.
    r, notes = mcp.request("ping")
    assert r["result"] == {}
    assert all(n.get("id") != "r1" for n in notes)


def test_mc1_not_running_and_usage(tmp_path):
    home = tmp_path / "idle"
    home.mkdir()
    m = Mcp(home)
    try:
        r, _ = m.call("list_agents")
        assert r["result"]["isError"] is True
        assert r["result"]["structuredContent"] == {"error": "not-running"}
    finally:
        m.close()
    r = subprocess.run([cordon_bin(), "mcp", "--bogus"], capture_output=True,
                       text=True, timeout=HTTP_S, env=child_env())
    assert r.returncode == 2 and "usage: cordon mcp" in r.stderr


def test_mc1_api_via_is_only_mcp(agents):
    """The run body's `via` takes one value; anything else is refused
    like any unknown key, before a run starts (PER-8)."""
    before = len(audit_records(agents.home, "agent.invoke"))
    for via in ("dashboard", 1, "", "mcp" * 3):
        r = post_json(agents, "/api/agents/hermes/run",
                      {"prompt": "x", "via": via})
        assert (r.status, r.json()) == (400, {"ok": False,
                                              "error": "invalid-body"})
    assert len(audit_records(agents.home, "agent.invoke")) == before


# ---- detached jobs (MC-3) ----

def test_mc3_job_tools_start_read_wait_cancel(agents, mcp):
    init(mcp)
    r, _ = mcp.call("start_job", {"agent": "hermes",
                                  "prompt": "slowtokens 3 " + NONCE})
    res = r["result"]
    assert res["isError"] is False, res
    jid = res["structuredContent"]["jobId"]
    assert json.loads(res["content"][0]["text"]) == res["structuredContent"]
    r, _ = mcp.call("list_jobs", {})
    assert [j["jobId"] for j in r["result"]["structuredContent"]["jobs"]] \
        == [jid]
    r, _ = mcp.call("wait_job", {"jobId": jid, "timeoutMs": 20000},
                    timeout=30)
    w = r["result"]["structuredContent"]
    assert w["timedOut"] is False and w["job"]["state"] == "succeeded", w
    assert w["job"]["via"] == "mcp"
    r, _ = mcp.call("job_events", {"jobId": jid})
    evs = r["result"]["structuredContent"]["events"]
    assert evs[0] == {"kind": "start", "runId": jid}
    assert any(e["kind"] == "done" for e in evs)
    r, _ = mcp.call("job_events", {"jobId": jid, "offset": 1, "limit": 1})
    page = r["result"]["structuredContent"]
    assert page["events"] == evs[1:2] and page["next"] == 2
    # Past the end: the API's fixed code, as a tool error.
    r, _ = mcp.call("job_events", {"jobId": jid, "offset": len(evs) + 5})
    assert r["result"]["isError"] is True
    assert r["result"]["structuredContent"] == {"error": "invalid-offset"}
    r, _ = mcp.call("job_status", {"jobId": jid})
    assert r["result"]["structuredContent"]["job"] == w["job"]
    # Another job, cancelled through the tool.
    r, _ = mcp.call("start_job", {"agent": "hermes", "prompt": "sleep 30"})
    jid2 = r["result"]["structuredContent"]["jobId"]
    r, _ = mcp.call("cancel_job", {"jobId": jid2})
    assert r["result"]["isError"] is False, r
    r, _ = mcp.call("wait_job", {"jobId": jid2}, timeout=40)
    job = r["result"]["structuredContent"]["job"]
    assert job["state"] == "cancelled" and job["cancelReason"] == "requested"
    # Unknown, well-formed: the API's 404 code.
    r, _ = mcp.call("job_status", {"jobId": "nobody-s-job"})
    assert r["result"]["structuredContent"] == {"error": "unknown-job"}
    # MC-1: audited via mcp; AU-5: no nonce in the trail.
    s = wait_audit(agents.home, lambda x: x["kind"] == "job.start" and
                   x["jobId"] == jid)
    assert s[0]["via"] == "mcp"
    assert NONCE not in json.dumps(audit_records(agents.home))


def test_mc3_job_outlives_the_mcp_server(agents, mcp):
    """A detached job is not the call's: stdin closing ends the server,
    never the job."""
    init(mcp)
    r, _ = mcp.call("start_job", {"agent": "hermes",
                                  "prompt": "slowtokens 2"})
    jid = r["result"]["structuredContent"]["jobId"]
    mcp.proc.stdin.close()
    assert mcp.proc.wait(HTTP_S) == 0
    m2 = Mcp(agents.home)
    try:
        init(m2)
        r, _ = m2.call("wait_job", {"jobId": jid}, timeout=40)
        assert r["result"]["structuredContent"]["job"]["state"] == \
            "succeeded"
    finally:
        m2.close()
