#!/usr/bin/env bash
# Runs the format crate's unit tests, and the tree crate's tests of its own unsafe code (the
# arena; the memory store's borrowed chunks, its lent space filled on another thread, its reused
# pages of slots, and its lists of children through `tests/descent.rs` on small maps; the diff's
# vector compare), under Miri (nightly), installing the component if needed.
# Property tests run with few cases there: Miri is ~1000x slower than native code.
#
# `scripts/miri.sh [format|tree|all]` (default all): the two parts take ~11 and ~14 minutes of
# one core each, so CI runs them as two processes (each with its own target folder).
set -euo pipefail
part="${1:-all}"
case "$part" in
  format | tree | all) ;;
  *) echo "usage: scripts/miri.sh [format|tree|all]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  rustup component add --toolchain nightly miri rust-src
fi
export PROPTEST_CASES="${PROPTEST_CASES:-4}"
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
if [ "$part" != tree ]; then
  cargo +nightly miri test -p prollystore-format --lib
fi
if [ "$part" != format ]; then
  cargo +nightly miri test -p prollystore --lib -- store::arena store::memory store::builtin tree::diff
  cargo +nightly miri test -p prollystore --test descent
fi
