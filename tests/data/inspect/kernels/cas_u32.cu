// inspect test kernel: a 32-bit CAS used once, not in a loop (a lock-free
// claim of a slot).  Expected: atom.global.cas.b32 and an ATOMG.E.CAS with no
// backward branch: CAS present, CAS loop not reported.
extern "C" __global__ void cas_u32(const unsigned *keys, int n, unsigned *slots, int *claimed)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned k = keys[i];
    unsigned prev = atomicCAS(&slots[k & 1023], 0u, k);
    claimed[i] = prev == 0u;
}
