#!/usr/bin/env bash
# Runs every cargo-fuzz target: first replays fuzz/regressions/<target> (inputs that once found a
# bug), then fuzzes for a bounded time (default 30 s), seeded from fuzz/seeds/<target> when
# present. On a failure it prints the panic message and where libFuzzer saved the input, then
# stops with a non-zero status. Installs cargo-fuzz if it is missing.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${1:-30}"
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Runs one `cargo fuzz run` ("$@"), showing the last lines of its output; on failure shows the
# panic and the saved input instead, and exits.
run() {
  if cargo +nightly fuzz run "$@" >"$log" 2>&1; then
    tail -n 6 "$log"
  else
    echo "!!! fuzz target failed: cargo +nightly fuzz run $*"
    grep -A 4 -E "panicked at|ERROR: libFuzzer|ERROR: AddressSanitizer|SUMMARY:" "$log" | head -n 40 || true
    grep -E "Test unit written to|artifact_prefix" "$log" || true
    exit 1
  fi
}

targets=$(cargo +nightly fuzz list)
# Every target built first, in one cargo invocation (the targets' own crates compile and link
# in parallel); the runs below then find them built.
echo "--- build every target"
if ! cargo +nightly fuzz build >"$log" 2>&1; then
  tail -n 40 "$log"
  echo "!!! building the fuzz targets failed" >&2
  exit 1
fi
for t in $targets; do
  if [ -d "regressions/$t" ] && [ -n "$(ls -A "regressions/$t")" ]; then
    echo "--- replay regressions/$t"
    run "$t" "regressions/$t"/* -- -runs=0
  fi
  echo "--- fuzz $t (${seconds}s)"
  mkdir -p "corpus/$t"
  seeds=()
  [ -d "seeds/$t" ] && seeds+=("seeds/$t")
  run "$t" "corpus/$t" "${seeds[@]}" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1
done
