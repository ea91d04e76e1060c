// inspect test kernel: system-scope float add (atomicAdd_system).
// Expected: atom.sys.global.add.f32 in PTX and a .SYS-scoped RED in SASS.
extern "C" __global__ void float_add_sys(const float *in, int n, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd_system(out, in[i]);
}
