{{! fake_paths.cu: for tests/test_fake_driver.c, run on the fake driver (the
    host stand-in of `count` computes the result; a GPU would too).
    Placeholders: strategy (naive, warp, cluster, bigsmem: the same count,
    launched plainly, as a cluster or with 64 KiB of dynamic shared memory).
    count_other has no host stand-in: a spec naming it gets launch_error. }}
extern "C" __global__ void count(const int *in, long long n, int thresh, unsigned int *out)
{
    extern __shared__ unsigned int scratch[];
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    bool hit = i < n && in[i] < thresh;
{{#if strategy == "warp"}}
    unsigned int mask = __ballot_sync(0xffffffffu, hit);
    if ((threadIdx.x & 31) == 0 && mask)
        atomicAdd(out, (unsigned int)__popc(mask));
{{#else}}
    if (hit)
        atomicAdd(out, 1u + scratch[0] * 0u);
{{/if}}
}

extern "C" __global__ void count_other(const int *in, long long n, int thresh, unsigned int *out)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] < thresh)
        atomicAdd(out, 1u);
}
