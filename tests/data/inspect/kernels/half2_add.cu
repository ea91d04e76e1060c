// inspect test kernel: native packed half2 atomic add (sm_60+).
// Expected: atom.global.add.noftz.f16x2 in PTX, an F16x2 REDG/ATOMG in SASS.
#include <cuda_fp16.h>
extern "C" __global__ void half2_add(const __half2 *in, int n, __half2 *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&out[i & 63], in[i]);
}
