#!/usr/bin/env bash
# Clone speed against Dolt: `prolly dolt clone` and `dolt clone` of the same database from the
# same `dolt sql-server --remotesapi-port`, in alternated pairs (A B, B A, ...), each into a
# fresh directory; prints every run's wall time, each pair's ratio dolt/prolly and the median.
#
#   scripts/dolt_clone_bench.sh PAIRS DBDIR
#
# DBDIR is a Dolt database (e.g. one scripts/make_dolt_bench_db.sh made); it is served from a
# temporary copy of its parent. DOLT names the dolt binary (default: dolt on PATH, else
# /work/dolt-bin/dolt); PROLLY the prolly binary (default: target/release/prolly). Say the
# machine's load (uptime) with the figures: they are wall-clock times.
set -euo pipefail
if [ $# -ne 2 ]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
pairs=$1
db=$(cd "$2" && pwd)
root="$(cd "$(dirname "$0")/.." && pwd)"
dolt=${DOLT:-$(command -v dolt || echo /work/dolt-bin/dolt)}
prolly=${PROLLY:-$root/target/release/prolly}
# shellcheck source=scripts/dolt_serve.sh
. "$root/scripts/dolt_serve.sh"
mkdir -p "$work/out"
n=0
# Seconds one clone takes.
run() {
  n=$((n + 1))
  local dir="$work/out/c$n" start end
  start=$(date +%s.%N)
  case "$1" in
    dolt) (cd "$work/out" && "$dolt" clone "$url" "c$n" >/dev/null 2>&1) ;;
    prolly) "$prolly" dolt clone "$url" "$dir" >/dev/null ;;
  esac
  end=$(date +%s.%N)
  rm -rf "$dir"
  echo "$end - $start" | bc
}
# One untimed clone each first (server caches, page cache).
run dolt >/dev/null
run prolly >/dev/null
ratios=()
for i in $(seq "$pairs"); do
  if [ $((i % 2)) = 1 ]; then a=$(run prolly); b=$(run dolt); else b=$(run dolt); a=$(run prolly); fi
  r=$(echo "scale=3; $b / $a" | bc)
  ratios+=("$r")
  printf 'pair %2d: prolly %6.3f s  dolt %6.3f s  dolt/prolly %s\n' "$i" "$a" "$b" "$r"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}')
echo "median dolt/prolly: $median (load: $(cut -d' ' -f1-3 /proc/loadavg))"
