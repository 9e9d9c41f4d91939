# Size limits on the C sources (scripts/layout.py): no file over 900
# lines, no function over 80 lines outside tables, so each file and each
# function reads in one sitting.  Reads the source tree only.
#
# TABLES are switch tables and rule tables: one case or one row per line,
# nothing to cut into steps.  PENDING lists what is over today; the test
# fails on any breach not listed and on any listed entry that is no longer
# over, so the list only shrinks.
import importlib.util
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

TABLES = {
    "common/msg.c msg_name",      # one case per message type
}

PENDING = set()


def layout():
    spec = importlib.util.spec_from_file_location(
        "layout", os.path.join(ROOT, "scripts", "layout.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def breach_keys():
    keys = set()
    for line in layout().breaches(ROOT):
        m = re.match(r"([^:]+):(?:\d+: (\w+) )?", line)
        keys.add(m.group(1) + (" " + m.group(2) if m.group(2) else ""))
    return keys


def test_layout_no_new_breach():
    new = breach_keys() - TABLES - PENDING
    assert not new, "over the size limits: %s" % sorted(new)


def test_layout_pending_still_over():
    fixed = PENDING - breach_keys()
    assert not fixed, "no longer over, drop from PENDING: %s" % sorted(fixed)


def test_layout_scanner_counts():
    mod = layout()
    text = ("static const int t[] = {\n" + "1,\n" * 100 + "};\n"
            "int\nf(int a)\n{\n" + "\ta++;\n" * 81 + "\treturn a;\n}\n"
            "/* } { */\nconst char *s = \"}\";\n"
            "int\ng(void)\n{\n\treturn '}';\n}\n")
    got = [(n, c) for n, _, c in mod.functions(text)]
    assert got == [("f", 84), ("g", 3)]


def test_layout_covers_every_source_dir():
    # a new daemon's or library's directory is scanned too: every top
    # directory with C sources but the tests', the benches' and builds'
    have = set()
    for d in os.listdir(ROOT):
        p = os.path.join(ROOT, d)
        if (not os.path.isdir(p) or d in ("tests", "bench", ".git") or
                d.startswith("build")):
            continue
        if any(f.endswith(".c") for f in os.listdir(p)):
            have.add(d)
    assert have <= set(layout().DIRS), sorted(have - set(layout().DIRS))
