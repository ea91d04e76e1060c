// inspect test kernel: an atomic through a pointer whose state space ptxas
// cannot know (shared or global, chosen at run time).  Expected: a generic
// atom.add.u32 in PTX; in SASS, a generic ATOM or a shared-window test with an
// ATOMS path beside the global one.
extern "C" __global__ void generic_add(const int *in, int n, int use_shared, unsigned *out)
{
    __shared__ unsigned local[64];
    if (threadIdx.x < 64)
        local[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned *p = use_shared ? &local[i & 63] : &out[i & 63];
    if (i < n)
        atomicAdd(p, (unsigned)in[i]);
    __syncthreads();
    if (use_shared && threadIdx.x < 64)
        atomicAdd(&out[threadIdx.x], local[threadIdx.x]);
}
