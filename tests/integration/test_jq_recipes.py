# The admin docs' jq recipes (docs/audit.md "jq for admins",
# docs/admin-guide.md), each run as written against the trail of a real
# cordon that did a chat run, an action, refused requests and was
# stopped: every one must parse and run on real records (AU-2: the trail
# is read with jq).  Touches only the temp dirs it creates.
import os
import re
import shlex
import subprocess

from agents_util import ROOT, make_agents_home, post_json, run, server_env

DOCS = ("audit.md", "admin-guide.md")


def recipes(name):
    """Every command in the doc's sh blocks that starts with jq (or
    sudo jq), its continuation lines joined as the shell reads them."""
    with open(os.path.join(ROOT, "docs", name), encoding="utf-8") as f:
        text = f.read()
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        cmd = None
        for line in block.split("\n"):
            if cmd is None:
                if re.match(r"\s*(sudo )?jq ", line):
                    cmd = line.strip()
                else:
                    continue
            else:
                cmd += "\n" + line
            try:
                shlex.split(cmd, comments=True)
            except ValueError:
                continue  # a quote still open: the next line is the same
            if cmd.endswith("\\"):
                continue
            out.append(cmd)
            cmd = None
    return out


def test_au2_admin_jq_recipes_run_on_a_real_trail(tmp_path, monkeypatch,
                                                    cordon_factory):
    server_env(monkeypatch)
    home = make_agents_home(tmp_path)
    c = cordon_factory(home=home)
    r, _ = run(c, "hermes", "hello")
    assert r.status == 200, r
    assert post_json(c, "/api/agents/hermes/actions/status", {}) \
        is not None
    assert c.request("GET", "/api/nowhere").status == 404
    c.stop()
    adir = home / "audit"
    assert list(adir.glob("*.jsonl")), "no trail"
    cmds = [(d, cmd) for d in DOCS for cmd in recipes(d)]
    assert len(cmds) >= 20, cmds  # the extraction found them
    for doc, cmd in cmds:
        sh = (cmd.replace("sudo jq", "jq")
              .replace("/var/log/cordon/audit/", f"{adir}/")
              .replace("DIR/audit/", f"{adir}/"))
        p = subprocess.run(["bash", "-c", sh], cwd=adir, capture_output=True,
                           text=True, timeout=30)
        assert p.returncode == 0 and p.stderr == "", (doc, cmd, p.stderr)
