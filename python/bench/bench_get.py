"""Point `get` from Python on a warm table: µs of CPU per call (best of 3 loops over the same
random existing keys, after every key was read once), and for absent keys.

    python python/bench/bench_get.py [N] [DB_DIR]

DB_DIR (default /tmp/pybench/arrow1m) is made by scripts/make_dolt_arrow_bench_db.sh (table
`t`, 1M rows). Results in docs/PERF.md.
"""
import random, sys, time
import prollystore.dolt
n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
db = prollystore.dolt.open(sys.argv[2] if len(sys.argv) > 2 else "/tmp/pybench/arrow1m")
t = db.table("t")
random.seed(1)
keys = [random.randint(1, 1_000_000) for _ in range(n)]
get = t.get
for k in range(1, 1_000_001):
    get(k)
best = 1e9
for _ in range(3):
    c0 = time.process_time()
    for k in keys:
        get(k)
    best = min(best, (time.process_time() - c0) / n)
print(f"get: {best*1e6:.2f} us/call (cpu), row {get(keys[0])}")
best = 1e9
for _ in range(3):
    c0 = time.process_time()
    for k in keys:
        get(k + 2_000_000)
    best = min(best, (time.process_time() - c0) / n)
print(f"absent: {best*1e6:.2f} us/call")
