#!/usr/bin/env bash
# Builds the FFI library, compiles every C and C++ program under examples/ and tests/c with
# -Wall -Wextra -Werror, and runs each under valgrind (leaks and invalid accesses are errors).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p prollystore-ffi
lib=target/release
out=target/c
mkdir -p "$out"
if ! command -v valgrind >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq valgrind
fi
run() {
  echo "--- $1"
  valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    "$@"
}
for src in examples/c/*.c tests/c/*.c; do
  [ -e "$src" ] || continue
  bin="$out/$(basename "${src%.c}")"
  gcc -std=c11 -Wall -Wextra -Werror -g -Iinclude "$src" -o "$bin" "$lib/libprollystore_ffi.a" -lpthread -ldl -lm
  run "$bin"
done
for src in examples/cpp/*.cpp; do
  [ -e "$src" ] || continue
  bin="$out/$(basename "${src%.cpp}")-cpp"
  g++ -std=c++17 -Wall -Wextra -Werror -g -Iinclude "$src" -o "$bin" "$lib/libprollystore_ffi.a" -lpthread -ldl -lm
  run "$bin"
done
echo "C/C++ programs: all ran clean under valgrind"
