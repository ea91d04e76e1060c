// inspect test kernel: int sum of varying values into one address.
// Expected on sm_80+: REDUX.SUM of the warp's values, then one predicated
// REDG per warp; on sm_75 (no REDUX) a per-thread RED or a shuffle tree.
extern "C" __global__ void redux_sum(const int *in, int n, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(out, in[i]);
}
