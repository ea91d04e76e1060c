/* test_types: the element-type table, bit-exact 16-bit float conversions
 * (known patterns, exhaustive round trips, and the compiler's _Float16 as an
 * independent oracle where it has one) and typed buffer access. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/elem.h"

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void test_table(void **state)
{
    (void)state;
    for (int i = 0; i < ET_COUNT; i++) {
        assert_int_equal(elem_types[i].id, i);
        assert_ptr_equal(elem_type_find(elem_types[i].name), &elem_types[i]);
    }
    const ElemType *t = elem_type_find("u32");
    assert_non_null(t);
    assert_string_equal(t->ctype, "unsigned int");
    assert_int_equal(t->size, 4);
    assert_false(t->is_float);
    assert_false(t->is_signed);
    t = elem_type_find("i8");
    assert_string_equal(t->ctype, "signed char");
    assert_true(t->is_signed);
    assert_string_equal(elem_type_find("i64")->ctype, "long long");
    assert_string_equal(elem_type_find("u64")->ctype, "unsigned long long");
    assert_string_equal(elem_type_find("f16")->ctype, "__half");
    assert_string_equal(elem_type_find("bf16")->ctype, "__nv_bfloat16");
    assert_int_equal(elem_type_find("bf16")->size, 2);
    assert_true(elem_type_find("f64")->is_float);
    assert_true(elem_type_find("f16")->rtol == 1e-2);
    assert_true(elem_type_find("bf16")->rtol == 2e-2);
    assert_true(elem_type_find("f32")->rtol == 1e-5);
    assert_true(elem_type_find("f64")->rtol == 1e-12);
    assert_true(elem_type_find("i32")->rtol == 0);
    assert_null(elem_type_find("u33"));
    assert_null(elem_type_find("float"));
    assert_null(elem_type_find(""));
    assert_null(elem_type_find(NULL));
    /* the names list is the table's, in order */
    char want[256] = "";
    for (int i = 0; i < ET_COUNT; i++) {
        if (i)
            strcat(want, ", ");
        strcat(want, elem_types[i].name);
    }
    assert_string_equal(elem_type_names(), want);
}

static void test_f16_known(void **state)
{
    (void)state;
    assert_int_equal(elem_f16_from_f32(1.0f), 0x3C00);
    assert_int_equal(elem_f16_from_f32(-2.0f), 0xC000);
    assert_int_equal(elem_f16_from_f32(0.0f), 0x0000);
    assert_int_equal(elem_f16_from_f32(-0.0f), 0x8000);
    assert_int_equal(elem_f16_from_f32(65504.0f), 0x7BFF);
    assert_int_equal(elem_f16_from_f32(65519.99f), 0x7BFF);
    assert_int_equal(elem_f16_from_f32(65520.0f), 0x7C00); /* halfway to 65536: ties to even = inf */
    assert_int_equal(elem_f16_from_f32(1e10f), 0x7C00);
    assert_int_equal(elem_f16_from_f32(INFINITY), 0x7C00);
    assert_int_equal(elem_f16_from_f32(-INFINITY), 0xFC00);
    assert_int_equal(elem_f16_from_f32(2049.0f), 0x6800); /* 2048: tie to even */
    assert_int_equal(elem_f16_from_f32(2051.0f), 0x6802); /* 2052: tie to even */
    assert_int_equal(elem_f16_from_f32(2049.5f), 0x6801); /* above the tie: 2050 */
    assert_int_equal(elem_f16_from_f32(0.1f), 0x2E66);
    assert_int_equal(elem_f16_from_f32(ldexpf(1, -14)), 0x0400);      /* smallest normal */
    assert_int_equal(elem_f16_from_f32(ldexpf(1023, -24)), 0x03FF);   /* largest subnormal */
    assert_int_equal(elem_f16_from_f32(ldexpf(1, -24)), 0x0001);      /* smallest subnormal */
    assert_int_equal(elem_f16_from_f32(ldexpf(1, -25)), 0x0000);      /* tie: even is zero */
    assert_int_equal(elem_f16_from_f32(ldexpf(1.0001f, -25)), 0x0001);
    assert_int_equal(elem_f16_from_f32(ldexpf(3, -25)), 0x0002);      /* 1.5 ulp: tie to 2 */
    assert_int_equal(elem_f16_from_f32(ldexpf(2047, -25)), 0x0400);   /* rounds up into the normals */
    assert_int_equal(elem_f16_from_f32(ldexpf(1, -140)), 0x0000);     /* float subnormal */
    uint16_t nan = elem_f16_from_f32(NAN);
    assert_int_equal(nan & 0x7C00, 0x7C00);
    assert_true((nan & 0x3FF) != 0);
    assert_int_equal(elem_f16_from_f32(from_bits(0x7F800001)) & 0x7E00, 0x7E00); /* signalling -> quiet NaN */

    assert_true(elem_f16_to_f32(0x3C00) == 1.0f);
    assert_true(elem_f16_to_f32(0x7BFF) == 65504.0f);
    assert_true(elem_f16_to_f32(0x0001) == ldexpf(1, -24));
    assert_true(elem_f16_to_f32(0x03FF) == ldexpf(1023, -24));
    assert_true(elem_f16_to_f32(0x0400) == ldexpf(1, -14));
    assert_true(isinf(elem_f16_to_f32(0x7C00)) && elem_f16_to_f32(0x7C00) > 0);
    assert_true(isinf(elem_f16_to_f32(0xFC00)) && elem_f16_to_f32(0xFC00) < 0);
    assert_true(isnan(elem_f16_to_f32(0x7E00)));
    assert_int_equal(bits(elem_f16_to_f32(0x8000)), 0x80000000u);
}

static void test_f16_exhaustive(void **state)
{
    (void)state;
    /* every half survives half -> float -> half */
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = elem_f16_to_f32((uint16_t)h);
        if (isnan(f)) {
            assert_true((h & 0x7C00) == 0x7C00 && (h & 0x3FF));
            continue;
        }
        if (elem_f16_from_f32(f) != h)
            fail_msg("half 0x%04x -> %g -> 0x%04x", h, (double)f, elem_f16_from_f32(f));
    }
    /* every midpoint between neighbouring finite positive halves rounds to the
     * even one, and a hair on either side rounds to the nearer one */
    for (uint32_t h = 0; h < 0x7BFF; h++) {
        float lo = elem_f16_to_f32((uint16_t)h), hi = elem_f16_to_f32((uint16_t)(h + 1));
        float mid = (lo + hi) / 2; /* exact in float */
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        if (elem_f16_from_f32(mid) != even)
            fail_msg("midpoint of 0x%04x and 0x%04x -> 0x%04x", h, h + 1, elem_f16_from_f32(mid));
        assert_int_equal(elem_f16_from_f32(nextafterf(mid, 0)), h);
        assert_int_equal(elem_f16_from_f32(nextafterf(mid, INFINITY)), h + 1);
        assert_int_equal(elem_f16_from_f32(-mid), 0x8000 | even);
    }
}

static void test_f16_oracle(void **state)
{
    (void)state;
#if defined(__FLT16_MAX__) && !defined(__clang__)
    /* GCC's _Float16 conversions (libgcc's, correctly rounded) as an oracle,
     * over a spread of float bit patterns */
    uint32_t x = 12345;
    for (int i = 0; i < 2000000; i++) {
        x = x * 1664525u + 1013904223u;
        float f = from_bits(x);
        if (isnan(f))
            continue;
        _Float16 r = (_Float16)f;
        uint16_t want;
        memcpy(&want, &r, 2);
        if (elem_f16_from_f32(f) != want)
            fail_msg("%a: 0x%04x, _Float16 says 0x%04x", (double)f, elem_f16_from_f32(f), want);
    }
#else
    skip();
#endif
}

static void test_bf16(void **state)
{
    (void)state;
    assert_int_equal(elem_bf16_from_f32(1.0f), 0x3F80);
    assert_int_equal(elem_bf16_from_f32(-1.0f), 0xBF80);
    assert_int_equal(elem_bf16_from_f32(3.0f), 0x4040);
    assert_int_equal(elem_bf16_from_f32(1.0f + ldexpf(1, -8)), 0x3F80);     /* tie to even */
    assert_int_equal(elem_bf16_from_f32(1.0f + 3 * ldexpf(1, -8)), 0x3F82); /* tie to even */
    assert_int_equal(elem_bf16_from_f32(1.0f + ldexpf(1, -8) + ldexpf(1, -20)), 0x3F81);
    assert_int_equal(elem_bf16_from_f32(INFINITY), 0x7F80);
    assert_int_equal(elem_bf16_from_f32(-INFINITY), 0xFF80);
    assert_int_equal(elem_bf16_from_f32(from_bits(0x7F7FFFFF)), 0x7F80); /* FLT_MAX rounds to inf */
    assert_int_equal(elem_bf16_from_f32(from_bits(0x00000001)), 0x0000); /* tiny subnormal: zero */
    assert_int_equal(elem_bf16_from_f32(from_bits(0x00018000)), 0x0002); /* subnormal tie to even */
    uint16_t nan = elem_bf16_from_f32(from_bits(0x7F800001)); /* low-payload NaN must not become inf */
    assert_true((nan & 0x7F80) == 0x7F80 && (nan & 0x7F));
    assert_true(elem_bf16_to_f32(0x3F80) == 1.0f);
    assert_true(elem_bf16_to_f32(0x4049) == 3.140625f);
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = elem_bf16_to_f32((uint16_t)h);
        if (!isnan(f) && elem_bf16_from_f32(f) != h)
            fail_msg("bf16 0x%04x -> %g -> 0x%04x", h, (double)f, elem_bf16_from_f32(f));
    }
}

static void test_typed_access(void **state)
{
    (void)state;
    unsigned char buf[64];
    const ElemType *i8 = elem_type_find("i8"), *u8 = elem_type_find("u8"),
                   *u16 = elem_type_find("u16"), *i32 = elem_type_find("i32"),
                   *u32 = elem_type_find("u32"), *i64 = elem_type_find("i64"),
                   *u64 = elem_type_find("u64"), *f16 = elem_type_find("f16"),
                   *bf16 = elem_type_find("bf16"), *f32 = elem_type_find("f32"),
                   *f64 = elem_type_find("f64");

    memset(buf, 0, sizeof buf);
    elem_set_i64(i8, buf, 3, 300); /* wraps like a device store: 300 & 0xff = 44 */
    assert_int_equal(buf[3], 44);
    assert_int_equal(elem_get_i64(i8, buf, 3), 44);
    elem_set_i64(i8, buf, 2, -1);
    assert_int_equal(elem_get_i64(i8, buf, 2), -1);
    assert_true(elem_get_u64(i8, buf, 2) == UINT64_MAX);
    assert_true(elem_get_f64(i8, buf, 2) == -1.0);
    assert_int_equal(elem_get_i64(u8, buf, 2), 255);
    assert_true(elem_get_f64(u8, buf, 2) == 255.0);

    elem_set_i64(u16, buf, 1, 70000);
    assert_int_equal(elem_get_i64(u16, buf, 1), 70000 - 65536);
    elem_set_i64(u32, buf, 1, -1);
    assert_int_equal(elem_get_i64(u32, buf, 1), 4294967295LL);
    elem_set_i64(i32, buf, 2, -5);
    assert_int_equal(elem_get_i64(i32, buf, 2), -5);
    elem_set_f64(i32, buf, 2, -3.7); /* toward zero */
    assert_int_equal(elem_get_i64(i32, buf, 2), -3);
    elem_set_f64(i32, buf, 2, 3.7);
    assert_int_equal(elem_get_i64(i32, buf, 2), 3);

    elem_set_i64(u64, buf, 1, -1);
    assert_true(elem_get_u64(u64, buf, 1) == UINT64_MAX);
    assert_true(elem_get_f64(u64, buf, 1) == 18446744073709551615.0);
    elem_set_f64(u64, buf, 1, 1e19); /* above INT64_MAX, within u64 */
    assert_true(elem_get_u64(u64, buf, 1) == 10000000000000000000ULL);
    elem_set_i64(i64, buf, 2, INT64_MIN);
    assert_true(elem_get_i64(i64, buf, 2) == INT64_MIN);

    elem_set_f64(f16, buf, 5, 2049.0);
    assert_true(elem_get_f64(f16, buf, 5) == 2048.0);
    elem_set_i64(f16, buf, 5, 65520);
    assert_true(isinf(elem_get_f64(f16, buf, 5)));
    /* double rounding: 1 + 2^-11 + 2^-40 lies above the f16 midpoint, but a
     * double -> float -> half path would see the midpoint and round down */
    elem_set_f64(f16, buf, 0, 1.0 + ldexp(1, -11) + ldexp(1, -40));
    assert_int_equal(buf[0] | buf[1] << 8, 0x3C01);
    elem_set_f64(bf16, buf, 1, 1.0);
    assert_true(elem_get_f64(bf16, buf, 1) == 1.0);
    assert_int_equal(buf[2] | buf[3] << 8, 0x3F80);
    elem_set_f64(bf16, buf, 1, 1.0 + ldexp(1, -8) + ldexp(1, -40));
    assert_int_equal(buf[2] | buf[3] << 8, 0x3F81);
    /* likewise for integers above 2^53: 2^62 + 2^54 + 1 is above the bf16
     * midpoint 2^62 + 2^54, which is all a double would keep */
    elem_set_i64(bf16, buf, 1, ((int64_t)1 << 62) + ((int64_t)1 << 54) + 1);
    assert_int_equal(buf[2] | buf[3] << 8, 0x5E81);
    elem_set_i64(bf16, buf, 1, ((int64_t)1 << 62) + ((int64_t)1 << 54));
    assert_int_equal(buf[2] | buf[3] << 8, 0x5E80);
    assert_int_equal(elem_get_i64(bf16, buf, 1), (int64_t)1 << 62);

    elem_set_f64(f32, buf, 3, 0.1);
    assert_true(elem_get_f64(f32, buf, 3) == (double)0.1f);
    elem_set_i64(f32, buf, 3, 16777217); /* 2^24 + 1: ties to even */
    assert_true(elem_get_f64(f32, buf, 3) == 16777216.0);
    elem_set_f64(f32, buf, 3, -2.9);
    assert_int_equal(elem_get_i64(f32, buf, 3), -2);
    elem_set_f64(f64, buf, 7, 0.1);
    assert_true(elem_get_f64(f64, buf, 7) == 0.1);
    elem_set_f64(f64, buf, 7, NAN);
    assert_int_equal(elem_get_i64(f64, buf, 7), 0);
    elem_set_f64(f64, buf, 7, -1e300);
    assert_true(elem_get_i64(f64, buf, 7) == INT64_MIN);
    /* elements land at index * size */
    memset(buf, 0, sizeof buf);
    elem_set_i64(u32, buf, 3, 0x11223344);
    assert_int_equal(buf[12], 0x44);
    assert_int_equal(buf[15], 0x11);
}

#if defined(__FLT16_MAX__) && !defined(__clang__)
static void test_set_f64_oracle(void **state)
{
    (void)state;
    /* double -> f16 through elem_set_f64 matches a direct correctly rounded
     * conversion over random doubles near the f16 range */
    uint64_t x = 99;
    const ElemType *f16 = elem_type_find("f16");
    for (int i = 0; i < 1000000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        double d = ldexp((double)(x >> 11), -53) * ldexp(1, (int)(x % 48) - 30);
        if (x & 1)
            d = -d;
        uint16_t got;
        elem_set_f64(f16, &got, 0, d);
        _Float16 r = (_Float16)d;
        uint16_t want;
        memcpy(&want, &r, 2);
        if (got != want)
            fail_msg("%a: 0x%04x, _Float16 says 0x%04x", d, got, want);
    }
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_f16_known),
        cmocka_unit_test(test_f16_exhaustive),
        cmocka_unit_test(test_f16_oracle),
        cmocka_unit_test(test_bf16),
        cmocka_unit_test(test_typed_access),
#if defined(__FLT16_MAX__) && !defined(__clang__)
        cmocka_unit_test(test_set_f64_oracle),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
