/* results_fixture.h: the fixture database of the results tests (test_results.c,
 * test_results_io.c) and their helpers: running a verb in process, golden files,
 * a copy of the fixture with SQL applied.  Header-only, every function static;
 * the including test uses only some of them. */
#ifndef KVX_TESTS_RESULTS_FIXTURE_H
#define KVX_TESTS_RESULTS_FIXTURE_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "report/results.h"
#include "store/store.h"
#include "core/values.h"

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
            snprintf(inspect, sizeof inspect, "{\"warp_aggregated\":%s,\"ptx\":{\"atom\":%d}}",
                     s == 0 ? "false" : "true", s == 2 ? 1 : 2);
            VariantRow v = {"contention", hash, label, code, "sm_120", "-O3", 1, NULL,
                            100.0 + 10 * s, 16 + 8 * s + c, 0, 0, s == 2 ? 8 : 0, 0, inspect, NULL};
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
        *out = mem_strdup("");
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

/* Read-only, as the read verbs open it. */
static Store *read_db(const char *path)
{
    KvxError err = {0};
    Store *db = store_read_open(path, &err);
    if (!db)
        fail_msg("%s", err.msg);
    return db;
}

/* results_table into a string. */
static int table_text(const char *dbname, TableOpts *o, char **text, KvxError *err)
{
    Store *db = read_db(tmp_path(dbname));
    size_t len;
    FILE *f = open_memstream(text, &len);
    int rc = results_table(db, o, f, err);
    fclose(f);
    store_close(db);
    return rc;
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

#pragma GCC diagnostic pop

#endif
