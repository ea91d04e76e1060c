// inspect test kernel: scalar half atomic add (atom.add.noftz.f16, sm_70+).
// The PTX holds one 16-bit atom; the SASS shows what ptxas makes of a 16-bit
// add the hardware lacks.
#include <cuda_fp16.h>
extern "C" __global__ void half_add(const __half *in, int n, __half *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&out[i & 63], in[i]);
}
