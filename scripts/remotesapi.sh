#!/usr/bin/env bash
# Regenerates the Rust code of Dolt's remote API (crates/dolt-remote/src/generated/) from the
# vendored .proto files in crates/dolt-remote/proto/ (the whole directory is generated, nothing
# in it is edited by hand). No protoc: the generator (crates/dolt-remote/codegen) parses the
# .proto files with the pure-Rust protox crate; its versions are pinned by Cargo.lock.
#
#   scripts/remotesapi.sh          regenerate in place
#   scripts/remotesapi.sh --check  regenerate into a temporary directory and fail if the
#                                  committed files differ (for CI)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
proto_dir="$root/crates/dolt-remote/proto"
out_dir="$root/crates/dolt-remote/src/generated"

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cargo run --profile codegen -q --locked --manifest-path "$root/Cargo.toml" \
  -p prollystore-dolt-remote-codegen -- "$proto_dir" "$tmp/gen"

if [ "$check" = 1 ]; then
  if diff -r "$tmp/gen" "$out_dir" >"$tmp/diff" 2>&1; then
    echo "generated remote API code is up to date"
    exit 0
  fi
  echo "error: $out_dir differs from what the generator makes from $proto_dir;" >&2
  echo "       run scripts/remotesapi.sh and commit the result. Differences:" >&2
  head -n 40 "$tmp/diff" >&2
  exit 1
fi

rm -rf "$out_dir"
cp -r "$tmp/gen" "$out_dir"
echo "regenerated $(find "$out_dir" -name '*.rs' | wc -l) file(s) in $out_dir"
