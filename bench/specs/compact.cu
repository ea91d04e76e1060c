{{! compact.cu: stream compaction, kept = in[i] < thresh, each kept element
    written at a slot handed out by a global atomic counter, so every strategy
    writes them in another order (bench/specs/compact.yaml).
    Placeholders: strategy.
    - naive: one atomicAdd per kept element;
    - warp: the warp's kept elements counted with a ballot, one atomicAdd per
      warp by its leader, slots passed on with a shuffle;
    - block: counted in shared memory, one atomicAdd per block;
    The reference is compact_ref.cu. }}
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
{{/if}}
}
