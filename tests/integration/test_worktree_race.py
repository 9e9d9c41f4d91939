# Worktree runs (MC-2): the spawner's git steps run under a Landlock
# ruleset made from the agent's plan, so a .git that names objects
# elsewhere once its checks are passed (a writer of the repository
# racing them) reads nothing past the agent's roots.  The race is made
# deterministic by the test hook's pause between the checks that follow
# the clone and the checkout.  A real cordon, a temp home, the fake
# `wtagent`.  Touches only the temp dirs it makes and sockets to
# 127.0.0.1.
import os
import pathlib
import subprocess
import threading
import time

import pytest

from test_worktree import (GIT_ENV, git, outside_repo, run_wt, text,  # noqa
                           wt, wt_env)

RACE = {"CORDON_TEST_WORKTREE_CHECKOUT_MS": "3000"}
SECRET = "mc2-raced-secret\n"


def bait_repo(path, tree):
    """A repository whose one commit names tree, an object it lacks: it
    passes every check (nothing beneath .git names another store) and
    clones, but its checkout reads tree from wherever the alternates
    say by then."""
    os.makedirs(path)
    git("init", "-q", "-b", "main", path)
    body = (f"tree {tree}\nauthor a <a@b> 1 +0000\n"
            "committer a <a@b> 1 +0000\n\nbait\n")
    c = subprocess.run(["git", "hash-object", "-t", "commit", "-w",
                        "--stdin"], cwd=path, env=GIT_ENV, input=body,
                       check=True, capture_output=True, text=True).stdout
    with open(os.path.join(path, ".git", "refs", "heads", "main"), "w") as f:
        f.write(c)
    return path


def checked_clone(c, repo, bound=20.0):
    """The clone made and checked: its alternates name repo (cordon
    writes them once the repository passed its second check)."""
    state = os.path.join(c.home, "state", "worktrees")
    want = repo + "/.git/objects\n"
    end = time.monotonic() + bound
    while time.monotonic() < end:
        for rid in os.listdir(state) if os.path.isdir(state) else []:
            alt = os.path.join(state, rid, "tree", ".git", "objects",
                               "info", "alternates")
            try:
                with open(alt) as f:
                    if f.read() == want:
                        return rid
            except OSError:
                pass
        time.sleep(0.05)
    raise AssertionError("no checked clone")


def race(c, repo, store):
    """The run, with repo's alternates pointed at store in the window
    between the checks and the checkout: (response, events, id)."""
    res = {}
    th = threading.Thread(
        target=lambda: res.update(r=run_wt(c, "wt", repo, prompt="x")))
    th.start()
    try:
        rid = checked_clone(c, repo)
        with open(os.path.join(repo, ".git", "objects", "info",
                               "alternates"), "w") as f:
            f.write(store + "\n")
    finally:
        th.join(60)
    r, evs = res["r"]
    return r, evs, rid


# MC-2: outside the roots, the raced alternates are unreadable to the
# checkout's git: the worktree fails, nothing of the store reaches the
# checkout (which is removed), and the agent never starts.
@pytest.mark.parametrize("wt_env", [RACE])
def test_mc2_alternates_raced_in_before_checkout_unreadable(wt, tmp_path):
    c = wt
    outside = outside_repo(tmp_path, SECRET)
    tree = git("rev-parse", "HEAD^{tree}", cwd=outside).strip()
    repo = bait_repo(os.path.join(c.repos, "bait"), tree)
    r, evs, rid = race(c, repo, outside + "/.git/objects")
    assert r.status == 200, (r, c.stderr())
    err = [e for e in evs if e["kind"] == "error"]
    assert err and (err[0]["error"], err[0]["reason"]) == \
        ("worktree-failed", "git-failed"), evs
    assert [e for e in evs if e["kind"] == "done"][-1]["exitCode"] == -1
    assert text(evs) == "", evs  # the agent never ran
    assert SECRET.encode() not in r.body and repo.encode() not in r.body
    state = os.path.join(c.home, "state", "worktrees")
    assert not os.path.exists(os.path.join(state, rid))
    for root, _, files in os.walk(state):
        assert "SECRET" not in files, root


# The control: the same race with the store inside the agent's roots
# (which the agent may read anyway) checks out its tree.  So the checks
# around the clone, which are the same, are not what stops the one
# above: the Landlock rules of the checkout's git are.
@pytest.mark.parametrize("wt_env", [RACE])
def test_mc2_alternates_raced_in_within_roots_read(wt):
    c = wt
    inside = outside_repo(pathlib.Path(c.repos), SECRET)
    tree = git("rev-parse", "HEAD^{tree}", cwd=inside).strip()
    repo = bait_repo(os.path.join(c.repos, "bait"), tree)
    r, evs, rid = race(c, repo, inside + "/.git/objects")
    assert r.status == 200, (r, c.stderr())
    assert not [e for e in evs if e["kind"] == "error"], evs
    assert "commit=ok" in text(evs), text(evs)
    w = [e for e in evs if e["kind"] == "done"][-1]["worktree"]
    with open(os.path.join(w["path"], "SECRET")) as f:
        assert f.read() == SECRET
    # The summary's diff, under the same rules, reads it too.
    assert w.get("summaryError") is not True, w
    assert w["filesChanged"] > 0 and w["head"] != w["base"], w


# MC-2: the checkout's git may not make links (its rules, like the
# agent's, grant no symlink creation), so git checks a repository's
# links out as plain files holding their target, as it does wherever
# links cannot be made; the run goes on.
def test_mc2_repo_links_checked_out_as_files(wt):
    c = wt
    repo = os.path.join(c.repos, "linked")
    os.makedirs(repo)
    git("init", "-q", "-b", "main", repo)
    with open(os.path.join(repo, "README"), "w") as f:
        f.write("hello\n")
    os.symlink("README", os.path.join(repo, "link"))
    git("add", "README", "link", cwd=repo)
    git("-c", "user.name=op", "-c", "user.email=op@example.invalid",
        "commit", "-q", "-m", "first", cwd=repo)
    r, evs = run_wt(c, "wt", repo)
    assert r.status == 200, (r, c.stderr())
    assert "commit=ok" in text(evs), text(evs)
    w = [e for e in evs if e["kind"] == "done"][-1]["worktree"]
    link = os.path.join(w["path"], "link")
    assert not os.path.islink(link)
    with open(link) as f:
        assert f.read() == "README"
