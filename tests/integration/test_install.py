# What `meson install` puts on a system besides the programs: the manual
# pages (cordon(1), cordond(8) and one per daemon in section 8) and bash
# completion for `cordon`, installed into a scratch DESTDIR; the pages
# are checked by groff's warnings (when groff is here), the completion
# against `cordon --help` and `cordon COMMAND --help`.  Writes only
# tmp_path.
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, child_env, cordon_bin, help_commands

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PAGES = ["man1/cordon.1", "man8/cordond.8", "man8/cordon-broker.8",
         "man8/cordon-spawner.8", "man8/cordon-vaultd.8",
         "man8/cordon-auditd.8", "man8/cordon-gated.8",
         "man8/cordon-egressd.8", "man8/cordon-sched.8"]
COMPLETION = os.path.join(ROOT, "completions", "cordon.bash")


def meson_option(name):
    out = subprocess.run(["meson", "introspect", "--buildoptions", BUILD],
                         capture_output=True, text=True, timeout=60,
                         check=True).stdout
    return {o["name"]: o["value"] for o in json.loads(out)}[name]


@pytest.fixture(scope="module")
def destdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("destdir")
    r = subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild",
                        "--quiet", "--destdir", str(d)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    prefix = meson_option("prefix")
    return d / prefix.lstrip("/")


def test_install_man_pages(destdir):
    man = destdir / meson_option("mandir")
    for page in PAGES:
        assert (man / page).is_file(), page
        text = (man / page).read_text()
        name = os.path.basename(page).rsplit(".", 1)
        assert re.search(r"^\.TH %s %s " % (re.escape(name[0].upper()),
                                            name[1]), text, re.M), page
        assert "@DAEMONDIR@" not in text, page  # substituted


def test_install_man_pages_lint_clean(destdir):
    if shutil.which("groff") is None:
        pytest.fail("groff is missing: scripts/deps.sh test installs "
                    "groff-base")
    man = destdir / meson_option("mandir")
    for page in PAGES:
        r = subprocess.run(["groff", "-man", "-ww", "-z", str(man / page)],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stderr == "", (page, r.stderr)


def test_install_bash_completion(destdir):
    comp = (destdir / meson_option("datadir") / "bash-completion" /
            "completions" / "cordon")
    assert comp.is_file()
    with open(comp, "rb") as a, open(COMPLETION, "rb") as b:
        assert a.read() == b.read()


def complete(*words):
    """What the completion offers for `cordon WORDS...` (the last word is
    the one being completed)."""
    line = " ".join(["cordon", *words])
    script = (f"source {COMPLETION}\n"
              f"COMP_WORDS=(cordon {' '.join(repr(w) for w in words)})\n"
              f"COMP_CWORD={len(words)}\n"
              f"COMP_LINE={line!r}\n"
              "_cordon\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return sorted(w for w in r.stdout.split("\n") if w)


def help_text(*args):
    r = subprocess.run([cordon_bin(), *args], capture_output=True, text=True,
                       timeout=30, env=child_env())
    assert r.returncode == 0, r.stderr
    return r.stdout


def cordon_commands():
    return help_commands(help_text("--help"))


def test_completion_lists_every_command():
    cmds = cordon_commands()
    assert "run" in cmds and "audit" in cmds
    assert complete("") == sorted(cmds)
    assert complete("st") == ["status"]


def test_completion_offers_every_option_of_each_command():
    """Every --option a command's help names is offered, and no other."""
    for cmd in cordon_commands():
        if cmd in ("audit", "agent", "job", "worktree"):  # below
            continue
        want = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)",
                              help_text("help", cmd))) | {"--help"}
        want.discard("--version")  # `cordon version --help` names it
        got = set(w for w in complete(cmd, "--") if w.startswith("--"))
        if cmd == "token":  # FILE only
            assert want == {"--help"}, want
            continue
        assert got == want, (cmd, got ^ want)
    for sub, opts in (("verify", {"--home", "--heads", "--help"}),
                      ("tail", {"--kind", "--agent", "--home", "--help"})):
        assert set(complete("audit", sub, "--")) == opts
    assert complete("audit", "") == ["--help", "tail", "verify"]
    # SBX-9: `cordon agent login`'s options are those its help names.
    want = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)",
                          help_text("agent", "--help"))) | {"--help"}
    assert set(complete("agent", "login", "--")) == want, want
    assert want == {"--home", "--user", "--allow-root", "--help"}
    assert complete("agent", "") == ["--help", "login"]
    # MC-3: `cordon job`'s verbs, and the options its help names.
    assert complete("job", "") == ["--help", "cancel", "list", "show"]
    want = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)",
                          help_text("job", "--help"))) | {"--help"}
    assert set(complete("job", "list", "--")) == want, want
    assert want == {"--home", "--port", "--token-file", "--json", "--help"}
    # MC-2: `cordon worktree`'s verbs, and the options its help names.
    assert complete("worktree", "") == ["--help", "list", "remove"]
    want = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)",
                          help_text("worktree", "--help"))) | {"--help"}
    assert set(complete("worktree", "list", "--")) == want, want
    assert want == {"--home", "--port", "--token-file", "--json", "--help"}
