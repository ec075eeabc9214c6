#!/usr/bin/env bash
# Makes the Dolt database the Arrow export benchmark reads: a 1M-row table `t` of 8 mixed
# columns (bigint key, int, decimal(12,2), double, varchar(40), text, datetime(6), date),
# committed, with the real Dolt CLI.
#   scripts/make_dolt_arrow_bench_db.sh [OUT_DIR] [ROWS]
# OUT_DIR defaults to target/dolt-bench/arrow1m (not committed; the benchmark looks there, or at
# $PROLLY_DOLT_ARROW_BENCH). DOLT names the dolt binary (default: dolt on PATH, else
# /work/dolt-bin/dolt). Takes a minute or two per million rows. IMPORT=prolly imports with
# `prolly dolt import --create` instead (PROLLY: the binary, default target/release/prolly),
# about 19x faster; the table is the one Dolt's import makes (same table hash), and `dolt`
# still makes the database and counts the rows.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/dolt-bench/arrow1m}
rows=${2:-1000000}
dolt=${DOLT:-$(command -v dolt || echo /work/dolt-bin/dolt)}
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export DOLT_ROOT_PATH="$home"
prolly=${PROLLY:-$PWD/target/release/prolly}
cd "$out"
"$dolt" config --global --add user.name bench >/dev/null
"$dolt" config --global --add user.email bench@example.com >/dev/null
"$dolt" init >/dev/null
schema="create table t (id bigint primary key, qty int, price decimal(12,2), score double, name varchar(40), note text, created datetime(6), day date)"
[ "${IMPORT:-dolt}" = prolly ] || "$dolt" sql -q "$schema"
awk -v n="$rows" 'BEGIN {
  print "id,qty,price,score,name,note,created,day";
  for (i = 1; i <= n; i++) {
    s = i % 86400; d = i % 3650;
    printf "%d,%d,%d.%02d,%.4f,name-%d,note %d for row %d,2024-%02d-%02d %02d:%02d:%02d.%06d,20%02d-%02d-%02d\n",
      i, (i * 7919) % 100000 - 50000, i % 100000, i % 100, i / 7.0, i, i * 31 % 9973, i,
      i % 12 + 1, i % 28 + 1, int(s / 3600), int(s / 60) % 60, s % 60, i % 1000000,
      d % 30, d % 12 + 1, d % 28 + 1
  } }' >"$home/rows.csv"
if [ "${IMPORT:-dolt}" = prolly ]; then
  "$prolly" dolt . import t "$home/rows.csv" --create "$schema" >/dev/null
  "$prolly" dolt . commit -m "$rows mixed rows" --author "bench <bench@example.com>" >/dev/null
else
  "$dolt" table import -u t "$home/rows.csv" >/dev/null 2>&1
  "$dolt" add -A >/dev/null
  "$dolt" commit -m "$rows mixed rows" >/dev/null
fi
"$dolt" sql -q "select count(*) from t"
echo "made $out"
