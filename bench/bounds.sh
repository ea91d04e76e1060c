#!/bin/sh
# bench/bounds.sh: the suite's bounds on durations, held.
#
#   bench/bounds.sh [BUILD]      (BUILD: build)
#
# No verdict of `make test` depends on wall time (tests/CMakeLists.txt): a
# test that measures how long something took prints it with its bound
# (tests/bounds.h, KVX_BOUND) and fails on it only under KVX_BOUNDS=1.  This
# runs those tests so, one at a time, on a quiet machine: a bound broken
# here is a path gone quadratic (a hostile input's plan, an import of
# 200,000 rows), a reference slower than it was, or a run profile that
# names too little of its wall time.
set -eu
BUILD=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
tests=$(cd "$src/tests" && grep -l 'tests/bounds.h\|"bounds.h"' test_*.c | sed 's/\.c$//' | paste -sd '|')
[ -n "$tests" ] || { echo "bench/bounds.sh: no test holds a bound"; exit 1; }
cd "$BUILD"
KVX_BOUNDS=1 ctest -R "^($tests)\$" --output-on-failure -V | grep -E '^[0-9]+: +bound |tests passed|Failed|\*\*\*'
