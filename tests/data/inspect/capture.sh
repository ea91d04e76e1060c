#!/bin/sh
# Capture the PTX and SASS listings that tests/test_inspect.c and tests/test_inspect_sass.c classify.
#
#   tests/data/inspect/capture.sh [arch ...]     (default: sm_75 sm_80 sm_90 sm_120)
#
# For each kernels/<k>.cu and each arch it writes
#   ptx/<k>.<arch>.ptx     nvcc -ptx            (needs only nvcc)
#   sass/<k>.<arch>.sass   nvdisasm -c on the CUBIN (or cuobjdump -sass when
#                          nvdisasm is absent; both formats are classified)
# and sass/TOOLKIT.txt naming the tools' versions.  SASS needs nvdisasm or
# cuobjdump, found in $CUDA_HOME/bin, /usr/local/cuda/bin or on PATH, the same
# search kvx uses; without either, only the PTX is written and the script says so.
# No GPU is needed: nvdisasm reads the CUBIN.  Output is deterministic for a
# given toolkit, so re-running it with the same toolkit changes no file.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
archs=${*:-"sm_75 sm_80 sm_90 sm_120"}

find_tool() {
    for d in ${CUDA_HOME:+"$CUDA_HOME/bin"} /usr/local/cuda/bin; do
        if [ -x "$d/$1" ]; then echo "$d/$1"; return 0; fi
    done
    command -v "$1" 2>/dev/null || true
}

nvcc=$(find_tool nvcc)
[ -n "$nvcc" ] || { echo "capture.sh: nvcc not found (set CUDA_HOME)" >&2; exit 1; }
nvdisasm=$(find_tool nvdisasm)
cuobjdump=$(find_tool cuobjdump)

mkdir -p "$here/ptx" "$here/sass"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for src in "$here"/kernels/*.cu; do
    k=$(basename "$src" .cu)
    for arch in $archs; do
        "$nvcc" -ptx -arch="$arch" -o "$here/ptx/$k.$arch.ptx" "$src"
        "$nvcc" -cubin -arch="$arch" -o "$tmp/$k.$arch.cubin" "$src"
        out="$here/sass/$k.$arch.sass"
        if [ -n "$nvdisasm" ]; then
            "$nvdisasm" -c "$tmp/$k.$arch.cubin" > "$out"
        elif [ -n "$cuobjdump" ]; then
            "$cuobjdump" -sass "$tmp/$k.$arch.cubin" > "$out"
        fi
        echo "captured $k $arch"
    done
done

{
    echo "# Toolkit that produced these listings (capture.sh)"
    "$nvcc" --version | tail -n 2
    if [ -n "$nvdisasm" ]; then
        echo "nvdisasm: $nvdisasm"; "$nvdisasm" --version | tail -n 2
    elif [ -n "$cuobjdump" ]; then
        echo "cuobjdump: $cuobjdump"; "$cuobjdump" --version | tail -n 2
    fi
} > "$here/sass/TOOLKIT.txt"

if [ -z "$nvdisasm" ] && [ -z "$cuobjdump" ]; then
    echo "capture.sh: neither nvdisasm nor cuobjdump found: PTX written, SASS not captured" >&2
    rm -f "$here/sass/TOOLKIT.txt"
    exit 2
fi
