{{! op_fminmax.cuh: op_apply for max, min, nanmax, nanmin on f32 and f64, by compare-and-swap. }}
{{! Placeholders: op, type (code axes), NAN_SENTINEL (let).  Needs T. }}
/* CUDA 13 has no floating-point atomicMax/atomicMin, and __nv_atomic_fetch_max
 * rejects floating types, so these are a compare-and-swap loop on the bit
 * pattern, as Numba builds them.  The loop stops as soon as the slot already
 * wins, so under contention most threads leave after one read. */
{{#if type == "f32"}}
typedef unsigned int Bits;
__device__ __forceinline__ Bits to_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ float from_bits(Bits b) { return __uint_as_float(b); }
{{#else}}
typedef unsigned long long Bits;
__device__ __forceinline__ Bits to_bits(double x) { return (Bits)__double_as_longlong(x); }
__device__ __forceinline__ double from_bits(Bits b) { return __longlong_as_double((long long)b); }
{{/if}}

/* Does v replace cur? */
__device__ __forceinline__ bool wins(T v, T cur)
{
{{#if op == "max"}}
    return v > cur;
{{#elif op == "min"}}
    return v < cur;
{{#elif op == "nanmax"}}
    /* NaN is a missing value: it never wins, and anything beats it. */
    return !isnan(v) && (isnan(cur) || v > cur);
{{#else}}
    /* NaN is a missing value: it never wins, and anything beats it. */
    return !isnan(v) && (isnan(cur) || v < cur);
{{/if}}
}

__device__ __forceinline__ void op_apply(T *p, T v, unsigned)
{
{{#if op == "nanmax" || op == "nanmin"}}
    /* The inputs carry NaN as a sentinel beyond +-{{NAN_SENTINEL}} (a spec cannot
     * write a NaN); decoding it here makes the NaN path run on real NaNs. */
    if (fabs(v) > (T){{NAN_SENTINEL}})
        v = from_bits(~(Bits)0 >> 1);
{{/if}}
    Bits *a = reinterpret_cast<Bits *>(p);
    T cur = *(volatile T *)p;
    while (wins(v, cur)) {
        const Bits seen = atomicCAS(a, to_bits(cur), to_bits(v));
        if (seen == to_bits(cur))
            return;
        cur = from_bits(seen);
    }
}
