#!/bin/sh
# test_devio_ptx.sh ROOT: gpu/devio_ptx.h is what scripts/devio_ptx.sh makes of
# gpu/devio.cu now (a change to the .cu not carried into the header fails).
# Skipped (77) without nvcc, or with an nvcc of another release than the one
# that wrote the header (its PTX may differ in register numbering only).
set -eu
root=$1
nvcc=${NVCC:-nvcc}
if ! command -v "$nvcc" >/dev/null 2>&1; then
    echo "skipped: no nvcc on PATH"
    exit 77
fi
want=$(sed -n 's/^ *"\.version \([0-9.]*\)\\n"$/\1/p' "$root/gpu/devio_ptx.h")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/scripts/devio_ptx.sh" "$tmp/devio_ptx.h"
got=$(sed -n 's/^ *"\.version \([0-9.]*\)\\n"$/\1/p' "$tmp/devio_ptx.h")
if [ "$got" != "$want" ]; then
    echo "skipped: this nvcc writes PTX $got, the header holds PTX $want"
    exit 77
fi
if ! cmp -s "$tmp/devio_ptx.h" "$root/gpu/devio_ptx.h"; then
    diff -u "$root/gpu/devio_ptx.h" "$tmp/devio_ptx.h" | head -40
    echo "FAIL: gpu/devio_ptx.h is stale: run scripts/devio_ptx.sh"
    exit 1
fi
echo "ok: gpu/devio_ptx.h matches gpu/devio.cu"
