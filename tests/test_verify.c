/* Unit tests of host/verify.c: every reference on small hand-computed cases
 * (the counting ones in tests/test_verify_count.c),
 * wrap-around of integer outputs, float NaN rules, the inc/dec closed form
 * against the atomics' own definition, verify_compare's reports, and every
 * reference on 2^22 elements giving the same bits on 1, 2 and 7 threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/verify_fixture.h"
#include "tests/bounds.h"

static void test_histogram_letters(void **state)
{
    (void)state;
    const char *s = "hello world zzz";
    Expected e;
    /* 26 letters in 7 bins: width ceil(26/7) = 4, the last bin holds y and z */
    RefArg a[4] = {B("u8", s, strlen(s)), I(7), I('a'), I('z')};
    ref(&e, "histogram", a, 4, "u32", 7);
    int64_t want[7] = {1 /* d */, 2 /* e h */, 3 /* l l l */, 2 /* o o */, 1 /* r */,
                       1 /* w */, 3 /* z z z */};
    for (int j = 0; j < 7; j++)
        if (U(&e, j) != want[j])
            fail_msg("bin %d: %lld, expected %lld", j, (long long)U(&e, j), (long long)want[j]);
    verify_expected_free(&e);
    ref_fails("histogram", a, 4, "u32", 8, "the reference has 7 elements but the output buffer has 8");
    /* floats: values outside [lo, hi] (and NaN) are ignored */
    double d[] = {-0.5, 0, 3.9, 4, 9.5, 10, 10.5, NAN};
    RefArg b[4] = {B("f64", d, 8), I(3), I(0), I(10)};
    ref(&e, "histogram", b, 4, "i64", 3); /* width ceil(11/3) = 4 */
    assert_int_equal(U(&e, 0), 2);
    assert_int_equal(U(&e, 1), 1);
    assert_int_equal(U(&e, 2), 2);
    verify_expected_free(&e);
}

static void test_sum_dot(void **state)
{
    (void)state;
    float f[] = {1.5f, 2.5f, -1};
    Expected e;
    RefArg a[1] = {B("f32", f, 3)};
    ref(&e, "sum", a, 1, "f32", 1);
    assert_true(e.is_float && e.f[0] == 3.0);
    verify_expected_free(&e);
    ref_fails("sum", a, 1, "u32", 1, "f32 buffer reduced into a u32 output");

    uint8_t u[] = {200, 100};
    RefArg b[1] = {B("u8", u, 2)};
    ref(&e, "sum", b, 1, "u8", 1);
    assert_int_equal(U(&e, 0), 44); /* 300 wrapped to u8 */
    verify_expected_free(&e);
    ref(&e, "sum", b, 1, "u32", 1);
    assert_int_equal(U(&e, 0), 300);
    verify_expected_free(&e);
    ref(&e, "sum", b, 1, "i8", 1);
    assert_int_equal(U(&e, 0), 44);
    verify_expected_free(&e);
    int8_t s8[] = {100, 100};
    RefArg b2[1] = {B("i8", s8, 2)};
    ref(&e, "sum", b2, 1, "i8", 1);
    assert_int_equal(U(&e, 0), -56); /* 200 wrapped to i8 */
    verify_expected_free(&e);

    /* compensated: 1 + 2^60 terms of 1e-16-ish cancel exactly */
    double big[] = {1e16, 1, -1e16, 1};
    RefArg c[1] = {B("f64", big, 4)};
    ref(&e, "sum", c, 1, "f64", 1);
    assert_true(e.f[0] == 2);
    verify_expected_free(&e);

    double x[] = {1, 2, 3}, y[] = {4, 5, 6};
    RefArg d[2] = {B("f64", x, 3), B("f64", y, 3)};
    ref(&e, "dot", d, 2, "f64", 1);
    assert_true(e.f[0] == 32);
    verify_expected_free(&e);
    int32_t xi[] = {-1, 2, 3}, yi[] = {4, 5, 6};
    RefArg g[2] = {B("i32", xi, 3), B("i32", yi, 3)};
    ref(&e, "dot", g, 2, "i64", 1);
    assert_int_equal(U(&e, 0), 24);
    verify_expected_free(&e);
    RefArg h[2] = {B("i32", xi, 3), B("i32", yi, 2)};
    ref_fails("dot", h, 2, "i64", 1, "a has 3 elements, b 2");
}

static void test_sum_by_index_add(void **state)
{
    (void)state;
    float v[] = {1, 2, 3, 4};
    uint32_t k[] = {1, 0, 1, 1};
    Expected e;
    RefArg a[3] = {B("f32", v, 4), B("u32", k, 4), I(2)};
    ref(&e, "sum_by", a, 3, "f32", 2);
    assert_true(e.f[0] == 2 && e.f[1] == 8);
    verify_expected_free(&e);

    int32_t idx[] = {2, 0, 2};
    int32_t vals[] = {1, 2, 3, 4, 5, 6};
    RefArg b[4] = {B("i32", idx, 3), B("i32", vals, 6), I(3), I(2)};
    ref(&e, "index_add", b, 4, "i32", 6);
    int64_t want[6] = {3, 4, 0, 0, 6, 8};
    for (int j = 0; j < 6; j++)
        assert_int_equal(U(&e, j), want[j]);
    verify_expected_free(&e);
    RefArg c[4] = {B("i32", idx, 3), B("i32", vals, 5), I(3), I(2)};
    ref_fails("index_add", c, 4, "i32", 6, "vals has 5 elements");
}

static void test_reduce_int(void **state)
{
    (void)state;
    int32_t v[] = {5, -3, 7, -9, 2, 4}; /* j = 0: 5 7 2; j = 1: -3 -9 4 */
    struct { const char *op; const char *out; int64_t init, w0, w1; } cases[] = {
        {"add", "i32", 0, 14, -8},
        {"sub", "i32", 0, -14, 8},
        {"max", "i32", -100, 7, 4},
        {"min", "i32", 100, 2, -9},
        {"max", "u32", 0, 7, 4294967293}, /* -3 is 2^32 - 3 unsigned */
        {"min", "u32", -1, 2, 4},
        {"and", "i32", -1, 5 & 7 & 2, -3 & -9 & 4},
        {"or", "i32", 0, 5 | 7 | 2, -3 | -9 | 4},
        {"xor", "i32", 0, 5 ^ 7 ^ 2, -3 ^ -9 ^ 4},
        {"add", "u8", 250, (250 + 14) % 256, (250 - 8) % 256},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Expected e;
        RefArg a[4] = {S(cases[i].op), B("i32", v, 6), I(2), I(cases[i].init)};
        ref(&e, "reduce", a, 4, cases[i].out, 2);
        const ElemType *t = T(cases[i].out);
        int64_t g0 = t->is_signed ? U(&e, 0) : (int64_t)(e.u[0] & 0xffffffff);
        int64_t g1 = t->is_signed ? U(&e, 1) : (int64_t)(e.u[1] & 0xffffffff);
        if (g0 != cases[i].w0 || g1 != cases[i].w1)
            fail_msg("reduce %s into %s: [%lld, %lld], expected [%lld, %lld]", cases[i].op,
                     cases[i].out, (long long)g0, (long long)g1, (long long)cases[i].w0,
                     (long long)cases[i].w1);
        verify_expected_free(&e);
    }
    RefArg a[4] = {S("nanmax"), B("i32", v, 6), I(2), I(0)};
    ref_fails("reduce", a, 4, "i32", 2, "not defined for a i32 output");
    RefArg b[4] = {S("and"), B("i32", v, 6), I(2), I(0)};
    ref_fails("reduce", b, 4, "f32", 2, "expected one of: add sub max min");
}

static void test_reduce_float_nan(void **state)
{
    (void)state;
    float v[] = {NAN, 1, NAN, NAN, NAN, -2}; /* j = 0: all NaN; j = 1: 1 NaN -2 */
    struct { const char *op; double init, w0, w1; } cases[] = {
        {"max", -INFINITY, -INFINITY, 1},   /* maxNum: NaN ignored */
        {"max", NAN, NAN, 1},               /* NaN only when init and all are NaN */
        {"nanmax", NAN, NAN, 1},
        {"min", INFINITY, INFINITY, -2},
        {"nanmin", 0, 0, -2},
        {"maximum", -INFINITY, NAN, NAN},   /* IEEE 754-2019: NaN propagates */
        {"minimum", INFINITY, NAN, NAN},
        {"add", 0, NAN, NAN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Expected e;
        RefArg a[4] = {S(cases[i].op), B("f32", v, 6), I(2), F(cases[i].init)};
        ref(&e, "reduce", a, 4, "f32", 2);
        double w[2] = {cases[i].w0, cases[i].w1};
        for (int j = 0; j < 2; j++)
            if (!(e.f[j] == w[j] || (isnan(e.f[j]) && isnan(w[j]))))
                fail_msg("reduce %s init %g: [%d] = %g, expected %g", cases[i].op,
                         cases[i].init, j, e.f[j], w[j]);
        verify_expected_free(&e);
    }
    float ok[] = {3, 1, 2, 5}; /* j = 0: 3 2; j = 1: 1 5 */
    Expected e;
    RefArg a[4] = {S("maximum"), B("f32", ok, 4), I(2), F(0)};
    ref(&e, "reduce", a, 4, "f64", 2);
    assert_true(e.f[0] == 3 && e.f[1] == 5);
    verify_expected_free(&e);
}

static void test_reduce_exch(void **state)
{
    (void)state;
    uint32_t v[] = {10, 20, 30, 40}; /* j = 0: 10 30; j = 1: 20 40 */
    Expected e;
    RefArg a[4] = {S("exch"), B("u32", v, 4), I(2), I(7)};
    ref(&e, "reduce", a, 4, "u32", 2);
    assert_int_equal(e.kind, EXPECT_MEMBER);
    VerifyReport r;
    uint32_t good1[] = {30, 40}, good2[] = {7, 20}, bad[] = {20, 40};
    verify_compare(&e, T("u32"), good1, "out", 0, &r);
    assert_true(r.ok);
    verify_compare(&e, T("u32"), good2, "out", 0, &r);
    assert_true(r.ok);
    verify_compare(&e, T("u32"), bad, "out", 0, &r);
    assert_false(r.ok);
    assert_int_equal(r.nmismatch, 1);
    assert_string_equal(r.first, "out[0]: got 20, not one of the values written there or init");
    verify_expected_free(&e);

    /* One type in and out (typed rows), a short last row: j = 0 takes 1, -0
     * and 7, j = 1 takes NaN and 5; a NaN matches a NaN, 0 matches -0. */
    float fv[] = {1, NAN, -0.0f, 5, 7};
    RefArg c[4] = {S("exch"), B("f32", fv, 5), I(2), F(9)};
    ref(&e, "reduce", c, 4, "f32", 2);
    float f_ok[][2] = {{0.0f, NAN}, {7, 5}, {9, 9}, {1, 9}}, f_bad[] = {5, 7};
    for (int i = 0; i < 4; i++) {
        verify_compare(&e, T("f32"), f_ok[i], "out", 0, &r);
        assert_true(r.ok);
    }
    verify_compare(&e, T("f32"), f_bad, "out", 0, &r);
    assert_false(r.ok);
    assert_int_equal(r.nmismatch, 2);
    verify_expected_free(&e);

    /* float values land rounded to the output type */
    double d[] = {0.1, 0.2};
    RefArg b[4] = {S("exch"), B("f64", d, 2), I(1), F(0.3)};
    ref(&e, "reduce", b, 4, "f16", 1);
    uint16_t h[] = {elem_f16_from_f32(0.2f)};
    verify_compare(&e, T("f16"), h, "out", 0, &r);
    assert_true(r.ok);
    h[0] = elem_f16_from_f32(0.3f);
    verify_compare(&e, T("f16"), h, "out", 0, &r);
    assert_true(r.ok);
    h[0] = elem_f16_from_f32(0.25f);
    verify_compare(&e, T("f16"), h, "out", 0, &r);
    assert_false(r.ok);
    verify_expected_free(&e);
}

/* The atomics' definitions, applied one at a time. */
static uint32_t brute_wrap(int inc, uint32_t x, uint32_t lim, uint64_t m)
{
    for (uint64_t i = 0; i < m; i++)
        x = inc ? (x >= lim ? 0 : x + 1) : ((x == 0 || x > lim) ? lim : x - 1);
    return x;
}

static void test_wrap_count(void **state)
{
    (void)state;
    int64_t lims[] = {0, 1, 2, 5, 17, 100, 4294967295};
    int64_t inits[] = {0, 1, 3, 5, 16, 17, 18, 99, 1000, 4294967295};
    int64_t ns[] = {0, 1, 2, 7, 100, 1234};
    int64_t ks[] = {1, 2, 3, 7, 64};
    int checked = 0;
    for (int o = 0; o < 2; o++)
        for (size_t a = 0; a < 7; a++)
            for (size_t b = 0; b < 10; b++)
                for (size_t c = 0; c < 6; c++)
                    for (size_t d = 0; d < 5; d++) {
                        int64_t n = ns[c], k = ks[d];
                        Expected e;
                        RefArg args[5] = {S(o ? "inc" : "dec"), I(n), I(k), I(inits[b]), I(lims[a])};
                        ref(&e, "wrap_count", args, 5, "u32", (uint64_t)k);
                        for (int64_t j = 0; j < k; j++) {
                            uint64_t m = (uint64_t)(n / k + (j < n % k));
                            uint32_t want = brute_wrap(o, (uint32_t)inits[b], (uint32_t)lims[a], m);
                            if (e.u[j] != want)
                                fail_msg("%s n=%lld k=%lld init=%lld lim=%lld [%lld]: %llu, expected %u",
                                         o ? "inc" : "dec", (long long)n, (long long)k,
                                         (long long)inits[b], (long long)lims[a], (long long)j,
                                         (unsigned long long)e.u[j], want);
                            checked++;
                        }
                        verify_expected_free(&e);
                    }
    assert_true(checked > 10000);
    /* a long run: 10^9 increments in closed form */
    Expected e;
    RefArg args[5] = {S("inc"), I(1000000000), I(3), I(0), I(999)};
    ref(&e, "wrap_count", args, 5, "u32", 3);
    assert_int_equal(U(&e, 0), 333333334 % 1000);
    assert_int_equal(U(&e, 2), 333333333 % 1000);
    verify_expected_free(&e);
    RefArg bad[5] = {S("add"), I(1), I(1), I(0), I(1)};
    ref_fails("wrap_count", bad, 5, "u32", 1, "(expected one of: inc dec)");
    ref_fails("wrap_count", args, 5, "f32", 3, "unsigned integer");
}

static void test_tally_wrap(void **state)
{
    (void)state;
    Expected e;
    RefArg a[3] = {I(10), I(1), I(4294967290)};
    ref(&e, "tally", a, 3, "u32", 1);
    assert_int_equal(U(&e, 0), 4); /* 2^32 + 4 wraps to 4 */
    verify_expected_free(&e);
    RefArg b[3] = {I(3), I(2), I(2147483647)};
    ref(&e, "tally", b, 3, "i32", 2);
    assert_int_equal(U(&e, 0), -2147483647); /* INT_MAX + 2 */
    assert_int_equal(U(&e, 1), INT32_MIN);    /* INT_MAX + 1 */
    verify_expected_free(&e);
    ref(&e, "tally", b, 3, "u32", 2);
    assert_int_equal(U(&e, 0), 2147483649);
    verify_expected_free(&e);
    /* the same u32 output bits compare equal whichever view made them */
    uint32_t out[2] = {2147483649u, 2147483648u};
    VerifyReport r;
    ref(&e, "tally", b, 3, "u32", 2);
    verify_compare(&e, T("u32"), out, "out", 0, &r);
    assert_true(r.ok);
    verify_expected_free(&e);
    ref(&e, "tally", b, 3, "i32", 2);
    verify_compare(&e, T("i32"), out, "out", 0, &r);
    assert_true(r.ok);
    verify_expected_free(&e);
    RefArg c[3] = {I(5), I(2), I(-10)};
    ref(&e, "tally", c, 3, "f32", 2);
    assert_true(e.f[0] == -7 && e.f[1] == -8);
    verify_expected_free(&e);
}

static void test_compare_ints(void **state)
{
    (void)state;
    Expected e;
    verify_constant(val_int(7), T("i32"), 10, &e);
    int32_t out[10] = {7, 7, 7, 5, 7, 7, 8, 9, 10, -7};
    VerifyReport r;
    verify_compare(&e, T("i32"), out, "out", 0, &r);
    assert_false(r.ok);
    assert_int_equal(r.nmismatch, 5);
    assert_true(r.rel_err == 1);
    assert_true(r.max_abs_err == 14);
    assert_string_equal(r.first, "out[3]: got 5, expected 7; out[6]: got 8, expected 7; "
                                 "out[7]: got 9, expected 7; out[8]: got 10, expected 7; ... 1 more");
    for (int i = 0; i < 10; i++)
        out[i] = 7;
    verify_compare(&e, T("i32"), out, "out", 0, &r);
    assert_true(r.ok && r.nmismatch == 0 && r.first[0] == 0);
    verify_expected_free(&e);

    /* -1 checked on a u32 output is all ones */
    assert_int_equal(verify_constant(val_int(-1), T("u32"), 1, &e), 0);
    uint32_t ones = 0xffffffffu;
    verify_compare(&e, T("u32"), &ones, "c", 0, &r);
    assert_true(r.ok);
    verify_expected_free(&e);
    assert_int_equal(verify_constant(val_float(2.5), T("u32"), 1, &e), -1);
    assert_int_equal(verify_constant(val_str("x"), T("u32"), 1, &e), -1);

    /* differential: the baseline's output as the reference */
    uint64_t base[] = {1, 2, 3}, var[] = {1, 2, 4};
    verify_from_output(T("u64"), base, 3, &e);
    verify_compare(&e, T("u64"), var, "hist", 0, &r);
    assert_false(r.ok);
    assert_string_equal(r.first, "hist[2]: got 4, expected 3");
    verify_expected_free(&e);
}

static void test_compare_floats(void **state)
{
    (void)state;
    /* a half accumulator stuck at 32 where 2^20 ones were summed */
    uint64_t n = 1 << 20;
    uint16_t *ones = malloc(n * 2);
    for (uint64_t i = 0; i < n; i++)
        ones[i] = elem_f16_from_f32(1.0f);
    Expected e;
    RefArg a[1] = {B("f16", ones, n)};
    ref(&e, "sum", a, 1, "f16", 1);
    assert_true(e.f[0] == 1048576.0);
    uint16_t stuck = elem_f16_from_f32(32.0f);
    VerifyReport r;
    verify_compare(&e, T("f16"), &stuck, "acc", T("f16")->rtol, &r);
    assert_false(r.ok);
    assert_true(fabs(r.rel_err - (1 - 32.0 / 1048576)) < 1e-12);
    assert_true(r.max_abs_err == 1048576 - 32);
    assert_int_equal(r.nmismatch, 1);
    assert_string_equal(r.first, "acc[0]: got 32, expected 1048576");
    verify_expected_free(&e);
    free(ones);

    /* within tolerance: rounding of the output type is not a mismatch */
    double ref3[] = {0.1, 0.2, 0.3};
    verify_from_output(T("f64"), ref3, 3, &e);
    float got[] = {0.1f, 0.2f, 0.3f};
    verify_compare(&e, T("f32"), got, "y", 1e-5, &r);
    assert_true(r.ok && r.rel_err > 0 && r.rel_err < 1e-7);
    got[1] = 0.25f;
    verify_compare(&e, T("f32"), got, "y", 1e-5, &r);
    assert_false(r.ok);
    assert_int_equal(r.nmismatch, 1);
    assert_string_equal(r.first, "y[1]: got 0.25, expected 0.2");
    /* NaN where the reference is finite fails however small the rest */
    got[1] = NAN;
    verify_compare(&e, T("f32"), got, "y", 1, &r);
    assert_false(r.ok);
    assert_true(isinf(r.rel_err));
    assert_string_equal(r.first, "y[1]: got nan, expected 0.2");
    verify_expected_free(&e);

    /* NaN and inf where the reference has them match exactly */
    double nref[] = {NAN, INFINITY, 1};
    verify_from_output(T("f64"), nref, 3, &e);
    double nout[] = {NAN, INFINITY, 1};
    verify_compare(&e, T("f64"), nout, "m", 1e-12, &r);
    assert_true(r.ok);
    nout[1] = -INFINITY;
    verify_compare(&e, T("f64"), nout, "m", 1e-12, &r);
    assert_false(r.ok);
    nout[1] = INFINITY;
    nout[0] = 0;
    verify_compare(&e, T("f64"), nout, "m", 1e-12, &r);
    assert_false(r.ok);
    verify_expected_free(&e);

    /* an all-zero reference measures absolute error */
    verify_constant(val_int(0), T("f32"), 2, &e);
    float z[] = {0, 1e-6f};
    verify_compare(&e, T("f32"), z, "z", 1e-5, &r);
    assert_true(r.ok && r.rel_err > 9e-7 && r.rel_err < 1.1e-6);
    z[1] = 1e-3f;
    verify_compare(&e, T("f32"), z, "z", 1e-5, &r);
    assert_false(r.ok);
    verify_expected_free(&e);
}

static void test_errors(void **state)
{
    (void)state;
    int32_t v[] = {1};
    RefArg a[2] = {B("i32", v, 1), I(3)};
    ref_fails("nosuch", a, 2, "u32", 1, "unknown reference function 'nosuch'");
    ref_fails("count_below", a, 1, "u32", 1, "takes 2 arguments, got 1");
    ref_fails("count_below", a, 2, "u32", 2, "has 1 element but the output buffer has 2");
    RefArg b[2] = {I(1), I(3)};
    ref_fails("count_below", b, 2, "u32", 1, "count_below(buf: buffer, thr: number): argument 1 (buf) must be a buffer");
    RefArg c[4] = {B("i32", v, 1), I(0), I(0), I(9)};
    ref_fails("histogram", c, 4, "u32", 1, "bins) must be >= 1");
    ref_fails("baseline", NULL, 0, "u32", 1, "unknown reference function 'baseline'");
}

/* slice: a part of an input, same type, exact for integers. */
static void test_slice(void **state)
{
    (void)state;
    int32_t v[] = {5, 6, 7, 8};
    RefArg a[3] = {B("i32", v, 4), I(1), I(2)};
    Expected e;
    ref(&e, "slice", a, 3, "i32", 2);
    int32_t good[] = {6, 7}, bad[] = {6, 9};
    VerifyReport r;
    verify_compare(&e, T("i32"), good, "out", 0, &r);
    assert_true(r.ok);
    verify_compare(&e, T("i32"), bad, "out", 0, &r);
    assert_false(r.ok);
    assert_int_equal(r.nmismatch, 1);
    verify_expected_free(&e);
    ref_fails("slice", a, 3, "u32", 2, "the buffer is i32 but the output is u32");
    RefArg past[3] = {B("i32", v, 4), I(3), I(2)};
    ref_fails("slice", past, 3, "i32", 2, "elements 3 .. 4 lie outside the buffer's 4");
}

/* Every reference of the catalogue is computed by verify.c and documented in
 * docs/spec.md's table (a row opening with `name(`). */
static void test_catalogue(void **state)
{
    (void)state;
    char *doc = file_read("docs/spec.md", NULL);
    assert_non_null(doc);
    for (int i = 0; i < refs_count; i++) {
        const RefSig *r = &refs_table[i];
        if (!verify_has_reference(r->name))
            fail_msg("%s is in core/refs.c but verify.c does not compute it", r->name);
        char row[64];
        snprintf(row, sizeof row, "| `%s(", r->name);
        if (!strstr(doc, row))
            fail_msg("docs/spec.md has no catalogue row for %s (expected a line opening %s)", r->name, row);
    }
    free(doc);
}

static void test_large_fast(void **state)
{
    (void)state;
    uint64_t n = 1 << 20;
    float *x = malloc(n * 4), *out = malloc(n * 4);
    for (uint64_t i = 0; i < n; i++)
        x[i] = (float)(i % 1000) * 0.5f;
    double t0 = wall_now_ms();
    Expected e;
    RefArg a[4] = {S("add"), B("f32", x, n), I((int64_t)n), F(1)};
    ref(&e, "reduce", a, 4, "f32", n);
    for (uint64_t i = 0; i < n; i++)
        out[i] = x[i] + 1;
    VerifyReport r;
    verify_compare(&e, T("f32"), out, "out", 1e-6, &r);
    double ms = wall_now_ms() - t0;
    assert_true(r.ok);
    verify_expected_free(&e);
    free(x);
    free(out);
    KVX_BOUND(ms < 2000, "2^20 f32 elements referenced and compared in %.0f ms (bound 2000 ms)", ms);
}

/* ---- threads ------------------------------------------------------------------
 * References on several threads must be the same bits as on one: inputs of
 * 2^22 elements (four chunks) through every reference and every split
 * (per-chunk partials, per-worker counters, keys or addresses owned by a
 * worker), on 1, 2 and 7 threads. */

enum { NBIG = 1 << 22 };

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) /* xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

typedef struct Big {
    float *f;       /* wide dynamic range, some NaN: order of addition shows */
    double *d;
    double *cancel; /* huge pairs that cancel exactly among small values */
    double small_sum; /* the exact sum of cancel */
    uint32_t *cancel_key; /* < 7, the same for both halves of a pair */
    int32_t *i;
    uint16_t *h;    /* 0..4999 */
    uint32_t *key_small, *key_large, *key_skew; /* < 7, < 2^20, zipf-ish < 2^20 */
    uint8_t *b;
} Big;

static void big_init(Big *g)
{
    g->f = malloc(NBIG * sizeof *g->f);
    g->d = malloc(NBIG * sizeof *g->d);
    g->cancel = malloc(NBIG * sizeof *g->cancel);
    g->cancel_key = malloc(NBIG * sizeof *g->cancel_key);
    g->i = malloc(NBIG * sizeof *g->i);
    g->h = malloc(NBIG * sizeof *g->h);
    g->key_small = malloc(NBIG * sizeof(uint32_t));
    g->key_large = malloc(NBIG * sizeof(uint32_t));
    g->key_skew = malloc(NBIG * sizeof(uint32_t));
    g->b = malloc(NBIG);
    for (uint64_t i = 0; i < NBIG; i++) {
        uint64_t r = rnd();
        double m = (double)(r >> 40) / (1 << 24) - 0.5;
        g->f[i] = (float)ldexp(m, (int)(r % 40) - 20);
        g->d[i] = ldexp(m, (int)((r >> 8) % 60) - 30);
        g->i[i] = (int32_t)(r >> 17);
        g->h[i] = (uint16_t)((r >> 20) % 5000);
        g->key_small[i] = (uint32_t)((r >> 30) % 7);
        g->key_large[i] = (uint32_t)((r >> 24) & ((1u << 20) - 1));
        g->key_skew[i] = (uint32_t)((r >> 3) & ((1u << 20) - 1)) >> ((r >> 50) % 20);
        g->b[i] = (uint8_t)(r >> 56);
    }
    for (uint64_t i = 12345; i < NBIG; i += 1000003)
        g->f[i] = NAN;
    /* Even positions: values near 2^60 in the first half, their negations
     * in reverse order in the second; odd positions: multiples of 2^-25 in
     * [-0.5, 0.5), whose sum (exact in a double) is the sum of all.  Partial
     * sums near 2^70 leave rounding errors that even a compensated sum keeps
     * a trace of, so the order of addition shows in the last bits. */
    g->small_sum = 0;
    for (uint64_t i = 0; i < NBIG / 4; i++)
        g->cancel[2 * i] = ldexp((double)(rnd() >> 11), 7 + (int)(rnd() % 8));
    for (uint64_t i = NBIG / 4; i < NBIG / 2; i++) {
        g->cancel[2 * i] = -g->cancel[2 * (NBIG / 2 - 1 - i)];
        g->cancel_key[2 * i] = g->cancel_key[2 * (NBIG / 2 - 1 - i)] = (uint32_t)(rnd() % 7);
    }
    for (uint64_t i = 1; i < NBIG; i += 2) {
        g->cancel_key[i] = (uint32_t)(rnd() % 7);
        g->cancel[i] = (double)(int32_t)(rnd() >> 40 & 0xffffff) / (1 << 25) - 0.25;
        g->small_sum += g->cancel[i];
    }
}

static void big_free(Big *g)
{
    free(g->f);
    free(g->d);
    free(g->cancel);
    free(g->cancel_key);
    free(g->i);
    free(g->h);
    free(g->key_small);
    free(g->key_large);
    free(g->key_skew);
    free(g->b);
}

static void ref_threads(Expected *e, const char *name, const RefArg *args, int nargs,
                        const char *out, uint64_t count, int threads)
{
    KvxError err = {0};
    if (verify_reference_threads(name, args, nargs, T(out), count, threads, e, &err) != 0)
        fail_msg("%s on %d threads: %s", name, threads, err.msg);
}

/* Same kind, count and bits (NaN payloads and zero signs included). */
static void assert_same(const Expected *a, const Expected *b, const char *what, int threads)
{
    if (a->kind != b->kind || a->count != b->count || a->is_float != b->is_float)
        fail_msg("%s: shape differs on %d threads", what, threads);
    uint64_t n = a->count;
    const void *x = a->is_float ? (const void *)a->f : (const void *)a->u;
    const void *y = b->is_float ? (const void *)b->f : (const void *)b->u;
    if (a->kind == EXPECT_MEMBER) {
        n = a->member_n * (uint64_t)a->member_t->size / 8;
        x = a->member_vals;
        y = b->member_vals;
        assert_int_equal(a->member_n, b->member_n);
    }
    if (memcmp(x, y, n * 8) != 0) {
        for (uint64_t j = 0; j < n; j++)
            if (memcmp((const char *)x + 8 * j, (const char *)y + 8 * j, 8) != 0)
                fail_msg("%s: element %llu differs between 1 and %d threads", what,
                         (unsigned long long)j, threads);
    }
}

/* The reference on 1 thread, checked equal to 2 and 7 threads; the caller
 * checks its value and frees it. */
static void ref_every(Expected *e1, const char *what, const char *name, const RefArg *args,
                      int nargs, const char *out, uint64_t count)
{
    ref_threads(e1, name, args, nargs, out, count, 1);
    int ts[] = {2, 7};
    for (int t = 0; t < 2; t++) {
        Expected e;
        ref_threads(&e, name, args, nargs, out, count, ts[t]);
        assert_same(e1, &e, what, ts[t]);
        verify_expected_free(&e);
    }
}

static void check_rel(double got, long double want, double tol, const char *what)
{
    long double err = fabsl((long double)got - want);
    if (!(err <= tol * fabsl(want)))
        fail_msg("%s: %.17g, expected %.17Lg", what, got, want);
}

static void test_threads_counts(void **state)
{
    Big *g = *state;
    Expected e;
    uint64_t want = 0;
    RefArg a[2] = {B("i32", g->i, NBIG), F(1.5)};
    ref_every(&e, "count_below", "count_below", a, 2, "u64", 1);
    for (uint64_t i = 0; i < NBIG; i++)
        want += g->i[i] < 2;
    assert_int_equal(e.u[0], want);
    verify_expected_free(&e);

    RefArg b[3] = {B("f32", g->f, NBIG), S("!="), F(0)};
    ref_every(&e, "count_if", "count_if", b, 3, "u32", 1);
    want = 0;
    for (uint64_t i = 0; i < NBIG; i++)
        want += g->f[i] != 0;
    assert_int_equal(e.u[0], want);
    verify_expected_free(&e);

    /* count_below_by: few keys and 2^20 keys */
    const uint32_t *keys[2] = {g->key_small, g->key_large};
    uint64_t ks[2] = {7, 1 << 20};
    for (int s = 0; s < 2; s++) {
        RefArg c[4] = {B("u16", g->h, NBIG), I(2500), B("u32", keys[s], NBIG), I((int64_t)ks[s])};
        ref_every(&e, "count_below_by", "count_below_by", c, 4, "u32", ks[s]);
        uint32_t *cnt = calloc(ks[s], sizeof *cnt);
        for (uint64_t i = 0; i < NBIG; i++)
            cnt[keys[s][i]] += g->h[i] < 2500;
        for (uint64_t j = 0; j < ks[s]; j++)
            if (e.u[j] != cnt[j])
                fail_msg("count_below_by k=%llu [%llu]: %llu, expected %u",
                         (unsigned long long)ks[s], (unsigned long long)j,
                         (unsigned long long)e.u[j], cnt[j]);
        free(cnt);
        verify_expected_free(&e);
    }

    /* histograms of integers and of floats */
    RefArg h[4] = {B("u16", g->h, NBIG), I(4096), I(0), I(4095)};
    ref_every(&e, "histogram u16", "histogram", h, 4, "u32", 4096);
    uint32_t *cnt = calloc(4096, sizeof *cnt);
    for (uint64_t i = 0; i < NBIG; i++)
        if (g->h[i] < 4096)
            cnt[g->h[i]]++;
    for (int j = 0; j < 4096; j++)
        assert_int_equal(e.u[j], cnt[j]);
    free(cnt);
    verify_expected_free(&e);
    RefArg hf[4] = {B("f32", g->f, NBIG), I(3), I(-1), I(1)};
    ref_every(&e, "histogram f32", "histogram", hf, 4, "u64", 3);
    /* width ceil(3/3) = 1: [-1, 0) [0, 1) [1, 1]; NaN in none */
    uint64_t fb[3] = {0, 0, 0};
    for (uint64_t i = 0; i < NBIG; i++)
        if (g->f[i] >= -1 && g->f[i] <= 1)
            fb[g->f[i] < 0 ? 0 : g->f[i] < 1 ? 1 : 2]++;
    assert_true(fb[0] > 1000 && fb[1] > 1000);
    for (int j = 0; j < 3; j++)
        assert_int_equal(e.u[j], fb[j]);
    verify_expected_free(&e);
}

static void test_threads_sums(void **state)
{
    Big *g = *state;
    Expected e;
    long double ls = 0, ld = 0;
    uint64_t us = 0;
    for (uint64_t i = 0; i < NBIG; i++) {
        ls += g->d[i];
        ld += (long double)g->d[i] * g->i[i];
        us += (uint64_t)(int64_t)g->i[i];
    }
    RefArg a[1] = {B("f64", g->d, NBIG)};
    ref_every(&e, "sum f64", "sum", a, 1, "f64", 1);
    check_rel(e.f[0], ls, 1e-12, "sum f64");
    verify_expected_free(&e);
    RefArg b[2] = {B("f64", g->d, NBIG), B("i32", g->i, NBIG)};
    ref_every(&e, "dot", "dot", b, 2, "f64", 1);
    check_rel(e.f[0], ld, 1e-12, "dot");
    verify_expected_free(&e);
    /* order-sensitive sums: a chunk order that depended on the threads
     * would change the last bits here */
    RefArg ca[1] = {B("f64", g->cancel, NBIG)};
    ref_every(&e, "sum cancel", "sum", ca, 1, "f64", 1);
    /* compensated: within 0.1 of the exact sum, where a plain double sum
     * is off by thousands */
    if (!(fabs(e.f[0] - g->small_sum) < 0.1))
        fail_msg("sum cancel: %.17g, expected %.17g", e.f[0], g->small_sum);
    verify_expected_free(&e);
    RefArg cr[4] = {S("add"), B("f64", g->cancel, NBIG), I(2), F(0)}; /* pairs at [0] */
    ref_every(&e, "reduce add cancel", "reduce", cr, 4, "f64", 2);
    verify_expected_free(&e);
    RefArg cs[3] = {B("f64", g->cancel, NBIG), B("u32", g->cancel_key, NBIG), I(7)};
    ref_every(&e, "sum_by cancel", "sum_by", cs, 3, "f64", 7);
    verify_expected_free(&e);
    RefArg c[1] = {B("i32", g->i, NBIG)};
    ref_every(&e, "sum i64", "sum", c, 1, "i64", 1);
    assert_int_equal(e.u[0], us);
    verify_expected_free(&e);

    /* sum_by: 7 keys (per-chunk partials), 2^20 uniform and skewed keys (owned
     * by a worker each); the result checked against a long double sum */
    const uint32_t *keys[3] = {g->key_small, g->key_large, g->key_skew};
    uint64_t ks[3] = {7, 1 << 20, 1 << 20};
    for (int s = 0; s < 3; s++) {
        RefArg d[3] = {B("f64", g->d, NBIG), B("u32", keys[s], NBIG), I((int64_t)ks[s])};
        ref_every(&e, "sum_by", "sum_by", d, 3, "f64", ks[s]);
        long double *want = calloc(ks[s], sizeof *want);
        for (uint64_t i = 0; i < NBIG; i++)
            want[keys[s][i]] += g->d[i];
        for (uint64_t j = 0; j < ks[s]; j++)
            check_rel(e.f[j], want[j], 1e-12, "sum_by");
        free(want);
        verify_expected_free(&e);
        RefArg di[3] = {B("i32", g->i, NBIG), B("u32", keys[s], NBIG), I((int64_t)ks[s])};
        ref_every(&e, "sum_by i32", "sum_by", di, 3, "i32", ks[s]);
        uint32_t *wi = calloc(ks[s], sizeof *wi);
        for (uint64_t i = 0; i < NBIG; i++)
            wi[keys[s][i]] += (uint32_t)g->i[i];
        for (uint64_t j = 0; j < ks[s]; j++)
            assert_int_equal((uint32_t)e.u[j], wi[j]);
        free(wi);
        verify_expected_free(&e);
    }

    /* index_add: rows of 4 values, 7 rows and 2^18 rows */
    uint64_t rows[2] = {7, 1 << 18};
    for (int s = 0; s < 2; s++) {
        uint64_t n = NBIG / 4;
        uint32_t *idx = malloc(n * sizeof *idx);
        for (uint64_t i = 0; i < n; i++)
            idx[i] = g->key_large[i] % (uint32_t)rows[s];
        RefArg d[4] = {B("u32", idx, n), B("f32", g->f, NBIG), I((int64_t)rows[s]), I(4)};
        ref_every(&e, "index_add", "index_add", d, 4, "f32", rows[s] * 4);
        verify_expected_free(&e);
        free(idx);
    }

    /* a bad key deep in the input: the first one is reported on any thread count */
    uint32_t *k2 = malloc(NBIG * sizeof *k2);
    memcpy(k2, g->key_large, NBIG * sizeof *k2);
    k2[3500000] = 1u << 20;
    k2[2500001] = 1u << 21;
    for (int t = 1; t <= 7; t += 3) {
        RefArg d[3] = {B("f64", g->d, NBIG), B("u32", k2, NBIG), I(1 << 20)};
        KvxError err = {0};
        assert_int_equal(verify_reference_threads("sum_by", d, 3, T("f64"), 1 << 20, t, &e, &err), -1);
        assert_string_equal(err.msg, "sum_by: key[2500001] = 2097152 is outside 0..1048575");
        assert_null(e.f);
        RefArg c4[4] = {B("u16", g->h, NBIG), I(1), B("u32", k2, NBIG), I(1 << 20)};
        memset(&err, 0, sizeof err);
        assert_int_equal(verify_reference_threads("count_below_by", c4, 4, T("u32"), 1 << 20, t,
                                                  &e, &err), -1);
        assert_string_equal(err.msg, "count_below_by: key[2500001] = 2097152 is outside 0..1048575");
    }
    free(k2);
}

static void test_threads_reduce(void **state)
{
    Big *g = *state;
    Expected e;
    /* few addresses (per-chunk partials) and many (owned columns) */
    int64_t ks[3] = {1, 7, 4096};
    for (int s = 0; s < 3; s++) {
        uint64_t k = (uint64_t)ks[s];
        const char *fops[] = {"add", "sub", "max", "min", "maximum", "nanmin"};
        for (int o = 0; o < 6; o++) {
            char what[64];
            snprintf(what, sizeof what, "reduce %s k=%llu", fops[o], (unsigned long long)k);
            RefArg a[4] = {S(fops[o]), B("f32", g->f, NBIG), I(ks[s]), F(-0.25)};
            ref_every(&e, what, "reduce", a, 4, "f32", k);
            /* max/min: the value of a sequential fold (NaN rules included) */
            for (uint64_t j = 0; o >= 2 && j < k; j++) {
                double r = -0.25;
                for (uint64_t i = j; i < NBIG; i += k) {
                    double v = g->f[i];
                    r = o == 2 ? fmax(r, v) : o == 3 ? fmin(r, v)
                      : o == 4 ? (isnan(r) || isnan(v) ? NAN : fmax(r, v)) : fmin(r, v);
                }
                if (!(r == e.f[j] || (isnan(r) && isnan(e.f[j]))))
                    fail_msg("%s [%llu]: %g, expected %g", what, (unsigned long long)j, e.f[j], r);
            }
            verify_expected_free(&e);
        }
        const char *iops[] = {"add", "sub", "xor", "and", "or", "max", "min"};
        for (int o = 0; o < 7; o++) {
            char what[64];
            snprintf(what, sizeof what, "reduce %s i16 k=%llu", iops[o], (unsigned long long)k);
            RefArg a[4] = {S(iops[o]), B("i32", g->i, NBIG), I(ks[s]), I(-3)};
            ref_every(&e, what, "reduce", a, 4, "i16", k);
            for (uint64_t j = 0; j < k; j++) {
                int16_t r = -3;
                for (uint64_t i = j; i < NBIG; i += k) {
                    int16_t v = (int16_t)g->i[i];
                    r = o == 0 ? (int16_t)(r + v) : o == 1 ? (int16_t)(r - v) : o == 2 ? r ^ v
                      : o == 3 ? r & v : o == 4 ? r | v : o == 5 ? (v > r ? v : r) : (v < r ? v : r);
                }
                if ((int64_t)e.u[j] != r)
                    fail_msg("%s [%llu]: %lld, expected %d", what, (unsigned long long)j,
                             (long long)e.u[j], r);
            }
            verify_expected_free(&e);
        }
    }
    RefArg x[4] = {S("exch"), B("f32", g->f, NBIG), I(4096), F(0)};
    ref_every(&e, "reduce exch", "reduce", x, 4, "f32", 4096);
    verify_expected_free(&e);
    RefArg w[5] = {S("inc"), I(NBIG), I(4096), I(5), I(1000)};
    ref_every(&e, "wrap_count", "wrap_count", w, 5, "u32", 4096);
    verify_expected_free(&e);
    RefArg t[3] = {I(NBIG), I(4096), I(5)};
    ref_every(&e, "tally", "tally", t, 3, "u32", 4096);
    verify_expected_free(&e);
}

/* Not an assertion: how much a second thread buys on this machine. */
static void test_threads_timing(void **state)
{
    (void)state;
    uint64_t n = 1ull << 26;
    uint16_t *v = malloc(n * sizeof *v);
    uint32_t *keys = malloc(n * sizeof *keys);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        v[i] = (uint16_t)((r >> 20) & 4095);
        keys[i] = (uint32_t)((r >> 40) & 4095);
    }
    RefArg h[4] = {B("u16", v, n), I(4096), I(0), I(4095)};
    RefArg c[4] = {B("u16", v, n), I(2048), B("u32", keys, n), I(4096)};
    struct { const char *name; const RefArg *a; int nargs; } refs[] = {
        {"histogram", h, 4}, {"count_below_by", c, 4},
    };
    for (int r = 0; r < 2; r++) {
        double ms[2];
        for (int t = 1; t <= 2; t++) {
            Expected e;
            double t0 = wall_now_ms();
            ref_threads(&e, refs[r].name, refs[r].a, refs[r].nargs, "u32", 4096, t);
            ms[t - 1] = wall_now_ms() - t0;
            verify_expected_free(&e);
        }
        printf("# %s of 2^26 u16 into 4096: 1 thread %.0f ms, 2 threads %.0f ms (%.2fx)\n",
               refs[r].name, ms[0], ms[1], ms[0] / ms[1]);
    }
    free(v);
    free(keys);
}

static int big_setup(void **state)
{
    Big *g = malloc(sizeof *g);
    big_init(g);
    *state = g;
    return 0;
}

static int big_teardown(void **state)
{
    big_free(*state);
    free(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_histogram_letters),
        cmocka_unit_test(test_sum_dot),
        cmocka_unit_test(test_sum_by_index_add),
        cmocka_unit_test(test_reduce_int),
        cmocka_unit_test(test_reduce_float_nan),
        cmocka_unit_test(test_reduce_exch),
        cmocka_unit_test(test_wrap_count),
        cmocka_unit_test(test_tally_wrap),
        cmocka_unit_test(test_compare_ints),
        cmocka_unit_test(test_compare_floats),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_catalogue),
        cmocka_unit_test(test_large_fast),
        cmocka_unit_test_setup_teardown(test_threads_counts, big_setup, big_teardown),
        cmocka_unit_test_setup_teardown(test_threads_sums, big_setup, big_teardown),
        cmocka_unit_test_setup_teardown(test_threads_reduce, big_setup, big_teardown),
        cmocka_unit_test(test_threads_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
