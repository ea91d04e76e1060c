#!/usr/bin/env bash
# slurm-array.sh: one kvx spec measured across N nodes as a Slurm job array,
# then merged and reported by a job that waits for the whole array.
#
#   scripts/slurm-array.sh submit SPEC N [SBATCH OPTION...]
#       from the login node, in the directory the results should go under:
#       submits N array tasks (one GPU node each) and the merge job.
#   scripts/slurm-array.sh task SPEC     (run by each array task)
#   scripts/slurm-array.sh merge SPEC    (run by the merge job)
#
# Task i of the array runs `kvx run SPEC --db results/shard-i.db`; kvx takes its
# shard from SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN,
# so the array must be one contiguous range (1-N, as submitted here).  The merge
# job runs after every task succeeded (afterok), merges the shards into
# results/all.db and writes the report.  docs/slurm.md explains the partition,
# the shared compile cache and how to check completeness.
#
# Environment: KVX (the kvx binary; default: kvx on PATH, else ./build/kvx),
# KVX_CACHE_DIR (the compile cache; set it to a directory on a filesystem every
# node shares so that each source is compiled once), KVX_RUN_ARGS (extra
# options for kvx run, e.g. "--where 'n >= 2^20'"; word-split, no --db or --shard),
# KVX_SLURM_GRES (what each task asks for: default gpu:1; empty asks for no
# generic resource, for a node that lists none, as tests/test_slurm.c's).
set -uo pipefail

self=$(readlink -f "$0")
mode=${1:-}
spec=${2:-}
usage() {
    echo "usage: $0 submit SPEC N [SBATCH OPTION...] | task SPEC | merge SPEC" >&2
    exit 2
}
if [ -z "$mode" ] || [ -z "$spec" ]; then usage; fi
kvx=${KVX:-$(command -v kvx || echo ./build/kvx)}
name=$(basename "$spec" .yaml)

case $mode in
submit)
    n=${3:-}
    [[ $n =~ ^[1-9][0-9]*$ ]] || usage
    shift 3
    [ -f "$spec" ] || { echo "$0: no spec '$spec'" >&2; exit 2; }
    # Plan here first: a bad spec fails now, not on N nodes.
    "$kvx" plan "$spec" >/dev/null || exit 2
    mkdir -p results/slurm
    # Every task must name the spec by the same path, from the same directory:
    # the path is part of each source's header, hence of the case keys.
    gres=${KVX_SLURM_GRES-gpu:1}
    array=$(sbatch --parsable --array="1-$n" --job-name="kvx-$name" ${gres:+--gres="$gres"} \
                   --output="results/slurm/$name-%a.out" "$@" "$self" task "$spec") || exit $?
    array=${array%%;*}      # "jobid;cluster" on multi-cluster setups
    merge=$(sbatch --parsable --dependency="afterok:$array" --job-name="kvx-$name-merge" \
                   --output="results/slurm/$name-merge.out" "$@" "$self" merge "$spec") || exit $?
    merge=${merge%%;*}
    echo "array $array ($n tasks: results/shard-1.db .. results/shard-$n.db), merge $merge (results/all.db)"
    echo "watch: squeue -j $array,$merge; logs in results/slurm/"
    ;;
task)
    id=${SLURM_ARRAY_TASK_ID:?task mode runs inside a Slurm array job}
    mkdir -p results
    db="results/shard-$id.db"
    # kvx run exits 1 when some case is not ok (a fault, a mismatch: results
    # like any other; 4, not 1, when it could not measure at all).  A second
    # pass skips the stored cases and measures only what is missing, and it
    # exits 0 once every case of this shard is stored and nothing it measured
    # failed.  Failing variants must not fail the task,
    # or afterok would never start the merge.
    # shellcheck disable=SC2086
    for pass in 1 2 3; do
        echo "== kvx run $spec --db $db (pass $pass, shard from SLURM_ARRAY_TASK_ID=$id)"
        "$kvx" run "$spec" --db "$db" ${KVX_RUN_ARGS:-}
        rc=$?
        [ $rc -eq 1 ] || exit $rc
    done
    echo "kvx run still exits 1 after 3 passes: cases are missing from $db (see above)" >&2
    exit 1
    ;;
merge)
    shopt -s nullglob
    shards=(results/shard-*.db)
    [ ${#shards[@]} -gt 0 ] || { echo "$0: no results/shard-*.db to merge" >&2; exit 1; }
    "$kvx" merge results/all.db "${shards[@]}" || exit $?
    # Completeness: the plan's point count (for this --where, if any) against
    # the cases stored, and how many of them are not ok.
    plan=$("$kvx" plan "$spec") || exit $?
    grep '^points' <<<"$plan"
    # the spec's name: (what cases.spec_name holds), from "spec  PATH (NAME)..."
    name=$(sed -n '1s/^spec *[^ ]* (\([^)]*\)).*/\1/p' <<<"$plan")
    if command -v sqlite3 >/dev/null; then
        echo "cases stored, by status:"
        sqlite3 results/all.db "SELECT status, count(*) FROM cases WHERE spec_name = '$name' GROUP BY status"
    fi
    "$kvx" report "$spec" --db results/all.db --out "results/report-$name"
    ;;
*)
    usage
    ;;
esac
