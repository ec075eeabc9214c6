#!/usr/bin/env bash
# Regenerates include/prollystore.h from crates/ffi with a pinned cbindgen.
# --check: regenerate into a temporary file and fail if the committed header differs.
set -euo pipefail
cd "$(dirname "$0")/.."
CBINDGEN_VERSION=0.29.2
if ! command -v cbindgen >/dev/null 2>&1 || [ "$(cbindgen --version)" != "cbindgen $CBINDGEN_VERSION" ]; then
  cargo install cbindgen --version "$CBINDGEN_VERSION" --locked
fi
out=include/prollystore.h
if [ "${1:-}" = "--check" ]; then
  tmp=$(mktemp)
  trap 'rm -f "$tmp"' EXIT
  cbindgen --config crates/ffi/cbindgen.toml --crate prollystore-ffi --output "$tmp" crates/ffi
  if ! diff -u "$out" "$tmp"; then
    echo "error: $out is stale; run scripts/cheader.sh and commit the result" >&2
    exit 1
  fi
  echo "$out is current"
else
  cbindgen --config crates/ffi/cbindgen.toml --crate prollystore-ffi --output "$out" crates/ffi
  echo "wrote $out"
fi
