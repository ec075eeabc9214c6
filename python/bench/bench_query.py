"""DuckDB over our Arrow stream: the GROUP BY of crates/query/examples/query_bench.rs, for the
ratio in docs/PERF.md.

    python python/bench/bench_query.py DB [RUNS]

Each run opens the database (cold: the table's leaves read from disk on the first query) and
runs the query twice through DuckDB's scan of ``db.table("t")`` (the Arrow C stream: every
column of every row), printing both times.
"""

import sys
import time

import duckdb

import prollystore.dolt

QUERY = "SELECT day, sum(qty), sum(price), count(*) FROM t GROUP BY day"


def main() -> None:
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    for run in range(runs):
        start = time.perf_counter()
        with prollystore.dolt.open(path) as db:
            t = db.table("t", at="main")  # noqa: F841 (DuckDB finds it by name)
            groups = len(duckdb.sql(QUERY).fetchall())
            cold = time.perf_counter() - start
            start = time.perf_counter()
            t = db.table("t", at="main")  # noqa: F841
            duckdb.sql(QUERY).fetchall()
            warm = time.perf_counter() - start
        print(f"run {run}: cold {cold:.3f} s, warm {warm:.3f} s, {groups} groups", flush=True)


if __name__ == "__main__":
    main()
