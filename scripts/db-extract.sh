#!/usr/bin/env bash
# db-extract.sh SRC.db RUN_ID OUT.db: a copy of SRC.db holding run RUN_ID alone
# (its cases and variants), for a write-up's database.  Needs the sqlite3 CLI.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 SRC.db RUN_ID OUT.db" >&2; exit 2; }
src=$1 run=$2 out=$3
case $run in ''|*[!0-9]*) echo "$0: RUN_ID must be a number, not '$run'" >&2; exit 2;; esac
[ -f "$src" ] || { echo "$0: no database '$src'" >&2; exit 2; }
n=$(sqlite3 "$src" "SELECT count(*) FROM runs WHERE id = $run")
[ "$n" = 1 ] || { echo "$0: '$src' has no run $run" >&2; exit 1; }
tmp=$out.tmp.$$
rm -f "$tmp"
sqlite3 "$src" ".backup '$tmp'"
sqlite3 "$tmp" "DELETE FROM cases WHERE run_id != $run; DELETE FROM variants WHERE run_id != $run;
                DELETE FROM runs WHERE id != $run; VACUUM;"
mv "$tmp" "$out"
echo "$out: run $run of $src, $(sqlite3 "$out" 'SELECT count(*) FROM cases') cases"
