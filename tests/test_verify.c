/* Unit tests of driver/verify.c: every reference on small hand-computed cases,
 * wrap-around of integer outputs, float NaN rules, the inc/dec closed form
 * against the atomics' own definition, and verify_compare's reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "driver/verify.h"

static const ElemType *T(const char *name) { return elem_type_find(name); }

static RefArg B(const char *type, const void *data, uint64_t n)
{
    RefArg a = {.is_buf = 1, .t = T(type), .data = data, .count = n};
    return a;
}
static RefArg I(int64_t i) { RefArg a = {.v = val_int(i)}; return a; }
static RefArg F(double d) { RefArg a = {.v = val_float(d)}; return a; }
static RefArg S(const char *s) { RefArg a = {.v = val_str(s)}; return a; }

/* Compute a reference that must succeed. */
static void ref(Expected *e, const char *name, const RefArg *args, int nargs, const char *out,
                uint64_t count)
{
    KvxError err = {0};
    int rc = verify_reference(name, args, nargs, T(out), count, e, &err);
    if (rc != 0)
        fail_msg("%s: %s", name, err.msg);
    assert_int_equal(e->count, count);
}

static void ref_fails(const char *name, const RefArg *args, int nargs, const char *out,
                      uint64_t count, const char *needle)
{
    KvxError err = {0};
    Expected e;
    assert_int_equal(verify_reference(name, args, nargs, T(out), count, &e, &err), -1);
    assert_int_equal(err.code, KVX_EINPUT);
    if (!strstr(err.msg, needle))
        fail_msg("message '%s' lacks '%s'", err.msg, needle);
    assert_null(e.u);
    assert_null(e.f);
}

static int64_t U(const Expected *e, uint64_t j) { return (int64_t)e->u[j]; }

static void test_count(void **state)
{
    (void)state;
    int32_t v[] = {-5, 0, 3, 7, 10};
    Expected e;
    RefArg a[3] = {B("i32", v, 5), I(3)};
    ref(&e, "count_below", a, 2, "u32", 1);
    assert_int_equal(U(&e, 0), 2);
    verify_expected_free(&e);

    struct { const char *op; RefArg thr; int64_t want; } cases[] = {
        {"<=", I(3), 3}, {"==", I(7), 1}, {"!=", I(7), 4}, {">", F(2.5), 3},
        {"<", F(2.5), 2}, {"==", F(2.5), 0}, {"!=", F(2.5), 5}, {">=", F(-5.5), 5},
        {"<", F(-5.5), 0}, {"<", F(NAN), 0}, {"!=", F(NAN), 5}, {">=", I(10), 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        RefArg b[3] = {B("i32", v, 5), S(cases[i].op), cases[i].thr};
        ref(&e, "count_if", b, 3, "u64", 1);
        if (U(&e, 0) != cases[i].want)
            fail_msg("count_if %s: %lld, expected %lld", cases[i].op, (long long)U(&e, 0),
                     (long long)cases[i].want);
        verify_expected_free(&e);
    }
    /* u64 above 2^63 compares by value, not as a negative int64 */
    uint64_t big[] = {(1ull << 63) + 1, 1};
    RefArg c[3] = {B("u64", big, 2), S(">"), I(INT64_MAX)};
    ref(&e, "count_if", c, 3, "u32", 1);
    assert_int_equal(U(&e, 0), 1);
    verify_expected_free(&e);
    /* floats: NaN fails every comparison but != */
    float f[] = {1, NAN, 3};
    RefArg d[3] = {B("f32", f, 3), I(2)};
    ref(&e, "count_below", d, 2, "i32", 1);
    assert_int_equal(U(&e, 0), 1);
    verify_expected_free(&e);
    RefArg g[3] = {B("f32", f, 3), S("!="), F(1)};
    ref(&e, "count_if", g, 3, "i32", 1);
    assert_int_equal(U(&e, 0), 2);
    verify_expected_free(&e);
    RefArg h[3] = {B("f32", f, 3), S("=<"), F(1)};
    ref_fails("count_if", h, 3, "i32", 1, "unknown comparison");
}

static void test_count_below_by(void **state)
{
    (void)state;
    uint8_t v[] = {1, 5, 2, 8, 0};
    int16_t keys[] = {0, 1, 0, 1, 1};
    Expected e;
    RefArg a[4] = {B("u8", v, 5), I(3), B("i16", keys, 5), I(2)};
    ref(&e, "count_below_by", a, 4, "u32", 2);
    assert_int_equal(U(&e, 0), 2);
    assert_int_equal(U(&e, 1), 1);
    verify_expected_free(&e);
    keys[2] = 2;
    ref_fails("count_below_by", a, 4, "u32", 2, "key[2] = 2 is outside 0..1");
    keys[2] = -1;
    ref_fails("count_below_by", a, 4, "u32", 2, "outside");
}

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

    /* float values land rounded to the output type */
    double d[] = {0.1, 0.2};
    RefArg b[4] = {S("exch"), B("f64", d, 2), I(1), F(0.3)};
    ref(&e, "reduce", b, 4, "f16", 1);
    uint16_t h[] = {f32_to_f16(0.2f)};
    verify_compare(&e, T("f16"), h, "out", 0, &r);
    assert_true(r.ok);
    h[0] = f32_to_f16(0.3f);
    verify_compare(&e, T("f16"), h, "out", 0, &r);
    assert_true(r.ok);
    h[0] = f32_to_f16(0.25f);
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
    ref_fails("wrap_count", bad, 5, "u32", 1, "expected \"inc\" or \"dec\"");
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
        ones[i] = f32_to_f16(1.0f);
    Expected e;
    RefArg a[1] = {B("f16", ones, n)};
    ref(&e, "sum", a, 1, "f16", 1);
    assert_true(e.f[0] == 1048576.0);
    uint16_t stuck = f32_to_f16(32.0f);
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
    ref_fails("count_below", b, 2, "u32", 1, "argument 1 (buffer) must be a buffer");
    RefArg c[4] = {B("i32", v, 1), I(0), I(0), I(9)};
    ref_fails("histogram", c, 4, "u32", 1, "bins) must be >= 1");
    ref_fails("baseline", NULL, 0, "u32", 1, "verify_from_output");
}

static void test_large_fast(void **state)
{
    (void)state;
    uint64_t n = 1 << 20;
    float *x = malloc(n * 4), *out = malloc(n * 4);
    for (uint64_t i = 0; i < n; i++)
        x[i] = (float)(i % 1000) * 0.5f;
    double t0 = now_ms();
    Expected e;
    RefArg a[4] = {S("add"), B("f32", x, n), I((int64_t)n), F(1)};
    ref(&e, "reduce", a, 4, "f32", n);
    for (uint64_t i = 0; i < n; i++)
        out[i] = x[i] + 1;
    VerifyReport r;
    verify_compare(&e, T("f32"), out, "out", 1e-6, &r);
    double ms = now_ms() - t0;
    assert_true(r.ok);
    verify_expected_free(&e);
    free(x);
    free(out);
    if (ms > 2000)
        fail_msg("2^20 elements took %.0f ms", ms);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_count_below_by),
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
        cmocka_unit_test(test_large_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
