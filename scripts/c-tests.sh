#!/usr/bin/env bash
# Builds the FFI library, compiles every C and C++ program under examples/ and tests/c with
# -Wall -Wextra -Werror, and runs each twice:
#   1. under valgrind (leaks and invalid accesses are errors);
#   2. built with AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer), errors fatal.
# Before trusting run 2, a canary program with a deliberate use after free and a deliberate
# signed overflow is built with the same flags and must be caught: proof that the sanitizers
# were on. Every sanitized binary must also contain the ASan runtime.
# Programs reading the golden vectors get their directory: $PROLLY_VECTORS, by default
# ../shared/vectors relative to the repository root (missing vectors fail the run unless
# PROLLY_ALLOW_MISSING_VECTORS=1).
set -euo pipefail
cd "$(dirname "$0")/.."
vectors=${PROLLY_VECTORS:-../shared/vectors}
cargo build --release -q -p prollystore-ffi
lib=target/release/libprollystore_ffi.a
out=target/c
mkdir -p "$out"
if ! command -v valgrind >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq valgrind
fi
warn=(-Wall -Wextra -Werror -g -Iinclude)
links=("$lib" -lpthread -ldl -lm)
san=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -O1)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

programs=()
for src in examples/c/*.c tests/c/*.c examples/cpp/*.cpp; do
  [ -e "$src" ] && programs+=("$src")
done

compile() { # compile SRC BIN EXTRA-FLAGS...
  local src=$1 bin=$2
  shift 2
  case "$src" in
  *.cpp) g++ -std=c++17 "${warn[@]}" "$@" "$src" -o "$bin" "${links[@]}" ;;
  *) gcc -std=c11 "${warn[@]}" "$@" "$src" -o "$bin" "${links[@]}" ;;
  esac
}

# run SRC BIN [WRAPPER...]: runs BIN (built from SRC) under WRAPPER with the arguments it needs.
run() {
  local src=$1 bin=$2
  shift 2
  case "$(basename "$src")" in
  test_dolt.c | test_arrow.c | test_dolt_write.c) "$@" "$bin" "$vectors" ;;
  dolt_export.c)
    local db="$vectors/dolt-db/vecdb"
    if [ ! -d "$db/.dolt" ]; then
      if [ "${PROLLY_ALLOW_MISSING_VECTORS:-}" = 1 ]; then echo "SKIPPED: vectors not found"; return; fi
      echo "error: vectors not found at $vectors (set PROLLY_VECTORS)" >&2; return 1
    fi
    "$@" "$bin" "$db" main items >"$bin.csv"
    cmp "$bin.csv" "$vectors/dolt-db/vecdb.expected/main/items.csv"
    echo "dolt_export: main/items.csv identical to dolt's" ;;
  *) "$@" "$bin" ;;
  esac
}

echo "=== valgrind"
for src in "${programs[@]}"; do
  name=$(basename "$src"); bin="$out/${name%.*}-$([ "${src##*.}" = cpp ] && echo cpp || echo c)"
  compile "$src" "$bin"
  echo "--- $bin"
  run "$src" "$bin" valgrind --quiet --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --suppressions=scripts/valgrind.supp
done

echo "=== sanitizer canary"
canary="$out/sanitizer-canary"
cat >"$canary.c" <<'C'
#include <limits.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  (void)argv;
  if (argc > 1) { volatile int x = INT_MAX; x = x + argc; return x == 0; } /* signed overflow */
  volatile char *p = malloc(8);
  free((void *)p);
  return p[argc]; /* use after free (volatile: not optimized away) */
}
C
gcc -std=c11 -g "${san[@]}" "$canary.c" -o "$canary"
if "$canary" >"$canary.log" 2>&1 || ! grep -q "AddressSanitizer: heap-use-after-free" "$canary.log"; then
  echo "error: ASan did not catch the canary's use after free" >&2; cat "$canary.log" >&2; exit 1
fi
if "$canary" overflow >"$canary.log" 2>&1 || ! grep -q "runtime error: signed integer overflow" "$canary.log"; then
  echo "error: UBSan did not catch the canary's signed overflow" >&2; cat "$canary.log" >&2; exit 1
fi
echo "ASan and UBSan are on (canary caught both)"

echo "=== ASan + UBSan"
for src in "${programs[@]}"; do
  name=$(basename "$src"); bin="$out/${name%.*}-$([ "${src##*.}" = cpp ] && echo cpp || echo c)-asan"
  compile "$src" "$bin" "${san[@]}"
  if [ "$(nm "$bin" | grep -c "__asan_init")" = 0 ]; then
    echo "error: $bin has no ASan runtime" >&2; exit 1
  fi
  echo "--- $bin"
  run "$src" "$bin"
done
echo "C/C++ programs: all ran clean under valgrind and under ASan+UBSan"
