#!/usr/bin/env bash
# The results databases of every older layout (schema 1 to 6), for
# test_store_schemas: a kvx of today reads, tables and exports each.  Layouts
# 1, 3 and 4 are committed results (results/h200/) cut to a few cases; 2, 5
# and 6 were never committed, so each is the layout before it with the
# columns its schema added (store_cols.c's `since`), as kvx's migration of
# that version left a file.  Run from the source tree; it rewrites
# tests/data/store/schema*.db.
set -eu
cd "$(dirname "$0")/../../.."
out=tests/data/store
cut() {   # SRC DST: SRC's first 8 cases of each spec, what they need, rollback mode
    rm -f "$2"
    sqlite3 "$1" ".backup '$2'"
    sqlite3 "$2" "
      DELETE FROM cases WHERE id NOT IN (SELECT id FROM cases c WHERE
        (SELECT count(*) FROM cases d WHERE d.spec_name = c.spec_name AND d.id < c.id) < 8);
      DELETE FROM variants WHERE id NOT IN (SELECT variant_id FROM cases WHERE variant_id IS NOT NULL);
      DELETE FROM runs WHERE id NOT IN (SELECT run_id FROM cases);
      PRAGMA journal_mode = DELETE;
      VACUUM;" >/dev/null
}
grow() {  # SRC DST VERSION SQL: a copy of SRC with SQL applied, at VERSION
    rm -f "$2"
    cp "$1" "$2"
    sqlite3 "$2" "$4; UPDATE schema_version SET version = $3; VACUUM;" >/dev/null
}
cut results/h200/histogram-lanes.db $out/schema1.db
grow $out/schema1.db $out/schema2.db 2 "ALTER TABLE runs ADD COLUMN devices_json TEXT"
cut results/h200/explorer/subset-kt.db $out/schema3.db
cut results/h200/contention-counters.db $out/schema4.db
grow $out/schema4.db $out/schema5.db 5 "ALTER TABLE variants ADD COLUMN kernels_json TEXT"
grow $out/schema5.db $out/schema6.db 6 "ALTER TABLE cases ADD COLUMN counters_json TEXT;
  ALTER TABLE cases ADD COLUMN samples_json TEXT;
  UPDATE cases SET counters_json = json_object('lts__t_requests_srcunit_tex_op_atom.sum', l2_atom_requests,
    'lts__t_requests_srcunit_tex_op_red.sum', l2_red_requests, 'dram__bytes_read.sum', dram_read_bytes,
    'dram__bytes_write.sum', dram_write_bytes)
  WHERE coalesce(l2_atom_requests, l2_red_requests, dram_read_bytes, dram_write_bytes) IS NOT NULL"
for v in 1 2 3 4 5 6; do
    echo "$out/schema$v.db: schema $(sqlite3 $out/schema$v.db 'SELECT max(version) FROM schema_version'),"\
         "$(sqlite3 $out/schema$v.db 'SELECT count(*) FROM cases') cases, $(stat -c %s $out/schema$v.db) bytes"
done
