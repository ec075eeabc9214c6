"""A fixed loop of point gets for instruction counts (callgrind), which the machine's load does
not change: every one of 20,000 random existing keys read once, then LOOPS more passes.

    valgrind --tool=callgrind --callgrind-out-file=cg.N python python/bench/get_loop.py DB_DIR N

Instructions per get = (total with N=3 - total with N=1) / 40,000. Results in docs/PERF.md.
"""
import random
import sys

import prollystore.dolt

t = prollystore.dolt.open(sys.argv[1]).table(sys.argv[3] if len(sys.argv) > 3 else "t")
get = t.get
random.seed(1)
keys = [random.randint(1, 1_000_000) for _ in range(20000)]
for k in keys:
    get(k)
for _ in range(int(sys.argv[2])):
    for k in keys:
        get(k)
