{{! refcount.cu: count in[i] < thresh into out[0].  Placeholders: strategy
      naive   one atomic per hit
      warp    one atomic per warp (ballot and popc)
      wrong   one atomic per hit, and one too many: a planted mismatch }}
extern "C" __global__ void count(const int *in, int n, int thresh, unsigned int *out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool hit = i < n && in[i] < thresh;
{{#if strategy == "warp"}}
    const unsigned int mask = __ballot_sync(0xffffffffu, hit);
    if ((threadIdx.x & 31) == 0 && mask)
        atomicAdd(out, (unsigned int)__popc(mask));
{{#else}}
    if (hit)
        atomicAdd(out, 1u);
{{/if}}
{{#if strategy == "wrong"}}
    if (i == 0)
        atomicAdd(out, 1u);
{{/if}}
}
