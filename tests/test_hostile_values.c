/* test_hostile_values: values that reached a launch or a worker changed or
 * unchecked (issue 22, items 3, 4 and 8).  The bad-spec corpus
 * (tests/badspec/120-137) holds each message and position at plan time; here
 * the other paths: `kvx run` (the kernel's parameters read from the PTX as
 * well as the source, on a fake device), the sum of several buffers' sizes
 * where the device's memory is unknown, and the init check of the worker
 * and of resolve being one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sys/stat.h>

/* The shard checks of kvx_child.h are not used here. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "kvx_child.h"
#include "hostile_fixture.h"

#include "host/inputs.h"
#include "resolve/resolve.h"
#include "gen/plan.h"

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Item 3: `thresh: 2^32 + 5` reached the kernel's `int thresh` as 5.  A run
 * refuses it as plan does, before any case runs: exit 2, no database. */
static void test_run_int_range(void **state)
{
    (void)state;
    const char *spec = copy_with("int_range.yaml", "tests/data/specs/tiny.yaml",
                                 "thresh: round(hit_rate * 1000)", "thresh: 2^32 + 5");
    const char *db = tmp_path("int_range.db");
    EXPECT(2, "int_range.yaml:18:17: argument 3 is 4294967301, out of the range of the kernel's "
              "parameter 3 'int thresh' (expected -2147483648 .. 2147483647) (at strategy=naive",
           "run", spec, "--db", db);
    assert_false(exists(db));
}

/* Item 3: a parameter whose C type kvx cannot read (a typedef) is checked at
 * run against the width the PTX gives it: every case is skipped with the
 * message, none is launched with a truncated value. */
static void test_run_ptx_width(void **state)
{
    (void)state;
    copy_with("tiny.cu", "tests/data/specs/tiny.cu", "extern \"C\" __global__ void count(const int *in, "
              "long long n, int thresh", "typedef int my_int;\nextern \"C\" __global__ void count(const "
              "int *in, long long n, my_int thresh");
    const char *spec = copy_with("width.yaml", "tests/data/specs/tiny.yaml",
                                 "thresh: round(hit_rate * 1000)", "thresh: 2^32 + 5");
    EXPECT(0, "40", "plan", spec); /* plan cannot know my_int's width */
    const char *db = tmp_path("width.db");
    EXPECT(1, "40 cases in", "run", spec, "--db", db);
    const char *log = tmp_path("log");
    assert_true(log_has(log, "40 skipped"));
    assert_true(log_has(log, "width.yaml:18:17: argument 3 is 4294967301, out of the range of the "
                             "kernel's parameter 3 (32 bits) (expected -2147483648 .. 4294967295)"));
}

/* Item 4: the sum over buffers wrapped where the device's memory is not
 * known (mem_bytes 0): three u64 buffers of 2^60-1 elements totalled less
 * than 2^63 bytes after wrapping, and planned. */
static void test_buffer_sum(void **state)
{
    (void)state;
    const char *spec = copy_with("sum.yaml", "tests/data/specs/tiny.yaml",
                                 "  out: { type: u32, count: 1, init: 0 }\n",
                                 "  out: { type: u32, count: 1, init: 0 }\n"
                                 "  big1: { type: u64, count: 2^60 - 1, init: 0 }\n"
                                 "  big2: { type: u64, count: 2^60 - 1, init: 0 }\n"
                                 "  big3: { type: u64, count: 2^60 - 1, init: 0 }\n");
    KvxError err = {0};
    DeviceFacts f;
    facts_for_arch("sm_90", &f);
    f.mem_bytes = 0;
    Spec *s = spec_load(spec, &err);
    assert_non_null(s);
    Plan p;
    PlanRef r = {0};
    assert_int_equal(plan_build(s, &f, &p, &err), 0);
    assert_int_equal(plan_ref_build(&p, &r, &err), 0);
    assert_int_equal(resolve_plan(&p, &r, NULL, &err), -1);
    if (!strstr(err.msg, "buffer 'big1' is (count 1152921504606846975 + offset 0) x 8 bytes: the "
                         "buffers need more than 2^63 bytes (at strategy=naive"))
        fail_msg("message: %s", err.msg);
    assert_int_equal(err.line, 15);
    kvx_error_clear(&err);
    plan_free(&p);
    plan_ref_free(&r);
    spec_free(s);
}

/* Item 3: a 16-bit float parameter (the PTX calls it 2 bytes, not a float)
 * was given the integer llround(1.5) in 8 bytes; it takes the value's f16 or
 * bf16 encoding in 2. */
static void test_half_args(void **state)
{
    (void)state;
    copy_with("params3.cu", "tests/badspec/params3.cu", "params3", "params3");
    const char *spec = copy_with("half.yaml", "tests/badspec/137_arg_half_range.yaml",
                                 "args: [out, 70000, 1.5]", "args: [out, 1.5, -2]");
    KvxError err = {0};
    DeviceFacts f;
    facts_for_arch("sm_90", &f);
    Spec *s = spec_load(spec, &err);
    assert_non_null(s);
    Plan p;
    PlanRef r = {0};
    assert_int_equal(plan_build(s, &f, &p, &err), 0);
    assert_int_equal(plan_ref_build(&p, &r, &err), 0);
    Resolver rv = {&p, &r, &s->measure, 0};
    ResolveCase rc = {.point = 0};
    CaseDesc *c = mem_calloc(1, sizeof *c);
    double metrics[3];
    if (resolve_case(&rv, &rc, c, metrics, &err))
        fail_msg("resolve: %s", err.msg);
    assert_int_equal(c->nargs, 3);
    assert_int_equal(c->args[1].size, 2);
    assert_int_equal(c->args[1].bytes[0], 0x00); /* f16 1.5 = 0x3e00, little-endian */
    assert_int_equal(c->args[1].bytes[1], 0x3e);
    assert_int_equal(c->args[2].size, 2);
    assert_int_equal(c->args[2].bytes[0], 0x00); /* bf16 -2 = 0xc000 */
    assert_int_equal(c->args[2].bytes[1], 0xc0);
    free(c);
    plan_free(&p);
    plan_ref_free(&r);
    spec_free(s);
}

/* Item 8: an impossible initialiser failed only in the GPU worker.  A run
 * refuses it before starting one, at the parameter's position. */
static void test_run_init(void **state)
{
    (void)state;
    const char *spec = copy_with("init.yaml", "tests/data/specs/tiny.yaml", "uniform: [0, 999]",
                                 "runs: { length: 0, lo: 0, hi: 999 }");
    const char *db = tmp_path("init.db");
    EXPECT(2, "init.yaml:13:55: buffer 'in': runs: length must be >= 1 (got 0) (at strategy=naive",
           "run", spec, "--db", db);
    assert_false(exists(db));
}

/* Item 8: resolve and the worker share inputs_check, so what resolve lets
 * through fills, and what inputs_fill refuses resolve names: bounds equal as
 * doubles but reversed as the exact integers the spec wrote. */
static void test_init_exact_bounds(void **state)
{
    (void)state;
    InitParams p = {.kind = INIT_UNIFORM, .lo = 0x1p63, .hi = 0x1p63, .exact = 6,
                    .ilo = INT64_MAX, .ihi = INT64_MAX - 1};
    KvxError err = {0};
    InputsAt at;
    int64_t buf[4];
    assert_int_equal(inputs_check(elem_type_find("i64"), &p, &at, &err), -1);
    assert_int_equal(at, INPUTS_AT_LO);
    kvx_error_clear(&err);
    assert_int_equal(inputs_fill(elem_type_find("i64"), buf, 4, &p, 1, &err), -1);
    if (!strstr(err.msg, "uniform: lo (9223372036854775807) > hi (9223372036854775806)"))
        fail_msg("message: %s", err.msg);
    kvx_error_clear(&err);
    p.ihi = INT64_MAX;
    assert_int_equal(inputs_check(elem_type_find("i64"), &p, &at, &err), 0);
    assert_int_equal(inputs_fill(elem_type_find("i64"), buf, 4, &p, 1, &err), 0);
    for (int i = 0; i < 4; i++)
        assert_true(buf[i] == INT64_MAX);
}

int main(void)
{
    unsetenv("SLURM_ARRAY_TASK_ID");
    unsetenv("SLURM_ARRAY_TASK_COUNT");
    setenv("KVX_FAKE_GPUS", "1", 1);
    if (child_dir_make("kvx-hostile-values"))
        return 1;
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    char *cu = file_read(KVX_SOURCE_DIR "/tests/data/specs/tiny.cu", NULL);
    put("tiny.cu", cu, 0);
    free(cu);
    printf("  working in %s\n", tmp);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_int_range),
        cmocka_unit_test(test_buffer_sum),
        cmocka_unit_test(test_half_args),
        cmocka_unit_test(test_run_init),
        cmocka_unit_test(test_init_exact_bounds),
        cmocka_unit_test(test_run_ptx_width),   /* last: it rewrites tiny.cu */
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    return child_dir_done(rc);
}
