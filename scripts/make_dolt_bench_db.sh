#!/usr/bin/env bash
# Makes the Dolt database the `dolt_diff` benchmark reads: a 1M-row table `t`
# (id bigint primary key, a bigint, b varchar(32), c double) committed, then one row updated and
# committed again on main (branch `base` stays at the first commit), with the real Dolt CLI.
#   scripts/make_dolt_bench_db.sh [OUT_DIR] [ROWS]
# OUT_DIR defaults to target/dolt-bench/diff1m (not committed; the benchmark looks there, or
# at $PROLLY_DOLT_DIFF_BENCH). DOLT names the dolt binary (default: dolt on PATH, else
# /work/dolt-bin/dolt). Takes a minute or so.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/dolt-bench/diff1m}
rows=${2:-1000000}
dolt=${DOLT:-$(command -v dolt || echo /work/dolt-bin/dolt)}
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export DOLT_ROOT_PATH="$home"
cd "$out"
"$dolt" config --global --add user.name bench >/dev/null
"$dolt" config --global --add user.email bench@example.com >/dev/null
"$dolt" init >/dev/null
"$dolt" sql -q "create table t (id bigint primary key, a bigint, b varchar(32), c double)"
awk -v n="$rows" 'BEGIN { print "id,a,b,c"; for (i = 1; i <= n; i++) printf "%d,%d,row-%d,%.3f\n", i, i * 7 % 1000003, i, i / 8.0 }' >"$home/rows.csv"
"$dolt" table import -u t "$home/rows.csv" >/dev/null 2>&1
"$dolt" add -A >/dev/null
"$dolt" commit -m "1M rows" >/dev/null
"$dolt" branch base
"$dolt" sql -q "update t set b = 'changed' where id = $((rows / 2))"
"$dolt" add -A >/dev/null
"$dolt" commit -m "one row changed" >/dev/null
"$dolt" log --oneline | head -3
echo "made $out"
