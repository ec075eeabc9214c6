"""Writing a pyarrow Table into a Dolt table (results in docs/PERF.md): `Writer.insert(table,
data)` with Arrow data (written column by column through the writer's streamed path, no Python
object per value) against the same rows as Python tuples (`to_pylist()`, the row-by-row path
pandas DataFrames and iterables take). Both commits are printed: equal hashes mean equal tables.

    python python/bench/bench_write_arrow.py EMPTY_DB [--rows 1000000] [--runs 2]

EMPTY_DB is any Dolt database without a table `t` (`dolt init` in an empty folder, or the
repository's `dolt-write/basic/before` vector); it is copied for every run, never changed.
"""

import argparse
import shutil
import tempfile
import time

import pyarrow as pa

import prollystore.dolt as dolt

CREATE = "CREATE TABLE t (id BIGINT PRIMARY KEY, a BIGINT, b VARCHAR(32), c DOUBLE)"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("db")
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--runs", type=int, default=2)
    args = p.parse_args()
    n = args.rows
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "a": pa.array([i * 7 % 1_000_003 for i in range(n)], pa.int64()),
            "b": pa.array([f"row-{i}" for i in range(n)]),
            "c": pa.array([i / 8 for i in range(n)]),
        }
    )
    work = tempfile.mkdtemp(prefix="bench-write-arrow-")
    for run in range(args.runs):
        for how in ("arrow", "rows"):
            dst = f"{work}/db"
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(args.db, dst)
            with dolt.Writer(dst) as w:
                w.create_table(CREATE)
                t0 = time.perf_counter()
                if how == "arrow":
                    w.insert("t", table)
                else:
                    w.insert("t", table.to_pylist())
                took = time.perf_counter() - t0
                h = w.commit("bench", "Bench", "bench@example.com", 1_704_067_200)
            print(f"run {run}: {how:5} {took:6.2f} s  commit {h}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
