/* devio: kvx's own device code for verification (issue #24).  Not compiled
 * by the build: scripts/devio_ptx.sh turns it into PTX text, checked in as
 * gpu/devio_ptx.h, which the worker hands to the driver (no NVRTC in the
 * worker), and tests/devio/test_devio_ptx.sh regenerates it and compares.
 *
 * kvx_compare compares an output with its reference on the device and writes
 * one VerifyChunk (host/verify.h, the same 40 bytes) per DEVIO_CHUNK elements:
 * block b covers chunk b; its threads stride the chunk and the block sums
 * their figures in a fixed tree, so the sums are the same bits on every run.
 * The rules are verify_compare's (host/verify.c): integers bit for bit in the
 * output's width; floats in double, a non-finite element agreeing only with
 * the same non-finite reference, the others summed into ||out - ref||^2 and
 * ||ref||^2; an element counts as bad past rtol * |ref| only when the caller
 * says the norm test failed (norm_ok = 0, a second launch).
 *
 * Parameters: out (the output, type code & 0xff: an ElemTypeId), ref (the
 * reference: the output's type, or double when code & DEVIO_REF_F64), n
 * elements, stride (1; 0: one reference value for every element), code,
 * rtol, norm_ok, chunks (ceil(n / DEVIO_CHUNK) records). */

#define DEVIO_CHUNK 65536
#define DEVIO_THREADS 256
#define DEVIO_REF_F64 0x100

/* ElemTypeId (core/types.h) */
enum { I8, U8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64 };

struct Chunk {
    unsigned long long bad, nonfinite;
    double dd, rr, max_abs;
};

__device__ static unsigned long long load_bits(const void *p, unsigned long long i, int t)
{
    switch (t) {
    case I8: case U8: return ((const unsigned char *)p)[i];
    case I16: case U16: case F16: case BF16: return ((const unsigned short *)p)[i];
    case I32: case U32: case F32: return ((const unsigned int *)p)[i];
    default: return ((const unsigned long long *)p)[i];
    }
}

/* IEEE binary16 to double, exactly (subnormals, infinities, NaN). */
__device__ static double half_to_f64(unsigned int h)
{
    int e = (h >> 10) & 31;
    unsigned int m = h & 1023;
    double v;
    if (e == 31)
        v = m ? __longlong_as_double(0x7ff8000000000000ll) : __longlong_as_double(0x7ff0000000000000ll);
    else if (e == 0)
        v = ldexp((double)m, -24);
    else
        v = ldexp((double)(m | 1024), e - 25);
    return h & 0x8000 ? -v : v;
}

__device__ static double load_f(const void *p, unsigned long long i, int t)
{
    unsigned long long b = load_bits(p, i, t);
    switch (t) {
    case F16: return half_to_f64((unsigned int)b);
    case BF16: return (double)__int_as_float((int)(b << 16));
    case F32: return (double)__int_as_float((int)b);
    default: return __longlong_as_double((long long)b);
    }
}

__device__ static int is_finite(double x) { return isfinite(x); }

extern "C" __global__ void kvx_compare(const void *out, const void *ref, unsigned long long n,
                                       unsigned long long stride, unsigned int code, double rtol,
                                       unsigned int norm_ok, Chunk *chunks)
{
    __shared__ unsigned long long s_bad[DEVIO_THREADS], s_nf[DEVIO_THREADS];
    __shared__ double s_dd[DEVIO_THREADS], s_rr[DEVIO_THREADS], s_max[DEVIO_THREADS];
    int t = (int)(code & 0xff), ref_f64 = (code & DEVIO_REF_F64) != 0;
    int is_float = t >= F16;
    unsigned long long b0 = (unsigned long long)blockIdx.x * DEVIO_CHUNK;
    unsigned long long e = b0 + DEVIO_CHUNK < n ? b0 + DEVIO_CHUNK : n;
    unsigned long long bad = 0, nf = 0;
    double dd = 0, rr = 0, mx = 0;
    for (unsigned long long i = b0 + threadIdx.x; i < e; i += DEVIO_THREADS) {
        if (!is_float) {
            bad += load_bits(out, i, t) != load_bits(ref, i * stride, t);
            continue;
        }
        double got = load_f(out, i, t), want = ref_f64 ? load_f(ref, i * stride, F64) : load_f(ref, i * stride, t);
        if (!is_finite(want) || !is_finite(got)) {
            int same = (isnan(want) && isnan(got)) || got == want;
            nf += !same;
            bad += !same;
            continue;
        }
        double d = __dsub_rn(got, want), ad = fabs(d);
        dd = __fma_rn(d, d, dd);
        rr = __fma_rn(want, want, rr);
        mx = ad > mx ? ad : mx;
        bad += !norm_ok && ad > __dmul_rn(rtol, want != 0 ? fabs(want) : 1.0);
    }
    int k = threadIdx.x;
    s_bad[k] = bad;
    s_nf[k] = nf;
    s_dd[k] = dd;
    s_rr[k] = rr;
    s_max[k] = mx;
    __syncthreads();
    for (int half = DEVIO_THREADS / 2; half > 0; half /= 2) {
        if (k < half) {
            s_bad[k] += s_bad[k + half];
            s_nf[k] += s_nf[k + half];
            s_dd[k] = __dadd_rn(s_dd[k], s_dd[k + half]);
            s_rr[k] = __dadd_rn(s_rr[k], s_rr[k + half]);
            s_max[k] = s_max[k] > s_max[k + half] ? s_max[k] : s_max[k + half];
        }
        __syncthreads();
    }
    if (k == 0) {
        Chunk c = {s_bad[0], s_nf[0], s_dd[0], s_rr[0], s_max[0]};
        chunks[blockIdx.x] = c;
    }
}
