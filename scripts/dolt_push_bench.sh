#!/usr/bin/env bash
# Push speed against Dolt: `prolly dolt DB push` and `dolt push` of the same kind of change (a
# commit that updates 1,000 rows spread over the table) to the same `dolt sql-server
# --remotesapi-port`, in alternated pairs (A B, B A, ...); prints every push's wall time and
# the bytes it moved (ours as `prolly` reports them; the remote's storage growth for both), each
# pair's ratio dolt/prolly and the median.
#
#   scripts/dolt_push_bench.sh PAIRS DBDIR [TABLE] [COLUMN]
#
# DBDIR is a Dolt database (e.g. one scripts/make_dolt_arrow_bench_db.sh made, whose table `t`
# has a bigint key `id` and an int column `qty`: the defaults). It is served from a temporary
# copy. Each side pushes its own branch from its own clone (made by `dolt clone`, untimed), so
# every push is a fast-forward of one new commit; the commit before each push is made with
# `dolt sql` (untimed) and changes other rows each time (`id % 1000 = k`), so that no push finds
# its chunks already on the remote. DOLT names the dolt binary (default: dolt on PATH, else
# /work/dolt-bin/dolt); PROLLY the prolly binary (default: target/release/prolly). Say the
# machine's load (uptime) with the figures: they are wall-clock times.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
pairs=$1
db=$(cd "$2" && pwd)
table=${3:-t}
column=${4:-qty}
root="$(cd "$(dirname "$0")/.." && pwd)"
dolt=${DOLT:-$(command -v dolt || echo /work/dolt-bin/dolt)}
prolly=${PROLLY:-$root/target/release/prolly}
# shellcheck source=scripts/dolt_serve.sh
. "$root/scripts/dolt_serve.sh"
export DOLT_REMOTE_PASSWORD=""
for side in dolt prolly; do
  (cd "$work" && "$dolt" clone "$url" "$side" >/dev/null 2>&1)
  (cd "$work/$side" && "$dolt" checkout -b "bench_$side" >/dev/null 2>&1)
done
k=0
# One new commit on `side`'s clone: 1,000 rows spread over the table changed (untimed).
change() {
  k=$((k + 1))
  (cd "$work/$1" && "$dolt" sql -q "update $table set $column = $column + 1 where id % 1000 = $k" >/dev/null &&
    "$dolt" commit -am "bench change $k" >/dev/null)
}
# Size in bytes of the served database's storage (what the pushes add to it).
served_bytes() { du -sb "$work/served/$name/.dolt/noms" | cut -f1; }
# Seconds one push of `side` takes; its report line goes to $work/report.
push() {
  local start end
  start=$(date +%s.%N)
  case "$1" in
    dolt) (cd "$work/dolt" && "$dolt" push --user root origin bench_dolt >"$work/report" 2>&1) ;;
    prolly) "$prolly" dolt "$work/prolly" push origin bench_prolly >"$work/report" ;;
  esac
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
# One untimed push each first (the new branch on the remote, server caches, page cache).
for side in dolt prolly; do
  change "$side"
  push "$side" >/dev/null
done
ratios=()
for i in $(seq "$pairs"); do
  if [ $((i % 2)) = 1 ]; then order="prolly dolt"; else order="dolt prolly"; fi
  for side in $order; do
    change "$side"
    before=$(served_bytes)
    t=$(push "$side")
    grown=$(($(served_bytes) - before))
    if [ "$side" = prolly ]; then
      a=$t
      moved=$(grep -o '[0-9]* bytes' "$work/report" | head -n 1)
      ga=$grown
    else
      b=$t
      gb=$grown
    fi
  done
  r=$(echo "scale=3; $b / $a" | bc)
  ratios+=("$r")
  printf 'pair %2d: prolly %6.3f s (%s uploaded, remote +%d B)  dolt %6.3f s (remote +%d B)  dolt/prolly %s\n' \
    "$i" "$a" "$moved" "$ga" "$b" "$gb" "$r"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}')
echo "median dolt/prolly: $median (load: $(cut -d' ' -f1-3 /proc/loadavg))"
