#!/bin/sh
# bench/walk.sh: the walk of one case through the parent of `kvx run`, from
# its hand-out to its stored row, counted in functions and files.
#
#   bench/walk.sh [BUILD]        (BUILD: build-walk, configured here)
#
# kvx is built with -DKVX_WALK=ON (bench/walk.c: every function entry and
# exit of the main thread recorded), a selection of tests/data/specs/count.yaml
# of three cases of one source is compiled (untraced) and run on a fake GPU
# with $KVX_WALK_DIR set, and bench/walk.py reads the parent's trace: from
# the entry of the last hand-out that writes a case to a worker
# (run_loop.c's handout_one calling case_write) to the exit of the last
# store_put_case (that case's row), every distinct function entered is a
# stay, listed by file.  The pipeline (RUN_PIPELINE) collects and stores the
# case before it within that span: the same functions as the walked case's.
# The same counts, over a whole run, of resolve_case (a point resolved) and
# resolve_bind, for that run and a first run of compact.yaml (a reference
# kernel).  Only kvx's own code is instrumented (libc, SQLite, libyaml and NVRTC are
# not), and only the main thread (the compile thread and the host references
# ahead are not the case's walk).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$src/build-walk}
cmake -S "$src" -B "$BUILD" -DKVX_WALK=ON >/dev/null
cmake --build "$BUILD" -j 2 --target kvx >/dev/null
T=$(mktemp -d /tmp/kvx-walk-XXXXXX)
trap 'rm -rf "$T"' EXIT
SPEC=$src/tests/data/specs/count.yaml
WHERE='strategy == "warp" && counter == "u32" && n == 65536'
export KVX_FAKE_GPUS=1
"$BUILD/kvx" compile "$SPEC" --where "$WHERE" --arch sm_90 --cache "$T/cache" >/dev/null
mkdir "$T/walk"
KVX_WALK_DIR=$T/walk "$BUILD/kvx" run "$SPEC" --where "$WHERE" --db "$T/walk.db" --cache "$T/cache" \
    --profile >"$T/run.log" 2>&1 || { cat "$T/run.log"; exit 1; }
echo "count.yaml, $WHERE: $(grep -c '^ok ' "$T/run.log") cases"
grep -E '^  resolutions ' "$T/run.log" || true
python3 "$src/bench/walk.py" "$BUILD/kvx" "$src" "$T"/walk/walk-*.bin
# How often a point is resolved with a reference kernel and an order-free
# check (tests/data/specs/compact.yaml, the 16 cases; a first run, cold).
rm -rf "$T/walk"; mkdir "$T/walk"
KVX_WALK_DIR=$T/walk "$BUILD/kvx" run "$src/tests/data/specs/compact.yaml" --db "$T/compact.db" \
    --cache "$T/cache" --profile >"$T/compact.log" 2>&1 || true
echo "compact.yaml: $(grep -cE '^(ok|mismatch) ' "$T/compact.log") cases"
grep -E '^  resolutions ' "$T/compact.log" || true
python3 "$src/bench/walk.py" --count "$BUILD/kvx" "$src" "$T"/walk/walk-*.bin
