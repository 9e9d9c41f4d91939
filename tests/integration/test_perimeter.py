# PER-2..6, PER-8, PER-9: the broker's HTTP perimeter, spoken to over raw
# sockets so that duplicate headers, odd Hosts and non-origin-form targets
# reach it unchanged.  Every rejection is checked for status, exact body
# and for having changed nothing (login code unspent, no daemon restarted).
import os
import re
import secrets
import select
import signal
import socket
import time

import pytest

from agents_util import audit_records, wait_audit
from conftest import (HTTP_S, RESTART_S, raw_http, read_all, session_headers,
                      session_of)


def err(code):
    return b'{"ok":false,"error":"%s"}' % code.encode()


def assert_error(r, status, code):
    assert r is not None, "connection closed without a response"
    assert (r.status, r.body) == (status, err(code)), r
    assert r.header("Content-Type") == "application/json", r


def assert_login_refused(r):
    """PER-5: a used, expired or wrong login link: 401 and a page that
    names the command printing a fresh URL, under the page CSP; no
    cookie, nothing of the request echoed."""
    assert r is not None, "connection closed without a response"
    assert r.status == 401, r
    assert r.header("Content-Type") == "text/html; charset=utf-8", r
    assert r.header("Set-Cookie") is None, r
    csp = r.header("Content-Security-Policy")
    assert csp and "default-src 'none'" in csp, r
    assert b"<code>cordon login</code>" in r.body, r.body[:200]
    assert b"code=" not in r.body, r.body


@pytest.fixture
def c(cordon):
    """A cordon whose state at start is remembered; at the end of every
    test: nothing changed, nothing leaked, common headers everywhere."""
    cordon.baseline = cordon.daemon_pids()
    cordon.responses.clear()
    yield cordon
    for r in cordon.responses:
        blob = repr(r.headers).encode() + r.body
        assert cordon.token.encode() not in blob, f"token leaked: {r}"
        assert r.header("Cache-Control") == "no-store", r
        assert r.header("X-Content-Type-Options") == "nosniff", r


def assert_untouched(c, code_unspent=True):
    """No side effect: same daemons, no restarts, login code unspent."""
    h = c.health()
    assert h["status"] == "ok"
    assert {d["name"]: d["pid"] for d in h["daemons"]} == c.baseline
    assert all(d["restarts"] == 0 for d in h["daemons"]), h["daemons"]
    if code_unspent:
        r = c.login()
        assert r.status == 303, f"login code no longer works: {r}"
        assert r.header("Set-Cookie").startswith("cordon_session=")


def broker_row(h):
    """The broker's row of /api/health, wherever it stands."""
    return next(d for d in h["daemons"] if d["name"] == "broker")


def other_port(p):
    return p + 1 if p < 65535 else p - 1


# ---- PER-2: Host ----

def test_per2_wrong_host_421(c):
    r = c.request(host=f"evil.example:{c.port}")
    assert_error(r, 421, "misdirected-request")
    assert_untouched(c)


def test_per2_wrong_port_421(c):
    for name in ("127.0.0.1", "localhost", "[::1]"):
        r = c.request(host=f"{name}:{other_port(c.port)}")
        assert_error(r, 421, "misdirected-request")
    assert_untouched(c)


def test_per2_duplicate_host_421(c):
    good = f"127.0.0.1:{c.port}"
    r = c.request(host=good, headers=[("Host", good)])
    assert_error(r, 421, "misdirected-request")
    r = c.request(host=good, headers=[("Host", f"evil.example:{c.port}")])
    assert_error(r, 421, "misdirected-request")
    r = c.request(host=f"evil.example:{c.port}", headers=[("Host", good)])
    assert_error(r, 421, "misdirected-request")
    assert_untouched(c)


def test_per2_host_userinfo_421(c):
    for host in (f"user@127.0.0.1:{c.port}", f"user:pw@localhost:{c.port}",
                 f"127.0.0.1:{c.port}@evil.example"):
        assert_error(c.request(host=host), 421, "misdirected-request")
    assert_untouched(c)


def test_per2_host_trailing_dot_421(c):
    assert_error(c.request(host=f"localhost.:{c.port}"), 421,
                 "misdirected-request")
    assert_untouched(c)


def test_per2_missing_host_421(c):
    assert_error(c.request(host=None), 421, "misdirected-request")
    r = raw_http(c.port, (f"GET /api/health HTTP/1.0\r\nAuthorization: "
                          f"Bearer {c.token}\r\n\r\n").encode())
    assert_error(r, 421, "misdirected-request")
    assert_untouched(c)


@pytest.mark.parametrize("host", [
    "127.0.0.1", "localhost", "[::1]", "127.0.0.1:", "127.0.0.1:0{port}",
    "127.0.0.1:+{port}", "127.0.0.2:{port}", "0.0.0.0:{port}",
    "127.1:{port}", "2130706433:{port}", "[::ffff:127.0.0.1]:{port}",
    "::1:{port}", "localhost:{port}:{port}", "localhost.localdomain:{port}",
    "evil.localhost:{port}", "localhost%00:{port}", "",
])
def test_per2_host_variants_421(c, host):
    r = c.request(host=host.format(port=c.port))
    assert_error(r, 421, "misdirected-request")
    assert_untouched(c)


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}",
                                  "[::1]:{port}", "LocalHost:{port}"])
def test_per2_loopback_hosts_accepted(c, host):
    r = c.request(host=host.format(port=c.port))
    assert r.status == 200, r
    assert r.json()["ok"] is True


def test_per2_checked_before_auth_and_on_ui(c):
    # no token and a bad Host: the Host answer comes first
    r = c.request(host=f"evil.example:{c.port}", auth=False)
    assert_error(r, 421, "misdirected-request")
    for target in ("/ui/", f"/ui/login?code={c.code}", "/"):
        r = c.request(target=target, host=f"evil.example:{c.port}",
                      auth=False)
        assert_error(r, 421, "misdirected-request")
    assert_untouched(c)  # the rebinding page could not spend the code


# ---- PER-2 / PER-8: request target must be origin-form ----

def test_per2_absolute_form_target_400(c):
    r = c.request(target=f"http://127.0.0.1:{c.port}/api/health")
    assert_error(r, 400, "bad-request")
    r = c.request(target=f"http://127.0.0.1:{c.port}/ui/login?code={c.code}",
                  auth=False)
    assert_error(r, 400, "bad-request")
    assert_untouched(c)


@pytest.mark.parametrize("target", ["*", "//evil.example/api/health",
                                    "api/health", "/api/health#x",
                                    "/api\\health"])
def test_per2_target_not_origin_form_400(c, target):
    assert_error(c.request(target=target), 400, "bad-request")
    assert_untouched(c)


# ---- PER-3: Origin ----

def test_per3_origin_null_403(c):
    r = c.request(headers=[("Origin", "null")])
    assert_error(r, 403, "forbidden-origin")
    assert_untouched(c)


def test_per3_origin_evil_403(c):
    r = c.request(headers=[("Origin", "http://evil.example")])
    assert_error(r, 403, "forbidden-origin")
    r = c.request(target=f"/ui/login?code={c.code}", auth=False,
                  headers=[("Origin", "http://evil.example")])
    assert_error(r, 403, "forbidden-origin")
    assert_untouched(c)


@pytest.mark.parametrize("origin", [
    "http://127.0.0.1:{other}", "https://127.0.0.1:{port}",
    "http://127.0.0.1:{port}/", "http://127.0.0.1", "http://localhost",
    "http://evil.example:{port}", "http://127.0.0.1.evil.example:{port}",
    "http://user@127.0.0.1:{port}", "", "*",
])
def test_per3_origin_not_allowed_403(c, origin):
    o = origin.format(port=c.port, other=other_port(c.port))
    assert_error(c.request(headers=[("Origin", o)]), 403, "forbidden-origin")
    assert_untouched(c)


def test_per3_duplicate_origin_403(c):
    good = f"http://127.0.0.1:{c.port}"
    r = c.request(headers=[("Origin", good), ("Origin", good)])
    assert_error(r, 403, "forbidden-origin")
    assert_untouched(c)


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "[::1]"])
def test_per3_allowed_origins_ok(c, name):
    r = c.request(headers=[("Origin", f"http://{name}:{c.port}")])
    assert r.status == 200, r


def test_per3_configured_origin_allowed(cordon_factory, tmp_path):
    home = tmp_path / "cfg"
    home.mkdir()
    (home / "cordon.yaml").write_text(
        "listen:\n  origins: [\"http://dash.example:8443\"]\n")
    c = cordon_factory(home=home)
    r = c.request(headers=[("Origin", "http://dash.example:8443")])
    assert r.status == 200, r
    r = c.request(headers=[("Origin", "http://dash.example:8444")])
    assert_error(r, 403, "forbidden-origin")


# ---- PER-4: Sec-Fetch-Site ----

def test_per4_cross_site_uppercase_403(c):
    r = c.request(headers=[("Sec-Fetch-Site", "CROSS-SITE")])
    assert_error(r, 403, "forbidden-site")
    assert_untouched(c)


def test_per4_same_site_ui_403(c):
    r = c.request(target="/ui/", auth=False,
                  headers=[("Sec-Fetch-Site", "same-site")])
    assert_error(r, 403, "forbidden-site")
    assert_untouched(c)


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST"])
@pytest.mark.parametrize("target", ["/api/health", "/api/nope", "/ui/",
                                    "/ui/app.js", "/", "/nope"])
@pytest.mark.parametrize("value", ["same-site", "cross-site", "Cross-Site"])
def test_per4_every_method_and_path_403(c, method, target, value):
    r = c.request(method=method, target=target,
                  headers=[("Sec-Fetch-Site", value),
                           ("Content-Type", "application/json")])
    assert r.status == 403, r
    if method != "HEAD":
        assert r.body == err("forbidden-site"), r
    assert_untouched(c)


def test_per4_login_cross_site_does_not_spend_code(c):
    for v in ("cross-site", "same-site"):
        r = c.request(target=f"/ui/login?code={c.code}", auth=False,
                      headers=[("Sec-Fetch-Site", v)])
        assert_error(r, 403, "forbidden-site")
        assert r.header("Set-Cookie") is None
    assert_untouched(c)


@pytest.mark.parametrize("value", ["same-origin", "none", "Same-Origin"])
def test_per4_same_origin_and_none_allowed(c, value):
    r = c.request(headers=[("Sec-Fetch-Site", value)])
    assert r.status == 200, r


# ---- PER-5: authentication ----

def test_per5_no_token_401(c):
    assert_error(c.request(auth=False), 401, "unauthorized")
    assert_untouched(c)


def test_per5_no_token_no_keepalive(c):
    """A client that proved nothing gets its refusal and its connection
    closed: it cannot hold keep-alive connections with cheap 404s or
    401s until the broker has no descriptor left.  An authenticated
    client keeps its connection across refusals."""
    for target, auth in (("/x", False), ("/api/health", False),
                         ("/api/nope", True)):
        head = (f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{c.port}\r\n"
                + (f"Authorization: Bearer {c.token}\r\n" if auth else "")
                + "\r\n").encode()
        with socket.create_connection(("127.0.0.1", c.port),
                                      timeout=HTTP_S) as s:
            s.sendall(head)
            s.settimeout(HTTP_S)
            data = b""
            while b"\r\n\r\n" not in data:
                data += s.recv(4096)
            head_lines = data.split(b"\r\n\r\n")[0].lower()
            assert data.startswith(b"HTTP/1.1 4"), data[:80]
            if auth:
                assert b"connection: close" not in head_lines, data
            else:
                assert b"connection: close" in head_lines, data
                deadline = time.monotonic() + HTTP_S
                while time.monotonic() < deadline:
                    chunk = s.recv(4096)
                    if not chunk:
                        break  # closed by the broker
                else:
                    raise AssertionError("connection left open")


def test_per5_wrong_token_same_length_401(c):
    wrong = c.token[:-1] + ("0" if c.token[-1] != "0" else "1")
    assert len(wrong) == len(c.token)
    r = c.request(auth=False, headers=[("Authorization", f"Bearer {wrong}")])
    assert_error(r, 401, "unauthorized")
    wrong = secrets.token_hex(32)
    r = c.request(auth=False, headers=[("Authorization", f"Bearer {wrong}")])
    assert_error(r, 401, "unauthorized")
    assert_untouched(c)


def test_per5_bearer_two_spaces_401(c):
    r = c.request(auth=False,
                  headers=[("Authorization", f"Bearer  {c.token}")])
    assert_error(r, 401, "unauthorized")
    assert_untouched(c)


@pytest.mark.parametrize("value", [
    "Bearer", "Bearer ", "{tok}", "Bearer {tok}0", "Bearer {short}",
    "Bearer {tok} x", "Basic {tok}", "Token {tok}", "Bearer\t{tok}",
    "Bearer {upper}",
])
def test_per5_malformed_authorization_401(c, value):
    v = value.format(tok=c.token, short=c.token[:-1], upper=c.token.upper())
    if v == f"Bearer {c.token}":
        pytest.skip("token has no letters to change the case of")
    r = c.request(auth=False, headers=[("Authorization", v)])
    assert_error(r, 401, "unauthorized")
    assert_untouched(c)


def test_per5_duplicate_authorization_401(c):
    r = c.request(headers=[("Authorization", f"Bearer {c.token}")])
    assert_error(r, 401, "unauthorized")
    assert_untouched(c)


def test_per5_auth_before_routing(c):
    # no route enumeration without a token
    for target in ("/api/nope", "/api/", "/api/health/x"):
        assert_error(c.request(target=target, auth=False), 401,
                     "unauthorized")
    assert_untouched(c)


def test_per5_login_wrong_code_401(c):
    wrong = c.code[:-1] + ("0" if c.code[-1] != "0" else "1")
    for code in (wrong, "", "0" * 32, c.code + "0", c.code[:-1],
                 c.code.upper() if c.code != c.code.upper() else "x"):
        r = c.login(code)
        assert_login_refused(r)
    r = c.request(target="/ui/login", auth=False)
    assert_login_refused(r)
    assert_untouched(c)  # wrong guesses do not burn the real code


def test_per5_login_code_is_one_time(c):
    r = c.login()
    assert r.status == 303, r
    # PER-5: the page key rides in the fragment, which no browser sends
    # to a server or puts in a Referer.
    assert re.fullmatch(r"/ui/#page=[0-9a-f]{64}", r.header("Location")), r
    r2 = c.login()
    assert_login_refused(r2)
    assert_untouched(c, code_unspent=False)


def session_cookie(r):
    sc = r.header("Set-Cookie")
    assert sc is not None, r
    m = re.fullmatch(r"cordon_session=([0-9a-f]{64})((?:; [^;]+)*)", sc)
    assert m, sc
    attrs = [a.strip().lower() for a in m.group(2).split(";") if a.strip()]
    assert "httponly" in attrs, sc
    assert "samesite=strict" in attrs, sc
    assert "path=/" in attrs, sc
    # It reaches every port of 127.0.0.1: a copy must not last for ever
    # (the broker also refuses it after 12 h).
    assert "max-age=43200" in attrs, sc
    return m.group(1)


def test_per5_cookie_from_login_authenticates(c):
    r = c.login()
    sid = session_cookie(r)
    _, key = session_of(r)
    assert sid not in (c.token, c.code)
    assert key not in (sid, c.token, c.code)
    assert key not in r.header("Set-Cookie")
    r = c.request(auth=False, headers=session_headers(sid, key))
    assert r.status == 200, r
    assert r.json()["ok"] is True
    r = c.request(auth=False, headers=[
        ("Cookie", f"theme=dark; cordon_session={sid}; x=1"),
        ("X-Cordon-Page", key)])
    assert r.status == 200, r


# PER-5: what a cookie-authenticated request may reach, with its status
# once the page key rides along (an unknown approval: refused, unchanged).
COOKIE_TARGETS = [
    ("GET", "/api/health", b"", 200),
    ("GET", "/api/agents", b"", 200),
    ("POST", "/api/approvals/0123456789abcdef", b'{"decision":"deny"}', 404),
]


def cookie_request(c, method, target, body, headers):
    extra = [("Content-Type", "application/json"),
             ("Referer", f"http://127.0.0.1:{c.port}/ui/")] \
        if method == "POST" else []
    return c.request(method, target, auth=False, headers=headers + extra,
                     body=body)


def test_per5_cookie_alone_is_no_session(c):
    """The cookie reaches every port of 127.0.0.1; replayed alone, even
    with every header a browser would send, it authenticates nothing.
    The page key, which only the dashboard's origin holds, does."""
    sid, key = c.session()
    cookie = [("Cookie", f"cordon_session={sid}")]
    for method, target, body, status in COOKIE_TARGETS:
        r = cookie_request(c, method, target, body, cookie)
        assert_error(r, 401, "unauthorized")
        r = cookie_request(c, method, target, body,
                           [("X-Cordon-Page", key)])
        assert_error(r, 401, "unauthorized")
        r = cookie_request(c, method, target, body,
                           session_headers(sid, key))
        assert r.status == status, (target, r)
    assert_untouched(c, code_unspent=False)


def test_per5_wrong_page_key_401(c):
    """Any page key but the session's own: 401 with the fixed body, no
    echo; the key of another live session is no key for this one."""
    sid, key = c.session()
    code = c.request("POST", "/api/login-code", headers=[
        ("Content-Type", "application/json")], body=b"{}").json()["code"]
    sid2, key2 = c.session(code)
    assert key2 != key
    flip = key[:-1] + ("0" if key[-1] != "0" else "1")
    wrong = [[key2], [flip], [key[:-1]], [key + "0"], [key.upper()],
             [""], [key + " x"], [sid], [c.token], [key, key],
             [flip, key], [key, flip]]
    for vals in wrong:
        for method, target, body, _ in COOKIE_TARGETS:
            hdrs = [("Cookie", f"cordon_session={sid}")] + \
                [("X-Cordon-Page", v) for v in vals]
            r = cookie_request(c, method, target, body, hdrs)
            assert_error(r, 401, "unauthorized")
    # Each session with its own key: both live.
    for s, k in ((sid, key), (sid2, key2)):
        assert c.request(auth=False, headers=session_headers(s, k)) \
            .status == 200
    assert_untouched(c, code_unspent=False)


def test_per5_forged_cookie_401(c):
    sid = session_cookie(c.login())
    forged = [secrets.token_hex(32), sid[:-1] + ("0" if sid[-1] != "0"
                                                  else "1"),
              sid[:-1], sid + "0", c.token, c.code, ""]
    for f in forged:
        r = c.request(auth=False, headers=[("Cookie", f"cordon_session={f}")])
        assert_error(r, 401, "unauthorized")
    # two session cookies, one real: which is meant? neither
    r = c.request(auth=False, headers=[
        ("Cookie", f"cordon_session={forged[0]}; cordon_session={sid}")])
    assert_error(r, 401, "unauthorized")
    # other cookie name carrying the real value
    r = c.request(auth=False, headers=[("Cookie", f"session={sid}")])
    assert_error(r, 401, "unauthorized")
    assert_untouched(c, code_unspent=False)


def test_per5_wrong_token_not_rescued_by_cookie(c):
    sid = session_cookie(c.login())
    r = c.request(auth=False, headers=[
        ("Authorization", "Bearer " + secrets.token_hex(32)),
        ("Cookie", f"cordon_session={sid}")])
    assert_error(r, 401, "unauthorized")


def _login_then_kill_broker(c, broker):
    """Spend the login code, and SIGKILL the broker the moment its answer
    arrives: pinned to the broker's CPU with a real-time priority, this
    process preempts the broker before it does anything else."""
    cpu = min(os.sched_getaffinity(0))
    saved = os.sched_getaffinity(0)
    rt = False
    try:
        os.sched_setaffinity(broker, {cpu})
        os.sched_setaffinity(0, {cpu})
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        rt = True
    except OSError:
        pass  # no real-time scheduling here: the race is only likelier
    try:
        with socket.create_connection(("127.0.0.1", c.port), HTTP_S) as s:
            s.sendall((f"GET /ui/login?code={c.code} HTTP/1.1\r\n"
                       f"Host: 127.0.0.1:{c.port}\r\n"
                       f"Connection: close\r\n\r\n").encode())
            first = s.recv(16)
            os.kill(broker, signal.SIGKILL)
    finally:
        if rt:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        os.sched_setaffinity(0, saved)
    assert first.startswith(b"HTTP/1.1 303 "), first
    return rt


def test_per5_spent_code_stays_spent_after_broker_restart(cordon_factory):
    # PER-5 one-time login: the code spent by a login that was answered
    # must stay spent when the broker crashes right afterwards.
    reused = []
    tries = 3
    i = 0
    while i < tries:
        c = cordon_factory()
        old = c.daemon_pids()["broker"]
        if not _login_then_kill_broker(c, old):
            tries = 12
        c.health_when(lambda h: broker_row(h)["restarts"] == 1 and
                      broker_row(h)["pid"] != old and
                      h["status"] == "ok", RESTART_S)
        r = c.login()
        if r.status != 401:
            reused.append((i, r.status, r.header("Set-Cookie")))
        else:
            assert_login_refused(r)
        assert c.stop() == 0, c.stderr()
        i += 1
    assert not reused, (f"spent login code accepted again after a broker "
                        f"restart in {len(reused)}/{tries} tries: {reused}")


def test_per5_session_survives_broker_restart(cordon):
    """cordond keeps the sessions the broker issued and hands them to the
    broker it restarts: a browser stays signed in across a crash, and a
    session made by the new broker survives the next one too."""
    sid, key = cordon.session()
    for n in (1, 2):
        old = cordon.daemon_pids()["broker"]
        os.kill(old, signal.SIGKILL)
        cordon.health_when(lambda h: broker_row(h)["restarts"] == n and
                           broker_row(h)["pid"] not in (None, old) and
                           h["status"] == "ok", RESTART_S)
        # The page key, derived and not stored, holds across the restart;
        # the cookie alone still is no session.
        r = cordon.request(auth=False, headers=session_headers(sid, key))
        assert r.status == 200, (n, r)
        r = cordon.request(auth=False,
                           headers=[("Cookie", f"cordon_session={sid}")])
        assert_error(r, 401, "unauthorized")
        if n == 1:
            code = cordon.request("POST", "/api/login-code", headers=[
                ("Content-Type", "application/json")], body=b"{}")
            assert code.status == 200, code
            sid, key = cordon.session(code.json()["code"])
    forged = secrets.token_hex(32)
    r = cordon.request(auth=False, headers=session_headers(forged, key))
    assert_error(r, 401, "unauthorized")


def test_per10_favicon_answered_and_not_recorded(cordon):
    """/favicon.ico: 204 without a body, not an http.request record on
    every page load; a refusal after it is recorded as usual."""
    for _ in range(3):
        r = cordon.request(target="/favicon.ico", auth=False)
        assert r.status == 204 and r.body == b"", r
    assert cordon.request(target="/nope", auth=False).status == 404
    wait_audit(cordon.home, lambda a: a["kind"] == "http.request" and
               a["status"] == 404)
    assert not [a for a in audit_records(cordon.home, "http.request")
                if a["route"] == "/favicon.ico"]


def test_per10_refusal_flood_records_bounded(cordon):
    """PER-10: a flood of refused requests cannot fill the audit disk:
    at most 100 http.request records at once, then 20 a second; every
    request is still answered."""
    import time
    t0 = time.monotonic()
    n = 400
    for _ in range(n):
        assert cordon.request(target="/nope", auth=False).status == 404
    took = time.monotonic() - t0
    def count():
        return [a for a in audit_records(cordon.home, "http.request")
                if a["status"] == 404]
    got, deadline = count(), time.monotonic() + 10
    while time.monotonic() < deadline:  # until auditd has written all
        time.sleep(0.3)
        now = count()
        if len(now) == len(got):
            break
        got = now
    assert 1 <= len(got) <= 100 + 20 * (took + 1) + 1, (len(got), took)
    assert len(got) < n, (len(got), took)


def test_per5_token_never_in_responses(c):
    sid, key = c.session()
    probes = [
        dict(), dict(auth=False), dict(target="/api/nope"),
        dict(method="PUT"), dict(target="/ui/", auth=False),
        dict(target="/ui/app.js", auth=False),
        dict(target="/ui/style.css", auth=False),
        dict(target="/", auth=False), dict(host="evil.example:1"),
        dict(headers=[("Origin", "null")]),
        dict(headers=[("Sec-Fetch-Site", "cross-site")]),
        dict(auth=False, headers=[("Cookie", f"cordon_session={sid}")]),
        dict(auth=False, headers=session_headers(sid, key)),
        dict(method="POST", headers=[("Content-Type", "application/json")],
             body=b"{}"),
        dict(target="/api/health?token=" + c.token),
        dict(target=f"http://127.0.0.1:{c.port}/api/health"),
    ]
    for p in probes:
        r = c.request(**p)
        assert r is not None, p
        blob = repr(r.headers).encode() + r.body
        assert c.token.encode() not in blob, (p, r)
        assert c.code.encode() not in blob, (p, r)
    # the fixture's teardown re-checks every response of this test


# ---- PER-6: dashboard headers ----

def csp_nonce(r):
    csp = r.header("Content-Security-Policy")
    assert csp, r
    d = {}
    for part in csp.split(";"):
        words = part.split()
        if words:
            d[words[0]] = words[1:]
    assert d.get("default-src") == ["'none'"], csp
    assert d.get("frame-ancestors") == ["'none'"], csp
    assert d.get("base-uri") == ["'none'"], csp
    assert "'self'" in d.get("script-src", []), csp
    assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp, csp
    nonces = [w for w in d["script-src"] if w.startswith("'nonce-")]
    assert len(nonces) == 1, csp
    m = re.fullmatch(r"'nonce-([A-Za-z0-9+/=_-]{16,})'", nonces[0])
    assert m, csp
    return m.group(1)


def test_per6_csp_nonce_per_response(c):
    seen = set()
    for _ in range(3):
        r = c.request(target="/ui/", auth=False)
        assert r.status == 200, r
        assert r.header("Content-Type").startswith("text/html"), r
        assert r.header("Referrer-Policy") == "same-origin", r
        assert r.header("Cross-Origin-Opener-Policy") == "same-origin", r
        assert r.header("Cross-Origin-Resource-Policy") == "same-origin", r
        n = csp_nonce(r)
        assert n not in seen, "nonce repeated"
        seen.add(n)
        body = r.body.decode()
        assert "{{NONCE}}" not in body
        for used in re.findall(r'nonce="([^"]*)"', body):
            assert used == n, (used, n)
        # no third-party script, style or font
        assert not re.search(r'(src|href)="(https?:)?//', body), body


def test_per6_login_redirect_and_root(c):
    r = c.request(target="/", auth=False)
    assert r.status == 303 and r.header("Location") == "/ui/", r
    assert r.header("Set-Cookie") is None
    assert_untouched(c)


# ---- PER-8: methods, routes, bounds ----

@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS",
                                    "TRACE", "PROPFIND", "get"])
@pytest.mark.parametrize("auth", [True, False])
def test_per8_other_methods_405(c, method, auth):
    for target in ("/api/health", "/ui/", "/"):
        r = c.request(method=method, target=target, auth=auth)
        assert_error(r, 405, "method-not-allowed")
    assert_untouched(c)


def test_per8_connect_405_framed(c):
    # A 405 must be a complete response: framed by Content-Length (or
    # the connection closed right after it), not left open until the
    # per-request timeout.
    raw = (f"CONNECT 127.0.0.1:{c.port} HTTP/1.1\r\nHost: 127.0.0.1:"
           f"{c.port}\r\nConnection: close\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", c.port), HTTP_S) as s:
        s.sendall(raw)
        buf = b""
        while not buf.endswith(b"}"):
            s.settimeout(HTTP_S)
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
        head, _, body = buf.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 405 "), buf
        assert body == err("method-not-allowed"), buf
        assert re.search(rb"\r\ncontent-length: *%d\r\n" % len(body),
                         head + b"\r\n", re.I), \
            f"405 to CONNECT has no Content-Length: {head!r}"
    assert_untouched(c)


def test_per8_known_route_wrong_method_405(c):
    r = c.request(method="POST", headers=[("Content-Type",
                                           "application/json")], body=b"{}")
    assert_error(r, 405, "method-not-allowed")
    r = c.request(method="POST", target="/ui/", auth=False)
    assert_error(r, 405, "method-not-allowed")
    assert_untouched(c)


@pytest.mark.parametrize("target", ["/api/nope", "/api/", "/api/health/",
                                    "/api/Health", "/api/health/x"])
def test_api_unknown_route_404(c, target):
    assert_error(c.request(target=target), 404, "not-found")
    assert_untouched(c)


def test_api_unknown_ui_asset_404(c):
    r = c.request(target="/ui/nope.js", auth=False)
    assert_error(r, 404, "not-found")
    r = c.request(target="/nope", auth=False)
    assert_error(r, 404, "not-found")


def _wait_readable(sock, bound):
    return bool(select.select([sock], [], [], bound)[0])


def test_per8_body_over_1mib_refused(c):
    n = 1024 * 1024 + 1
    head = (f"POST /api/health HTTP/1.1\r\nHost: 127.0.0.1:{c.port}\r\n"
            f"Authorization: Bearer {c.token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {n}\r\n"
            f"Connection: close\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", c.port), HTTP_S) as s:
        s.sendall(head)
        # the length alone is enough to refuse; send the body only if the
        # server has not answered yet
        if not _wait_readable(s, 1.0):
            try:
                s.sendall(b"a" * n)
            except OSError:
                pass
        data = read_all(s, HTTP_S)
    m = re.match(rb"HTTP/1\.[01] (\d{3}) ", data)
    assert m, f"no status line: {data[:200]!r}"
    assert int(m.group(1)) >= 400, data[:300]
    assert b"aaaa" not in data
    assert c.token.encode() not in data
    assert_untouched(c)


def test_per8_body_of_1mib_reaches_router(c):
    # exactly at the bound: not refused for size; the route answers 405
    r = c.request(method="POST", body=b" " * (1024 * 1024),
                  headers=[("Content-Type", "application/json")])
    assert_error(r, 405, "method-not-allowed")
    assert_untouched(c)


def test_per8_chunked_body_over_1mib_refused(c):
    head = (f"POST /api/health HTTP/1.1\r\nHost: 127.0.0.1:{c.port}\r\n"
            f"Authorization: Bearer {c.token}\r\n"
            f"Content-Type: application/json\r\n"
            f"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    chunk = b"10000\r\n" + b"a" * 0x10000 + b"\r\n"
    status = None
    with socket.create_connection(("127.0.0.1", c.port), HTTP_S) as s:
        s.sendall(head.encode())
        data = b""
        try:
            for _ in range(40):  # 2.5 MiB at most
                if _wait_readable(s, 0):
                    break
                s.sendall(chunk)
            else:
                s.sendall(b"0\r\n\r\n")
            s.settimeout(HTTP_S)
            while True:
                got = s.recv(65536)
                if not got:
                    break
                data += got
        except (BrokenPipeError, ConnectionResetError):
            pass
        m = re.match(rb"HTTP/1\.[01] (\d{3}) ", data)
        status = int(m.group(1)) if m else None
    # refused: an error status, or the connection cut before any answer
    assert status is None or status >= 400, data[:300]
    assert status != 200
    assert b"aaaa" not in data
    assert_untouched(c)


def test_per8_headers_over_16k_refused(c):
    for headers in ([("X-Big", "a" * (17 * 1024))],
                    [(f"X-H{i}", "a" * 100) for i in range(200)]):
        lines = ["GET /api/health HTTP/1.1", f"Host: 127.0.0.1:{c.port}",
                 f"Authorization: Bearer {c.token}"]
        lines += [f"{k}: {v}" for k, v in headers]
        raw = ("\r\n".join(lines) + "\r\nConnection: close\r\n\r\n").encode()
        r = raw_http(c.port, raw)
        assert r is None or r.status >= 400, r
        if r is not None:
            assert b"aaaa" not in r.body
            assert c.token.encode() not in r.body
    assert_untouched(c)


def test_per8_uri_over_8k_refused(c):
    r = c.request(target="/api/health?" + "a" * (8 * 1024))
    assert_error(r, 400, "bad-request")
    r = c.request(target=f"/ui/login?code={c.code}&x=" + "a" * 8200,
                  auth=False)
    assert_error(r, 400, "bad-request")
    assert_untouched(c)


# ---- PER-9: error bodies never echo input ----

def test_per9_errors_do_not_echo(c):
    marker = "zq" + secrets.token_hex(8)
    cases = [
        dict(host=f"{marker}.example:{c.port}"),
        dict(headers=[("Origin", f"http://{marker}.example")]),
        dict(headers=[("Sec-Fetch-Site", "cross-site")], target=f"/{marker}"),
        dict(auth=False, headers=[("Authorization", f"Bearer {marker}")]),
        dict(target=f"/api/{marker}"),
        dict(method="PUT", target=f"/api/{marker}"),
        dict(target=f"/ui/login?code={marker}", auth=False),
        dict(target=f"/ui/{marker}.js", auth=False),
        dict(target=f"http://{marker}/api/health"),
    ]
    for p in cases:
        r = c.request(**p)
        assert r is not None and r.status >= 400, (p, r)
        assert marker.encode() not in r.body, (p, r)
        assert marker not in repr(r.headers), (p, r)
        if p.get("target", "").startswith("/ui/login"):
            # A used or unknown login code gets the sign-in page, not JSON.
            assert r.status == 401 and b"cordon login" in r.body, r
            continue
        body = r.json()
        assert list(body) == ["ok", "error"] and body["ok"] is False, r
        assert re.fullmatch(r"[a-z][a-z-]*", body["error"]), r
    assert_untouched(c)


def test_api1_head_health_is_get_without_body(c):
    # HEAD is GET without the body: same status and headers, no body.
    r = c.request(method="HEAD", target="/api/health")
    assert r.status == 200, r
    assert r.body == b"", r
    assert_untouched(c)


# ---- PER-8: header names and framing the broker refuses itself ----
#
# libevent 2.1 accepts these shapes (a space in or before a header name,
# two different Content-Lengths, "+19", a Transfer-Encoding it does not
# know); policy/http.c http_headers_ok refuses them before routing, with
# the fixed body and the connection closed, so that what libevent read
# as a body or a tail is never served as a request of its own.

APPROVAL = "POST /api/approvals/0123456789abcdef HTTP/1.1"
DENY = b'{"decision":"deny"}'
DENY_CHUNKED = b"13\r\n" + DENY + b"\r\n0\r\n\r\n"


def _head(c, line, extra):
    lines = [line, f"Host: 127.0.0.1:{c.port}",
             f"Authorization: Bearer {c.token}"] + extra
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _smuggled(c):
    """A complete request of its own: answered only if the connection
    is read on after the refusal."""
    return _head(c, "GET /api/health HTTP/1.1", [])


def _exchange(c, raw, bound=3.0):
    """Send raw on one connection without Connection: close and read
    until the server closes it or bound seconds pass; returns (every
    byte read, whether the server closed)."""
    deadline = time.monotonic() + bound
    data = b""
    with socket.create_connection(("127.0.0.1", c.port), HTTP_S) as s:
        s.sendall(raw)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return data, False
            s.settimeout(left)
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                return data, False
            except ConnectionResetError:
                return data, True
            if not chunk:
                return data, True
            data += chunk


def _responses(data):
    """Split HTTP/1.1 responses framed by Content-Length."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, f"truncated response: {data!r}"
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        hdrs = [tuple(x.strip() for x in ln.split(":", 1))
                for ln in lines[1:]]
        n = int(next(v for k, v in hdrs if k.lower() == "content-length"))
        out.append((status, hdrs, rest[:n]))
        data = rest[n:]
    return out


def _hdr(hdrs, name):
    vals = [v for k, v in hdrs if k.lower() == name.lower()]
    assert len(vals) <= 1, (name, vals)
    return vals[0] if vals else None


CT = "Content-Type: application/json"
REFUSED_HEADERS = [
    ("space-before-colon", [CT, "X-A : b", "Content-Length: 19"], DENY),
    ("space-in-name", [CT, "X A: b", "Content-Length: 19"], DENY),
    ("space-before-colon-cl", [CT, "Content-Length : 19"], DENY),
    ("name-at", [CT, "X@A: b", "Content-Length: 19"], DENY),
    ("name-slash", [CT, "X/A: b", "Content-Length: 19"], DENY),
    ("name-paren", [CT, "(X): b", "Content-Length: 19"], DENY),
    ("name-quote", [CT, 'X"A: b', "Content-Length: 19"], DENY),
    ("name-high-byte", [CT, "X-\xe9: b", "Content-Length: 19"], DENY),
    ("cl-dup-diff", [CT, "Content-Length: 19", "Content-Length: 20"], DENY),
    ("cl-dup-diff-case", [CT, "Content-Length: 19", "content-length: 18"],
     DENY),
    ("cl-plus", [CT, "Content-Length: +19"], DENY),
    ("cl-leading-zero", [CT, "Content-Length: 0019"], DENY),
    ("cl-dup-zero-pad", [CT, "Content-Length: 19", "Content-Length: 019"],
     DENY),
    ("te-identity-chunked", [CT, "Transfer-Encoding: identity, chunked"],
     DENY_CHUNKED),
    ("te-gzip-chunked", [CT, "Transfer-Encoding: gzip, chunked"],
     DENY_CHUNKED),
    ("te-param", [CT, "Transfer-Encoding: chunked;x=1"], DENY_CHUNKED),
    ("cl-tab", [CT, "Content-Length:\t19"], DENY),
    # "chunked, chunked" and two Transfer-Encoding headers never reach
    # the broker: libevent answers them itself (tests/attack test_per.py
    # te-dup); the unit tests cover the rule.
]


@pytest.mark.parametrize("extra,body", [r[1:] for r in REFUSED_HEADERS],
                         ids=[r[0] for r in REFUSED_HEADERS])
def test_per8_bad_header_refused_and_closed(c, extra, body):
    raw = _head(c, APPROVAL, extra) + body + _smuggled(c)
    data, closed = _exchange(c, raw)
    rs = _responses(data)
    assert len(rs) == 1, f"the smuggled tail was answered: {data!r}"
    status, hdrs, rbody = rs[0]
    assert (status, rbody) == (400, err("bad-request")), data
    assert _hdr(hdrs, "Content-Type") == "application/json", data
    assert _hdr(hdrs, "Connection") == "close", data
    assert _hdr(hdrs, "X-Content-Type-Options") == "nosniff", data
    assert _hdr(hdrs, "Cache-Control") == "no-store", data
    assert closed, "the connection stayed open after the refusal"
    assert_untouched(c)


def test_per8_bad_header_refused_before_auth_and_on_ui(c):
    # Framing is checked before anything the request says is believed.
    for line, auth in ((APPROVAL, False), ("GET /ui/ HTTP/1.1", False),
                       ("GET /api/nope HTTP/1.1", True)):
        lines = [line, f"Host: 127.0.0.1:{c.port}", "X-A : b"]
        if auth:
            lines.append(f"Authorization: Bearer {c.token}")
        raw = ("\r\n".join(lines) + "\r\nConnection: close\r\n\r\n").encode()
        assert_error(raw_http(c.port, raw), 400, "bad-request")
    assert_untouched(c)


def test_per8_valid_headers_pass_and_keep_alive(c):
    """Shapes the check must let through, three requests on one
    connection: identical Content-Lengths and a name of every tchar
    punctuation, then "Chunked" in another case, then a plain GET."""
    first = _head(c, APPROVAL, [CT, "X-Ok!#$%&'*+-.^_`|~1: v",
                                "Content-Length: 19",
                                "content-length: 19"]) + DENY
    second = _head(c, APPROVAL, [CT, "Transfer-Encoding: Chunked"]) \
        + DENY_CHUNKED
    third = _head(c, "GET /api/health HTTP/1.1", ["Connection: close"])
    data, closed = _exchange(c, first + second + third, bound=HTTP_S)
    rs = _responses(data)
    assert [(s, b) for s, _, b in rs[:2]] == \
        [(404, err("unknown-approval"))] * 2, data
    assert len(rs) == 3 and rs[2][0] == 200, data
    assert [_hdr(h, "Connection") for _, h, _ in rs[:2]] == [None, None]
    assert closed
    assert_untouched(c)
