#!/bin/sh
# test_devio_ptx.sh ROOT: gpu/devio_ptx.h is what scripts/devio_ptx.sh makes of
# gpu/devio.cu now (a change to the .cu not carried into the header fails).
# Skipped (77) without nvcc, or with an nvcc of another release than the one
# that wrote the header (gpu/devio_ptx.h names it; another release may number
# registers differently).
set -eu
root=$1
nvcc=${NVCC:-nvcc}
if ! command -v "$nvcc" >/dev/null 2>&1; then
    echo "skipped: no nvcc on PATH"
    exit 77
fi
want=$(sed -n 's/^.*written by nvcc release \([0-9.]*\).*$/\1/p' "$root/gpu/devio_ptx.h")
got=$("$nvcc" --version | sed -n 's/^.*release \([0-9.]*\),.*$/\1/p')
if [ "$got" != "$want" ]; then
    echo "skipped: this nvcc is release $got, the header was written by release $want"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/scripts/devio_ptx.sh" "$tmp/devio_ptx.h"
if ! cmp -s "$tmp/devio_ptx.h" "$root/gpu/devio_ptx.h"; then
    diff -u "$root/gpu/devio_ptx.h" "$tmp/devio_ptx.h" | head -40
    echo "FAIL: gpu/devio_ptx.h is stale: run scripts/devio_ptx.sh"
    exit 1
fi
echo "ok: gpu/devio_ptx.h matches gpu/devio.cu"
