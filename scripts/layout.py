#!/usr/bin/env python3
"""Size limits on the C sources: no file over 900 lines, no function
body over 80 lines.  Tables (initialisers) are not functions and are not
counted.  Prints one line per breach and exits 1 if there is any.

A plain brace-depth scan over the text with comments, strings and
character literals blanked: every source follows STYLE.md, so a function
is a top-level brace block whose head ends in ')'."""
import os
import re
import sys

MAX_FILE = 900
MAX_FUNC = 80
DIRS = ("auditd", "broker", "common", "egressd", "gated", "load", "policy",
        "sandbox", "sched", "spawner", "supervisor", "vaultd")

_LEX = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'
                  r"'(?:\\.|[^'\\\n])*'", re.S)


def _blank(m):
    return re.sub(r"[^\n]", " ", m.group(0))


def functions(text):
    """Yields (name, first line, line count) for each function body."""
    code = _LEX.sub(_blank, text)
    code = re.sub(r"^[ \t]*#[^\n]*(?:\\\n[^\n]*)*", _blank, code, flags=re.M)
    depth, head_start, start = 0, 0, None
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                head = code[head_start:i]
                if re.search(r"\)\s*$", head) and "=" not in head:
                    m = re.search(r"(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$",
                                  head)
                    start = (m.group(1) if m else "?", i)
                else:
                    start = None
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if start:
                    name, at = start
                    first = code.count("\n", 0, at) + 1
                    last = code.count("\n", 0, i) + 1
                    yield name, first, last - first + 1
                start = None
                head_start = i + 1
        elif ch == ";" and depth == 0:
            head_start = i + 1


def sources(root):
    for d in DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.join(dirpath, f)


def breaches(root):
    out = []
    for path in sources(root):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        rel = os.path.relpath(path, root)
        n = text.count("\n")
        if n > MAX_FILE:
            out.append(f"{rel}: {n} lines (max {MAX_FILE})")
        for name, first, count in functions(text):
            if count > MAX_FUNC:
                out.append(f"{rel}:{first}: {name} {count} lines "
                           f"(max {MAX_FUNC})")
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    out = breaches(root)
    for line in out:
        print(line)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
