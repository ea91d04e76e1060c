{{! compact.cu: stream compaction, kept = in[i] < thresh, each kept element
    written at a slot handed out by a global atomic counter, so every strategy
    writes them in another order (tests/data/specs/compact.yaml).
    Placeholders: strategy.
    - naive: one atomicAdd per kept element;
    - warp: the warp's kept elements counted with a ballot, one atomicAdd per
      warp by its leader, slots passed on with a shuffle;
    - block: counted in shared memory, one atomicAdd per block;
    - dupdrop: planted wrong: naive, but in every warp of block 0 that keeps
      two or more elements the lowest kept lane writes the value of the next
      kept lane, so a kept element is written twice and another not at all
      (count stays right).  Every warp, not only the first: at hit rate 0.1
      one warp keeps fewer than two in about one draw of six, and the plant
      must not depend on the draw.
    compact_serial is the reference: one thread, in index order. }}
{{#if strategy == "dupdrop"}}
__device__ unsigned int kvx_fake_mismatch;  /* the fake driver's stand-in plants the same fault (gpu/fake.h) */
{{/if}}
extern "C" __global__ void compact_serial(const int *in, long long n, int thresh, int *out,
                                          unsigned int *count)
{
    unsigned int k = 0;
    for (long long i = 0; i < n; i++)
        if (in[i] < thresh)
            out[k++] = in[i];
    *count = k;
}

extern "C" __global__ void compact(const int *in, long long n, int thresh, int *out,
                                   unsigned int *count)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    bool keep = i < n && v < thresh;
{{#if strategy == "naive"}}
    if (keep)
        out[atomicAdd(count, 1u)] = v;
{{#elif strategy == "warp"}}
    unsigned int lane = threadIdx.x % 32;
    unsigned int mask = __ballot_sync(0xffffffffu, keep);
    unsigned int base = 0;
    if (mask && lane == (unsigned int)(__ffs(mask) - 1))
        base = atomicAdd(count, (unsigned int)__popc(mask));
    base = __shfl_sync(0xffffffffu, base, mask ? __ffs(mask) - 1 : 0);
    if (keep)
        out[base + __popc(mask & ((1u << lane) - 1u))] = v;
{{#elif strategy == "block"}}
    __shared__ unsigned int kept, base;
    if (threadIdx.x == 0)
        kept = 0;
    __syncthreads();
    unsigned int slot = keep ? atomicAdd(&kept, 1u) : 0;
    __syncthreads();
    if (threadIdx.x == 0)
        base = atomicAdd(count, kept);
    __syncthreads();
    if (keep)
        out[base + slot] = v;
{{#else}}
    unsigned int lane = threadIdx.x % 32;
    unsigned int mask = __ballot_sync(0xffffffffu, keep);
    unsigned int rest = mask & (mask - 1u);
    int next = __shfl_sync(0xffffffffu, v, rest ? __ffs(rest) - 1 : 0);
    bool planted = blockIdx.x == 0 && rest && lane == (unsigned int)(__ffs(mask) - 1);
    if (keep)
        out[atomicAdd(count, 1u)] = planted ? next : v;
{{/if}}
}
