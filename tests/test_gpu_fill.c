/* gpu: kvx's input generator on a real GPU (issue #24 item 1; kvx_fill in
 * gpu/devio.cu, loaded from gpu/devio_ptx.h as the worker loads it).
 * Checked: for every initialiser of tests/fill_cases.h (every init kind,
 * zipf from the host's table copied to the device, with rounding,
 * saturation and the widest integer ranges) as every element type, the bytes kvx_fill writes from
 * inputs_plan's plan are inputs_fill's, bit for bit (their SHA-256 are
 * equal; a difference names its first element), with the worker's grid and
 * with a grid of 3 blocks that strides the rest.  Without a GPU the test
 * exits 77 with the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "gpu/cudadl.h"
#include "gpu/devio_ptx.h"
#include "tests/fill_cases.h"

enum { N = 3 * 65536 + 1234 };

static CUstream stream;
static CUfunction fill_fn;

/* kvx_fill of n elements with plan on a grid of blocks; the bytes into got. */
static void device_fill(const InputsPlan *plan, uint64_t n, int size, unsigned blocks, void *got)
{
    CUdeviceptr out = 0, dplan = 0;
    assert_int_equal(cu.cuMemAlloc(&out, n * (uint64_t)size), CUDA_SUCCESS);
    assert_int_equal(cu.cuMemAlloc(&dplan, sizeof *plan), CUDA_SUCCESS);
    assert_int_equal(cu.cuMemsetD8Async(out, 0xa5, n * (uint64_t)size, stream), CUDA_SUCCESS);
    assert_int_equal(cu.cuMemcpyHtoDAsync(dplan, plan, sizeof *plan, stream), CUDA_SUCCESS);
    void *argv[] = {&out, &n, &dplan};
    assert_int_equal(cu.cuLaunchKernel(fill_fn, blocks, 1, 1, DEVIO_THREADS, 1, 1, 0, stream, argv, NULL),
                     CUDA_SUCCESS);
    assert_int_equal(cu.cuStreamSynchronize(stream), CUDA_SUCCESS);
    assert_int_equal(cu.cuMemcpyDtoH(got, out, n * (uint64_t)size), CUDA_SUCCESS);
    cu.cuMemFree(out);
    cu.cuMemFree(dplan);
}

static void same_bytes(int k, const ElemType *t, const void *want, const void *got, unsigned blocks)
{
    char hw[65], hg[65];
    sha256_hex(want, N * (size_t)t->size, hw);
    sha256_hex(got, N * (size_t)t->size, hg);
    if (strcmp(hw, hg) == 0)
        return;
    uint64_t i = 0;
    while (memcmp((const char *)want + i * t->size, (const char *)got + i * t->size, (size_t)t->size) == 0)
        i++;
    fail_msg("case %d as %s (%u blocks): element %llu is %.17g on the device, %.17g on the host (sha256 %.12s, "
             "host %.12s)",
             k, t->name, blocks, (unsigned long long)i, elem_get_f64(t, got, i), elem_get_f64(t, want, i), hg, hw);
}

static void test_fill_matches_host(void **state)
{
    (void)state;
    InitParams ps[FILL_CASES];
    fill_cases(ps);
    KvxError err = {0};
    for (int k = 0; k < FILL_CASES; k++)
        for (int id = 0; id < ET_COUNT; id++) {
            const ElemType *t = &elem_types[id];
            void *want = mem_alloc(N * (size_t)t->size), *got = mem_alloc(N * (size_t)t->size);
            InputsPlan plan;
            assert_int_equal(inputs_fill(t, want, N, &ps[k], 0, &err), 0);
            assert_int_equal(inputs_plan(t, N, &ps[k], &plan, &err), 1);
            /* zipf: the host's table, copied to the device as the worker does */
            InputsTable tab = {0};
            CUdeviceptr dcdf = 0, dguide = 0;
            if (plan.zipf_n) {
                inputs_table_make(&plan, 0, &tab);
                assert_int_equal(cu.cuMemAlloc(&dcdf, tab.cdf_bytes), CUDA_SUCCESS);
                assert_int_equal(cu.cuMemAlloc(&dguide, tab.guide_bytes), CUDA_SUCCESS);
                assert_int_equal(cu.cuMemcpyHtoDAsync(dcdf, tab.cdf, tab.cdf_bytes, stream), CUDA_SUCCESS);
                assert_int_equal(cu.cuMemcpyHtoDAsync(dguide, tab.guide, tab.guide_bytes, stream), CUDA_SUCCESS);
                assert_int_equal(cu.cuStreamSynchronize(stream), CUDA_SUCCESS);
                plan.zipf_cdf = dcdf, plan.zipf_guide = dguide;
            }
            unsigned grids[2] = {(N + DEVIO_THREADS - 1) / DEVIO_THREADS, 3};
            for (int g = 0; g < 2; g++) {
                device_fill(&plan, N, t->size, grids[g], got);
                same_bytes(k, t, want, got, grids[g]);
            }
            if (dcdf)
                cu.cuMemFree(dcdf), cu.cuMemFree(dguide);
            inputs_table_free(&tab);
            free(want);
            free(got);
        }
}

int main(void)
{
    unsetenv("KVX_FAKE_GPUS");
    KvxError err = {0};
    int n = 0;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    if (cudadl_load(&err) < 0 || cu.cuInit(0) != CUDA_SUCCESS || cu.cuDeviceGetCount(&n) != CUDA_SUCCESS ||
        n < 1) {
        printf("skipped: no GPU to run on (%s)\n", err.msg[0] ? err.msg : "no CUDA device");
        return 77;
    }
    if (cu.cuDeviceGet(&dev, 0) || cu.cuDevicePrimaryCtxRetain(&ctx, dev) || cu.cuCtxSetCurrent(ctx) ||
        cu.cuStreamCreate(&stream, CU_STREAM_DEFAULT) || cu.cuModuleLoadData(&mod, devio_ptx) ||
        cu.cuModuleGetFunction(&fill_fn, mod, DEVIO_FILL_KERNEL)) {
        printf("cannot set up the device or load gpu/devio_ptx.h\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_matches_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
