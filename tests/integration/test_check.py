# `cordon check --home DIR` over real files (SP-15, SP-5, SEC-3): every
# manifest problem reported as FILE:LINE:COL with exit 1, the
# agentic-os built-ins accepted, input never echoed.  Writes only tmp_path.
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import child_env, cordon_bin

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures", "agents")

HEAD = (
    "name: t\n"
    "transport: subprocess\n"
    "transportConfig:\n"
    "  bin: t\n"
    '  args: ["{prompt}"]\n'
)


# SP-1: the programs the manifests below name, on the PATH `cordon check`
# resolves them on (a missing one is a problem of its own).
FAKE_BINS = ("t", "x", "y", "claude", "hermes")


def fake_path(tmp_path):
    d = tmp_path / "fakebin"
    d.mkdir(exist_ok=True)
    for name in FAKE_BINS:
        f = d / name
        f.write_text("#!/bin/sh\nexit 0\n")
        f.chmod(0o755)
    return f"{d}:/usr/bin:/bin"


def check(home, *extra, path=None):
    env = child_env()
    if path or (home and Path(home).is_dir()):
        env["PATH"] = path or fake_path(Path(home))
    return subprocess.run(
        [cordon_bin(), "check", *extra] + (["--home", str(home)] if home else []),
        capture_output=True, text=True, timeout=30, env=env)


def home_with(tmp_path, files):
    agents = tmp_path / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (agents / name).write_text(text)
    return tmp_path


def expect_problem(tmp_path, text, line, col, msg, secret=None):
    home = home_with(tmp_path, {"bad.yaml": text})
    r = check(home)
    path = os.path.join(str(home.resolve()), "agents", "bad.yaml")
    want = f"{path}:{line}:{col}: "
    hits = [l for l in r.stdout.splitlines() if l.startswith(want) and msg in l]
    assert r.returncode == 1, r.stdout + r.stderr
    assert hits, f"no '{msg}' at {line}:{col} in:\n{r.stdout}"
    if secret is not None:
        assert secret not in r.stdout and secret not in r.stderr
    return r


# SP-15
def test_sp15_builtin_fixtures_accepted(tmp_path):
    agents = tmp_path / "agents"
    agents.mkdir()
    for f in ("claude-code.yaml", "hermes.yaml"):
        shutil.copy(os.path.join(FIXTURES, f), agents / f)
    r = check(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    hermes = os.path.join(str(tmp_path.resolve()), "agents", "hermes.yaml")
    assert r.stdout.splitlines() == [
        f"{hermes}:28:1: warning: postRunUsage: ignored "
        "(an agentic-os key cordon does not act on)",
        "ok 2 agents"]


# SP-15: a key agentic-os knows and cordon does not act on is a warning in
# both forms; a key unknown to both stays a problem.
def test_sp15_ignored_key_warns(tmp_path):
    home = home_with(tmp_path, {
        "a.yaml": HEAD + "capabilities: {chat: true}\n"
                  "postRunUsage: {parser: hermes-session-export}\n"})
    r = check(home, "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    a = os.path.join(str(home.resolve()), "agents", "a.yaml")
    assert doc["ok"] is True and doc["problems"] == []
    assert doc["warnings"] == [
        {"file": a, "line": 7, "column": 1, "key": "postRunUsage",
         "code": "ignored-key",
         "message": "ignored (an agentic-os key cordon does not act on)"}]
    (home / "agents" / "a.yaml").unlink()
    r = expect_problem(home, HEAD + "postRunUsage: {}\npostRunUsageX: {}\n",
                       7, 1, "postRunUsageX: unknown key; did you mean "
                       "postRunUsage?")
    assert "bad.yaml:6:1: warning: postRunUsage: ignored" in r.stdout


# SP-15
def test_sp15_eleven_actions(tmp_path):
    acts = "".join(f"  - {{id: a{i}, label: A, command: [x]}}\n" for i in range(11))
    expect_problem(tmp_path, HEAD + "actions:\n" + acts, 6, 1, "at most 10 actions")


# SP-15
def test_sp15_duplicate_action_ids(tmp_path):
    expect_problem(tmp_path, HEAD + "actions:\n"
                   "  - {id: dup, label: A, command: [x]}\n"
                   "  - {id: dup, label: B, command: [y]}\n",
                   8, 6, "duplicate action id")


# SP-15
def test_sp15_action_id_33_chars(tmp_path):
    expect_problem(tmp_path, HEAD + "actions:\n"
                   "  - id: " + "a" * 33 + "\n"
                   "    label: A\n"
                   "    command: [x]\n", 7, 5, "actions.id")


# SP-15
def test_sp15_action_timeout_60001(tmp_path):
    expect_problem(tmp_path, HEAD + "actions:\n"
                   "  - id: a\n"
                   "    label: A\n"
                   "    command: [x]\n"
                   "    timeoutMs: 60001\n", 10, 5, "actions.timeoutMs")


# SP-5
@pytest.mark.parametrize("key", ["LD_PRELOAD", "NODE_OPTIONS", "lower_case"])
def test_sp5_env_key_refused(tmp_path, key):
    expect_problem(tmp_path, HEAD + "  env:\n    " + key + ": x\n", 7, 5,
                   "environment name refused")


# SP-2, SP-5
def test_sp5_env_value_newline(tmp_path):
    expect_problem(tmp_path, HEAD + '  env:\n    GOOD: "line1\\nline2"\n', 7, 5,
                   "newline")


# SEC-3
def test_sec3_secret_in_args(tmp_path):
    key = "AKIAIOSFODNN7EXAMPLE"
    expect_problem(tmp_path,
                   "name: t\n"
                   "transport: subprocess\n"
                   "transportConfig:\n"
                   "  bin: t\n"
                   "  args:\n"
                   "    - --key\n"
                   "    - " + key + "\n"
                   '    - "{prompt}"\n', 7, 7, "secret in arguments", secret=key)


# SEC-3: a reference to a secrets mapping in args
def test_sec3_secret_reference_in_args(tmp_path):
    expect_problem(tmp_path,
                   "name: t\n"
                   "transport: subprocess\n"
                   "secrets:\n"
                   "  MY_API_KEY: provider.apiKey\n"
                   "transportConfig:\n"
                   "  bin: t\n"
                   '  args: ["--key=$MY_API_KEY", "{prompt}"]\n',
                   7, 10, "secret in arguments")


# SP-15
def test_sp15_transport_http(tmp_path):
    expect_problem(tmp_path, HEAD.replace("subprocess", "http"), 2, 1,
                   "transport: unsupported value")


# SP-15: unknown keys refused at the key, named when plain, values never
def test_sp15_unknown_key_named_value_not_echoed(tmp_path):
    r = expect_problem(tmp_path, HEAD + "nonceKey7731: NONCEVALUE7731\n", 6, 1,
                       "nonceKey7731: unknown key")
    assert "NONCEVALUE" not in r.stdout + r.stderr
    secret = "sk-ant-api03-" + "N0NCE" * 10
    r = expect_problem(tmp_path, HEAD + secret + ": 1\n", 6, 1,
                       "unknown key (name not shown", secret=secret)
    assert "N0NCE" not in r.stdout + r.stderr


# SP-15: which key, and the nearest allowed one
def test_sp15_unknown_key_did_you_mean(tmp_path):
    expect_problem(tmp_path, HEAD + "  arg: [x]\n", 6, 3,
                   "transportConfig.arg: unknown key; did you mean args?")


# SP-15: a range is named, the value is not
def test_sp15_probe_timeout_range_named(tmp_path):
    r = expect_problem(tmp_path, HEAD + "healthProbe:\n  timeoutMs: 12345\n",
                       7, 3, "healthProbe.timeoutMs: must be 1..10000")
    assert "12345" not in r.stdout


# SP-15: every problem of every file is printed, in file order
def test_sp15_every_problem_every_file(tmp_path):
    home = home_with(tmp_path, {
        "a.yaml": "name: a\ntransport: http\njunk: 1\n",
        "b.yaml": HEAD.replace("name: t", "name: b") + "  env:\n    LD_AUDIT: x\n",
        "ok.yaml": HEAD.replace("name: t", "name: ok"),
        ".hidden.yaml": "garbage: [",
        "notes.txt": "ignored",
    })
    r = check(home)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    a = [l for l in lines if "/agents/a.yaml:" in l]
    b = [l for l in lines if "/agents/b.yaml:" in l]
    assert len(a) >= 3  # transport, unknown key, missing transportConfig
    assert len(b) == 1
    assert not any("ok.yaml" in l or "hidden" in l for l in lines)
    nums = [tuple(int(x) for x in l.split(":")[1:3]) for l in a]
    assert nums == sorted(nums)


# SP-15: duplicate agent names across files
def test_sp15_duplicate_agent_name(tmp_path):
    home = home_with(tmp_path, {"one.yaml": HEAD, "two.yaml": HEAD})
    r = check(home)
    assert r.returncode == 1
    assert "two.yaml:1:1: name: duplicate agent name" in r.stdout


# SP-15: YAML syntax errors carry line:col too
def test_sp15_yaml_syntax_error(tmp_path):
    home = home_with(tmp_path, {"bad.yaml": "name: t\ntransport: [\n"})
    r = check(home)
    assert r.returncode == 1
    assert "/agents/bad.yaml:" in r.stdout
    line = [l for l in r.stdout.splitlines() if "bad.yaml" in l][0]
    assert int(line.split(":")[1]) >= 2


def test_check_no_agents_dir(tmp_path):
    r = check(tmp_path)
    assert r.returncode == 0
    assert r.stdout.strip() == "ok 0 agents"


def test_check_agents_not_a_dir(tmp_path):
    (tmp_path / "agents").write_text("not a directory")
    r = check(tmp_path)
    assert r.returncode == 1
    assert "agents: cannot be read" in r.stdout


def test_check_bad_usage(tmp_path):
    assert check(tmp_path, "--bogus").returncode == 2
    assert check(tmp_path, "extra").returncode == 2
    assert check(tmp_path / "missing").returncode == 2


# SBX-2: sandbox roots are resolved (symlinks followed) and refused when
# they are, contain or lie inside a protected path; the spawner disables
# such an agent at load and `cordon check` reports it the same way.
def roots_manifest(read=(), write=(), cwd=None):
    text = ("name: boxed\ntransport: subprocess\ntransportConfig:\n"
            "  bin: /bin/echo\n  args: [\"{prompt}\"]\n")
    if cwd is not None:
        text += f"  cwd: {cwd}\n"
    text += "sandbox:\n  network: none\n"
    if read:
        text += "  readRoots: [" + ", ".join(read) + "]\n"
    if write:
        text += "  writeRoots: [" + ", ".join(write) + "]\n"
    return text


def check_roots(tmp_path, text):
    """`cordon check` with HOME=tmp_path/op (made, with a ~/.ssh)."""
    op = tmp_path / "op"
    (op / ".ssh").mkdir(parents=True, exist_ok=True)
    (op / ".aws" / "sub").mkdir(parents=True, exist_ok=True)
    (op / "work").mkdir(exist_ok=True)
    home = home_with(tmp_path / "cordon", {"boxed.yaml": text})
    env = child_env()
    env["HOME"] = str(op)
    return subprocess.run([cordon_bin(), "check", "--home", str(home)],
                          capture_output=True, text=True, timeout=30,
                          env=env), op


def test_sbx2_roots_accepted(tmp_path):
    r, op = check_roots(tmp_path, roots_manifest(
        read=["~/work", "/usr/share"], write=[str(tmp_path / "op" / "work")]))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "ok 1 agents"


@pytest.mark.parametrize("kind,root,why", [
    ("read", "~/.ssh", "sandbox.readRoots[0]: is a protected path"),
    ("read", "~/.ssh/../.ssh", "must be an absolute or ~/ path"),
    ("write", "~/.aws/sub", "sandbox.writeRoots[0]: is inside a protected"),
    ("read", "{op}", "sandbox.readRoots[0]: is the home directory"),
    ("read", "/", "sandbox.readRoots[0]: is /"),
    ("write", "{tmp}", "sandbox.writeRoots[0]: contains a protected path"),
    ("read", "{tmp}/cordon/agents", "is inside a protected path"),
    ("write", "~/nowhere", "sandbox.writeRoots[0]: does not exist"),
])
def test_sbx2_protected_roots_refused(tmp_path, kind, root, why):
    root = root.format(op=tmp_path / "op", tmp=tmp_path)
    text = roots_manifest(read=[root] if kind == "read" else [],
                          write=[root] if kind == "write" else [])
    r, op = check_roots(tmp_path, text)
    assert r.returncode == 1, r.stdout + r.stderr
    assert why in r.stdout, r.stdout
    assert "would be disabled" in r.stdout or "must be" in r.stdout
    # The problem names the key and index, never the root itself.
    for line in r.stdout.splitlines():
        if why in line and len(root) > 1:
            assert root not in line.split("boxed.yaml:", 1)[1], line


def test_sbx2_symlinked_root_resolves_into_protected(tmp_path):
    """A root that is a symlink into ~/.ssh is refused (symlinks followed)."""
    (tmp_path / "op" / ".ssh").mkdir(parents=True)
    link = tmp_path / "innocent"
    link.symlink_to(tmp_path / "op" / ".ssh")
    r, op = check_roots(tmp_path, roots_manifest(write=[str(link)]))
    assert r.returncode == 1, r.stdout
    assert "sandbox.writeRoots[0]: is a protected path" in r.stdout
    assert "innocent" not in r.stdout.split("boxed.yaml", 1)[1]


@pytest.mark.parametrize("entry,target,kind,root", [
    # A start-up file kept in a dotfiles repo: writing the repo would
    # write the operator's shell start-up.
    (".bashrc", "dotfiles/bashrc", "write", "~/dotfiles"),
    # A protected dir kept there: reading the repo would read the keys.
    (".gnupg", "dotfiles/gnupg", "read", "~/dotfiles"),
    # A dir above a protected entry is the link; the entry is missing.
    (".config", "dotfiles/config", "write", "~/dotfiles/config"),
])
def test_sbx2_root_holding_where_protected_link_leads_refused(
        tmp_path, entry, target, kind, root):
    """SBX-2: a protected entry of the home that is, or lies beneath, a
    link is protected where it leads too: a root may not hold the target
    it may never hold as the entry.  The same root is fine without the
    link."""
    op = tmp_path / "op"
    (op / target).parent.mkdir(parents=True, exist_ok=True)
    if entry == ".bashrc":
        (op / target).write_text("# rc\n")
    else:
        (op / target).mkdir()
    text = roots_manifest(read=[root] if kind == "read" else [],
                          write=[root] if kind == "write" else [])
    r, _ = check_roots(tmp_path, text)
    assert r.returncode == 0, r.stdout + r.stderr
    (op / entry).symlink_to(op / target)
    r, _ = check_roots(tmp_path, text)
    assert r.returncode == 1, r.stdout + r.stderr
    key = "readRoots" if kind == "read" else "writeRoots"
    assert f"sandbox.{key}[0]: contains a protected path" in r.stdout or \
        f"sandbox.{key}[0]: is a protected path" in r.stdout, r.stdout
    assert "dotfiles" not in r.stdout.split("boxed.yaml", 1)[1]


def test_sbx2_default_write_root_is_cwd(tmp_path):
    """Without writeRoots the workdir is the write root: ~/.ssh refused."""
    r, op = check_roots(tmp_path, roots_manifest(cwd=str(tmp_path / "op" /
                                                          ".ssh")))
    assert r.returncode == 1, r.stdout
    assert "transportConfig.cwd[0]: is a protected path" in r.stdout


def test_sbx2_vault_and_audit_protected(tmp_path):
    """cordon's vault and audit dir (from cordon.yaml) are protected too."""
    vault = tmp_path / "myvault"
    (vault / "00_Inbox").mkdir(parents=True)
    r0, op = check_roots(tmp_path, roots_manifest(read=[str(vault)]))
    assert r0.returncode == 0, r0.stdout + r0.stderr
    (tmp_path / "cordon" / "cordon.yaml").write_text(
        f"vault:\n  root: {vault}\n")
    r, op = check_roots(tmp_path, roots_manifest(read=[str(vault /
                                                          "00_Inbox")]))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "sandbox.readRoots[0]: is inside a protected path" in r.stdout


# SP-1, SEC-2, SP-13, MI-2: what would refuse a run later is reported in
# the same pass as the schema's problems: a binary not on cordon's PATH
# (the PATH named), a secret that does not resolve (its manifest name,
# never a value), a mission whose vault-note output lacks vault-write.
def test_sp1_check_foresees_runtime_refusals(tmp_path):
    home = home_with(tmp_path, {
        "a.yaml": HEAD.replace("bin: t", "bin: nowhere-bin")
        + "secrets:\n  MY_API_KEY: prov.apiKey\n"
        + "actions:\n  - {id: s, label: S, command: [no-such-verb]}\n"
        + "junk: 1\n",
        "b.yaml": HEAD.replace("name: t", "name: b"),
    })
    sec = home / "secrets.yaml"
    sec.write_text("prov:\n  other: sk-ant-api03-" + "S3CR3T" * 8 + "\n")
    sec.chmod(0o600)
    (home / "missions").mkdir()
    (home / "missions" / "m.yaml").write_text(
        "id: m1\nlabel: M\nagent: b\nprompt: hi\n"
        "outputs:\n  - {type: vault-note, folder: 00_Inbox/cordon/missions/m1,"
        " filenameHint: x}\n"
        "permissions: []\n")
    (home / "missions" / "n.yaml").write_text(
        "id: m2\nlabel: M\nagent: nobody\nprompt: hi\nbogus: 1\n")
    env_path = fake_path(tmp_path)
    r = check(home, path=env_path)
    out = r.stdout
    assert r.returncode == 1, out + r.stderr
    a = os.path.join(str(home.resolve()), "agents", "a.yaml")
    assert (f"{a}:4:3: transportConfig.bin: not found on cordon's PATH "
            f"{env_path}; runs would fail (spawn-failed)") in out, out
    assert f"{a}:9:33: actions.command[0]: not found on cordon's PATH" in out
    assert (f"{a}:7:3: secrets.MY_API_KEY: not set in cordon's environment "
            "nor in secrets.yaml; runs would be refused (missing-secret)") \
        in out, out
    assert f"{a}:10:1: junk: unknown key" in out
    assert "nowhere-bin" not in out and "no-such-verb" not in out
    assert "S3CR3T" not in out + r.stderr
    m = os.path.join(str(home.resolve()), "missions")
    assert (f"{m}/m.yaml:7:1: permissions: a vault-note output needs "
            "vault-write; runs would be refused (permission-denied)") in out
    # A file with problems of its own still has its agent checked.
    assert f"{m}/n.yaml:5:1: bogus: unknown key" in out
    assert f"{m}/n.yaml:3:1: agent: no valid agent of that name" in out
    # Each file's problems in line order.
    nums = [tuple(int(x) for x in l[len(a) + 1:].split(":")[:2])
            for l in out.splitlines() if l.startswith(a + ":")]
    assert nums == sorted(nums) and len(nums) == 4


# SP-1: the manifest's own env PATH is the one a run gets
def test_sp1_check_bin_on_manifest_path(tmp_path):
    bindir = tmp_path / "own"
    bindir.mkdir()
    prog = bindir / "mine"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    text = HEAD.replace("bin: t", "bin: mine")
    home = home_with(tmp_path, {"a.yaml": text + f"  env:\n    PATH: {bindir}\n"})
    r = check(home)
    assert r.returncode == 0, r.stdout
    (home / "agents" / "a.yaml").write_text(
        text + "  env:\n    PATH: /nonexistent\n")
    r = check(home)
    assert r.returncode == 1
    assert ("transportConfig.bin: not found on the manifest's env PATH "
            "/nonexistent") in r.stdout


# SP-15: --json is one document with every problem
def test_sp15_check_json_one_document(tmp_path):
    home = home_with(tmp_path, {
        "a.yaml": HEAD + "  arg: [x]\nhealthProbe:\n  timeoutMs: 0\n",
        "ok.yaml": HEAD.replace("name: t", "name: ok"),
    })
    r = check(home, "--json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)  # one document, nothing else on stdout
    assert doc["ok"] is False and doc["agents"] == 1 and doc["missions"] == 0
    a = os.path.join(str(home.resolve()), "agents", "a.yaml")
    assert doc["problems"] == [
        {"file": a, "line": 6, "column": 3, "key": "transportConfig.arg",
         "code": "unknown-key", "message": "unknown key; did you mean args?"},
        {"file": a, "line": 8, "column": 3, "key": "healthProbe.timeoutMs",
         "code": "out-of-range", "message": "must be 1..10000"},
    ]
    (home / "agents" / "a.yaml").unlink()
    r = check(home, "--json")
    assert r.returncode == 0, r.stdout
    # SBX-9: and where each agent's private home is.
    assert json.loads(r.stdout) == {
        "ok": True, "agents": 1, "missions": 0, "problems": [],
        "warnings": [], "homes": {"ok": str(home.resolve() / "state" /
                                            "homes" / "ok")}}


def test_sbx4_check_warns_argv_and_landlock(tmp_path):
    """SBX-4: `cordon check` warns that isolation landlock weakens nothing
    and notes how many agents expose their prompt by argv; neither is a
    problem."""
    home = tmp_path / "home"
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "a.yaml").write_text(
        "name: a\ntransport: subprocess\ntransportConfig:\n"
        "  bin: /bin/true\n  args: [\"{prompt}\"]\n"
        "sandbox:\n  isolation: landlock\n")
    (home / "agents" / "b.yaml").write_text(
        "name: b\ntransport: subprocess\ntransportConfig:\n"
        "  bin: /bin/true\n  args: []\npromptVia: stdin\n")
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([cordon_bin(), "check", "--home", str(home)],
                       capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok 2 agents" in r.stdout
    assert "a.yaml:7:3: warning: sandbox.isolation: landlock weakens" \
        in r.stdout
    assert "b.yaml" not in r.stdout
    assert "note: 1 agent take the prompt by argv" in r.stderr
    assert "/proc/PID/cmdline" in r.stderr
    r = subprocess.run([cordon_bin(), "check", "--json", "--home",
                        str(home)], capture_output=True, text=True,
                       timeout=30, env=env)
    doc = json.loads(r.stdout)
    assert doc["ok"] is True and doc["problems"] == []
    assert [w["code"] for w in doc["warnings"]] == ["isolation-landlock"]


# SBX-8: a real CLI's transport with a bin cordon does not read as that
# CLI is warned about (no hook config would be written or bound); its
# command, its npm package's script, or node and that script are not.
@pytest.mark.parametrize("bin_,args,warn", [
    ("gemini", '["--prompt={prompt}"]', None),
    ("/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js",
     '["--prompt={prompt}"]', None),
    ("node", '["/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js",'
     ' "--prompt={prompt}"]', None),
    ("x", '["--prompt={prompt}"]', "no CLI it knows"),
    ("codex", '["--prompt={prompt}"]', "codex"),
])
def test_sbx8_check_warns_unrecognised_cli(tmp_path, bin_, args, warn):
    home = home_with(tmp_path, {"g.yaml": (
        "name: g\ntransport: geminiJson\ntransportConfig:\n"
        f"  bin: {bin_}\n  args: {args}\n")})
    r = check(home, "--json", path="/nonexistent")
    doc = json.loads(r.stdout)
    got = [w for w in doc["warnings"] if w["code"] == "cli-unknown"]
    if warn is None:
        assert got == [], got
        return
    assert len(got) == 1 and got[0]["line"] == 4, got
    assert got[0]["message"] == (
        f"transport geminiJson runs gemini, but cordon reads this bin as "
        f"{warn}: runs get none of gemini's read-only hook config nor its "
        "hook checks; name its command (gemini) or its npm package's "
        "script, as docs/agents.md says"), got


# SBX-8: each CLI runs a call whose gate hook timed out, so a hook wired
# with a timeout under `cordon gate`'s bound (askTimeoutSec + 10 s) plus
# 10 s is a problem (the spawner disables the agent, in the same words),
# and a Claude Code gate hook without onFailure: block a warning.
CLAUDE_HOOK = ("'--settings={\"hooks\":{\"PreToolUse\":[{\"hooks\":[{"
               "\"type\":\"command\",\"command\":\"{cordon} gate\","
               "\"timeout\":%d%s}]}]}}'")


def gate_hook_problems(tmp_path, args):
    """`cordon check --json` of a Claude Code agent with args (YAML
    flow items): the result, its document and its hook-timeout
    problems."""
    home = home_with(tmp_path, {"c.yaml": (
        "name: c\ntransport: streamJson\ntransportConfig:\n"
        f"  bin: claude\n  args: [\"-p\", {args}, \"{{prompt}}\"]\n")})
    r = check(home, "--json")
    doc = json.loads(r.stdout)
    return r, doc, [p for p in doc["problems"] if p["code"] == "hook-timeout"]


@pytest.mark.parametrize("timeout,extra,problem,warn", [
    (120, ',"onFailure":"block"', False, False),
    (120, "", False, True),
    (79, ',"onFailure":"block"', True, False),
])
def test_sbx8_check_gate_hook_timeout(tmp_path, timeout, extra, problem,
                                      warn):
    r, doc, got = gate_hook_problems(tmp_path, CLAUDE_HOOK % (timeout, extra))
    assert len(got) == int(problem), doc
    if problem:
        assert r.returncode == 1
        assert f"{got[0]['key']}: {got[0]['message']}" == (
            "hooks: the gate hook's timeout (79 s) is under askTimeoutSec"
            " + 20 s (80 s): the CLI would run a call the gate had not "
            "yet answered; the agent would be disabled"), got
    warned = [w for w in doc["warnings"] if w["code"] == "hook-fails-open"]
    assert len(warned) == int(warn), doc


@pytest.mark.parametrize("matcher,hook_if,warn", [
    (None, None, False), ("*", None, False), ("", None, False),
    (".*", None, False), ("Bash", None, True), ("Bash|Write", None, True),
    ("*", "Bash(git *)", True),
])
def test_sbx8_check_gate_hook_partial(tmp_path, matcher, hook_if, warn):
    """A gate hook that only some tool calls go through (a matcher, or
    Claude Code's "if"): a warning, since the operator may mean it."""
    group = {"hooks": [{"type": "command", "command": "{cordon} gate",
                        "timeout": 120, "onFailure": "block"}]}
    if matcher is not None:
        group["matcher"] = matcher
    if hook_if is not None:
        group["hooks"][0]["if"] = hook_if
    settings = json.dumps({"hooks": {"PreToolUse": [group]}})
    r, doc, got = gate_hook_problems(
        tmp_path, "'--settings=%s'" % settings.replace("'", "''"))
    assert got == [], doc
    warned = [w for w in doc["warnings"] if w["code"] == "hook-partial"]
    assert len(warned) == int(warn), doc
    if warn:
        assert f"{warned[0]['key']}: {warned[0]['message']}" == (
            "transportConfig.args: the gate hook's matcher (or \"if\") "
            "lets some tool calls past it; the gate checks only the "
            "others, and the sandbox alone holds the rest"), warned


@pytest.mark.parametrize("args,why", [
    # Claude Code reads the file; the check cannot.
    ('"--settings", "/etc/cordon/claude.json"',
     "the args give the CLI settings that cordon cannot read"),
    # Not waited for: the call runs at once, whatever the timeout.
    (CLAUDE_HOOK % (120, ',"onFailure":"block","async":true'),
     "the CLI would not wait for the gate hook"),
])
def test_sbx8_check_gate_hook_unread_or_async(tmp_path, args, why):
    """Settings that could wire a gate hook of any timeout, or a gate
    hook the CLI does not wait for: a problem, never a pass."""
    r, doc, got = gate_hook_problems(tmp_path, args)
    assert r.returncode == 1 and len(got) == 1, doc
    assert f"{got[0]['key']}: {got[0]['message']}".startswith(
        f"hooks: {why}"), got
