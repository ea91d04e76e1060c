/* test_results: kvx table / compare / export / import / merge / report over a
 * fixture database built through the store API.
 *
 * The fixture rows are FABRICATED test data in the shape `kvx run` writes
 * (values from a formula, two made-up GPUs "Fixture GPU A/B"); they exercise
 * the tables and must never be presented as measurements.  Outputs are
 * compared byte for byte with files under tests/data/results; KVX_REGOLD=1 rewrites them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/cli.h"
#include "driver/results.h"
#include "driver/store.h"
#include "gen/values.h"

#ifndef KVX_SOURCE_DIR
#define KVX_SOURCE_DIR "."
#endif
#define GOLDEN_DIR KVX_SOURCE_DIR "/tests/data/results/"

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[8][512];
    static int i;
    i = (i + 1) % 8;
    snprintf(buf[i], sizeof buf[i], "%s/%s", tmpdir, name);
    return buf[i];
}

/* ---- fixture ----------------------------------------------------------------- */

static const char *const strategies[] = {"naive", "warp_cg", "block_smem"};
static const char *const counters[] = {"u32", "u64"};
static const double hit_rates[] = {0.05, 0.5, 1};
static const long long sizes[] = {16777216, 67108864};

/* A made-up time (ms) with 4 significant digits, so goldens print stably. */
static double fixture_ms(int s, int c, int h, int n, double gpu_scale)
{
    static const double base[] = {0.04, 0.036, 0.026};
    static const double slope[] = {0.2, 0.19, 0.01};
    double t = (base[s] + slope[s] * hit_rates[h]) * (c ? 1.1 : 1.0) * (n ? 4 : 1) * gpu_scale;
    char buf[32];
    snprintf(buf, sizeof buf, "%.4g", t);
    return strtod(buf, NULL);
}

/* One run of the grid.  skip_missing leaves a hole (warp_cg u32 0.05 2^26);
 * two cases fail (block_smem u32 1 2^26 mismatch, warp_cg u64 0.5 2^24 timeout). */
static void fixture_run(Store *st, const char *gpu, const char *uuid, double scale,
                        const char *started)
{
    KvxError err = {0};
    RunEnv env = {0};
    env.spec_name = "contention";
    env.spec_path = "specs/contention.yaml";
    env.gpu_name = gpu;
    env.gpu_uuid = uuid;
    env.cc = 120;
    env.sm_count = 170;
    env.clock_mhz = 2407;
    env.mem_clock_mhz = 14001;
    env.peak_gbs = 1792;
    env.driver_version = 13000;
    env.nvrtc_version = "13.0";
    env.kvx_version = "0.1.0";
    env.arch = "sm_120";
    env.hostname = "fixture-host";
    env.command = "kvx run specs/contention.yaml";
    env.measure_json = "{\"warmup\":3,\"min_samples\":10,\"noise\":0.02}";
    env.started_at = started;
    env.baseline_json = "{\"strategy\":\"naive\"}";
    env.axes_json = "{\"strategy\":[\"naive\",\"warp_cg\",\"block_smem\"],"
                    "\"counter\":[\"u32\",\"u64\"],\"hit_rate\":[0.05,0.5,1],"
                    "\"n\":[16777216,67108864]}";
    int64_t run;
    assert_int_equal(store_begin_run(st, &env, &run, &err), 0);
    for (int s = 0; s < 3; s++)
        for (int c = 0; c < 2; c++) {
            char hash[65], label[64], code[96], inspect[96];
            snprintf(label, sizeof label, "strategy=%s counter=%s", strategies[s], counters[c]);
            sha256_hex(label, strlen(label), hash);
            snprintf(code, sizeof code, "{\"strategy\":\"%s\",\"counter\":\"%s\"}", strategies[s],
                     counters[c]);
            snprintf(inspect, sizeof inspect, "{\"warp_aggregated\":%s,\"atom\":%d}",
                     s == 0 ? "false" : "true", s == 2 ? 1 : 2);
            VariantRow v = {"contention", hash, label, code, "sm_120", "-O3", 1, NULL,
                            100.0 + 10 * s, 16 + 8 * s + c, 0, 0, s == 2 ? 8 : 0, 0, inspect};
            int64_t vid;
            assert_int_equal(store_put_variant(st, run, &v, &vid, &err), 0);
            for (int h = 0; h < 3; h++)
                for (int n = 0; n < 2; n++) {
                    if (s == 1 && c == 0 && h == 0 && n == 1)
                        continue;   /* the missing cell */
                    char axes[160], key[65], full[160];
                    snprintf(axes, sizeof axes,
                             "{\"strategy\":\"%s\",\"counter\":\"%s\",\"hit_rate\":%g,\"n\":%lld}",
                             strategies[s], counters[c], hit_rates[h], sizes[n]);
                    snprintf(full, sizeof full, "%s hit_rate=%g n=%lld", label, hit_rates[h],
                             sizes[n]);
                    const char *parts[] = {axes, uuid, NULL};
                    store_case_key(parts, key);
                    CaseRow row;
                    store_case_init(&row);
                    row.key = key;
                    row.spec_name = "contention";
                    row.label = full;
                    row.axes_json = axes;
                    row.device_uuid = uuid;
                    row.status = "ok";
                    row.median_ms = fixture_ms(s, c, h, n, scale);
                    row.min_ms = row.median_ms * 0.99;
                    row.mean_ms = row.median_ms * 1.01;
                    row.noise = 0.01;
                    row.samples = 20;
                    row.bytes = 4.0 * (double)sizes[n];
                    row.gbs = row.bytes / (row.median_ms * 1e6);
                    row.pct_peak = 100 * row.gbs / 1792;
                    if (s == 2 && c == 0 && h == 2 && n == 1) {
                        row.status = "mismatch";
                        row.detail = "out[0] = 67108863, expected 67108864";
                    }
                    if (s == 1 && c == 1 && h == 1 && n == 0) {
                        row.status = "timeout";
                        row.median_ms = NAN;
                    }
                    assert_int_equal(store_put_case(st, run, vid, &row, &err), 0);
                }
        }
    assert_int_equal(store_end_run(st, run, 12.5, NULL, &err), 0);
}

static void make_db(const char *path, int second_gpu)
{
    unlink(path);
    KvxError err = {0};
    Store *st = store_open(path, &err);
    assert_non_null(st);
    if (second_gpu)
        fixture_run(st, "Fixture GPU B", "GPU-fixture-b", 0.5, "2025-01-02T00:00:00Z");
    else
        fixture_run(st, "Fixture GPU A", "GPU-fixture-a", 1.0, "2025-01-01T00:00:00Z");
    store_close(st);
}

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kvx_test_results.XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    make_db(tmp_path("a.db"), 0);
    make_db(tmp_path("b.db"), 1);
    return 0;
}

static int teardown(void **state)
{
    if (getenv("KVX_KEEP_TMP")) {   /* for looking at the outputs by hand */
        printf("kept %s\n", tmpdir);
        return 0;
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- helpers ----------------------------------------------------------------- */

static char *read_all(const char *path)
{
    size_t n;
    char *s = file_read(path, &n);
    return s;
}

static void check_golden(const char *name, const char *got)
{
    char path[512];
    snprintf(path, sizeof path, GOLDEN_DIR "%s", name);
    if (getenv("KVX_REGOLD")) {
        assert_int_equal(file_write_atomic(path, got, strlen(got)), 0);
        return;
    }
    char *want = read_all(path);
    if (!want)
        fail_msg("missing golden %s (run with KVX_REGOLD=1)", path);
    if (strcmp(want, got)) {
        fprintf(stderr, "--- want %s\n%s--- got\n%s", path, want, got);
        fail_msg("output differs from %s", name);
    }
    free(want);
}

/* Run cmd_* with argv; *out gets what it wrote (--out), stderr goes to a file
 * whose text *errs receives. */
static int run_cmd(int (*cmd)(int, char **), int with_out, char **out, char **errs, ...)
{
    char *argv[40];
    int argc = 0;
    va_list ap;
    va_start(ap, errs);
    for (const char *a; (a = va_arg(ap, const char *));)
        argv[argc++] = (char *)a;
    va_end(ap);
    const char *outp = tmp_path("cmd.out"), *errp = tmp_path("cmd.err");
    unlink(outp);
    if (with_out) {
        argv[argc++] = "--out";
        argv[argc++] = (char *)outp;
    }
    argv[argc] = NULL;
    fflush(stderr);
    int saved = dup(2);
    FILE *ef = fopen(errp, "w");
    dup2(fileno(ef), 2);
    int rc = cmd(argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(ef);
    *out = read_all(outp);
    if (!*out)
        *out = xstrdup("");
    *errs = read_all(errp);
    return rc;
}

/* Read-write, for the tests that change a fixture (results_open_existing is
 * read-only, as the read verbs are). */
static sqlite3 *open_db(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_busy_timeout(db, 10000);
    return db;
}

/* results_table into a string. */
static int table_text(const char *dbname, TableOpts *o, char **text, KvxError *err)
{
    sqlite3 *db = open_db(tmp_path(dbname));
    size_t len;
    FILE *f = open_memstream(text, &len);
    int rc = results_table(db, o, f, err);
    fclose(f);
    sqlite3_close(db);
    return rc;
}

/* ---- tables ------------------------------------------------------------------ */

static void test_one_axis_each(void **state)
{
    char *out, *errs;
    int rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--spec",
                     "contention", "--rows", "hit_rate", "--cols", "strategy", "--where",
                     "counter == \"u64\" && n == 2^24", NULL);
    assert_int_equal(rc, 0);
    /* The timed-out case shows its status, not a number. */
    assert_non_null(strstr(out, "| 0.5 | 154 us | timeout | 34.1 us |"));
    check_golden("one_axis.md", out);
    free(out), free(errs);
}

/* --best: per row, the best passing case, named by the axes that vary, with
 * the runner-up; a timed-out case is no candidate. */
static void test_best(void **state)
{
    char *out, *errs;
    int rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--spec",
                     "contention", "--rows", "hit_rate", "--best", "--where",
                     "counter == \"u64\" && n == 2^24", NULL);
    if (rc != 0)
        fail_msg("kvx table --best: %s", errs);
    assert_non_null(strstr(out, "best median_ms (lowest) per row, over strategy;"));
    assert_non_null(strstr(out, "| hit_rate | best | median_ms | of | runner-up | its median_ms | margin |"));
    /* at 0.5 warp_cg timed out: two candidates */
    assert_non_null(strstr(out, "| 0.5 | strategy=block_smem | 34.1 us | 2 | strategy=naive | 154 us | 4.5"));
    free(out), free(errs);
    /* Bandwidth: highest is best; the same winner. */
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--spec", "contention",
                 "--rows", "hit_rate", "--best", "--value", "gbs", "--format", "csv", "--where",
                 "counter == \"u64\" && n == 2^24", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "hit_rate,best,gbs,candidates,runner_up,runner_up_gbs,margin\n"));
    assert_non_null(strstr(out, "\n0.5,strategy=block_smem,"));
    free(out), free(errs);
    /* A row with one candidate has no runner-up, whatever the row before had
     * (its label was left over from that row). */
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--spec", "contention",
                 "--rows", "hit_rate", "--best", "--format", "csv", "--where",
                 "counter == \"u64\" && n == 2^24 && (strategy != \"naive\" || hit_rate != 0.5)", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "\n0.05,strategy=block_smem,0.02915,3,strategy=warp_cg,"));
    assert_non_null(strstr(out, "\n0.5,strategy=block_smem,0.0341,1,,,\n"));
    free(out), free(errs);
    /* --best is a per-row choice: no --cols. */
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--spec", "contention",
                 "--rows", "hit_rate", "--cols", "n", "--best", NULL);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(errs, "--best takes --rows only"));
    free(out), free(errs);
}

/* --best --beside: the cases at the beside values leave the candidates and
 * stand beside the best with how many times better the best is. */
static void test_best_beside(void **state)
{
    char *out, *errs;
    int rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--spec",
                     "contention", "--rows", "hit_rate", "--best", "--beside", "strategy=block_smem",
                     "--where", "counter == \"u64\" && n == 2^24", NULL);
    if (rc != 0)
        fail_msg("kvx table --best --beside: %s", errs);
    assert_non_null(strstr(out, "| margin | beside | its median_ms | best vs beside |"));
    /* at 0.5 block_smem (34.1 us) was the best; beside, naive (154 us) is
     * the only candidate left, 0.221x of it */
    assert_non_null(strstr(out, "| 0.5 | strategy=naive | 154 us | 1 | - |  |  | strategy=block_smem | 34.1 us | 0.221x |"));
    free(out), free(errs);
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--spec", "contention",
                 "--rows", "hit_rate", "--best", "--beside", "strategy=nosuch", "--where",
                 "counter == \"u64\" && n == 2^24", NULL);
    assert_int_equal(rc, 0);     /* not imported: the columns say "-" */
    assert_non_null(strstr(out, "| 0.5 | strategy=block_smem | 34.1 us | 2 | strategy=naive | 154 us | 4.5"));
    assert_non_null(strstr(out, " | - |  |  |\n"));
    free(out), free(errs);
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--spec", "contention",
                 "--rows", "hit_rate", "--cols", "strategy", "--beside", "strategy=naive", NULL);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(errs, "--beside goes with --best"));
    free(out), free(errs);
}

static void test_two_axes_each(void **state)
{
    const char *rows[] = {"n", "hit_rate"}, *cols[] = {"counter", "strategy"};
    TableOpts o = {.rows = rows, .nrows = 2, .cols = cols, .ncols = 2};
    KvxError err = {0};
    char *text;
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    /* Numeric axis values sort numerically, the others in declared order. */
    assert_true(strstr(text, "| 16777216 | 0.05 |") < strstr(text, "| 67108864 | 0.05 |"));
    assert_non_null(strstr(text, "| n | hit_rate | u32/naive | u32/warp_cg | u32/block_smem |"));
    check_golden("two_axes.md", text);
    free(text);
}

static void test_missing_and_failed_cells(void **state)
{
    const char *rows[] = {"hit_rate"}, *cols[] = {"strategy"};
    TableOpts o = {.rows = rows, .nrows = 1, .cols = cols, .ncols = 1,
                   .where = "counter == \"u32\" && n == 67108864"};
    KvxError err = {0};
    char *text;
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_non_null(strstr(text, "| 0.05 | 200 us | - | 106 us |"));   /* hole */
    assert_non_null(strstr(text, "| 1 | 960 us | 904 us | mismatch |"));
    check_golden("missing_failed.md", text);
    free(text);
}

static void test_multi_row_cells(void **state)
{
    /* counter and n are not shown: each cell is the median of up to 4 cases. */
    const char *rows[] = {"hit_rate"}, *cols[] = {"strategy"};
    TableOpts o = {.rows = rows, .nrows = 1, .cols = cols, .ncols = 1};
    KvxError err = {0};
    char *text;
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_non_null(strstr(text, " (4) |"));
    assert_non_null(strstr(text, " (3) !"));   /* 3 passed, 1 failed */
    assert_non_null(strstr(text, "(n): the median of n cases"));
    check_golden("multi_row.md", text);
    free(text);
}

static void test_ratio(void **state)
{
    const char *rows[] = {"hit_rate"}, *cols[] = {"strategy"};
    TableOpts o = {.rows = rows, .nrows = 1, .cols = cols, .ncols = 1, .ratio = 1,
                   .where = "counter == \"u32\" && n == 16777216", .format = RESULTS_CSV};
    KvxError err = {0};
    char *text;
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    /* The baseline column divides by itself; block_smem at 1: 0.036 / 0.24. */
    assert_string_equal(text, "hit_rate,naive,warp_cg,block_smem\n"
                              "0.05,1,0.91,0.53\n"
                              "0.5,1,0.935714285714286,0.221428571428571\n"
                              "1,1,0.941666666666667,0.15\n");
    free(text);
    o.format = RESULTS_MD;
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_non_null(strstr(text, "| 1 | 1x | 0.942x | 0.15x |"));
    check_golden("ratio.md", text);
    free(text);
    /* An explicit baseline replaces the stored one. */
    o.baseline = "strategy=block_smem";
    o.format = RESULTS_CSV;
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_non_null(strstr(text, "1,6.66666666666667,6.27777777777778,1\n"));
    free(text);
    /* A failed baseline case leaves its ratios undefined, and says why. */
    o.baseline = "strategy=warp_cg";
    o.format = RESULTS_MD;
    o.where = "counter == \"u64\" && n == 16777216";
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_non_null(strstr(text, "| 0.5 | baseline timeout | timeout | baseline timeout |"));
    free(text);
}

static void test_formats(void **state)
{
    const char *rows[] = {"hit_rate"}, *cols[] = {"strategy"};
    static const struct { ResultsFormat f; const char *golden; } fmts[] = {
        {RESULTS_MD, "formats.md"}, {RESULTS_CSV, "formats.csv"}, {RESULTS_JSON, "formats.json"}};
    for (int i = 0; i < 3; i++) {
        TableOpts o = {.rows = rows, .nrows = 1, .cols = cols, .ncols = 1, .value = "gbs",
                       .where = "counter == \"u64\" && n == 2^24", .format = fmts[i].f};
        KvxError err = {0};
        char *text;
        assert_int_equal(table_text("a.db", &o, &text, &err), 0);
        check_golden(fmts[i].golden, text);
        free(text);
    }
}

static void test_other_values(void **state)
{
    const char *rows[] = {"strategy"}, *cols[] = {"counter"};
    static const struct { const char *value, *want; } cases[] = {
        {"regs", "| block_smem | 32 (6) | 33 (6) |"},
        {"inspect.warp_aggregated", "| naive | 0 (6) | 0 (6) |"},
        {"inspect.atom", "| warp_cg | 2 (5) | 2 (6) |"},
        {"compile_ms", "| warp_cg | 110 ms (5) | 110 ms (6) |"},
        {"noise", "| naive | 1% (6) | 1% (6) |"},
        {"samples", "| naive | 20 (6) | 20 (6) |"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TableOpts o = {.rows = rows, .nrows = 1, .cols = cols, .ncols = 1,
                       .value = cases[i].value};
        KvxError err = {0};
        char *text;
        assert_int_equal(table_text("a.db", &o, &text, &err), 0);
        if (!strstr(text, cases[i].want))
            fail_msg("--value %s: no '%s' in\n%s", cases[i].value, cases[i].want, text);
        free(text);
    }
}

/* Every value name a spec's report may give (gen/values.h) has a column in the
 * driver: it tabulates, and the caption says what it is. */
static void test_every_value_tabulates(void **state)
{
    const char *rows[] = {"strategy"}, *cols[] = {"counter"};
    for (int i = 0; i < SPEC_VALUE_COUNT; i++) {
        TableOpts o = {.rows = rows, .nrows = 1, .cols = cols, .ncols = 1,
                       .value = spec_value_names[i]};
        KvxError err = {0};
        char *text;
        if (table_text("a.db", &o, &text, &err))
            fail_msg("--value %s: %s", spec_value_names[i], err.msg);
        char caption[256];
        snprintf(caption, sizeof caption, "%s (%s)", spec_value_names[i], spec_value_docs[i]);
        if (!strstr(text, caption))
            fail_msg("--value %s: no caption '%s' in\n%s", spec_value_names[i], caption, text);
        free(text);
    }
    assert_null(spec_value_names[SPEC_VALUE_COUNT]);
}

/* docs/spec.md's table of report values has a row "| `NAME` | ..." for every
 * value name: a value added to gen/values.h is documented with it.  ctest runs
 * in the source directory. */
static void test_every_value_documented(void **state)
{
    char *doc = read_all("docs/spec.md");
    assert_non_null(doc);
    for (int i = 0; i < SPEC_VALUE_COUNT; i++) {
        char row[128];
        snprintf(row, sizeof row, "\n| `%s` |", spec_value_names[i]);
        if (!strstr(doc, row))
            fail_msg("docs/spec.md has no row '%s' in its table of report values", row + 1);
    }
    free(doc);
}

static void test_filters(void **state)
{
    const char *rows[] = {"hit_rate"}, *cols[] = {"strategy"};
    TableOpts o = {.rows = rows, .nrows = 1, .cols = cols, .ncols = 1, .format = RESULTS_CSV,
                   .where = "hit_rate >= 0.5 && strategy != 'naive' && !(n > 16M) &&"
                            " counter == \"u32\" && status == \"ok\""};
    KvxError err = {0};
    char *text;
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_string_equal(text, "hit_rate,warp_cg,block_smem\n0.5,0.131,0.031\n1,0.226,0.036\n");
    free(text);
    o.where = "median_ms > 0.5 || strategy == \"block_smem\" && hit_rate == 0.05";
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_string_equal(text, "hit_rate,naive,warp_cg,block_smem\n"
                              "0.05,,,0.067575\n"
                              "0.5,0.588,0.5502,\n"
                              "1,1.008,0.9492,\n");
    free(text);
}

/* Every way of smuggling SQL in must fail cleanly and leave the data intact. */
static void test_injection(void **state)
{
    static const struct { const char *opt, *arg, *msg; } attacks[] = {
        {"--where", "strategy == \"x') OR 1=1 --\"", "no stored case of spec 'contention' matches"},
        {"--where", "strategy == 'naive\" OR \"1\"=\"1'", "no stored case"},
        {"--where", "n == 1; DROP TABLE cases", "--where:1:"},
        {"--where", "counter == \"u32\" || 1", ""},   /* legal: a number is true */
        {"--where", "max(n, 1) > 0", "a function call (max) is not allowed"},
        {"--where", "n + 1 > 2", "the operator '+' is not allowed"},
        {"--where", "hit_rate == \"0.5\"", "compares a number with a string"},
        {"--where", "cases == 1", "unknown name 'cases'"},
        {"--where", "status == \"mismach\"", "unknown status \"mismach\""},
        {"--rows", "strategy') OR 1=1 --", "unknown axis 'strategy') OR 1=1 --' in --rows"
                                           " (stored axes: strategy, counter, hit_rate, n)"},
        {"--cols", "n\",\"x", "unknown axis 'n\"' in --cols"},
        {"--value", "median_ms FROM cases; DROP TABLE cases; --", "unknown value"},
        {"--value", "inspect.x') OR 1=1 --", "bad inspect fact"},
        {"--baseline", "strategy=naive' OR '1'='1", "no stored case has that value"},
        {"--spec", "contention' OR 1=1 --", "kvx table: --spec is 'contention' OR 1=1 --' (expected a spec's name"},
    };
    for (size_t i = 0; i < sizeof attacks / sizeof attacks[0]; i++) {
        char *out, *errs;
        int rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"),
                         attacks[i].opt, attacks[i].arg, NULL);
        if (!attacks[i].msg[0]) {
            assert_int_equal(rc, 0);
        } else {
            if (rc != 2 || !strstr(errs, attacks[i].msg))
                fail_msg("%s %s: rc %d, stderr: %s", attacks[i].opt, attacks[i].arg, rc, errs);
            assert_string_equal(out, "");   /* nothing half-written */
        }
        free(out), free(errs);
    }
    /* kvx table refuses a --spec that is not a spec's name before any SQL;
     * the store still binds the name it is given, whatever it holds. */
    TableOpts o = {.sel.spec = "contention' OR 1=1 --"};
    char *text = NULL;
    KvxError err = {0};
    assert_int_equal(table_text("a.db", &o, &text, &err), -1);
    assert_non_null(strstr(err.msg, "no cases of spec 'contention' OR 1=1 --'"));
    kvx_error_clear(&err);
    free(text);
    sqlite3 *db = open_db(tmp_path("a.db"));
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM cases", -1, &q, NULL), 0);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), 3 * 2 * 3 * 2 - 1);
    sqlite3_finalize(q);
    sqlite3_close(db);
}

static void test_bad_usage(void **state)
{
    char *out, *errs;
    assert_int_equal(run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("none.db"), NULL),
                     2);
    assert_non_null(strstr(errs, "no results database at"));
    assert_int_equal(access(tmp_path("none.db"), F_OK), -1);   /* not created */
    free(out), free(errs);
    assert_int_equal(run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"),
                             "--format", "xml", NULL), 2);
    assert_non_null(strstr(errs, "kvx table: --format is 'xml' (expected md, csv or json)"));
    free(out), free(errs);
    assert_int_equal(run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--rows",
                             "n", "--cols", "n", NULL), 2);
    assert_non_null(strstr(errs, "in both --rows and --cols"));
    free(out), free(errs);
}

/* ---- compare ----------------------------------------------------------------- */

static void test_compare(void **state)
{
    char *out, *errs;
    char b_sel[600];
    snprintf(b_sel, sizeof b_sel, "%s:run=1", tmp_path("b.db"));
    int rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("a.db"), b_sel, "--rows",
                     "hit_rate", "--cols", "strategy", "--where",
                     "counter == \"u32\" && n == 16777216", NULL);
    if (rc)
        fail_msg("compare: %s", errs);
    /* GPU B runs the fixture at half the time: B/A = 0.5, well past 1% noise. */
    assert_non_null(strstr(out, "| 0.05 | naive | 50 us | 25 us | 0.5x | * |"));
    /* Paths differ per machine: compare from the first table row on. */
    check_golden("compare.md", strstr(out, "\n\n") + 2);
    free(out), free(errs);
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("a.db"), tmp_path("a.db"),
                 "--format", "csv", "--rows", "hit_rate", "--cols", "strategy", "--where",
                 "counter == \"u64\" && n == 16777216", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "0.05,naive,0.055,0.055,1,\n"));
    assert_non_null(strstr(out, "0.5,warp_cg,timeout,timeout,,\n"));
    free(out), free(errs);
}


static int count(const char *dbpath, const char *sql);

/* A copy of tmp/src at tmp/dst with sql applied (a variant of the fixture). */
static void copy_db(const char *src, const char *dst, const char *sql)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", tmp_path(src), tmp_path(dst));
    assert_int_equal(system(cmd), 0);
    sqlite3 *db = open_db(tmp_path(dst));
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

/* ---- --failed-values --------------------------------------------------------- */

static void test_failed_values(void **state)
{
    /* The mismatched case (block_smem u32 1 2^26) was timed: 144 us. */
    char *out, *errs;
    int rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--rows",
                     "hit_rate", "--cols", "strategy", "--where",
                     "counter == \"u32\" && n == 67108864", "--failed-values", NULL);
    if (rc)
        fail_msg("table: %s", errs);
    assert_non_null(strstr(out, "| 1 | 960 us | 904 us | 144 us (mismatch) |"));
    assert_non_null(strstr(out, "| 0.05 | 200 us | - | 106 us |"));   /* a hole stays one */
    assert_non_null(strstr(out, "(status): no case at this cell passed"));
    free(out), free(errs);

    /* A timed-out case has no measurement: its status, as without the option. */
    const char *rows[] = {"hit_rate"}, *cols[] = {"strategy"};
    TableOpts o = {.rows = rows, .nrows = 1, .cols = cols, .ncols = 1, .failed_values = 1,
                   .where = "counter == \"u64\" && n == 2^24"};
    KvxError err = {0};
    char *text;
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_non_null(strstr(text, "| 0.5 | 154 us | timeout | 34.1 us |"));
    assert_null(strstr(text, "(status)"));
    free(text);

    /* CSV: a status column after each value column, so no failed number is bare. */
    o.where = "counter == \"u32\" && n == 67108864";
    o.format = RESULTS_CSV;
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_string_equal(text, "hit_rate,naive,naive.status,warp_cg,warp_cg.status,block_smem,"
                              "block_smem.status\n"
                              "0.05,0.2,ok,,,0.106,ok\n"
                              "0.5,0.56,ok,0.524,ok,0.124,ok\n"
                              "1,0.96,ok,0.904,ok,0.144,mismatch\n");
    free(text);
    /* JSON: the value, with the status that says what it is. */
    o.format = RESULTS_JSON;
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_non_null(strstr(text, "{\"hit_rate\": 1, \"strategy\": \"block_smem\", \"value\":"
                                 " 0.144, \"n\": 1, \"failed\": 0, \"status\": \"mismatch\"}"));
    assert_non_null(strstr(text, "\"strategy\": \"naive\", \"value\": 0.96, \"n\": 1,"
                                 " \"failed\": 0, \"status\": \"ok\"}"));
    free(text);
    /* Without the option JSON keeps saying the case failed, with no value. */
    o.failed_values = 0;
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_non_null(strstr(text, "\"strategy\": \"block_smem\", \"value\": null, \"n\": 0,"
                                 " \"failed\": 1, \"status\": \"mismatch\"}"));
    free(text);

    /* Where a case passed, the cell is over the passing ones, as without it. */
    TableOpts all = {.rows = rows, .nrows = 1, .cols = cols, .ncols = 1, .failed_values = 1};
    assert_int_equal(table_text("a.db", &all, &text, &err), 0);
    assert_non_null(strstr(text, " (3) !"));
    assert_null(strstr(text, "(mismatch)"));
    free(text);

    /* A ratio of a mismatched case to its (passing) baseline: 0.144 / 0.96. */
    o.failed_values = 1;
    o.format = RESULTS_MD;
    o.ratio = 1;
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_non_null(strstr(text, "| 1 | 1x | 0.942x | 0.15x (mismatch) |"));
    free(text);
    /* A mismatched baseline gives no ratio, measured or not. */
    o.baseline = "strategy=block_smem";
    assert_int_equal(table_text("a.db", &o, &text, &err), 0);
    assert_non_null(strstr(text, "| 1 | baseline mismatch | baseline mismatch | baseline"
                                 " mismatch |"));
    free(text);
}

/* ---- let: names in kvx table --where ----------------------------------------- */

static void test_where_lets(void **state)
{
    const char *spec = KVX_SOURCE_DIR "/tests/data/results/fixture.yaml";
    char *out, *errs;
    /* --spec-file lends the spec's lets: staged is strategy == "block_smem". */
    int rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--rows",
                     "hit_rate", "--cols", "strategy", "--where", "!staged && counter == 'u32'"
                     " && n == 2^24", "--spec-file", spec, "--format", "csv", NULL);
    if (rc)
        fail_msg("table: %s", errs);
    assert_string_equal(out, "hit_rate,naive,warp_cg\n0.05,0.05,0.0455\n0.5,0.14,0.131\n"
                             "1,0.24,0.226\n");
    free(out), free(errs);
    /* A let is held to --where's rules: round() is a function call. */
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--where",
                 "thresh > 100", "--spec-file", spec, NULL);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(errs, "a function call (round) is not allowed"));
    free(out), free(errs);
    /* A let whose text would be SQL stays a bound string.  It is ordered, not
     * equated, with the axis (an == with a value strategy lacks is refused at
     * load): every strategy sorts before "x", so no case matches, where the
     * pasted text's OR 1=1 would match all. */
    char evil[512];
    snprintf(evil, sizeof evil, "%s/evil.yaml", tmpdir);
    char *yaml = read_all(spec);
    assert_non_null(yaml);
    char *at = strstr(yaml, "staged: strategy == \"block_smem\"");
    assert_non_null(at);
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "%.*sstaged: strategy > \"x') OR 1=1 --\"%s", (int)(at - yaml), yaml,
              at + strlen("staged: strategy == \"block_smem\""));
    assert_int_equal(file_write_atomic(evil, b.p, b.len), 0);
    sb_free(&b);
    free(yaml);
    char cu[600], cmd[1400];
    snprintf(cu, sizeof cu, "%s/fixture.cu", tmpdir);
    snprintf(cmd, sizeof cmd, "cp '%s/tests/data/results/fixture.cu' '%s'", KVX_SOURCE_DIR, cu);
    assert_int_equal(system(cmd), 0);
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--where",
                 "staged", "--spec-file", evil, NULL);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(errs, "no stored case of spec 'contention' matches"));
    free(out), free(errs);
    assert_int_equal(count(tmp_path("a.db"), "SELECT count(*) FROM cases"), 35);

    /* Without --spec-file: the spec path the run stored, when it still loads. */
    char sql[700];
    snprintf(sql, sizeof sql, "UPDATE runs SET spec_path = '%s'", spec);
    copy_db("a.db", "lets.db", sql);
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("lets.db"), "--rows",
                 "hit_rate", "--cols", "strategy", "--where", "staged && n == 2^24 &&"
                 " counter == 'u64'", "--format", "csv", NULL);
    if (rc)
        fail_msg("table: %s", errs);
    assert_string_equal(out, "hit_rate,block_smem\n0.05,0.02915\n0.5,0.0341\n1,0.0396\n");
    free(out), free(errs);
    /* A stored path that is gone: the let is unknown, and the message says how. */
    copy_db("a.db", "nolets.db", "UPDATE runs SET spec_path = '/nonexistent/contention.yaml'");
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("nolets.db"), "--where",
                 "staged", NULL);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(errs, "unknown name 'staged'"));
    assert_non_null(strstr(errs, "let: names need --spec-file"));
    free(out), free(errs);
    /* A --spec-file that does not load is an error, not a silent table. */
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--where",
                 "staged", "--spec-file", tmp_path("missing.yaml"), NULL);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(errs, "missing.yaml"));
    assert_string_equal(out, "");
    free(out), free(errs);
}

/* ---- compare: borrowed baseline, ratio noise, --min-diff ---------------------- */

static void test_compare_ratio_reference(void **state)
{
    char db[512], csv[512], sel[600];
    snprintf(db, sizeof db, "%s", tmp_path("ref2.db"));
    unlink(db);
    snprintf(csv, sizeof csv, "%s/results/reference/rtx5090_contention.csv", KVX_SOURCE_DIR);
    char *out, *errs;
    int rc = run_cmd(cmd_import, 0, &out, &errs, "import", csv, "--name", "rtx5090", "--db", db,
                     "--spec", "contention", NULL);
    if (rc)
        fail_msg("import: %s", errs);
    free(out), free(errs);
    snprintf(sel, sizeof sel, "%s:ref=rtx5090", db);
    /* The reference stores no baseline: it takes A's, strategy=naive. */
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("a.db"), sel, "--rows",
                 "hit_rate", "--cols", "strategy", "--where-a", "n == 2^24 && counter == 'u64'",
                 "--ratio", NULL);
    if (rc)
        fail_msg("compare: %s", errs);
    assert_non_null(strstr(out, "B stores no baseline and takes A's, strategy=naive"));
    /* 0.05005 / 0.055 against 0.0358 / 0.0379; the reference has no noise: '?'. */
    assert_non_null(strstr(out, "| 0.05 | warp_cg | 0.91x | 0.945x | 1.04x | ? |"));
    assert_non_null(strstr(out, "| 0.5 | block_smem | 0.221x | 0.233x | 1.05x | ? |"));
    /* The baseline's own 1x is exact on both sides: nothing to mark. */
    assert_non_null(strstr(out, "| 0.05 | naive | 1x | 1x | 1x |  |"));
    assert_null(strstr(out, "| * |"));
    assert_non_null(strstr(out, "?: a side did not record the noise of its ratio"));
    free(out), free(errs);
    /* --speedup too; and the reference as A has nothing to borrow from. */
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("a.db"), sel, "--where-a",
                 "n == 2^24 && counter == 'u64'", "--rows", "hit_rate", "--cols", "strategy",
                 "--speedup", "--format", "json", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "\"b_baseline_from_a\": true"));
    free(out), free(errs);
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", sel, tmp_path("a.db"), "--where-b",
                 "n == 2^24 && counter == 'u64'", "--ratio", NULL);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(errs, "no baseline stored"));
    free(out), free(errs);
    /* An explicit --baseline is used on both sides, borrowed from nobody. */
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("a.db"), sel, "--where-a",
                 "n == 2^24 && counter == 'u64'", "--rows", "hit_rate", "--cols", "strategy",
                 "--baseline", "strategy=block_smem", NULL);
    assert_int_equal(rc, 0);
    assert_null(strstr(out, "takes A's"));
    assert_non_null(strstr(out, "| 0.05 | naive | 1.89x | 1.44x | 0.764x | ? |"));
    assert_non_null(strstr(out, "| 0.05 | block_smem | 1x | 1x | 1x |  |"));
    free(out), free(errs);
}

static void test_compare_noise(void **state)
{
    /* B: warp_cg 1.2% slower, block_smem 3% slower; every case 1% noise. */
    copy_db("a.db", "slow.db", "UPDATE cases SET median_ms = median_ms * 1.012 WHERE"
                               " json_extract(axes, '$.strategy') = 'warp_cg';"
                               "UPDATE cases SET median_ms = median_ms * 1.03 WHERE"
                               " json_extract(axes, '$.strategy') = 'block_smem'");
    char *out, *errs;
    /* Times: 1.2% is past 1% noise but under the 2% default --min-diff. */
    int rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("a.db"),
                     tmp_path("slow.db"), "--rows", "hit_rate", "--cols", "strategy", "--where",
                     "counter == 'u32' && n == 2^24", "--format", "csv", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "0.05,warp_cg,0.0455,0.046046,1.012,\n"));
    assert_non_null(strstr(out, "0.05,block_smem,0.0265,0.027295,1.03,*\n"));
    free(out), free(errs);
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("a.db"), tmp_path("slow.db"),
                 "--rows", "hit_rate", "--cols", "strategy", "--where",
                 "counter == 'u32' && n == 2^24", "--format", "csv", "--min-diff", "0", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "0.05,warp_cg,0.0455,0.046046,1.012,*\n"));
    free(out), free(errs);
    /* Ratios: each side's noise is its case's and its baseline's (1.41%), so a
     * 1.2% step is noise and 3% is not; the baseline's own 1x is exact. */
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("a.db"), tmp_path("slow.db"),
                 "--rows", "hit_rate", "--cols", "strategy", "--where",
                 "counter == 'u32' && n == 2^24", "--format", "csv", "--min-diff", "0", "--ratio",
                 NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "0.05,naive,1,1,1,\n"));
    assert_non_null(strstr(out, "0.05,warp_cg,0.91,0.92092,1.012,\n"));
    assert_non_null(strstr(out, "0.05,block_smem,0.53,0.5459,1.03,*\n"));
    free(out), free(errs);

    /* Near-noiseless cases 0.2% apart: flagged only when asked to. */
    copy_db("a.db", "quiet.db", "UPDATE cases SET noise = 0.0005");
    copy_db("quiet.db", "quiet2.db", "UPDATE cases SET median_ms = median_ms * 1.002");
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("quiet.db"),
                 tmp_path("quiet2.db"), "--rows", "hit_rate", "--cols", "strategy", "--where",
                 "counter == 'u32' && n == 2^24", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "marked from a 2% difference"));
    assert_null(strstr(out, "| * |"));
    free(out), free(errs);
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("quiet.db"),
                 tmp_path("quiet2.db"), "--rows", "hit_rate", "--cols", "strategy", "--where",
                 "counter == 'u32' && n == 2^24", "--min-diff", "0", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "| 0.05 | naive | 50 us | 50.1 us | 1x | * |"));
    free(out), free(errs);
    rc = run_cmd(cmd_compare, 1, &out, &errs, "compare", tmp_path("quiet.db"),
                 tmp_path("quiet2.db"), "--min-diff", "-1", NULL);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(errs, "kvx compare: --min-diff is '-1' (expected a relative difference"));
    free(out), free(errs);
}

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

static void test_import_errors(void **state)
{
    static const struct { const char *csv, *msg; } bad[] = {
        {"strategy,median_ms,hit_rate\nnaive,1,0.5\n", ":1:20: 'hit_rate' follows the value"},
        {"strategy,median_ms\nnaive,fast\n", ":2:7: median_ms: 'fast' is not a number"},
        {"strategy,median_ms\nnaive,1\nnaive,2\n", ":3:1: repeats the axis values of line 2"},
        {"strategy,median_ms\nnaive\n", ":2:1: 1 fields, the header has 2"},
        {"my axis,median_ms\nx,1\n", "axis name 'my axis' is not an identifier"},
        {"strategy,status\nnaive,broken\n", "unknown status 'broken'"},
        {"strategy\nnaive\n", "no value column"},
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

static int count(const char *dbpath, const char *sql)
{
    sqlite3 *db = open_db(dbpath);
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), 0);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    int n = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return n;
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
    assert_int_equal(results_merge(st, tmp_path("a.db"), &s, &err), 0);
    assert_int_equal(s.runs_added, 1);
    assert_int_equal(s.cases_added, 35);
    assert_int_equal(results_merge(st, tmp_path("b.db"), &s, &err), 0);
    assert_int_equal(s.runs_added, 1);      /* another GPU stays apart */
    assert_int_equal(s.variants_added, 6);
    assert_int_equal(s.cases_added, 35);
    /* Merging again changes nothing. */
    assert_int_equal(results_merge(st, tmp_path("a.db"), &s, &err), 0);
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
    assert_int_equal(results_merge(st, tmp_path("junk.db"), &s, &err), -1);
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
    sqlite3 *db = open_db(tmp_path("a.db"));
    char *written = NULL;
    KvxError err = {0};
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    char *md = read_all(written);
    assert_non_null(md);
    assert_non_null(strstr(md, "| ok | 33 |\n| mismatch | 1 |\n| timeout | 1 |\n"));
    assert_non_null(strstr(md, "None: gnuplot is not installed"));
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
        assert_non_null(strstr(md, "![Median time against hit_rate](contention/contention_hit_rate_median_ms.svg)"));
        assert_non_null(strstr(md, "(contention/contention_hit_rate_ratio.svg)"));
        static const char *const files[] = {"contention/contention_hit_rate_median_ms.svg",
                                            "contention/contention_hit_rate_median_ms.png",
                                            "contention/contention_hit_rate_ratio.png"};
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
    sqlite3_close(db);
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
    sqlite3 *db = open_db(both);
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
    assert_non_null(strstr(md, "](contention/contention_1_hit_rate_median_ms.svg)"));
    assert_non_null(strstr(md, "](contention/contention_2_hit_rate_median_ms.svg)"));
    free(md), free(written);
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 2, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    md = read_all(written);
    assert_non_null(strstr(md, "](contention/contention_hit_rate_median_ms.svg)"));
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
    sqlite3_close(db);

    /* Cases whose sampling ended above the run's noise target are counted
     * (the fixture's target is 0.02); the mismatch and the timeout are not
     * timed cases of this kind unless they have a median. */
    copy_db("a.db", "noisy.db", "UPDATE cases SET noise = 0.3 WHERE id IN (SELECT id FROM cases WHERE"
                                " median_ms IS NOT NULL ORDER BY id LIMIT 2);"
                                "UPDATE cases SET noise = 0.01 WHERE id NOT IN (SELECT id FROM cases"
                                " WHERE median_ms IS NOT NULL ORDER BY id LIMIT 2)");
    db = open_db(tmp_path("noisy.db"));
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    md = read_all(written);
    assert_non_null(strstr(md, "\n2 timed cases stopped sampling with the spread above the run's noise"
                               " target (at most 0.3)"));
    free(md), free(written);
    sqlite3_close(db);
    /* A run over two GPUs says so under the environment table. */
    copy_db("a.db", "twogpu.db", "UPDATE cases SET device_uuid = 'GPU-second' WHERE id % 2 = 0");
    db = open_db(tmp_path("twogpu.db"));
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    md = read_all(written);
    assert_non_null(strstr(md, "Run 1 ran on 2 GPUs ("));
    assert_non_null(strstr(md, "GPU-second"));
    free(md), free(written);
    sqlite3_close(db);
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
     * numeric axis, hit_rate; the median pools counter and n. */
    sqlite3 *db = open_db(tmp_path("a.db"));
    char *written = NULL;
    KvxError err = {0};
    if (results_report(db, "tests/data/results/fixture.yaml", dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    sqlite3_close(db);
    char *md = read_all(written);
    assert_non_null(strstr(md, "x: hit_rate (the numeric axis with the most values: the database"
                               " does not say which are workload axes); one series per strategy.\n"));
    assert_non_null(strstr(md, "Median time against hit_rate, one series per strategy.  Each"
                               " point is the median over counter (2 values), n (2 values): it"
                               " pools cases at different values of these axes.\n"));
    assert_non_null(strstr(md, "Ratio to the baseline against hit_rate, one series per"
                               " strategy.  Each point is the median over counter"));
    free(md);
    free(written);
    char gp[700];
    snprintf(gp, sizeof gp, "%s/contention/contention_hit_rate_median_ms.gp", dir);
    char *script = read_all(gp);
    assert_non_null(script);
    assert_null(strstr(script, "set logscale x"));
    free(script);

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
    db = open_db(tmp_path("wide.db"));
    if (results_report(db, spec, dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    sqlite3_close(db);
    md = read_all(written);
    assert_non_null(strstr(md, "x: n (the numeric workload axis with the most values), on a log2 scale (its"
                               " values span more than 2 decades); one series per strategy.\n"));
    assert_non_null(strstr(md, "![Median time against n](contention/contention_n_median_ms.svg)"));
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
    assert_non_null(strstr(script, "one series per strategy; each point the median over"
                                   " counter (2 values), hit_rate (3 values)"));
    free(script);
    /* The data: one row per n, one column per strategy. */
    snprintf(gp, sizeof gp, "%s/contention/contention_n_median_ms.csv", dir);
    char *data = read_all(gp);
    assert_non_null(data);
    const char *head = "n,naive,warp_cg,block_smem\n1024,";
    assert_int_equal(strncmp(data, head, strlen(head)), 0);
    free(data);

    /* One value of every other axis in the run: each point is one case. */
    copy_db("wide.db", "single.db", "DELETE FROM cases WHERE json_extract(axes, '$.counter')"
                                    " != 'u64' OR json_extract(axes, '$.hit_rate') != 0.5");
    db = open_db(tmp_path("single.db"));
    if (results_report(db, spec, dir, 0, 0, &written, &err))
        fail_msg("report: %s", err.msg);
    sqlite3_close(db);
    md = read_all(written);
    assert_non_null(strstr(md, "Each point is one case: no other axis varies in this run.\n"));
    free(md);
    free(written);
    unsetenv("KVX_GNUPLOT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_axis_each),
        cmocka_unit_test(test_best),
        cmocka_unit_test(test_best_beside),
        cmocka_unit_test(test_two_axes_each),
        cmocka_unit_test(test_missing_and_failed_cells),
        cmocka_unit_test(test_multi_row_cells),
        cmocka_unit_test(test_ratio),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_other_values),
        cmocka_unit_test(test_every_value_tabulates),
        cmocka_unit_test(test_every_value_documented),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_injection),
        cmocka_unit_test(test_bad_usage),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_failed_values),
        cmocka_unit_test(test_where_lets),
        cmocka_unit_test(test_compare_ratio_reference),
        cmocka_unit_test(test_compare_noise),
        cmocka_unit_test(test_import_round_trip),
        cmocka_unit_test(test_import_errors),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_export_json),
        cmocka_unit_test(test_report),
        cmocka_unit_test(test_report_one_run),
        cmocka_unit_test(test_report_plots),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
