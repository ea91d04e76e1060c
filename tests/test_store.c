/* test_store: the SQLite results store: schema and version, WAL, the run /
 * variant / case rows and the resume contract (keys).  Rows are fabricated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "store/store_cols.h"
#include "store/store_internal.h"

#ifndef KVX_SOURCE_DIR
#define KVX_SOURCE_DIR "."
#endif

static char dir[128];
static char path[256];

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/kvx_test_store.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/s.db", dir);
    return 0;
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *one_text(Store *s, const char *sql)
{
    static char buf[4096];
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(store_db(s), sql, -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    const char *t = (const char *)sqlite3_column_text(q, 0);
    snprintf(buf, sizeof buf, "%s", t ? t : "(null)");
    sqlite3_finalize(q);
    return buf;
}

static void test_schema(void **state)
{
    unlink(path);
    KvxError err = {0};
    Store *s = store_open(path, &err);
    assert_non_null(s);
    assert_string_equal(one_text(s, "PRAGMA journal_mode"), "wal");
    assert_int_equal(atoi(one_text(s, "SELECT max(version) FROM schema_version")), STORE_SCHEMA_VERSION);
    assert_string_equal(one_text(s, "SELECT group_concat(name) FROM (SELECT name FROM"
                                    " sqlite_master WHERE type = 'table' ORDER BY name)"),
                        "cases,runs,schema_version,variants");
    store_close(s);
    /* Reopening keeps one version row. */
    s = store_open(path, &err);
    assert_string_equal(one_text(s, "SELECT count(*) FROM schema_version"), "1");
    /* A database from a newer kvx is refused, not misread. */
    assert_int_equal(sqlite3_exec(store_db(s), "UPDATE schema_version SET version = 99", NULL,
                                  NULL, NULL), SQLITE_OK);
    store_close(s);
    assert_null(store_open(path, &err));
    assert_int_equal(err.code, KVX_EINPUT);
    assert_non_null(strstr(err.msg, "results schema 99 is newer"));
    kvx_error_clear(&err);
    unlink(path);
    /* A version 1 database (no runs.devices_json) gains the column, keeps its
     * rows and is version 5 afterwards. */
    sqlite3 *old = NULL;
    assert_int_equal(sqlite3_open(path, &old), SQLITE_OK);
    assert_int_equal(sqlite3_exec(old,
                                  "CREATE TABLE schema_version (version INTEGER NOT NULL);"
                                  "INSERT INTO schema_version VALUES (1);"
                                  "CREATE TABLE runs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL"
                                  " DEFAULT 'run', name TEXT, spec_name TEXT, spec_path TEXT,"
                                  " gpu_name TEXT, gpu_uuid TEXT, cc INTEGER, sm_count INTEGER,"
                                  " l2_bytes INTEGER, mem_bytes INTEGER, clock_mhz INTEGER,"
                                  " mem_clock_mhz INTEGER, peak_gbs REAL, driver_version INTEGER,"
                                  " nvrtc_version TEXT, kvx_version TEXT, arch TEXT, hostname TEXT,"
                                  " command TEXT, measure_json TEXT, baseline_json TEXT,"
                                  " axes_json TEXT, started_at TEXT, wall_s REAL, profile_json TEXT);"
                                  "INSERT INTO runs (spec_name, gpu_name) VALUES ('old', 'Old GPU');",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(old);
    s = store_open(path, &err);
    assert_non_null(s);
    assert_int_equal(atoi(one_text(s, "SELECT max(version) FROM schema_version")), STORE_SCHEMA_VERSION);
    assert_string_equal(one_text(s, "SELECT spec_name || ' ' || coalesce(devices_json, 'none')"
                                    " FROM runs"), "old none");
    store_close(s);
    unlink(path);
    /* A version 2 database (cases without profile_json, the clocks and the
     * counters; variants without kernels_json) gains them, NULL for its
     * rows, and is version 5 afterwards. */
    s = store_open(path, &err);
    assert_non_null(s);
    assert_int_equal(sqlite3_exec(store_db(s),
                                  "ALTER TABLE cases DROP COLUMN profile_json;"
                                  "ALTER TABLE cases DROP COLUMN sm_mhz;"
                                  "ALTER TABLE cases DROP COLUMN mem_mhz;"
                                  "ALTER TABLE cases DROP COLUMN sm_max_mhz;"
                                  "ALTER TABLE cases DROP COLUMN throttled;"
                                  "ALTER TABLE cases DROP COLUMN l2_atom_requests;"
                                  "ALTER TABLE cases DROP COLUMN l2_red_requests;"
                                  "ALTER TABLE cases DROP COLUMN dram_read_bytes;"
                                  "ALTER TABLE cases DROP COLUMN dram_write_bytes;"
                                  "ALTER TABLE variants DROP COLUMN kernels_json;"
                                  "ALTER TABLE cases DROP COLUMN counters_json;"
                                  "ALTER TABLE cases DROP COLUMN samples_json;"
                                  "UPDATE schema_version SET version = 2;"
                                  "INSERT INTO runs (spec_name) VALUES ('v2');"
                                  "INSERT INTO cases (run_id, key, axes, status)"
                                  " VALUES (1, 'k2', '{}', 'ok');",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    store_close(s);
    s = store_open(path, &err);
    assert_non_null(s);
    assert_int_equal(atoi(one_text(s, "SELECT max(version) FROM schema_version")), STORE_SCHEMA_VERSION);
    assert_string_equal(one_text(s, "SELECT key || ' ' || coalesce(profile_json, 'none') || ' ' ||"
                                    " coalesce(throttled, 'unknown') || ' ' || coalesce(sm_mhz, 0) ||"
                                    " ' ' || coalesce(l2_red_requests, 'none') FROM cases"),
                        "k2 none unknown 0 none");
    assert_string_equal(one_text(s, "SELECT count(*) FROM pragma_table_info('variants')"
                                    " WHERE name = 'kernels_json'"), "1");
    /* Counters are stored on a case that exists. */
    double v[4] = {1, 2, 3, 4};
    assert_int_equal(store_put_counters(s, 1, "k2", "{\"m.sum\":5}", v, &err), 0);
    assert_string_equal(one_text(s, "SELECT (l2_atom_requests + l2_red_requests) || ' ' ||"
                                    " dram_read_bytes || ' ' || dram_write_bytes || ' ' ||"
                                    " json_extract(counters_json, '$.\"m.sum\"') || ' ' ||"
                                    " coalesce(samples_json, 'none') FROM cases"),
                        "3.0 3.0 4.0 5 none");
    store_close(s);
    unlink(path);
    /* A path that cannot be a database. */
    assert_null(store_open("/nonexistent-dir/x.db", &err));
    assert_int_equal(err.code, KVX_EIO);
    kvx_error_clear(&err);
}

static void test_rows(void **state)
{
    unlink(path);
    KvxError err = {0};
    Store *s = store_open(path, &err);
    assert_non_null(s);
    RunEnv env = {.spec_name = "contention", .gpu_name = "Fixture GPU", .gpu_uuid = "GPU-x",
                  .cc = 90, .sm_count = 132, .l2_bytes = 52428800, .peak_gbs = 3352,
                  .driver_version = 13000, .nvrtc_version = "13.0", .arch = "sm_90",
                  .baseline_json = "{\"strategy\":\"naive\"}", .started_at = "2025-01-01T00:00:00Z",
                  .devices_json = "[{\"ordinal\":0,\"uuid\":\"GPU-x\"}]"};
    int64_t run;
    assert_int_equal(store_begin_run(s, &env, &run, &err), 0);
    assert_true(run > 0);
    assert_string_equal(one_text(s, "SELECT kind || ' ' || baseline_json || ' ' || l2_bytes"
                                    " FROM runs"), "run {\"strategy\":\"naive\"} 52428800");
    assert_string_equal(one_text(s, "SELECT json_extract(devices_json, '$[0].uuid') FROM runs"),
                        "GPU-x");
    VariantRow v = {.spec_name = "contention", .source_hash = "abc", .label = "strategy=naive",
                    .code_axes_json = "{\"strategy\":\"naive\"}", .compile_ok = 1, .regs = 24,
                    .compile_ms = 120.5, .inspect_json = "{\"warp_aggregated\":true}"};
    int64_t v1, v2;
    assert_int_equal(store_put_variant(s, run, &v, &v1, &err), 0);
    /* The same source in the same run is found, not duplicated. */
    assert_int_equal(store_put_variant(s, run, &v, &v2, &err), 0);
    assert_int_equal(v1, v2);
    assert_string_equal(one_text(s, "SELECT count(*) FROM variants"), "1");

    const char *parts[] = {"contention", "abc", "{\"hit_rate\":0.5}", "GPU-x", NULL};
    char key[65];
    store_case_key(parts, key);
    assert_int_equal(strlen(key), 64);
    const char *other[] = {"contention", "abc", "{\"hit_rate\":0.5}", "GPU-y", NULL};
    char key2[65];
    store_case_key(other, key2);
    assert_string_not_equal(key, key2);   /* another device is another case */

    CaseRow c;
    store_case_init(&c);
    c.key = key;
    c.spec_name = "contention";
    c.axes_json = "{\"strategy\":\"naive\",\"hit_rate\":0.5}";
    c.status = "ok";
    c.median_ms = 0.25;
    c.samples = 12;
    c.grid[0] = 65536, c.block[0] = 256;
    c.profile_json = "{\"recv\":0.5,\"samples\":3.25}";
    c.sm_mhz = 1500, c.sm_max_mhz = 1980, c.throttled = 1;
    assert_int_equal(store_has_case(s, key, &err), 0);
    assert_int_equal(store_put_case(s, run, v1, &c, &err), 0);
    assert_int_equal(store_has_case(s, key, &err), 1);
    /* NaN is stored as NULL, never as a number. */
    assert_string_equal(one_text(s, "SELECT coalesce(rel_err, 'null') || ' ' || median_ms ||"
                                    " ' ' || grid_x || ' ' || json_extract(axes, '$.hit_rate')"
                                    " FROM cases"), "null 0.25 65536 0.5");
    /* The per-case profile and the clocks; an unknown clock is NULL. */
    assert_string_equal(one_text(s, "SELECT json_extract(profile_json, '$.samples') || ' ' ||"
                                    " sm_mhz || '/' || sm_max_mhz || ' ' || throttled || ' ' ||"
                                    " coalesce(mem_mhz, 'null') FROM cases"), "3.25 1500/1980 1 null");
    /* A key stored twice (another run measured it first) is 1, no error,
     * and leaves the first row (#22, 13). */
    c.median_ms = 9;
    assert_int_equal(store_put_case(s, run, v1, &c, &err), 1);
    assert_int_equal(err.code, 0);
    assert_string_equal(one_text(s, "SELECT count(*) || ' ' || median_ms FROM cases"), "1 0.25");
    /* The store still works after the failed insert (the transaction ended). */
    c.key = key2;
    assert_int_equal(store_put_case(s, run, 0, &c, &err), 0);
    assert_string_equal(one_text(s, "SELECT count(*) FROM cases WHERE variant_id IS NULL"), "1");
    assert_int_equal(store_forget_case(s, key, &err), 0);
    assert_int_equal(store_has_case(s, key, &err), 0);
    assert_int_equal(store_end_run(s, run, 42.5, "{\"compile_s\":1}", &err), 0);
    assert_string_equal(one_text(s, "SELECT wall_s FROM runs"), "42.5");
    store_close(s);
    /* Everything committed survives a reopen. */
    s = store_open(path, &err);
    assert_int_equal(store_has_case(s, key2, &err), 1);
    store_close(s);
    store_close(NULL);
}

/* docs/results-schema.md's tables of columns are store_cols.c's, between
 * "<!-- columns: NAME ..." and "<!-- end columns -->"; KVX_REGOLD=1 rewrites
 * them.  A fresh file holds exactly those columns, in that order. */
static void test_columns_documented(void **state)
{
    const char *doc_path = KVX_SOURCE_DIR "/docs/results-schema.md";
    size_t len = 0;
    KvxError err = {0};
    char *doc = file_read(doc_path, &len);
    if (!doc)
        fail_msg("cannot read %s", doc_path);
    int regold = getenv("KVX_REGOLD") != NULL;
    for (int t = 0; t < STORE_NTABLES; t++) {
        char open_tag[64];
        snprintf(open_tag, sizeof open_tag, "<!-- columns: %s ", store_tables[t].name);
        char *a = strstr(doc, open_tag), *b = a ? strstr(a, "<!-- end columns -->") : NULL;
        if (!a || !b)
            fail_msg("%s: no '%s...' ... '<!-- end columns -->'", doc_path, open_tag);
        a = strchr(a, '\n') + 1;
        StrBuf want;
        sb_init(&want);
        store_cols_markdown(&store_tables[t], &want);
        if (regold) {
            StrBuf nd;
            sb_init(&nd);
            sb_printf(&nd, "%.*s%s%s", (int)(a - doc), doc, sb_str(&want), b);
            free(doc);
            doc = sb_take(&nd);
        } else if ((size_t)(b - a) != strlen(sb_str(&want)) || strncmp(a, sb_str(&want), (size_t)(b - a))) {
            fail_msg("%s: the %s columns differ from store/store_cols.c (KVX_REGOLD=1 rewrites"
                     " them); want:\n%s", doc_path, store_tables[t].name, sb_str(&want));
        }
        sb_free(&want);
    }
    if (regold && file_write_atomic(doc_path, doc, strlen(doc)))
        fail_msg("cannot write %s", doc_path);
    free(doc);
    unlink(path);
    Store *s = store_open(path, &err);
    assert_non_null(s);
    for (int t = 0; t < STORE_NTABLES; t++) {
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT group_concat(name, ' ') FROM pragma_table_info('%s')",
                 store_tables[t].name);
        StrBuf want;
        sb_init(&want);
        for (int i = 0; i < store_tables[t].ncols; i++)
            sb_printf(&want, "%s%s", i ? " " : "", store_tables[t].cols[i].name);
        assert_string_equal(one_text(s, sql), sb_str(&want));
        sb_free(&want);
    }
    store_close(s);
}

/* WAL while a Store has the file, rollback mode once kvx closes it: a
 * reader then needs no -wal or -shm, and leaves none.  A second Store open
 * at the first one's close keeps it in WAL until it closes too. */
static void test_journal_after_close(void **state)
{
    unlink(path);
    KvxError err = {0};
    Store *a = store_open(path, &err), *b = store_open(path, &err);
    assert_non_null(a);
    assert_non_null(b);
    store_close(a);
    assert_string_equal(one_text(b, "PRAGMA journal_mode"), "wal");
    store_close(b);
    char side[300];
    snprintf(side, sizeof side, "%s-wal", path);
    assert_int_not_equal(access(side, F_OK), 0);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "delete");
    sqlite3_finalize(q);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM cases", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    sqlite3_finalize(q);
    sqlite3_close(db);
    assert_int_not_equal(access(side, F_OK), 0);
    snprintf(side, sizeof side, "%s-shm", path);
    assert_int_not_equal(access(side, F_OK), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema),
        cmocka_unit_test(test_columns_documented),
        cmocka_unit_test(test_journal_after_close),
        cmocka_unit_test(test_rows),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
