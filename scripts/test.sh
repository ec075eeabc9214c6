#!/usr/bin/env bash
# The project's test command (the README's second line): every test of every crate, in release
# mode because the golden-vector tests rebuild maps of up to 200,000 rows.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --workspace --release "$@"
