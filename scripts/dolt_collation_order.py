#!/usr/bin/env python3
"""Record how a real Dolt orders and equates strings under MySQL collations.

For each collation: a fresh Dolt database (in a temporary directory) with
    CREATE TABLE t (pk VARCHAR(64) COLLATE <collation> PRIMARY KEY, i INT)
and one INSERT per input string of crates/format/tests/data/collations/inputs.json, in
order, run with `dolt sql --continue` so every statement is tried. Then:

* `order`: `SELECT i FROM t` -- the input indices of the stored keys, in Dolt's key order
  (a full scan walks the primary-key tree); `SELECT i FROM t ORDER BY pk` must agree.
* `equal`: an insert refused with "duplicate primary key" means Dolt found an equal key.
  To learn which one, a second database gets that input first and then every stored key;
  the one refused is its equal.
* `refused`: inputs refused for any other reason (e.g. not representable in latin1/ascii),
  with Dolt's message.

Usage: python3 scripts/dolt_collation_order.py /path/to/dolt [--set NAME] [collation ...]
Writes crates/format/tests/data/collations/<collation>.json, or with `--set NAME` reads
crates/format/tests/data/collations/NAME/inputs.json and writes the results beside it.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "crates", "format", "tests", "data", "collations")
DEFAULT = [
    "utf8mb4_0900_ai_ci", "utf8mb4_0900_as_ci", "utf8mb4_0900_as_cs", "utf8mb4_0900_bin",
    "utf8mb4_bin", "utf8mb3_bin", "utf8mb4_general_ci", "utf8mb4_unicode_ci", "latin1_bin",
    "latin1_swedish_ci", "ascii_general_ci", "ascii_bin", "binary", "utf8mb4_unicode_520_ci",
    "utf8mb3_unicode_520_ci", "latin7_bin", "cp1257_bin",
]
ERR = re.compile(r"error on line (\d+) for query .*?: (.*)$")


def sql_literal(s):
    assert "'" not in s and "\\" not in s and "\n" not in s
    return "'" + s + "'"


class Db:
    def __init__(self, dolt, collation):
        self.dolt = dolt
        self.dir = tempfile.mkdtemp(prefix="collation-", dir="/tmp")
        self.run(["init", "--name", "order", "--email", "order@localhost"])
        self.query("CREATE TABLE t (pk VARCHAR(64) COLLATE %s PRIMARY KEY, i INT)" % collation)

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run(self, args, stdin=None):
        return subprocess.run([self.dolt] + args, cwd=self.dir, input=stdin, capture_output=True,
                              text=True, check=False)

    def query(self, q):
        r = self.run(["sql", "-r", "csv", "-q", q])
        if r.returncode:
            raise RuntimeError("%s: %s" % (q, r.stderr))
        return r.stdout

    def insert_all(self, rows):
        """Inserts (string, index) rows one statement each; returns {row position: error}."""
        script = "".join("INSERT INTO t VALUES (%s, %d);\n" % (sql_literal(s), i) for s, i in rows)
        r = self.run(["sql", "--continue"], stdin=script)
        errors = {}
        for line in (r.stdout + r.stderr).splitlines():
            m = ERR.search(line)
            if m:
                errors[int(m.group(1)) - 1] = m.group(2).strip()
        return errors

    def indices(self, q):
        return [int(x) for x in self.query(q).split()[1:]]


def record(dolt, collation, inputs):
    db = Db(dolt, collation)
    errors = db.insert_all([(s, i) for i, s in enumerate(inputs)])
    order = db.indices("SELECT i FROM t")
    sorted_order = db.indices("SELECT i FROM t ORDER BY pk")
    dup = {i for i, e in errors.items() if "duplicate primary key" in e}
    refused = {str(i): e for i, e in errors.items() if i not in dup}
    equal = {}
    for i in sorted(dup):
        probe = Db(dolt, collation)
        rows = [(inputs[i], i)] + [(inputs[j], j) for j in order]
        errs = probe.insert_all(rows)
        hits = [rows[k][1] for k, e in errs.items() if k > 0 and "duplicate primary key" in e]
        probe.close()
        if len(hits) != 1:
            raise RuntimeError("%s: input %d equals %s" % (collation, i, hits))
        equal[str(i)] = hits[0]
    db.close()
    return {
        "collation": collation,
        "order": order,
        "order_by_pk_agrees": order == sorted_order,
        "equal": equal,
        "refused": refused,
    }


def main():
    dolt = sys.argv[1]
    args = sys.argv[2:]
    data = DATA
    if args[:1] == ["--set"]:
        data = os.path.join(DATA, args[1])
        args = args[2:]
    collations = args or DEFAULT
    inputs = json.load(open(os.path.join(data, "inputs.json")))
    version = subprocess.run([dolt, "version"], capture_output=True, text=True).stdout.split("\n")[0]
    for c in collations:
        out = record(dolt, c, inputs)
        out["dolt"] = version
        with open(os.path.join(data, c + ".json"), "w") as f:
            json.dump(out, f, indent=0, sort_keys=True)
            f.write("\n")
        print(c, len(out["order"]), "keys,", len(out["equal"]), "equal,", len(out["refused"]),
              "refused, order by pk agrees:", out["order_by_pk_agrees"], file=sys.stderr)


if __name__ == "__main__":
    main()
