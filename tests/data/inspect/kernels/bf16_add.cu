// inspect test kernel: scalar bf16 atomic add.  cuda_bf16.hpp emulates it with
// a 16-bit atomicCAS loop below sm_90 (atom.global.cas.b16 in a loop) and uses
// the native atom.add.noftz.bf16 from sm_90.  The 16-bit CAS-loop case.
#include <cuda_bf16.h>
extern "C" __global__ void bf16_add(const __nv_bfloat16 *in, int n, __nv_bfloat16 *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&out[i & 63], in[i]);
}
