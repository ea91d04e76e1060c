{{! op_apply.cuh: op_apply(p, v, lim), one atomic operation of the spec's op on one slot. }}
{{! Placeholders: op, type (code axes), emulated (let), FN (set: the CUDA function of op).  Needs T. }}
{{#if op == "inc"}}
/* atomicInc: old >= lim ? 0 : old + 1.  The input value is not used. */
__device__ __forceinline__ void op_apply(T *p, T, unsigned lim)
{
    atomicInc(p, lim);
}
{{#elif op == "dec"}}
/* atomicDec: old == 0 || old > lim ? lim : old - 1.  The input value is not used. */
__device__ __forceinline__ void op_apply(T *p, T, unsigned lim)
{
    atomicDec(p, lim);
}
{{#elif op == "cas"}}
{{#include "op_cas.cuh"}}

/* The input value is not used: every operation adds 1. */
__device__ __forceinline__ void op_apply(T *p, T, unsigned)
{
    cas_add(p, (T)1);
}
{{#elif emulated}}
{{#include "op_fminmax.cuh"}}
{{#else}}
__device__ __forceinline__ void op_apply(T *p, T v, unsigned)
{
    {{FN}}(p, v);
}
{{/if}}
