#!/usr/bin/env python3
"""A scriptable stand-in for the model APIs the real agent CLIs call.

One HTTP server on 127.0.0.1 (plain HTTP, an ephemeral port) with three
personalities, chosen by the request path:

  anthropic  POST /v1/messages (stream: true, server-sent events), as
             Claude Code calls it (ANTHROPIC_BASE_URL)
  openai     POST /v1/responses (the Responses API, SSE), as Codex calls
             it through a configured model provider (wire_api=responses)
  gemini     POST /v1beta/models/M:streamGenerateContent?alt=sse (and
             :generateContent, :countTokens), as Gemini CLI calls it
             (GOOGLE_GEMINI_BASE_URL)

A test scripts the assistant's turns with `script(...)`: each turn is a
list of steps,

  ("say", TEXT)               a text block
  ("tool", NAME, INPUT)       a tool call (INPUT a dict, in the
                              provider's own shape for that tool)
  ("stall",)                  send what came before, then hold the
                              response open until release() or close()

The turn a request gets is the number of assistant turns already in the
conversation it carries (so a tool result comes back as the next turn,
whatever side requests the CLI makes in between); a conversation past the
end of the script gets the last turn's text again, or "(end of script)".
Requests that are not the agent's main conversation (titles, summaries,
checks: a request without tools) are answered with a short text and
recorded like the others.

Every request is recorded (method, path, headers, JSON body) in
`requests`; nothing is ever forwarded anywhere.  Run it alone to watch a
CLI: `python3 mock_api.py` prints the base URL, then each request.
"""
import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STALL_S = 120.0  # a stalled response is let go after this, at the latest
MODEL_ANTHROPIC = "claude-sonnet-4-5"
MODEL_OPENAI = "gpt-5-codex"
MODEL_GEMINI = "gemini-2.5-pro"


def _id(prefix):
    return prefix + uuid.uuid4().hex[:24]


class Mock:
    """The server and its script; a context manager."""

    def __init__(self, verbose=False):
        self.verbose = verbose
        self.requests = []
        self.turns = [[("say", "Hello from the mock.")]]
        self.side_text = "Mock side answer."
        self._lock = threading.Lock()
        self._release = threading.Event()
        self.stalled = threading.Event()  # set once a stall step is reached
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.mock = self
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever,
                                        daemon=True)

    def start(self):
        self._thread.start()
        return self

    def close(self):
        self._release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # ---- scripting ----

    def script(self, *turns):
        """Replace the script and forget the requests seen so far."""
        with self._lock:
            self.turns = [list(t) for t in turns]
            self.requests = []
        self._release.clear()
        self.stalled.clear()

    def release(self):
        self._release.set()

    def turn_for(self, done):
        with self._lock:
            if done < len(self.turns):
                return self.turns[done]
            last = [s for s in self.turns[-1] if s[0] == "say"]
            return last or [("say", "(end of script)")]

    def record(self, entry):
        with self._lock:
            self.requests.append(entry)
        if self.verbose:
            print(json.dumps(entry), flush=True)

    def seen(self, personality=None):
        with self._lock:
            return [r for r in self.requests
                    if personality is None or r["personality"] == personality]

    def main_requests(self, personality=None):
        return [r for r in self.seen(personality) if r.get("main")]

    def tool_results(self, personality):
        """The text of every tool result the CLI sent back, in order, from
        the last main request (which carries the whole conversation)."""
        reqs = self.main_requests(personality)
        return _results(personality, reqs[-1]["body"]) if reqs else []

    def wait_stalled(self, bound=60.0):
        if not self.stalled.wait(bound):
            raise AssertionError("the agent never reached the stall")

    def hold(self):
        self.stalled.set()
        self._release.wait(STALL_S)


# ---- the three personalities: (turns done, is main) and the answer ----

def _anthropic_state(body):
    done = sum(1 for m in body.get("messages", [])
               if m.get("role") == "assistant")
    return done, bool(body.get("tools"))


def _openai_state(body):
    items = body.get("input", [])
    if isinstance(items, str):
        items = []
    # One assistant turn ends with a message or with its tool calls:
    # count runs of consecutive assistant-side items.
    done, prev = 0, False
    for it in items:
        side = (it.get("type") in ("function_call", "custom_tool_call",
                                   "local_shell_call", "reasoning") or
                it.get("role") == "assistant")
        if side and not prev:
            done += 1
        prev = side
    # Codex sends no side requests here; some of its models get no
    # "tools" list (they call exec_command all the same).
    return done, True


def _gemini_state(body):
    done = sum(1 for c in body.get("contents", []) if c.get("role") == "model")
    cfg = body.get("generationConfig") or {}
    side = "responseSchema" in cfg or "responseJsonSchema" in cfg
    return done, bool(body.get("tools")) and not side


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet; requests are recorded
        pass

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("Content-Encoding") == "gzip" and raw:
            import gzip
            raw = gzip.decompress(raw)
        if self.headers.get("Content-Encoding") == "zstd" and raw:
            raw = b""  # not decoded: recorded as empty
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            return {"_raw": raw[:2000].decode("latin-1")}

    def _record(self, personality, body, main=False):
        self.server.mock.record({
            "t": time.time(), "method": self.command, "path": self.path,
            "personality": personality, "main": main,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body})

    def _json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse_head(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _event(self, name, obj):
        head = f"event: {name}\n" if name else ""
        self.wfile.write((head + "data: " + json.dumps(obj) +
                          "\n\n").encode())
        self.wfile.flush()

    def do_GET(self):
        path = self.path.split("?")[0]
        self._record(_personality(path), {})
        if path.startswith("/v1/models") or path.startswith("/v1beta/models"):
            self._json(200, {"data": [], "models": [], "object": "list"})
        else:
            self._json(404, {"error": {"message": "not found"}})

    def do_HEAD(self):
        self._record(_personality(self.path), {})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        path = self.path.split("?")[0]
        body = self._body()
        mock = self.server.mock
        try:
            if path == "/v1/messages":
                done, main = _anthropic_state(body)
                self._record("anthropic", body, main)
                steps = mock.turn_for(done) if main else \
                    [("say", mock.side_text)]
                if body.get("stream"):
                    self._anthropic_stream(steps, body)
                else:
                    self._json(200, _anthropic_message(steps, body))
            elif path == "/v1/messages/count_tokens":
                self._record("anthropic", body)
                self._json(200, {"input_tokens": 42})
            elif path in ("/v1/responses", "/responses"):
                done, main = _openai_state(body)
                self._record("openai", body, main)
                steps = mock.turn_for(done) if main else \
                    [("say", mock.side_text)]
                self._openai_stream(steps, body)
            elif path.startswith("/v1beta/models/") or \
                    path.startswith("/v1/models/"):
                verb = path.rsplit(":", 1)[-1]
                if verb == "countTokens":
                    self._record("gemini", body)
                    self._json(200, {"totalTokens": 42})
                    return
                done, main = _gemini_state(body)
                self._record("gemini", body, main)
                steps = mock.turn_for(done) if main else \
                    [("say", _gemini_side(body, mock.side_text))]
                if verb == "streamGenerateContent":
                    self._gemini_stream(steps)
                else:
                    self._json(200, _gemini_chunk(steps, final=True))
            else:
                self._record(_personality(path), body)
                self._json(404, {"error": {"message": "not found"}})
        except (BrokenPipeError, ConnectionResetError):
            pass

    # -- Anthropic Messages API --

    def _anthropic_stream(self, steps, body):
        mock = self.server.mock
        self._sse_head()
        self._event("message_start", {
            "type": "message_start",
            "message": {"id": _id("msg_"), "type": "message",
                        "role": "assistant",
                        "model": body.get("model", MODEL_ANTHROPIC),
                        "content": [], "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 12, "output_tokens": 1}}})
        stop = "end_turn"
        for i, step in enumerate(steps):
            if step[0] == "stall":
                mock.hold()
                continue
            if step[0] == "say":
                self._event("content_block_start", {
                    "type": "content_block_start", "index": i,
                    "content_block": {"type": "text", "text": ""}})
                for part in _pieces(step[1]):
                    self._event("content_block_delta", {
                        "type": "content_block_delta", "index": i,
                        "delta": {"type": "text_delta", "text": part}})
            else:
                stop = "tool_use"
                self._event("content_block_start", {
                    "type": "content_block_start", "index": i,
                    "content_block": {"type": "tool_use", "id": _id("toolu_"),
                                      "name": step[1], "input": {}}})
                js = json.dumps(step[2])
                for part in (js[:len(js) // 2], js[len(js) // 2:]):
                    self._event("content_block_delta", {
                        "type": "content_block_delta", "index": i,
                        "delta": {"type": "input_json_delta",
                                  "partial_json": part}})
            self._event("content_block_stop",
                        {"type": "content_block_stop", "index": i})
        self._event("message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 7}})
        self._event("message_stop", {"type": "message_stop"})

    # -- OpenAI Responses API --

    def _openai_stream(self, steps, body):
        mock = self.server.mock
        rid = _id("resp_")
        model = body.get("model", MODEL_OPENAI)
        self._sse_head()
        self._event("response.created", {
            "type": "response.created",
            "response": {"id": rid, "object": "response", "model": model,
                         "status": "in_progress", "output": []}})
        out = []
        for i, step in enumerate(steps):
            if step[0] == "stall":
                mock.hold()
                continue
            if step[0] == "say":
                item_id = _id("msg_")
                item = {"type": "message", "id": item_id, "role": "assistant",
                        "status": "in_progress", "content": []}
                self._event("response.output_item.added", {
                    "type": "response.output_item.added", "output_index": i,
                    "item": item})
                for part in _pieces(step[1]):
                    self._event("response.output_text.delta", {
                        "type": "response.output_text.delta",
                        "item_id": item_id, "output_index": i,
                        "content_index": 0, "delta": part})
                item = dict(item, status="completed", content=[
                    {"type": "output_text", "text": step[1],
                     "annotations": []}])
            else:
                item = {"type": "function_call", "id": _id("fc_"),
                        "call_id": _id("call_"), "name": step[1],
                        "arguments": json.dumps(step[2]),
                        "status": "completed"}
                self._event("response.output_item.added", {
                    "type": "response.output_item.added", "output_index": i,
                    "item": dict(item, arguments="")})
            self._event("response.output_item.done", {
                "type": "response.output_item.done", "output_index": i,
                "item": item})
            out.append(item)
        self._event("response.completed", {
            "type": "response.completed",
            "response": {"id": rid, "object": "response", "model": model,
                         "status": "completed", "output": out,
                         "usage": {"input_tokens": 12,
                                   "input_tokens_details": {
                                       "cached_tokens": 0},
                                   "output_tokens": 7,
                                   "output_tokens_details": {
                                       "reasoning_tokens": 0},
                                   "total_tokens": 19}}})

    # -- Gemini API --

    def _gemini_stream(self, steps):
        mock = self.server.mock
        self._sse_head()
        for i, step in enumerate(steps):
            if step[0] == "stall":
                mock.hold()
                continue
            last = i == len(steps) - 1
            if step[0] == "say":
                parts = _pieces(step[1])
                for j, part in enumerate(parts):
                    fin = last and j == len(parts) - 1
                    self._event(None, _gemini_chunk([("say", part)],
                                                    final=fin))
            else:
                self._event(None, _gemini_chunk([step], final=last))
        if not steps or steps[-1][0] == "stall":
            self._event(None, _gemini_chunk([("say", "")], final=True))


def _text(v):
    """A result's content as text: a string, a list of blocks or parts
    (their text), or any other JSON as compact JSON."""
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return "".join(_text(b.get("text", b) if isinstance(b, dict)
                             else b) for b in v)
    return json.dumps(v, separators=(",", ":"))


def _results(personality, body):
    """Tool results in a request: Anthropic tool_result blocks, OpenAI
    function_call_output items, Gemini functionResponse parts."""
    out = []
    if personality == "anthropic":
        for m in body.get("messages", []):
            c = m.get("content")
            out += [_text(b.get("content", "")) for b in
                    (c if isinstance(c, list) else [])
                    if b.get("type") == "tool_result"]
    elif personality == "openai":
        items = body.get("input", [])
        out += [_text(it.get("output", "")) for it in
                (items if isinstance(items, list) else [])
                if it.get("type") in ("function_call_output",
                                      "custom_tool_call_output")]
    elif personality == "gemini":
        for c in body.get("contents", []):
            out += [_text(p["functionResponse"].get("response", {}))
                    for p in c.get("parts", []) if "functionResponse" in p]
    return out


def _personality(path):
    if path.startswith("/v1beta") or ":" in path:
        return "gemini"
    if path.startswith("/v1/messages") or "claude" in path:
        return "anthropic"
    if "response" in path or "chat/completions" in path:
        return "openai"
    return "other"


def _pieces(text):
    """Split a text in two deltas, so the CLI has to join them."""
    if len(text) < 2:
        return [text]
    return [text[:len(text) // 2], text[len(text) // 2:]]


def _anthropic_message(steps, body):
    content = []
    for s in steps:
        if s[0] == "say":
            content.append({"type": "text", "text": s[1]})
        elif s[0] == "tool":
            content.append({"type": "tool_use", "id": _id("toolu_"),
                            "name": s[1], "input": s[2]})
    return {"id": _id("msg_"), "type": "message", "role": "assistant",
            "model": body.get("model", MODEL_ANTHROPIC), "content": content,
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 7}}


def _gemini_side(body, text):
    """A side request that asks for JSON gets a JSON answer of the shape
    Gemini CLI's checks expect (next speaker: the user; no loop)."""
    cfg = body.get("generationConfig") or {}
    if "responseSchema" in cfg or "responseJsonSchema" in cfg or \
            cfg.get("responseMimeType") == "application/json":
        return json.dumps({"reasoning": "The model answered.",
                           "next_speaker": "user",
                           "is_stuck": False, "confidence": 0.0,
                           "model_choice": "flash",
                           "complexity_reasoning": "A short request.",
                           "complexity_score": 1})
    return text


def _gemini_chunk(steps, final):
    parts = []
    for s in steps:
        if s[0] == "say":
            parts.append({"text": s[1]})
        elif s[0] == "tool":
            parts.append({"functionCall": {"name": s[1], "args": s[2]}})
    cand = {"content": {"role": "model", "parts": parts}, "index": 0}
    if final:
        cand["finishReason"] = "STOP"
    return {"candidates": [cand],
            "usageMetadata": {"promptTokenCount": 12,
                              "candidatesTokenCount": 7,
                              "totalTokenCount": 19},
            "modelVersion": MODEL_GEMINI}


def main():
    mock = Mock(verbose=True)
    if len(sys.argv) > 1:
        mock.script(*json.loads(sys.argv[1]))
    mock.start()
    print(mock.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        mock.close()


if __name__ == "__main__":
    main()
