{{! tiny.cu: count in[i] < thresh into out[0], for the resume and shard tests
    (tests/test_gpu_run.c).  Placeholders: strategy (naive, warp). }}
extern "C" __global__ void count(const int *in, long long n, int thresh, unsigned int *out)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    bool hit = i < n && in[i] < thresh;
{{#if strategy == "warp"}}
    unsigned int mask = __ballot_sync(0xffffffffu, hit);
    if ((threadIdx.x & 31) == 0 && mask)
        atomicAdd(out, (unsigned int)__popc(mask));
{{#else}}
    if (hit)
        atomicAdd(out, 1u);
{{/if}}
}
