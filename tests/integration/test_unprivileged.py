# SU-1, SU-2 without root: cordon started by an ordinary user runs all four
# daemons as that user, confined, and stops cleanly.  Creates the system
# user cordon-test if missing; needs root to do so and to switch to it.
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import (DAEMONS, Cordon, cordon_bin, finish, proc_starttime,
                      proc_status, run_once, system_user, user_bin)

USER = "cordon-test"

pytestmark = pytest.mark.skipif(
    os.getuid() != 0,
    reason="needs root to create the cordon-test user and switch to it")


@pytest.fixture(scope="module")
def test_user():
    return system_user(USER, home=True)


@pytest.fixture
def user_home(test_user):
    """A home the test user owns, under a world-traversable /tmp dir."""
    base = tempfile.mkdtemp(prefix="cordon-it-", dir="/tmp")
    os.chmod(base, 0o755)
    home = os.path.join(base, "home")
    os.mkdir(home, 0o700)
    os.chown(home, test_user.pw_uid, test_user.pw_gid)
    yield home
    shutil.rmtree(base, ignore_errors=True)


def as_user():
    return ["setpriv", f"--reuid={USER}", f"--regid={USER}",
            "--init-groups", "--"]


def test_programs_are_reachable_by_test_user(test_user):
    """The copy user_bin() made runs as the test user, wherever the
    build lies (root's 0700 home on a fresh Debian)."""
    p = subprocess.run(as_user() + [cordon_bin(user_bin()), "version"],
                       capture_output=True, timeout=30)
    assert p.returncode == 0, (
        f"{user_bin()} must be reachable by {USER}: {p.stderr!r}")


def test_su2_unprivileged_four_daemons_confined(test_user, user_home):
    c = Cordon(user_home, prefix=as_user(), bindir=user_bin())
    try:
        c.start()
        assert proc_status(c.pid)["Uid"].split()[0] == str(test_user.pw_uid)
        h = c.health()
        assert h["status"] == "ok"
        assert [d["name"] for d in h["daemons"]] == DAEMONS
        for d in h["daemons"]:
            assert d["up"] is True and d["restarts"] == 0, d
            st = proc_status(d["pid"])
            assert [int(x) for x in st["Uid"].split()] == \
                [test_user.pw_uid] * 4, (d["name"], st["Uid"])
            assert [int(x) for x in st["Gid"].split()] == \
                [test_user.pw_gid] * 4, (d["name"], st["Gid"])
            assert st["NoNewPrivs"] == "1", (d["name"], st)
            assert st["Seccomp"] == "2", (d["name"], st)
            assert st["CapEff"] == "0000000000000000", (d["name"], st)
            s = d["status"]
            assert s["uid"] == test_user.pw_uid, d
            assert (s["noNewPrivs"], s["seccomp"], s["capEff"]) == \
                (1, 2, "0000000000000000"), d
        # files cordon wrote belong to the user
        for rel in ("run/token", "run/port", "audit"):
            st = os.stat(os.path.join(user_home, rel))
            assert st.st_uid == test_user.pw_uid, rel
        starts = {d["pid"]: proc_starttime(d["pid"]) for d in h["daemons"]}
        assert c.stop() == 0, c.stderr()
        for pid, st in starts.items():
            assert proc_starttime(pid) != st, f"daemon {pid} still alive"
        assert not c.leftovers()
    finally:
        finish(c)


def test_su1_unprivileged_user_flag_refused(test_user, user_home):
    p = run_once(["run", "--home", user_home, "--port", "0", "--user",
                  "nobody"], prefix=as_user(), bindir=user_bin())
    assert not p.started
    assert p.returncode == 2, p.stderr
    assert not os.path.exists(os.path.join(user_home, "run"))


def test_su1_user_cannot_lend_root_a_symlink(test_user, user_home):
    """SU-1: as root with --user NAME, cordon makes and chowns its dirs
    through what it opened, never by path: a `state` that NAME made a
    symlink to a root-owned dir is refused, and that dir keeps its owner
    and mode (a chown by path followed such a link swapped in after the
    check)."""
    target = tempfile.mkdtemp(prefix="cordon-it-root-", dir="/tmp")
    try:
        os.chmod(target, 0o755)
        os.symlink(target, os.path.join(user_home, "state"))
        os.lchown(os.path.join(user_home, "state"), test_user.pw_uid,
                  test_user.pw_gid)
        p = run_once(["run", "--home", user_home, "--port", "0", "--user",
                      USER])
        assert not p.started
        assert p.returncode == 1, p.stderr
        assert b"is not a directory" in p.stderr, p.stderr
        st = os.stat(target)
        assert (st.st_uid, st.st_mode & 0o7777) == (0, 0o755)
    finally:
        shutil.rmtree(target, ignore_errors=True)
