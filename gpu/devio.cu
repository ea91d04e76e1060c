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
#define DEVIO_UNROLL 4
#define DEVIO_REF_F64 0x100

/* ElemTypeId (core/elem.h) */
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

__device__ static int is_finite(double x) { return isfinite(x); }

/* Element bits of type t as a double (floats). */
__device__ static double bits_to_f64(unsigned long long b, int t)
{
    switch (t) {
    case F16: return half_to_f64((unsigned int)b);
    case BF16: return (double)__int_as_float((int)(b << 16));
    case F32: return (double)__int_as_float((int)b);
    default: return __longlong_as_double((long long)b);
    }
}

/* One element's part of its chunk's figures: an output element of type t
 * against its reference of type rt (t, or F64 for a float t). */
__device__ static void elem_figures(unsigned long long o, unsigned long long r, int t, int rt, double rtol,
                                    unsigned int norm_ok, Chunk *c)
{
    if (t < F16) {
        c->bad += o != r;
        return;
    }
    double got = bits_to_f64(o, t), want = bits_to_f64(r, rt);
    if (!is_finite(want) || !is_finite(got)) {
        int same = (isnan(want) && isnan(got)) || got == want;
        c->nonfinite += !same;
        c->bad += !same;
        return;
    }
    double d = __dsub_rn(got, want), ad = fabs(d);
    c->dd = __fma_rn(d, d, c->dd);
    c->rr = __fma_rn(want, want, c->rr);
    c->max_abs = ad > c->max_abs ? ad : c->max_abs;
    c->bad += !norm_ok && ad > __dmul_rn(rtol, want != 0 ? fabs(want) : 1.0);
}

/* At most 64 registers a thread, so that four blocks fit an SM with their
 * loads in flight. */
extern "C" __global__ void __launch_bounds__(DEVIO_THREADS, 4)
    kvx_compare(const void *out, const void *ref, unsigned long long n, unsigned long long stride,
                unsigned int code, double rtol, unsigned int norm_ok, Chunk *chunks)
{
    __shared__ unsigned long long s_bad[DEVIO_THREADS], s_nf[DEVIO_THREADS];
    __shared__ double s_dd[DEVIO_THREADS], s_rr[DEVIO_THREADS], s_max[DEVIO_THREADS];
    /* Integers compare their bits in the output's width, whatever the
     * reference's type. */
    int t = (int)(code & 0xff), rt = t >= F16 && (code & DEVIO_REF_F64) ? F64 : t;
    unsigned long long b0 = (unsigned long long)blockIdx.x * DEVIO_CHUNK;
    unsigned long long e = b0 + DEVIO_CHUNK < n ? b0 + DEVIO_CHUNK : n;
    Chunk c = {0, 0, 0, 0, 0};
    /* A thread's elements, b0 + threadIdx.x and every DEVIO_THREADS on, are
     * summed in that order; DEVIO_UNROLL loads of each side are in flight
     * before they are (one at a time left the compare latency-bound: the
     * bench transpose's took 0.54 ms a case on an H200, 0.40 ms so). */
    for (unsigned long long i0 = b0 + threadIdx.x; i0 < e; i0 += DEVIO_THREADS * DEVIO_UNROLL) {
        unsigned long long o[DEVIO_UNROLL], r[DEVIO_UNROLL];
#pragma unroll
        for (int u = 0; u < DEVIO_UNROLL; u++) {
            unsigned long long i = i0 + (unsigned long long)u * DEVIO_THREADS;
            o[u] = i < e ? load_bits(out, i, t) : 0;
            r[u] = i < e ? load_bits(ref, i * stride, rt) : 0;
        }
#pragma unroll
        for (int u = 0; u < DEVIO_UNROLL; u++)
            if (i0 + (unsigned long long)u * DEVIO_THREADS < e)
                elem_figures(o[u], r[u], t, rt, rtol, norm_ok, &c);
    }
    int k = threadIdx.x;
    s_bad[k] = c.bad;
    s_nf[k] = c.nonfinite;
    s_dd[k] = c.dd;
    s_rr[k] = c.rr;
    s_max[k] = c.max_abs;
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
        Chunk sum = {s_bad[0], s_nf[0], s_dd[0], s_rr[0], s_max[0]};
        chunks[blockIdx.x] = sum;
    }
}

/* kvx_fill generates an input on the device, bit for bit as inputs_fill
 * (host/inputs.c) does on the host: element i of out is a pure function of
 * the plan (host/inputs.h's InputsPlan, made by inputs_plan: the same layout)
 * and i, with the host's mixing, its 128-bit integer range reduction and
 * saturation, and its float arithmetic rounded the same way (no contraction
 * into fma: each step is an explicit _rn intrinsic).  Every kind; zipf up
 * to 2^24 ranks, from the host's table (beyond, inputs_plan leaves it to the
 * host).  Grid-stride: any grid
 * writes the same bytes.  Parameters: out, n elements, plan (device memory). */

enum { K_CONST, K_IOTA, K_UNIFORM, K_ZIPF, K_HOT, K_RUNS, K_TEXT };

struct FillPlan {
    unsigned long long key[2];
    unsigned long long ilo[2], ival[2], tmin[2], tmax[2];
    unsigned long long range_lo, range_hi, length;
    double value, flo, fhi, fhi_below, fspan, fraction;
    unsigned int kind, type, sat, pad;
    unsigned int text_end[27];
    unsigned int zipf_guide_bits;
    double zipf_s;
    unsigned long long zipf_n, zipf_cdf, zipf_guide;
};

#define GOLDEN 0x9e3779b97f4a7c15ull

__device__ static unsigned long long mix(unsigned long long z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__device__ static double unit(unsigned long long h) { return __dmul_rn(__ull2double_rn(h >> 11), 0x1p-53); }

__device__ static __int128 i128_of(const unsigned long long w[2])
{
    return (__int128)(((unsigned __int128)w[1] << 64) | w[0]);
}

__device__ static unsigned long long draw(const FillPlan &p, int s, unsigned long long i)
{
    return mix(p.key[s] + i * GOLDEN);
}

__device__ static __int128 int_offset(const FillPlan &p, unsigned long long x)
{
    __int128 off = (__int128)__umul64hi(x, p.range_lo);
    if (p.range_hi)
        off += (__int128)((unsigned __int128)x * p.range_hi);
    return off;
}

__device__ static double float_uniform(const FillPlan &p, unsigned long long x)
{
    double v = __dadd_rn(p.flo, __dmul_rn(p.fspan, unit(x)));
    return v < p.fhi || p.fspan == 0 ? v : p.fhi_below;
}

__device__ static unsigned int text_char(const FillPlan &p, unsigned long long h)
{
    unsigned int x = (unsigned int)(h >> 48), c = 0;
    while (c < 26 && x >= p.text_end[c])
        c++;
    return c ? 'a' + c - 1 : ' ';
}

/* zipf's rank of element i: the host's inverse-CDF table (summed there in
 * long double, copied here) searched as zipf_table_rank searches it, an
 * integer walk, so the rank is the host's. */
__device__ static unsigned long long zipf_rank(const FillPlan &p, unsigned long long i)
{
    const unsigned long long *cdf = (const unsigned long long *)p.zipf_cdf;
    const unsigned int *guide = (const unsigned int *)p.zipf_guide;
    unsigned long long x = draw(p, 0, i), j = x >> (64 - p.zipf_guide_bits);
    unsigned long long a = guide[j], b = guide[j + 1];
    if (a >= b)
        return a;
    const unsigned long long *base = cdf + a;
    unsigned long long len = b - a;
    while (len > 1) {
        unsigned long long half = len / 2;
        base = base[half - 1] <= x ? base + half : base;
        len -= half;
    }
    return (unsigned long long)(base - cdf) + (*base <= x);
}

/* The draw for element i of a ranged kind; *hot set where hot's value wins. */
__device__ static unsigned long long ranged_draw(const FillPlan &p, unsigned long long i, int *hot)
{
    *hot = p.kind == K_HOT && unit(draw(p, 1, i)) < p.fraction;
    return draw(p, 0, p.kind == K_RUNS ? i / p.length : i);
}

__device__ static __int128 gen_int(const FillPlan &p, unsigned long long i)
{
    int hot;
    switch (p.kind) {
    case K_CONST: return i128_of(p.ival);
    case K_IOTA: return i128_of(p.ival) + (__int128)i;
    case K_TEXT: return text_char(p, draw(p, 0, i));
    case K_ZIPF: return i128_of(p.ilo) + (__int128)zipf_rank(p, i);
    default: {
        unsigned long long x = ranged_draw(p, i, &hot);
        return hot ? i128_of(p.ival) : i128_of(p.ilo) + int_offset(p, x);
    }
    }
}

__device__ static double gen_float(const FillPlan &p, unsigned long long i)
{
    int hot;
    switch (p.kind) {
    case K_CONST: return p.value;
    case K_IOTA: return __dadd_rn(p.value, __ull2double_rn(i));
    case K_TEXT: return text_char(p, draw(p, 0, i));
    /* exact: the plan keeps a float zipf's values within 2^53 */
    case K_ZIPF: return __ll2double_rn((long long)(i128_of(p.ilo) + (__int128)zipf_rank(p, i)));
    default: {
        unsigned long long x = ranged_draw(p, i, &hot);
        return hot ? p.value : float_uniform(p, x);
    }
    }
}

/* core/elem.c's f64_to_f32_odd: rounding to odd first makes the second
 * rounding, to f16 or bf16, the correctly rounded one. */
__device__ static unsigned int f32_odd_bits(double d)
{
    float f = __double2float_rn(d);
    if (isfinite(f) && (double)f != d && !(__float_as_uint(f) & 1))
        f = nextafterf(f, d > (double)f ? __int_as_float(0x7f800000) : __int_as_float(0xff800000));
    return __float_as_uint(f);
}

__device__ static unsigned int shift_rne(unsigned int v, int s)
{
    unsigned int q = v >> s, r = v & ((1u << s) - 1), half = 1u << (s - 1);
    return q + (r > half || (r == half && (q & 1)));
}

/* core/elem.c's elem_f16_from_f32. */
__device__ static unsigned short f16_bits(unsigned int x)
{
    unsigned short sign = (unsigned short)((x >> 16) & 0x8000);
    unsigned int ax = x & 0x7fffffff;
    if (ax > 0x7f800000)
        return (unsigned short)(sign | 0x7e00 | ((ax >> 13) & 0x3ff));
    if (ax >= 0x477ff000)
        return (unsigned short)(sign | 0x7c00);
    if (ax >= 0x38800000)
        return (unsigned short)(sign | shift_rne(ax - 0x38000000, 13));
    if (ax <= 0x33000000)
        return sign;
    int e = (int)(ax >> 23);
    unsigned int m = (ax & 0x7fffff) | 0x800000;
    return (unsigned short)(sign | shift_rne(m, 126 - e));
}

/* core/elem.c's elem_bf16_from_f32. */
__device__ static unsigned short bf16_bits(unsigned int x)
{
    if ((x & 0x7fffffff) > 0x7f800000)
        return (unsigned short)((x >> 16) | 0x0040);
    return (unsigned short)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

__device__ static void store_float(void *out, unsigned long long i, int t, double v)
{
    switch (t) {
    case F16: ((unsigned short *)out)[i] = f16_bits(f32_odd_bits(v)); break;
    case BF16: ((unsigned short *)out)[i] = bf16_bits(f32_odd_bits(v)); break;
    case F32: ((float *)out)[i] = __double2float_rn(v); break;
    default: ((double *)out)[i] = v; break;
    }
}

__device__ static void store_int(void *out, unsigned long long i, int t, unsigned long long v)
{
    switch (t) {
    case I8: case U8: ((unsigned char *)out)[i] = (unsigned char)v; break;
    case I16: case U16: ((unsigned short *)out)[i] = (unsigned short)v; break;
    case I32: case U32: ((unsigned int *)out)[i] = (unsigned int)v; break;
    default: ((unsigned long long *)out)[i] = v; break;
    }
}

extern "C" __global__ void kvx_fill(void *out, unsigned long long n, const FillPlan *plan)
{
    const FillPlan p = *plan;
    int t = (int)p.type;
    __int128 tmin = i128_of(p.tmin), tmax = i128_of(p.tmax);
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        if (t >= F16) {
            store_float(out, i, t, gen_float(p, i));
            continue;
        }
        __int128 v = gen_int(p, i);
        if (p.sat)
            v = v < tmin ? tmin : v > tmax ? tmax : v;
        store_int(out, i, t, (unsigned long long)v);
    }
}

/* The order-free check's sort (issue #24): a stable LSD radix sort by 8-bit
 * digits of 64-bit keys, one pass per byte of the element type, so that an
 * output and its reference are sorted on the device and compared in order by
 * kvx_compare.  A key is an order-preserving unsigned image of an element in
 * its own width: unsigned integers as they are, signed ones with the sign bit
 * flipped, floats with every bit flipped when negative and the sign bit set
 * otherwise, and every NaN the largest key (NaNs last, as one value, as on
 * the host: host/verify_order.c).  The host sorts the same way, so a
 * mismatch's listing reads the sorted copies as it would its own.
 *
 *   kvx_sort_key(src, dst, n, code)      code & 0xff the type: elements to
 *                                        keys, or with DEVIO_SORT_BACK keys
 *                                        back to elements (a NaN comes back
 *                                        as the type's all-ones-payload NaN)
 *   kvx_sort_count(keys, n, shift, counts) block b counts the digits of
 *                                        tile b (DEVIO_SORT_TILE keys) into
 *                                        counts[digit * blocks + b]
 *   kvx_sort_scan(counts, total)         one block: exclusive prefix sums,
 *                                        in place: where each tile's keys of
 *                                        each digit go
 *   kvx_sort_scatter(src, dst, n, shift, offsets) one warp a tile, in order:
 *                                        keys with equal digits keep their
 *                                        order (stable) */

#define DEVIO_SORT_TILE 4096
#define DEVIO_SORT_BACK 0x200

__device__ static int type_size(int t)
{
    return t <= U8 ? 1 : t <= U16 || t == F16 || t == BF16 ? 2 : t <= U32 || t == F32 ? 4 : 8;
}

__device__ static int is_nan_bits(unsigned long long b, int t)
{
    switch (t) {
    case F16: return ((b >> 10) & 31) == 31 && (b & 1023);
    case BF16: return ((b >> 7) & 255) == 255 && (b & 127);
    case F32: return ((b >> 23) & 255) == 255 && (b & 0x7fffff);
    default: return ((b >> 52) & 2047) == 2047 && (b & 0xfffffffffffffull);
    }
}

__device__ static unsigned long long key_of(unsigned long long b, int t, int back)
{
    int bits = 8 * type_size(t);
    unsigned long long top = 1ull << (bits - 1), all = bits == 64 ? ~0ull : (1ull << bits) - 1;
    if (t == I8 || t == I16 || t == I32 || t == I64)
        return b ^ top;
    if (t < F16)
        return b;
    if (back)
        return b & top ? b & ~top : ~b & all;
    if (is_nan_bits(b, t))
        return all;
    return b & top ? ~b & all : b | top;
}

extern "C" __global__ void kvx_sort_key(const void *src, void *dst, unsigned long long n, unsigned int code)
{
    int t = (int)(code & 0xff), back = (code & DEVIO_SORT_BACK) != 0;
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        if (back)
            store_int(dst, i, t >= F16 ? (t == F32 ? U32 : t == F64 ? U64 : U16) : t,
                      key_of(((const unsigned long long *)src)[i], t, 1));
        else
            ((unsigned long long *)dst)[i] = key_of(load_bits(src, i, t), t, 0);
    }
}

extern "C" __global__ void kvx_sort_count(const unsigned long long *keys, unsigned long long n, unsigned int shift,
                                          unsigned long long *counts)
{
    __shared__ unsigned int h[256];
    for (int d = threadIdx.x; d < 256; d += blockDim.x)
        h[d] = 0;
    __syncthreads();
    unsigned long long b0 = (unsigned long long)blockIdx.x * DEVIO_SORT_TILE;
    unsigned long long e = b0 + DEVIO_SORT_TILE < n ? b0 + DEVIO_SORT_TILE : n;
    for (unsigned long long i = b0 + threadIdx.x; i < e; i += blockDim.x)
        atomicAdd(&h[(keys[i] >> shift) & 255], 1u);
    __syncthreads();
    for (int d = threadIdx.x; d < 256; d += blockDim.x)
        counts[(unsigned long long)d * gridDim.x + blockIdx.x] = h[d];
}

extern "C" __global__ void kvx_sort_scan(unsigned long long *counts, unsigned long long total)
{
    __shared__ unsigned long long s[1024];
    unsigned long long per = (total + blockDim.x - 1) / blockDim.x, b = threadIdx.x * per;
    unsigned long long e = b + per < total ? b + per : total, sum = 0;
    for (unsigned long long i = b; i < e; i++)
        sum += counts[i];
    s[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned int off = 1; off < blockDim.x; off *= 2) {
        unsigned long long v = threadIdx.x >= off ? s[threadIdx.x - off] : 0;
        __syncthreads();
        s[threadIdx.x] += v;
        __syncthreads();
    }
    unsigned long long run = s[threadIdx.x] - sum;
    for (unsigned long long i = b; i < e; i++) {
        unsigned long long c = counts[i];
        counts[i] = run;
        run += c;
    }
}

extern "C" __global__ void kvx_sort_scatter(const unsigned long long *src, unsigned long long *dst,
                                            unsigned long long n, unsigned int shift,
                                            const unsigned long long *offsets)
{
    __shared__ unsigned long long base[256];
    unsigned int lane = threadIdx.x;
    for (int d = lane; d < 256; d += 32)
        base[d] = offsets[(unsigned long long)d * gridDim.x + blockIdx.x];
    __syncwarp();
    unsigned long long b0 = (unsigned long long)blockIdx.x * DEVIO_SORT_TILE;
    unsigned long long e = b0 + DEVIO_SORT_TILE < n ? b0 + DEVIO_SORT_TILE : n;
    for (unsigned long long i0 = b0; i0 < e; i0 += 32) {
        unsigned long long i = i0 + lane;
        unsigned int active = __ballot_sync(0xffffffffu, i < e);
        if (i < e) {
            unsigned long long k = src[i];
            unsigned int d = (unsigned int)(k >> shift) & 255;
            unsigned int peers = __match_any_sync(active, d);
            unsigned int rank = __popc(peers & ((1u << lane) - 1));
            dst[base[d] + rank] = k;
            __syncwarp(active);
            if (rank == 0)
                base[d] += __popc(peers);
        }
        __syncwarp();
    }
}

/* The order-free check's fingerprint (gpu/worker_compare.c): whether the n
 * integers at a and the n at b are the same multiset, decided without
 * sorting.  Each element's bits, zero-extended to 64, go through two
 * mixers, each a bijection of 64-bit words: splitmix64's finaliser (mix,
 * above) of the bits xor DEVIO_MSET_SALT0, and murmur3's fmix64 of the bits
 * xor DEVIO_MSET_SALT1.  Each side's images are summed mod 2^64; addition
 * commutes, so a sum depends neither on the elements' order nor on which
 * thread adds what (the same bits on every run and any grid), and equal
 * multisets give equal sums.  One value written in place of another changes
 * both sums (bijections); any other difference leaves a sum unchanged with
 * odds of about 2^-64 (host/verify_device.c's verify_mset_host, the twin on
 * the host, says when they are worse).
 *
 *   kvx_mset_hash(a, b, n, code, sums)  code & 0xff the type; sums[0..1] +=
 *                                      a's, sums[2..3] += b's (the caller
 *                                      zeroes them first): one atomicAdd a
 *                                      block and sum.  Grid-stride; blockDim
 *                                      a multiple of 32 (the shuffles take
 *                                      whole warps), at most 1024. */

#define DEVIO_MSET_SALT0 0x6b76782d6d736574ull   /* "kvx-mset" */
#define DEVIO_MSET_SALT1 0x2d2d66696e676572ull   /* "--finger" */
#define DEVIO_MSET_SUMS 4

__device__ static unsigned long long fmix64(unsigned long long k)
{
    k = (k ^ (k >> 33)) * 0xff51afd7ed558ccdull;
    k = (k ^ (k >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return k ^ (k >> 33);
}

__device__ static unsigned long long warp_sum(unsigned long long v)
{
    for (int off = 16; off > 0; off /= 2)
        v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

extern "C" __global__ void kvx_mset_hash(const void *a, const void *b, unsigned long long n, unsigned int code,
                                         unsigned long long *sums)
{
    __shared__ unsigned long long part[DEVIO_MSET_SUMS][32];
    int t = (int)(code & 0xff);
    unsigned long long s[DEVIO_MSET_SUMS] = {0, 0, 0, 0};
    unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        unsigned long long x = load_bits(a, i, t), y = load_bits(b, i, t);
        s[0] += mix(x ^ DEVIO_MSET_SALT0);
        s[1] += fmix64(x ^ DEVIO_MSET_SALT1);
        s[2] += mix(y ^ DEVIO_MSET_SALT0);
        s[3] += fmix64(y ^ DEVIO_MSET_SALT1);
    }
    unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = (blockDim.x + 31) / 32;
    for (int k = 0; k < DEVIO_MSET_SUMS; k++) {
        unsigned long long v = warp_sum(s[k]);
        if (lane == 0)
            part[k][warp] = v;
    }
    __syncthreads();
    for (unsigned int k = threadIdx.x; k < DEVIO_MSET_SUMS; k += blockDim.x) {
        unsigned long long v = 0;
        for (unsigned int w = 0; w < warps; w++)
            v += part[k][w];
        atomicAdd(&sums[k], v);
    }
}
