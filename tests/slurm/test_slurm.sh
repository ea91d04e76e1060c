#!/usr/bin/env bash
# test_slurm (ctest label slurm): scripts/slurm-array.sh on a real, one-node
# Slurm.  munged, slurmctld and slurmd start from a config in a temporary
# folder (root, no systemd); the contention spec is submitted as 3 array tasks
# and the merge job, on the fake driver (KVX_FAKE_GPUS=1; the node lists no
# GPU, so KVX_SLURM_GRES is empty).  The merged database must hold exactly
# the plan's cases, each once, all ok, with the keys and statuses of one
# unsharded run.  Exit 77 (skipped) where Slurm is not installed or not root.
#
#   tests/slurm/test_slurm.sh KVX_BINARY SOURCE_DIR
set -u
kvx=${1:?usage: test_slurm.sh KVX SOURCE_DIR}
src=${2:?usage: test_slurm.sh KVX SOURCE_DIR}
skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "slurmd and munged run as root here"
for t in munged slurmctld slurmd sbatch squeue; do
    command -v $t >/dev/null || skip "$t not found (apt-get install slurm-wlm munge)"
done
command -v sqlite3 >/dev/null || skip "sqlite3 (the shell) not found"

d=$(mktemp -d /tmp/kvx-slurm-XXXXXX)
cleanup() {
    scancel --quiet --user=root 2>/dev/null
    for p in slurmd slurmctld; do [ -f "$d/$p.pid" ] && kill "$(cat "$d/$p.pid")" 2>/dev/null; done
    [ -f "$d/munge/pid" ] && kill "$(cat "$d/munge/pid")" 2>/dev/null
    sleep 1
    rm -rf "$d"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$d"/log/*.log "$d"/work/results/slurm/*.out; do [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done; exit 1; }

# ---- a one-node cluster -----------------------------------------------------------
mkdir -p "$d/spool" "$d/state" "$d/munge" "$d/log" "$d/work"
host=$(hostname -s)
port=$((20000 + $$ % 20000))
head -c 1024 /dev/urandom >"$d/munge/munge.key" && chmod 400 "$d/munge/munge.key"
munged --force --key-file="$d/munge/munge.key" --socket="$d/munge/sock" --pid-file="$d/munge/pid" \
    --log-file="$d/log/munge.log" --seed-file="$d/munge/seed" || skip "munged does not start"
cat >"$d/slurm.conf" <<EOC
ClusterName=kvxtest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/sock
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmdSpoolDir=$d/spool
StateSaveLocation=$d/state
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
SlurmctldPort=$port
SlurmdPort=$((port + 1))
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOC
export SLURM_CONF=$d/slurm.conf
slurmctld -f "$SLURM_CONF" || skip "slurmctld does not start"
slurmd -f "$SLURM_CONF" || skip "slurmd does not start"
up=0
for _ in $(seq 30); do sinfo -h -o %T 2>/dev/null | grep -q idle && { up=1; break; }; sleep 1; done
[ $up = 1 ] || skip "the node does not come up: $(sinfo 2>&1 | tail -n 1)"

# ---- the array and its merge --------------------------------------------------------
cd "$d/work" || exit 1
cp -r "$src/specs" "$src/templates" .
export KVX="$kvx" KVX_FAKE_GPUS=1 KVX_SLURM_GRES= KVX_CACHE_DIR="$d/cache"
"$src/scripts/slurm-array.sh" submit specs/contention.yaml 3 || fail "submit"
for _ in $(seq 600); do
    [ -z "$(squeue -h -u root 2>/dev/null)" ] && break
    sleep 1
done
[ -z "$(squeue -h -u root)" ] || fail "jobs still queued after 600 s: $(squeue -u root)"
[ -f results/all.db ] || fail "no results/all.db: the merge job did not run"

want=$("$kvx" plan specs/contention.yaml | sed -n 's/^points .* \([0-9]*\) after where:.*/\1/p')
got=$(sqlite3 results/all.db "SELECT count(*) || ' ' || count(DISTINCT key) || ' ' || sum(status = 'ok') FROM cases")
[ "$got" = "$want $want $want" ] || fail "all.db holds '$got' (cases, distinct keys, ok; expected $want each)"

# ---- against one unsharded run -------------------------------------------------------
"$kvx" run specs/contention.yaml --db single.db >/dev/null 2>&1
a=$(sqlite3 results/all.db "SELECT key || ' ' || status FROM cases ORDER BY key" | sha256sum)
b=$(sqlite3 single.db "SELECT key || ' ' || status FROM cases ORDER BY key" | sha256sum)
[ "$a" = "$b" ] || fail "the merged keys and statuses differ from one unsharded run's"
echo "slurm: 3 array tasks and the merge stored the plan's $want cases once each, as one run does"
echo "1 passed, 0 failed"
