#!/usr/bin/env bash
# fnlen.sh: function lengths per folder (scripts/fnlen.awk counts them).
#
#   scripts/fnlen.sh [-l LIMIT] DIR...
#
# For each DIR, its *.c files: the number of functions, the median, the 90th
# percentile (nearest rank: the length that 90% of the functions do not
# exceed) and the longest; then every function longer than LIMIT lines
# (default 120), longest first.  Exit 1 when there is one, 2 on bad usage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
limit=120
usage() { echo "usage: scripts/fnlen.sh [-l LIMIT] DIR..." >&2; exit 2; }
while getopts "l:h" opt; do
    case $opt in
    l) [[ $OPTARG =~ ^[0-9]+$ ]] || usage; limit=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage

over=$(mktemp)
trap 'rm -f "$over"' EXIT
printf '%-10s %5s %7s %5s %5s  %s\n' folder n median p90 max longest
for dir in "$@"; do
    files=("${dir%/}"/*.c)
    [ -e "${files[0]}" ] || { echo "fnlen: no .c files in $dir" >&2; exit 2; }
    awk -f "$here/fnlen.awk" "${files[@]}" | sort -k1,1n -k2,2 -k3,3 |
        awk -v dir="${dir%/}/" -v limit="$limit" -v over="$over" '
            { len[NR] = $1; where[NR] = $2 " " $3; if ($1 > limit) print > over }
            END {
                if (NR == 0) { printf "%-10s %5d\n", dir, 0; exit }
                med = NR % 2 ? len[(NR + 1) / 2] : (len[NR / 2] + len[NR / 2 + 1]) / 2
                k = int(NR * 9 / 10); if (k < NR * 9 / 10) k++
                printf "%-10s %5d %7g %5d %5d  %s\n", dir, NR, med, len[k], len[NR], where[NR]
            }'
done
if [ -s "$over" ]; then
    echo "functions over $limit lines:"
    sort -k1,1nr "$over" | sed 's/^/  /'
    exit 1
fi
