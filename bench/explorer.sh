#!/bin/sh
# bench/explorer.sh: the explorer's own throughput, on the GPU it finds.
#
#   bench/explorer.sh [KVX] [OUTDIR]      (KVX: build/kvx; OUTDIR: /tmp/kvx-bench)
#
# Runs, each into a fresh database (--rerun: every case measured), with
# --profile, and prints cases/s, the GPU's share of the wall and the share of
# the wall the profile accounts for, then the compile wall, inputs, verify,
# the GPU's wait for host work and the host references computed ahead:
#   1. contention, the 192-case subset (address const, one counter), at Kernel
#      Tuner's settings (7 samples, no L2 flush) cold (empty compile cache) and
#      warm, then at kvx's defaults (warm);
#   2. the whole contention spec (612 cases), cold (empty compile cache) and warm;
#   3. bench/tiny.yaml: 1,100 cases of a kernel of a few microseconds;
#   4. the user-shaped specs of bench/specs/ (a transpose checked against a
#      reference kernel, a copy checked by `out: in`, a compaction with
#      several outputs, each up to 256 MB), compiled first, then warm.
# The Kernel Tuner side of (1): bench/kernel_tuner_contention.py (see its head).
set -eu
KVX=${1:-build/kvx}
OUT=${2:-/tmp/kvx-bench}
SUBSET='address == "const" && counters == 1'
mkdir -p "$OUT"
rm -rf "$OUT"/*.db* "$OUT/cache" "$OUT/cache-subset"

# One run: a label, then kvx run arguments.  Its log goes to OUT/LABEL.log.
bench() {
    label=$1
    shift
    start=$(date +%s.%N)
    "$KVX" run "$@" --db "$OUT/$label.db" --rerun --profile >"$OUT/$label.log" 2>&1 || true
    end=$(date +%s.%N)
    python3 - "$OUT/$label.db" "$label" "$start" "$end" <<'PY'
import json, sqlite3, sys
db, label, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
p = json.loads(sqlite3.connect(db).execute(
    "SELECT profile_json FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0])
print(f"{label:28s} {p['cases']:5d} cases {end - start:7.2f} s process, {p['wall_s']:7.2f} s run:"
      f" {p['cases_per_s']:7.1f} cases/s, GPU {100 * p['gpu_share']:5.1f}% of the wall"
      f" (busy {100 * p['gpu_busy_share']:5.1f}%), accounted {100 * p['accounted']:5.1f}%")
print(f"{'':28s} compile {p['compile_wall_s']:6.2f} s wall ({p['cache_hits']}/{p['sources']} from cache;"
      f" the GPU waited {p['loop_s']['compile_wait']:6.2f} s for it),"
      f" inputs {p['input_s']:6.2f} s, verify {p['verify_s']:6.2f} s, GPU waited for host work"
      f" {p.get('host_wait_s', 0):6.3f} s, host references ahead {p.get('ahead_refs', 0)}"
      f" in {p.get('ahead_s', 0):6.2f} s")
PY
}

bench subset-kt-cold specs/contention.yaml --where "$SUBSET" --min-samples 7 --max-samples 7 --no-flush-l2 \
    --cache "$OUT/cache-subset"
bench subset-kt specs/contention.yaml --where "$SUBSET" --min-samples 7 --max-samples 7 --no-flush-l2 \
    --cache "$OUT/cache-subset"
bench subset-default specs/contention.yaml --where "$SUBSET" --cache "$OUT/cache-subset"
bench whole-cold specs/contention.yaml --cache "$OUT/cache"
bench whole-warm specs/contention.yaml --cache "$OUT/cache"
bench tiny bench/tiny.yaml
for spec in bench/specs/*.yaml; do
    name=$(basename "$spec" .yaml)
    "$KVX" compile "$spec" --cache "$OUT/cache" >/dev/null 2>&1 || true
    bench "user-$name" "$spec" --cache "$OUT/cache"
done
echo "logs and databases in $OUT (kvx run --profile output in each .log)"
