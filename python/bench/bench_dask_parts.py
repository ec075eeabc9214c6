"""Rows per second of a Dolt table read through its parts by a Dask LocalCluster of 1 and of 2
worker processes (one thread each), in one run, alternated (figures in docs/PERF.md):

    scripts/make_dolt_arrow_bench_db.sh /tmp/arrow1m
    python python/bench/bench_dask_parts.py /tmp/arrow1m t 4 5

Each task reads one part into a pandas DataFrame on its worker (the database opened there: a
first read, as every distributed worker pays) and returns its row count, so only counts travel
back. The first pass of each cluster (worker start-up, imports) is not timed.
"""

import statistics
import sys
import time

import distributed

from prollystore.dask import read_dolt


def main() -> None:
    path, table = sys.argv[1], sys.argv[2]
    parts = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    clusters = {}
    for workers in (1, 2):
        cluster = distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        clusters[workers] = (cluster, distributed.Client(cluster, set_as_default=False))
    times = {1: [], 2: []}
    rows = 0
    try:
        for run in range(runs + 1):
            for workers, (_, client) in clusters.items():
                df = read_dolt(path, table, npartitions=parts, at="HEAD")
                t = time.perf_counter()
                rows = int(client.compute(df.map_partitions(len).sum()).result())
                if run > 0:
                    times[workers].append(time.perf_counter() - t)
    finally:
        for cluster, client in clusters.values():
            client.close()
            cluster.close()
    med = {w: statistics.median(v) for w, v in times.items()}
    for w in (1, 2):
        print(f"{w} worker(s), {parts} parts: {rows} rows in {med[w]:.3f} s (median of {runs}): "
              f"{rows / med[w] / 1e6:.2f} M rows/s; all runs {[round(x, 3) for x in times[w]]}")
    print(f"2 workers / 1 worker: {med[1] / med[2]:.2f}x")


if __name__ == "__main__":
    main()
