#!/usr/bin/env python3
"""Record how a real Dolt orders JSON values (`ORDER BY` a JSON column).

Makes a fresh Dolt database in a temporary directory under /tmp with
    CREATE TABLE t (i INT PRIMARY KEY, j JSON)
and one row per document of crates/format/tests/data/json_order/inputs.json (a JSON list of
JSON documents, as text), then records
    SELECT i, DENSE_RANK() OVER (ORDER BY j) FROM t
so equal documents share a rank and ranks follow Dolt's order.

Usage: python3 scripts/dolt_json_order.py /path/to/dolt
Writes crates/format/tests/data/json_order/dolt.json: {"dolt": version, "rank": [rank of
input 0, rank of input 1, ...]}.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "crates", "format", "tests", "data", "json_order")


def run(dolt, cwd, args, stdin=None):
    r = subprocess.run([dolt] + args, cwd=cwd, input=stdin, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("dolt %s: %s" % (" ".join(args), r.stderr))
    return r.stdout


def main():
    dolt = sys.argv[1]
    inputs = json.load(open(os.path.join(DATA, "inputs.json")))
    d = tempfile.mkdtemp(prefix="json-order-", dir="/tmp")
    try:
        run(dolt, d, ["init", "--name", "json", "--email", "json@localhost"])
        script = "CREATE TABLE t (i INT PRIMARY KEY, j JSON);\n" + "".join(
            "INSERT INTO t VALUES (%d, '%s');\n" % (i, doc.replace("\\", "\\\\").replace("'", "''"))
            for i, doc in enumerate(inputs))
        run(dolt, d, ["sql"], stdin=script)
        out = run(dolt, d, ["sql", "-r", "csv", "-q",
                            "SELECT i, DENSE_RANK() OVER (ORDER BY j) FROM t ORDER BY i"])
        version = run(dolt, d, ["version"]).split("\n")[0]
    finally:
        shutil.rmtree(d, ignore_errors=True)
    rank = [int(line.split(",")[1]) for line in out.split("\n")[1:] if line]
    assert len(rank) == len(inputs)
    with open(os.path.join(DATA, "dolt.json"), "w") as f:
        json.dump({"dolt": version, "rank": rank}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
