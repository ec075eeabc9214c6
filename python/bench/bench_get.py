"""Point `get` from Python on a warm table: µs of CPU per call (best of 3 loops over the same
random existing keys, after every key was read once), and for absent keys.

    python python/bench/bench_get.py [N] [DB_DIR] [TABLE]

DB_DIR (default /tmp/pybench/arrow1m) is made by scripts/make_dolt_arrow_bench_db.sh (table
`t`, 1M rows, keys 1..1,000,000). Prints the load average beside the figures (the machine's
other work shows in wall time more than in CPU time). Results in docs/PERF.md.
"""
import os, random, sys, time
import prollystore.dolt
n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
db = prollystore.dolt.open(sys.argv[2] if len(sys.argv) > 2 else "/tmp/pybench/arrow1m")
t = db.table(sys.argv[3] if len(sys.argv) > 3 else "t")
random.seed(1)
keys = [random.randint(1, 1_000_000) for _ in range(n)]
get = t.get
for k in range(1, 1_000_001):
    get(k)


def best_of_3(ks):
    cpu, wall = 1e9, 1e9
    for _ in range(3):
        c0, w0 = time.process_time(), time.perf_counter()
        for k in ks:
            get(k)
        cpu = min(cpu, (time.process_time() - c0) / len(ks))
        wall = min(wall, (time.perf_counter() - w0) / len(ks))
    return cpu * 1e6, wall * 1e6


cpu, wall = best_of_3(keys)
print(f"get: {cpu:.2f} us/call cpu ({wall:.2f} wall), row {get(keys[0])}")
cpu, wall = best_of_3([k + 2_000_000 for k in keys])
print(f"absent: {cpu:.2f} us/call cpu ({wall:.2f} wall)")
print("load average: %.1f %.1f %.1f" % os.getloadavg())
