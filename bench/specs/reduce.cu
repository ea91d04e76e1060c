{{! reduce.cu: *out += the sum of in[0 .. n), n a multiple of 4, each block
    adding its partial sum atomically.  Placeholders:
      BLOCK     threads a block
      blocks    the grid (sm_count x BPSM): the grid-stride loop's stride is a constant
      BPSM      blocks an SM is asked to hold (__launch_bounds__' second argument,
                at most what 2048 threads allow)
      VEC       floats a load (1, 2 or 4: float, float2, float4)
      ILP       loads a thread issues before adding them (independent sums)
      FINAL     smem_tree: the block's sum by halving in shared memory;
                shuffle: within each warp by __shfl_down_sync, then the warps' }}
{{#if VEC == 4}}
typedef float4 vec_t;
#define VSUM(v) ((v).x + (v).y + (v).z + (v).w)
{{#elif VEC == 2}}
typedef float2 vec_t;
#define VSUM(v) ((v).x + (v).y)
{{#else}}
typedef float vec_t;
#define VSUM(v) (v)
{{/if}}

extern "C" __global__ void __launch_bounds__({{BLOCK}}, {{min(BPSM, 2048 / BLOCK)}})
reduce(const float *__restrict__ in, float *__restrict__ out, int n)
{
    const vec_t *v = (const vec_t *)in;
    const int nv = n / {{VEC}};
    const int stride = {{blocks * BLOCK}};     /* gridDim.x * BLOCK, known at compile time */
    float part[{{ILP}}];
#pragma unroll
    for (int k = 0; k < {{ILP}}; k++)
        part[k] = 0.0f;
    int i = blockIdx.x * {{BLOCK}} + threadIdx.x;
    for (; i + ({{ILP}} - 1) * stride < nv; i += {{ILP}} * stride) {
#pragma unroll
        for (int k = 0; k < {{ILP}}; k++)
            part[k] += VSUM(__ldg(v + i + k * stride));
    }
    for (; i < nv; i += stride)
        part[0] += VSUM(__ldg(v + i));
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < {{ILP}}; k++)
        s += part[k];
{{#if FINAL == "shuffle"}}
    __shared__ float w[{{BLOCK / 32}}];
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0)
        w[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < {{BLOCK / 32}} ? w[threadIdx.x] : 0.0f;
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_down_sync(0xffffffffu, s, o);
        if (threadIdx.x == 0)
            atomicAdd(out, s);
    }
{{#else}}
    __shared__ float t[{{BLOCK}}];
    t[threadIdx.x] = s;
    __syncthreads();
    for (int h = {{BLOCK / 2}}; h > 0; h >>= 1) {
        if (threadIdx.x < h)
            t[threadIdx.x] += t[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(out, t[0]);
{{/if}}
}
