/* gpu: kvx's own compare kernel on a real GPU (issue #24 item 2;
 * gpu/devio.cu, loaded from gpu/devio_ptx.h by the driver as the worker loads
 * it).  Checked:
 * - kvx_compare's per-chunk figures equal the host's twin (verify_chunk_host)
 *   for every element type, with the reference in the output's type, as
 *   double (floats), and as one value (stride 0), both passes (norm_ok 1 and
 *   0), with planted differences, NaN and inf: the counts exactly, the sums
 *   and the largest error to 1e-12 (the device sums in a tree, the host in
 *   order);
 * - the order-free check's sort (kvx_sort_key, _count, _scan, _scatter, in
 *   the worker's sequence: gpu/worker_compare.c) puts every element type in
 *   the host's order: integers by value, signed ones below zero first,
 *   floats by value with infinities at the ends and NaNs last, over several
 *   tiles with many duplicates; the sorted copy holds the same multiset;
 * - the order-free check's fingerprint (kvx_mset_hash) adds the sums of its
 *   host twin (verify_mset_host, the fake driver's stand-in), bit for bit,
 *   for every integer type, on the worker's grid and on a small one (the
 *   grid-stride loop, the shuffles and one atomic a block): a permutation
 *   (the ok of a compaction, decided without a sort) has both sides' sums
 *   equal; one value written twice and another dropped, and one value in
 *   place of another (not a permutation), have them differ, both sums, so
 *   the worker goes on to sort and list;
 * - end to end, `kvx run` of tests/data/specs/copy.yaml: the planted wrong
 *   variant (it skips the last element) is a mismatch whose detail names
 *   that element, compared on the device against `out: in`.
 * Without a GPU the test exits 77 with the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "gpu/cudadl.h"
#include "gpu/devio_ptx.h"
#include "host/verify.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "tests/kvx_child.h"
#pragma GCC diagnostic pop

#define SPECS KVX_SOURCE_DIR "/tests/data/specs/"

enum { N = 3 * VERIFY_CHUNK + 77 };

static CUcontext ctx;
static CUstream stream;
static CUfunction cmp_fn;
static CUfunction sort_fn[4];   /* kvx_sort_key, _count, _scan, _scatter */
static CUfunction mset_fn;      /* kvx_mset_hash */

/* Element i of a random output of type t near v, written as t. */
static void put(const ElemType *t, void *p, uint64_t i, double v)
{
    if (t->is_float)
        elem_set_f64(t, p, i, v);
    else
        elem_set_i64(t, p, i, (int64_t)v);
}

static CUdeviceptr upload(const void *p, uint64_t bytes)
{
    CUdeviceptr d = 0;
    assert_int_equal(cu.cuMemAlloc(&d, bytes), CUDA_SUCCESS);
    assert_int_equal(cu.cuMemcpyHtoDAsync(d, p, bytes, stream), CUDA_SUCCESS);
    return d;
}

/* Sums of squares over a chunk of 65,536 elements: the device adds them in a
 * tree, the host in order, so they agree to the rounding of either order
 * (up to about n x 2^-53 relative, 7e-12 here; seen on an H200 at 1.4e-12),
 * not bit for bit.  Counts and the verdict must match exactly. */
static void close_to(double got, double want)
{
    if (got == want || (isnan(got) && isnan(want)))
        return;
    if (!(fabs(got - want) <= 1e-10 * fabs(want)))
        fail_msg("device %.17g, host %.17g", got, want);
}

/* One comparison on the device against the host's twin, chunk by chunk. */
static void one(const ElemType *t, const void *out, const ElemType *rt, const void *ref, uint64_t stride,
                double rtol, int norm_ok)
{
    uint64_t nch = (N + VERIFY_CHUNK - 1) / VERIFY_CHUNK, n = N;
    CUdeviceptr dout = upload(out, N * (uint64_t)t->size);
    CUdeviceptr dref = upload(ref, (stride ? N : 1) * (uint64_t)rt->size);
    CUdeviceptr dch = 0;
    assert_int_equal(cu.cuMemAlloc(&dch, nch * sizeof(VerifyChunk)), CUDA_SUCCESS);
    uint32_t code = (uint32_t)t->id | (rt->id == ET_F64 && t->id != ET_F64 ? DEVIO_REF_F64 : 0);
    uint32_t nok = (uint32_t)norm_ok;
    void *argv[] = {&dout, &dref, &n, &stride, &code, &rtol, &nok, &dch};
    assert_int_equal(cu.cuLaunchKernel(cmp_fn, (unsigned)nch, 1, 1, DEVIO_THREADS, 1, 1, 0, stream, argv, NULL),
                     CUDA_SUCCESS);
    assert_int_equal(cu.cuStreamSynchronize(stream), CUDA_SUCCESS);
    VerifyChunk dev[8], host;
    assert_int_equal(cu.cuMemcpyDtoH(dev, dch, nch * sizeof(VerifyChunk)), CUDA_SUCCESS);
    for (uint64_t c = 0; c < nch; c++) {
        uint64_t e = (c + 1) * VERIFY_CHUNK < N ? (c + 1) * VERIFY_CHUNK : N;
        verify_chunk_host(t, out, rt, ref, stride, c * VERIFY_CHUNK, e, rtol, norm_ok, &host);
        if (dev[c].bad != host.bad || dev[c].nonfinite != host.nonfinite)
            fail_msg("%s (ref %s, stride %llu, norm_ok %d) chunk %llu: bad %llu/%llu nonfinite %llu/%llu",
                     t->name, rt->name, (unsigned long long)stride, norm_ok, (unsigned long long)c,
                     (unsigned long long)dev[c].bad, (unsigned long long)host.bad,
                     (unsigned long long)dev[c].nonfinite, (unsigned long long)host.nonfinite);
        close_to(dev[c].dd, host.dd);
        close_to(dev[c].rr, host.rr);
        close_to(dev[c].max_abs, host.max_abs);
    }
    cu.cuMemFree(dout);
    cu.cuMemFree(dref);
    cu.cuMemFree(dch);
}

static void test_compare_matches_host(void **state)
{
    (void)state;
    for (int id = 0; id < ET_COUNT; id++) {
        const ElemType *t = &elem_types[id];
        char *out = mem_alloc(N * (uint64_t)t->size), *ref = mem_alloc(N * (uint64_t)t->size);
        double *ref64 = mem_alloc(N * sizeof *ref64);
        uint64_t s = 12345;
        for (uint64_t i = 0; i < N; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            double v = t->is_float ? (double)(int64_t)(s >> 40) / 65536.0 : (double)(s >> 58);
            put(t, ref, i, v);
            ref64[i] = elem_get_f64(t, ref, i);
            put(t, out, i, i % 5000 == 3 ? v + 3 : v); /* planted, in every chunk */
        }
        if (t->is_float) {
            put(t, out, 10, NAN);
            put(t, out, VERIFY_CHUNK + 1, INFINITY);
            put(t, ref, 2 * VERIFY_CHUNK + 5, NAN);
            ref64[2 * VERIFY_CHUNK + 5] = NAN;
        }
        for (int norm_ok = 0; norm_ok < 2; norm_ok++) {
            one(t, out, t, ref, 1, 1e-5, norm_ok);
            one(t, out, t, ref, 0, 1e-5, norm_ok);
            if (t->is_float && id != ET_F64)
                one(t, out, &elem_types[ET_F64], ref64, 1, 1e-5, norm_ok);
        }
        free(out);
        free(ref);
        free(ref64);
    }
}

/* ---- the sort ------------------------------------------------------------------------ */

static void launch(CUfunction f, uint64_t grid, unsigned block, void **argv)
{
    assert_int_equal(cu.cuLaunchKernel(f, (unsigned)grid, 1, 1, block, 1, 1, 0, stream, argv, NULL), CUDA_SUCCESS);
}

/* n elements of type t at src sorted on the device into dst, as the worker
 * does it (worker_compare.c's sort_device). */
static void sort_on_device(const ElemType *t, CUdeviceptr src, uint64_t n, CUdeviceptr dst)
{
    uint64_t tiles = (n + DEVIO_SORT_TILE - 1) / DEVIO_SORT_TILE, total = 256 * tiles;
    uint64_t kgrid = (n + DEVIO_THREADS - 1) / DEVIO_THREADS;
    CUdeviceptr a = 0, b = 0, counts = 0;
    assert_int_equal(cu.cuMemAlloc(&a, 8 * n), CUDA_SUCCESS);
    assert_int_equal(cu.cuMemAlloc(&b, 8 * n), CUDA_SUCCESS);
    assert_int_equal(cu.cuMemAlloc(&counts, 8 * total), CUDA_SUCCESS);
    uint32_t code = (uint32_t)t->id, back = (uint32_t)t->id | DEVIO_SORT_BACK;
    void *ka[] = {&src, &a, &n, &code};
    launch(sort_fn[0], kgrid < 4096 ? kgrid : 4096, DEVIO_THREADS, ka);
    for (uint32_t shift = 0; shift < 8u * (uint32_t)t->size; shift += 8) {
        void *ca[] = {&a, &n, &shift, &counts}, *sa[] = {&counts, &total}, *xa[] = {&a, &b, &n, &shift, &counts};
        launch(sort_fn[1], tiles, DEVIO_THREADS, ca);
        launch(sort_fn[2], 1, 1024, sa);
        launch(sort_fn[3], tiles, 32, xa);
        CUdeviceptr x = a;
        a = b, b = x;
    }
    void *ba[] = {&a, &dst, &n, &back};
    launch(sort_fn[0], kgrid < 4096 ? kgrid : 4096, DEVIO_THREADS, ba);
    assert_int_equal(cu.cuStreamSynchronize(stream), CUDA_SUCCESS);
    cu.cuMemFree(a);
    cu.cuMemFree(b);
    cu.cuMemFree(counts);
}

static const ElemType *g_sort_t;

/* The host's order (host/verify_order.c): by value, NaNs last as one. */
static int cmp_host(const void *x, const void *y)
{
    const ElemType *t = g_sort_t;
    if (t->is_float) {
        double a = elem_get_f64(t, x, 0), b = elem_get_f64(t, y, 0);
        if (isnan(a) || isnan(b))
            return isnan(a) - isnan(b);
        return (a > b) - (a < b);
    }
    if (t->is_signed) {
        int64_t a = elem_get_i64(t, x, 0), b = elem_get_i64(t, y, 0);
        return (a > b) - (a < b);
    }
    uint64_t a = elem_get_u64(t, x, 0), b = elem_get_u64(t, y, 0);
    return (a > b) - (a < b);
}

static void test_sort_matches_host(void **state)
{
    (void)state;
    enum { SN = 5 * DEVIO_SORT_TILE + 1234 };
    for (int id = 0; id < ET_COUNT; id++) {
        const ElemType *t = &elem_types[id];
        size_t sz = (size_t)t->size;
        char *in = mem_alloc(SN * sz), *want = mem_alloc(SN * sz), *got = mem_alloc(SN * sz);
        uint64_t s = 987654321;
        for (uint64_t i = 0; i < SN; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            /* few distinct values (duplicates), both signs, every byte used */
            double v = t->is_float ? (double)(int64_t)(s >> 52) / 8.0 - 200 : (double)((int64_t)(s >> 56) - 100);
            put(t, in, i, v);
            if (!t->is_float && i % 7 == 0)
                memcpy(in + i * sz, &s, sz); /* full-width bit patterns */
        }
        if (t->is_float) {
            put(t, in, 3, NAN);
            put(t, in, DEVIO_SORT_TILE + 9, -NAN);
            put(t, in, 2 * DEVIO_SORT_TILE, INFINITY);
            put(t, in, 17, -INFINITY);
            put(t, in, 18, -0.0);
        }
        memcpy(want, in, SN * sz);
        g_sort_t = t;
        qsort(want, SN, sz, cmp_host);
        CUdeviceptr din = upload(in, SN * sz), dout = 0;
        assert_int_equal(cu.cuMemAlloc(&dout, SN * sz), CUDA_SUCCESS);
        sort_on_device(t, din, SN, dout);
        assert_int_equal(cu.cuMemcpyDtoH(got, dout, SN * sz), CUDA_SUCCESS);
        for (uint64_t i = 0; i < SN; i++)
            if (cmp_host(got + i * sz, want + i * sz) != 0)
                fail_msg("%s: sorted element %llu differs from the host's order", t->name, (unsigned long long)i);
        cu.cuMemFree(din);
        cu.cuMemFree(dout);
        free(in);
        free(want);
        free(got);
    }
}

/* ---- the fingerprint ------------------------------------------------------------------ */

/* kvx_mset_hash of a against b (n elements of t, on the device) on grid
 * blocks of block threads, into got; the twin's sums of each side must be
 * there, bit for bit.  1 when both sides' sums agree, as the worker judges. */
static int mset_on_device(const ElemType *t, const void *a, const void *b, uint64_t n, unsigned grid,
                          unsigned block)
{
    CUdeviceptr da = upload(a, n * (uint64_t)t->size), db = upload(b, n * (uint64_t)t->size), dsums = 0;
    unsigned long long got[DEVIO_MSET_SUMS];
    uint64_t ha[2], hb[2];
    assert_int_equal(cu.cuMemAlloc(&dsums, sizeof got), CUDA_SUCCESS);
    assert_int_equal(cu.cuMemsetD8Async(dsums, 0, sizeof got, stream), CUDA_SUCCESS);
    uint32_t code = (uint32_t)t->id;
    void *argv[] = {&da, &db, &n, &code, &dsums};
    launch(mset_fn, grid, block, argv);
    assert_int_equal(cu.cuStreamSynchronize(stream), CUDA_SUCCESS);
    assert_int_equal(cu.cuMemcpyDtoH(got, dsums, sizeof got), CUDA_SUCCESS);
    verify_mset_host(t, a, n, ha);
    verify_mset_host(t, b, n, hb);
    if (got[0] != ha[0] || got[1] != ha[1] || got[2] != hb[0] || got[3] != hb[1])
        fail_msg("%s, grid %u x %u: device sums %016llx %016llx | %016llx %016llx, host %016llx %016llx |"
                 " %016llx %016llx", t->name, grid, block, got[0], got[1], got[2], got[3],
                 (unsigned long long)ha[0], (unsigned long long)ha[1], (unsigned long long)hb[0],
                 (unsigned long long)hb[1]);
    cu.cuMemFree(da);
    cu.cuMemFree(db);
    cu.cuMemFree(dsums);
    assert_true((got[0] == got[2]) == (got[1] == got[3])); /* both sums tell these differences */
    return got[0] == got[2] && got[1] == got[3];
}

/* a and b on the worker's geometry (gpu/worker_compare.c's mset_same) and
 * on 7 blocks of 128: the same verdict, want_same. */
static void mset_verdict(const ElemType *t, const void *a, const void *b, uint64_t n, int want_same)
{
    uint64_t blocks = (n + DEVIO_THREADS - 1) / DEVIO_THREADS;
    unsigned grid = (unsigned)(blocks < 4096 ? blocks : 4096);
    if (mset_on_device(t, a, b, n, grid, DEVIO_THREADS) != want_same ||
        mset_on_device(t, a, b, n, 7, 128) != want_same)
        fail_msg("%s: the fingerprints say %s (expected %s)", t->name, want_same ? "differ" : "same",
                 want_same ? "same" : "differ");
}

static void test_mset_matches_host(void **state)
{
    (void)state;
    enum { MN = 5 * DEVIO_SORT_TILE + 1234 };
    for (int id = 0; id < ET_COUNT; id++) {
        const ElemType *t = &elem_types[id];
        if (t->is_float)
            continue;
        size_t sz = (size_t)t->size;
        char *a = mem_alloc(MN * sz), *b = mem_alloc(MN * sz);
        uint64_t s = 24680;
        for (uint64_t i = 0; i < MN; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t v = i % 3 ? s >> 11 : (s >> 56) % 50; /* full-width bits and duplicates */
            memcpy(a + i * sz, &v, sz);
        }
        for (uint64_t i = 0; i < MN; i++) /* reversed: the same multiset */
            memcpy(b + i * sz, a + (MN - 1 - i) * sz, sz);
        mset_verdict(t, a, b, MN, 1);
        uint64_t dup = 100, drop = 101;
        while (!memcmp(b + dup * sz, b + drop * sz, sz))
            drop++;
        memcpy(b + drop * sz, b + dup * sz, sz); /* written twice, one dropped: a compaction's dupdrop */
        mset_verdict(t, a, b, MN, 0);
        memcpy(b, a, MN * sz);
        b[(MN - 1) * sz] ^= 0x40; /* one value in place of another, the last */
        mset_verdict(t, a, b, MN, 0);
        free(a);
        free(b);
    }
}

static void test_planted_wrong_variant(void **state)
{
    (void)state;
    const char *log = tmp_path("copy.log"), *db = tmp_path("copy.db");
    int rc = kvx(log, "run", SPECS "copy.yaml", "--db", db, "--devices", "0", NULL);
    if (rc != 1) {
        dump(log);
        fail_msg("kvx run copy.yaml exited %d (expected 1: the wrong variant mismatches)", rc);
    }
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE json_extract(axes, '$.access') = 'wrong'"
                                " AND status = 'mismatch' AND detail LIKE 'out[65535]: got 0, expected %'"),
                     2);
    assert_int_equal(db_int(db, "SELECT count(*) FROM cases WHERE json_extract(axes, '$.access') != 'wrong'"
                                " AND status != 'ok'"),
                     0);
}

int main(void)
{
    unsetenv("KVX_FAKE_GPUS");
    child_env_clean();
    KvxError err = {0};
    int n = 0;
    CUdevice dev;
    if (cudadl_load(&err) < 0 || cu.cuInit(0) != CUDA_SUCCESS || cu.cuDeviceGetCount(&n) != CUDA_SUCCESS ||
        n < 1) {
        printf("skipped: no GPU to run on (%s)\n", err.msg[0] ? err.msg : "no CUDA device");
        return 77;
    }
    CUmodule mod;
    if (cu.cuDeviceGet(&dev, 0) || cu.cuDevicePrimaryCtxRetain(&ctx, dev) || cu.cuCtxSetCurrent(ctx) ||
        cu.cuStreamCreate(&stream, CU_STREAM_DEFAULT) || cu.cuModuleLoadData(&mod, devio_ptx) ||
        cu.cuModuleGetFunction(&cmp_fn, mod, DEVIO_COMPARE_KERNEL) ||
        cu.cuModuleGetFunction(&sort_fn[0], mod, DEVIO_SORT_KEY_KERNEL) ||
        cu.cuModuleGetFunction(&sort_fn[1], mod, DEVIO_SORT_COUNT_KERNEL) ||
        cu.cuModuleGetFunction(&sort_fn[2], mod, DEVIO_SORT_SCAN_KERNEL) ||
        cu.cuModuleGetFunction(&sort_fn[3], mod, DEVIO_SORT_SCATTER_KERNEL) ||
        cu.cuModuleGetFunction(&mset_fn, mod, DEVIO_MSET_KERNEL)) {
        printf("cannot set up the device or load gpu/devio_ptx.h\n");
        return 1;
    }
    if (child_dir_make("kvx-gpu-devio"))
        return 1;
    setenv("KVX_CACHE_DIR", tmp_path("cache"), 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_matches_host),
        cmocka_unit_test(test_sort_matches_host),
        cmocka_unit_test(test_mset_matches_host),
        cmocka_unit_test(test_planted_wrong_variant),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    printf("  %s %s\n", failed ? "kept" : "work in", tmp);
    return failed;
}
