// inspect test kernel: a counter aggregated by the source through cooperative
// groups: the coalesced group's leader (thread_rank() == 0) adds its size and
// shares the old value with a shuffle.  Expected: the PTX's activemask and
// popc (size, rank) before the atomic: one per warp (source), not per-thread.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void cg_leader(const int *in, int n, int thresh, unsigned int *count,
                                     unsigned int *slot)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] < thresh) {
        cg::coalesced_group g = cg::coalesced_threads();
        unsigned int base = 0;
        if (g.thread_rank() == 0)
            base = atomicAdd(count, g.size());
        base = g.shfl(base, 0);
        slot[i] = base + g.thread_rank();
    }
}
