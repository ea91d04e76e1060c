/* test_results_io: kvx import, export, merge and report over the fixture
 * database of tests/results_fixture.h (the tables are test_results.c's).
 *
 * The fixture rows are FABRICATED test data in the shape `kvx run` writes
 * (values from a formula, two made-up GPUs "Fixture GPU A/B"); they exercise
 * the tables and must never be presented as measurements.  Outputs are
 * compared byte for byte with files under tests/data/results; KVX_REGOLD=1 rewrites them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/results_fixture.h"
#include "store/store_cols.h"
#include "tests/python_tools.h"

/* ---- import, export, merge --------------------------------------------------- */

static void test_import_round_trip(void **state)
{
    char db[512];
    snprintf(db, sizeof db, "%s", tmp_path("ref.db"));
    unlink(db);
    char csv[512];
    snprintf(csv, sizeof csv, "%s/results/reference/rtx5090_contention.csv", KVX_SOURCE_DIR);
    char *out, *errs;
    int rc = run_cmd(cmd_import, 0, &out, &errs, "import", csv, "--name", "rtx5090", "--db", db,
                     "--spec", "contention", "--gpu", "RTX 5090", NULL);
    if (rc)
        fail_msg("import: %s", errs);
    free(out), free(errs);
    /* Importing the same name twice is refused and adds nothing. */
    rc = run_cmd(cmd_import, 0, &out, &errs, "import", csv, "--name", "rtx5090", "--db", db, NULL);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(errs, "already imported"));
    free(out), free(errs);
    /* The figures come back as they went in. */
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", db, "--ref", "rtx5090", "--rows",
                 "hit_rate", "--cols", "strategy", "--format", "csv", NULL);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "hit_rate,naive,warp_cg,block_smem\n"
                             "0.05,0.0379,0.0358,0.0263\n"
                             "0.125,0.0521,0.0514,0.0267\n"
                             "0.25,0.079,0.079,0.0278\n"
                             "0.5,0.1321,0.133,0.0308\n"
                             "1,0.2335,0.2335,0.037\n");
    free(out), free(errs);
    /* Export carries the axes as columns and the environment. */
    rc = run_cmd(cmd_export, 1, &out, &errs, "export", "--db", db, NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "case_id,run_id,run_kind,run_name,spec_name,strategy,counter,"
                                "hit_rate,label,status,"));
    assert_non_null(strstr(out, "1,1,reference,rtx5090,contention,naive,u64,0.05,"
                                "strategy=naive counter=u64 hit_rate=0.05,ok,,0.0379,"));
    assert_non_null(strstr(out, ",RTX 5090,ref:rtx5090,"));
    free(out), free(errs);
    /* ref:NAME against the database it lives in. */
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", "ref:rtx5090", db, "--db", db, "--rows",
                 "hit_rate", "--cols", "strategy", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "| 1 | block_smem | 37 us | 37 us | 1x | ? |"));
    free(out), free(errs);
    /* A kvx run against the reference, filtering the axes only A has. */
    char sel[600];
    snprintf(sel, sizeof sel, "%s:ref=rtx5090", db);
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("a.db"), sel, "--rows",
                 "hit_rate", "--cols", "strategy", "--where-a", "n == 2^24 && counter == 'u64'",
                 NULL);
    if (rc)
        fail_msg("compare: %s", errs);
    assert_non_null(strstr(out, "| 0.05 | naive | 55 us | 37.9 us | 0.689x | * |"));
    assert_non_null(strstr(out, "| 0.125 | naive | - | 52.1 us | - |  |"));
    assert_non_null(strstr(out, "| 0.5 | warp_cg | timeout | 133 us | - |  |"));
    free(out), free(errs);
    /* Without --where-a the reference side has no axis n: a clear error. */
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("a.db"), sel, "--where",
                 "n == 2^24", NULL);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(errs, "unknown name 'n'"));
    assert_non_null(strstr(errs, ":ref=rtx5090]"));
    free(out), free(errs);
}

/* kvx compare says when its sides placed their buffers differently
 * (runs.devices_json's buf_align, docs/measurement.md), and not when alike. */
static void test_compare_placement(void **state)
{
    (void)state;
    const char *old = tmp_path("a.db"), *cp = tmp_path("placed.db");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", old, cp);
    assert_int_equal(system(cmd), 0);
    sqlite3 *c = open_db(cp);
    assert_int_equal(sqlite3_exec(c, "UPDATE runs SET devices_json = '[{\"ordinal\":0,\"buf_align\":2097152}]'",
                                  NULL, NULL, NULL), 0);
    sqlite3_close(c);
    char *out, *errs;
    int rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", cp, old, "--rows", "hit_rate", "--cols",
                     "strategy", NULL);
    if (rc)
        fail_msg("compare: %s", errs);
    assert_non_null(strstr(out, "Note: A's runs placed their buffers at 2097152-byte boundaries, B's where"
                                " the driver put them (before kvx 0.2.0)"));
    free(out), free(errs);
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", cp, cp, "--rows", "hit_rate", "--cols", "strategy",
                 NULL);
    assert_int_equal(rc, 0);
    assert_null(strstr(out, "placed their buffers"));
    free(out), free(errs);
}

static void test_import_errors(void **state)
{
    static const struct { const char *csv, *msg; } bad[] = {
        {"strategy,median_ms,hit_rate\nnaive,1,0.5\n", ":1:20: 'hit_rate' follows the value"},
        {"strategy,median_ms\nnaive,fast\n", ":2:7: median_ms: 'fast' is not a number"},
        {"strategy,median_ms\nnaive,1\nnaive,2\n", ":3:1: repeats the axis values of line 2"},
        {"strategy,median_ms\nnaive\n", ":2:1: 1 fields, the header has 2"},
        {"my axis,median_ms\nx,1\n", "axis name 'my axis' is not an identifier"},
        /* A spreadsheet's ';' or tab separated export: a hint, not 'axis name ... not an identifier'. */
        {"strategy;median_ms\nnaive;1,5\n", ":1:1: the header is one field holding ';': kvx reads"
                                             " comma-separated values"},
        {"strategy\tmedian_ms\nnaive\t1.5\n", ":1:1: the header is one field holding tabs"},
        {"strategy,status\nnaive,broken\n", "unknown status 'broken'"},
        {"strategy\nnaive\n", "no value column"},
        /* JSON of neither kind was "axis name '{' is not an identifier". */
        {"{\"a\": 1}\n", "bad.csv: JSON that is neither nvbench's result (benchmarks) nor a Kernel Tuner cache"},
        /* Kernel Tuner cache files (results_kt.c). */
        {"{\"tune_params_keys\": [\"x\"], \"cache\": {\"1\": {\"x\": 1, \"time\": 2}} ]}",
         "bad.csv: malformed JSON (expected a Kernel Tuner cache file"},
        {"{\"tune_params_keys\": \"x\", \"cache\": {}}", "needs tune_params_keys (an array"},
        {"{\"tune_params_keys\": [\"my x\"], \"cache\": {}}", "tune parameter 1 of tune_params_keys ('my x')"
                                                               " is not an identifier"},
        {"{\"tune_params_keys\": [\"status\"], \"cache\": {}}", "('status') is the name of a value column"},
        {"{\"tune_params_keys\": [\"x\"], \"cache\": {}}", "the Kernel Tuner cache holds no entry"},
        {"{\"tune_params_keys\": [\"x\"], \"cache\": {\"1\": {\"time\": 5}}}", "cache entry '1' has no tune"
                                                                              " parameter 'x'"},
        {"{\"tune_params_keys\": [\"x\"], \"cache\": {\"1\": {\"x\": 1}}}", "cache entry '1' has no time"},
        {"{\"tune_params_keys\": [\"x\"], \"cache\": {\"1\": {\"x\": 1, \"time\": \"slow\"}}}",
         "cache entry '1': time is 'slow' (expected ms, or one of Kernel Tuner's errors: InvalidConfig,"},
        {"{\"tune_params_keys\": [\"x\"], \"cache\": {\"1\": {\"x\": 1, \"time\": -1}}}",
         "cache entry '1': time is -1 (expected a finite number from 0)"},
        {"{\"tune_params_keys\": [\"x\"], \"cache\": {\"1\": {\"x\": 1, \"time\": 1, \"times\": [1, \"a\"]}}}",
         "cache entry '1': an element of times is 'a'"},
        {"{\"tune_params_keys\": [\"x\"], \"cache\": {\"1\": {\"x\": [1], \"time\": 1}}}",
         "cache entry '1': tune parameter 'x' is an array"},
        {"{\"tune_params_keys\": [\"x\"], \"cache\": {\"1\": {\"x\": 1, \"time\": 1}, \"1.0\": {\"x\": 1.0,"
         " \"time\": 2}}}", "cache entries '1' and '1.0' hold the same tune parameter values"},
    };
    char db[512], csv[512];
    snprintf(db, sizeof db, "%s", tmp_path("bad.db"));
    snprintf(csv, sizeof csv, "%s", tmp_path("bad.csv"));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unlink(db);
        assert_int_equal(file_write_atomic(csv, bad[i].csv, strlen(bad[i].csv)), 0);
        char *out, *errs;
        int rc = run_cmd(cmd_import, 0, &out, &errs, "import", csv, "--name", "x", "--db", db,
                         NULL);
        if (rc != 2 || !strstr(errs, bad[i].msg))
            fail_msg("case %zu: rc %d, stderr %s", i, rc, errs);
        free(out), free(errs);
        sqlite3 *h = open_db(db);
        sqlite3_stmt *q;
        assert_int_equal(sqlite3_prepare_v2(h, "SELECT (SELECT count(*) FROM runs) +"
                                               " (SELECT count(*) FROM cases)", -1, &q, NULL), 0);
        assert_int_equal(sqlite3_step(q), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(q, 0), 0);   /* nothing half-written */
        sqlite3_finalize(q);
        sqlite3_close(h);
    }
}


static void test_merge(void **state)
{
    char outp[512], cp[512];
    snprintf(outp, sizeof outp, "%s", tmp_path("merged.db"));
    snprintf(cp, sizeof cp, "%s", tmp_path("c.db"));
    unlink(outp);
    KvxError err = {0};
    Store *st = store_open(outp, &err);
    assert_non_null(st);
    MergeStats s;
    assert_int_equal(store_merge(st, tmp_path("a.db"), &s, &err), 0);
    assert_int_equal(s.runs_added, 1);
    assert_int_equal(s.cases_added, 35);
    assert_int_equal(store_merge(st, tmp_path("b.db"), &s, &err), 0);
    assert_int_equal(s.runs_added, 1);      /* another GPU stays apart */
    assert_int_equal(s.variants_added, 6);
    assert_int_equal(s.cases_added, 35);
    /* Merging again changes nothing. */
    assert_int_equal(store_merge(st, tmp_path("a.db"), &s, &err), 0);
    assert_int_equal(s.runs_added, 0);
    assert_int_equal(s.runs_found, 1);
    assert_int_equal(s.variants_added, 0);
    assert_int_equal(s.cases_added, 0);
    assert_int_equal(s.cases_present, 35);
    store_close(st);
    assert_int_equal(count(outp, "SELECT count(*) FROM runs"), 2);
    assert_int_equal(count(outp, "SELECT count(*) FROM variants"), 12);
    assert_int_equal(count(outp, "SELECT count(*) FROM cases"), 70);
    /* Cases point at their own run's variants after renumbering. */
    assert_int_equal(count(outp, "SELECT count(*) FROM cases c JOIN variants v ON"
                                 " v.id = c.variant_id WHERE v.run_id != c.run_id"), 0);

    /* A key conflict: c.db holds a's first case with another time; the row
     * already in OUT is kept. */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", tmp_path("a.db"), cp);
    assert_int_equal(system(cmd), 0);
    sqlite3 *c = open_db(cp);
    assert_int_equal(sqlite3_exec(c, "UPDATE cases SET median_ms = 99 WHERE id = 1;"
                                     "UPDATE runs SET started_at = 'later'", NULL, NULL, NULL), 0);
    sqlite3_close(c);
    char *out, *errs;
    int rc = run_cmd(cmd_merge, 0, &out, &errs, "merge", outp, cp, NULL);
    assert_int_equal(rc, 0);
    free(out), free(errs);
    assert_int_equal(count(outp, "SELECT count(*) FROM runs"), 3);
    assert_int_equal(count(outp, "SELECT count(*) FROM cases"), 70);
    assert_int_equal(count(outp, "SELECT count(*) FROM cases WHERE median_ms = 99"), 0);
    /* A version 1 database (before runs.devices_json) merges: the column stays
     * NULL for its run. */
    copy_db("b.db", "v1.db", "ALTER TABLE runs DROP COLUMN devices_json;"
                             "UPDATE runs SET started_at = 'v1';"
                             "UPDATE schema_version SET version = 1");
    rc = run_cmd(cmd_merge, 0, &out, &errs, "merge", outp, tmp_path("v1.db"), NULL);
    if (rc != 0)
        fail_msg("merging a version 1 database: %s", errs);
    free(out), free(errs);
    assert_int_equal(count(outp, "SELECT count(*) FROM runs WHERE started_at = 'v1' AND"
                                 " devices_json IS NULL"), 1);
    /* A file that is not a results database is refused. */
    assert_int_equal(file_write_atomic(tmp_path("junk.db"), "junk", 4), 0);
    st = store_open(outp, &err);
    assert_int_equal(store_merge(st, tmp_path("junk.db"), &s, &err), -1);
    store_close(st);
    kvx_error_clear(&err);
}

/* ---- export and report ------------------------------------------------------- */

static void test_export_json(void **state)
{
    char *out, *errs;
    assert_int_equal(run_cmd(cmd_export, 1, &out, &errs, "export", "--db", tmp_path("a.db"),
                             "--format", "json", NULL), 0);
    /* Parse it back with SQLite's JSON: 35 objects, axes as their own keys. */
    sqlite3 *db;
    sqlite3_open(":memory:", &db);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT json_array_length(?1),"
                                            " json_extract(?1, '$[34].n'),"
                                            " json_extract(?1, '$[0].gpu_name'),"
                                            " json_extract(?1, '$[0].regs')", -1, &q, NULL), 0);
    sqlite3_bind_text(q, 1, out, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), 35);
    assert_int_equal(sqlite3_column_int64(q, 1), 67108864);
    assert_string_equal((const char *)sqlite3_column_text(q, 2), "Fixture GPU A");
    assert_int_equal(sqlite3_column_int(q, 3), 16);
    sqlite3_finalize(q);
    sqlite3_close(db);
    free(out), free(errs);
}

/* Every stored column is exported (under its name, or with its table's
 * prefix where the name is taken), docs/results-schema.md's `kvx export`
 * section names each exported column, and JSON nests JSON-valued columns. */
static void test_export_every_column(void **state)
{
    copy_db("a.db", "cols.db", "UPDATE cases SET l2_atom_requests = 12, profile_json ="
                               " '{\"verify\":1.5}', sm_mhz = 1980 WHERE id = 1");
    char *out, *errs;
    assert_int_equal(run_cmd(cmd_export, 1, &out, &errs, "export", "--db", tmp_path("cols.db"),
                             NULL), 0);
    char *doc = read_all(KVX_SOURCE_DIR "/docs/results-schema.md");
    assert_non_null(doc);
    const char *sec = strstr(doc, "## `kvx export`"), *end = sec ? strstr(sec, "## `kvx import`") : NULL;
    assert_non_null(end);
    static const char *const prefix[STORE_NTABLES] = {"run_", "variant_", "case_"};
    const char *axes[] = {"strategy", "counter", "hit_rate", "n"};
    char *head = strndup(out, strcspn(out, "\n"));
    char h[4096];
    snprintf(h, sizeof h, ",%s,", head);
    for (int t = 0; t < STORE_NTABLES; t++)
        for (int i = 0; i < store_tables[t].ncols; i++) {
            const char *name = store_tables[t].cols[i].name;
            char a[96], b[96];
            snprintf(a, sizeof a, ",%s,", name);
            snprintf(b, sizeof b, ",%s%s,", prefix[t], name);
            if (!strcmp(name, "id") || (t == STORE_T_VARIANTS && !strcmp(name, "run_id")))
                continue;
            if (!strstr(h, a) && !strstr(h, b))
                fail_msg("export leaves out %s.%s", store_tables[t].name, name);
        }
    for (char *f = head, *next; f; f = next) {
        next = strchr(f, ',');
        if (next)
            *next++ = 0;
        int axis = 0;
        for (int i = 0; i < 4; i++)
            axis |= !strcmp(f, axes[i]);
        char want[96];
        snprintf(want, sizeof want, "`%s`", f);
        char *at = strstr(sec, want);
        if (!axis && (!at || at > end))
            fail_msg("docs/results-schema.md's `kvx export` does not name the column %s", want);
    }
    free(head), free(doc), free(out), free(errs);
    assert_int_equal(run_cmd(cmd_export, 1, &out, &errs, "export", "--db", tmp_path("cols.db"),
                             "--format", "json", NULL), 0);
    sqlite3 *db;
    sqlite3_open(":memory:", &db);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT json_type(?1, '$[0].axes'),"
                                            " json_extract(?1, '$[0].profile_json.verify'),"
                                            " json_type(?1, '$[0].measure_json'),"
                                            " json_extract(?1, '$[0].l2_atom_requests'),"
                                            " json_extract(?1, '$[0].sm_mhz'),"
                                            " json_type(?1, '$[1].profile_json')", -1, &q, NULL), 0);
    sqlite3_bind_text(q, 1, out, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "object");
    assert_true(sqlite3_column_double(q, 1) == 1.5);
    assert_string_equal((const char *)sqlite3_column_text(q, 2), "object");
    assert_true(sqlite3_column_double(q, 3) == 12);
    assert_int_equal(sqlite3_column_int(q, 4), 1980);
    assert_string_equal((const char *)sqlite3_column_text(q, 5), "null");
    sqlite3_finalize(q);
    sqlite3_close(db);
    free(out), free(errs);
}

/* kvx import takes kvx export's own CSV back as a reference run (its axes,
 * value columns and status; the environment columns are left), and skips a
 * UTF-8 byte order mark. */
static void test_import_own_export(void **state)
{
    char *out, *errs, *want;
    assert_int_equal(run_cmd(cmd_export, 1, &out, &errs, "export", "--db", tmp_path("a.db"), NULL), 0);
    const char *csv = tmp_path("own.csv");
    FILE *f = fopen(csv, "w");
    assert_non_null(f);
    fputs(out, f);
    fclose(f);
    free(out), free(errs);
    char db[512];
    snprintf(db, sizeof db, "%s", tmp_path("own.db"));
    unlink(db);
    int rc = run_cmd(cmd_import, 0, &out, &errs, "import", csv, "--name", "again", "--spec",
                     "contention", "--db", db, NULL);
    if (rc)
        fail_msg("import of an export: %s", errs);
    free(out), free(errs);
    assert_int_equal(run_cmd(cmd_table, 1, &want, &errs, "table", "--db", tmp_path("a.db"), "--rows",
                             "hit_rate,n", "--cols", "strategy,counter", "--format", "csv", NULL), 0);
    free(errs);
    assert_int_equal(run_cmd(cmd_table, 1, &out, &errs, "table", "--db", db, "--ref", "again",
                             "--rows", "hit_rate,n", "--cols", "strategy,counter", "--format", "csv",
                             NULL), 0);
    assert_string_equal(out, want);
    assert_non_null(strstr(out, "timeout"));     /* statuses came back too */
    free(out), free(errs), free(want);

    csv = tmp_path("bom.csv");
    f = fopen(csv, "w");
    assert_non_null(f);
    fputs("\xEF\xBB\xBFstrategy,median_ms\nlib,0.5\n", f);
    fclose(f);
    rc = run_cmd(cmd_import, 0, &out, &errs, "import", csv, "--name", "bom", "--spec", "contention",
                 "--db", db, NULL);
    if (rc)
        fail_msg("import with a BOM: %s", errs);
    free(out), free(errs);
    assert_int_equal(run_cmd(cmd_table, 1, &out, &errs, "table", "--db", db, "--ref", "bom",
                             "--rows", "strategy", "--cols", "strategy", "--format", "csv", NULL), 2);
    assert_non_null(strstr(errs, "in both --rows and --cols"));   /* the axis is 'strategy' */
    free(out), free(errs);
}

/* python3 DIR/contention/STEM.py, run from elsewhere, draws STEM.svg and
 * STEM.png beside itself from STEM.csv alone (no gnuplot, no kvx), on a log2
 * x axis when logx.  Not checked (a line says so) where python3 or
 * matplotlib is missing. */
static void check_matplotlib(const char *dir, const char *stem, int logx)
{
    char p[700], cmd[1600];
    snprintf(p, sizeof p, "%s/contention/%s.py", dir, stem);
    char *py = read_all(p);
    assert_non_null(py);
    assert_int_equal(strstr(py, "logx, logy = True") != NULL, logx);
    free(py);
    if (!python_has("matplotlib", p))
        return;
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "%s/contention/%s.%s", dir, stem, i ? "png" : "svg");
        unlink(cmd);
    }
    snprintf(cmd, sizeof cmd, "cd / && python3 '%s'", p);
    if (system(cmd) != 0)
        fail_msg("%s failed", cmd);
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "%s/contention/%s.%s", dir, stem, i ? "png" : "svg");
        size_t n = 0;
        char *data = file_read(cmd, &n);
        if (!data || n < 1000)
            fail_msg("%s missing or tiny after python3 %s", cmd, p);
        if (i == 1)
            assert_memory_equal(data, "\x89PNG", 4);
        free(data);
    }
}

static void test_report(void **state)
{
    if (chdir(KVX_SOURCE_DIR))
        fail_msg("chdir %s", KVX_SOURCE_DIR);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", tmp_path("report"));
    setenv("KVX_GNUPLOT", "", 1);
    char *argv[] = {"report", "tests/data/results/fixture.yaml", "--db", (char *)tmp_path("a.db"),
                    "--out", dir, NULL};
    assert_int_equal(cmd_report(6, argv), 0);
    Store *db = read_db(tmp_path("a.db"));
    char *written = NULL;
    KvxError err = {0};
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    char *md = read_all(written);
    assert_non_null(md);
    assert_non_null(strstr(md, "| ok | 33 |\n| mismatch | 1 |\n| timeout | 1 |\n"));
    /* Without gnuplot: each plot's data and scripts, linked, not drawn. */
    assert_non_null(strstr(md, "gnuplot is not installed (or KVX_GNUPLOT names none): each plot's data"
                               " and scripts are written, not drawn"));
    assert_non_null(strstr(md, "- contention_hit_rate_median_ms_n-16777216: not drawn here; data [contention_hit_rate_"
                               "median_ms_n-16777216.csv](contention/contention_hit_rate_median_ms_n-16777216.csv),"
                               " scripts"));
    assert_null(strstr(md, ".svg)"));
    check_matplotlib(dir, "contention_hit_rate_median_ms_n-16777216", 0);
    check_matplotlib(dir, "contention_hit_rate_median_ms_ratio_n-67108864", 0);
    assert_non_null(strstr(md, "| 1 | 960 us | 904 us | mismatch |"));
    /* a table with failed_values: true shows the mismatched case's time */
    assert_non_null(strstr(md, "### The same, with the mismatched case's time"));
    assert_non_null(strstr(md, "| 1 | 960 us | 904 us | 144 us (mismatch) |"));
    check_golden("report.md", md);
    free(md);
    free(written);
    /* kvx report --failed-values: the mismatched case's time, marked. */
    char *fargv[] = {"report", "tests/data/results/fixture.yaml", "--db",
                     (char *)tmp_path("a.db"), "--out", dir, "--failed-values", NULL};
    assert_int_equal(cmd_report(7, fargv), 0);
    snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/contention.md");
    md = read_all(dir);
    dir[strlen(dir) - strlen("/contention.md")] = 0;
    assert_non_null(md);
    assert_non_null(strstr(md, "| 1 | 960 us | 904 us | 144 us (mismatch) |"));
    free(md);
    /* With gnuplot: SVG and PNG next to the report. */
    unsetenv("KVX_GNUPLOT");
    if (access("/usr/bin/gnuplot", X_OK) == 0) {
        setenv("KVX_GNUPLOT", "/usr/bin/gnuplot", 1);
        assert_int_equal(results_report(db, "tests/data/results/fixture.yaml", dir, 0, 0, &written,
                                        &err), 0);
        md = read_all(written);
        assert_non_null(strstr(md, "![median_ms against hit_rate](contention/contention_hit_rate_median_ms_"
                                   "n-16777216.svg)"));
        assert_non_null(strstr(md, "(contention/contention_hit_rate_median_ms_ratio_n-67108864.svg)"));
        static const char *const files[] = {"contention/contention_hit_rate_median_ms_n-16777216.svg",
                                            "contention/contention_hit_rate_median_ms_n-67108864.png",
                                            "contention/contention_hit_rate_median_ms_ratio_n-16777216.png"};
        /* gnuplot read every script: it said nothing (an empty log is removed). */
        char log[700];
        snprintf(log, sizeof log, "%s/contention/contention_hit_rate_median_ms_n-16777216.log", dir);
        assert_int_equal(access(log, F_OK), -1);
        for (int i = 0; i < 3; i++) {
            char p[600];
            snprintf(p, sizeof p, "%s/%s", dir, files[i]);
            size_t n = 0;
            char *data = file_read(p, &n);
            if (!data || n < 1000)
                fail_msg("%s missing or tiny", p);
            free(data);
        }
        free(md);
        free(written);
        unsetenv("KVX_GNUPLOT");
    } else {
        printf("gnuplot not installed: plot files not checked\n");
    }
    store_close(db);
}

/* A report table's baseline: overrides the spec's for that table only. */
static void test_report_table_baseline(void **state)
{
    if (chdir(KVX_SOURCE_DIR))
        fail_msg("chdir %s", KVX_SOURCE_DIR);
    setenv("KVX_GNUPLOT", "", 1);
    Store *db = read_db(tmp_path("a.db"));
    char *written = NULL;
    KvxError err = {0};
    if (results_report(db, "tests/data/results/fixture_table_baseline.yaml", tmp_path("report-tb"), 0, 0,
                       &written, &err))
        fail_msg("report: %s", err.msg);
    char *md = read_all(written);
    assert_non_null(md);
    const char *spec_t = strstr(md, "### Ratio to naive (the spec's baseline)");
    const char *own_t = strstr(md, "### Ratio to warp_cg (the table's own)");
    assert_non_null(spec_t);
    assert_non_null(own_t);
    assert_true(own_t > spec_t);
    /* The spec's baseline where the table names none; the table's own below. */
    assert_non_null(strstr(spec_t, "as a ratio to strategy=naive;"));
    assert_non_null(strstr(spec_t, "| 0.05 | 1x | 0.91x | 0.53x |"));
    assert_non_null(strstr(own_t, "as a ratio to strategy=warp_cg;"));
    assert_non_null(strstr(own_t, "| 0.05 | 1.1x | 1x | 0.582x |"));
    store_close(db);
    free(md), free(written);
}

/* Report plots: x is the first numeric workload axis (as the run stored it),
 * log2 when its values span more than 2 decades; the caption names the axes
 * each median pools.  KVX_GNUPLOT=/bin/true stands in for gnuplot: the
 * script is what is checked. */
/* kvx report --run: one measured run of several, its statuses alone. */
static void test_report_one_run(void **state)
{
    if (chdir(KVX_SOURCE_DIR))
        fail_msg("chdir %s", KVX_SOURCE_DIR);
    setenv("KVX_GNUPLOT", "", 1);
    const char *both = tmp_path("both-runs.db");
    unlink(both);
    char *out, *errs;
    assert_int_equal(run_cmd(cmd_merge, 0, &out, &errs, "merge", both, tmp_path("a.db"),
                             tmp_path("b.db"), NULL), 0);
    free(out), free(errs);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", tmp_path("report-run"));
    Store *db = read_db(both);
    char *written = NULL;
    KvxError err = {0};
    /* Both runs: a section each, and the statuses of both. */
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    char *md = read_all(written);
    assert_non_null(strstr(md, "## Run 1\n"));
    assert_non_null(strstr(md, "## Run 2\n"));
    assert_non_null(strstr(md, "| ok | 66 |"));
    free(md), free(written);
    /* Plots of two runs carry the run id in their names; of one run, not. */
    setenv("KVX_GNUPLOT", "/bin/true", 1);
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    md = read_all(written);
    assert_non_null(strstr(md, "](contention/contention_1_hit_rate_median_ms_n-16777216.svg)"));
    assert_non_null(strstr(md, "](contention/contention_2_hit_rate_median_ms_n-67108864.svg)"));
    free(md), free(written);
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 2, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    md = read_all(written);
    assert_non_null(strstr(md, "](contention/contention_hit_rate_median_ms_n-16777216.svg)"));
    assert_null(strstr(md, "contention_2_hit_rate"));
    free(md), free(written);
    setenv("KVX_GNUPLOT", "", 1);
    /* Run 2 alone: GPU B's environment row, no per-run sections, 33 ok. */
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 2, 0, &written, &err))
        fail_msg("report --run 2: %s", err.msg);
    md = read_all(written);
    assert_non_null(strstr(md, "Fixture GPU B"));
    assert_null(strstr(md, "Fixture GPU A"));
    assert_null(strstr(md, "## Run "));
    assert_non_null(strstr(md, "| ok | 33 |\n| mismatch | 1 |\n| timeout | 1 |\n"));
    free(md), free(written);
    /* A run that is not there is an error that names it. */
    written = NULL;
    assert_int_equal(results_report(db, "tests/data/results/fixture.yaml", dir, 9, 0, &written, &err), -1);
    assert_non_null(strstr(err.msg, "run 9"));
    assert_null(written);
    kvx_error_clear(&err);
    char *argv[] = {"report", "tests/data/results/fixture.yaml", "--db", (char *)both, "--out", dir,
                    "--run", "x", NULL};
    assert_int_not_equal(cmd_report(8, argv), 0);
    store_close(db);

    /* Cases whose sampling ended above the run's noise target are counted
     * (the fixture's target is 0.02); the mismatch and the timeout are not
     * timed cases of this kind unless they have a median. */
    copy_db("a.db", "noisy.db", "UPDATE cases SET noise = 0.3 WHERE id IN (SELECT id FROM cases WHERE"
                                " median_ms IS NOT NULL ORDER BY id LIMIT 2);"
                                "UPDATE cases SET noise = 0.01 WHERE id NOT IN (SELECT id FROM cases"
                                " WHERE median_ms IS NOT NULL ORDER BY id LIMIT 2)");
    db = read_db(tmp_path("noisy.db"));
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    md = read_all(written);
    assert_non_null(strstr(md, "\n2 timed cases stopped sampling with the spread above the run's noise"
                               " target (at most 0.3)"));
    free(md), free(written);
    store_close(db);
    /* A run over two GPUs says so under the environment table. */
    copy_db("a.db", "twogpu.db", "UPDATE cases SET device_uuid = 'GPU-second' WHERE id % 2 = 0");
    db = read_db(tmp_path("twogpu.db"));
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    md = read_all(written);
    assert_non_null(strstr(md, "Run 1 ran on 2 GPUs ("));
    assert_non_null(strstr(md, "GPU-second"));
    free(md), free(written);
    store_close(db);
    unsetenv("KVX_GNUPLOT");
}

static void test_report_plots(void **state)
{
    if (chdir(KVX_SOURCE_DIR))
        fail_msg("chdir %s", KVX_SOURCE_DIR);
    setenv("KVX_GNUPLOT", "/bin/true", 1);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", tmp_path("plots"));
    /* No workload axes stored (the fixture, like older databases): the first
     * numeric axis, hit_rate; n, the other numeric one, a plot each value
     * (sizes are never pooled); the median pools counter. */
    Store *db = read_db(tmp_path("a.db"));
    char *written = NULL;
    KvxError err = {0};
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    store_close(db);
    char *md = read_all(written);
    assert_non_null(strstr(md, "x: hit_rate (the numeric axis with the most values: the database"
                               " does not say which are workload axes); one series per strategy; one plot"
                               " per value of n.\n"));
    assert_non_null(strstr(md, "median_ms against hit_rate, one series per strategy, at n=16777216; bars: each"
                               " cell's stored spread (noise x value).  Each point is the median over counter"
                               " (2 values): it pools cases at different values of that axis.\n"));
    assert_non_null(strstr(md, "median_ms (to the baseline) against hit_rate, one series per strategy, at"
                               " n=67108864;"));
    free(md);
    free(written);
    char gp[700];
    snprintf(gp, sizeof gp, "%s/contention/contention_hit_rate_median_ms_n-16777216.gp", dir);
    char *script = read_all(gp);
    assert_non_null(script);
    assert_null(strstr(script, "set logscale x"));
    /* Each series its line, point and dash type, with bars; the GPU and the
     * panel in the title. */
    assert_non_null(strstr(script, "with yerrorlines lt i+1 pt i%13+1 dt i%5+1 title columnheader(2+3*i)"));
    assert_non_null(strstr(script, "set title 'contention: median_ms on Fixture GPU A (n=16777216)'"));
    free(script);
    snprintf(gp, sizeof gp, "%s/contention/contention_hit_rate_median_ms_n-16777216.py", dir);
    script = read_all(gp);
    assert_non_null(strstr(script, "marker=markers[k % len(markers)], linestyle=styles[k % len(styles)]"));
    assert_non_null(strstr(script, "ax.errorbar("));
    free(script);
    /* The data: a row per hit_rate at n = 2^24 alone, each series its value
     * and its bar's ends: value (1 -+ noise / 2). */
    snprintf(gp, sizeof gp, "%s/contention/contention_hit_rate_median_ms_n-16777216.csv", dir);
    char *data = read_all(gp);
    const char *want = "hit_rate,naive,lo,hi,warp_cg,lo,hi,block_smem,lo,hi\n0.05,";
    assert_int_equal(strncmp(data, want, strlen(want)), 0);
    double x, v, lo, hi;
    assert_int_equal(sscanf(data + strlen(want) - 5, "%lf,%lf,%lf,%lf", &x, &v, &lo, &hi), 4);
    assert_true(lo < v && v < hi);
    assert_true(fabs((hi - v) - (v - lo)) < 1e-12);
    free(data);

    /* n from 2^10 to 2^26 (more than 2 decades), stored as the only workload
     * axis (hit_rate as if the template had consulted it): x = n, log2. */
    char spec[512], cmd[1400];
    snprintf(spec, sizeof spec, "%s/wide.yaml", tmpdir);
    char *yaml = read_all("tests/data/results/fixture.yaml");
    char *at = strstr(yaml, "n: [2^24, 2^26]");
    assert_non_null(at);
    memcpy(at, "n: [2^10, 2^26]", 15);
    /* The report's where: compares n with its values, so 2^24 moves too. */
    for (char *w = yaml; (w = strstr(w, "n == 2^24")); )
        memcpy(w, "n == 2^10", 9);
    assert_int_equal(file_write_atomic(spec, yaml, strlen(yaml)), 0);
    free(yaml);
    snprintf(cmd, sizeof cmd, "cp tests/data/results/fixture.cu '%s/fixture.cu'", tmpdir);
    assert_int_equal(system(cmd), 0);
    copy_db("a.db", "wide.db", "UPDATE cases SET axes = json_set(axes, '$.n', 1024) WHERE"
                               " json_extract(axes, '$.n') = 16777216;"
                               "UPDATE cases SET workload = json_object('n',"
                               " json_extract(axes, '$.n'))");
    db = read_db(tmp_path("wide.db"));
    if (results_report(db, spec, dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    store_close(db);
    md = read_all(written);
    assert_non_null(strstr(md, "x: n (the numeric workload axis with the most values), on a log2 scale (its"
                               " values span more than 2 decades); one series per strategy.\n"));
    assert_non_null(strstr(md, "![median_ms against n](contention/contention_n_median_ms.svg)"));
    check_matplotlib(dir, "contention_n_median_ms", 1);
    assert_non_null(strstr(md, "Each point is the median over counter (2 values), hit_rate"
                               " (3 values): it pools cases at different values of these"
                               " axes.\n"));
    free(md);
    free(written);
    snprintf(gp, sizeof gp, "%s/contention/contention_n_median_ms.gp", dir);
    script = read_all(gp);
    assert_non_null(script);
    assert_non_null(strstr(script, "set logscale x 2\n"));
    assert_non_null(strstr(script, "set xlabel 'n (log2 scale)'"));
    free(script);
    /* The data: one row per n, one column per strategy. */
    snprintf(gp, sizeof gp, "%s/contention/contention_n_median_ms.csv", dir);
    data = read_all(gp);
    assert_non_null(data);
    const char *head = "n,naive,lo,hi,warp_cg,lo,hi,block_smem,lo,hi\n1024,";
    assert_int_equal(strncmp(data, head, strlen(head)), 0);
    free(data);

    /* One value of every other axis in the run: each point is one case. */
    copy_db("wide.db", "single.db", "DELETE FROM cases WHERE json_extract(axes, '$.counter')"
                                    " != 'u64' OR json_extract(axes, '$.hit_rate') != 0.5");
    db = read_db(tmp_path("single.db"));
    if (results_report(db, spec, dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    store_close(db);
    md = read_all(written);
    assert_non_null(strstr(md, "Each point is one case, or the median of the cases at that point.\n"));
    free(md);
    free(written);

    /* A report: plot entry chooses x, series and panels; the spec's plots
     * replace kvx's choice. */
    yaml = read_all("tests/data/results/fixture.yaml");
    at = strstr(yaml, "\nreport:\n");
    assert_non_null(at);
    at += strlen("\nreport:\n");
    StrBuf y;
    sb_init(&y);
    sb_printf(&y, "%.*s  - { plot: hit_rate, series: counter, panels: [n, strategy], title: Counters }\n%s",
              (int)(at - yaml), yaml, at);
    snprintf(spec, sizeof spec, "%s/plots.yaml", tmpdir);
    assert_int_equal(file_write_atomic(spec, y.p, y.len), 0);
    sb_free(&y);
    free(yaml);
    db = read_db(tmp_path("a.db"));
    if (results_report(db, spec, dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    store_close(db);
    md = read_all(written);
    assert_null(strstr(md, "x: hit_rate ("));
    assert_non_null(strstr(md, "median_ms against hit_rate, one series per counter, at n=16777216 strategy=naive;"));
    assert_non_null(strstr(md, "Each point is one case, or the median of the cases at that point.\n"));
    assert_non_null(strstr(md, "contention/contention_hit_rate_median_ms_n-67108864_strategy-block_smem.csv"));
    free(md);
    free(written);
    snprintf(gp, sizeof gp, "%s/contention/contention_hit_rate_median_ms_n-16777216_strategy-naive.csv", dir);
    data = read_all(gp);
    assert_non_null(data);
    assert_int_equal(strncmp(data, "hit_rate,u32,lo,hi,u64,lo,hi\n", 29), 0);
    free(data);
    snprintf(gp, sizeof gp, "%s/contention/contention_hit_rate_median_ms_n-16777216_strategy-naive.gp", dir);
    script = read_all(gp);
    assert_non_null(strstr(script, "set title 'Counters on Fixture GPU A (n=16777216 strategy=naive)'"));
    free(script);
    unsetenv("KVX_GNUPLOT");
}

/* A report's beside: columns come from an imported reference, which is not
 * the measured run the table's section is for (they read "-" before). */
static void test_report_beside(void **state)
{
    if (chdir(KVX_SOURCE_DIR))
        fail_msg("chdir %s", KVX_SOURCE_DIR);
    copy_db("a.db", "beside.db", "SELECT 1");
    const char *csv = tmp_path("lib.csv");
    FILE *f = fopen(csv, "w");
    assert_non_null(f);
    fputs("strategy,counter,hit_rate,n,median_ms\nlib,u64,0.05,16777216,0.03\n"
          "lib,u64,0.5,16777216,0.2\nlib,u64,1,16777216,0.05\n", f);
    fclose(f);
    char *out, *errs;
    int rc = run_cmd(cmd_import, 0, &out, &errs, "import", csv, "--name", "libcall", "--spec",
                     "contention", "--db", tmp_path("beside.db"), NULL);
    if (rc)
        fail_msg("import: %s", errs);
    free(out), free(errs);
    char dir[512], *written = NULL;
    snprintf(dir, sizeof dir, "%s", tmp_path("report_beside"));
    setenv("KVX_GNUPLOT", "", 1);
    Store *db = read_db(tmp_path("beside.db"));
    KvxError err = {0};
    if (results_report(db, "tests/data/results/fixture_beside.yaml", dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    store_close(db);
    char *md = read_all(written);
    assert_non_null(md);
    /* block_smem, the best at each hit rate, stands beside the library's call */
    assert_non_null(strstr(md, "| 0.05 | strategy=block_smem | 29.1 us |"));
    assert_non_null(strstr(md, "| strategy=lib | 30 us | "));
    assert_non_null(strstr(md, "| strategy=lib | 200 us | "));
    assert_null(strstr(md, " | - |  |  |\n"));
    free(md);
    free(written);
    unsetenv("KVX_GNUPLOT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import_round_trip),
        cmocka_unit_test(test_compare_placement),
        cmocka_unit_test(test_import_errors),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_export_json),
        cmocka_unit_test(test_export_every_column),
        cmocka_unit_test(test_import_own_export),
        cmocka_unit_test(test_report),
        cmocka_unit_test(test_report_table_baseline),
        cmocka_unit_test(test_report_one_run),
        cmocka_unit_test(test_report_plots),
        cmocka_unit_test(test_report_beside),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
