# Connectors in cordon.yaml (SEC-4): `connectors.<id>` {type, baseUrl,
# authRef} parsed strictly by the one cordon.yaml loader, so both
# `cordon check` and `cordon run` refuse a bad one with FILE:LINE:COL.  A
# key that looks like a secret, at any depth, is refused by name and its
# value is printed nowhere (stdout, stderr, audit, any file cordon
# writes); authRef is a reference (env:NAME | none), never resolved into
# the config.  No connector runtime exists yet: nothing here makes a
# request.  Writes only tmp_path.
import os
import re
import secrets
import subprocess

import pytest

from agents_util import audit_lines
from conftest import child_env, cordon_bin, run_once  # noqa: F401

VALID = (
    "connectors:\n"
    "  github:\n"
    "    type: http\n"
    "    baseUrl: https://api.github.com\n"
    "    authRef: env:GITHUB_TOKEN\n"
)


def leak():
    return "sk-LEAK" + secrets.token_hex(8)


def home_with_config(tmp_path, text):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "cordon.yaml").write_text(text)
    return home


def check(home):
    return subprocess.run([cordon_bin(), "check", "--home", str(home)],
                          capture_output=True, text=True, timeout=30,
                          env=child_env())


def config_path(home):
    return os.path.join(str(home.resolve()), "cordon.yaml")


def problems(r, home):
    """The FILE:LINE:COL lines about cordon.yaml, as (line, col, message)."""
    pat = re.compile(re.escape(config_path(home)) + r":(\d+):(\d+): (.*)$")
    out = []
    for ln in (r.stdout + r.stderr).splitlines():
        m = pat.match(ln)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), m.group(3)))
    return out


def files_holding(root, needle):
    """Every file below root whose bytes contain needle."""
    hits = []
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            try:
                with open(p, "rb") as f:
                    if needle.encode() in f.read():
                        hits.append(p)
            except OSError:
                pass
    return hits


def test_sec4_settings_apikey_refused_value_nowhere(tmp_path):
    value = leak()
    home = home_with_config(tmp_path, VALID + (
        "    settings:\n"
        f"      apiKey: {value}\n"))
    r = check(home)
    assert r.returncode == 1, r.stdout + r.stderr
    assert problems(r, home) == [
        (7, 7, "connectors.github: settings.apiKey: secret-looking key; "
               "use authRef")], r.stdout + r.stderr
    assert value not in r.stdout + r.stderr
    assert "sk-LEAK" not in r.stdout + r.stderr
    # cordon run refuses before anything starts: no daemon, no audit.
    res = run_once(["run", "--home", str(home), "--port", "0",
                    "--allow-root"])
    assert not res.started
    assert res.returncode == 2, res
    out = res.stdout.decode(errors="replace") + \
        res.stderr.decode(errors="replace")
    assert "connectors.github: settings.apiKey: secret-looking key" in out
    assert value not in out and "sk-LEAK" not in out
    assert audit_lines(str(home)) == []
    # The only file holding the value is the operator's own cordon.yaml.
    assert files_holding(str(tmp_path), value) == [config_path(home)]


@pytest.mark.parametrize("key", [
    "apiKey", "api_key", "api-key", "APIKEY", "token", "authToken",
    "password", "secret", "clientSecret", "bearer", "privateKey",
    "accessKey", "access_key", "sessionKey", "credentials", "Authorization",
])
def test_sec4_secret_looking_keys_refused(tmp_path, key):
    value = leak()
    home = home_with_config(tmp_path, VALID + f"    {key}: {value}\n")
    r = check(home)
    assert r.returncode == 1
    assert problems(r, home) == [
        (6, 5, f"connectors.github: {key}: secret-looking key; use authRef")
    ], r.stdout + r.stderr
    assert value not in r.stdout + r.stderr


def test_sec4_secret_keys_at_any_depth(tmp_path):
    v1, v2, v3 = leak(), leak(), leak()
    home = home_with_config(tmp_path, VALID + (
        "    options:\n"
        "      retry:\n"
        f"        Bearer: {v1}\n"
        "      headers:\n"
        f"        - {{name: x, privateKey: {v2}}}\n"
        f"        - {{name: y, client_secret: {v3}}}\n"))
    r = check(home)
    assert r.returncode == 1
    msgs = [m for _, _, m in problems(r, home)]
    assert msgs == [
        "connectors.github: options.retry.Bearer: secret-looking key; "
        "use authRef",
        "connectors.github: options.headers.privateKey: secret-looking key; "
        "use authRef",
        "connectors.github: options.headers.client_secret: secret-looking "
        "key; use authRef",
    ], r.stdout + r.stderr
    for v in (v1, v2, v3):
        assert v not in r.stdout + r.stderr


def conn(body):
    return "connectors:\n  c1:\n" + body


# (config, line, col, message, a string that must not be printed)
URL_MSG = ("connectors.c1: baseUrl must be an https:// URL without userinfo, "
           "spaces or control characters")
REF_MSG = ("connectors.c1: authRef must be env:NAME ([A-Z_][A-Z0-9_]{0,63}) "
           "or none")
TYPE_URL = "    type: http\n    baseUrl: https://a.example\n"

# (config, line, col, message, a string that must not be printed); the
# position is the key's, as for manifests (a missing field: the
# connector's own key).
REFUSALS = [
    ("connectors: [a]\n", 1, 1, "connectors: expected a mapping", None),
    ("connectors:\n  Bad_Id:\n    type: http\n", 2, 3,
     "connectors: a connector id must match ^[a-z0-9][a-z0-9-]{0,63}$",
     "Bad_Id"),
    ("connectors:\n  c1: http\n", 2, 3, "connectors.c1: expected a mapping",
     None),
    (conn(TYPE_URL + "    authRef: none\n    config: {x: 1}\n"), 6, 5,
     "connectors.c1: unknown key", "config"),
    (conn("    baseUrl: https://a.example\n    authRef: none\n"), 2, 3,
     "connectors.c1: type is required", None),
    (conn("    type: ftp\n    baseUrl: https://a.example\n"
          "    authRef: none\n"), 3, 5,
     "connectors.c1: type must be one of: http", "ftp"),
    (conn("    type: http\n    authRef: none\n"), 2, 3,
     "connectors.c1: baseUrl is required", None),
    (conn("    type: http\n    baseUrl: http://a.example\n"
          "    authRef: none\n"), 4, 5, URL_MSG, "a.example"),
    (conn("    type: http\n    baseUrl: https://me:pw-LEAK@a.example/\n"
          "    authRef: none\n"), 4, 5, URL_MSG, "pw-LEAK"),
    (conn("    type: http\n    baseUrl: \"https://a.example/\\x01\"\n"
          "    authRef: none\n"), 4, 5, URL_MSG, None),
    (conn("    type: http\n    baseUrl: \"https://a.example/a b\"\n"
          "    authRef: none\n"), 4, 5, URL_MSG, None),
    (conn("    type: http\n    baseUrl: https://\n    authRef: none\n"), 4,
     5, URL_MSG, None),
    (conn("    type: http\n    baseUrl: https://:443/\n    authRef: none\n"),
     4, 5, URL_MSG, None),
    (conn(TYPE_URL), 2, 3, "connectors.c1: authRef is required", None),
    (conn(TYPE_URL + "    authRef: sk-LEAKxyz123\n"), 5, 5, REF_MSG,
     "sk-LEAKxyz123"),
    (conn(TYPE_URL + "    authRef: env:lower\n"), 5, 5, REF_MSG, "lower"),
    (conn(TYPE_URL + "    authRef: \"env:\"\n"), 5, 5, REF_MSG, None),
    (conn(TYPE_URL + "    authRef: env:" + "A" * 65 + "\n"), 5, 5, REF_MSG,
     None),
    (conn(TYPE_URL + "    authRef: env:A-B\n"), 5, 5, REF_MSG, None),
    (conn(TYPE_URL + "    authRef: {env: X}\n"), 5, 5, REF_MSG, None),
]


@pytest.mark.parametrize("text,line,col,msg,hidden", REFUSALS,
                         ids=[f"r{i}" for i in range(len(REFUSALS))])
def test_sec4_every_refusal(tmp_path, text, line, col, msg, hidden):
    home = home_with_config(tmp_path, text)
    r = check(home)
    assert r.returncode == 1, r.stdout + r.stderr
    got = problems(r, home)
    assert (line, col, msg) in got, got
    if hidden is not None:
        assert hidden not in r.stdout + r.stderr


def test_sec4_too_many_connectors(tmp_path):
    body = "".join(
        f"  c{i}: {{type: http, baseUrl: https://a.example, authRef: none}}\n"
        for i in range(33))
    home = home_with_config(tmp_path, "connectors:\n" + body)
    r = check(home)
    assert r.returncode == 1
    assert [m for _, _, m in problems(r, home)] == [
        "connectors: at most 32 connectors"]


def test_sec4_valid_connectors_accepted(tmp_path):
    home = home_with_config(tmp_path, VALID + (
        "  local-api:\n"
        "    type: http\n"
        "    baseUrl: \"https://[::1]:8443/v1/?q=1\"\n"
        "    authRef: none\n"
        "  x:\n"
        "    type: http\n"
        "    baseUrl: https://example.org\n"
        "    authRef: env:_X9\n"))
    r = check(home)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "ok 0 agents"


def test_sec4_authref_never_resolved(tmp_path, monkeypatch, cordon_factory):
    """A valid connector starts cordon; the variable it names is read by
    nobody: its value reaches no audit record and no file."""
    value = leak()
    home = home_with_config(tmp_path, VALID)
    monkeypatch.setenv("GITHUB_TOKEN", value)
    c = cordon_factory(home=home)
    c.health()
    c.stop()
    assert c.returncode == 0
    assert audit_lines(str(home)), "cordon ran and audited its boot"
    assert files_holding(str(tmp_path), value) == []
