#!/usr/bin/env python3
"""ALTER TABLE + commit, the real Dolt against ours, in alternated pairs on fresh copies of DB,
timed by time.perf_counter around each command (finer than /usr/bin/time's 10 ms steps):
`dolt sql -q SQL` + `dolt add -A` + `dolt commit` against `prolly dolt . alter SQL` +
`prolly dolt . commit`. Prints each pair, the medians, their ratio and both table hashes.

    scripts/dolt_alter_pairs.py PAIRS SQL DB    (DB: scripts/make_dolt_bench_db.sh)

PROLLY names the prolly binary (default target/release/prolly), DOLT the dolt binary.
"""
import os, subprocess, sys, time, shutil, statistics, tempfile
pairs = int(sys.argv[1]); sql = sys.argv[2]; db = sys.argv[3]
prolly = os.path.abspath(os.environ.get('PROLLY', os.path.join(os.path.dirname(__file__), '..', 'target', 'release', 'prolly')))
dolt = os.environ.get('DOLT', shutil.which('dolt') or '/work/dolt-bin/dolt')
work = tempfile.mkdtemp(prefix='alter-pairs-'); home = os.path.join(work, 'home')
os.makedirs(home, exist_ok=True)
env = dict(os.environ, HOME=home, DOLT_ROOT_PATH=home, TZ='UTC')
for k, v in (('user.name', 'bench'), ('user.email', 'bench@example.com')):
    subprocess.run([dolt, 'config', '--global', '--add', k, v], env=env, check=True, capture_output=True)
def run(side):
    d = f'{work}/{side}'
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(db, d)
    subprocess.run(['sync'])
    if side == 'dolt':
        cmds = [[dolt, 'sql', '-q', sql], [dolt, 'add', '-A'], [dolt, 'commit', '-m', 'alter']]
    else:
        cmds = [[prolly, 'dolt', '.', 'alter', sql], [prolly, 'dolt', '.', 'commit', '-m', 'alter']]
    t = 0.0
    for c in cmds:
        t0 = time.perf_counter()
        subprocess.run(c, cwd=d, env=env, check=True, stdout=subprocess.DEVNULL)
        t += time.perf_counter() - t0
    h = subprocess.run([dolt, 'sql', '-r', 'csv', '-q', "select dolt_hashof_table('t')"], cwd=d, env=env, check=True, capture_output=True, text=True).stdout.split()[-1]
    return t, h
res = {'dolt': [], 'prolly': []}; hashes = {}
print('load', open('/proc/loadavg').read().split()[:3])
for i in range(pairs):
    for side in (['dolt', 'prolly'] if i % 2 == 0 else ['prolly', 'dolt']):
        t, h = run(side); res[side].append(t); hashes.setdefault(side, set()).add(h)
    print(f"pair {i}: dolt {res['dolt'][-1]*1000:.1f} ms, ours {res['prolly'][-1]*1000:.1f} ms", flush=True)
md, mp = statistics.median(res['dolt']), statistics.median(res['prolly'])
ratios = sorted(d / p for d, p in zip(res['dolt'], res['prolly']))
print(f"{sql}: median dolt {md*1000:.1f} ms, ours {mp*1000:.1f} ms, ratio of medians {md/mp:.2f}x, median pair ratio {statistics.median(ratios):.2f}x; hashes dolt {hashes['dolt']} ours {hashes['prolly']} same={hashes['dolt']==hashes['prolly']}")
print('load', open('/proc/loadavg').read().split()[:3])
shutil.rmtree(work, ignore_errors=True)
