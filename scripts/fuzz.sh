#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time (default 30 s), seeded from fuzz/seeds/<target>
# when present, then replays fuzz/regressions/<target>. Installs cargo-fuzz if it is missing.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${1:-30}"
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
targets=$(cargo +nightly fuzz list)
for t in $targets; do
  echo "--- fuzz $t (${seconds}s)"
  mkdir -p "corpus/$t"
  seeds=()
  [ -d "seeds/$t" ] && seeds+=("seeds/$t")
  cargo +nightly fuzz run "$t" "corpus/$t" "${seeds[@]}" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 2>&1 | tail -n 15
  if [ -d "regressions/$t" ] && [ -n "$(ls -A "regressions/$t")" ]; then
    echo "--- replay regressions/$t"
    cargo +nightly fuzz run "$t" "regressions/$t"/* -- -runs=0 2>&1 | tail -n 3
  fi
done
