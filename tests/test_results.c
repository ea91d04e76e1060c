/* test_results: kvx table and kvx compare over a fixture database built through
 * the store API (tests/results_fixture.h; import, export, merge and report are
 * test_results_io.c's).
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
        {"inspect.ptx.atom", "| warp_cg | 2 (5) | 2 (6) |"},
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

/* Every value name a spec's report may give (core/values.h) has a column in the
 * driver: it tabulates, and the caption says what it is. */
static void test_every_value_tabulates(void **state)
{
    const char *rows[] = {"strategy"}, *cols[] = {"counter"};
    for (int i = 0; i < SPEC_VALUE_COUNT; i++) {
        TableOpts o = {.rows = rows, .nrows = 1, .cols = cols, .ncols = 1,
                       .value = values_info[i].name};
        KvxError err = {0};
        char *text;
        if (table_text("a.db", &o, &text, &err))
            fail_msg("--value %s: %s", values_info[i].name, err.msg);
        char caption[256];
        snprintf(caption, sizeof caption, "%s (%s)", values_info[i].name, values_info[i].doc);
        if (!strstr(text, caption))
            fail_msg("--value %s: no caption '%s' in\n%s", values_info[i].name, caption, text);
        free(text);
    }
}

/* A --where of more literals than a fixed array held (64, an assertion
 * then) is one condition for the store like any other. */
static void test_where_many_literals(void **state)
{
    StrBuf w;
    sb_init(&w);
    for (int i = 0; i < 100; i++)
        sb_printf(&w, "%shit_rate == %d", i ? " || " : "", i);
    const char *rows[] = {"strategy"}, *cols[] = {"counter"};
    TableOpts o = {.rows = rows, .nrows = 1, .cols = cols, .ncols = 1, .where = sb_str(&w)};
    KvxError err = {0};
    char *text;
    if (table_text("a.db", &o, &text, &err))
        fail_msg("%s", err.msg);
    assert_non_null(strstr(text, "| naive |"));
    free(text);
    sb_free(&w);
}

/* docs/spec.md's table of report values has a row "| `NAME` | ..." for every
 * value name: a value added to core/values.h is documented with it.  ctest runs
 * in the source directory. */
static void test_every_value_documented(void **state)
{
    char *doc = read_all("docs/spec.md");
    assert_non_null(doc);
    for (int i = 0; i < SPEC_VALUE_COUNT; i++) {
        char row[128];
        snprintf(row, sizeof row, "\n| `%s` |", values_info[i].name);
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
        /* Nothing matching is no error (exit 0), and writes nothing. */
        {"--where", "strategy == \"x') OR 1=1 --\"", "no stored case of spec 'contention' matches"},
        {"--where", "strategy == 'naive\" OR \"1\"=\"1'", "no stored case of spec 'contention' matches"},
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
        {"--value", "inspect.x') OR 1=1 --", "unknown inspect fact 'inspect.x') OR 1=1 --'"},
        {"--value", "inspect.bogus", "unknown inspect fact 'inspect.bogus' (expected inspect. and one of: sass_available, arch,"},
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
            int want = strstr(attacks[i].msg, "no stored case of spec") ? 0 : 2;
            if (rc != want || !strstr(errs, attacks[i].msg))
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


/* ---- --failed-values --------------------------------------------------------- */

/* kvx table --failures: the failed cases with what went wrong, no CSV to
 * parse; none failed (or nothing matches) is a note and exit 0. */
static void test_failures(void **state)
{
    char *out, *errs;
    int rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--failures", NULL);
    if (rc)
        fail_msg("table --failures: rc %d: %s", rc, errs);
    assert_non_null(strstr(out, "| strategy | counter | hit_rate | n | status | detail |\n"));
    assert_non_null(strstr(out, "| block_smem | u32 | 1 | 67108864 | mismatch | out[0] = 67108863, expected"
                                " 67108864 |\n"));
    assert_non_null(strstr(out, "| warp_cg | u64 | 0.5 | 16777216 | timeout |"));
    assert_null(strstr(out, "| ok |"));
    free(out), free(errs);
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--failures", "--format",
                 "csv", "--where", "status == \"mismatch\"", NULL);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "strategy,counter,hit_rate,n,status,detail\n"
                             "block_smem,u32,1,67108864,mismatch,\"out[0] = 67108863, expected 67108864\"\n");
    free(out), free(errs);
    /* The brief's question: what did not pass?  Nothing, here: exit 0. */
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--where",
                 "status != \"ok\" && strategy == \"naive\"", NULL);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "");
    assert_non_null(strstr(errs, "no stored case of spec 'contention' matches --where"));
    free(out), free(errs);
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--failures", "--where",
                 "strategy == \"naive\"", NULL);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "");
    assert_non_null(strstr(errs, "no failed case among the 12 stored cases of spec 'contention' matching"
                                 " --where strategy == \"naive\": nothing to list"));
    free(out), free(errs);
    /* A misspelt value: where it is, and the values the axis has. */
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--where",
                 "strategy == \"naiv\" || n == 5 || hit_rate == 0.3 || strategy == \"naive\" && status == \"fault\"",
                 NULL);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "");
    if (!strstr(errs, "nothing to list\n--where:1:13: axis strategy has no value \"naiv\" (its values: \"naive\", "
                      "\"warp_cg\", \"block_smem\")\n--where:1:28: axis n has no value 5 (its values: 16777216, "
                      "67108864)\n--where:1:45: axis hit_rate has no value 0.3 (its values: 0.05, 0.5, 1)\n") ||
        strstr(strstr(errs, "0.05, 0.5, 1)\n"), "has no value"))     /* none for the values stored */
        fail_msg("a misspelt --where value: %s", errs);
    free(out), free(errs);
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--failures", "--where",
                 "strategy == \"naiv\"", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(errs, "nothing to list\n--where:1:13: axis strategy has no value \"naiv\""));
    free(out), free(errs);
    rc = run_cmd(cmd_table, 1, &out, &errs, "table", "--db", tmp_path("a.db"), "--failures", "--value",
                 "gbs", NULL);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(errs, "--failures takes no --rows"));
    free(out), free(errs);
}

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
    assert_int_equal(rc, 0);
    assert_non_null(strstr(errs, "no stored case of spec 'contention' matches"));
    assert_string_equal(out, "");
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
        cmocka_unit_test(test_where_many_literals),
        cmocka_unit_test(test_every_value_documented),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_injection),
        cmocka_unit_test(test_bad_usage),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_failed_values),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_where_lets),
        cmocka_unit_test(test_compare_ratio_reference),
        cmocka_unit_test(test_compare_noise),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
