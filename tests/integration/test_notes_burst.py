# Chat notes of many runs that end together (VA-5): the spawner sends
# them to vaultd a few at a time and queues the rest, holding each run's
# transcript until its turn; every run still gets its own note saved,
# whole, and its saved event.  Touches only temp dirs it creates.
import json
import pathlib
import time

from agents_util import Stream, make_agents_home, server_env
from conftest import HTTP_S, SLOW


def test_va5_runs_ending_together_each_save_their_note(tmp_path, monkeypatch,
                                                       cordon_factory):
    """Twelve runs wake at the same instant and print 2000 lines each:
    their notes reach the spawner's queue together (more than it sends
    to vaultd at once); each stream ends done, then saved with
    a note of its own that holds its whole response."""
    server_env(monkeypatch)
    n = 12
    home = make_agents_home(tmp_path)
    (home / "cordon.yaml").write_text(
        f"spawner:\n  maxRuns: {n}\n  maxRunsPerAgent: {n}\n")
    c = cordon_factory(home=home)
    wake = time.time() + (12 if SLOW else 4)
    streams = [Stream(c, "hermes", f"until {wake:.3f} n{i}")
               for i in range(n)]
    for s in streams:
        s.start()
        assert s.status == 200
    paths = set()
    for i, s in enumerate(streams):
        ev = s.finish(bound=HTTP_S * 2)
        s.close()
        kinds = [e["kind"] for e in ev]
        assert kinds[-2:] == ["done", "saved"], (i, kinds[-3:])
        assert ev[-2]["truncated"] is False
        note = (pathlib.Path(c.home) / "vault" / ev[-1]["path"]).read_text()
        woke = [ln.rstrip("\\") for ln in note.splitlines()
                if ln.startswith("woke ")]
        assert woke == [f"woke n{i} line {k}" for k in range(2000)], \
            (i, woke[:2], woke[-2:])
        paths.add(ev[-1]["path"])
    assert len(paths) == n, json.dumps(sorted(paths))
