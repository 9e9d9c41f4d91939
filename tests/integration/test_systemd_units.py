# SU-4 offline: the systemd units, sysusers.d and tmpfiles.d files that
# `meson install` puts in place, checked without a running systemd (PID 1
# here is not systemd).  The build in $CORDON_BUILD is installed into a
# temp root; systemd-analyze (verify, security --offline), systemd-sysusers
# and systemd-tmpfiles then work on that root only.  The socket-activation
# run of the daemons themselves is a separate test.
import os
import re
import shutil
import stat
import subprocess

import pytest

from conftest import BUILD

INSTANCE = "alice"  # the spawner and gated templates' instance here

SERVICES = ["cordon-auditd.service", "cordon-vaultd.service",
            "cordon-egressd.service", "cordon-gated@.service",
            "cordon-spawner@.service", "cordon-broker.service",
            "cordon-sched.service"]
SOCKETS = ["cordon-auditd.socket", "cordon-vaultd.socket",
           "cordon-egressd.socket", "cordon-gated@.socket",
           "cordon-spawner@.socket", "cordon-broker.socket"]
UNITS = SERVICES + SOCKETS + ["cordon.target"]

# SU-4: exposure limits (systemd-analyze's 0..10 scale).  egressd keeps
# the host's network (its job), which the scale counts against it.
EGRESSD_EXPOSURE_MAX = 1.5
EXPOSURE_MAX = {
    "cordon-broker.service": 1.0,
    "cordon-vaultd.service": 1.0,
    "cordon-auditd.service": 1.0,
    "cordon-egressd.service": EGRESSD_EXPOSURE_MAX,
    "cordon-gated@.service": 1.0,
    "cordon-spawner@.service": 3.0,
    "cordon-sched.service": 1.0,
}

# Who dials whom (sd_contract.md): the client units carry the group of
# each socket they dial, and no other.
SOCKET_GROUP = {
    "cordon-auditd.socket": "cordon-to-auditd",
    "cordon-vaultd.socket": "cordon-to-vaultd",
    "cordon-egressd.socket": "cordon-to-egressd",
    "cordon-gated@.socket": "cordon-to-gated",
    "cordon-spawner@.socket": "cordon-to-spawner",
}
CLIENT_GROUPS = {
    "cordon-broker.service": {"cordon-to-spawner", "cordon-to-vaultd",
                              "cordon-to-auditd", "cordon-to-egressd",
                              "cordon-to-gated"},
    "cordon-spawner@.service": {"cordon-to-vaultd", "cordon-to-auditd",
                                "cordon-to-egressd", "cordon-to-gated"},
    "cordon-vaultd.service": {"cordon-to-auditd"},
    "cordon-egressd.service": {"cordon-to-auditd"},
    "cordon-gated@.service": {"cordon-to-auditd"},
    "cordon-auditd.service": set(),
    "cordon-sched.service": {"cordon-to-spawner"},
}

# DESIGN.md's table: what each daemon may write.
DIALLED_BY = {
    "cordon-auditd.service": ["broker", "egressd", "gated", "spawner",
                              "vaultd"],
    "cordon-vaultd.service": ["broker", "spawner"],
    "cordon-egressd.service": ["broker", "spawner"],
    "cordon-gated@.service": ["broker", "spawner"],
    "cordon-spawner@.service": ["broker", "sched"],
    "cordon-broker.service": [],
    "cordon-sched.service": [],
}
WRITE_PATHS = {
    "cordon-broker.service": [],
    "cordon-auditd.service": ["/var/log/cordon/audit"],
    "cordon-vaultd.service": ["/var/lib/cordon/vault/00_Inbox/cordon"],
    "cordon-egressd.service": [],
    "cordon-gated@.service": [],
    "cordon-spawner@.service": [],  # StateDirectory= and its agents' home
    "cordon-sched.service": ["/var/lib/cordon/sched"],
}

LANDLOCK_SECCOMP = {"landlock_create_ruleset", "landlock_add_rule",
                    "landlock_restrict_self", "seccomp"}
SYSTEMD_TOOLS = ["systemd-analyze", "systemd-sysusers", "systemd-tmpfiles"]
TIMEOUT_S = 300


def need_tools():
    missing = [t for t in SYSTEMD_TOOLS if shutil.which(t) is None]
    if missing:
        # Not a skip: SU-4 is unchecked without them.
        pytest.fail("SU-4: %s not found; install Debian's `systemd` "
                    "package (scripts/deps.sh test)" % " ".join(missing))


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True,
                          timeout=TIMEOUT_S, **kw)


def parse_unit(path):
    """A unit file as {section: [(key, value), ...]}; continuations joined,
    comments dropped, repeated keys kept in order."""
    sections, cur, pending = {}, None, ""
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if pending:
                line = pending + " " + line.strip()
                pending = ""
            s = line.strip()
            if not s or s[0] in "#;":
                continue
            if s.endswith("\\"):
                pending = s[:-1].rstrip()
                continue
            if s.startswith("[") and s.endswith("]"):
                cur = sections.setdefault(s[1:-1], [])
                continue
            key, _, val = s.partition("=")
            assert cur is not None, f"{path}: {s!r} outside a section"
            cur.append((key.strip(), val.strip()))
    return sections


def values(unit, section, key):
    return [v for k, v in unit.get(section, []) if k == key]


def last(unit, section, key):
    vals = values(unit, section, key)
    return vals[-1] if vals else None


def words(unit, section, key):
    out = []
    for v in values(unit, section, key):
        out.extend(v.split())
    return out


def host_unit_dir():
    for d in ("/lib/systemd/system", "/usr/lib/systemd/system"):
        if os.path.isfile(os.path.join(d, "sysinit.target")):
            return d
    pytest.fail("SU-4: no systemd unit directory with sysinit.target on "
                "this host (install Debian's `systemd` package)")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """`meson install --destdir` of $CORDON_BUILD, plus what verify needs
    of a base system: the host's own units (sysinit.target, ...) and the
    non-cordon programs the units run.  Returns (root, {unit: path})."""
    need_tools()
    r = str(tmp_path_factory.mktemp("sysroot"))
    p = run(["meson", "install", "-C", BUILD, "--destdir", r,
             "--quiet"])
    assert p.returncode == 0, f"meson install failed:\n{p.stdout}{p.stderr}"

    found = {}
    for dirpath, _, files in os.walk(r):
        for name in files:
            if name in UNITS and "/systemd/system" in dirpath:
                found[name] = os.path.join(dirpath, name)
            elif name == "cordon.conf" and dirpath.endswith("sysusers.d"):
                found["sysusers"] = os.path.join(dirpath, name)
            elif name == "cordon.conf" and dirpath.endswith("tmpfiles.d"):
                found["tmpfiles"] = os.path.join(dirpath, name)
    missing = [u for u in UNITS + ["sysusers", "tmpfiles"]
               if u not in found]
    assert not missing, (
        f"meson install put no {missing} under {r} "
        "(was the build configured with -Dsystemd=false?)")

    # The base system: host units (never a cordon one) and helper programs.
    dst = os.path.join(r, "lib/systemd/system")
    os.makedirs(dst, exist_ok=True)
    src = host_unit_dir()
    for name in os.listdir(src):
        if name.startswith("cordon"):
            continue
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if os.path.lexists(d):
            continue
        if os.path.islink(s):
            os.symlink(os.readlink(s), d)
        elif os.path.isdir(s):
            shutil.copytree(s, d, symlinks=True)
        else:
            shutil.copy2(s, d)
    for unit in SERVICES:
        u = parse_unit(found[unit])
        for key in ("ExecStartPre", "ExecStart", "ExecStartPost",
                    "ExecStop", "ExecCondition"):
            for v in values(u, "Service", key):
                prog = v.lstrip("-@:+!").split()[0]
                if os.path.basename(prog).startswith("cordon"):
                    continue  # must come from the install itself
                inroot = r + prog
                if not os.path.exists(inroot) and os.path.exists(prog):
                    os.makedirs(os.path.dirname(inroot), exist_ok=True)
                    shutil.copy2(prog, inroot)
    return r, found


def instance(unit):
    return unit.replace("@.", f"@{INSTANCE}.")


@pytest.mark.parametrize("unit", UNITS)
def test_verify(root, unit):
    """SU-4: `systemd-analyze verify` accepts every installed unit: no
    error and no warning (unknown keys, bad values and missing ExecStart
    programs only warn, so any output fails)."""
    r, _ = root
    p = run(["systemd-analyze", "verify", f"--root={r}", "--man=no",
             "--generators=no", instance(unit)])
    out = (p.stdout + p.stderr).strip()
    assert p.returncode == 0 and out == "", (
        f"systemd-analyze verify {instance(unit)}: rc {p.returncode}\n"
        f"{out}")


@pytest.mark.parametrize("unit", sorted(EXPOSURE_MAX))
def test_security_exposure(root, unit):
    """SU-4: `systemd-analyze security --offline=true` rates broker,
    vaultd and auditd <= 1.0 and the spawner <= 3.0; the table is printed
    with the result."""
    r, _ = root
    limit = EXPOSURE_MAX[unit]
    name = instance(unit)
    # --threshold counts in tenths (0..100).
    p = run(["systemd-analyze", "security", "--offline=true", f"--root={r}",
             f"--threshold={int(limit * 10)}", "--no-pager", name],
            env=dict(os.environ, SYSTEMD_COLORS="0"))
    table = p.stdout + p.stderr
    print(f"\n--- systemd-analyze security {name} ---\n{table}")
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d)", table)
    assert m, f"no exposure level in:\n{table}"
    score = float(m.group(1))
    assert score <= limit and p.returncode == 0, (
        f"{name}: exposure {score} > {limit} (rc {p.returncode})\n{table}")


def test_sockets_groups_and_users(root):
    """SU-4: every .socket is 0660 with a group and the contract's fd
    name; the clients carry exactly the groups of the sockets they dial;
    the sysusers file defines every user and group the units name."""
    _, found = root
    units = {u: parse_unit(found[u]) for u in UNITS}

    for sock in SOCKETS:
        s = units[sock]
        assert last(s, "Socket", "Accept") == "no", sock
        if sock == "cordon-broker.socket":
            assert words(s, "Socket", "ListenStream") == ["127.0.0.1:8777"]
            assert last(s, "Socket", "FileDescriptorName") == "http"
            continue
        assert last(s, "Socket", "SocketMode") == "0660", sock
        assert last(s, "Socket", "SocketUser") == "root", sock
        assert last(s, "Socket", "SocketGroup") == SOCKET_GROUP[sock], sock
        assert last(s, "Socket", "FileDescriptorName") == "ipc", sock
        assert words(s, "Socket", "ListenStream") == [
            "/run/cordon/" + sock.split("-")[1].split("@")[0].split(".")[0]
            + ".sock"], sock

    for svc, groups in CLIENT_GROUPS.items():
        got = set(words(units[svc], "Service", "SupplementaryGroups"))
        assert got == groups, f"{svc}: SupplementaryGroups {got}"

    users, groups = set(), set()
    with open(found["sysusers"]) as f:
        for line in f:
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if parts[0] == "u":
                users.add(parts[1])
                groups.add(parts[1])  # u makes the same-named group
            elif parts[0] == "g":
                groups.add(parts[1])
            elif parts[0] == "m":
                groups.add(parts[2])
    named_users, named_groups = set(), set()
    for u in units.values():
        for sec in ("Service", "Socket"):
            named_users.update(values(u, sec, "User"))
            named_users.update(values(u, sec, "SocketUser"))
            named_groups.update(values(u, sec, "Group"))
            named_groups.update(values(u, sec, "SocketGroup"))
            named_groups.update(words(u, sec, "SupplementaryGroups"))
    named_users -= {"root", "%i"}  # %i: the operator's own account
    named_groups -= {"root"}
    assert named_users <= users, f"not in sysusers: {named_users - users}"
    assert named_groups <= groups, f"not in sysusers: {named_groups - groups}"
    assert {"cordon-auditd", "cordon-vaultd", "cordon-egressd",
            "cordon-broker", "cordon-sched"} <= users
    # gated is the operator (cordon-gated@USER): a group, not a user.
    assert "cordon-gated" not in users and "cordon-gated" in groups


def test_service_hardening_invariants(root):
    """SU-4 and the traps met on a live systemd: every daemon's own Landlock and
    seccomp calls pass the unit filter; no PrivateUsers= where peers are
    checked by SO_PEERCRED; no MemoryDenyWriteExecute= on the spawner
    (agents inherit it); write paths exactly DESIGN.md's table; every
    service reads CORDON_OPERATOR from /etc/cordon/operator.env."""
    _, found = root
    for svc in SERVICES:
        u = parse_unit(found[svc])
        allowed = set()
        for v in values(u, "Service", "SystemCallFilter"):
            if not v.startswith("~"):
                allowed.update(v.split())
        assert LANDLOCK_SECCOMP <= allowed, f"{svc}: {allowed}"
        assert "@system-service" in allowed, svc
        for v in values(u, "Service", "SystemCallFilter"):
            if v.startswith("~"):
                assert not (LANDLOCK_SECCOMP & set(v[1:].split())), svc
        # PrivateUsers= would make peers' uids read as 65534: never on a
        # unit that accepts peers; the broker and sched only dial, so
        # they have it.
        want_pu = ("yes",) if not DIALLED_BY[svc] else (None, "no")
        assert last(u, "Service", "PrivateUsers") in want_pu, svc
        assert last(u, "Service", "NoNewPrivileges") == "yes", svc
        assert last(u, "Service", "CapabilityBoundingSet") == "", svc
        assert last(u, "Service", "ProtectSystem") == "strict", svc
        assert last(u, "Service", "UMask") == "0077", svc
        assert last(u, "Service", "SystemCallArchitectures") == "native"
        assert words(u, "Service", "ReadWritePaths") == WRITE_PATHS[svc], svc
        exec_start = " ".join(values(u, "Service", "ExecStart"))
        # The operator's name comes from operator.env where it is used.
        want_env = (["/etc/cordon/operator.env"]
                    if "${CORDON_OPERATOR}" in exec_start
                    or "${CORDON_OPERATOR}" in " ".join(
                        values(u, "Service", "ExecStartPre")) else [])
        assert values(u, "Service", "EnvironmentFile") == want_env, svc
        # --peer names exactly the daemons that dial this one (a dialled
        # socket's SO_PEERCRED is systemd's and proves nothing).
        words_ = exec_start.replace("\\", " ").split()
        named = sorted(words_[i + 1].split("=")[0]
                       for i, w in enumerate(words_) if w == "--peer")
        assert named == DIALLED_BY[svc], (svc, named)
        assert "--systemd" in exec_start, svc
        assert "/libexec/cordon/cordon-" in exec_start, svc
        mdwe = last(u, "Service", "MemoryDenyWriteExecute")
        fam = set(words(u, "Service", "RestrictAddressFamilies"))
        if svc == "cordon-spawner@.service":
            assert mdwe in (None, "no"), svc
            assert last(u, "Service", "User") == "%i"
            assert last(u, "Service", "StateDirectory") == "cordon/spawner"
        elif svc == "cordon-egressd.service":
            # EG-1: the one daemon that connects out; inet and unix only.
            assert mdwe == "yes", svc
            assert fam == {"AF_UNIX", "AF_INET", "AF_INET6"}, svc
            assert last(u, "Service", "PrivateNetwork") in (None, "no")
            assert last(u, "Service", "RestrictNamespaces") == "yes", svc
        else:
            assert mdwe == "yes", svc
            assert fam == {"AF_UNIX"}, svc
            assert last(u, "Service", "PrivateNetwork") == "yes", svc
            assert last(u, "Service", "RestrictNamespaces") == "yes", svc
    broker = parse_unit(found["cordon-broker.service"])
    assert values(broker, "Service", "LoadCredential") == [
        "token:/etc/cordon/token"]


def test_su4_gated_runs_as_the_operator_in_the_spawners_view(root):
    """SU-4, SBX-6: gated is a template per operator like the spawner: the
    operator's uid (checked against CORDON_OPERATOR), a primary group of
    its own that auditd names to tell it from the spawner, and the
    spawner's view of the homes (only the operator's, read-only here);
    the spawner wants its own instance's socket, the broker none."""
    _, found = root
    gated = parse_unit(found["cordon-gated@.service"])
    spawner = parse_unit(found["cordon-spawner@.service"])
    for u in (gated, spawner):
        assert last(u, "Service", "User") == "%i"
        assert values(u, "Service", "ExecStartPre") == [
            "/usr/bin/test ${CORDON_OPERATOR} = %i"]
        assert last(u, "Service", "ProtectHome") == "tmpfs"
    assert last(gated, "Service", "Group") == "cordon-gated"
    assert words(spawner, "Service", "BindPaths") == ["/home/%i"]
    assert words(gated, "Service", "BindReadOnlyPaths") == ["/home/%i"]
    assert words(gated, "Service", "BindPaths") == []
    assert last(gated, "Service", "RemoveIPC") is None  # the operator's
    assert values(gated, "Unit", "Requires") == ["cordon-gated@%i.socket"]
    assert "cordon-gated@%i.socket" in words(spawner, "Unit", "Wants")
    for unit in ("cordon-broker.service", "cordon.target"):
        wants = words(parse_unit(found[unit]), "Unit", "Wants")
        assert not [w for w in wants if w.startswith("cordon-gated")], unit
    auditd = " ".join(values(parse_unit(found["cordon-auditd.service"]),
                             "Service", "ExecStart"))
    assert "--peer gated=${CORDON_OPERATOR}:cordon-gated" in auditd


# The namespaces the per-run sandbox clones (sandbox/, spawner/), by the
# name RestrictNamespaces= gives each.
NS_NAMES = {"USER": "user", "NS": "mnt", "PID": "pid", "NET": "net",
            "IPC": "ipc", "UTS": "uts", "CGROUP": "cgroup"}
SRC = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def test_su4_sbx4_spawner_unit_allows_every_sandbox_namespace(root):
    """SU-4, SBX-4: the spawner unit's RestrictNamespaces= allows every
    namespace the per-run sandbox makes (and its start-up probe clones),
    or the probe fails under the unit and the spawner disables every
    agent ("this host lacks userns ..."); and no other."""
    _, found = root
    used = set()
    for d in ("sandbox", "spawner"):
        for f in os.listdir(os.path.join(SRC, d)):
            if f.endswith(".c"):
                with open(os.path.join(SRC, d, f)) as fh:
                    used |= set(re.findall(r"CLONE_NEW([A-Z]+)", fh.read()))
    want = {NS_NAMES[n] for n in used}
    assert {"user", "mnt", "pid", "net", "ipc"} <= want, used
    got = set(words(parse_unit(found["cordon-spawner@.service"]),
                    "Service", "RestrictNamespaces"))
    assert got == want, (got, want)


# Each service's own sources; common/, which all link, counts for each.
SERVICE_SRC = {
    "cordon-auditd.service": ["auditd"],
    "cordon-vaultd.service": ["vaultd"],
    "cordon-egressd.service": ["egressd"],
    "cordon-gated@.service": ["gated"],
    "cordon-spawner@.service": ["spawner", "sandbox"],
    "cordon-broker.service": ["broker"],
    "cordon-sched.service": ["sched"],
}


def calls_openat2(dirs):
    for d in [*dirs, "common"]:
        for f in os.listdir(os.path.join(SRC, d)):
            if f.endswith(".c"):
                with open(os.path.join(SRC, d, f)) as fh:
                    if "SYS_openat2" in fh.read():
                        return True
    return False


def test_su4_no_restrictsuidsgid_where_openat2_is_called(root):
    """SU-4, MC-2: RestrictSUIDSGID= makes every openat2(2) fail with
    ENOSYS (systemd cannot read the mode in its struct), so no unit whose
    daemon opens paths through openat2 has it: vaultd's notes (VA-4) and
    the spawner's worktree checks (MC-2: without openat2 every worktree
    run was refused `not-a-repo`).  Every other unit keeps it."""
    _, found = root
    assert set(SERVICE_SRC) == set(SERVICES)
    needs = {svc for svc, dirs in SERVICE_SRC.items() if calls_openat2(dirs)}
    assert {"cordon-vaultd.service", "cordon-spawner@.service"} <= needs
    for svc in SERVICES:
        got = last(parse_unit(found[svc]), "Service", "RestrictSUIDSGID")
        want = (None, "no") if svc in needs else ("yes",)
        assert got in want, (svc, got)


def test_sysusers_tmpfiles_offline(root):
    """SU-4: systemd-sysusers and systemd-tmpfiles --create, run on the
    temp root, make the users, groups and directories of the contract,
    with the owners and modes it names, and each service's write paths
    exist and belong to its user."""
    r, found = root
    with open("/etc/passwd") as f:
        host_passwd = f.read()
    os.makedirs(os.path.join(r, "etc"), exist_ok=True)
    p = run(["systemd-sysusers", f"--root={r}", found["sysusers"]])
    assert p.returncode == 0, p.stdout + p.stderr
    p = run(["systemd-tmpfiles", "--create", f"--root={r}",
             found["tmpfiles"]])
    assert p.returncode == 0, p.stdout + p.stderr

    ids = {}
    with open(os.path.join(r, "etc/passwd")) as f:
        for line in f:
            name, _, uid, _, _, home, shell = line.rstrip("\n").split(":")
            ids[name] = int(uid)
            if name.startswith("cordon-"):
                assert shell.endswith("nologin"), line
                assert home == "/", line
    expect = {
        "etc/cordon": ("root", 0o755),
        "var/lib/cordon": ("root", 0o755),
        "var/lib/cordon/vault": ("cordon-vaultd", 0o700),
        "var/lib/cordon/vault/00_Inbox/cordon": ("cordon-vaultd", 0o700),
        "var/log/cordon/audit": ("cordon-auditd", 0o700),
        "var/lib/cordon/sched": ("cordon-sched", 0o700),
    }
    for rel, (owner, mode) in expect.items():
        st = os.stat(os.path.join(r, rel))
        assert stat.S_ISDIR(st.st_mode), rel
        want_uid = 0 if owner == "root" else ids[owner]
        assert st.st_uid == want_uid, f"/{rel}: uid {st.st_uid} != {owner}"
        assert stat.S_IMODE(st.st_mode) == mode, (
            f"/{rel}: mode {oct(stat.S_IMODE(st.st_mode))}")
    for svc, paths in WRITE_PATHS.items():
        user = last(parse_unit(found[svc]), "Service", "User")
        for path in paths:
            st = os.stat(r + path)
            assert st.st_uid == ids[user], f"{svc}: {path} not {user}'s"
    # Only the temp root was touched, never the host's user database.
    with open("/etc/passwd") as f:
        assert f.read() == host_passwd
