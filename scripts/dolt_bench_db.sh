#!/usr/bin/env bash
# Makes the 1M-row Dolt database the Dolt benchmarks read (keyed gets in
# `benches/benches/dolt_get.rs`, export with PROLLY_DOLT_BENCH): a table `t` of mixed column
# types, written by the real Dolt into its chunk journal, committed on `main`.
#
#   scripts/dolt_bench_db.sh [DIR] [ROWS]
#
# DIR defaults to target/dolt-bench-1m (never committed), ROWS to 1000000. Needs `dolt` on PATH
# or DOLT=/path/to/dolt. Prints the directory made.
set -euo pipefail
dir=${1:-target/dolt-bench-1m}
rows=${2:-1000000}
dolt=${DOLT:-dolt}
command -v "$dolt" >/dev/null || { echo "no dolt binary (set DOLT=/path/to/dolt)" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
"$dolt" init --name bench --email bench@example.com >/dev/null
"$dolt" sql -q "create table t (
  id bigint primary key,
  name varchar(40) not null,
  qty int,
  price decimal(12,2),
  score double,
  day date,
  at datetime(6),
  flag tinyint
)"
# Deterministic rows: ids are spread (not dense) so gets also miss between them.
awk -v n="$rows" 'BEGIN {
  print "id,name,qty,price,score,day,at,flag";
  for (i = 0; i < n; i++) {
    id = i * 7 + 3;
    printf "%d,name-%d,%d,%d.%02d,%.3f,20%02d-%02d-%02d,2024-01-01 00:%02d:%02d.%06d,%d\n",
      id, (i * 7919) % 1000003, i % 10007, i % 99999, i % 100, (i % 1000) / 7.0,
      i % 30, i % 12 + 1, i % 28 + 1, i % 60, (i / 60) % 60, i % 1000000, i % 2;
  }
}' > rows.csv
"$dolt" table import -u t rows.csv >/dev/null
rm rows.csv
"$dolt" add -A >/dev/null
"$dolt" commit -m "1M rows" >/dev/null
pwd
