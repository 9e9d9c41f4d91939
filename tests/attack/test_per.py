# PER-2 ... PER-10: hostile requests against the broker over raw sockets,
# so that every byte reaches it as written.  Each row: the request (a
# template with {p} port, {tok} token, {sid} session, {key} its page key,
# {n} a nonce), the status and fixed error code it must get (None: the
# connection is closed without an answer).  The invariants (conftest.py)
# run after every row.
import socket
import threading
import time

import pytest

from conftest import raw_http

GOOD = "Host: 127.0.0.1:{p}\r\nAuthorization: Bearer {tok}\r\n"
CLOSE = "Connection: close\r\n"


def req(line="GET /api/health HTTP/1.1", head=GOOD, extra="", body=""):
    return line + "\r\n" + head + extra + CLOSE + "\r\n" + body


def fill(c, world, tmpl, sess=("", "")):
    for k, v in (("{p}", str(c.port)), ("{tok}", c.token), ("{sid}", sess[0]),
                 ("{key}", sess[1]),
                 ("{n}", world.nonce()), ("{other}", str(c.port + 1))):
        tmpl = tmpl.replace(k, v)
    return tmpl.encode("latin-1")


def err(code):
    return b'{"ok":false,"error":"%s"}' % code.encode()


def check(r, status, code):
    if status is None:
        assert r is None or r.status == 400 and r.body == err(
            "bad-request"), r
        return
    assert r is not None, "closed without an answer"
    assert r.status == status, r
    if code is not None:
        assert r.body == err(code), r
        assert r.header("Content-Type") == "application/json", r


def _row_id(row):
    return row.values[0] if hasattr(row, "values") else row[0]


# ---- PER-2: Host and the request target ----

HOST = [
    ("dup-same", GOOD + "Host: 127.0.0.1:{p}\r\n"),
    ("dup-evil-second", GOOD + "Host: evil.example:{p}\r\n"),
    ("dup-evil-first", "Host: evil.example:{p}\r\nHost: 127.0.0.1:{p}\r\n"
     "Authorization: Bearer {tok}\r\n"),
    ("userinfo", "Host: user@127.0.0.1:{p}\r\nAuthorization: Bearer {tok}"
     "\r\n"),
    ("userinfo-pw", "Host: a:b@localhost:{p}\r\nAuthorization: Bearer {tok}"
     "\r\n"),
    ("userinfo-after", "Host: 127.0.0.1:{p}@evil.example\r\n"
     "Authorization: Bearer {tok}\r\n"),
    ("path-in-host", "Host: 127.0.0.1:{p}/x\r\nAuthorization: Bearer {tok}"
     "\r\n"),
    ("query-in-host", "Host: localhost:{p}?x\r\nAuthorization: Bearer {tok}"
     "\r\n"),
    ("frag-in-host", "Host: localhost:{p}#x\r\nAuthorization: Bearer {tok}"
     "\r\n"),
    ("space-in-host", "Host: local host:{p}\r\nAuthorization: Bearer {tok}"
     "\r\n"),
    ("nonce-host", "Host: {n}.example:{p}\r\nAuthorization: Bearer {tok}"
     "\r\n"),
    ("octal", "Host: 0177.0.0.1:{p}\r\nAuthorization: Bearer {tok}\r\n"),
    ("hex", "Host: 0x7f.0.0.1:{p}\r\nAuthorization: Bearer {tok}\r\n"),
    ("zero-pad", "Host: 127.000.000.001:{p}\r\nAuthorization: Bearer {tok}"
     "\r\n"),
    ("v6-long", "Host: [0:0:0:0:0:0:0:1]:{p}\r\nAuthorization: Bearer {tok}"
     "\r\n"),
    ("v6-zone", "Host: [::1%25lo]:{p}\r\nAuthorization: Bearer {tok}\r\n"),
    ("v6-mapped", "Host: [::ffff:7f00:1]:{p}\r\nAuthorization: Bearer {tok}"
     "\r\n"),
    ("other-port", "Host: 127.0.0.1:{other}\r\nAuthorization: Bearer {tok}"
     "\r\n"),
    ("port-0", "Host: localhost:0\r\nAuthorization: Bearer {tok}\r\n"),
    ("port-overflow", "Host: localhost:{p}0000\r\nAuthorization: Bearer "
     "{tok}\r\n"),
    ("idn", "Host: xn--lcalhost-9za:{p}\r\nAuthorization: Bearer {tok}\r\n"),
    ("rebind-name", "Host: 127.0.0.1.nip.io:{p}\r\nAuthorization: Bearer "
     "{tok}\r\n"),
    ("no-host-1.1", "Authorization: Bearer {tok}\r\n"),
    ("empty-host", "Host: \r\nAuthorization: Bearer {tok}\r\n"),
]


@pytest.mark.parametrize("head", [h for _, h in HOST],
                         ids=[i for i, _ in HOST])
def test_per2_host_games_421(c, world, head):
    check(raw_http(c.port, fill(c, world, req(head=head))), 421,
          "misdirected-request")


@pytest.mark.parametrize("head", [h for _, h in HOST[:8]],
                         ids=[i for i, _ in HOST[:8]])
def test_per2_host_games_on_login_421(c, world, head):
    # The rebinding page cannot spend the login code either.
    t = req(f"GET /ui/login?code={c.code} HTTP/1.1", head=head)
    check(raw_http(c.port, fill(c, world, t)), 421, "misdirected-request")
    assert c.login(code="0" * 32).status == 401


TARGETS = [
    ("absolute", "GET http://127.0.0.1:{p}/api/health HTTP/1.1"),
    ("absolute-evil", "GET http://evil.example/api/health HTTP/1.1"),
    ("absolute-https", "GET https://127.0.0.1:{p}/api/health HTTP/1.1"),
    ("absolute-userinfo", "GET http://u@127.0.0.1:{p}/api/health HTTP/1.1"),
    ("authority-form", "GET 127.0.0.1:{p} HTTP/1.1"),
    ("asterisk", "GET * HTTP/1.1"),
    ("scheme-relative", "GET //evil.example/api/health HTTP/1.1"),
    ("relative", "GET api/health HTTP/1.1"),
    ("backslash", "GET /api\\health HTTP/1.1"),
    ("fragment", "GET /api/health#{n} HTTP/1.1"),
]


@pytest.mark.parametrize("rid,line", TARGETS,
                         ids=[_row_id(t) for t in TARGETS])
def test_per2_request_target_400(c, world, rid, line):
    check(raw_http(c.port, fill(c, world, req(line))), 400, "bad-request")


# ---- PER-3: Origin ----

ORIGINS = [
    ("null", "null"), ("NULL", "NULL"), ("Null", "Null"),
    ("evil", "http://evil.example"),
    ("suffix", "http://127.0.0.1:{p}.evil.example"),
    ("userinfo", "http://127.0.0.1:{p}@evil.example"),
    ("path", "http://127.0.0.1:{p}/ui/"),
    ("https", "https://127.0.0.1:{p}"),
    ("other-port", "http://localhost:{other}"),
    ("file", "file://"), ("extension", "chrome-extension://abcdef"),
    ("data", "data:text/html,x"), ("empty", ""), ("star", "*"),
    ("nonce", "http://{n}.example"),
    ("list", "http://127.0.0.1:{p} http://evil.example"),
    ("comma", "http://127.0.0.1:{p}, http://evil.example"),
]


@pytest.mark.parametrize("origin", [o for _, o in ORIGINS],
                         ids=[i for i, _ in ORIGINS])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_per3_origin_403(c, world, origin, method):
    line = (f"{method} /api/runs/0123456789abcdef/cancel HTTP/1.1"
            if method == "POST" else "GET /api/health HTTP/1.1")
    extra = f"Origin: {origin}\r\n"
    body = ""
    if method == "POST":
        extra += "Content-Type: application/json\r\nContent-Length: 2\r\n"
        body = "{}"
    check(raw_http(c.port, fill(c, world, req(line, extra=extra,
                                              body=body))),
          403, "forbidden-origin")


@pytest.mark.parametrize("pair", [
    ("http://127.0.0.1:{p}", "http://127.0.0.1:{p}"),
    ("http://127.0.0.1:{p}", "http://evil.example"),
    ("http://evil.example", "http://127.0.0.1:{p}"),
    ("null", "http://localhost:{p}"),
], ids=["same", "good-evil", "evil-good", "null-good"])
def test_per3_duplicate_origin_403(c, world, pair):
    extra = "".join(f"Origin: {o}\r\n" for o in pair)
    check(raw_http(c.port, fill(c, world, req(extra=extra))), 403,
          "forbidden-origin")


# ---- PER-4: Sec-Fetch-Site, any case, any method, any path ----

SITES = ["cross-site", "CROSS-SITE", "Cross-Site", "cRoSs-SiTe",
         "same-site", "SAME-SITE", "Same-Site", "sAmE-sItE"]


@pytest.mark.parametrize("value", SITES)
@pytest.mark.parametrize("line", ["GET /api/health HTTP/1.1",
                                  "GET /ui/ HTTP/1.1",
                                  "POST /api/runs/0123456789abcdef/cancel "
                                  "HTTP/1.1"], ids=["api", "ui", "post"])
def test_per4_sec_fetch_site_403(c, world, value, line):
    extra = f"Sec-Fetch-Site: {value}\r\n"
    if line.startswith("POST"):
        extra += "Content-Type: application/json\r\nContent-Length: 2\r\n"
    t = req(line, extra=extra, body="{}" if "POST" in line else "")
    check(raw_http(c.port, fill(c, world, t)), 403, "forbidden-site")


@pytest.mark.parametrize("values", [
    ("same-origin", "cross-site"), ("cross-site", "same-origin"),
    ("none", "same-site")], ids=lambda v: "+".join(v))
def test_per4_duplicate_sec_fetch_site_403(c, world, values):
    extra = "".join(f"Sec-Fetch-Site: {v}\r\n" for v in values)
    check(raw_http(c.port, fill(c, world, req(extra=extra))), 403,
          "forbidden-site")


# ---- PER-5 / PER-7: credentials ----

@pytest.fixture(scope="module")
def sid(world):
    """The session id and its page key (PER-5)."""
    return world.c.session()


KEY = "X-Cordon-Page: {key}\r\n"


AUTH = [
    ("dup-good-good", "Authorization: Bearer {tok}\r\n"
     "Authorization: Bearer {tok}\r\n"),
    ("dup-good-bad", "Authorization: Bearer {tok}\r\n"
     "Authorization: Bearer 00\r\n"),
    ("dup-bad-good", "Authorization: Bearer 00\r\n"
     "Authorization: Bearer {tok}\r\n"),
    ("token-in-cookie", "Cookie: cordon_session={tok}\r\n"),
    ("token-in-xapikey", "X-Api-Key: {tok}\r\n"),
    ("token-in-query", ""),
    ("nonce-bearer", "Authorization: Bearer {n}\r\n"),
    ("cookie-dup-headers", "Cookie: cordon_session={sid}\r\n"
     "Cookie: cordon_session={sid}\r\n" + KEY),
    ("cookie-dup-pairs", "Cookie: cordon_session={sid}; "
     "cordon_session={sid}\r\n" + KEY),
    ("cookie-quoted", "Cookie: cordon_session=\"{sid}\"\r\n" + KEY),
    ("cookie-prefix", "Cookie: xcordon_session={sid}\r\n" + KEY),
    ("cookie-upper", "Cookie: CORDON_SESSION={sid}\r\n" + KEY),
    ("cookie-code", "Cookie: cordon_session={code}\r\n" + KEY),
    # PER-5: the cookie without its page key, the key without the
    # cookie, the key twice, the key as a cookie or under another name.
    ("cookie-no-key", "Cookie: cordon_session={sid}\r\n"),
    ("key-no-cookie", KEY),
    ("key-dup", "Cookie: cordon_session={sid}\r\n" + KEY + KEY),
    ("key-in-cookie", "Cookie: cordon_session={sid}; "
     "X-Cordon-Page={key}\r\n"),
    ("key-other-name", "Cookie: cordon_session={sid}\r\n"
     "X-Cordon-Key: {key}\r\n"),
    ("key-of-token", "Cookie: cordon_session={sid}\r\n"
     "X-Cordon-Page: {tok}\r\n"),
]


@pytest.mark.parametrize("extra", [a for _, a in AUTH],
                         ids=[i for i, _ in AUTH])
def test_per5_credential_games_401(c, world, sid, extra):
    line = "GET /api/health HTTP/1.1"
    if extra == "":
        line = "GET /api/health?token={tok} HTTP/1.1"
    t = req(line, head="Host: 127.0.0.1:{p}\r\n",
            extra=extra.replace("{code}", c.code))
    check(raw_http(c.port, fill(c, world, t, sid)), 401, "unauthorized")


def test_per5_cookie_with_key_authenticates(c, world, sid):
    # The control of the rows above: the cookie and its key, as sent.
    t = req(head="Host: 127.0.0.1:{p}\r\n",
            extra="Cookie: cordon_session={sid}\r\n" + KEY)
    r = raw_http(c.port, fill(c, world, t, sid))
    assert r is not None and r.status == 200, r


REFERERS = [
    ("none", None, 403), ("evil", "http://evil.example/ui/", 403),
    ("not-ui", "http://127.0.0.1:{p}/api/health", 403),
    ("ui-prefix", "http://127.0.0.1:{p}/uix/", 403),
    ("suffix-host", "http://127.0.0.1:{p}.evil.example/ui/", 403),
    ("userinfo", "http://127.0.0.1:{p}@evil.example/ui/", 403),
    ("other-port", "http://127.0.0.1:{other}/ui/", 403),
    ("https", "https://127.0.0.1:{p}/ui/", 403),
    ("relative", "/ui/", 403),
    ("ui-in-query", "http://127.0.0.1:{p}/api/x?/ui/", 403),
    ("good", "http://127.0.0.1:{p}/ui/", 404),
    ("good-localhost", "http://localhost:{p}/ui/agents", 404),
]


@pytest.mark.parametrize("referer,status", [(r, s) for _, r, s in REFERERS],
                         ids=[i for i, _, _ in REFERERS])
def test_per7_cookie_post_needs_ui_referer(c, world, sid, referer, status):
    extra = ("Cookie: cordon_session={sid}\r\n" + KEY + "Content-Type: "
             "application/json\r\nContent-Length: 2\r\n")
    if referer is not None:
        extra += f"Referer: {referer}\r\n"
    extra = extra.replace("Length: 2", "Length: 19")
    t = req(POST, head="Host: 127.0.0.1:{p}\r\n", extra=extra, body=B)
    r = raw_http(c.port, fill(c, world, t, sid))
    check(r, status, "forbidden-referer" if status == 403 else
          "unknown-approval")


# ---- PER-8 / PER-9: syntax, framing and bounds ----

# Rows: id, raw request, expected ("refused": 400 or 413 or cut, never
# served; a number: that status, for shapes RFC 9112 lets a server read).
SYNTAX = [
    ("folded-header", req(extra="X-A: a\r\n folded\r\n"), 200),
    ("folded-auth", req(head="Host: 127.0.0.1:{p}\r\nAuthorization: "
                        "Bearer\r\n {tok}\r\n"), 200),
    ("folded-host", req(head="Host: 127.0.0.1:{p}\r\n evil.example\r\n"
                        "Authorization: Bearer {tok}\r\n"), 421),
    ("folded-second-host", req(extra="X-A: a\r\n Host: evil.example\r\n"),
     200),
    ("no-colon", req(extra="Nonsense header line\r\n"), "refused"),
    # libevent keeps these names with their space; the broker refuses
    # them itself (policy/http.c http_headers_ok).
    ("space-before-colon", req(extra="X-A : b\r\n"), "refused"),
    ("space-in-name", req(extra="X A: b\r\n"), "refused"),
    ("nul-in-value", req(extra="X-A: a\x00b\r\n"), "refused"),
    ("nul-in-auth", req(head="Host: 127.0.0.1:{p}\r\nAuthorization: Bearer "
                    "{tok}\x00junk\r\n"), "refused"),
    ("nul-in-host", req(head="Host: 127.0.0.1:{p}\x00.evil.example\r\n"
                    "Authorization: Bearer {tok}\r\n"), "refused"),
    ("nul-in-name", req(extra="X-\x00A: b\r\n"), "refused"),
    ("cr-in-value", req(extra="X-A: a\rb\r\n"), "refused"),
    ("http-0.9", "GET /api/health\r\n\r\n", "refused"),
    ("http-1.2", req("GET /api/health HTTP/1.2"), 200),
    ("http-2.0", req("GET /api/health HTTP/2.0"), "refused"),
    ("http-lower", req("GET /api/health http/1.1"), "refused"),
    ("version-junk", req("GET /api/health HTTP/1.1x"), "refused"),
    ("extra-token", req("GET /api/health HTTP/1.1 x"), "refused"),
    ("two-spaces", req("GET  /api/health HTTP/1.1"), "refused"),
    ("tab-separator", req("GET\t/api/health\tHTTP/1.1"), "refused"),
    ("nul-in-method", req("G\x00T /api/health HTTP/1.1"), "refused"),
    ("nul-in-target", req("GET /api/health\x00x HTTP/1.1"), "refused"),
    ("ctl-in-target", req("GET /api/he\x01alth HTTP/1.1"), "refused"),
    ("long-method", req("A" * 4000 + " /api/health HTTP/1.1"), 405),
    ("uri-9k", req("GET /api/health?" + "a" * 9000 + " HTTP/1.1"), "refused"),
    ("uri-100k", req("GET /" + "a" * 100000 + " HTTP/1.1"), "refused"),
    ("header-17k", req(extra="X-Big: " + "b" * (17 * 1024) + "\r\n"),
     "refused"),
    ("headers-300", req(extra="".join(f"X-H{i}: {'h' * 60}\r\n"
                                      for i in range(300))), "refused"),
    ("header-name-17k", req(extra="X" * (17 * 1024) + ": b\r\n"), "refused"),
    ("tls-hello", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"
     + "\xff" * 64 + "\r\n\r\n", "refused"),
    ("lf-only-evil-host", "GET /api/health HTTP/1.1\nHost: evil.example:{p}"
     "\r\nAuthorization: Bearer {tok}\r\n\r\n", 421),
]


@pytest.mark.parametrize("rid,raw,expect", SYNTAX,
                         ids=[_row_id(r) for r in SYNTAX])
def test_per8_syntax(c, world, rid, raw, expect):
    r = raw_http(c.port, fill(c, world, raw), timeout=12)
    if expect == "refused":
        assert r is None or r.status in (400, 413), r
    else:
        assert r is not None and r.status == expect, r


# Every refusal, including those libevent's own parser makes (its HTML
# page is replaced before it leaves, broker/conns.c), carries the fixed
# JSON body and the usual headers.
JSON_ROWS = [r for r in SYNTAX if not hasattr(r, "values") and
             r[2] == "refused" and r[0] != "tls-hello"]


@pytest.mark.parametrize("raw", [pytest.param(r[1], id=r[0])
                                 for r in JSON_ROWS])
def test_per9_refusal_body_is_fixed_json(c, world, raw):
    r = raw_http(c.port, fill(c, world, raw), timeout=12)
    assert r is not None, "closed without an answer"
    code = "too-large" if r.status == 413 else "bad-request"
    assert r.status in (400, 413) and r.body == err(code), r
    assert r.header("Content-Type") == "application/json", r
    assert r.header("X-Content-Type-Options") == "nosniff", r
    assert r.header("Content-Security-Policy").startswith(
        "default-src 'none'"), r
    assert r.header("Connection") == "close", r


# The probe route checks its body strictly before anything else: a valid
# {"decision":"deny"} reaches the lookup (404 unknown-approval), anything
# else is 400 invalid-body.
POST = "POST /api/approvals/0123456789abcdef HTTP/1.1"
JSON = "Content-Type: application/json\r\n"
B = '{"decision":"deny"}'
CH = "13\r\n" + B + "\r\n0\r\n\r\n"
FRAMING = [
    ("cl-and-te", JSON + "Content-Length: 24\r\nTransfer-Encoding: "
     "chunked\r\n", CH, "refused"),
    ("te-and-cl", JSON + "Transfer-Encoding: chunked\r\nContent-Length: 24"
     "\r\n", CH, "refused"),
    ("dup-cl-diff", JSON + "Content-Length: 19\r\nContent-Length: 20\r\n",
     B + " ", "refused"),
    ("dup-cl-same", JSON + "Content-Length: 19\r\nContent-Length: 19\r\n",
     B, 404),
    ("cl-list", JSON + "Content-Length: 19, 19\r\n", B, "refused"),
    ("cl-negative", JSON + "Content-Length: -1\r\n", B, "refused"),
    ("cl-plus", JSON + "Content-Length: +19\r\n", B, "refused"),
    ("cl-hex", JSON + "Content-Length: 0x13\r\n", B, "refused"),
    ("cl-huge", JSON + "Content-Length: 99999999999999999999999\r\n", B,
     "refused"),
    ("cl-space", JSON + "Content-Length: 1 9\r\n", B, "refused"),
    ("cl-short", JSON + "Content-Length: 5\r\n", B, "refused"),
    ("te-identity-chunked", JSON + "Transfer-Encoding: identity, "
     "chunked\r\n", CH, "refused"),
    ("te-gzip", JSON + "Transfer-Encoding: gzip\r\n", B, "refused"),
    ("te-xchunked", JSON + "Transfer-Encoding: xchunked\r\n", B,
     "refused"),
    ("te-dup", JSON + "Transfer-Encoding: chunked\r\nTransfer-Encoding: "
     "chunked\r\n", CH, "refused"),
    ("chunk-bad-size", JSON + "Transfer-Encoding: chunked\r\n",
     "zz\r\n" + B + "\r\n0\r\n\r\n", "refused"),
    ("chunk-negative", JSON + "Transfer-Encoding: chunked\r\n",
     "-13\r\n" + B + "\r\n0\r\n\r\n", "refused"),
    ("chunk-overflow", JSON + "Transfer-Encoding: chunked\r\n",
     "ffffffffffffffffff\r\n" + B + "\r\n0\r\n\r\n", "refused"),
    ("chunk-extension", JSON + "Transfer-Encoding: chunked\r\n",
     "13;x=1\r\n" + B + "\r\n0\r\n\r\n", "refused"),
    ("chunk-short", JSON + "Transfer-Encoding: chunked\r\n",
     "5\r\n" + B + "\r\n0\r\n\r\n", "refused"),
]


@pytest.mark.parametrize("rid,extra,body,expect", FRAMING,
                         ids=[_row_id(r) for r in FRAMING])
def test_per8_framing(c, world, rid, extra, body, expect):
    """Ambiguous framing is refused (4xx or a cut connection), never
    served; the unambiguous shapes RFC 9112 allows are served."""
    r = raw_http(c.port, fill(c, world, req(POST, extra=extra, body=body)),
                 timeout=12)
    if expect == "refused":
        assert r is None or r.status in (400, 413), r
        if r is not None:
            assert r.header("Content-Type") == "application/json", r
            assert r.json()["error"] in (
                ("too-large",) if r.status == 413 else
                ("bad-request", "invalid-body")), r
    else:
        check(r, expect, "unknown-approval")


@pytest.mark.parametrize("body,status,code", [
    (CH, 404, "unknown-approval"),
    ("1\r\n{\r\n12\r\n" + B[1:] + "\r\n0\r\n\r\n", 404,
     "unknown-approval"),
    ("13\r\n" + B + "\r\n0\r\nX-Trailer: 1\r\n\r\n", 404,
     "unknown-approval"),
    ("3\r\n{x}\r\n0\r\n\r\n", 400, "invalid-body"),
    ("2\r\n{}\r\n0\r\n\r\n", 400, "invalid-body"),
], ids=["whole", "split", "trailer", "bad-json", "empty-object"])
def test_per8_chunked_body_parsed_like_any(c, world, body, status, code):
    t = req(POST, extra=JSON + "Transfer-Encoding: chunked\r\n", body=body)
    check(raw_http(c.port, fill(c, world, t)), status, code)


@pytest.mark.parametrize("ctype", [
    "text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
    "application/jsonx", "application/json-seq", "text/json", "", "json",
    "application/javascript"])
def test_per8_content_type_415(c, world, ctype):
    extra = f"Content-Type: {ctype}\r\nContent-Length: 2\r\n"
    t = req(POST, extra=extra, body="{}")
    check(raw_http(c.port, fill(c, world, t)), 415, "unsupported-media-type")


def test_per8_no_content_type_415(c, world):
    t = req(POST, extra="Content-Length: 2\r\n", body="{}")
    check(raw_http(c.port, fill(c, world, t)), 415, "unsupported-media-type")


# ---- PER-8: slow and many clients ----

def _trickle(port, stop_after, data, first=b""):
    """Send first at once, then data one byte every 0.4 s, then nothing;
    return seconds until the server closed the connection (None if it
    never did within stop_after)."""
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        try:
            s.sendall(first)
            for b in data:
                if time.monotonic() - t0 > stop_after:
                    return None
                s.sendall(bytes([b]))
                s.settimeout(0.4)
                try:
                    if s.recv(4096) == b"":
                        return time.monotonic() - t0
                except socket.timeout:
                    pass
            s.settimeout(max(0.1, stop_after - (time.monotonic() - t0)))
            while s.recv(4096):
                pass
        except socket.timeout:
            return None
        except OSError:
            pass
    return time.monotonic() - t0


@pytest.fixture(scope="module")
def slow(world):
    """Three slow clients at once (the broker's per-request bound is
    10 s), and the health of the broker while they hang on."""
    c = world.c
    res = {}
    head = (f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{c.port}\r\n"
            + "X-Pad: " + "p" * 200 + "\r\n").encode()
    jobs = {
        "trickle": lambda: _trickle(c.port, 16, head),
        "idle-head": lambda: _trickle(c.port, 16, b"G"),
        "idle-body": lambda: _trickle(c.port, 16, b"", (
            f"POST /api/approvals/0123456789abcdef HTTP/1.1\r\nHost: "
            f"127.0.0.1:{c.port}\r\nAuthorization: Bearer {c.token}\r\n"
            f"{JSON}Content-Length: 100\r\n\r\n{{").encode()),
    }
    ths = [threading.Thread(target=lambda k=k, f=f: res.__setitem__(k, f()))
           for k, f in jobs.items()]
    for t in ths:
        t.start()
    time.sleep(1.0)
    t0 = time.monotonic()
    r = c.request()
    res["served-meanwhile"] = (r.status, time.monotonic() - t0)
    for t in ths:
        t.join()
    return res


def test_per8_slowloris_trickle_dropped(c, slow):
    """evhttp's own timeout is re-armed by every byte; the broker's
    deadline for a whole request is not (broker/conns.c)."""
    assert slow["trickle"] is not None and slow["trickle"] <= 12.5, slow


@pytest.mark.parametrize("kind", ["idle-head", "idle-body"])
def test_per8_slow_client_dropped_within_timeout(c, slow, kind):
    assert slow[kind] is not None and slow[kind] <= 12.5, slow


def test_per8_others_served_during_slowloris(c, slow):
    status, took = slow["served-meanwhile"]
    assert status == 200 and took < 1.0, slow


def test_per8_many_idle_connections_bounded(c):
    """200 idle connections (the broker has 256 descriptors): it keeps
    answering, and when they go, nothing is left half-open."""
    socks = []
    try:
        for _ in range(200):
            try:
                socks.append(socket.create_connection(("127.0.0.1", c.port),
                                                      timeout=2))
            except OSError:
                break
        t0 = time.monotonic()
        r = c.request()
        assert r is not None and r.status == 200, r
        assert time.monotonic() - t0 < 2.0
    finally:
        for s in socks:
            s.close()
    r = c.request()
    assert r.status == 200


def test_per9_error_bodies_never_echo(c, world):
    n = world.nonce()
    probes = [req(f"GET /api/{n} HTTP/1.1"),
              req(f"PUT /api/{n} HTTP/1.1"),
              req(head=f"Host: {n}:{{p}}\r\n"),
              req(extra=f"Origin: http://{n}\r\n"),
              req(head="Host: 127.0.0.1:{p}\r\n",
                  extra=f"Authorization: Bearer {n}\r\n"),
              req(f"GET /ui/{n}.js HTTP/1.1"),
              req(f"GET /ui/login?code={n} HTTP/1.1")]
    for t in probes:
        r = raw_http(c.port, fill(c, world, t))
        assert r is not None and r.status >= 400, (t, r)
        assert n.encode() not in r.body and n not in repr(r.headers), r
