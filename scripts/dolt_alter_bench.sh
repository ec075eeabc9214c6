#!/usr/bin/env bash
# ALTER TABLE + commit on a 1M-row table, the real Dolt against ours, in alternated pairs on
# the same machine: `dolt sql -q "ALTER TABLE …"` + `dolt add -A` + `dolt commit` against
# `prolly dolt DB alter "ALTER TABLE …"` + `prolly dolt DB commit`, each on a fresh copy of
# the same database. Two statements: ADD COLUMN (nullable, at the end) and ADD INDEX. Prints
# each pair's wall-clock and CPU (user + system) seconds, the median of each side and the
# ratios, and checks that both sides give the same table hash (`dolt_hashof_table`).
#
#   scripts/dolt_alter_bench.sh [PAIRS] [DB] [WORKDIR]
#
# PAIRS defaults to 5; DB to target/dolt-bench/diff1m (made by `scripts/make_dolt_bench_db.sh`:
# table t (id bigint primary key, a bigint, b varchar(32), c double), 1M rows). DOLT names the
# dolt binary (default /work/dolt-bin/dolt or dolt on PATH); PROLLY the prolly binary (default
# target/release/prolly). On a shared machine the CPU figures are the steadier ones.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
db=${2:-target/dolt-bench/diff1m}
work=${3:-$(mktemp -d)}
dolt=${DOLT:-$(command -v dolt || echo /work/dolt-bin/dolt)}
target_dir=${CARGO_TARGET_DIR:-target}
[[ $target_dir = /* ]] || target_dir=$PWD/$target_dir
prolly=${PROLLY:-$target_dir/release/prolly}
prolly=$(cd "$(dirname "$prolly")" && pwd)/$(basename "$prolly")
db=$(cd "$db" && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)
export DOLT_ROOT_PATH="$work/home" HOME="$work/home"
mkdir -p "$HOME"
"$dolt" config --global --add user.name bench >/dev/null
"$dolt" config --global --add user.email bench@example.com >/dev/null

# run SIDE SQL: one ALTER + commit on a fresh copy; appends "wall cpu" to $work/SIDE.times.
run() {
  local side=$1 sql=$2 dir="$work/$1"
  rm -rf "$dir"
  cp -r "$db" "$dir"
  sync
  rm -f "$work/t.time"
  if [ "$side" = dolt ]; then
    (cd "$dir" &&
      /usr/bin/time -f "%e %U %S" -a -o "$work/t.time" "$dolt" sql -q "$sql" >/dev/null &&
      /usr/bin/time -f "%e %U %S" -a -o "$work/t.time" "$dolt" add -A >/dev/null &&
      /usr/bin/time -f "%e %U %S" -a -o "$work/t.time" "$dolt" commit -m alter >/dev/null)
  else
    (cd "$dir" &&
      /usr/bin/time -f "%e %U %S" -a -o "$work/t.time" "$prolly" dolt . alter "$sql" >/dev/null &&
      /usr/bin/time -f "%e %U %S" -a -o "$work/t.time" "$prolly" dolt . commit -m alter >/dev/null)
  fi
  awk '{ w += $1; c += $2 + $3 } END { printf "%.3f %.3f\n", w, c }' "$work/t.time" | tee -a "$work/$side.times"
  (cd "$dir" && "$dolt" sql -r csv -q "select dolt_hashof_table('t')" | tail -1) >"$work/$side.hash"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for sql in "ALTER TABLE t ADD COLUMN e INT" "ALTER TABLE t ADD INDEX ia (a)"; do
  rm -f "$work/dolt.times" "$work/prolly.times"
  for i in $(seq 1 "$pairs"); do
    if [ $((i % 2)) = 1 ]; then order="dolt prolly"; else order="prolly dolt"; fi
    line="pair $i:"
    for side in $order; do
      line="$line $side $(run "$side" "$sql" | tail -1 | awk '{ printf "%s s wall / %s s cpu", $1, $2 }');"
    done
    echo "$line"
    cmp -s "$work/dolt.hash" "$work/prolly.hash" ||
      { echo "table hashes differ: dolt $(cat "$work/dolt.hash"), prolly $(cat "$work/prolly.hash")" >&2; exit 1; }
  done
  dw=$(cut -d' ' -f1 "$work/dolt.times" | median) dc=$(cut -d' ' -f2 "$work/dolt.times" | median)
  pw=$(cut -d' ' -f1 "$work/prolly.times" | median) pc=$(cut -d' ' -f2 "$work/prolly.times" | median)
  printf '%s + commit: dolt %s s wall / %s s cpu, prolly %s s wall / %s s cpu (medians of %d); dolt/prolly %.1fx wall, %.1fx cpu; same table hash %s\n' \
    "$sql" "$dw" "$dc" "$pw" "$pc" "$pairs" "$(echo "$dw / $pw" | bc -l)" "$(echo "$dc / $pc" | bc -l)" "$(cat "$work/prolly.hash")"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
