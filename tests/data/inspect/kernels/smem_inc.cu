// inspect test kernel: same-address shared-memory counter (+1), flushed by one
// thread with a global atomic.  Expected: atom.shared.add.u32 in PTX and the
// hardware shared-memory increment ATOMS.POPC.INC.32 in SASS.
extern "C" __global__ void smem_inc(const int *in, int n, int threshold, unsigned *out)
{
    __shared__ unsigned count;
    if (threadIdx.x == 0)
        count = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] < threshold)
        atomicAdd(&count, 1u);
    __syncthreads();
    if (threadIdx.x == 0)
        atomicAdd(out, count);
}
