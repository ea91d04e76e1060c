{{! op_merge.cuh: op_merge(dst, slot, touched, lim), folding one block's shared slot into global memory. }}
{{! Placeholders: op (code axis).  Needs T and op_apply. }}
{{#if op == "sub"}}
/* The slot started at 0 and holds minus its block's sum: adding it applies all
 * of the block's subtractions at once (two's complement wrap either way). */
__device__ __forceinline__ void op_merge(T *dst, T slot, bool, unsigned)
{
    atomicAdd(dst, slot);
}
{{#elif op == "exch"}}
/* A block that never wrote the slot must not write its stale content. */
__device__ __forceinline__ void op_merge(T *dst, T slot, bool touched, unsigned)
{
    if (touched)
        atomicExch(dst, slot);
}
{{#elif op == "inc" || op == "dec"}}
/* The slot started at 0 and ran the block's incs (decs) with the same limit, so
 * it holds their count (minus their count) mod lim + 1; applying them to a
 * value <= lim is adding the slot mod lim + 1. */
__device__ __forceinline__ void op_merge(T *dst, T slot, bool, unsigned lim)
{
    T old = *(volatile T *)dst;
    for (;;) {
        const T next = (T)(((unsigned long long)old + slot) % ((unsigned long long)lim + 1));
        const T seen = atomicCAS(dst, old, next);
        if (seen == old)
            return;
        old = seen;
    }
}
{{#elif op == "cas"}}
/* The slot counts its block's increments; add them with the same CAS loop. */
__device__ __forceinline__ void op_merge(T *dst, T slot, bool, unsigned)
{
    cas_add(dst, slot);
}
{{#else}}
/* Associative and commutative, and the slot started at the identity: fold it
 * in with the op itself. */
__device__ __forceinline__ void op_merge(T *dst, T slot, bool, unsigned lim)
{
    op_apply(dst, slot, lim);
}
{{/if}}
