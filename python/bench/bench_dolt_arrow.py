"""Benchmarks of the Python package (results in docs/PERF.md).

1. A 1M-row mixed-type Dolt table to a pyarrow.Table: prollystore (`pyarrow.table(table)`) vs
   the route a Python user has without it, `dolt sql -r csv -q 'select * from t'` piped into
   `pyarrow.csv.read_csv`, and vs our own CSV export (`prolly dolt export`) piped into
   read_csv. Also the CSV export alone (no parsing).
2. Point `get` from Python on the warm table: µs per call.

    python python/bench/bench_dolt_arrow.py DB_DIR [--dolt /work/dolt-bin/dolt] [--prolly target/release/prolly]

DB_DIR is made by scripts/make_dolt_arrow_bench_db.sh (table `t`, 1M rows). Best of --runs.
"""

import argparse
import io
import os
import random
import subprocess
import time

import pyarrow as pa
import pyarrow.csv

import prollystore.dolt


def best(runs, fn):
    times = []
    out = None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def csv_route(cmd, cwd):
    def run():
        data = subprocess.run(cmd, cwd=cwd, check=True, capture_output=True).stdout
        return pyarrow.csv.read_csv(io.BytesIO(data))
    return run


def export_only(cmd, cwd):
    def run():
        return len(subprocess.run(cmd, cwd=cwd, check=True, capture_output=True).stdout)
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("--table", default="t")
    ap.add_argument("--dolt", default="/work/dolt-bin/dolt")
    ap.add_argument("--prolly", default="target/release/prolly")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gets", type=int, default=200_000)
    a = ap.parse_args()

    db = prollystore.dolt.open(a.db)
    table = db.table(a.table, at="HEAD")
    n = table.count()
    print(f"table {a.table}: {n} rows, columns {table.columns}")

    ours, arrow = best(a.runs, lambda: pa.table(table))
    assert arrow.num_rows == n
    print(f"prollystore -> pyarrow.Table:            {ours * 1000:8.1f} ms")

    results = {"ours": ours}
    prolly = os.path.abspath(a.prolly)
    if os.path.exists(prolly):
        cmd = [prolly, "dolt", a.db, "export", a.table]
        t, out = best(a.runs, csv_route(cmd, None))
        assert out.num_rows == n
        results["prolly_csv"] = t
        print(f"prolly dolt export | read_csv:           {t * 1000:8.1f} ms  ({t / ours:.1f}x ours)")
        t, _ = best(a.runs, export_only(cmd, None))
        results["prolly_export"] = t
        print(f"prolly dolt export alone (CSV bytes):    {t * 1000:8.1f} ms  (ours is {ours / t:.2f}x of it)")
    if os.path.exists(a.dolt):
        cmd = [a.dolt, "sql", "-r", "csv", "-q", f"select * from {a.table}"]
        t, out = best(max(1, a.runs - 1), csv_route(cmd, a.db))
        assert out.num_rows == n
        results["dolt_csv"] = t
        print(f"dolt sql -r csv | read_csv:              {t * 1000:8.1f} ms  ({t / ours:.1f}x ours)")

    # Point gets on the warm table: random existing keys, one Python call each.
    keys = [r[0] for r in table.scan(limit=n)][:: max(1, n // 100_000)]
    random.seed(1)
    sample = [random.choice(keys) for _ in range(a.gets)]
    get = table.get
    for k in sample[:10_000]:
        get(k)
    t0 = time.perf_counter()
    for k in sample:
        get(k)
    per = (time.perf_counter() - t0) / len(sample)
    t0 = time.perf_counter()
    for k in sample:
        pass
    loop = (time.perf_counter() - t0) / len(sample)
    print(f"point get from Python: {per * 1e6:.2f} µs/call (loop overhead {loop * 1e6:.2f} µs)")
    db.close()


if __name__ == "__main__":
    main()
