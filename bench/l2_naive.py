"""l2_naive.py: the contention spec's naive strategy at 2^24 elements, hit rate
0.5, u32 counters at run-time addresses (specs/contention.yaml), timed with
cupy for 32, 256 and 4096 counters, to tell which of the two modes a GPU is
in without building kvx (docs/measurement.md, "Two-mode cases").

    python3 bench/l2_naive.py
"""
import cupy as cp

SRC = r'''
extern "C" __global__ void naive(const int *in, const unsigned short *addr, unsigned *out, int n, int thresh)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] < thresh)
        atomicAdd(&out[addr[i]], 1u);
}
'''

def main():
    n = 1 << 24
    kern = cp.RawKernel(SRC, 'naive')
    rng = cp.random.default_rng(1)
    inp = rng.integers(0, 1000, n, dtype=cp.int32)
    print('uuid', cp.cuda.runtime.getDeviceProperties(0)['uuid'].hex())
    sweep(kern, inp, rng, n)
    for counters in (32, 256, 4096):
        addr = rng.integers(0, counters, n, dtype=cp.int32).astype(cp.uint16)
        for offset in (0, 128, 4096):
            raw = cp.zeros(counters + offset // 4, dtype=cp.uint32)
            out = raw[offset // 4:]
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            times = []
            for _ in range(12):
                start.record()
                kern((n // 256,), (256,), (inp, addr, out, cp.int32(n), cp.int32(500)))
                stop.record()
                stop.synchronize()
                times.append(cp.cuda.get_elapsed_time(start, stop))
            times.sort()
            print(f'counters {counters:5d} offset {offset:5d} B: median {times[len(times) // 2]:.3f} ms')


def median_ms(kern, inp, addr, out, n):
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(9):
        start.record()
        kern((n // 256,), (256,), (inp, addr, out, cp.int32(n), cp.int32(500)))
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return sorted(times)[len(times) // 2]


def sweep(kern, inp, rng, n):
    """The 256-counter case with its counters at every 128-byte offset of the
    first 16 KB of a 64 MB allocation, and at the start of each of its 2 MB
    pages: the time by address."""
    addr = rng.integers(0, 256, n, dtype=cp.int32).astype(cp.uint16)
    pool = cp.zeros(16 << 20, dtype=cp.uint32)
    for name, offsets in (('offset in 16 KB', range(0, 16384, 128)),
                          ('2 MB page', range(0, 64 << 20, 2 << 20))):
        ms = [median_ms(kern, inp, addr, pool[o // 4:o // 4 + 256], n) for o in offsets]
        print(f'256 counters by {name} (ms): ' + ' '.join(f'{t:.2f}' for t in ms))


if __name__ == '__main__':
    main()
