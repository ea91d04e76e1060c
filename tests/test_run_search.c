/* cpu: `kvx run --search` and `kvx replay` end to end on the fake device
 * (KVX_FAKE_GPUS=1, gpu/fake.h), with tests/data/specs/search.yaml: 42
 * variants after where: (tile * vec <= 64), each at 2 sizes; its 21
 * mismatch variants are invalid.
 *
 * Checked:
 * - replay: an exhaustive run replayed says what the space is (42 variants,
 *   2 points each, 21 invalid) and every strategy finds the optimum with the
 *   whole space as budget; a search in that database measures nothing;
 * - `kvx export --format kerneltuner` of it, read back: Kernel Tuner's cache
 *   file with every variant once, invalid ones as failed configurations,
 *   the combinations where: prunes as InvalidConfig, each time the geometric
 *   mean of the variant's stored medians, its compile, verification and
 *   benchmark times kvx's, times[] the kept samples of a one-point
 *   objective, GB/s and the --counters metrics beside; Kernel Tuner 1.5.0
 *   (where python3 has it: scripts/deps.sh) reads it in simulation mode,
 *   and its simulated time is what the run stored;
 * - `kvx import` of that file, and of files Kernel Tuner 1.5.0's own cache
 *   writer wrote (tests/kt/kt_write.py; closed, and left open as an
 *   interrupted tuning leaves it): a row per entry, the errors as statuses,
 *   the values from time, times and GB/s, the fields it left named;
 * - a search stores ordinary rows: half the space (21 variants, 42 cases)
 *   at --budget 50%, never a point where: prunes, each batch a run row
 *   recording strategy, budget, objective and seed; the same seed in a new
 *   database measures the same variants, another seed others;
 * - kvx table over a searched database, and kvx compare of it with the
 *   exhaustive run, say 'unmeasured' for the cells it did not measure;
 * - kvx replay and kvx export --format kerneltuner refuse a database only a
 *   search stored (exit 2, the run named, no file written), and take it once
 *   an exhaustive run joins it;
 * - from a cold cache, the sources of a random search's later batches are
 *   compiled while the earlier batches run (all found in the cache);
 * - a search killed with SIGKILL part-way (the process group) and started
 *   again ends with exactly the variants of the search never killed, each
 *   case once;
 * - variants another run stored are told without costing the budget: a
 *   search of 10 variants in a database holding the tile == 8 ones measures
 *   10 variants more;
 * - a time budget ends the batch in flight: with a budget shorter than the
 *   first compile, batch 1 hands out no case, is said to be ended by the
 *   time, and the search stops there;
 * - an objective other than a time goes out to Kernel Tuner under its own
 *   name with objective_higher_is_better, the time beside it;
 * - on the committed SGEMM space (results/h200/sgemm.db, rollback mode) the
 *   default is at no budget worse than random search beyond seed noise,
 *   counts every ask as an evaluation, and is within 5% of the optimum at
 *   5% in at least 90% of the seeds;
 * - bench/search_bench.py (where python3 has kernel_tuner) runs both sides
 *   on one space: Kernel Tuner's random_sample at the whole space's budget
 *   pays for the 21 invalid variants too (42 evaluations, not tune_cache's
 *   21), and the aggregate scores random search 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "tests/python_tools.h"

#define SPEC KVX_SOURCE_DIR "/tests/data/specs/search.yaml"

/* kvx_child.h's shard and merge helpers are test_run_fake's. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"

#define LABELS "SELECT label FROM cases ORDER BY label"

static void must(int rc, int want, const char *log)
{
    if (rc != want) {
        dump(log);
        fail_msg("kvx exited %d (expected %d)", rc, want);
    }
}

/* Whether the label lists of two databases are the same. */
static int same_labels(const char *a, const char *b)
{
    int na, nb, same;
    char **la = db_strings(a, LABELS, &na), **lb = db_strings(b, LABELS, &nb);
    same = na == nb;
    for (int i = 0; same && i < na; i++)
        same = !strcmp(la[i], lb[i]);
    strings_free(la, na);
    strings_free(lb, nb);
    return same;
}

static void test_replay_exhaustive(void **state)
{
    (void)state;
    const char *db = tmp_path("full.db"), *log = tmp_path("full.log"), *rlog = tmp_path("replay.log");
    must(kvx(log, "run", SPEC, "--db", db, "--keep-samples", NULL), 1, log);      /* the mismatches: 1 */
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases"), 84);
    must(kvx(rlog, "replay", db, "--seeds", "10", "--budgets", "4,100%", NULL), 0, rlog);
    if (!log_has(rlog, "spec search, 42 variants over 2 objective points (21 invalid, 0 incomplete left out)") ||
        !log_has(rlog, "| random | 100% | 42.0 |") || !log_has(rlog, "| local | 100% | 42.0 |") ||
        !log_has(rlog, "| model | 100% | 42.0 |") || !log_has(rlog, "| portfolio | 100% | 42.0 |") ||
        !log_has(rlog, "| 1.000 | 1.000 | 1.000 | 100% | = |") || !log_has(rlog, "| model | 4 | 4.0 |")) {
        dump(rlog);
        fail_msg("kvx replay's table is not the one expected");
    }
    const char *slog = tmp_path("full-search.log");
    must(kvx(slog, "run", SPEC, "--db", db, "--search", "local", "--budget", "20", NULL), 0, slog);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases"), 84);
    assert_int_equal(db_int(db, "SELECT count(*) FROM runs WHERE search_strategy IS NOT NULL"), 0);
    /* Every variant is stored: each is told, none costs the budget, so the
     * search goes through the whole space and measures nothing. */
    assert_true(log_has(slog, "search  42 of 42 variants (100.0%; 42 of them already stored, no budget spent)"));
    must(kvx(rlog, "replay", db, "--strategy", "annealing", NULL), 2, rlog);
    assert_true(log_has(rlog, "--strategy has 'annealing' (expected one of: random, local, model, portfolio, default)"));
    must(kvx(rlog, "replay", db, "--strategy", "model:kapa=2", NULL), 2, rlog);
    assert_true(log_has(rlog, "--strategy has 'kapa=2' (expected one of: kappa=X, init=X, floor=X, window=X, X a number"));
}

/* One number from sql with the text of file bound as ?1, over an in-memory
 * database: SQLite's JSON functions read the exported file back. */
static double json_num(const char *file, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *q = NULL;
    char *text = file_read(file, NULL);
    double v = NAN;
    assert_non_null(text);
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_bind_text(q, 1, text, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_double(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    free(text);
    return v;
}

/* Kernel Tuner's cache file of the exhaustive run: every variant once, the
 * invalid ones as RuntimeFailedConfig, each time the geometric mean of its
 * stored medians. */
static void test_export_kerneltuner(void **state)
{
    (void)state;
    const char *db = tmp_path("full.db"), *kt = tmp_path("kt.json"), *log = tmp_path("kt.log");
    must(kvx(log, "export", "--db", db, "--format", "kerneltuner", "--out", kt, NULL), 0, log);
    /* 2 x 4 x 3 x 2 combinations: 42 variants, 6 pruned by tile * vec <= 64. */
    assert_int_equal((int)json_num(kt, "SELECT count(*) FROM json_each(?1, '$.cache')"), 48);
    assert_int_equal((int)json_num(kt, "SELECT count(*) FROM json_each(?1, '$.cache') WHERE"
                                       " json_extract(value, '$.time') = 'RuntimeFailedConfig'"), 21);
    assert_int_equal((int)json_num(kt, "SELECT count(*) FROM json_each(?1, '$.cache') WHERE"
                                       " json_extract(value, '$.time') = 'InvalidConfig'"), 6);
    assert_int_equal((int)json_num(kt, "SELECT json_extract(?1, '$.cache.\"base,64,1,2\".time') ="
                                       " 'InvalidConfig'"), 1);
    assert_int_equal((int)json_num(kt, "SELECT json_extract(?1, '$.kernel_name') = 'fill'"), 1);
    assert_int_equal((int)json_num(kt, "SELECT json_array_length(?1, '$.tune_params_keys')"), 4);
    assert_int_equal((int)json_num(kt, "SELECT json_extract(?1, '$.tune_params_keys[3]') = 'vec'"), 1);
    assert_int_equal((int)json_num(kt, "SELECT json_array_length(?1, '$.tune_params.tile')"), 4);
    double a = db_num(db, "SELECT median_ms FROM cases WHERE label = 'strategy=base tile=16 unroll=4 vec=1 size=1024'");
    double b = db_num(db, "SELECT median_ms FROM cases WHERE label = 'strategy=base tile=16 unroll=4 vec=1 size=2048'");
    double t = json_num(kt, "SELECT json_extract(?1, '$.cache.\"base,16,4,1\".time')");
    assert_true(a > 0 && b > 0);
    assert_float_equal(t, sqrt(a * b), 1e-12 * t);
    /* kvx's own costs: the variant's compile, its points' verification and
     * inputs + samples. */
    static const char point[] = "FROM cases WHERE label LIKE 'strategy=base tile=16 unroll=4 vec=1 size=%'";
    char sql[400];
    snprintf(sql, sizeof sql, "SELECT compile_ms FROM variants WHERE id = (SELECT max(variant_id) %s)", point);
    assert_float_equal(json_num(kt, "SELECT json_extract(?1, '$.cache.\"base,16,4,1\".compile_time')"),
                       db_num(db, sql), 1e-9);
    snprintf(sql, sizeof sql, "SELECT sum(t_verify_ms) %s", point);
    assert_float_equal(json_num(kt, "SELECT json_extract(?1, '$.cache.\"base,16,4,1\".verification_time')"),
                       db_num(db, sql), 1e-9);
    snprintf(sql, sizeof sql, "SELECT sum(t_input_ms + t_measure_ms) %s", point);
    assert_float_equal(json_num(kt, "SELECT json_extract(?1, '$.cache.\"base,16,4,1\".benchmark_time')"),
                       db_num(db, sql), 1e-9);
    assert_true(json_num(kt, "SELECT json_extract(?1, '$.cache.\"base,16,4,1\".\"GB/s\"')") > 0);
}

static void db_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

/* A one-point objective's times[] are the case's kept samples; a
 * --counters metric stands beside GB/s, a geometric mean over the points. */
static void test_export_kerneltuner_samples(void **state)
{
    (void)state;
    const char *db = tmp_path("full.db"), *kt = tmp_path("kt1.json"), *log = tmp_path("kt1.log");
    must(kvx(log, "export", "--db", db, "--format", "kerneltuner", "--objective", "median_ms,size == 1024",
             "--out", kt, NULL), 0, log);
    static const char where[] = "WHERE label = 'strategy=base tile=16 unroll=4 vec=1 size=1024'";
    char sql[300];
    snprintf(sql, sizeof sql, "SELECT samples FROM cases %s", where);
    int n = db_int(db, sql);
    assert_true(n >= 3);
    assert_int_equal((int)json_num(kt, "SELECT json_array_length(?1, '$.cache.\"base,16,4,1\".times')"), n);
    snprintf(sql, sizeof sql, "SELECT json_extract(samples_json, '$[0]') FROM cases %s", where);
    assert_float_equal(json_num(kt, "SELECT json_extract(?1, '$.cache.\"base,16,4,1\".times[0]')"),
                       db_num(db, sql), 1e-12);
    /* Counters of 4 and 9 at the two points: 6 as their geometric mean. */
    const char *cdb = tmp_path("counters.db");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", db, cdb);
    assert_int_equal(system(cmd), 0);
    db_exec(cdb, "UPDATE cases SET counters_json = json_object('dram__bytes_read.sum', CASE WHEN label LIKE"
                 " '%size=1024' THEN 4 ELSE 9 END)");
    must(kvx(log, "export", "--db", cdb, "--format", "kerneltuner", "--out", kt, NULL), 0, log);
    assert_float_equal(json_num(kt, "SELECT json_extract(?1, '$.cache.\"base,16,4,1\".\"dram__bytes_read.sum\"')"),
                       6, 1e-9);
}

/* Kernel Tuner 1.5.0 itself in simulation mode (tests/kt/kt_simulate.py),
 * brute force: over the whole product space without restrictions it visits
 * all 48 entries, the 21 valid ones and the failed and pruned ones, and its
 * simulated time is every variant's compile plus every case's verification,
 * inputs and samples as stored; tune_cache's space (the valid entries) adds
 * up the valid variants' alone; the best time is the fastest variant's. */
static void test_kerneltuner_simulates(void **state)
{
    (void)state;
    if (!python_has("kernel_tuner", "Kernel Tuner's simulation mode on the exported cache"))
        skip();
    const char *db = tmp_path("full.db"), *kt = tmp_path("kt.json"), *out = tmp_path("kts.log");
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "python3 " KVX_SOURCE_DIR "/tests/kt/kt_simulate.py '%s' > '%s' 2>&1", kt, out);
    if (system(cmd) != 0) {
        dump(out);
        fail_msg("tests/kt/kt_simulate.py failed");
    }
    char *text = file_read(out, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "kernel_tuner 1.5.0\n"));
    int n1, v1, n2, v2;
    double sim1, best1, sim2, best2;
    const char *l1 = strstr(text, "tune_kernel "), *l2 = strstr(text, "tune_cache ");
    assert_true(l1 && l2);
    assert_int_equal(sscanf(l1, "tune_kernel %d %d %lf %lf", &n1, &v1, &sim1, &best1), 4);
    assert_int_equal(sscanf(l2, "tune_cache %d %d %lf %lf", &n2, &v2, &sim2, &best2), 4);
    free(text);
    assert_int_equal(n1, 48);
    assert_int_equal(v1, 21);
    assert_int_equal(n2, 21);
    assert_int_equal(v2, 21);
    static const char cost[] = "SELECT (SELECT sum(coalesce(t_verify_ms, 0) + coalesce(t_input_ms, 0) +"
                               " coalesce(t_measure_ms, 0)) FROM cases%s) + (SELECT sum(compile_ms) FROM variants%s)";
    static const char valid[] = " WHERE %s IN (SELECT variant_id FROM cases GROUP BY variant_id HAVING"
                                " sum(status != 'ok') = 0)";
    char sql[1200], wc[300], wv[300];
    snprintf(sql, sizeof sql, cost, "", "");
    double all = db_num(db, sql);
    snprintf(wc, sizeof wc, valid, "variant_id");
    snprintf(wv, sizeof wv, valid, "id");
    snprintf(sql, sizeof sql, cost, wc, wv);
    double ok = db_num(db, sql);
    assert_float_equal(sim1, all, 1e-9 * all);
    assert_float_equal(sim2, ok, 1e-9 * ok);
    double best = json_num(kt, "SELECT min(json_extract(value, '$.time')) FROM json_each(?1, '$.cache') WHERE"
                               " json_type(value, '$.time') = 'real'");
    assert_float_equal(best1, best, 1e-12 * best);
    assert_float_equal(best2, best, 1e-12 * best);
}

/* kvx import reads its own Kernel Tuner export back: a row per entry (the
 * 42 variants and the 6 combinations where: prunes), each failure by
 * results_kt.c's table (a mismatch went out as RuntimeFailedConfig and
 * comes back launch_error, the pruned ones as skipped), the time as
 * mean_ms and median_ms (times holds the one value), GB/s as gbs, the
 * device as the reference's GPU, and a line naming the fields it left. */
static void test_import_kerneltuner(void **state)
{
    (void)state;
    const char *db = tmp_path("full.db"), *kt = tmp_path("kti.json"), *log = tmp_path("kti.log");
    const char *ref = tmp_path("kti.db");
    must(kvx(log, "export", "--db", db, "--format", "kerneltuner", "--out", kt, NULL), 0, log);
    unlink(ref);
    must(kvx(log, "import", kt, "--name", "kt", "--db", ref, NULL), 0, log);
    if (!log_has(log, "imported 48 rows from ") ||
        !log_has(log, ": not stored (kvx has no column for them): compile_time, verification_time,"
                      " benchmark_time, strategy_time, framework_time\n")) {
        dump(log);
        fail_msg("kvx import of a Kernel Tuner cache said something else");
    }
    assert_int_equal(db_int(ref, "SELECT count(*) FROM cases WHERE status = 'ok'"), 21);
    assert_int_equal(db_int(ref, "SELECT count(*) FROM cases WHERE status = 'launch_error'"), 21);
    assert_int_equal(db_int(ref, "SELECT count(*) FROM cases WHERE status = 'skipped' AND"
                                 " json_extract(axes, '$.tile') * json_extract(axes, '$.vec') > 64"), 6);
    static const char v[] = " FROM cases WHERE label = 'strategy=base tile=16 unroll=4 vec=1'";
    char sql[300];
    double t = json_num(kt, "SELECT json_extract(?1, '$.cache.\"base,16,4,1\".time')");
    snprintf(sql, sizeof sql, "SELECT mean_ms%s", v);
    assert_float_equal(db_num(ref, sql), t, 1e-12 * t);
    snprintf(sql, sizeof sql, "SELECT median_ms%s", v);
    assert_float_equal(db_num(ref, sql), t, 1e-12 * t);
    double g = json_num(kt, "SELECT json_extract(?1, '$.cache.\"base,16,4,1\".\"GB/s\"')");
    snprintf(sql, sizeof sql, "SELECT gbs%s", v);
    assert_float_equal(db_num(ref, sql), g, 1e-12 * g);
    int ng, nb;
    char **gpu = db_strings(db, "SELECT gpu_name FROM runs LIMIT 1", &ng);
    char **back = db_strings(ref, "SELECT gpu_name FROM runs WHERE kind = 'reference'", &nb);
    assert_int_equal(ng, 1);
    assert_int_equal(nb, 1);
    assert_string_equal(back[0], gpu[0]);
    strings_free(gpu, ng), strings_free(back, nb);
}

/* A file written by Kernel Tuner 1.5.0's own cache writer
 * (tests/kt/kt_write.py: util.process_cache, store_cache, close_cache),
 * closed and as an interrupted tuning leaves it open: every entry a row,
 * the values from time and times, the errors as statuses. */
static void test_import_kerneltuner_written(void **state)
{
    (void)state;
    if (!python_has("kernel_tuner", "kvx import of a file Kernel Tuner's cache writer wrote"))
        skip();
    static const char *const how[] = {"", "--open"};
    for (int i = 0; i < 2; i++) {
        const char *kt = tmp_path(i ? "ktw-open.json" : "ktw.json"), *db = tmp_path(i ? "ktw-open.db" : "ktw.db");
        const char *log = tmp_path("ktw.log");
        char cmd[1600];
        snprintf(cmd, sizeof cmd, "python3 " KVX_SOURCE_DIR "/tests/kt/kt_write.py '%s' %s > '%s' 2>&1", kt, how[i],
                 log);
        if (system(cmd) != 0) {
            dump(log);
            fail_msg("tests/kt/kt_write.py failed");
        }
        unlink(db);
        must(kvx(log, "import", kt, "--name", "written", "--db", db, NULL), 0, log);
        assert_true(log_has(log, "imported 6 rows from "));
        assert_true(log_has(log, "not stored (kvx has no column for them): compile_time, verification_time,"
                                 " benchmark_time, strategy_time, framework_time, timestamp\n"));
        assert_int_equal(db_int(db, "SELECT count(*) FROM runs WHERE gpu_name = 'Made-up GPU'"), 1);
        assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE label = 'block_size_x=32 vec=1' AND"
                                    " median_ms = 2.5 AND mean_ms = 3 AND min_ms = 1 AND max_ms = 6 AND gbs = 100"
                                    " AND abs(stdev_ms - sqrt(14.0 / 3)) < 1e-12"), 1);
        assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE label = 'block_size_x=32 vec=2' AND"
                                    " median_ms = 2.5 AND stdev_ms IS NULL AND gbs = 120"), 1);
        assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE label = 'block_size_x=128 vec=2' AND"
                                    " median_ms = 0.5 AND mean_ms = 0.5 AND min_ms IS NULL"), 1);
        int n = 0;
        char **s = db_strings(db, "SELECT status FROM cases WHERE status != 'ok' ORDER BY id", &n);
        assert_int_equal(n, 3);
        assert_string_equal(s[0], "compile_error");
        assert_string_equal(s[1], "launch_error");
        assert_string_equal(s[2], "skipped");
        strings_free(s, n);
    }
}

/* A search of seed into db; the exit status. */
static int search(const char *db, const char *log, const char *seed)
{
    return kvx(log, "run", SPEC, "--db", db, "--search", "model", "--budget", "50%", "--search-seed", seed, NULL);
}

static void test_search_rows(void **state)
{
    (void)state;
    const char *a = tmp_path("a.db"), *b = tmp_path("b.db"), *c = tmp_path("c.db");
    const char *log = tmp_path("a.log"), *tlog = tmp_path("table.log");
    must(search(a, log, "5"), 1, log);
    assert_true(log_has(log, "search  21 of 42 variants (50.0%; 0 of them already stored"));
    assert_int_equal(db_int(a, "SELECT count(*) FROM cases"), 42);
    assert_int_equal(db_int(a, "SELECT count(DISTINCT variant_id) FROM cases"), 21);
    assert_int_equal(db_int(a, "SELECT count(*) FROM cases WHERE json_extract(axes, '$.tile') *"
                               " json_extract(axes, '$.vec') > 64"), 0);
    assert_int_equal(db_int(a, "SELECT count(*) FROM runs WHERE search_strategy = 'model' AND search_budget = '50%'"
                               " AND search_objective = 'median_ms' AND search_seed = '5'"),
                     db_int(a, "SELECT count(*) FROM runs"));
    /* Batches of 8, each a round of one run session: one run row. */
    assert_int_equal(db_int(a, "SELECT count(*) FROM runs"), 1);
    assert_true(log_has(log, "search  batch 3: 5 variants"));
    must(search(b, tmp_path("b.log"), "5"), 1, tmp_path("b.log"));
    assert_true(same_labels(a, b));
    must(search(c, tmp_path("c.log"), "6"), 1, tmp_path("c.log"));
    assert_false(same_labels(a, c));
    must(kvx(tlog, "table", "--db", a, "--spec", "search", "--rows", "strategy,tile,unroll", "--cols", "vec,size",
             NULL), 0, tlog);
    if (!log_has(tlog, "| unmeasured |") || !log_has(tlog, "unmeasured: a search (kvx run --search)")) {
        dump(tlog);
        fail_msg("kvx table does not mark the cells the search left unmeasured");
    }
    const char *clog = tmp_path("compare.log");
    must(kvx(clog, "compare", a, tmp_path("full.db"), "--rows", "strategy,tile,unroll", "--cols", "vec", NULL), 0,
         clog);
    if (!log_has(clog, "| unmeasured | "))
        fail_msg("kvx compare of the search with the exhaustive run does not mark the search's side unmeasured");
    const char *elog = tmp_path("usage.log");
    must(kvx(elog, "run", SPEC, "--db", c, "--budget", "5", NULL), 2, elog);
    assert_true(log_has(elog, "--budget, --objective, --search-seed, --batch and --ahead go with --search"));
    must(kvx(elog, "run", SPEC, "--db", c, "--search", "model", "--budget", "5x", NULL), 2, elog);
    assert_true(log_has(elog, "--budget is '5x' (expected N variants or P%, Mgpu-min or Mwall-min)"));
    must(kvx(elog, "run", SPEC, "--db", c, "--search", "model", "--objective", "gbs,size == 3", NULL), 2, elog);
    assert_true(log_has(elog, "no selected point is an objective point of size == 3"));
    must(kvx(elog, "run", SPEC, "--db", c, "--search", "model", "--counters=default", NULL), 2, elog);
    assert_true(log_has(elog, "--search takes no --counters"));
}

/* While a batch runs, the next batch's sources compile: a random search
 * (whose next asks a peek knows exactly) from a cold cache finds sources of
 * its second batch in the cache (all of them unless the second round
 * cancelled the compiles ahead not started yet: a busy machine).  With
 * --ahead 0 nothing compiles ahead, and the second batch finds none. */
/* A database only a search stored is no space: replay and export refuse it,
 * naming the run, and write nothing; once an exhaustive run joins it, both
 * take it. */
static void test_search_only_refused(void **state)
{
    (void)state;
    const char *db = tmp_path("only.db"), *log = tmp_path("only.log"), *kt = tmp_path("only-kt.json");
    must(search(db, log, "7"), 1, log);
    must(kvx(log, "replay", db, "--seeds", "2", NULL), 2, log);
    assert_true(log_has(log, "spec 'search' is not an exhaustive record: its 21 variants are what run 1 measured "
                             "(the first: --search model --budget 50% --search-seed 7)"));
    must(kvx(log, "export", "--db", db, "--format", "kerneltuner", "--out", kt, NULL), 2, log);
    assert_true(log_has(log, "is not an exhaustive record"));
    assert_int_equal(access(kt, F_OK), -1);
    must(kvx(log, "run", SPEC, "--db", db, NULL), 1, log);
    must(kvx(log, "replay", db, "--seeds", "2", "--budgets", "100%", "--time-budgets", "", NULL), 0, log);
    assert_true(log_has(log, "spec search, 42 variants over 2 objective points"));
    must(kvx(log, "export", "--db", db, "--format", "kerneltuner", "--out", kt, NULL), 0, log);
}

static void test_compiles_ahead(void **state)
{
    (void)state;
    const char *db = tmp_path("ahead.db"), *log = tmp_path("ahead.log");
    must(kvx(log, "run", SPEC, "--db", db, "--cache", tmp_path("cold-cache"), "--search", "random", "--budget",
             "50%", "--ahead", "8", NULL), 1, log);
    if (!log_has(log, "search  batch 1: 8 variants (16 cases measured, 0 of 8 sources from the cache, 8 compiling "
                      "ahead)") ||
        log_has(log, "search  batch 2: 8 variants (16 cases measured, 0 of 8 sources from the cache")) {
        dump(log);
        fail_msg("the later batches' sources were not compiled ahead");
    }
    const char *db0 = tmp_path("ahead0.db"), *log0 = tmp_path("ahead0.log");
    must(kvx(log0, "run", SPEC, "--db", db0, "--cache", tmp_path("cold-cache-0"), "--search", "random", "--budget",
             "50%", "--ahead", "0", NULL), 1, log0);
    if (!log_has(log0, "search  batch 1: 8 variants (16 cases measured, 0 of 8 sources from the cache, 0 compiling "
                       "ahead)") ||
        !log_has(log0, "search  batch 2: 8 variants (16 cases measured, 0 of 8 sources from the cache, 0 compiling "
                       "ahead)")) {
        dump(log0);
        fail_msg("--ahead 0 compiled ahead");
    }
}

static void test_kill_and_resume(void **state)
{
    (void)state;
    const char *db = tmp_path("killed.db"), *log1 = tmp_path("killed-1.log"), *log2 = tmp_path("killed-2.log");
    const char *argv[] = {"run", SPEC, "--db", db, "--search", "model", "--budget", "50%", "--search-seed", "5", NULL};
    /* Slow launches (wall time only: the fake's times are virtual), so that
     * the kill lands inside the search. */
    setenv("KVX_FAKE_NS_PER_BYTE", "300", 1);
    pid_t pid = kvx_start(log1, argv);
    double end = wall_now_ms() + KVX_HANG_S * 1000.0;
    int stored, status = 0;
    while ((stored = db_int(db, "SELECT count(*) FROM cases")) < 12) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            dump(log1);
            fail_msg("the search finished (exit %d) before the test could kill it (%d cases)", exit_code(status),
                     stored);
        }
        if (wall_now_ms() > end) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            dump(log1);
            fail_msg("fewer than 12 cases stored after %d s", KVX_HANG_S);
        }
        usleep(10 * 1000);
    }
    kill(-pid, SIGKILL);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(exit_code(status), 128 + SIGKILL);
    unsetenv("KVX_FAKE_NS_PER_BYTE");
    int after_kill = db_int(db, "SELECT count(*) FROM cases");
    printf("  killed with %d of 42 cases stored\n", after_kill);
    assert_true(after_kill >= 12 && after_kill < 42);
    must(kvx_wait(kvx_start(log2, argv), log2), 1, log2);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases"), 42);
    assert_int_equal(db_int(db, "SELECT count(DISTINCT key) FROM cases"), 42);
    if (!same_labels(db, tmp_path("a.db"))) {
        dump(log2);
        fail_msg("the resumed search measured other variants than the search never killed");
    }
}

static void test_budget_stored(void **state)
{
    (void)state;
    const char *db = tmp_path("part.db"), *log = tmp_path("part.log"), *slog = tmp_path("part-search.log");
    must(kvx(log, "run", SPEC, "--db", db, "--where", "tile == 8", NULL), 1, log);     /* mismatches: 1 */
    int before = db_int(db, "SELECT count(DISTINCT variant_id) FROM cases");
    assert_int_equal(before, 12);
    kvx(slog, "run", SPEC, "--db", db, "--search", "random", "--budget", "10", "--search-seed", "3", NULL);
    int searched = db_int(db, "SELECT count(DISTINCT variant_id) FROM cases WHERE run_id IN"
                              " (SELECT id FROM runs WHERE search_strategy IS NOT NULL)");
    int stored = db_int(db, "SELECT count(DISTINCT variant_id) FROM cases");
    if (searched != 10 || stored != before + 10) {
        dump(slog);
        fail_msg("the search measured %d variants (%d in all, %d before): expected 10 more", searched, stored, before);
    }
    assert_true(log_has(slog, "of them already stored, no budget spent)"));
}

static void test_time_budget(void **state)
{
    (void)state;
    const char *db = tmp_path("timed.db"), *log = tmp_path("timed.log");
    kvx(log, "run", SPEC, "--db", db, "--search", "random", "--budget", "0.00001wall-min", "--batch", "42",
        "--no-cache", NULL);
    if (!log_has(log, "the time budget ended batch 1 in flight")) {
        dump(log);
        fail_msg("a time budget shorter than a compile did not end the batch in flight");
    }
    assert_true(db_int(db, "SELECT count(*) FROM cases") < 84);
    assert_false(log_has(log, "search  batch 2:"));
}

static void test_export_higher(void **state)
{
    (void)state;
    const char *db = tmp_path("full.db"), *kt = tmp_path("gbs-kt.json"), *log = tmp_path("gbs-kt.log");
    must(kvx(log, "export", "--db", db, "--format", "kerneltuner", "--objective", "gbs,size == 1024", "--out", kt,
             NULL), 0, log);
    assert_int_equal(json_num(kt, "SELECT json_extract(?1, '$.objective') = 'gbs'"), 1);
    assert_int_equal(json_num(kt, "SELECT json_extract(?1, '$.objective_higher_is_better')"), 1);
    /* Each valid variant: gbs its rate, time its median (a time, not 1/rate). */
    double n = json_num(kt, "SELECT count(*) FROM json_each(?1, '$.cache') WHERE json_type(value, '$.gbs') = 'real'"
                            " AND json_extract(value, '$.time') > 0 AND json_extract(value, '$.time') !="
                            " 1.0 / json_extract(value, '$.gbs')");
    assert_int_equal((int)n, 21);
}

static void test_replay_committed(void **state)
{
    (void)state;
    const char *js = tmp_path("sgemm-replay.json");
    must(kvx(js, "replay", KVX_SOURCE_DIR "/results/h200/sgemm.db", "--format", "json", "--strategy", "random,default",
             "--seeds", "20", NULL), 0, js);
    const char *rows = "SELECT count(*) FROM json_each(?1, '$.rows') WHERE ";
    char sql[512];
    snprintf(sql, sizeof sql, "%sjson_extract(value, '$.strategy') = 'default'", rows);
    assert_int_equal((int)json_num(js, sql), 8);        /* 4 count budgets, 4 of time */
    snprintf(sql, sizeof sql, "%sjson_extract(value, '$.vs_random') = 'worse'", rows);
    assert_int_equal((int)json_num(js, sql), 0);
    snprintf(sql, sizeof sql, "%sjson_extract(value, '$.budget') = '5%%' AND NOT json_extract(value, '$.time')"
             " AND json_extract(value, '$.evaluations') = 186", rows);
    assert_int_equal((int)json_num(js, sql), 2);
    snprintf(sql, sizeof sql, "%sjson_extract(value, '$.strategy') = 'default' AND json_extract(value, '$.budget') ="
             " '5%%' AND NOT json_extract(value, '$.time') AND json_extract(value, '$.within') >= 0.9", rows);
    assert_int_equal((int)json_num(js, sql), 1);
}

static void test_bench_harness(void **state)
{
    (void)state;
    if (!python_has("kernel_tuner", "bench/search_bench.py with Kernel Tuner's side"))
        skip();
    const char *tsv = tmp_path("spaces.tsv"), *js = tmp_path("bench.json"), *md = tmp_path("bench.md");
    const char *log = tmp_path("bench.log");
    FILE *f = fopen(tsv, "w");
    assert_non_null(f);
    fprintf(f, "# one space\nsearch-fake\t%s\tsearch\tmedian_ms\n", tmp_path("full.db"));
    fclose(f);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "python3 " KVX_SOURCE_DIR "/bench/search_bench.py '%s' --kvx '" KVX_BINARY "' --seeds 10"
             " --kt random_sample --kt-seeds 4 --budgets 10,100%% --time-budgets 50%% --json '%s' --md '%s' > '%s' 2>&1",
             tsv, js, md, log);
    if (system(cmd) != 0) {
        dump(log);
        fail_msg("bench/search_bench.py failed");
    }
    assert_int_equal((int)json_num(js, "SELECT json_extract(value, '$.evaluations') FROM json_each(?1,"
                                       " '$.results.search-fake.kt') WHERE json_extract(value, '$.budget') = '100%'"), 42);
    assert_int_equal((int)json_num(js, "SELECT json_extract(?1, '$.aggregate.random.all') = 0"), 1);
    char *text = file_read(md, NULL);
    assert_non_null(strstr(text, "| KT random_sample | 100% | 42.0 |"));
    free(text);
}

int main(void)
{
    child_env_clean();
    setenv("KVX_FAKE_GPUS", "1", 1);
    if (child_dir_make("kvx-run-search"))
        return 1;
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_exhaustive),
        cmocka_unit_test(test_export_kerneltuner),
        cmocka_unit_test(test_export_kerneltuner_samples),
        cmocka_unit_test(test_import_kerneltuner),
        cmocka_unit_test(test_import_kerneltuner_written),
        cmocka_unit_test(test_kerneltuner_simulates),
        cmocka_unit_test(test_search_rows),
        cmocka_unit_test(test_search_only_refused),
        cmocka_unit_test(test_compiles_ahead),
        cmocka_unit_test(test_kill_and_resume),
        cmocka_unit_test(test_budget_stored),
        cmocka_unit_test(test_time_budget),
        cmocka_unit_test(test_export_higher),
        cmocka_unit_test(test_replay_committed),
        cmocka_unit_test(test_bench_harness),
    };
    return child_dir_done(cmocka_run_group_tests(tests, NULL, NULL));
}
