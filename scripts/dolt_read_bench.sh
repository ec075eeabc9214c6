#!/usr/bin/env bash
# Reading a Dolt table in place from a remote against reading a clone of it: serves DBDIR from
# `dolt sql-server --remotesapi-port` (scripts/dolt_serve.sh), clones it with `prolly dolt
# clone`, then runs the read_bench example (each run opens afresh and reads every row of TABLE
# into Arrow record batches; in place and clone alternate) and prints the medians and ratio.
#
#   scripts/dolt_read_bench.sh RUNS DBDIR TABLE
#
# DOLT names the dolt binary (default: dolt on PATH, else /work/dolt-bin/dolt); the example and
# prolly are built in release first. Say the machine's load (uptime) with the figures.
set -euo pipefail
if [ $# -ne 3 ]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
runs=$1
db=$(cd "$2" && pwd)
table=$3
root="$(cd "$(dirname "$0")/.." && pwd)"
dolt=${DOLT:-$(command -v dolt || echo /work/dolt-bin/dolt)}
(cd "$root" && cargo build --release -q -p prollystore-cli -p prollystore-dolt-remote --example read_bench)
# shellcheck source=scripts/dolt_serve.sh
. "$root/scripts/dolt_serve.sh"
"$root/target/release/prolly" dolt clone "$url" "$work/clone" >/dev/null
"$root/target/release/examples/read_bench" "$url" "$work/clone" "$table" "$runs"
echo "load: $(uptime | sed 's/.*average: //')"
