# Worktree runs (MC-2) over the API: cordon makes a disposable checkout
# of a repository in the agent's roots on a fresh branch, the agent
# writes and commits there only, the done event carries the branch and a
# diff summary, the operator lists and removes worktrees; hostile repos
# and bodies are refused with fixed codes and no echo, and no hook or
# config of the repository or of the agent's checkout runs outside the
# sandbox.  A real cordon, a temp home, the fake `wtagent`.  Touches only
# the temp dirs it makes and sockets to 127.0.0.1.
import json
import os
import re
import subprocess
import threading
import time

import pytest

from agents_util import (audit_records, make_agents_home, post_json,
                         server_env, wait_audit)

GIT_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}

MANIFESTS = {
    "wt": """
name: wt
transport: subprocess
transportConfig:
  bin: wtagent
  args: ["{prompt}"]
sandbox:
  writeRoots: ["{repos}"]
  worktrees: true
""",
    "nowt": """
name: nowt
transport: subprocess
transportConfig:
  bin: wtagent
  args: ["{prompt}"]
sandbox:
  writeRoots: ["{repos}"]
""",
}


def git(*args, cwd=None):
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True,
                          capture_output=True, text=True).stdout


def make_repo(path):
    os.makedirs(path)
    git("init", "-q", "-b", "main", path)
    with open(os.path.join(path, "README"), "w") as f:
        f.write("hello\n")
    git("add", "README", cwd=path)
    git("-c", "user.name=op", "-c", "user.email=op@example.invalid",
        "commit", "-q", "-m", "first", cwd=path)
    return path


def outside_repo(tmp_path, secret):
    """A repository outside every root, with a SECRET commit on top."""
    path = make_repo(str(tmp_path / "outside"))
    with open(os.path.join(path, "SECRET"), "w") as f:
        f.write(secret)
    git("add", "SECRET", cwd=path)
    git("-c", "user.name=op", "-c", "user.email=op@example.invalid",
        "commit", "-q", "-m", "secret", cwd=path)
    return path


@pytest.fixture
def wt_env():
    return {}


@pytest.fixture
def wt(tmp_path, monkeypatch, cordon_factory, wt_env):
    server_env(monkeypatch, wt_env)
    repos = tmp_path / "repos"
    repos.mkdir()
    extra = {n: t.replace("{repos}", str(repos)) for n, t in MANIFESTS.items()}
    c = cordon_factory(home=make_agents_home(tmp_path, extra=extra))
    c.repos = str(repos)
    return c


def run_wt(c, agent, repo, prompt=None, **extra):
    body = dict({"prompt": prompt or repo, "worktree": repo}, **extra)
    r = post_json(c, f"/api/agents/{agent}/run", body)
    assert r is not None
    evs = []
    if r.status == 200:
        evs = [json.loads(x) for x in r.body.split(b"\n") if x]
    return r, evs


def text(evs):
    return "".join(e.get("text", "") for e in evs if e["kind"] == "token")


def error(r):
    assert r is not None
    return r.status, r.json()["error"]


def remove(c, rid):
    return post_json(c, f"/api/worktrees/{rid}/remove", {})


def refs(repo):
    return git("for-each-ref", "--format=%(refname) %(objectname)", cwd=repo)


def test_mc2_worktree_run_on_fresh_branch_only_it_writable(wt):
    c = wt
    repo = make_repo(os.path.join(c.repos, "main"))
    before = refs(repo)
    r, evs = run_wt(c, "wt", repo)
    assert r.status == 200, (r, c.stderr())
    out = text(evs)
    assert "commit=ok" in out, out
    # The sandbox refuses the main checkout and its refs.
    assert "main-write=refused" in out and "main-ref=refused" in out, out
    assert not os.path.exists(os.path.join(repo, "pwned"))
    assert refs(repo) == before
    assert git("status", "--porcelain", cwd=repo) == ""
    done = [e for e in evs if e["kind"] == "done"][-1]
    w = done["worktree"]
    rid = w["id"]
    assert re.fullmatch(r"[0-9a-f]{16}", rid)
    assert w["branch"] == f"cordon/{rid}"
    assert (w["filesChanged"], w["insertions"], w["deletions"]) == (2, 3, 0)
    assert w["head"] != w["base"]
    assert w["path"] == os.path.join(c.home, "state", "worktrees", rid, "tree")
    # The branch holds the agent's commit, on top of the repo's HEAD.
    assert git("rev-parse", w["branch"], cwd=w["path"]).strip() == w["head"]
    assert git("rev-parse", "HEAD", cwd=repo).strip() == w["base"]
    # The operator merges it from the repository (docs/operator-guide.md).
    git("fetch", "-q", w["path"], f"{w['branch']}:{w['branch']}", cwd=repo)
    assert git("rev-parse", w["branch"], cwd=repo).strip() == w["head"]
    # Nothing the agent planted in its checkout ran outside the sandbox.
    assert not os.path.exists(repo + ".trap")
    wait_audit(c.home, lambda r: r["kind"] == "worktree.create" and
               r["worktreeId"] == rid and r["agent"] == "wt")


def test_mc2_worktree_list_and_remove(wt):
    c = wt
    repo = make_repo(os.path.join(c.repos, "main"))
    r, evs = run_wt(c, "wt", repo)
    assert r.status == 200
    rid = [e for e in evs if e["kind"] == "done"][-1]["worktree"]["id"]
    lst = c.request("GET", "/api/worktrees").json()["worktrees"]
    assert [w["id"] for w in lst] == [rid]
    assert lst[0]["repo"] == repo and lst[0]["result"]["filesChanged"] == 2
    r = remove(c, rid)
    assert r.status == 200, r
    assert not os.path.exists(os.path.join(c.home, "state", "worktrees", rid))
    assert c.request("GET", "/api/worktrees").json()["worktrees"] == []
    wait_audit(c.home, lambda r: r["kind"] == "worktree.remove" and
               r["worktreeId"] == rid)
    assert error(remove(c, rid)) == \
        (404, "unknown-worktree")
    assert error(remove(c, "a%2F..%2Fb")) == \
        (400, "invalid-worktree-id")


def test_mc2_hostile_repos_refused(wt, tmp_path):
    c = wt
    main = make_repo(os.path.join(c.repos, "main"))
    outside = make_repo(str(tmp_path / "outside"))
    link = os.path.join(c.repos, "link")
    os.symlink(main, link)
    gitfile = os.path.join(c.repos, "gitfile")
    os.makedirs(gitfile)
    with open(os.path.join(gitfile, ".git"), "w") as f:
        f.write(f"gitdir: {outside}/.git\n")
    gitlink = os.path.join(c.repos, "gitlink")
    os.makedirs(gitlink)
    os.symlink(os.path.join(outside, ".git"), os.path.join(gitlink, ".git"))
    protected = make_repo(os.path.join(c.repos, "team-secrets"))  # SBX-2
    # MC-2: each refusal says which rule, as a fixed class, never the path.
    for repo, reason in ((outside, "outside-roots"),
                         (link, "link-in-path"),
                         (os.path.join(link, "sub"), "link-in-path"),
                         (gitfile, "gitfile"),
                         (gitlink, "link-in-path"),
                         (main + "/", "not-a-repo"),
                         (c.repos + "/./main", "not-a-repo"),
                         (os.path.join(c.repos, "none"), "not-a-repo"),
                         (c.repos, "not-a-repo"),
                         (protected, "protected")):
        r, _ = run_wt(c, "wt", repo, prompt="x")
        assert error(r) == (400, "worktree-refused"), repo
        assert r.json().get("reason") == reason, (repo, r.body)
        assert repo.encode() not in r.body
    # Not opted in by its manifest.
    r, _ = run_wt(c, "nowt", main, prompt="x")
    assert error(r) == (400, "worktree-refused")
    assert r.json().get("reason") == "not-opted-in"
    # Bodies: a relative path, a wrong type, a branch of the caller's.
    for body in ({"worktree": "repos/main"}, {"worktree": 7},
                 {"worktree": "/" + "a" * 5000}):
        r = post_json(c, "/api/agents/wt/run", dict({"prompt": "x"}, **body))
        assert error(r) == (400, "invalid-worktree"), body
    r = post_json(c, "/api/agents/wt/run", {
        "prompt": "x", "worktree": main, "branch": "--upload-pack=touch x"})
    assert error(r) == (400, "invalid-body")
    assert not os.path.exists(os.path.join(c.home, "state", "worktrees")) or \
        os.listdir(os.path.join(c.home, "state", "worktrees")) == []


def test_mc2_git_pointing_out_refused(wt, tmp_path):
    # MC-2: a .git that is a directory but names another repository
    # (commondir, alternates, a link beneath it) would have the
    # spawner's git, unconfined by the agent's roots, clone and check
    # out that repository into the agent's checkout.  An agent that can
    # write its roots plants such a repo for a later worktree run.
    c = wt
    outside = outside_repo(tmp_path, "mc2-outside-secret\n")
    tip = git("rev-parse", "HEAD", cwd=outside).strip()
    og = os.path.join(outside, ".git")

    def bare(name):
        g = os.path.join(c.repos, name, ".git")
        for d in ("objects/info", "refs/heads", "refs/tags"):
            os.makedirs(os.path.join(g, d))
        with open(os.path.join(g, "HEAD"), "w") as f:
            f.write("ref: refs/heads/main\n")
        return g

    cases = []
    g = bare("commondir")  # its refs and objects are outside's
    with open(os.path.join(g, "commondir"), "w") as f:
        f.write(og + "\n")
    with open(os.path.join(g, "objects", "info", "alternates"), "w") as f:
        f.write(og + "/objects\n")
    cases.append(os.path.dirname(g))
    g = bare("alternates")  # a known commit id, its objects outside
    with open(os.path.join(g, "refs", "heads", "main"), "w") as f:
        f.write(tip + "\n")
    with open(os.path.join(g, "objects", "info", "alternates"), "w") as f:
        f.write(og + "/objects\n")
    cases.append(os.path.dirname(g))
    g = bare("objlink")  # its objects a link to outside's
    with open(os.path.join(g, "refs", "heads", "main"), "w") as f:
        f.write(tip + "\n")
    os.rmdir(os.path.join(g, "objects", "info"))
    os.rmdir(os.path.join(g, "objects"))
    os.symlink(og + "/objects", os.path.join(g, "objects"))
    cases.append(os.path.dirname(g))
    for repo in cases:
        r, evs = run_wt(c, "wt", repo, prompt="x")
        assert error(r) == (400, "worktree-refused"), (repo, evs)
        assert r.json().get("reason") == "git-indirect", (repo, r.body)
        assert repo.encode() not in r.body
    # A newline in the path would be a second line of the alternates
    # file cordon writes for the checkout: not a canonical path.
    nl = make_repo(os.path.join(c.repos, "a\n" + outside))
    r, evs = run_wt(c, "wt", nl, prompt="x")
    assert error(r) == (400, "worktree-refused"), evs
    assert r.json().get("reason") == "not-a-repo"
    # A link in hooks/ (a hook manager's) is no way out: git runs with
    # core.hooksPath=/dev/null and never reads that dir.
    hooked = make_repo(os.path.join(c.repos, "hooked"))
    os.symlink(outside + "/x", os.path.join(hooked, ".git", "hooks",
                                            "pre-commit"))
    r, evs = run_wt(c, "wt", hooked, prompt="x")
    assert r.status == 200, (r, evs)
    # Nothing of outside's reached any checkout.
    state = os.path.join(c.home, "state", "worktrees")
    for root, _, files in os.walk(state):
        assert "SECRET" not in files, root


def test_mc2_summary_reads_no_alternates_of_the_agent(wt, tmp_path):
    # MC-2: the agent names another object store in its checkout's
    # alternates and commits, by id, a tree it cannot read; the summary's
    # git (the spawner's, not in the sandbox) must not read it for it.
    c = wt
    outside = outside_repo(tmp_path, "one\ntwo\nthree\n")
    tree = git("rev-parse", "HEAD^{tree}", cwd=outside).strip()
    main = make_repo(os.path.join(c.repos, "main"))
    r, evs = run_wt(c, "wt", main,
                    prompt=f"alt:{outside}/.git/objects:{tree}")
    assert r.status == 200, r
    assert "alt=ok" in text(evs), text(evs)
    w = [e for e in evs if e["kind"] == "done"][-1]["worktree"]
    assert w["head"] != w["base"]
    assert w.get("summaryError") is True, w
    assert (w["filesChanged"], w["insertions"], w["deletions"]) == (0, 0, 0)


def test_mc2_repo_hooks_and_config_never_run(wt):
    c = wt
    repo = make_repo(os.path.join(c.repos, "evil"))
    trap = repo + ".trap"
    hook = os.path.join(repo, ".git", "hooks", "post-checkout")
    with open(hook, "w") as f:
        f.write(f"#!/bin/sh\ntouch {trap}\n")
    os.chmod(hook, 0o755)
    for k in ("core.fsmonitor", "core.sshCommand", "core.pager",
              "diff.external", "core.hooksPath"):
        git("config", k, f"touch {trap}" if k != "core.hooksPath"
            else os.path.join(repo, ".git", "hooks"), cwd=repo)
    with open(os.path.join(repo, ".gitattributes"), "w") as f:
        f.write("* filter=evil diff=evil\n")
    git("config", "filter.evil.smudge", f"touch {trap}; cat", cwd=repo)
    git("config", "filter.evil.clean", f"touch {trap}; cat", cwd=repo)
    r, evs = run_wt(c, "wt", repo)
    assert r.status == 200, (r, c.stderr())
    assert "commit=ok" in text(evs)
    assert [e for e in evs if e["kind"] == "done"][-1]["worktree"][
        "filesChanged"] == 2
    assert not os.path.exists(trap)


def test_mc2_job_done_event_has_worktree(wt):
    c = wt
    repo = make_repo(os.path.join(c.repos, "main"))
    r = post_json(c, "/api/agents/wt/jobs", {"prompt": repo, "worktree": repo})
    assert r.status == 200, r
    jid = r.json()["jobId"]
    w = c.request("GET", f"/api/jobs/{jid}/wait?timeoutMs=20000").json()
    assert w["timedOut"] is False
    evs = c.request("GET", f"/api/jobs/{jid}/events?offset=0").json()["events"]
    done = [e for e in evs if e["kind"] == "done"][-1]
    assert done["worktree"]["branch"] == f"cordon/{jid}"
    assert done["worktree"]["filesChanged"] == 2


# A slow git step (the test hook runs a sleep as a step before the
# clone): the spawner answers health, lists agents and runs another
# agent meanwhile, and the worktree run still completes.  With git
# waited for in the spawner's loop, every one of these waits for it.
@pytest.mark.parametrize("wt_env", [{"CORDON_TEST_WORKTREE_DELAY_MS": "3000"}])
def test_mc2_slow_worktree_step_blocks_nothing(wt):
    c = wt
    repo = make_repo(os.path.join(c.repos, "main"))
    res = {}

    def slow():
        t = time.monotonic()
        res["r"], res["evs"] = run_wt(c, "wt", repo)
        res["s"] = time.monotonic() - t

    th = threading.Thread(target=slow)
    t0 = time.monotonic()
    th.start()
    time.sleep(0.5)
    for path in ("/api/health", "/api/agents"):
        t = time.monotonic()
        r = c.request("GET", path)
        assert r.status == 200, (path, r)
        assert time.monotonic() - t < 1.5, path
    t = time.monotonic()
    other = os.path.join(c.repos, "none", "x")  # it writes nothing real
    r = post_json(c, "/api/agents/nowt/run", {"prompt": other})
    assert r.status == 200, r
    assert b'"kind":"done"' in r.body
    assert time.monotonic() - t < 2.0
    assert time.monotonic() - t0 < 2.8  # all while the step still slept
    th.join(30)
    assert res["r"].status == 200, (res["r"], c.stderr())
    assert res["s"] >= 3.0  # the hook was in effect
    assert "commit=ok" in text(res["evs"])


# MC-2 through `cordon mcp`: run_agent and start_job take `worktree`
# (declared in the one schema table), the result names the branch and
# what changed, a refusal says which rule, bad values never reach cordon.
def test_mc2_mcp_tools_take_worktree(wt):
    from test_mcp import Mcp, error_of, init
    c = wt
    repo = make_repo(os.path.join(c.repos, "main"))
    m = Mcp(c.home)
    try:
        init(m)
        r, _ = m.request("tools/list")
        tools = {t["name"]: t for t in r["result"]["tools"]}
        for name in ("run_agent", "start_job"):
            p = tools[name]["inputSchema"]["properties"]["worktree"]
            assert p["type"] == "string" and p["maxLength"] == 4096
            assert "worktree" not in tools[name]["inputSchema"]["required"]
        r, _ = m.call("run_agent", {"agent": "wt", "prompt": repo,
                                    "worktree": repo})
        res = r["result"]
        assert res["isError"] is False, res
        sc = res["structuredContent"]
        assert "commit=ok" in sc["text"]
        assert sc["worktree"]["branch"] == f"cordon/{sc['runId']}"
        assert sc["worktree"]["filesChanged"] == 2
        inv = wait_audit(c.home, lambda x: x["kind"] == "agent.invoke" and
                         x["runId"] == sc["runId"])
        assert inv[0]["via"] == "mcp"
        r, _ = m.call("start_job", {"agent": "wt", "prompt": repo,
                                    "worktree": repo})
        jid = r["result"]["structuredContent"]["jobId"]
        r, _ = m.call("wait_job", {"jobId": jid, "timeoutMs": 20000},
                      timeout=30)
        assert r["result"]["structuredContent"]["timedOut"] is False
        r, _ = m.call("job_events", {"jobId": jid})
        done = [e for e in r["result"]["structuredContent"]["events"]
                if e["kind"] == "done"][-1]
        assert done["worktree"]["branch"] == f"cordon/{jid}"
        # A refusal: the code and its reason class, never the path.
        outside = "/tmp/zq-echo-canary-repo"
        for tool in ("run_agent", "start_job"):
            r, _ = m.call(tool, {"agent": "wt", "prompt": "x",
                                 "worktree": outside})
            res = r["result"]
            assert res["isError"] is True
            assert res["structuredContent"] == {
                "error": "worktree-refused", "reason": "outside-roots"}
            assert "canary" not in json.dumps(r)
        # Bad values: refused by the schema before any API call.
        for bad in ("relative/zq-echo-canary", 7, "", "/" + "a" * 5000):
            r, _ = m.call("run_agent", {"agent": "wt", "prompt": "x",
                                        "worktree": bad})
            assert error_of(r) == (-32602, "invalid-argument"), bad
            assert "canary" not in json.dumps(r)
    finally:
        m.close()


# `cordon worktree list|remove` (MC-2): the API's worktrees from a
# shell; a bad id is a usage error before any call, never echoed.
def test_mc2_cordon_worktree_cli(wt):
    from conftest import HTTP_S, child_env, cordon_bin
    c = wt

    def cli(*args, home=True):
        return subprocess.run(
            [cordon_bin(), "worktree", *args] +
            (["--home", c.home] if home else []),
            capture_output=True, text=True, timeout=HTTP_S, env=child_env())

    repo = make_repo(os.path.join(c.repos, "main"))
    r, evs = run_wt(c, "wt", repo)
    assert r.status == 200
    rid = [e for e in evs if e["kind"] == "done"][-1]["worktree"]["id"]
    r = cli("list")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["WORKTREE", "AGENT", "CREATED", "FILES",
                                "REPO"]
    row = lines[1].split()
    assert (row[0], row[1], row[3], row[4]) == (rid, "wt", "2", repo)
    r = cli("list", "--json")
    assert [w["id"] for w in json.loads(r.stdout)["worktrees"]] == [rid]
    r = cli("remove", rid)
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(os.path.join(c.home, "state", "worktrees", rid))
    wait_audit(c.home, lambda x: x["kind"] == "worktree.remove" and
               x["worktreeId"] == rid)
    r = cli("remove", rid)
    assert r.returncode == 1 and "no such worktree" in r.stderr
    assert cli("list").stdout.splitlines()[1:] == []
    for bad in (["remove", "../zq-canary"], ["remove", "a" * 81],
                ["remove"], ["drop", "zq-canary"]):
        r = cli(*bad, home=False)
        assert r.returncode == 2, bad
        assert "zq-canary" not in r.stdout + r.stderr


# `cordon check` (MC-2): sandbox.worktrees is a boolean, placed by file,
# line and column when it is not; true passes, with a warning when git
# is missing from the PATH the spawner runs it on.
def test_mc2_check_sandbox_worktrees(tmp_path):
    from conftest import cordon_bin
    home = tmp_path / "home"
    (home / "agents").mkdir(parents=True)
    agent = tmp_path / "agent"  # outside the hidden /usr/bin
    agent.write_text("#!/bin/sh\n")
    agent.chmod(0o755)
    head = (f"transport: subprocess\ntransportConfig:\n  bin: {agent}\n"
            "  args: [\"{prompt}\"]\nsandbox:\n")
    (home / "agents" / "a.yaml").write_text(
        "name: a\n" + head + "  worktrees: \"yes\"\n")
    (home / "agents" / "b.yaml").write_text(
        "name: b\n" + head + "  worktrees: true\n")
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def check(wrap=()):
        return subprocess.run([*wrap, cordon_bin(), "check", "--json", "--home",
                               str(home)], capture_output=True, text=True,
                              timeout=30, env=env)

    r = check()
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["agents"] == 1
    assert doc["problems"] == [{
        "file": str(home / "agents" / "a.yaml"), "line": 7, "column": 3,
        "key": "sandbox.worktrees", "code": "wrong-type",
        "message": "must be true or false"}]
    (home / "agents" / "a.yaml").unlink()
    r = check()
    assert r.returncode == 0, r.stdout
    assert json.loads(r.stdout)["problems"] == []
    assert json.loads(r.stdout)["warnings"] == []
    # No git where the spawner looks for it: a warning, at the key.
    r = check(["unshare", "-m", "--", "/bin/sh", "-c",
               "mount -t tmpfs none /usr/local/bin && "
               "mount -t tmpfs none /usr/bin && exec \"$0\" \"$@\""])
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["problems"] == []
    assert doc["warnings"] == [{
        "file": str(home / "agents" / "b.yaml"), "line": 7, "column": 3,
        "key": "sandbox.worktrees", "code": "git-not-found",
        "message": "git not found on the spawner's "
                   "PATH=/usr/local/bin:/usr/bin:/bin; worktree runs would "
                   "fail (worktree-failed)"}]


# The window between the checks and the clone (MC-2): the repository is
# held open once checked and git clones that fd; a path that names
# another directory (or a link) by the clone's end refuses the run, and
# nothing is left behind.  The test hook's pause before the clone is
# the window.
@pytest.mark.parametrize("wt_env", [{"CORDON_TEST_WORKTREE_DELAY_MS": "1500"}])
@pytest.mark.parametrize("swap", ["other-repo", "symlink"])
def test_mc2_repo_swapped_before_clone_refused(wt, tmp_path, swap):
    c = wt
    repo = make_repo(os.path.join(c.repos, "main"))
    outside = make_repo(str(tmp_path / "outside"))
    res = {}
    th = threading.Thread(
        target=lambda: res.update(r=run_wt(c, "wt", repo, prompt="x")))
    th.start()
    time.sleep(0.5)
    os.rename(repo, repo + ".old")
    if swap == "symlink":
        os.symlink(outside, repo)
    else:
        make_repo(repo)
    th.join(30)
    r, evs = res["r"]
    # Answered before the clone: the refusal is the run's error event.
    assert r.status == 200, (r, c.stderr())
    err = [e for e in evs if e["kind"] == "error"]
    assert err and (err[0]["error"], err[0]["reason"]) == \
        ("worktree-refused", "repo-changed"), evs
    assert [e for e in evs if e["kind"] == "done"][-1]["exitCode"] == -1
    assert repo.encode() not in r.body
    assert os.listdir(os.path.join(c.home, "state", "worktrees")) == []


# MC-2: git refuses a repository owned by another user ("dubious
# ownership") unless told it is safe; the clone is told so, through a
# global config file of cordon's naming the held repository only, and
# the run goes on.  The repository here belongs to nobody, not to the
# spawner's user.
def test_mc2_repo_of_another_user_cloned(wt):
    c = wt
    repo = make_repo(os.path.join(c.repos, "theirs"))
    for d, dirs, files in os.walk(repo):
        for n in [d] + [os.path.join(d, f) for f in dirs + files]:
            os.lchown(n, 65534, 65534)
    assert os.stat(repo).st_uid != os.geteuid()
    def theirs_refs():  # the test's own git is told, on its command line
        return git("-c", f"safe.directory={repo}", "for-each-ref",
                   "--format=%(refname) %(objectname)", cwd=repo)

    before = theirs_refs()
    r, evs = run_wt(c, "wt", repo)
    assert r.status == 200, (r, c.stderr())
    assert "commit=ok" in text(evs), text(evs)
    w = [e for e in evs if e["kind"] == "done"][-1]["worktree"]
    assert w["filesChanged"] == 2 and w["head"] != w["base"]
    assert theirs_refs() == before
    assert remove(c, w["id"]).status == 200
