{{! group.cu: count in[i] < thresh into out[0], six ways, for the grouped
    program test (tests/test_jit_group.c).  Placeholders: strategy
      naive, warp, unroll, block   correct
      error                        an undeclared name: NVRTC's error
      too_much_smem                80,000 bytes of static shared memory: ptxas fails }}
#define PER_THREAD 1
typedef unsigned int Count;
extern "C" __global__ void count(const int *in, long long n, int thresh, Count *out)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    bool hit = i < n && in[i] < thresh;
{{#if strategy == "warp"}}
    unsigned int mask = __ballot_sync(0xffffffffu, hit);
    if ((threadIdx.x & 31) == 0 && mask)
        atomicAdd(out, (Count)__popc(mask));
{{#elif strategy == "error"}}
    undeclared_name = hit;
{{#elif strategy == "too_much_smem"}}
    __shared__ Count big[20000];
    big[threadIdx.x] = hit;
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(out, big[thresh & 255]);
{{#elif strategy == "block"}}
    __shared__ Count hits;
    if (threadIdx.x == 0)
        hits = 0;
    __syncthreads();
    if (hit)
        atomicAdd(&hits, (Count)PER_THREAD);
    __syncthreads();
    if (threadIdx.x == 0 && hits)
        atomicAdd(out, hits);
{{#else}}
#pragma unroll
    for (int k = 0; k < PER_THREAD; k++)
        if (hit)
            atomicAdd(out, (Count)1);
{{/if}}
}
