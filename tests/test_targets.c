/* Planning for a named GPU without it (kvx plan --gpu, gen/facts.c's named
 * targets) and kvx plan --resolve, through the kvx binary as a user runs
 * them: an H200 plan accepts 100 GB and 150 GB of buffers and refuses 151 GB,
 * where the sm_90 default (an H100) refuses 100 GB; the targets carry their
 * parts' figures; --gpu and --arch must agree; --resolve prints each point's
 * launch, buffers, checks and reference launch as resolve makes them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "gen/spec.h"

/* kvx_child.h's database helpers are for the run tests. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"

#define GB_SPEC "tests/data/specs/gb.yaml"
#define H200 "H200-SXM-141GB"

static int setup(void **state)
{
    snprintf(tmp, sizeof tmp, "/tmp/kvx_targets_XXXXXX");
    assert_non_null(mkdtemp(tmp));
    return 0;
}

static int teardown(void **state)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

/* The figures a user would check against the parts' data sheets (and the
 * H200's against what its driver reported to kvx). */
static void test_named_figures(void **state)
{
    DeviceFacts f;
    assert_int_equal(facts_for_gpu(H200, &f), 0);
    assert_string_equal(f.arch, "sm_90");
    assert_int_equal(f.cc, 90);
    assert_int_equal(f.sm_count, 132);
    assert_int_equal(f.l2_bytes, 60LL << 20);
    assert_int_equal(f.mem_bytes, 150109880320LL);
    assert_true(f.peak_gbs > 4800 && f.peak_gbs < 4830);
    assert_int_equal(facts_for_gpu("H100-SXM5-80GB", &f), 0);
    assert_int_equal(f.sm_count, 132);
    assert_int_equal(f.l2_bytes, 50LL << 20);
    assert_int_equal(f.mem_bytes, 81559LL << 20);
    assert_int_equal(facts_for_gpu("A100-SXM4-80GB", &f), 0);
    assert_string_equal(f.arch, "sm_80");
    assert_int_equal(f.sm_count, 108);
    assert_int_equal(f.l2_bytes, 40LL << 20);
    assert_int_equal(f.mem_bytes, 81920LL << 20);
    assert_int_equal(facts_for_gpu("H200", &f), -1);
    int n = 0;
    while (facts_gpu_name(n))
        n++;
    assert_int_equal(n, 3);
}

/* plan --gpu H200 on buffers of `bytes` in all: 0, or 2 with the message. */
static int plan_bytes(const char *target_opt, const char *target, const char *bytes, const char *log)
{
    char where[80];
    snprintf(where, sizeof where, "bytes == %s", bytes);
    return kvx(log, "plan", GB_SPEC, target_opt, target, "--where", where, NULL);
}

static void test_h200_memory(void **state)
{
    const char *log = tmp_path("plan.log");
    assert_int_equal(plan_bytes("--gpu", H200, "100000000000", log), 0);
    assert_true(log_has(log, "target    sm_90 (H200-SXM-141GB named target)"));
    assert_int_equal(plan_bytes("--gpu", H200, "150000000000", log), 0);
    assert_int_equal(plan_bytes("--gpu", H200, "151000000000", log), 2);
    assert_true(log_has(log, "gb.yaml:14:3: the buffers need 151 GB by 'out' (expected at most the 150 GB "
                             "of device memory of H200-SXM-141GB named target) (at bytes=151000000000)"));
    assert_int_equal(plan_bytes("--gpu", H200, "150G", log), 2);
    /* Without --gpu, sm_90 is the nominal H100: 100 GB does not fit. */
    assert_int_equal(plan_bytes("--arch", "sm_90", "100000000000", log), 2);
    assert_true(log_has(log, "of device memory of nominal sm_90 (H100-SXM5-80GB)"));
    assert_int_equal(plan_bytes("--gpu", "H100-SXM5-80GB", "100000000000", log), 2);
    /* The facts reach expressions too: the same spec planned for an A100. */
    assert_int_equal(kvx(log, "plan", GB_SPEC, "--gpu", "A100-SXM4-80GB", "--where", "bytes < 1e11 + 1", NULL),
                     2);
    assert_true(log_has(log, "85.9 GB of device memory of A100-SXM4-80GB named target"));
}

static void test_gpu_usage(void **state)
{
    const char *log = tmp_path("usage.log");
    assert_int_equal(kvx(log, "plan", GB_SPEC, "--gpu", "H200", NULL), 2);
    assert_true(log_has(log, "kvx plan: --gpu: no target named 'H200' (expected H200-SXM-141GB, "
                             "H100-SXM5-80GB or A100-SXM4-80GB)"));
    assert_int_equal(kvx(log, "compile", GB_SPEC, "--gpu", H200, "--arch", "sm_80,sm_90", NULL), 2);
    assert_true(log_has(log, "kvx compile: --gpu H200-SXM-141GB is an sm_90 part: --arch sm_80,sm_90 "
                             "contradicts it (give one or the other)"));
    /* --help names every target. */
    assert_int_equal(kvx(log, "plan", "--help", NULL), 0);
    for (int i = 0; facts_gpu_name(i); i++)
        assert_true(log_has(log, facts_gpu_name(i)));
    /* The same arch given twice is no contradiction. */
    assert_int_equal(kvx(log, "plan", GB_SPEC, "--gpu", H200, "--arch", "sm_90", "--where",
                         "bytes == 100000000000", NULL), 0);
    assert_true(log_has(log, "H200-SXM-141GB named target"));
}

/* A source planned for a named part names it in its Reproduce line (its
 * sm_count is not the nominal sm_90's), and that line writes it again. */
static void test_gen_names_the_gpu(void **state)
{
    const char *log = tmp_path("gen.log");
    char out[600], again[600], cmd[4096];
    snprintf(out, sizeof out, "%s/gen", tmp);
    snprintf(again, sizeof again, "%s/again", tmp);
    assert_int_equal(kvx(log, "gen", "specs/contention.yaml", "--gpu", "A100-SXM4-80GB", "--out", out, NULL), 0);
    const char *file = "contention__strategy-thread_reg__counter-u32__address-const.cu";
    snprintf(cmd, sizeof cmd,
             "grep -q '^// Reproduce .* --where .* --gpu A100-SXM4-80GB --out DIR$' '%s/%s' && "
             "! grep -l '^// Reproduce .* --arch ' '%s'/*.cu", out, file, out);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "cd specs && eval \"" KVX_BINARY " gen $(sed -n 's|^// Reproduce (from the folder of contention.yaml): "
             "kvx gen \\(.*\\) --out DIR$|\\1|p' '%s/%s') --out '%s'\" >/dev/null && cmp '%s/%s' '%s/%s'",
             out, file, again, out, file, again, file);
    assert_int_equal(system(cmd), 0);
}

/* --resolve on tests/data/specs/count.yaml and refcount.yaml: what a user
 * would check of one point against the spec. */
static void test_plan_resolve(void **state)
{
    const char *log = tmp_path("resolve.log");
    assert_int_equal(kvx(log, "plan", "tests/data/specs/count.yaml", "--arch", "sm_90", "--resolve", "--where",
                         "strategy == \"warp\" && counter == \"u64\" && hit_rate == 0.5 && n == 1M", NULL),
                     0);
    assert_true(log_has(log, "strategy=warp counter=u64 hit_rate=0.5 n=1048576\n"
                             "  launch    count grid 4096x1x1 block 256x1x1 smem 0\n"
                             "  buffer    in           i32   1048576 elements +0, 4194304 bytes, "
                             "uniform(0..999)\n"
                             "  buffer    out          u64   1 elements +0, 8 bytes, const(0), checked\n"
                             "  check     out == count_below(in, 500), rtol 0\n"
                             "  metrics   bytes 4194304, atomics 524288, elements 1048576\n"));
    assert_int_equal(kvx(log, "plan", "tests/data/specs/count.yaml", "--arch", "sm_90", NULL), 0);
    assert_false(log_has(log, "  launch "));
    assert_int_equal(kvx(log, "plan", "tests/data/specs/refcount.yaml", "--arch", "sm_90", "--resolve", NULL), 0);
    assert_true(log_has(log, "  check     out == the reference kernel's out, rtol 0\n"
                             "  metrics   bytes 16384, atomics -, elements 4096\n"
                             "  reference count_serial grid 1x1x1 block 1x1x1 smem 0\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_named_figures),
        cmocka_unit_test(test_h200_memory),
        cmocka_unit_test(test_gpu_usage),
        cmocka_unit_test(test_plan_resolve),
        cmocka_unit_test(test_gen_names_the_gpu),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
