/* Unit tests of host/inputs.c: determinism across thread counts, the
 * distributions' frequencies, saturation and rounding, parameter errors,
 * descriptions and keys; the device's plan (inputs_plan) read back by the
 * host's twin of kvx_fill gives inputs_fill's bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host/inputs.h"
#include "tests/fill_cases.h"

static const ElemType *T(const char *name) { return elem_type_find(name); }

static InitParams P(InitKind k)
{
    InitParams p = {.kind = k, .seed = 12345};
    return p;
}

static void *fill(const char *type, uint64_t n, const InitParams *p, int threads)
{
    KvxError err = {0};
    void *buf = malloc(n * (uint64_t)T(type)->size + 1);
    int rc = inputs_fill(T(type), buf, n, p, threads, &err);
    if (rc != 0)
        fprintf(stderr, "inputs_fill: %s\n", err.msg);
    assert_int_equal(rc, 0);
    return buf;
}

/* H(s, n) = sum_{k=1..n} k^-s: direct up to 10^6 terms, Euler-Maclaurin beyond
 * (the correction terms are below 1e-12 there). */
static double harmonic(double s, double n)
{
    double m = n < 1e6 ? n : 1e6, h = 0;
    for (double k = m; k >= 1; k--)
        h += pow(k, -s);
    if (n > m) {
        double integral = s == 1 ? log(n / m) : (pow(n, 1 - s) - pow(m, 1 - s)) / (1 - s);
        h += integral + (pow(n, -s) - pow(m, -s)) / 2 + (-s * pow(n, -s - 1) + s * pow(m, -s - 1)) / 12;
    }
    return h;
}

static void all_kinds(InitParams *ps)
{
    ps[0] = P(INIT_CONST); ps[0].value = 7;
    ps[1] = P(INIT_IOTA); ps[1].value = 3;
    ps[2] = P(INIT_UNIFORM); ps[2].lo = -50; ps[2].hi = 1000;
    ps[3] = P(INIT_ZIPF); ps[3].lo = 0; ps[3].hi = 4095; ps[3].exponent = 1.1;
    ps[4] = P(INIT_HOT); ps[4].lo = 0; ps[4].hi = 999; ps[4].value = 5; ps[4].fraction = 0.3;
    ps[5] = P(INIT_RUNS); ps[5].lo = 0; ps[5].hi = 99; ps[5].length = 37;
    ps[6] = P(INIT_TEXT);
}

static void test_threads_same_bytes(void **state)
{
    (void)state;
    InitParams ps[7];
    all_kinds(ps);
    const char *types[] = {"u32", "i8", "f16", "bf16", "f32", "f64", "u64"};
    uint64_t n = 3 * 65536 + 1234; /* several chunks and a ragged tail */
    for (int k = 0; k < 7; k++)
        for (int t = 0; t < 7; t++) {
            size_t bytes = n * (size_t)T(types[t])->size;
            unsigned char *a = fill(types[t], n, &ps[k], 1);
            unsigned char *b = fill(types[t], n, &ps[k], 4);
            unsigned char *c = fill(types[t], n, &ps[k], 0);
            assert_memory_equal(a, b, bytes);
            assert_memory_equal(a, c, bytes);
            /* element i does not depend on the count either */
            unsigned char *d = fill(types[t], 1000, &ps[k], 3);
            assert_memory_equal(a, d, 1000 * (size_t)T(types[t])->size);
            free(a); free(b); free(c); free(d);
        }
    /* the zipf sampler used beyond 2^24 values too */
    InitParams z = P(INIT_ZIPF);
    z.lo = 0; z.hi = 0x1p40; z.exponent = 0.8;
    uint32_t *a = fill("u32", n, &z, 1), *b = fill("u32", n, &z, 4);
    assert_memory_equal(a, b, n * 4);
    free(a); free(b);
}

static void test_seed_changes_data(void **state)
{
    (void)state;
    InitParams p = P(INIT_UNIFORM);
    p.lo = 0; p.hi = 4294967295.0;
    uint32_t *a = fill("u32", 1000, &p, 1);
    p.seed++;
    uint32_t *b = fill("u32", 1000, &p, 1);
    int same = 0;
    for (int i = 0; i < 1000; i++)
        same += a[i] == b[i];
    assert_true(same < 5);
    free(a); free(b);
}

static void test_const_iota(void **state)
{
    (void)state;
    InitParams p = P(INIT_CONST);
    p.value = 300;
    uint8_t *u8 = fill("u8", 10, &p, 1);
    assert_int_equal(u8[0], 255); /* saturated */
    free(u8);
    p.value = -5;
    uint32_t *u32 = fill("u32", 10, &p, 1);
    assert_int_equal(u32[9], 0);
    free(u32);
    p.value = 2.5; /* rounds half away from zero */
    int32_t *i32 = fill("i32", 4, &p, 1);
    assert_int_equal(i32[3], 3);
    free(i32);
    p.value = -1;
    uint64_t *u64 = fill("i64", 4, &p, 1);
    assert_true(u64[0] == UINT64_MAX);
    free(u64);
    p.value = 0.1;
    uint16_t *h = fill("f16", 3, &p, 1);
    assert_int_equal(h[2], 0x2e66); /* 0.1 rounded to nearest half */
    free(h);
    uint16_t *bf = fill("bf16", 3, &p, 1);
    assert_int_equal(bf[0], 0x3dcd);
    free(bf);
    p.value = NAN;
    float *f = fill("f32", 3, &p, 1);
    assert_true(isnan(f[1]));
    free(f);

    InitParams q = P(INIT_IOTA);
    q.value = 250;
    uint8_t *it = fill("u8", 10, &q, 1);
    assert_int_equal(it[0], 250);
    assert_int_equal(it[5], 255);
    assert_int_equal(it[9], 255); /* saturates rather than wrapping */
    free(it);
    q.value = -2;
    double *d = fill("f64", 5, &q, 1);
    assert_true(d[0] == -2 && d[4] == 2);
    free(d);
}

static void test_uniform_int(void **state)
{
    (void)state;
    InitParams p = P(INIT_UNIFORM);
    p.lo = 10; p.hi = 19;
    uint64_t n = 1 << 20;
    int16_t *v = fill("i16", n, &p, 2);
    uint64_t hist[10] = {0};
    for (uint64_t i = 0; i < n; i++) {
        assert_true(v[i] >= 10 && v[i] <= 19);
        hist[v[i] - 10]++;
    }
    for (int b = 0; b < 10; b++) /* inclusive at both ends, flat within 2% */
        assert_true(fabs((double)hist[b] / (n / 10.0) - 1) < 0.02);
    free(v);

    /* saturation piles the out-of-range share on the type's bounds */
    p.lo = -100; p.hi = 355; /* u8: P(0) = 101/456, P(255) = 101/456 */
    uint8_t *u = fill("u8", n, &p, 2);
    uint64_t zeros = 0, tops = 0;
    for (uint64_t i = 0; i < n; i++) {
        zeros += u[i] == 0;
        tops += u[i] == 255;
    }
    assert_true(fabs(zeros / (double)n - 101.0 / 456) < 0.005);
    assert_true(fabs(tops / (double)n - 101.0 / 456) < 0.005);
    free(u);

    /* the whole u64 range: both halves reached */
    p.lo = 0; p.hi = 18446744073709551615.0;
    uint64_t *w = fill("u64", 4096, &p, 1);
    int high = 0;
    for (int i = 0; i < 4096; i++)
        high += w[i] >> 63;
    assert_true(high > 1800 && high < 2300);
    free(w);

    /* one value */
    p.lo = p.hi = -7;
    int8_t *one = fill("i8", 100, &p, 1);
    for (int i = 0; i < 100; i++)
        assert_int_equal(one[i], -7);
    free(one);
}

static void test_uniform_float(void **state)
{
    (void)state;
    InitParams p = P(INIT_UNIFORM);
    p.lo = -1; p.hi = 3;
    uint64_t n = 1 << 20;
    float *f = fill("f32", n, &p, 2);
    double sum = 0, mn = 9, mx = -9;
    for (uint64_t i = 0; i < n; i++) {
        sum += f[i];
        mn = f[i] < mn ? f[i] : mn;
        mx = f[i] > mx ? f[i] : mx;
    }
    assert_true(mn >= -1 && mx < 3);
    assert_true(mn < -0.999 && mx > 2.999);
    assert_true(fabs(sum / n - 1) < 0.01);
    free(f);
    p.lo = 0; p.hi = 1;
    uint16_t *h = fill("f16", n, &p, 2);
    for (uint64_t i = 0; i < n; i++) {
        float x = elem_f16_to_f32(h[i]);
        assert_true(x >= 0 && x <= 1); /* 1 - 2^-12 and above round to 1.0 in f16 */
    }
    free(h);
}

static void check_zipf(double s, double lo, double hi, uint64_t n)
{
    InitParams p = P(INIT_ZIPF);
    p.lo = lo; p.hi = hi; p.exponent = s;
    int64_t *v = fill("i64", n, &p, 2);
    double nranks = hi - lo + 1, h = harmonic(s, nranks);
    uint64_t c[4] = {0};
    for (uint64_t i = 0; i < n; i++) {
        assert_true(v[i] >= (int64_t)lo && v[i] <= (int64_t)hi);
        int64_t r = v[i] - (int64_t)lo;
        if (r < 3)
            c[r]++;
        if (r == 9)
            c[3]++;
    }
    double want[4] = {1 / h, pow(2, -s) / h, pow(3, -s) / h, pow(10, -s) / h};
    for (int k = 0; k < 4; k++) {
        /* within 3% or 5 standard deviations of the count, whichever is wider:
         * the seed is fixed, so this is about tolerance, not flakiness */
        double got = c[k] / (double)n, sd = sqrt(want[k] * (1 - want[k]) / (double)n);
        if (fabs(got - want[k]) > fmax(0.03 * want[k], 5 * sd))
            fail_msg("zipf s=%g n=%g: rank %d share %g, expected %g", s, nranks,
                     k == 3 ? 9 : k, got, want[k]);
    }
    free(v);
}

static void test_zipf_frequencies(void **state)
{
    (void)state;
    check_zipf(1.0, 0, 999, 1 << 21);          /* inverse-CDF table */
    check_zipf(0.7, 100, 100 + (1 << 20) - 1, 1 << 21);
    check_zipf(1.2, 0, 0x1p30 - 1, 1 << 21);   /* rejection-inversion */
    check_zipf(2.0, 5, 5 + 0x1p26, 1 << 20);
    check_zipf(0.5, 0, 0x1p25, 1 << 21);

    /* tail: the last rank of a small range has its share too */
    InitParams p = P(INIT_ZIPF);
    p.lo = 0; p.hi = 3; p.exponent = 1;
    uint8_t *v = fill("u8", 1 << 20, &p, 1);
    uint64_t c3 = 0;
    for (int i = 0; i < 1 << 20; i++)
        c3 += v[i] == 3;
    double want = 0.25 / (1 + 0.5 + 1.0 / 3 + 0.25);
    assert_true(fabs(c3 / (double)(1 << 20) / want - 1) < 0.02);
    free(v);
}

static void test_hot(void **state)
{
    (void)state;
    InitParams p = P(INIT_HOT);
    p.lo = 0; p.hi = 999; p.value = 5000; p.fraction = 0.25;
    uint64_t n = 1 << 20, hot = 0;
    uint32_t *v = fill("u32", n, &p, 2);
    for (uint64_t i = 0; i < n; i++) {
        hot += v[i] == 5000;
        assert_true(v[i] == 5000 || v[i] <= 999);
    }
    assert_true(fabs(hot / (double)n - 0.25) < 0.005);
    free(v);
    p.fraction = 0;
    v = fill("u32", 4096, &p, 1);
    for (int i = 0; i < 4096; i++)
        assert_true(v[i] <= 999);
    free(v);
    p.fraction = 1;
    float *f = fill("f32", 4096, &p, 1);
    for (int i = 0; i < 4096; i++)
        assert_true(f[i] == 5000);
    free(f);
}

static void test_runs(void **state)
{
    (void)state;
    InitParams p = P(INIT_RUNS);
    p.lo = 0; p.hi = 1000000; p.length = 10;
    uint64_t n = 100003, changes = 0;
    uint32_t *v = fill("u32", n, &p, 2);
    for (uint64_t i = 1; i < n; i++) {
        if (i % 10)
            assert_int_equal(v[i], v[i - 1]);
        changes += v[i] != v[i - 1];
    }
    /* a new run almost always brings a new value */
    assert_true(changes > 9990 && changes <= 10000);
    free(v);
    p.length = 1;
    uint64_t *w = fill("u64", 1000, &p, 1);
    changes = 0;
    for (int i = 1; i < 1000; i++)
        changes += w[i] != w[i - 1];
    assert_true(changes > 990);
    free(w);
}

static void test_text(void **state)
{
    (void)state;
    InitParams p = P(INIT_TEXT);
    uint64_t n = 1 << 22, c[27] = {0};
    char *s = fill("u8", n, &p, 2);
    for (uint64_t i = 0; i < n; i++) {
        if (s[i] == ' ')
            c[26]++;
        else if (s[i] >= 'a' && s[i] <= 'z')
            c[s[i] - 'a']++;
        else
            fail_msg("byte %d at %llu", s[i], (unsigned long long)i);
    }
    assert_true(fabs(c[26] / (double)n - 0.18) < 0.002);
    assert_true(fabs(c['e' - 'a'] / (double)n - 0.82 * 0.12702) < 0.002);
    assert_true(fabs(c['t' - 'a'] / (double)n - 0.82 * 0.09056) < 0.002);
    assert_true(c['z' - 'a'] > 0 && c['q' - 'a'] > 0 && c['j' - 'a'] > 0);
    assert_true(c['z' - 'a'] < c['q' - 'a'] * 2); /* the rare letters stay rare */
    free(s);
}

static void expect_error(const char *type, const InitParams *p, const char *needle)
{
    KvxError err = {0};
    char buf[64];
    assert_int_equal(inputs_fill(T(type), buf, 4, p, 1, &err), -1);
    assert_int_equal(err.code, KVX_EINPUT);
    if (!strstr(err.msg, needle))
        fail_msg("message '%s' lacks '%s'", err.msg, needle);
}

static void test_errors(void **state)
{
    (void)state;
    InitParams p = P(INIT_UNIFORM);
    p.lo = 5; p.hi = 3;
    expect_error("u32", &p, "lo (5) > hi (3)");
    p = P(INIT_ZIPF);
    p.lo = 0; p.hi = 10; p.exponent = 0;
    expect_error("u32", &p, "exponent must be > 0");
    p.exponent = -1;
    expect_error("u32", &p, "exponent must be > 0");
    p = P(INIT_HOT);
    p.lo = 0; p.hi = 10; p.fraction = 1.5;
    expect_error("u32", &p, "fraction must be in [0, 1]");
    p.fraction = NAN;
    expect_error("u32", &p, "fraction");
    p = P(INIT_RUNS);
    p.lo = 0; p.hi = 10; p.length = 0;
    expect_error("u32", &p, "length must be >= 1");
    p = P(INIT_CONST);
    p.value = NAN;
    expect_error("i32", &p, "NaN");
    p = P(INIT_UNIFORM);
    p.lo = 0; p.hi = INFINITY;
    expect_error("f32", &p, "finite");
}

static void test_describe_key(void **state)
{
    (void)state;
    StrBuf b;
    sb_init(&b);
    InitParams p = P(INIT_ZIPF);
    p.lo = 0; p.hi = 255; p.exponent = 1.2;
    inputs_describe(&p, &b);
    assert_string_equal(sb_str(&b), "zipf(s=1.2, 0..255)");
    sb_reset(&b);
    InitParams h = P(INIT_HOT);
    h.fraction = 0.05; h.value = 7; h.lo = 0; h.hi = 999;
    inputs_describe(&h, &b);
    assert_string_equal(sb_str(&b), "hot(f=0.05, v=7, 0..999)");
    sb_reset(&b);
    InitParams r = P(INIT_RUNS);
    r.length = 16; r.lo = -1; r.hi = 1;
    inputs_describe(&r, &b);
    assert_string_equal(sb_str(&b), "runs(L=16, -1..1)");
    sb_reset(&b);
    InitParams c = P(INIT_CONST);
    c.value = 0.1;
    inputs_describe(&c, &b);
    assert_string_equal(sb_str(&b), "const(0.1)");
    sb_free(&b);

    char k1[65], k2[65];
    inputs_key(T("u32"), 100, &p, k1);
    assert_int_equal(strlen(k1), 64);
    inputs_key(T("u32"), 100, &p, k2);
    assert_string_equal(k1, k2);
    InitParams q = p;
    q.seed++;
    inputs_key(T("u32"), 100, &q, k2);
    assert_string_not_equal(k1, k2);
    inputs_key(T("i32"), 100, &p, k2);
    assert_string_not_equal(k1, k2);
    inputs_key(T("u32"), 101, &p, k2);
    assert_string_not_equal(k1, k2);
    q = p;
    q.exponent = 1.2000000000000002;
    inputs_key(T("u32"), 100, &q, k2);
    assert_string_not_equal(k1, k2);
    /* a constant does not depend on the seed: one input serves every buffer */
    InitParams c2 = c;
    c2.seed = 999;
    inputs_key(T("f32"), 8, &c, k1);
    inputs_key(T("f32"), 8, &c2, k2);
    assert_string_equal(k1, k2);
}

/* Integers written exactly reach the buffer unrounded: 2^63 - 1 is not a
 * double, and an AND over it must start from all those ones. */
static void test_exact_integers(void **state)
{
    (void)state;
    uint64_t buf[4];
    InitParams p = {.kind = INIT_CONST, .value = 9223372036854775807.0, .seed = 1};
    p.exact = 1;
    p.ivalue = INT64_MAX;
    KvxError err = {0};
    assert_int_equal(inputs_fill(elem_type_find("u64"), buf, 4, &p, 1, &err), 0);
    for (int i = 0; i < 4; i++)
        assert_true(buf[i] == (uint64_t)INT64_MAX);
    p.exact = 0; /* the double alone rounds up to 2^63 */
    assert_int_equal(inputs_fill(elem_type_find("u64"), buf, 4, &p, 1, &err), 0);
    assert_true(buf[0] == 9223372036854775808ULL);
    int64_t ibuf[64];
    InitParams u = {.kind = INIT_UNIFORM, .lo = -9223372036854775807.0, .hi = -9223372036854775806.0, .seed = 3};
    u.exact = 6;
    u.ilo = -INT64_MAX;
    u.ihi = -INT64_MAX + 1;
    assert_int_equal(inputs_fill(elem_type_find("i64"), ibuf, 64, &u, 1, &err), 0);
    for (int i = 0; i < 64; i++)
        assert_true(ibuf[i] == -INT64_MAX || ibuf[i] == -INT64_MAX + 1);
}

/* What kvx_fill gets, the plan alone, makes inputs_fill's bytes: every case
 * of fill_cases.h as every element type, through the host's twin of the
 * kernel (what the fake driver runs), zipf with its table; zipf past 2^24
 * ranks, or a float zipf past 2^53, stays on the host. */
static void test_plan_same_bytes(void **state)
{
    (void)state;
    InitParams ps[FILL_CASES];
    fill_cases(ps);
    uint64_t n = 2 * 65536 + 777;
    KvxError err = {0};
    InputsPlan plan;
    for (int k = 0; k < FILL_CASES; k++)
        for (int id = 0; id < ET_COUNT; id++) {
            const ElemType *t = &elem_types[id];
            unsigned char *want = fill(t->name, n, &ps[k], 2), *got = calloc(n, (size_t)t->size);
            assert_int_equal(inputs_plan(t, n, &ps[k], &plan, &err), 1);
            InputsTable tab = {0};
            if (plan.zipf_n)
                inputs_table_make(&plan, 2, &tab);
            inputs_fill_plan(&plan, got, n);
            inputs_table_free(&tab);
            if (memcmp(want, got, n * (size_t)t->size) != 0)
                fail_msg("case %d as %s: the plan's bytes differ from inputs_fill's", k, t->name);
            free(want);
            free(got);
        }
    /* past 2^24 ranks the host's rejection sampler: not on the device */
    InitParams z = P(INIT_ZIPF);
    z.lo = 0; z.hi = 0x1p24; z.exponent = 1.1;
    assert_int_equal(inputs_plan(T("u32"), n, &z, &plan, &err), 0);
    z.hi = 0x1p24 - 1;
    assert_int_equal(inputs_plan(T("u32"), n, &z, &plan, &err), 1);
    /* a float zipf past 2^53: its values would round */
    z.lo = 0x1p53; z.hi = 0x1p53 + 10;
    assert_int_equal(inputs_plan(T("f64"), n, &z, &plan, &err), 0);
    assert_int_equal(inputs_plan(T("u64"), n, &z, &plan, &err), 1);
    z.lo = 0; z.hi = 255;
    z.exponent = 0;
    assert_int_equal(inputs_plan(T("u32"), n, &z, &plan, &err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_integers),
        cmocka_unit_test(test_threads_same_bytes),
        cmocka_unit_test(test_seed_changes_data),
        cmocka_unit_test(test_const_iota),
        cmocka_unit_test(test_uniform_int),
        cmocka_unit_test(test_uniform_float),
        cmocka_unit_test(test_zipf_frequencies),
        cmocka_unit_test(test_hot),
        cmocka_unit_test(test_runs),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_describe_key),
        cmocka_unit_test(test_plan_same_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
