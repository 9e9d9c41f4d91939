# docs/rules.md against the tree: every rule ID that code, tests or docs
# cite is explained there, and every test file it names as proof cites
# that ID.  Reads files only; starts nothing.
import os
import re

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
RULES = os.path.join(ROOT, "docs", "rules.md")
ID = re.compile(r"\b(?:PER|API|SP|SBX|SEC|VA|AU|MI|DA|SU|EG|MC)-[0-9]+\b")
SKIP_DIRS = {".git", "node_modules", "corpus", "__pycache__"}
SUFFIXES = (".c", ".h", ".py", ".mjs", ".js", ".md", ".sh", ".build",
            ".yaml", ".service", ".socket", ".css", ".html")


def tree_files():
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs
                   if d not in SKIP_DIRS and not d.startswith("build")]
        for f in files:
            if f.endswith(SUFFIXES) or f in ("run", "demo", "test"):
                yield os.path.join(top, f)


def rule_rows():
    """ID -> list of test files named as proof ([] for unbuilt rules)."""
    rows = {}
    with open(RULES, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\| ([A-Z]+-[0-9]+) \|", line)
            if not m:
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            proof = cells[2] if len(cells) > 2 else ""
            rows[m.group(1)] = [p.strip() for p in proof.split(",")
                                if p.strip()]
    return rows


def test_every_cited_rule_is_explained():
    rows = rule_rows()
    missing = {}
    for path in tree_files():
        if path == RULES:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for rid in set(ID.findall(f.read())):
                if rid not in rows:
                    missing.setdefault(rid, os.path.relpath(path, ROOT))
    assert missing == {}, f"rule IDs cited but not in docs/rules.md: {missing}"


def test_named_proof_cites_its_rule():
    bad = []
    for rid, files in rule_rows().items():
        for rel in files:
            path = os.path.join(ROOT, rel)
            if not os.path.isfile(path):
                bad.append(f"{rid}: {rel} does not exist")
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                if rid not in set(ID.findall(f.read())):
                    bad.append(f"{rid}: {rel} does not cite it")
    assert bad == []


def test_built_rules_name_a_proof():
    text = open(RULES, encoding="utf-8").read()
    built = text.split("## Rules not yet built")[0]
    rows = rule_rows()
    unproved = [rid for rid in ID.findall(built)
                if built.count(f"| {rid} |") and not rows.get(rid)]
    assert unproved == []
