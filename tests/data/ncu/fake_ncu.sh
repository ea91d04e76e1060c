#!/bin/sh
# A stand-in for Nsight Compute on the fake device (gpu/fake.h), for tests that
# need `kvx run --counters` values without ncu or a GPU (test_doc_claims'
# pandas example).  Called as kvx calls ncu (run/counters.c):
#   fake_ncu.sh --csv --page raw ... --metrics M,... --log-file LOG KVX __counters DEV FILE
# it runs the command with KVX_FAKE_LOG (one line per case launched) and writes
# ncu's raw CSV to LOG: a header, a units row and one row per launch, kernel
# $FAKE_NCU_KERNEL, each metric the row number times 1024 (so that a reader
# can tell the cases apart).  Not a profiler.
set -u
log= metrics=
while [ $# -gt 0 ]; do
    case $1 in
    --log-file) log=$2; shift 2 ;;
    --metrics) metrics=$2; shift 2 ;;
    --page|--clock-control) shift 2 ;;
    --*) shift ;;
    *) break ;;
    esac
done
launches=$(mktemp)
KVX_FAKE_LOG=$launches "$@" || { rc=$?; rm -f "$launches"; exit $rc; }
{
    printf '"ID","Process ID","Process Name","Kernel Name"'
    old_ifs=$IFS; IFS=,
    for m in $metrics; do printf ',"%s"' "$m"; done
    printf '\n"","","",""'
    for m in $metrics; do printf ',""'; done
    printf '\n'
    i=0
    while read -r _; do
        printf '"%d","1","kvx","%s"' "$i" "${FAKE_NCU_KERNEL:-fill}"
        for m in $metrics; do printf ',"%d"' $(( (i + 1) * 1024 )); done
        printf '\n'
        i=$((i + 1))
    done < "$launches"
    IFS=$old_ifs
} > "$log"
rm -f "$launches"
