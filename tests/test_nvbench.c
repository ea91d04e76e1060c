/* cpu: kvx and nvbench's JSON result shape (report/results_nvbench.c), with
 * runs of tests/data/specs/fake.yaml on the fake device (KVX_FAKE_GPUS):
 * - `kvx export --format nvbench`: one benchmark named by the spec, a state
 *   per case named by its label, with its axis values; the GPU time summary
 *   is the stored mean in seconds, nvbench's noise (stdev/relative) the
 *   stored stdev over the mean, the IQR tag the stored noise; a case that
 *   was not ok is a skipped state whose reason names its status;
 * - `kvx import` of that export gives back the stored medians and noise;
 * - `kvx import` of an nvbench file (tests/data/nvbench/copy.json, written
 *   as nvbench's JSON printer writes): "Elements{io}" as the axis
 *   Elements_io, the median from its tag (the mean where the file has none),
 *   stdev_ms as the relative stdev times the mean, noise from the relative
 *   IQR only (NULL where absent), a skipped state skipped, the GPU named by
 *   the file's device;
 * - nvbench_compare (cuda-bench's nvbench-compare-legacy) reads two kvx
 *   exports, where Python has it (scripts/deps.sh installs it into
 *   .kvx/tools/nvbench; skipped otherwise). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"

#define SPEC KVX_SOURCE_DIR "/tests/data/specs/fake.yaml"
#define NVB_FILE KVX_SOURCE_DIR "/tests/data/nvbench/copy.json"
#define NVB_TOOLS KVX_SOURCE_DIR "/.kvx/tools/nvbench"

/* kvx_child.h's shard and merge helpers are test_run_fake's. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"

static const char *db_a, *db_b, *json_a, *json_b;

/* A summary of the state named by a label, by its tag. */
#define SUMMARY_SQL                                                                                         \
    "SELECT json_extract(m.value, '$.data[0].value') FROM json_each(?1, '$.benchmarks[0].states') s,"       \
    " json_each(s.value, '$.summaries') m WHERE json_extract(s.value, '$.name') = '%s'"                     \
    " AND json_extract(m.value, '$.tag') = '%s'"
/* A column of the imported case at an Elements_io value. */
#define AT_SQL "SELECT %s FROM cases WHERE json_extract(axes, '$.Elements_io') = %s"

/* One value of sql over a JSON text bound as ?1 (SQLite's JSON functions). */
static double json_num(const char *json, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    double v = NAN;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_bind_text(q, 1, json, -1, SQLITE_STATIC);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL)
        v = sqlite3_column_double(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
}

/* Two runs: a with the ok strategies and the planted mismatch, b with the
 * ok ones; each exported. */
static int setup(void **state)
{
    (void)state;
    setenv("KVX_FAKE_GPUS", "1", 1);
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    db_a = tmp_path("a.db"), db_b = tmp_path("b.db"), json_a = tmp_path("a.json"), json_b = tmp_path("b.json");
    const char *log = tmp_path("run.log");
    int rc = kvx(log, "run", SPEC, "--db", db_a, "--where",
                 "strategy == \"base\" || strategy == \"alt\" || strategy == \"mismatch\"", NULL);
    if (rc != 1)    /* 1: a case did not pass */
        dump(log);
    /* The fake's samples of a case are equal (stdev and noise 0): spreads of
     * their own, distinct per case, so that each export mapping shows. */
    sqlite3 *h = NULL;
    rc = sqlite3_open(db_a, &h) != SQLITE_OK ||
         sqlite3_exec(h, "UPDATE cases SET stdev_ms = mean_ms * (0.01 + id * 0.001), noise = 0.02 + id * 0.003,"
                         " median_ms = mean_ms * 0.97"
                         " WHERE status = 'ok'", NULL, NULL, NULL) != SQLITE_OK;
    sqlite3_close(h);
    if (rc)
        return rc;
    rc = kvx(log, "run", SPEC, "--db", db_b, "--where", "strategy == \"base\" || strategy == \"alt\"", NULL);
    if (rc != 0)
        dump(log);
    rc |= kvx(log, "export", "--db", db_a, "--format", "nvbench", "--out", json_a, NULL);
    rc |= kvx(log, "export", "--db", db_b, "--format", "nvbench", "--out", json_b, NULL);
    return rc;
}

static void test_export_shape(void **state)
{
    (void)state;
    char *j = file_read(json_a, NULL);
    assert_non_null(j);
    assert_true(json_num(j, "SELECT json_valid(?1)") == 1);
    assert_true(json_num(j, "SELECT json_extract(?1, '$.meta.version.json.major')") == 1);
    assert_true(json_num(j, "SELECT json_array_length(?1, '$.benchmarks')") == 1);
    assert_true(json_num(j, "SELECT json_extract(?1, '$.benchmarks[0].name') = 'fake'") == 1);
    assert_true(json_num(j, "SELECT json_array_length(?1, '$.benchmarks[0].states')") == 18);
    assert_true(json_num(j, "SELECT json_extract(?1, '$.benchmarks[0].axes[1].type') = 'int64'") == 1);
    /* every ok case's state against its stored row */
    int n;
    char **rows = db_strings(db_a, "SELECT label || '|' || mean_ms || '|' || stdev_ms || '|' || noise || '|'"
                                   " || samples FROM cases WHERE status = 'ok'", &n);
    assert_int_equal(n, 12);
    for (int i = 0; i < n; i++) {
        char label[200];
        double mean, stdev, noise;
        int samples;
        char *bar = strchr(rows[i], '|');
        snprintf(label, sizeof label, "%.*s", (int)(bar - rows[i]), rows[i]);
        assert_int_equal(sscanf(bar, "|%lf|%lf|%lf|%d", &mean, &stdev, &noise, &samples), 4);
        char sql[600];
        snprintf(sql, sizeof sql, SUMMARY_SQL, label, "nv/cold/time/gpu/mean");
        assert_true(fabs(json_num(j, sql) - mean / 1e3) <= 1e-12 * mean);
        snprintf(sql, sizeof sql, SUMMARY_SQL, label, "nv/cold/time/gpu/stdev/relative");
        assert_true(fabs(json_num(j, sql) - stdev / mean) <= 1e-12);
        snprintf(sql, sizeof sql, SUMMARY_SQL, label, "nv/cold/time/gpu/iqr/relative");
        assert_true(fabs(json_num(j, sql) - noise) <= 1e-12);
        snprintf(sql, sizeof sql, SUMMARY_SQL, label, "nv/cold/sample_size");
        assert_true(json_num(j, sql) == samples);
    }
    strings_free(rows, n);
    assert_true(json_num(j, "SELECT count(*) FROM json_each(?1, '$.benchmarks[0].states') s WHERE"
                            " json_extract(s.value, '$.is_skipped') AND json_extract(s.value, '$.skip_reason')"
                            " LIKE 'kvx status mismatch%'") == 6);
    free(j);
}

/* kvx's own nvbench export read back: the same medians and noise. */
static void test_round_trip(void **state)
{
    (void)state;
    const char *db = tmp_path("rt.db"), *log = tmp_path("rt.log");
    int rc = kvx(log, "import", json_a, "--name", "back", "--db", db, NULL);
    if (rc)
        dump(log);
    assert_int_equal(rc, 0);
    assert_true(log_has(log, "imported 18 rows"));
    int n, m;
    char **back = db_strings(db, "SELECT label || ' ' || status || ' ' || CASE WHEN median_ms IS NULL THEN '-'"
                                 " ELSE printf('%.12g %.12g', median_ms, noise) END FROM cases ORDER BY label", &n);
    char **orig = db_strings(db_a, "SELECT label || ' ' || CASE status WHEN 'ok' THEN 'ok' ELSE 'skipped' END"
                                   " || ' ' || CASE status WHEN 'ok' THEN printf('%.12g %.12g', median_ms, noise)"
                                   " ELSE '-' END FROM cases ORDER BY label", &m);
    assert_int_equal(n, m);
    for (int i = 0; i < n; i++)
        assert_string_equal(back[i], orig[i]);
    strings_free(back, n);
    strings_free(orig, m);
}

static void test_import_nvbench(void **state)
{
    (void)state;
    const char *db = tmp_path("nv.db"), *log = tmp_path("nv.log");
    assert_int_equal(kvx(log, "import", NVB_FILE, "--name", "h200", "--db", db, NULL), 0);
    assert_int_equal(db_int(db, "SELECT count(*) FROM runs WHERE gpu_name = 'NVIDIA H200'"), 1);
    char sql[300];
    snprintf(sql, sizeof sql, AT_SQL, "median_ms * 1e6 + mean_ms * 1e3", "1048576");
    assert_true(fabs(db_num(db, sql) - (3500 + 4)) < 1e-6);        /* median and mean, ms */
    snprintf(sql, sizeof sql, AT_SQL, "stdev_ms * 1e6", "1048576");
    assert_true(fabs(db_num(db, sql) - 200) < 1e-6);                /* 0.05 x 4 us */
    snprintf(sql, sizeof sql, AT_SQL, "noise * 1e3", "1048576");
    assert_true(fabs(db_num(db, sql) - 20) < 1e-9);                 /* the relative IQR */
    snprintf(sql, sizeof sql, AT_SQL, "gbs", "1048576");
    assert_true(fabs(db_num(db, sql) - 2097.152) < 1e-9);
    snprintf(sql, sizeof sql, AT_SQL, "median_ms * 1e3", "16777216");
    assert_true(fabs(db_num(db, sql) - 50) < 1e-9);                 /* no median: the mean */
    snprintf(sql, sizeof sql, AT_SQL, "(noise IS NULL) + (stdev_ms IS NULL)", "16777216");
    assert_int_equal(db_int(db, sql), 2);
    snprintf(sql, sizeof sql, AT_SQL, "status = 'skipped'", "268435456");
    assert_int_equal(db_int(db, sql), 1);
    /* not JSON at all: nvbench's reader says where */
    const char *bad = tmp_path("bad.json");
    FILE *f = fopen(bad, "w");
    fputs("{\"benchmarks\": [ {\"states\": [}", f);
    fclose(f);
    assert_int_equal(kvx(log, "import", bad, "--name", "bad", "--db", db, NULL), 2);
    assert_true(log_has(log, "malformed JSON"));
}

/* nvbench_compare from cuda-bench reads two exports side by side. */
static void test_nvbench_compare(void **state)
{
    (void)state;
    const char *pp = getenv("PYTHONPATH");
    char path[2048];
    snprintf(path, sizeof path, "%s%s%s", NVB_TOOLS, pp ? ":" : "", pp ? pp : "");
    setenv("PYTHONPATH", path, 1);
    if (system("python3 -c 'import cuda.bench.scripts.nvbench_compare, tabulate, colorama, jsondiff'"
               " >/dev/null 2>&1") != 0) {
        print_message("no cuda-bench (nvbench_compare) with tabulate, colorama, jsondiff for python3:"
                      " scripts/deps.sh installs them into .kvx/tools/nvbench\n");
        skip();
    }
    const char *out = tmp_path("compare.txt");
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "python3 -m cuda.bench.scripts.nvbench_compare --no-color '%s' '%s' >'%s' 2>&1",
             json_a, json_b, out);
    int rc = system(cmd);
    if (!log_has(out, "Total Matches: 12"))
        dump(out);
    assert_true(WIFEXITED(rc));
    assert_true(log_has(out, "# fake"));
    assert_true(log_has(out, "Total Matches: 12"));
    assert_true(log_has(out, "|    base    |  4096  |   a    |"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_shape),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_import_nvbench),
        cmocka_unit_test(test_nvbench_compare),
    };
    if (child_dir_make("kvx-nvbench") != 0)
        return 1;
    return child_dir_done(cmocka_run_group_tests(tests, setup, NULL));
}
