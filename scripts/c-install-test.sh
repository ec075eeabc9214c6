#!/usr/bin/env bash
# Installs the C library into a fresh temporary prefix with scripts/install-c.sh and builds
# the C example from there, as a user would: with pkg-config (shared and static), and with
# CMake through the installed CMake package and through pkg-config. Checks the SONAME and that
# the installed libraries carry no debug info. Each program must run.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v pkg-config >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq pkg-config
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
bash scripts/install-c.sh "$prefix"
lib=$prefix/lib

soname=$(readelf -d "$lib/libprollystore_ffi.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ -n "$soname" ] && [ -e "$lib/$soname" ] || {
  echo "error: bad SONAME '$soname'" >&2
  exit 1
}
for f in "$lib"/libprollystore_ffi.so.*.*.* "$lib/libprollystore_ffi.a"; do
  if readelf -S "$f" 2>/dev/null | grep -q '\.debug_info'; then
    echo "error: $f still has debug info" >&2
    exit 1
  fi
done

export PKG_CONFIG_PATH=$lib/pkgconfig
# shellcheck disable=SC2046 # pkg-config output is a list of flags
gcc -std=c11 -Wall -Wextra -Werror examples/c/store_tour.c -o "$work/tour_pc" \
  $(pkg-config --cflags --libs prollystore)
LD_LIBRARY_PATH=$lib "$work/tour_pc" >/dev/null
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Werror examples/c/store_tour.c -o "$work/tour_static" \
  $(pkg-config --cflags prollystore) "$lib/libprollystore_ffi.a" $(pkg-config --libs-only-other --static prollystore) -lpthread -ldl -lm
"$work/tour_static" >/dev/null

cmake -S examples/cmake -B "$work/cmake_config" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake_config" >/dev/null
LD_LIBRARY_PATH=$lib "$work/cmake_config/store_tour" >/dev/null
cmake -S examples/cmake -B "$work/cmake_pc" -DPROLLYSTORE_USE_PKG_CONFIG=ON >/dev/null
cmake --build "$work/cmake_pc" >/dev/null
LD_LIBRARY_PATH=$lib "$work/cmake_pc/store_tour" >/dev/null
echo "C library installed into a fresh prefix ($soname); the example builds and runs through pkg-config (shared, static) and CMake (package, pkg-config)"
