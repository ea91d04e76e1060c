/* test_measure_plan: the measurement decisions a worker takes without a GPU
 * (host/measure_plan.h): adaptive warm-up, batch sizes under the budget,
 * the stopping rule of batched samples against one-at-a-time sampling, the
 * statistics of a single sample; and NVML's absent path and the throttle rule
 * (gpu/nvml.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "host/measure_plan.h"
#include "gpu/nvml.h"

static MeasureSettings defaults(void)
{
    MeasureSettings m;
    measure_defaults(&m);
    return m;
}

static void test_warmups_count_or_time(void **state)
{
    (void)state;
    MeasureSettings m = defaults(); /* warmup 1, warmup_ms 10, budget 2000 */
    assert_int_equal(measure_plan_warmups(&m, 0.01, 0.05), 1);
    assert_int_equal(measure_plan_warmups(&m, 50, 50), 1);
    m.warmup = 3;
    /* A small kernel: the count comes first. */
    assert_int_equal(measure_plan_warmups(&m, 0.01, 0.05), 3);
    /* 4 ms: three launches would be 12 ms; the 10 ms target stops it at three
     * (ceil(10 / 4) = 3), at 6 ms after two. */
    assert_int_equal(measure_plan_warmups(&m, 4, 4), 3);
    assert_int_equal(measure_plan_warmups(&m, 6, 6), 2);
    /* A kernel as slow as the target: one. */
    assert_int_equal(measure_plan_warmups(&m, 10, 10), 1);
    assert_int_equal(measure_plan_warmups(&m, 50, 50), 1);
    /* Unknown launch time: the count. */
    assert_int_equal(measure_plan_warmups(&m, NAN, 0), 3);
    /* warmup_ms 0: count only. */
    m.warmup_ms = 0;
    assert_int_equal(measure_plan_warmups(&m, 50, 50), 3);
    m.warmup = 0;
    assert_int_equal(measure_plan_warmups(&m, 0.01, 0.01), 0);
}

/* A verified launch that spent the budget is the case's one sample; not
 * one under it, nor without a budget, nor one whose time is unknown. */
static void test_verified_is_sample(void **state)
{
    (void)state;
    MeasureSettings m = defaults();     /* budget 2000 */
    assert_true(measure_plan_verified_is_sample(&m, 2000, 2001));
    assert_true(measure_plan_verified_is_sample(&m, 1990, 2000));
    assert_false(measure_plan_verified_is_sample(&m, 1500, 1600));
    assert_false(measure_plan_verified_is_sample(&m, NAN, 2500));
    m.budget_ms = 0;
    assert_false(measure_plan_verified_is_sample(&m, 2000, 2001));
}

static void test_warmups_budget(void **state)
{
    (void)state;
    MeasureSettings m = defaults();
    m.warmup = 3;
    /* A 2-second kernel under the 2-second budget: its verified launch and one
     * sample, no warm-up (3 launches at most in all). */
    assert_int_equal(measure_plan_warmups(&m, 2000, 2001), 0);
    /* 1.5 s: room for one sample after the verified launch, not a warm-up too. */
    assert_int_equal(measure_plan_warmups(&m, 1500, 1500), 0);
    /* 600 ms: the budget fits 2 more launches: one warm-up and a sample. */
    m.warmup_ms = 10000;
    assert_int_equal(measure_plan_warmups(&m, 600, 600), 1);
    /* Budget spent whatever the kernel. */
    assert_int_equal(measure_plan_warmups(&m, 0.01, 2500), 0);
    /* No budget: the count and the time target alone. */
    m.budget_ms = 0;
    assert_int_equal(measure_plan_warmups(&m, 5000, 5000), 2);
}

static void test_batches(void **state)
{
    (void)state;
    MeasureSettings m = defaults(); /* 10..200 samples, batch 8 */
    /* min_samples first, in one batch; then sample_batch at a time. */
    assert_int_equal(measure_plan_batch(&m, 0, 0.02, 1, 64), 10);
    assert_int_equal(measure_plan_batch(&m, 10, 0.02, 2, 64), 8);
    /* Never past max_samples, nor the cap (events). */
    assert_int_equal(measure_plan_batch(&m, 195, 0.02, 5, 64), 5);
    assert_int_equal(measure_plan_batch(&m, 200, 0.02, 5, 64), 0);
    m.sample_batch = 100;
    assert_int_equal(measure_plan_batch(&m, 10, 0.02, 5, 64), 64);
    /* Kernel Tuner's settings: 7 samples in one batch, then stop. */
    MeasureSettings kt = defaults();
    kt.min_samples = kt.max_samples = 7;
    assert_int_equal(measure_plan_batch(&kt, 0, 0.02, 1, 64), 7);
    assert_int_equal(measure_plan_batch(&kt, 7, 0.02, 2, 64), 0);
    /* The budget: what is predicted to fit, at least one; none once spent. */
    m = defaults();
    assert_int_equal(measure_plan_batch(&m, 0, 300, 500, 64), 5);
    assert_int_equal(measure_plan_batch(&m, 0, 1900, 2000, 64), 1);
    assert_int_equal(measure_plan_batch(&m, 0, 2000, 2001, 64), 1); /* always one sample */
    assert_int_equal(measure_plan_batch(&m, 1, 2000, 4001, 64), 0);
    assert_int_equal(measure_plan_batch(&m, 3, 100, 1950, 64), 1);
}

/* Batched sampling keeps the statistics of one-at-a-time sampling: the stop
 * is where the sequential rule would have stopped. */
static void test_stop_at(void **state)
{
    (void)state;
    MeasureSettings m = defaults();
    m.min_samples = 3;
    double t[16] = {1.0, 1.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, tmp[16];
    /* Spread at 3 samples (1, 1, 1.5): p25 1, p75 1.25: 25% > 2%; at 4: (1, 1,
     * 1, 1.5): p75 = 1.125: 12.5%; at 5: p75 = 1: 0. */
    assert_int_equal(measure_plan_stop_at(&m, t, 0, 8, tmp), 5);
    /* Not before `from`, nor before min_samples. */
    assert_int_equal(measure_plan_stop_at(&m, t, 5, 8, tmp), 6);
    m.min_samples = 7;
    assert_int_equal(measure_plan_stop_at(&m, t, 0, 8, tmp), 7);
    /* Never met: 0. */
    double noisy[6] = {1, 2, 1, 2, 1, 2};
    m.min_samples = 2;
    assert_int_equal(measure_plan_stop_at(&m, noisy, 0, 6, tmp), 0);
}

static void test_single_sample_stats(void **state)
{
    (void)state;
    CaseResult r;
    memset(&r, 0, sizeof r);
    double t[1] = {2000.5}, tmp[1];
    measure_plan_stats(t, 1, tmp, &r);
    assert_int_equal(r.samples, 1);
    assert_true(r.median_ms == 2000.5 && r.min_ms == 2000.5 && r.max_ms == 2000.5);
    assert_true(isnan(r.noise)); /* one sample: the spread is unknown */
    assert_true(r.stdev_ms == 0);
    double u[4] = {1, 3, 2, 4}, tmp4[4];
    measure_plan_stats(u, 4, tmp4, &r);
    assert_true(r.median_ms == 2.5 && r.mean_ms == 2.5 && r.min_ms == 1 && r.max_ms == 4);
    assert_true(fabs(r.noise - 0.6) < 1e-12); /* p75 3.25 - p25 1.75 over 2.5 */
}

static void test_nvml_absent(void **state)
{
    (void)state;
    Nvml n;
    assert_int_equal(nvml_open(&n, "libkvx-no-such-nvml.so.1", "GPU-0", "0000:00:00.0"), -1);
    assert_non_null(strstr(n.note, "no NVML (libkvx-no-such-nvml.so.1 not found)"));
    int sm = 7, mem = 7;
    assert_int_equal(nvml_clocks(&n, &sm, &mem), -1);
    assert_int_equal(sm, 0);
    assert_int_equal(mem, 0);
    nvml_close(&n);
    nvml_close(NULL);
    /* A library that is not NVML. */
    assert_int_equal(nvml_open(&n, "libm.so.6", NULL, NULL), -1);
    assert_non_null(strstr(n.note, "has no nvmlInit_v2"));
}

static void test_throttled(void **state)
{
    (void)state;
    assert_int_equal(nvml_throttled(1980, 1980), 0);
    assert_int_equal(nvml_throttled(1783, 1980), 0);
    assert_int_equal(nvml_throttled(1781, 1980), 1);  /* below 90% of 1980 = 1782 */
    assert_int_equal(nvml_throttled(0, 1980), 0);     /* unknown */
    assert_int_equal(nvml_throttled(1000, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warmups_count_or_time),
        cmocka_unit_test(test_warmups_budget),
        cmocka_unit_test(test_verified_is_sample),
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_stop_at),
        cmocka_unit_test(test_single_sample_stats),
        cmocka_unit_test(test_nvml_absent),
        cmocka_unit_test(test_throttled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
