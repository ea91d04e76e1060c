#!/usr/bin/env bash
# test_doc_paths (ctest label unit): every file of the source tree that the
# documentation names exists.  Pieces are named by their include path
# (`{{#include "pieces/warp_sum.cuh"}}`, relative to templates/): each
# `pieces/NAME.cuh` in docs/*.md or README.md must be templates/pieces/NAME.cuh.
# Every path under templates/, specs/, the stage folders (core/ ... cli/), scripts/, tests/, docs/,
# bench/ or .ci/ must exist (a `*` matches as in the shell).  Paths under
# results/ are examples of what kvx writes and are not checked.  The checker
# is tried first on made-up documents, so that one finding nothing cannot pass.
#
#   tests/docs/test_doc_paths.sh SOURCE_DIR
set -u
src=${1:?usage: test_doc_paths.sh SOURCE_DIR}
d=$(mktemp -d /tmp/kvx-docpaths-XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# check ROOT DOC...: print each missing name as "DOC: NAME"; status 1 if any.
check() {
    local root=$1 doc name bad=0
    shift
    for doc in "$@"; do
        while read -r name; do
            [ -e "$root/templates/$name" ] || { echo "$doc: $name (no templates/$name)"; bad=1; }
        done < <(grep -oE 'pieces/[A-Za-z0-9_.-]+\.cuh' "$doc" | sort -u)
        while read -r name; do
            compgen -G "$root/$name" > /dev/null || { echo "$doc: $name"; bad=1; }
        done < <(grep -oE '(^|[^/.A-Za-z0-9_-])(templates|specs|core|gen|host|compile|resolve|gpu|store|run|report|cli|scripts|tests|docs|bench|\.ci)/[A-Za-z0-9_.*/-]*[A-Za-z0-9_*]' "$doc" |
                 sed -E 's/^[^a-z.]//' | sort -u)
    done
    return $bad
}

mkdir -p "$d/tree/templates/pieces" "$d/tree/gen"
touch "$d/tree/templates/pieces/warp_sum.cuh" "$d/tree/gen/plan.c"
printf 'Use {{#include "pieces/warp_sum.cuh"}}; see gen/plan.c and /tmp/gen/x.cu.\n' > "$d/good.md"
printf 'Use {{#include "pieces/warp_agg.cuh"}}.\n' > "$d/piece.md"
printf 'The planner is gen/planner.c.\n' > "$d/path.md"
check "$d/tree" "$d/good.md" > "$d/out" || fail "the checker refuses names that exist: $(cat "$d/out")"
check "$d/tree" "$d/piece.md" > "$d/out" && fail "the checker passes a missing piece"
grep -q 'pieces/warp_agg.cuh' "$d/out" || fail "the missing piece is not named: $(cat "$d/out")"
check "$d/tree" "$d/path.md" > "$d/out" && fail "the checker passes a missing source file"
grep -q 'gen/planner.c' "$d/out" || fail "the missing file is not named: $(cat "$d/out")"

cd "$src" || fail "no $src"
check . docs/*.md README.md || fail "the documents above name files that do not exist"
echo "test_doc_paths: every piece and source path named in docs/ and README.md exists"
