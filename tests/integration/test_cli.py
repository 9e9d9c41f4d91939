# The `cordon` command line as people expect it: -h/--help/help and
# `cordon SUB --help` print help on stdout and exit 0; an unknown command
# or option names the offending word (cleaned, never a value) with the
# nearest known one and exits 2; --version names the commit and the build
# type.  Runs the real binary; writes nothing.
import re
import subprocess

import pytest

from conftest import child_env, cordon_bin, help_commands

COMMANDS = ["run", "check", "status", "login", "job", "worktree", "token",
            "audit", "agent", "mcp", "gate", "version", "help"]


def cordon(*args):
    return subprocess.run([cordon_bin(), *args], capture_output=True,
                          timeout=30, env=child_env(), stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args", [["-h"], ["--help"], ["help"]])
def test_help_exit_0_on_stdout(args):
    r = cordon(*args)
    assert r.returncode == 0 and r.stderr == b""
    out = r.stdout.decode()
    assert out.startswith("usage: cordon COMMAND")
    assert help_commands(out) == COMMANDS


def test_no_arguments_is_usage_exit_2():
    r = cordon()
    assert r.returncode == 2 and r.stdout == b""
    assert help_commands(r.stderr.decode()) == COMMANDS


@pytest.mark.parametrize("sub", [c for c in COMMANDS if c != "gate"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_sub_help_exit_0(sub, flag):
    r = cordon(sub, flag)
    assert r.returncode == 0, r.stderr
    assert r.stderr == b""
    assert r.stdout.decode().startswith(f"usage: cordon {sub}")


def test_help_names_a_command():
    r = cordon("help", "check")
    assert r.returncode == 0
    assert r.stdout.decode().startswith("usage: cordon check")
    assert "--json" in r.stdout.decode()


# SBX-8: the gate's exit status is a verdict: its help is shown, and
# refuses, so a hook written as `cordon gate --help` never allows.
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_sbx8_gate_help_refuses(flag):
    r = cordon("gate", flag)
    assert r.returncode == 2 and r.stderr == b""
    assert r.stdout.decode().startswith("usage: cordon gate")
    r = cordon("help", "gate")
    assert r.returncode == 0
    assert r.stdout.decode().startswith("usage: cordon gate")


# SBX-6: the gate's exit 0 is an allow: only `cordon gate --help` alone
# is help, never a word of a command to judge.
@pytest.mark.parametrize("args", [["--", "ls", "-h"], ["ls", "-h"],
                                  ["--help", "x"], ["-h", "--"]])
def test_sbx6_gate_words_are_no_help(args):
    r = cordon("gate", *args)
    assert r.returncode != 0 and not r.stdout.startswith(b"usage:")


@pytest.mark.parametrize("word,near", [
    ("stauts", "status"), ("chek", "check"), ("rnu", "run"),
    ("verison", "version"), ("--verison", "--version"), ("--hlep", "--help"),
])
def test_unknown_command_did_you_mean(word, near):
    r = cordon(word)
    assert r.returncode == 2 and r.stdout == b""
    kind = "option" if word.startswith("-") else "command"
    assert r.stderr.decode() == (
        f"cordon: unknown {kind} {word}; did you mean {near}?\n")


def test_unknown_command_far_from_any():
    r = cordon("zzzzzzzz")
    assert r.returncode == 2
    assert r.stderr.decode() == ("cordon: unknown command zzzzzzzz "
                                 "('cordon --help' lists the commands)\n")


def test_unknown_word_cleaned_and_cut():
    r = cordon("\x1b[31mst\u202eatus\r\n" + "A." * 100)
    err = r.stderr.decode()
    assert r.returncode == 2
    assert err.count("\n") == 1 and "\x1b" not in err and "\r" not in err
    assert "\u202e" not in err
    assert "A." * 20 not in err and "..." in err


def test_unknown_secretish_word_not_shown():
    tok = "sk-ant-api03-" + "Q" * 48
    r = cordon(tok)
    assert r.returncode == 2
    assert "Q" * 10 not in r.stderr.decode()
    assert "(not shown)" in r.stderr.decode()


@pytest.mark.parametrize("args,msg", [
    (["check", "--jsn"],
     "cordon check: unknown option --jsn; did you mean --json?"),
    (["status", "--homme=S3CRETVALUE"],
     "cordon status: unknown option --homme; did you mean --home?"),
    (["audit", "tail", "--knd", "x"],
     "cordon audit tail: unknown option --knd; did you mean --kind?"),
    (["audit", "verfy"], "cordon audit: unknown command verfy; did you "
     "mean verify?"),
    (["run", "--port"], "cordon run: option --port needs a value"),
    (["check", "--json=1"], "cordon check: option --json takes no value"),
    (["check", "extra"], "cordon check: unexpected argument extra"),
    (["audit", "tail", "-x"], "cordon audit tail: unknown option -x"),
])
def test_unknown_option_named(args, msg):
    r = cordon(*args)
    assert r.returncode == 2, r
    err = r.stderr.decode()
    assert err.splitlines()[0].startswith(msg), err
    assert "S3CRET" not in err
    assert r.stdout == b""


@pytest.mark.parametrize("args", [["--version"], ["version"]])
def test_version_names_commit_and_build_type(args):
    r = cordon(*args)
    assert r.returncode == 0 and r.stderr == b""
    assert re.fullmatch(
        r"cordon \d+\.\d+\.\d+ \(commit (?:[0-9a-f]{12}|unknown), "
        r"(?:plain|debug|debugoptimized|release|minsize|custom) build\)\n",
        r.stdout.decode()), r.stdout
