/* counters: ncu's CSV read into per-case counters; --counters' metric list;
 * and `kvx run --counters LIST --keep-ncu-rep` end to end on the fake device
 * (KVX_FAKE_GPUS) under a fake ncu (tests/data/fake_ncu.sh, which runs kvx
 * __counters as ncu would and prints its table): every listed metric stored
 * per case in cases.counters_json, the default ones in their fixed columns
 * too, `kvx table --value counter.NAME`, the report kept beside the
 * database, each case's NVTX range pushed by the pass's launch as by the
 * timed run's (tests/nvtx/inject.c), and a schema-4 database's fixed columns
 * copied into counters_json by the migration. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run/counters.h"
#include "store/store.h"

/* kvx_child.h's shard and merge helpers are test_run_fake's. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"

#define FAKE_NCU KVX_SOURCE_DIR "/tests/data/fake_ncu.sh"
#define FAKE_SPEC KVX_SOURCE_DIR "/tests/data/specs/fake.yaml"
/* fake.yaml's ok strategies: 2 x 3 sizes x 2 modes */
#define OK_WHERE "strategy == \"base\" || strategy == \"alt\""
#define OK_CASES 12
#define BANK "smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared.sum"

/* What ncu --csv --page raw writes: a header, a units row, one row per launch. */
static const char LOG[] =
    "==PROF== Connected to process 123\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Kernel Name\",\"dram__bytes_read.sum\","
    "\"dram__bytes_write.sum\",\"lts__t_requests_srcunit_tex_op_atom.sum\","
    "\"lts__t_requests_srcunit_tex_op_red.sum\"\n"
    "\"\",\"\",\"\",\"\",\"byte\",\"byte\",\"\",\"\"\n"
    "\"0\",\"123\",\"kvx\",\"filter_count\",\"67,108,864\",\"2,048\",\"0\",\"524,288\"\n"
    "\"1\",\"123\",\"kvx\",\"filter_count\",\"67,110,912\",\"n/a\",\"0\",\"16,384\"\n";

static void cases_named(CaseDesc *c, int n, const char *kernel)
{
    memset(c, 0, sizeof *c * (size_t)n);
    for (int i = 0; i < n; i++)
        snprintf(c[i].kernel, sizeof c[i].kernel, "%s", kernel);
}

static CounterList *list_of(const char *text)
{
    static CounterList l;
    char why[256];
    assert_int_equal(counters_list_parse(text, &l, why, sizeof why), 0);
    return &l;
}

static void test_parse(void **state)
{
    (void)state;
    CaseDesc c[2];
    cases_named(c, 2, "filter_count");
    /* a metric ncu did not print stays NaN */
    const CounterList *l = list_of("default,sm__cycles_elapsed.avg");
    assert_int_equal(l->n, COUNTER_COUNT + 1);
    double v[2][COUNTER_COUNT + 1];
    char *text = strdup(LOG);
    KvxError err = {0};
    assert_int_equal(counters_parse(text, c, 2, l, &v[0][0], &err), 2);
    assert_int_equal(err.code, 0);
    assert_true(v[0][COUNTER_l2_red_requests] == 524288);
    assert_true(v[0][COUNTER_l2_atom_requests] == 0);
    assert_true(v[0][COUNTER_dram_read_bytes] == 67108864);
    assert_true(v[1][COUNTER_l2_red_requests] == 16384);
    assert_true(isnan(v[1][COUNTER_dram_write_bytes]));     /* "n/a" */
    assert_true(isnan(v[0][COUNTER_COUNT]));
    free(text);
}

/* --counters' list: default stands for the four, a name given twice counts
 * once, anything but metric names is refused with what was expected. */
static void test_list(void **state)
{
    (void)state;
    CounterList l;
    char why[256];
    assert_int_equal(counters_list_parse("default", &l, why, sizeof why), 0);
    assert_int_equal(l.n, COUNTER_COUNT);
    assert_string_equal(l.name[2], "dram__bytes_read.sum");
    assert_int_equal(counters_list_parse(BANK ",dram__bytes_read.sum,default," BANK, &l, why, sizeof why), 0);
    assert_int_equal(l.n, 1 + COUNTER_COUNT);
    assert_string_equal(l.name[0], BANK);
    assert_string_equal(l.name[1], "dram__bytes_read.sum");
    assert_int_equal(counters_fixed(l.name[1]), COUNTER_dram_read_bytes);
    assert_int_equal(counters_fixed(BANK), -1);
    const char *bad[] = {"", "a,,b", "dram bytes", "a,", "x;rm"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(counters_list_parse(bad[i], &l, why, sizeof why), -1);
        assert_non_null(strstr(why, "expected default, or ncu metric names"));
    }
}

/* Rows are matched to cases by order and kernel name: another kernel's row
 * stores nothing rather than the wrong case's counters. */
static void test_row_of_another_kernel(void **state)
{
    (void)state;
    CaseDesc c[2];
    cases_named(c, 2, "histogram");
    double v[2][COUNTER_COUNT];
    const CounterList *l = list_of("default");
    char *text = strdup(LOG);
    KvxError err = {0};
    assert_int_equal(counters_parse(text, c, 2, l, &v[0][0], &err), -1);
    assert_non_null(strstr(err.msg, "ncu row 1 is kernel 'filter_count' (expected 'histogram'"));
    kvx_error_clear(&err);
    free(text);
    text = strdup("==PROF== nothing profiled\n");
    assert_int_equal(counters_parse(text, c, 2, l, &v[0][0], &err), -1);
    assert_non_null(strstr(err.msg, "no CSV table"));
    kvx_error_clear(&err);
    free(text);
}

/* kvx's own kernels in the pass (kvx_fill making the inputs on the device,
 * seen on an H200) are not a case's rows: skipped, the case's row read. */
static void test_kvx_kernels_skipped(void **state)
{
    (void)state;
    static const char FILL[] =
        "\"ID\",\"Process ID\",\"Process Name\",\"Kernel Name\",\"dram__bytes_read.sum\","
        "\"dram__bytes_write.sum\",\"lts__t_requests_srcunit_tex_op_atom.sum\","
        "\"lts__t_requests_srcunit_tex_op_red.sum\"\n"
        "\"\",\"\",\"\",\"\",\"byte\",\"byte\",\"\",\"\"\n"
        "\"0\",\"1\",\"kvx\",\"kvx_fill\",\"0\",\"67,108,864\",\"0\",\"0\"\n"
        "\"1\",\"1\",\"kvx\",\"transpose\",\"67,108,864\",\"67,108,864\",\"0\",\"0\"\n";
    CaseDesc c[1];
    cases_named(c, 1, "transpose");
    const CounterList *l = list_of("default");
    double v[1][COUNTER_COUNT];
    char *text = strdup(FILL);
    KvxError err = {0};
    assert_int_equal(counters_parse(text, c, 1, l, &v[0][0], &err), 1);
    assert_true(v[0][COUNTER_dram_read_bytes] == 67108864);
    free(text);
}

/* A case of two kernels (two_pass) takes two rows, its counters their sum;
 * the next case's row follows them. */
static void test_two_kernels_summed(void **state)
{
    (void)state;
    static const char TWO[] =
        "\"ID\",\"Process ID\",\"Process Name\",\"Kernel Name\",\"dram__bytes_read.sum\","
        "\"dram__bytes_write.sum\",\"lts__t_requests_srcunit_tex_op_atom.sum\","
        "\"lts__t_requests_srcunit_tex_op_red.sum\"\n"
        "\"\",\"\",\"\",\"\",\"byte\",\"byte\",\"\",\"\"\n"
        "\"0\",\"1\",\"kvx\",\"filter_count_blocks\",\"67,108,864\",\"4,096\",\"0\",\"0\"\n"
        "\"1\",\"1\",\"kvx\",\"filter_count_sum\",\"4,224\",\"32\",\"0\",\"0\"\n"
        "\"2\",\"1\",\"kvx\",\"filter_count\",\"67,108,864\",\"32\",\"0\",\"1,056\"\n";
    CaseDesc *c = calloc(2, sizeof *c);
    snprintf(c[0].kernel, sizeof c[0].kernel, "filter_count_blocks");
    c[0].nnext = 1;
    snprintf(c[0].next[0].kernel, sizeof c[0].next[0].kernel, "filter_count_sum");
    snprintf(c[1].kernel, sizeof c[1].kernel, "filter_count");
    const CounterList *l = list_of("default");
    double v[2][COUNTER_COUNT];
    char *text = strdup(TWO);
    KvxError err = {0};
    assert_int_equal(counters_parse(text, c, 2, l, &v[0][0], &err), 2);
    assert_true(v[0][COUNTER_dram_read_bytes] == 67108864 + 4224);
    assert_true(v[0][COUNTER_dram_write_bytes] == 4096 + 32);
    assert_true(v[1][COUNTER_l2_red_requests] == 1056);
    free(text);
    /* the second kernel's row missing: the next row is not the case's */
    c[0].next[0].kernel[0] = 'x';
    text = strdup(TWO);
    assert_int_equal(counters_parse(text, c, 2, l, &v[0][0], &err), -1);
    assert_non_null(strstr(err.msg, "ncu row 2 is kernel 'filter_count_sum' (expected 'xilter_count_sum' of case 1 of 2"));
    kvx_error_clear(&err);
    free(text);
    free(c);
}

/* ---- kvx run --counters on the fake device ------------------------------------------ */

static void fake_env(void)
{
    setenv("KVX_FAKE_GPUS", "1", 1);
    setenv("KVX_NCU", FAKE_NCU, 1);
    setenv("FAKE_NCU_KERNEL", "fill", 1);
    char n[16];
    snprintf(n, sizeof n, "%d", OK_CASES);
    setenv("FAKE_NCU_CASES", n, 1);
    setenv("FAKE_NCU_ARGS", tmp_path("ncu.args"), 1);
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
}

/* Every listed metric in counters_json, in the fake's values: metric k of
 * the pass's i-th case is (i + 1) * 1000 + k; the fixed columns hold the
 * default metrics; the report is kept beside the database. */
static void test_run_counters(void **state)
{
    (void)state;
    fake_env();
    const char *db = tmp_path("c.db"), *log = tmp_path("c.log"), *nlog = tmp_path("nvtx.log");
    setenv("NVTX_INJECTION64_PATH", KVX_NVTX_INJECT, 1);
    setenv("KVX_TEST_NVTX_LOG", nlog, 1);
    int rc = kvx(log, "run", FAKE_SPEC, "--db", db, "--where", OK_WHERE, "--counters=" BANK ",default",
                 "--keep-ncu-rep", NULL);
    unsetenv("NVTX_INJECTION64_PATH");
    if (rc != 0)
        dump(log);
    assert_int_equal(rc, 0);
    assert_true(log_has(log, "counters 12 of 12 cases profiled with ncu"));
    assert_true(log_has(log, "ncu's report kept: "));
    assert_int_equal(access(tmp_path("c-run1.ncu-rep"), R_OK), 0);
    assert_true(log_has(tmp_path("ncu.args"), "--nvtx"));
    /* each case's range twice: its timed run, and its launch under ncu */
    int n;
    char **labels = db_strings(db, "SELECT label FROM cases", &n);
    char *nv = file_read(nlog, NULL);
    assert_non_null(nv);
    for (int i = 0; i < n; i++) {
        char want[300];
        int k = 0;
        snprintf(want, sizeof want, " push fill %s\n", labels[i]);
        for (const char *p = nv; (p = strstr(p, want)); p++)
            k++;
        if (k != 2)
            fail_msg("'%s' pushed %d times (expected 2)", want, k);
    }
    free(nv);
    strings_free(labels, n);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE json_valid(counters_json)"), OK_CASES);
    /* the pass's order is the cases' order of sending: the k-th profiled
     * case has (k + 1) * 1000 + metric index; each value appears once */
    assert_int_equal(db_int(db, "SELECT count(DISTINCT json_extract(counters_json, '$.\"" BANK "\"'))"
                                " FROM cases"), OK_CASES);
    assert_int_equal(db_int(db, "SELECT min(json_extract(counters_json, '$.\"" BANK "\"')) FROM cases"), 1000);
    for (int k = 0; k < COUNTER_COUNT; k++) {
        char sql[300];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM cases WHERE %s = json_extract(counters_json,"
                 " '$.\"%s\"') AND %s %% 1000 = %d", counter_names[k], counter_metrics[k], counter_names[k],
                 k + 1);
        assert_int_equal(db_int(db, sql), OK_CASES);
    }
    /* kvx table shows a metric by its name */
    const char *tlog = tmp_path("t.log");
    assert_int_equal(kvx(tlog, "table", "--db", db, "--rows", "size", "--cols", "strategy", "--where",
                         "mode == \"a\"", "--value", "counter." BANK, "--format", "csv", NULL), 0);
    char *t = file_read(tlog, NULL);
    int nums = 0;
    for (const char *p = t; (p = strpbrk(p, "0123456789")); p += strspn(p, "0123456789"))
        nums += atoi(p) >= 1000 && atoi(p) % 1000 == 0;
    free(t);
    if (nums != 6)
        dump(tlog);
    assert_int_equal(nums, 6);      /* 3 sizes x 2 strategies of mode a, each (i + 1) * 1000 + 0 */
    assert_int_equal(kvx(tlog, "table", "--db", db, "--rows", "size", "--value", "counter.a b", NULL), 2);
    assert_true(log_has(tlog, "bad counter 'counter.a b'"));
}

/* A database of schema 4 (the four fixed columns, no counters_json) gets
 * them copied into counters_json when a kvx of schema 5 opens it. */
static void test_migrate_fixed(void **state)
{
    (void)state;
    fake_env();
    const char *db = tmp_path("m.db"), *log = tmp_path("m.log");
    assert_int_equal(kvx(log, "run", FAKE_SPEC, "--db", db, "--where", OK_WHERE, "--counters", NULL), 0);
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "ALTER TABLE cases DROP COLUMN counters_json;"
                                     "ALTER TABLE cases DROP COLUMN samples_json;"
                                     "UPDATE schema_version SET version = 4", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(kvx(log, "run", FAKE_SPEC, "--db", db, "--where", OK_WHERE, NULL), 0);
    assert_int_equal(db_int(db, "SELECT version FROM schema_version"), STORE_SCHEMA_VERSION);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE json_extract(counters_json,"
                                " '$.\"dram__bytes_write.sum\"') = dram_write_bytes"), OK_CASES);
}

/* Without ncu the pass says so and nothing is stored. */
static void test_no_ncu(void **state)
{
    (void)state;
    setenv("KVX_NCU", "/nonexistent/ncu", 1);
    setenv("CUDA_HOME", "/nonexistent", 1);
    char *path = mem_strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    setenv("PATH", "/nonexistent", 1);
    const char *found = counters_find_ncu();    /* searched once per process */
    setenv("PATH", path, 1);
    free(path);
    if (found) {
        print_message("ncu found at %s despite the empty search path (the toolkit's)\n",
                      counters_find_ncu());
        skip();
    }
    CaseDesc c[1];
    cases_named(c, 1, "k");
    double v[1][COUNTER_COUNT];
    KvxError err = {0};
    assert_int_equal(counters_collect(c, 1, 0, list_of("default"), NULL, &v[0][0], &err), -1);
    assert_non_null(strstr(err.msg, "no ncu"));
    assert_true(isnan(v[0][0]));
    kvx_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_row_of_another_kernel),
        cmocka_unit_test(test_kvx_kernels_skipped),
        cmocka_unit_test(test_two_kernels_summed),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_run_counters),
        cmocka_unit_test(test_migrate_fixed),
        cmocka_unit_test(test_no_ncu),     /* last: its search of ncu is the process's */
    };
    if (child_dir_make("kvx-counters") != 0)
        return 1;
    return child_dir_done(cmocka_run_group_tests(tests, NULL, NULL));
}
