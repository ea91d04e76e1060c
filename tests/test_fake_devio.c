/* cpu: outputs compared on the device, through the real worker on the fake
 * driver (issue #24 items 2 and 3; gpu/worker_compare.c).  The kvx binary runs
 * as a child with KVX_FAKE_GPUS=1; the fake's kvx_compare stand-in is the
 * host's twin of the kernel's rule (verify_chunk_host), so this holds the
 * worker's paths, not the kernel (tests/test_gpu_devio.c does that on a GPU).
 *
 * Checked, for each kind of reference kept on the device (a constant, a host
 * reference uploaded once per key, the baseline's output, a reference point's
 * output, the input itself for `out: in`): the correct variant is ok; the planted wrong one (one wrong value,
 * the last of 300K, in the fifth compare chunk) is a mismatch that names that
 * element with what it got and what was expected.  And the profile says how
 * long the GPU waited for host work (cases.profile_json host_wait_ms,
 * runs.profile_json host_wait_s).  Inputs are generated on the device
 * (kvx_fill; the fake runs the host generator's loop from the kernel's plan,
 * and KVX_FAKE_FILL_LOG lists its launches): `in` is generated once on the
 * device for both variants of the point, also where a host reference reads
 * it (the parent computes that reference from a host copy of its own), with
 * the same verdicts; a zipf input too, from the table the worker copies to
 * the device.  An order-free check of integers (`{ref: in, order: any}`) is
 * decided by the fingerprints alone where they agree (no kvx_sort in the
 * log), and a value written in place of another is still a mismatch that
 * lists the values written more or fewer times, from sorted copies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"
#pragma GCC diagnostic pop

#define SPECS KVX_SOURCE_DIR "/tests/data/specs/"

static const char wrong[] = "mismatch: out[307199]: got 8, expected 7 (1 wrong); timed anyway";

/* The status and detail stored for label, "status: detail". */
static char *case_row(const char *db, const char *label)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT status || ': ' || coalesce(detail, '') FROM cases WHERE label = '%s'",
             label);
    int n = 0;
    char **v = db_strings(db, sql, &n);
    if (n != 1)
        fail_msg("%d rows for '%s' in %s (expected 1)", n, label, db);
    char *row = mem_strdup(v[0]);
    strings_free(v, n);
    return row;
}

static void expect_row(const char *db, const char *label, const char *want, const char *log)
{
    char *row = case_row(db, label);
    if (strcmp(row, want) != 0) {
        dump(log);
        fail_msg("%s: '%s' (expected '%s')", label, row, want);
    }
    free(row);
}

/* fake_devio.yaml with its check replaced by check (and extra lines before
 * it), its input of type intype, run as name: the base ok, the mismatch's
 * status and detail want_wrong. */
static void run_check_wrong(const char *name, const char *extra, const char *check, const char *intype,
                            const char *want_wrong)
{
    char *spec = file_read(SPECS "fake_devio.yaml", NULL), *cu = file_read(SPECS "fake.cu", NULL);
    assert_non_null(spec);
    assert_non_null(cu);
    const char *from = "check:\n  out: 7\n", *tfrom = "type: i32";
    char *at = strstr(spec, from), *tat = strstr(spec, tfrom);
    assert_non_null(at);
    assert_true(tat && tat < at);
    StrBuf b;
    sb_init(&b);
    sb_printf(&b, "%.*stype: %s%.*s%scheck:\n  out: %s\n%s", (int)(tat - spec), spec, intype,
              (int)(at - tat - strlen(tfrom)), tat + strlen(tfrom), extra, check, at + strlen(from));
    char file[64], db[64], log[64];
    snprintf(file, sizeof file, "%s.yaml", name);
    snprintf(db, sizeof db, "%s.db", name);
    snprintf(log, sizeof log, "%s.log", name);
    assert_int_equal(file_write_atomic(tmp_path(file), b.p, b.len), 0);
    assert_int_equal(file_write_atomic(tmp_path("fake.cu"), cu, strlen(cu)), 0);
    sb_free(&b);
    free(spec);
    free(cu);
    remove(tmp_path("fills.log"));
    int rc = kvx(tmp_path(log), "run", tmp_path(file), "--db", tmp_path(db), NULL);
    if (rc != 1) {
        dump(tmp_path(log));
        fail_msg("kvx run %s exited %d (expected 1: one mismatch)", file, rc);
    }
    expect_row(tmp_path(db), "strategy=base size=307200", "ok: ", tmp_path(log));
    expect_row(tmp_path(db), "strategy=mismatch size=307200", want_wrong, tmp_path(log));
    assert_int_equal(db_int(tmp_path(db), "SELECT count(*) FROM cases WHERE json_type(profile_json,"
                                          " '$.host_wait_ms') = 'real' AND samples >= 3"),
                     2);
    assert_int_equal(db_int(tmp_path(db), "SELECT json_type(profile_json, '$.host_wait_s') = 'real' FROM runs"),
                     1);
}

/* run_check_wrong, the mismatch the one wrong value named in order. */
static void run_check(const char *name, const char *extra, const char *check, const char *intype)
{
    run_check_wrong(name, extra, check, intype, wrong);
}

/* The fake's kvx_fill launches in the last run_check were want. */
static void expect_fills(const char *want)
{
    char *got = file_read(tmp_path("fills.log"), NULL);
    if (strcmp(got ? got : "", want) != 0)
        fail_msg("kvx_fill launches: '%s' (expected '%s')", got ? got : "", want);
    free(got);
}

static void test_constant(void **state)
{
    (void)state;
    run_check("constant", "", "7", "i32");
    expect_fills("kvx_fill i32 307200\n");
}

/* A host reference that reads `in` (max of 0 and each element: 7): the
 * parent computes it ahead from its own host copy (run/run_ahead.c), and
 * the worker generates `in` on the device. */
static void test_host_reads_input(void **state)
{
    (void)state;
    run_check("hostin", "", "reduce(\"max\", in, size, 0)", "i32");
    expect_fills("kvx_fill i32 307200\n");
}

/* A zipf input (256 ranks): generated on the device too, from the table the
 * worker builds on the host and copies there (the fake's stand-in reads it
 * through the plan's device addresses). */
static void test_zipf_input(void **state)
{
    (void)state;
    run_check("zipf", "", "7", "i32, count: size, init: { zipf: { exponent: 1.1, lo: 0, hi: 255 } } }  #");
    expect_fills("kvx_fill i32 307200\n");
}

static void test_host_reference(void **state)
{
    (void)state;
    run_check("host", "", "tally(size, size, 6)", "i32"); /* 6 + 1 at every element */
}

static void test_baseline(void **state)
{
    (void)state;
    run_check("baseline", "", "baseline()", "i32");
}

static void test_reference_point(void **state)
{
    (void)state;
    run_check("refpoint", "reference: { strategy: base }\n", "reference", "i32");
}

/* `out: in`: the input's device copy is the reference. */
static void test_input(void **state)
{
    (void)state;
    run_check("input", "", "in", "u32");
    expect_fills("kvx_fill u32 307200\n");
}

/* `out: {ref: in, order: any}`: integers compared as multisets by their
 * fingerprints alone (kvx_mset_hash), no sort, where they agree (base); the
 * mismatch strategy writes one 8 in place of a 7, not a permutation, which
 * the sums must tell apart, and only then are both sides sorted, for the
 * listing of the values written more or fewer times. */
static void test_order_free_hash(void **state)
{
    (void)state;
    const char *wrong_set = "mismatch: out: 7 written 307199 times, expected 307200; out: 8 written 1 time,"
                            " expected 0 (2 wrong); timed anyway";
    run_check_wrong("orderfree", "", "{ref: in, order: any}", "u32", wrong_set);
    expect_fills("kvx_fill u32 307200\n"
                 "kvx_mset u32 307200\n"                           /* base: the sums agree */
                 "kvx_mset u32 307200\nkvx_sort u32 307200\nkvx_sort u32 307200\n"); /* mismatch */
}

int main(void)
{
    child_env_clean();
    setenv("KVX_FAKE_GPUS", "1", 1);
    if (child_dir_make("kvx-fake-devio"))
        return 1;
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    setenv("KVX_FAKE_FILL_LOG", tmp_path("fills.log"), 1);
    printf("  working in %s\n", tmp);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant),
        cmocka_unit_test(test_host_reference),
        cmocka_unit_test(test_host_reads_input),
        cmocka_unit_test(test_zipf_input),
        cmocka_unit_test(test_baseline),
        cmocka_unit_test(test_reference_point),
        cmocka_unit_test(test_input),
        cmocka_unit_test(test_order_free_hash),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return child_dir_done(failed);
}
