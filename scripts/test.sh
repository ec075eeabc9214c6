#!/usr/bin/env bash
# Runs every test of every crate, in release mode because the golden-vector tests rebuild maps
# of up to 200,000 rows. This is `cargo test --workspace --release` (the README's test command);
# the C library is built first so the tests that compile C programs link against it directly.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p prollystore-ffi --lib
exec cargo test --workspace --release "$@"
