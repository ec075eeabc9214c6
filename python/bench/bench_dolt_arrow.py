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
import resource
import subprocess
import time

import pyarrow as pa
import pyarrow.csv

import prollystore.dolt


def cpu_now():
    """CPU seconds used so far by this process (all threads) and its finished children: on a
    shared machine it varies far less than wall time."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def best(runs, fn):
    """Best wall and best CPU time of `runs` runs, and the last result."""
    walls, cpus = [], []
    out = None
    for _ in range(runs):
        c0, t0 = cpu_now(), time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(cpu_now() - c0)
    return (min(walls), min(cpus)), out


def show(label, t, ours=None):
    wall, cpu = t
    line = f"{label:42s} wall {wall * 1000:8.1f} ms   cpu {cpu * 1000:8.1f} ms"
    if ours is not None:
        line += f"   ({wall / ours[0]:.1f}x / {cpu / ours[1]:.1f}x ours)"
    print(line)


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
    show("prollystore -> pyarrow.Table", ours)
    fast_db = prollystore.dolt.open(a.db, verify_hashes=False)
    fast = fast_db.table(a.table, at="HEAD")
    t, _ = best(a.runs, lambda: pa.table(fast))
    show("  the same, verify_hashes=False", t, ours)

    prolly = os.path.abspath(a.prolly)
    if os.path.exists(prolly):
        cmd = [prolly, "dolt", a.db, "export", a.table]
        t, out = best(a.runs, csv_route(cmd, None))
        assert out.num_rows == n
        show("prolly dolt export | read_csv", t, ours)
        t, _ = best(a.runs, export_only(cmd, None))
        show("prolly dolt export alone (CSV bytes)", t, ours)
    if os.path.exists(a.dolt):
        cmd = [a.dolt, "sql", "-r", "csv", "-q", f"select * from {a.table}"]
        t, out = best(max(1, a.runs - 1), csv_route(cmd, a.db))
        assert out.num_rows == n
        show("dolt sql -r csv | read_csv", t, ours)

    # Point gets on the warm table: random existing keys, one Python call each.
    keys = arrow.column(0).to_pylist()
    random.seed(1)
    sample = [random.choice(keys) for _ in range(a.gets)]
    get = table.get
    for k in keys:  # warm: every leaf read once
        get(k)
    for label, clock in (("wall", time.perf_counter), ("cpu", time.process_time)):
        t0 = clock()
        for k in sample:
            get(k)
        per = (clock() - t0) / len(sample)
        t0 = clock()
        for k in sample:
            get(k + n * 10)  # absent: lookup without building a row
        miss = (clock() - t0) / len(sample)
        print(f"point get from Python ({label}): {per * 1e6:.2f} µs/call; absent key {miss * 1e6:.2f} µs")
    db.close()


if __name__ == "__main__":
    main()
