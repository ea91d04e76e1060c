#!/bin/sh
# fake_ncu.sh: Nsight Compute's ncu as kvx's counter pass calls it
# (run/counters.c), for tests without a GPU (tests/test_counters.c).  It runs
# the profiled command as ncu would (kvx __counters on the fake device) and
# writes ncu's --csv --page raw table for the metrics of --metrics: one row a
# launch, $FAKE_NCU_CASES rows of kernel $FAKE_NCU_KERNEL, metric k of row i
# (from 0) valued (i + 1) * 1000 + k.  With --export the table is the
# "report"; --import of it prints the table again.  Its arguments are
# appended to $FAKE_NCU_ARGS.
metrics= log= rep= import=
echo "$*" >>"${FAKE_NCU_ARGS:-/dev/null}"
while [ $# -gt 0 ]; do
    case "$1" in
    --csv | --nvtx | --force-overwrite) shift ;;
    --page | --clock-control) shift 2 ;;
    --metrics) metrics=$2; shift 2 ;;
    --log-file) log=$2; shift 2 ;;
    --export) rep=$2; shift 2 ;;
    --import) import=$2; shift 2 ;;
    -*) echo "fake ncu: unexpected option $1" >&2; exit 9 ;;
    *) break ;;
    esac
done
if [ -n "$import" ]; then
    cat "$import" >"$log"
    exit 0
fi
"$@" || exit $?
table() {
    printf '"ID","Process ID","Process Name","Kernel Name"'
    for m in $(echo "$metrics" | tr , ' '); do printf ',"%s"' "$m"; done
    printf '\n"","","",""'
    for m in $(echo "$metrics" | tr , ' '); do printf ',""'; done
    printf '\n'
    i=0
    while [ "$i" -lt "${FAKE_NCU_CASES:-0}" ]; do
        printf '"%d","1","kvx","%s"' "$i" "$FAKE_NCU_KERNEL"
        k=0
        for m in $(echo "$metrics" | tr , ' '); do
            printf ',"%d"' $(((i + 1) * 1000 + k))
            k=$((k + 1))
        done
        printf '\n'
        i=$((i + 1))
    done
}
if [ -n "$rep" ]; then
    table >"$rep"
    echo "==PROF== Report: $rep" >>"$log"
else
    echo "==PROF== Connected to process 1" >"$log"
    table >>"$log"
fi
