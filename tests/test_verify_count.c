/* Unit tests of the counting references of host/verify_ref.c (count_below,
 * count_if, count_below_by): small hand-computed cases, and the typed loops
 * that count integers of up to 32 bits held to the comparison written out,
 * for every integer type, op and threshold at and past the type's ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/verify_fixture.h"

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
    ref_fails("count_if", h, 3, "i32", 1, "(op) is \"=<\" (expected one of: < <= == != > >=)");
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

/* ---- the typed loops of count_if, count_below and count_below_by ---------------
 *
 * Integer elements of up to 32 bits are counted by typed loops over a range
 * (host/verify_ref.c's int_range), 64-bit ones by the 128-bit comparison:
 * both against the comparison written out here, for every integer type, op
 * and threshold at and past the type's ends, integral or not. */

#define NTYPED 10000

/* Element i of an array of type t (as a long double: exact for 64 bits). */
static long double typed_at(const ElemType *t, const void *p, uint64_t i)
{
    int64_t s = 0;
    uint64_t u = 0;
    switch (t->id) {
    case ET_I8: s = ((const int8_t *)p)[i]; break;
    case ET_U8: u = ((const uint8_t *)p)[i]; break;
    case ET_I16: s = ((const int16_t *)p)[i]; break;
    case ET_U16: u = ((const uint16_t *)p)[i]; break;
    case ET_I32: s = ((const int32_t *)p)[i]; break;
    case ET_U32: u = ((const uint32_t *)p)[i]; break;
    case ET_I64: s = ((const int64_t *)p)[i]; break;
    default: u = ((const uint64_t *)p)[i]; break;
    }
    return t->is_signed ? (long double)s : (long double)u;
}

/* NTYPED elements of t: the type's ends and their neighbours, 0 and +-1
 * first, then a spread of the bits. */
static void *typed_fill(const ElemType *t)
{
    unsigned char *p = calloc(NTYPED, (size_t)t->size);
    int bits = 8 * t->size;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (uint64_t i = 0; i < NTYPED; i++) {
        uint64_t v;
        switch (i % 97) {
        case 0: v = t->is_signed ? 1ull << (bits - 1) : 0; break;                   /* min */
        case 1: v = t->is_signed ? (1ull << (bits - 1)) + 1 : 1; break;             /* min + 1 */
        case 2: v = t->is_signed ? (1ull << (bits - 1)) - 1 : ~0ull; break;         /* max */
        case 3: v = t->is_signed ? (1ull << (bits - 1)) - 2 : ~0ull - 1; break;     /* max - 1 */
        case 4: v = 0; break;
        case 5: v = 1; break;
        case 6: v = ~0ull; break;                                                   /* -1 */
        default: x = x * 6364136223846793005ull + 1442695040888963407ull; v = x >> (i % 7 * 8); break;
        }
        memcpy(p + i * (uint64_t)t->size, &v, (size_t)t->size); /* little-endian: the low bytes */
    }
    return p;
}

static void test_count_typed(void **state)
{
    (void)state;
    static const char *const types[] = {"i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"};
    static const char *const ops[] = {"<", "<=", "==", "!=", ">", ">="};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const ElemType *t = T(types[ti]);
        void *data = typed_fill(t);
        int bits = 8 * t->size;
        long double lo = t->is_signed ? -ldexpl(1, bits - 1) : 0, hi = t->is_signed ? ldexpl(1, bits - 1) - 1
                                                                                  : ldexpl(1, bits) - 1;
        const long double thr[] = {lo - 1, lo, lo + 1, -1, 0, 1, 2.5, -2.5, hi - 1, hi, hi + 1, 1e30, -1e30,
                                   ldexpl(1, 40) + 7};
        for (size_t h = 0; h < sizeof thr / sizeof thr[0]; h++)
            for (int o = 0; o < 6; o++) {
                int integral = thr[h] == floorl(thr[h]) && fabsl(thr[h]) < ldexpl(1, 62);
                /* the threshold as passed: a double rounds -2^63 - 1 to -2^63 */
                long double x = integral ? thr[h] : (long double)(double)thr[h];
                RefArg a[3] = {B(types[ti], data, NTYPED), S(ops[o]), integral ? I((int64_t)x) : F((double)x)};
                Expected e;
                ref(&e, "count_if", a, 3, "u64", 1);
                uint64_t want = 0;
                for (uint64_t i = 0; i < NTYPED; i++) {
                    long double v = typed_at(t, data, i);
                    int c = (v > x) - (v < x);
                    want += o == 0 ? c < 0 : o == 1 ? c <= 0 : o == 2 ? c == 0 : o == 3 ? c != 0 : o == 4 ? c > 0
                                                                                                         : c >= 0;
                }
                if (e.u[0] != want)
                    fail_msg("count_if(%s, \"%s\", %.1Lf): %llu, expected %llu", types[ti], ops[o], x,
                             (unsigned long long)e.u[0], (unsigned long long)want);
                verify_expected_free(&e);
            }
        free(data);
    }
}

/* count_below_by with keys of every integer type, one counter and three, and
 * a bad key past the first block of the typed loop. */
static void test_count_below_by_typed(void **state)
{
    (void)state;
    static const char *const ktypes[] = {"i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"};
    int32_t *v = malloc(NTYPED * sizeof *v);
    for (uint64_t i = 0; i < NTYPED; i++)
        v[i] = (int32_t)(i * 2654435761u % 1000) - 500;
    for (size_t ti = 0; ti < sizeof ktypes / sizeof ktypes[0]; ti++)
        for (uint64_t k = 1; k <= 3; k += 2) {
            const ElemType *kt = T(ktypes[ti]);
            unsigned char *keys = calloc(NTYPED, (size_t)kt->size);
            for (uint64_t i = 0; i < NTYPED; i++) {
                uint64_t key = i * 7 % k;
                memcpy(keys + i * (uint64_t)kt->size, &key, (size_t)kt->size);
            }
            RefArg a[4] = {B("i32", v, NTYPED), I(17), B(ktypes[ti], keys, NTYPED), I((int64_t)k)};
            Expected e;
            ref(&e, "count_below_by", a, 4, "u32", k);
            for (uint64_t j = 0; j < k; j++) {
                uint64_t want = 0;
                for (uint64_t i = 0; i < NTYPED; i++)
                    want += i * 7 % k == j && v[i] < 17;
                if (e.u[j] != want)
                    fail_msg("count_below_by keys %s, k %llu: [%llu] %llu, expected %llu", ktypes[ti],
                             (unsigned long long)k, (unsigned long long)j, (unsigned long long)e.u[j],
                             (unsigned long long)want);
            }
            verify_expected_free(&e);
            uint64_t bad = kt->is_signed ? ~0ull : k; /* -1, or k */
            memcpy(keys + 5000 * (uint64_t)kt->size, &bad, (size_t)kt->size);
            ref_fails("count_below_by", a, 4, "u32", k, "key[5000]");
            free(keys);
        }
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_count_below_by),
        cmocka_unit_test(test_count_typed),
        cmocka_unit_test(test_count_below_by_typed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
