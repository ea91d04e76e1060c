{{! agg_block_sum.cuh: warp_sum() and block_sum() of unsigned counts.           }}
{{! Placeholders: block (threads per block, a multiple of 32);                  }}
{{!               cc (target compute capability: __reduce_add_sync from 80).    }}
/* Sum of v over the warp, in every lane.  Callers pass counts of at most a
 * block's elements, so 32 bits never wrap. */
{{#include "warp_sum.cuh"}}

/* Sum of v over the block, valid in thread 0: each warp reduces in registers,
 * then warp 0 adds the {{block // 32}} warp totals.  Every thread must call it. */
__device__ __forceinline__ unsigned block_sum(unsigned v)
{
    __shared__ unsigned warp_totals[{{block // 32}}];
    v = warp_sum(v);
    if (threadIdx.x % 32 == 0)
        warp_totals[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x >= 32)
        return 0;
    return warp_sum(threadIdx.x < {{block // 32}} ? warp_totals[threadIdx.x] : 0);
}
