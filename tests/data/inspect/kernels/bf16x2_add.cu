// inspect test kernel: packed bf16x2 atomic add.  cuda_bf16.hpp uses the
// native atom.add.noftz.bf16x2 from sm_90 and a 32-bit CAS loop below it.
// Expected: CAS loop on sm_75/sm_80 (in the PTX already), a native packed
// BF16x2 atomic on sm_90 and sm_120.
#include <cuda_bf16.h>
extern "C" __global__ void bf16x2_add(const __nv_bfloat162 *in, int n, __nv_bfloat162 *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&out[i & 63], in[i]);
}
