{{! tiny_count.cu: count in[i] < thresh into out[0]; a kernel of a few        }}
{{! microseconds, for the explorer's own benchmark (bench/tiny.yaml), where    }}
{{! kvx's per-case cost, not the GPU, is what is measured.                     }}
{{! Placeholders:                                                              }}
{{!   strategy   naive (one atomic per hit) or warp (one per warp, ballot)     }}
{{!   items      elements per thread, strided by the grid                      }}
extern "C" __global__ void tiny_count(const int *in, long long n, int thresh, unsigned int *out)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    unsigned int hits = 0;
#pragma unroll
    for (int k = 0; k < {{items}}; k++, i += stride)
        hits += i < n && in[i] < thresh;
{{#if strategy == "warp"}}
    unsigned int sum = __reduce_add_sync(0xffffffffu, hits);
    if ((threadIdx.x & 31) == 0 && sum)
        atomicAdd(out, sum);
{{#else}}
    if (hits)
        atomicAdd(out, hits);
{{/if}}
}
