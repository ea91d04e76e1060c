{{! read_floor.cu: the sum of n u32 values, each read once (specs/read_floor.yaml).    }}
{{! Placeholders:                                                                      }}
{{!   width      bytes per load: 4 (u32) or 16 (uint4)                                 }}
{{!   inflight   loads a thread issues before it uses any                              }}
{{!   unroll     pinned: the loops keep exactly inflight loads (#pragma unroll 1);      }}
{{!              compiler: the plain loop (inflight 1), unrolled as the compiler likes  }}
{{!   block      threads per block                                                     }}
{{!   resident   blocks per SM: the grid is sm_count x resident, each thread walking   }}
{{!              the input grid-stride                                                 }}
{{!   cc         target compute capability (__reduce_add_sync from 80)                 }}
typedef unsigned long long u64;
{{#if width == 16}}
typedef uint4 Load;

__device__ __forceinline__ unsigned lanes_sum(uint4 v)
{
    return v.x + v.y + v.z + v.w;
}
{{#else}}
typedef unsigned Load;

__device__ __forceinline__ unsigned lanes_sum(unsigned v)
{
    return v;
}
{{/if}}

/* Sum of v over the warp, in every lane (32 thread sums of bytes: far below 2^32). */
{{#include "pieces/warp_sum.cuh"}}

{{#if unroll == "pinned"}}
/* A grid of {{resident}} blocks of {{block}} threads per SM; each thread keeps
 * {{inflight}} loads of {{width}} bytes in flight ({{resident * block * inflight * width // 1024}} KB per SM;
 * the loops are not unrolled further), adds what they bring in a register, and
 * its warp adds one sum to out. */
{{#else}}
/* A grid of {{resident}} blocks of {{block}} threads per SM; each thread walks
 * the input with {{width}}-byte loads in a plain grid-stride loop that the
 * compiler may unroll (and so keep several loads in flight), adds what they
 * bring in a register, and its warp adds one sum to out. */
{{/if}}
extern "C" __global__ void __launch_bounds__({{block}}, {{resident}})
read_floor(const unsigned *__restrict__ in, int n, u64 *__restrict__ out)
{
    const Load *in_v = reinterpret_cast<const Load *>(in);    /* in is 256-byte aligned */
    const int nv = n / {{width // 4}};
    const int stride = gridDim.x * blockDim.x;
    const int first = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned sum = 0;   /* inputs are bytes: a thread's sum stays far below 2^32 */
    int i = first;
{{#if inflight > 1}}
#pragma unroll 1
    for (; i + {{inflight - 1}} * stride < nv; i += {{inflight}} * stride) {
        Load v[{{inflight}}];
#pragma unroll
        for (int u = 0; u < {{inflight}}; u++)
            v[u] = in_v[i + u * stride];
#pragma unroll
        for (int u = 0; u < {{inflight}}; u++)
            sum += lanes_sum(v[u]);
    }
{{/if}}
{{#if unroll == "pinned"}}
#pragma unroll 1
{{/if}}
    for (; i < nv; i += stride)
        sum += lanes_sum(in_v[i]);
{{#if width > 4}}
    if (first < n - nv * {{width // 4}})     /* the values past the last full load */
        sum += in[nv * {{width // 4}} + first];
{{/if}}
    sum = warp_sum(sum);
    if (threadIdx.x % 32 == 0)
        atomicAdd(out, (u64)sum);
}
