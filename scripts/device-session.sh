#!/usr/bin/env bash
# device-session.sh [STEP...]: what kvx runs on a lent GPU machine.
#
# Builds kvx there (the machine has CUDA and cmake but no libyaml or cmocka: a
# folder .devdeps/ with their headers and libraries, made by scripts/devdeps.sh
# and git-ignored, must be carried along with the tree), then
# runs the requested steps and leaves logs, databases and captured listings in
# $OUT/bundle.tgz plus a short summary.  Steps:
#   doctor    nvidia-smi and kvx doctor
#   capture   SASS/PTX listings of tests/data/inspect for the classifier tests
#   gputest   ctest -L gpu
#   spec:NAME kvx run specs/NAME.yaml into $OUT/kvx.db (a table follows)
#   inspect:NAME  kvx inspect specs/NAME.yaml --arch sm_80,sm_90,sm_120 (SASS)
#   sass:NAME     every variant's SASS for sm_90 (kvx inspect --show sass)
#   scale:NAME    the same spec with --devices 0 and --devices all, timed
#   test:NAME     kvx run tests/data/specs/NAME.yaml into $OUT/test-NAME.db
#   compile-scaling  kvx compile of the histogram spec for sm_80,sm_90,sm_120 with no
#             cache, -j 1 against the default (compile processes), each timed; then a
#             cold and a warm run of the contention spec, their compile walls
#   reps      the contention spec warm, three times whole and three times without
#             two_pass (the 612 cases it had before two_pass joined), each timed
#             whole, every case's status counted
#   warmup    the whole contention spec, warm, with the default warm-up and with
#             --warmup 1 and 3, in one sitting; kvx compare of each against the default
#   coldwarm  a cold and a warm run of the contention and histogram specs (an empty
#             compile cache, then the same), their compile walls and compile waits
#   specs     each spec of specs/ but sgemm (3,708 variants: see search) compiled,
#             then run warm with --profile: its time line and the share of the wall
#             its inputs and verification took
#   user      each user-shaped spec of bench/specs/ compiled, then run warm with
#             --profile (its time line and where the wall went)
#   bench     bench/explorer.sh (cases/s, GPU share, accounted) into $OUT/bench
#   kt        Kernel Tuner on the contention subset (wheels in .whl/), cold and warm
#   kt-transpose  Kernel Tuner on bench/specs/transpose.yaml's 36 cases verified against
#             numpy, then kvx run of the same spec (compiled first), both timed whole
#   counters  the contention spec at hit rate 1, 2^24, one counter, with --counters,
#             and the table of L2 atomic requests per 1,000 hits
#   peers:NAME    the library calls beside specs/NAME.yaml (build-dev/bench/kvx-peers:
#             CUB, Thrust; docs/peers.md) into $OUT/bundle/peers-NAME.csv, imported into
#             $OUT/bundle/kvx.db as reference cub_NAME (refused if that name is there
#             already, e.g. from a carried-in results/kvx.db); KVX_PEERS_FLAGS adds options
#   twomode   the 256-counter contention cases that run in one of two times by GPU
#             instance (docs/measurement.md): the GPU's identity (nvidia-smi -q), the cases
#             at 32, 256 and 4096 counters, then ncu's per-L2-slice request spread and
#             the L2 and SM clocks of each, into $OUT/bundle/twomode*
#   multi     the several-kernel strategies: contention's two_pass and histogram's
#             global_private beside the others, the two test specs with planted
#             wrong second kernels, kvx inspect per kernel
#   multihist the histogram spec's global_private beside global and smem, reported
#   jscale    kvx compile of the histogram spec, 3 archs, no cache: -j 1 against the default
#   nsys      an nsys timeline of a contention subset: the NVTX ranges per case
#   bankconf  --counters=bank-conflict metrics on bench/specs/transpose.yaml, the
#             .ncu-rep kept
#   nvbench   two runs of a contention subset exported as nvbench JSON, read by
#             nvbench_compare (cuda-bench's script, wheels in .whl/nvbench/)
#   placement the 256-counter contention cases with buffers at 2 MiB boundaries,
#             compared with results/h200/contention.db (the driver's placement)
#   memfacts  kvx inspect of tests/data/specs/copy.yaml: load/store widths from SASS
#   plots     kvx report of the contention subset and its matplotlib scripts run
#   space:NAME    one space of the search benchmark set (issue 37; bench/search_spaces.tsv:
#             stencil-4096, stencil-8192, sgemm, conv, nbody, reduce-4m, reduce-128m,
#             dedisp; space:all for each, on an H200 but sgemm) recorded exhaustively from an empty cache into
#             $OUT/bundle/spaces/NAME.db (a database per space, rollback mode once
#             closed), its wall and its statuses counted; copy it to
#             results/<gpu>/search/NAME.db (h100 or h200).  Rough estimates on an
#             H100 with 16 cores, not measured: sgemm 3 min (187.8 s on an H200),
#             stencil-4096 2 min, stencil-8192 4 min, conv 1.5, nbody 1, reduce-4m 1,
#             reduce-128m 2, dedisp 3 (compiles well under a minute each): spread them
#             over calls of under 10 minutes, e.g. "space:stencil-4096 space:stencil-8192",
#             "space:sgemm space:conv space:nbody", "space:reduce-4m space:reduce-128m
#             space:dedisp"; KVX_STEP_TIMEOUT (400 s) caps each
#   search-live[:NAMES]  kvx run --search default --budget 5% of conv, dedisp and nbody
#             (NAMES: some of them, comma-separated) from an empty cache, each beside
#             Kernel Tuner's live run on the same budget (bench/kernel_tuner_live.py,
#             wheels in .whl/, KVX_KT_STRATEGY: bayes_opt), both timed whole, each best
#             against the space's recorded optimum ($OUT/bundle/spaces/NAME.db of this
#             sitting, else results/<gpu>/search/NAME.db: record the space first, on the
#             same kind of GPU).  Rough estimates, not measured: 1 to 3 minutes a space
#             (kvx under a minute; Kernel Tuner compiles and times one variant at a
#             time: 35, 62 and 15 evaluations); KVX_STEP_TIMEOUT (400 s) caps each side
#   search    kvx run --search model --budget 5% of specs/sgemm.yaml from an empty
#             cache (batches of 8, then of 32), its wall and the best found
#   oldnew    the whole contention spec by kvx at e9df4dc (built in a worktree) and by
#             this tree in the same sitting, warm, then kvx compare of the two; and
#             this tree with --warmup 3 (the default until 0.2.0) against its default
#   layout    block_smem at one constant counter, 2^26, by this kvx with e9df4dc's
#             contention spec and with this tree's (twice each): is the difference
#             oldnew finds there the spec's buffer layout or kvx?
#   nvrtccold libnvrtc's files read once (timed), then kvx compile of the contention spec
#             with no cache, twice: first thing on a fresh machine, whether NVRTC's first
#             use there is slow for another reason than the files' first read
#   alignab   the block_smem cells at one constant counter, 2^26, that read 1.6 to 2.6%
#             slower under e9df4dc than under this tree: each kvx and its own spec at
#             b43eb14~1 (the driver's placement) and b43eb14 (2 MiB boundaries), and
#             this tree, alternately, twice; kvx compare of each against b43eb14~1
#   nvtxrep   the NVTX ranges in results/h200/sitting-0805/bankconf-run1.ncu-rep
#   groups    bench/compile_groups.sh on every core and on one: a variant's compile
#             time by part and by the sources of a program (issue 34)
#   stencil   bench/specs/stencil.yaml (2,160 variants) exhaustively, cold then warm,
#             with --profile: the GPU's share of the wall
#   searchcold  a 5% search of the stencil and of sgemm from an empty cache, twice each
#   kt-stencil  Kernel Tuner 1.5.0 (wheels in .whl/, bench/kt_install.sh) on a sample of
#             the stencil's variants (KVX_KT_SAMPLE, default 60), timed whole
set -uo pipefail
OUT=${OUT:-/tmp/kvx-out}
mkdir -p "$OUT/bundle"
B=$OUT/bundle
# A database carried in from an earlier call resumes there.
[ -f results/kvx.db ] && cp results/kvx.db "$B/kvx.db"
root=$(pwd)
if [ ! -d "$root/.devdeps/include" ] || [ ! -d "$root/.devdeps/lib" ]; then
    echo "no .devdeps/ here: run scripts/devdeps.sh where apt works and carry .devdeps along" \
        "(it is git-ignored); building against the system's libraries instead" | tee -a "$B/session.log"
fi
export LD_LIBRARY_PATH=$root/.devdeps/lib:${LD_LIBRARY_PATH:-}
export KVX_CACHE_DIR=$root/.kvx-cache
kvx=$root/build-dev/kvx
say() { printf '\n== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)" | tee -a "$B/session.log"; }
# A search benchmark space (bench/search_spaces.tsv): "SPEC<TAB>WHERE" of NAME.
space_def() {
    case $1 in
    stencil-4096) printf 'bench/specs/stencil.yaml\tside == 4096' ;;
    stencil-8192) printf 'bench/specs/stencil.yaml\tside == 8192' ;;
    sgemm) printf 'specs/sgemm.yaml\t' ;;
    conv|nbody|dedisp) printf 'bench/specs/%s.yaml\t' "$1" ;;
    reduce-4m) printf 'bench/specs/reduce.yaml\tn == 2^22' ;;
    reduce-128m) printf 'bench/specs/reduce.yaml\tn == 2^27' ;;
    *) return 1 ;;
    esac
}
SPACES="stencil-4096 stencil-8192 sgemm conv nbody reduce-4m reduce-128m dedisp"
gpu_dir() { nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 | grep -q H200 && echo h200 || echo h100; }
# Wall seconds since $1 (date +%s.%N).
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
# The lowest median_ms of db's ok cases ("" none).
optimum_of() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select min(median_ms) from cases where status = \"ok\"").fetchone()[0] or "")' "$1" 2>/dev/null; }

say build
# The copy's .git may be older than its files: KVX_COMMIT (given by the caller,
# `git rev-parse --short=12 HEAD` where the tree was sent from) names the
# commit in kvx --version and in every stored run.
[ -n "${KVX_COMMIT:-}" ] && echo "commit $KVX_COMMIT" | tee -a "$B/session.log"
# nvcc for kvx-peers (bench/), where PATH lacks it; without nvcc it is skipped.
[ -n "${CUDACXX:-}" ] || command -v nvcc >/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && export CUDACXX=/usr/local/cuda/bin/nvcc; }
{ cmake -S . -B build-dev -DCMAKE_PREFIX_PATH="$root/.devdeps" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build build-dev -j "$(nproc)" 2>&1 | grep -E 'error|warning' ; } >"$B/build.log" 2>&1
[ -x "$kvx" ] || { echo "build failed"; cat "$B/build.log"; tar czf "$OUT/bundle.tgz" -C "$OUT" bundle; exit 1; }

for step in "$@"; do
    case $step in
    doctor)
        say doctor
        nvidia-smi >"$B/nvidia-smi.txt" 2>&1
        nvidia-smi --query-gpu=name,uuid,clocks.max.sm,clocks.max.mem,memory.total,driver_version --format=csv >>"$B/session.log" 2>&1
        "$kvx" doctor 2>&1 | tee -a "$B/session.log"
        ;;
    capture)
        say capture
        bash tests/data/inspect/capture.sh >"$B/capture.log" 2>&1
        tail -n 5 "$B/capture.log" | tee -a "$B/session.log"
        tar czf "$B/inspect-listings.tgz" tests/data/inspect/sass tests/data/inspect/ptx 2>/dev/null
        ;;
    gputest)
        say gputest
        (cd build-dev && ctest -L gpu --output-on-failure) >"$B/gputest.log" 2>&1
        tail -n 15 "$B/gputest.log" | tee -a "$B/session.log"
        ;;
    spec:*)
        name=${step#spec:}
        say "run $name"
        t0=$SECONDS
        timeout -s KILL "${KVX_STEP_TIMEOUT:-400}" "$kvx" run "specs/$name.yaml" --db "$B/kvx.db" \
            ${KVX_RUN_FLAGS:-} >"$B/run-$name.log" 2>"$B/run-$name.err"
        echo "exit $? after $((SECONDS - t0)) s" >>"$B/run-$name.log"
        tail -n 30 "$B/run-$name.log" | tee -a "$B/session.log"
        tail -n 5 "$B/run-$name.err" | tee -a "$B/session.log"
        ;;
    inspect:*)
        name=${step#inspect:}
        say "inspect $name"
        "$kvx" inspect "specs/$name.yaml" --arch sm_80,sm_90,sm_120 >"$B/inspect-$name.md" 2>&1
        tail -n 40 "$B/inspect-$name.md" | tee -a "$B/session.log"
        ;;
    sass:*)
        name=${step#sass:}
        say "sass $name"
        "$kvx" inspect "specs/$name.yaml" --arch sm_90 --show sass >"$B/sass-$name.txt" 2>&1
        grep -c 'SASS' "$B/sass-$name.txt" | tee -a "$B/session.log"
        ;;
    scale:*)
        name=${step#scale:}
        # Same cache state for both: every source compiled before either run.
        "$kvx" compile "specs/$name.yaml" >/dev/null 2>&1
        for devs in 0 all; do
            say "scale $name --devices $devs"
            t0=$SECONDS
            timeout -s KILL "${KVX_STEP_TIMEOUT:-400}" "$kvx" run "specs/$name.yaml" --devices "$devs" \
                --db "$B/scale-$devs.db" ${KVX_RUN_FLAGS:-} >"$B/scale-$name-$devs.log" 2>"$B/scale-$name-$devs.err"
            echo "wall $((SECONDS - t0)) s" | tee -a "$B/session.log"
            tail -n 6 "$B/scale-$name-$devs.log" | tee -a "$B/session.log"
        done
        ;;
    test:*)
        name=${step#test:}
        say "run tests/data/specs/$name.yaml"
        t0=$SECONDS
        timeout -s KILL "${KVX_STEP_TIMEOUT:-400}" "$kvx" run "tests/data/specs/$name.yaml" \
            --db "$B/test-$name.db" --profile >"$B/test-$name.log" 2>"$B/test-$name.err"
        echo "exit $? after $((SECONDS - t0)) s" >>"$B/test-$name.log"
        grep -E "cases in|reference kernel|exit" "$B/test-$name.log" | tee -a "$B/session.log"
        ;;
    compile-scaling)
        say "compile scaling"
        for j in "-j 1" ""; do
            t0=$(date +%s.%N)
            "$kvx" compile specs/histogram.yaml --arch sm_80,sm_90,sm_120 --no-cache $j >"$B/compile-scaling.log" 2>&1
            echo "kvx compile histogram x3 archs --no-cache ${j:-(default jobs)}: $(awk -v a="$t0" \
                -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s" | tee -a "$B/session.log"
        done
        for spec in contention histogram; do
            for pass in cold warm; do
                [ $pass = cold ] && rm -rf "$root/.kvx-cache-scaling"
                "$kvx" run "specs/$spec.yaml" --db "$B/scaling-$spec-$pass.db" --cache "$root/.kvx-cache-scaling" \
                    --rerun --profile >"$B/scaling-$spec-$pass.log" 2>&1
                echo "$spec $pass: $(grep -E '^(time|profile) ' "$B/scaling-$spec-$pass.log" | tr -s ' ' | tr '\n' ';')" |
                    tee -a "$B/session.log"
            done
        done
        ;;
    specs)
        for f in specs/*.yaml; do
            spec=$(basename "$f" .yaml)
            [ "$spec" = sgemm ] && continue
            "$kvx" compile "$f" >/dev/null 2>&1
            "$kvx" run "$f" --db "$B/specs-$spec.db" --rerun --profile >"$B/specs-$spec.log" 2>&1
            python3 - "$B/specs-$spec.db" "$spec" <<'PY' | tee -a "$B/session.log"
import json, sqlite3, sys
p = json.loads(sqlite3.connect(sys.argv[1]).execute("SELECT profile_json FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0])
share = (p["input_s"] + p["verify_s"]) / p["wall_s"]
print(f"{sys.argv[2]:14s} {p['cases']:4d} cases {p['wall_s']:7.2f} s: inputs {p['input_s']:.2f} s + verify"
      f" {p['verify_s']:.2f} s = {100 * share:.1f}% of the wall; GPU busy {100 * p['gpu_busy_share']:.1f}%")
PY
        done
        ;;
    reps)
        say "contention warm, repeated"
        "$kvx" compile specs/contention.yaml >/dev/null 2>&1
        for r in 1 2 3; do
            for part in whole 612; do
                where=; [ $part = 612 ] && where='strategy != "two_pass"'
                db=$B/reps-$part-$r.db
                t0=$(date +%s.%N)
                "$kvx" run specs/contention.yaml ${where:+--where "$where"} --db "$db" --rerun --profile \
                    >"$B/reps-$part-$r.log" 2>&1
                t1=$(date +%s.%N)
                python3 - "$db" "$part" "$t0" "$t1" <<'PY' | tee -a "$B/session.log"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
p = json.loads(db.execute("SELECT profile_json FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0])
st = dict(db.execute("SELECT status, count(*) FROM cases GROUP BY status").fetchall())
print(f"contention {sys.argv[2]:5s} {p['cases']:4d} cases {float(sys.argv[4]) - float(sys.argv[3]):6.2f} s process,"
      f" {p['wall_s']:6.2f} s run; stages before the loop"
      f" {sum(v for k, v in p['stages_s'].items() if k in ('load', 'probe', 'store', 'workers')):.2f} s,"
      f" loop {p['stages_s']['loop']:.2f} s; {st}")
PY
            done
        done
        ;;
    warmup)
        say "warm-up A/B"
        "$kvx" compile specs/contention.yaml >/dev/null 2>&1
        for w in default 1 3; do
            flag=; [ $w = default ] || flag="--warmup $w"
            "$kvx" run specs/contention.yaml --db "$B/warmup-$w.db" --rerun --profile $flag >"$B/warmup-$w.log" 2>&1
            echo "warm-up $w: $(grep -E '^[0-9]+ cases in|^profile ' "$B/warmup-$w.log" | tr '\n' ';')" | tee -a "$B/session.log"
        done
        for w in 1 3; do
            "$kvx" compare "$B/warmup-default.db" "$B/warmup-$w.db" --rows strategy,counter,address,counters,n \
                --cols hit_rate --format csv >"$B/warmup-$w-compare.csv" 2>&1
            python3 - "$B/warmup-$w-compare.csv" "$w" <<'PY' | tee -a "$B/session.log"
import csv, statistics, sys
r = []
for x in csv.DictReader(open(sys.argv[1])):
    try:
        r.append((float(x["B_over_A"]), x))
    except (KeyError, TypeError, ValueError):
        pass
out = [(v, x) for v, x in r if abs(v - 1) > 0.02]
print(f"--warmup {sys.argv[2]} over the default: {len(r)} cells, {len(out)} beyond 2%, median ratio"
      f" {statistics.median(v for v, _ in r):.4f}, range {min(v for v, _ in r):.3f} to {max(v for v, _ in r):.3f}")
for v, x in out:
    print("  ", x["strategy"], x["counter"], x["address"], x["counters"], x["n"], x["hit_rate"], f"{v:.3f}")
PY
        done
        ;;
    coldwarm)
        for spec in contention histogram; do
            for pass in cold warm; do
                [ $pass = cold ] && rm -rf "$root/.kvx-cache-coldwarm"
                "$kvx" run "specs/$spec.yaml" --db "$B/coldwarm-$spec-$pass.db" --cache "$root/.kvx-cache-coldwarm" \
                    --rerun --profile >"$B/coldwarm-$spec-$pass.log" 2>&1
                echo "$spec $pass: $(grep -E '^(time|profile|  loop) ' "$B/coldwarm-$spec-$pass.log" | tr -s ' ' |
                    tr '\n' ';')" | tee -a "$B/session.log"
            done
        done
        ;;
    user)
        for spec in bench/specs/*.yaml; do
            name=$(basename "$spec" .yaml)
            say "user-shaped $name"
            "$kvx" compile "$spec" >/dev/null 2>&1
            t0=$(date +%s.%N)
            "$kvx" run "$spec" --db "$B/user-$name.db" --rerun --profile >"$B/user-$name.log" 2>&1
            rc=$?
            echo "$name: whole $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s, exit $rc" |
                tee -a "$B/session.log"
            grep -E "^[0-9]+ cases in|^(time|profile) |^  worker|^    (buffers|verify|reference|compare|samples|ref_kernel) |GPU waited" \
                "$B/user-$name.log" | tee -a "$B/session.log"
            python3 - "$B/user-$name.db" "$name" <<'PY' | tee -a "$B/session.log"
import json, sqlite3, sys
p = json.loads(sqlite3.connect(sys.argv[1]).execute("SELECT profile_json FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0])
share = (p["input_s"] + p["verify_s"]) / p["wall_s"]
print(f"{sys.argv[2]:14s} {p['cases']:4d} cases {p['wall_s']:7.2f} s: inputs {p['input_s']:.3f} s + verify"
      f" {p['verify_s']:.3f} s = {100 * share:.1f}% of the wall; GPU busy {100 * p['gpu_busy_share']:.1f}%")
PY
        done
        ;;
    bench)
        say bench
        bench/explorer.sh "$kvx" "$B/bench" 2>&1 | tee -a "$B/session.log"
        ;;
    kt)
        say "kernel tuner"
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
            .whl/*.whl >"$B/kt-install.log" 2>&1
        "$kvx" gen specs/contention.yaml --where 'address == "const" && counters == 1' --out /tmp/gen192 \
            >>"$B/kt-install.log" 2>&1
        PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout -s KILL 240 python3 bench/kernel_tuner_contention.py \
            /tmp/gen192 --repeat 2 --csv "$B/kt.csv" 2>&1 | tail -n 8 | tee -a "$B/session.log"
        ;;
    kt-transpose)
        say "kernel tuner: transpose"
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
            .whl/*.whl >"$B/kt-install.log" 2>&1
        "$kvx" gen bench/specs/transpose.yaml --out /tmp/gen-transpose >>"$B/kt-install.log" 2>&1
        t0=$(date +%s.%N)
        PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout -s KILL 300 python3 bench/kernel_tuner_transpose.py \
            /tmp/gen-transpose --repeat 1 2>&1 | tail -n 8 | tee -a "$B/session.log"
        echo "kernel tuner, whole: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s" | tee -a "$B/session.log"
        "$kvx" compile bench/specs/transpose.yaml >/dev/null 2>&1
        t0=$(date +%s.%N)
        "$kvx" run bench/specs/transpose.yaml --db "$B/kt-transpose.db" --rerun --profile >"$B/kvx-transpose.log" 2>&1
        rc=$?
        echo "kvx run (warm), whole: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s, exit $rc" | tee -a "$B/session.log"
        tail -n 25 "$B/kvx-transpose.log" | tee -a "$B/session.log"
        ;;
    groups)
        # Where a variant's compile time goes on this host, by group size
        # (issue 34 item 2): bench/compile_groups.sh on all cores, then on one.
        say "compile groups"
        KVX_JOBS=$(nproc) bench/compile_groups.sh "$kvx" >"$B/groups-all.md" 2>&1
        KVX_JOBS=1 KVX_GROUPS="1 8 16" bench/compile_groups.sh "$kvx" >"$B/groups-one.md" 2>&1
        cat "$B/groups-all.md" "$B/groups-one.md" | tee -a "$B/session.log"
        ;;
    stencil)
        # bench/specs/stencil.yaml exhaustively (2,160 variants, 4,320 cases):
        # cold (an empty compile cache) and warm, with --profile.
        for pass in cold warm; do
            [ $pass = cold ] && rm -rf "$root/.kvx-cache-stencil"
            say "stencil $pass"
            t0=$(date +%s.%N)
            timeout -s KILL "${KVX_STEP_TIMEOUT:-400}" "$kvx" run bench/specs/stencil.yaml --db "$B/stencil-$pass.db" \
                --cache "$root/.kvx-cache-stencil" --profile >"$B/stencil-$pass.log" 2>&1
            echo "stencil $pass: exit $? after $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s" | tee -a "$B/session.log"
            grep -E "^(time|profile|compile profile|  busy processes|  seconds of the processes|cases) " "$B/stencil-$pass.log" | tee -a "$B/session.log"
            grep -E "^[0-9]+ cases" "$B/stencil-$pass.log" | tee -a "$B/session.log"
        done
        ;;
    searchcold)
        # A 5% search of the stencil and of sgemm from an empty compile cache,
        # twice each (the first is the machine's first NVRTC use of the step),
        # with --profile: its wall against compile CPU / cores + GPU time.
        for spec in specs/sgemm.yaml bench/specs/stencil.yaml; do
            name=$(basename "$spec" .yaml)
            for k in 1 2; do
                rm -rf "$root/.kvx-cache-search"
                say "search $name, empty cache, $k"
                t0=$(date +%s.%N)
                timeout -s KILL 300 "$kvx" run "$spec" --search model --budget 5% --db "$B/search-$name-$k.db" \
                    --cache "$root/.kvx-cache-search" --profile >"$B/search-$name-$k.log" 2>&1
                echo "search $name $k: exit $? after $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s on $(nproc) cores" | tee -a "$B/session.log"
                grep -E "^(profile|compile profile|  busy processes|  seconds of the processes|  stages|time|best) " "$B/search-$name-$k.log" | tee -a "$B/session.log"
            done
        done
        ;;
    kt-stencil)
        # Kernel Tuner (one variant at a time) on a seeded sample of the
        # stencil's variants at 8192^2, the same generated sources, timed whole.
        say "kernel tuner: stencil sample"
        bench/kt_install.sh /tmp/site >"$B/kt-install.log" 2>&1
        "$kvx" gen bench/specs/stencil.yaml --out /tmp/gen-stencil >>"$B/kt-install.log" 2>&1
        t0=$(date +%s.%N)
        PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout -s KILL 300 python3 bench/kernel_tuner_stencil.py \
            /tmp/gen-stencil --sample "${KVX_KT_SAMPLE:-60}" >"$B/kt-stencil.log" 2>&1
        tail -n 6 "$B/kt-stencil.log" | tee -a "$B/session.log"
        echo "kernel tuner, whole: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s" | tee -a "$B/session.log"
        ;;
    counters)
        say counters
        ncu --query-metrics --chip gh100 2>/dev/null | grep -E "lts__t_requests_srcunit_tex_op_(atom|red) |dram__bytes_(read|write) " \
            >"$B/ncu-metrics.txt"
        ncu --version >>"$B/ncu-metrics.txt" 2>&1
        "$kvx" run specs/contention.yaml --where 'hit_rate == 1 && n == 2^24 && counters == 1' \
            --counters --db "$B/counters.db" --rerun >"$B/counters.log" 2>&1
        tail -n 4 "$B/counters.log" | tee -a "$B/session.log"
        for v in l2_atomics_per_1k median_ms dram_read_bytes; do
            "$kvx" table --db "$B/counters.db" --spec contention --rows strategy,address --cols counter \
                --value "$v" 2>&1 | tee -a "$B/session.log"
        done
        "$kvx" inspect specs/contention.yaml --arch sm_90 --where 'counters == 1 && counter == "u32"' \
            >"$B/counters-inspect.txt" 2>&1
        ;;
    peers:*)
        name=${step#peers:}
        say "peers $name"
        peers=$root/build-dev/bench/kvx-peers
        csv=$B/peers-$name.csv
        if [ ! -x "$peers" ]; then
            echo "kvx-peers was not built (no CUDA compiler at configure time: $B/build.log)" | tee -a "$B/session.log"
        else
            t0=$SECONDS
            timeout -s KILL "${KVX_STEP_TIMEOUT:-400}" "$peers" "specs/$name.yaml" --out "$csv" \
                ${KVX_PEERS_FLAGS:-} >"$B/peers-$name.log" 2>&1
            echo "exit $? after $((SECONDS - t0)) s" >>"$B/peers-$name.log"
            tail -n 30 "$B/peers-$name.log" | tee -a "$B/session.log"
            if [ -f "$csv" ]; then
                # The GPU as the CSV's first line names it.
                gpu=$(sed -n '1s/^# kvx-peers: GPU \(.*\) (sm_[0-9]*, .*/\1/p' "$csv")
                "$kvx" import "$csv" --name "cub_$name" --spec "$name" --gpu "${gpu:-unknown}" \
                    --db "$B/kvx.db" 2>&1 | tee -a "$B/session.log"
            fi
        fi
        ;;
    twomode)
        say "two-mode cases"
        nvidia-smi -q >"$B/twomode-smi.txt" 2>&1
        w='strategy == "naive" && counter == "u32" && address == "runtime" && n == 2^24 && hit_rate == 0.5 && (counters == 32 || counters == 256 || counters == 4096)'
        "$kvx" run specs/contention.yaml --where "$w" --db "$B/twomode.db" --rerun >"$B/twomode-run.log" 2>&1
        "$kvx" table --db "$B/twomode.db" --spec contention --rows counters --cols strategy --value median_ms 2>&1 |
            tee -a "$B/session.log"
        m=lts__t_requests_srcunit_tex_op_red.sum,lts__t_requests_srcunit_tex_op_red.max,lts__t_requests_srcunit_tex_op_red.min
        m=$m,lts__t_sectors_srcunit_tex_op_red.sum,lts__cycles_elapsed.avg.per_second,gpc__cycles_elapsed.avg.per_second
        m=$m,lts__cycles_active.avg,lts__cycles_active.max,gpu__time_duration.sum,lts__d_atomic_input_cycles_active.max
        m=$m,lts__d_atomic_input_cycles_active.avg
        for c in 32 256 4096; do
            w1='strategy == "naive" && counter == "u32" && address == "runtime" && n == 2^24 && hit_rate == 0.5 && counters == '$c
            timeout -s KILL 120 ncu --target-processes all --kernel-name filter_count --launch-skip 2 --launch-count 1 \
                --metrics "$m" --print-metric-instances values "$kvx" run specs/contention.yaml --where "$w1" \
                --db "$B/twomode-ncu.db" --rerun --timeout 100 >"$B/twomode-ncu-$c.txt" 2>&1 ||
            timeout -s KILL 120 ncu --target-processes all --kernel-name filter_count --launch-skip 2 --launch-count 1 \
                --metrics "$m" "$kvx" run specs/contention.yaml --where "$w1" \
                --db "$B/twomode-ncu.db" --rerun --timeout 100 >>"$B/twomode-ncu-$c.txt" 2>&1
            echo "counters $c:" | tee -a "$B/session.log"
            grep -E "lts__|gpc__|gpu__" "$B/twomode-ncu-$c.txt" | tee -a "$B/session.log"
        done
        grep -E "Product Name|VBIOS|Driver Version|GPU UUID|Serial|ECC Mode|Current  |Pending|Persistence|Power Limit|Max Clocks|SM  |Memory  |Board Part|Part Number|GPU Part|Module ID|Bus Id" \
            "$B/twomode-smi.txt" | head -60 >>"$B/session.log"
        ;;
    multi)
        say "several kernels"
        "$kvx" run specs/contention.yaml --where 'address == "const" && counters == 1 && (strategy == "two_pass" || strategy == "thread_reg_v4" || strategy == "naive" || strategy == "block_smem")' \
            --db "$B/multi.db" >"$B/multi-contention.log" 2>&1
        echo "contention: exit $?" | tee -a "$B/session.log"
        tail -n 4 "$B/multi-contention.log" | tee -a "$B/session.log"
        "$kvx" table --db "$B/multi.db" --spec contention --rows n,hit_rate --cols strategy --value median_ms 2>&1 | tee -a "$B/session.log"
        "$kvx" report specs/contention.yaml --db "$B/multi.db" --out "$B/multi-report" >/dev/null 2>&1
        for t in two_pass hist_private; do
            "$kvx" run "tests/data/specs/$t.yaml" --db "$B/multi-$t.db" >"$B/multi-$t.log" 2>&1
            echo "$t: exit $?" | tee -a "$B/session.log"
            grep -E "^(ok|mismatch|fault|skipped|timeout|error) " "$B/multi-$t.log" | cut -c1-150 | tee -a "$B/session.log"
        done
        "$kvx" inspect specs/contention.yaml --arch sm_90 --where 'strategy == "two_pass" && counter == "u32"' \
            >"$B/multi-inspect.txt" 2>&1
        head -n 30 "$B/multi-inspect.txt" | tee -a "$B/session.log"
        ;;
    multihist)
        say "histogram: global_private beside global and smem"
        "$kvx" run specs/histogram.yaml --where 'strategy == "global" || strategy == "global_private" || strategy == "smem"' \
            --db "$B/multihist.db" >"$B/multihist.log" 2>&1
        echo "histogram: exit $?" | tee -a "$B/session.log"
        tail -n 4 "$B/multihist.log" | tee -a "$B/session.log"
        "$kvx" report specs/histogram.yaml --db "$B/multihist.db" --out "$B/multihist-report" >/dev/null 2>&1
        "$kvx" table --db "$B/multihist.db" --spec histogram --rows size,bins --cols strategy --value median_ms 2>&1 |
            tee -a "$B/session.log"
        ;;
    jscale)
        say "compile scaling: histogram"
        for j in "-j 1" ""; do
            t0=$(date +%s.%N)
            "$kvx" compile specs/histogram.yaml --arch sm_80,sm_90,sm_120 --no-cache $j >"$B/jscale.log" 2>&1
            echo "kvx compile histogram x3 archs --no-cache ${j:-(default jobs)}: $(awk -v a="$t0" \
                -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s" | tee -a "$B/session.log"
        done
        ls -d "${TMPDIR:-/tmp}"/kvx-pch-* 2>/dev/null | wc -l | sed 's/^/pch folders left: /' | tee -a "$B/session.log"
        ;;
    nsys)
        say "nsys timeline"
        nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys \
            /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -n 1)
        echo "nsys: ${nsys:-none}" | tee -a "$B/session.log"
        if [ -n "$nsys" ]; then
            PATH=$(dirname "$nsys"):$PATH
            nsys profile -o "$B/timeline" --force-overwrite true --trace cuda,nvtx "$kvx" run specs/contention.yaml \
                --where 'n == 2^24 && hit_rate == 1 && counters == 1 && counter == "u32"' --db "$B/nsys.db" --rerun \
                >"$B/nsys.log" 2>&1
            nsys stats --report nvtx_sum --format csv "$B/timeline.nsys-rep" >"$B/nsys-nvtx.csv" 2>&1
            head -n 30 "$B/nsys-nvtx.csv" | cut -c1-200 | tee -a "$B/session.log"
            echo "cases stored: $(python3 -c "import sqlite3;print(sqlite3.connect('$B/nsys.db').execute('select count(*) from cases').fetchone()[0])")" | tee -a "$B/session.log"
        else
            ls /opt/nvidia /usr/local/cuda/ 2>&1 | tr '\n' ' ' | tee -a "$B/session.log"
        fi
        ;;
    bankconf)
        say "bank conflicts"
        m=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,default
        "$kvx" run bench/specs/transpose.yaml --where 'side == 4096' --counters="$m" --keep-ncu-rep \
            --db "$B/bankconf.db" >"$B/bankconf.log" 2>&1
        echo "exit $?" | tee -a "$B/session.log"
        tail -n 5 "$B/bankconf.log" | tee -a "$B/session.log"
        "$kvx" table --db "$B/bankconf.db" --spec bench_transpose --rows TILE,ROWS --cols strategy \
            --value counter.l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum 2>&1 | tee -a "$B/session.log"
        ls -la "$B"/bankconf*.ncu-rep 2>&1 | tee -a "$B/session.log"
        ;;
    nvbench)
        say "nvbench_compare"
        mkdir -p /tmp/nvb && (cd /tmp/nvb && for w in "$root"/.whl/nvbench/*.whl; do python3 -m zipfile -e "$w" . ; done)
        w='strategy == "naive" && n == 2^24 && address == "const" && counter == "u32"'
        for k in a b; do
            "$kvx" run specs/contention.yaml --where "$w" --db "$B/nvb-$k.db" --rerun >"$B/nvb-$k.log" 2>&1
            "$kvx" export --db "$B/nvb-$k.db" --format nvbench --out "$B/nvb-$k.json" 2>&1 | tee -a "$B/session.log"
        done
        PYTHONPATH=/tmp/nvb python3 /tmp/nvb/cuda/bench/scripts/nvbench_compare.py "$B/nvb-a.json" "$B/nvb-b.json" \
            >"$B/nvbench-compare.txt" 2>&1
        echo "nvbench_compare exit $?" | tee -a "$B/session.log"
        head -n 40 "$B/nvbench-compare.txt" | tee -a "$B/session.log"
        ;;
    placement)
        say "placement"
        w='strategy == "naive" && counter == "u32" && address == "runtime" && n == 2^24 && (counters == 256 || counters == 4096 || counters == 32)'
        for k in 1 2; do
            "$kvx" run specs/contention.yaml --where "$w" --db "$B/placement-$k.db" --rerun >"$B/placement-$k.log" 2>&1
            "$kvx" table --db "$B/placement-$k.db" --spec contention --rows counters --cols hit_rate 2>&1 | tee -a "$B/session.log"
        done
        "$kvx" compare "$B/placement-1.db" results/h200/contention.db --rows counters --cols hit_rate \
            --where "$w" 2>&1 | tail -n 25 | tee -a "$B/session.log"
        ;;
    memfacts)
        say "memory facts"
        "$kvx" inspect tests/data/specs/copy.yaml --arch sm_90 2>&1 | grep -E "memory|access" | head -n 20 | tee -a "$B/session.log"
        ;;
    plots)
        say "plots"
        "$kvx" report specs/contention.yaml --db "$B/placement-1.db" --out "$B/plots" >"$B/plots.log" 2>&1
        for py in "$B"/plots/*/*.py; do
            [ -f "$py" ] && { python3 "$py" >>"$B/plots.log" 2>&1; echo "$(basename "$py"): exit $?"; }
        done | tee -a "$B/session.log"
        ls "$B"/plots/*/ | head -n 20 | tee -a "$B/session.log"
        ;;
    space:*)
        names=${step#space:}
        [ "$names" = all ] && names=$SPACES
        # SGEMM on an H200 is results/h200/sgemm.db (2026-12-02): all records the rest there.
        [ "$step" = space:all ] && [ "$(gpu_dir)" = h200 ] && names=${names/sgemm /}
        mkdir -p "$B/spaces"
        for name in $names; do
            def=$(space_def "$name") || { echo "space:$name: no such space (expected one of: $SPACES)" | tee -a "$B/session.log"; continue; }
            spec=${def%%$'\t'*} where=${def#*$'\t'}
            say "space $name: $spec${where:+ where $where}, exhaustive, empty cache"
            rm -rf "$root/.kvx-cache-space" "$B/spaces/$name.db"
            t0=$(date +%s.%N)
            timeout -s KILL "${KVX_STEP_TIMEOUT:-400}" "$kvx" run "$spec" ${where:+--where "$where"} \
                --cache "$root/.kvx-cache-space" --db "$B/spaces/$name.db" --profile >"$B/space-$name.log" 2>&1
            echo "space $name: exit $?, whole $(since "$t0") s" | tee -a "$B/session.log"
            grep -E "^time |^profile " "$B/space-$name.log" | tail -n 3 | tee -a "$B/session.log"
            # A space cut short (the timeout) is no record: its cases against the plan's points.
            planned=$("$kvx" plan "$spec" ${where:+--where "$where"} --format csv | tail -n +2 | wc -l)
            python3 - "$B/spaces/$name.db" "$planned" <<'PY' | tee -a "$B/session.log"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
cases, planned = c.execute("select count(*) from cases").fetchone()[0], int(sys.argv[2])
print("statuses", dict(c.execute("select status, count(*) from cases group by status").fetchall()),
      "variants", c.execute("select count(distinct variant_id) from cases").fetchone()[0],
      "journal", c.execute("pragma journal_mode").fetchone()[0],
      "complete" if cases == planned else f"INCOMPLETE ({cases} of {planned} points stored): not a record, do not commit it")
PY
            "$kvx" replay "$B/spaces/$name.db" --seeds 20 --strategy random,default --budgets 5% \
                --time-budgets "" 2>&1 | tail -n 4 | tee -a "$B/session.log"
        done
        ;;
    search-live|search-live:*)
        names=conv,dedisp,nbody
        [ "$step" = search-live ] || names=${step#search-live:}
        bash bench/kt_install.sh /tmp/site >"$B/kt-install.log" 2>&1
        gd=$(gpu_dir)
        for name in ${names//,/ }; do
            case $name in conv|dedisp|nbody) ;; *) echo "search-live:$name: no live Kernel Tuner side (expected conv, dedisp or nbody)" | tee -a "$B/session.log"; continue ;; esac
            def=$(space_def "$name"); spec=${def%%$'\t'*}
            say "search-live $name: kvx run --search default --budget 5%, empty cache"
            rm -rf "$root/.kvx-cache-live" "$B/live-$name.db"
            t0=$(date +%s.%N)
            timeout -s KILL "${KVX_STEP_TIMEOUT:-400}" "$kvx" run "$spec" --search default --budget 5% \
                --cache "$root/.kvx-cache-live" --db "$B/live-$name.db" --profile >"$B/live-$name.log" 2>&1
            echo "kvx search $name: exit $?, whole $(since "$t0") s" | tee -a "$B/session.log"
            grep -E "^search  [0-9]" "$B/live-$name.log" | tail -n 1 | tee -a "$B/session.log"
            ref="$B/spaces/$name.db"; [ -f "$ref" ] || ref="results/$gd/search/$name.db"
            opt=$( [ -f "$ref" ] && optimum_of "$ref")
            [ -n "$opt" ] || echo "search-live $name: no recorded optimum on this GPU ($ref): run space:$name first" |
                tee -a "$B/session.log"
            best=$(optimum_of "$B/live-$name.db")
            [ -n "$best" ] && [ -n "$opt" ] && awk -v b="$best" -v o="$opt" -v r="$ref" \
                'BEGIN { printf "kvx best %.5g ms, optimum %.5g ms (%s): %.3f of it%s\n", b, o, r, o / b, o / b >= 1 / 1.05 ? ", within 5%" : ", NOT within 5%" }' |
                tee -a "$B/session.log"
            "$kvx" gen "$spec" --out "/tmp/gen-live-$name" >/dev/null 2>&1
            rm -rf "$HOME/.cache/cupy"      # Kernel Tuner's compiles from empty too
            PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout -s KILL "${KVX_STEP_TIMEOUT:-400}" python3 bench/kernel_tuner_live.py \
                "$name" "/tmp/gen-live-$name" --budget 5% --strategy "${KVX_KT_STRATEGY:-bayes_opt}" >"$B/kt-live-$name.log" 2>&1
            echo "kernel tuner $name: exit $?" | tee -a "$B/session.log"
            tail -n 3 "$B/kt-live-$name.log" | tee -a "$B/session.log"
            # Its best by its own timing (cupy events, the mean of 7 runs, no L2 flush): beside, not the same measure.
            kbest=$(sed -n 's/^best .*: \([0-9.eE+-]*\) ms$/\1/p' "$B/kt-live-$name.log" | tail -n 1)
            [ -n "$kbest" ] && [ -n "$opt" ] && awk -v b="$kbest" -v o="$opt" \
                'BEGIN { printf "kernel tuner best %.5g ms by its own timing: %.3f of kvx'"'"'s recorded optimum\n", b, o / b }' |
                tee -a "$B/session.log"
        done
        ;;
    search)
        for batch in 8 32; do
            say "search sgemm --batch $batch"
            rm -rf "$root/.kvx-cache-search"
            t0=$(date +%s.%N)
            "$kvx" run specs/sgemm.yaml --search model --budget 5% --batch $batch --cache "$root/.kvx-cache-search" \
                --db "$B/search-$batch.db" --profile >"$B/search-$batch.log" 2>&1
            rc=$?
            echo "search --batch $batch: whole $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s, exit $rc" |
                tee -a "$B/session.log"
            python3 - "$B/search-$batch.db" <<'PY' | tee -a "$B/session.log"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n, ok, best = c.execute("select count(*), sum(status = 'ok'), min(case when status = 'ok' then median_ms end) from cases").fetchone()
runs, wall = c.execute("select count(*), sum(wall_s) from runs").fetchone()
print(f"cases {n} ok {ok} best {best:.4f} ms (exhaustive optimum 0.4972 ms: {0.4972 / best:.3f} of it); runs {runs}, summed run wall {wall:.1f} s")
PY
            grep -E "^time |^profile " "$B/search-$batch.log" | tail -n 4 | tee -a "$B/session.log"
        done
        ;;
    layout)
        # block_smem at one constant counter, 2^26: e9df4dc's spec (no `partial`
        # buffer, so its counter lies elsewhere) and this tree's, both by this kvx.
        say "e9df4dc's contention spec against this tree's, by this kvx"
        old=/tmp/kvx-old
        [ -d "$old" ] || git worktree add -f "$old" e9df4dc >/dev/null 2>&1 || git -c advice.detachedHead=false clone -q . "$old"
        (cd "$old" && git checkout -q e9df4dc)
        sel='(strategy == "block_smem" || strategy == "block_smem_warp") && counters == 1 && address == "const"'
        for side in old new; do
            for rep in 1 2; do
                (cd "$([ $side = old ] && echo "$old" || echo "$root")" &&
                    "$kvx" run specs/contention.yaml --where "$sel" --db "$B/layout-$side.db" --rerun \
                        >"$B/layout-$side-$rep.log" 2>&1)
                echo "$side spec, run $rep: $(grep -E '^[0-9]+ cases in' "$B/layout-$side-$rep.log")" | tee -a "$B/session.log"
            done
        done
        python3 - "$B/layout-old.db" "$B/layout-new.db" <<'PY' | tee -a "$B/session.log"
import sqlite3, sys
def med(db):
    c = sqlite3.connect(db)
    return {r[0]: r[1] for r in c.execute(
        "SELECT label, median_ms FROM cases WHERE run_id = (SELECT max(id) FROM runs) AND status = 'ok'")}
a, b = med(sys.argv[1]), med(sys.argv[2])
print("label  e9df4dc-spec_us  this-spec_us  ratio")
for k in sorted(a):
    if k in b:
        print(f"{k}  {a[k]*1000:.1f}  {b[k]*1000:.1f}  {a[k]/b[k]:.3f}")
PY
        ;;
    oldnew)
        say "e9df4dc against this tree"
        old=/tmp/kvx-old
        git worktree add -f "$old" e9df4dc >/dev/null 2>&1 || git -c advice.detachedHead=false clone -q . "$old"
        (cd "$old" && git checkout -q e9df4dc && cmake -S . -B b -DCMAKE_PREFIX_PATH="$root/.devdeps" \
            -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build b -j "$(nproc)" >/dev/null 2>&1)
        if [ -x "$old/b/kvx" ]; then
            for side in old new; do
                k=$kvx; [ $side = old ] && k=$old/b/kvx
                (cd "$([ $side = old ] && echo "$old" || echo "$root")" && "$k" compile specs/contention.yaml >/dev/null 2>&1 &&
                    KVX_COMMIT= "$k" run specs/contention.yaml --db "$B/oldnew-$side.db" --rerun >"$B/oldnew-$side.log" 2>&1)
                echo "$side: $(grep -E '^[0-9]+ cases in' "$B/oldnew-$side.log")" | tee -a "$B/session.log"
            done
            "$kvx" run specs/contention.yaml --db "$B/oldnew-w3.db" --rerun --warmup 3 >"$B/oldnew-w3.log" 2>&1
            echo "new --warmup 3: $(grep -E '^[0-9]+ cases in' "$B/oldnew-w3.log")" | tee -a "$B/session.log"
            "$kvx" compare "$B/oldnew-new.db" "$B/oldnew-old.db" --rows strategy,counter,address,counters,n \
                --cols hit_rate --format csv >"$B/oldnew-compare.csv" 2>&1
            "$kvx" compare "$B/oldnew-new.db" "$B/oldnew-w3.db" --rows strategy,counter,address,counters,n \
                --cols hit_rate --format csv >"$B/oldnew-w3-compare.csv" 2>&1
            for f in oldnew-compare oldnew-w3-compare; do
            echo "$f (B/A: the second database over the first):" | tee -a "$B/session.log"
            python3 - "$B/$f.csv" <<'PY' | tee -a "$B/session.log"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None
r = [x for x in rows if num(x.get("B_over_A")) is not None]
out = [x for x in r if abs(num(x["B_over_A"]) - 1) > 0.02]
print(f"cells compared {len(r)}; beyond 2%: {len(out)}; marked significant: {sum(1 for x in out if x.get('mark'))}")
import statistics
print(f"median ratio {statistics.median(num(x['B_over_A']) for x in r):.4f}")
for x in out[:40]:
    print("  ", ",".join(f"{k}={v}" for k, v in x.items()))
PY
            done
        else
            echo "e9df4dc did not build" | tee -a "$B/session.log"
        fi
        ;;
    nvtxrep)
        say "NVTX in a kept ncu report"
        ncu -i results/h200/sitting-0805/bankconf-run1.ncu-rep --print-nvtx-rename kernel --page raw --csv \
            --metrics gpu__time_duration.sum >"$B/nvtxrep.csv" 2>&1
        cut -c1-300 "$B/nvtxrep.csv" | head -n 8 | tee -a "$B/session.log"
        ncu -i results/h200/sitting-0805/bankconf-run1.ncu-rep --print-nvtx-rename kernel --print-summary per-kernel 2>&1 |
            grep -iE "strategy=|transpose" | head -n 12 | tee -a "$B/session.log"
        ;;
    nvrtccold)
        say "NVRTC's first use on this machine"
        lib=$(dirname "$(readlink -f "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")/../lib64
        t0=$(date +%s.%N)
        cat "$lib"/libnvrtc* >/dev/null 2>&1
        echo "reading $(du -chL "$lib"/libnvrtc* | tail -n 1 | cut -f1) of libnvrtc* first:" \
            "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s" | tee -a "$B/session.log"
        for r in 1 2; do
            "$kvx" compile specs/contention.yaml --no-cache >"$B/nvrtccold-$r.log" 2>&1
            echo "compile $r: $(grep -E 'compiles' "$B/nvrtccold-$r.log")" | tee -a "$B/session.log"
        done
        ;;
    alignab)
        say "placement A/B: b43eb14~1 against b43eb14 and this tree"
        where='(strategy == "block_smem" || strategy == "block_smem_warp") && address == "const" && counters == 1 && n == 2^26'
        for c in b43eb14~1 b43eb14; do
            d=/tmp/kvx-ab-${c/\~/-}
            git worktree add -f "$d" "$c" >/dev/null 2>&1 || git -c advice.detachedHead=false clone -q . "$d"
            (cd "$d" && git checkout -q "$c" && cmake -S . -B b -DCMAKE_PREFIX_PATH="$root/.devdeps" \
                -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build b -j "$(nproc)" >/dev/null 2>&1) &
        done
        wait
        for r in 1 2; do
            for c in b43eb14~1 b43eb14 new; do
                d=/tmp/kvx-ab-${c/\~/-}; k=$d/b/kvx
                [ $c = new ] && { d=$root; k=$kvx; }
                name=alignab-${c/\~/-}-$r
                (cd "$d" && "$k" compile specs/contention.yaml --where "$where" >/dev/null 2>&1 &&
                    KVX_COMMIT= "$k" run specs/contention.yaml --where "$where" --db "$B/$name.db" --rerun \
                    >"$B/$name.log" 2>&1)
                echo "$name: $(grep -E '^[0-9]+ cases in' "$B/$name.log")" | tee -a "$B/session.log"
            done
        done
        for c in b43eb14-1-2 b43eb14-1 b43eb14-2 new-1 new-2; do
            "$kvx" compare "$B/alignab-b43eb14-1-1.db" "$B/alignab-$c.db" --rows strategy,hit_rate \
                --cols counter --format csv >"$B/alignab-$c-compare.csv" 2>&1
            python3 - "$B/alignab-$c-compare.csv" "$c" <<'PY' | tee -a "$B/session.log"
import csv, statistics, sys
r = []
for x in csv.DictReader(open(sys.argv[1])):
    try:
        r.append(float(x["B_over_A"]))
    except (KeyError, TypeError, ValueError):
        pass
print(f"{sys.argv[2]:12s} over b43eb14~1 (run 1): {len(r)} cells, median ratio {statistics.median(r):.4f},"
      f" range {min(r):.4f} to {max(r):.4f}" if r else f"{sys.argv[2]}: no cells")
PY
        done
        ;;
    *) echo "unknown step $step" ;;
    esac
    # After every step, so that a call cut off at its limit still brings back
    # what the finished steps wrote.
    tar czf "$OUT/bundle.tgz" -C "$OUT" bundle
    cp "$B/session.log" "$OUT/session.log"
done
tar czf "$OUT/bundle.tgz" -C "$OUT" bundle
cp "$B/session.log" "$OUT/session.log"
