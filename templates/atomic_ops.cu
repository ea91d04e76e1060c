{{! atomic_ops.cu (specs/atomic_ops.yaml) }}
{{! Placeholders: op, type, space (code axes); ctype(type); FN (set: CUDA function of op); }}
{{! emulated, dst, ident, NAN_SENTINEL (lets). }}
/* atomic_ops: one atomic {{op}} on {{ctype(type)}} per input element, on {{space}} memory.
 *
 * Element i goes to slot i & (k - 1) (k, a power of two, is the number of
 * distinct addresses: 1 is full contention).  A grid-stride loop lets each
 * thread issue many operations.  The result lands in one of three outputs, so
 * that each op is checked by its own reference (the other two stay at their
 * initial values): out (reduce), wrapped (wrap_count: inc, dec) or counted
 * (tally: the compare-and-swap increment).
{{#if space == "shared"}}
 *
 * Shared variant: each block runs its operations on k slots in shared memory
 * (dynamic, k * sizeof(T) bytes), starting from the op's identity, then folds
 * each slot into global memory once.
{{#if op == "exch"}}
 * A flag per slot (k more bytes) records whether the block wrote it at all.
{{/if}}
{{/if}}
 *
 * Entry: atomic_ops(in[n], out[k], wrapped[k or 1], counted[k or 1], n, k, lim). */
{{#if type == "f16"}}
#include <cuda_fp16.h>
{{#elif type == "bf16"}}
#include <cuda_bf16.h>
{{/if}}

typedef {{ctype(type)}} T;

{{#include "pieces/op_apply.cuh"}}
{{#if space == "shared"}}

{{#include "pieces/op_merge.cuh"}}
{{/if}}

extern "C" __global__ void atomic_ops(const T *__restrict__ in, T *out, unsigned *wrapped,
                                      T *counted, unsigned n, unsigned k, unsigned lim)
{
    T *dst = {{dst}};
    const unsigned mask = k - 1;
    const unsigned stride = gridDim.x * blockDim.x;
{{#if space == "shared"}}
    extern __shared__ __align__(16) unsigned char smem[];
    T *slot = reinterpret_cast<T *>(smem);
{{#if op == "exch"}}
    bool *touched = reinterpret_cast<bool *>(smem + (size_t)k * sizeof(T));
{{/if}}
    for (unsigned s = threadIdx.x; s < k; s += blockDim.x) {
        slot[s] = (T)({{ident}});
{{#if op == "exch"}}
        touched[s] = false;
{{/if}}
    }
    __syncthreads();
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        op_apply(&slot[i & mask], in[i], lim);
{{#if op == "exch"}}
        touched[i & mask] = true;
{{/if}}
    }
    __syncthreads();
    for (unsigned s = threadIdx.x; s < k; s += blockDim.x)
{{#if op == "exch"}}
        op_merge(&dst[s], slot[s], touched[s], lim);
{{#else}}
        op_merge(&dst[s], slot[s], true, lim);
{{/if}}
{{#else}}
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        op_apply(&dst[i & mask], in[i], lim);
{{/if}}
}
