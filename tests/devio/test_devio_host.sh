#!/bin/sh
# test_devio_host.sh ROOT BUILD [LINKFLAGS]: kvx_fill's source (gpu/devio.cu), compiled for
# the host by a C++ compiler with the CUDA intrinsics it uses defined by their
# specification (fill_host.cpp), writes inputs_fill's bytes for every case of
# tests/fill_cases.h as every element type, and kvx_mset_hash's adds the sums
# of verify_mset_host, its twin, for every integer type.  Needs BUILD's libkvx_host,
# libkvx_gen and libkvx_core (LINKFLAGS: the sanitizers they were built
# with); skipped (77) without a C++ compiler.
set -eu
root=$1
build=$2
link=${3:-}
cxx=${CXX:-c++}
cc=${CC:-cc}
if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "skipped: no C++ compiler ($cxx)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cxx" -std=c++17 -O1 -ffp-contract=off -w -I"$root" -c "$root/tests/devio/fill_host.cpp" -o "$tmp/fill_host.o"
"$cc" -std=gnu11 -O1 -I"$root" -I"$build" -c "$root/tests/devio/fill_host_main.c" -o "$tmp/main.o"
"$cxx" "$tmp/main.o" "$tmp/fill_host.o" "$build/libkvx_host.a" "$build/libkvx_gen.a" "$build/libkvx_core.a" \
    $link -lm -lpthread -o "$tmp/fill_host"
"$tmp/fill_host"
