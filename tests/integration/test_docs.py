# The docs agree with the code: unit names the docs tell you to pass to
# journalctl exist in systemd/, the error classes are one set under one
# spelling in the spawner, the broker, the dashboard and the docs, the
# docs say systemd units exist, and neither docs/ nor the README speaks
# of the project's issues or work history.  What the docs name exists:
# the threat model's proofs, the paths into the tree, every C file in
# ARCHITECTURE.md's source layout, every attack module in its README,
# audit.md's kinds as the schema has them.  Reads the source tree only.
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DOCS = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + [
    os.path.join(ROOT, "README.md")]


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def unit_names():
    names = set()
    for p in glob.glob(os.path.join(ROOT, "systemd", "*")):
        n = os.path.basename(p)
        if n.endswith(".in"):
            n = n[:-3]
        if n.endswith((".service", ".socket", ".target")):
            names.add(n)
    return names


def test_journalctl_units_exist():
    units = unit_names()
    assert "cordon-auditd.service" in units
    seen = 0
    for doc in DOCS:
        for m in re.finditer(r"journalctl[^\n`]*?-u\s+'?([^\s'|`]+)'?",
                             read(doc)):
            seen += 1
            u = m.group(1)
            if "*" in u:  # a glob must match some unit
                pat = re.compile(re.escape(u).replace(r"\*", ".*") +
                                 r"(\.service)?$")
                assert any(pat.match(x) for x in units), (doc, u)
                continue
            base = re.sub(r"@[^.]+", "@", u)
            if not base.endswith((".service", ".socket", ".target")):
                base += ".service"
            assert base in units, (doc, u)
    assert seen >= 3


def test_docs_say_the_units_exist():
    guide = read("docs", "operator-guide.md")
    m = re.search(r"Not there yet:([^\n]*\n?[^\n]*)", guide)
    assert m is None or "systemd" not in m.group(1), m.group(0)
    tm = read("docs", "threat-model.md")
    assert not re.search(r"systemd[^\n]*\n?[^\n]*no units", tm)


# SP-12: one spelling of each error class, everywhere
OLD_NAME = "exit-" + "nonzero"  # a second spelling of non-zero-exit: refused


def test_one_error_class_spelling():
    for root, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in (
            ".git", "node_modules") and not d.startswith("build")]
        for n in files:
            if n.endswith((".c", ".h", ".js", ".mjs", ".py", ".md", ".html")):
                with open(os.path.join(root, n), encoding="utf-8",
                          errors="replace") as f:
                    text = f.read()
                assert OLD_NAME not in text, os.path.join(root, n)
    spec_classes = {"spawn-failed", "timeout", "killed", "non-zero-exit",
                    "transport-error", "missing-secret", "unknown"}
    schema = read("common", "audit_schema.c")
    for c in spec_classes:
        assert f'"{c}"' in schema, c


def test_mission_error_classes_agree():
    api = read("broker", "api_missions.c")
    m = re.search(r"classes\[\]\s*=\s*\{([^}]*)\}", api)
    broker = set(re.findall(r'"([a-z-]+)"', m.group(1)))
    js = read("broker", "web", "missions.js")
    m = re.search(r"const ERROR_TEXT = \{(.*?)\n\};", js, re.S)
    dash = set(re.findall(r"^\s+'?([a-z-]+)'?:", m.group(1), re.M))
    guide = read("docs", "operator-guide.md")
    m = re.search(r"Error classes: ((?:`[a-z-]+`,?\s*(?:and\s*)?)+)", guide)
    docs = set(re.findall(r"`([a-z-]+)`", m.group(1)))
    audit = read("docs", "audit.md")
    m = re.search(r"`errorClass`\? [^|]*?one of `([a-z -]+)`", audit)
    audit_set = set(m.group(1).split())
    assert broker == dash == docs == audit_set, (broker, dash, docs,
                                                 audit_set)
    assert "non-zero-exit" in broker


HISTORY = [r"(?<![&\w])#\d", r"\bissues?\b", r"\bthis session\b", r"\bpreviously\b",
           r"\bwas added\b", r"\bsessions'", r"\bother sessions\b",
           r"\b(first|second|third|\w+th) session\b"]


def test_docs_hold_no_issue_numbers_or_history():
    for doc in DOCS:
        text = read(doc)
        for pat in HISTORY:
            m = re.search(pat, text, re.I)
            assert m is None, (doc, pat, text[max(0, m.start() - 60):
                                              m.end() + 60])


def tree_files():
    out = []
    for root, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in (
            ".git", "node_modules") and not d.startswith("build")]
        out += [os.path.relpath(os.path.join(root, n), ROOT) for n in files]
    return out


def test_threat_model_proofs_exist():
    """Every test the threat model names as proof exists: a `FILE::NAME`
    names a test in that file, a bare `test_NAME` (or `test_PREFIX_*`)
    is a test under tests/ or bench/ (a function or a meson test)."""
    tm = read("docs", "threat-model.md")
    files = [f for f in tree_files()
             if f.startswith(("tests" + os.sep, "bench" + os.sep))]
    text = {}

    def src(f):
        if f not in text:
            with open(os.path.join(ROOT, f), encoding="utf-8",
                      errors="replace") as fh:
                text[f] = fh.read()
        return text[f]

    def named(name):  # `test_PREFIX_` names every test it begins
        return re.compile(r"\b" + name + ("" if name.endswith("_")
                                           else r"\b"))

    srcs = [f for f in files if f.endswith((".py", ".c", ".mjs", ".js",
                                            "meson.build"))]
    for m in re.finditer(r"([\w./-]*test_\w+\.(?:py|c|mjs))::(\w+)", tm):
        f, name = m.groups()
        cands = [x for x in files if x == f or x.endswith(os.sep + f)
                 or os.path.basename(x) == f]
        assert cands, ("no such test file", f)
        assert any(named(name).search(src(x)) for x in cands), (f, name)
    names = set(re.findall(r"(?<![\w/.:])(test_\w+?)(?:\*|\b)(?!\.\w)",
                           tm))
    stems = {os.path.splitext(os.path.basename(f))[0] for f in files}
    for name in sorted(names - stems):
        assert any(named(name).search(src(f)) for f in srcs), name


def test_attack_readme_lists_every_module():
    """tests/attack/README.md has one row per module and a total that is
    the sum of its rows."""
    readme = read("tests", "attack", "README.md")
    rows = dict(re.findall(r"^\| `(test_\w+\.py)` \|[^\n]*?\| (\d+) \|",
                           readme, re.M))
    mods = {os.path.basename(p) for p in
            glob.glob(os.path.join(ROOT, "tests", "attack", "test_*.py"))}
    assert set(rows) == mods, (set(rows) ^ mods)
    total = re.search(r"^\| total \| \| \| (\d+) \|", readme, re.M)
    assert total and int(total.group(1)) == sum(map(int, rows.values()))
    # Each row's count is the number of cases pytest collects there.
    import subprocess
    import sys
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-c",
         os.path.join(ROOT, "tests", "attack", "pytest.ini"),
         "--collect-only", "-q", "-p", "no:cacheprovider",
         os.path.join(ROOT, "tests", "attack")],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    got = {}
    for line in r.stdout.splitlines():
        if "::" in line:
            mod = os.path.basename(line.split("::", 1)[0])
            got[mod] = got.get(mod, 0) + 1
    assert got == {m: int(n) for m, n in rows.items()}, (got, rows)


def test_source_layout_names_every_c_file():
    """ARCHITECTURE.md's source layout names every program C file of the
    tree (tests/, bench/ and build dirs aside), and no C file that is not
    there."""
    arch = read("docs", "ARCHITECTURE.md")
    m = re.search(r"^## Source layout\n(.*?)^The spawner's size is counted", arch,
                  re.S | re.M)
    assert m, "no source layout section"
    named = set(re.findall(r"`(?:[\w-]+/)*([\w-]+\.c)`", m.group(1)))
    tree = {os.path.basename(f) for f in tree_files()
            if f.endswith(".c") and not f.startswith((
                "tests" + os.sep, "bench" + os.sep))}
    assert tree - named == set(), ("not in the map", sorted(tree - named))
    assert named - tree == set(), ("no such file", sorted(named - tree))


def test_audit_md_mirrors_the_schema():
    """docs/audit.md's kind table has every kind of common/audit_schema.c
    and no other, and system.restart's daemons are the schema's."""
    schema = read("common", "audit_schema.c")
    kinds = set(re.findall(r'^\s*K\("([a-z.]+)"', schema, re.M))
    audit = read("docs", "audit.md")
    kind = r"`[a-z]+\.[a-z.]+`"
    rows = re.findall(r"^\| (%s(?:, %s)*) \| [^|]+ \|" % (kind, kind),
                      audit, re.M)
    documented = {k for r in rows for k in re.findall(r"`([a-z.]+)`", r)}
    assert kinds and kinds == documented, kinds ^ documented
    m = re.search(r"e_daemon\[\] = \{([^}]*)\}", schema)
    daemons = set(re.findall(r'"([a-z]+)"', m.group(1)))
    m = re.search(r"^\| `system\.restart` \| [^|]+ \| `daemon` ((?:`[a-z]+`"
                  r"\\?\|?)+)", audit, re.M)
    assert m and set(re.findall(r"`([a-z]+)`", m.group(1))) == daemons


TREE_DIRS = ("auditd", "bench", "broker", "common", "egressd", "examples",
             "gated", "load", "man", "policy", "sandbox", "sched",
             "scripts", "spawner", "supervisor", "systemd", "tests",
             "vaultd")


def test_source_paths_in_docs_exist():
    """A path into the tree that a doc names (`spawner/run.c`,
    `tests/attack/test_sbx4.py`) is a file of the tree."""
    files = set(tree_files())
    docs = DOCS + [os.path.join(ROOT, "tests", "attack", "README.md"),
                   os.path.join(ROOT, "bench", "README.md")]
    pat = re.compile(r"(?<![\w/.$-])((?:%s)/[\w./-]*\w\.(?:c|h|py|mjs|js|sh"
                     r"|in|yaml|json|html|css))\b" % "|".join(TREE_DIRS))
    for doc in docs:
        for m in pat.finditer(read(doc)):
            p = m.group(1)
            assert os.path.normpath(p) in files, (doc, p)
