// inspect test kernel: float sum of varying values into one address.
// Expected: atom.global.add.f32 in PTX, one REDG.E.ADD.F32 per thread in SASS:
// ptxas does not aggregate float adds (reassociation would change the result).
extern "C" __global__ void float_add(const float *in, int n, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(out, in[i]);
}
