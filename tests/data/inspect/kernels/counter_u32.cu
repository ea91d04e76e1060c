// inspect test kernel: same-address u32 counter, incremented by 1 under a
// per-thread predicate.  Expected: one atom.global.add.u32 in PTX; in SASS,
// ptxas warp aggregation (VOTEU.ANY + UPOPC/POPC + UFLO/FLO + one predicated REDG).
extern "C" __global__ void counter_u32(const int *in, int n, int threshold, unsigned *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] < threshold)
        atomicAdd(out, 1u);
}
