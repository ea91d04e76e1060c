{{! A small counting template for the loader and emitter tests.
    Placeholders: T (counter type name), strategy, BLOCK (let). }}
// counter type {{ctype(T)}}
extern "C" __global__ void count(const int *in, long long n, int thresh, {{ctype(T)}} *out)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
{{#if strategy == "naive"}}
    if (in[i] < thresh)
        atomicAdd(out, ({{ctype(T)}})1);
{{#elif strategy == "warp"}}
    unsigned mask = __ballot_sync(0xffffffffu, in[i] < thresh);
    if ((threadIdx.x & 31) == 0 && mask)
        atomicAdd(out, ({{ctype(T)}})__popc(mask));
{{#else}}
{{#include "piece.cuh"}}
{{/if}}
}
