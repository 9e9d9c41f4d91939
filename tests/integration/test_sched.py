# MI-1: cordon-sched, the missions' cron scheduler, and the spawner's side
# of its one edge.  sched is driven directly as cordond would (fd 3, a
# fake spawner channel): it fires only what the spawner declared, writes
# its state before it fires, and refuses a hostile list or state file.
# The spawner is driven the same way with fake peers: it admits a fire
# only from sched, only for a declared cron mission, only in its shape.
# Under cordond: sched killed mid-run is restarted and never fires a
# slot twice.
import json
import os
import signal
import time

import pytest

from agents_util import FAKE_DIR, make_agents_home
from audit_util import MSG_AUDIT_RECORD, MSG_ERROR, Driven
from conftest import BUILD, HTTP_S, RESTART_S, child_env
from test_missions import (CRON, SETTLE, T0, clocked, mission_records,  # noqa: F401
                           set_clock, wait_records, write_missions)

# common/msg.h
MSG_PEER_BAD = 14
MSG_MISSION_CRON, MSG_MISSION_FIRE = 84, 85

EVERY = {"id": "tick", "cron": "* * * * *", "timezone": "UTC"}
HOURLY = {"id": "hourly", "cron": "0 * * * *", "timezone": "UTC"}
NONCE = "n0nce7e5"


def until(pred, bound=HTTP_S):
    deadline = time.monotonic() + bound
    while True:
        v = pred()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(0.05)


def frames(ch, typ):
    return [body for t, _, body in list(ch.stray) if t == typ]


class Sched(Driven):
    """cordon-sched on a state dir, with a fake spawner channel."""

    def __init__(self, tmp_path, clock):
        self.dir = str(tmp_path / "sched")
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        self.state = os.path.join(self.dir, "missions.json")
        env = dict(child_env(), CORDON_TEST_CLOCK_FILE=str(clock))
        super().__init__([os.path.join(BUILD, "cordon-sched"),
                          "--state-dir", self.dir], env,
                         str(tmp_path / "sched.stderr"), ("spawner",))
        self.spawner = self.peers["spawner"]

    def declare(self, missions, raw=None):
        self.spawner.send(MSG_MISSION_CRON, {"missions": missions},
                          want_reply=False, raw=raw)

    def fires(self):
        return frames(self.spawner, MSG_MISSION_FIRE)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        for ch in [self.parent, *self.peers.values()]:
            ch.sock.close()
        self._err.close()
        return self.proc.returncode


@pytest.fixture
def sched(tmp_path, clocked):
    started = []

    def start():
        s = Sched(tmp_path, clocked)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def test_mi1_sched_fires_once_per_slot_state_first(sched, clocked):
    set_clock(clocked, T0 + 5)
    s = sched()
    s.declare([EVERY])
    assert until(s.fires), s.stderr()
    assert s.fires() == [{"id": "tick", "now": True, "missed": False}]
    # Written before the fire was sent.
    with open(s.state) as f:
        assert json.load(f) == {"tick": {"lastSlot": T0}}
    assert os.stat(s.state).st_mode & 0o777 == 0o600
    # One list per channel: a second one changes nothing.
    s.declare([dict(EVERY, id="other")])
    set_clock(clocked, T0 + 50)
    time.sleep(SETTLE)
    assert len(s.fires()) == 1
    set_clock(clocked, T0 + 61)
    assert until(lambda: len(s.fires()) == 2)
    time.sleep(SETTLE)
    assert [f["id"] for f in s.fires()] == ["tick", "tick"]
    assert "not admitted" in s.stderr()


def test_mi1_sched_restart_never_fires_a_slot_twice(sched, clocked):
    set_clock(clocked, T0 + 5)
    s = sched()
    s.declare([EVERY])
    assert until(s.fires), s.stderr()
    s.proc.kill()
    s.proc.wait(10)
    s2 = sched()
    s2.declare([EVERY])
    time.sleep(SETTLE)
    assert s2.fires() == [], s2.stderr()
    set_clock(clocked, T0 + 65)
    assert until(s2.fires) == [{"id": "tick", "now": True, "missed": False}]


def test_mi1_sched_missed_slot_sent_as_missed(sched, clocked):
    set_clock(clocked, T0 + 190)  # 05:03; 05:00 passed while it was down
    s = sched()
    with open(s.state, "w") as f:
        json.dump({"hourly": {"lastSlot": T0 - 60}}, f)
    s.stop()
    s = sched()
    s.declare([HOURLY])
    assert until(s.fires) == [{"id": "hourly", "now": False,
                               "missed": True}], s.stderr()


BAD_LISTS = {
    "cron": [dict(EVERY, cron="61 * * * *")],
    "zone": [dict(EVERY, timezone="../../../etc/" + NONCE)],
    "id": [dict(EVERY, id="../" + NONCE)],
    "duplicate": [EVERY, dict(EVERY, cron="0 * * * *")],
    "leftover": [dict(EVERY, prompt=NONCE)],
    "missing": [{"id": "tick", "cron": "* * * * *"}],
    "not-an-object": [NONCE],
    "too-many": [dict(EVERY, id=f"m{i}") for i in range(65)],
}


@pytest.mark.parametrize("case", sorted(BAD_LISTS))
def test_mi1_sched_refuses_a_hostile_list_whole(sched, clocked, case):
    set_clock(clocked, T0 + 5)
    s = sched()
    s.declare(BAD_LISTS[case] + [dict(EVERY, id="good")])
    time.sleep(SETTLE)
    assert s.fires() == []
    assert not os.path.exists(s.state)
    err = s.stderr()
    assert "refused" in err and NONCE not in err
    assert s.proc.poll() is None


def test_mi1_sched_refuses_a_frame_not_its_shape(sched, clocked):
    set_clock(clocked, T0 + 5)
    s = sched()
    s.declare(None, raw=b'{"missions": {"tick": 1}}')
    s.declare(None, raw=b"\xff" + NONCE.encode())
    s.declare([EVERY])
    assert until(s.fires), s.stderr()
    assert NONCE not in s.stderr()


@pytest.mark.parametrize("kind", ["symlink", "garbage", "fifo"])
def test_mi1_sched_state_file_refused_starts_clean(sched, clocked, tmp_path,
                                                   kind):
    set_clock(clocked, T0 + 190)
    s = sched()
    s.stop()
    # Followed, this one would say 05:00 was missed.
    target = tmp_path / "target.json"
    target.write_text(json.dumps({"hourly": {"lastSlot": T0 - 60}}))
    if kind == "symlink":
        os.symlink(target, s.state)
    elif kind == "garbage":
        with open(s.state, "wb") as f:
            f.write(b"\x00{" + NONCE.encode() * 10)
    else:
        os.mkfifo(s.state)
    s = sched()
    s.declare([HOURLY])
    assert until(lambda: os.path.isfile(s.state) and
                 not os.path.islink(s.state)), s.stderr()
    time.sleep(SETTLE)
    # Clean: nothing counts as missed; the refused file is replaced.
    assert s.fires() == []
    assert "state file refused; starting clean" in s.stderr()
    assert NONCE not in s.stderr()
    with open(s.state) as f:
        assert json.load(f) == {"hourly": {"lastSlot": T0 + 180}}
    assert json.loads(target.read_text()) == {"hourly":
                                              {"lastSlot": T0 - 60}}


# ---- the spawner's side of the edge ----

SPAWNER_PEERS = ("auditd", "vaultd", "egressd", "sched", "broker")


class Spawner(Driven):
    def __init__(self, tmp_path, home):
        state = tmp_path / "state"
        state.mkdir(mode=0o700)
        env = dict(child_env(), PATH=FAKE_DIR + ":/usr/bin:/bin")
        super().__init__([os.path.join(BUILD, "cordon-spawner"), "--home",
                          str(home), "--state-dir", str(state)], env,
                         str(tmp_path / "spawner.stderr"), SPAWNER_PEERS)

    def runs(self):
        return [r for r in frames(self.peers["auditd"], MSG_AUDIT_RECORD)
                if r.get("kind") == "mission.run"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        for ch in [self.parent, *self.peers.values()]:
            ch.sock.close()
        self._err.close()


@pytest.fixture
def spawner(tmp_path):
    home = make_agents_home(tmp_path)
    write_missions(home, {"tick": CRON["tick"], "manual": """
id: manual
label: Manual only
agent: hermes
prompt: "say manual"
outputs:
  - {type: event, event: m.done}
permissions: [event-emit]
trigger: {manual: true}
"""})
    sp = Spawner(tmp_path, home)
    yield sp
    sp.stop()


def test_mi1_spawner_declares_only_cron_ids_and_schedules(spawner):
    sch = spawner.peers["sched"]
    got = until(lambda: frames(sch, MSG_MISSION_CRON))
    assert got == [{"missions": [{"id": "tick", "cron": "* * * * *",
                                  "timezone": "Europe/Berlin"}]}]


def test_mi1_spawner_admits_a_fire_only_from_sched(spawner):
    fire = {"id": "tick", "now": True, "missed": False}
    for name in ("broker", "egressd", "auditd", "vaultd"):
        assert spawner.peers[name].ask(MSG_MISSION_FIRE, fire) == \
            (MSG_ERROR, {"error": "bad-message"})
    sch = spawner.peers["sched"]
    for bad in (dict(fire, now="yes"), dict(fire, prompt=NONCE),
                {"id": "tick", "now": True}, dict(fire, id="x" * 65)):
        assert sch.ask(MSG_MISSION_FIRE, bad) == \
            (MSG_ERROR, {"error": "bad-message"})
    # Undeclared: a manual-only mission, an unknown one, a path.
    for mid in ("manual", "ghost-" + NONCE, "../tick"):
        sch.send(MSG_MISSION_FIRE, dict(fire, id=mid), want_reply=False)
    # Nothing fired; the channel is still up: a good fire runs, once.
    sch.send(MSG_MISSION_FIRE, fire, want_reply=False)
    runs = until(spawner.runs)
    time.sleep(SETTLE)
    runs = spawner.runs()
    assert [(r["missionId"], r["trigger"]) for r in runs] == \
        [("tick", "cron")], spawner.stderr()
    err = spawner.stderr()
    assert "a fire for an undeclared mission refused" in err
    assert NONCE not in err
    assert frames(spawner.parent, MSG_PEER_BAD) == []
    assert spawner.proc.poll() is None


def test_mi1_spawner_bounds_the_records_fires_cause(spawner):
    """A flood of fires records at most one skip between two runs."""
    sch = spawner.peers["sched"]
    for _ in range(20):
        sch.send(MSG_MISSION_FIRE, {"id": "tick", "now": False,
                                    "missed": True}, want_reply=False)
    until(spawner.runs)
    time.sleep(SETTLE)
    assert [(r["status"], r.get("errorClass")) for r in spawner.runs()] \
        == [("skipped", "skipped-missed")]


# ---- under cordond ----

def test_mi1_sched_killed_is_restarted_and_never_fires_twice(
        clocked, tmp_path, cordon_factory):
    home = make_agents_home(tmp_path)
    write_missions(home, {"tick": CRON["tick"]})
    set_clock(clocked, T0 + 5)
    c = cordon_factory(home=home)
    is_tick = lambda r: r["missionId"] == "tick"  # noqa: E731
    assert len(wait_records(home, is_tick, 1)) == 1, c.stderr()
    old = c.daemon_pids()["sched"]
    os.kill(old, signal.SIGKILL)
    c.health_when(lambda h: any(d["name"] == "sched" and d["up"] and
                                d.get("pid") not in (None, old)
                                for d in h["daemons"]), RESTART_S)
    set_clock(clocked, T0 + 50)
    time.sleep(SETTLE)
    assert len(mission_records(home, "tick")) == 1
    set_clock(clocked, T0 + 61)
    wait_records(home, is_tick, 2)
    time.sleep(SETTLE)
    assert len(mission_records(home, "tick")) == 2
    st = [d for d in c.health()["daemons"] if d["name"] == "sched"][0]
    assert st["status"]["landlock"] == "on", st
    assert st["status"]["sched"]["declared"] is True
