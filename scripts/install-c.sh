#!/usr/bin/env bash
# Builds the prollystore C library in release mode and installs it under a prefix, the way a
# distribution package would:
#   PREFIX/include/prollystore.h
#   PREFIX/lib/libprollystore_ffi.so.X.Y.Z   (stripped; SONAME libprollystore_ffi.so.0.Y before
#   PREFIX/lib/libprollystore_ffi.so.0.Y      1.0) and its two symlinks
#   PREFIX/lib/libprollystore_ffi.so
#   PREFIX/lib/libprollystore_ffi.a           (debug info stripped)
#   PREFIX/lib/pkgconfig/prollystore.pc
#   PREFIX/lib/cmake/prollystore/prollystoreConfig.cmake (+ ...ConfigVersion.cmake): imported
#     targets prollystore::prollystore (shared) and prollystore::static
# Usage: scripts/install-c.sh PREFIX [--no-default-features]   (the latter leaves out prolly_dolt_*)
# Then: cc app.c $(pkg-config --cflags --libs prollystore), or in CMake
# find_package(prollystore CONFIG REQUIRED) + target_link_libraries(app prollystore::prollystore).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
  echo "usage: $0 PREFIX [--no-default-features]" >&2
  exit 2
fi
prefix=$1
shift
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
cargo build --release -q -p prollystore-ffi "$@"
target=${CARGO_TARGET_DIR:-target}/release
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
major=${version%%.*}
rest=${version#*.}
minor=${rest%%.*}
if [ "$major" = 0 ]; then soversion=0.$minor; else soversion=$major; fi
lib=libprollystore_ffi

install -d "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/prollystore"
install -m644 include/prollystore.h "$prefix/include/prollystore.h"
install -m755 "$target/$lib.so" "$prefix/lib/$lib.so.$version"
strip --strip-unneeded "$prefix/lib/$lib.so.$version"
ln -sf "$lib.so.$version" "$prefix/lib/$lib.so.$soversion"
ln -sf "$lib.so.$soversion" "$prefix/lib/$lib.so"
install -m644 "$target/$lib.a" "$prefix/lib/$lib.a"
strip --strip-debug "$prefix/lib/$lib.a"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" crates/ffi/prollystore.pc.in \
  >"$prefix/lib/pkgconfig/prollystore.pc"
sed -e "s|@VERSION@|$version|" -e "s|@SOVERSION@|$soversion|" crates/ffi/prollystoreConfig.cmake.in \
  >"$prefix/lib/cmake/prollystore/prollystoreConfig.cmake"
cat >"$prefix/lib/cmake/prollystore/prollystoreConfigVersion.cmake" <<CMAKE
# prollystore $version: compatible with requests for the same 0.minor (or major from 1.0).
set(PACKAGE_VERSION "$version")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif("$major" STREQUAL "0" AND NOT PACKAGE_FIND_VERSION_MINOR STREQUAL "$minor")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(NOT "$major" STREQUAL "0" AND NOT PACKAGE_FIND_VERSION_MAJOR STREQUAL "$major")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
CMAKE
echo "installed prollystore $version C library under $prefix"
