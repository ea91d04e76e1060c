// inspect test kernel: same-address u64 counter (+1).  Expected: one
// atom.global.add.u64 in PTX; ptxas aggregates it like the u32 counter.
extern "C" __global__ void counter_u64(const int *in, int n, int threshold, unsigned long long *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] < threshold)
        atomicAdd(out, 1ull);
}
