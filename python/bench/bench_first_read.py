"""The first read of a Dolt table into a pyarrow.Table in a fresh Python process, against the CLI
export of the same table to /dev/null in a fresh process (figures in docs/PERF.md, "First read
in a fresh process").

    python python/bench/bench_first_read.py DB_DIR [--pairs 10] [--prolly target/release/prolly]
        [--dolt /work/dolt-bin/dolt]

Each pair runs, alternated, `prolly dolt DB export t > /dev/null` (whole process, wall clock)
and a fresh `python` that imports pyarrow and prollystore.dolt, opens the database and then
times, from after the imports and the open, the read of table `t` into a pyarrow.Table:
`t.to_arrow()` by default (`--how table` times `pyarrow.table(t)`, which on its first call in a
process imports pandas when pandas is installed; `--how stream` times
`pyarrow.RecordBatchReader.from_stream(t).read_all()`). The same child then times a second read
in the same process. Medians of the pairs and the median of the per-pair ratios are printed;
`--dolt` adds one run of `dolt sql -r csv -q 'select * from t'` piped into
`pyarrow.csv.read_csv`. Run it as `chrt -f 10 python ...` on a shared machine (the figures in
docs/PERF.md were taken that way).

DB_DIR is made by scripts/make_dolt_arrow_bench_db.sh (table `t`, 1M rows, 8 columns).
"""

import argparse
import io
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import resource, sys, time
t0 = time.perf_counter()
import pyarrow as pa
t1 = time.perf_counter()
import prollystore.dolt
t2 = time.perf_counter()
db = prollystore.dolt.open(sys.argv[1])
t = db.table(sys.argv[2])
how = sys.argv[3]
read = {
    "to_arrow": lambda: t.to_arrow(),
    "table": lambda: pa.table(t),
    "stream": lambda: pa.RecordBatchReader.from_stream(t).read_all(),
}[how]
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
t3 = time.perf_counter()
first = read()
t4 = time.perf_counter()
f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
second = read()
t5 = time.perf_counter()
assert first.num_rows == second.num_rows > 0
print(t1 - t0, t2 - t1, t4 - t3, t5 - t4, f1 - f0)
"""


def child(db, table, how):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, db, table, how], check=True, capture_output=True, text=True
    ).stdout
    return [float(x) for x in out.split()]


def export(prolly, db, table):
    t = time.perf_counter()
    with open(os.devnull, "wb") as null:
        subprocess.run([prolly, "dolt", db, "export", table], check=True, stdout=null)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("--table", default="t")
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--how", default="to_arrow", choices=["to_arrow", "table", "stream"])
    ap.add_argument("--prolly", default="target/release/prolly")
    ap.add_argument("--dolt", default=None)
    a = ap.parse_args()
    prolly = os.path.abspath(a.prolly)
    rows = []
    for _ in range(a.pairs):
        cli = export(prolly, a.db, a.table)
        imp_pa, imp_ps, first, second, faults = child(a.db, a.table, a.how)
        rows.append((cli, first, second, imp_pa, imp_ps, faults))
        print(
            f"CLI export {cli * 1000:7.1f} ms | first read ({a.how}) {first * 1000:7.1f} ms, "
            f"second {second * 1000:6.1f} ms, minor faults {faults:.0f} | "
            f"import pyarrow {imp_pa * 1000:.0f} ms, prollystore {imp_ps * 1000:.0f} ms"
        )
    med = lambda i: statistics.median(r[i] for r in rows)  # noqa: E731
    ratio = statistics.median(r[1] / r[0] for r in rows)
    print(
        f"{len(rows)} pairs, medians: CLI export {med(0) * 1000:.1f} ms, first read "
        f"{med(1) * 1000:.1f} ms, second read {med(2) * 1000:.1f} ms, import pyarrow "
        f"{med(3) * 1000:.1f} ms; first read / CLI export (median of the pairs' ratios) "
        f"{ratio:.3f}"
    )
    if a.dolt:
        import pyarrow.csv

        t = time.perf_counter()
        data = subprocess.run(
            [a.dolt, "sql", "-r", "csv", "-q", f"select * from {a.table}"],
            cwd=a.db,
            check=True,
            capture_output=True,
        ).stdout
        table = pyarrow.csv.read_csv(io.BytesIO(data))
        dolt = time.perf_counter() - t
        print(
            f"dolt sql -r csv | pyarrow.csv.read_csv: {dolt * 1000:.0f} ms ({table.num_rows} rows), "
            f"{dolt / med(1):.1f}x the first read"
        )


if __name__ == "__main__":
    main()
