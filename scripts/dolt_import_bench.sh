#!/usr/bin/env bash
# Side-by-side import of ROWS rows (8 mixed columns, one secondary index) into a new table and
# a commit: the real Dolt (`dolt sql -q 'CREATE TABLE …'` + `dolt table import -u` + `dolt add`
# + `dolt commit`)
# against `prolly dolt DB import --create` + `prolly dolt DB commit`, each into a fresh
# database made by `dolt init`, on the same machine, in one run. Prints wall-clock seconds
# and the ratio; checks that Dolt reads our table (row count) and that both tables hold the
# same rows (`dolt sql` checksums of the same query on both).
#
#   scripts/dolt_import_bench.sh [ROWS] [WORKDIR]
#
# ROWS defaults to 1000000, WORKDIR to a new temporary folder (on disk: the fsyncs count).
# DOLT names the dolt binary (default /work/dolt-bin/dolt or dolt on PATH); PROLLY the prolly
# binary (default target/release/prolly; build it with `cargo build --release -p
# prollystore-cli`). ONLY_PROLLY=1 runs our side alone (for before/after pairs of our binary:
# prints our wall and CPU seconds and the table hash, rhaqunpq… for 1M rows).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
work=${2:-$(mktemp -d)}
dolt=${DOLT:-$(command -v dolt || echo /work/dolt-bin/dolt)}
target_dir=${CARGO_TARGET_DIR:-target}
[[ $target_dir = /* ]] || target_dir=$PWD/$target_dir
prolly=${PROLLY:-$target_dir/release/prolly}
prolly=$(cd "$(dirname "$prolly")" && pwd)/$(basename "$prolly")
mkdir -p "$work"
work=$(cd "$work" && pwd)
export DOLT_ROOT_PATH="$work/home"
mkdir -p "$DOLT_ROOT_PATH"
"$dolt" config --global --add user.name bench >/dev/null
"$dolt" config --global --add user.email bench@example.com >/dev/null
export HOME="$DOLT_ROOT_PATH"

schema='CREATE TABLE t (
  id bigint NOT NULL,
  name varchar(40) NOT NULL,
  qty int,
  price decimal(12,2),
  score double,
  day date,
  at datetime(6),
  flag tinyint,
  PRIMARY KEY (id),
  KEY qty_idx (qty)
)'
echo "$schema;" >"$work/schema.sql"
awk -v n="$rows" 'BEGIN {
  print "id,name,qty,price,score,day,at,flag";
  for (i = 0; i < n; i++) {
    id = i * 7 + 3;
    printf "%d,name-%d,%d,%d.%02d,%.3f,20%02d-%02d-%02d,2024-01-01 00:%02d:%02d.%06d,%d\n",
      id, (i * 7919) % 1000003, i % 10007, i % 99999, i % 100, (i % 1000) / 7.0,
      i % 30, i % 12 + 1, i % 28 + 1, i % 60, (i / 60) % 60, i % 1000000, i % 2;
  }
}' >"$work/rows.csv"

for who in dolt prolly; do
  rm -rf "$work/$who"
  mkdir -p "$work/$who"
  (cd "$work/$who" && "$dolt" init >/dev/null)
done
sync

# Wall-clock and CPU (user + system) seconds of each command, summed per side: on a shared
# machine the CPU time is the steadier figure (Dolt's import uses several threads, so its wall
# time on an idle machine is below its CPU time).
measure() { # measure SIDE CMD...: runs CMD in the side's database directory
  local side=$1
  shift
  (cd "$work/$side" && /usr/bin/time -f "%e %U %S" -a -o "$work/$side.time" "$@" >/dev/null 2>"$work/$side.err") ||
    { echo "$side: $* failed: $(cat "$work/$side.err")" >&2; exit 1; }
}
rm -f "$work/dolt.time" "$work/prolly.time"
if [[ ${ONLY_PROLLY:-} = 1 ]]; then
  measure prolly "$prolly" dolt . import t "$work/rows.csv" --create "$schema"
  measure prolly "$prolly" dolt . commit -m "import"
  awk '{ w += $1; c += $2 + $3 } END { printf "prolly import + commit: wall %.2f s, cpu %.2f s\n", w, c }' "$work/prolly.time"
  (cd "$work/prolly" && "$dolt" sql -r csv -q "select dolt_hashof_table('t')" | tail -1)
  exit 0
fi
# `dolt table import -c --schema FILE` drops the schema's secondary indexes (checked with
# `dolt schema show`), so the Dolt side creates the table with `dolt sql` and imports into it.
measure dolt "$dolt" sql -q "$schema"
measure dolt "$dolt" table import -u t "$work/rows.csv"
measure dolt "$dolt" add -A
measure dolt "$dolt" commit -m "import"
measure prolly "$prolly" dolt . import t "$work/rows.csv" --create "$schema"
measure prolly "$prolly" dolt . commit -m "import"
sum() { awk -v f="$2" '{ s += (f == "wall" ? $1 : $2 + $3) } END { printf "%.2f", s }' "$work/$1.time"; }
dw=$(sum dolt wall) dc=$(sum dolt cpu) pw=$(sum prolly wall) pc=$(sum prolly cpu)
printf 'rows: %d (load average %s)\n' "$rows" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'dolt sql create + table import -u + add + commit: wall %s s, cpu %s s\n' "$dw" "$dc"
printf 'prolly dolt import --create + commit: wall %s s, cpu %s s (%.0f rows/s of cpu)\n' "$pw" "$pc" "$(echo "$rows / $pc" | bc -l)"
printf 'ratio dolt/prolly: wall %.1fx, cpu %.1fx\n' "$(echo "$dw / $pw" | bc -l)" "$(echo "$dc / $pc" | bc -l)"

for who in dolt prolly; do
  (cd "$work/$who" && "$dolt" sql -r csv -q "select dolt_hashof_table('t')" | tail -1) >"$work/$who.hash"
done
if cmp -s "$work/dolt.hash" "$work/prolly.hash"; then
  echo "same table hash (dolt_hashof_table): $(cat "$work/prolly.hash")"
else
  echo "table hashes differ: dolt $(cat "$work/dolt.hash"), prolly $(cat "$work/prolly.hash")"
fi
q="select count(*), sum(qty), sum(price), sum(score), max(name), min(day), max(at), sum(flag) from t"
qi="select count(*), sum(id) from t where qty between 100 and 200"
for who in dolt prolly; do
  (cd "$work/$who" && "$dolt" sql -r csv -q "$q; $qi" | tr '\n' ' ' && echo) >"$work/$who.check"
done
if cmp -s "$work/dolt.check" "$work/prolly.check"; then
  echo "same rows in both (dolt sql on each): $(cat "$work/prolly.check")"
else
  echo "DIFFERENT: dolt: $(cat "$work/dolt.check") prolly: $(cat "$work/prolly.check")" >&2
  exit 1
fi
