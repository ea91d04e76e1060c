// inspect test kernel: same-address u32 ticket counter whose result is used
// (a compaction slot).  Expected: atom.global.add.u32 in PTX; in SASS ptxas
// aggregation feeding one predicated ATOMG (the old value is needed), then a
// SHFL.IDX broadcast of the base and a per-lane rank.
extern "C" __global__ void ticket_u32(const int *in, int n, int threshold, unsigned *ctr, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] < threshold)
        out[atomicAdd(ctr, 1u)] = i;
}
