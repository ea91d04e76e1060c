#!/usr/bin/env bash
# main-job.sh KVX SPEC: the main exploration.  Plans, compiles (sm_80 and sm_90
# plus the local GPU's arch) and inspects the spec; then, where a GPU is present,
# measures every case into results/kvx.db and prints the seed-layout table.
# Without a GPU it does everything else and says that measuring needs one.
set -uo pipefail
kvx=${1:?usage: main-job.sh KVX SPEC}
spec=${2:?usage: main-job.sh KVX SPEC}
name=$(basename "$spec" .yaml)
db=${KVX_DB:-results/kvx.db}

step() { printf '\n== %s\n' "$*"; }
step "kvx doctor"
"$kvx" doctor
step "kvx plan $spec"
"$kvx" plan "$spec" || exit $?
step "kvx compile $spec --arch sm_80,sm_90"
"$kvx" compile "$spec" --arch sm_80,sm_90 | tail -n 3 || exit $?
step "kvx inspect $spec --arch sm_80,sm_90,sm_120"
"$kvx" inspect "$spec" --arch sm_80,sm_90,sm_120 || exit $?
step "kvx run $spec --db $db"
"$kvx" run "$spec" --db "$db"
rc=$?
# grep reads to the end (not -q): kvx exits 3 when its stdout is closed early.
if [ $rc -ne 0 ] && ! "$kvx" doctor 2>/dev/null | grep '^GPUs *[1-9]' >/dev/null; then
    echo
    echo "main job: planned, compiled and inspected; measuring needs a GPU, and this machine has none."
    exit 0
fi
step "kvx table --spec $name --rows hit_rate --cols strategy --value median_ms --ratio"
"$kvx" table --db "$db" --spec "$name" --rows hit_rate --cols strategy --value median_ms --ratio
exit $rc
