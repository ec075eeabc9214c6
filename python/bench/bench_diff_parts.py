"""Cutting a table's diff into parts, and how balanced the parts' outputs are (figures in
docs/PERF.md):

    python python/bench/bench_diff_parts.py DB FROM TO TABLE 64 9

Times `Database.split_diff` on a fresh handle (the internal nodes on the changed paths read and
hash-checked) and again on the same handle (medians of RUNS), then reads every part (each on
its own, as a worker would) and prints the rows each gives against the rows it compares.
"""

import statistics
import sys
import time

import prollystore.dolt as pd


def spread(xs):
    mean = statistics.mean(xs)
    return f"min {min(xs)} max {max(xs)} mean {mean:.0f} (max/mean {max(xs) / mean:.3f}, min/mean {min(xs) / mean:.3f})" if mean else "all 0"


def main() -> None:
    path, from_, to, table = sys.argv[1:5]
    n = int(sys.argv[5]) if len(sys.argv) > 5 else 64
    runs = int(sys.argv[6]) if len(sys.argv) > 6 else 9
    fresh, warm = [], []
    for _ in range(runs):
        with pd.open(path) as db:
            t0 = time.perf_counter()
            parts = db.split_diff(from_, to, table, n)
            fresh.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            db.split_diff(from_, to, table, n)
            warm.append(time.perf_counter() - t0)
    print(f"{len(parts)} parts; split_diff fresh handle median {statistics.median(fresh) * 1e3:.2f} ms, "
          f"same handle {statistics.median(warm) * 1e3:.2f} ms; JSON {len(parts[0].to_json())} bytes a part")
    compared = [p.rows_compared for p in parts]
    t0 = time.perf_counter()
    given = [sum(b.num_rows for b in p.read()) for p in parts]
    read = time.perf_counter() - t0
    with pd.open(path) as db:
        t0 = time.perf_counter()
        whole = sum(b.num_rows for b in db.diff(from_, to, table).to_arrow().to_batches())
        whole_s = time.perf_counter() - t0
    assert sum(given) == whole, (sum(given), whole)
    print(f"rows compared: {spread(compared)}")
    print(f"rows given:    {spread(given)}; total {sum(given)} = the whole diff's")
    print(f"parts read one after another {read:.2f} s; the whole diff (Database.diff, to Arrow) {whole_s:.2f} s")


if __name__ == "__main__":
    main()
