/* test_doc_claims: statements of docs/ that a user relies on and no other
 * test holds, each checked as the user would:
 * - inspect.md: the inspect.KEY list (core/values.h INSPECT_KEYS) is exactly
 *   the facts inspect_to_json writes, and a spec's report refuses another;
 *   a vectorised copy's 16-byte loads and stores are named and tabulate;
 * - spec.md: `hot` draws each element on its own (the share of v is f in
 *   expectation, spread through the buffer), `runs` gives elements kL ..
 *   kL+L-1 one value drawn per run, the last run cut at the end;
 * - slurm.md: a spec reached by another path, from another directory, and a
 *   run under --where store the same case keys (on the fake device);
 * - cli.md: a usage error is `kvx VERB: ...` with the usage line; another
 *   error is one line `kvx: ...` without it;
 * - results-schema.md: its pandas example runs on `kvx export` of a
 *   --counters run and shows the counters;
 * - README.md: its plan of contention.yaml is kvx plan's, and its gen and
 *   compile counts are that plan's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile/inspect.h"
#include "core/values.h"
#include "host/inputs.h"
#include "tests/python_tools.h"

/* kvx_child.h's shard and merge helpers are test_run_fake's. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"

/* ---- inspect.KEY -------------------------------------------------------------------- */

static void test_inspect_keys_in_step(void **state)
{
    InspectFacts *f = mem_calloc(1, sizeof *f);
    f->has_ptx = f->has_sass = 1;
    StrBuf json;
    sb_init(&json);
    inspect_to_json(f, &json);
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                         "SELECT CASE WHEN p = '$' THEN key ELSE substr(p, 3) || '.' || key END "
                         "FROM (SELECT replace(path, '\"', '') AS p, key, type FROM json_tree(?1)) "
                         "WHERE type NOT IN ('object', 'array') AND p NOT LIKE '$.sites%' AND p NOT LIKE '%.kinds'",
                         -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, sb_str(&json), -1, SQLITE_STATIC);
    int written = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *key = (const char *)sqlite3_column_text(st, 0);
        if (!values_inspect_valid(key))
            fail_msg("inspect_to_json writes '%s', which INSPECT_KEYS does not list", key);
        written++;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    int listed = 0;
    while (inspect_keys[listed])
        listed++;
    assert_int_equal(written, listed);
    assert_false(values_inspect_valid("bogus"));
    assert_false(values_inspect_valid("atom"));
    sb_free(&json);
    free(f);
}

/* inspect.md: `kvx inspect` of a vectorised copy names its 16-byte loads and
 * stores (from the PTX here, where no nvdisasm is; LDG.E.128/STG.E.128 from
 * the SASS where one is), and kvx table --value inspect.mem.* tabulates them
 * from a run's stored facts (a fake-device run: the facts are the compile's). */
static void test_inspect_memory_widths(void **state)
{
    const char *log = tmp_path("inspect.log"), *db = tmp_path("copy.db");
    const char *spec = KVX_SOURCE_DIR "/tests/data/specs/copy.yaml";
    assert_int_equal(kvx(log, "inspect", spec, "--arch", "sm_90", "--where", "access == \"vec4\"", NULL), 0);
    if (!log_has(log, "access=vec4 [sm_90]: ") ||
        !(log_has(log, "    memory: PTX: 1 ld.global.nc.v4.u32 (16 B), 1 st.global.v4.u32 (16 B)\n") ||
          log_has(log, "    memory: SASS: 1 LDG.E.128 (16 B), 1 STG.E.128 (16 B)\n"))) {
        dump(log);
        fail_msg("kvx inspect of the float4 copy does not name its 16-byte load and store");
    }
    kvx(log, "run", spec, "--db", db, NULL);      /* the fake has no copy kernel: launch errors */
    assert_int_equal(kvx(log, "table", "--db", db, "--rows", "access", "--cols", "misalign", "--value",
                         "inspect.mem.st_global_bytes", "--format", "csv", NULL), 0);
    char *text = file_read(log, NULL);
    assert_non_null(text);
    if (!strstr(text, "access,0,2\nscalar,4,4\nvec2,8,\nvec4,16,\nwrong,4,4\n"))
        fail_msg("kvx table --value inspect.mem.st_global_bytes:\n%s", text);
    free(text);
    assert_int_equal(kvx(log, "table", "--db", db, "--value", "inspect.mem.bogus", NULL), 2);
    assert_true(log_has(log, "unknown inspect fact 'inspect.mem.bogus'"));
}

/* ---- hot and runs ------------------------------------------------------------------ */

enum { N = 1 << 20 };

static uint32_t *filled(InitParams p, uint64_t n)
{
    uint32_t *v = mem_alloc(sizeof *v * n);
    KvxError err = {0};
    if (inputs_fill(elem_type_find("u32"), v, n, &p, 2, &err)) {
        kvx_error_print(&err, stderr);
        fail_msg("inputs_fill failed");
    }
    return v;
}

static void test_hot_is_drawn_per_element(void **state)
{
    InitParams p = {.kind = INIT_HOT, .fraction = 0.25, .value = 5000, .lo = 0, .hi = 999, .seed = 7};
    uint32_t *v = filled(p, N);
    long hot = 0, first_half = 0;
    for (long i = 0; i < N; i++)
        if (v[i] == 5000)
            hot++, first_half += i < N / 2;
        else
            assert_true(v[i] <= 999);
    /* Binomial(N, 0.25): sd 443.  Not the exact share, and spread out. */
    double expect = 0.25 * N, sd = sqrt(N * 0.25 * 0.75);
    assert_true(fabs((double)hot - expect) < 5 * sd);
    assert_int_not_equal(hot, N / 4);
    assert_true(fabs((double)first_half - hot / 2.0) < 5 * sqrt(hot * 0.25));
    free(v);
}

static void test_runs_share_a_value(void **state)
{
    enum { L = 16, COUNT = 1000 };   /* 62 whole runs and one of 8 */
    InitParams p = {.kind = INIT_RUNS, .length = L, .lo = 0, .hi = 1 << 30, .seed = 7};
    uint32_t *v = filled(p, COUNT);
    int changes = 0;
    for (int i = 1; i < COUNT; i++) {
        if (i % L)
            assert_int_equal(v[i], v[i - 1]);
        else
            changes += v[i] != v[i - 1];
    }
    assert_int_equal(changes, COUNT / L);   /* 2^30 values: no two runs side by side drew one */
    free(v);
}

/* ---- case keys: path and --where ---------------------------------------------------- */

static char **keys_of(const char *db, int *n)
{
    return db_strings(db, "SELECT key FROM cases ORDER BY key", n);
}

static void test_keys_ignore_path_and_where(void **state)
{
    const char *log = tmp_path("keys.log");
    char where_dir[600], cwd[1024];
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(where_dir, sizeof where_dir, "%s/elsewhere", tmp);
    assert_int_equal(file_mkdir_p(where_dir), 0);
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "cp tests/data/specs/fake.yaml tests/data/specs/fake.cu '%s/'", where_dir);
    assert_int_equal(system(cmd), 0);
    const char *base = "strategy == \"base\"";
    assert_int_equal(kvx(log, "run", "tests/data/specs/fake.yaml", "--db", tmp_path("a.db"), "--where", base, NULL),
                     0);
    assert_int_equal(chdir(tmp), 0);
    int rc = kvx(log, "run", "elsewhere/fake.yaml", "--db", tmp_path("b.db"), "--where", base, NULL);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(kvx(log, "run", "tests/data/specs/fake.yaml", "--db", tmp_path("c.db"), "--where",
                         "strategy == \"base\" && size == 1K", NULL), 0);
    int na, nb, nc;
    char **a = keys_of(tmp_path("a.db"), &na), **b = keys_of(tmp_path("b.db"), &nb),
         **c = keys_of(tmp_path("c.db"), &nc);
    assert_int_equal(na, 6);
    assert_int_equal(nb, na);
    for (int i = 0; i < na; i++)
        assert_string_equal(a[i], b[i]);
    assert_int_equal(nc, 2);
    for (int i = 0; i < nc; i++)
        assert_true(strings_have(a, na, c[i]));
    strings_free(a, na);
    strings_free(b, nb);
    strings_free(c, nc);
}

/* ---- the pandas example ----------------------------------------------------------------- */

/* The python block of docs/results-schema.md between "<!-- NAME: begin -->"
 * and "<!-- NAME: end -->", written to path. */
static void doc_block(const char *name, const char *path)
{
    char *doc = file_read(KVX_SOURCE_DIR "/docs/results-schema.md", NULL);
    assert_non_null(doc);
    char mark[128];
    snprintf(mark, sizeof mark, "<!-- %s: begin -->\n```python\n", name);
    char *begin = strstr(doc, mark);
    if (!begin)
        fail_msg("docs/results-schema.md has no block '%s'", mark);
    begin = strchr(strchr(begin, '\n') + 1, '\n') + 1;
    snprintf(mark, sizeof mark, "```\n<!-- %s: end -->", name);
    char *end = strstr(begin, mark);
    assert_non_null(end);
    assert_int_equal(file_write_atomic(path, begin, (size_t)(end - begin)), 0);
    free(doc);
}

/* docs/results-schema.md's read_sql block, run as written from a directory
 * whose results/kvx.db is a committed database (results/h200/contention.db,
 * made read-only): the pivot comes out, the file is as it was and nothing
 * lies beside it (no -wal, -shm or -journal). */
static void test_read_sql_example(void **state)
{
    if (!python_has("pandas", "the read_sql example of docs/results-schema.md"))
        return;
    char dir[600], cmd[2000];
    snprintf(dir, sizeof dir, "%s/ro/results", tmp);
    assert_int_equal(file_mkdir_p(dir), 0);
    doc_block("read_sql example", tmp_path("ro/read_sql.py"));
    snprintf(cmd, sizeof cmd, "cp results/h200/contention.db '%s/kvx.db' && chmod 0444 '%s/kvx.db'", dir, dir);
    assert_int_equal(system(cmd), 0);
    const char *log = tmp_path("read_sql.log");
    snprintf(cmd, sizeof cmd, "cd '%s/ro' && python3 read_sql.py > '%s' 2>&1", tmp, log);
    if (system(cmd) != 0) {
        dump(log);
        fail_msg("the read_sql example failed");
    }
    char *out = file_read(log, NULL);
    assert_non_null(out);
    assert_non_null(strstr(out, "strategy"));
    assert_non_null(strstr(out, "block_smem_warp"));
    assert_non_null(strstr(out, "hit_rate"));
    free(out);
    snprintf(cmd, sizeof cmd, "cmp -s results/h200/contention.db '%s/kvx.db'", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s')\" = kvx.db", dir);
    if (system(cmd) != 0)
        fail_msg("reading %s/kvx.db left files beside it", dir);
}

/* docs/results-schema.md's pandas block, run as written on `kvx export` of a
 * fake-device run with --counters (tests/data/ncu/fake_ncu.sh stands in for
 * ncu: row i of a batch gets (i + 1) * 1024 for every metric): the pivot, the
 * counters and the failures come out.  Skipped, saying so, where python3 or
 * pandas is missing. */
static void test_pandas_example(void **state)
{
    if (!python_has("pandas", "the example of docs/results-schema.md"))
        return;
    doc_block("pandas example", tmp_path("example.py"));
    const char *db = tmp_path("counters.db"), *log = tmp_path("pandas.log");
    setenv("KVX_NCU", KVX_SOURCE_DIR "/tests/data/ncu/fake_ncu.sh", 1);
    setenv("FAKE_NCU_KERNEL", "fill", 1);
    int rc = kvx(log, "run", KVX_SOURCE_DIR "/tests/data/specs/fake.yaml", "--db", db, "--counters", "--where",
                 "strategy == \"base\" || strategy == \"alt\" || strategy == \"mismatch\"", NULL);
    unsetenv("KVX_NCU");
    if (rc != 1 || !log_has(log, "counters 18 of 18 cases profiled"))
        fail_msg("kvx run --counters exited %d (expected 1: the mismatch cases)", rc);
    assert_int_equal(kvx(log, "export", "--db", db, "--format", "csv", "--out", tmp_path("cases.csv"), NULL), 0);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cd '%s' && python3 example.py > '%s' 2>&1", tmp_path(""), log);
    if (system(cmd) != 0) {
        dump(log);
        fail_msg("the pandas example failed");
    }
    char *out = file_read(log, NULL);
    assert_non_null(out);
    /* The pivot: strategies across, (size, mode) down. */
    assert_non_null(strstr(out, "strategy"));
    assert_non_null(strstr(out, "alt"));
    assert_non_null(strstr(out, "4096 a"));
    /* Every counter column is there, with the fake ncu's numbers. */
    assert_non_null(strstr(out, "l2_atom_requests  l2_red_requests  dram_read_bytes  dram_write_bytes"));
    assert_non_null(strstr(out, "strategy=base size=4096 mode=a              1024             1024"
                                "             1024              1024\n"));
    assert_null(strstr(out, "NaN"));
    /* The failures with their detail. */
    assert_non_null(strstr(out, "strategy=mismatch size=4096 mode=a mismatch out[4095]: got 8, expected 7"));
    free(out);
}

/* ---- the README's walk through contention.yaml ------------------------------------------ */

/* The README's `kvx plan specs/contention.yaml` block, from its axes line to
 * its sources line, is what kvx plan prints, and the counts of its gen and
 * compile blocks are that plan's: N sources, 2N compiles (two archs). */
static void test_readme_counts(void **state)
{
    const char *log = tmp_path("readme_plan.log");
    assert_int_equal(kvx(log, "plan", "specs/contention.yaml", NULL), 0);
    char *plan = file_read(log, NULL), *readme = file_read(KVX_SOURCE_DIR "/README.md", NULL);
    assert_true(plan && readme);
    const char *from = strstr(readme, "\naxes      (declaration order"), *to = from ? strstr(from, "\nsources   ") : NULL;
    assert_true(from && to);
    to = strchr(to + 1, '\n');
    char block[4096];
    assert_true((size_t)(to - from) < sizeof block);
    memcpy(block, from + 1, (size_t)(to - from)), block[to - from] = '\0';
    if (!strstr(plan, block))
        fail_msg("README's plan of contention.yaml:\n%s\nis not what kvx plan prints:\n%s", block, plan);
    int n = 0;
    assert_int_equal(sscanf(strstr(plan, "\nsources   ") + 1, "sources %d distinct", &n), 1);
    char want[128];
    snprintf(want, sizeof want, "kvx gen: %d sources and index.tsv", n);
    assert_non_null(strstr(readme, want));
    snprintf(want, sizeof want, "\nsm_80: %d sources (specs/contention.yaml)", n);
    assert_non_null(strstr(readme, want));
    int lines = 0;
    for (const char *p = strstr(readme, " compiles, "); p; p = strstr(p + 1, " compiles, ")) {
        const char *b = p;
        while (b > readme && b[-1] != '\n')
            b--;
        if (atoi(b) != 2 * n)
            fail_msg("README: '%.40s' (the plan has %d sources, two archs: %d compiles)", b, n, 2 * n);
        lines++;
    }
    assert_int_equal(lines, 2);
    free(plan), free(readme);
}

/* ---- error lines ---------------------------------------------------------------------- */

static void test_error_prefixes(void **state)
{
    const char *log = tmp_path("err.log");
    assert_int_equal(kvx(log, "table", "--db", tmp_path("none.db"), NULL), 2);
    char *text = file_read(log, NULL);
    assert_non_null(text);
    static const char none[] = "kvx: no results database at '";
    if (strncmp(text, none, strlen(none)))
        fail_msg("kvx table --db NONE said: %s", text);
    assert_null(strstr(text, "usage:"));
    assert_int_equal(strchr(text, '\n')[1], '\0');
    free(text);
    assert_int_equal(kvx(log, "table", "--bogus", NULL), 2);
    text = file_read(log, NULL);
    static const char usage[] = "kvx table: unknown option '--bogus'\nusage: kvx table";
    if (strncmp(text, usage, strlen(usage)))
        fail_msg("kvx table --bogus said: %s", text);
    free(text);
}

int main(void)
{
    child_env_clean();
    setenv("KVX_FAKE_GPUS", "1", 1);
    if (child_dir_make("kvx-doc-claims"))
        return 1;
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inspect_keys_in_step),
        cmocka_unit_test(test_inspect_memory_widths),
        cmocka_unit_test(test_hot_is_drawn_per_element),
        cmocka_unit_test(test_runs_share_a_value),
        cmocka_unit_test(test_keys_ignore_path_and_where),
        cmocka_unit_test(test_error_prefixes),
        cmocka_unit_test(test_readme_counts),
        cmocka_unit_test(test_pandas_example),
        cmocka_unit_test(test_read_sql_example),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return child_dir_done(failed);
}
