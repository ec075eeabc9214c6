#!/usr/bin/env bash
# Compares two builds of a workload example on this noisy machine: runs them in alternated pairs
# (A then B, then B then A, ...) and prints each pair's figures, their ratio B/A, and the median
# ratio. Wall-clock figures here move by 20-30% between runs, but the two runs of a pair see
# about the same machine, so the median of a dozen pair ratios settles a 3-5% difference that
# single runs cannot.
#
#   scripts/ab.sh PAIRS BIN_A BIN_B ARGS...
#
# BIN_A and BIN_B are two copies of the same example built from different commits (copy
# `target/release/examples/tree_workload` aside after each build); each runs with ARGS. The
# figure of a run is the first number followed by a unit and a slash (`13.8 µs/batch`,
# `166 ns/get`, `336.2 µs/diff`) in its output; lower is better. Example:
#
#   scripts/ab.sh 12 /tmp/tree_workload.before /tmp/tree_workload.after edit1s 5000
#
# Environment variables pass through to both (e.g. EDIT_KIND=insert, PROLLY_BACKGROUND_HASHING=0).
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
pairs=$1 a=$2 b=$3
shift 3

# The figure one run of "$@" prints (exits if it prints none).
figure() {
  local out value
  out=$("$@" 2>&1) || { echo "!!! failed: $*" >&2; echo "$out" | tail -n 5 >&2; exit 1; }
  value=$(echo "$out" | grep -oE '[0-9]+(\.[0-9]+)? (ns|µs|us|ms|s)/' | head -n 1 | cut -d' ' -f1)
  if [ -z "$value" ]; then
    echo "!!! no 'N unit/...' figure in the output of: $*" >&2
    exit 1
  fi
  echo "$value"
}

ratios=()
for i in $(seq 1 "$pairs"); do
  if [ $((i % 2)) = 1 ]; then
    fa=$(figure "$a" "$@")
    fb=$(figure "$b" "$@")
  else
    fb=$(figure "$b" "$@")
    fa=$(figure "$a" "$@")
  fi
  r=$(awk -v a="$fa" -v b="$fb" 'BEGIN { printf "%.3f", b / a }')
  ratios+=("$r")
  echo "pair $i: A $fa  B $fb  B/A $r"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '
  { r[NR] = $1; if ($1 < 1) faster++ }
  END {
    m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
    printf "median B/A %.3f over %d pairs (B faster in %d), range %.3f-%.3f\n", m, NR, faster, r[1], r[NR]
  }'
