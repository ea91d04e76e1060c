// inspect test kernel: a hand-written 16-bit CAS loop (max on unsigned short),
// the emulation every arch needs for a 16-bit max.  Expected: atom.global.cas.b16
// inside a loop in PTX and a CAS with a backward branch in SASS on every arch.
extern "C" __global__ void cas16_max(const unsigned short *in, int n, unsigned short *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned short v = in[i];
    unsigned short *p = &out[i & 63];
    unsigned short old = *p, assumed;
    do {
        assumed = old;
        if (assumed >= v)
            break;
        old = atomicCAS(p, assumed, v);
    } while (old != assumed);
}
