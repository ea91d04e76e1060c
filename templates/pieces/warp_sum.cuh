{{! warp_sum.cuh: warp_sum(), the sum of an unsigned over the warp.            }}
{{! Placeholders: cc (target compute capability: __reduce_add_sync from 80).    }}
{{! The includer writes the comment above it: what its sums are and why they    }}
{{! cannot pass 2^32.  Every lane of the warp must call it.                      }}
__device__ __forceinline__ unsigned warp_sum(unsigned v)
{
{{#if cc >= 80}}
    return __reduce_add_sync(0xffffffffu, v);   /* one REDUX instruction */
{{#else}}
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
{{/if}}
}
