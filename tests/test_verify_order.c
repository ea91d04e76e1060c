/* Unit tests of host/verify_order.c on host buffers: the order-free
 * (multiset) comparison and the compared length that a stream compaction
 * needs (docs/spec.md, Checks: `order: any`, `length:`).
 *
 * Checked: a permutation of the kept elements passes; a variant that writes
 * one kept element twice and drops another fails, listing both values; the
 * same buffer compared in order fails; floats pass after sorting within the
 * tolerance and fail beyond it; only the prefix is compared; a length past
 * the buffer, or negative, is refused (a mismatch, never a read past it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "host/verify.h"

static const ElemType *T(const char *name) { return elem_type_find(name); }

static void must_have(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("'%s' lacks '%s'", text, needle);
}

/* The reference a compaction's serial kernel writes: kept elements in index
 * order, then the buffer's init (-1) after them. */
static const int32_t want[8] = {40, 10, 30, 20, 50, -1, -1, -1};

static void test_permutation_passes(void **state)
{
    (void)state;
    int32_t got[8] = {20, 50, 10, 40, 30, -1, -1, -1};
    Expected e;
    VerifyReport r;
    verify_from_output(T("i32"), want, 8, &e);
    verify_compare_prefix(&e, T("i32"), got, 5, 1, "out", 0, &r);
    assert_true(r.ok);
    assert_int_equal(r.nmismatch, 0);
    /* In order, the same buffer is wrong: what order: any is for. */
    verify_compare_prefix(&e, T("i32"), got, 5, 0, "out", 0, &r);
    assert_false(r.ok);
    verify_expected_free(&e);
}

static void test_duplicate_and_drop_caught(void **state)
{
    (void)state;
    /* 30 written twice, 20 never: the count (5) is right. */
    int32_t got[8] = {30, 50, 10, 40, 30, -1, -1, -1};
    Expected e;
    VerifyReport r;
    verify_from_output(T("i32"), want, 8, &e);
    verify_compare_prefix(&e, T("i32"), got, 5, 1, "out", 0, &r);
    assert_false(r.ok);
    assert_int_equal(r.nmismatch, 2);
    assert_true(r.rel_err == 1);
    must_have(r.first, "out: 20 written 0 times, expected 1");
    must_have(r.first, "out: 30 written 2 times, expected 1");
    verify_expected_free(&e);
}

/* The listing of a mismatch the device found: both sides already sorted
 * there (the device's order: signed values by value), not sorted again. */
static void test_sorted_listing(void **state)
{
    (void)state;
    int32_t got[5] = {-7, 10, 30, 30, 50}, sorted_want[5] = {-7, 10, 20, 30, 50};
    VerifyReport r;
    verify_multiset_sorted(T("i32"), got, sorted_want, 5, "out", &r);
    assert_false(r.ok);
    assert_int_equal(r.nmismatch, 2);
    must_have(r.first, "out: 20 written 0 times, expected 1");
    must_have(r.first, "out: 30 written 2 times, expected 1");
    verify_multiset_sorted(T("i32"), sorted_want, sorted_want, 5, "out", &r);
    assert_true(r.ok);
    assert_int_equal(r.nmismatch, 0);
}

static void test_signed_and_wide(void **state)
{
    (void)state;
    /* Signed order (negatives first) and 64-bit values both ways. */
    int64_t w[4] = {-3, INT64_MAX, INT64_MIN, 7}, g[4] = {7, INT64_MIN, -3, INT64_MAX};
    Expected e;
    VerifyReport r;
    verify_from_output(T("i64"), w, 4, &e);
    verify_compare_prefix(&e, T("i64"), g, 4, 1, "v", 0, &r);
    assert_true(r.ok);
    g[1] = -4;
    verify_compare_prefix(&e, T("i64"), g, 4, 1, "v", 0, &r);
    assert_false(r.ok);
    must_have(r.first, "v: -9223372036854775808 written 0 times, expected 1");
    must_have(r.first, "v: -4 written 1 time, expected 0");
    verify_expected_free(&e);
}

static void test_floats_after_sorting(void **state)
{
    (void)state;
    float w[6] = {1.5f, -2.0f, 8.0f, 0.25f, 0, 0}, g[6] = {8.0f, 0.25f, 1.5f, -2.0f, 99, 99};
    Expected e;
    VerifyReport r;
    verify_from_output(T("f32"), w, 6, &e);
    verify_compare_prefix(&e, T("f32"), g, 4, 1, "x", 1e-5, &r);
    assert_true(r.ok);
    /* Within the tolerance after sorting: 8 * (1 + 1e-7). */
    g[0] = 8.000001f;
    verify_compare_prefix(&e, T("f32"), g, 4, 1, "x", 1e-5, &r);
    assert_true(r.ok);
    assert_true(r.rel_err > 0 && r.rel_err < 1e-5);
    /* Beyond it: one value changed. */
    g[0] = 9.0f;
    verify_compare_prefix(&e, T("f32"), g, 4, 1, "x", 1e-5, &r);
    assert_false(r.ok);
    must_have(r.first, "x sorted[3]: got 9, expected 8");
    verify_expected_free(&e);
}

static void test_prefix_only(void **state)
{
    (void)state;
    /* What lies past the length is the variant's business (its init, or
     * scratch): not compared. */
    uint32_t w[4] = {1, 2, 3, 4}, g[4] = {2, 1, 77, 77};
    Expected e;
    VerifyReport r;
    verify_from_output(T("u32"), w, 4, &e);
    verify_compare_prefix(&e, T("u32"), g, 2, 1, "out", 0, &r);
    assert_true(r.ok);
    verify_compare_prefix(&e, T("u32"), g, 3, 1, "out", 0, &r);
    assert_false(r.ok);
    verify_expected_free(&e);
}

static void test_length(void **state)
{
    (void)state;
    char why[160] = "";
    uint64_t n = 12345;
    uint32_t c = 4096;
    assert_int_equal(verify_length(T("u32"), &c, "count", 4096, &n, why, sizeof why), 0);
    assert_int_equal(n, 4096);
    c = 4097;
    assert_int_equal(verify_length(T("u32"), &c, "count", 4096, &n, why, sizeof why), -1);
    assert_string_equal(why, "length count = 4097 is past its 4096 elements");
    int16_t s = -1;
    assert_int_equal(verify_length(T("i16"), &s, "k", 10, &n, why, sizeof why), -1);
    assert_string_equal(why, "length k = -1 is negative");
    uint64_t big = UINT64_MAX;
    assert_int_equal(verify_length(T("u64"), &big, "k", 10, &n, why, sizeof why), -1);
    assert_string_equal(why, "length k = 18446744073709551615 is past its 10 elements");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permutation_passes),
        cmocka_unit_test(test_duplicate_and_drop_caught),
        cmocka_unit_test(test_sorted_listing),
        cmocka_unit_test(test_signed_and_wide),
        cmocka_unit_test(test_floats_after_sorting),
        cmocka_unit_test(test_prefix_only),
        cmocka_unit_test(test_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
