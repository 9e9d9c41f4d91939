# Detached jobs (MC-3) over the API: started, listed, read from an
# offset, awaited, cancelled; kept on disk through a broker restart;
# marked lost when the spawner dies under them; bounded by retention;
# every hostile input answered with a fixed code and no echo.  A real
# cordon with a temp home and the fake agents.  Touches only the temp
# home and sockets to 127.0.0.1.
import json
import os
import re
import signal
import time

import pytest

from agents_util import (FILE_SECRET, audit_records, make_agents_home,
                         post_json, run, server_env, wait_audit)
from conftest import HTTP_S, session_headers

NONCE = "job-nonce-7e2a41"


@pytest.fixture
def agents(tmp_path, monkeypatch, cordon_factory):
    server_env(monkeypatch)
    return cordon_factory(home=make_agents_home(tmp_path))


def start(c, agent, prompt, **extra):
    r = post_json(c, f"/api/agents/{agent}/jobs",
                  dict({"prompt": prompt}, **extra))
    assert r is not None and r.status == 200, (r, c.stderr())
    o = r.json()
    assert o["ok"] is True and set(o) == {"ok", "jobId"}, o
    assert re.fullmatch(r"[0-9a-f]{16}", o["jobId"]), o
    return o["jobId"]


def get(c, target):
    r = c.request("GET", target)
    assert r is not None
    return r


def wait(c, jid, ms=20000):
    r = get(c, f"/api/jobs/{jid}/wait?timeoutMs={ms}")
    assert r.status == 200, r
    return r.json()


def events(c, jid, offset=0, limit=None):
    q = f"offset={offset}" + (f"&limit={limit}" if limit else "")
    r = get(c, f"/api/jobs/{jid}/events?{q}")
    assert r.status == 200, r
    return r.json()


def error(r):
    assert r is not None
    return r.status, r.json()["error"]


def jobs_dir(c):
    return os.path.join(c.home, "state", "jobs")


def test_mc3_job_runs_detached_and_is_read_from_offsets(agents):
    c = agents
    jid = start(c, "hermes", "slowtokens 3 " + NONCE)
    listed = get(c, "/api/jobs").json()["jobs"]
    assert [j["jobId"] for j in listed] == [jid]
    assert listed[0]["state"] == "running" and listed[0]["agent"] == "hermes"
    # A wait shorter than the job: it says so, still running.
    w = wait(c, jid, 100)
    assert w["timedOut"] is True and w["job"]["state"] == "running"
    w = wait(c, jid)
    assert w["timedOut"] is False, w
    job = w["job"]
    assert job["state"] == "succeeded" and job["exitCode"] == 0, job
    assert job["endedMs"] >= job["createdMs"] and "cancelReason" not in job
    allev = events(c, jid)
    evs = allev["events"]
    assert allev["next"] == len(evs) == job["events"]
    kinds = [e["kind"] for e in evs]
    assert kinds[0] == "start" and evs[0]["runId"] == jid
    assert "done" in kinds and kinds[-1] in ("done", "saved"), kinds
    text = "".join(e["text"] for e in evs if e["kind"] == "token")
    assert "tick 0" in text and "tick 2" in text
    # Exactly the stream of API-3: the same kinds in the same order
    # (token chunking aside) as a run of the same prompt.
    _, stream = run(c, "hermes", "slowtokens 3 " + NONCE)
    squash = lambda ks: [k for i, k in enumerate(ks)  # noqa: E731
                         if k != "token" or i == 0 or ks[i - 1] != "token"]
    assert squash(kinds) == squash([e["kind"] for e in stream])
    done = [e for e in evs if e["kind"] == "done"][0]
    assert "pending" not in done
    # From an offset: the rest, the same events; paged by limit.
    assert events(c, jid, 2)["events"] == evs[2:]
    page = events(c, jid, 1, limit=2)
    assert page["events"] == evs[1:3] and page["next"] == 3
    # At the end: none, and next stays.
    end = events(c, jid, len(evs))
    assert end["events"] == [] and end["next"] == len(evs)
    # Past the end: refused.
    assert error(get(c, f"/api/jobs/{jid}/events?offset={len(evs) + 1}")) \
        == (400, "invalid-offset")
    # Status alone.
    st = get(c, f"/api/jobs/{jid}").json()
    assert st["ok"] is True and st["job"] == job
    # AU: job.start and job.end, the run's own records beside them.
    s = wait_audit(c.home, lambda x: x["kind"] == "job.start" and
                   x["jobId"] == jid)
    assert s[0]["agent"] == "hermes" and "via" not in s[0]
    e = wait_audit(c.home, lambda x: x["kind"] == "job.end" and
                   x["jobId"] == jid)
    assert e[0]["state"] == "succeeded" and e[0]["events"] == len(evs)
    wait_audit(c.home, lambda x: x["kind"] == "agent.invoke.complete" and
               x["runId"] == jid)
    # AU-5: the prompt's nonce is in no audit record.
    assert NONCE not in json.dumps(audit_records(c.home))
    # On disk: meta and events, 0600, in a 0700 dir of the state dir.
    d = jobs_dir(c)
    assert os.stat(d).st_mode & 0o777 == 0o700
    assert sorted(os.listdir(d)) == [f"{jid}.json", f"{jid}.jsonl"]
    for n in os.listdir(d):
        assert os.stat(os.path.join(d, n)).st_mode & 0o777 == 0o600
    with open(os.path.join(d, f"{jid}.jsonl")) as f:
        assert [json.loads(ln) for ln in f] == evs


def test_mc3_job_events_are_scrubbed(agents):
    c = agents
    jid = start(c, "hermes", "leak")
    assert wait(c, jid)["job"]["state"] == "succeeded"
    text = "".join(e["text"] for e in events(c, jid)["events"]
                   if e["kind"] == "token")
    assert "***" in text and "AKIA" not in text and "/home/alice" not in text
    # SP-11: the file itself holds no secret either.
    raw = open(os.path.join(jobs_dir(c), f"{jid}.jsonl"), "rb").read()
    assert FILE_SECRET.encode() not in raw and b"AKIAIOSFODNN7" not in raw


def test_mc3_job_events_paged_over_a_megabyte(agents):
    # Pages end near 1 MiB of lines: read on in order, from any offset
    # and backwards, every page is the file's own lines at that place.
    c = agents
    jid = start(c, "hermes", "lines 250000")
    job = wait(c, jid)["job"]
    assert job["state"] == "succeeded" and job["bytes"] > (1 << 20), job
    with open(os.path.join(jobs_dir(c), f"{jid}.jsonl")) as f:
        evs = [json.loads(ln) for ln in f]
    assert len(evs) == job["events"]
    got, off, pages = [], 0, 0
    while off < len(evs):
        page = events(c, jid, off, limit=1000)
        assert page["events"] and page["next"] == off + len(page["events"])
        got += page["events"]
        off = page["next"]
        pages += 1
    assert got == evs and pages >= 2
    text = "".join(e["text"] for e in got if e["kind"] == "token")
    assert text.startswith("line 0\n") and "line 249999\n" in text
    for o in (len(evs) - 1, 1, len(evs) // 2, 0, len(evs) // 2 + 1, 3):
        page = events(c, jid, o, limit=2)
        assert page["events"] == evs[o:o + 2], o
        assert page["next"] == o + len(evs[o:o + 2])
    assert events(c, jid, len(evs))["events"] == []


def test_mc3_cancel_records_the_reason(agents):
    c = agents
    jid = start(c, "hermes", "sleep 30", via="mcp")
    r = post_json(c, f"/api/jobs/{jid}/cancel", {})
    assert r.status == 200 and r.json() == {"ok": True}, r
    job = wait(c, jid)["job"]
    assert job["state"] == "cancelled" and job["cancelReason"] == "requested"
    assert job["via"] == "mcp"
    done = [e for e in events(c, jid)["events"] if e["kind"] == "done"]
    assert done and done[0]["cancelled"] is True
    # Over: nothing left to cancel.
    assert error(post_json(c, f"/api/jobs/{jid}/cancel", {})) == \
        (409, "job-not-running")
    # A job's run is not a chat run: cancelled as a job only.
    assert error(post_json(c, f"/api/runs/{jid}/cancel", {})) == \
        (404, "unknown-run")
    s = wait_audit(c.home, lambda x: x["kind"] == "job.start" and
                   x["jobId"] == jid)
    assert s[0]["via"] == "mcp"
    inv = wait_audit(c.home, lambda x: x["kind"] == "agent.invoke" and
                     x["runId"] == jid)
    assert inv[0]["via"] == "mcp"
    e = wait_audit(c.home, lambda x: x["kind"] == "job.end" and
                   x["jobId"] == jid)
    assert e[0]["state"] == "cancelled" and \
        e[0]["cancelReason"] == "requested"


def pid_of(c, name):
    return c.daemon_pids()[name]


def restarted(c, name, old):
    c.health_when(lambda h: any(d["name"] == name and d["up"] and
                                d.get("pid") not in (None, old)
                                for d in h["daemons"]))


def test_mc3_job_survives_a_broker_restart(agents):
    c = agents
    jid = start(c, "hermes", "slowtokens 6")
    old = pid_of(c, "broker")
    os.kill(old, signal.SIGKILL)
    restarted(c, "broker", old)
    # The new broker reads the same job, which ran on.
    job = wait(c, jid)["job"]
    assert job["state"] == "succeeded", job
    text = "".join(e["text"] for e in events(c, jid)["events"]
                   if e["kind"] == "token")
    assert all(f"tick {i}" in text for i in range(6)), text


def test_mc3_spawner_death_marks_its_jobs_lost(agents):
    c = agents
    jid = start(c, "hermes", "sleep 60")
    ev = events(c, jid)["events"]
    assert ev[0]["kind"] == "start"
    old = pid_of(c, "spawner")
    os.kill(old, signal.SIGKILL)
    restarted(c, "spawner", old)
    deadline = time.monotonic() + HTTP_S
    while True:
        r = get(c, f"/api/jobs/{jid}")
        if r.status == 200:
            break
        assert time.monotonic() < deadline, r
        time.sleep(0.05)
    job = r.json()["job"]
    # Never silently running: lost, ended, its events still there.
    assert job["state"] == "lost" and "endedMs" in job, job
    assert events(c, jid)["events"][0] == ev[0]
    assert wait(c, jid, 100)["timedOut"] is False
    assert error(post_json(c, f"/api/jobs/{jid}/cancel", {})) == \
        (409, "job-not-running")
    e = wait_audit(c.home, lambda x: x["kind"] == "job.end" and
                   x["jobId"] == jid)
    assert e[0]["state"] == "lost"


def test_mc3_retention_keeps_the_newest(tmp_path, monkeypatch,
                                        cordon_factory):
    server_env(monkeypatch)
    home = make_agents_home(tmp_path)
    (home / "cordon.yaml").write_text("spawner:\n  jobsKeep: 2\n")
    c = cordon_factory(home=home)
    ids = []
    for i in range(4):
        ids.append(start(c, "hermes", f"hello {i}"))
        assert wait(c, ids[-1])["job"]["state"] == "succeeded"
    listed = [j["jobId"] for j in get(c, "/api/jobs").json()["jobs"]]
    assert listed == [ids[3], ids[2]]
    assert sorted(os.listdir(jobs_dir(c))) == sorted(
        f"{j}.{x}" for j in ids[2:] for x in ("json", "jsonl"))
    assert error(get(c, f"/api/jobs/{ids[0]}")) == (404, "unknown-job")


def test_mc3_retention_bounds_the_bytes_kept(tmp_path, monkeypatch,
                                             cordon_factory):
    server_env(monkeypatch)
    home = make_agents_home(tmp_path)
    (home / "cordon.yaml").write_text("spawner:\n  jobsKeepMiB: 1\n")
    c = cordon_factory(home=home)
    big = start(c, "hermes", "lines 120000")  # > 1 MiB of events
    job = wait(c, big)["job"]
    assert job["state"] == "succeeded" and job["bytes"] > 1 << 20, job
    # Alone and running when it ended: kept whole, never cut short.
    assert [j["jobId"] for j in get(c, "/api/jobs").json()["jobs"]] == [big]
    small = start(c, "hermes", "hello")
    wait(c, small)
    # The newest ended job stays; the oldest went to fit the bound.
    assert [j["jobId"] for j in get(c, "/api/jobs").json()["jobs"]] == \
        [small]
    assert sorted(os.listdir(jobs_dir(c))) == [f"{small}.json",
                                               f"{small}.jsonl"]


def test_mc3_hostile_inputs_fixed_codes_no_echo(agents):
    c = agents
    jid = start(c, "hermes", "hello")
    wait(c, jid)
    bad_ids = ["..%2F..%2Fetc%2Fpasswd", "a.b", "x" * 81, "%00abc",
               "a%2Fb", "..", "%2e%2e", "job~1", "a%20b"]
    for bid in bad_ids:
        for t in (f"/api/jobs/{bid}", f"/api/jobs/{bid}/events",
                  f"/api/jobs/{bid}/wait"):
            r = get(c, t)
            assert error(r) == (400, "invalid-job-id"), (t, r)
            assert bid.encode() not in r.body
        r = post_json(c, f"/api/jobs/{bid}/cancel", {})
        assert error(r) == (400, "invalid-job-id"), (bid, r)
    # The id's shape, but nobody's job.
    for unknown in ("0123456789abcdef", "Z" * 80, "a_b-c"):
        assert error(get(c, f"/api/jobs/{unknown}")) == (404, "unknown-job")
        assert error(post_json(c, f"/api/jobs/{unknown}/cancel", {})) == \
            (404, "unknown-job")
    # Queries: huge, negative, non-numeric, unknown, repeated, over bound.
    for q in ("offset=99999999999999999", "offset=-1", "offset=abc",
              "offset=1&offset=2", "limit=0", "limit=1001", "x=1",
              "offset", "offset=%00"):
        r = get(c, f"/api/jobs/{jid}/events?{q}")
        assert error(r) == (400, "invalid-query"), (q, r)
    assert error(get(c, f"/api/jobs/{jid}/events?offset=9007199254740992"))\
        == (400, "invalid-offset")
    for q in ("timeoutMs=60001", "timeoutMs=-5", "timeoutMs=1e3", "t=1"):
        assert error(get(c, f"/api/jobs/{jid}/wait?{q}")) == \
            (400, "invalid-query"), q
    assert error(get(c, "/api/jobs?limit=5")) == (400, "invalid-query")
    # Start bodies: strict, as API-3's.
    for body, code in (({"prompt": "x", "extra": 1}, "invalid-body"),
                       ({"prompt": "x", "via": "web"}, "invalid-body"),
                       ({"prompt": 5}, "invalid-prompt"),
                       ({"prompt": "x", "session": "a/b"},
                        "invalid-session"),
                       ({}, "invalid-body")):
        r = post_json(c, "/api/agents/hermes/jobs", body)
        assert error(r) == (400, code), (body, r)
    assert error(post_json(c, "/api/agents/nope/jobs", {"prompt": "x"})) \
        == (404, "unknown-agent")
    # A cancel takes no input.
    assert error(post_json(c, f"/api/jobs/{jid}/cancel", {"why": "x"})) == \
        (400, "invalid-body")
    # Nothing of that made a job.
    assert [j["jobId"] for j in get(c, "/api/jobs").json()["jobs"]] == [jid]


def test_mc3_cookie_cancel_needs_our_referer(agents):
    c = agents
    jid = start(c, "hermes", "sleep 30")
    sess = session_headers(*c.session())
    # PER-7: a cookie-authenticated state change from elsewhere.
    r = c.request("POST", f"/api/jobs/{jid}/cancel", auth=False,
                  headers=sess + [("Content-Type", "application/json")],
                  body=b"{}")
    assert r.status == 403, r
    assert get(c, f"/api/jobs/{jid}").json()["job"]["state"] == "running"
    r = c.request("POST", f"/api/jobs/{jid}/cancel", auth=False,
                  headers=sess + [("Content-Type", "application/json"),
                                  ("Referer",
                                   f"http://127.0.0.1:{c.port}/ui/")],
                  body=b"{}")
    assert r.status == 200, r
    assert wait(c, jid)["job"]["state"] == "cancelled"


def test_mc3_stopping_cordon_cancels_its_jobs_and_a_new_one_reads_them(
        tmp_path, monkeypatch, cordon_factory):
    server_env(monkeypatch)
    home = make_agents_home(tmp_path)
    c = cordon_factory(home=home)
    done = start(c, "hermes", "hello")
    wait(c, done)
    jid = start(c, "hermes", "sleep 60")
    assert c.stop() == 0
    c2 = cordon_factory(home=home)
    job = get(c2, f"/api/jobs/{jid}").json()["job"]
    # Stopped by cordon, and it says so; never lost, never running.
    assert job["state"] == "cancelled" and job["cancelReason"] == "shutdown"
    assert get(c2, f"/api/jobs/{done}").json()["job"]["state"] == \
        "succeeded"
    e = wait_audit(c2.home, lambda x: x["kind"] == "job.end" and
                   x["jobId"] == jid)
    assert e[0]["cancelReason"] == "shutdown"


def test_mc3_jobs_dir_that_is_a_link_is_refused(tmp_path, monkeypatch,
                                                cordon_factory):
    server_env(monkeypatch)
    home = make_agents_home(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / "state").mkdir(mode=0o700)
    os.symlink(elsewhere, home / "state" / "jobs")
    c = cordon_factory(home=home)
    r = post_json(c, "/api/agents/hermes/jobs", {"prompt": "hello"})
    # Fail closed: no job where it could not be kept, nothing written
    # through the link, and no run started.
    assert error(r) == (503, "jobs-unavailable")
    assert os.listdir(elsewhere) == []
    assert not [x for x in audit_records(c.home, "agent.invoke")]
    assert get(c, "/api/jobs").json()["jobs"] == []


def test_mc3_cordon_job_cli(agents):
    import subprocess
    from conftest import child_env, cordon_bin

    c = agents

    def cli(*args):
        return subprocess.run([cordon_bin(), "job", *args, "--home", c.home]
                              if args[0] != "bad" else
                              [cordon_bin(), "job", *args[1:]],
                              capture_output=True, text=True,
                              timeout=HTTP_S, env=child_env())

    jid = start(c, "hermes", "slowtokens 2")
    wait(c, jid)
    r = cli("list")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:3] == ["JOB", "AGENT", "STATE"]
    assert lines[1].split()[:3] == [jid, "hermes", "succeeded"]
    r = cli("list", "--json")
    assert json.loads(r.stdout)["jobs"][0]["jobId"] == jid
    r = cli("show", jid)
    assert r.returncode == 0, r.stderr
    assert "state         succeeded" in r.stdout
    assert "tick 0" in r.stdout and "tick 1" in r.stdout
    doc = json.loads(cli("show", jid, "--json").stdout)
    assert doc["job"]["jobId"] == jid
    assert doc["events"] == events(c, jid)["events"]
    # A running job, cancelled from the command line.
    run_id = start(c, "hermes", "sleep 30")
    r = cli("cancel", run_id)
    assert r.returncode == 0 and "cancel asked" in r.stdout, r.stderr
    assert wait(c, run_id)["job"]["state"] == "cancelled"
    r = cli("cancel", run_id)
    assert r.returncode == 1 and "not running" in r.stderr
    r = cli("show", "nobody-s-job")
    assert r.returncode == 1 and "no such job" in r.stderr
    # An id off its pattern: usage, before any call, never echoed.
    for bad in ("../etc", "a b", "x" * 81, ""):
        r = cli("bad", "show", bad, "--home", c.home)
        assert r.returncode == 2 and r.stderr.startswith("usage:")
        assert "../etc" not in r.stderr
    assert cli("bad", "frobnicate").returncode == 2
