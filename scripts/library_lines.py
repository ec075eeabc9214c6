#!/usr/bin/env python3
"""Lines of library code per crate at one or two revisions, as #36 counts them.

Library code is every line of the `.rs` files under a crate's `src/` at the revision, less the
inline test modules (`#[cfg(test)] mod name { ... }`); test files outside `src/` and files
declared as test modules (`#[cfg(test)] mod name;`, which an earlier tree kept under `src/`) are
not counted. Blank and comment lines count, as they did when the issue was filed (the Dolt
crate's 24.9k lines at 4b9943c).

    scripts/library_lines.py REV [REV2]          # a table per crate (and the change to REV2)
    scripts/library_lines.py REV --files CRATE   # the crate's files, largest first
"""

import re
import subprocess
import sys
from collections import defaultdict

TEST_MOD = re.compile(r"\s*(pub(\(\w+\))?\s+)?mod \w+\s*\{")


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def library_lines(text):
    """Lines of `text` outside `#[cfg(test)] mod x { ... }` blocks."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    count, i = 0, 0
    while i < len(lines):
        if lines[i].strip() == "#[cfg(test)]" and i + 1 < len(lines) and TEST_MOD.match(lines[i + 1]):
            depth, j = 0, i + 1
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                if depth <= 0 and "{" in "".join(lines[i + 1 : j + 1]):
                    break
                j += 1
            i = j + 1
            continue
        count += 1
        i += 1
    return count


TEST_FILE_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*mod (\w+);")


def test_only_files(path, text):
    """The files that `path` declares as test-only modules (`#[cfg(test)] mod name;`)."""
    here = path.rsplit("/", 1)[0]
    stem = path.rsplit("/", 1)[1][:-3]
    inner = here if stem in ("lib", "main", "mod") else f"{here}/{stem}"
    return {f"{inner}/{m}.rs" for m in TEST_FILE_MOD.findall(text)} | {
        f"{inner}/{m}/mod.rs" for m in TEST_FILE_MOD.findall(text)
    }


def per_file(rev):
    """(crate, path) -> library lines, for every crate under crates/ at `rev` (test-only
    files, which the issue found under `src/`, left out)."""
    texts = {}
    for path in git("ls-tree", "-r", "--name-only", rev, "crates").split():
        if re.match(r"crates/([^/]+)/src/.*\.rs$", path):
            texts[path] = git("show", f"{rev}:{path}")
    tests = set()
    for path, text in texts.items():
        tests |= test_only_files(path, text)
    return {
        (path.split("/")[1], path): library_lines(text)
        for path, text in texts.items()
        if path not in tests
    }


def per_crate(files):
    crates = defaultdict(int)
    for (crate, _), n in files.items():
        crates[crate] += n
    return crates


def main(argv):
    if len(argv) >= 3 and argv[1] == "--files":
        files = per_file(argv[0])
        for (crate, path), n in sorted(files.items(), key=lambda kv: -kv[1]):
            if crate == argv[2]:
                print(f"{n:7,d}  {path}")
        return 0
    if not argv or len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    a = per_crate(per_file(argv[0]))
    b = per_crate(per_file(argv[1])) if len(argv) == 2 else None
    names = sorted(set(a) | set(b or {}))
    if b is None:
        print("| crate | lines |\n|---|---:|")
        for c in names:
            print(f"| {c} | {a.get(c, 0):,} |")
        print(f"| all | {sum(a.values()):,} |")
        return 0
    print(f"| crate | {argv[0]} | {argv[1]} | change |\n|---|---:|---:|---:|")
    for c in names + ["all"]:
        x = sum(a.values()) if c == "all" else a.get(c, 0)
        y = sum(b.values()) if c == "all" else b.get(c, 0)
        pct = f"{(y - x) / x:+.1%}" if x else "new"
        print(f"| {c} | {x:,} | {y:,} | {pct} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
