#!/usr/bin/env python3
"""Record the rank a real Dolt gives every BMP code point (and a sample of the others) under
each collation, for checking the weight tables of crates/format/src/collation/.

Dolt compares collated strings one code point at a time by a per-code-point weight (see
crates/format/src/collation/mod.rs), so a collation is fully described by how it orders the
one-code-point strings. For each group of collations this script makes a fresh database in a
temporary directory under /tmp with

    CREATE TABLE t (cp INT PRIMARY KEY, c0 VARCHAR(16) COLLATE <collation 0>, c1 ..., ...)

inserts one row per code point (the same one-code-point string in every column) and asks

    SELECT cp, DENSE_RANK() OVER (ORDER BY c0), DENSE_RANK() OVER (ORDER BY c1), ... FROM t

DENSE_RANK numbers the distinct values in collation order, so equal code points get the same
rank and the ranks of different classes keep Dolt's order.

Code points: every BMP code point except the surrogates, plus U+10000..U+10FFFF in steps of
0x101 and U+10FFFF (supplementary code points mostly share weights in these collations).

Output: one file per collation, `<dir>/<collation>.ranks`, in the compact run format that
`crates/format/tests/collation_ranks.rs` reads:

    # header lines
    <first code point, hex> <count> <rank of the first> <step>

where the run covers `count` consecutive recorded code points whose ranks start at the given
rank and change by `step` (0 or 1) from one recorded code point to the next.

Usage: python3 scripts/dolt_collation_ranks.py /path/to/dolt OUT_DIR collation [collation ...]
"""

import os
import shutil
import subprocess
import sys
import tempfile

GROUP = 12


def code_points():
    cps = [cp for cp in range(0x10000) if not 0xD800 <= cp <= 0xDFFF]
    cps += list(range(0x10000, 0x110000, 0x101)) + [0x10FFFF]
    return cps


def literal(cp):
    return "CONVERT(UNHEX('%s') USING utf8mb4)" % chr(cp).encode("utf-8").hex().upper()


def run(dolt, cwd, args, stdin=None):
    r = subprocess.run([dolt] + args, cwd=cwd, input=stdin, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("dolt %s: %s" % (" ".join(args), r.stderr[-2000:]))
    return r.stdout


def record_group(dolt, collations, cps):
    d = tempfile.mkdtemp(prefix="collation-ranks-", dir="/tmp")
    try:
        run(dolt, d, ["init", "--name", "ranks", "--email", "ranks@localhost"])
        cols = ", ".join("c%d VARCHAR(16) COLLATE %s" % (i, c) for i, c in enumerate(collations))
        run(dolt, d, ["sql", "-q", "CREATE TABLE t (cp INT PRIMARY KEY, %s)" % cols])
        names = ", ".join("c%d" % i for i in range(len(collations)))
        stmts = []
        for k in range(0, len(cps), 2000):
            rows = []
            for cp in cps[k:k + 2000]:
                lit = literal(cp)
                rows.append("(%d, %s)" % (cp, ", ".join([lit] * len(collations))))
            stmts.append("INSERT INTO t (cp, %s) VALUES %s;\n" % (names, ",".join(rows)))
        run(dolt, d, ["sql"], stdin="".join(stmts))
        ranks = ", ".join("DENSE_RANK() OVER (ORDER BY c%d)" % i for i in range(len(collations)))
        out = run(dolt, d, ["sql", "-r", "csv", "-q", "SELECT cp, %s FROM t ORDER BY cp" % ranks])
    finally:
        shutil.rmtree(d, ignore_errors=True)
    lines = out.split("\n")[1:]
    table = [list(map(int, line.split(","))) for line in lines if line]
    assert [row[0] for row in table] == cps, "Dolt returned other code points"
    return {c: [row[1 + i] for row in table] for i, c in enumerate(collations)}


def runs(cps, ranks):
    out = []
    i = 0
    while i < len(cps):
        j = i + 1
        step = None
        while j < len(cps):
            d = ranks[j] - ranks[j - 1]
            if step is None and d in (0, 1):
                step = d
            if d != step:
                break
            j += 1
        out.append((cps[i], j - i, ranks[i], step or 0))
        i = j
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    dolt, out_dir, collations = sys.argv[1], sys.argv[2], sys.argv[3:]
    version = run(dolt, "/tmp", ["version"]).split("\n")[0]
    cps = code_points()
    os.makedirs(out_dir, exist_ok=True)
    for g in range(0, len(collations), GROUP):
        group = collations[g:g + GROUP]
        for c, ranks in record_group(dolt, group, cps).items():
            rs = runs(cps, ranks)
            with open(os.path.join(out_dir, c + ".ranks"), "w") as f:
                f.write("# %s: Dolt's DENSE_RANK() OVER (ORDER BY s) of one-code-point strings\n" % c)
                f.write("# %s; made by scripts/dolt_collation_ranks.py\n" % version)
                f.write("# code points: U+0000..U+FFFF without surrogates, U+10000.. step 0x101, U+10FFFF\n")
                for cp, n, r, step in rs:
                    f.write("%X %d %d %d\n" % (cp, n, r, step))
            print(c, len(rs), "runs", max(ranks), "classes", file=sys.stderr)


if __name__ == "__main__":
    main()
