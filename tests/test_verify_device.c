/* unit: a comparison made chunk by chunk, as the device makes it (issue #24
 * item 2; host/verify_device.c), reaches the verdict and names the first
 * differing elements in the same words as verify_compare on the whole
 * output: integers with differences in chunks 1 and 3 of 5 (more than four:
 * "... N more"), a constant reference (stride 0), float outputs within the
 * tolerance, past it (the element rule's second pass), and with a NaN.  And
 * the order-free check's fingerprint (verify_mset_host, the twin of
 * kvx_mset_hash): the same sums for every order of the same elements, other
 * ones for one value in place of another or a count moved between values,
 * for every integer type; a value's bits, not its sign-extended value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host/verify.h"

enum { N = 4 * VERIFY_CHUNK + 1234 };

/* The chunked comparison of out against ref (type rt, stride), into rep. */
static void chunked(const ElemType *t, const void *out, const ElemType *rt, const void *ref, uint64_t stride,
                    double rtol, VerifyReport *rep)
{
    uint64_t nch = (N + VERIFY_CHUNK - 1) / VERIFY_CHUNK;
    VerifyChunk *ch = calloc(nch, sizeof *ch);
    memset(rep, 0, sizeof *rep);
    int norm_ok = 1;
    for (int pass = 0; pass < 2; pass++) {
        for (uint64_t c = 0; c < nch; c++) {
            uint64_t e = (c + 1) * VERIFY_CHUNK < N ? (c + 1) * VERIFY_CHUNK : N;
            verify_chunk_host(t, out, rt, ref, stride, c * VERIFY_CHUNK, e, rtol, norm_ok, &ch[c]);
        }
        verify_chunks_report(ch, nch, t, N, rtol, &norm_ok, rep);
        if (norm_ok)
            break;
    }
    for (uint64_t c = 0; c < nch && !rep->ok && rep->listed < 4; c++) {
        if (!ch[c].bad)
            continue;
        uint64_t b = c * VERIFY_CHUNK, n = N - b < VERIFY_CHUNK ? N - b : VERIFY_CHUNK;
        const char *o = (const char *)out + b * t->size;
        const char *r = stride ? (const char *)ref + b * rt->size : ref;
        verify_list_slice(t, o, rt, r, stride, b, n, rtol, norm_ok, "out", rep);
    }
    if (!rep->ok)
        verify_list_close(rep);
    free(ch);
}

static void same_report(const VerifyReport *a, const VerifyReport *b)
{
    assert_int_equal(a->ok, b->ok);
    assert_int_equal(a->nmismatch, b->nmismatch);
    assert_string_equal(a->first, b->first);
    if (isinf(b->rel_err) || b->rel_err == 0)
        assert_true(a->rel_err == b->rel_err);
    else
        assert_true(fabs(a->rel_err - b->rel_err) <= 1e-12 * b->rel_err);
}

static void test_ints(void **state)
{
    (void)state;
    const ElemType *t = &elem_types[ET_I16];
    int16_t *out = malloc(N * sizeof *out);
    for (uint64_t i = 0; i < N; i++)
        out[i] = (int16_t)(i * 7);
    Expected exp;
    assert_int_equal(verify_from_output(t, out, N, &exp), 0);
    int16_t *ref = malloc(N * sizeof *ref);
    memcpy(ref, out, N * sizeof *out);
    const uint64_t wrong[] = {VERIFY_CHUNK + 5, VERIFY_CHUNK + 6, 3 * VERIFY_CHUNK, 3 * VERIFY_CHUNK + 9,
                              3 * VERIFY_CHUNK + 10, N - 1};
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++)
        out[wrong[i]] = (int16_t)-out[wrong[i]] - 1;
    VerifyReport host, dev;
    verify_compare(&exp, t, out, "out", 0, &host);
    chunked(t, out, t, ref, 1, 0, &dev);
    assert_false(dev.ok);
    assert_int_equal(dev.nmismatch, 6);
    assert_non_null(strstr(dev.first, "out[65541]: got "));
    assert_non_null(strstr(dev.first, "; ... 2 more"));
    same_report(&dev, &host);
    verify_expected_free(&exp);

    /* a constant reference: one value, stride 0 */
    for (uint64_t i = 0; i < N; i++)
        out[i] = 7;
    out[2 * VERIFY_CHUNK + 1] = 8;
    Value seven = {.kind = VAL_INT, .i = 7, .d = 7};
    assert_int_equal(verify_constant(seven, t, N, &exp), 0);
    int16_t one = 7;
    verify_compare(&exp, t, out, "out", 0, &host);
    chunked(t, out, t, &one, 0, 0, &dev);
    assert_string_equal(dev.first, "out[131073]: got 8, expected 7");
    same_report(&dev, &host);
    verify_expected_free(&exp);
    free(out);
    free(ref);
}

static void test_floats(void **state)
{
    (void)state;
    const ElemType *t = &elem_types[ET_F32], *f64 = &elem_types[ET_F64];
    float *out = malloc(N * sizeof *out);
    double *ref = malloc(N * sizeof *ref);
    for (uint64_t i = 0; i < N; i++) {
        ref[i] = sin((double)i) * 100;
        out[i] = (float)ref[i];
    }
    Expected exp = {.kind = EXPECT_VALUES, .count = N, .is_float = 1, .f = ref};
    VerifyReport host, dev;
    /* within 1e-5: rounding to f32 only */
    verify_compare(&exp, t, out, "out", 1e-5, &host);
    chunked(t, out, f64, ref, 1, 1e-5, &dev);
    assert_true(dev.ok);
    same_report(&dev, &host);
    /* past it: the elements off by more than rtol * |ref| are named */
    out[VERIFY_CHUNK * 2 + 3] += 50;
    out[VERIFY_CHUNK * 4 + 1] -= 70;
    verify_compare(&exp, t, out, "out", 1e-5, &host);
    chunked(t, out, f64, ref, 1, 1e-5, &dev);
    assert_false(dev.ok);
    assert_int_equal(dev.nmismatch, 2);
    same_report(&dev, &host);
    /* a NaN where the reference is finite */
    out[17] = NAN;
    verify_compare(&exp, t, out, "out", 1e-5, &host);
    chunked(t, out, f64, ref, 1, 1e-5, &dev);
    assert_true(isinf(dev.rel_err));
    assert_non_null(strstr(dev.first, "out[17]: got nan"));
    same_report(&dev, &host);
    free(out);
    free(ref);
}

/* The two fingerprint sums of a and of b (n elements of t) agree: 1, 0. */
static int mset_equal(const ElemType *t, const void *a, const void *b, uint64_t n)
{
    uint64_t ha[2], hb[2];
    verify_mset_host(t, a, n, ha);
    verify_mset_host(t, b, n, hb);
    assert_true((ha[0] == hb[0]) == (ha[1] == hb[1])); /* both sums tell a difference here */
    return ha[0] == hb[0] && ha[1] == hb[1];
}

static void test_mset_fingerprint(void **state)
{
    (void)state;
    enum { M = 5000 };
    for (int id = 0; id < ET_COUNT; id++) {
        const ElemType *t = &elem_types[id];
        if (t->is_float)
            continue;
        size_t sz = (size_t)t->size;
        unsigned char *a = malloc(M * sz), *b = malloc(M * sz);
        uint64_t s = 7;
        for (uint64_t i = 0; i < M; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t v = (s >> 33) % 300; /* duplicates */
            memcpy(a + i * sz, &v, sz);
        }
        for (uint64_t i = 0; i < M; i++) /* a stride coprime to M: a permutation */
            memcpy(b + i * sz, a + (i * 2003 % M) * sz, sz);
        assert_true(mset_equal(t, a, b, M));
        memcpy(b + 10 * sz, b + 11 * sz, sz); /* one written twice, another dropped */
        if (memcmp(b + 10 * sz, a + (10 * 2003 % M) * sz, sz) != 0)
            assert_false(mset_equal(t, a, b, M));
        memcpy(b, a, M * sz);
        b[3 * sz] ^= 1; /* one value in place of another */
        assert_false(mset_equal(t, a, b, M));
        free(a);
        free(b);
    }
    /* the bits: i8's -1 and u8's 255 are the same byte, the same sums */
    int8_t m1 = -1;
    uint8_t ff = 255;
    uint64_t hi[2], hu[2];
    verify_mset_host(&elem_types[ET_I8], &m1, 1, hi);
    verify_mset_host(&elem_types[ET_U8], &ff, 1, hu);
    assert_true(hi[0] == hu[0] && hi[1] == hu[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ints),
        cmocka_unit_test(test_floats),
        cmocka_unit_test(test_mset_fingerprint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
