#!/usr/bin/env bash
# compile_groups.sh [KVX]: where a variant's compile time goes, and what
# grouping sources into one NVRTC program saves (docs/design.md, "Many
# variants per NVRTC program").  For a header-free kernel (64 sources of
# specs/sgemm.yaml) and a CCCL one (the CUB strategies of
# specs/histogram.yaml), each compiled for sm_90 with no cache by one
# compile process, at --group 1, 2, 4, 8, 16 and 32: the wall, the CPU
# seconds of kvx and its children, and kvx compile --profile's parts.
# Prints a Markdown table; KVX_GROUPS overrides the sizes, KVX_JOBS the -j.
set -uo pipefail
cd "$(dirname "$0")/.."
kvx=${1:-build/kvx}
groups=${KVX_GROUPS:-1 2 4 8 16 32}
jobs=${KVX_JOBS:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A where=(
  [sgemm]='BM == 64 && (BN == 64 || BN == 128) && BK == 8'
  [histogram-cub]='strategy == "cub_atomic" || strategy == "cub_sort"'
)
declare -A spec=([sgemm]=specs/sgemm.yaml [histogram-cub]=specs/histogram.yaml)
echo "| kernel | group | sources | programs | wall s | CPU s | CPU ms a source | NVRTC s | front end s | NVVM s | ptxas s | facts s |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for k in sgemm histogram-cub; do
  for g in $groups; do
    out=$tmp/$k-$g.txt
    /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$kvx" compile "${spec[$k]}" --where "${where[$k]}" --arch sm_90 \
      --no-cache -j "$jobs" --group "$g" --profile --out "$tmp/out" > "$out" 2>&1
    read -r wall user sys < "$tmp/time"
    n=$(sed -n 's/^compile profile: \([0-9]*\) sources.*/\1/p' "$out")
    progs=$(sed -n 's/.* compiled in \([0-9]*\) program.*/\1/p' "$out")
    parts=$(grep "seconds of the processes" "$out")
    num() { echo "$parts" | sed -n "s/.*$1 \([0-9.]*\).*/\1/p"; }
    cpu=$(echo "$user + $sys" | bc)
    per=$(echo "scale=1; 1000 * $cpu / $n" | bc)
    echo "| $k | $g | $n | $progs | $wall | $cpu | $per | $(num NVRTC) | $(num 'front end') | $(num NVVM) | $(num ptxas) | $(num 'SASS facts') |"
  done
done
