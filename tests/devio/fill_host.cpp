// fill_host: gpu/devio.cu compiled for the host, so that kvx_fill's source can
// be held to inputs_fill, and kvx_mset_hash's to verify_mset_host, without a
// GPU (tests/devio/test_devio_host.sh).  The
// CUDA intrinsics it uses are defined here by their specification: the _rn
// arithmetic is IEEE round-to-nearest, which x86-64 double arithmetic is
// (built with -ffp-contract=off so that nothing fuses); one thread runs the
// whole grid-stride loop.  This checks the kernel's logic (mixing, 128-bit
// ranges, saturation, text boundaries, float rounding); that the device's
// intrinsics keep their specification is test_gpu_fill's, on a GPU.
#include <cmath>
#include <cstring>
#define __device__
#define __global__
#define __shared__ static
#define __launch_bounds__(...)
struct Dim3 {
    unsigned x, y, z;
};
static const Dim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0}, gridDim = {1, 1, 1}, blockDim = {1, 1, 1};
static void __syncthreads() {}
// The sort's warp primitives (kvx_sort_*), for one lane: only so that the
// file compiles; the sort is test_gpu_devio's, on a GPU.
static void __syncwarp(unsigned = 0xffffffffu) {}
static unsigned __ballot_sync(unsigned, int p) { return p ? 1u : 0u; }
static unsigned __match_any_sync(unsigned mask, unsigned) { return mask & 1u; }
static int __popc(unsigned x) { return __builtin_popcount(x); }
static unsigned atomicAdd(unsigned *p, unsigned v)
{
    unsigned old = *p;
    *p += v;
    return old;
}
// kvx_mset_hash's block sum, for one thread: the lanes a shuffle would read
// from hold nothing (its warp is that one thread), so they add 0; the
// shuffles' tree on a full warp is test_gpu_devio's, on a GPU.
static unsigned long long __shfl_down_sync(unsigned, unsigned long long, int) { return 0; }
static unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    unsigned long long old = *p;
    *p += v;
    return old;
}
static double __dmul_rn(double a, double b) { return a * b; }
static double __dadd_rn(double a, double b) { return a + b; }
static double __dsub_rn(double a, double b) { return a - b; }
static double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
static double __ull2double_rn(unsigned long long x) { return (double)x; }
static double __ll2double_rn(long long x) { return (double)x; }
static float __double2float_rn(double x) { return (float)x; }
static unsigned __float_as_uint(float f)
{
    unsigned u;
    memcpy(&u, &f, 4);
    return u;
}
static float __int_as_float(int i)
{
    float f;
    memcpy(&f, &i, 4);
    return f;
}
static double __longlong_as_double(long long i)
{
    double d;
    memcpy(&d, &i, 8);
    return d;
}
static unsigned long long __umul64hi(unsigned long long a, unsigned long long b)
{
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
using std::fabs;
using std::isfinite;
using std::isnan;
using std::ldexp;
using std::nextafterf;
#include "gpu/devio.cu"

extern "C" void fill_host(void *out, unsigned long long n, const void *plan)
{
    kvx_fill(out, n, (const FillPlan *)plan);
}
extern "C" unsigned long long fill_host_plan_size(void) { return sizeof(FillPlan); }

extern "C" void mset_host(const void *a, const void *b, unsigned long long n, unsigned code,
                          unsigned long long *sums)
{
    kvx_mset_hash(a, b, n, code, sums);
}
